// cuRAND: the device API (XORWOW and Philox4_32_10 states in kernels) and the host API
// (generators filling device memory). The known values were read from NVIDIA's cuRAND 10.4
// (its curand_kernel.h compiled for the host, and libcurand's host generator); the Philox
// known answers are the Random123 test vectors of Salmon et al. Statistical checks cover what
// is not bit-exact on a GPU (normals). Valid CUDA: the same file runs on a GPU.
#include <cuda_runtime.h>
#include <curand.h>
#include <curand_kernel.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "device_buffer.cuh"

#ifdef CUDASIM
#include <cudasim/stats.hpp>
#include <dlfcn.h>
#endif

namespace {

#define ASSERT_CUDA(expr) ASSERT_EQ((expr), cudaSuccess)
#define ASSERT_CURAND(expr) ASSERT_EQ((expr), CURAND_STATUS_SUCCESS)

// ---- Device API: known values ------------------------------------------------------------------

template <class State>
__global__ void first_draws(unsigned long long seed, unsigned long long subsequence, unsigned long long offset,
                            unsigned int* out, int n) {
  State state;
  curand_init(seed, subsequence, offset, &state);
  for (int i = 0; i < n; ++i) out[i] = curand(&state);
}

template <class State>
std::vector<unsigned int> draws_of(unsigned long long seed, unsigned long long subsequence, unsigned long long offset,
                                   int n) {
  DeviceBuffer<unsigned int> out(n);
  first_draws<State><<<1, 1>>>(seed, subsequence, offset, out.get(), n);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return out.download();
}

TEST(CurandDevice, XorwowGivesCurandsSequence) {
  EXPECT_EQ(draws_of<curandState_t>(1234, 0, 0, 3), (std::vector<unsigned int>{624778773u, 1867875844u, 3739671282u}));
  EXPECT_EQ(draws_of<curandState_t>(1234, 5, 7, 3), (std::vector<unsigned int>{3351265907u, 3629609298u, 415430802u}));
  EXPECT_EQ(draws_of<curandState_t>(0, 0, 0, 1), (std::vector<unsigned int>{3179217846u}));
  // The largest subsequence and offset: every jump matrix takes part.
  EXPECT_EQ(draws_of<curandStateXORWOW_t>(0, ~0ull, ~0ull - 12, 3),
            (std::vector<unsigned int>{689894627u, 4074492666u, 1037131494u}));
}

TEST(CurandDevice, PhiloxGivesCurandsSequence) {
  EXPECT_EQ(draws_of<curandStatePhilox4_32_10_t>(1234, 0, 0, 3),
            (std::vector<unsigned int>{546353992u, 3665621163u, 1140953199u}));
  EXPECT_EQ(draws_of<curandStatePhilox4_32_10_t>(1234, 5, 7, 3),
            (std::vector<unsigned int>{1925342002u, 648658203u, 3633236749u}));
}

/// Philox4x32-10 of a counter and a key: the counter's upper half is the subsequence, its lower
/// half the block (skipahead counts draws, four a block: n blocks take several skips).
__global__ void philox_block_of(uint4 counter, uint2 key, uint4* out) {
  curandStatePhilox4_32_10_t state;
  const unsigned long long seed = static_cast<unsigned long long>(key.y) << 32 | key.x;
  curand_init(seed, static_cast<unsigned long long>(counter.w) << 32 | counter.z, 0, &state);
  const unsigned long long blocks = static_cast<unsigned long long>(counter.y) << 32 | counter.x;
  for (int i = 0; i < 4; ++i) skipahead(blocks / 4 * 4, &state);    // 4 * (blocks / 4) blocks
  skipahead((blocks % 4) * 4, &state);
  *out = curand4(&state);
}

TEST(CurandDevice, PhiloxKnownAnswersOfRandom123) {
  struct Case {
    uint4 counter;
    uint2 key;
    uint4 expected;
  };
  const Case cases[] = {
      {make_uint4(0, 0, 0, 0), make_uint2(0, 0), make_uint4(0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u)},
      {make_uint4(~0u, ~0u, ~0u, ~0u), make_uint2(~0u, ~0u), make_uint4(0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu)},
      {make_uint4(0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u), make_uint2(0xa4093822u, 0x299f31d0u),
       make_uint4(0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u)}};
  for (const Case& c : cases) {
    DeviceBuffer<uint4> out(1);
    philox_block_of<<<1, 1>>>(c.counter, c.key, out.get());
    ASSERT_CUDA(cudaDeviceSynchronize());
    const uint4 got = out.download()[0];
    EXPECT_EQ(got.x, c.expected.x);
    EXPECT_EQ(got.y, c.expected.y);
    EXPECT_EQ(got.z, c.expected.z);
    EXPECT_EQ(got.w, c.expected.w);
  }
}

// ---- Device API: skipping ahead is stepping --------------------------------------------------

/// Thread i: skipahead(steps[i]) against steps[i] draws; out[i] = 1 when the next draws agree.
template <class State>
__global__ void skip_equals_step(const unsigned long long* steps, int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  State skipped, stepped;
  curand_init(42, i, 3, &skipped);
  curand_init(42, i, 3, &stepped);
  skipahead(steps[i], &skipped);
  for (unsigned long long k = 0; k < steps[i]; ++k) curand(&stepped);
  bool same = true;
  for (int k = 0; k < 6; ++k) same = same && curand(&skipped) == curand(&stepped);
  out[i] = same;
}

template <class State>
void expect_skips_equal_steps() {
  const std::vector<unsigned long long> steps = {0, 1, 2, 3, 4, 5, 7, 31, 32, 33, 100, 255, 256, 1000, 4097};
  const int n = static_cast<int>(steps.size());
  DeviceBuffer<unsigned long long> device_steps(n);
  ASSERT_CUDA(cudaMemcpy(device_steps.get(), steps.data(), n * sizeof(unsigned long long), cudaMemcpyHostToDevice));
  DeviceBuffer<int> out(n);
  skip_equals_step<State><<<1, n>>>(device_steps.get(), out.get(), n);
  ASSERT_CUDA(cudaDeviceSynchronize());
  const std::vector<int> same = out.download();
  for (int i = 0; i < n; ++i) EXPECT_EQ(same[i], 1) << "skipahead(" << steps[i] << ")";
}

TEST(CurandDevice, XorwowSkipaheadIsStepping) { expect_skips_equal_steps<curandState_t>(); }
TEST(CurandDevice, PhiloxSkipaheadIsStepping) { expect_skips_equal_steps<curandStatePhilox4_32_10_t>(); }

/// out[0]: curand_init(seed, s, o) == curand_init(seed, 0, 0) + skipahead_sequence(s) +
/// skipahead(o); out[1]: one subsequence is `jumps` skips of 2^63 draws.
template <class State>
__global__ void init_is_skips(unsigned long long subsequence, unsigned long long offset, int jumps, int* out) {
  State direct, composed, by_offsets, by_sequence;
  curand_init(7, subsequence, offset, &direct);
  curand_init(7, 0, 0, &composed);
  skipahead_sequence(subsequence, &composed);
  skipahead(offset, &composed);
  out[0] = curand(&direct) == curand(&composed) && curand(&direct) == curand(&composed);
  curand_init(7, 0, 0, &by_offsets);
  curand_init(7, 0, 0, &by_sequence);
  for (int i = 0; i < jumps; ++i) skipahead(1ull << 63, &by_offsets);
  skipahead_sequence(1, &by_sequence);
  out[1] = curand(&by_offsets) == curand(&by_sequence) && curand(&by_offsets) == curand(&by_sequence);
}

template <class State>
void expect_init_is_skips(int jumps_per_subsequence) {
  const unsigned long long cases[][2] = {{1, 1}, {12345, 678}, {1ull << 40, 1ull << 50}, {~0ull, ~0ull}};
  for (const auto& c : cases) {
    DeviceBuffer<int> out(2);
    init_is_skips<State><<<1, 1>>>(c[0], c[1], jumps_per_subsequence, out.get());
    ASSERT_CUDA(cudaDeviceSynchronize());
    const std::vector<int> same = out.download();
    EXPECT_EQ(same[0], 1) << "subsequence " << c[0] << ", offset " << c[1];
    EXPECT_EQ(same[1], 1);
  }
}

TEST(CurandDevice, XorwowInitIsSkipsAndSubsequencesAre2To67Draws) { expect_init_is_skips<curandState_t>(16); }
TEST(CurandDevice, PhiloxInitIsSkipsAndSubsequencesAre2To66Draws) {
  expect_init_is_skips<curandStatePhilox4_32_10_t>(8);
}

#ifdef CUDASIM
template <class State>
__global__ void seed_states(State* states) {
  curand_init(1234, threadIdx.x, 0, &states[threadIdx.x]);
}

/// Seeding writes each thread's state to global memory: counted (and checked) as a GPU's stores,
/// every field, not a struct copy the counters would miss.
template <class State>
void expect_seeding_counted(std::uint64_t field_bytes) {
  if (!cudasim::stats_available()) GTEST_SKIP() << "built without the memory counters";
  State* states = nullptr;
  ASSERT_EQ(cudaMalloc(&states, 64 * sizeof(State)), cudaSuccess);
  cudasim::reset_stats();
  seed_states<<<1, 64>>>(states);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const cudasim::KernelStats k = cudasim::kernel_stats().at(0);
  EXPECT_EQ(k.global_store_bytes, 64 * field_bytes);
  EXPECT_EQ(k.global_load_bytes, 0u);
  EXPECT_EQ(cudaFree(states), cudaSuccess);
}

TEST(CurandDevice, XorwowSeedingIsCountedAsStores) { expect_seeding_counted<curandState_t>(44); }
TEST(CurandDevice, PhiloxSeedingIsCountedAsStores) { expect_seeding_counted<curandStatePhilox4_32_10_t>(64); }
#endif

/// curand4 from every lane gives the next four draws.
__global__ void curand4_from_each_lane(int* out) {
  const int lane = threadIdx.x;
  curandStatePhilox4_32_10_t quad, single;
  curand_init(9, 1, lane, &quad);
  curand_init(9, 1, lane, &single);
  const uint4 four = curand4(&quad);
  const unsigned int a = curand(&single), b = curand(&single), c = curand(&single), d = curand(&single);
  out[lane] = four.x == a && four.y == b && four.z == c && four.w == d && curand(&quad) == curand(&single);
}

TEST(CurandDevice, Curand4IsTheNextFourDraws) {
  DeviceBuffer<int> out(4);
  curand4_from_each_lane<<<1, 4>>>(out.get());
  ASSERT_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(out.download(), std::vector<int>(4, 1));
}

// ---- Device API: distributions ------------------------------------------------------------------

constexpr int kThreads = 4096;
constexpr int kPerThread = 256;  // 2^20 samples

enum Distribution { kUniform, kUniformDouble, kNormal, kNormalDouble, kNormal2, kLogNormal, kUniform4, kNormal4 };

/// Each thread its own subsequence of one generator, as the cuRAND guide's examples do.
template <class State>
__global__ void sample(Distribution what, double* out) {
  const int id = blockIdx.x * blockDim.x + threadIdx.x;
  State state;
  curand_init(2024, id, 0, &state);
  for (int i = 0; i < kPerThread; i += 2) {
    double a = 0, b = 0;
    switch (what) {
      case kUniform: a = curand_uniform(&state), b = curand_uniform(&state); break;
      case kUniformDouble: a = curand_uniform_double(&state), b = curand_uniform_double(&state); break;
      case kNormal: a = curand_normal(&state), b = curand_normal(&state); break;
      case kNormalDouble: a = curand_normal_double(&state), b = curand_normal_double(&state); break;
      case kNormal2: { const float2 p = curand_normal2(&state); a = p.x, b = p.y; break; }
      case kLogNormal: a = curand_log_normal(&state, 0.5f, 0.25f), b = curand_log_normal(&state, 0.5f, 0.25f); break;
      default: break;
    }
    out[static_cast<size_t>(id) * kPerThread + i] = a;
    out[static_cast<size_t>(id) * kPerThread + i + 1] = b;
  }
}

__global__ void sample_philox4(Distribution what, double* out) {
  const int id = blockIdx.x * blockDim.x + threadIdx.x;
  curandStatePhilox4_32_10_t state;
  curand_init(2024, id, 0, &state);
  for (int i = 0; i < kPerThread; i += 4) {
    const float4 v = what == kUniform4 ? curand_uniform4(&state) : curand_normal4(&state);
    double* at = out + static_cast<size_t>(id) * kPerThread + i;
    at[0] = v.x, at[1] = v.y, at[2] = v.z, at[3] = v.w;
  }
}

struct Moments {
  double mean = 0, variance = 0, min = INFINITY, max = -INFINITY;
};

Moments moments_of(const std::vector<double>& x, bool take_log = false) {
  Moments m;
  for (double v : x) {
    const double y = take_log ? std::log(v) : v;
    m.mean += y;
    m.min = std::fmin(m.min, v);
    m.max = std::fmax(m.max, v);
  }
  m.mean /= x.size();
  for (double v : x) {
    const double y = take_log ? std::log(v) : v;
    m.variance += (y - m.mean) * (y - m.mean);
  }
  m.variance /= x.size() - 1;
  return m;
}

template <class State>
std::vector<double> samples(Distribution what) {
  DeviceBuffer<double> out(static_cast<size_t>(kThreads) * kPerThread);
  if (what == kUniform4 || what == kNormal4)
    sample_philox4<<<kThreads / 256, 256>>>(what, out.get());
  else
    sample<State><<<kThreads / 256, 256>>>(what, out.get());
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return out.download();
}

// 2^20 samples: the standard error of a mean of variance 1 is 0.001, of the variance 0.0014.
template <class State>
void expect_uniforms_in_0_1(Distribution what) {
  const Moments m = moments_of(samples<State>(what));
  EXPECT_GT(m.min, 0.0);
  EXPECT_LE(m.max, 1.0);
  EXPECT_NEAR(m.mean, 0.5, 0.002);
  EXPECT_NEAR(m.variance, 1.0 / 12, 0.001);
}

template <class State>
void expect_standard_normals(Distribution what) {
  const Moments m = moments_of(samples<State>(what));
  EXPECT_NEAR(m.mean, 0.0, 0.005);
  EXPECT_NEAR(m.variance, 1.0, 0.01);
  EXPECT_LT(m.min, -4.0);  // 2^20 samples reach beyond 4 sigma on both sides
  EXPECT_GT(m.max, 4.0);
}

TEST(CurandDevice, XorwowUniformsAreIn0To1) {
  expect_uniforms_in_0_1<curandState_t>(kUniform);
  expect_uniforms_in_0_1<curandState_t>(kUniformDouble);
}
TEST(CurandDevice, PhiloxUniformsAreIn0To1) {
  expect_uniforms_in_0_1<curandStatePhilox4_32_10_t>(kUniform);
  expect_uniforms_in_0_1<curandStatePhilox4_32_10_t>(kUniformDouble);
  expect_uniforms_in_0_1<curandStatePhilox4_32_10_t>(kUniform4);
}
TEST(CurandDevice, XorwowNormalsAreStandard) {
  expect_standard_normals<curandState_t>(kNormal);
  expect_standard_normals<curandState_t>(kNormalDouble);
  expect_standard_normals<curandState_t>(kNormal2);
}
TEST(CurandDevice, PhiloxNormalsAreStandard) {
  expect_standard_normals<curandStatePhilox4_32_10_t>(kNormal);
  expect_standard_normals<curandStatePhilox4_32_10_t>(kNormalDouble);
  expect_standard_normals<curandStatePhilox4_32_10_t>(kNormal4);
}
TEST(CurandDevice, LogNormalIsExpOfNormal) {
  const Moments m = moments_of(samples<curandState_t>(kLogNormal), /*take_log=*/true);
  EXPECT_GT(m.min, 0.0);
  EXPECT_NEAR(m.mean, 0.5, 0.002);
  EXPECT_NEAR(m.variance, 0.0625, 0.001);
}

/// curand_normal hands out both values of a Box-Muller pair, the second from the state.
__global__ void normal_pairs(float* out) {
  curandState_t a, b;
  curand_init(5, 0, 0, &a);
  curand_init(5, 0, 0, &b);
  const float2 pair = curand_normal2(&a);
  out[0] = pair.x, out[1] = pair.y;
  out[2] = curand_normal(&b), out[3] = curand_normal(&b);
  out[4] = curand(&a) == curand(&b);  // the pair took two draws either way
}

TEST(CurandDevice, NormalKeepsTheSecondValueOfThePair) {
  DeviceBuffer<float> out(5);
  normal_pairs<<<1, 1>>>(out.get());
  ASSERT_CUDA(cudaDeviceSynchronize());
  const std::vector<float> v = out.download();
  EXPECT_EQ(v[0], v[2]);
  EXPECT_EQ(v[1], v[3]);
  EXPECT_EQ(v[4], 1.0f);
}

__global__ void poisson_samples(double lambda, unsigned int* out, int per_thread) {
  const int id = blockIdx.x * blockDim.x + threadIdx.x;
  curandStatePhilox4_32_10_t state;
  curand_init(11, id, 0, &state);
  for (int i = 0; i < per_thread; ++i) out[id * per_thread + i] = curand_poisson(&state, lambda);
}

TEST(CurandDevice, PoissonHasMeanAndVarianceLambda) {
  for (double lambda : {0.5, 4.0, 100.0, 5000.0}) {
    const int threads = 1024, per_thread = lambda > 50 ? 16 : 128;
    DeviceBuffer<unsigned int> out(threads * per_thread);
    poisson_samples<<<threads / 128, 128>>>(lambda, out.get(), per_thread);
    ASSERT_CUDA(cudaDeviceSynchronize());
    std::vector<double> x;
    for (unsigned int k : out.download()) x.push_back(k);
    const Moments m = moments_of(x);
    const double n = static_cast<double>(x.size());
    EXPECT_NEAR(m.mean, lambda, 5 * std::sqrt(lambda / n)) << "lambda " << lambda;
    EXPECT_NEAR(m.variance / lambda, 1.0, 5 * std::sqrt(2.0 / n)) << "lambda " << lambda;
  }
}

// ---- Host API -----------------------------------------------------------------------------------

class CurandHost : public ::testing::TestWithParam<curandRngType_t> {};

std::vector<unsigned int> generated_bits(curandGenerator_t generator, size_t n) {
  DeviceBuffer<unsigned int> out(n);
  EXPECT_EQ(curandGenerate(generator, out.get(), n), CURAND_STATUS_SUCCESS);
  return out.download();
}

TEST(CurandHostApi, GeneratorsGiveCurandsSequences) {
  curandGenerator_t generator;
  ASSERT_CURAND(curandCreateGenerator(&generator, CURAND_RNG_PSEUDO_DEFAULT));
  EXPECT_EQ(generated_bits(generator, 2), (std::vector<unsigned int>{3179217846u, 3955638199u}));  // seed 0
  ASSERT_CURAND(curandSetPseudoRandomGeneratorSeed(generator, 1234));
  ASSERT_CURAND(curandSetGeneratorOffset(generator, 0));
  EXPECT_EQ(generated_bits(generator, 4),
            (std::vector<unsigned int>{624778773u, 3522650202u, 2363946744u, 1266286439u}));
  ASSERT_CURAND(curandDestroyGenerator(generator));

  ASSERT_CURAND(curandCreateGenerator(&generator, CURAND_RNG_PSEUDO_PHILOX4_32_10));
  ASSERT_CURAND(curandSetPseudoRandomGeneratorSeed(generator, 1234));
  EXPECT_EQ(generated_bits(generator, 4),
            (std::vector<unsigned int>{546353992u, 3665621163u, 1140953199u, 3419031310u}));
  ASSERT_CURAND(curandDestroyGenerator(generator));
}

/// XORWOW's output i comes from subsequence i % 4096, draw i / 4096; Philox's from
/// subsequence (i / 4) % 65536, block i / 262144.
__global__ void device_api_bits(bool philox, unsigned int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  if (philox) {
    curandStatePhilox4_32_10_t state;
    curand_init(77, (i / 4) % 65536, (i / 262144) * 4 + i % 4, &state);
    out[i] = curand(&state);
  } else {
    curandState_t state;
    curand_init(77, i % 4096, i / 4096, &state);
    out[i] = curand(&state);
  }
}

TEST_P(CurandHost, OutputIsTheDeviceApisSubsequencesInterleaved) {
  const int n = 300000;
  curandGenerator_t generator;
  ASSERT_CURAND(curandCreateGenerator(&generator, GetParam()));
  ASSERT_CURAND(curandSetPseudoRandomGeneratorSeed(generator, 77));
  const std::vector<unsigned int> library = generated_bits(generator, n);
  ASSERT_CURAND(curandDestroyGenerator(generator));
  DeviceBuffer<unsigned int> out(n);
  device_api_bits<<<(n + 255) / 256, 256>>>(GetParam() == CURAND_RNG_PSEUDO_PHILOX4_32_10, out.get(), n);
  ASSERT_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(library, out.download());
}

/// A mixed run of calls, written to `host` (a host generator) or through device memory.
std::vector<double> mixed_calls(curandRngType_t type, bool host_generator, unsigned long long offset) {
  curandGenerator_t generator;
  const curandStatus_t made =
      host_generator ? curandCreateGeneratorHost(&generator, type) : curandCreateGenerator(&generator, type);
  EXPECT_EQ(made, CURAND_STATUS_SUCCESS);
  EXPECT_EQ(curandSetPseudoRandomGeneratorSeed(generator, 99), CURAND_STATUS_SUCCESS);
  EXPECT_EQ(curandSetGeneratorOffset(generator, offset), CURAND_STATUS_SUCCESS);
  const size_t n = 5002;
  std::vector<double> all;
  auto run = [&](auto call, auto element, size_t count) {
    using T = decltype(element);
    std::vector<T> host(count);
    if (host_generator) {
      EXPECT_EQ(call(generator, host.data()), CURAND_STATUS_SUCCESS);
    } else {
      DeviceBuffer<T> device(count);
      EXPECT_EQ(call(generator, device.get()), CURAND_STATUS_SUCCESS);
      host = device.download();
    }
    all.insert(all.end(), host.begin(), host.end());
  };
  run([&](curandGenerator_t g, unsigned int* p) { return curandGenerate(g, p, 7); }, 0u, 7);
  run([&](curandGenerator_t g, float* p) { return curandGenerateUniform(g, p, n); }, 0.0f, n);
  run([&](curandGenerator_t g, double* p) { return curandGenerateUniformDouble(g, p, n); }, 0.0, n);
  run([&](curandGenerator_t g, float* p) { return curandGenerateNormal(g, p, n, 1.0f, 2.0f); }, 0.0f, n);
  run([&](curandGenerator_t g, double* p) { return curandGenerateNormalDouble(g, p, n, 1.0, 2.0); }, 0.0, n);
  run([&](curandGenerator_t g, float* p) { return curandGenerateLogNormal(g, p, n, 0.0f, 0.5f); }, 0.0f, n);
  run([&](curandGenerator_t g, double* p) { return curandGenerateLogNormalDouble(g, p, n, 0.0, 0.5); }, 0.0, n);
  EXPECT_EQ(curandDestroyGenerator(generator), CURAND_STATUS_SUCCESS);
  return all;
}

TEST_P(CurandHost, HostAndDeviceGeneratorsAgree) {
  for (unsigned long long offset : {0ull, 3ull, 70000ull}) {
    const std::vector<double> host = mixed_calls(GetParam(), true, offset);
    const std::vector<double> device = mixed_calls(GetParam(), false, offset);
#ifdef CUDASIM
    EXPECT_EQ(host, device);
#else
    // cuRAND's host generator computes the normal and log-normal transforms with the CPU's
    // math, so they differ from the GPU's in the last bits (an H200 run, 2026-11-27, with
    // cuRAND of CUDA 13.0): the same sequence, within rounding.
    ASSERT_EQ(host.size(), device.size());
    size_t differ = 0;
    for (size_t i = 0; i < host.size(); ++i)
      if (std::abs(host[i] - device[i]) > 1e-5 * std::abs(device[i]) + 1e-6 && differ++ < 5)
        ADD_FAILURE() << "offset " << offset << ", value " << i << ": host " << host[i] << ", device " << device[i];
    EXPECT_EQ(differ, 0u);
#endif
  }
}

TEST_P(CurandHost, CallsContinueWhereTheLastStopped) {
  curandGenerator_t whole, parts, shifted;
  for (curandGenerator_t* g : {&whole, &parts, &shifted}) {
    ASSERT_CURAND(curandCreateGenerator(g, GetParam()));
    ASSERT_CURAND(curandSetPseudoRandomGeneratorSeed(*g, 5));
  }
  const std::vector<unsigned int> all = generated_bits(whole, 9000);
  std::vector<unsigned int> pieces = generated_bits(parts, 10);
  const std::vector<unsigned int> rest = generated_bits(parts, 8990);
  pieces.insert(pieces.end(), rest.begin(), rest.end());
  EXPECT_EQ(all, pieces);
  ASSERT_CURAND(curandSetGeneratorOffset(shifted, 4100));
  EXPECT_EQ(generated_bits(shifted, 100), std::vector<unsigned int>(all.begin() + 4100, all.begin() + 4200));
  for (curandGenerator_t g : {whole, parts, shifted}) ASSERT_CURAND(curandDestroyGenerator(g));
}

/// The generator's work runs in order on its stream, after the kernel queued before it.
__global__ void fill_with(unsigned int* out, int n, unsigned int value) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = value;
}

