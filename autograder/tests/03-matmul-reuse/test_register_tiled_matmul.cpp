// Tests for exercise 03/04 register_tiled_matmul
// (contract: lessons/03-matmul-reuse/register_tiled_matmul.hpp).
// Run: ./course test 03/register_tiled_matmul

#include "register_tiled_matmul.hpp"

#include <cuda_runtime.h>

#include "course_test.hpp"
#include "cuda_check.hpp"

#include <string>
#include <tuple>
#include <vector>

namespace ct = course::test;

namespace {

std::string shape(int m, int n, int k) {
  return "M = " + std::to_string(m) + ", N = " + std::to_string(n) + ", K = " + std::to_string(k);
}

::testing::AssertionResult matmul_matches_cpu(ct::Rng& rng, int m, int n, int k) {
  const auto a = rng.nonzero(static_cast<std::size_t>(m) * k);
  const auto b = rng.nonzero(static_cast<std::size_t>(k) * n);
  ct::DeviceBuffer<float> d_a(a), d_b(b), d_c(static_cast<std::size_t>(m) * n);
  d_c.poison();
  launch_register_tiled_matmul(d_a.get(), d_b.get(), d_c.get(), m, n, k);
  return ct::all_close_2d(ct::reference_matmul(a, b, m, n, k), d_c.download(), m, n, ct::reduction_tolerance(k));
}

std::uint64_t blocked_load_bytes(int m, int n, int k) {
  const std::uint64_t block_cols = (n + kRtBN - 1) / kRtBN, block_rows = (m + kRtBM - 1) / kRtBM;
  return 4ull * (std::uint64_t(m) * k * block_cols + std::uint64_t(k) * n * block_rows);
}

}  // namespace

TEST(RegisterTiledMatmul, MatchesCpuOnTileMultiples) {
  ct::Rng rng;
  for (auto [m, n, k] : std::vector<std::tuple<int, int, int>>{{64, 64, 16}, {64, 64, 64}, {128, 128, 128}, {128, 64, 32}})
    EXPECT_TRUE(matmul_matches_cpu(rng, m, n, k)) << shape(m, n, k);
}

TEST(RegisterTiledMatmul, HandlesSizesThatAreNotTileMultiples) {
  // K and N that are and are not multiples of 4 (the float4 path and the scalar path).
  ct::Rng rng;
  for (auto [m, n, k] : std::vector<std::tuple<int, int, int>>{
           {17, 33, 9}, {127, 129, 65}, {100, 68, 36}, {65, 63, 17}, {3, 5, 7}, {70, 20, 44}})
    EXPECT_TRUE(matmul_matches_cpu(rng, m, n, k)) << shape(m, n, k);
}

TEST(RegisterTiledMatmul, HandlesASingleRowOrColumn) {
  ct::Rng rng;
  for (auto [m, n, k] : std::vector<std::tuple<int, int, int>>{{1, 200, 36}, {200, 1, 37}, {1, 1, 300}, {40, 52, 1}})
    EXPECT_TRUE(matmul_matches_cpu(rng, m, n, k)) << shape(m, n, k);
}

TEST(RegisterTiledMatmul, HandlesOperandsThatAreNotSixteenByteAligned) {
  // Matrices that start one float into an allocation: K and N are multiples of 4, but a
  // float4 load would be misaligned (a fault on a GPU), so the kernel must fall back to
  // scalar loads.
  ct::Rng rng;
  const int m = 48, n = 40, k = 36;
  const auto a = rng.nonzero(m * k + 1), b = rng.nonzero(k * n + 1);
  ct::DeviceBuffer<float> d_a(a), d_b(b), d_c(m * n + 1);
  d_c.poison();
  launch_register_tiled_matmul(d_a.get() + 1, d_b.get() + 1, d_c.get() + 1, m, n, k);
  const std::vector<float> a_used(a.begin() + 1, a.end()), b_used(b.begin() + 1, b.end());
  const auto result = d_c.download();
  EXPECT_TRUE(ct::all_close_2d(ct::reference_matmul(a_used, b_used, m, n, k), std::vector<float>(result.begin() + 1, result.end()),
                               m, n, ct::reduction_tolerance(k)))
      << shape(m, n, k) << " with A, B and C starting 4 bytes past a 16-byte boundary";
}

