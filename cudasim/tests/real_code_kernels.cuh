// Kernels and launches in a header, as real projects write them: test_real_code.cu includes
// this file, and on the simulator the rewrite must see into it (an `extern __shared__` array,
// a launch, a kernel with barriers). Valid CUDA: nvcc compiles it as part of the .cu.
#pragma once

#include <cuda_runtime.h>

#include "real_code_launch.h"

// Stops a thread whose index is outside the data: a `return` hidden in a macro, used by a
// kernel with barriers in test_real_code.cu.
#define REAL_CODE_RETURN_UNLESS(condition) \
  do {                                     \
    if (!(condition)) return;              \
  } while (0)

namespace real_code {

/// Dynamic shared memory declared at namespace scope in a header.
extern __shared__ int block_scratch[];

/// Reverses each block's slice of `data` in place through dynamic shared memory (one int per
/// thread), with a barrier between loading and storing.
template <class T>
__global__ void reverse_blocks(T* data, int n) {
  extern __shared__ unsigned char reverse_buffer[];
  T* buffer = reinterpret_cast<T*>(reverse_buffer);
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) buffer[threadIdx.x] = data[i];
  __syncthreads();
  const int last = min(static_cast<int>(blockDim.x), n - static_cast<int>(blockIdx.x * blockDim.x)) - 1;
  if (i < n) data[i] = buffer[last - threadIdx.x];
}

/// Each block writes the sum of its threads' indices, through the namespace-scope array.
__global__ void block_index_sums(int* out) {
  block_scratch[threadIdx.x] = threadIdx.x;
  __syncthreads();
  if (threadIdx.x == 0) {
    int sum = 0;
    for (unsigned t = 0; t < blockDim.x; ++t) sum += block_scratch[t];
    out[blockIdx.x] = sum;
  }
}

/// Launches reverse_blocks from the header: `T` is deduced from the pointer.
template <class T>
void reverse_each_block(T* data, int n, int threads) {
  const int blocks = (n + threads - 1) / threads;
  reverse_blocks<<<blocks, threads, threads * sizeof(T)>>>(data, n);
}

inline void sum_block_indices(int* out, int blocks, int threads) {
  block_index_sums<<<blocks, threads, threads * sizeof(int)>>>(out);
}

}  // namespace real_code
