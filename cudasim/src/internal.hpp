// Declarations shared by the simulator's runtime sources. Not part of the public API.
#pragma once

#include <atomic>
#include <cstdarg>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "cuda_runtime.h"

namespace cudasim::detail {

// ---- errors (errors.cpp) ----------------------------------------------------------------------
/// Sets this host thread's last error (what cudaGetLastError returns) unless it is cudaSuccess.
cudaError_t record_error(cudaError_t error);
/// A fault inside a kernel: every later API call returns it until cudaDeviceReset.
void set_sticky_error(cudaError_t error);
cudaError_t sticky_error();
void clear_sticky_error();
/// Prints one diagnostic line to stderr, prefixed with "cudasim: ".
void report(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string format_string(const char* format, ...) __attribute__((format(printf, 1, 2)));

// ---- the modelled device (device.cpp) ----------------------------------------------------------
const cudaDeviceProp& device_properties();
constexpr std::size_t kDefaultDynamicSharedLimit = 48 * 1024;

// ---- memory (memory.cpp) -------------------------------------------------------------------------
struct AllocationInfo {
  std::uintptr_t begin = 0;
  std::size_t size = 0;
  const char* file = nullptr;
  unsigned line = 0;
};
/// True when `pointer` lies inside a live cudaMalloc allocation.
bool is_device_pointer(const void* pointer);
/// The live allocation that contains `pointer`, or the nearest one, for diagnostics.
bool describe_device_address(const void* pointer, std::string& description);
void free_all_device_memory();

// ---- launches (launch.cpp / block_scheduler.cpp) ------------------------------------------------
/// Everything a running grid needs; shared by the workers that run its blocks.
struct LaunchState {
  LaunchConfig config;
  std::shared_ptr<const KernelInstance> kernel;
  std::atomic<bool> failed{false};
};

/// Runs one block of a launch to completion on the calling OS thread. Returns false if the
/// block faulted (the fault is already reported and recorded).
bool run_block(LaunchState& launch, unsigned long long linear_block);

/// Reports a fault in a kernel thread once per launch and makes the error sticky.
void report_kernel_fault(LaunchState& launch, const uint3& block, const uint3& thread,
                         cudaError_t error, const std::string& message);

/// What the running OS thread is executing, for the fault handler: null outside kernels.
struct RunningThread {
  LaunchState* launch = nullptr;
  bool (*is_stack_guard)(const void* address) = nullptr;  // in a fiber stack's guard page?
};
RunningThread& running_thread() noexcept;
void install_fault_handler();

// ---- streams (streams.cpp) -----------------------------------------------------------------------
/// Queues `work` on a stream (0, cudaStreamLegacy and cudaStreamPerThread included). Returns
/// cudaErrorInvalidResourceHandle for an unknown stream.
cudaError_t enqueue(cudaStream_t stream, std::function<void()> work);
/// Queues and waits for completion.
cudaError_t run_synchronously(cudaStream_t stream, std::function<void()> work);
/// Runs every block of a launch on the worker pool; returns when all have finished.
void run_grid(const std::shared_ptr<LaunchState>& launch);
void synchronize_all_streams();

}  // namespace cudasim::detail
