// Cooperative launches: cudaLaunchCooperativeKernel runs every block of the grid at once, so
// that cooperative_groups::this_grid().sync() is a grid-wide barrier; a grid larger than the
// device holds at once is cudaErrorCooperativeLaunchTooLarge. Valid CUDA: the same file runs on
// a GPU. The simulator's reports (a block that exits before a grid.sync(), blocks at different
// grid.sync() calls, grid.sync() outside a cooperative launch) are checked under #ifdef CUDASIM.
#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "launch_report.cuh"

namespace cg = cooperative_groups;

namespace {

#define ASSERT_CUDA(expr) ASSERT_EQ((expr), cudaSuccess)

constexpr int kPhases = 4;

/// Each phase: thread 0 of every block counts its block in, the grid syncs, and every thread
/// checks that every block was counted; then every thread reads a value another block wrote
/// before the last sync. Any missed wait shows as a count or a value that is not there yet.
__global__ void phases(unsigned* counter, unsigned long long* values, unsigned long long* neighbours,
                       int* failures) {
  cg::grid_group grid = cg::this_grid();
  const unsigned long long rank = grid.thread_rank();
  const unsigned long long size = grid.size();
  for (int phase = 0; phase < kPhases; ++phase) {
    if (threadIdx.x == 0) atomicAdd(counter, 1u);
    values[rank] = rank * 10 + phase;
    grid.sync();
    if (atomicAdd(counter, 0u) != grid.num_blocks() * (phase + 1)) atomicAdd(failures, 1);
    // A thread of the next block (of the first, for the last block).
    const unsigned long long other = (rank + blockDim.x) % size;
    if (values[other] != other * 10 + phase) atomicAdd(failures, 1);
    neighbours[rank] = values[other];
    grid.sync();  // nobody overwrites values before everybody has read them
  }
}

__global__ void describe_grid(unsigned long long* ranks, unsigned long long* sizes, int* valid, unsigned* blocks) {
  cg::grid_group grid = cg::this_grid();
  const unsigned long long rank = grid.thread_rank();
  ranks[rank] = rank;
  sizes[rank] = grid.size();
  valid[rank] = grid.is_valid() ? 1 : 0;
  blocks[rank] = grid.block_rank() * 1000 + grid.num_blocks();
}

class CooperativeLaunch : public ::testing::Test {
 protected:
  template <class T>
  T* device_zeros(size_t n) {
    T* d = nullptr;
    EXPECT_EQ(cudaMalloc(&d, n * sizeof(T)), cudaSuccess);
    EXPECT_EQ(cudaMemset(d, 0, n * sizeof(T)), cudaSuccess);
    allocations_.push_back(d);
    return d;
  }
  template <class T>
  std::vector<T> download(const T* d, size_t n) {
    std::vector<T> host(n);
    EXPECT_EQ(cudaMemcpy(host.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return host;
  }
  void TearDown() override {
    for (void* d : allocations_) EXPECT_EQ(cudaFree(d), cudaSuccess);
  }
  /// Runs `phases` cooperatively, checks its own findings and its count, and returns what each
  /// thread read in the last phase.
  std::vector<unsigned long long> run_phases(dim3 grid, dim3 block) {
    const unsigned blocks = grid.x * grid.y * grid.z;
    const size_t threads = static_cast<size_t>(blocks) * block.x * block.y * block.z;
    unsigned* counter = device_zeros<unsigned>(1);
    unsigned long long* values = device_zeros<unsigned long long>(threads);
    unsigned long long* neighbours = device_zeros<unsigned long long>(threads);
    int* failures = device_zeros<int>(1);
    void* args[] = {&counter, &values, &neighbours, &failures};
    EXPECT_EQ(cudaLaunchCooperativeKernel(phases, grid, block, args, 0, nullptr), cudaSuccess);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(download(failures, 1)[0], 0);
    EXPECT_EQ(download(counter, 1)[0], blocks * kPhases);
    return download(neighbours, threads);
  }

 private:
  std::vector<void*> allocations_;
};

TEST_F(CooperativeLaunch, TheDeviceSupportsIt) {
  int supported = 0;
  ASSERT_CUDA(cudaDeviceGetAttribute(&supported, cudaDevAttrCooperativeLaunch, 0));
  EXPECT_EQ(supported, 1);
  cudaDeviceProp prop;
  ASSERT_CUDA(cudaGetDeviceProperties(&prop, 0));
  EXPECT_EQ(prop.cooperativeLaunch, 1);
}

TEST_F(CooperativeLaunch, GridSyncSeparatesPhasesAcrossBlocks) {
  const size_t threads = 6 * 2 * 48;
  // A 2-D grid, blocks of one and a half warps.
  const std::vector<unsigned long long> got = run_phases(dim3(6, 2), dim3(48));
  for (size_t i = 0; i < threads; ++i) EXPECT_EQ(got[i], (i + 48) % threads * 10 + kPhases - 1) << "thread " << i;
}

// As many blocks of 1024 threads as the device holds at once (270,336 threads on the modelled
// H100), every one of them waiting at each grid.sync(): more waiting threads than a process
// could give stacks with guard pages of their own (NVIDIA's simpleAWBarrier launches this).
TEST_F(CooperativeLaunch, TheLargestGridTheDeviceHoldsSyncsToo) {
  cudaDeviceProp prop;
  ASSERT_CUDA(cudaGetDeviceProperties(&prop, 0));
  int per_sm = 0;
  ASSERT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, phases, 1024, 0));
  ASSERT_GT(per_sm, 0);
  run_phases(dim3(per_sm * prop.multiProcessorCount), dim3(1024));
}

TEST_F(CooperativeLaunch, TheGridGroupDescribesTheGrid) {
  const int blocks = 5, block_size = 64, threads = blocks * block_size;
  unsigned long long* ranks = device_zeros<unsigned long long>(threads);
  unsigned long long* sizes = device_zeros<unsigned long long>(threads);
  int* valid = device_zeros<int>(threads);
  unsigned* block_ranks = device_zeros<unsigned>(threads);
  void* args[] = {&ranks, &sizes, &valid, &block_ranks};
  cudaStream_t s;
  ASSERT_CUDA(cudaStreamCreate(&s));
  ASSERT_CUDA(cudaLaunchCooperativeKernel(describe_grid, dim3(blocks), dim3(block_size), args, 0, s));
  ASSERT_CUDA(cudaStreamSynchronize(s));
  ASSERT_CUDA(cudaStreamDestroy(s));
  const auto r = download(ranks, threads);
  const auto z = download(sizes, threads);
  const auto v = download(valid, threads);
  const auto b = download(block_ranks, threads);
  for (int i = 0; i < threads; ++i) {
    EXPECT_EQ(r[i], static_cast<unsigned long long>(i));
    EXPECT_EQ(z[i], static_cast<unsigned long long>(threads));
    EXPECT_EQ(v[i], 1);
    EXPECT_EQ(b[i], static_cast<unsigned>(i / block_size * 1000 + blocks));
  }
}

TEST_F(CooperativeLaunch, AnOrdinaryLaunchHasAGridGroupThatSaysItIsValid) {
  // CUDA 13 on an H200 (2026-11-27): is_valid() is true in an ordinary launch too.
  const int threads = 2 * 32;
  unsigned long long* ranks = device_zeros<unsigned long long>(threads);
  unsigned long long* sizes = device_zeros<unsigned long long>(threads);
  int* valid = device_zeros<int>(threads);
  unsigned* block_ranks = device_zeros<unsigned>(threads);
  describe_grid<<<2, 32>>>(ranks, sizes, valid, block_ranks);
  ASSERT_CUDA(cudaDeviceSynchronize());
  const auto r = download(ranks, threads);
  const auto v = download(valid, threads);
  for (int i = 0; i < threads; ++i) {
    EXPECT_EQ(r[i], static_cast<unsigned long long>(i));  // ranks and sizes are still defined
    EXPECT_EQ(v[i], 1);
  }
}

TEST_F(CooperativeLaunch, AGridLargerThanTheDeviceHoldsIsRefused) {
  cudaDeviceProp prop;
  ASSERT_CUDA(cudaGetDeviceProperties(&prop, 0));
  const int block_size = 1024;
  int per_sm = 0;
  ASSERT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, describe_grid, block_size, 0));
  ASSERT_GT(per_sm, 0);
  unsigned long long* ranks = nullptr;
  unsigned long long* sizes = nullptr;
  int* valid = nullptr;
  unsigned* block_ranks = nullptr;
  void* args[] = {&ranks, &sizes, &valid, &block_ranks};
  const dim3 too_many(per_sm * prop.multiProcessorCount + 1);
  EXPECT_EQ(cudaLaunchCooperativeKernel(describe_grid, too_many, dim3(block_size), args, 0, nullptr),
            cudaErrorCooperativeLaunchTooLarge);
  EXPECT_EQ(cudaGetLastError(), cudaErrorCooperativeLaunchTooLarge);
  EXPECT_STREQ(cudaGetErrorName(cudaErrorCooperativeLaunchTooLarge), "cudaErrorCooperativeLaunchTooLarge");
  ASSERT_CUDA(cudaDeviceSynchronize());
}

