// __match_any_sync and __match_all_sync (warp operations over the mask, with 32- and 64-bit
// values and partial masks), __nanosleep (it changes no result, and a spin-wait on another
// block that sleeps in its loop finishes), clock() and clock64() (they never go backwards in a
// thread, across a barrier too). Valid CUDA (sm_70+): the same file runs on a GPU. The
// simulator-only check (divergence in a match is reported) is under #ifdef CUDASIM.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace {

constexpr unsigned kFull = 0xffffffffu;

template <class T>
std::vector<T> download(const T* device, size_t count) {
  std::vector<T> host(count);
  EXPECT_EQ(cudaMemcpy(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  return host;
}

/// Lanes with equal `lane / group` (32-bit), equal `lane % 3` (64-bit values), equal float keys.
__global__ void match_any(unsigned* out, int group) {
  const int t = threadIdx.x, lane = t % 32;
  out[3 * t] = __match_any_sync(kFull, lane / group);
  out[3 * t + 1] = __match_any_sync(kFull, static_cast<unsigned long long>(lane % 3) << 40);
  out[3 * t + 2] = __match_any_sync(kFull, lane < 10 ? 1.5f : 2.5f);
}

unsigned expected_any(int lane, bool (*same)(int, int)) {
  unsigned mask = 0;
  for (int other = 0; other < 32; ++other)
    if (same(lane, other)) mask |= 1u << other;
  return mask;
}

TEST(WarpMatch, MatchAnyGivesTheLanesHoldingTheSameValue) {
  unsigned* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 3 * 64 * sizeof(unsigned)), cudaSuccess);
  match_any<<<1, 64>>>(d, 5);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  const std::vector<unsigned> h = download(d, 3 * 64);
  for (int t = 0; t < 64; ++t) {
    const int lane = t % 32;
    EXPECT_EQ(h[3 * t], expected_any(lane, [](int a, int b) { return a / 5 == b / 5; })) << t;
    EXPECT_EQ(h[3 * t + 1], expected_any(lane, [](int a, int b) { return a % 3 == b % 3; })) << t;
    EXPECT_EQ(h[3 * t + 2], expected_any(lane, [](int a, int b) { return (a < 10) == (b < 10); })) << t;
  }
  EXPECT_EQ(cudaFree(d), cudaSuccess);
}

/// Only the even lanes take part; the result names only lanes of the mask.
__global__ void match_any_even_lanes(unsigned* out) {
  const int lane = threadIdx.x % 32;
  out[threadIdx.x] = 0;
  if (lane % 2 == 0) out[threadIdx.x] = __match_any_sync(0x55555555u, lane % 4);
}

TEST(WarpMatch, MatchAnyConsidersOnlyTheLanesOfTheMask) {
  unsigned* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 32 * sizeof(unsigned)), cudaSuccess);
  match_any_even_lanes<<<1, 32>>>(d);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  const std::vector<unsigned> h = download(d, 32);
  for (int lane = 0; lane < 32; ++lane)
    EXPECT_EQ(h[lane], lane % 2 ? 0u : (lane % 4 == 0 ? 0x11111111u : 0x44444444u)) << lane;
  EXPECT_EQ(cudaFree(d), cudaSuccess);
}

/// out[2t] = the mask __match_all_sync returns, out[2t+1] = its predicate. Warp 0: every lane
/// holds 7; warp 1: lane 9 holds something else.
__global__ void match_all(unsigned* out) {
  const int t = threadIdx.x;
  const long long value = (t == 32 + 9) ? -1 : 7;
  int predicate = -5;
  out[2 * t] = __match_all_sync(kFull, value, &predicate);
  out[2 * t + 1] = static_cast<unsigned>(predicate);
}

TEST(WarpMatch, MatchAllGivesTheMaskOnlyWhenEveryLaneAgrees) {
  unsigned* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 2 * 64 * sizeof(unsigned)), cudaSuccess);
  match_all<<<1, 64>>>(d);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  const std::vector<unsigned> h = download(d, 2 * 64);
  for (int t = 0; t < 32; ++t) {
    EXPECT_EQ(h[2 * t], kFull) << t;
    EXPECT_EQ(h[2 * t + 1], 1u) << t;
  }
  for (int t = 32; t < 64; ++t) {
    EXPECT_EQ(h[2 * t], 0u) << t;
    EXPECT_EQ(h[2 * t + 1], 0u) << t;
  }
  EXPECT_EQ(cudaFree(d), cudaSuccess);
}

