// Atomics across blocks: atomicAdd on int, unsigned, unsigned long long, float and double from
// many blocks (exact totals for integers; float/double sums of small integers are exact too),
// atomicCAS, atomicMax, atomicInc semantics, the scoped (_block, _system) forms, and a
// histogram. Blocks run in parallel on the
// simulator as on a GPU, so a non-atomic update would lose counts.
// Valid CUDA: the same file runs on a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <vector>

namespace {

#define ASSERT_CUDA(expr) ASSERT_EQ((expr), cudaSuccess)

template <class T>
T download_one(const T* device) {
  T value{};
  EXPECT_EQ(cudaMemcpy(&value, device, sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  return value;
}

constexpr int kBlocks = 256, kThreads = 256, kTotal = kBlocks * kThreads;

template <class T>
__global__ void add_from_everyone(T* counter, T step) {
  atomicAdd(counter, step);
}

template <class T>
void expect_exact_total(T step) {
  T* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, sizeof(T)));
  ASSERT_CUDA(cudaMemset(d, 0, sizeof(T)));
  add_from_everyone<T><<<kBlocks, kThreads>>>(d, step);
  ASSERT_CUDA(cudaGetLastError());
  EXPECT_EQ(download_one(d), static_cast<T>(step * static_cast<T>(kTotal)));
  ASSERT_CUDA(cudaFree(d));
}

TEST(Atomics, IntAtomicAddFromManyBlocksGivesTheExactTotal) { expect_exact_total<int>(3); }
TEST(Atomics, UnsignedAtomicAddFromManyBlocksGivesTheExactTotal) { expect_exact_total<unsigned>(7u); }
TEST(Atomics, UnsignedLongLongAtomicAddCarriesPast32Bits) {
  expect_exact_total<unsigned long long>(1ull << 20);  // total 2^36
}
TEST(Atomics, FloatAtomicAddOfSmallIntegersIsExact) { expect_exact_total<float>(2.0f); }
TEST(Atomics, DoubleAtomicAddOfSmallIntegersIsExact) { expect_exact_total<double>(0.5); }

__global__ void atomic_add_returns_old(int* counter, int* seen) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  seen[i] = atomicAdd(counter, 1);
}

TEST(Atomics, AtomicAddReturnsEachOldValueExactlyOnce) {
  int *d_counter, *d_seen;
  ASSERT_CUDA(cudaMalloc(&d_counter, sizeof(int)));
  ASSERT_CUDA(cudaMalloc(&d_seen, kTotal * sizeof(int)));
  ASSERT_CUDA(cudaMemset(d_counter, 0, sizeof(int)));
  atomic_add_returns_old<<<kBlocks, kThreads>>>(d_counter, d_seen);
  ASSERT_CUDA(cudaGetLastError());
  std::vector<int> seen(kTotal);
  ASSERT_CUDA(cudaMemcpy(seen.data(), d_seen, kTotal * sizeof(int), cudaMemcpyDeviceToHost));
  std::vector<int> hits(kTotal, 0);
  for (int v : seen) {
    ASSERT_GE(v, 0);
    ASSERT_LT(v, kTotal);
    ++hits[v];
  }
  for (int v = 0; v < kTotal; ++v) ASSERT_EQ(hits[v], 1) << "ticket " << v;
  ASSERT_CUDA(cudaFree(d_counter));
  ASSERT_CUDA(cudaFree(d_seen));
}

// A spin-free CAS loop implementing "add if below a cap".
__device__ int add_capped(int* address, int value, int cap) {
  int old = *address, assumed;
  do {
    assumed = old;
    const int next = assumed + value > cap ? assumed : assumed + value;
    old = atomicCAS(address, assumed, next);
  } while (old != assumed);
  return old;
}

__global__ void capped_adds(int* counter, int cap) { add_capped(counter, 1, cap); }

TEST(Atomics, AtomicCasLoopImplementsACustomAtomicOperation) {
  int* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, sizeof(int)));
  ASSERT_CUDA(cudaMemset(d, 0, sizeof(int)));
  capped_adds<<<kBlocks, kThreads>>>(d, 10000);
  ASSERT_CUDA(cudaGetLastError());
  EXPECT_EQ(download_one(d), 10000);
  ASSERT_CUDA(cudaFree(d));
}

__global__ void cas_once(int* value, int* results) {
  results[0] = atomicCAS(value, 5, 9);   // matches: stores 9, returns 5
  results[1] = atomicCAS(value, 5, 11);  // does not match: returns 9, value unchanged
  results[2] = *value;
}

