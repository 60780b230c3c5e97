// Warp-level operations: __shfl_sync/_up/_down/_xor with widths 8, 16 and 32, a warp-shuffle
// reduction, __ballot_sync, __all_sync/__any_sync, __syncwarp, partial warps (blockDim not a
// multiple of 32), __reduce_add_sync and __activemask. Valid CUDA (sm_80+): the same file runs on a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <vector>

namespace {

#define ASSERT_CUDA(expr) ASSERT_EQ((expr), cudaSuccess)
constexpr unsigned kFull = 0xffffffffu;

template <class T>
std::vector<T> download(const T* device, size_t count) {
  std::vector<T> host(count);
  EXPECT_EQ(cudaMemcpy(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  return host;
}

/// Runs `kernel<<<1, threads>>>(out, operand, width)` and returns `threads` ints.
template <class Kernel>
std::vector<int> run_one_block(Kernel kernel, int threads, int operand, int width) {
  int* d = nullptr;
  EXPECT_EQ(cudaMalloc(&d, threads * sizeof(int)), cudaSuccess);
  kernel<<<1, threads>>>(d, operand, width);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  std::vector<int> h = download(d, threads);
  EXPECT_EQ(cudaFree(d), cudaSuccess);
  return h;
}

int lane_value(int t) { return 1000 + 3 * t; }  // what thread t contributes

__global__ void shfl_index(int* out, int src, int width) {
  const int t = threadIdx.x;
  out[t] = __shfl_sync(kFull, 1000 + 3 * t, src, width);
}
__global__ void shfl_up(int* out, int delta, int width) {
  const int t = threadIdx.x;
  out[t] = __shfl_up_sync(kFull, 1000 + 3 * t, delta, width);
}
__global__ void shfl_down(int* out, int delta, int width) {
  const int t = threadIdx.x;
  out[t] = __shfl_down_sync(kFull, 1000 + 3 * t, delta, width);
}
__global__ void shfl_xor(int* out, int lane_mask, int width) {
  const int t = threadIdx.x;
  out[t] = __shfl_xor_sync(kFull, 1000 + 3 * t, lane_mask, width);
}

TEST(WarpShuffle, ShflSyncReadsTheSourceLaneOfItsSegment) {
  for (int width : {8, 16, 32}) {
    const std::vector<int> h = run_one_block(shfl_index, 64, 3, width);
    for (int t = 0; t < 64; ++t) {
      const int lane = t % 32, warp_base = t - lane;
      EXPECT_EQ(h[t], lane_value(warp_base + lane / width * width + 3)) << "width " << width << " thread " << t;
    }
  }
}

TEST(WarpShuffle, ShflSyncSourceLaneWrapsModuloWidth) {
  const std::vector<int> h = run_one_block(shfl_index, 32, 8 + 5, 8);
  for (int t = 0; t < 32; ++t) EXPECT_EQ(h[t], lane_value(t / 8 * 8 + 5)) << "thread " << t;
}

TEST(WarpShuffle, ShflUpKeepsOwnValueInTheFirstDeltaLanesOfEachSegment) {
  for (int width : {8, 16, 32}) {
    const int delta = 2;
    const std::vector<int> h = run_one_block(shfl_up, 64, delta, width);
    for (int t = 0; t < 64; ++t) {
      const int position = t % 32 % width;
      EXPECT_EQ(h[t], lane_value(position >= delta ? t - delta : t)) << "width " << width << " thread " << t;
    }
  }
}

TEST(WarpShuffle, ShflDownKeepsOwnValueInTheLastDeltaLanesOfEachSegment) {
  for (int width : {8, 16, 32}) {
    const int delta = 3;
    const std::vector<int> h = run_one_block(shfl_down, 64, delta, width);
    for (int t = 0; t < 64; ++t) {
      const int position = t % 32 % width;
      EXPECT_EQ(h[t], lane_value(position + delta < width ? t + delta : t)) << "width " << width << " thread " << t;
    }
  }
}

TEST(WarpShuffle, ShflXorExchangesWithTheButterflyPartner) {
  for (int width : {8, 16, 32}) {
    for (int lane_mask : {1, 4, width / 2}) {
      const std::vector<int> h = run_one_block(shfl_xor, 64, lane_mask, width);
      for (int t = 0; t < 64; ++t)
        EXPECT_EQ(h[t], lane_value(t ^ lane_mask)) << "width " << width << " mask " << lane_mask << " thread " << t;
    }
  }
}

__global__ void shfl_double(double* out) {
  const double mine = 0.5 + threadIdx.x;
  out[threadIdx.x] = __shfl_xor_sync(kFull, mine, 1);
}

TEST(WarpShuffle, ShufflesMoveEightByteValues) {
  double* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, 32 * sizeof(double)));
  shfl_double<<<1, 32>>>(d);
  ASSERT_CUDA(cudaGetLastError());
  const std::vector<double> h = download(d, 32);
  for (int t = 0; t < 32; ++t) EXPECT_EQ(h[t], 0.5 + (t ^ 1));
  ASSERT_CUDA(cudaFree(d));
}

// ---- reductions --------------------------------------------------------------------------------

__device__ float warp_sum_down(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(kFull, v, offset);
  return v;  // complete in lane 0 only
}
__device__ float warp_sum_xor(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(kFull, v, offset);
  return v;  // complete in every lane
}

__global__ void warp_sums(const float* in, float* lane0_sums, float* all_lanes_sums) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float down = warp_sum_down(in[i]);
  const float butterfly = warp_sum_xor(in[i]);
  if (threadIdx.x % 32 == 0) lane0_sums[i / 32] = down;
  all_lanes_sums[i] = butterfly;
}

