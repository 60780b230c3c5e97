// Exercise 03/03: tiled_matmul, C = A * B through shared-memory tiles.
//
// What it teaches: reuse made explicit. In the naive kernel the 16 threads of a row of a
// block all read the same row of A, each on its own, from global memory. Here a block of
// TILE x TILE threads loads a TILE x TILE tile of A and one of B into shared memory once
// (one element per thread), and every thread then reads TILE values of each from there:
// every element brought from global memory is used TILE times, so global traffic falls by
// TILE (2*N^3*4/TILE bytes for N x N matrices; the simulator counts it exactly).
//
// Two barriers per step, for two different reasons:
//   - after the loads: no thread may read the tile before all of it is written;
//   - after the products: no thread may overwrite the tile (next step) while a slower
//     thread is still reading it.
//
// Run its tests:   ./course test 03/tiled_matmul
//
// Napkin math: at TILE = 32 the 4096^3 matmul loads 17 GB instead of 550 GB; on a GPU the
// limit moves to shared-memory bandwidth (2 shared loads per FMA), which exercise 4 attacks.

#include "cuda_check.hpp"
#include "tiled_matmul.hpp"

// ---------------------------------------------------------------------------------------
// kernel

template <int TILE>
__global__ void tiled_matmul_kernel(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ float tile_a[TILE][TILE];
  __shared__ float tile_b[TILE][TILE];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * TILE + ty;  // this thread's element of C
  const int col = blockIdx.x * TILE + tx;
  float sum = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    // BEGIN YOUR CODE
    // TODO(student): this step's T x T tiles of A and B into shared memory (0 outside the
    //                matrices), their products added to sum, with the barriers that make both safe
    //                (about 9 lines)
    // END YOUR CODE
  }
  if (row < M && col < N) C[static_cast<long long>(row) * N + col] = sum;
}

// ---------------------------------------------------------------------------------------
// launcher

template <int TILE>
void launch_tiled_matmul(const float* A, const float* B, float* C, int M, int N, int K) {
  const dim3 block(TILE, TILE);
  const dim3 grid((N - 1) / TILE + 1, (M - 1) / TILE + 1);
  tiled_matmul_kernel<TILE><<<grid, block>>>(A, B, C, M, N, K);
  CUDA_CHECK_LAUNCH();
}

// The tile sizes the contract promises (the tests call all three).
template void launch_tiled_matmul<8>(const float*, const float*, float*, int, int, int);
template void launch_tiled_matmul<16>(const float*, const float*, float*, int, int, int);
template void launch_tiled_matmul<32>(const float*, const float*, float*, int, int, int);
