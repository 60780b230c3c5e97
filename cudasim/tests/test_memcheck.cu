// The simulator's profiler and sanitizer: exact memory-traffic counters, memcheck (out of
// bounds, use after free, host memory, misaligned, dynamic shared memory) and racecheck.
// This suite runs with CUDASIM_CHECK=race,shuffle (set by CMake), so every correct kernel here
// also proves that racecheck and the shuffled thread order raise no false alarm.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#ifdef CUDASIM

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace {

#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE((haystack).find(needle), std::string::npos) << "expected \"" << (needle) << "\" in:\n" << (haystack)

/// Runs `launch`, synchronises, and returns what the simulator printed; `expected` is the
/// error cudaDeviceSynchronize must return.
template <class Launch>
std::string report_of(Launch launch, cudaError_t expected) {
  testing::internal::CaptureStderr();
  launch();
  const cudaError_t synced = cudaDeviceSynchronize();
  const std::string report = testing::internal::GetCapturedStderr();
  EXPECT_EQ(synced, expected) << cudaGetErrorName(synced) << "\n" << report;
  return report;
}

class Memcheck : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(cudasim::stats_available()) << "this suite must be built with the instrumentation";
    cudasim::reset_stats();
  }
  void TearDown() override { EXPECT_EQ(cudaDeviceReset(), cudaSuccess); }
};

// ---- counters ---------------------------------------------------------------------------------

__global__ void copy(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}

TEST_F(Memcheck, ACopyKernelMovesTwoTimesNTimesFourBytes) {
  const int n = 1000;
  float *in, *out;
  ASSERT_EQ(cudaMalloc(&in, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&out, n * sizeof(float)), cudaSuccess);
  copy<<<(n + 127) / 128, 128>>>(in, out, n);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const cudasim::KernelStats s = cudasim::last_launch_stats();
  EXPECT_EQ(s.kernel_name, "copy");
  EXPECT_EQ(s.global_load_bytes, 4u * n);
  EXPECT_EQ(s.global_store_bytes, 4u * n);
  EXPECT_EQ(s.shared_bytes(), 0u);
  EXPECT_EQ(s.threads, 8u * 128u);
  EXPECT_EQ(s.blocks, 8u);
}

__global__ void naive_matmul(const float* a, const float* b, float* c, int n) {
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= n || col >= n) return;
  float acc = 0.0f;
  for (int k = 0; k < n; ++k) acc += a[row * n + k] * b[k * n + col];
  c[row * n + col] = acc;
}

template <int T>
__global__ void tiled_matmul(const float* a, const float* b, float* c, int n) {
  __shared__ float a_tile[T][T];
  __shared__ float b_tile[T][T];
  const int row = blockIdx.y * T + threadIdx.y;
  const int col = blockIdx.x * T + threadIdx.x;
  float acc = 0.0f;
  for (int k0 = 0; k0 < n; k0 += T) {
    a_tile[threadIdx.y][threadIdx.x] = a[row * n + k0 + threadIdx.x];
    b_tile[threadIdx.y][threadIdx.x] = b[(k0 + threadIdx.y) * n + col];
    __syncthreads();
    for (int k = 0; k < T; ++k) acc += a_tile[threadIdx.y][k] * b_tile[k][threadIdx.x];
    __syncthreads();
  }
  c[row * n + col] = acc;
}

class MatmulBytes : public Memcheck, public ::testing::WithParamInterface<int> {};

