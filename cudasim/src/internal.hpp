// Declarations shared by the simulator's runtime sources. Not part of the public API.
#pragma once

#include <atomic>
#include <condition_variable>
#include <csetjmp>
#include <cstdarg>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

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
/// `text` as the inside of a JSON string (quotes, backslashes and control characters escaped).
std::string json_escape(const std::string& text);

// ---- the modelled device (device.cpp) ----------------------------------------------------------
const cudaDeviceProp& device_properties();
/// Virtual devices: how many (CUDASIM_DEVICES, default 4) and the calling host thread's
/// current one (cudaSetDevice).
int device_count();
int current_device();
/// Runs `f()` with `device` current, then makes the caller's device current again: for memory
/// that belongs to a device other than the current one.
template <class F>
auto on_device(int device, F f) {
  const int previous = current_device();
  if (device != previous) cudaSetDevice(device);
  auto result = f();
  if (device != previous) cudaSetDevice(previous);
  return result;
}
/// A device's value of `limit` (cudaDeviceSetLimit, else a GPU's default).
size_t device_limit(int device, cudaLimit limit);
/// True for a live block of the device heap (malloc or new in a kernel).
bool is_device_heap_block(const void* pointer);
/// Forgets `device`'s heap blocks, whose memory cudaDeviceReset has freed.
void forget_device_heap(int device);
/// Whether kernels on `device` may access `peer`'s memory (cudaDeviceEnablePeerAccess).
bool peer_access_enabled(int device, int peer);
/// Whether the allocation that starts at `begin` came from a memory pool (cudaMallocAsync,
/// cudaMallocFromPoolAsync); if so, `accessible` says whether its pool lets kernels on
/// `device` access it (cudaMemPoolSetAccess). Peer access does not reach pool memory on a GPU.
bool pool_allocation_access(std::uintptr_t begin, int device, bool& accessible);
constexpr std::size_t kDefaultDynamicSharedLimit = 48 * 1024;
/// Size of each worker's dynamic shared memory buffer: the H100's opt-in maximum, rounded up.
constexpr std::size_t kDynamicSharedCapacity = 228 * 1024;
void* dynamic_shared_memory_of_this_thread();
/// The address range holding the coroutine frames (a kernel thread's locals) of the blocks run
/// on this OS thread (reserved by the first call).
void thread_frame_range(const void*& begin, const void*& end);

/// memcpy, memmove and memset for the simulator's own code, which the link-time wrap of the C
/// library's (instrumentation.cpp, `__wrap_memcpy`) does not count: where the runtime has counted
/// the access itself (device_memcpy, a texture fetch, a PTX load) or is not the kernel at all.
void* raw_memcpy(void* destination, const void* source, std::size_t bytes) noexcept;
void* raw_memmove(void* destination, const void* source, std::size_t bytes) noexcept;
void* raw_memset(void* destination, int value, std::size_t bytes) noexcept;
/// While one lives on a thread, that thread does the device's work (a stream's copy, memset or
/// library call): the C library's copies of device memory are the device's, not host code's.
class DeviceWorkScope {
 public:
  DeviceWorkScope() noexcept;
  ~DeviceWorkScope();
  DeviceWorkScope(const DeviceWorkScope&) = delete;
  DeviceWorkScope& operator=(const DeviceWorkScope&) = delete;
};

/// A load or store the simulator's own code makes for the running kernel thread (a texture
/// fetch, a surface write): counted and checked as the thread's own access at `pc`, where the
/// kernel is counted (instrumentation.cpp).
void count_device_access(const void* address, unsigned bytes, bool store, const void* pc);

/// A CUDA array's memory (textures.cpp): texels packed in rows, rows in slices or layers.
struct ArrayLayout {
  char* data = nullptr;
  std::size_t element_bytes = 0;
  std::size_t row_bytes = 0;
  std::size_t rows = 0;
  std::size_t slices = 0;
};
/// False when `array` is not a live CUDA array.
bool array_layout(const cudaArray* array, ArrayLayout& layout);

/// A fault found by the simulator inside a kernel thread (memcheck, racecheck): ends the
/// launch with `error`, reported with kernel, block and thread.
struct KernelFault {
  cudaError_t error;
  std::string message;
};

