// Inline PTX in device code: special registers, integer, bit and floating-point instructions,
// predicates and .reg temporaries, SIMD byte differences, vector loads and stores, warp votes and
// shuffles, the block barrier, and what the simulator's interpreter refuses. Expected values are
// computed on the host from the PTX ISA's definitions. Valid CUDA: the same file runs on a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace {

#define ASSERT_CUDA(expr) ASSERT_EQ((expr), cudaSuccess)

/// Copies `n` values of a device buffer back.
template <class T>
std::vector<T> fetch(const T* device, std::size_t n) {
  std::vector<T> host(n);
  EXPECT_EQ(cudaMemcpy(host.data(), device, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  return host;
}

__global__ void special_registers(unsigned* lane, unsigned* warp, unsigned* below, unsigned* tid) {
  const int i = threadIdx.x;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane[i]));
  asm volatile("mov.u32 %0, %%warpid;" : "=r"(warp[i]));
  unsigned mask;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(mask));
  below[i] = mask;
  asm("mov.u32 %0, %%tid.x;" : "=r"(tid[i]));
}

TEST(InlinePtx, SpecialRegistersNameTheThread) {
  const int n = 96;
  unsigned *lane, *warp, *below, *tid;
  ASSERT_CUDA(cudaMalloc(&lane, n * sizeof(unsigned)));
  ASSERT_CUDA(cudaMalloc(&warp, n * sizeof(unsigned)));
  ASSERT_CUDA(cudaMalloc(&below, n * sizeof(unsigned)));
  ASSERT_CUDA(cudaMalloc(&tid, n * sizeof(unsigned)));
  special_registers<<<1, n>>>(lane, warp, below, tid);
  ASSERT_CUDA(cudaDeviceSynchronize());
  const auto l = fetch(lane, n), w = fetch(warp, n), b = fetch(below, n), t = fetch(tid, n);
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(l[i], static_cast<unsigned>(i % 32));
    EXPECT_EQ(t[i], static_cast<unsigned>(i));
    EXPECT_EQ(b[i], (1u << (i % 32)) - 1u);
  }
  // %warpid is the warp's slot on its SM, not its index in the block: only its range is fixed.
  for (int i = 0; i < n; ++i) EXPECT_LT(w[i], 64u);
  cudaFree(lane);
  cudaFree(warp);
  cudaFree(below);
  cudaFree(tid);
}

/// The sum of the absolute differences of the four bytes, plus c (NVIDIA's stereoDisparity).
__device__ unsigned usad4(unsigned a, unsigned b, unsigned c) {
  unsigned result;
  asm("vabsdiff4.u32.u32.u32.add"
      " %0, %1, %2, %3;"
      : "=r"(result)
      : "r"(a), "r"(b), "r"(c));
  return result;
}

__global__ void integer_instructions(const unsigned* a, const unsigned* b, unsigned* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const unsigned x = a[i], y = b[i];
  unsigned* o = out + 12 * i;
  o[0] = usad4(x, y, 7u);
  asm("mad.lo.s32 %0, %1, %2, %3;" : "=r"(o[1]) : "r"(x), "r"(y), "r"(11));
  asm("mul.hi.u32 %0, %1, %2;" : "=r"(o[2]) : "r"(x), "r"(y));
  asm("bfe.s32 %0, %1, 4, 9;" : "=r"(o[3]) : "r"(x));
  asm("bfi.b32 %0, %1, %2, 8, 12;" : "=r"(o[4]) : "r"(x), "r"(y));
  asm("prmt.b32 %0, %1, %2, 0x9470;" : "=r"(o[5]) : "r"(x), "r"(y));
  asm("lop3.b32 %0, %1, %2, %3, 0x96;" : "=r"(o[6]) : "r"(x), "r"(y), "r"(0xf0f0f0f0u));  // a ^ b ^ c
  asm("shf.l.wrap.b32 %0, %1, %2, %3;" : "=r"(o[7]) : "r"(x), "r"(y), "r"(y & 63u));
  asm("popc.b32 %0, %1;" : "=r"(o[8]) : "r"(x));
  asm("brev.b32 %0, %1;" : "=r"(o[9]) : "r"(x));
  asm("bfind.u32 %0, %1;" : "=r"(o[10]) : "r"(x));
  // A block with temporaries and a predicate: the signed minimum, then plus one where x > y.
  unsigned m = 0;
  asm("{\n\t"
      ".reg .pred p, q;\n\t"
      ".reg .s32 t;\n\t"
      "setp.lt.s32 p, %1, %2;\n\t"
      "selp.s32 t, %1, %2, p;\n\t"
      "setp.gt.u32 q, %1, %2;\n\t"
      "@q add.s32 t, t, 1;\n\t"
      "mov.b32 %0, t;\n\t"
      "}"
      : "=r"(m)
      : "r"(x), "r"(y));
  o[11] = m;
}