TEST_P(CurandHost, RunsInOrderOnItsStream) {
  const int n = 1 << 16;
  cudaStream_t stream;
  ASSERT_CUDA(cudaStreamCreate(&stream));
  curandGenerator_t generator, reference;
  ASSERT_CURAND(curandCreateGenerator(&generator, GetParam()));
  ASSERT_CURAND(curandSetStream(generator, stream));
  ASSERT_CURAND(curandCreateGeneratorHost(&reference, GetParam()));
  DeviceBuffer<unsigned int> out(n);
  std::vector<unsigned int> host(n), expected(n);
  fill_with<<<n / 256, 256, 0, stream>>>(out.get(), n, 0);
  ASSERT_CURAND(curandGenerate(generator, out.get(), n));
  ASSERT_CUDA(cudaMemcpyAsync(host.data(), out.get(), n * sizeof(unsigned int), cudaMemcpyDeviceToHost, stream));
  ASSERT_CUDA(cudaStreamSynchronize(stream));
  ASSERT_CURAND(curandGenerate(reference, expected.data(), n));
  EXPECT_EQ(host, expected);
  ASSERT_CURAND(curandDestroyGenerator(generator));
  ASSERT_CURAND(curandDestroyGenerator(reference));
  ASSERT_CUDA(cudaStreamDestroy(stream));
}

