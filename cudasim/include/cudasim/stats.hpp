/// @file stats.hpp
/// @brief Memory-traffic counters of the simulator: what a profiler would tell you on a GPU,
/// counted exactly on the CPU.
///
/// Kernels compiled with the simulator's instrumentation (the default for exercises and
/// tests; `./course run --stats` for programs) report, per launch, what a profiler would: the
/// bytes they loaded and stored in global and shared memory, their atomics, warp operations
/// and barriers, how their global accesses coalesce, and the critical path of their longest
/// thread, plus a modelled time on a named GPU (cudasim/gpu_model.hpp). The figures are exact
/// and repeatable: a naive N x N matmul loads 2*N^3*4 bytes of global memory, a tiled one with
/// tile T loads 2*N^3*4/T, whatever the machine. Each counter below says which question it
/// answers.
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

#include "cudasim/gpu_model.hpp"
#include <string>
#include <vector>

namespace cudasim {

/// Counters of one launch, or summed over the launches of one kernel.
struct KernelStats {
  std::string kernel_name;           ///< as written at the launch, e.g. "tiled_matmul<16>"
  std::uint64_t launches = 0;
  /// How much parallelism did the launch offer? (A one-block or one-thread launch leaves
  /// almost the whole GPU idle.)
  std::uint64_t blocks = 0;
  std::uint64_t threads = 0;
  /// How much did it move to and from global memory? Plain loads and stores, by direction.
  std::uint64_t global_load_bytes = 0;
  std::uint64_t global_store_bytes = 0;
  /// How much did it reuse on chip? Loads and stores of shared memory.
  std::uint64_t shared_load_bytes = 0;
  std::uint64_t shared_store_bytes = 0;
  /// How often did threads update memory atomically? On global or shared memory.
  std::uint64_t atomics = 0;
  /// Of those, on global memory, and the traffic they are: each reads and writes its
  /// operand (2 x its width in bytes), counted in global_bytes().
  std::uint64_t global_atomics = 0;
  std::uint64_t global_atomic_bytes = 0;
  /// Did atomics pile up on one address? The most atomics any single address received in
  /// one launch (the largest over launches when summed): the memory system serialises them.
  std::uint64_t max_atomics_same_address = 0;
  /// Did each block combine its threads' values before it updated global memory? The most
  /// global atomics any single block made (the largest over launches when summed): a block
  /// that reduces first makes one, a block whose every thread adds its own makes blockDim.
  std::uint64_t max_atomics_per_block = 0;
  std::uint64_t host_access_bytes = 0;  ///< loads and stores of page-locked host memory (zero-copy)
  std::uint64_t flops = 0;  ///< as declared with declare_flops(), times the launches
  /// Did threads cooperate within a warp? Calls of shuffles, votes, __syncwarp, match and
  /// warp reductions, counted per calling thread (a full warp's shuffle counts 32).
  std::uint64_t warp_ops = 0;
  /// Did threads cooperate within a block? Arrivals of threads at __syncthreads and its
  /// variants (a 256-thread block passing one barrier counts 256).
  std::uint64_t barrier_arrivals = 0;
  /// Did the tensor cores do the work? Warp-level wmma::mma_sync operations.
  std::uint64_t mma_ops = 0;
  /// Did they work on tiles from memory, and did their results reach memory? Warp-level
  /// wmma::load_matrix_sync of A and B tiles, and store_matrix_sync of accumulators.
  std::uint64_t fragment_loads = 0, fragment_stores = 0;
  /// How wide were the global accesses? Loads and stores of 1, 2, 4, 8 and 16 bytes (a float4
  /// or int4 access is one 16-byte access).
  std::uint64_t global_accesses_by_width[5] = {};
  /// Were the global accesses coalesced? A request is one load or store instruction issued by
  /// a warp (the same access of every lane of a warp); a sector is a 32-byte piece of memory
  /// it touches, as Nsight Compute counts them: a warp's coalesced float load is 1 request of
  /// 4 sectors, a load with a stride of 32 floats is 1 request of 32 sectors. Exact for up to
  /// 16,384 global accesses per thread between two barriers, and for requests whose sectors lie
  /// in at most four 2 KB windows (beyond that each further lane counts a sector of its own);
  /// lanes that diverge count their accesses as separate requests.
  std::uint64_t global_requests = 0;
  std::uint64_t global_sectors = 0;
  /// What is the critical path that no number of SMs shortens? The most global accesses
  /// (atomics included) and the most shared accesses made by any single thread of the launch
  /// (the largest over launches when summed; the two maxima may come from different threads).
  std::uint64_t span_global_ops = 0;
  std::uint64_t span_shared_ops = 0;
  /// The most warp operations (shuffles, votes, __syncwarp) any single thread made: a chain of
  /// shuffles, each waiting for the last, is a serial walk as much as a chain of loads is.
  /// Counted, not charged by the model.
  std::uint64_t span_warp_ops = 0;
  /// Do the warps share the tensor-core work? The most `mma_sync` operations any one warp
  /// issued (every lane of a warp takes part in each; compare with mma_ops over the warps).
  std::uint64_t span_mma_ops = 0;
  /// How did the simulator run it (a fact about the simulator, not the GPU)? Blocks run as
  /// loops over their threads, one per stretch between barriers (loop fission, see
  /// set_loop_fission), rather than one coroutine per thread; every other counter is the same
  /// either way.
  std::uint64_t fissioned_blocks = 0;
  /// How long would it take on a GPU? The model of cudasim/gpu_model.hpp on modelled_gpu(),
  /// summed over launches.
  ModelledTime modelled;

  /// Adds another launch's (or kernel's) counters: counts add up; the span and the contention
  /// on one address keep the largest; the name stays.
  KernelStats& operator+=(const KernelStats& other);

  std::uint64_t global_bytes() const { return global_load_bytes + global_store_bytes + global_atomic_bytes; }
  std::uint64_t shared_bytes() const { return shared_load_bytes + shared_store_bytes; }
  /// Average sectors per request (0 without requests): 4 for coalesced 4-byte accesses.
  double sectors_per_request() const {
    return global_requests == 0 ? 0.0 : static_cast<double>(global_sectors) / static_cast<double>(global_requests);
  }
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

/// Whether blocks of kernels that the rewrite gave a fissioned version run that version (see
/// cudasim/device_functions.hpp). On by default; off with CUDASIM_FISSION=0 and whenever
/// CUDASIM_CHECK asks for a check, which set_loop_fission(true) does not override. Tests turn
/// it off and on to compare the two paths.
void set_loop_fission(bool on);
bool loop_fission();

/// Clears every counter (per kernel, last launch, transfers).
void reset_stats();

/// The counters of the most recently *completed* launch (call after a synchronisation).
KernelStats last_launch_stats();

/// The counters per kernel name, summed over launches, in order of first launch.
std::vector<KernelStats> kernel_stats();

/// The counters per device, summed over every kernel launched on it, indexed by device (as
/// many entries as the highest device that launched, plus one; a device without launches has
/// zeros; `kernel_name` is empty). Which GPU did the work: a data-parallel rank whose kernels
/// moved the whole batch shows here, where the sum over kernels hides it.
std::vector<KernelStats> device_kernel_stats();

/// Copy and memset traffic since the last reset.
TransferStats transfer_stats();

/// Declares how many floating-point operations one launch of `kernel_name` performs, so that
/// `./course profile` can show its arithmetic intensity and a roofline prediction (the
/// simulator counts bytes, not FLOPs). Use the name as written at the launch.
void declare_flops(const char* kernel_name, std::uint64_t flops_per_launch);

}  // namespace cudasim
