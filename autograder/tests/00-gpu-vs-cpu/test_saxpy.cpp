// Tests for exercise 00/02 saxpy (contract: lessons/00-gpu-vs-cpu/saxpy.hpp).
// Run: ./course test 00/saxpy

#include "saxpy.hpp"

#include <cuda_runtime.h>

#include "course_test.hpp"
#include "cuda_check.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace ct = course::test;

namespace {

/// CPU reference in double.
std::vector<double> cpu_saxpy(float alpha, const std::vector<float>& x,
                              const std::vector<float>& y) {
  std::vector<double> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = double(alpha) * x[i] + double(y[i]);
  return out;
}

/// alpha away from 0 and 1 with a random sign, so "y unchanged" and "y = x + y" both fail.
float random_alpha(ct::Rng& rng) {
  const double magnitude = rng.scalar(1.5, 3.0);
  return static_cast<float>(rng.integer(0, 1) ? magnitude : -magnitude);
}

/// Runs saxpy on fresh inputs of length n with the given grid and compares with the CPU.
::testing::AssertionResult saxpy_matches_cpu(ct::Rng& rng, int n, int blocks, int threads) {
  const float alpha = random_alpha(rng);
  const auto x = rng.nonzero(n);
  const auto y = rng.nonzero(n);  // y is input and output: its old value must change
  ct::DeviceBuffer<float> d_x(x), d_y(y);
  launch_saxpy(n, alpha, d_x.get(), d_y.get(), blocks, threads);
  const auto result =
      ct::all_close(cpu_saxpy(alpha, x, y), d_y.download(), ct::elementwise_tolerance());
  if (result) return result;
  return ::testing::AssertionFailure()
         << "n = " << n << ", alpha = " << alpha << ", grid = " << blocks << " blocks x "
         << threads << " threads (" << static_cast<long long>(blocks) * threads
         << " threads in all):\n" << result.message();
}

}  // namespace

TEST(Saxpy, MatchesCpuOnAwkwardSizes) {
  ct::Rng rng;
  for (int n : ct::awkward_sizes(256)) {
    // One thread per element, capped: large n also needs the loop.
    const int blocks = std::min((n + 255) / 256, 120);
    EXPECT_TRUE(saxpy_matches_cpu(rng, n, blocks, 256));
  }
}

TEST(Saxpy, WorksWithFewerThreadsThanElements) {
  // 3 x 64 = 192 threads for 100003 elements: each thread must do ~521 of them.
  ct::Rng rng;
  EXPECT_TRUE(saxpy_matches_cpu(rng, 100003, 3, 64));
  EXPECT_TRUE(saxpy_matches_cpu(rng, ct::large_size(), 7, 128));
  EXPECT_TRUE(saxpy_matches_cpu(rng, 1000, 1, 32));
}

TEST(Saxpy, WorksWithASingleThread) {
  // The degenerate grid: the loop's stride is 1 and one thread walks the whole array.
  ct::Rng rng;
  EXPECT_TRUE(saxpy_matches_cpu(rng, 4099, 1, 1));
}

TEST(Saxpy, WorksWithMoreThreadsThanElements) {
  ct::Rng rng;
  for (int n : {1, 100, 1000, 4097}) {
    EXPECT_TRUE(saxpy_matches_cpu(rng, n, 64, 256));  // 16384 threads
  }
}

TEST(Saxpy, DoesNotWritePastTheEnd) {
  ct::Rng rng;
  struct Grid { int n, blocks, threads; };
  for (Grid g : {Grid{1, 4, 256}, Grid{100, 2, 64}, Grid{1000, 8, 256}, Grid{100003, 3, 64}}) {
    const float alpha = random_alpha(rng);
    const auto x = rng.nonzero(g.n);
    const auto y = rng.nonzero(g.n);
    // y is followed by a guard pattern, x by real numbers, so a thread past n that forgets
    // the bound reads valid memory and its stray write lands in the guard.
    auto y_padded = y;
    const auto guard = ct::guard_pattern<float>();
    y_padded.insert(y_padded.end(), guard.begin(), guard.end());
    auto x_padded = x;
    x_padded.resize(y_padded.size(), 1.0f);
    ct::DeviceBuffer<float> d_x(x_padded), d_y(y_padded);
    launch_saxpy(g.n, alpha, d_x.get(), d_y.get(), g.blocks, g.threads);
    const auto result = d_y.download();
    const std::vector<float> first_n(result.begin(), result.begin() + g.n);
    EXPECT_TRUE(ct::all_close(cpu_saxpy(alpha, x, y), first_n, ct::elementwise_tolerance()))
        << "n = " << g.n << ", grid = " << g.blocks << " x " << g.threads;
    EXPECT_TRUE(ct::guard_untouched(result, g.n))
        << "n = " << g.n << ", grid = " << g.blocks << " x " << g.threads;
  }
}

