// Loop fission (cudasim_rewrite.cpp, "Loop fission"; cudasim/device_functions.hpp): kernels whose
// barriers every thread of a block reaches together run as one loop over the block's threads per
// stretch between barriers. Each kernel here runs both ways, the fissioned version and the
// coroutine version (set_loop_fission(false)), and must give the same results and the same
// counters, every one of them; a diagnostic on the fissioned path names the thread and the line
// as the coroutine path does. Which kernels are fissioned, and why the others are not, is
// checked on the rewrite's output by the rewrite suite (cases/24_loop_fission.cu).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#ifdef CUDASIM

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

#define CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call
#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE((haystack).find(needle), std::string::npos) << "expected \"" << (needle) << "\" in:\n" << (haystack)

// ---- kernels the rewrite fissions --------------------------------------------------------------

constexpr int kTile = 16;

// Locals across barriers (row, col, acc), a uniform loop with two barriers, 2-D blocks.
__global__ void tiled_matmul(const float* A, const float* B, float* C, int n) {
  __shared__ float a_tile[kTile][kTile];
  __shared__ float b_tile[kTile][kTile];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * kTile + ty;
  const int col = blockIdx.x * kTile + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < n; k0 += kTile) {
    a_tile[ty][tx] = row < n && k0 + tx < n ? A[row * n + k0 + tx] : 0.0f;
    b_tile[ty][tx] = k0 + ty < n && col < n ? B[(k0 + ty) * n + col] : 0.0f;
    __syncthreads();
#pragma unroll 4
    for (int k = 0; k < kTile; ++k) acc += a_tile[ty][k] * b_tile[k][tx];
    __syncthreads();
  }
  if (row < n && col < n) C[row * n + col] = acc;
}

// An array that lives across barriers, dynamic shared memory, a loop whose trip count comes from
// blockDim, and a `break` inside a loop of its own stretch.
__global__ void scan_in_pieces(const int* in, int* out, int pieces) {
  extern __shared__ int partial[];
  int mine[4];
  for (int p = 0; p < 4; ++p) mine[p] = p < pieces ? in[(blockIdx.x * blockDim.x + threadIdx.x) * 4 + p] : 0;
  int sum = 0;
  for (int p = 0; p < 4; ++p) {
    if (p >= pieces) break;
    sum += mine[p];
  }
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
    const int add = threadIdx.x >= stride ? partial[threadIdx.x - stride] : 0;
    __syncthreads();
    partial[threadIdx.x] += add;
    __syncthreads();
  }
  const int before = partial[threadIdx.x] - sum;
  int running = before;
  for (int p = 0; p < 4; ++p) {
    running += mine[p];
    out[(blockIdx.x * blockDim.x + threadIdx.x) * 4 + p] = running;
  }
}

// A 3-D block, a barrier at the very start and at the end, and an atomic.
__global__ void block_census(unsigned* counts) {
  __shared__ unsigned seen;
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) seen = 0;
  __syncthreads();
  atomicAdd(&seen, threadIdx.x + 10 * threadIdx.y + 100 * threadIdx.z);
  __syncthreads();
  if (threadIdx.x == 1 && threadIdx.y == 1 && threadIdx.z == 1) counts[blockIdx.x] = seen;
  __syncthreads();
}

