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
    // TODO(student): stage this k-slice of A (transposed: tile_a[k][row]) and of B in shared
    //                memory, float4 loads where vector_a / vector_b allow, 0 outside the matrices;
    //                add the slice's outer products to acc (about 35 lines)
    // END YOUR CODE
  }
  // BEGIN YOUR CODE
  // TODO(student): write acc[i][j] to row block_row + thread_row * kRtTM + i and column
  //                block_col + thread_col * kRtTN + j of C, skipping what lies outside C
  //                (about 8 lines)
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
