// Simulator-only diagnostics: programs that are wrong in ways a GPU punishes with a hang, a
// silent wrong answer or an uninformative error. The simulator reports them, naming the kernel,
// the block, the threads and the call sites, and fails the launch (cudaErrorLaunchFailure at
// the next synchronising call) instead of hanging. Each test resets the device afterwards to
// clear the sticky error. A segfault in a kernel kills the process, as an illegal address ends
// the context on a GPU, after a report naming kernel, block and thread.
//
// Everything is guarded by CUDASIM (defined by the simulator's cuda_runtime.h): on a GPU these
// kernels would hang or be undefined.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#ifdef CUDASIM

#undef NDEBUG  // the asserts below must be on in every build type
#include <cassert>
#include <string>

namespace {

/// "test_diagnostics.cu:<line>", how the reports name a call site in this file.
std::string site(int line) { return "test_diagnostics.cu:" + std::to_string(line); }

/// Captures what the simulator writes to stderr while `launch` runs, and checks that the launch
/// then fails with `expected` (cudaErrorLaunchFailure unless said otherwise) at
/// cudaDeviceSynchronize.
template <class Launch>
std::string failing_launch_report(Launch launch, cudaError_t expected = cudaErrorLaunchFailure) {
  testing::internal::CaptureStderr();
  launch();
  const cudaError_t launched = cudaGetLastError();
  const cudaError_t synced = cudaDeviceSynchronize();
  const std::string report = testing::internal::GetCapturedStderr();
  // The launch itself is valid; the kernel may already have failed by the time
  // cudaGetLastError runs (launches are asynchronous), as on a GPU.
  EXPECT_TRUE(launched == cudaSuccess || launched == expected) << cudaGetErrorName(launched);
  EXPECT_EQ(synced, expected) << report;
  return report;
}

class Diagnostics : public ::testing::Test {
 protected:
  void TearDown() override {
    EXPECT_EQ(cudaDeviceReset(), cudaSuccess);  // clears the sticky error for the next test
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  }
};

#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE((haystack).find(needle), std::string::npos) << "expected \"" << (needle) << "\" in:\n" << (haystack)

// ---- barriers ------------------------------------------------------------------------------------

constexpr int kFirstHalfBarrier = __LINE__ + 4;
constexpr int kSecondHalfBarrier = __LINE__ + 5;
__global__ void halves_at_different_barriers() {
  if (blockIdx.x == 2 && threadIdx.x < 16) {
    __syncthreads();
  } else {
    __syncthreads();
  }
}

TEST_F(Diagnostics, ThreadsAtDifferentSyncthreadsAreReportedNotHung) {
  // Only block 2 diverges; the other blocks pass their (single) barrier.
  const std::string report = failing_launch_report([] { halves_at_different_barriers<<<4, 64>>>(); });
  EXPECT_CONTAINS(report, "barrier divergence");
  EXPECT_CONTAINS(report, "'halves_at_different_barriers'");
  EXPECT_CONTAINS(report, "block (2,0,0)");
  EXPECT_CONTAINS(report, "thread (0,0,0)");
  EXPECT_CONTAINS(report, "thread (16,0,0)");
  EXPECT_CONTAINS(report, site(kFirstHalfBarrier));
  EXPECT_CONTAINS(report, site(kSecondHalfBarrier));
}

constexpr int kBranchBarrier = __LINE__ + 5;
constexpr int kCommonBarrier = __LINE__ + 6;
__global__ void barrier_in_divergent_branch(int* data) {
  if (threadIdx.x % 2 == 0) {
    data[threadIdx.x] = 1;
    __syncthreads();
  }
  __syncthreads();
}

TEST_F(Diagnostics, BarrierInsideADivergentBranchIsReported) {
  int* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 64 * sizeof(int)), cudaSuccess);
  const std::string report = failing_launch_report([&] { barrier_in_divergent_branch<<<1, 64>>>(d); });
  EXPECT_CONTAINS(report, "barrier divergence");
  EXPECT_CONTAINS(report, "'barrier_in_divergent_branch'");
  EXPECT_CONTAINS(report, "block (0,0,0)");
  EXPECT_CONTAINS(report, "thread (0,0,0)");
  EXPECT_CONTAINS(report, "thread (1,0,0)");
  EXPECT_CONTAINS(report, site(kBranchBarrier));
  EXPECT_CONTAINS(report, site(kCommonBarrier));
}