/// The PTX ISA's definitions, on the host.
std::vector<unsigned> expected_integers(unsigned x, unsigned y) {
  std::vector<unsigned> e(12);
  unsigned sad = 7;
  for (int k = 0; k < 4; ++k) {
    const int p = (x >> (8 * k)) & 0xff, q = (y >> (8 * k)) & 0xff;
    sad += static_cast<unsigned>(p > q ? p - q : q - p);
  }
  e[0] = sad;
  e[1] = static_cast<unsigned>(static_cast<int>(x) * static_cast<int>(y) + 11);
  e[2] = static_cast<unsigned>((static_cast<std::uint64_t>(x) * y) >> 32);
  unsigned field = (x >> 4) & 0x1ff;
  if (field & 0x100) field |= ~0x1ffu;
  e[3] = field;
  e[4] = (y & ~(0xfffu << 8)) | ((x & 0xfffu) << 8);
  const std::uint64_t bytes = (static_cast<std::uint64_t>(y) << 32) | x;
  unsigned permuted = 0;
  for (int k = 0; k < 4; ++k) {
    const unsigned selector = (0x9470u >> (4 * k)) & 0xf;
    unsigned byte = (bytes >> (8 * (selector & 7))) & 0xff;
    if (selector & 8) byte = (byte & 0x80) ? 0xff : 0;
    permuted |= byte << (8 * k);
  }
  e[5] = permuted;
  e[6] = x ^ y ^ 0xf0f0f0f0u;
  const unsigned shift = (y & 63u) & 31u;
  e[7] = static_cast<unsigned>((((static_cast<std::uint64_t>(y) << 32) | x) << shift) >> 32);
  e[8] = static_cast<unsigned>(__builtin_popcount(x));
  unsigned reversed = 0;
  for (int k = 0; k < 32; ++k)
    if ((x >> k) & 1) reversed |= 1u << (31 - k);
  e[9] = reversed;
  e[10] = x == 0 ? 0xffffffffu : 31u - static_cast<unsigned>(__builtin_clz(x));
  int m = std::min(static_cast<int>(x), static_cast<int>(y));
  if (x > y) m += 1;
  e[11] = static_cast<unsigned>(m);
  return e;
}

