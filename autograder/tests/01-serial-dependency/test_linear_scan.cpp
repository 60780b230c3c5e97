// Tests for exercise 01/05 linear_scan (contract: lessons/01-serial-dependency/linear_scan.hpp).
// Run: ./course test 01/linear_scan

#include "linear_scan.hpp"

#include <cuda_runtime.h>

#include "course_test.hpp"
#include "cuda_check.hpp"
#include "linear_scan_reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

namespace ct = course::test;

namespace {

/// Runs the scan on device copies; `h` gets n results (poisoned first).
std::vector<float> run_scan(const std::vector<float>& a, const std::vector<float>& b, float h_init) {
  const int n = static_cast<int>(a.size());
  ct::DeviceBuffer<float> d_a(a), d_b(b), d_h(n), work(linear_scan_workspace_floats(n));
  d_h.poison();
  work.poison();  // the workspace starts as garbage, too
  launch_linear_scan(d_a.get(), d_b.get(), h_init, d_h.get(), n, work.get());
  return d_h.download();
}

}  // namespace

TEST(LinearScan, MatchesTheSerialLoopOnAwkwardSizes) {
  // 1, around a warp, a block's 256 threads, a tile of 1024, several tiles, more tiles than
  // the carries pass has threads (65537 -> 65 tiles; 2^20 + 3 -> 1025 tiles).
  ct::Rng rng;
  for (int n : ct::awkward_sizes(kLinearScanTile)) {
    const auto a = rng.nonzero(n, 0.5f, 0.95f);  // |a| in [0.5, 0.95], random sign
    const auto b = rng.uniform(n, -1.0f, 1.0f);
    const float h_init = static_cast<float>(rng.scalar(-2.0, 2.0));
    ASSERT_TRUE(ct::all_close(serial_recurrence(a, b, h_init), run_scan(a, b, h_init),
                              scan_tolerance(n, 20.0)))
        << "n = " << n << ", h_init = " << h_init << " (" << (n - 1) / kLinearScanTile + 1 << " tiles)";
  }
}

TEST(LinearScan, IsAPrefixSumWhenAIsOne) {
  // a = 1: h[t] = h_init + b[0] + ... + b[t], a running sum whose error grows with its length.
  ct::Rng rng;
  const int n = 100003;
  const std::vector<float> a(n, 1.0f);
  const auto b = rng.uniform(n, -1.0f, 1.0f);
  EXPECT_TRUE(ct::all_close(serial_recurrence(a, b, 0.5f), run_scan(a, b, 0.5f), ct::reduction_tolerance(n)))
      << "n = " << n << ", a = 1 everywhere";
}

TEST(LinearScan, ForgetsThePastWhereAIsZero) {
  // a[t] = 0 cuts the chain: h[t] = b[t] exactly, whatever came before. Zeros at tile edges.
  ct::Rng rng;
  const int n = 5000;
  auto a = rng.nonzero(n, 0.5f, 0.99f);
  const auto b = rng.uniform(n, -1.0f, 1.0f);
  for (int t : {0, 1, 1023, 1024, 2047, 3000, 4999}) a[t] = 0.0f;
  const auto h = run_scan(a, b, 3.0f);
  EXPECT_TRUE(ct::all_close(serial_recurrence(a, b, 3.0f), h, scan_tolerance(n, 100.0))) << "n = " << n;
  for (int t : {0, 1, 1023, 1024, 2047, 3000, 4999})
    EXPECT_EQ(h[t], b[t]) << "at t = " << t << " a[t] = 0, so h[t] must be exactly b[t]";
}

TEST(LinearScan, DoesNotWritePastTheEnd) {
  ct::Rng rng;
  for (int n : {1, 5, 1000, 1025, 2049}) {
    const auto a = rng.nonzero(n, 0.5f, 0.95f);
    const auto b = rng.uniform(n, -1.0f, 1.0f);
    std::vector<float> h(n, std::numeric_limits<float>::quiet_NaN());
    const auto guard = ct::guard_pattern<float>();
    h.insert(h.end(), guard.begin(), guard.end());
    // a and b have real values past n, so a thread that ignores n computes a stray number.
    auto a_padded = a, b_padded = b;
    a_padded.resize(h.size(), 0.5f);
    b_padded.resize(h.size(), 0.5f);
    ct::DeviceBuffer<float> d_a(a_padded), d_b(b_padded), d_h(h), work(linear_scan_workspace_floats(n));
    launch_linear_scan(d_a.get(), d_b.get(), -1.0f, d_h.get(), n, work.get());
    const auto result = d_h.download();
    EXPECT_TRUE(ct::all_close(serial_recurrence(a, b, -1.0f), std::vector<float>(result.begin(), result.begin() + n),
                              scan_tolerance(n, 20.0)))
        << "n = " << n;
    EXPECT_TRUE(ct::guard_untouched(result, n)) << "n = " << n;
  }
}