__global__ void barrier_after_early_exit(int* out) {
  if (threadIdx.x >= 40) return;  // exited threads do not hold a barrier up
  __syncthreads();
  out[threadIdx.x] = 1;
}

TEST(DiagnosticsNegative, ThreadsThatExitedDoNotBlockABarrier) {
  int* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 64 * sizeof(int)), cudaSuccess);
  testing::internal::CaptureStderr();
  barrier_after_early_exit<<<3, 64>>>(d);
  const cudaError_t synced = cudaDeviceSynchronize();
  const std::string report = testing::internal::GetCapturedStderr();
  EXPECT_EQ(synced, cudaSuccess) << report;
  EXPECT_EQ(report, "");
  ASSERT_EQ(cudaFree(d), cudaSuccess);
}

// A barrier in the kernel body (the kernel is a coroutine) against one in a __device__ function
// (a parked fiber): different call sites, so divergence, reported with both.
constexpr int kHelperBarrier = __LINE__ + 2;
__device__ void wait_in_helper() {
  __syncthreads();
}
constexpr int kBodyBarrier = __LINE__ + 6;
__global__ void body_and_helper_barriers_diverge(int* data) {
  if (threadIdx.x < 8) {
    wait_in_helper();
  } else {
    data[threadIdx.x] = 1;
    __syncthreads();
  }
}

TEST_F(Diagnostics, BarriersInTheBodyAndInAHelperThatDivergeAreReported) {
  int* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 32 * sizeof(int)), cudaSuccess);
  const std::string report = failing_launch_report([&] { body_and_helper_barriers_diverge<<<1, 32>>>(d); });
  EXPECT_CONTAINS(report, "barrier divergence");
  EXPECT_CONTAINS(report, "'body_and_helper_barriers_diverge'");
  EXPECT_CONTAINS(report, site(kHelperBarrier));
  EXPECT_CONTAINS(report, site(kBodyBarrier));
}

// A fault after a barrier, in a thread that was suspended and resumed: the report still names it.
__global__ void trap_after_barrier(int* data) {
  __shared__ int flag;
  if (threadIdx.x == 0) flag = 7;
  __syncthreads();
  data[threadIdx.x] = flag;
  __syncthreads();
  if (blockIdx.x == 1 && threadIdx.x == 9) __trap();
}

TEST_F(Diagnostics, ATrapAfterABarrierNamesTheResumedThread) {
  int* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 64 * sizeof(int)), cudaSuccess);
  const std::string report = failing_launch_report([&] { trap_after_barrier<<<3, 64>>>(d); });
  EXPECT_CONTAINS(report, "'trap_after_barrier'");
  EXPECT_CONTAINS(report, "block (1,0,0)");
  EXPECT_CONTAINS(report, "thread (9,0,0)");
}

// A thread that ends while the others wait at a barrier followed by a warp shuffle naming it:
// coroutine threads that then park in the shuffle are reported as a deadlock, never hang.
__global__ void shuffle_after_barrier_with_exited_lane(int* out) {
  if (threadIdx.x == 3) return;
  __syncthreads();
  out[threadIdx.x] = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x), 0);
}

TEST_F(Diagnostics, AShuffleAfterABarrierWaitingForAnExitedLaneIsReported) {
  int* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 32 * sizeof(int)), cudaSuccess);
  const std::string report = failing_launch_report([&] { shuffle_after_barrier_with_exited_lane<<<1, 32>>>(d); });
  EXPECT_CONTAINS(report, "deadlock");
  EXPECT_CONTAINS(report, "thread (3,0,0) has already exited");
}

// ---- warp operations --------------------------------------------------------------------------------

constexpr int kShuffleLine = __LINE__ + 4;
__global__ void shuffle_with_exited_lane(float* out) {
  if (threadIdx.x >= 16) return;  // lanes 16..31 exit, but the mask still names them
  float v = threadIdx.x;
  v += __shfl_down_sync(0xffffffffu, v, 1);
  out[threadIdx.x] = v;
}