TEST(InlinePtx, IntegerAndBitInstructionsFollowThePtxIsa) {
  const int n = 64;
  std::vector<unsigned> a(n), b(n);
  std::uint32_t state = 12345;
  for (int i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    a[i] = state;
    state = state * 1664525u + 1013904223u;
    b[i] = i % 7 == 0 ? a[i] : state;  // some equal pairs
  }
  a[1] = 0;  // bfind of zero
  unsigned *da, *db, *dout;
  ASSERT_CUDA(cudaMalloc(&da, n * sizeof(unsigned)));
  ASSERT_CUDA(cudaMalloc(&db, n * sizeof(unsigned)));
  ASSERT_CUDA(cudaMalloc(&dout, 12 * n * sizeof(unsigned)));
  ASSERT_CUDA(cudaMemcpy(da, a.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
  ASSERT_CUDA(cudaMemcpy(db, b.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
  integer_instructions<<<2, 32>>>(da, db, dout, n);
  ASSERT_CUDA(cudaDeviceSynchronize());
  const std::vector<unsigned> out = fetch(dout, 12 * n);
  const char* names[12] = {"vabsdiff4.add", "mad.lo.s32", "mul.hi.u32", "bfe.s32",  "bfi.b32",   "prmt.b32",
                           "lop3.b32",      "shf.l.wrap", "popc.b32",   "brev.b32", "bfind.u32", "setp/selp block"};
  for (int i = 0; i < n; ++i) {
    const std::vector<unsigned> e = expected_integers(a[i], b[i]);
    for (int k = 0; k < 12; ++k)
      EXPECT_EQ(out[12 * i + k], e[k]) << names[k] << " of " << a[i] << ", " << b[i];
  }
  cudaFree(da);
  cudaFree(db);
  cudaFree(dout);
}

__global__ void float_instructions(const float* x, float* out, int* rounded) {
  const int i = threadIdx.x;
  float* o = out + 4 * i;
  asm("fma.rn.f32 %0, %1, %2, %3;" : "=f"(o[0]) : "f"(x[i]), "f"(x[i]), "f"(0.25f));
  asm("add.f32 %0, %1, 0f3F800000;" : "=f"(o[1]) : "f"(x[i]));  // + 1.0
  asm("sqrt.rn.f32 %0, %1;" : "=f"(o[2]) : "f"(fabsf(x[i])));
  asm("cvt.rn.f32.s32 %0, %1;" : "=f"(o[3]) : "r"(i - 7));
  asm("cvt.rni.s32.f32 %0, %1;" : "=r"(rounded[i]) : "f"(x[i]));
}

TEST(InlinePtx, FloatInstructionsRoundAsTheIsaSays) {
  const int n = 8;
  const std::vector<float> x = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 3.75f, -2.25f, 1e6f};
  float *dx, *dout;
  int* dround;
  ASSERT_CUDA(cudaMalloc(&dx, n * sizeof(float)));
  ASSERT_CUDA(cudaMalloc(&dout, 4 * n * sizeof(float)));
  ASSERT_CUDA(cudaMalloc(&dround, n * sizeof(int)));
  ASSERT_CUDA(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  float_instructions<<<1, n>>>(dx, dout, dround);
  ASSERT_CUDA(cudaDeviceSynchronize());
  const auto out = fetch(dout, 4 * n);
  const auto r = fetch(dround, n);
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(out[4 * i + 0], std::fma(x[i], x[i], 0.25f));
    EXPECT_EQ(out[4 * i + 1], x[i] + 1.0f);
    EXPECT_EQ(out[4 * i + 2], std::sqrt(std::fabs(x[i])));
    EXPECT_EQ(out[4 * i + 3], static_cast<float>(i - 7));
    EXPECT_EQ(r[i], static_cast<int>(std::nearbyint(x[i]))) << "round half to even: " << x[i];
  }
  cudaFree(dx);
  cudaFree(dout);
  cudaFree(dround);
}

/// out[i] = in[i] reversed within each group of four, through vector loads and stores.
__global__ void vector_copy(const float* in, float* out, unsigned* flag) {
  const int i = threadIdx.x;
  float a, b, c, d;
  asm volatile("ld.global.nc.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(a), "=f"(b), "=f"(c), "=f"(d)
               : "l"(in + 4 * i));
  asm volatile("st.global.v2.f32 [%0], {%1, %2};" ::"l"(out + 4 * i), "f"(d), "f"(c) : "memory");
  asm volatile("st.global.v2.f32 [%0+8], {%1, %2};" ::"l"(out + 4 * i), "f"(b), "f"(a) : "memory");
  asm volatile("" ::: "memory");
  if (i == 0) {
    unsigned one = 1;
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(flag), "r"(one) : "memory");
    unsigned seen;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(seen) : "l"(flag) : "memory");
    asm volatile("membar.gl;" ::: "memory");
    flag[1] = seen + 1;
  }
}

TEST(InlinePtx, VectorLoadsAndStoresMoveEveryElement) {
  const int n = 16;
  std::vector<float> in(4 * n);
  for (int i = 0; i < 4 * n; ++i) in[i] = 0.5f * i - 3.0f;
  float *din, *dout;
  unsigned* flag;
  ASSERT_CUDA(cudaMalloc(&din, in.size() * sizeof(float)));
  ASSERT_CUDA(cudaMalloc(&dout, in.size() * sizeof(float)));
  ASSERT_CUDA(cudaMalloc(&flag, 2 * sizeof(unsigned)));
  ASSERT_CUDA(cudaMemcpy(din, in.data(), in.size() * sizeof(float), cudaMemcpyHostToDevice));
  vector_copy<<<1, n>>>(din, dout, flag);
  ASSERT_CUDA(cudaDeviceSynchronize());
  const auto out = fetch(dout, in.size());
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < 4; ++k) EXPECT_EQ(out[4 * i + k], in[4 * i + 3 - k]);
  EXPECT_EQ(fetch(flag, 2), (std::vector<unsigned>{1u, 2u}));
  cudaFree(din);
  cudaFree(dout);
  cudaFree(flag);
}

/// A warp sum by butterfly shuffles, a ballot of the odd lanes, and a barrier between the warps.
__global__ void warp_and_block(const int* in, int* sums, unsigned* ballots, int* neighbour) {
  __shared__ int totals[2];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  int v = in[threadIdx.x];
  for (int offset = 16; offset > 0; offset /= 2) {
    int other;
    asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(other) : "r"(v), "r"(offset));
    v += other;
  }
  unsigned ballot;
  asm volatile(
      "{\n\t.reg .pred odd;\n\t"
      "setp.ne.u32 odd, %1, 0;\n\t"
      "vote.sync.ballot.b32 %0, odd, 0xffffffff;\n\t}"
      : "=r"(ballot)
      : "r"(lane & 1));
  if (lane == 0) {
    sums[warp] = v;
    ballots[warp] = ballot;
    totals[warp] = v;
  }
  asm volatile("bar.sync 0;" ::: "memory");
  if (lane == 0) neighbour[warp] = totals[1 - warp];
}

