/// @file peak_flops.hpp
/// @brief Contract of exercise 02/03 `peak_flops`: a kernel that does nothing but FMAs, in
/// independent chains, to reach the chip's FP32 peak.
///
/// Implemented by `exercises/02-roofline/03_peak_flops.cu` and tested by
/// `autograder/tests/02-roofline/test_peak_flops.cpp`.
///
/// Why chains, and why several: one FMA (`v = v * a + b`) takes about 4 cycles before its
/// result can feed the next one. A thread with a single chain issues one FMA every 4 cycles;
/// a thread with 8 independent chains issues 8 in the same time (instruction-level
/// parallelism), so fewer warps are needed to keep every FP32 lane busy every cycle.
#pragma once

/// Independent FMA chains per thread.
constexpr int kFmaChains = 8;

/// For every `i` in `[0, n)`: runs `kFmaChains` chains `v_j <- v_j * a + b` (one fused
/// multiply-add each step), chain `j` starting at `seeds[i] + j`, for `iterations` steps,
/// and writes `out[i] = v_0 + v_1 + ... + v_{kFmaChains-1}`.
///
/// Closed form (what the tests compare with, for `a != 1`):
/// `v_j = a^T (seeds[i] + j) + b (1 - a^T) / (1 - a)` with `T = iterations`.
///
/// Work: `2 * kFmaChains * iterations * n` FLOPs (the final sum not counted) and `8 n` bytes.
/// Intensity `2 * kFmaChains * iterations / 8 = 2 * iterations` FLOP/byte: far right on
/// any roofline. One thread per element, 256 threads per block.
///
/// @param seeds       device pointer to `n` floats (read)
/// @param out         device pointer to `n` floats (written)
/// @param n           number of threads / elements, `n >= 0` (`0` launches nothing)
/// @param iterations  steps per chain, `>= 0` (`0` writes the sum of the start values)
/// @throws std::invalid_argument if `n < 0` or `iterations < 0`
/// @throws course::CudaError if the launch is rejected
void launch_fma_chains(const float* seeds, float* out, int n, int iterations, float a, float b);
