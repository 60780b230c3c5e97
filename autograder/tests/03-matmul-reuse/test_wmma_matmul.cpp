// Tests for exercise 03/05 wmma_matmul (contract: lessons/03-matmul-reuse/wmma_matmul.hpp).
// Run: ./course test 03/wmma_matmul
//
// On the simulator the tensor-core fragments are computed on the CPU (cudasim/include/mma.h):
// the results are a GPU's, the speed is not. On a GPU before compute capability 8.0 (no bf16
// tensor cores) the tests are skipped with the reason.

#include "wmma_matmul.hpp"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "course_test.hpp"
#include "cuda_check.hpp"
#include "wmma_reference.hpp"

#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

namespace ct = course::test;

namespace {

/// CPU reference in double from the bf16 values: products of bf16 are exact, so a GPU's only
/// error is the fp32 accumulation, bounded by reduction_tolerance(K).
std::string shape(int m, int n, int k) {
  return "M = " + std::to_string(m) + ", N = " + std::to_string(n) + ", K = " + std::to_string(k);
}

/// Empty when this machine can run bf16 tensor cores, else the reason to skip.
std::string why_no_tensor_cores() {
#ifdef CUDASIM
  return "";
#else
  int device = 0;
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  if (prop.major >= 8) return "";
  return std::string(prop.name) + " (compute capability " + std::to_string(prop.major) + "." +
         std::to_string(prop.minor) + ") has no bf16 tensor cores; this exercise needs 8.0 or later";
#endif
}

#define SKIP_WITHOUT_TENSOR_CORES()                            \
  do {                                                         \
    const std::string why = why_no_tensor_cores();             \
    if (!why.empty()) GTEST_SKIP() << why;                     \
  } while (0)

::testing::AssertionResult matmul_matches_cpu(ct::Rng& rng, int m, int n, int k) {
  const auto a = random_bf16(rng, static_cast<std::size_t>(m) * k);
  const auto b = random_bf16(rng, static_cast<std::size_t>(k) * n);
  ct::DeviceBuffer<__nv_bfloat16> d_a(a.bits), d_b(b.bits);
  ct::DeviceBuffer<float> d_c(static_cast<std::size_t>(m) * n);
  d_c.poison();
  launch_wmma_matmul(d_a.get(), d_b.get(), d_c.get(), m, n, k);
  return ct::all_close_2d(ct::reference_matmul(a.values, b.values, m, n, k), d_c.download(), m, n, ct::reduction_tolerance(k));
}

}  // namespace

TEST(WmmaMatmul, MatchesCpuOnTileMultiples) {
  SKIP_WITHOUT_TENSOR_CORES();
  ct::Rng rng;
  for (auto [m, n, k] : std::vector<std::tuple<int, int, int>>{{64, 64, 32}, {64, 64, 64}, {128, 128, 128}, {128, 64, 96}})
    EXPECT_TRUE(matmul_matches_cpu(rng, m, n, k)) << shape(m, n, k);
}

TEST(WmmaMatmul, HandlesSizesThatAreNotTileMultiples) {
  SKIP_WITHOUT_TENSOR_CORES();
  ct::Rng rng;
  for (auto [m, n, k] : std::vector<std::tuple<int, int, int>>{{17, 33, 9}, {127, 129, 65}, {65, 63, 17}, {3, 5, 7}})
    EXPECT_TRUE(matmul_matches_cpu(rng, m, n, k)) << shape(m, n, k);
}

TEST(WmmaMatmul, HandlesASingleRowOrColumn) {
  SKIP_WITHOUT_TENSOR_CORES();
  ct::Rng rng;
  for (auto [m, n, k] : std::vector<std::tuple<int, int, int>>{{1, 200, 37}, {200, 1, 37}, {1, 1, 300}, {40, 50, 1}})
    EXPECT_TRUE(matmul_matches_cpu(rng, m, n, k)) << shape(m, n, k);
}

TEST(WmmaMatmul, DoesNotWritePastTheEndOfC) {
  SKIP_WITHOUT_TENSOR_CORES();
  ct::Rng rng;
  const int m = 67, n = 65, k = 20;
  const auto a = random_bf16(rng, m * k), b = random_bf16(rng, k * n);
  std::vector<float> c(m * n, std::numeric_limits<float>::quiet_NaN());
  const auto guard = ct::guard_pattern<float>();
  c.insert(c.end(), guard.begin(), guard.end());
  ct::DeviceBuffer<__nv_bfloat16> d_a(a.bits), d_b(b.bits);
  ct::DeviceBuffer<float> d_c(c);
  launch_wmma_matmul(d_a.get(), d_b.get(), d_c.get(), m, n, k);
  const auto result = d_c.download();
  EXPECT_TRUE(ct::all_close_2d(ct::reference_matmul(a.values, b.values, m, n, k),
                               std::vector<float>(result.begin(), result.begin() + m * n), m, n,
                               ct::reduction_tolerance(k)))
      << shape(m, n, k);
  EXPECT_TRUE(ct::guard_untouched(result, m * n)) << shape(m, n, k);
}