/// A block-wide sum with __nanosleep between the steps: sleeping changes nothing.
__global__ void sum_with_naps(const int* in, int* out) {
  __shared__ int partial[128];
  partial[threadIdx.x] = in[threadIdx.x];
  __nanosleep(100 * threadIdx.x);
  __syncthreads();
  for (int stride = 64; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __nanosleep(50);
    __syncthreads();
  }
  if (threadIdx.x == 0) *out = partial[0];
}

TEST(Nanosleep, ChangesNoResult) {
  std::vector<int> in(128);
  for (int i = 0; i < 128; ++i) in[i] = 3 * i - 7;
  int* d_in = nullptr;
  int* d_out = nullptr;
  ASSERT_EQ(cudaMalloc(&d_in, 128 * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_out, sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d_in, in.data(), 128 * sizeof(int), cudaMemcpyHostToDevice), cudaSuccess);
  sum_with_naps<<<1, 128>>>(d_in, d_out);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(download(d_out, 1)[0], 3 * 127 * 128 / 2 - 7 * 128);
  EXPECT_EQ(cudaFree(d_in), cudaSuccess);
  EXPECT_EQ(cudaFree(d_out), cudaSuccess);
}

/// Block 1 waits (sleeping in its loop) until block 0 has published a value.
__global__ void wait_for_block_zero(volatile int* flag, int* seen) {
  if (threadIdx.x != 0) return;
  if (blockIdx.x == 0) {
    seen[0] = 42;
    __threadfence();
    *flag = 1;
  } else {
    while (*flag == 0) __nanosleep(1000);
    __threadfence();
    seen[1] = seen[0] + 1;
  }
}

TEST(Nanosleep, ASpinWaitOnAnotherBlockFinishes) {
  int* flag = nullptr;
  int* seen = nullptr;
  ASSERT_EQ(cudaMalloc(&flag, sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&seen, 2 * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMemset(flag, 0, sizeof(int)), cudaSuccess);
  wait_for_block_zero<<<2, 32>>>(flag, seen);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  const std::vector<int> h = download(seen, 2);
  EXPECT_EQ(h[1], 43);
  EXPECT_EQ(cudaFree(flag), cudaSuccess);
  EXPECT_EQ(cudaFree(seen), cudaSuccess);
}

/// out[t] = 1 when the thread's clock64() and clock() readings never went backwards, across
/// some work and a barrier.
__global__ void clocks_are_monotonic(int* out, float* sink) {
  const long long first = clock64();
  const clock_t first_short = clock();
  float x = threadIdx.x;
  for (int i = 0; i < 1000; ++i) x = x * 1.0001f + 0.5f;
  const long long second = clock64();
  __syncthreads();
  const long long third = clock64();
  const clock_t last_short = clock();
  sink[threadIdx.x] = x;
  out[threadIdx.x] = first <= second && second <= third && first_short <= last_short;
}

TEST(Clock, NeverGoesBackwardsInAThread) {
  int* d_out = nullptr;
  float* d_sink = nullptr;
  ASSERT_EQ(cudaMalloc(&d_out, 96 * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_sink, 96 * sizeof(float)), cudaSuccess);
  clocks_are_monotonic<<<1, 96>>>(d_out, d_sink);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  const std::vector<int> h = download(d_out, 96);
  for (int t = 0; t < 96; ++t) EXPECT_EQ(h[t], 1) << t;
  EXPECT_EQ(cudaFree(d_out), cudaSuccess);
  EXPECT_EQ(cudaFree(d_sink), cudaSuccess);
}

#ifdef CUDASIM
/// Half of the warp calls __match_any_sync at one line, the other half at another: a
/// divergence the simulator reports, naming the operation.
__global__ void match_divergence(unsigned* out) {
  if (threadIdx.x < 16)
    out[threadIdx.x] = __match_any_sync(kFull, 1);
  else
    out[threadIdx.x] = __match_any_sync(kFull, 2);
}

TEST(WarpMatchSimulator, DivergentMatchIsReported) {
  unsigned* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 32 * sizeof(unsigned)), cudaSuccess);
  testing::internal::CaptureStderr();
  match_divergence<<<1, 32>>>(d);
  const cudaError_t synced = cudaDeviceSynchronize();
  const std::string report = testing::internal::GetCapturedStderr();
  EXPECT_EQ(synced, cudaErrorLaunchFailure);
  EXPECT_NE(report.find("__match_any_sync"), std::string::npos) << report;
  EXPECT_EQ(cudaDeviceReset(), cudaSuccess);
}
#endif

}  // namespace

