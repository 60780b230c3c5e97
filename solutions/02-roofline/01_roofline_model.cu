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
  require_non_negative(flops, "flops");
  require_non_negative(bytes, "bytes");
  if (bytes == 0.0) return flops > 0.0 ? std::numeric_limits<double>::infinity() : 0.0;
  return flops / bytes;
  // END YOUR CODE
}

double ridge_point(const Machine& machine, Precision precision) {
  // BEGIN YOUR CODE
  // FLOP/s divided by B/s: the FLOPs the chip can do in the time one byte arrives.
  return require_peak(machine, precision) / machine.memory_bytes_per_s;
  // END YOUR CODE
}

double attainable_flops(const Machine& machine, Precision precision, double intensity) {
  // BEGIN YOUR CODE
  const double peak = require_peak(machine, precision);
  if (std::isnan(intensity) || intensity < 0.0)
    throw std::invalid_argument("intensity must be >= 0, got " + std::to_string(intensity));
  // The slanted roof (bandwidth x intensity) until it meets the flat one (peak).
  return std::min(peak, intensity * machine.memory_bytes_per_s);
  // END YOUR CODE
}

Prediction predict(const Workload& work, const Machine& machine, Precision precision) {
  // BEGIN YOUR CODE
  require_non_negative(work.flops, "flops");
  require_non_negative(work.bytes, "bytes");
  const double peak = require_peak(machine, precision);
  Prediction p{};
  p.compute_seconds = work.flops / peak;
  p.memory_seconds = work.bytes / machine.memory_bytes_per_s;
  // Compute and memory traffic overlap, so the slower of the two sets the pace.
  p.seconds = std::max(p.compute_seconds, p.memory_seconds);
  p.intensity = arithmetic_intensity(work.flops, work.bytes);
  p.flops_per_second = p.seconds > 0.0 ? work.flops / p.seconds : 0.0;
  const bool empty = work.flops == 0.0 && work.bytes == 0.0;
  p.bound = (!empty && p.compute_seconds >= p.memory_seconds) ? Bound::compute : Bound::memory;
  return p;
  // END YOUR CODE
}

// ---------------------------------------------------------------------------------------
// two workloads worth knowing by heart

Workload dot_product_workload(double n, double element_bytes) {
  // BEGIN YOUR CODE
  // n multiplies and n adds; x and y read once, one scalar written.
  return {2.0 * n, (2.0 * n + 1.0) * element_bytes};
  // END YOUR CODE
}

Workload matmul_workload(double m, double n, double k, double element_bytes) {
  // BEGIN YOUR CODE
  // Each of the m*n outputs is a length-k dot product: k multiplies and k adds.
  return {2.0 * m * n * k, (m * k + k * n + m * n) * element_bytes};
  // END YOUR CODE
}

}  // namespace roofline