TEST(Atomics, AtomicCasStoresOnlyWhenTheComparisonMatchesAndReturnsTheOldValue) {
  int *d_value, *d_results;
  ASSERT_CUDA(cudaMalloc(&d_value, sizeof(int)));
  ASSERT_CUDA(cudaMalloc(&d_results, 3 * sizeof(int)));
  const int five = 5;
  ASSERT_CUDA(cudaMemcpy(d_value, &five, sizeof(int), cudaMemcpyHostToDevice));
  cas_once<<<1, 1>>>(d_value, d_results);
  ASSERT_CUDA(cudaGetLastError());
  int h[3];
  ASSERT_CUDA(cudaMemcpy(h, d_results, sizeof h, cudaMemcpyDeviceToHost));
  EXPECT_EQ(h[0], 5);
  EXPECT_EQ(h[1], 9);
  EXPECT_EQ(h[2], 9);
  ASSERT_CUDA(cudaFree(d_value));
  ASSERT_CUDA(cudaFree(d_results));
}

__global__ void max_of_everyone(int* best) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  atomicMax(best, (i * 7919) % kTotal - kTotal / 2);  // a permutation, shifted to negatives
}

TEST(Atomics, AtomicMaxKeepsTheLargestValue) {
  int* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, sizeof(int)));
  const int lowest = -kTotal;
  ASSERT_CUDA(cudaMemcpy(d, &lowest, sizeof(int), cudaMemcpyHostToDevice));
  max_of_everyone<<<kBlocks, kThreads>>>(d);
  ASSERT_CUDA(cudaGetLastError());
  EXPECT_EQ(download_one(d), kTotal - 1 - kTotal / 2);
  ASSERT_CUDA(cudaFree(d));
}

__global__ void inc_sequence(unsigned* counter, unsigned* seen, unsigned limit, int steps) {
  for (int s = 0; s < steps; ++s) seen[s] = atomicInc(counter, limit);
}

TEST(Atomics, AtomicIncWrapsToZeroAfterReachingTheLimit) {
  unsigned *d_counter, *d_seen;
  ASSERT_CUDA(cudaMalloc(&d_counter, sizeof(unsigned)));
  ASSERT_CUDA(cudaMalloc(&d_seen, 8 * sizeof(unsigned)));
  ASSERT_CUDA(cudaMemset(d_counter, 0, sizeof(unsigned)));
  inc_sequence<<<1, 1>>>(d_counter, d_seen, 2u, 8);  // ((old >= 2) ? 0 : old + 1)
  ASSERT_CUDA(cudaGetLastError());
  unsigned seen[8];
  ASSERT_CUDA(cudaMemcpy(seen, d_seen, sizeof seen, cudaMemcpyDeviceToHost));
  const unsigned expected[8] = {0, 1, 2, 0, 1, 2, 0, 1};
  for (int s = 0; s < 8; ++s) EXPECT_EQ(seen[s], expected[s]) << "step " << s;
  EXPECT_EQ(download_one(d_counter), 2u);
  ASSERT_CUDA(cudaFree(d_counter));
  ASSERT_CUDA(cudaFree(d_seen));
}

__global__ void histogram(const unsigned char* data, int n, unsigned* bins) {
  __shared__ unsigned local[256];
  for (int b = threadIdx.x; b < 256; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    atomicAdd(&local[data[i]], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < 256; b += blockDim.x) atomicAdd(&bins[b], local[b]);
}

// Every scoped form does what its unscoped form does, from every thread of several blocks.
__global__ void scoped_atomics(int* block_counters, unsigned* bits, int* system_counter, int* maximum) {
  atomicAdd_block(&block_counters[blockIdx.x], 2);
  atomicSub_block(&block_counters[blockIdx.x], 1);
  atomicOr_block(&bits[blockIdx.x], 1u << (threadIdx.x % 32));
  atomicAnd_system(&bits[gridDim.x], ~(1u << (threadIdx.x % 32)));
  atomicXor_system(&bits[gridDim.x + 1], threadIdx.x == 0 ? 0x5u : 0u);
  atomicAdd_system(system_counter, 1);
  atomicMax_system(maximum, static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x));
  atomicMin_block(&block_counters[gridDim.x + blockIdx.x], static_cast<int>(threadIdx.x));
  atomicExch_system(&block_counters[2 * gridDim.x], 7);
  atomicCAS_system(&block_counters[2 * gridDim.x + 1], 0, 1);
}

