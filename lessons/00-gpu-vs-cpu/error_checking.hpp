/// @file error_checking.hpp
/// @brief Contract of exercise 00/04 `error_checking`: a launcher that reports, instead of
/// hides, a failed launch.
///
/// Implemented by `exercises/00-gpu-vs-cpu/04_error_checking.cu` and tested by
/// `autograder/tests/00-gpu-vs-cpu/test_error_checking.cpp`.
#pragma once

#include <cuda_runtime.h>

/// Multiplies `x[i] *= factor` for every `i` in `[0, n)` on the GPU, using blocks of exactly
/// `threads_per_block` threads (and enough of them to cover `n`), and reports what happened.
///
/// A kernel launch returns nothing; if the runtime rejects it (for example a block of more
/// than 1024 threads, or of 0 threads) the kernel never runs and the error waits in
/// `cudaGetLastError()`. This launcher asks right after the launch:
/// - launch rejected: returns that error, and has consumed it, so a following
///   `cudaGetLastError()` returns `cudaSuccess`; `x` is unchanged;
/// - launch accepted: waits for the kernel with `cudaDeviceSynchronize()` and returns its
///   result (`cudaSuccess`, or the error the kernel hit while running).
///
/// It never throws: the caller decides what an error means.
///
/// @param x                  device pointer to `n` floats (read and written in place)
/// @param n                  number of elements, `n >= 1`
/// @param factor             the scale factor
/// @param threads_per_block  block size as given by the caller; any value, including invalid ones
/// @return the launch error, else the result of `cudaDeviceSynchronize()`
cudaError_t launch_scale_checked(float* x, int n, float factor, int threads_per_block);