#ifdef CUDASIM

/// "test_cooperative_launch.cu:<line>", how the reports name a call site in this file.
std::string site(int line) { return "test_cooperative_launch.cu:" + std::to_string(line); }

#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE((haystack).find(needle), std::string::npos) << "expected \"" << (needle) << "\" in:\n" << (haystack)

constexpr int kEarlyExitSync = __LINE__ + 4;
__global__ void block_one_returns_early() {
  cg::grid_group grid = cg::this_grid();
  if (blockIdx.x == 1) return;
  grid.sync();
}

TEST(CooperativeLaunchReports, ABlockThatExitsBeforeAGridSyncIsADeadlock) {
  const std::string report = failing_launch_report([] {
    EXPECT_EQ(cudaLaunchCooperativeKernel(block_one_returns_early, dim3(3), dim3(32), nullptr, 0, nullptr),
              cudaSuccess);
  });
  EXPECT_CONTAINS(report, "deadlock");
  EXPECT_CONTAINS(report, "waits at grid_group::sync() at");
  EXPECT_CONTAINS(report, site(kEarlyExitSync));
  EXPECT_CONTAINS(report, "block (1,0,0) has exited without reaching it");
}

constexpr int kEvenBlocksSync = __LINE__ + 4;
constexpr int kOddBlocksSync = __LINE__ + 5;
__global__ void blocks_at_different_grid_syncs() {
  if (blockIdx.x % 2 == 0) {
    cg::this_grid().sync();
  } else {
    cg::this_grid().sync();
  }
}