// ---- directed rounding: __fadd_rd, __fmul_ru, __fdiv_rz, ... ------------------------------------

namespace {

/// For each input pair: the four roundings of a + b, a * b, a / b, sqrt(a) and fma(a, b, a).
__global__ void directed(const float* a, const float* b, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float x = a[i], y = b[i];
  float* o = out + 20 * i;
  o[0] = __fadd_rn(x, y), o[1] = __fadd_rd(x, y), o[2] = __fadd_ru(x, y), o[3] = __fadd_rz(x, y);
  o[4] = __fmul_rn(x, y), o[5] = __fmul_rd(x, y), o[6] = __fmul_ru(x, y), o[7] = __fmul_rz(x, y);
  o[8] = __fdiv_rn(x, y), o[9] = __fdiv_rd(x, y), o[10] = __fdiv_ru(x, y), o[11] = __fdiv_rz(x, y);
  const float r = fabsf(x);
  o[12] = __fsqrt_rn(r), o[13] = __fsqrt_rd(r), o[14] = __fsqrt_ru(r), o[15] = __fsqrt_rz(r);
  o[16] = __fmaf_rn(x, y, x), o[17] = __fmaf_rd(x, y, x), o[18] = __fmaf_ru(x, y, x), o[19] = __fmaf_rz(x, y, x);
}

/// rd <= exact <= ru, neighbours unless the result is exact, rn one of them, rz the one nearer
/// zero. `exact`: in long double (64-bit mantissa), where the sums, products and fma of the
/// test's inputs are exact (or overflow a float either way); quotients and roots are checked
/// through their defining products instead.
void expect_brackets(float rn, float rd, float ru, float rz, long double exact, const char* what) {
  EXPECT_LE(static_cast<long double>(rd), exact) << what;
  EXPECT_GE(static_cast<long double>(ru), exact) << what;
  if (static_cast<long double>(rn) == exact) {
    EXPECT_EQ(rd, rn) << what;
    EXPECT_EQ(ru, rn) << what;
  } else {
    EXPECT_EQ(ru, std::nextafter(rd, INFINITY)) << what << ": rd and ru are neighbours";
    EXPECT_TRUE(rn == rd || rn == ru) << what;
  }
  EXPECT_EQ(rz, exact >= 0 ? rd : ru) << what << ": toward zero";
}

}  // namespace

__global__ void named_min_max(unsigned* u, long long* ll, unsigned long long* ull) {
  u[0] = umin(3u, 0xffffffffu);
  u[1] = umax(3u, 0xffffffffu);
  ll[0] = llmin(-5ll, 1ll << 40);
  ll[1] = llmax(-5ll, 1ll << 40);
  ull[0] = ullmin(1ull << 63, 2ull);
  ull[1] = ullmax(1ull << 63, 2ull);
}

TEST(MinMax, NamedFormsCompareInTheirOwnType) {
  unsigned* u = nullptr;
  long long* ll = nullptr;
  unsigned long long* ull = nullptr;
  ASSERT_EQ(cudaMallocManaged(&u, 2 * sizeof(unsigned)), cudaSuccess);
  ASSERT_EQ(cudaMallocManaged(&ll, 2 * sizeof(long long)), cudaSuccess);
  ASSERT_EQ(cudaMallocManaged(&ull, 2 * sizeof(unsigned long long)), cudaSuccess);
  named_min_max<<<1, 1>>>(u, ll, ull);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(u[0], 3u);
  EXPECT_EQ(u[1], 0xffffffffu);
  EXPECT_EQ(ll[0], -5);
  EXPECT_EQ(ll[1], 1ll << 40);
  EXPECT_EQ(ull[0], 2u);
  EXPECT_EQ(ull[1], 1ull << 63);
  cudaFree(u);
  cudaFree(ll);
  cudaFree(ull);
}

