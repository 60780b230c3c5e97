// Tests for exercise 03/01 dot_product (contract: lessons/03-matmul-reuse/dot_product.hpp).
// Run: ./course test 03/dot_product

#include "dot_product.hpp"

#include <cuda_runtime.h>

#include "course_test.hpp"
#include "cuda_check.hpp"

#include <cstdint>
#include <cstdio>
#include <vector>

namespace ct = course::test;

namespace {

/// CPU reference in double.
double cpu_dot(const std::vector<float>& x, const std::vector<float>& y) {
  double sum = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) sum += double(x[i]) * double(y[i]);
  return sum;
}

/// Runs the launcher on fresh inputs of length n into a poisoned result and returns
/// whether it matches the CPU within a tolerance that grows with n; `traffic`, when given,
/// receives the simulator's counters of the launch.
::testing::AssertionResult dot_matches_cpu(ct::Rng& rng, int n, ct::GlobalTraffic* traffic = nullptr) {
  // y > 0 and x mostly positive: the exact sum is far from 0 (a kernel returning 0, or
  // dropping a block's share, cannot pass by luck), and the terms are at most 1 in size.
  const auto x = rng.uniform(n, -0.5f, 1.0f);
  const auto y = rng.uniform(n, 0.25f, 1.0f);
  ct::DeviceBuffer<float> d_x(x), d_y(y), d_result(1);
  d_result.poison();
  const auto counted = ct::count_global_traffic([&] { launch_dot_product(d_x.get(), d_y.get(), d_result.get(), n); });
  if (traffic != nullptr) *traffic = counted;
  const std::vector<double> expected = {cpu_dot(x, y)};
  return ct::all_close(expected, d_result.download(), ct::reduction_tolerance(n));
}

#ifdef CUDASIM
/// The atomics on shared memory of the last counted window (the simulator's launch figures stay
/// until the next window opens; its atomics are global or shared).
std::uint64_t shared_atomics_of_the_last_window() {
  std::uint64_t all = 0, global = 0;
  for (const cudasim::KernelStats& k : cudasim::kernel_stats()) {
    all += k.atomics;
    global += k.global_atomics;
  }
  return all - global;
}
#endif

/// The length the "how" checks count, drawn per run from the run's seed (2^17 to 2^18 + 4096:
/// around the 2^18 threads of kDotMaxBlocks blocks, past which the grid-stride loop gives
/// threads a second element), so that a kernel cannot reduce as taught for one length it
/// recognises only.
int draw_counted_length(ct::Rng& rng) {
  const int n = rng.integer(1 << 17, (1 << 18) + 4096);
  std::printf("[ COURSE   ] drawn: n = %d\n", n);
  return n;
}

}  // namespace

TEST(DotProduct, MatchesCpuOnAwkwardSizes) {
  // 1, around a warp and a block, around kDotThreads * kDotMaxBlocks (where the grid-stride
  // loop starts), and 2^20 + 3.
  ct::Rng rng;
  std::vector<int> sizes = ct::awkward_sizes(kDotThreads);
  for (int n : {kDotThreads * kDotMaxBlocks - 1, kDotThreads * kDotMaxBlocks, kDotThreads * kDotMaxBlocks + 1})
    sizes.push_back(n);
  for (int n : sizes) {
    EXPECT_TRUE(dot_matches_cpu(rng, n)) << "n = " << n;
  }
}

TEST(DotProduct, HandlesOneAndTwoElements) {
  ct::Rng rng;
  for (int n : {1, 2, 3}) EXPECT_TRUE(dot_matches_cpu(rng, n)) << "n = " << n;
}

TEST(DotProduct, WritesZeroForAnEmptyVector) {
  ct::DeviceBuffer<float> d_result(1);
  d_result.poison();
  launch_dot_product(nullptr, nullptr, d_result.get(), 0);
  EXPECT_EQ(d_result.download()[0], 0.0f)
      << "n = 0: the sum of no terms is 0, and *result must say so (it held NaN before the call)";
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "n = 0 left a CUDA error behind";
}

TEST(DotProduct, OverwritesTheResultInsteadOfAddingToIt) {
  // Called twice on the same result: the second call must not add to the first one's value
  // (a result that is not zeroed before the blocks' atomicAdds would double).
  ct::Rng rng;
  const int n = 100003;
  const auto x = rng.uniform(n, -0.5f, 1.0f);
  const auto y = rng.uniform(n, 0.25f, 1.0f);
  ct::DeviceBuffer<float> d_x(x), d_y(y), d_result(1);
  d_result.poison();
  launch_dot_product(d_x.get(), d_y.get(), d_result.get(), n);
  launch_dot_product(d_x.get(), d_y.get(), d_result.get(), n);
  const std::vector<double> expected = {cpu_dot(x, y)};
  EXPECT_TRUE(ct::all_close(expected, d_result.download(), ct::reduction_tolerance(n)))
      << "the second of two calls on the same result (n = " << n << ")";
}

