// Exercise 03/02: naive_matmul, C = A * B with one thread per element of C.
//
// What it teaches: the matmul everyone writes first, and why its memory traffic is the
// problem. Each thread computes one dot product of length K, reading a row of A and a column
// of B straight from global memory. Nothing is shared between threads, so A and B are read
// N and M times over: 2*M*N*K*4 bytes for 2*M*N*K FLOPs, 0.25 FLOP/B, the intensity of a
// single dot product. (Caches soften this on a GPU; the simulator counts every access.)
//
// The one thing done right: threadIdx.x runs along a row of C, so a warp's 32 threads read
// 32 consecutive floats of a row of B (one 128-byte transaction, "coalesced") and all read
// the same A[row][k] (a broadcast). Swap x and y and each warp reads 32 different rows of A,
// 32 transactions where 1 would do.
//
// Run its tests:   ./course test 03/naive_matmul
//
// Napkin math: M = N = K = 4096 is 2 * 4096^3 = 137 GFLOP and 2 * 4096^3 * 4 B = 550 GB of
// loads if no cache helped: ~0.13 s at 4.3 TB/s, against 2 ms for the FLOPs at 67 TFLOP/s.

#include "cuda_check.hpp"
#include "naive_matmul.hpp"

// ---------------------------------------------------------------------------------------
// kernel

__global__ void naive_matmul_kernel(const float* A, const float* B, float* C, int M, int N, int K) {
  // BEGIN YOUR CODE
  // TODO(student): this thread's element of C, the dot product of its row of A and its
  //                column of B; x runs along a row of C, so that a warp reads consecutive
  //                elements of B (about 8 lines)
  // END YOUR CODE
}

// ---------------------------------------------------------------------------------------
// launcher

void launch_naive_matmul(const float* A, const float* B, float* C, int M, int N, int K) {
  const dim3 block(kNaiveBlock, kNaiveBlock);
  // BEGIN YOUR CODE
  // TODO(student): a grid whose x covers the N columns and y the M rows, rounded up to
  //                whole blocks (about 1 line)
  const dim3 grid(0, 0);  // placeholder: a 0-block grid is rejected at launch
  // END YOUR CODE
  naive_matmul_kernel<<<grid, block>>>(A, B, C, M, N, K);
  CUDA_CHECK_LAUNCH();
}
