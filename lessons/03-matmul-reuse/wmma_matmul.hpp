/// @file wmma_matmul.hpp
/// @brief Contract of exercise 03/05 `wmma_matmul`: C = A * B on tensor cores, bf16 inputs,
/// fp32 accumulation, through the warp matrix API `nvcuda::wmma` (16 x 16 x 16 fragments).
///
/// Implemented by `exercises/03-matmul-reuse/05_wmma_matmul.cu` and tested by
/// `autograder/tests/03-matmul-reuse/test_wmma_matmul.cpp`. Needs a GPU with bf16 tensor
/// cores (compute capability 8.0 or later: A100, H100, H200) on the cuda backend; the
/// simulator computes the fragments on the CPU (cudasim/include/mma.h).
#pragma once

#include <cuda_bf16.h>

/// Rows and columns of C one block computes: 2 x 2 warps, each a 32 x 32 tile of C made of
/// 2 x 2 fragments of 16 x 16.
constexpr int kWmmaBM = 64;
constexpr int kWmmaBN = 64;
/// Depth of the slices of A and B staged in shared memory per step along k (2 fragments).
constexpr int kWmmaBK = 32;
/// Threads per block: 4 warps.
constexpr int kWmmaThreads = 128;

/// Computes `C = A * B` with A (M x K) and B (K x N) row-major `__nv_bfloat16` and C (M x N)
/// row-major float: `C[i*N + j] = sum over k of float(A[i*K + k]) * float(B[k*N + j])`,
/// accumulated in float by the tensor cores.
///
/// Each block stages a 64 x 32 slice of A and a 32 x 64 slice of B in shared memory (zero
/// outside the matrices, so any M, N, K works), each warp multiplies its fragments with
/// `wmma::mma_sync`, and the block writes its 64 x 64 tile of C through shared memory,
/// skipping elements outside C. Each element of A is loaded ceil(N / 64) times, each of B
/// ceil(M / 64) times.
///
/// @param A  device pointer to M*K bf16 values (read only)
/// @param B  device pointer to K*N bf16 values (read only)
/// @param C  device pointer to M*N floats (written)
/// @param M,N,K  sizes, each >= 1
/// @throws course::CudaError if the launch is rejected
void launch_wmma_matmul(const __nv_bfloat16* A, const __nv_bfloat16* B, float* C, int M, int N, int K);
