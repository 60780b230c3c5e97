// Tests for exercise 03/02 naive_matmul (contract: lessons/03-matmul-reuse/naive_matmul.hpp).
// Run: ./course test 03/naive_matmul

#include "naive_matmul.hpp"

#include <cuda_runtime.h>

#include "course_test.hpp"
#include "cuda_check.hpp"

#include <cstdint>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

namespace ct = course::test;

namespace {

std::string shape(int m, int n, int k) {
  return "M = " + std::to_string(m) + ", N = " + std::to_string(n) + ", K = " + std::to_string(k);
}

/// Fresh inputs (no element near 0), a poisoned C, one launch, compared with the CPU. With
/// `traffic`, the launch is counted on the simulator into it.
::testing::AssertionResult matmul_matches_cpu(ct::Rng& rng, int m, int n, int k, ct::GlobalTraffic* traffic = nullptr) {
  const auto a = rng.nonzero(static_cast<std::size_t>(m) * k);
  const auto b = rng.nonzero(static_cast<std::size_t>(k) * n);
  ct::DeviceBuffer<float> d_a(a), d_b(b), d_c(static_cast<std::size_t>(m) * n);
  d_c.poison();
  const auto run = [&] { launch_naive_matmul(d_a.get(), d_b.get(), d_c.get(), m, n, k); };
  if (traffic != nullptr) {
    *traffic = ct::count_global_traffic(run);
  } else {
    run();
  }
  return ct::all_close_2d(ct::reference_matmul(a, b, m, n, k), d_c.download(), m, n, ct::reduction_tolerance(k));
}

}  // namespace

TEST(NaiveMatmul, MatchesCpuOnSquareSizes) {
  ct::Rng rng;
  for (int s : {1, 16, 64, 128}) EXPECT_TRUE(matmul_matches_cpu(rng, s, s, s)) << shape(s, s, s);
}

TEST(NaiveMatmul, HandlesSizesThatAreNotBlockMultiples) {
  ct::Rng rng;
  for (auto [m, n, k] : std::vector<std::tuple<int, int, int>>{{17, 33, 9}, {15, 17, 31}, {127, 129, 65}, {100, 3, 70}})
    EXPECT_TRUE(matmul_matches_cpu(rng, m, n, k)) << shape(m, n, k);
}

TEST(NaiveMatmul, HandlesASingleRowOrColumn) {
  // 1 x N (one row of C), N x 1 (one column), and K = 1 (an outer product).
  ct::Rng rng;
  for (auto [m, n, k] : std::vector<std::tuple<int, int, int>>{{1, 200, 37}, {200, 1, 37}, {1, 1, 300}, {40, 50, 1}})
    EXPECT_TRUE(matmul_matches_cpu(rng, m, n, k)) << shape(m, n, k);
}

TEST(NaiveMatmul, DoesNotWritePastTheEndOfC) {
  ct::Rng rng;
  const int m = 33, n = 17, k = 20;
  const auto a = rng.nonzero(m * k), b = rng.nonzero(k * n);
  std::vector<float> c(m * n, std::numeric_limits<float>::quiet_NaN());
  const auto guard = ct::guard_pattern<float>();
  c.insert(c.end(), guard.begin(), guard.end());
  ct::DeviceBuffer<float> d_a(a), d_b(b), d_c(c);
  launch_naive_matmul(d_a.get(), d_b.get(), d_c.get(), m, n, k);
  const auto result = d_c.download();
  EXPECT_TRUE(ct::all_close_2d(ct::reference_matmul(a, b, m, n, k), std::vector<float>(result.begin(), result.begin() + m * n),
                               m, n, ct::reduction_tolerance(k)))
      << shape(m, n, k);
  EXPECT_TRUE(ct::guard_untouched(result, m * n)) << shape(m, n, k);
}

TEST(NaiveMatmul, LoadsEveryOperandOncePerProduct) {
  // No reuse: each of the M*N threads reads K floats of A and K of B, 2*M*N*K*4 bytes
  // (2*N^3*4 for square matrices), and stores its element of C once.
  ct::Rng rng;
  for (auto [m, n, k] : std::vector<std::tuple<int, int, int>>{{32, 32, 32}, {64, 64, 64}, {33, 47, 19}}) {
    ct::GlobalTraffic traffic;
    ASSERT_TRUE(matmul_matches_cpu(rng, m, n, k, &traffic)) << shape(m, n, k);
    if (!traffic.counted) GTEST_SKIP() << traffic.why_not;
    EXPECT_EQ(traffic.load_bytes, 2ull * m * n * k * 4) << shape(m, n, k) << ": global bytes loaded";
    EXPECT_EQ(traffic.store_bytes, 4ull * m * n) << shape(m, n, k) << ": global bytes stored (C once)";
  }
}

TEST(NaiveMatmul, OneThreadPerElementCoalescedAlongRows) {
  // The contract's layout: one thread per element of C, threadIdx.x along a row of C. One
  // thread (or a few) computing all of C gets the same numbers and bytes while the rest of the
  // GPU idles; x along a column of C reads A and writes C with every lane in a different row.
  // The simulator counts both: the longest thread's memory operations, and the 32-byte
  // sectors each warp-wide load or store touches. The shape is drawn from the run's seed (17 to
  // 96 each way, mostly not multiples of the 16 x 16 block, the other tests' shapes among them),
  // so that a kernel cannot do the work as taught for one shape it recognises only.
  ct::Rng rng;
  const int m = rng.integer(17, 96), n = rng.integer(17, 96), k = rng.integer(17, 96);
  std::printf("[ COURSE   ] drawn: %s\n", shape(m, n, k).c_str());
  ct::GlobalTraffic traffic;
  ASSERT_TRUE(matmul_matches_cpu(rng, m, n, k, &traffic)) << shape(m, n, k);
  if (!traffic.counted) GTEST_SKIP() << traffic.why_not;
  std::printf("[ COURSE   ] naive_matmul, %s: %llu threads, longest thread: %llu global accesses, "
              "%.2f sectors per warp-wide access\n",
              shape(m, n, k).c_str(), static_cast<unsigned long long>(traffic.threads),
              static_cast<unsigned long long>(traffic.span_global_ops), traffic.sectors_per_request());
  EXPECT_GE(traffic.threads, std::uint64_t(m) * n) << shape(m, n, k) << ": launch at least one thread per element of C";
  // 2K + 1 for the reference; a few more (C zeroed first, say) still is one element per
  // thread, two elements would be 4K + 2.
  EXPECT_LE(traffic.span_global_ops, 2u * k + 8)
      << shape(m, n, k) << ": one thread made " << traffic.span_global_ops << " global loads and stores; with one "
      << "thread per element of C each makes 2K + 1 = " << 2 * k + 1 << " (K of A, K of B, its element of C)";
  // A 16 x 16 block's warp is two rows of 16 threads: per k step it reads 2 floats of A
  // (a broadcast to each row's 16 lanes) and 16 neighbouring floats of B (the same for both
  // rows), and it stores 2 x 16 neighbouring floats of C: 2 to 3 sectors per request where
  // rows do not start on a sector, 2 where they do. With x along a column of C the
  // warp's load of A touches 16 rows (16 sectors) and its store of C 32.
  EXPECT_LE(traffic.sectors_per_request(), 4.0)
      << shape(m, n, k) << ": " << traffic.sectors_per_request() << " 32-byte sectors per warp-wide access; "
      << "threadIdx.x should run along a row of C (the column index), so that a warp reads neighbouring floats "
         "of B, one float of A for all its lanes, and writes neighbouring floats of C (2 sectors per access)";
}
