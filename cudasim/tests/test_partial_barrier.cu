// A __syncthreads that only part of a block reaches (the others exited, or took a branch
// without it) is undefined behaviour in CUDA: on a GPU it may hang, pass, or corrupt shared
// memory. The simulator releases such a barrier once every live thread has arrived, and under
// CUDASIM_CHECK=barrier (on in `./course run --check` and graded runs) reports it. This suite
// runs twice: with the check (the reports) and without it (the kernels run to their end).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

#ifdef CUDASIM
bool barrier_check_on() {
  const char* env = std::getenv("CUDASIM_CHECK");
  return env != nullptr && (std::strstr(env, "barrier") != nullptr || std::strstr(env, "all") != nullptr);
}

/// Runs `launch`, synchronises, and returns what the simulator printed and the error.
template <class Launch>
std::string report_of(Launch launch, cudaError_t& synced) {
  testing::internal::CaptureStderr();
  launch();
  synced = cudaDeviceSynchronize();
  return testing::internal::GetCapturedStderr();
}

#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE((haystack).find(needle), std::string::npos) << "expected \"" << (needle) << "\" in:\n" << (haystack)

constexpr int kEarlyExitLine = __LINE__ + 6;
/// The classic mistake: threads past the end of the data return before the block's barrier.
__global__ void early_exit_before_barrier(const int* in, int* out, int n) {
  __shared__ int tile[64];
  if (static_cast<int>(threadIdx.x) >= n) return;
  tile[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = tile[n - 1 - threadIdx.x];
}

constexpr int kDeviceSyncLine = __LINE__ + 1;
__device__ void sync_block() { __syncthreads(); }

/// A barrier in a __device__ function (the fiber path) that only the first warp calls.
__global__ void barrier_in_a_branch(int* out) {
  if (threadIdx.x < 32) sync_block();
  out[threadIdx.x] = 1;
}

/// Every thread reaches every barrier: never reported.
__global__ void every_thread_arrives(const int* in, int* out, int n) {
  __shared__ int tile[64];
  const bool active = static_cast<int>(threadIdx.x) < n;
  if (active) tile[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  if (active) out[threadIdx.x] = tile[n - 1 - threadIdx.x];
}

class PartialBarrier : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(cudaMalloc(&in_, 64 * sizeof(int)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&out_, 64 * sizeof(int)), cudaSuccess);
    std::vector<int> values(64);
    for (int i = 0; i < 64; ++i) values[i] = i;
    ASSERT_EQ(cudaMemcpy(in_, values.data(), 64 * sizeof(int), cudaMemcpyHostToDevice), cudaSuccess);
  }
  void TearDown() override { EXPECT_EQ(cudaDeviceReset(), cudaSuccess); }
  int* in_ = nullptr;
  int* out_ = nullptr;
};

TEST_F(PartialBarrier, ThreadsThatExitedBeforeTheBarrierAreReportedUnderTheCheck) {
  cudaError_t synced = cudaSuccess;
  const std::string report = report_of([&] { early_exit_before_barrier<<<1, 64>>>(in_, out_, 50); }, synced);
  if (!barrier_check_on()) {
    EXPECT_EQ(synced, cudaSuccess) << report;  // released once every live thread arrived
    return;
  }
  EXPECT_EQ(synced, cudaErrorLaunchFailure) << report;
  EXPECT_CONTAINS(report, "early_exit_before_barrier");
  EXPECT_CONTAINS(report, "__syncthreads() at ");
  EXPECT_CONTAINS(report, "test_partial_barrier.cu:" + std::to_string(kEarlyExitLine));
  EXPECT_CONTAINS(report, "reached by 50 of the block's 64 threads");
  EXPECT_CONTAINS(report, "thread (50,0,0)");
  EXPECT_CONTAINS(report, "have exited");
}

TEST_F(PartialBarrier, ABarrierInADeviceFunctionOnlyOneWarpCallsIsReportedUnderTheCheck) {
  cudaError_t synced = cudaSuccess;
  const std::string report = report_of([&] { barrier_in_a_branch<<<1, 64>>>(out_); }, synced);
  if (!barrier_check_on()) {
    EXPECT_EQ(synced, cudaSuccess) << report;
    return;
  }
  EXPECT_EQ(synced, cudaErrorLaunchFailure) << report;
  EXPECT_CONTAINS(report, "test_partial_barrier.cu:" + std::to_string(kDeviceSyncLine));
  EXPECT_CONTAINS(report, "reached by 32 of the block's 64 threads");
  EXPECT_CONTAINS(report, "thread (32,0,0)");
}

TEST_F(PartialBarrier, ABarrierEveryThreadReachesIsNotReported) {
  cudaError_t synced = cudaErrorUnknown;
  const std::string report = report_of([&] { every_thread_arrives<<<1, 64>>>(in_, out_, 50); }, synced);
  EXPECT_EQ(synced, cudaSuccess) << report;
  EXPECT_EQ(report, "");
  std::vector<int> out(50);
  ASSERT_EQ(cudaMemcpy(out.data(), out_, 50 * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(out[0], 49);
  EXPECT_EQ(out[49], 0);
}
#endif  // CUDASIM

}  // namespace
