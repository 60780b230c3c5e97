// Tests for exercise 03/03 tiled_matmul (contract: lessons/03-matmul-reuse/tiled_matmul.hpp).
// Run: ./course test 03/tiled_matmul
//
// Every test runs the three tile sizes the contract instantiates: 8, 16 and 32.

#include "tiled_matmul.hpp"

#include <cuda_runtime.h>

#include "course_test.hpp"
#include "cuda_check.hpp"

#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

namespace ct = course::test;

namespace {

std::string shape(int tile, int m, int n, int k) {
  return "TILE = " + std::to_string(tile) + ", M = " + std::to_string(m) + ", N = " + std::to_string(n) +
         ", K = " + std::to_string(k);
}

void launch(int tile, const float* a, const float* b, float* c, int m, int n, int k) {
  switch (tile) {
    case 8: launch_tiled_matmul<8>(a, b, c, m, n, k); break;
    case 16: launch_tiled_matmul<16>(a, b, c, m, n, k); break;
    default: launch_tiled_matmul<32>(a, b, c, m, n, k); break;
  }
}

constexpr int kTiles[] = {8, 16, 32};

/// Fresh inputs, a poisoned C, one launch, compared with the CPU. With `traffic`, the launch
/// is counted on the simulator into it.
::testing::AssertionResult matmul_matches_cpu(ct::Rng& rng, int tile, int m, int n, int k,
                                              ct::GlobalTraffic* traffic = nullptr) {
  const auto a = rng.nonzero(static_cast<std::size_t>(m) * k);
  const auto b = rng.nonzero(static_cast<std::size_t>(k) * n);
  ct::DeviceBuffer<float> d_a(a), d_b(b), d_c(static_cast<std::size_t>(m) * n);
  d_c.poison();
  const auto run = [&] { launch(tile, d_a.get(), d_b.get(), d_c.get(), m, n, k); };
  if (traffic != nullptr) {
    *traffic = ct::count_global_traffic(run);
  } else {
    run();
  }
  return ct::all_close_2d(ct::reference_matmul(a, b, m, n, k), d_c.download(), m, n, ct::reduction_tolerance(k));
}

/// Bytes of A and B a tiled kernel loads: A's elements once per block column, B's once per
/// block row (elements outside the matrices are never loaded).
std::uint64_t tiled_load_bytes(int tile, int m, int n, int k) {
  const std::uint64_t block_cols = (n + tile - 1) / tile, block_rows = (m + tile - 1) / tile;
  return 4ull * (std::uint64_t(m) * k * block_cols + std::uint64_t(k) * n * block_rows);
}

}  // namespace

TEST(TiledMatmul, MatchesCpuOnTileMultiples) {
  ct::Rng rng;
  for (int tile : kTiles)
    for (int s : {32, 64, 128}) EXPECT_TRUE(matmul_matches_cpu(rng, tile, s, s, s)) << shape(tile, s, s, s);
}

TEST(TiledMatmul, HandlesSizesThatAreNotTileMultiples) {
  ct::Rng rng;
  for (int tile : kTiles)
    for (auto [m, n, k] : std::vector<std::tuple<int, int, int>>{{17, 33, 9}, {127, 129, 65}, {31, 7, 100}, {5, 5, 5}})
      EXPECT_TRUE(matmul_matches_cpu(rng, tile, m, n, k)) << shape(tile, m, n, k);
}

TEST(TiledMatmul, HandlesASingleRowOrColumn) {
  ct::Rng rng;
  for (int tile : kTiles)
    for (auto [m, n, k] : std::vector<std::tuple<int, int, int>>{{1, 200, 37}, {200, 1, 37}, {1, 1, 300}, {40, 50, 1}})
      EXPECT_TRUE(matmul_matches_cpu(rng, tile, m, n, k)) << shape(tile, m, n, k);
}

TEST(TiledMatmul, DoesNotWritePastTheEndOfC) {
  ct::Rng rng;
  const int m = 33, n = 17, k = 20;
  for (int tile : kTiles) {
    const auto a = rng.nonzero(m * k), b = rng.nonzero(k * n);
    std::vector<float> c(m * n, std::numeric_limits<float>::quiet_NaN());
    const auto guard = ct::guard_pattern<float>();
    c.insert(c.end(), guard.begin(), guard.end());
    ct::DeviceBuffer<float> d_a(a), d_b(b), d_c(c);
    launch(tile, d_a.get(), d_b.get(), d_c.get(), m, n, k);
    const auto result = d_c.download();
    EXPECT_TRUE(ct::all_close_2d(ct::reference_matmul(a, b, m, n, k), std::vector<float>(result.begin(), result.begin() + m * n),
                                 m, n, ct::reduction_tolerance(k)))
        << shape(tile, m, n, k);
    EXPECT_TRUE(ct::guard_untouched(result, m * n)) << shape(tile, m, n, k);
  }
}

