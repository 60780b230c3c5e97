// Exercise 03/05: wmma_matmul, C = A * B on tensor cores (bf16 in, fp32 accumulate).
//
// What it teaches: where a GPU's matmul speed really comes from. The FP32 lanes of an H200
// do ~67 TFLOP/s; its tensor cores do ~989 TFLOP/s of dense bf16, 15 times more, by
// multiplying small matrix tiles in one instruction. The warp matrix API (nvcuda::wmma)
// exposes them per warp: the 32 threads of a warp together hold a "fragment" (a 16 x 16
// tile of A, of B, or of the fp32 accumulator), load it with load_matrix_sync, multiply with
// mma_sync (16 x 16 x 16 = 4096 multiply-adds in one call) and store it with
// store_matrix_sync. Every thread of the warp must make each call, with the same arguments.
//
// The structure is the tiled kernel's, one level up: a block of 4 warps stages a 64 x 32
// slice of A and a 32 x 64 slice of B in shared memory (zeros outside the matrices, so any
// size works), each warp computes a 32 x 32 tile of C as 2 x 2 fragments, and the block
// writes C through shared memory so it can skip the elements outside C.
//
// Run its tests:   ./course test 03/wmma_matmul
// (On the simulator the fragments are computed on the CPU: same results, no speed.)
//
// Napkin math: in bf16 an operand element is 2 bytes, so the 4096^3 matmul's compulsory
// traffic is 3 * 4096^2 * 2 B = 100.7 MB for 137 GFLOP: 1365 FLOP/B, far right of the H200's
// ridge point (~206 FLOP/B): compute-bound, if the kernel reuses enough. This simple one
// loads each element of A and B 64 times (once per block of the other dimension); cuBLAS
// uses bigger tiles, asynchronous copies and the Hopper-only wgmma instructions.

#include <mma.h>

#include "cuda_check.hpp"
#include "wmma_matmul.hpp"

#include <cmath>

using namespace nvcuda;

// ---------------------------------------------------------------------------------------
// kernel

__global__ void __launch_bounds__(kWmmaThreads)
wmma_matmul_kernel(const __nv_bfloat16* A, const __nv_bfloat16* B, float* C, int M, int N, int K) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  __trap();  // bf16 tensor cores need compute capability 8.0 (A100) or later
#else
  // load_matrix_sync / store_matrix_sync want 32-byte aligned tiles.
  __align__(32) __shared__ __nv_bfloat16 tile_a[kWmmaBM][kWmmaBK];
  __align__(32) __shared__ __nv_bfloat16 tile_b[kWmmaBK][kWmmaBN];
  __align__(32) __shared__ float tile_c[kWmmaBM][kWmmaBN];
  const int tid = threadIdx.x;
  const int warp = tid / 32;
  const int warp_row = warp / 2, warp_col = warp % 2;  // 2 x 2 warps, 32 x 32 of C each
  const int block_row = blockIdx.y * kWmmaBM, block_col = blockIdx.x * kWmmaBN;
  const __nv_bfloat16 zero = __float2bfloat16(0.0f);

  // BEGIN YOUR CODE
  // TODO(student): declare this warp's 2 x 2 accumulator fragments
  //                (wmma::fragment<wmma::accumulator, 16, 16, 16, float>) and zero them with
  //                wmma::fill_fragment (about 3 lines)
  // END YOUR CODE

  for (int k0 = 0; k0 < K; k0 += kWmmaBK) {
    // Stage the slices (consecutive threads read consecutive elements: coalesced).
    for (int e = tid; e < kWmmaBM * kWmmaBK; e += kWmmaThreads) {
      const int r = e / kWmmaBK, c = e % kWmmaBK;
      const int gr = block_row + r, gc = k0 + c;
      tile_a[r][c] = (gr < M && gc < K) ? A[static_cast<long long>(gr) * K + gc] : zero;
    }
    for (int e = tid; e < kWmmaBK * kWmmaBN; e += kWmmaThreads) {
      const int r = e / kWmmaBN, c = e % kWmmaBN;
      const int gr = k0 + r, gc = block_col + c;
      tile_b[r][c] = (gr < K && gc < N) ? B[static_cast<long long>(gr) * N + gc] : zero;
    }
    __syncthreads();  // the slices are complete before any warp loads fragments from them

    // BEGIN YOUR CODE
    // TODO(student): this warp's 2 x 2 fragments of tile_a x tile_b (both 16-wide k steps of the
    //                tiles) added into acc with wmma (about 8 lines)
    // END YOUR CODE
    __syncthreads();  // every warp is done with the slices before the next step overwrites them
  }

  // BEGIN YOUR CODE
  // TODO(student): store each accumulator fragment to its 16 x 16 place in tile_c with
  //                wmma::store_matrix_sync(..., kWmmaBN, wmma::mem_row_major) (about 4 lines)
  // placeholder: until the fragments are stored, C reads as NaN
  for (int e = tid; e < kWmmaBM * kWmmaBN; e += kWmmaThreads) tile_c[e / kWmmaBN][e % kWmmaBN] = nanf("");
  // END YOUR CODE
  __syncthreads();  // the whole 64 x 64 tile is in shared memory before it is copied out

  // Copy the tile to C, skipping what lies outside C (coalesced along rows).
  for (int e = tid; e < kWmmaBM * kWmmaBN; e += kWmmaThreads) {
    const int r = e / kWmmaBN, c = e % kWmmaBN;
    const int gr = block_row + r, gc = block_col + c;
    if (gr < M && gc < N) C[static_cast<long long>(gr) * N + gc] = tile_c[r][c];
  }
#endif
}

// ---------------------------------------------------------------------------------------
// launcher

void launch_wmma_matmul(const __nv_bfloat16* A, const __nv_bfloat16* B, float* C, int M, int N, int K) {
  const dim3 grid((N - 1) / kWmmaBN + 1, (M - 1) / kWmmaBM + 1);
  wmma_matmul_kernel<<<grid, kWmmaThreads>>>(A, B, C, M, N, K);
  CUDA_CHECK_LAUNCH();
}
