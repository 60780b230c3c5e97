/// @file tunable_intensity.hpp
/// @brief Contract of exercise 02/04 `tunable_intensity`: a kernel whose arithmetic
/// intensity you choose, to walk along the roofline from the memory roof to the compute roof.
///
/// Implemented by `exercises/02-roofline/04_tunable_intensity.cu` and tested by
/// `autograder/tests/02-roofline/test_tunable_intensity.cpp`.
#pragma once

/// For every `i` in `[0, n)`: `y[i] = f^k(x[i])` with `f(v) = v * a + b`, i.e. `k` fused
/// multiply-adds applied one after the other to the loaded element.
///
/// Every element of `x` is read once and every element of `y` written once, whatever `k`:
/// `8 n` bytes and `2 k n` FLOPs, intensity `k / 4` FLOP/byte. Small `k` is memory-bound
/// (like STREAM's scale), large `k` compute-bound; the `k` where the two times are equal is
/// the machine's ridge point times 4 (about 56 on an H200 in fp32).
///
/// Closed form (for `a != 1`): `y = a^k x + b (1 - a^k) / (1 - a)`.
///
/// Grid: 256 threads per block, blocks to cover `n` (at most 65535; a grid-stride loop does
/// the rest).
/// @param x  device pointer to `n` floats (read)
/// @param y  device pointer to `n` floats (written); may equal `x`
/// @param n  number of elements, `n >= 0` (`0` launches nothing)
/// @param k  FMAs per element, `k >= 0` (`0` copies)
/// @throws std::invalid_argument if `n < 0` or `k < 0`
/// @throws course::CudaError if the launch is rejected
void launch_tunable_intensity(const float* x, float* y, int n, int k, float a, float b);
