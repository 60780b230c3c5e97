/// @file gpu_model.hpp
/// @brief The simulator's modelled GPU clock for one kernel launch: how long the launch would
/// take on a named GPU, from what the simulator counted (cudasim/stats.hpp).
///
/// The simulator runs kernels on a CPU, so its wall-clock times say nothing about a GPU. What
/// it knows exactly is what each launch did: the bytes it moved, the operations of its longest
/// thread, its atomics, its launch configuration. The model turns those into a time:
///
///     time = launch overhead + max(memory, compute, span, atomics)
///
/// - **launch overhead**: 2.5 us for a launch from the host, 1.3 us for a kernel node of a
///   replayed CUDA graph (RRZE's small-kernel measurements on an H200; lesson 01);
/// - **memory**: global bytes (atomics as read + write) over the bandwidth the launch can use.
///   The bytes are those the kernel's instructions move, as the lessons count them; the
///   sectors an uncoalesced pattern touches are counted (KernelStats::global_sectors) but not
///   charged here, since a GPU's L1 and L2 caches serve much of that waste and the model has
///   no caches: coalescing is checked by the exercises' tests instead. A kernel's loads and
///   stores of page-locked host memory (zero-copy) cross the host link instead, at its pinned
///   rate (cudasim/link_model.hpp): the memory term is the longer of the two;
/// - **compute**: the FLOPs declared with cudasim::declare_flops over the FP32 peak the launch
///   can use (the 16-bit tensor-core peak when the launch issued wmma::mma_sync);
/// - **span**: the critical path of the longest thread, which no number of SMs shortens:
///   its global accesses x 32 ns, its shared accesses x 4 ns, its block barriers x 20 ns;
/// - **atomics**: atomics on one address are serialised by the memory system, 2 ns each for
///   the most-hit address.
///
/// "The bandwidth the launch can use" follows Little's law: bandwidth = bytes in flight /
/// latency (600 ns). Each resident thread (one wave of the grid: the blocks the SMs hold at
/// once) keeps its next global accesses in flight, as many as it makes, up to the 19 that
/// hide a round trip at 32 ns each; an SM draws at most 4 times its share of the GPU's
/// bandwidth, and the GPU at most its peak. So a vector add with a thread per element
/// saturates an H100 (3 accesses per thread, 270,336 threads resident), while one block
/// walking the array draws about 32 GB/s and one thread 0.13 GB/s: in the model as on a GPU,
/// memory bandwidth is a matter of parallelism. "The peak the launch can use" is the FP32
/// peak times the fraction of the SMs that have a block, times the fraction of 1024 resident
/// threads per SM they hold (fewer leave FP32 lanes idle).
///
/// It is a model, not a measurement: caches, bank conflicts, divergence, instruction mix and
/// clocks are not in it (docs/simulator.md says where it is known to be off). Its figures are
/// always labelled "modelled" with the GPU's name. What it is good at is ranking: a kernel that
/// moves twice the bytes, walks n elements in one thread, or serialises on one atomic is
/// slower in the model, as it is on a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace cudasim {

/// One GPU's published figures (NVIDIA's datasheets: dense, boost clock, SXM where it exists),
/// the same as lesson 02's table (lessons/02-roofline/roofline_model.hpp; a test keeps the
/// two equal).
struct GpuSpec {
  const char* name;               ///< short name: "H100", "H200", "A100", "T4"
  const char* description;        ///< product name and memory
  double fp32_flops_per_s;        ///< peak FP32 FLOP/s (an FMA is 2 FLOPs)
  double tensor_flops_per_s;      ///< peak dense 16-bit tensor-core FLOP/s (bf16; T4: fp16)
  double memory_bytes_per_s;      ///< peak HBM/GDDR bandwidth
  int sms;                        ///< streaming multiprocessors
};

/// The GPUs the model knows.
extern const GpuSpec kModelledGpus[4];

/// The GPU named `name` (case-insensitive: "h200" finds "H200"), or nullptr.
const GpuSpec* find_gpu(const std::string& name);

/// The GPU the simulator models: CUDASIM_GPU=H100|H200|A100|T4 (default H100; an unknown name is
/// reported once and H100 used).
const GpuSpec& modelled_gpu();

/// What the model needs of one launch (or of several launches, summed, except where noted).
struct LaunchWork {
  std::uint64_t blocks = 0;                ///< grid size
  std::uint64_t threads_per_block = 0;
  std::size_t dynamic_shared_bytes = 0;
  std::uint64_t global_bytes = 0;          ///< loads + stores + atomics' read and write
  std::uint64_t global_accesses = 0;       ///< global loads, stores and atomics (instructions x lanes)
  std::uint64_t host_access_bytes = 0;     ///< loads and stores of page-locked host memory (zero-copy)
  double host_link_bytes_per_s = 0;        ///< the host link's pinned rate (0: the link costs nothing)
  std::uint64_t flops = 0;                 ///< declared
  bool tensor_cores = false;               ///< the launch issued mma_sync: its FLOPs run at the tensor peak
  std::uint64_t span_global_ops = 0;       ///< the longest thread's global accesses
  std::uint64_t span_shared_ops = 0;       ///< the longest thread's shared accesses
  std::uint64_t barriers_per_thread = 0;
  std::uint64_t max_atomics_same_address = 0;
  bool graph_node = false;                 ///< replayed as a node of a CUDA graph
};

/// The modelled time of a launch, in nanoseconds, and its terms (summed over launches when
/// the stats of several launches are added).
struct ModelledTime {
  double total_ns = 0;
  double launch_ns = 0;    ///< launch overhead
  double memory_ns = 0;    ///< global bytes over the usable bandwidth, or host bytes over the host link
  double compute_ns = 0;   ///< declared FLOPs over the usable peak
  double span_ns = 0;      ///< the longest thread's critical path
  double atomic_ns = 0;    ///< serialised atomics on the most-hit address

  /// "launch overhead", "memory", "compute", "span" or "atomics": the largest term.
  const char* dominant() const;
  /// "memory-bound: 4.1 us of 4.3 us modelled on H100" (what the feedback shows).
  std::string describe(const GpuSpec& gpu) const;
  ModelledTime& operator+=(const ModelledTime& other);
};

/// The modelled time of one launch on `gpu`.
ModelledTime model_launch(const LaunchWork& work, const GpuSpec& gpu);

/// The modelled time of device work the simulator does not run instruction by instruction (a
/// memset, a cuBLAS call): a launch plus the roofline of its FLOPs and of the bytes it must move
/// at least once, at the whole GPU's peaks (libraries are tuned to come close to them).
ModelledTime model_library_call(std::uint64_t flops, std::uint64_t bytes, bool tensor_cores, bool graph_node,
                                const GpuSpec& gpu);

/// The model's per-operation costs (documented above), for tests and docs.
struct ModelConstants {
  static constexpr double kLaunchNs = 2500;
  static constexpr double kGraphNodeNs = 1300;
  static constexpr double kGlobalOpNs = 32;
  static constexpr double kSharedOpNs = 4;
  static constexpr double kBarrierNs = 20;
  static constexpr double kSameAddressAtomicNs = 2;
  static constexpr double kSaturatingThreadsPerSm = 1024;
  static constexpr double kMemoryLatencyNs = 600;
  static constexpr double kSmBandwidthShare = 4;
};

}  // namespace cudasim
