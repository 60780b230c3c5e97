// What a .cu file gets without including anything, and what the CUDA headers bring in: the
// conventions public example programs rely on. Valid CUDA: nvcc includes cuda_runtime.h in
// every .cu file by itself, and the simulator does the same, so this file does not include it.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <cuda/std/array>
#include <cuda/std/cstdint>
#include <cuda/std/limits>
#include <cuda/std/type_traits>
#include <builtin_types.h>
#include <channel_descriptor.h>
#include <cuda_profiler_api.h>
#include <driver_types.h>
#include <math_constants.h>
#include <surface_indirect_functions.h>
#include <surface_types.h>
#include <texture_indirect_functions.h>
#include <texture_types.h>
#include <vector_functions.h>
#include <vector_types.h>
#include <nvtx3/nvToolsExt.h>

namespace {

// NVIDIA's helper_cuda.h defines checkCudaErrors and findCudaDevice only under this guard.
#ifdef __CUDA_RUNTIME_H__
constexpr bool kRuntimeGuardSeen = true;
#else
constexpr bool kRuntimeGuardSeen = false;
#endif
// ... and checkCudaErrors and getLastCudaError only under driver_types.h's guard.
#ifdef __DRIVER_TYPES_H__
constexpr bool kDriverTypesGuardSeen = true;
#else
constexpr bool kDriverTypesGuardSeen = false;
#endif

struct __align__(16) Aligned {
  float a, b;
};

__global__ void fill_with_index(int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = i;
}

TEST(Headers, AKernelCompilesAndRunsWithoutIncludingTheRuntimeHeader) {
  const int n = 100;
  int* device = NULL;  // NULL, malloc and memset come with the runtime header, as with nvcc
  ASSERT_EQ(cudaMalloc(&device, n * sizeof(int)), cudaSuccess);
  fill_with_index<<<(n + 31) / 32, 32>>>(device, n);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  int* host = static_cast<int*>(malloc(n * sizeof(int)));
  memset(host, 0xff, n * sizeof(int));
  ASSERT_EQ(cudaMemcpy(host, device, n * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  for (int i = 0; i < n; ++i) EXPECT_EQ(host[i], i);
  free(host);
  EXPECT_EQ(cudaFree(device), cudaSuccess);
}

TEST(Headers, TheRuntimeHeaderDefinesItsIncludeGuard) { EXPECT_TRUE(kRuntimeGuardSeen); }

TEST(Headers, TheDriverTypesIncludeGuardIsDefinedToo) { EXPECT_TRUE(kDriverTypesGuardSeen); }

// llm.c's kernels stream through their inputs with cache-hinted loads and stores.
__global__ void scale_with_cache_hints(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) __stcs(out + i, 2.0f * __ldcs(in + i) + __ldcg(in + i) + __ldg(in + i));
}

TEST(Headers, CacheHintedLoadsAndStoresMoveTheValues) {
  const int n = 50;
  float host[n];
  for (int i = 0; i < n; ++i) host[i] = static_cast<float>(i);
  float *in = NULL, *out = NULL;
  ASSERT_EQ(cudaMalloc(&in, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&out, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(in, host, n * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  scale_with_cache_hints<<<2, 32>>>(in, out, n);
  ASSERT_EQ(cudaMemcpy(host, out, n * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  for (int i = 0; i < n; ++i) EXPECT_EQ(host[i], 4.0f * i) << "element " << i;
  cudaFree(in);
  cudaFree(out);
}

TEST(Headers, AlignAlignsLikeTheAttribute) {
  EXPECT_EQ(alignof(Aligned), 16u);
  __align__(8) float pair[2] = {1.0f, 2.0f};
  EXPECT_EQ(reinterpret_cast<uintptr_t>(pair) % 8, 0u);
}

TEST(Headers, DevicePropertiesComeWithTheRuntimeHeader) {
  cudaDeviceProp prop;
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  EXPECT_GT(strlen(prop.name), 0u);
  EXPECT_EQ(prop.warpSize, 32);
}

TEST(Headers, TheComputeModeAllowsThisProcessToUseTheDevice) {
  // What NVIDIA's samples ask through helper_cuda.h's findCudaDevice before they run.
  int mode = -1;
  ASSERT_EQ(cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, 0), cudaSuccess);
  EXPECT_NE(mode, cudaComputeModeProhibited);
  int integrated = -1, overlap = -1;
  ASSERT_EQ(cudaDeviceGetAttribute(&integrated, cudaDevAttrIntegrated, 0), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&overlap, cudaDevAttrGpuOverlap, 0), cudaSuccess);
  EXPECT_EQ(integrated, 0);  // a discrete GPU (an H100/H200 on the simulator)
  EXPECT_EQ(overlap, 1);
}

TEST(Headers, DeviceAttributesAgreeWithTheDeviceProperties) {
  cudaDeviceProp prop;
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  const struct { cudaDeviceAttr attr; int expected; } cases[] = {
      {cudaDevAttrConcurrentKernels, prop.concurrentKernels}, {cudaDevAttrAsyncEngineCount, prop.asyncEngineCount},
      {cudaDevAttrUnifiedAddressing, prop.unifiedAddressing}, {cudaDevAttrManagedMemory, prop.managedMemory},
      {cudaDevAttrCooperativeLaunch, prop.cooperativeLaunch}, {cudaDevAttrCanMapHostMemory, prop.canMapHostMemory}};
  for (const auto& c : cases) {
    int value = -1;
    ASSERT_EQ(cudaDeviceGetAttribute(&value, c.attr, 0), cudaSuccess);
    EXPECT_EQ(value, c.expected) << "attribute " << static_cast<int>(c.attr);
  }
}

#ifdef CUDASIM
// What CUDA 13 removed and older teaching code still uses (nvcc 13 refuses it; the simulator keeps
// it): cudaThreadSynchronize and its kin, and the device properties CUDA by Example prints.
TEST(Headers, TheDeviceCallsAndPropertiesCuda13RemovedAreKept) {
  int* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 64 * sizeof(int)), cudaSuccess);
  fill_with_index<<<1, 64>>>(d, 64);
  ASSERT_EQ(cudaThreadSynchronize(), cudaSuccess);
  size_t heap = 0;
  ASSERT_EQ(cudaThreadGetLimit(&heap, cudaLimitMallocHeapSize), cudaSuccess);
  EXPECT_EQ(heap, size_t{8} << 20);
  cudaDeviceProp prop;
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  int clock = -1, memory_clock = -1, overlap = -1, mode = -1;
  ASSERT_EQ(cudaDeviceGetAttribute(&clock, cudaDevAttrClockRate, 0), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&memory_clock, cudaDevAttrMemoryClockRate, 0), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&overlap, cudaDevAttrGpuOverlap, 0), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, 0), cudaSuccess);
  EXPECT_EQ(prop.clockRate, clock);
  EXPECT_EQ(prop.memoryClockRate, memory_clock);
  EXPECT_EQ(prop.deviceOverlap, overlap);
  EXPECT_EQ(prop.computeMode, mode);
  EXPECT_EQ(prop.kernelExecTimeoutEnabled, 0);
  ASSERT_EQ(cudaFree(d), cudaSuccess);
}
#endif