TEST(TiledMatmul, LoadsEachElementOncePerTile) {
  // The point of tiling: for N x N matrices 2*N^3*4/TILE bytes instead of 2*N^3*4. Two fixed
  // shapes (whole tiles, and ragged) and one drawn from the run's seed per tile size, so that
  // a kernel cannot tile only the shapes it recognises.
  ct::Rng rng;
  for (int tile : kTiles) {
    std::vector<std::tuple<int, int, int>> shapes{{96, 96, 96}, {33, 47, 19}};
    shapes.emplace_back(rng.integer(17, 96), rng.integer(17, 96), rng.integer(17, 96));
    std::printf("[ COURSE   ] drawn: %s\n", shape(tile, std::get<0>(shapes.back()), std::get<1>(shapes.back()),
                                                  std::get<2>(shapes.back())).c_str());
    for (auto [m, n, k] : shapes) {
      ct::GlobalTraffic traffic;
      ASSERT_TRUE(matmul_matches_cpu(rng, tile, m, n, k, &traffic)) << shape(tile, m, n, k);
      if (!traffic.counted) GTEST_SKIP() << traffic.why_not;
      if (m == n && n == k && n % tile == 0) {
        EXPECT_EQ(traffic.load_bytes, 2ull * n * n * n * 4 / tile) << shape(tile, m, n, k) << ": 2*N^3*4/TILE";
      }
      EXPECT_EQ(traffic.load_bytes, tiled_load_bytes(tile, m, n, k))
          << shape(tile, m, n, k) << ": global bytes loaded; each element of A should be loaded once per block "
          << "column (ceil(N/TILE)), each of B once per block row (ceil(M/TILE)), none outside the matrices";
      EXPECT_EQ(traffic.store_bytes, 4ull * m * n) << shape(tile, m, n, k) << ": global bytes stored (C once)";
    }
  }
}

TEST(TiledMatmul, LoadsTilesAlongRowsCoalesced) {
  // Each thread copies one element of each tile, and which element is up to the kernel: the
  // tiles come out the same either way, the bytes too. What differs is coalescing (lesson 00,
  // and the naive kernel): with threadIdx.x along a row of the tile, a warp's 32 loads are
  // neighbouring floats of one row of A (or of B), 32 x 4 bytes = 4 sectors of 32 bytes (for
  // TILE = 8 and 16: 4 and 2 rows of whole sectors, 4 sectors still). With threadIdx.x down a
  // column, every lane reads another row: TILE sectors per load at TILE = 8, 16, 32.
  // The shape is drawn from the run's seed for each tile size, so that a kernel cannot load
  // along rows for one shape it recognises only: M, N and K whole tiles, 2 to 128 / TILE of
  // them. (Ragged shapes, drawn here before, let tile loads down the columns through at 1.9 to
  // 5.8 sectors per access for about half the seeds: the partial tiles' guarded lanes load
  // nothing. With whole tiles they make 7.2 to 28.9, and the reference 4 or less.)
  ct::Rng rng;
  for (int tile : kTiles) {
    const int m = tile * rng.integer(2, 128 / tile), n = tile * rng.integer(2, 128 / tile),
              k = tile * rng.integer(2, 128 / tile);
    std::printf("[ COURSE   ] drawn: %s\n", shape(tile, m, n, k).c_str());
    ct::GlobalTraffic traffic;
    ASSERT_TRUE(matmul_matches_cpu(rng, tile, m, n, k, &traffic)) << shape(tile, m, n, k);
    if (!traffic.counted) GTEST_SKIP() << traffic.why_not;
    std::printf("[ COURSE   ] tiled_matmul, %s: %.2f sectors per warp-wide access\n", shape(tile, m, n, k).c_str(),
                traffic.sectors_per_request());
    EXPECT_LE(traffic.sectors_per_request(), 6.0)
        << shape(tile, m, n, k) << ": " << traffic.sectors_per_request() << " 32-byte sectors per warp-wide "
        << "access; load the tiles as the naive kernel reads B: threadIdx.x along a row of the tile "
           "(tile_a[ty][tx] = A[row][k0 + tx], tile_b[ty][tx] = B[k0 + ty][col]), so that a warp's lanes read "
           "neighbouring floats (4 sectors per access), not one float of each of TILE different rows";
  }
}