TEST_F(Diagnostics, ShuffleWhoseMaskNamesAnExitedLaneIsReportedAsDeadlock) {
  float* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 32 * sizeof(float)), cudaSuccess);
  const std::string report = failing_launch_report([&] { shuffle_with_exited_lane<<<1, 32>>>(d); });
  EXPECT_CONTAINS(report, "deadlock");
  EXPECT_CONTAINS(report, "'shuffle_with_exited_lane'");
  EXPECT_CONTAINS(report, "block (0,0,0)");
  EXPECT_CONTAINS(report, "__shfl_down_sync");
  EXPECT_CONTAINS(report, "thread (16,0,0) has already exited");
  EXPECT_CONTAINS(report, site(kShuffleLine));
}

// The lanes that exit here never call the scheduler: the thread loop only counts them. Lane 16,
// the first to wait, must still see them as exited (and the loop must not start them again).
constexpr int kLowLanesLine = __LINE__ + 3;
__global__ void shuffle_after_low_lanes_exited(int* out) {
  if (threadIdx.x < 16) return;
  out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, static_cast<int>(threadIdx.x), 1);
}

TEST_F(Diagnostics, LanesThatExitedBeforeTheFirstWaitAreReportedAsExited) {
  int* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 32 * sizeof(int)), cudaSuccess);
  const std::string report = failing_launch_report([&] { shuffle_after_low_lanes_exited<<<1, 32>>>(d); });
  EXPECT_CONTAINS(report, "deadlock");
  EXPECT_CONTAINS(report, "thread (16,0,0) waits at __shfl_xor_sync");
  EXPECT_CONTAINS(report, "thread (0,0,0) has already exited");
  EXPECT_CONTAINS(report, site(kLowLanesLine));
}

constexpr int kMaskLine = __LINE__ + 4;
__global__ void shuffle_with_different_masks(int* out) {
  // Lanes 0..15 name the whole warp, lanes 16..31 only the upper half: the masks disagree.
  const unsigned mask = threadIdx.x < 16 ? 0xffffffffu : 0xffff0000u;
  out[threadIdx.x] = __shfl_sync(mask, static_cast<int>(threadIdx.x), 16);
}

TEST_F(Diagnostics, WarpOperationWithDifferentMasksInOneWarpIsReported) {
  int* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 32 * sizeof(int)), cudaSuccess);
  const std::string report = failing_launch_report([&] { shuffle_with_different_masks<<<1, 32>>>(d); });
  EXPECT_CONTAINS(report, "'shuffle_with_different_masks'");
  EXPECT_CONTAINS(report, "block (0,0,0)");
  EXPECT_CONTAINS(report, "thread (16,0,0)");   // the first lane with the other mask
  EXPECT_CONTAINS(report, "lanes 0x0000ffff");  // the lanes already waiting
  EXPECT_CONTAINS(report, "__shfl_sync");
  EXPECT_CONTAINS(report, "0xffff0000");
  EXPECT_CONTAINS(report, "0xffffffff");
  EXPECT_CONTAINS(report, site(kMaskLine));
}

constexpr int kEvenShuffle = __LINE__ + 5;
constexpr int kOddShuffle = __LINE__ + 6;
__global__ void lanes_at_different_shuffles(int* out) {
  int v = threadIdx.x;
  if (threadIdx.x % 2 == 0) {
    v = __shfl_xor_sync(0xffffffffu, v, 1);
  } else {
    v = __shfl_xor_sync(0xffffffffu, v, 1);
  }
  out[threadIdx.x] = v;
}

TEST_F(Diagnostics, LanesOfOneWarpAtDifferentWarpOperationsAreReported) {
  int* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 32 * sizeof(int)), cudaSuccess);
  const std::string report = failing_launch_report([&] { lanes_at_different_shuffles<<<1, 32>>>(d); });
  EXPECT_CONTAINS(report, "'lanes_at_different_shuffles'");
  EXPECT_CONTAINS(report, "block (0,0,0)");
  EXPECT_CONTAINS(report, "thread (1,0,0)");   // the odd lane that arrived second
  EXPECT_CONTAINS(report, "lanes 0x00000001");  // lane 0, waiting at the other call site
  EXPECT_CONTAINS(report, site(kEvenShuffle));
  EXPECT_CONTAINS(report, site(kOddShuffle));
}

// ---- traps and faults -------------------------------------------------------------------------------

__global__ void trap_in_one_thread() {
  if (blockIdx.x == 2 && threadIdx.x == 5) __trap();
}

