// CUDA as real code writes it, which nvcc accepts and so must the simulator: kernels whose
// template arguments are deduced from the launch, overloaded kernels, a launch configuration
// that ends in `>` or holds shifts and comparisons, an early `return` hidden in a macro inside a
// kernel with barriers, and launches and `extern __shared__` in headers (real_code_kernels.cuh
// and the real_code_launch.h it includes). Each result is checked against the host.
// Valid CUDA: the same file runs on a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "device_buffer.cuh"
#include "real_code_kernels.cuh"

namespace {

#define CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call

// ---- template arguments deduced from the launch's arguments ---------------------------------------

template <class T>
__global__ void axpy(T a, const T* x, T* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

TEST(RealCode, TemplateArgumentsAreDeducedFromTheLaunchArguments) {
  const std::size_t n = 1000;  // a size_t for the kernel's int parameter
  std::vector<float> x(n), y(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i);
    y[i] = 1.0f;
  }
  DeviceBuffer<float> dx(n), dy(n);
  dx.upload(x);
  dy.upload(y);
  float* x_as_mutable = dx.get();  // float* for the const float* parameter
  axpy<<<static_cast<unsigned>((n + 255) / 256), 256>>>(2.0f, x_as_mutable, dy.get(), n);
  const std::vector<float> result = dy.download();
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(result[i], 2.0f * static_cast<float>(i) + 1.0f) << "i = " << i;
}

TEST(RealCode, ExplicitTemplateArgumentsStillWork) {
  DeviceBuffer<double> dx(64), dy(64);
  dy.upload(std::vector<double>(64, 0.5));
  axpy<double><<<1, 64>>>(3, dx.get(), dy.get(), 64);  // 3 converted to double
  for (const double v : dy.download()) ASSERT_EQ(v, 0.5);
}

/// An array argument decays to a pointer, as in a call; the kernel only compares the pointer.
template <class T>
__global__ void record_non_null(const T* pointer, int* out) {
  out[threadIdx.x] = pointer != nullptr ? 1 : 0;
}

TEST(RealCode, ArrayArgumentsDecayToPointers) {
  DeviceBuffer<int> out(4);
  record_non_null<<<1, 4>>>("tag", out.get());
  for (const int v : out.download()) ASSERT_EQ(v, 1);
}

// ---- overloaded kernels ------------------------------------------------------------------------------

__global__ void scale(float* data, float by, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= by;
}

__global__ void scale(int* data, int by, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = data[i] * by + 1;  // + 1: tells this overload from the other
}

TEST(RealCode, OverloadedKernelsAreResolvedByTheirArguments) {
  const int n = 300;
  DeviceBuffer<float> floats(n);
  DeviceBuffer<int> ints(n);
  floats.upload(std::vector<float>(n, 1.5f));
  ints.upload(std::vector<int>(n, 7));
  scale<<<(n + 127) / 128, 128>>>(floats.get(), 2.0f, n);
  scale<<<(n + 127) / 128, 128>>>(ints.get(), 3, static_cast<std::size_t>(n));
  for (const float v : floats.download()) ASSERT_EQ(v, 3.0f);
  for (const int v : ints.download()) ASSERT_EQ(v, 22);
}

/// A kernel with a default argument: the launch leaves it out, as a call may.
__global__ void fill_value(int* out, int value = 42) { out[threadIdx.x] = value; }

TEST(RealCode, DefaultArgumentsAreFilledIn) {
  DeviceBuffer<int> out(8);
  fill_value<<<1, 8>>>(out.get());
  for (const int v : out.download()) ASSERT_EQ(v, 42);
  fill_value<<<1, 8>>>(out.get(), 7);
  for (const int v : out.download()) ASSERT_EQ(v, 7);
}

// ---- launch configurations with `>` in them --------------------------------------------------------

template <class T>
constexpr int threads_v = 128 / static_cast<int>(sizeof(T));

template <class T>
__global__ void record_block_size(int* out) {
  if (threadIdx.x == 0) out[blockIdx.x] = static_cast<int>(blockDim.x);
}

// nvcc reads `threads_v<T>>>>` as `threads_v<T` followed by `>>>`: a template argument list
// right before the closing `>>>` needs a space (or parentheses) after it, here as on a GPU.
template <class T>
void record_threads_for(int* out) {
  record_block_size<T><<<1, threads_v<T> >>>(out);
}

template <class T>
void record_parenthesized_threads_for(int* out) {
  record_block_size<T><<<1, (threads_v<T>)>>>(out);
}

TEST(RealCode, ConfigurationEndingInATemplateArgumentList) {
  DeviceBuffer<int> out(1);
  record_threads_for<double>(out.get());
  EXPECT_EQ(out.download()[0], 16);
  record_parenthesized_threads_for<short>(out.get());
  EXPECT_EQ(out.download()[0], 64);
}

TEST(RealCode, ConfigurationWithShiftsAndComparisons) {
  const int n = 100;
  DeviceBuffer<int> out(8);
  record_block_size<int><<<n >> 5, 32>>>(out.get());  // 3 blocks of 32
  std::vector<int> sizes = out.download();
  EXPECT_EQ(sizes[0], 32);
  EXPECT_EQ(sizes[2], 32);
  EXPECT_EQ(sizes[3], 0);
  record_block_size<int><<<(n > 0 ? 8 : 1), (n >> 1) > 32 ? 64 : 32>>>(out.get());
  sizes = out.download();
  EXPECT_EQ(sizes[7], 64);
}

// ---- a `return` hidden in a macro, in a kernel with barriers --------------------------------------

#define RETURN_IF_OUTSIDE(i, n) \
  if ((i) >= (n)) return

/// Per-block sums of `in`; blocks past the data leave at once, and after the last barrier all
/// threads but thread 0 leave before the write (both through macros).
__global__ void guarded_block_sums(const int* in, int* out, int n, int used_blocks) {
  __shared__ int partial[128];
  RETURN_IF_OUTSIDE(static_cast<int>(blockIdx.x), used_blocks);  // the whole block leaves
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  partial[threadIdx.x] = i < n ? in[i] : 0;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  REAL_CODE_RETURN_UNLESS(threadIdx.x == 0);  // a macro from the header
  out[blockIdx.x] = partial[0];
}

TEST(RealCode, EarlyReturnInAMacroInAKernelWithBarriers) {
  const int n = 1000, threads = 128, used_blocks = (n + threads - 1) / threads;
  std::vector<int> in(n);
  for (int i = 0; i < n; ++i) in[i] = i % 17;
  DeviceBuffer<int> d_in(n), d_out(used_blocks + 2);
  d_in.upload(in);
  guarded_block_sums<<<used_blocks + 2, threads>>>(d_in.get(), d_out.get(), n, used_blocks);
  const std::vector<int> sums = d_out.download();
  for (int b = 0; b < used_blocks; ++b) {
    int expected = 0;
    for (int i = b * threads; i < n && i < (b + 1) * threads; ++i) expected += in[i];
    EXPECT_EQ(sums[b], expected) << "block " << b;
  }
  EXPECT_EQ(sums[used_blocks], 0);
  EXPECT_EQ(sums[used_blocks + 1], 0);
}

// ---- launches and extern __shared__ in headers ---------------------------------------------------------

TEST(RealCode, LaunchesAndDynamicSharedMemoryInHeaders) {
  const int n = 200, threads = 64;
  std::vector<int> values(n);
  for (int i = 0; i < n; ++i) values[i] = i;
  DeviceBuffer<int> data(n);
  data.upload(values);
  real_code::reverse_each_block(data.get(), n, threads);
  const std::vector<int> reversed = data.download();
  for (int i = 0; i < n; ++i) {
    const int block_start = i / threads * threads;
    const int block_end = block_start + threads < n ? block_start + threads : n;
    ASSERT_EQ(reversed[i], block_end - 1 - (i - block_start)) << "i = " << i;
  }

  DeviceBuffer<int> sums(3);
  real_code::sum_block_indices(sums.get(), 3, 32);
  for (const int v : sums.download()) ASSERT_EQ(v, 32 * 31 / 2);
}

TEST(RealCode, LaunchInAHeaderIncludedByAHeader) {
  const std::size_t n = 300;
  DeviceBuffer<float> out(n);
  real_code::fill_with_steps(out.get(), 0.5f, n);
  const std::vector<float> steps = out.download();
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(steps[i], 0.5f * static_cast<float>(i)) << "i = " << i;
}

// ---- launches through function pointers and with raised dynamic shared memory ---------------------------

TEST(RealCode, FunctionPointerLaunchesStillWork) {
  DeviceBuffer<int> out(2);
  void (*pointer)(int*) = record_block_size<int>;
  pointer<<<1, 8>>>(out.get());
  EXPECT_EQ(out.download()[0], 8);
  void (*table[2])(int*) = {record_block_size<int>, record_block_size<char>};
  (*table[1])<<<2, 16>>>(out.get());
  const std::vector<int> sizes = out.download();
  EXPECT_EQ(sizes[0], 16);
  EXPECT_EQ(sizes[1], 16);
}

/// Sums what each thread wrote into the dynamic shared buffer (sized by the launch).
template <class T>
__global__ void sum_through_shared(T* out, int count) {
  extern __shared__ unsigned char raw[];
  T* values = reinterpret_cast<T*>(raw);
  for (int i = threadIdx.x; i < count; i += blockDim.x) values[i] = static_cast<T>(1);
  __syncthreads();
  if (threadIdx.x == 0) {
    T sum = 0;
    for (int i = 0; i < count; ++i) sum += values[i];
    *out = sum;
  }
}

TEST(RealCode, RaisedSharedMemoryLimitAppliesToDeducedLaunches) {
  const int count = 16 * 1024;  // 64 KiB of floats: above the default 48 KiB
  const int bytes = count * static_cast<int>(sizeof(float));
  CUDA_OK(cudaFuncSetAttribute(sum_through_shared<float>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  DeviceBuffer<float> out(1);
  sum_through_shared<<<1, 256, bytes>>>(out.get(), count);  // the exact parameter types
  EXPECT_EQ(out.download()[0], static_cast<float>(count));
  out.upload(std::vector<float>(1, 0.0f));
  sum_through_shared<<<1, 256, bytes>>>(out.get(), static_cast<std::size_t>(count));  // a conversion
  EXPECT_EQ(out.download()[0], static_cast<float>(count));
}

TEST(RealCode, AllocationsIntoPointersToConstCompile) {
  // CUDA's templates cast `T**` to `void**` whatever T's qualifiers: NVIDIA's HSOpticalFlow
  // allocates its read-only image pyramid into `const float*` slots so.
  const float* levels[2] = {nullptr, nullptr};
  ASSERT_EQ(cudaMalloc(levels + 1, 64 * sizeof(float)), cudaSuccess);
  ASSERT_NE(levels[1], nullptr);
  const int* pinned = nullptr;
  ASSERT_EQ(cudaMallocHost(&pinned, 16 * sizeof(int)), cudaSuccess);
  ASSERT_NE(pinned, nullptr);
  EXPECT_EQ(cudaFreeHost(const_cast<int*>(pinned)), cudaSuccess);
  EXPECT_EQ(cudaFree(const_cast<float*>(levels[1])), cudaSuccess);
}

// ---- symbols, stream flags and the shared-memory carveout, as public programs use them -------------

__constant__ float coefficients[4];
__device__ int visits;

__global__ void scale_and_count(float* out) {
  out[threadIdx.x] = coefficients[threadIdx.x] * 2.0f;
  atomicAdd(&visits, 1);
}

TEST(RealCode, SymbolsAreCopiedInStreamOrder) {
  DeviceBuffer<float> out(4);
  CUDA_OK(cudaDeviceSynchronize());  // its zeroing, on the legacy stream, which `stream` does not wait for
  cudaStream_t stream = nullptr;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  unsigned flags = 99;
  CUDA_OK(cudaStreamGetFlags(stream, &flags));
  EXPECT_EQ(flags, static_cast<unsigned>(cudaStreamNonBlocking));
  const float host[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  CUDA_OK(cudaMemcpyToSymbolAsync(coefficients, host, sizeof host, 0, cudaMemcpyHostToDevice, stream));
  const int zero = 0;
  CUDA_OK(cudaMemcpyToSymbolAsync(visits, &zero, sizeof zero, 0, cudaMemcpyHostToDevice, stream));
  size_t size = 0;
  CUDA_OK(cudaGetSymbolSize(&size, coefficients));
  EXPECT_EQ(size, sizeof host);
  CUDA_OK(cudaFuncSetAttribute(scale_and_count, cudaFuncAttributePreferredSharedMemoryCarveout,
                               cudaSharedmemCarveoutMaxShared));
  scale_and_count<<<1, 4, 0, stream>>>(out.get());
  int count = -1;
  CUDA_OK(cudaMemcpyFromSymbolAsync(&count, visits, sizeof count, 0, cudaMemcpyDeviceToHost, stream));
  CUDA_OK(cudaStreamSynchronize(stream));
  EXPECT_EQ(count, 4);
  EXPECT_EQ(out.download(), (std::vector<float>{2.0f, 4.0f, 6.0f, 8.0f}));
  CUDA_OK(cudaStreamDestroy(stream));
}

}  // namespace
