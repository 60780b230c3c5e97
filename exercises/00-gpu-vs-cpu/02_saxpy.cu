// Exercise 00/02: saxpy, y = alpha * x + y with a grid-stride loop.
//
// What it teaches: decoupling the grid from the data. In exercise 01 the grid had one
// thread per element; here the caller picks the grid, and it may be far smaller than n
// (3 blocks of 64 threads for 100003 elements) or larger. Each thread starts at its global
// index and jumps by the number of threads in the whole grid until it passes n. One kernel
// then works for any grid; a grid sized to the machine (a few blocks per SM) instead of to
// the data is a common choice for memory-bound kernels.
// SAXPY ("single-precision a times x plus y") is the level-1 BLAS routine cublasSaxpy.
//
// Run its tests:   ./course test 00/saxpy
//
// Napkin math: per element 2 floats read, 1 written (12 bytes) for 2 FLOP (one FMA):
// 0.17 FLOP/byte. An H200 does ~67 TFLOP/s fp32 but moves ~4.3 TB/s: it could do ~15 FLOP
// per byte it moves, so saxpy leaves the arithmetic units idle 99% of the time.

#include "cuda_check.hpp"
#include "saxpy.hpp"

// ---------------------------------------------------------------------------------------
// kernel

__global__ void saxpy_kernel(int n, float alpha, const float* x, float* y) {
  // BEGIN YOUR CODE
  // TODO(student): loop i from this thread's global index up to n in steps of the whole
  //                grid's thread count, updating y[i] (about 5 lines)
  // END YOUR CODE
}

// ---------------------------------------------------------------------------------------
// launcher

void launch_saxpy(int n, float alpha, const float* x, float* y, int blocks,
                  int threads_per_block) {
  // The grid is the caller's choice, on purpose: the kernel must be right for any of them.
  saxpy_kernel<<<blocks, threads_per_block>>>(n, alpha, x, y);
  CUDA_CHECK_LAUNCH();
}
