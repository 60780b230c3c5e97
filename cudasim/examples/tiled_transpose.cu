// tiled_transpose.cu: transposes a 1000 x 700 matrix with a shared-memory tiled kernel.
//
// Each 32x8 block copies a 32x32 tile into shared memory with coalesced reads, waits at
// __syncthreads() until the whole tile is there, and writes it out transposed, again with
// coalesced writes. The tile has 33 columns so that reading a column touches 32 different
// shared-memory banks. The result is checked against a CPU transpose.
//
// Run: ./course run cudasim/examples/tiled_transpose.cu   (prints "... OK" or the first mismatch)
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

#include "cuda_check.hpp"

constexpr int kTile = 32;
constexpr int kBlockRows = 8;

__global__ void transpose(const float* in, float* out, int width, int height) {
  __shared__ float tile[kTile][kTile + 1];
  int x = blockIdx.x * kTile + threadIdx.x;
  int y = blockIdx.y * kTile + threadIdx.y;
  for (int j = 0; j < kTile; j += kBlockRows)
    if (x < width && y + j < height) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
  __syncthreads();  // the whole tile must be loaded before anyone reads a column of it
  x = blockIdx.y * kTile + threadIdx.x;
  y = blockIdx.x * kTile + threadIdx.y;
  for (int j = 0; j < kTile; j += kBlockRows)
    if (x < height && y + j < width) out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}

int main() {
  const int width = 1000, height = 700;
  const size_t bytes = static_cast<size_t>(width) * height * sizeof(float);
  std::vector<float> in(static_cast<size_t>(width) * height), out(in.size());
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i % 9973);

  float *d_in = nullptr, *d_out = nullptr;
  CUDA_CHECK(cudaMalloc(&d_in, bytes));
  CUDA_CHECK(cudaMalloc(&d_out, bytes));
  CUDA_CHECK(cudaMemcpy(d_in, in.data(), bytes, cudaMemcpyHostToDevice));

  const dim3 block(kTile, kBlockRows);
  const dim3 grid((width + kTile - 1) / kTile, (height + kTile - 1) / kTile);
  transpose<<<grid, block>>>(d_in, d_out, width, height);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaMemcpy(out.data(), d_out, bytes, cudaMemcpyDeviceToHost));

  for (int r = 0; r < height; ++r) {
    for (int c = 0; c < width; ++c) {
      const float expected = in[static_cast<size_t>(r) * width + c];
      const float got = out[static_cast<size_t>(c) * height + r];
      if (got != expected) {
        std::printf("tiled transpose %d x %d: mismatch at out[%d][%d]: %g, expected %g\n", width,
                    height, c, r, got, expected);
        return 1;
      }
    }
  }
  std::printf("tiled transpose %d x %d: OK\n", width, height);
  CUDA_CHECK(cudaFree(d_in));
  CUDA_CHECK(cudaFree(d_out));
  return 0;
}