// Reads one past the end in the stretch after the first barrier, from one thread.
__global__ void reads_past_the_end(const float* in, float* out, int n) {
  __shared__ float staged[64];
  staged[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  const int i = threadIdx.x == 37 ? n : threadIdx.x;
  out[threadIdx.x] = staged[threadIdx.x] + in[i];  // the line the report must name
}
constexpr int kPastTheEndLine = __LINE__ - 2;

// A warp shuffle reached through a function pointer: the rewrite cannot see it, so it fissions
// the kernel, and the simulator must refuse to wait instead of hanging.
__device__ int shuffle_down(int v) { return __shfl_down_sync(0xffffffffu, v, 1); }
__device__ int identity(int v) { return v; }
__device__ int (*chosen_operation)(int) = nullptr;
__device__ int apply_chosen(int v) { return chosen_operation(v); }
__global__ void calls_through_a_pointer(int* out) {
  __shared__ int values[32];
  values[threadIdx.x] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = apply_chosen(values[threadIdx.x]);
}

void choose(int (*operation)(int)) {
  ASSERT_EQ(cudaMemcpyToSymbol(chosen_operation, &operation, sizeof(operation)), cudaSuccess);
}

// ---- running both ways ----------------------------------------------------------------------------

class LoopFission : public ::testing::Test {
 protected:
  void TearDown() override {
    cudasim::set_loop_fission(true);
    EXPECT_EQ(cudaDeviceReset(), cudaSuccess);
  }
};

/// Every counter of a launch but the one that says how it ran, as text for comparison.
std::string counters_of(const cudasim::KernelStats& s) {
  std::string text;
  auto add = [&](const char* name, std::uint64_t v) { text += std::string(name) + "=" + std::to_string(v) + " "; };
  add("blocks", s.blocks);
  add("threads", s.threads);
  add("global_load", s.global_load_bytes);
  add("global_store", s.global_store_bytes);
  add("shared_load", s.shared_load_bytes);
  add("shared_store", s.shared_store_bytes);
  add("atomics", s.atomics);
  add("global_atomics", s.global_atomics);
  add("global_atomic_bytes", s.global_atomic_bytes);
  add("max_same_address", s.max_atomics_same_address);
  add("max_per_block", s.max_atomics_per_block);
  add("span_warp", s.span_warp_ops);
  add("warp_ops", s.warp_ops);
  add("barrier_arrivals", s.barrier_arrivals);
  add("mma", s.mma_ops);
  add("span_mma", s.span_mma_ops);
  add("fragment_loads", s.fragment_loads);
  add("fragment_stores", s.fragment_stores);
  for (int w = 0; w < 5; ++w) add("width", s.global_accesses_by_width[w]);
  add("requests", s.global_requests);
  add("sectors", s.global_sectors);
  add("span_global", s.span_global_ops);
  add("span_shared", s.span_shared_ops);
  text += "modelled_ns=" + std::to_string(s.modelled.total_ns);
  return text;
}

struct Outcome {
  std::vector<char> output;
  cudasim::KernelStats stats;
};

/// Runs `launch` (which writes `bytes` of `out`) with fission on or off.
template <class Launch>
Outcome run(bool fission, void* out, std::size_t bytes, Launch launch) {
  cudasim::set_loop_fission(fission);
  EXPECT_EQ(cudaMemset(out, 0, bytes), cudaSuccess);
  cudasim::reset_stats();
  launch();
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  Outcome r{std::vector<char>(bytes), cudasim::last_launch_stats()};
  EXPECT_EQ(cudaMemcpy(r.output.data(), out, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  return r;
}

/// Runs `launch` both ways: same output, same counters, and only the first run fissioned.
template <class Launch>
void expect_same_both_ways(void* out, std::size_t bytes, std::uint64_t blocks, Launch launch) {
  const Outcome fissioned = run(true, out, bytes, launch);
  const Outcome coroutines = run(false, out, bytes, launch);
  EXPECT_EQ(fissioned.stats.fissioned_blocks, blocks);
  EXPECT_EQ(coroutines.stats.fissioned_blocks, 0u);
  EXPECT_TRUE(fissioned.output == coroutines.output) << "the two versions computed different outputs";
  EXPECT_EQ(counters_of(fissioned.stats), counters_of(coroutines.stats));
}

TEST_F(LoopFission, TiledMatmulGivesTheSameProductAndCounters) {
  const int n = 40;  // not a multiple of the tile: partial tiles at the edges
  std::vector<float> a(n * n), b(n * n);
  for (int i = 0; i < n * n; ++i) {
    a[i] = static_cast<float>(i % 7) - 3.0f;
    b[i] = static_cast<float>(i % 5) * 0.5f;
  }
  float *A, *B, *C;
  CUDA_OK(cudaMalloc(&A, sizeof(float) * n * n));
  CUDA_OK(cudaMalloc(&B, sizeof(float) * n * n));
  CUDA_OK(cudaMalloc(&C, sizeof(float) * n * n));
  CUDA_OK(cudaMemcpy(A, a.data(), sizeof(float) * n * n, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(B, b.data(), sizeof(float) * n * n, cudaMemcpyHostToDevice));
  const dim3 grid(3, 3), block(kTile, kTile);
  expect_same_both_ways(C, sizeof(float) * n * n, 9, [&] { tiled_matmul<<<grid, block>>>(A, B, C, n); });
  std::vector<float> c(n * n);
  CUDA_OK(cudaMemcpy(c.data(), C, sizeof(float) * n * n, cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      float expected = 0.0f;
      for (int k = 0; k < n; ++k) expected += a[i * n + k] * b[k * n + j];
      ASSERT_FLOAT_EQ(c[i * n + j], expected) << "C[" << i << "][" << j << "]";
    }
  if (cudasim::stats_available()) {
    EXPECT_EQ(cudasim::last_launch_stats().barrier_arrivals, 9u * 256 * 2 * 3);  // 3 tile steps
  }
}

TEST_F(LoopFission, ArraysDynamicSharedMemoryAndBlockDimLoops) {
  const int blocks = 3, threads = 64, n = blocks * threads * 4;
  std::vector<int> in(n);
  for (int i = 0; i < n; ++i) in[i] = (i * 37) % 11 - 5;
  int *d_in, *d_out;
  CUDA_OK(cudaMalloc(&d_in, sizeof(int) * n));
  CUDA_OK(cudaMalloc(&d_out, sizeof(int) * n));
  CUDA_OK(cudaMemcpy(d_in, in.data(), sizeof(int) * n, cudaMemcpyHostToDevice));
  expect_same_both_ways(d_out, sizeof(int) * n, blocks,
                        [&] { scan_in_pieces<<<blocks, threads, threads * sizeof(int)>>>(d_in, d_out, 4); });
  std::vector<int> out(n);
  CUDA_OK(cudaMemcpy(out.data(), d_out, sizeof(int) * n, cudaMemcpyDeviceToHost));
  for (int b = 0; b < blocks; ++b) {
    int running = 0;
    for (int i = 0; i < threads * 4; ++i) {
      running += in[b * threads * 4 + i];
      ASSERT_EQ(out[b * threads * 4 + i], running) << "block " << b << ", element " << i;
    }
  }
}

TEST_F(LoopFission, ThreeDimensionalBlocksAndAtomics) {
  unsigned* counts;
  CUDA_OK(cudaMalloc(&counts, sizeof(unsigned) * 5));
  const dim3 block(4, 3, 2);
  expect_same_both_ways(counts, sizeof(unsigned) * 5, 5, [&] { block_census<<<5, block>>>(counts); });
  std::vector<unsigned> host(5);
  CUDA_OK(cudaMemcpy(host.data(), counts, sizeof(unsigned) * 5, cudaMemcpyDeviceToHost));
  unsigned expected = 0;
  for (unsigned z = 0; z < 2; ++z)
    for (unsigned y = 0; y < 3; ++y)
      for (unsigned x = 0; x < 4; ++x) expected += x + 10 * y + 100 * z;
  for (unsigned c : host) EXPECT_EQ(c, expected);
}

TEST_F(LoopFission, AnOutOfBoundsReadNamesTheThreadAndTheLine) {
  if (!cudasim::stats_available()) GTEST_SKIP() << "memcheck needs the instrumented build";
  float *in, *out;
  const int n = 64;
  CUDA_OK(cudaMalloc(&in, sizeof(float) * n));
  CUDA_OK(cudaMalloc(&out, sizeof(float) * n));
  CUDA_OK(cudaMemset(in, 0, sizeof(float) * n));
  for (const bool fission : {true, false}) {
    cudasim::set_loop_fission(fission);
    cudasim::reset_stats();
    testing::internal::CaptureStderr();
    reads_past_the_end<<<1, n>>>(in, out, n);
    const cudaError_t synced = cudaDeviceSynchronize();
    const std::string report = testing::internal::GetCapturedStderr();
    EXPECT_EQ(synced, cudaErrorIllegalAddress) << report;
    EXPECT_CONTAINS(report, "'reads_past_the_end'");
    EXPECT_CONTAINS(report, "block (0,0,0), thread (37,0,0)");
    EXPECT_CONTAINS(report, "out-of-bounds global load of 4 bytes at byte 256 of the 256-byte allocation");
    EXPECT_CONTAINS(report, "test_loop_fission.cu:" + std::to_string(kPastTheEndLine));
    EXPECT_EQ(cudaDeviceReset(), cudaSuccess);
    CUDA_OK(cudaMalloc(&in, sizeof(float) * n));
    CUDA_OK(cudaMalloc(&out, sizeof(float) * n));
    CUDA_OK(cudaMemset(in, 0, sizeof(float) * n));
  }
}

TEST_F(LoopFission, AWaitTheRewriteCouldNotSeeFailsTheLaunchWithAMessage) {
  int* out;
  CUDA_OK(cudaMalloc(&out, sizeof(int) * 32));
  // A function without warp operations through the same pointer runs fissioned, and right.
  choose(&identity);
  const Outcome plain = run(true, out, sizeof(int) * 32, [&] { calls_through_a_pointer<<<1, 32>>>(out); });
  EXPECT_EQ(plain.stats.fissioned_blocks, 1u);
  int first[32];
  std::memcpy(first, plain.output.data(), sizeof(first));
  for (int i = 0; i < 32; ++i) EXPECT_EQ(first[i], i);

  choose(&shuffle_down);
  cudasim::set_loop_fission(true);
  testing::internal::CaptureStderr();
  calls_through_a_pointer<<<1, 32>>>(out);
  const cudaError_t synced = cudaDeviceSynchronize();
  const std::string report = testing::internal::GetCapturedStderr();
  EXPECT_EQ(synced, cudaErrorLaunchFailure) << report;
  EXPECT_CONTAINS(report, "runs as loops over the threads of a block (loop fission)");
  EXPECT_CONTAINS(report, "CUDASIM_FISSION=0");
  EXPECT_EQ(cudaDeviceReset(), cudaSuccess);

  // The coroutine version runs the same shuffle.
  CUDA_OK(cudaMalloc(&out, sizeof(int) * 32));
  choose(&shuffle_down);
  const Outcome coroutines = run(false, out, sizeof(int) * 32, [&] { calls_through_a_pointer<<<1, 32>>>(out); });
  int shuffled[32];
  std::memcpy(shuffled, coroutines.output.data(), sizeof(shuffled));
  for (int i = 0; i < 31; ++i) EXPECT_EQ(shuffled[i], i + 1);
}

TEST(LoopFissionSetting, TheChecksTakeTheCoroutinePath) {
  // With CUDASIM_CHECK set (the ctest loop_fission_checked runs this suite so), racecheck and the
  // shuffled order watch and reorder the threads of the coroutine version: no block is fissioned.
  const char* check = std::getenv("CUDASIM_CHECK");
  const char* fission = std::getenv("CUDASIM_FISSION");
  const bool checked = check != nullptr && *check != '\0';
  const bool off = fission != nullptr && (std::strcmp(fission, "0") == 0 || std::strcmp(fission, "off") == 0);
  EXPECT_EQ(cudasim::loop_fission(), !checked && !off);
  // Allowing it from the program does not override the checks.
  cudasim::set_loop_fission(true);
  EXPECT_EQ(cudasim::loop_fission(), !checked && !off);
}

}  // namespace

#endif  // CUDASIM
