// Where the simulator behaves like a GPU so that a bug a GPU would show is not hidden: fresh
// memory is not zero, each device has its own default stream, and a kernel may touch another
// device's memory only with peer access enabled.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

#ifdef CUDASIM
/// What CUDASIM_FRESH_MEMORY asks for (the suite runs once with the default, once with zero).
bool fresh_memory_is_zero() {
  const char* env = std::getenv("CUDASIM_FRESH_MEMORY");
  return env != nullptr && std::strcmp(env, "zero") == 0;
}

/// Checks that the first `bytes` of a fresh buffer (copied to `host`) hold the documented
/// pattern: every 32-bit word 0x7fffffff (a NaN as float, INT_MAX as int), or zero.
void expect_fresh(const std::vector<std::uint32_t>& words) {
  const std::uint32_t expected = fresh_memory_is_zero() ? 0u : 0x7fffffffu;
  for (std::size_t i = 0; i < words.size(); ++i) ASSERT_EQ(words[i], expected) << "word " << i;
}

TEST(FreshMemory, CudaMallocIsNotZeroButAPatternFloatsReadAsNaN) {
  const int n = 1000;
  float* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, n * sizeof(float)), cudaSuccess);
  std::vector<std::uint32_t> words(n);
  ASSERT_EQ(cudaMemcpy(words.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  expect_fresh(words);
  std::vector<float> floats(n);
  ASSERT_EQ(cudaMemcpy(floats.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  if (!fresh_memory_is_zero()) EXPECT_TRUE(std::isnan(floats[0]));
  std::vector<int> ints(n);
  ASSERT_EQ(cudaMemcpy(ints.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  if (!fresh_memory_is_zero()) EXPECT_EQ(ints[n - 1], 2147483647);
  std::vector<double> doubles(n / 2);
  ASSERT_EQ(cudaMemcpy(doubles.data(), d, n / 2 * sizeof(double), cudaMemcpyDeviceToHost), cudaSuccess);
  if (!fresh_memory_is_zero()) EXPECT_TRUE(std::isnan(doubles[3]));
  ASSERT_EQ(cudaFree(d), cudaSuccess);
}

TEST(FreshMemory, AReusedAllocationIsFilledAgain) {
  for (int round = 0; round < 3; ++round) {
    int* d = nullptr;
    ASSERT_EQ(cudaMalloc(&d, 4096 * sizeof(int)), cudaSuccess);
    std::vector<std::uint32_t> words(4096);
    ASSERT_EQ(cudaMemcpy(words.data(), d, words.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    expect_fresh(words);
    ASSERT_EQ(cudaMemset(d, 0, 4096 * sizeof(int)), cudaSuccess);
    ASSERT_EQ(cudaFree(d), cudaSuccess);
  }
}

__global__ void read_first(const unsigned* in, unsigned* out) { *out = *in; }

TEST(FreshMemory, ManagedMemoryIsNotZeroEither) {
  unsigned* managed = nullptr;
  unsigned* out = nullptr;
  ASSERT_EQ(cudaMallocManaged(&managed, 64 * sizeof(unsigned)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&out, sizeof(unsigned)), cudaSuccess);
  read_first<<<1, 1>>>(managed, out);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<std::uint32_t> words(1);
  ASSERT_EQ(cudaMemcpy(words.data(), out, 4, cudaMemcpyDeviceToHost), cudaSuccess);
  expect_fresh(words);
  ASSERT_EQ(cudaFree(managed), cudaSuccess);
  ASSERT_EQ(cudaFree(out), cudaSuccess);
}

TEST(FreshMemory, PinnedHostMemoryIsNotZeroEither) {
  const std::size_t n = 3 * 4096;  // more than a page, so that the pattern covers every page
  std::uint32_t* pinned = nullptr;
  ASSERT_EQ(cudaMallocHost(&pinned, n * sizeof(std::uint32_t)), cudaSuccess);
  expect_fresh(std::vector<std::uint32_t>(pinned, pinned + n));
  ASSERT_EQ(cudaFreeHost(pinned), cudaSuccess);
}
#endif  // CUDASIM

}  // namespace