// ---- memory (memory.cpp) -------------------------------------------------------------------------
struct AllocationInfo {
  std::uintptr_t begin = 0;
  std::size_t size = 0;
  const char* file = nullptr;
  unsigned line = 0;
  int device = -1;  // the device it belongs to
};
/// True when `pointer` lies inside a live cudaMalloc allocation.
bool is_device_pointer(const void* pointer);
/// Memory a kernel (or a library's work on a stream) may access: device allocations, managed
/// memory and page-locked host memory.
bool kernel_accessible(const void* pointer);
/// The live allocation that contains `pointer`, or the nearest one, for diagnostics.
bool describe_device_address(const void* pointer, std::string& description);
/// Device memory of the current device for the simulator's own allocations (graph memory), as
/// cudaMalloc makes it (null when it does not fit), and its release.
void* allocate_device_memory(std::size_t bytes, const char* file, unsigned line);
void release_device_memory(void* pointer);
/// Frees every allocation of `device` (cudaDeviceReset).
void free_device_memory(int device);
/// The live allocation containing [pointer, pointer + bytes), if any (for memcheck).
bool find_live_allocation(const void* pointer, AllocationInfo& info);
/// cudaMallocManaged buffers (by their first byte), which host code may use directly.
void remember_managed(const void* start, bool live);
bool is_managed_allocation(std::uintptr_t start);
/// The live allocation that starts at or before `pointer` (or after it, when none does).
bool find_nearest_allocation(const void* pointer, AllocationInfo& info);
/// A freed allocation that contained `pointer` (for use-after-free reports).
bool find_freed_allocation(const void* pointer, AllocationInfo& info);
/// The reserved address range of device memory.
void device_arena_range(std::uintptr_t& begin, std::uintptr_t& end);
bool is_pinned_host_pointer(const void* pointer);
/// The page-locked buffer that holds `pointer` (start and size), if one does.
bool pinned_range_of(const void* pointer, std::uintptr_t& begin, std::size_t& size);
/// The device a cudaMalloc allocation belongs to, or -1 for memory that is not a device's.
int device_of(const void* pointer);

/// A graph's 1-D copy node: validated as cudaMemcpy validates, its work counted when it runs.
cudaError_t copy_node_work(void* dst, const void* src, std::size_t count, cudaMemcpyKind kind,
                           std::function<void()>& work);
/// A graph's 3-D copy node (cudaGraphAddMemcpyNode), validated as cudaMemcpy3D validates.
cudaError_t copy_3d_node_work(const cudaMemcpy3DParms* params, std::function<void()>& work);
/// A graph's memset node (cudaGraphAddMemsetNode): rows of 1-, 2- or 4-byte elements.
cudaError_t memset_node_work(const cudaMemsetParams* params, std::function<void()>& work);

// ---- links (links.cpp) ----------------------------------------------------------------------------
/// Runs `copy` (of `bytes` from `src` to `dst`) and returns no sooner than the link model says
/// such a copy takes (host link, peer link, or nothing within one device or within the host),
/// queued behind the copies already on the same engine; counts peer bytes per pair.
void copy_across_link(void* dst, const void* src, std::size_t bytes, const std::function<void()>& copy);
void reset_link_stats();
/// Counts bytes a kernel on one device loaded from or stored to another's memory.
void count_peer_access(int source, int destination, std::uint64_t bytes);

// ---- launches (launch.cpp / block_scheduler.cpp) ------------------------------------------------
/// Everything a running grid needs; shared by the workers that run its blocks.
/// Memory traffic of a launch, summed over its blocks (each worker adds its block's figures
/// when the block ends).
struct TrafficCounters {
  std::atomic<std::uint64_t> global_load{0}, global_store{0}, shared_load{0}, shared_store{0},
      atomics{0}, host_access{0}, global_atomics{0}, global_atomic_bytes{0}, warp_ops{0},
      barrier_arrivals{0}, mma_lane_calls{0}, fragment_loads{0}, fragment_stores{0}, global_requests{0},
      global_sectors{0}, fissioned_blocks{0};
  std::atomic<std::uint64_t> global_accesses_by_width[5] = {};
  // Largest over the blocks of the launch.
  std::atomic<std::uint64_t> span_global_ops{0}, span_shared_ops{0}, span_warp_ops{0}, span_mma_ops{0};
  std::atomic<std::uint64_t> max_block_global_atomics{0};
  // Atomics per global address, summed over the blocks (merged at each block's end).
  std::mutex atomic_addresses_mutex;
  std::unordered_map<std::uintptr_t, std::uint64_t> atomics_per_address;
};

