// hello_threads: who runs a kernel? Then: the same vector add on the CPU and on the GPU.
//
// Run:   ./course run lessons/00-gpu-vs-cpu/hello_threads.cu
//
// Part 1 launches 2 blocks of 4 threads; each thread prints its coordinates. The order of
// the lines is not fixed: threads of different blocks run independently.
// Part 2 adds two vectors of 2^24 floats (2^22 on the simulator) with a CPU loop and with a kernel, timed with
// std::chrono and with CUDA events. Napkin math: 3 x 4 bytes x 2^24 = 201 MB of traffic;
// an H200 (~4.3 TB/s) needs ~50 us, one CPU core (~10-20 GB/s) ~10-20 ms.
// On the simulator the "GPU" time is also CPU time (worker threads imitating the GPU), so
// the two numbers compare two CPU strategies, not a CPU with a GPU.

#include <cuda_runtime.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <vector>

#include "cuda_check.hpp"

// ---------------------------------------------------------------------------------------
// kernels

__global__ void hello_kernel() {
  // Built-in variables: each thread reads its own block and thread coordinates.
  printf("hello from block %u, thread %u (global index %u)\n", blockIdx.x, threadIdx.x,
         blockIdx.x * blockDim.x + threadIdx.x);
}

__global__ void vector_add_kernel(const float* a, const float* b, float* c, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];  // the last block may hang over the end
}

// ---------------------------------------------------------------------------------------
// CPU reference

void vector_add_cpu(const float* a, const float* b, float* c, int n) {
  for (int i = 0; i < n; ++i) c[i] = a[i] + b[i];  // one core, one element after another
}

// ---------------------------------------------------------------------------------------

int run() {
  std::printf("Part 1: a 2 x 4 launch (2 blocks of 4 threads)\n");
  hello_kernel<<<2, 4>>>();
  CUDA_CHECK_LAUNCH();
  // Device printf output is flushed when the host waits for the kernel.
  CUDA_CHECK(cudaDeviceSynchronize());

#ifdef CUDASIM
  const int log2_n = 22;  // the simulator is a CPU imitating a GPU: a smaller job keeps it quick
#else
  const int log2_n = 24;  // 201 MB of traffic: big enough that launch overhead does not matter
#endif
  const int n = 1 << log2_n;
  std::printf("\nPart 2: c = a + b for n = 2^%d floats\n", log2_n);
  const size_t bytes = size_t(n) * sizeof(float);
  std::vector<float> a(n), b(n), c_cpu(n), c_gpu(n);
  for (int i = 0; i < n; ++i) {
    a[i] = std::sin(float(i));
    b[i] = std::cos(float(i));
  }

  // CPU: wall-clock time of the loop.
  const auto t0 = std::chrono::steady_clock::now();
  vector_add_cpu(a.data(), b.data(), c_cpu.data(), n);
  const auto t1 = std::chrono::steady_clock::now();
  const double cpu_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();

  // GPU: the inputs must first be copied into the card's memory.
  float *d_a = nullptr, *d_b = nullptr, *d_c = nullptr;
  CUDA_CHECK(cudaMalloc(&d_a, bytes));
  CUDA_CHECK(cudaMalloc(&d_b, bytes));
  CUDA_CHECK(cudaMalloc(&d_c, bytes));
  cudaEvent_t copy_start, kernel_start, kernel_stop, copy_stop;
  CUDA_CHECK(cudaEventCreate(&copy_start));
  CUDA_CHECK(cudaEventCreate(&kernel_start));
  CUDA_CHECK(cudaEventCreate(&kernel_stop));
  CUDA_CHECK(cudaEventCreate(&copy_stop));

  const int threads = 256;
  const int blocks = (n + threads - 1) / threads;
  // A first launch pays one-time start-up costs; warm up so the timed launch is typical
  // (on zeroed inputs: reading memory nobody wrote is a bug even when nobody looks).
  CUDA_CHECK(cudaMemset(d_a, 0, bytes));
  CUDA_CHECK(cudaMemset(d_b, 0, bytes));
  vector_add_kernel<<<blocks, threads>>>(d_a, d_b, d_c, n);
  CUDA_CHECK_LAUNCH();

  CUDA_CHECK(cudaEventRecord(copy_start));
  CUDA_CHECK(cudaMemcpy(d_a, a.data(), bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_b, b.data(), bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaEventRecord(kernel_start));
  vector_add_kernel<<<blocks, threads>>>(d_a, d_b, d_c, n);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaEventRecord(kernel_stop));
  CUDA_CHECK(cudaMemcpy(c_gpu.data(), d_c, bytes, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaEventRecord(copy_stop));
  CUDA_CHECK(cudaEventSynchronize(copy_stop));

  float kernel_ms = 0.0f, total_ms = 0.0f;
  CUDA_CHECK(cudaEventElapsedTime(&kernel_ms, kernel_start, kernel_stop));
  CUDA_CHECK(cudaEventElapsedTime(&total_ms, copy_start, copy_stop));

  int mismatches = 0;
  for (int i = 0; i < n; ++i) mismatches += (c_gpu[i] != c_cpu[i]);

  const double traffic = 3.0 * double(bytes);  // read a, read b, write c
  std::printf("  CPU loop           : %8.3f ms  (%6.1f GB/s)\n", cpu_ms, traffic / cpu_ms / 1e6);
  std::printf("  GPU kernel         : %8.3f ms  (%6.1f GB/s)\n", kernel_ms,
              traffic / kernel_ms / 1e6);
  std::printf("  GPU with copies    : %8.3f ms  (kernel + 2 copies in + 1 copy out)\n", total_ms);
  std::printf("  results that differ: %d of %d\n", mismatches, n);
  std::printf("\n  The kernel alone wins by a wide margin on a GPU; with the copies over PCIe it\n"
              "  may not: one addition per 12 bytes is too little work to pay for the trip.\n"
              "  Keep data on the device and do many operations there.\n");
#ifdef CUDASIM
  std::printf("\n  (simulator: the GPU times above are CPU times too; compare them only with\n"
              "  each other, never with a real GPU)\n");
#endif

  CUDA_CHECK(cudaEventDestroy(copy_start));
  CUDA_CHECK(cudaEventDestroy(kernel_start));
  CUDA_CHECK(cudaEventDestroy(kernel_stop));
  CUDA_CHECK(cudaEventDestroy(copy_stop));
  CUDA_CHECK(cudaFree(d_a));
  CUDA_CHECK(cudaFree(d_b));
  CUDA_CHECK(cudaFree(d_c));
  return mismatches == 0 ? 0 : 1;
}

int main() {
  try {
    return run();
  } catch (const std::exception& error) {  // CUDA_CHECK throws course::CudaError
    std::fprintf(stderr, "hello_threads: %s\n", error.what());
    return 1;
  }
}