TEST(WarpReduction, ShuffleDownAndButterflySumAWarp) {
  const int n = 4 * 128;
  std::vector<float> in(n);
  for (int i = 0; i < n; ++i) in[i] = static_cast<float>(i % 17);
  float *d_in, *d_lane0, *d_all;
  ASSERT_CUDA(cudaMalloc(&d_in, n * sizeof(float)));
  ASSERT_CUDA(cudaMalloc(&d_lane0, n / 32 * sizeof(float)));
  ASSERT_CUDA(cudaMalloc(&d_all, n * sizeof(float)));
  ASSERT_CUDA(cudaMemcpy(d_in, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  warp_sums<<<4, 128>>>(d_in, d_lane0, d_all);
  ASSERT_CUDA(cudaGetLastError());
  const std::vector<float> lane0 = download(d_lane0, n / 32);
  const std::vector<float> all = download(d_all, n);
  for (int w = 0; w < n / 32; ++w) {
    float expected = 0;
    for (int l = 0; l < 32; ++l) expected += in[w * 32 + l];
    EXPECT_EQ(lane0[w], expected) << "warp " << w;
    for (int l = 0; l < 32; ++l) EXPECT_EQ(all[w * 32 + l], expected) << "warp " << w << " lane " << l;
  }
  ASSERT_CUDA(cudaFree(d_in));
  ASSERT_CUDA(cudaFree(d_lane0));
  ASSERT_CUDA(cudaFree(d_all));
}

__global__ void reduce_add(unsigned* out) {
  const unsigned lane = threadIdx.x % 32;
  const unsigned total = __reduce_add_sync(kFull, lane * 2 + 1);
  const int signed_total = __reduce_add_sync(kFull, -static_cast<int>(lane));
  if (lane == 5) {
    out[2 * (threadIdx.x / 32)] = total;
    out[2 * (threadIdx.x / 32) + 1] = static_cast<unsigned>(signed_total);
  }
}

TEST(WarpReduction, ReduceAddSyncSumsEveryLane) {
  unsigned* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, 4 * sizeof(unsigned)));
  reduce_add<<<1, 64>>>(d);
  ASSERT_CUDA(cudaGetLastError());
  const std::vector<unsigned> h = download(d, 4);
  for (int w = 0; w < 2; ++w) {
    EXPECT_EQ(h[2 * w], 32u * 32u);  // sum of the first 32 odd numbers
    EXPECT_EQ(static_cast<int>(h[2 * w + 1]), -496);
  }
  ASSERT_CUDA(cudaFree(d));
}

// ---- votes ------------------------------------------------------------------------------------

__global__ void votes(unsigned* out) {
  const unsigned lane = threadIdx.x % 32;
  const unsigned ballot = __ballot_sync(kFull, lane % 3 == 0);
  const int all_small = __all_sync(kFull, lane < 32);
  const int all_even = __all_sync(kFull, lane % 2 == 0);
  const int any_seven = __any_sync(kFull, lane == 7);
  const int any_big = __any_sync(kFull, lane > 40);
  if (lane == 0) {
    out[0] = ballot;
    out[1] = all_small != 0;
    out[2] = all_even != 0;
    out[3] = any_seven != 0;
    out[4] = any_big != 0;
  }
}

TEST(WarpVotes, BallotAllAndAnyCombineThePredicatesOfEveryLane) {
  unsigned* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, 5 * sizeof(unsigned)));
  votes<<<1, 32>>>(d);
  ASSERT_CUDA(cudaGetLastError());
  const std::vector<unsigned> h = download(d, 5);
  unsigned expected = 0;
  for (int l = 0; l < 32; l += 3) expected |= 1u << l;
  EXPECT_EQ(h[0], expected);
  EXPECT_EQ(h[1], 1u);
  EXPECT_EQ(h[2], 0u);
  EXPECT_EQ(h[3], 1u);
  EXPECT_EQ(h[4], 0u);
  ASSERT_CUDA(cudaFree(d));
}