TEST_P(CurandHost, UniformAndNormalMoments) {
  const size_t n = 1 << 20;
  curandGenerator_t generator;
  ASSERT_CURAND(curandCreateGenerator(&generator, GetParam()));
  DeviceBuffer<float> out(n);
  ASSERT_CURAND(curandGenerateUniform(generator, out.get(), n));
  const std::vector<float> uniform = out.download();
  const Moments u = moments_of(std::vector<double>(uniform.begin(), uniform.end()));
  EXPECT_GT(u.min, 0.0);
  EXPECT_LE(u.max, 1.0);
  EXPECT_NEAR(u.mean, 0.5, 0.002);
  ASSERT_CURAND(curandGenerateNormal(generator, out.get(), n, 3.0f, 2.0f));
  const std::vector<float> normal = out.download();
  const Moments z = moments_of(std::vector<double>(normal.begin(), normal.end()));
  EXPECT_NEAR(z.mean, 3.0, 0.01);
  EXPECT_NEAR(z.variance, 4.0, 0.04);
  ASSERT_CURAND(curandDestroyGenerator(generator));
}

INSTANTIATE_TEST_SUITE_P(Generators, CurandHost,
                         ::testing::Values(CURAND_RNG_PSEUDO_XORWOW, CURAND_RNG_PSEUDO_PHILOX4_32_10),
                         [](const ::testing::TestParamInfo<curandRngType_t>& info) {
                           return std::string(info.param == CURAND_RNG_PSEUDO_XORWOW ? "Xorwow" : "Philox");
                         });