TEST(CooperativeLaunchReports, BlocksAtDifferentGridSyncsAreReported) {
  const std::string report = failing_launch_report([] {
    EXPECT_EQ(cudaLaunchCooperativeKernel(blocks_at_different_grid_syncs, dim3(2), dim3(16), nullptr, 0, nullptr),
              cudaSuccess);
  });
  EXPECT_CONTAINS(report, "grid barrier divergence");
  EXPECT_CONTAINS(report, site(kEvenBlocksSync));
  EXPECT_CONTAINS(report, site(kOddBlocksSync));
}

constexpr int kHalfAtGridSync = __LINE__ + 4;
constexpr int kHalfAtSyncthreads = __LINE__ + 5;
__global__ void half_a_block_at_the_grid_sync() {
  if (threadIdx.x < 16) {
    cg::this_grid().sync();
  } else {
    __syncthreads();
  }
}

TEST(CooperativeLaunchReports, ThreadsOfABlockAtAGridSyncAndABlockBarrierAreReported) {
  const std::string report = failing_launch_report([] {
    EXPECT_EQ(cudaLaunchCooperativeKernel(half_a_block_at_the_grid_sync, dim3(2), dim3(32), nullptr, 0, nullptr),
              cudaSuccess);
  });
  EXPECT_CONTAINS(report, "barrier divergence");
  EXPECT_CONTAINS(report, "waits at grid_group::sync() at");
  EXPECT_CONTAINS(report, site(kHalfAtGridSync));
  EXPECT_CONTAINS(report, site(kHalfAtSyncthreads));
}