namespace {

/// A grid for the coalescing check, drawn from the run's seed: 1 to 64 blocks of 32 to 256
/// threads (the other tests' grids among them), and n a random 4 to 24 elements per thread,
/// so that a kernel cannot keep the coalesced loop for one grid or size it recognises.
struct DrawnGrid { int n, blocks, threads; };

DrawnGrid draw_grid(ct::Rng& rng) {
  DrawnGrid g;
  g.blocks = rng.integer(1, 64);
  g.threads = 32 << rng.integer(0, 3);
  const int stride = g.blocks * g.threads;
  g.n = stride * rng.integer(4, 24) + rng.integer(0, stride - 1);
  return g;
}

/// Runs saxpy at `g` with the traffic counted: at most 3 global accesses per element a thread
/// owns under the grid-stride loop, and a warp's accesses on neighbouring elements.
void check_shares_and_coalesces(ct::Rng& rng, DrawnGrid g) {
  const int n = g.n, blocks = g.blocks, threads = g.threads;
  const std::string where = "n = " + std::to_string(n) + ", grid = " + std::to_string(blocks) + " x " +
                            std::to_string(threads);
  const float alpha = random_alpha(rng);
  const auto x = rng.uniform(n, -1.0f, 1.0f);
  const auto y = rng.uniform(n, -1.0f, 1.0f);
  ct::DeviceBuffer<float> d_x(x), d_y(y);
  const auto counted = ct::count_global_traffic([&] { launch_saxpy(n, alpha, d_x.get(), d_y.get(), blocks, threads); });
  ASSERT_TRUE(ct::all_close(cpu_saxpy(alpha, x, y), d_y.download(), 1e-6, 1e-6)) << where;
  if (!counted.counted) GTEST_SKIP() << counted.why_not;
  const long long stride = static_cast<long long>(blocks) * threads;
  const std::uint64_t per_thread = 3u * static_cast<std::uint64_t>((n + stride - 1) / stride);
  EXPECT_LE(counted.span_global_ops, per_thread)
      << where << ": one thread made " << counted.span_global_ops << " global accesses; a grid-stride loop over "
      << stride << " threads gives each at most " << per_thread;
  EXPECT_LE(counted.sectors_per_request(), 4.0)
      << where << ": " << counted.sectors_per_request() << " 32-byte sectors per warp-wide access: at each step "
      << "of the loop the threads of a warp should touch neighbouring elements (i = start + k * stride)";
}

}  // namespace

TEST(Saxpy, TheGridStrideLoopSharesTheWorkAndCoalesces) {
  // Each thread takes every stride-th element, so no thread makes more than 3 accesses (load
  // x, load y, store y) per element it owns, and the 32 threads of a warp touch 32
  // neighbouring elements at each step. One thread walking everything, or each thread taking
  // a contiguous chunk, gets the same numbers without either. Two grids drawn from the run's
  // seed, of different sizes, so that no one grid or size marks the checked call.
  ct::Rng rng;
  const DrawnGrid first = draw_grid(rng);
  DrawnGrid second = draw_grid(rng);
  while (second.blocks * second.threads == first.blocks * first.threads) second = draw_grid(rng);
  for (DrawnGrid g : {first, second}) {
    check_shares_and_coalesces(rng, g);
    if (::testing::Test::HasFatalFailure() || ::testing::Test::IsSkipped()) return;
  }
}