__global__ void ballot_of_subset(unsigned* out) {
  // Only the even lanes take part; the mask names exactly them.
  const unsigned lane = threadIdx.x;
  if (lane % 2 == 0) {
    const unsigned b = __ballot_sync(0x55555555u, lane % 4 == 0);
    if (lane == 0) *out = b;
  }
}

TEST(WarpVotes, BallotWithAPartialMaskCountsOnlyTheNamedLanes) {
  unsigned* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, sizeof(unsigned)));
  ballot_of_subset<<<1, 32>>>(d);
  ASSERT_CUDA(cudaGetLastError());
  EXPECT_EQ(download(d, 1)[0], 0x11111111u);
  ASSERT_CUDA(cudaFree(d));
}

// ---- __syncwarp ---------------------------------------------------------------------------------

__global__ void syncwarp_exchange(int* out) {
  __shared__ int slots[64];
  const int t = threadIdx.x;
  const int warp_base = t / 32 * 32;
  slots[t] = t * t;
  __syncwarp();
  out[t] = slots[warp_base + (t + 1) % 32];  // a neighbour in the same warp
}

TEST(SyncWarp, LanesSeeEachOthersSharedWritesAfterSyncwarp) {
  int* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, 64 * sizeof(int)));
  syncwarp_exchange<<<1, 64>>>(d);
  ASSERT_CUDA(cudaGetLastError());
  const std::vector<int> h = download(d, 64);
  for (int t = 0; t < 64; ++t) {
    const int n = t / 32 * 32 + (t + 1) % 32;
    EXPECT_EQ(h[t], n * n) << "thread " << t;
  }
  ASSERT_CUDA(cudaFree(d));
}

// ---- partial warps ----------------------------------------------------------------------------

// blockDim.x = 40: warp 1 has 8 lanes. Lanes that do not exist do not take part.
__global__ void partial_warp(unsigned* out) {
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const unsigned lanes_here = min(32u, blockDim.x - warp * 32);
  const unsigned mask = lanes_here == 32 ? kFull : (1u << lanes_here) - 1;
  const unsigned ballot = __ballot_sync(mask, 1);
  const unsigned sum = __reduce_add_sync(mask, lane + 1);
  unsigned shuffled = lane;
  for (unsigned offset = 1; offset < 32; offset *= 2) {
    const unsigned other = __shfl_down_sync(mask, shuffled, offset);
    if (lane + offset < lanes_here) shuffled += other;
  }
  if (lane == 0) {
    out[3 * warp] = ballot;
    out[3 * warp + 1] = sum;
    out[3 * warp + 2] = shuffled;
  }
}

// The lower half of each warp exits before any lane waits; the upper half then shuffles among
// itself. Every thread must run exactly once (the simulator starts threads in order and only
// learns of the early exits when lane 16 waits).
__global__ void upper_half_shuffles_after_lower_half_exits(int* out, int* runs) {
  atomicAdd(&runs[threadIdx.x], 1);
  if (threadIdx.x % 32 < 16) return;
  out[threadIdx.x] = __shfl_xor_sync(0xffff0000u, static_cast<int>(threadIdx.x), 1);
}

TEST(WarpShuffle, LanesThatExitEarlyRunOnceAndTheOthersStillShuffle) {
  int *d = nullptr, *runs = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, 64 * sizeof(int)));
  ASSERT_CUDA(cudaMalloc(&runs, 64 * sizeof(int)));
  ASSERT_CUDA(cudaMemset(d, 0xff, 64 * sizeof(int)));
  ASSERT_CUDA(cudaMemset(runs, 0, 64 * sizeof(int)));
  upper_half_shuffles_after_lower_half_exits<<<1, 64>>>(d, runs);
  ASSERT_CUDA(cudaGetLastError());
  const std::vector<int> h = download(d, 64), r = download(runs, 64);
  for (int t = 0; t < 64; ++t) {
    EXPECT_EQ(r[t], 1) << "thread " << t;
    EXPECT_EQ(h[t], t % 32 < 16 ? -1 : (t ^ 1)) << "thread " << t;
  }
  ASSERT_CUDA(cudaFree(d));
  ASSERT_CUDA(cudaFree(runs));
}

/// Two groups of lanes shuffle among themselves a different number of times, then the whole
/// warp meets at __syncwarp(): the lower group gets there while the upper one still shuffles.
__global__ void groups_then_whole_warp(int* out) {
  const unsigned lane = threadIdx.x % 32;
  const unsigned mask = lane < 8 ? 0x000000ffu : 0xffffff00u;
  int v = static_cast<int>(lane);
  const int steps = lane < 8 ? 1 : 3;
  for (int i = 0; i < steps; ++i) v += __shfl_xor_sync(mask, v, 1);
  __syncwarp();
  out[threadIdx.x] = v;
}