/// The grid-wide barrier of a cooperative launch (this_grid().sync()). Each block runs on an
/// OS thread of its own; a block whose live threads all reached a grid.sync() waits here until
/// every block of the grid has. A block that exits (or faults) while others wait, or blocks
/// waiting at different grid.sync() calls, can never be released on a GPU either: that is
/// reported instead of hanging.
struct GridBarrier {
  std::mutex mutex;
  std::condition_variable changed;
  unsigned long long total = 0;     // blocks in the grid
  unsigned long long arrived = 0;   // blocks waiting at the current grid.sync()
  unsigned long long exited = 0;    // blocks that have ended
  unsigned long long generation = 0;  // grid.sync() calls released so far
  const char* file = nullptr;       // where the first waiting block waits
  unsigned line = 0;
  uint3 first_waiter{0, 0, 0};
  bool any_exited = false;
  uint3 first_exited{0, 0, 0};
  std::string broken;  // why the barrier can never be released, once known
};

struct LaunchState {
  LaunchConfig config;
  int device = 0;  // current when the kernel was launched
  std::shared_ptr<const KernelInstance> kernel;
  std::atomic<bool> failed{false};
  bool graph_node = false;  // replayed as a node of a CUDA graph (cheaper to launch)
  TrafficCounters traffic;
  std::unique_ptr<GridBarrier> grid_barrier;  // cooperative launches only
};

/// True on the thread that runs a replayed CUDA graph's nodes (graphs.cpp), while it runs them:
/// their launches are graph nodes, cheaper than launches from the host.
bool replaying_graph();
/// Marks the calling thread as replaying a graph while alive.
struct GraphReplay {
  GraphReplay();
  ~GraphReplay();
  GraphReplay(const GraphReplay&) = delete;
  GraphReplay& operator=(const GraphReplay&) = delete;
};

/// Blocks of the grid that has the barrier: block `block` has ended (finished or faulted).
void grid_block_exited(LaunchState& launch, const uint3& block);
/// Blocks of `block_size` threads resident on one SM of the modelled device (occupancy).
int resident_blocks(int block_size, std::size_t dynamic_shared_bytes);

// ---- instrumentation (instrumentation.cpp) ---------------------------------------------------
/// Per-thread counters of the block being run, added to the launch at its end.
struct BlockTraffic {
  std::uint64_t global_load = 0, global_store = 0, shared_load = 0, shared_store = 0,
                atomics = 0, host_access = 0, global_atomics = 0, global_atomic_bytes = 0, warp_ops = 0,
                barrier_arrivals = 0, mma_lane_calls = 0, fragment_loads = 0, fragment_stores = 0;
  std::uint64_t global_accesses_by_width[5] = {};
};

/// Called by the block scheduler: a block starts / ends on this OS thread, and the stack the
/// running thread uses (its fiber's) changed.
void instrumentation_begin_block(LaunchState& launch, const void* native_stack_hint);
void instrumentation_end_block(LaunchState& launch);
void instrumentation_set_stack(const void* low, const void* high);
/// Called when a barrier releases: racecheck's access maps start a new interval, and every
/// warp's pending requests are complete (coalescing).
void instrumentation_barrier_released(unsigned arrivals);
/// A barrier of part of the block released its threads: [first, first + count) (linear ranks),
/// and of those only the ones whose bit is set in `lanes` when count <= 32 (a warp's
/// __syncwarp(mask)). Racecheck forgets their shared-memory accesses so far, as a block barrier
/// forgets everyone's: memory is ordered among the threads of a __syncwarp or a tile's sync.
/// `whole_block`: the group is every thread of the block (a tile as large as the block), which
/// orders everyone's accesses as a block barrier does.
void instrumentation_threads_synced(unsigned first, unsigned count, std::uint32_t lanes, bool whole_block = false);
/// Called by the scheduler for each thread that calls a warp operation.
void instrumentation_count_warp_op();
/// Which checks are on (from CUDASIM_CHECK): races between barriers, shuffled thread order.
bool racecheck_enabled();
bool instrumentation_present();
bool shuffle_enabled();
/// Whether CUDASIM_CHECK (or CUDASIM_SHUFFLE_SEED) asks for any check: then kernels take the
/// coroutine path, whose thread order the shuffle changes and whose waits the checks watch.
bool checks_reorder_or_track_threads();
/// A __syncthreads that part of a block never reaches is reported (CUDASIM_CHECK=barrier).
bool barrier_check_enabled();
unsigned shuffle_seed();

