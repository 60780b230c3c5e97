// The simulator's counters of how a kernel does its work (cudasim/stats.hpp) and the modelled
// GPU clock built on them (cudasim/gpu_model.hpp): coalescing, access widths, the span of the
// longest thread, atomics as read-modify-write traffic and their contention, warp operations,
// barriers, mma operations, and what the model makes of them. Every figure is exact.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#ifdef CUDASIM

#include <cudasim/link_model.hpp>
#include <cuda_fp16.h>
#include <mma.h>

#include <cstring>
#include <string>
#include <vector>

#include "roofline_model.hpp"  // lesson 02's table of GPUs: the model's must be the same

namespace {

class Counters : public ::testing::Test {
 protected:
  void SetUp() override { cudasim::reset_stats(); }
  template <class T>
  T* device_array(std::size_t n) {
    T* p = nullptr;
    EXPECT_EQ(cudaMalloc(&p, n * sizeof(T)), cudaSuccess);
    EXPECT_EQ(cudaMemset(p, 0, n * sizeof(T)), cudaSuccess);
    buffers_.push_back(p);
    return p;
  }
  void TearDown() override {
    for (void* p : buffers_) cudaFree(p);
  }
  static cudasim::KernelStats run_and_count() {
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    return cudasim::last_launch_stats();
  }

 private:
  std::vector<void*> buffers_;
};

__global__ void copy_coalesced(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}

__global__ void copy_strided(const float* in, float* out, int stride) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = in[i * stride];
}

__global__ void copy_rows(const float* in, float* out, int width) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
  out[row * width + col] = in[row * width + col];
}

__global__ void copy_float4(const float4* in, float4* out, int n4) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) out[i] = in[i];
}

__global__ void add_in_one_thread(const float* a, const float* b, float* c, int n) {
  for (int i = 0; i < n; ++i) c[i] = a[i] + b[i];
}

__global__ void add_grid_stride(const float* a, const float* b, float* c, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) c[i] = a[i] + b[i];
}

__global__ void sum_with_one_atomic_per_thread(const float* x, float* total) { atomicAdd(total, x[threadIdx.x]); }

__global__ void block_sum_with_shuffles(const float* x, float* total) {
  __shared__ float warp_sums[8];
  float v = x[blockIdx.x * blockDim.x + threadIdx.x];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0;
    for (int w = 0; w < 8; ++w) s += warp_sums[w];
    atomicAdd(total, s);
  }
}

/// c = a * b for 16 x 16 tiles, with one warp's wmma (bf16 or fp16 operands, B in `LayoutB`).
template <class T, class LayoutB>
__global__ void one_mma(const T* a, const T* b, float* c) {
  using namespace nvcuda;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, T, LayoutB> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::fill_fragment(fc, 0.0f);
  wmma::load_matrix_sync(fa, a, 16);
  wmma::load_matrix_sync(fb, b, 16);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
}

/// Warp 0 of the block issues three mma_syncs, every other warp one.
__global__ void uneven_mma(const __nv_bfloat16* a, const __nv_bfloat16* b, float* c) {
  using namespace nvcuda;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::fill_fragment(fc, 0.0f);
  wmma::load_matrix_sync(fa, a, 16);
  wmma::load_matrix_sync(fb, b, 16);
  const int repeats = threadIdx.x / 32 == 0 ? 3 : 1;
  for (int r = 0; r < repeats; ++r) wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(c + (threadIdx.x / 32) * 256, fc, 16, wmma::mem_row_major);
}

TEST_F(Counters, ACoalescedFloatAccessIsOneRequestOfFourSectorsPerWarp) {
  const int n = 1024;
  float* in = device_array<float>(n);
  float* out = device_array<float>(n);
  copy_coalesced<<<n / 256, 256>>>(in, out, n);
  const cudasim::KernelStats s = run_and_count();
  EXPECT_EQ(s.global_requests, 2u * n / 32);  // a load and a store per warp
  EXPECT_EQ(s.global_sectors, 4u * 2u * n / 32);
  EXPECT_DOUBLE_EQ(s.sectors_per_request(), 4.0);
  EXPECT_EQ(s.global_accesses_by_width[2], 2u * n);  // 4-byte accesses
}

