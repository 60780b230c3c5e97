// Exercise 00/04: error_checking, a launcher that reports a failed launch.
//
// What it teaches: why every launch must be checked. kernel<<<grid, block>>>(...) is a
// statement with no return value; if the runtime rejects it (a block of 1025 threads, a
// block of 0 threads, too much shared memory) the kernel silently never runs and the
// program carries on with whatever was in memory. The error is parked in a per-thread slot:
// cudaGetLastError() returns it and resets the slot, cudaPeekAtLastError() returns it
// without resetting. Errors that happen while the kernel runs (a bad address) appear later,
// at the next call that waits for the GPU, e.g. cudaDeviceSynchronize() or cudaMemcpy.
// Elsewhere the course wraps this in CUDA_CHECK_LAUNCH(); here you write it by hand and
// return the status instead of throwing.
//
// Run its tests:   ./course test 00/error_checking
//
// Napkin math: x is read and written once, 8 bytes per element; the checks cost nothing
// next to that, except cudaDeviceSynchronize(), which waits for the GPU (a few us). Real
// code checks the launch every time and synchronizes only where it needs the result.

#include "cuda_check.hpp"
#include "error_checking.hpp"

// ---------------------------------------------------------------------------------------
// kernel

__global__ void scale_kernel(float* x, int n, float factor) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= factor;
}

// ---------------------------------------------------------------------------------------
// launcher

cudaError_t launch_scale_checked(float* x, int n, float factor, int threads_per_block) {
  // Enough blocks to cover n. A block size the hardware rejects (<= 0 here) still gets one
  // block, so the launch happens and the runtime, not this line, reports the problem.
  const int blocks = threads_per_block > 0 ? (n - 1) / threads_per_block + 1 : 1;
  scale_kernel<<<blocks, threads_per_block>>>(x, n, factor);
  // BEGIN YOUR CODE
  // TODO(student): report the launch as error_checking.hpp says: a rejected launch's error
  //                (consumed), else the result of running the kernel (about 5 lines)
  return cudaErrorUnknown;  // placeholder: replace with the real checks
  // END YOUR CODE
}