// ---- statistics (stats.cpp) --------------------------------------------------------------------
/// Records a finished launch's figures for the stats API and the exit report.
void record_launch_stats(const LaunchState& launch);
void record_transfer(cudaMemcpyKind direction, std::size_t bytes, bool host_side_pinned);
void record_memset(std::size_t bytes);
void count_kernel_launch_call();
void count_graph_launch_call();

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
  /// Set while a block runs without keeping threadIdx in memory (ThreadCursor::
  /// exact_thread_index false): a fault there would name a stale thread, so the handler jumps
  /// here instead, with the signal and the address below, and the block runs again exactly.
  sigjmp_buf* rerun_exactly = nullptr;
  int fault_signal = 0;
  void* fault_address = nullptr;
};
RunningThread& running_thread() noexcept;
void install_fault_handler();
/// After a fault that did not happen again when its block ran again exactly: reports it without
/// a thread and ends the process with the original signal, as the handler would have.
[[noreturn]] void die_of_unrepeated_fault(const LaunchState& launch, int signal_number, const void* address,
                                          const uint3& block);

// ---- streams (streams.cpp) -----------------------------------------------------------------------
/// What a captured graph holds: the work of each recorded operation, in stream order.
using GraphNodes = std::vector<std::function<void()>>;
// ---- graph memory (graph_memory.cpp) -------------------------------------------------------------
/// A graph allocation of `bytes` on the current device, for an allocation node (or cudaMallocAsync
/// in a captured stream): its address now, and the node's work, which holds the address for as
/// long as a graph or executable holds the work. cudaErrorMemoryAllocation when it does not fit.
cudaError_t new_graph_allocation(std::size_t bytes, const char* file, unsigned line, void*& address,
                                 std::function<void()>& allocation_work);
/// True when `address` was returned by new_graph_allocation and is still addressable.
bool is_graph_allocation(const void* address);
/// Frees a graph allocation whose allocation node has run (a free node's work, or cudaFree and
/// cudaFreeAsync of one). False when `address` is no graph allocation in use.
bool free_graph_allocation(const void* address);
/// The work of a free of a graph allocation queued by `api` (a free node, or cudaFreeAsync):
/// frees it when it runs, and reports a free of memory not in use.
std::function<void()> graph_free_work(void* address, const char* api);
/// Forgets `device`'s graph allocations, whose memory cudaDeviceReset has freed (graphs that still
/// hold their allocation nodes then allocate nothing when they run).
void forget_graph_memory(int device);

/// Stream capture: from begin_capture on, work queued on the stream is recorded, not run.
cudaError_t begin_capture(cudaStream_t stream);
cudaError_t end_capture(cudaStream_t stream, GraphNodes& nodes);
bool is_capturing(cudaStream_t stream);
/// The work recorded since the capture began or since the last call, taken out of the capture,
/// which goes on (for the stream that began it; cudaErrorStreamCaptureUnmatched for one that
/// joined it, cudaErrorStreamCaptureInvalidated once invalidated).
cudaError_t take_captured(cudaStream_t stream, GraphNodes& nodes);
/// The stream that began the capture `stream` is in (itself, or the one it joined), or null;
/// `shared` (when not null): whether other streams have joined that capture.
cudaStream_t capture_origin_of(cudaStream_t stream, bool* shared = nullptr);
/// Whether the stream's capture was invalidated by a call it could not record.
bool capture_invalidated(cudaStream_t stream);
/// Queues `work` on a stream (0, cudaStreamLegacy and cudaStreamPerThread included). Returns
/// cudaErrorInvalidResourceHandle for an unknown stream.
cudaError_t enqueue(cudaStream_t stream, std::function<void()> work);
/// Queues a graph's launch on a stream: it starts after the records that the events of `waits`
/// had now, and it is the new record of each event of `records` (so they complete, and are
/// timed, when the whole launch has). A graph without event nodes is queued by enqueue; one
/// with them cannot be captured (cudaErrorStreamCaptureUnsupported, reported).
cudaError_t enqueue_graph_launch(cudaStream_t stream, std::function<void()> work, const std::vector<cudaEvent_t>& waits,
                                 const std::vector<cudaEvent_t>& records);
