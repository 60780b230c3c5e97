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
  // 1. This thread's own sum, over a grid-stride loop: with at most kDotMaxBlocks blocks the
  //    grid does not depend on n, and consecutive threads read consecutive elements.
  float sum = 0.0f;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + tid; i < n; i += stride) {
    sum += x[i] * y[i];
  }
  partial[tid] = sum;
  __syncthreads();

  // 2. Tree reduction in shared memory down to 32 values: each step halves the active
  //    threads; the barrier makes one step's writes visible before the next step reads them.
  for (int active = blockDim.x / 2; active >= 32; active /= 2) {
    if (tid < active) partial[tid] += partial[tid + active];
    __syncthreads();
  }

  // 3. The first warp finishes with shuffles (no barriers inside a warp), and its lane 0
  //    adds the block's sum to the result: one atomic per block, not per thread.
  if (tid < 32) {
    float value = partial[tid];
    for (int offset = 16; offset > 0; offset /= 2) {
      value += __shfl_down_sync(0xffffffffu, value, offset);
    }
    if (tid == 0) atomicAdd(result, value);
  }
  // END YOUR CODE
}

// ---------------------------------------------------------------------------------------
// launcher

void launch_dot_product(const float* x, const float* y, float* result, int n) {
  // BEGIN YOUR CODE
  // The blocks add into *result, so it must start at 0; this also answers n == 0. The memset
  // is queued on the same stream as the kernel, so it is done before the kernel starts.
  CUDA_CHECK(cudaMemsetAsync(result, 0, sizeof(float)));
  if (n == 0) return;
  // Enough blocks to give every thread about one element, capped so that large vectors are
  // covered by the grid-stride loop (fewer atomics, and each thread sums several elements).
  const long long wanted = (static_cast<long long>(n) - 1) / kDotThreads + 1;
  const int blocks = static_cast<int>(wanted < kDotMaxBlocks ? wanted : kDotMaxBlocks);
  // END YOUR CODE
  dot_product_kernel<<<blocks, kDotThreads>>>(x, y, result, n);
  CUDA_CHECK_LAUNCH();
}
