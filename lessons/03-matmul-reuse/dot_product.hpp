/// @file dot_product.hpp
/// @brief Contract of exercise 03/01 `dot_product`: one number from two long vectors, by a
/// block reduction in shared memory, warp shuffles, and a grid-level combine.
///
/// Implemented by `exercises/03-matmul-reuse/01_dot_product.cu` and tested by
/// `autograder/tests/03-matmul-reuse/test_dot_product.cpp`.
#pragma once

/// Threads per block of the dot-product kernel (8 warps).
constexpr int kDotThreads = 256;

/// Most blocks the launcher starts; beyond `kDotMaxBlocks * kDotThreads` elements each
/// thread loops over the vector with a grid stride.
constexpr int kDotMaxBlocks = 1024;

/// Computes `*result = sum over i in [0, n) of x[i] * y[i]` on the GPU, in float.
///
/// Each thread sums its elements (grid-stride loop), the block combines its threads' sums in
/// shared memory down to one warp and finishes with warp shuffles, and the blocks' sums are
/// combined into `*result` (with `atomicAdd` on a zeroed result, or a second pass). Each
/// input element is read from global memory exactly once. The result is overwritten, never
/// accumulated into: two calls give the same value. Asynchronous like a kernel launch.
///
/// @param x       device pointer to `n` floats (read only)
/// @param y       device pointer to `n` floats (read only)
/// @param result  device pointer to one float (written)
/// @param n       number of elements, `n >= 0`; `n == 0` writes 0
/// @throws course::CudaError if a launch or a runtime call fails
void launch_dot_product(const float* x, const float* y, float* result, int n);
