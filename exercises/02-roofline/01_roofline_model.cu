// Exercise 02/01: the roofline model in C++: predicted time and bound of a kernel.
//
// What it teaches: a kernel's run time has two lower bounds, the time its arithmetic needs
// at the chip's peak rate and the time its memory traffic needs at the memory's bandwidth.
// They overlap, so the larger one wins: time ≈ max(flops / peak, bytes / bandwidth).
// Which one is larger depends only on flops / bytes (the arithmetic intensity) against
// peak / bandwidth (the machine's ridge point). Nothing here runs on the GPU: this is plain
// C++ inside a .cu file, and the other exercises of the lesson are placed on this model.
//
// Run its tests:   ./course test 02/roofline_model
//
// Napkin math to check yourself against: an H100 does 9.894e14 bf16 FLOP/s and moves
// 3.35e12 B/s, so its ridge is 9.894e14 / 3.35e12 ≈ 295 FLOP/B. A bf16 dot product does
// 0.5 FLOP/B (590 times too little: memory-bound); a 4096³ bf16 matmul does
// 2·4096³ / (3·4096²·2) = 4096/3 ≈ 1365 FLOP/B (compute-bound).

#include "roofline_model.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace roofline {

// ---------------------------------------------------------------------------------------
// given: the table lookup

const Machine* find_machine(const std::string& name) {
  auto lower = [](std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  for (const Machine& m : kMachines) {
    if (lower(m.name) == lower(name)) return &m;
  }
  return nullptr;
}

double peak_flops(const Machine& machine, Precision precision) {
  return precision == Precision::fp32 ? machine.fp32_flops : machine.bf16_flops;
}

namespace {

// given: argument checks shared by the functions below (throw, never return garbage)
[[maybe_unused]] void require_non_negative(double value, const char* what) {
  if (!std::isfinite(value) || value < 0.0)
    throw std::invalid_argument(std::string(what) + " must be finite and >= 0, got " +
                                std::to_string(value));
}

[[maybe_unused]] double require_peak(const Machine& machine, Precision precision) {
  const double peak = peak_flops(machine, precision);
  if (!(peak > 0.0))
    throw std::invalid_argument(std::string(machine.name) + " publishes no peak for " +
                                (precision == Precision::fp32 ? "fp32" : "bf16"));
  return peak;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// the model

double arithmetic_intensity(double flops, double bytes) {
  // BEGIN YOUR CODE
  // TODO(student): reject negative or non-finite inputs (require_non_negative), handle
  //                bytes == 0, return FLOPs per byte (about 4 lines)
  return std::nan("");
  // END YOUR CODE
}

double ridge_point(const Machine& machine, Precision precision) {
  // BEGIN YOUR CODE
  // TODO(student): peak FLOP/s over bandwidth; require_peak() gives the peak and throws
  //                when the machine has none (about 1 line)
  return std::nan("");
  // END YOUR CODE
}

double attainable_flops(const Machine& machine, Precision precision, double intensity) {
  // BEGIN YOUR CODE
  // TODO(student): the lower of the two roofs, after checking intensity (about 4 lines)
  return std::nan("");
  // END YOUR CODE
}

Prediction predict(const Workload& work, const Machine& machine, Precision precision) {
  // BEGIN YOUR CODE
  // TODO(student): fill every field of a Prediction: both times, their max, the intensity,
  //                the FLOP/s reached and the bound (about 12 lines)
  const double nan = std::nan("");
  return Prediction{nan, nan, nan, nan, nan, Bound::unknown};
  // END YOUR CODE
}

// ---------------------------------------------------------------------------------------
// two workloads worth knowing by heart

Workload dot_product_workload(double n, double element_bytes) {
  // BEGIN YOUR CODE
  // TODO(student): FLOPs and bytes of a dot product (about 1 line)
  return {std::nan(""), std::nan("")};
  // END YOUR CODE
}

Workload matmul_workload(double m, double n, double k, double element_bytes) {
  // BEGIN YOUR CODE
  // TODO(student): FLOPs and bytes of a matmul, each matrix moved once (about 1 line)
  return {std::nan(""), std::nan("")};
  // END YOUR CODE
}

}  // namespace roofline