TEST_F(Counters, EachDevicesKernelsAreCountedOnTheirDevice) {
  // Device 1 copies twice as much as device 0: per kernel the two add up, per device they do not.
  const int n = 1024;
  float* in = device_array<float>(n);
  float* out = device_array<float>(n);
  copy_coalesced<<<n / 256, 256>>>(in, out, n);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  float *in1 = nullptr, *out1 = nullptr;
  ASSERT_EQ(cudaMalloc(&in1, 2 * n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&out1, 2 * n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemset(in1, 0, 2 * n * sizeof(float)), cudaSuccess);
  copy_coalesced<<<2 * n / 256, 256>>>(in1, out1, 2 * n);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(cudaFree(in1), cudaSuccess);
  EXPECT_EQ(cudaFree(out1), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  const std::vector<cudasim::KernelStats> devices = cudasim::device_kernel_stats();
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].global_bytes(), 8u * n);
  EXPECT_EQ(devices[1].global_bytes(), 16u * n);
  EXPECT_EQ(devices[1].launches, 1u);
  cudasim::reset_stats();
  EXPECT_TRUE(cudasim::device_kernel_stats().empty());
}

TEST_F(Counters, AStridedAccessTouchesASectorPerLane) {
  const int threads = 256, stride = 32;
  float* in = device_array<float>(threads * stride);
  float* out = device_array<float>(threads);
  copy_strided<<<1, threads>>>(in, out, stride);
  const cudasim::KernelStats s = run_and_count();
  EXPECT_EQ(s.global_requests, 2u * threads / 32);
  // Loads: 32 sectors per request (one per lane); stores: 4, coalesced.
  EXPECT_EQ(s.global_sectors, 32u * threads / 32 + 4u * threads / 32);
}

TEST_F(Counters, AWarpSpanningTwoRowsOfA2DBlockTouchesEachRowsSectors) {
  // 16 x 16 blocks: a warp is two half-rows of 16 floats, 64 bytes each, far apart in memory.
  const int width = 1024, height = 32;
  float* in = device_array<float>(width * height);
  float* out = device_array<float>(width * height);
  copy_rows<<<dim3(width / 16, height / 16), dim3(16, 16)>>>(in, out, width);
  const cudasim::KernelStats s = run_and_count();
  const unsigned warps = width * height / 32;
  EXPECT_EQ(s.global_requests, 2u * warps);
  EXPECT_EQ(s.global_sectors, 2u * 4u * warps);  // 2 sectors per half-row
}

TEST_F(Counters, AVectorAccessIsOneSixteenByteAccess) {
  const int n4 = 256;
  float4* in = device_array<float4>(n4);
  float4* out = device_array<float4>(n4);
  copy_float4<<<1, n4>>>(in, out, n4);
  const cudasim::KernelStats s = run_and_count();
  EXPECT_EQ(s.global_load_bytes, 16u * n4);
  EXPECT_EQ(s.global_accesses_by_width[4], 2u * n4) << "a float4 copy must be one 16-byte load and store";
  EXPECT_EQ(s.global_accesses_by_width[2], 0u);
  EXPECT_EQ(s.global_sectors, 2u * 16u * n4 / 32);  // 16 sectors per warp-wide request
}

