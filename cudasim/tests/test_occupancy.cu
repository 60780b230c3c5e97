// Occupancy and function attributes: cudaOccupancyMaxActiveBlocksPerMultiprocessor,
// cudaOccupancyMaxPotentialBlockSize and cudaFuncGetAttributes agree with each other and with
// cudaFuncSetAttribute on any GPU; the exact figures of the simulator's modelled H100 (2048
// threads, 32 blocks and 228 KiB of shared memory per SM, 1 KiB of it reserved per block,
// registers assumed never to limit) are checked under #ifdef CUDASIM. Valid CUDA: the same
// file runs on a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <vector>

namespace {

#define ASSERT_CUDA(expr) ASSERT_EQ((expr), cudaSuccess)

__global__ void scale(float* data, int n, float factor) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= factor;
}

__global__ void uses_dynamic_shared(float* data, int n) {
  extern __shared__ float staged[];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  staged[threadIdx.x] = i < n ? data[i] : 0.0f;
  __syncthreads();
  if (i < n) data[i] = staged[blockDim.x - 1 - threadIdx.x];
}

__global__ void raised_limit_kernel(float* data) { data[threadIdx.x] = 0.0f; }

void not_a_kernel(float*) {}

int multiprocessors() {
  int count = 0;
  EXPECT_EQ(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  return count;
}

TEST(Occupancy, PotentialBlockSizeIsConsistentWithActiveBlocks) {
  int min_grid = 0, block = 0;
  ASSERT_CUDA(cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, scale));
  ASSERT_GT(block, 0);
  ASSERT_LE(block, 1024);
  EXPECT_EQ(block % 32, 0);
  int active = 0;
  ASSERT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&active, scale, block, 0));
  EXPECT_GE(active, 1);
  EXPECT_EQ(min_grid, active * multiprocessors());
}

TEST(Occupancy, PotentialBlockSizeRespectsTheLimit) {
  for (int limit : {1, 31, 32, 96, 127}) {
    int min_grid = 0, block = 0;
    ASSERT_CUDA(cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, scale, 0, limit));
    EXPECT_GE(block, 1) << "limit " << limit;
    EXPECT_LE(block, limit) << "limit " << limit;
    EXPECT_GT(min_grid, 0) << "limit " << limit;
  }
}

TEST(Occupancy, MoreDynamicSharedMemoryMeansFewerActiveBlocks) {
  int without = 0, with = 0;
  ASSERT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&without, uses_dynamic_shared, 128, 0));
  ASSERT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&with, uses_dynamic_shared, 128, 40 * 1024));
  EXPECT_GE(with, 1);
  EXPECT_LT(with, without);
}

TEST(FuncAttributes, ReportTheLimitsAndWhatCudaFuncSetAttributeRaised) {
  cudaFuncAttributes attributes;
  ASSERT_CUDA(cudaFuncGetAttributes(&attributes, scale));
  EXPECT_GT(attributes.maxThreadsPerBlock, 0);
  EXPECT_LE(attributes.maxThreadsPerBlock, 1024);
  EXPECT_EQ(attributes.sharedSizeBytes, 0u);  // no static __shared__ in scale
  EXPECT_EQ(attributes.maxDynamicSharedSizeBytes, 48 * 1024);
  ASSERT_CUDA(cudaFuncSetAttribute(raised_limit_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024));
  ASSERT_CUDA(cudaFuncGetAttributes(&attributes, raised_limit_kernel));
  EXPECT_EQ(attributes.maxDynamicSharedSizeBytes, 64 * 1024);
}

TEST(FuncAttributes, APointerThatIsNotAKernelIsAnInvalidResourceHandle) {
  // CUDA 13's answer, measured on an H200 (2026-11-27); older releases said cudaErrorInvalidDeviceFunction.
  cudaFuncAttributes attributes;
  EXPECT_EQ(cudaFuncGetAttributes(&attributes, reinterpret_cast<const void*>(not_a_kernel)),
            cudaErrorInvalidResourceHandle);
  cudaGetLastError();
}