TEST(SyncWarp, GroupsThatShuffleApartMeetAtAWholeWarpBarrier) {
  int* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, 32 * sizeof(int)));
  groups_then_whole_warp<<<1, 32>>>(d);
  ASSERT_CUDA(cudaDeviceSynchronize());
  const std::vector<int> h = download(d, 32);
  for (int t = 0; t < 32; ++t) {
    const int pair = t + (t ^ 1);  // after one step
    EXPECT_EQ(h[t], t < 8 ? pair : 4 * pair) << "thread " << t;
  }
  ASSERT_CUDA(cudaFree(d));
}

__global__ void active_masks(unsigned* out) {
  const unsigned lane = threadIdx.x % 32;
  out[threadIdx.x] = __activemask();  // converged: every lane of the warp
  if (lane >= 28) return;             // lanes 28-31 exit
  if (lane < 12)
    out[64 + threadIdx.x] = __activemask();  // the branch: lanes 0-11
  else
    out[64 + threadIdx.x] = __activemask();  // the other branch: lanes 12-27
}

TEST(ActiveMask, IsTheLanesThatExecuteTheCallTogether) {
  // Two warps of 32 and 16 lanes. A GPU may split a branch further, never join two: on one,
  // each mask holds its own lane and no lane of the other branch or of an exited lane; the
  // simulator gives exactly the branch's lanes.
  unsigned* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, 128 * sizeof(unsigned)));
  ASSERT_CUDA(cudaMemset(d, 0, 128 * sizeof(unsigned)));
  active_masks<<<1, 48>>>(d);
  ASSERT_CUDA(cudaGetLastError());
  const std::vector<unsigned> h = download(d, 128);
  for (int t = 0; t < 48; ++t) {
    const unsigned lane = t % 32, warp_lanes = t < 32 ? kFull : 0xffffu;
    EXPECT_EQ(h[t], warp_lanes) << "thread " << t << ": every lane of its warp calls it together";
    if (lane >= 28) continue;
    const unsigned branch = (lane < 12 ? 0x00000fffu : 0x0ffff000u) & warp_lanes;
    EXPECT_TRUE((h[64 + t] >> lane) & 1u) << "thread " << t;
    EXPECT_EQ(h[64 + t] & ~branch, 0u) << "thread " << t << ": only lanes of its own branch";
#ifdef CUDASIM
    EXPECT_EQ(h[64 + t], branch) << "thread " << t;
#endif
  }
  ASSERT_CUDA(cudaFree(d));
}

// The last warp of NVIDIA's reduce7 (reduction sample): the first `lanes` lanes sum with a mask
// of only themselves and offsets 16 down to 1, so lane 0 reads lanes outside the mask. That is
// undefined in CUDA; GPUs give 0 in practice (the sample relies on it), and so does the simulator.
__global__ void sum_with_a_partial_mask(float* out, int lanes) {
  const unsigned mask = __ballot_sync(kFull, static_cast<int>(threadIdx.x) < lanes);
  if (static_cast<int>(threadIdx.x) < lanes) {
    float sum = 1.0f + threadIdx.x;
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(mask, sum, offset);
    if (threadIdx.x == 0) *out = sum;
  }
}

TEST(PartialWarps, AShuffleFromALaneOutsideTheMaskGivesZero) {
  float* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, sizeof(float)));
  for (const int lanes : {16, 5, 1}) {
    sum_with_a_partial_mask<<<1, 32>>>(d, lanes);
    float sum = 0;
    ASSERT_CUDA(cudaMemcpy(&sum, d, sizeof sum, cudaMemcpyDeviceToHost));
    EXPECT_EQ(sum, lanes * (lanes + 1) / 2.0f) << lanes << " lanes";
  }
  ASSERT_CUDA(cudaFree(d));
}

TEST(PartialWarps, TheLastWarpOfABlockHasOnlyTheRemainingLanes) {
  unsigned* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, 6 * sizeof(unsigned)));
  partial_warp<<<1, 40>>>(d);
  ASSERT_CUDA(cudaGetLastError());
  const std::vector<unsigned> h = download(d, 6);
  EXPECT_EQ(h[0], kFull);
  EXPECT_EQ(h[1], 32u * 33u / 2);
  EXPECT_EQ(h[2], 31u * 32u / 2);
  EXPECT_EQ(h[3], 0xffu);
  EXPECT_EQ(h[4], 8u * 9u / 2);
  EXPECT_EQ(h[5], 7u * 8u / 2);
  ASSERT_CUDA(cudaFree(d));
}

}  // namespace
