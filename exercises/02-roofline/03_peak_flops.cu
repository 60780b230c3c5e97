// Exercise 02/03: a peak-FLOP kernel, independent FMA chains.
//
// What it teaches: what "peak FLOP/s" means and what it takes to get there. An H100/H200 has
// 132 SMs x 128 FP32 lanes, each finishing one FMA (2 FLOPs) per cycle: at ≈1.98 GHz that is
// 132 x 128 x 2 x 1.98e9 ≈ 67 TFLOP/s. Reaching it needs every lane to issue an FMA every
// cycle, yet an FMA's result is ready only ~4 cycles later. A thread with one chain
// (v = v*a + b, again and again) waits on itself; a thread with 8 independent chains always
// has another FMA ready. The loads and stores are 8 bytes per thread, against 16 FLOPs per
// step: with enough steps the kernel sits far to the right of any ridge point.
//
// Run its tests:   ./course test 02/peak_flops
//
// Napkin math: n = 132 SMs x 2048 threads x 4 = 1,081,344 threads, 1024 steps, 8 chains:
// 2 x 8 x 1024 x 1.08e6 = 1.8e10 FLOPs = 0.27 ms at 67 TFLOP/s, while its 8.6 MB of
// traffic would take 2 µs at 4.8 TB/s.

#include "cuda_check.hpp"
#include "peak_flops.hpp"

#include <stdexcept>
#include <string>

// ---------------------------------------------------------------------------------------
// kernel

__global__ void fma_chains_kernel(const float* seeds, float* out, int n, int iterations,
                                  float a, float b) {
  // BEGIN YOUR CODE
  // TODO(student): one thread per element: kFmaChains independent chains of `iterations` fmaf(v, a,
  //                b) steps, chain j starting at seeds[i] + j, their sum to out[i] (about 14 lines)
  // END YOUR CODE
}

// ---------------------------------------------------------------------------------------
// launcher (given)

void launch_fma_chains(const float* seeds, float* out, int n, int iterations, float a, float b) {
  if (n < 0) throw std::invalid_argument("fma_chains: n must be >= 0, got " + std::to_string(n));
  if (iterations < 0)
    throw std::invalid_argument("fma_chains: iterations must be >= 0, got " +
                                std::to_string(iterations));
  if (n == 0) return;
  const int threads = 256;
  const int blocks = (n - 1) / threads + 1;
  fma_chains_kernel<<<blocks, threads>>>(seeds, out, n, iterations, a, b);
  CUDA_CHECK_LAUNCH();
}
