// histogram.cu: a 256-bin histogram of 1<<20 bytes with atomicAdd from many blocks.
//
// Each block counts into its own shared-memory histogram (fast atomics on shared memory, no
// contention between blocks), then adds its 256 counts to the global histogram with one
// atomicAdd per bin. Integer atomics are exact, so the counts are the same however the blocks
// interleave; the program checks them against a CPU count and checks the total.
//
// Run: ./course run cudasim/examples/histogram.cu
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

#include "cuda_check.hpp"

constexpr int kBins = 256;

__global__ void histogram(const unsigned char* data, int n, unsigned* bins) {
  __shared__ unsigned local[kBins];
  for (int b = threadIdx.x; b < kBins; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    atomicAdd(&local[data[i]], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < kBins; b += blockDim.x)
    if (local[b] != 0) atomicAdd(&bins[b], local[b]);
}

int main() {
  const int n = 1 << 20;
  std::vector<unsigned char> data(n);
  unsigned state = 2024;
  for (int i = 0; i < n; ++i) {  // a fixed pseudo-random sequence
    state = state * 1664525u + 1013904223u;
    data[i] = static_cast<unsigned char>(state >> 24);
  }
  std::vector<unsigned> expected(kBins, 0);
  for (unsigned char c : data) ++expected[c];

  unsigned char* d_data = nullptr;
  unsigned* d_bins = nullptr;
  CUDA_CHECK(cudaMalloc(&d_data, n));
  CUDA_CHECK(cudaMalloc(&d_bins, kBins * sizeof(unsigned)));
  CUDA_CHECK(cudaMemcpy(d_data, data.data(), n, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(d_bins, 0, kBins * sizeof(unsigned)));

  histogram<<<128, 256>>>(d_data, n, d_bins);
  CUDA_CHECK_LAUNCH();
  std::vector<unsigned> bins(kBins);
  CUDA_CHECK(cudaMemcpy(bins.data(), d_bins, kBins * sizeof(unsigned), cudaMemcpyDeviceToHost));

  unsigned long long total = 0;
  int wrong_bins = 0;
  for (int b = 0; b < kBins; ++b) {
    total += bins[b];
    if (bins[b] != expected[b]) ++wrong_bins;
  }
  std::printf("bins 0..3: %u %u %u %u\n", bins[0], bins[1], bins[2], bins[3]);
  const bool ok = total == static_cast<unsigned long long>(n) && wrong_bins == 0;
  std::printf("histogram of %d bytes: total = %llu (expected %d), %d bins differ from the CPU: %s\n",
              n, total, n, wrong_bins, ok ? "OK" : "MISMATCH");
  CUDA_CHECK(cudaFree(d_data));
  CUDA_CHECK(cudaFree(d_bins));
  return ok ? 0 : 1;
}
