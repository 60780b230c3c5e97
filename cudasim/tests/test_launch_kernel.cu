// cudaLaunchKernel: the C++ overload that takes the kernel itself, and the C one that takes it
// as `const void*` with one pointer per argument in `args`. Arguments are copied when the call
// returns, of any type (scalars of every width, structs, pointers), launch errors are returned,
// and a pointer that is not a kernel is cudaErrorInvalidResourceHandle. Valid CUDA: the same
// file runs on a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <vector>

namespace {

#define ASSERT_CUDA(expr) ASSERT_EQ((expr), cudaSuccess)

__global__ void axpy(float a, const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

struct Affine {
  double scale;
  char offset;
  short repeat;
};

/// Parameters of different sizes and alignments: a wrong unpacking garbles at least one.
__global__ void mixed_arguments(char tag, Affine f, long long big, const int* in, int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = static_cast<int>(in[i] * f.scale) + f.offset * f.repeat + tag + static_cast<int>(big % 1000);
}

__global__ void fill(int* out, int n, int value) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = value;
}

__global__ void no_arguments_kernel() {}

// Launched only through `const void*` below, never by chevrons nor named with its type: nvcc's
// runtime knows every kernel of the program, and so must the simulator. One has a barrier (a
// coroutine on the simulator); the other is one of two overloads.
__global__ void reverse_block(int* data) {
  __shared__ int tile[64];
  tile[threadIdx.x] = data[threadIdx.x];
  __syncthreads();
  data[threadIdx.x] = tile[blockDim.x - 1 - threadIdx.x];
}
__global__ void add_to(int* data, int amount) { data[threadIdx.x] += amount; }
__global__ void add_to(float* data, float amount) { data[threadIdx.x] += amount; }

void not_a_kernel(int*) {}

TEST(LaunchKernel, TemplateOverloadLaunchesWithArgumentPointers) {
  const int n = 1000;
  std::vector<float> hx(n), hy(n);
  for (int i = 0; i < n; ++i) {
    hx[i] = static_cast<float>(i % 13) - 6.0f;
    hy[i] = static_cast<float>(i % 7);
  }
  float *x = nullptr, *y = nullptr;
  ASSERT_CUDA(cudaMalloc(&x, n * sizeof(float)));
  ASSERT_CUDA(cudaMalloc(&y, n * sizeof(float)));
  ASSERT_CUDA(cudaMemcpy(x, hx.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  ASSERT_CUDA(cudaMemcpy(y, hy.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  float a = 2.5f;
  int count = n;
  void* args[] = {&a, &x, &y, &count};
  ASSERT_CUDA(cudaLaunchKernel(axpy, dim3((n + 127) / 128), dim3(128), args, 0, nullptr));
  std::vector<float> out(n);
  ASSERT_CUDA(cudaMemcpy(out.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], 2.5f * hx[i] + hy[i]) << "at " << i;
  ASSERT_CUDA(cudaFree(x));
  ASSERT_CUDA(cudaFree(y));
}

TEST(LaunchKernel, UnpacksArgumentsOfEverySizeAndCopiesThemAtTheCall) {
  const int n = 129;
  std::vector<int> h(n);
  for (int i = 0; i < n; ++i) h[i] = i * 3 - 50;
  int *in = nullptr, *out = nullptr;
  ASSERT_CUDA(cudaMalloc(&in, n * sizeof(int)));
  ASSERT_CUDA(cudaMalloc(&out, n * sizeof(int)));
  ASSERT_CUDA(cudaMemcpy(in, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  cudaStream_t s;
  ASSERT_CUDA(cudaStreamCreate(&s));
  char tag = 7;
  Affine f{2.0, 3, 4};
  long long big = 123456789012345LL;
  int count = n;
  void* args[] = {&tag, &f, &big, &in, &out, &count};
  ASSERT_CUDA(cudaLaunchKernel(mixed_arguments, dim3(3), dim3(64), args, 0, s));
  // The arguments were copied by the call: changing them now changes nothing.
  tag = 0;
  f = Affine{0.0, 0, 0};
  big = 0;
  ASSERT_CUDA(cudaStreamSynchronize(s));
  std::vector<int> got(n);
  ASSERT_CUDA(cudaMemcpy(got.data(), out, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) ASSERT_EQ(got[i], h[i] * 2 + 3 * 4 + 7 + 345) << "at " << i;
  ASSERT_CUDA(cudaStreamDestroy(s));
  ASSERT_CUDA(cudaFree(in));
  ASSERT_CUDA(cudaFree(out));
}

TEST(LaunchKernel, CApiLaunchesAKernelGivenAsAVoidPointer) {
  const int n = 300;
  int* out = nullptr;
  ASSERT_CUDA(cudaMalloc(&out, n * sizeof(int)));
  int count = n, value = 0;
  void* args[] = {&out, &count, &value};
  // Seen with its type once (a launch by chevrons here); later launched through the C API.
  fill<<<1, 1>>>(out, 0, 0);
  value = 17;
  ASSERT_CUDA(cudaLaunchKernel(reinterpret_cast<const void*>(fill), dim3((n + 63) / 64), dim3(64), args, 0,
                               nullptr));
  std::vector<int> got(n);
  ASSERT_CUDA(cudaMemcpy(got.data(), out, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) ASSERT_EQ(got[i], 17) << "at " << i;
  ASSERT_CUDA(cudaFree(out));
}

TEST(LaunchKernel, CApiLaunchesKernelsTheProgramNeverLaunchedOrNamedBefore) {
  const int n = 64;
  std::vector<int> host(n);
  for (int i = 0; i < n; ++i) host[i] = i;
  int* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, n * sizeof(int)));
  ASSERT_CUDA(cudaMemcpy(d, host.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  void* reverse_args[] = {&d};
  ASSERT_CUDA(cudaLaunchKernel(reinterpret_cast<const void*>(reverse_block), dim3(1), dim3(n), reverse_args, 0,
                               nullptr));
  int amount = 1000;
  void* add_args[] = {&d, &amount};
  void (*add_ints)(int*, int) = add_to;
  ASSERT_CUDA(cudaLaunchKernel(reinterpret_cast<const void*>(add_ints), dim3(1), dim3(n), add_args, 0, nullptr));
  ASSERT_CUDA(cudaMemcpy(host.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) ASSERT_EQ(host[i], n - 1 - i + 1000) << "at " << i;
  ASSERT_CUDA(cudaFree(d));
  // The other overload, by its own address.
  float* f = nullptr;
  ASSERT_CUDA(cudaMalloc(&f, n * sizeof(float)));
  ASSERT_CUDA(cudaMemset(f, 0, n * sizeof(float)));
  float half = 0.5f;
  void* float_args[] = {&f, &half};
  void (*add_floats)(float*, float) = add_to;
  ASSERT_CUDA(cudaLaunchKernel(reinterpret_cast<const void*>(add_floats), dim3(1), dim3(n), float_args, 0, nullptr));
  std::vector<float> floats(n);
  ASSERT_CUDA(cudaMemcpy(floats.data(), f, n * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) ASSERT_EQ(floats[i], 0.5f) << "at " << i;
  ASSERT_CUDA(cudaFree(f));
}

TEST(LaunchKernel, KernelWithoutParametersTakesNullArgs) {
  ASSERT_CUDA(cudaLaunchKernel(no_arguments_kernel, dim3(2), dim3(32), nullptr, 0, nullptr));
  ASSERT_CUDA(cudaDeviceSynchronize());
}

TEST(LaunchKernel, BadConfigurationIsReturned) {
  // CUDA 13 says cudaErrorInvalidValue (measured on an H200, 2026-11-27; test_errors.cu).
  int* out = nullptr;
  int count = 0, value = 0;
  void* args[] = {&out, &count, &value};
  EXPECT_EQ(cudaLaunchKernel(fill, dim3(1), dim3(2048), args, 0, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaLaunchKernel(fill, dim3(0), dim3(32), args, 0, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
}

TEST(LaunchKernel, APointerThatIsNotAKernelIsAnInvalidResourceHandle) {
  // CUDA 13's answer, measured on an H200 (2026-11-27); older releases said cudaErrorInvalidDeviceFunction.
  int* out = nullptr;
  void* args[] = {&out};
  EXPECT_EQ(cudaLaunchKernel(reinterpret_cast<const void*>(not_a_kernel), dim3(1), dim3(1), args, 0, nullptr),
            cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidResourceHandle);
  int on_host = 0;
  EXPECT_EQ(cudaLaunchKernel(static_cast<const void*>(&on_host), dim3(1), dim3(1), args, 0, nullptr),
            cudaErrorInvalidResourceHandle);
  cudaGetLastError();
}

}  // namespace
