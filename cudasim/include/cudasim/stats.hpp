/// @file stats.hpp
/// @brief Memory-traffic counters of the simulator: what a profiler would tell you on a GPU,
/// counted exactly on the CPU.
///
/// Kernels compiled with the simulator's instrumentation (the default for exercises and
/// tests; `./course run --stats` for programs) report, per launch, the bytes they loaded and
/// stored in global and shared memory and the atomics they issued. The figures are exact and
/// repeatable: a naive N x N matmul loads 2*N^3*4 bytes of global memory, a tiled one with
/// tile T loads 2*N^3*4/T, whatever the machine.
///
/// Use from tests (only on the simulator):
/// @code
///   #ifdef CUDASIM
///   cudasim::reset_stats();
///   launch_copy(d_in, d_out, n);
///   CUDA_CHECK(cudaDeviceSynchronize());
///   EXPECT_EQ(cudasim::last_launch_stats().global_load_bytes, 4u * n);
///   #endif
/// @endcode
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cudasim {

/// Counters of one launch, or summed over the launches of one kernel.
struct KernelStats {
  std::string kernel_name;           ///< as written at the launch, e.g. "tiled_matmul<16>"
  std::uint64_t launches = 0;
  std::uint64_t blocks = 0;
  std::uint64_t threads = 0;
  std::uint64_t global_load_bytes = 0;
  std::uint64_t global_store_bytes = 0;
  std::uint64_t shared_load_bytes = 0;
  std::uint64_t shared_store_bytes = 0;
  std::uint64_t atomics = 0;         ///< atomic operations on global or shared memory
  std::uint64_t host_access_bytes = 0;  ///< loads and stores of page-locked host memory (zero-copy)
  std::uint64_t flops = 0;  ///< as declared with declare_flops(), times the launches

  std::uint64_t global_bytes() const { return global_load_bytes + global_store_bytes; }
  std::uint64_t shared_bytes() const { return shared_load_bytes + shared_store_bytes; }
};

/// Bytes copied by cudaMemcpy* and cudaMemset*, by direction.
struct TransferStats {
  std::uint64_t host_to_device_bytes = 0;
  std::uint64_t device_to_host_bytes = 0;
  std::uint64_t device_to_device_bytes = 0;
  std::uint64_t host_to_host_bytes = 0;
  std::uint64_t memset_bytes = 0;
  /// Host <-> device bytes whose host side was page-locked (cudaMallocHost, cudaHostAlloc,
  /// cudaHostRegister) or pageable: what decides the copy's rate (cudasim/link_model.hpp).
  std::uint64_t pinned_host_bytes = 0;
  std::uint64_t pageable_host_bytes = 0;
};

/// Host API calls that start GPU work: how many times the program called a kernel launch and
/// cudaGraphLaunch (a captured kernel counts when it is recorded, not when the graph replays).
struct ApiStats {
  std::uint64_t kernel_launch_calls = 0;
  std::uint64_t graph_launch_calls = 0;
};

/// The host API calls since the last reset_stats().
ApiStats api_stats();

/// True when the calling program's kernels were compiled with the counting instrumentation;
/// without it the byte counters stay 0 (launch, block and thread counts still work).
bool stats_available();

/// Clears every counter (per kernel, last launch, transfers).
void reset_stats();

/// The counters of the most recently *completed* launch (call after a synchronisation).
KernelStats last_launch_stats();

/// The counters per kernel name, summed over launches, in order of first launch.
std::vector<KernelStats> kernel_stats();

/// Copy and memset traffic since the last reset.
TransferStats transfer_stats();

/// Declares how many floating-point operations one launch of `kernel_name` performs, so that
/// `./course profile` can show its arithmetic intensity and a roofline prediction (the
/// simulator counts bytes, not FLOPs). Use the name as written at the launch.
void declare_flops(const char* kernel_name, std::uint64_t flops_per_launch);

}  // namespace cudasim
