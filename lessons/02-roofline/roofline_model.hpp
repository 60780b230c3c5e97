/// @file roofline_model.hpp
/// @brief Contract of exercise 02/01 `roofline_model`: predicted time and bound of a kernel
/// from its FLOPs, its bytes and the machine, and the table of machines the course uses.
///
/// Implemented by `exercises/02-roofline/01_roofline_model.cu` (plain host C++) and tested
/// by `autograder/tests/02-roofline/test_roofline_model.cpp`. The table itself is data, not
/// an exercise: it is defined here, with where each number comes from.
///
/// The model: a kernel that does `flops` floating-point operations and moves `bytes` bytes
/// between memory and the chip needs at least `flops / peak` seconds of arithmetic and
/// `bytes / bandwidth` seconds of memory traffic. The two overlap, so
///
///     time ≈ max(flops / peak, bytes / bandwidth)
///
/// and the kernel is *compute-bound* when the first term is the larger one, *memory-bound*
/// otherwise. Dividing both by `bytes` shows that only the ratio matters:
/// `intensity = flops / bytes` (FLOP per byte) against the machine's `ridge = peak / bandwidth`.
#pragma once

#include <cstddef>
#include <string>

namespace roofline {

/// Which arithmetic roof a kernel runs under.
enum class Precision {
  fp32,  ///< plain FP32 FMA on the CUDA cores (the kernels of this lesson)
  bf16,  ///< 16-bit matrix units: bf16 tensor cores / TPU MXUs, dense (no sparsity)
};

/// What limits a kernel: the arithmetic units or memory bandwidth.
enum class Bound {
  unknown,  ///< not computed (what an unfinished implementation returns)
  compute,  ///< flops / peak >= bytes / bandwidth
  memory,   ///< bytes / bandwidth > flops / peak
};

/// One accelerator's published peak figures (datasheets; dense, boost clock, SXM where it
/// exists). Rates in FLOP/s, bandwidth in bytes/s. A rate of 0 means "not published".
struct Machine {
  const char* name;            ///< short name used on the command line, e.g. "H100"
  const char* description;     ///< full product name and memory
  double fp32_flops;           ///< peak FP32 FLOP/s (an FMA counts as 2 FLOPs)
  double bf16_flops;           ///< peak dense 16-bit matrix FLOP/s (see each entry)
  double memory_bytes_per_s;   ///< peak main-memory (HBM / GDDR) bandwidth, bytes/s
};

/// The machines of the course. Sources: NVIDIA's H100, H200, A100 and T4 datasheets; Google
/// Cloud's TPU v5e and v6e (Trillium) pages; the numbers the lesson's seed quotes
/// (H100 9.89e14 bf16 FLOP/s and 3.35 TB/s; TPU v6e 9.1e14 FLOP/s).
inline constexpr Machine kMachines[] = {
    {"H100", "NVIDIA H100 SXM5 80 GB HBM3", 66.9e12, 989.4e12, 3.35e12},
    {"H200", "NVIDIA H200 SXM 141 GB HBM3e", 66.9e12, 989.4e12, 4.8e12},
    {"A100", "NVIDIA A100 SXM4 80 GB HBM2e", 19.5e12, 312e12, 2.039e12},
    // T4 (Turing) has no bf16: its 16-bit figure is fp16 on the tensor cores.
    {"T4", "NVIDIA T4 16 GB GDDR6 (16-bit figure: fp16)", 8.1e12, 65e12, 320e9},
    // TPUs publish no FP32 peak (their matrix units take bf16), hence 0.
    {"TPUv5e", "Google TPU v5e 16 GB HBM2e", 0.0, 197e12, 819e9},
    {"TPUv6e", "Google TPU v6e (Trillium) 32 GB HBM", 0.0, 918e12, 1.64e12},
};

/// Number of entries in `kMachines`.
inline constexpr std::size_t kMachineCount = sizeof(kMachines) / sizeof(kMachines[0]);

/// The entry of `kMachines` whose name matches `name` without regard to case
/// ("h200" finds "H200"), or nullptr.
const Machine* find_machine(const std::string& name);

/// The peak rate of `machine` for `precision`, in FLOP/s (0 when not published).
double peak_flops(const Machine& machine, Precision precision);

/// Work of one kernel run.
struct Workload {
  double flops;  ///< floating-point operations (FMA = 2)
  double bytes;  ///< bytes moved between main memory and the chip (loads + stores)
};

/// Arithmetic intensity `flops / bytes` in FLOP per byte.
/// `bytes == 0` gives +infinity when `flops > 0`, and 0 when both are 0.
/// @throws std::invalid_argument if either is negative or not finite
double arithmetic_intensity(double flops, double bytes);

/// The ridge point `peak / bandwidth` in FLOP per byte: the intensity above which a kernel
/// on this machine is compute-bound.
/// @throws std::invalid_argument if the machine publishes no peak for `precision`
double ridge_point(const Machine& machine, Precision precision);

/// The roofline: the highest FLOP/s a kernel of intensity `intensity` can reach,
/// `min(peak, intensity * bandwidth)`.
/// @throws std::invalid_argument if `intensity` is negative or NaN, or no peak is published
double attainable_flops(const Machine& machine, Precision precision, double intensity);

/// What the model predicts for one workload on one machine.
struct Prediction {
  double compute_seconds;  ///< flops / peak
  double memory_seconds;   ///< bytes / bandwidth
  double seconds;          ///< max of the two: the predicted run time
  double intensity;        ///< flops / bytes (see arithmetic_intensity)
  double flops_per_second; ///< flops / seconds, the point's height on the roofline (0 if seconds == 0)
  Bound bound;             ///< compute when compute_seconds >= memory_seconds, else memory
};

/// Predicted time and bound of `work` on `machine` with the arithmetic of `precision`.
/// An empty workload (0 FLOPs, 0 bytes) takes 0 seconds and is memory-bound by convention.
/// @throws std::invalid_argument on negative or non-finite inputs, or when the machine
///         publishes no peak for `precision`
Prediction predict(const Workload& work, const Machine& machine, Precision precision);

/// FLOPs and bytes of a dot product of two length-`n` vectors whose elements have
/// `element_bytes` bytes: 2n FLOPs (n multiplies, n adds), 2n elements read, 1 written.
Workload dot_product_workload(double n, double element_bytes);

/// FLOPs and bytes of C = A B with A m x k, B k x n, C m x n, each element `element_bytes`
/// bytes, when every matrix crosses memory exactly once (perfect reuse on chip):
/// 2mnk FLOPs and (mk + kn + mn) elements.
Workload matmul_workload(double m, double n, double k, double element_bytes);

}  // namespace roofline
