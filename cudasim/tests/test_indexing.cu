// Built-in variables (threadIdx, blockIdx, blockDim, gridDim, warpSize) and the usual 1-D,
// 2-D and 3-D global index computations. Valid CUDA: the same file runs on a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <vector>

namespace {

#define ASSERT_CUDA(expr) ASSERT_EQ((expr), cudaSuccess)

/// Copies `count` ints from the device into a vector.
std::vector<int> download(const int* device, size_t count) {
  std::vector<int> host(count);
  EXPECT_EQ(cudaMemcpy(host.data(), device, count * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  return host;
}

__global__ void record_builtins(int* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[6 * i + 0] = threadIdx.x;
  out[6 * i + 1] = blockIdx.x;
  out[6 * i + 2] = blockDim.x;
  out[6 * i + 3] = gridDim.x;
  out[6 * i + 4] = warpSize;
  out[6 * i + 5] = blockDim.y * blockDim.z * gridDim.y * gridDim.z;
}

TEST(Indexing, BuiltinVariablesDescribeTheLaunch) {
  const int blocks = 3, threads = 5, n = blocks * threads;
  int* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, 6 * n * sizeof(int)));
  record_builtins<<<blocks, threads>>>(d);
  ASSERT_CUDA(cudaGetLastError());
  const std::vector<int> h = download(d, 6 * n);
  for (int b = 0; b < blocks; ++b) {
    for (int t = 0; t < threads; ++t) {
      const int i = b * threads + t;
      EXPECT_EQ(h[6 * i + 0], t);
      EXPECT_EQ(h[6 * i + 1], b);
      EXPECT_EQ(h[6 * i + 2], threads);
      EXPECT_EQ(h[6 * i + 3], blocks);
      EXPECT_EQ(h[6 * i + 4], 32);
      EXPECT_EQ(h[6 * i + 5], 1);
    }
  }
  ASSERT_CUDA(cudaFree(d));
}

__global__ void fill_1d(int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = i * 3 + 1;
}

TEST(Indexing, OneDimensionalGridCoversEveryElementWithBoundsCheck) {
  const int n = 1000;  // not a multiple of the block size
  int* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, n * sizeof(int)));
  fill_1d<<<(n + 127) / 128, 128>>>(d, n);
  ASSERT_CUDA(cudaGetLastError());
  const std::vector<int> h = download(d, n);
  for (int i = 0; i < n; ++i) ASSERT_EQ(h[i], i * 3 + 1) << "at " << i;
  ASSERT_CUDA(cudaFree(d));
}

__global__ void grid_stride_fill(int* out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) out[i] += i;
}

TEST(Indexing, GridStrideLoopVisitsEachElementOnce) {
  const int n = 10007;
  int* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, n * sizeof(int)));
  ASSERT_CUDA(cudaMemset(d, 0, n * sizeof(int)));
  grid_stride_fill<<<4, 64>>>(d, n);
  ASSERT_CUDA(cudaGetLastError());
  const std::vector<int> h = download(d, n);
  for (int i = 0; i < n; ++i) ASSERT_EQ(h[i], i) << "at " << i;
  ASSERT_CUDA(cudaFree(d));
}

__global__ void fill_2d(int* out, int width, int height) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (col < width && row < height) out[row * width + col] = row * 1000 + col;
}

TEST(Indexing, TwoDimensionalGridMapsXToColumnsAndYToRows) {
  const int width = 70, height = 45;
  int* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, width * height * sizeof(int)));
  const dim3 block(16, 8);
  const dim3 grid((width + block.x - 1) / block.x, (height + block.y - 1) / block.y);
  fill_2d<<<grid, block>>>(d, width, height);
  ASSERT_CUDA(cudaGetLastError());
  const std::vector<int> h = download(d, width * height);
  for (int r = 0; r < height; ++r)
    for (int c = 0; c < width; ++c) ASSERT_EQ(h[r * width + c], r * 1000 + c) << "at " << r << "," << c;
  ASSERT_CUDA(cudaFree(d));
}

__global__ void fill_3d(int* out, int nx, int ny, int nz) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  const int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x < nx && y < ny && z < nz) out[(z * ny + y) * nx + x] = x + 100 * y + 10000 * z;
}

TEST(Indexing, ThreeDimensionalGridCoversAVolume) {
  const int nx = 9, ny = 7, nz = 5;
  int* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, nx * ny * nz * sizeof(int)));
  const dim3 block(4, 4, 2);
  const dim3 grid((nx + 3) / 4, (ny + 3) / 4, (nz + 1) / 2);
  fill_3d<<<grid, block>>>(d, nx, ny, nz);
  ASSERT_CUDA(cudaGetLastError());
  const std::vector<int> h = download(d, nx * ny * nz);
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x) ASSERT_EQ(h[(z * ny + y) * nx + x], x + 100 * y + 10000 * z);
  ASSERT_CUDA(cudaFree(d));
}

__global__ void record_linear_thread(int* out) {
  const int block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const int threads = blockDim.x * blockDim.y * blockDim.z;
  const int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  out[block * threads + t] = (threadIdx.z << 16) | (threadIdx.y << 8) | threadIdx.x;
}

TEST(Indexing, ThreadIndexXVariesFastestThenYThenZ) {
  const dim3 block(3, 4, 2), grid(2, 1, 2);
  const int threads = 3 * 4 * 2, total = threads * 4;
  int* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, total * sizeof(int)));
  ASSERT_CUDA(cudaMemset(d, 0xff, total * sizeof(int)));
  record_linear_thread<<<grid, block>>>(d);
  ASSERT_CUDA(cudaGetLastError());
  const std::vector<int> h = download(d, total);
  for (int b = 0; b < 4; ++b)
    for (int t = 0; t < threads; ++t) {
      const int x = t % 3, y = (t / 3) % 4, z = t / 12;
      ASSERT_EQ(h[b * threads + t], (z << 16) | (y << 8) | x) << "block " << b << " thread " << t;
    }
  ASSERT_CUDA(cudaFree(d));
}

}  // namespace