TEST_F(Counters, TheSpanIsTheLongestThreadsAccesses) {
  const int n = 4096;
  float* a = device_array<float>(n);
  float* b = device_array<float>(n);
  float* c = device_array<float>(n);
  add_in_one_thread<<<1, 1>>>(a, b, c, n);
  const cudasim::KernelStats one = run_and_count();
  EXPECT_EQ(one.span_global_ops, 3u * n);
  EXPECT_EQ(one.global_bytes(), 12u * n);
  add_grid_stride<<<n / 256, 256>>>(a, b, c, n);
  const cudasim::KernelStats many = run_and_count();
  EXPECT_EQ(many.span_global_ops, 3u);
  EXPECT_EQ(many.global_bytes(), one.global_bytes()) << "the same bytes: only the span tells them apart";
  add_grid_stride<<<1, 256>>>(a, b, c, n);
  EXPECT_EQ(run_and_count().span_global_ops, 3u * n / 256);
}

__global__ void fill_in_one_thread(float* out, int n) {
  if (threadIdx.x == 0)
    for (int i = 0; i < n; ++i) out[i] = 0.0f;
}

__global__ void copy_with_memcpy(const float* in, float* out, int n) {
  const int chunk = n / blockDim.x;
  std::memcpy(out + threadIdx.x * chunk, in + threadIdx.x * chunk, chunk * sizeof(float));
}

__global__ void clear_with_memset(float* out, int n) {
  if (threadIdx.x == 0) memset(out, 0, n * sizeof(float));
}

// A compiler turns a loop that fills or copies an array into a call of the C library's memset
// or memcpy, which no counter sees: a kernel whose one thread fills the whole array had counted
// no bytes at all (and been modelled as fast as a launch). Calls a kernel makes itself are
// counted as the loads and stores of such a loop: 16-byte pieces where aligned.
TEST_F(Counters, LoopsTheCompilerCouldTurnIntoMemsetAndCallsOfMemcpyOrMemsetAreCounted) {
  const int n = 4096;
  float* in = device_array<float>(n);
  float* out = device_array<float>(n);
  fill_in_one_thread<<<1, 32>>>(out, n);
  const cudasim::KernelStats fill = run_and_count();
  EXPECT_EQ(fill.global_store_bytes, 4u * n);
  EXPECT_EQ(fill.span_global_ops, static_cast<std::uint64_t>(n));
  copy_with_memcpy<<<1, 32>>>(in, out, n);
  const cudasim::KernelStats copied = run_and_count();
  EXPECT_EQ(copied.global_load_bytes, 4u * n);
  EXPECT_EQ(copied.global_store_bytes, 4u * n);
  EXPECT_EQ(copied.global_accesses_by_width[4], 2u * n / 4) << "16-byte pieces";
  EXPECT_EQ(copied.span_global_ops, 2u * n / 4 / 32);
  clear_with_memset<<<1, 32>>>(out, n);
  const cudasim::KernelStats cleared = run_and_count();
  EXPECT_EQ(cleared.global_store_bytes, 4u * n);
  EXPECT_EQ(cleared.span_global_ops, static_cast<std::uint64_t>(n / 4));
}

TEST_F(Counters, AtomicsAreReadModifyWriteTrafficAndContentionIsCounted) {
  const int threads = 256;
  float* x = device_array<float>(threads);
  float* total = device_array<float>(1);
  sum_with_one_atomic_per_thread<<<1, threads>>>(x, total);
  const cudasim::KernelStats s = run_and_count();
  EXPECT_EQ(s.global_atomics, unsigned(threads));
  EXPECT_EQ(s.global_atomic_bytes, 2u * 4u * threads);
  EXPECT_EQ(s.global_bytes(), 4u * threads + 2u * 4u * threads);
  EXPECT_EQ(s.max_atomics_same_address, unsigned(threads));
  EXPECT_EQ(s.max_atomics_per_block, unsigned(threads)) << "one block, every thread's atomic";
}

