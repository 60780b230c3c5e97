// Barriers in every shape the two ways the simulator runs them must agree on.
//
// On the simulator, a kernel whose own body calls __syncthreads is compiled as a coroutine (its
// threads are resumed one after another between barriers), while a barrier inside a __device__
// function parks the thread's fiber; both can meet in one kernel, together with warp shuffles
// (always on fibers). These kernels cover each path and the mixtures, with results checked
// against the host. They are valid CUDA: on a GPU they check the same results.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

namespace {

#define CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call

constexpr int kThreads = 256;

/// Runs `kernel` over `blocks` blocks writing one int per block (or per thread with
/// `per_thread`), and returns the output.
template <class Launch>
std::vector<int> run_ints(int count, Launch launch) {
  int* out = nullptr;
  EXPECT_EQ(cudaMalloc(&out, sizeof(int) * count), cudaSuccess);
  EXPECT_EQ(cudaMemset(out, 0xff, sizeof(int) * count), cudaSuccess);
  launch(out);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<int> host(count);
  EXPECT_EQ(cudaMemcpy(host.data(), out, sizeof(int) * count, cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(out);
  return host;
}

/// What each block's reduction of (block * 1000 + thread) over kThreads threads gives.
int expected_block_sum(int block) { return block * 1000 * kThreads + kThreads * (kThreads - 1) / 2; }

// ---- a tree reduction with the barriers in the kernel body (coroutine threads) ---------------------

__global__ void reduce_direct(int* out) {
  __shared__ int partial[kThreads];
  partial[threadIdx.x] = blockIdx.x * 1000 + threadIdx.x;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}

TEST(BarrierPaths, ReductionWithBarriersInTheKernelBody) {
  const int blocks = 37;
  const auto sums = run_ints(blocks, [&](int* out) { reduce_direct<<<blocks, kThreads>>>(out); });
  for (int b = 0; b < blocks; ++b) EXPECT_EQ(sums[b], expected_block_sum(b)) << "block " << b;
}

// ---- the same with the barrier inside a __device__ function (parked fibers) -------------------------

__device__ void add_half(int* partial, int stride) {
  if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
  __syncthreads();
}

__global__ void reduce_through_helper(int* out) {
  __shared__ int partial[kThreads];
  partial[threadIdx.x] = blockIdx.x * 1000 + threadIdx.x;
  __syncthreads();  // in the body: the kernel is a coroutine that also parks in add_half
  for (int stride = kThreads / 2; stride > 0; stride /= 2) add_half(partial, stride);
  if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}

__device__ void fill(int* partial) {
  partial[threadIdx.x] = blockIdx.x * 1000 + threadIdx.x;
  __syncthreads();
}

__global__ void reduce_only_through_helpers(int* out) {
  __shared__ int partial[kThreads];
  fill(partial);
  for (int stride = kThreads / 2; stride > 0; stride /= 2) add_half(partial, stride);
  if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}

TEST(BarrierPaths, ReductionWithBarriersInDeviceFunctions) {
  const int blocks = 37;
  const auto mixed = run_ints(blocks, [&](int* out) { reduce_through_helper<<<blocks, kThreads>>>(out); });
  const auto helpers = run_ints(blocks, [&](int* out) { reduce_only_through_helpers<<<blocks, kThreads>>>(out); });
  for (int b = 0; b < blocks; ++b) {
    EXPECT_EQ(mixed[b], expected_block_sum(b)) << "block " << b;
    EXPECT_EQ(helpers[b], expected_block_sum(b)) << "block " << b;
  }
}

// ---- warp shuffles and block barriers in one kernel body --------------------------------------------

__global__ void reduce_with_shuffles(int* out) {
  __shared__ int warp_sums[32];
  int value = blockIdx.x * 1000 + threadIdx.x;
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = value;
  __syncthreads();
  if (threadIdx.x < 32) {
    int sum = threadIdx.x < blockDim.x / 32 ? warp_sums[threadIdx.x] : 0;
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
    if (threadIdx.x == 0) out[blockIdx.x] = sum;
  }
}

TEST(BarrierPaths, WarpShufflesAroundABlockBarrier) {
  const int blocks = 19;
  const auto sums = run_ints(blocks, [&](int* out) { reduce_with_shuffles<<<blocks, kThreads>>>(out); });
  for (int b = 0; b < blocks; ++b) EXPECT_EQ(sums[b], expected_block_sum(b)) << "block " << b;
}

// ---- __syncthreads_count / _and / _or ------------------------------------------------------------

__global__ void vote_across_the_block(int* out) {
  const int count = __syncthreads_count(threadIdx.x % 3 == 0);
  const int all_small = __syncthreads_and(threadIdx.x < 1000);
  const int any_last = __syncthreads_or(threadIdx.x == blockDim.x - 1);
  const int none = __syncthreads_or(0);
  if (threadIdx.x == 0) {
    out[0] = count;
    out[1] = all_small;
    out[2] = any_last;
    out[3] = none;
  }
}

TEST(BarrierPaths, ReducingBarriersReturnTheBlocksVote) {
  const auto votes = run_ints(4, [](int* out) { vote_across_the_block<<<1, 100>>>(out); });
  EXPECT_EQ(votes[0], 34);  // 0, 3, ..., 99
  EXPECT_NE(votes[1], 0);
  EXPECT_NE(votes[2], 0);
  EXPECT_EQ(votes[3], 0);
}

// ---- threads that return early do not hold up the others ------------------------------------------

__global__ void early_return_then_barriers(int active, int* out) {
  __shared__ int total;
  if (threadIdx.x >= active) return;
  if (threadIdx.x == 0) total = 0;
  __syncthreads();
  atomicAdd(&total, 1);
  __syncthreads();
  out[threadIdx.x] = total;
}

TEST(BarrierPaths, ThreadsThatReturnEarlyLeaveTheBarriersToTheRest) {
  const int active = 70;
  const auto seen = run_ints(kThreads, [&](int* out) { early_return_then_barriers<<<1, kThreads>>>(active, out); });
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(seen[t], t < active ? active : -1) << "thread " << t;
}

// ---- each thread keeps its own locals across barriers ---------------------------------------------

__global__ void private_arrays_across_barriers(int* out) {
  __shared__ int exchange[kThreads];
  int mine[16];
  for (int i = 0; i < 16; ++i) mine[i] = threadIdx.x * 16 + i;
  exchange[threadIdx.x] = threadIdx.x;
  __syncthreads();
  const int neighbour = exchange[(threadIdx.x + 1) % blockDim.x];
  __syncthreads();
  int sum = 0;
  for (int i = 0; i < 16; ++i) sum += mine[i];
  out[threadIdx.x] = sum + neighbour;
}

TEST(BarrierPaths, LocalArraysStayPrivateAcrossBarriers) {
  const auto sums = run_ints(kThreads, [](int* out) { private_arrays_across_barriers<<<1, kThreads>>>(out); });
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(sums[t], t * 256 + 120 + (t + 1) % kThreads) << "thread " << t;
}

// ---- uniform control flow around barriers: break, continue, 2-D blocks ---------------------------

__global__ void transpose_tiles_with_loop_control(const int* in, int* out, int n) {
  __shared__ int tile[16][17];
  for (int tile_row = 0;; ++tile_row) {
    if (tile_row * 16 >= n) break;
    if (tile_row % 2 == 1 && n > 32) continue;  // every other row of tiles only, when large
    for (int tile_col = 0; tile_col * 16 < n; ++tile_col) {
      tile[threadIdx.y][threadIdx.x] = in[(tile_row * 16 + threadIdx.y) * n + tile_col * 16 + threadIdx.x];
      __syncthreads();
      out[(tile_col * 16 + threadIdx.y) * n + tile_row * 16 + threadIdx.x] = tile[threadIdx.x][threadIdx.y];
      __syncthreads();
    }
  }
}

TEST(BarrierPaths, TwoDimensionalBlocksAndLoopControlAroundBarriers) {
  const int n = 64;
  std::vector<int> host(n * n);
  std::iota(host.begin(), host.end(), 0);
  int* in = nullptr;
  CUDA_OK(cudaMalloc(&in, sizeof(int) * n * n));
  CUDA_OK(cudaMemcpy(in, host.data(), sizeof(int) * n * n, cudaMemcpyHostToDevice));
  const auto out = run_ints(n * n, [&](int* o) { transpose_tiles_with_loop_control<<<1, dim3(16, 16)>>>(in, o, n); });
  cudaFree(in);
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c) {
      const bool written = (c / 16) % 2 == 0;  // source tile rows 1 and 3 were skipped
      EXPECT_EQ(out[r * n + c], written ? host[c * n + r] : -1) << "at (" << r << ", " << c << ")";
    }
}

// ---- templates, dynamic shared memory, a lambda in the body ---------------------------------------

template <int kScale>
__global__ void scaled_rotation(int* out) {
  extern __shared__ int buffer[];
  buffer[threadIdx.x] = threadIdx.x * kScale;
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = buffer[(threadIdx.x + 1) % blockDim.x] + blockIdx.x;
}

__global__ void rotation_with_lambda(int* out) {
  __shared__ int buffer[kThreads];
  const auto twice = [](int v) { return 2 * v; };
  buffer[threadIdx.x] = twice(threadIdx.x);
  __syncthreads();
  out[threadIdx.x] = buffer[(threadIdx.x + 1) % blockDim.x];
}

TEST(BarrierPaths, TemplatedKernelWithDynamicSharedMemory) {
  const int blocks = 5, threads = 96;
  const auto out = run_ints(blocks * threads, [&](int* o) {
    scaled_rotation<3><<<blocks, threads, threads * sizeof(int)>>>(o);
  });
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < threads; ++t)
      EXPECT_EQ(out[b * threads + t], (t + 1) % threads * 3 + b) << "block " << b << " thread " << t;
}

TEST(BarrierPaths, KernelWithALambdaInItsBody) {
  const auto out = run_ints(kThreads, [](int* o) { rotation_with_lambda<<<1, kThreads>>>(o); });
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(out[t], 2 * ((t + 1) % kThreads)) << "thread " << t;
}

// ---- many blocks at once, 1024 threads ------------------------------------------------------------

__global__ void big_blocks(int* out) {
  __shared__ int last_seen;
  if (threadIdx.x == blockDim.x - 1) last_seen = blockIdx.x;
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = last_seen * 2 + (threadIdx.x & 1);
}

TEST(BarrierPaths, ManyBlocksOf1024ThreadsInParallel) {
  const int blocks = 48, threads = 1024;
  const auto out = run_ints(blocks * threads, [&](int* o) { big_blocks<<<blocks, threads>>>(o); });
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < threads; t += 97) EXPECT_EQ(out[b * threads + t], b * 2 + (t & 1));
}

}  // namespace
