// Exercise 00/01: vector_add, c = a + b with one GPU thread per element.
//
// What it teaches: the smallest complete CUDA kernel. Each thread computes its global index
// from blockIdx, blockDim and threadIdx, and handles that one element. The grid is rounded
// up to whole blocks, so the last block has threads with no element: the bounds guard
// (i < n) keeps them from writing past the end of c.
//
// Run its tests:   ./course test 00/vector_add
//
// Napkin math: per element the kernel reads 2 floats and writes 1 (12 bytes) for 1 FLOP, so
// it is limited by memory bandwidth, never by arithmetic. For n = 2^20 that is 12.6 MB; an
// H200 moves ~4.3 TB/s, so ~3 us, about the same as the ~2.5 us it costs to launch a kernel
// at all. A CPU core streams maybe 10-20 GB/s: ~1 ms.

#include "cuda_check.hpp"
#include "vector_add.hpp"

// ---------------------------------------------------------------------------------------
// kernel

__global__ void vector_add_kernel(const float* a, const float* b, float* c, int n) {
  // BEGIN YOUR CODE
  // TODO(student): compute this thread's global index and, if it is inside [0, n), write
  //                c at that index (about 4 lines)
  // END YOUR CODE
}

// ---------------------------------------------------------------------------------------
// launcher

void launch_vector_add(const float* a, const float* b, float* c, int n) {
  // 256 threads = 8 warps per block: a common default, big enough to keep an SM busy and a
  // divisor of every SM's thread limit.
  const int threads_per_block = 256;
  // BEGIN YOUR CODE
  // TODO(student): return early when there is nothing to do, and compute how many blocks
  //                cover n elements (about 2 lines)
  const int blocks = 0;  // placeholder: a 0-block grid is rejected at launch
  // END YOUR CODE
  vector_add_kernel<<<blocks, threads_per_block>>>(a, b, c, n);
  // A launch returns nothing; ask the runtime whether it accepted the grid.
  CUDA_CHECK_LAUNCH();
}
