// Error codes of the runtime API: invalid launch configurations are reported by
// cudaGetLastError once and then cleared; bad copies and frees return cudaErrorInvalidValue;
// cudaGetErrorName/String give the toolkit's names and sentences.
// Valid CUDA: the same file runs on a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace {

#define ASSERT_CUDA(expr) ASSERT_EQ((expr), cudaSuccess)

__global__ void mark(int* flag) {
  if (threadIdx.x == 0 && blockIdx.x == 0) *flag = 1;
}

/// A rejected launch runs nothing: the flag stays 0.
int flag_after(const int* d_flag) {
  int flag = -1;
  EXPECT_EQ(cudaMemcpy(&flag, d_flag, sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  return flag;
}

class LaunchErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_CUDA(cudaMalloc(&flag_, sizeof(int)));
    ASSERT_CUDA(cudaMemset(flag_, 0, sizeof(int)));
    (void)cudaGetLastError();
  }
  void TearDown() override { EXPECT_EQ(cudaFree(flag_), cudaSuccess); }
  int* flag_ = nullptr;
};

// A configuration no GPU can launch: CUDA 13 returns cudaErrorInvalidValue ("invalid
// argument"), measured on an H200 (CUDA 13.0, driver 580, 2026-11-27) with these very tests;
// earlier releases are widely reported to return cudaErrorInvalidConfiguration.
TEST_F(LaunchErrors, MoreThan1024ThreadsPerBlockIsAnInvalidArgumentReportedOnce) {
  mark<<<1, 1025>>>(flag_);
  EXPECT_EQ(cudaPeekAtLastError(), cudaErrorInvalidValue);  // peek does not clear
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // cleared by the first read, not sticky
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(flag_after(flag_), 0);
}

TEST_F(LaunchErrors, BlockOf1024By2ThreadsExceedsThePerBlockLimit) {
  mark<<<1, dim3(1024, 2, 1)>>>(flag_);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(flag_after(flag_), 0);
}

TEST_F(LaunchErrors, BlockZDimensionAbove64IsInvalid) {
  mark<<<1, dim3(1, 1, 65)>>>(flag_);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST_F(LaunchErrors, EmptyGridIsAnInvalidArgument) {
  mark<<<0, 32>>>(flag_);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  mark<<<dim3(1, 0, 1), 32>>>(flag_);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(flag_after(flag_), 0);
}

TEST_F(LaunchErrors, ALaterGoodLaunchRunsNormally) {
  mark<<<1, 2048>>>(flag_);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  mark<<<1, 1024>>>(flag_);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(flag_after(flag_), 1);
}

TEST(MemoryErrors, MemcpyWithSwappedDirectionIsInvalidValue) {
  const int n = 16;
  std::vector<int> host(n, 7);
  int* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, n * sizeof(int)));
  // The destination is a host buffer but the kind says host-to-device (arguments swapped).
  EXPECT_EQ(cudaMemcpy(host.data(), d, n * sizeof(int), cudaMemcpyHostToDevice), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(d, host.data(), n * sizeof(int), cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
  (void)cudaGetLastError();
  EXPECT_EQ(host[0], 7) << "a rejected copy must not copy";
  // The right direction works.
  EXPECT_EQ(cudaMemcpy(d, host.data(), n * sizeof(int), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_CUDA(cudaFree(d));
}

TEST(MemoryErrors, FreeOfAHostPointerIsInvalidValue) {
  int on_stack = 0;
  std::vector<int> on_heap(4);
  EXPECT_EQ(cudaFree(&on_stack), cudaErrorInvalidValue);
  EXPECT_EQ(cudaFree(on_heap.data()), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST(MemoryErrors, DoubleFreeIsInvalidValue) {
  int* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, 64));
  EXPECT_EQ(cudaFree(d), cudaSuccess);
  EXPECT_EQ(cudaFree(d), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
}

TEST(MemoryErrors, FreeOfNullIsANoOp) {
  EXPECT_EQ(cudaFree(nullptr), cudaSuccess);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST(ErrorText, NamesAndStringsAreThoseOfTheToolkit) {
  EXPECT_STREQ(cudaGetErrorName(cudaSuccess), "cudaSuccess");
  EXPECT_STREQ(cudaGetErrorString(cudaSuccess), "no error");
  EXPECT_STREQ(cudaGetErrorName(cudaErrorInvalidValue), "cudaErrorInvalidValue");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorInvalidValue), "invalid argument");
  EXPECT_STREQ(cudaGetErrorName(cudaErrorMemoryAllocation), "cudaErrorMemoryAllocation");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorMemoryAllocation), "out of memory");
  EXPECT_STREQ(cudaGetErrorName(cudaErrorInvalidConfiguration), "cudaErrorInvalidConfiguration");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorInvalidConfiguration), "invalid configuration argument");
  EXPECT_STREQ(cudaGetErrorName(cudaErrorIllegalAddress), "cudaErrorIllegalAddress");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorIllegalAddress), "an illegal memory access was encountered");
  EXPECT_STREQ(cudaGetErrorName(cudaErrorLaunchFailure), "cudaErrorLaunchFailure");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorLaunchFailure), "unspecified launch failure");
  EXPECT_STREQ(cudaGetErrorName(cudaErrorNotReady), "cudaErrorNotReady");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorNotReady), "device not ready");
}