TEST(CurandHostApi, StatusCodes) {
  int version = 0;
  ASSERT_CURAND(curandGetVersion(&version));
  EXPECT_GE(version, 10000);
  curandGenerator_t generator;
  ASSERT_CURAND(curandCreateGenerator(&generator, CURAND_RNG_PSEUDO_XORWOW));
  DeviceBuffer<float> out(3);
  EXPECT_EQ(curandGenerateNormal(generator, out.get(), 3, 0.0f, 1.0f), CURAND_STATUS_LENGTH_NOT_MULTIPLE);
  ASSERT_CURAND(curandDestroyGenerator(generator));
#ifdef CUDASIM
  // A destroyed generator is refused by name on the simulator; cuRAND's answer is undefined
  // (CURAND_STATUS_INTERNAL_ERROR, 999, on an H200 with CUDA 13.0, 2026-11-27).
  EXPECT_EQ(curandGenerateUniform(generator, out.get(), 2), CURAND_STATUS_NOT_INITIALIZED);
  // Generators the simulator lacks are refused, never replaced by another one.
  for (curandRngType_t type : {CURAND_RNG_PSEUDO_MRG32K3A, CURAND_RNG_PSEUDO_MTGP32, CURAND_RNG_QUASI_SOBOL32})
    EXPECT_EQ(curandCreateGenerator(&generator, type), CURAND_STATUS_TYPE_ERROR);
#endif
}