TEST(FuncAttributes, CacheConfigurationsAreAcceptedAsHints) {
  // NVIDIA's samples set them (interval: cudaFuncCachePreferL1); a GPU may ignore them.
  ASSERT_CUDA(cudaFuncSetCacheConfig(scale, cudaFuncCachePreferL1));
  ASSERT_CUDA(cudaDeviceSetCacheConfig(cudaFuncCachePreferShared));
  cudaFuncCache config = cudaFuncCachePreferNone;
  ASSERT_CUDA(cudaDeviceGetCacheConfig(&config));
#ifdef CUDASIM
  EXPECT_EQ(config, cudaFuncCachePreferShared);  // a GPU may report its own fixed split instead
#endif
  EXPECT_EQ(cudaFuncSetCacheConfig(reinterpret_cast<const void*>(not_a_kernel), cudaFuncCachePreferL1),
            cudaErrorInvalidResourceHandle);
  cudaGetLastError();
  ASSERT_CUDA(cudaDeviceSetCacheConfig(cudaFuncCachePreferNone));
}

TEST(FuncAttributes, AKernelNamedOnceCanBeLaunchedThroughTheCApi) {
  // The simulator learns a kernel's parameter types where the program names it with its type.
  cudaFuncAttributes attributes;
  ASSERT_CUDA(cudaFuncGetAttributes(&attributes, scale));
  const int n = 100;
  std::vector<float> h(n, 2.0f);
  float* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, n * sizeof(float)));
  ASSERT_CUDA(cudaMemcpy(d, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  int count = n;
  float factor = 1.5f;
  void* args[] = {&d, &count, &factor};
  ASSERT_CUDA(cudaLaunchKernel(reinterpret_cast<const void*>(scale), dim3(1), dim3(128), args, 0, nullptr));
  ASSERT_CUDA(cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) ASSERT_EQ(h[i], 3.0f) << "at " << i;
  ASSERT_CUDA(cudaFree(d));
}

#ifdef CUDASIM
TEST(Occupancy, FiguresOfTheModelledH100) {
  int blocks = 0;
  // Threads per SM (2048) limit: block sizes round up to whole warps.
  ASSERT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, scale, 256, 0));
  EXPECT_EQ(blocks, 8);
  ASSERT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, scale, 1000, 0));
  EXPECT_EQ(blocks, 2);
  ASSERT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, scale, 129, 0));
  EXPECT_EQ(blocks, 12);  // 160 threads' worth of warps each
  // Blocks per SM (32) limit.
  ASSERT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, scale, 32, 0));
  EXPECT_EQ(blocks, 32);
  // Shared memory: 228 KiB per SM, each block uses its dynamic bytes plus 1 KiB reserved.
  ASSERT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, uses_dynamic_shared, 128, 40 * 1024));
  EXPECT_EQ(blocks, 5);
  ASSERT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, uses_dynamic_shared, 128, 227 * 1024));
  EXPECT_EQ(blocks, 1);
  ASSERT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, uses_dynamic_shared, 128, 228 * 1024));
  EXPECT_EQ(blocks, 0);  // more than a block may have

  int min_grid = 0, block = 0;
  ASSERT_CUDA(cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, scale));
  EXPECT_EQ(block, 1024);  // ties go to the largest block, as in CUDA's calculator
  EXPECT_EQ(min_grid, 2 * 132);
  ASSERT_CUDA(cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, uses_dynamic_shared, 100 * 1024));
  EXPECT_EQ(block, 1024);  // 2 blocks of 1024 fit 202 KiB
  EXPECT_EQ(min_grid, 2 * 132);

  cudaFuncAttributes attributes;
  ASSERT_CUDA(cudaFuncGetAttributes(&attributes, scale));
  EXPECT_EQ(attributes.numRegs, 32);  // the documented assumption
  EXPECT_EQ(attributes.maxThreadsPerBlock, 1024);
}

TEST(Occupancy, BadBlockSizesAreInvalidValues) {
  int blocks = 0;
  EXPECT_EQ(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, scale, 0, 0), cudaErrorInvalidValue);
  EXPECT_EQ(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, scale, 1025, 0), cudaErrorInvalidValue);
  EXPECT_EQ(cudaOccupancyMaxActiveBlocksPerMultiprocessor(nullptr, scale, 32, 0), cudaErrorInvalidValue);
  int min_grid = 0;
  EXPECT_EQ(cudaOccupancyMaxPotentialBlockSize(&min_grid, static_cast<int*>(nullptr), scale), cudaErrorInvalidValue);
  cudaGetLastError();
}
#endif

}  // namespace