TEST(RegisterTiledMatmul, DoesNotWritePastTheEndOfC) {
  ct::Rng rng;
  const int m = 67, n = 65, k = 20;
  const auto a = rng.nonzero(m * k), b = rng.nonzero(k * n);
  std::vector<float> c(m * n, std::numeric_limits<float>::quiet_NaN());
  const auto guard = ct::guard_pattern<float>();
  c.insert(c.end(), guard.begin(), guard.end());
  ct::DeviceBuffer<float> d_a(a), d_b(b), d_c(c);
  launch_register_tiled_matmul(d_a.get(), d_b.get(), d_c.get(), m, n, k);
  const auto result = d_c.download();
  EXPECT_TRUE(ct::all_close_2d(ct::reference_matmul(a, b, m, n, k), std::vector<float>(result.begin(), result.begin() + m * n), m,
                               n, ct::reduction_tolerance(k)))
      << shape(m, n, k);
  EXPECT_TRUE(ct::guard_untouched(result, m * n)) << shape(m, n, k);
}

TEST(RegisterTiledMatmul, LoadsEachElementOncePerBlockTile) {
  // 64 x 64 block tiles: each element of A loaded ceil(N/64) times, each of B ceil(M/64)
  // times; for N x N matrices 2*N^3*4/64 bytes, 4 times less than the 16 x 16 tiled kernel.
  // Besides fixed shapes, two drawn from the run's seed (one of whole block tiles, where the
  // register tile's shared-memory bytes are checked too, and one ragged), so that a kernel
  // cannot block or register-tile only the shapes it recognises.
  ct::Rng rng;
  std::vector<std::tuple<int, int, int>> shapes{{128, 128, 128}, {100, 68, 36}, {33, 47, 19}};
  shapes.emplace_back(kRtBM * rng.integer(1, 2), kRtBN * rng.integer(1, 2), kRtBK * rng.integer(1, 6));
  shapes.emplace_back(rng.integer(17, 130), rng.integer(17, 130), rng.integer(9, 70));
  for (std::size_t i = shapes.size() - 2; i < shapes.size(); ++i)
    std::printf("[ COURSE   ] drawn: %s\n", shape(std::get<0>(shapes[i]), std::get<1>(shapes[i]), std::get<2>(shapes[i])).c_str());
  for (auto [m, n, k] : shapes) {
    const auto a = rng.nonzero(m * k), b = rng.nonzero(k * n);
    ct::DeviceBuffer<float> d_a(a), d_b(b), d_c(m * n);
    d_c.poison();
    const auto traffic =
        ct::count_global_traffic([&, m = m, n = n, k = k] { launch_register_tiled_matmul(d_a.get(), d_b.get(), d_c.get(), m, n, k); });
    ASSERT_TRUE(ct::all_close_2d(ct::reference_matmul(a, b, m, n, k), d_c.download(), m, n, ct::reduction_tolerance(k)))
        << shape(m, n, k);
    if (!traffic.counted) GTEST_SKIP() << traffic.why_not;
    if (m == n && n == k && n % kRtBM == 0) {
      EXPECT_EQ(traffic.load_bytes, 2ull * n * n * n * 4 / kRtBM) << shape(m, n, k) << ": 2*N^3*4/64";
    }
    EXPECT_EQ(traffic.load_bytes, blocked_load_bytes(m, n, k))
        << shape(m, n, k) << ": global bytes loaded; each element of A should be loaded once per block column "
        << "(ceil(N/64)), each of B once per block row (ceil(M/64)), none outside the matrices";
    EXPECT_EQ(traffic.store_bytes, 4ull * m * n) << shape(m, n, k) << ": global bytes stored (C once)";
    if (m % kRtBM == 0 && n % kRtBN == 0 && k % kRtBK == 0) {
      // The register tile is the point: per k, a thread loads TM values of A and TN of B from
      // shared memory into registers and does TM x TN multiply-adds with them, 8 loads for 16
      // FMAs, 2 bytes of shared memory per multiply-add (the tiles' stores add 1/8). Every FMA
      // reading both operands from shared memory is 8 bytes: a shared-memory tiled matmul.
      const std::uint64_t macs = std::uint64_t(m) * n * k;
      EXPECT_LE(traffic.shared_bytes, 3 * macs)
          << shape(m, n, k) << ": " << traffic.shared_bytes << " bytes of shared memory read and written for " << macs
          << " multiply-adds; load each k's column of A and row of B into registers once and reuse them across "
          << "the thread's " << kRtTM << " x " << kRtTN << " outputs (the register tile)";
    }
  }
}