#ifdef CUDASIM
/// Where NVIDIA's libcurand is installed (the CUDA Toolkit, as on CI), its host generator is the
/// reference: the same calls give the same values, bit for bit. Skipped without it.
TEST(CurandHostApi, AgreesWithNvidiasLibraryWhenInstalled) {
  void* library = dlopen("/usr/local/cuda/lib64/libcurand.so", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) GTEST_SKIP() << "no /usr/local/cuda/lib64/libcurand.so";
  struct Nvidia {
    decltype(&curandCreateGeneratorHost) create;
    decltype(&curandSetPseudoRandomGeneratorSeed) seed;
    decltype(&curandSetGeneratorOffset) offset;
    decltype(&curandGenerate) bits;
    decltype(&curandGenerateUniformDouble) doubles;
    decltype(&curandGenerateNormal) normals;
    decltype(&curandDestroyGenerator) destroy;
  };
  const Nvidia nv{reinterpret_cast<decltype(&curandCreateGeneratorHost)>(dlsym(library, "curandCreateGeneratorHost")),
                  reinterpret_cast<decltype(&curandSetPseudoRandomGeneratorSeed)>(dlsym(library, "curandSetPseudoRandomGeneratorSeed")),
                  reinterpret_cast<decltype(&curandSetGeneratorOffset)>(dlsym(library, "curandSetGeneratorOffset")),
                  reinterpret_cast<decltype(&curandGenerate)>(dlsym(library, "curandGenerate")),
                  reinterpret_cast<decltype(&curandGenerateUniformDouble)>(dlsym(library, "curandGenerateUniformDouble")),
                  reinterpret_cast<decltype(&curandGenerateNormal)>(dlsym(library, "curandGenerateNormal")),
                  reinterpret_cast<decltype(&curandDestroyGenerator)>(dlsym(library, "curandDestroyGenerator"))};
  ASSERT_TRUE(nv.create && nv.seed && nv.offset && nv.bits && nv.doubles && nv.normals && nv.destroy);
  for (curandRngType_t type : {CURAND_RNG_PSEUDO_XORWOW, CURAND_RNG_PSEUDO_PHILOX4_32_10}) {
    curandGenerator_t theirs, ours;
    if (nv.create(&theirs, type) != CURAND_STATUS_SUCCESS) GTEST_SKIP() << "libcurand's host generator did not start";
    ASSERT_CURAND(curandCreateGeneratorHost(&ours, type));
    ASSERT_CURAND(nv.seed(theirs, 31337));
    ASSERT_CURAND(curandSetPseudoRandomGeneratorSeed(ours, 31337));
    ASSERT_CURAND(nv.offset(theirs, 4093));
    ASSERT_CURAND(curandSetGeneratorOffset(ours, 4093));
    const size_t n = 9002;
    std::vector<unsigned int> bits_theirs(n), bits_ours(n);
    std::vector<double> doubles_theirs(n), doubles_ours(n);
    std::vector<float> normals_theirs(n), normals_ours(n);
    for (int round = 0; round < 2; ++round) {
      ASSERT_CURAND(nv.bits(theirs, bits_theirs.data(), n - round));
      ASSERT_CURAND(curandGenerate(ours, bits_ours.data(), n - round));
      EXPECT_EQ(bits_theirs, bits_ours);
      ASSERT_CURAND(nv.doubles(theirs, doubles_theirs.data(), n - 2 * round));
      ASSERT_CURAND(curandGenerateUniformDouble(ours, doubles_ours.data(), n - 2 * round));
      EXPECT_EQ(doubles_theirs, doubles_ours);
      ASSERT_CURAND(nv.normals(theirs, normals_theirs.data(), n, 0.5f, 3.0f));
      ASSERT_CURAND(curandGenerateNormal(ours, normals_ours.data(), n, 0.5f, 3.0f));
      EXPECT_EQ(normals_theirs, normals_ours);
    }
    ASSERT_CURAND(nv.destroy(theirs));
    ASSERT_CURAND(curandDestroyGenerator(ours));
  }
  dlclose(library);
}
#endif

}  // namespace
