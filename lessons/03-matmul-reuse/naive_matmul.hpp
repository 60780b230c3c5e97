/// @file naive_matmul.hpp
/// @brief Contract of exercise 03/02 `naive_matmul`: C = A * B with one thread per element
/// of C, every operand read straight from global memory.
///
/// Implemented by `exercises/03-matmul-reuse/02_naive_matmul.cu` and tested by
/// `autograder/tests/03-matmul-reuse/test_naive_matmul.cpp`.
#pragma once

/// Threads per block along each axis (blocks of 16 x 16 = 256 threads).
constexpr int kNaiveBlock = 16;

/// Computes `C = A * B` for row-major float matrices: A is M x K, B is K x N, C is M x N,
/// `C[i*N + j] = sum over k of A[i*K + k] * B[k*N + j]`, accumulated in float in k order.
///
/// One thread per element of C; `threadIdx.x` runs along a row of C (the column index j), so
/// the 32 threads of a warp read 32 consecutive floats of a row of B and write 32 consecutive
/// floats of C (coalesced), and all read the same element of A (a broadcast). Each thread
/// reads its K elements of A and K of B from global memory: 2*M*N*K*4 bytes in all.
///
/// @param A  device pointer to M*K floats (read only)
/// @param B  device pointer to K*N floats (read only)
/// @param C  device pointer to M*N floats (written; must not overlap A or B)
/// @param M,N,K  sizes, each >= 1
/// @throws course::CudaError if the launch is rejected
void launch_naive_matmul(const float* A, const float* B, float* C, int M, int N, int K);