TEST_F(Counters, WarpOperationsAndBarriersAreCountedPerThread) {
  const int blocks = 4, threads = 256;
  float* x = device_array<float>(blocks * threads);
  float* total = device_array<float>(1);
  block_sum_with_shuffles<<<blocks, threads>>>(x, total);
  const cudasim::KernelStats s = run_and_count();
  EXPECT_EQ(s.warp_ops, 5u * blocks * threads);  // five shuffles per thread
  EXPECT_EQ(s.span_warp_ops, 5u) << "the longest thread's warp operations";
  EXPECT_EQ(s.barrier_arrivals, 1u * blocks * threads);
  EXPECT_EQ(s.global_atomics, unsigned(blocks));
  EXPECT_EQ(s.max_atomics_same_address, unsigned(blocks));
  EXPECT_EQ(s.max_atomics_per_block, 1u) << "each block reduced first, then made one atomic";
  EXPECT_EQ(s.shared_store_bytes, 4u * 8u * blocks);
  EXPECT_EQ(s.span_shared_ops, 9u);  // thread 0 stores its warp's sum and reads all eight
}

TEST_F(Counters, AWarpsMmaSyncIsOneOperationAndItsTileLoadsOneRequestEach) {
  __nv_bfloat16* a = device_array<__nv_bfloat16>(256);
  __nv_bfloat16* b = device_array<__nv_bfloat16>(256);
  float* c = device_array<float>(256);
  one_mma<__nv_bfloat16, nvcuda::wmma::row_major><<<1, 32>>>(a, b, c);
  const cudasim::KernelStats s = run_and_count();
  EXPECT_EQ(s.mma_ops, 1u);
  EXPECT_EQ(s.fragment_loads, 2u) << "the A and B tiles, once per warp";
  EXPECT_EQ(s.fragment_stores, 1u) << "the accumulator, once per warp";
  EXPECT_EQ(s.global_requests, 3u);                      // two tile loads, one tile store
  EXPECT_EQ(s.global_sectors, 512u / 32 * 2 + 1024u / 32);  // every byte once
  EXPECT_EQ(s.span_global_ops, 3u);
}

TEST_F(Counters, TheBusiestWarpsMmaSyncsAreItsSpan) {
  __nv_bfloat16* a = device_array<__nv_bfloat16>(256);
  __nv_bfloat16* b = device_array<__nv_bfloat16>(256);
  float* c = device_array<float>(4 * 256);
  uneven_mma<<<2, 128>>>(a, b, c);
  const cudasim::KernelStats s = run_and_count();
  EXPECT_EQ(s.mma_ops, 2u * (3 + 1 + 1 + 1));
  EXPECT_EQ(s.span_mma_ops, 3u) << "warp 0 of each block issued three";
}