TEST(LinearScan, MovesAtMost22BytesPerElement) {
  // Counted on the simulator: a and b read at most twice (16 bytes), h written once (4), and
  // the tiles' carries well under 2 bytes per element. 12 bytes per element is the floor.
  // The length is drawn from the run's seed (2^17 to 2^18 + 4096, a ragged last tile almost
  // always), so that a kernel cannot scan as taught for one length it recognises only.
  ct::Rng rng;
  const int n = rng.integer(1 << 17, (1 << 18) + 4096);
  std::printf("[ COURSE   ] drawn: n = %d\n", n);
  const auto a = rng.nonzero(n, 0.5f, 0.95f);
  const auto b = rng.uniform(n, -1.0f, 1.0f);
  ct::DeviceBuffer<float> d_a(a), d_b(b), d_h(n), work(linear_scan_workspace_floats(n));
  d_h.poison();
  const auto traffic = ct::count_global_traffic(
      [&] { launch_linear_scan(d_a.get(), d_b.get(), 0.25f, d_h.get(), n, work.get()); });
  ASSERT_TRUE(ct::all_close(serial_recurrence(a, b, 0.25f), d_h.download(), scan_tolerance(n, 20.0)))
      << "n = " << n;
  if (!traffic.counted) GTEST_SKIP() << traffic.why_not;
  const double per_element = double(traffic.bytes()) / n;
  std::printf("[ COURSE   ] linear_scan, n = %d: %llu bytes loaded + %llu stored = %.3f bytes per element, "
              "%llu launches, longest thread: %llu global + %llu shared accesses\n",
              n, static_cast<unsigned long long>(traffic.load_bytes),
              static_cast<unsigned long long>(traffic.store_bytes), per_element,
              static_cast<unsigned long long>(traffic.launches),
              static_cast<unsigned long long>(traffic.span_global_ops),
              static_cast<unsigned long long>(traffic.span_shared_ops));
  EXPECT_LE(traffic.bytes(), 22ull * n + 4096)
      << "the scan moved " << traffic.bytes() << " bytes of global memory (" << per_element
      << " per element); the budget is 22 per element";
  EXPECT_GE(traffic.load_bytes, 8ull * n) << "every a[t] and b[t] must be read at least once";
  EXPECT_GE(traffic.store_bytes, 4ull * n) << "every h[t] must be written";
  // The point of the scan: inside a tile the chain is broken into a tree, so no thread walks
  // the tile's elements, nor the block's threads' maps, one after another (a block scan's
  // longest thread makes a few dozen accesses: its 4 elements, log2(32) shuffles, the 8 warps'
  // maps; walking a tile of kLinearScanTile elements makes thousands, walking the 256 threads'
  // maps hundreds). Across the tiles, the given carries pass (one block of 256 threads) walks
  // ceil(tiles / 256) tiles per thread serially: 5 accesses each (tile_a and tile_b twice, the
  // carry once). Here 128 to 260 tiles: 1 or 2 per thread.
  constexpr std::uint64_t kCarriesThreads = 256;
  const std::uint64_t tiles = (n + kLinearScanTile - 1) / kLinearScanTile;
  const std::uint64_t tiles_per_carries_thread = (tiles + kCarriesThreads - 1) / kCarriesThreads;
  const std::uint64_t longest = traffic.span_global_ops + traffic.span_shared_ops;
  EXPECT_LE(longest, 5 * tiles_per_carries_thread + 128)
      << "one thread made " << traffic.span_global_ops << " global and " << traffic.span_shared_ops
      << " shared accesses: elements or maps are walked one after another somewhere; scan each block "
         "as a tree (a warp scan with shuffles, then the few warps' totals through shared memory), so that "
         "the longest thread's work grows with log(block), not with the tile or the block's 256 threads";
  // Nor through a chain of shuffles: one warp that walks the tile's 1024 steps, each step's
  // (a, b) broadcast to it by __shfl_sync, makes 2048 dependent warp operations per thread
  // and barely touches memory.
  EXPECT_LE(traffic.span_warp_ops, 64u)
      << "one thread made " << traffic.span_warp_ops << " warp operations (shuffles, votes): a walk over the "
         "tile's elements passed from lane to lane is still a walk; a warp scan makes log2(32) = 5 steps (the "
         "reference's longest thread makes 12)";
}
