// Half precision (cuda_fp16.h) and bfloat16 pairs (cuda_bf16.h): conversions bit-exact with
// IEEE binary16 (rounding to nearest even, overflow to infinity, subnormals, NaN), arithmetic
// rounded once (a fused multiply-add included), comparisons, half2/bfloat162 lane-wise
// operations, warp shuffles of __half and __half2, and atomicAdd on all four types. Valid CUDA (sm_80+): the same file runs
// on a GPU.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace {

constexpr unsigned kFull = 0xffffffffu;

/// The bits of float -> half, computed in a kernel (so that a GPU's conversion is what is tested).
__global__ void float_to_half_bits(const float* in, unsigned short* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = __half_as_ushort(__float2half_rn(in[i]));
}
__global__ void half_bits_to_float(const unsigned short* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = __half2float(__ushort_as_half(in[i]));
}

template <class In, class Out>
std::vector<Out> convert_on_device(void (*kernel)(const In*, Out*, int), const std::vector<In>& in) {
  const int n = static_cast<int>(in.size());
  In* d_in = nullptr;
  Out* d_out = nullptr;
  EXPECT_EQ(cudaMalloc(&d_in, n * sizeof(In)), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&d_out, n * sizeof(Out)), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(d_in, in.data(), n * sizeof(In), cudaMemcpyHostToDevice), cudaSuccess);
  kernel<<<(n + 63) / 64, 64>>>(d_in, d_out, n);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  std::vector<Out> out(n);
  EXPECT_EQ(cudaMemcpy(out.data(), d_out, n * sizeof(Out), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(cudaFree(d_in), cudaSuccess);
  EXPECT_EQ(cudaFree(d_out), cudaSuccess);
  return out;
}

template <class T>
T download_one(const T* device) {
  T value;
  EXPECT_EQ(cudaMemcpy(&value, device, sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  return value;
}

TEST(HalfConversion, FloatToHalfGivesTheIeeeBinary16BitPatterns) {
  struct Case {
    float value;
    unsigned short bits;
  };
  const std::vector<Case> cases = {
      {1.0f, 0x3C00},
      {-2.0f, 0xC000},
      {0.0f, 0x0000},
      {-0.0f, 0x8000},
      {0.1f, 0x2E66},                          // 0.0999755859375, the nearest half
      {65504.0f, 0x7BFF},                      // the largest finite half
      {65519.99f, 0x7BFF},                     // just below the midpoint to infinity
      {65520.0f, 0x7C00},                      // the midpoint rounds to even: infinity
      {1.0e6f, 0x7C00},                        // overflow
      {-1.0e6f, 0xFC00},
      {INFINITY, 0x7C00},
      {-INFINITY, 0xFC00},
      {1.0f + 1.0f / 2048, 0x3C00},            // a tie between 0x3C00 and 0x3C01: even
      {1.0f + 3.0f / 2048, 0x3C02},            // a tie between 0x3C01 and 0x3C02: even
      {1.0f + 1.0f / 2048 + 1.0f / 65536, 0x3C01},  // just above the tie
      {6.103515625e-05f, 0x0400},              // 2^-14, the smallest normal
      {5.9604644775390625e-08f, 0x0001},       // 2^-24, the smallest subnormal
      {2.98023223876953125e-08f, 0x0000},      // 2^-25: a tie between 0 and 2^-24: even
      {4.4703483581542969e-08f, 0x0001},       // 1.5 * 2^-25 rounds up
      {6.0975551605224609e-05f, 0x03FF},       // the largest subnormal, 1023 * 2^-24
      {-1.7881393432617188e-07f, 0x8003},      // -3 * 2^-24
  };
  std::vector<float> in;
  for (const Case& c : cases) in.push_back(c.value);
  const std::vector<unsigned short> bits = convert_on_device(float_to_half_bits, in);
  for (size_t i = 0; i < cases.size(); ++i)
    EXPECT_EQ(bits[i], cases[i].bits) << "value " << cases[i].value << " (case " << i << ")";
}

TEST(HalfConversion, NanStaysNan) {
  const std::vector<unsigned short> bits = convert_on_device(float_to_half_bits, std::vector<float>{NAN, -NAN});
  for (unsigned short b : bits) {
    EXPECT_EQ(b & 0x7C00, 0x7C00) << std::hex << b;
    EXPECT_NE(b & 0x03FF, 0) << std::hex << b;
  }
}

TEST(HalfConversion, HalfToFloatIsExact) {
  const std::vector<unsigned short> in = {0x3C00, 0x7BFF, 0x0001, 0x03FF, 0x0400, 0x8000, 0xFC00, 0x3555, 0x7E00};
  const std::vector<float> out = convert_on_device(half_bits_to_float, in);
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], 65504.0f);
  EXPECT_EQ(out[2], std::ldexp(1.0f, -24));
  EXPECT_EQ(out[3], std::ldexp(1023.0f, -24));
  EXPECT_EQ(out[4], std::ldexp(1.0f, -14));
  EXPECT_EQ(out[5], 0.0f);
  EXPECT_TRUE(std::signbit(out[5]));
  EXPECT_EQ(out[6], -INFINITY);
  EXPECT_EQ(out[7], 0.333251953125f);  // the half nearest 1/3
  EXPECT_TRUE(std::isnan(out[8]));
}

TEST(HalfConversion, EveryFiniteHalfSurvivesARoundTrip) {
  std::vector<unsigned short> all;
  for (unsigned b = 0; b < 0x10000; ++b)
    if ((b & 0x7C00) != 0x7C00) all.push_back(static_cast<unsigned short>(b));
  const std::vector<float> values = convert_on_device(half_bits_to_float, all);
  const std::vector<unsigned short> back = convert_on_device(float_to_half_bits, values);
  for (size_t i = 0; i < all.size(); ++i) ASSERT_EQ(back[i], all[i]) << "bits 0x" << std::hex << all[i];
}

/// out = {a+b, a*b, fma(a,b,c), sqrt(a), a>b, a-b with operators, ...} for one set of operands.
__global__ void half_arithmetic(const __half* in, __half* out, int* flags) {
  const __half a = in[0], b = in[1], c = in[2];
  out[0] = __hadd(a, b);
  out[1] = __hmul(a, b);
  out[2] = __hfma(a, b, c);
  out[3] = hsqrt(a);
  out[4] = a - b;
  // Two roundings: the _rn forms are never contracted. (Written `a * b + c`, nvcc fuses it into
  // one __hfma by default, -fmad=true: seen on an H200, 2026-11-27; the simulator does not.)
  out[5] = __hadd_rn(__hmul_rn(a, b), c);
  out[6] = __hdiv(a, b);
  out[7] = -a;
  __half counter = a;
  counter += b;
  out[8] = counter;
  flags[0] = __hgt(a, b);
  flags[1] = __hlt(a, b);
  flags[2] = a > b;
  flags[3] = a == a;
  flags[4] = __heq(in[3], in[3]);   // NaN == NaN: false
  flags[5] = __hequ(in[3], in[3]);  // unordered: true
  flags[6] = __hisnan(in[3]);
}

std::vector<__half> run_half_arithmetic(float a, float b, float c, std::vector<int>* flags) {
  const std::vector<__half> in = {__float2half(a), __float2half(b), __float2half(c), __float2half(NAN)};
  __half* d_in = nullptr;
  __half* d_out = nullptr;
  int* d_flags = nullptr;
  EXPECT_EQ(cudaMalloc(&d_in, 4 * sizeof(__half)), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&d_out, 9 * sizeof(__half)), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&d_flags, 7 * sizeof(int)), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(d_in, in.data(), 4 * sizeof(__half), cudaMemcpyHostToDevice), cudaSuccess);
  half_arithmetic<<<1, 1>>>(d_in, d_out, d_flags);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  std::vector<__half> out(9);
  flags->resize(7);
  EXPECT_EQ(cudaMemcpy(out.data(), d_out, 9 * sizeof(__half), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(flags->data(), d_flags, 7 * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(cudaFree(d_in), cudaSuccess);
  EXPECT_EQ(cudaFree(d_out), cudaSuccess);
  EXPECT_EQ(cudaFree(d_flags), cudaSuccess);
  return out;
}

TEST(HalfArithmetic, ResultsAreRoundedOnceToNearestEven) {
  std::vector<int> flags;
  // a = b = 1 + 3 * 2^-10: a * b = 1 + 6 * 2^-10 + 9 * 2^-20 rounds to 1 + 6 * 2^-10.
  const float a = 1.0f + 3.0f / 1024;
  const std::vector<__half> r = run_half_arithmetic(a, a, -1.0f, &flags);
  EXPECT_EQ(__half2float(r[0]), 2.0f + 6.0f / 1024);
  EXPECT_EQ(__half2float(r[1]), 1.0f + 6.0f / 1024);
  // fma keeps the 9 * 2^-20 until its one rounding: 6 * 2^-10 + 9 * 2^-20 has a step of
  // 2^-18 there, so it rounds to 6 * 2^-10 + 2 * 2^-18; the unfused a * b + c gives 6 * 2^-10.
  EXPECT_EQ(__half2float(r[2]), 6.0f / 1024 + 8.0f / (1 << 20));
  EXPECT_EQ(__half2float(r[5]), 6.0f / 1024);
  EXPECT_EQ(__half_as_ushort(r[3]), __half_as_ushort(__float2half(std::sqrt(a))));
  EXPECT_EQ(__half2float(r[4]), 0.0f);
  EXPECT_EQ(__half2float(r[6]), 1.0f);
  EXPECT_EQ(__half2float(r[7]), -a);
  EXPECT_EQ(__half2float(r[8]), 2.0f + 6.0f / 1024);
  EXPECT_EQ(flags, (std::vector<int>{0, 0, 0, 1, 0, 1, 1}));
}

TEST(HalfArithmetic, OverflowGivesInfinityAndComparisonsOrder) {
  std::vector<int> flags;
  const std::vector<__half> r = run_half_arithmetic(60000.0f, 0.5f, 40000.0f, &flags);
  EXPECT_EQ(__half2float(r[0]), 60000.0f);                       // 60000.5 rounds back to 60000
  EXPECT_EQ(__half2float(r[2]), INFINITY);                       // 30000 + 40000 > 65504
  EXPECT_EQ(__half_as_ushort(r[6]), 0x7C00);                     // 120000: infinity
  EXPECT_EQ(flags[0], 1);
  EXPECT_EQ(flags[2], 1);
}

/// half2 lane-wise arithmetic and conversions, one pair per thread.
__global__ void half2_arithmetic(const float2* in, float2* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const __half2 a = __float22half2_rn(in[i]);
  const __half2 b = __halves2half2(__float2half(2.0f), __float2half(0.5f));
  const __half2 sum = __hadd2(a, b);
  const __half2 product = __hmul2(a, b);
  const __half2 fused = __hfma2(a, b, sum);
  out[3 * i] = __half22float2(sum);
  out[3 * i + 1] = make_float2(__low2float(product), __high2float(product));
  out[3 * i + 2] = make_float2(__half2float(__low2half(fused)), __half2float(__high2half(fused)));
}

TEST(Half2Arithmetic, OperatesOnBothLanes) {
  const int n = 37;
  std::vector<float2> in(n);
  for (int i = 0; i < n; ++i) in[i] = make_float2(static_cast<float>(i), static_cast<float>(-2 * i));
  const std::vector<float2> out = [&] {
    float2* d_in = nullptr;
    float2* d_out = nullptr;
    EXPECT_EQ(cudaMalloc(&d_in, n * sizeof(float2)), cudaSuccess);
    EXPECT_EQ(cudaMalloc(&d_out, 3 * n * sizeof(float2)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(d_in, in.data(), n * sizeof(float2), cudaMemcpyHostToDevice), cudaSuccess);
    half2_arithmetic<<<2, 32>>>(d_in, d_out, n);
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
    std::vector<float2> h(3 * n);
    EXPECT_EQ(cudaMemcpy(h.data(), d_out, 3 * n * sizeof(float2), cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(cudaFree(d_in), cudaSuccess);
    EXPECT_EQ(cudaFree(d_out), cudaSuccess);
    return h;
  }();
  for (int i = 0; i < n; ++i) {  // small integers and halves of them are exact in half
    const float x = static_cast<float>(i), y = static_cast<float>(-2 * i);
    EXPECT_EQ(out[3 * i].x, x + 2.0f) << i;
    EXPECT_EQ(out[3 * i].y, y + 0.5f) << i;
    EXPECT_EQ(out[3 * i + 1].x, x * 2.0f) << i;
    EXPECT_EQ(out[3 * i + 1].y, y * 0.5f) << i;
    EXPECT_EQ(out[3 * i + 2].x, x * 2.0f + (x + 2.0f)) << i;
    EXPECT_EQ(out[3 * i + 2].y, y * 0.5f + (y + 0.5f)) << i;
  }
}

/// A warp sum of half2 values with __shfl_xor_sync, and a broadcast of a __half with __shfl_sync.
__global__ void half_warp_sum(float2* sums, float* broadcast) {
  const int lane = threadIdx.x % 32;
  __half2 v = __floats2half2_rn(static_cast<float>(lane), 0.25f);
  for (int offset = 16; offset > 0; offset /= 2) v = __hadd2(v, __shfl_xor_sync(kFull, v, offset));
  sums[threadIdx.x] = __half22float2(v);
  const __half h = __float2half(static_cast<float>(lane) + 0.5f);
  __half down = __shfl_down_sync(kFull, h, 1);
  down = __shfl_up_sync(kFull, down, 1);  // lane 0 keeps its own (which was lane 1's)
  broadcast[threadIdx.x] = __half2float(__shfl_sync(kFull, h, 7)) + __half2float(down);
}

TEST(HalfShuffle, ShufflesMoveHalfAndHalf2Values) {
  float2* d_sums = nullptr;
  float* d_broadcast = nullptr;
  ASSERT_EQ(cudaMalloc(&d_sums, 64 * sizeof(float2)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_broadcast, 64 * sizeof(float)), cudaSuccess);
  half_warp_sum<<<1, 64>>>(d_sums, d_broadcast);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  std::vector<float2> sums(64);
  std::vector<float> broadcast(64);
  ASSERT_EQ(cudaMemcpy(sums.data(), d_sums, 64 * sizeof(float2), cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(broadcast.data(), d_broadcast, 64 * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  for (int t = 0; t < 64; ++t) {
    EXPECT_EQ(sums[t].x, 496.0f) << t;  // 0 + 1 + ... + 31, exact in half
    EXPECT_EQ(sums[t].y, 8.0f) << t;
    const int lane = t % 32;
    const float down_then_up = lane == 0 ? 1.5f : (lane == 31 ? 31.5f : lane + 0.5f);
    EXPECT_EQ(broadcast[t], 7.5f + down_then_up) << t;
  }
  EXPECT_EQ(cudaFree(d_sums), cudaSuccess);
  EXPECT_EQ(cudaFree(d_broadcast), cudaSuccess);
}

/// __hmax/__hmin of (+0, -0), (NaN, 2), (NaN, NaN) and (1, 3), as bits.
__global__ void half_max_min(unsigned short* out) {
  const __half zero = __ushort_as_half(0x0000), minus_zero = __ushort_as_half(0x8000);
  const __half nan = __ushort_as_half(0x7E00), two = __float2half(2.0f);
  const __half one = __float2half(1.0f), three = __float2half(3.0f);
  out[0] = __half_as_ushort(__hmax(minus_zero, zero));
  out[1] = __half_as_ushort(__hmin(zero, minus_zero));
  out[2] = __half_as_ushort(__hmax(nan, two));
  out[3] = __half_as_ushort(__hmin(two, nan));
  out[4] = __half_as_ushort(__hmax(one, three));
  out[5] = __half_as_ushort(__hmin(one, three));
  out[6] = __half_as_ushort(__hmax(nan, nan));
}

TEST(HalfArithmetic, MaxAndMinOrderZerosAndSkipNan) {
  unsigned short* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 7 * sizeof(unsigned short)), cudaSuccess);
  half_max_min<<<1, 1>>>(d);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  std::vector<unsigned short> h(7);
  ASSERT_EQ(cudaMemcpy(h.data(), d, 7 * sizeof(unsigned short), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(h[0], 0x0000);  // +0 is the larger zero
  EXPECT_EQ(h[1], 0x8000);
  EXPECT_EQ(h[2], 0x4000);  // a NaN operand gives the other one
  EXPECT_EQ(h[3], 0x4000);
  EXPECT_EQ(h[4], 0x4200);
  EXPECT_EQ(h[5], 0x3C00);
  EXPECT_EQ(h[6] & 0x7C00, 0x7C00);  // two NaNs: NaN
  EXPECT_NE(h[6] & 0x03FF, 0);
  EXPECT_EQ(cudaFree(d), cudaSuccess);
}

/// bfloat162: conversions and lane-wise arithmetic; out gets 4 float2 per test.
__global__ void bfloat162_arithmetic(float2* out) {
  const __nv_bfloat162 a = __floats2bfloat162_rn(3.0f, 1.0f + 1.0f / 256);  // the second is a tie
  const __nv_bfloat162 b = __floats2bfloat162_rn(1.0f + 3.0f / 128, 2.0f);
  const __nv_bfloat162 tiny = __floats2bfloat162_rn(ldexpf(1.0f, -60), 0.0f);
  out[0] = __bfloat1622float2(a);
  out[1] = __bfloat1622float2(__hadd2(a, b));
  out[2] = __bfloat1622float2(__hmul2(a, b));
  out[3] = __bfloat1622float2(__hfma2(a, b, tiny));
  out[4] = make_float2(__low2float(__hmul2(a, b)), __bfloat162float(__high2bfloat16(b)));
}

TEST(BFloat162, ConvertsAndComputesLaneWiseRoundingOnce) {
  float2* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 5 * sizeof(float2)), cudaSuccess);
  bfloat162_arithmetic<<<1, 1>>>(d);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  std::vector<float2> h(5);
  ASSERT_EQ(cudaMemcpy(h.data(), d, 5 * sizeof(float2), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(h[0].x, 3.0f);
  EXPECT_EQ(h[0].y, 1.0f);  // 1 + 2^-8 is a tie between 1 and 1 + 2^-7: even
  EXPECT_EQ(h[1].x, 4.03125f);  // 4 + 3 * 2^-7 is 0.75 of a step (2^-5) above 4: up
  EXPECT_EQ(h[1].y, 3.0f);
  // 3 * (1 + 3 * 2^-7) = 3.0703125 is a tie between 3.0625 and 3.078125: even is 3.0625.
  EXPECT_EQ(h[2].x, 3.0625f);
  EXPECT_EQ(h[2].y, 2.0f);
  // With 2^-60 added before the one rounding the tie is broken upwards; rounding the exact
  // sum to double first would lose the 2^-60 and round to even.
  EXPECT_EQ(h[3].x, 3.078125f);
  EXPECT_EQ(h[3].y, 2.0f);
  EXPECT_EQ(h[4].x, 3.0625f);
  EXPECT_EQ(h[4].y, 2.0f);
  EXPECT_EQ(cudaFree(d), cudaSuccess);
}

/// bf16 and bfloat162 operators (CUDA's, as llm.c uses them): each the matching intrinsic,
/// rounded once; out gets 8 floats.
__global__ void bfloat16_operators(float* out) {
  const __nv_bfloat16 a = __float2bfloat16(3.0f), b = __float2bfloat16(1.0f + 3.0f / 128);
  __nv_bfloat16 c = a * b;  // 3.0703125 is a tie between 3.0625 and 3.078125: even
  c += b;
  const __nv_bfloat162 p = __floats2bfloat162_rn(3.0f, 2.0f), q = __floats2bfloat162_rn(1.0f + 3.0f / 128, 0.5f);
  __nv_bfloat162 r = p + q;
  r -= q * q;
  out[0] = __bfloat162float(c);
  out[1] = __bfloat162float(-a);
  out[2] = (a > b) + 2 * (a == a) + 4 * (a != b) + 8 * (b >= a);
  out[3] = __low2float(r);
  out[4] = __high2float(r);
  out[5] = (p == p) + 2 * (p != q) + 4 * (p == q);
  __nv_bfloat16 n = 3;  // from an int, as llm.c's Packed128::zeros() builds its zero
  ++n;
  out[6] = __bfloat162float(n);
  out[7] = __bfloat162float(a / b);
}

TEST(BFloat16, OperatorsAreTheIntrinsics) {
  float* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 8 * sizeof(float)), cudaSuccess);
  bfloat16_operators<<<1, 1>>>(d);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  std::vector<float> h(8);
  ASSERT_EQ(cudaMemcpy(h.data(), d, 8 * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  const auto bf = [](float x) { return __bfloat162float(__float2bfloat16(x)); };
  EXPECT_EQ(h[0], bf(3.0625f + (1.0f + 3.0f / 128)));
  EXPECT_EQ(h[1], -3.0f);
  EXPECT_EQ(h[2], 1 + 2 + 4);
  const float q_lo = 1.0f + 3.0f / 128;
  EXPECT_EQ(h[3], bf(bf(3.0f + q_lo) - bf(q_lo * q_lo)));
  EXPECT_EQ(h[4], bf(2.5f - 0.25f));
  EXPECT_EQ(h[5], 1 + 2);
  EXPECT_EQ(h[6], 4.0f);
  const __nv_bfloat16 big = 257;  // between 256 and 258 (bf16 steps of 2 there): a tie, to even
  const __half odd = 2049;        // between 2048 and 2050 in half: a tie, to even
  EXPECT_EQ(__bfloat162float(big), 256.0f);
  EXPECT_EQ(__half2float(odd), 2048.0f);
  EXPECT_EQ(__bfloat162float(__nv_bfloat16(-7L)), -7.0f);
  EXPECT_EQ(h[7], bf(3.0f / q_lo));
  EXPECT_EQ(cudaFree(d), cudaSuccess);
}

/// Every thread of every block adds to one half and one half2 counter; the first 16 of each
/// block to the bf16 ones (bf16 has 8 significant bits: sums above 256 would round). sm_80+.
__global__ void add_atomically(__half2* h2, __half* h, __nv_bfloat162* b2, __nv_bfloat16* b) {
  atomicAdd(h2, __halves2half2(__float2half(1.0f), __float2half(0.5f)));
  atomicAdd(h, __float2half(1.0f));
  if (threadIdx.x < 16) {
    atomicAdd(b2, __floats2bfloat162_rn(1.0f, 2.0f));
    atomicAdd(b, __float2bfloat16(0.5f));
  }
}

TEST(HalfAtomics, AtomicAddLosesNoUpdate) {
  // 8 blocks of 64 threads: 512 additions to the halves, 128 to the bf16s, every partial sum
  // exact.
  __half2* h2 = nullptr;
  __half* h = nullptr;
  __nv_bfloat162* b2 = nullptr;
  __nv_bfloat16* b = nullptr;
  ASSERT_EQ(cudaMalloc(&h2, sizeof(__half2)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&h, sizeof(__half)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&b2, sizeof(__nv_bfloat162)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&b, sizeof(__nv_bfloat16)), cudaSuccess);
  ASSERT_EQ(cudaMemset(h2, 0, sizeof(__half2)), cudaSuccess);
  ASSERT_EQ(cudaMemset(h, 0, sizeof(__half)), cudaSuccess);
  ASSERT_EQ(cudaMemset(b2, 0, sizeof(__nv_bfloat162)), cudaSuccess);
  ASSERT_EQ(cudaMemset(b, 0, sizeof(__nv_bfloat16)), cudaSuccess);
  add_atomically<<<8, 64>>>(h2, h, b2, b);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  const float2 half2_sum = __half22float2(download_one(h2));
  const float2 bf162_sum = __bfloat1622float2(download_one(b2));
  EXPECT_EQ(half2_sum.x, 512.0f);
  EXPECT_EQ(half2_sum.y, 256.0f);
  EXPECT_EQ(__half2float(download_one(h)), 512.0f);
  EXPECT_EQ(bf162_sum.x, 128.0f);
  EXPECT_EQ(bf162_sum.y, 256.0f);
  EXPECT_EQ(__bfloat162float(download_one(b)), 64.0f);
  EXPECT_EQ(cudaFree(h2), cudaSuccess);
  EXPECT_EQ(cudaFree(h), cudaSuccess);
  EXPECT_EQ(cudaFree(b2), cudaSuccess);
  EXPECT_EQ(cudaFree(b), cudaSuccess);
}

}  // namespace