TEST_P(MatmulBytes, NaiveLoadsTwoNCubedFloatsAndTiledADivisionByTheTileFewer) {
  const std::uint64_t n = static_cast<std::uint64_t>(GetParam());
  float *a, *b, *c;
  ASSERT_EQ(cudaMalloc(&a, n * n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&b, n * n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&c, n * n * sizeof(float)), cudaSuccess);
  const dim3 block(16, 16), grid(static_cast<unsigned>(n / 16), static_cast<unsigned>(n / 16));

  naive_matmul<<<grid, block>>>(a, b, c, static_cast<int>(n));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  cudasim::KernelStats s = cudasim::last_launch_stats();
  EXPECT_EQ(s.global_load_bytes, 2 * n * n * n * 4);
  EXPECT_EQ(s.global_store_bytes, n * n * 4);

  tiled_matmul<16><<<grid, block>>>(a, b, c, static_cast<int>(n));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  s = cudasim::last_launch_stats();
  EXPECT_EQ(s.kernel_name, "tiled_matmul<16>");
  EXPECT_EQ(s.global_load_bytes, 2 * n * n * n * 4 / 16);
  EXPECT_EQ(s.global_store_bytes, n * n * 4);
  // Each thread stores two floats per tile step and reads 2*T of them.
  EXPECT_EQ(s.shared_store_bytes, n * n * (n / 16) * 2 * 4);
  EXPECT_EQ(s.shared_load_bytes, n * n * n * 2 * 4);
}

INSTANTIATE_TEST_SUITE_P(Sizes, MatmulBytes, ::testing::Values(16, 48, 64));

__global__ void copy_float4(const float4* in, float4* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}

TEST_F(Memcheck, AFloat4CopyCountsSixteenBytesPerElement) {
  const int n = 100;
  float4 *in, *out;
  ASSERT_EQ(cudaMalloc(&in, n * sizeof(float4)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&out, n * sizeof(float4)), cudaSuccess);
  copy_float4<<<1, 128>>>(in, out, n);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(cudasim::last_launch_stats().global_load_bytes, 16u * n);
  EXPECT_EQ(cudasim::last_launch_stats().global_store_bytes, 16u * n);
}

__global__ void scale_float4(const float4* in, float4* out, float s, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float4 v = in[i];  // one 16-byte load, then four reads of a local
  out[i] = make_float4(s * v.x, s * v.y, s * v.z, s * v.w);
}

TEST_F(Memcheck, AFloat4LoadedThenTakenApartCountsOnce) {
  const int n = 100;
  float4 *in, *out;
  ASSERT_EQ(cudaMalloc(&in, n * sizeof(float4)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&out, n * sizeof(float4)), cudaSuccess);
  scale_float4<<<1, 128>>>(in, out, 2.0f, n);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(cudasim::last_launch_stats().global_load_bytes, 16u * n);
  EXPECT_EQ(cudasim::last_launch_stats().global_store_bytes, 16u * n);
}

__global__ void count_into(int* counter, float* total) {
  atomicAdd(counter, 1);
  atomicAdd(total, 0.5f);
}