TEST_F(Diagnostics, TrapFailsTheLaunchAndNamesTheThread) {
  const std::string report = failing_launch_report([] { trap_in_one_thread<<<4, 32>>>(); });
  EXPECT_CONTAINS(report, "'trap_in_one_thread'");
  EXPECT_CONTAINS(report, "block (2,0,0)");
  EXPECT_CONTAINS(report, "thread (5,0,0)");
  EXPECT_CONTAINS(report, "__trap()");
}

// A failed assert in device code fails the launch with cudaErrorAssert, as on a GPU, naming
// the thread, the condition and the assert's line; it does not abort the process.
__device__ int checked_index(int i, int n) {
  assert(i < n);  // in a __device__ function: rewritten too
  return i;
}
constexpr int kAssertLine = __LINE__ + 3;
__global__ void assert_in_kernel(int* out, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  assert(i != 77);
  out[checked_index(i, n)] = i;
}

TEST_F(Diagnostics, AFailedAssertFailsTheLaunchWithAnAssertErrorAndNamesTheThread) {
  int* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 128 * sizeof(int)), cudaSuccess);
  const std::string report = failing_launch_report([&] { assert_in_kernel<<<2, 64>>>(d, 128); }, cudaErrorAssert);
  EXPECT_CONTAINS(report, "'assert_in_kernel'");
  EXPECT_CONTAINS(report, "block (1,0,0)");
  EXPECT_CONTAINS(report, "thread (13,0,0)");
  EXPECT_CONTAINS(report, "Assertion `i != 77' failed");
  EXPECT_CONTAINS(report, site(kAssertLine));
  EXPECT_EQ(cudaMalloc(&d, 4), cudaErrorAssert);  // sticky until cudaDeviceReset, as on a GPU
}

TEST_F(Diagnostics, AnAssertThatHoldsChangesNothing) {
  int* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 128 * sizeof(int)), cudaSuccess);
  assert_in_kernel<<<1, 64>>>(d, 64);  // threads 0 to 63: every assert holds
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(cudaFree(d), cudaSuccess);
}

__global__ void throw_in_kernel() {
  if (threadIdx.x == 1) throw 42;  // not CUDA, but a simulated kernel is C++: must not escape
}

TEST_F(Diagnostics, AnExceptionEscapingAKernelFailsTheLaunch) {
  // With memory instrumentation the store into the heap-allocated exception object is caught
  // first (as a host-memory access); without it the exception itself ends the launch.
  const std::string report = failing_launch_report(
      [] { throw_in_kernel<<<1, 4>>>(); },
      cudasim::stats_available() ? cudaErrorIllegalAddress : cudaErrorLaunchFailure);
  EXPECT_CONTAINS(report, "'throw_in_kernel'");
  EXPECT_CONTAINS(report, "thread (1,0,0)");
}

__global__ void count_runs(int* counter) { atomicAdd(counter, 1); }

TEST_F(Diagnostics, AFaultIsStickyUntilDeviceReset) {
  (void)failing_launch_report([] { trap_in_one_thread<<<4, 32>>>(); });
  int* d = nullptr;
  EXPECT_EQ(cudaMalloc(&d, sizeof(int)), cudaErrorLaunchFailure);
  EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure);
  EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure) << "a sticky error is not cleared by reading it";
  ASSERT_EQ(cudaDeviceReset(), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d, sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMemset(d, 0, sizeof(int)), cudaSuccess);
  count_runs<<<3, 7>>>(d);
  int runs = 0;
  ASSERT_EQ(cudaMemcpy(&runs, d, sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(runs, 21);
}

__global__ void write_through_null(int* pointer) {
  if (blockIdx.x == 1 && threadIdx.x == 3) *static_cast<volatile int*>(pointer) = 1;
}

TEST_F(Diagnostics, AWriteThroughANullPointerIsReportedBeforeItFaults) {
  // Instrumented kernels check every access, so the null store is reported and the launch
  // fails with cudaErrorIllegalAddress, as on a GPU; the process lives on. (Uninstrumented
  // kernels really fault: see test_faults_uninstrumented.cu.)
  ASSERT_TRUE(cudasim::stats_available());
  const std::string report = failing_launch_report([] { write_through_null<<<2, 8>>>(nullptr); },
                                                   cudaErrorIllegalAddress);
  EXPECT_CONTAINS(report, "'write_through_null'");
  EXPECT_CONTAINS(report, "block (1,0,0), thread (3,0,0)");
  EXPECT_CONTAINS(report, "host memory");
}

}  // namespace

#endif  // CUDASIM
