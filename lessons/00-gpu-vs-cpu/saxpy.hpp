/// @file saxpy.hpp
/// @brief Contract of exercise 00/02 `saxpy`: y = alpha * x + y with a grid-stride loop.
///
/// Implemented by `exercises/00-gpu-vs-cpu/02_saxpy.cu` and tested by
/// `autograder/tests/00-gpu-vs-cpu/test_saxpy.cpp`.
#pragma once

/// Computes `y[i] = alpha * x[i] + y[i]` for every `i` in `[0, n)` on the GPU, with exactly
/// the grid the caller asks for: `blocks` blocks of `threads_per_block` threads.
///
/// The grid may be smaller than `n` (e.g. 3 blocks of 64 threads for a million elements), so
/// each thread handles elements `i, i + stride, i + 2*stride, ...` where
/// `stride = gridDim.x * blockDim.x` (a grid-stride loop). The grid may also be larger than
/// `n`; surplus threads do nothing.
///
/// @param n                  number of elements, `n >= 0`
/// @param alpha              the scale factor
/// @param x                  device pointer to `n` floats (read only)
/// @param y                  device pointer to `n` floats (read and written in place)
/// @param blocks             grid size, `1 <= blocks <= 2^31 - 1`
/// @param threads_per_block  block size, `1 <= threads_per_block <= 1024`
/// @throws course::CudaError if the launch is rejected (checked with `CUDA_CHECK_LAUNCH`)
void launch_saxpy(int n, float alpha, const float* x, float* y, int blocks, int threads_per_block);