// Code of this kind defines its own lerp: the runtime header must not bring C++20's std::lerp
// into the global namespace.
__device__ inline float lerp(float start, float end, float weight) { return start + weight * (end - start); }

__global__ void clamp_and_lerp(const float* x, float* out, int n) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < static_cast<unsigned>(n)) out[i] = lerp(0.0f, x[min(n - 1, i + 1)], 0.5f);  // int and unsigned
}

TEST(Headers, MixedSignMinAndAUserLerpCompileAsWithNvcc) {
  const int n = 8;
  float host[n];
  for (int i = 0; i < n; ++i) host[i] = static_cast<float>(2 * i);
  float *x = NULL, *out = NULL;
  ASSERT_EQ(cudaMalloc(&x, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&out, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(x, host, n * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  clamp_and_lerp<<<1, n>>>(x, out, n);
  ASSERT_EQ(cudaMemcpy(host, out, n * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  for (int i = 0; i < n; ++i) EXPECT_EQ(host[i], static_cast<float>(i + 1 < n ? i + 1 : n - 1)) << i;
  cudaFree(x);
  cudaFree(out);
}

TEST(Headers, TheMathOverloadsAreInTheGlobalNamespaceAsWithNvcc) {
  EXPECT_EQ(abs(-1.5f), 1.5f);  // not abs(int)
  EXPECT_TRUE(isfinite(1.0f));
  EXPECT_TRUE(isnan(sqrt(-1.0f)));
}

/// The constants that CUDA defines through device intrinsics (so in device code only), and the
/// area of a circle of radius *r: out gets 9 floats.
__global__ void math_constants_on_the_device(const float* r, float* out) {
  out[0] = CUDART_PI_F * *r * *r;
  out[1] = CUDART_INF_F;
  out[2] = CUDART_NAN_F;
  out[3] = CUDART_NEG_ZERO_F;
  out[4] = CUDART_MIN_DENORM_F;
  out[5] = CUDART_MAX_NORMAL_F;
  out[6] = static_cast<float>(CUDART_INF);
  out[7] = static_cast<float>(CUDART_NAN);
  out[8] = static_cast<float>(CUDART_NEG_ZERO);
}

// The runtime's sub-headers (vector_types.h, ...) and math_constants.h, which programs include
// by name: their types and the CUDART_* constants, with the values of the mathematics.
TEST(Headers, TheRuntimeSubHeadersAndMathConstantsAreThere) {
  const float4 v = make_float4(1, 2, 3, 4);
  EXPECT_EQ(v.w, 4.0f);
  EXPECT_EQ(CUDART_PI, std::acos(-1.0));
  EXPECT_EQ(CUDART_PI_F, static_cast<float>(std::acos(-1.0)));
  EXPECT_EQ(CUDART_LN2, std::log(2.0));
  EXPECT_EQ(CUDART_SQRT_HALF_F, static_cast<float>(std::sqrt(0.5)));
  EXPECT_DOUBLE_EQ(CUDART_L2E, 1.0 / std::log(2.0));
  EXPECT_EQ(CUDART_TWO_TO_M1022, std::ldexp(1.0, -1022));
  float *d_r = nullptr, *d_out = nullptr, r = 2.0f;
  ASSERT_EQ(cudaMalloc(&d_r, sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_out, 9 * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d_r, &r, sizeof r, cudaMemcpyHostToDevice), cudaSuccess);
  math_constants_on_the_device<<<1, 1>>>(d_r, d_out);
  float out[9] = {};
  ASSERT_EQ(cudaMemcpy(out, d_out, sizeof out, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_FLOAT_EQ(out[0], 4.0f * static_cast<float>(std::acos(-1.0)));
  EXPECT_TRUE(std::isinf(out[1]) && out[1] > 0);
  EXPECT_TRUE(std::isnan(out[2]));
  EXPECT_TRUE(std::signbit(out[3]) && out[3] == 0.0f);
  EXPECT_EQ(out[4], std::numeric_limits<float>::denorm_min());
  EXPECT_EQ(out[5], std::numeric_limits<float>::max());
  EXPECT_TRUE(std::isinf(out[6]) && out[6] > 0);
  EXPECT_TRUE(std::isnan(out[7]));
  EXPECT_TRUE(std::signbit(out[8]) && out[8] == 0.0f);
  cudaFree(d_r);
  cudaFree(d_out);
}

TEST(Headers, ProfilerStartAndStopSucceed) {
  EXPECT_EQ(cudaProfilerStart(), cudaSuccess);
  EXPECT_EQ(cudaProfilerStop(), cudaSuccess);
}

// NVTX ranges and marks (header-only, as in the toolkit): without a profiler they do nothing.
TEST(Headers, NvtxRangesAndMarksCompileAndChangeNothing) {
  int* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 64 * sizeof(int)), cudaSuccess);
  nvtxRangePushA("fill");
  nvtxMarkA("launch");
  nvtxRangePush("launch");  // the names without A or W, as programs usually write them
  nvtxMark("fill");
  fill_with_index<<<1, 64>>>(d, 64);
  nvtxRangePop();
  nvtxRangePop();
  nvtxEventAttributes_t attributes = {};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.colorType = NVTX_COLOR_ARGB;
  attributes.color = 0xff00ff00u;
  attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attributes.message.ascii = "copy back";
  const nvtxRangeId_t range = nvtxRangeStartEx(&attributes);
  int back[64] = {};
  ASSERT_EQ(cudaMemcpy(back, d, sizeof back, cudaMemcpyDeviceToHost), cudaSuccess);
  nvtxRangeEnd(range);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(back[i], i);
  cudaFree(d);
}

// What systemWideAtomics and other samples read before choosing a path.
TEST(Headers, DevicePropertiesSayHowHostMemoryMayBeReached) {
  cudaDeviceProp prop;
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  int attribute = -1;
  ASSERT_EQ(cudaDeviceGetAttribute(&attribute, cudaDevAttrPageableMemoryAccess, 0), cudaSuccess);
  EXPECT_EQ(prop.pageableMemoryAccess, attribute);
  ASSERT_EQ(cudaDeviceGetAttribute(&attribute, cudaDevAttrConcurrentManagedAccess, 0), cudaSuccess);
  EXPECT_EQ(prop.concurrentManagedAccess, attribute);
  ASSERT_EQ(cudaDeviceGetAttribute(&attribute, cudaDevAttrHostNativeAtomicSupported, 0), cudaSuccess);
  EXPECT_EQ(prop.hostNativeAtomicSupported, attribute);
}

// libcu++'s cuda::std, as kernels use it (NVIDIA's dmmaTensorCoreGemm includes <cuda/std/type_traits>).
template <class T>
__global__ void largest_of_type(cuda::std::int64_t* out) {
  static_assert(cuda::std::is_integral_v<T>, "an integer type");
  cuda::std::array<T, 2> pair{cuda::std::numeric_limits<T>::max(), cuda::std::numeric_limits<T>::lowest()};
  out[0] = static_cast<cuda::std::int64_t>(pair[0]);
  out[1] = static_cast<cuda::std::int64_t>(pair[1]);
}

TEST(Headers, LibcuxxStandardHeadersWorkInKernels) {
  cuda::std::int64_t* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, 2 * sizeof(cuda::std::int64_t)), cudaSuccess);
  largest_of_type<short><<<1, 1>>>(device);
  cuda::std::int64_t host[2] = {0, 0};
  ASSERT_EQ(cudaMemcpy(host, device, sizeof host, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(host[0], 32767);
  EXPECT_EQ(host[1], -32768);
  EXPECT_EQ(cudaFree(device), cudaSuccess);
}

}  // namespace