/// Whether `event` is an event that exists (created and not destroyed).
bool is_event(cudaEvent_t event);
/// Queues and waits for completion. `after_device_work`: the work also waits for everything
/// queued so far on the device's other streams (a copy from pageable memory, which a GPU does
/// not overlap with kernels).
cudaError_t run_synchronously(cudaStream_t stream, std::function<void()> work, bool after_device_work = false);
/// Validates a launch's configuration against the device and the kernel's attributes; reports
/// and records the error a GPU gives (see submit_launch).
cudaError_t check_launch(const LaunchConfig& config, const void* kernel_id);
/// The kernel's dynamic shared memory limit (48 KiB unless raised with cudaFuncSetAttribute).
std::size_t dynamic_shared_limit(const void* kernel);
/// The work that runs a checked launch, to queue on a stream or to keep in a graph.
std::function<void()> launch_work(const LaunchConfig& config, std::shared_ptr<const KernelInstance> kernel);
/// The kernel registered at `kernel` (see register_kernel in execution.hpp): its arguments'
/// unpacker and parameter count. False for an address the simulator has not seen as a kernel.
bool find_kernel(const void* kernel, ArgumentUnpacker& unpack, std::size_t& parameter_count, const char*& name);
/// What the runtime returns for a function pointer that is not a kernel (cudaLaunchKernel,
/// cudaFuncGetAttributes, the occupancy calculator, a graph's kernel node): CUDA 13 says
/// "invalid resource handle", measured on an H200 (CUDA 13.0, driver 580, 2026-11-27) for the
/// first two; cudaErrorInvalidDeviceFunction is what older releases are documented to return.
constexpr cudaError_t kNotAKernelError = cudaErrorInvalidResourceHandle;
/// Runs every block of a launch on the worker pool; returns when all have finished.
void run_grid(const std::shared_ptr<LaunchState>& launch);
void synchronize_all_streams();
/// Waits for the work queued so far on one device's streams (cudaDeviceSynchronize).
void synchronize_device_streams(int device);

}  // namespace cudasim::detail

// ---- the modelled clock (timeline.cpp; cudasim/timeline.hpp) --------------------------------------
// Outside cudasim::detail on purpose: a submission may call into cudasim::detail (the device
// interface its kernels compile to), and must not be able to move the clock that times it
// (tools/course/symbol_policy.py refuses every other cudasim:: symbol).
namespace cudasim::clock_detail {

/// A new track of the timeline (a stream, a copy engine) on `device`; returns its id.
int timeline_track(const std::string& name, int device);
/// The calling host thread's place on the timeline, for an operation it is queuing.
double host_now_ns();
/// The calling host thread waited, from `entered_ns` on its clock, for device work that ends
/// at `end_ns`: it continues at the later of the two (the real time it waited is dropped).
void host_waited(double entered_ns, double end_ns);

struct ModelledEngine;

/// The operation a stream's thread is running, from `start_ns` on the stream's track: what
/// its work does charges modelled time to it (charge_operation, charge_copy), and its end is
/// where the last charge left it. One per thread at a time (nested ones stack).
class ModelledOperation {
 public:
  ModelledOperation(int track, double start_ns);
  ~ModelledOperation();
  ModelledOperation(const ModelledOperation&) = delete;
  ModelledOperation& operator=(const ModelledOperation&) = delete;
  double end_ns() const { return cursor_ns_; }

 private:
  friend void charge_operation(const char* kind, const std::string& name, double duration_ns);
  friend void charge_copy(ModelledEngine& engine, const std::string& name, double duration_ns);
  int track_;
  double cursor_ns_;
  ModelledOperation* previous_ = nullptr;
};
/// Adds `duration_ns` of `kind` work ("kernel", "memset", "library", "copy") to the operation
/// the calling thread runs; nothing when it runs none.
void charge_operation(const char* kind, const std::string& name, double duration_ns);
/// A copy engine: the copies through it never overlap on the timeline.
struct ModelledEngine {
  std::mutex mutex;
  std::vector<std::pair<double, double>> busy;  // booked intervals, by start
  int track = -1;
};
/// A copy of `duration_ns` through `engine`, in the first gap it fits from where the calling
/// thread's operation is; the operation continues at its end.
void charge_copy(ModelledEngine& engine, const std::string& name, double duration_ns);

}  // namespace cudasim::clock_detail

namespace cudasim::detail {
using namespace cudasim::clock_detail;
}  // namespace cudasim::detail