TEST(InlinePtx, WarpShufflesVotesAndTheBlockBarrier) {
  std::vector<int> in(64);
  for (int i = 0; i < 64; ++i) in[i] = i * i - 40;
  int *din, *sums, *neighbour;
  unsigned* ballots;
  ASSERT_CUDA(cudaMalloc(&din, 64 * sizeof(int)));
  ASSERT_CUDA(cudaMalloc(&sums, 2 * sizeof(int)));
  ASSERT_CUDA(cudaMalloc(&neighbour, 2 * sizeof(int)));
  ASSERT_CUDA(cudaMalloc(&ballots, 2 * sizeof(unsigned)));
  ASSERT_CUDA(cudaMemcpy(din, in.data(), 64 * sizeof(int), cudaMemcpyHostToDevice));
  warp_and_block<<<1, 64>>>(din, sums, ballots, neighbour);
  ASSERT_CUDA(cudaDeviceSynchronize());
  int first = 0, second = 0;
  for (int i = 0; i < 32; ++i) first += in[i], second += in[32 + i];
  EXPECT_EQ(fetch(sums, 2), (std::vector<int>{first, second}));
  EXPECT_EQ(fetch(ballots, 2), (std::vector<unsigned>{0xaaaaaaaau, 0xaaaaaaaau}));
  EXPECT_EQ(fetch(neighbour, 2), (std::vector<int>{second, first}));
  cudaFree(din);
  cudaFree(sums);
  cudaFree(neighbour);
  cudaFree(ballots);
}

#ifdef CUDASIM

TEST(InlinePtxOnTheSimulator, LoadsAndStoresAreCountedAsTheThreadsOwn) {
  if (!cudasim::stats_available()) GTEST_SKIP() << "this build is not counted";
  const int n = 16;
  float *din, *dout;
  unsigned* flag;
  ASSERT_CUDA(cudaMalloc(&din, 4 * n * sizeof(float)));
  ASSERT_CUDA(cudaMalloc(&dout, 4 * n * sizeof(float)));
  ASSERT_CUDA(cudaMalloc(&flag, 2 * sizeof(unsigned)));
  cudasim::reset_stats();
  vector_copy<<<1, n>>>(din, dout, flag);
  ASSERT_CUDA(cudaDeviceSynchronize());
  const cudasim::KernelStats k = cudasim::last_launch_stats();
  // 16 bytes read and written per thread, plus thread 0's flag: a 4-byte store and load by PTX
  // and flag[1]'s 4-byte store by C++.
  EXPECT_EQ(k.global_load_bytes, 16u * n + 4u);
  EXPECT_EQ(k.global_store_bytes, 16u * n + 8u);
  cudaFree(din);
  cudaFree(dout);
  cudaFree(flag);
}

__global__ void unsupported_instruction(unsigned* out) {
  unsigned old;
  asm volatile("atom.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(out));
  out[1] = old;
}

__global__ void shared_window_address(float* out) {
  __shared__ float tile[32];
  tile[threadIdx.x] = 1.0f;
  const unsigned address = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(tile + threadIdx.x));
  float v;
  asm volatile("ld.shared.f32 %0, [%1];" : "=f"(v) : "r"(address));
  out[threadIdx.x] = v;
}

TEST(InlinePtxOnTheSimulator, AnInstructionOutsideTheSubsetFailsTheLaunchNamingIt) {
  unsigned* out;
  ASSERT_CUDA(cudaMalloc(&out, 2 * sizeof(unsigned)));
  testing::internal::CaptureStderr();
  unsupported_instruction<<<1, 1>>>(out);
  cudaError_t error = cudaDeviceSynchronize();
  std::string report = testing::internal::GetCapturedStderr();
  EXPECT_EQ(error, cudaErrorIllegalInstruction);
  EXPECT_NE(report.find("atom.global.add.u32 %0, [%1], 1"), std::string::npos) << report;
  EXPECT_NE(report.find("is not interpreted"), std::string::npos) << report;
  EXPECT_NE(report.find("unsupported_instruction"), std::string::npos) << report;
  ASSERT_CUDA(cudaDeviceReset());

  float* floats;
  ASSERT_CUDA(cudaMalloc(&floats, 32 * sizeof(float)));
  testing::internal::CaptureStderr();
  shared_window_address<<<1, 32>>>(floats);
  error = cudaDeviceSynchronize();
  report = testing::internal::GetCapturedStderr();
  EXPECT_EQ(error, cudaErrorIllegalInstruction);
  EXPECT_NE(report.find("32-bit shared-window address"), std::string::npos) << report;
  ASSERT_CUDA(cudaDeviceReset());
}

#endif  // CUDASIM

}  // namespace
