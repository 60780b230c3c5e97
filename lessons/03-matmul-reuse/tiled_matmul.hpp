/// @file tiled_matmul.hpp
/// @brief Contract of exercise 03/03 `tiled_matmul`: C = A * B through shared-memory tiles,
/// so each element loaded from global memory is used TILE times.
///
/// Implemented by `exercises/03-matmul-reuse/03_tiled_matmul.cu` and tested by
/// `autograder/tests/03-matmul-reuse/test_tiled_matmul.cpp`.
#pragma once

/// Computes `C = A * B` for row-major float matrices (A: M x K, B: K x N, C: M x N), like
/// `launch_naive_matmul`, with blocks of TILE x TILE threads, one per element of a TILE x TILE
/// tile of C.
///
/// The block walks along k in steps of TILE: its threads copy a TILE x TILE tile of A and one
/// of B into shared memory (one element each, threadIdx.x along a row of the tile so that a
/// warp's loads are neighbouring floats, coalesced; zero outside the matrices), wait
/// (`__syncthreads`), accumulate TILE products each from shared memory, and wait again before
/// the tiles are overwritten. Each element of A is then loaded from global memory
/// ceil(N / TILE) times and each element of B ceil(M / TILE) times (elements outside the
/// matrices are not loaded): for M = N = K a multiple of TILE, 2*N^3*4/TILE bytes instead of
/// the naive kernel's 2*N^3*4.
///
/// Instantiated for TILE = 8, 16 and 32 (64 to 1024 threads per block).
/// @param A  device pointer to M*K floats (read only)
/// @param B  device pointer to K*N floats (read only)
/// @param C  device pointer to M*N floats (written; must not overlap A or B)
/// @param M,N,K  sizes, each >= 1
/// @throws course::CudaError if the launch is rejected
template <int TILE>
void launch_tiled_matmul(const float* A, const float* B, float* C, int M, int N, int K);
