// Host code with OpenMP, as `./course run FILE.cu -Xcompiler -fopenmp` builds it: one OpenMP
// thread per device, each selecting its device (cudaSetDevice is per host thread) and filling
// its part of an array there. Prints "2 OpenMP threads filled their parts on devices 0 and 1: OK".
#include <omp.h>

#include <cstdio>
#include <vector>

__global__ void fill_with_device(int* part, int n, int device) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) part[i] = 1000 * device + i;
}

int main() {
  const int threads = 2, n = 256;
  std::vector<int> result(threads * n, -1);
  int failures = 0;
#pragma omp parallel num_threads(threads) reduction(+ : failures)
  {
    const int me = omp_get_thread_num();
    int* part = nullptr;
    failures += cudaSetDevice(me) != cudaSuccess;
    failures += cudaMalloc(&part, n * sizeof(int)) != cudaSuccess;
    fill_with_device<<<(n + 127) / 128, 128>>>(part, n, me);
    failures += cudaMemcpy(result.data() + me * n, part, n * sizeof(int), cudaMemcpyDeviceToHost) != cudaSuccess;
    int device = -1;
    cudaPointerAttributes where{};
    failures += cudaPointerGetAttributes(&where, part) != cudaSuccess || where.device != me;
    failures += cudaGetDevice(&device) != cudaSuccess || device != me;
    cudaFree(part);
  }
  for (int t = 0; t < threads; ++t)
    for (int i = 0; i < n; ++i) failures += result[t * n + i] != 1000 * t + i;
  std::printf("%d OpenMP threads filled their parts on devices 0 and 1: %s\n", threads, failures ? "FAILED" : "OK");
  return failures ? 1 : 0;
}