TEST(ErrorText, EnumeratorsHaveTheToolkitsNumericValues) {
  EXPECT_EQ(static_cast<int>(cudaErrorInvalidValue), 1);
  EXPECT_EQ(static_cast<int>(cudaErrorMemoryAllocation), 2);
  EXPECT_EQ(static_cast<int>(cudaErrorInvalidConfiguration), 9);
  EXPECT_EQ(static_cast<int>(cudaErrorInvalidResourceHandle), 400);
  EXPECT_EQ(static_cast<int>(cudaErrorNotReady), 600);
  EXPECT_EQ(static_cast<int>(cudaErrorIllegalAddress), 700);
  EXPECT_EQ(static_cast<int>(cudaErrorLaunchFailure), 719);
}

TEST(DeviceQueries, WarpSizeIs32AndLimitsMatchTheLaunchChecks) {
  cudaDeviceProp prop;
  ASSERT_CUDA(cudaGetDeviceProperties(&prop, 0));
  EXPECT_EQ(prop.warpSize, 32);
  EXPECT_EQ(prop.maxThreadsPerBlock, 1024);
  EXPECT_EQ(prop.maxThreadsDim[2], 64);
  EXPECT_GE(prop.sharedMemPerBlockOptin, 48u * 1024u);
  int count = 0;
  ASSERT_CUDA(cudaGetDeviceCount(&count));
  EXPECT_GE(count, 1);
}

// What device-query programs (NVIDIA's deviceQuery, topologyQuery) ask for is answered.
TEST(DeviceQueries, TheAttributesDeviceQueryProgramsReadAreAnswered) {
  const cudaDeviceAttr asked[] = {
      cudaDevAttrClockRate, cudaDevAttrMemoryClockRate, cudaDevAttrKernelExecTimeout, cudaDevAttrComputeMode,
      cudaDevAttrGpuOverlap, cudaDevAttrMaxPitch, cudaDevAttrTextureAlignment, cudaDevAttrSurfaceAlignment,
      cudaDevAttrEccEnabled, cudaDevAttrPciBusId, cudaDevAttrPciDeviceId, cudaDevAttrPciDomainId,
      cudaDevAttrStreamPrioritiesSupported, cudaDevAttrMaxRegistersPerMultiprocessor,
      cudaDevAttrHostNativeAtomicSupported, cudaDevAttrPageableMemoryAccess, cudaDevAttrComputePreemptionSupported,
      cudaDevAttrCanUseHostPointerForRegisteredMem, cudaDevAttrMaxBlocksPerMultiprocessor,
      cudaDevAttrMaxPersistingL2CacheSize, cudaDevAttrMaxAccessPolicyWindowSize,
      cudaDevAttrReservedSharedMemoryPerBlock};
  for (cudaDeviceAttr attribute : asked) {
    int value = -1;
    EXPECT_EQ(cudaDeviceGetAttribute(&value, attribute, 0), cudaSuccess) << "attribute " << attribute;
    EXPECT_GE(value, 0) << "attribute " << attribute;
  }
  int count = 0;
  ASSERT_CUDA(cudaGetDeviceCount(&count));
  if (count < 2) return;
  int access = 0;
  ASSERT_CUDA(cudaDeviceGetP2PAttribute(&access, cudaDevP2PAttrAccessSupported, 0, 1));
  int can = 0;
  ASSERT_CUDA(cudaDeviceCanAccessPeer(&can, 0, 1));
  EXPECT_EQ(access, can);
}

TEST(DeviceQueries, LimitsAreKeptPerDevice) {
  size_t heap = 0, stack = 0;
  ASSERT_CUDA(cudaDeviceGetLimit(&heap, cudaLimitMallocHeapSize));
  ASSERT_CUDA(cudaDeviceGetLimit(&stack, cudaLimitStackSize));
  EXPECT_GT(heap, 0u);
  EXPECT_GT(stack, 0u);
  ASSERT_CUDA(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 64u << 20));
  size_t now = 0;
  ASSERT_CUDA(cudaDeviceGetLimit(&now, cudaLimitMallocHeapSize));
  EXPECT_GE(now, 64u << 20);
  ASSERT_CUDA(cudaDeviceSetLimit(cudaLimitMallocHeapSize, heap));  // as it was
#ifdef CUDASIM  // a GPU's defaults differ between generations
  EXPECT_EQ(heap, 8u << 20);
  EXPECT_EQ(stack, 1024u);
  EXPECT_EQ(now, 64u << 20);
  EXPECT_EQ(cudaDeviceSetLimit(static_cast<cudaLimit>(99), 1), cudaErrorUnsupportedLimit);
  EXPECT_EQ(cudaGetLastError(), cudaErrorUnsupportedLimit);
#endif
}

}  // namespace
