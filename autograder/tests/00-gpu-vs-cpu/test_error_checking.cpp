// Tests for exercise 00/04 error_checking (contract: lessons/00-gpu-vs-cpu/error_checking.hpp).
// Run: ./course test 00/error_checking

#include "error_checking.hpp"

#include <cuda_runtime.h>

#include "course_test.hpp"
#include "course_traffic.hpp"
#include "cuda_check.hpp"

#include <string>
#include <vector>

namespace ct = course::test;

namespace {

/// Errors compared by name, so a failure reads "cudaErrorUnknown" rather than "999".
std::string name(cudaError_t status) { return cudaGetErrorName(status); }

std::vector<double> cpu_scale(const std::vector<float>& x, float factor) {
  std::vector<double> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = double(x[i]) * factor;
  return out;
}

/// Whether `status` is the error a CUDA runtime gives a launch configuration no GPU can run:
/// CUDA 13 says cudaErrorInvalidValue ("invalid argument"; measured on an H200, 2026-11-27, and
/// what the simulator returns), earlier releases cudaErrorInvalidConfiguration.
bool is_launch_configuration_error(cudaError_t status) {
  return status == cudaErrorInvalidValue || status == cudaErrorInvalidConfiguration;
}

/// A launch the runtime must reject: the status is returned, x untouched, the error consumed.
void expect_rejected(int threads_per_block) {
  SCOPED_TRACE("threads_per_block = " + std::to_string(threads_per_block));
  ct::Rng rng;
  const int n = 5000;
  const auto x = rng.nonzero(n);
  ct::DeviceBuffer<float> d_x(x);
  const cudaError_t status = launch_scale_checked(d_x.get(), n, 3.0f, threads_per_block);
  // Read (and clear) whatever is still pending before anything else can trip over it.
  const cudaError_t left_behind = cudaGetLastError();
  EXPECT_TRUE(is_launch_configuration_error(status))
      << "a block of " << threads_per_block << " threads cannot launch; the launcher must "
      << "return the launch error (cudaErrorInvalidValue, or cudaErrorInvalidConfiguration before CUDA 13), "
      << "but returned " << name(status);
  EXPECT_EQ(name(left_behind), name(cudaSuccess))
      << "the launch error was not consumed: read it with cudaGetLastError(), which clears "
         "it, or it will be blamed on the next, innocent call";
  // Exact comparison: the kernel never ran, so x is bit-for-bit what was uploaded.
  EXPECT_TRUE(ct::all_close(x, d_x.download(), 0.0, 0.0)) << "x changed although the launch failed";
}

/// A valid launch: cudaSuccess, and x scaled.
void expect_scaled(int threads_per_block, int n) {
  SCOPED_TRACE("threads_per_block = " + std::to_string(threads_per_block) +
               ", n = " + std::to_string(n));
  ct::Rng rng;
  const auto x = rng.nonzero(n);
  const float factor = -2.5f;
  ct::DeviceBuffer<float> d_x(x);
  const cudaError_t status = launch_scale_checked(d_x.get(), n, factor, threads_per_block);
  EXPECT_EQ(name(status), name(cudaSuccess));
  EXPECT_TRUE(ct::all_close(cpu_scale(x, factor), d_x.download(), ct::elementwise_tolerance()));
}

}  // namespace

TEST(ErrorChecking, ReportsBlocksLargerThan1024ThreadsAsALaunchError) {
  expect_rejected(1025);
}

TEST(ErrorChecking, ReportsEmptyBlocksAsALaunchError) {
  expect_rejected(0);
}

TEST(ErrorChecking, ReturnsSuccessAndScalesWith256ThreadsPerBlock) {
  for (int n : {1, 255, 256, 257, 100003}) expect_scaled(256, n);
}

TEST(ErrorChecking, ReturnsSuccessAndScalesWithTheLargestBlock) {
  // 1024 threads per block is the limit on every GPU since compute capability 2.0.
  for (int n : {1, 1023, 1024, 1025, 100003}) expect_scaled(1024, n);
}

TEST(ErrorChecking, LeavesNothingBehindForTheNextLaunch) {
  // A rejected launch followed by a good one: the good one must report success, which it
  // does only if the first error was consumed where it happened.
  ct::Rng rng;
  const int n = 4097;
  const auto x = rng.nonzero(n);
  ct::DeviceBuffer<float> d_x(x);
  const cudaError_t first = launch_scale_checked(d_x.get(), n, 2.0f, 2048);
  EXPECT_TRUE(is_launch_configuration_error(first))
      << "a block of 2048 threads cannot launch; the launcher returned " << name(first);
  const cudaError_t second = launch_scale_checked(d_x.get(), n, 2.0f, 128);
  EXPECT_EQ(name(second), name(cudaSuccess));
  EXPECT_TRUE(ct::all_close(cpu_scale(x, 2.0f), d_x.download(), ct::elementwise_tolerance()));
  cudaGetLastError();  // leave a clean slate for the next test whatever happened
}

#ifdef CUDASIM
TEST(ErrorChecking, ReportsAFaultWhileTheKernelRuns) {
  // A launch the runtime accepts can still fail while it runs, here by writing memory that was
  // freed: that error arrives only when the host waits for the kernel, so a launcher that asks
  // cudaGetLastError() and nothing else reports success for a kernel that failed. (Simulator
  // only: on a GPU the error would end the CUDA context of the whole test program. Memcheck,
  // which tells freed memory, is part of the simulator's counting build.)
  const ct::GlobalTraffic probe = ct::count_global_traffic([] {});
  if (!probe.counted) GTEST_SKIP() << probe.why_not;
  float* freed = nullptr;
  CUDA_CHECK(cudaMalloc(&freed, 4096 * sizeof(float)));
  CUDA_CHECK(cudaFree(freed));
  const cudaError_t status = launch_scale_checked(freed, 4096, 2.0f, 256);
  EXPECT_EQ(name(status), name(cudaErrorIllegalAddress))
      << "the kernel wrote freed memory: the launch was accepted, and the failure shows when the launcher "
         "waits for the kernel (cudaDeviceSynchronize), which it must do before it returns";
  cudaDeviceReset();  // clears the failure, which CUDA keeps for every later call
  cudaGetLastError();
}
#endif
