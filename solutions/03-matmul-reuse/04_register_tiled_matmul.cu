// Exercise 03/04: register_tiled_matmul, C = A * B with 2-D register blocking.
//
// What it teaches: the next level of reuse. In the tiled kernel every multiply-add needs two
// loads from shared memory, and shared memory, not the FPUs, becomes the limit. Here each
// thread computes a 4 x 4 patch of C: per k it loads 4 values of A and 4 of B into registers
// and does all 16 products between them (an outer product), so 8 shared loads feed 16 FMAs.
// The block's tile grows to 64 x 64, which also cuts global traffic: each element of A is
// now loaded N/64 times instead of N/16.
//
// Layout choices, each for a reason:
//   - the A slice is stored transposed (tile_a[k][row]) so that a thread's 4 rows for one k
//     are adjacent in shared memory, like its 4 columns of B in tile_b[k][col];
//   - slices are loaded with float4 (16 bytes per load instruction, a quarter of the
//     instructions) when every float4 lies inside one row and is 16-byte aligned: K % 4 == 0
//     for A, N % 4 == 0 for B, and 16-byte aligned base pointers; otherwise one float at a time.
//
// Run its tests:   ./course test 03/register_tiled_matmul
//
// Napkin math: global loads for 4096^3: 2 * 4096^3 * 4 / 64 = 8.6 GB, 2 ms at 4.3 TB/s and
// below the 2 ms the FLOPs need at the fp32 peak: on a GPU this kernel can be compute-bound.
// Well-tuned kernels of this kind reach 60-70% of cuBLAS SGEMM.

#include "cuda_check.hpp"
#include "register_tiled_matmul.hpp"

#include <cstdint>

// ---------------------------------------------------------------------------------------
// kernel

__global__ void __launch_bounds__(kRtThreads)
register_tiled_matmul_kernel(const float* A, const float* B, float* C, int M, int N, int K, bool vector_a,
                             bool vector_b) {
  __shared__ float tile_a[kRtBK][kRtBM];  // transposed: tile_a[k][row]
  __shared__ float tile_b[kRtBK][kRtBN];
  const int tid = threadIdx.x;
  const int thread_row = tid / (kRtBN / kRtTN);  // 0..15: which 4 rows of the block tile
  const int thread_col = tid % (kRtBN / kRtTN);  // 0..15: which 4 columns
  const int block_row = blockIdx.y * kRtBM, block_col = blockIdx.x * kRtBN;
  // Each thread loads 4 consecutive floats of each slice: a (row, 4 k) piece of A and a
  // (k, 4 columns) piece of B. 256 threads x 4 = the 64 x 16 slice.
  const int a_row = tid / (kRtBK / 4), a_k = (tid % (kRtBK / 4)) * 4;
  const int b_k = tid / (kRtBN / 4), b_col = (tid % (kRtBN / 4)) * 4;

  float acc[kRtTM][kRtTN] = {};
  for (int k0 = 0; k0 < K; k0 += kRtBK) {
    // BEGIN YOUR CODE
    // Stage the slices; zeros outside the matrices (they add nothing and are not loaded).
    const int ar = block_row + a_row, ak = k0 + a_k;
    if (vector_a) {
      // K % 4 == 0 and ak % 4 == 0: the 4 floats are all inside row ar or all outside.
      float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      if (ar < M && ak < K) v = *reinterpret_cast<const float4*>(A + static_cast<long long>(ar) * K + ak);
      tile_a[a_k + 0][a_row] = v.x;
      tile_a[a_k + 1][a_row] = v.y;
      tile_a[a_k + 2][a_row] = v.z;
      tile_a[a_k + 3][a_row] = v.w;
    } else {
      for (int i = 0; i < 4; ++i)
        tile_a[a_k + i][a_row] = (ar < M && ak + i < K) ? A[static_cast<long long>(ar) * K + ak + i] : 0.0f;
    }
    const int bk = k0 + b_k, bc = block_col + b_col;
    if (vector_b) {
      float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      if (bk < K && bc < N) v = *reinterpret_cast<const float4*>(B + static_cast<long long>(bk) * N + bc);
      tile_b[b_k][b_col + 0] = v.x;
      tile_b[b_k][b_col + 1] = v.y;
      tile_b[b_k][b_col + 2] = v.z;
      tile_b[b_k][b_col + 3] = v.w;
    } else {
      for (int j = 0; j < 4; ++j)
        tile_b[b_k][b_col + j] = (bk < K && bc + j < N) ? B[static_cast<long long>(bk) * N + bc + j] : 0.0f;
    }
    __syncthreads();  // the slices are complete before anyone reads them

    // The outer products: per k, 4 + 4 shared loads into registers, 16 FMAs from registers.
    for (int k = 0; k < kRtBK; ++k) {
      float a[kRtTM], b[kRtTN];
      for (int i = 0; i < kRtTM; ++i) a[i] = tile_a[k][thread_row * kRtTM + i];
      for (int j = 0; j < kRtTN; ++j) b[j] = tile_b[k][thread_col * kRtTN + j];
      for (int i = 0; i < kRtTM; ++i)
        for (int j = 0; j < kRtTN; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();  // everyone is done with the slices before the next step overwrites them
    // END YOUR CODE
  }
  // BEGIN YOUR CODE
  // Write the patch, skipping the parts of it outside C.
  for (int i = 0; i < kRtTM; ++i) {
    const int row = block_row + thread_row * kRtTM + i;
    if (row >= M) break;
    for (int j = 0; j < kRtTN; ++j) {
      const int col = block_col + thread_col * kRtTN + j;
      if (col < N) C[static_cast<long long>(row) * N + col] = acc[i][j];
    }
  }
  // END YOUR CODE
}

// ---------------------------------------------------------------------------------------
// launcher

void launch_register_tiled_matmul(const float* A, const float* B, float* C, int M, int N, int K) {
  const dim3 grid((N - 1) / kRtBN + 1, (M - 1) / kRtBM + 1);
  // float4 loads need every 4-float group inside one row (K or N a multiple of 4) and a
  // 16-byte aligned start (cudaMalloc gives 256-byte alignment; an offset pointer may not).
  const bool vector_a = K % 4 == 0 && reinterpret_cast<std::uintptr_t>(A) % 16 == 0;
  const bool vector_b = N % 4 == 0 && reinterpret_cast<std::uintptr_t>(B) % 16 == 0;
  register_tiled_matmul_kernel<<<grid, kRtThreads>>>(A, B, C, M, N, K, vector_a, vector_b);
  CUDA_CHECK_LAUNCH();
}
