/// @file register_tiled_matmul.hpp
/// @brief Contract of exercise 03/04 `register_tiled_matmul`: C = A * B with 2-D register
/// blocking: each thread computes a TM x TN patch of C from registers.
///
/// Implemented by `exercises/03-matmul-reuse/04_register_tiled_matmul.cu` and tested by
/// `autograder/tests/03-matmul-reuse/test_register_tiled_matmul.cpp`.
#pragma once

/// Rows and columns of C one block computes (its block tile).
constexpr int kRtBM = 64;
constexpr int kRtBN = 64;
/// Depth of the slices of A and B staged in shared memory per step along k.
constexpr int kRtBK = 16;
/// Rows and columns of C one thread computes (its register patch).
constexpr int kRtTM = 4;
constexpr int kRtTN = 4;
/// Threads per block: (64 / 4) x (64 / 4) = 256.
constexpr int kRtThreads = (kRtBM / kRtTM) * (kRtBN / kRtTN);

/// Computes `C = A * B` for row-major float matrices (A: M x K, B: K x N, C: M x N).
///
/// Each block of `kRtThreads` threads computes a kRtBM x kRtBN tile of C. Per step of kRtBK
/// along k it stages a kRtBM x kRtBK slice of A and a kRtBK x kRtBN slice of B in shared
/// memory (zero outside the matrices; with float4 loads when K, N and the pointers allow
/// 16-byte aligned access, else one float at a time); then each thread keeps a kRtTM x kRtTN
/// patch of C in registers and, for each k of the slice, loads kRtTM values of A and kRtTN
/// of B from shared memory into registers and does kRtTM * kRtTN multiply-adds with them
/// (an outer product): 16 FMAs per 8 shared loads instead of 1 per 2.
///
/// Global traffic: each element of A is loaded ceil(N / 64) times, each of B ceil(M / 64)
/// times (elements outside the matrices are not loaded), and C is stored once.
///
/// @param A  device pointer to M*K floats (read only)
/// @param B  device pointer to K*N floats (read only)
/// @param C  device pointer to M*N floats (written; must not overlap A or B)
/// @param M,N,K  sizes, each >= 1
/// @throws course::CudaError if the launch is rejected
void launch_register_tiled_matmul(const float* A, const float* B, float* C, int M, int N, int K);
