/// @file course_traffic.hpp
/// @brief What the simulator counted while a test's work ran: `count_global_traffic()`.
///
/// A test wraps the launches it wants measured:
/// @code
///   const auto traffic = ct::count_global_traffic([&] { launch_stream_copy(x, y, n); });
///   EXPECT_TRUE(ct::all_close(expected, d_y.download(), tol));
///   if (!traffic.counted) GTEST_SKIP() << traffic.why_not;
///   EXPECT_EQ(traffic.bytes(), 8u * n);
/// @endcode
/// The counting itself happens where the kernels run. In a test program that is the same
/// process; in the grader's split programs (autograder/remote/) the counting window is opened
/// and closed inside the worker process that runs the submission, by the runtime, and only
/// the summary crosses to the judge (`COURSE_REMOTE_JUDGE`). This header has no GoogleTest in
/// it, so the worker can use the same code.
#pragma once

#include <cuda_runtime.h>

#include "cuda_check.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#ifdef CUDASIM
#include <cudasim/stats.hpp>
#include <cudasim/timeline.hpp>
#endif

namespace course {
namespace test {

/// Global-memory traffic of everything launched inside `count_global_traffic()`, and the
/// simulator's other counters of how the work was done (cudasim/stats.hpp explains each),
/// summed over the launches (span and contention: the largest of any launch).
struct GlobalTraffic {
  bool counted = false;       ///< false: no counters here; `why_not` says why
  std::string why_not;        ///< the reason to pass to GTEST_SKIP()
  std::uint64_t load_bytes = 0;
  std::uint64_t store_bytes = 0;
  std::uint64_t launches = 0;
  std::uint64_t bytes() const { return load_bytes + store_bytes; }
  std::uint64_t blocks = 0, threads = 0;
  std::uint64_t atomic_bytes = 0;             ///< global atomics' read + write bytes
  std::uint64_t global_atomics = 0, max_atomics_same_address = 0;
  std::uint64_t max_atomics_per_block = 0;    ///< the most global atomics one block made
  std::uint64_t shared_bytes = 0, warp_ops = 0, barrier_arrivals = 0, mma_ops = 0;
  std::uint64_t fragment_loads = 0, fragment_stores = 0;  ///< wmma tile loads (A, B) and stores
  std::uint64_t requests = 0, sectors = 0;    ///< coalescing: warp-wide requests, 32-byte sectors
  std::uint64_t accesses_by_width[5] = {};    ///< 1, 2, 4, 8, 16-byte global accesses
  std::uint64_t span_global_ops = 0, span_shared_ops = 0, span_warp_ops = 0, span_mma_ops = 0;
  /// The modelled time on the simulator's GPU and its terms, in ns (0 on a GPU).
  double modelled_ns = 0, launch_ns = 0, memory_ns = 0, compute_ns = 0, span_ns = 0, atomic_ns = 0;
  std::string gpu;                            ///< the modelled GPU's name
  /// Host API calls that started GPU work: kernel launches and cudaGraphLaunch calls.
  std::uint64_t kernel_launch_calls = 0, graph_launch_calls = 0;
  /// Bytes moved between the host and the devices, either way: copies (cudaMemcpy and the
  /// like) and the kernels' own loads and stores of page-locked host memory (zero-copy). Work
  /// done on the host, or data kept on the host and read by a kernel, shows here, not in the
  /// kernels' global bytes.
  std::uint64_t host_device_bytes = 0;
  /// Per device, indexed by device: the bytes its kernels moved (global loads, stores and
  /// atomics, and zero-copy host accesses). Which GPU did the work, where the totals above add
  /// every device together: a rank of a group whose kernels did every rank's share shows here.
  std::vector<std::uint64_t> device_bytes;
  /// `device_bytes` of `device`, 0 past its end.
  std::uint64_t bytes_on_device(int device) const {
    return device >= 0 && static_cast<std::size_t>(device) < device_bytes.size() ? device_bytes[device] : 0;
  }
  double sectors_per_request() const { return requests == 0 ? 0.0 : double(sectors) / double(requests); }
};

namespace detail {

/// Waits for earlier work and zeroes the counters (where the kernels run).
inline void open_local_traffic_window() {
  CUDA_CHECK(cudaDeviceSynchronize());
#ifdef CUDASIM
  if (cudasim::stats_available()) cudasim::reset_stats();
#endif
}

/// Waits for the window's work and sums what every launch in it counted.
inline GlobalTraffic close_local_traffic_window() {
  CUDA_CHECK(cudaDeviceSynchronize());
  GlobalTraffic traffic;
#ifdef CUDASIM
  const cudasim::ApiStats api = cudasim::api_stats();
  traffic.kernel_launch_calls = api.kernel_launch_calls;
  traffic.graph_launch_calls = api.graph_launch_calls;
  const cudasim::TransferStats copies = cudasim::transfer_stats();
  traffic.host_device_bytes = copies.host_to_device_bytes + copies.device_to_host_bytes;
  traffic.counted = cudasim::stats_available();
  if (!traffic.counted) {
    traffic.why_not = "this build's kernels are not instrumented: the simulator counts no bytes";
    return traffic;
  }
  cudasim::KernelStats k;
  for (const auto& one : cudasim::kernel_stats()) k += one;
  traffic.load_bytes = k.global_load_bytes;
  traffic.store_bytes = k.global_store_bytes;
  traffic.launches = k.launches;
  traffic.blocks = k.blocks;
  traffic.threads = k.threads;
  traffic.atomic_bytes = k.global_atomic_bytes;
  traffic.global_atomics = k.global_atomics;
  traffic.max_atomics_same_address = k.max_atomics_same_address;
  traffic.max_atomics_per_block = k.max_atomics_per_block;
  traffic.shared_bytes = k.shared_bytes();
  traffic.warp_ops = k.warp_ops;
  traffic.barrier_arrivals = k.barrier_arrivals;
  traffic.mma_ops = k.mma_ops;
  traffic.fragment_loads = k.fragment_loads;
  traffic.fragment_stores = k.fragment_stores;
  traffic.host_device_bytes += k.host_access_bytes;
  traffic.requests = k.global_requests;
  traffic.sectors = k.global_sectors;
  std::copy(std::begin(k.global_accesses_by_width), std::end(k.global_accesses_by_width), traffic.accesses_by_width);
  traffic.span_global_ops = k.span_global_ops;
  traffic.span_shared_ops = k.span_shared_ops;
  traffic.span_warp_ops = k.span_warp_ops;
  traffic.span_mma_ops = k.span_mma_ops;
  traffic.modelled_ns = k.modelled.total_ns;
  traffic.launch_ns = k.modelled.launch_ns;
  traffic.memory_ns = k.modelled.memory_ns;
  traffic.compute_ns = k.modelled.compute_ns;
  traffic.span_ns = k.modelled.span_ns;
  traffic.atomic_ns = k.modelled.atomic_ns;
  traffic.gpu = cudasim::modelled_gpu().name;
  for (const cudasim::KernelStats& device : cudasim::device_kernel_stats())
    traffic.device_bytes.push_back(device.global_bytes() + device.host_access_bytes);
#else
  traffic.why_not = "memory-traffic counters exist only on the simulator (use a profiler on a GPU)";
#endif
  return traffic;
}

/// After a window in which one kernel did all the work, declares `flops` for it (divided
/// over its launches) so that the model's compute term sees the exercise's FLOPs. Nothing
/// when the window held several kernels or none, or off the simulator.
inline void declare_local_window_flops(double flops) {
#ifdef CUDASIM
  if (!(flops > 0) || !cudasim::stats_available()) return;
  const std::vector<cudasim::KernelStats> kernels = cudasim::kernel_stats();
  if (kernels.size() == 1 && kernels[0].launches > 0)
    cudasim::declare_flops(kernels[0].kernel_name.c_str(),
                           static_cast<std::uint64_t>(flops / double(kernels[0].launches)));
#else
  (void)flops;
#endif
}

}  // namespace detail

#ifdef COURSE_REMOTE_JUDGE
// The grader's judge: the window is opened and closed in the worker (autograder/remote/).
namespace detail {
void open_remote_traffic_window();
GlobalTraffic close_remote_traffic_window();
void declare_remote_window_flops(double flops);
}  // namespace detail
#endif

/// Runs `work` (launches), waits for it, and returns what its kernels did, summed over
/// every launch, as the simulator counts it. On a GPU, or on a simulator built without
/// counters, `counted` is false. Run the correctness part of a test first and skip only the
/// counted checks, so a test never passes without checking anything.
inline GlobalTraffic count_global_traffic(const std::function<void()>& work) {
#ifdef COURSE_REMOTE_JUDGE
  detail::open_remote_traffic_window();
  work();
  return detail::close_remote_traffic_window();
#else
  detail::open_local_traffic_window();
  work();
  return detail::close_local_traffic_window();
#endif
}

/// `detail::declare_local_window_flops` for the last `count_global_traffic()` window, where
/// its kernels ran.
inline void declare_window_flops(double flops) {
#ifdef COURSE_REMOTE_JUDGE
  detail::declare_remote_window_flops(flops);
#else
  detail::declare_local_window_flops(flops);
#endif
}

#ifdef CUDASIM
/// While it lives, the simulator's modelled clock with host code free (cudasim/timeline.hpp):
/// host threads move only where they wait for the device, so every time a test reads off the
/// clock is the GPU's schedule that the code under test built, exact and the same on any
/// machine, and no slower in the grader's split programs than in one process. A call that
/// queues work and returns moves the calling thread's clock by nothing; one that waits for its
/// work moves it to the work's end.
class ModelledClock {
 public:
  ModelledClock() {
    cudasim::set_host_clock(cudasim::HostClock::kFree);
    cudasim::set_model_time(true);
  }
  ~ModelledClock() {
    cudasim::set_model_time(false);
    cudasim::set_host_clock(cudasim::HostClock::kWall);
  }
  ModelledClock(const ModelledClock&) = delete;
  ModelledClock& operator=(const ModelledClock&) = delete;

  /// How far `work` moved the calling thread's clock, in ns.
  static double elapsed_ns(const std::function<void()>& work) {
    const double t0 = cudasim::host_time_ns();
    work();
    return cudasim::host_time_ns() - t0;
  }
};
#endif

}  // namespace test
}  // namespace course