TEST(DotProduct, ReadsEachInputElementOnce) {
  // A dot product has nothing to reuse: 8 bytes loaded per element is the floor, and reading
  // the inputs twice (or re-reading them per block) shows as more. A few bytes per block for
  // a second pass over partial sums are allowed. At a length drawn from the run's seed.
  ct::Rng rng;
  const int n = draw_counted_length(rng);
  ct::GlobalTraffic traffic;
  ASSERT_TRUE(dot_matches_cpu(rng, n, &traffic)) << "n = " << n;
  if (!traffic.counted) GTEST_SKIP() << traffic.why_not;
  const std::uint64_t floor = 8ull * n;
  const std::uint64_t allowance = 16ull * kDotMaxBlocks;  // partial sums of a second pass
  EXPECT_GE(traffic.load_bytes, floor) << "the kernel loaded fewer bytes than x and y hold";
  EXPECT_LE(traffic.load_bytes, floor + allowance)
      << "global loads: " << traffic.load_bytes << " bytes for n = " << n << ", expected " << floor
      << " (8 bytes per element, each element of x and y read once) plus at most " << allowance
      << " for combining the blocks' sums";
}

TEST(DotProduct, ReducesInsideEachBlock) {
  // The lesson's reduction: each block combines its threads' partial sums on chip (shared
  // memory or warp shuffles) and only then touches the result, once. One atomicAdd per thread
  // into the same float gives the right number, but every one of them waits for the previous
  // at the memory system: the serialisation the block-level tree exists to avoid.
  ct::Rng rng;
  ct::GlobalTraffic counted;
  ASSERT_TRUE(dot_matches_cpu(rng, draw_counted_length(rng), &counted));
  if (!counted.counted) GTEST_SKIP() << counted.why_not;
  EXPECT_LE(counted.global_atomics, counted.blocks)
      << counted.global_atomics << " atomics on global memory for " << counted.blocks
      << " blocks: reduce inside each block first (shared memory or __shfl_down_sync), then let one "
         "thread per block add the block's sum";
  // Per block, not only in total: a launch padded with blocks that do nothing has as many
  // blocks as the working ones have threads (a red-team run passed the total so).
  EXPECT_LE(counted.max_atomics_per_block, 1u)
      << "a block made " << counted.max_atomics_per_block << " atomics on global memory: its threads should "
         "combine their sums on chip first, and one thread add the block's sum";
  EXPECT_GT(counted.shared_bytes + counted.warp_ops, 0u)
      << "no shared memory and no warp shuffle: the threads of a block never combined their sums";
}

TEST(DotProduct, CombinesTheBlocksSumsInATree) {
  // Combining a block's kDotThreads partial sums takes log2(kDotThreads) steps when the
  // threads work in a tree (each step halves the active threads; shuffles inside a warp), but
  // kDotThreads steps when one thread walks them one by one. The simulator counts the longest
  // thread's shared-memory accesses (its span): the reference makes 11 for 256 threads (its
  // store, three halving steps of two loads and a store, one load for the shuffles), a tree in
  // shared memory all the way down 26; thread 0 adding the 256 sums itself makes 257 (a
  // red-team run passed so with full performance points, as the model charges the walk little).
  ct::Rng rng;
  ct::GlobalTraffic counted;
  ASSERT_TRUE(dot_matches_cpu(rng, draw_counted_length(rng), &counted));
  if (!counted.counted) GTEST_SKIP() << counted.why_not;
  int steps = 0;
  while ((1 << steps) < kDotThreads) ++steps;
  const std::uint64_t bound = 3ull * steps + 8;  // 32 for 256 threads: a store, 3 per tree step, slack
  std::printf("[ COURSE   ] the longest thread made %llu shared-memory accesses (at most %llu allowed)\n",
              static_cast<unsigned long long>(counted.span_shared_ops), static_cast<unsigned long long>(bound));
  EXPECT_LE(counted.span_shared_ops, bound)
      << "one thread made " << counted.span_shared_ops << " shared-memory accesses; a tree reduction of "
      << kDotThreads << " partial sums needs about " << 2 * steps << " per thread (log2(" << kDotThreads
      << ") = " << steps << " halving steps: `if (tid < active) partial[tid] += partial[tid + active]` "
      << "with a __syncthreads() between steps, the last warp with __shfl_down_sync): a single thread "
         "walking the block's sums one by one makes the others wait for a serial loop of "
      << kDotThreads << " steps";
#ifdef CUDASIM
  // Nor in one shared accumulator: an atomicAdd of every thread's sum into a shared float is one
  // shared access on each thread's path, but the block's kDotThreads of them wait for one another
  // at that address, the serial walk again (an eighth red-team run passed so). A warp's lane 0
  // adding its warp's shuffled sum there is kDotThreads / 32 per block.
  const std::uint64_t shared_atomics = shared_atomics_of_the_last_window();
  EXPECT_LE(shared_atomics, counted.blocks * (kDotThreads / 32))
      << shared_atomics << " atomics on shared memory for " << counted.blocks << " blocks: the threads of a "
      << "block added their sums one at a time into one shared value; combine them in a tree (halving steps in "
         "shared memory, __shfl_down_sync within a warp)";
#endif
}