TEST(WmmaMatmul, LoadsEachElementOncePerBlockTile) {
  // bf16 halves the bytes per element: A is loaded ceil(N/64) times at 2 bytes, B ceil(M/64)
  // times; C is stored once in fp32. Counted at shapes drawn from the run's seed, so that a
  // kernel cannot do the work as taught (the tensor cores, every warp its share) for shapes it
  // recognises only: one of whole 64 x 64 x 32 block tiles (64 or 128 rows and columns, 32 to
  // 128 deep) and two of 17 to 130 each way (ragged edges).
  SKIP_WITHOUT_TENSOR_CORES();
  ct::Rng rng;
  const std::vector<std::tuple<int, int, int>> shapes = {
      {kWmmaBM * rng.integer(1, 2), kWmmaBN * rng.integer(1, 2), kWmmaBK * rng.integer(1, 4)},
      {rng.integer(17, 130), rng.integer(17, 130), rng.integer(17, 130)},
      {rng.integer(17, 130), rng.integer(17, 130), rng.integer(17, 130)}};
  for (auto [m, n, k] : shapes) {
    std::printf("[ COURSE   ] drawn: %s\n", shape(m, n, k).c_str());
    const auto a = random_bf16(rng, m * k), b = random_bf16(rng, k * n);
    ct::DeviceBuffer<__nv_bfloat16> d_a(a.bits), d_b(b.bits);
    ct::DeviceBuffer<float> d_c(m * n);
    d_c.poison();
    const auto traffic = ct::count_global_traffic([&, m = m, n = n, k = k] { launch_wmma_matmul(d_a.get(), d_b.get(), d_c.get(), m, n, k); });
    ASSERT_TRUE(ct::all_close_2d(ct::reference_matmul(a.values, b.values, m, n, k), d_c.download(), m, n,
                                 ct::reduction_tolerance(k)))
        << shape(m, n, k);
    if (!traffic.counted) GTEST_SKIP() << traffic.why_not;
    const std::uint64_t block_cols = (n + kWmmaBN - 1) / kWmmaBN, block_rows = (m + kWmmaBM - 1) / kWmmaBM;
    EXPECT_EQ(traffic.load_bytes, 2ull * (std::uint64_t(m) * k * block_cols + std::uint64_t(k) * n * block_rows))
        << shape(m, n, k) << ": global bytes loaded (2-byte elements; A once per block column, B once per block row)";
    EXPECT_EQ(traffic.store_bytes, 4ull * m * n) << shape(m, n, k) << ": global bytes stored (C once, fp32)";
    // The tensor cores must do the multiply-adds: one 16x16x16 mma_sync per tile product at the
    // least (padding the edges only adds some).
    const std::uint64_t tiles = std::uint64_t((m + 15) / 16) * ((n + 15) / 16) * ((k + 15) / 16);
    EXPECT_GE(traffic.mma_ops, tiles) << shape(m, n, k) << ": " << traffic.mma_ops << " warp-level mma_sync "
                                      << "operations; the exercise is to run the products on the tensor cores "
                                      << "(wmma::mma_sync), not in scalar FMAs";
    // And the tensor cores must be what consumes the tiles: a fragment load reads each element
    // of a staged tile once per 16x16x16 product, about a byte of shared memory per multiply-add
    // of the product padded to 16x16x16 tiles, plus each block's 64 x 64 fp32 accumulator tile
    // parked in shared memory and read back (the epilogue that skips what lies outside C).
    // The reference stays within 0.85 of that at every shape drawn here (its 4 warps work on
    // the whole 64 x 64 block tile however little of it lies inside C); scalar FMAs next to token
    // mma_syncs read two 2-byte elements per multiply-add, 3.2 to 3.8 times it at whole tiles.
    // The products must be of tiles from memory, and their sums reach C: every k-step of an
    // output tile's row needs its A tile loaded, of its column its B tile (a warp that keeps a
    // fragment for several products loads it once), and every output tile is stored from its
    // accumulator. Token mma_syncs on filled fragments, with C written from scalar sums, do
    // neither.
    const std::uint64_t m16 = (m + 15) / 16, n16 = (n + 15) / 16, k16 = (k + 15) / 16;
    EXPECT_GE(traffic.fragment_loads, (m16 + n16) * k16)
        << shape(m, n, k) << ": " << traffic.fragment_loads << " wmma::load_matrix_sync of A and B tiles; the "
        << "tensor cores should multiply tiles loaded from the staged matrices";
    EXPECT_GE(traffic.fragment_stores, m16 * n16)
        << shape(m, n, k) << ": " << traffic.fragment_stores << " wmma::store_matrix_sync of accumulators for "
        << m16 * n16 << " output tiles; C should be what the tensor cores summed";
    const std::uint64_t padded_macs = 4096ull * tiles;
    const std::uint64_t epilogue_bytes = 2ull * sizeof(float) * kWmmaBM * kWmmaBN * block_rows * block_cols;
    EXPECT_LE(traffic.shared_bytes, padded_macs + epilogue_bytes)
        << shape(m, n, k) << ": " << traffic.shared_bytes << " bytes of shared memory read and written for "
        << padded_macs << " multiply-adds (padded to 16x16x16 tiles) and " << block_rows * block_cols
        << " accumulator tiles parked and read back (" << epilogue_bytes << " bytes); the products should read "
        << "their operands as wmma fragments (load_matrix_sync) and multiply them with mma_sync, not element "
        << "by element";
    // The warps share the products: none issues more than twice its share (the reference's 2 x 2
    // warps issue a quarter of their block's each). One warp doing all sixteen output tiles of its
    // block while the other three only stage the slices issues four times its share.
    const std::uint64_t warps = (traffic.threads + 31) / 32;
    EXPECT_LE(traffic.span_mma_ops * warps, 2 * traffic.mma_ops)
        << shape(m, n, k) << ": one warp issued " << traffic.span_mma_ops << " of the " << traffic.mma_ops
        << " mma_syncs of " << warps << " warps; each warp should compute its own part of the block's tile";
  }
}
