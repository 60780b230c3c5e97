/// @file vector_add.hpp
/// @brief Contract of exercise 00/01 `vector_add`: c = a + b, one thread per element.
///
/// Implemented by `exercises/00-gpu-vs-cpu/01_vector_add.cu` (the student's file) and
/// tested by `autograder/tests/00-gpu-vs-cpu/test_vector_add.cpp`.
#pragma once

/// Computes `c[i] = a[i] + b[i]` for every `i` in `[0, n)` on the GPU.
///
/// Launches one thread per element: 256 threads per block and enough blocks to cover `n`
/// (the last block is partly idle, so the kernel guards `i < n`). Returns as soon as the
/// kernel is queued; the next synchronizing call (e.g. `cudaMemcpy` to the host) waits.
///
/// @param a  device pointer to `n` floats (read only)
/// @param b  device pointer to `n` floats (read only)
/// @param c  device pointer to `n` floats (written); may be `a` or `b`, since each thread
///           reads its own element before it writes it
/// @param n  number of elements, `n >= 0`; `n == 0` launches nothing and returns
/// @throws course::CudaError if the launch is rejected (checked with `CUDA_CHECK_LAUNCH`)
void launch_vector_add(const float* a, const float* b, float* c, int n);
