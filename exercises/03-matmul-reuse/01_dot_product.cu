// Exercise 03/01: dot_product, sum of x[i] * y[i] over two long vectors.
//
// What it teaches: a reduction, the pattern behind every sum, norm, softmax denominator and
// loss. Thousands of threads each hold a partial sum; combining them takes three levels:
//   1. inside a block, through shared memory: halve the number of active threads each step,
//      with a __syncthreads() between steps, until one warp's worth (32 sums) is left;
//   2. inside that warp, with shuffles: __shfl_down_sync moves a register from lane i + d to
//      lane i without shared memory or block barriers;
//   3. across blocks: blocks cannot wait for each other inside a kernel, so each adds its sum
//      to the result with one atomicAdd (the result is zeroed first).
//
// Run its tests:   ./course test 03/dot_product
//
// Napkin math (the lesson's first number): per element 2 loads (8 bytes in fp32, 4 in bf16)
// for 2 FLOPs (a multiply and an add): 0.25 FLOP/B in fp32, 0.5 in bf16. Nothing is reused,
// so the kernel runs at memory speed: n = 2^26 floats is 512 MiB, ~0.12 ms at ~4.3 TB/s on
// an H200, while the 134 MFLOP would take ~2 us at its fp32 peak.

#include "cuda_check.hpp"
#include "dot_product.hpp"

// ---------------------------------------------------------------------------------------
// kernel

__global__ void dot_product_kernel(const float* x, const float* y, float* result, int n) {
  __shared__ float partial[kDotThreads];
  const int tid = threadIdx.x;
  // BEGIN YOUR CODE
  // TODO(student): add this block's share of x·y into *result: a sum per thread, a shared-memory
  //                tree down to one warp, warp shuffles, one atomicAdd per block (about 20 lines)
  // END YOUR CODE
}

// ---------------------------------------------------------------------------------------
// launcher

void launch_dot_product(const float* x, const float* y, float* result, int n) {
  // BEGIN YOUR CODE
  // TODO(student): zero *result (the blocks add into it; this also answers n == 0), return
  //                when n == 0, and choose the number of blocks: enough for about one element
  //                per thread, at most kDotMaxBlocks (about 5 lines)
  const int blocks = 0;  // placeholder: a 0-block grid is rejected at launch
  // END YOUR CODE
  dot_product_kernel<<<blocks, kDotThreads>>>(x, y, result, n);
  CUDA_CHECK_LAUNCH();
}