TEST_F(Counters, AHalfPrecisionMmaSyncComputesTheProduct) {
  // a[i][k] = i + k, b stored column-major with b[k][j] = k - j (small integers: exact in fp16).
  std::vector<__half> ha(256), hb(256);
  for (int i = 0; i < 16; ++i)
    for (int k = 0; k < 16; ++k) ha[i * 16 + k] = __float2half(float(i + k));
  for (int k = 0; k < 16; ++k)
    for (int j = 0; j < 16; ++j) hb[j * 16 + k] = __float2half(float(k - j));
  __half* a = device_array<__half>(256);
  __half* b = device_array<__half>(256);
  float* c = device_array<float>(256);
  ASSERT_EQ(cudaMemcpy(a, ha.data(), 256 * sizeof(__half), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(b, hb.data(), 256 * sizeof(__half), cudaMemcpyHostToDevice), cudaSuccess);
  one_mma<__half, nvcuda::wmma::col_major><<<1, 32>>>(a, b, c);
  EXPECT_EQ(run_and_count().mma_ops, 1u);
  std::vector<float> hc(256);
  ASSERT_EQ(cudaMemcpy(hc.data(), c, 256 * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j) {
      float want = 0;
      for (int k = 0; k < 16; ++k) want += float(i + k) * float(k - j);
      EXPECT_EQ(hc[i * 16 + j], want) << i << "," << j;
    }
}

// ---- the model ---------------------------------------------------------------------------------

TEST_F(Counters, TheModelMakesOneThreadWalkingTheArrayFarSlowerThanAGrid) {
  const int n = 1 << 16;
  float* a = device_array<float>(n);
  float* b = device_array<float>(n);
  float* c = device_array<float>(n);
  add_grid_stride<<<n / 256, 256>>>(a, b, c, n);
  const cudasim::ModelledTime grid = run_and_count().modelled;
  add_grid_stride<<<1, 256>>>(a, b, c, n);
  const cudasim::ModelledTime block = run_and_count().modelled;
  add_in_one_thread<<<1, 1>>>(a, b, c, n);
  const cudasim::ModelledTime thread = run_and_count().modelled;
  EXPECT_STREQ(grid.dominant(), "launch overhead");
  // One thread keeps almost nothing in flight: both its share of the bandwidth and its chain
  // of accesses make it slow.
  EXPECT_GT(thread.span_ns, 100 * grid.total_ns);
  EXPECT_GT(block.total_ns, 8 * grid.total_ns);
  EXPECT_GT(thread.total_ns, 10 * block.total_ns);
  // The terms, from the constants of gpu_model.hpp on an H100. The grid: 65,536 threads, all
  // resident, 3 accesses of 4 bytes each in flight for 600 ns: 1.31 TB/s, under the peak.
  using C = cudasim::ModelConstants;
  EXPECT_NEAR(grid.memory_ns, 786432 / (65536 * 12 / (C::kMemoryLatencyNs * 1e-9)) * 1e9, 1e-6);
  // One block: 256 threads with 19 accesses in flight each (they have 768 to make).
  const double in_flight = C::kMemoryLatencyNs / C::kGlobalOpNs * 4;
  EXPECT_NEAR(block.memory_ns, 786432 / (256 * in_flight / (C::kMemoryLatencyNs * 1e-9)) * 1e9, 1e-6);
  EXPECT_DOUBLE_EQ(thread.span_ns, 3.0 * n * cudasim::ModelConstants::kGlobalOpNs);
  EXPECT_DOUBLE_EQ(grid.total_ns, cudasim::ModelConstants::kLaunchNs + grid.memory_ns);
  EXPECT_NE(block.describe(cudasim::modelled_gpu()).find("memory-bound: "), std::string::npos)
      << block.describe(cudasim::modelled_gpu());
}

TEST_F(Counters, ZeroCopyAccessesCrossTheHostLinkInTheModel) {
  // A kernel that reads page-locked host memory directly: on a GPU every byte crosses PCIe,
  // which no parallelism speeds up. The model charges those bytes at the host link's pinned
  // rate; with the link model "none" they cost nothing, as before.
  const int n = 1 << 20;
  float* pinned = nullptr;
  ASSERT_EQ(cudaMallocHost(&pinned, n * sizeof(float)), cudaSuccess);
  float* out = device_array<float>(n);
  const cudasim::LinkModel link = cudasim::host_link();
  ASSERT_GT(link.pinned_bytes_per_second, 0.0) << link.name;
  copy_coalesced<<<n / 256, 256>>>(pinned, out, n);
  const cudasim::KernelStats over_link = run_and_count();
  EXPECT_EQ(over_link.host_access_bytes, 4u * n);
  EXPECT_EQ(over_link.global_bytes(), 4u * n);  // the stores to device memory
  EXPECT_STREQ(over_link.modelled.dominant(), "memory");
  EXPECT_DOUBLE_EQ(over_link.modelled.memory_ns, 4.0 * n / link.pinned_bytes_per_second * 1e9);
  ASSERT_TRUE(cudasim::set_host_link("none"));
  copy_coalesced<<<n / 256, 256>>>(pinned, out, n);
  const cudasim::KernelStats free_link = run_and_count();
  ASSERT_TRUE(cudasim::set_host_link(link.name));
  EXPECT_LT(free_link.modelled.memory_ns, over_link.modelled.memory_ns / 50);
  // The same copy from device memory: the GPU's bandwidth, far faster than the link.
  float* in = device_array<float>(n);
  copy_coalesced<<<n / 256, 256>>>(in, out, n);
  EXPECT_LT(run_and_count().modelled.memory_ns, over_link.modelled.memory_ns / 50);
  cudaFreeHost(pinned);
}

TEST_F(Counters, TheModelChargesContendedAtomics) {
  const int threads = 1024;
  float* x = device_array<float>(threads * 64);
  float* total = device_array<float>(1);
  sum_with_one_atomic_per_thread<<<64, threads>>>(x, total);
  const cudasim::KernelStats s = run_and_count();
  EXPECT_EQ(s.max_atomics_same_address, 64u * threads);
  EXPECT_STREQ(s.modelled.dominant(), "atomics");
  EXPECT_DOUBLE_EQ(s.modelled.atomic_ns, 64.0 * threads * cudasim::ModelConstants::kSameAddressAtomicNs);
}

TEST_F(Counters, AGraphNodeCostsLessToLaunchThanALaunchFromTheHost) {
  const int n = 256;
  float* in = device_array<float>(n);
  float* out = device_array<float>(n);
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), cudaSuccess);
  for (int i = 0; i < 4; ++i) copy_coalesced<<<1, n, 0, stream>>>(in, out, n);
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  const std::vector<cudasim::KernelStats> replayed = cudasim::kernel_stats();
  ASSERT_EQ(replayed.size(), 1u);
  EXPECT_DOUBLE_EQ(replayed[0].modelled.launch_ns, 4 * cudasim::ModelConstants::kGraphNodeNs);
  cudasim::reset_stats();
  for (int i = 0; i < 4; ++i) copy_coalesced<<<1, n, 0, stream>>>(in, out, n);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_DOUBLE_EQ(cudasim::kernel_stats()[0].modelled.launch_ns, 4 * cudasim::ModelConstants::kLaunchNs);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

TEST_F(Counters, TheModelsGpusAreLessonTwosTable) {
  for (const cudasim::GpuSpec& gpu : cudasim::kModelledGpus) {
    const roofline::Machine* machine = nullptr;
    for (const roofline::Machine& m : roofline::kMachines)
      if (std::strcmp(m.name, gpu.name) == 0) machine = &m;
    ASSERT_NE(machine, nullptr) << gpu.name;
    EXPECT_EQ(gpu.fp32_flops_per_s, machine->fp32_flops) << gpu.name;
    EXPECT_EQ(gpu.memory_bytes_per_s, machine->memory_bytes_per_s) << gpu.name;
    EXPECT_EQ(gpu.tensor_flops_per_s, machine->bf16_flops) << gpu.name;
  }
  EXPECT_EQ(cudasim::find_gpu("h200"), &cudasim::kModelledGpus[1]);
  EXPECT_EQ(cudasim::find_gpu("V100"), nullptr);
}

TEST_F(Counters, TheSameProgramGivesTheSameCountsEveryRun) {
  const int n = 1 << 14;
  float* a = device_array<float>(n);
  float* b = device_array<float>(n);
  float* c = device_array<float>(n);
  add_grid_stride<<<8, 128>>>(a, b, c, n);
  const cudasim::KernelStats first = run_and_count();
  add_grid_stride<<<8, 128>>>(a, b, c, n);
  const cudasim::KernelStats second = run_and_count();
  EXPECT_EQ(first.global_requests, second.global_requests);
  EXPECT_EQ(first.global_sectors, second.global_sectors);
  EXPECT_EQ(first.span_global_ops, second.span_global_ops);
  EXPECT_EQ(first.modelled.total_ns, second.modelled.total_ns);
}

}  // namespace

#endif  // CUDASIM