TEST(DirectedRounding, BracketsTheExactResultWithNeighbours) {
  const std::vector<float> a = {1.0f, 1.0f, -1.0f, 3.0f, 1e30f, 0.1f, -7.25f, 2.0f, 1.0f / 3.0f, 16777216.0f};
  const std::vector<float> b = {1e-8f, 3.0f, 1e-8f, 7.0f, 1e20f, 0.2f, 0.001f, 2.0f, 3.0f, 1.0f};
  const int n = static_cast<int>(a.size());
  float *da, *db, *dout;
  ASSERT_EQ(cudaMalloc(&da, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&db, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dout, 20 * n * sizeof(float)), cudaSuccess);
  cudaMemcpy(da, a.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  directed<<<1, 32>>>(da, db, dout, n);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto o = download(dout, 20 * n);
  for (int i = 0; i < n; ++i) {
    const long double x = a[i], y = b[i];
    const float* r = &o[20 * i];
    const std::string at = "a = " + std::to_string(a[i]) + ", b = " + std::to_string(b[i]);
    expect_brackets(r[0], r[1], r[2], r[3], x + y, ("add, " + at).c_str());
    expect_brackets(r[4], r[5], r[6], r[7], x * y, ("mul, " + at).c_str());
    expect_brackets(r[16], r[17], r[18], r[19], x * y + x, ("fma, " + at).c_str());
    // a / b lies in [rd, ru]: rd * b <= a <= ru * b (b > 0 here), exactly in long double.
    EXPECT_LE(static_cast<long double>(r[9]) * y, x) << "div rd, " << at;
    EXPECT_GE(static_cast<long double>(r[10]) * y, x) << "div ru, " << at;
    EXPECT_TRUE(r[9] == r[10] || r[10] == std::nextafter(r[9], INFINITY)) << "div, " << at;
    const long double root = std::fabs(x);
    EXPECT_LE(static_cast<long double>(r[13]) * r[13], root) << "sqrt rd, " << at;
    EXPECT_GE(static_cast<long double>(r[14]) * r[14], root) << "sqrt ru, " << at;
    EXPECT_TRUE(r[13] == r[14] || r[14] == std::nextafter(r[13], INFINITY)) << "sqrt, " << at;
  }
  // Exact results need no step; 1 + 2^-27 is between 1 and its upper neighbour.
  EXPECT_EQ(o[20 * 7 + 1], 4.0f);
  EXPECT_EQ(o[20 * 7 + 2], 4.0f);
  EXPECT_EQ(o[1], 1.0f);
  EXPECT_EQ(o[2], std::nextafter(1.0f, 2.0f));
  cudaFree(da);
  cudaFree(db);
  cudaFree(dout);
}

#ifdef CUDASIM
TEST(DirectedRoundingSimulator, OverflowRoundsToTheLargestFiniteValueUnlessAwayFromZero) {
  const float big = 3e38f;
  EXPECT_EQ(__fadd_rn(big, big), INFINITY);
  EXPECT_EQ(__fadd_ru(big, big), INFINITY);
  EXPECT_EQ(__fadd_rd(big, big), std::numeric_limits<float>::max());
  EXPECT_EQ(__fadd_rz(big, big), std::numeric_limits<float>::max());
  EXPECT_EQ(__fmul_rd(-big, big), -INFINITY);
  EXPECT_EQ(__fmul_ru(-big, big), -std::numeric_limits<float>::max());
  EXPECT_EQ(__fsqrt_rd(INFINITY), INFINITY);            // exact, not an overflow
  EXPECT_TRUE(std::isnan(__fdiv_rd(0.0f, 0.0f)));
  EXPECT_EQ(__dadd_rd(1.0, 1e-30), 1.0);
  EXPECT_EQ(__dadd_ru(1.0, 1e-30), std::nextafter(1.0, 2.0));
  EXPECT_EQ(__ddiv_rz(-1.0, 3.0), __ddiv_ru(-1.0, 3.0));
}
#endif
