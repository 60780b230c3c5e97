// warp_reduce.cu: sums 1<<20 floats with warp shuffles.
//
// Each thread accumulates a grid-stride slice, each warp adds its 32 partial sums with
// __shfl_down_sync (no shared memory, no __syncthreads), the warps of a block combine through
// a small shared array, and one atomicAdd per block produces the total. The inputs are small
// integers, so every partial sum is exact in float and the result does not depend on the order
// in which blocks finish: the program prints the same on any GPU and on the simulator.
//
// Run: ./course run cudasim/examples/warp_reduce.cu
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

#include "cuda_check.hpp"

__device__ float warp_sum(float v) {
  for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;  // the warp's total, in lane 0
}

__global__ void reduce(const float* x, int n, float* total) {
  __shared__ float warp_totals[32];
  float sum = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) sum += x[i];

  const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  sum = warp_sum(sum);
  if (lane == 0) warp_totals[warp] = sum;
  __syncthreads();

  if (warp == 0) {  // the first warp adds the per-warp totals
    const int warps = blockDim.x / warpSize;
    sum = lane < warps ? warp_totals[lane] : 0.0f;
    sum = warp_sum(sum);
    if (lane == 0) atomicAdd(total, sum);
  }
}

int main() {
  const int n = 1 << 20;
  std::vector<float> x(n);
  double expected = 0;
  for (int i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i % 7);
    expected += x[i];
  }

  float *d_x = nullptr, *d_total = nullptr;
  CUDA_CHECK(cudaMalloc(&d_x, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d_total, sizeof(float)));
  CUDA_CHECK(cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(d_total, 0, sizeof(float)));

  reduce<<<256, 256>>>(d_x, n, d_total);
  CUDA_CHECK_LAUNCH();
  float total = 0.0f;
  CUDA_CHECK(cudaMemcpy(&total, d_total, sizeof(float), cudaMemcpyDeviceToHost));

  const bool ok = static_cast<double>(total) == expected;
  std::printf("warp-shuffle reduction of %d floats: sum = %.0f (expected %.0f): %s\n", n, total,
              expected, ok ? "OK" : "MISMATCH");
  CUDA_CHECK(cudaFree(d_x));
  CUDA_CHECK(cudaFree(d_total));
  return ok ? 0 : 1;
}