TEST_F(Memcheck, AtomicsAreCountedApartFromLoadsAndStores) {
  int* counter;
  float* total;
  ASSERT_EQ(cudaMalloc(&counter, sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&total, sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemset(counter, 0, sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMemset(total, 0, sizeof(float)), cudaSuccess);
  count_into<<<4, 64>>>(counter, total);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const cudasim::KernelStats s = cudasim::last_launch_stats();
  EXPECT_EQ(s.atomics, 2u * 256u);
  EXPECT_EQ(s.global_load_bytes + s.global_store_bytes, 0u);
  // Each atomic reads and writes its 4-byte operand: read-modify-write traffic.
  EXPECT_EQ(s.global_atomic_bytes, 2u * 256u * 2u * 4u);
  EXPECT_EQ(s.global_bytes(), s.global_atomic_bytes);
  int hits = 0;
  ASSERT_EQ(cudaMemcpy(&hits, counter, sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(hits, 256);
}

TEST_F(Memcheck, CopiesAreCountedByDirectionAndKernelsPerName) {
  const int n = 256;
  std::vector<float> host(n, 1.0f);
  float *in, *out;
  ASSERT_EQ(cudaMalloc(&in, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&out, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(in, host.data(), n * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  copy<<<2, 128>>>(in, out, n);
  copy<<<2, 128>>>(out, in, n);
  ASSERT_EQ(cudaMemcpy(host.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  const cudasim::TransferStats t = cudasim::transfer_stats();
  EXPECT_EQ(t.host_to_device_bytes, 4u * n);
  EXPECT_EQ(t.device_to_host_bytes, 4u * n);
  const std::vector<cudasim::KernelStats> kernels = cudasim::kernel_stats();
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].launches, 2u);
  EXPECT_EQ(kernels[0].global_bytes(), 2u * 2u * 4u * n);
}

// ---- memcheck -------------------------------------------------------------------------------------

__global__ void read_one_past_the_end(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) out[0] = in[i];  // the off-by-one: i == n reads past the end
}

TEST_F(Memcheck, AnOutOfBoundsReadNamesKernelThreadAndAllocation) {
  const int n = 100;
  float *in, *out;
  const int allocation_line = __LINE__ + 1;
  ASSERT_EQ(cudaMalloc(&in, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&out, sizeof(float)), cudaSuccess);
  const std::string report =
      report_of([&] { read_one_past_the_end<<<1, 128>>>(in, out, n); }, cudaErrorIllegalAddress);
  EXPECT_CONTAINS(report, "'read_one_past_the_end'");
  EXPECT_CONTAINS(report, "block (0,0,0), thread (100,0,0)");
  EXPECT_CONTAINS(report, "out-of-bounds global load of 4 bytes at byte 400 of the 400-byte allocation");
  EXPECT_CONTAINS(report, "test_memcheck.cu:" + std::to_string(allocation_line));
}

__global__ void write_one_past_the_end(float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n + 1) out[i] = 1.0f;
}

TEST_F(Memcheck, AnOutOfBoundsWriteOnePastTheEndIsCaught) {
  const int n = 64;
  float* out;
  ASSERT_EQ(cudaMalloc(&out, n * sizeof(float)), cudaSuccess);
  const std::string report = report_of([&] { write_one_past_the_end<<<1, 128>>>(out, n); }, cudaErrorIllegalAddress);
  EXPECT_CONTAINS(report, "thread (64,0,0)");
  EXPECT_CONTAINS(report, "out-of-bounds global store of 4 bytes");
  EXPECT_CONTAINS(report, "test_memcheck.cu:");  // the access's own line, through addr2line
}

__global__ void copy_one_float_too_many(const float* in, float* out, int n) {
  if (threadIdx.x == 0) memcpy(out, in, (n + 1) * sizeof(float));
}

TEST_F(Memcheck, AMemcpyInAKernelPastTheEndIsCaught) {
  const int n = 64;
  float *in, *out;
  ASSERT_EQ(cudaMalloc(&in, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&out, n * sizeof(float)), cudaSuccess);
  const std::string report =
      report_of([&] { copy_one_float_too_many<<<1, 32>>>(in, out, n); }, cudaErrorIllegalAddress);
  EXPECT_CONTAINS(report, "'copy_one_float_too_many'");
  EXPECT_CONTAINS(report, "out-of-bounds global load of 4 bytes at byte 256 of the 256-byte allocation");
  EXPECT_CONTAINS(report, "test_memcheck.cu:");  // the call's own line
}

TEST_F(Memcheck, UseAfterFreeIsNamedAsSuch) {
  float *in, *out;
  ASSERT_EQ(cudaMalloc(&in, 64 * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&out, 64 * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaFree(in), cudaSuccess);
  const std::string report = report_of([&] { copy<<<1, 64>>>(in, out, 64); }, cudaErrorIllegalAddress);
  EXPECT_CONTAINS(report, "use after free");
}

TEST_F(Memcheck, AKernelGivenAHostPointerIsStopped) {
  std::vector<float> host(64, 1.0f);
  float* out;
  ASSERT_EQ(cudaMalloc(&out, 64 * sizeof(float)), cudaSuccess);
  const std::string report = report_of([&] { copy<<<1, 64>>>(host.data(), out, 64); }, cudaErrorIllegalAddress);
  EXPECT_CONTAINS(report, "host memory");
  EXPECT_CONTAINS(report, "thread (0,0,0)");
}

// A thread that renames itself would have its accesses counted and race-checked as another
// thread's (found by a red-team run: thread 0 of each block did the block's work under each
// thread's name). nvcc refuses the write, the built-ins being const; here it is a fault.
__global__ void rename_as_thread(unsigned* out, unsigned name) {
  *static_cast<volatile unsigned*>(&threadIdx.x) = name;
  out[threadIdx.x] = 1u;
}

__global__ void move_to_block(unsigned* out, unsigned block) {
  if (threadIdx.x == 5) *static_cast<volatile unsigned*>(&blockIdx.x) = block;
  out[threadIdx.x] = blockIdx.x;
}

__global__ void copy_over_thread_index(unsigned* out, uint3 name) {
  threadIdx = name;  // a struct copy, which the compiler may make a memcpy call
  out[threadIdx.x] = 1u;
}

__global__ void write_2d_index(unsigned* out) {  // a 2-D block: the simulator sets all of threadIdx
  out[threadIdx.y * blockDim.x + threadIdx.x] = threadIdx.y * 100 + threadIdx.x;
}

TEST_F(Memcheck, AKernelThatWritesABuiltInIsStopped) {
  unsigned* out;
  ASSERT_EQ(cudaMalloc(&out, 64 * sizeof(unsigned)), cudaSuccess);
  std::string report = report_of([&] { rename_as_thread<<<1, 32>>>(out, 7); }, cudaErrorLaunchFailure);
  EXPECT_CONTAINS(report, "'rename_as_thread'");
  EXPECT_CONTAINS(report, "store to threadIdx: threadIdx, blockIdx, blockDim and gridDim are read-only");
  EXPECT_CONTAINS(report, "thread (0,0,0)");
  ASSERT_EQ(cudaDeviceReset(), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&out, 64 * sizeof(unsigned)), cudaSuccess);
  report = report_of([&] { move_to_block<<<1, 32>>>(out, 3); }, cudaErrorLaunchFailure);
  EXPECT_CONTAINS(report, "store to blockIdx");
  EXPECT_CONTAINS(report, "thread (5,0,0)");
  ASSERT_EQ(cudaDeviceReset(), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&out, 64 * sizeof(unsigned)), cudaSuccess);
  report = report_of([&] { copy_over_thread_index<<<1, 32>>>(out, uint3{3, 0, 0}); }, cudaErrorLaunchFailure);
  EXPECT_CONTAINS(report, "store to threadIdx");
}

TEST_F(Memcheck, TheSimulatorsOwnIndexUpdatesAreNoWrites) {
  unsigned* out;
  ASSERT_EQ(cudaMalloc(&out, 64 * sizeof(unsigned)), cudaSuccess);
  write_2d_index<<<2, dim3(8, 4)>>>(out);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<unsigned> host(32);
  ASSERT_EQ(cudaMemcpy(host.data(), out, 32 * sizeof(unsigned), cudaMemcpyDeviceToHost), cudaSuccess);
  for (unsigned y = 0; y < 4; ++y)
    for (unsigned x = 0; x < 8; ++x) EXPECT_EQ(host[y * 8 + x], y * 100 + x);
}

TEST_F(Memcheck, AMisalignedVectorLoadIsReported) {
  float4 *in, *out;
  ASSERT_EQ(cudaMalloc(&in, 8 * sizeof(float4)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&out, 8 * sizeof(float4)), cudaSuccess);
  const float4* shifted = reinterpret_cast<const float4*>(reinterpret_cast<const float*>(in) + 1);
  const std::string report = report_of([&] { copy_float4<<<1, 4>>>(shifted, out, 4); }, cudaErrorMisalignedAddress);
  EXPECT_CONTAINS(report, "misaligned global load of 16 bytes");
}

/// Three floats, aligned to 4 as on a GPU: the host compiler may copy two fields at once.
struct Point3 {
  float x, y, z;
};
__global__ void move_points(const Point3* in, Point3* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = Point3{in[i].x + 1.0f, in[i].y, in[i].z};
}

TEST_F(Memcheck, AStructOfThreeFloatsIsNotMisaligned) {
  // Every other element starts at a multiple of 4 that is not one of 8. A GPU stores the
  // struct field by field; the host compiler may use one 8-byte access for two fields, which
  // must not be reported as misaligned.
  const int n = 64;
  Point3 *in, *out;
  ASSERT_EQ(cudaMalloc(&in, n * sizeof(Point3)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&out, n * sizeof(Point3)), cudaSuccess);
  std::vector<Point3> host(n);
  for (int i = 0; i < n; ++i) host[i] = Point3{float(i), float(2 * i), float(3 * i)};
  ASSERT_EQ(cudaMemcpy(in, host.data(), n * sizeof(Point3), cudaMemcpyHostToDevice), cudaSuccess);
  move_points<<<2, 32>>>(in, out, n);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(host.data(), out, n * sizeof(Point3), cudaMemcpyDeviceToHost), cudaSuccess);
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(host[i].x, float(i) + 1.0f) << i;
    EXPECT_EQ(host[i].z, float(3 * i)) << i;
  }
  cudaFree(in);
  cudaFree(out);
}

__global__ void fill_dynamic_shared(float* out, int count) {
  extern __shared__ float scratch[];
  for (int i = threadIdx.x; i < count; i += blockDim.x) scratch[i] = 1.0f;
  __syncthreads();
  if (threadIdx.x == 0) out[0] = scratch[0];
}

TEST_F(Memcheck, DynamicSharedMemoryBeyondWhatTheLaunchAskedForIsCaught) {
  float* out;
  ASSERT_EQ(cudaMalloc(&out, sizeof(float)), cudaSuccess);
  // 64 floats asked for, 65 written.
  const std::string report =
      report_of([&] { fill_dynamic_shared<<<1, 32, 64 * sizeof(float)>>>(out, 65); }, cudaErrorIllegalAddress);
  EXPECT_CONTAINS(report, "dynamic shared memory, but the launch asked for 256 bytes");
  // The same kernel within bounds runs clean and counts its shared traffic (after a reset:
  // the fault left the context's error sticky, as on a GPU).
  ASSERT_EQ(cudaDeviceReset(), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&out, sizeof(float)), cudaSuccess);
  cudasim::reset_stats();
  const std::string clean = report_of([&] { fill_dynamic_shared<<<1, 32, 64 * sizeof(float)>>>(out, 64); }, cudaSuccess);
  EXPECT_EQ(clean, "");
  EXPECT_EQ(cudasim::last_launch_stats().shared_store_bytes, 64u * 4u);
  EXPECT_EQ(cudasim::last_launch_stats().shared_load_bytes, 4u);
}

// ---- racecheck and the shuffled order ---------------------------------------------------------------

template <int T>
__global__ void tiled_matmul_missing_second_barrier(const float* a, const float* b, float* c, int n) {
  __shared__ float a_tile[T][T];
  __shared__ float b_tile[T][T];
  const int row = blockIdx.y * T + threadIdx.y;
  const int col = blockIdx.x * T + threadIdx.x;
  float acc = 0.0f;
  for (int k0 = 0; k0 < n; k0 += T) {
    a_tile[threadIdx.y][threadIdx.x] = a[row * n + k0 + threadIdx.x];
    b_tile[threadIdx.y][threadIdx.x] = b[(k0 + threadIdx.y) * n + col];
    __syncthreads();
    for (int k = 0; k < T; ++k) acc += a_tile[threadIdx.y][k] * b_tile[k][threadIdx.x];
    // missing: __syncthreads(); the next iteration overwrites tiles others still read
  }
  c[row * n + col] = acc;
}

TEST_F(Memcheck, AMissingBarrierInATiledKernelIsARace) {
  const int n = 32;
  float *a, *b, *c;
  ASSERT_EQ(cudaMalloc(&a, n * n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&b, n * n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&c, n * n * sizeof(float)), cudaSuccess);
  const std::string report = report_of(
      [&] { tiled_matmul_missing_second_barrier<16><<<dim3(2, 2), dim3(16, 16)>>>(a, b, c, n); },
      cudaErrorLaunchFailure);
  EXPECT_CONTAINS(report, "race on shared memory");
  EXPECT_CONTAINS(report, "'tiled_matmul_missing_second_barrier<16>'");
  EXPECT_CONTAINS(report, "__syncthreads()");
  // Both accesses are named by this file's lines, not by the rewritten copy the compiler saw
  // (see run_programs/race_after_a_barrier.cu for a case where binutils' addr2line did that).
  const std::string here = std::string(__FILE__).substr(std::string(__FILE__).find_last_of('/') + 1);
  const std::size_t first = report.find(here + ":");
  ASSERT_NE(first, std::string::npos) << report;
  EXPECT_NE(report.find(here + ":", first + 1), std::string::npos) << report;
  EXPECT_EQ(report.find(".sim.cpp"), std::string::npos) << report;
}

TEST_F(Memcheck, TheCorrectTiledKernelRaisesNoReport) {
  const int n = 32;
  float *a, *b, *c;
  ASSERT_EQ(cudaMalloc(&a, n * n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&b, n * n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&c, n * n * sizeof(float)), cudaSuccess);
  const std::string report = report_of([&] { tiled_matmul<16><<<dim3(2, 2), dim3(16, 16)>>>(a, b, c, n); }, cudaSuccess);
  EXPECT_EQ(report, "");
}

// Each thread writes its own byte (or 2-byte value) of a shared word, then, after a barrier,
// reads all of them: neighbours touch the same 4-byte word but different bytes.
template <typename T>
__global__ void adjacent_narrow_writes(T* out) {
  __shared__ T values[64];
  values[threadIdx.x] = static_cast<T>(threadIdx.x);
  __syncthreads();
  T sum = 0;
  for (int i = 0; i < 64; ++i) sum = static_cast<T>(sum + values[i]);
  if (threadIdx.x == 0) *out = sum;
}

// Two threads write the same byte in one barrier interval: a race however narrow the value.
__global__ void same_byte_written_twice(char* out) {
  __shared__ char value[4];
  if (threadIdx.x < 2) value[1] = static_cast<char>(threadIdx.x);
  __syncthreads();
  if (threadIdx.x == 0) *out = value[1];
}

TEST_F(Memcheck, RacecheckIsByteGranular) {
  char* c;
  short* h;
  ASSERT_EQ(cudaMalloc(&c, sizeof(char)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&h, sizeof(short)), cudaSuccess);
  EXPECT_EQ(report_of([&] { adjacent_narrow_writes<char><<<1, 64>>>(c); }, cudaSuccess), "");
  EXPECT_EQ(report_of([&] { adjacent_narrow_writes<short><<<1, 64>>>(h); }, cudaSuccess), "");
  const std::string report = report_of([&] { same_byte_written_twice<<<1, 32>>>(c); }, cudaErrorLaunchFailure);
  EXPECT_CONTAINS(report, "race on shared memory");
  EXPECT_CONTAINS(report, "writes 1 bytes");
}

// Dynamic shared memory declared at namespace scope, as many tutorials and samples declare it.
// The simulator keeps a pointer to it per OS thread, set up on the thread's first use (behind a
// guard byte that the block's first thread writes and every thread then reads): none of that is
// the kernel's shared memory, so it raises no race; the array itself is checked as any other.
extern __shared__ int namespace_scratch[];

__global__ void sum_through_namespace_scratch(int* out, bool with_barrier) {
  namespace_scratch[threadIdx.x] = static_cast<int>(threadIdx.x);
  if (with_barrier) __syncthreads();
  if (threadIdx.x == 0) {
    int sum = 0;
    for (unsigned t = 0; t < blockDim.x; ++t) sum += namespace_scratch[t];
    out[blockIdx.x] = sum;
  }
}

TEST_F(Memcheck, NamespaceScopeDynamicSharedMemoryIsRaceCheckedAsTheKernelUsesIt) {
  int* sums;
  ASSERT_EQ(cudaMalloc(&sums, 4 * sizeof(int)), cudaSuccess);
  EXPECT_EQ(report_of([&] { sum_through_namespace_scratch<<<4, 32, 32 * sizeof(int)>>>(sums, true); }, cudaSuccess),
            "");
  std::vector<int> host(4);
  ASSERT_EQ(cudaMemcpy(host.data(), sums, sizeof(int) * 4, cudaMemcpyDeviceToHost), cudaSuccess);
  for (int v : host) EXPECT_EQ(v, 32 * 31 / 2);
  const std::string report = report_of(
      [&] { sum_through_namespace_scratch<<<4, 32, 32 * sizeof(int)>>>(sums, false); }, cudaErrorLaunchFailure);
  EXPECT_CONTAINS(report, "race on shared memory");
  EXPECT_CONTAINS(report, "4 bytes");  // an int of the array, not the guard's byte
  ASSERT_EQ(cudaFree(sums), cudaSuccess);
}

// A warp's threads exchange values through shared memory, ordered by __syncwarp() (as in the
// last steps of NVIDIA's reductions for Volta and later): no race. With `across_warps`, lane l
// reads what the other warp's lane l wrote, which __syncwarp() does not order: a race.
__global__ void exchange_after_syncwarp(int* out, bool across_warps) {
  __shared__ int values[64];
  values[threadIdx.x] = static_cast<int>(threadIdx.x);
  __syncwarp();
  const unsigned partner = across_warps ? threadIdx.x ^ 32u : threadIdx.x ^ 1u;
  out[threadIdx.x] = values[partner];
}

// The tiled kernel above with its second block barrier swapped for __syncwarp(): every warp
// read the tile, so the next tile's writes still race with the other warps' reads.
template <int T>
__global__ void tiled_matmul_syncwarp_for_second_barrier(const float* a, const float* b, float* c, int n) {
  __shared__ float as[T][T], bs[T][T];
  const int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
  float sum = 0;
  for (int k0 = 0; k0 < n; k0 += T) {
    as[threadIdx.y][threadIdx.x] = a[row * n + k0 + threadIdx.x];
    bs[threadIdx.y][threadIdx.x] = b[(k0 + threadIdx.y) * n + col];
    __syncthreads();
    for (int k = 0; k < T; ++k) sum += as[threadIdx.y][k] * bs[k][threadIdx.x];
    __syncwarp();
  }
  c[row * n + col] = sum;
}

TEST_F(Memcheck, SyncwarpOrdersTheSharedMemoryOfItsLanesOnly) {
  int* out;
  ASSERT_EQ(cudaMalloc(&out, 64 * sizeof(int)), cudaSuccess);
  EXPECT_EQ(report_of([&] { exchange_after_syncwarp<<<1, 64>>>(out, false); }, cudaSuccess), "");
  const std::string report = report_of([&] { exchange_after_syncwarp<<<1, 64>>>(out, true); }, cudaErrorLaunchFailure);
  EXPECT_CONTAINS(report, "race on shared memory");
}

TEST_F(Memcheck, ASyncwarpInPlaceOfABlockBarrierStillRaces) {
  const int n = 32;
  float *a, *b, *c;
  ASSERT_EQ(cudaMalloc(&a, n * n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&b, n * n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&c, n * n * sizeof(float)), cudaSuccess);
  const std::string tiled = report_of(
      [&] { tiled_matmul_syncwarp_for_second_barrier<16><<<dim3(2, 2), dim3(16, 16)>>>(a, b, c, n); },
      cudaErrorLaunchFailure);
  EXPECT_CONTAINS(tiled, "race on shared memory");
}

__global__ void last_writer_after_barrier(int* out) {
  __syncthreads();
  *out = static_cast<int>(threadIdx.x);  // which thread writes last depends on the order
}

TEST_F(Memcheck, TheShuffledOrderChangesWhichThreadRunsLast) {
  int* out;
  ASSERT_EQ(cudaMalloc(&out, sizeof(int)), cudaSuccess);
  last_writer_after_barrier<<<1, 256>>>(out);
  int last = -1;
  ASSERT_EQ(cudaMemcpy(&last, out, sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  // In thread order thread 255 would write last; the seeded shuffle makes that unlikely and
  // reproducible (the same seed gives the same order on every run).
  EXPECT_NE(last, 255);
  int again = -1;
  last_writer_after_barrier<<<1, 256>>>(out);
  ASSERT_EQ(cudaMemcpy(&again, out, sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(again, last);
}

/// Thread 0 copies the first n floats of `in` with std::copy: for floats, libstdc++'s
/// out-of-line code calls memmove, which only the simulator's wrapper of the C library sees.
__global__ void copy_with_the_standard_library(const float* in, float* out, int n) {
  if (threadIdx.x == 0) std::copy(in, in + n, out);
}

TEST(LibraryCopies, WhatLibraryCodeMovesForAKernelIsCountedAndChecked) {
  const int n = 1000;
  float *in = nullptr, *out = nullptr;
  ASSERT_EQ(cudaMalloc(&in, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&out, n * sizeof(float)), cudaSuccess);
  cudasim::reset_stats();
  copy_with_the_standard_library<<<1, 32>>>(in, out, n);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const cudasim::KernelStats k = cudasim::last_launch_stats();
  EXPECT_EQ(k.global_load_bytes, 4u * n);
  EXPECT_EQ(k.global_store_bytes, 4u * n);
  // One float too many: memcheck names the copy as the kernel's access past the allocation.
  const std::string report = report_of([&] { copy_with_the_standard_library<<<1, 32>>>(in, out, n + 1); },
                                       cudaErrorIllegalAddress);
  EXPECT_CONTAINS(report, "copy_with_the_standard_library");
  EXPECT_EQ(cudaDeviceReset(), cudaSuccess);
}

/// Each thread copies 16 floats with std::copy, a size the compiler knows: libstdc++'s
/// __builtin_memmove then became moves inside the kernel that no hook saw (nothing counted, no
/// memcheck) until cudasim/builtin_memory.hpp made the builtin a counted call.
__global__ void copy_sixteen_with_the_standard_library(const float* in, float* out) {
  const int i = 16 * static_cast<int>(threadIdx.x);
  std::copy(in + i, in + i + 16, out + i);
}

TEST(LibraryCopies, ACopyOfAKnownSizeInlinedFromTheStandardLibraryIsCountedAndChecked) {
  const int threads = 64;
  float *in = nullptr, *out = nullptr;
  ASSERT_EQ(cudaMalloc(&in, threads * 16 * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&out, (threads * 16 - 1) * sizeof(float)), cudaSuccess);  // the last float missing
  const std::string report = report_of([&] { copy_sixteen_with_the_standard_library<<<1, threads>>>(in, out); },
                                       cudaErrorIllegalAddress);
  EXPECT_CONTAINS(report, "copy_sixteen_with_the_standard_library");
  EXPECT_CONTAINS(report, "out-of-bounds");
  EXPECT_EQ(cudaDeviceReset(), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&in, threads * 16 * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&out, threads * 16 * sizeof(float)), cudaSuccess);
  cudasim::reset_stats();
  copy_sixteen_with_the_standard_library<<<1, threads>>>(in, out);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const cudasim::KernelStats k = cudasim::last_launch_stats();
  EXPECT_EQ(k.global_load_bytes, 64u * threads);
  EXPECT_EQ(k.global_store_bytes, 64u * threads);
  EXPECT_EQ(cudaFree(in), cudaSuccess);
  EXPECT_EQ(cudaFree(out), cudaSuccess);
}

TEST(LibraryCopiesDeathTest, HostMemcpyOfDeviceMemoryEndsTheProgramAsOnAGpu) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  float* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, 64), cudaSuccess);
  float host[4] = {};
  void* (*volatile copy)(void*, const void*, std::size_t) = std::memcpy;  // not a counted name
  EXPECT_DEATH(copy(host, device, sizeof host), "device memory from cudaMalloc is not the host's");
  cudaFree(device);
}

}  // namespace

#endif  // CUDASIM