__global__ void block_two_traps_between_grid_syncs() {
  cg::grid_group grid = cg::this_grid();
  grid.sync();
  if (blockIdx.x == 2 && threadIdx.x == 5) __trap();
  grid.sync();
}

TEST(CooperativeLaunchReports, AFaultingBlockEndsTheLaunchWithoutHangingTheOthers) {
  const std::string report = failing_launch_report([] {
    EXPECT_EQ(cudaLaunchCooperativeKernel(block_two_traps_between_grid_syncs, dim3(4), dim3(32), nullptr, 0,
                                          nullptr),
              cudaSuccess);
  });
  EXPECT_CONTAINS(report, "block (2,0,0), thread (5,0,0)");
  EXPECT_CONTAINS(report, "__trap()");
  // The device works again after the reset.
  unsigned* counter = nullptr;
  ASSERT_CUDA(cudaMalloc(&counter, sizeof(unsigned)));
  ASSERT_CUDA(cudaMemset(counter, 0, sizeof(unsigned)));
  unsigned long long* values = nullptr;
  unsigned long long* neighbours = nullptr;
  int* failures = nullptr;
  ASSERT_CUDA(cudaMalloc(&values, 4 * 32 * sizeof(unsigned long long)));
  ASSERT_CUDA(cudaMalloc(&neighbours, 4 * 32 * sizeof(unsigned long long)));
  ASSERT_CUDA(cudaMalloc(&failures, sizeof(int)));
  ASSERT_CUDA(cudaMemset(failures, 0, sizeof(int)));
  void* args[] = {&counter, &values, &neighbours, &failures};
  ASSERT_CUDA(cudaLaunchCooperativeKernel(phases, dim3(4), dim3(32), args, 0, nullptr));
  ASSERT_CUDA(cudaDeviceSynchronize());
  int failed = -1;
  ASSERT_CUDA(cudaMemcpy(&failed, failures, sizeof(int), cudaMemcpyDeviceToHost));
  EXPECT_EQ(failed, 0);
  for (void* d : {static_cast<void*>(counter), static_cast<void*>(values), static_cast<void*>(neighbours),
                  static_cast<void*>(failures)})
    ASSERT_CUDA(cudaFree(d));
}

/// The OS threads of this process.
std::size_t process_threads() {
  std::size_t count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) ++count;
  return count;
}

// Each block of a cooperative grid runs on an OS thread of its own. A later launch runs on the
// threads an earlier one started instead of starting (and mapping stacks for) new ones, which
// cost more than the launch; the threads end once they have had nothing to run for a while.
TEST_F(CooperativeLaunch, ALaterLaunchRunsOnTheThreadsOfAnEarlierOne) {
  constexpr unsigned kBlocks = 12;
  std::this_thread::sleep_for(std::chrono::seconds(3));  // the threads of earlier tests' launches end
  const std::size_t before = process_threads();
  run_phases(dim3(kBlocks), dim3(64));
  const std::size_t after_one = process_threads();
  EXPECT_GE(after_one, before + kBlocks - 1) << "the blocks' threads were not kept";
  run_phases(dim3(kBlocks), dim3(64));
  EXPECT_EQ(process_threads(), after_one) << "the second launch started threads of its own";
  std::this_thread::sleep_for(std::chrono::seconds(3));
  EXPECT_LE(process_threads(), after_one - (kBlocks - 1)) << "idle threads did not end";
}

constexpr int kOrdinaryLaunchSync = __LINE__ + 2;
__global__ void grid_sync_without_a_cooperative_launch() {
  cg::this_grid().sync();
}

TEST(CooperativeLaunchReports, GridSyncInAnOrdinaryLaunchIsAnError) {
  const std::string report = failing_launch_report([] { grid_sync_without_a_cooperative_launch<<<2, 32>>>(); });
  EXPECT_CONTAINS(report, site(kOrdinaryLaunchSync));
  EXPECT_CONTAINS(report, "not launched with cudaLaunchCooperativeKernel");
}

#endif  // CUDASIM

}  // namespace
