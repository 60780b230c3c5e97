// Exercise 02/04: a kernel of tunable arithmetic intensity, k FMAs per element loaded.
//
// What it teaches: the roofline's two regimes in one kernel. Each element costs 8 bytes
// (one load, one store) whatever k is, and 2k FLOPs. Sweep k and the intensity k/4 FLOP/B
// walks along the x axis: while k/4 is below the ridge the run time does not move (memory
// sets it) and the FLOP/s climb with k; past the ridge the time grows with k and the FLOP/s
// stay at the roof. The k where the time starts to grow is where you measure the ridge.
//
// Run its tests:   ./course test 02/tunable_intensity
//
// Napkin math (H200, fp32): ridge 66.9e12 / 4.8e12 ≈ 14 FLOP/B, so k ≈ 56. For 2^26
// elements: 537 MB of traffic = 0.11 ms at 4.8 TB/s; with k = 56, 7.5e9 FLOPs = 0.11 ms at
// 67 TFLOP/s: the two times meet.

#include "cuda_check.hpp"
#include "tunable_intensity.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

// ---------------------------------------------------------------------------------------
// kernel

__global__ void tunable_intensity_kernel(const float* x, float* y, int n, int k, float a,
                                         float b) {
  // BEGIN YOUR CODE
  // TODO(student): y[i] = x[i] after k fmaf(v, a, b) steps for every i < n, with any grid, each
  //                element loaded once and stored once (about 7 lines)
  // END YOUR CODE
}

// ---------------------------------------------------------------------------------------
// launcher (given)

void launch_tunable_intensity(const float* x, float* y, int n, int k, float a, float b) {
  if (n < 0) throw std::invalid_argument("tunable_intensity: n must be >= 0, got " + std::to_string(n));
  if (k < 0) throw std::invalid_argument("tunable_intensity: k must be >= 0, got " + std::to_string(k));
  if (n == 0) return;
  const int threads = 256;
  const int blocks = std::min((n - 1) / threads + 1, 65535);
  tunable_intensity_kernel<<<blocks, threads>>>(x, y, n, k, a, b);
  CUDA_CHECK_LAUNCH();
}
