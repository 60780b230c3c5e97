// Simulator-only helper for the tests of the simulator's reports: what it writes to stderr
// while a launch runs that must fail.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <string>

namespace {

/// Captures what the simulator writes to stderr while `launch` runs; the launch must fail with
/// cudaErrorLaunchFailure at cudaDeviceSynchronize. Resets the device (clearing the sticky
/// error and the last error) for the next test.
template <class Launch>
std::string failing_launch_report(Launch launch) {
  testing::internal::CaptureStderr();
  launch();
  const cudaError_t synced = cudaDeviceSynchronize();
  const std::string report = testing::internal::GetCapturedStderr();
  EXPECT_EQ(synced, cudaErrorLaunchFailure) << report;
  EXPECT_EQ(cudaDeviceReset(), cudaSuccess);
  cudaGetLastError();
  return report;
}

}  // namespace