TEST(Atomics, ScopedFormsUpdateLikeTheirUnscopedForms) {
  const int blocks = 4, threads = 64;
  std::vector<int> counters(2 * blocks + 2, 0);
  for (int b = 0; b < blocks; ++b) counters[blocks + b] = 1000;
  std::vector<unsigned> bits(blocks + 2, 0);
  bits[blocks] = 0xffffffffu;
  int *d_counters = nullptr, *d_system = nullptr, *d_maximum = nullptr;
  unsigned* d_bits = nullptr;
  ASSERT_CUDA(cudaMalloc(&d_counters, counters.size() * sizeof(int)));
  ASSERT_CUDA(cudaMalloc(&d_bits, bits.size() * sizeof(unsigned)));
  ASSERT_CUDA(cudaMalloc(&d_system, sizeof(int)));
  ASSERT_CUDA(cudaMalloc(&d_maximum, sizeof(int)));
  ASSERT_CUDA(cudaMemcpy(d_counters, counters.data(), counters.size() * sizeof(int), cudaMemcpyHostToDevice));
  ASSERT_CUDA(cudaMemcpy(d_bits, bits.data(), bits.size() * sizeof(unsigned), cudaMemcpyHostToDevice));
  ASSERT_CUDA(cudaMemset(d_system, 0, sizeof(int)));
  ASSERT_CUDA(cudaMemset(d_maximum, 0, sizeof(int)));
  scoped_atomics<<<blocks, threads>>>(d_counters, d_bits, d_system, d_maximum);
  ASSERT_CUDA(cudaDeviceSynchronize());
  ASSERT_CUDA(cudaMemcpy(counters.data(), d_counters, counters.size() * sizeof(int), cudaMemcpyDeviceToHost));
  ASSERT_CUDA(cudaMemcpy(bits.data(), d_bits, bits.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
  for (int b = 0; b < blocks; ++b) {
    EXPECT_EQ(counters[b], threads) << "block " << b;   // +2 - 1 per thread
    EXPECT_EQ(counters[blocks + b], 0) << "block " << b;  // the smallest thread index
    EXPECT_EQ(bits[b], 0xffffffffu) << "block " << b;
  }
  EXPECT_EQ(bits[blocks], 0u);
  EXPECT_EQ(bits[blocks + 1], blocks % 2 == 0 ? 0u : 0x5u);  // one xor per block
  EXPECT_EQ(counters[2 * blocks], 7);
  EXPECT_EQ(counters[2 * blocks + 1], 1);
  EXPECT_EQ(download_one(d_system), blocks * threads);
  EXPECT_EQ(download_one(d_maximum), blocks * threads - 1);
  for (void* p : {static_cast<void*>(d_counters), static_cast<void*>(d_bits), static_cast<void*>(d_system),
                  static_cast<void*>(d_maximum)})
    ASSERT_CUDA(cudaFree(p));
}

TEST(Atomics, HistogramWithSharedAndGlobalAtomicsCountsEveryByte) {
  const int n = 1 << 20;
  std::vector<unsigned char> data(n);
  unsigned state = 12345;
  for (int i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    data[i] = static_cast<unsigned char>(state >> 24);
  }
  std::vector<unsigned> expected(256, 0);
  for (unsigned char c : data) ++expected[c];

  unsigned char* d_data;
  unsigned* d_bins;
  ASSERT_CUDA(cudaMalloc(&d_data, n));
  ASSERT_CUDA(cudaMalloc(&d_bins, 256 * sizeof(unsigned)));
  ASSERT_CUDA(cudaMemcpy(d_data, data.data(), n, cudaMemcpyHostToDevice));
  ASSERT_CUDA(cudaMemset(d_bins, 0, 256 * sizeof(unsigned)));
  histogram<<<64, 256>>>(d_data, n, d_bins);
  ASSERT_CUDA(cudaGetLastError());
  std::vector<unsigned> bins(256);
  ASSERT_CUDA(cudaMemcpy(bins.data(), d_bins, 256 * sizeof(unsigned), cudaMemcpyDeviceToHost));
  for (int b = 0; b < 256; ++b) EXPECT_EQ(bins[b], expected[b]) << "bin " << b;
  ASSERT_CUDA(cudaFree(d_data));
  ASSERT_CUDA(cudaFree(d_bins));
}

}  // namespace
