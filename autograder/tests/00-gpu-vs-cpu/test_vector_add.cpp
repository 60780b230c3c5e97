// Tests for exercise 00/01 vector_add (contract: lessons/00-gpu-vs-cpu/vector_add.hpp).
// Run: ./course test 00/vector_add

#include "vector_add.hpp"

#include <cuda_runtime.h>

#include "course_test.hpp"
#include "cuda_check.hpp"

#include <cstdio>
#include <limits>
#include <vector>

namespace ct = course::test;

namespace {

/// CPU reference in double.
std::vector<double> cpu_vector_add(const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<double> c(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) c[i] = double(a[i]) + double(b[i]);
  return c;
}

}  // namespace

TEST(VectorAdd, MatchesCpuOnAwkwardSizes) {
  ct::Rng rng;
  for (int n : ct::awkward_sizes(256)) {
    const auto a = rng.uniform(n, -1.0f, 1.0f);
    const auto b = rng.uniform(n, -1.0f, 1.0f);
    ct::DeviceBuffer<float> d_a(a), d_b(b), d_c(n);
    d_c.poison();  // unwritten elements read as NaN and fail
    launch_vector_add(d_a.get(), d_b.get(), d_c.get(), n);
    ASSERT_TRUE(ct::all_close(cpu_vector_add(a, b), d_c.download(), ct::elementwise_tolerance()))
        << "n = " << n;
  }
}

TEST(VectorAdd, DoesNotWritePastTheEnd) {
  // Sizes that leave most of the last block idle: its threads must not write.
  ct::Rng rng;
  for (int n : {1, 2, 31, 129, 255, 257, 1000}) {
    const auto a = rng.uniform(n, -1.0f, 1.0f);
    const auto b = rng.uniform(n, -1.0f, 1.0f);
    // c holds n NaNs (nothing written yet) followed by a known guard pattern.
    std::vector<float> c(n, std::numeric_limits<float>::quiet_NaN());
    const auto guard = ct::guard_pattern<float>();
    c.insert(c.end(), guard.begin(), guard.end());
    // a and b also get room past n, filled with values, so an unguarded thread reads real
    // numbers and its stray write is visible (rather than reading past an allocation).
    auto a_padded = a, b_padded = b;
    a_padded.resize(c.size(), 1.0f);
    b_padded.resize(c.size(), 1.0f);
    ct::DeviceBuffer<float> d_a(a_padded), d_b(b_padded), d_c(c);
    launch_vector_add(d_a.get(), d_b.get(), d_c.get(), n);
    const auto result = d_c.download();
    const std::vector<float> first_n(result.begin(), result.begin() + n);
    EXPECT_TRUE(ct::all_close(cpu_vector_add(a, b), first_n, ct::elementwise_tolerance()))
        << "n = " << n;
    EXPECT_TRUE(ct::guard_untouched(result, n)) << "n = " << n;
  }
}

TEST(VectorAdd, HandlesZeroAndOneElement) {
  // n == 0: nothing to do, and a grid of 0 blocks would be rejected, so no launch at all.
  EXPECT_NO_THROW(launch_vector_add(nullptr, nullptr, nullptr, 0))
      << "n = 0 must return without launching (a 0-block grid is an invalid configuration)";
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "n = 0 left a CUDA error behind";

  ct::Rng rng;
  const auto a = rng.nonzero(1), b = rng.nonzero(1);
  ct::DeviceBuffer<float> d_a(a), d_b(b), d_c(1);
  d_c.poison();
  launch_vector_add(d_a.get(), d_b.get(), d_c.get(), 1);
  EXPECT_TRUE(ct::all_close(cpu_vector_add(a, b), d_c.download(), ct::elementwise_tolerance()))
      << "n = 1";
}

TEST(VectorAdd, WorksWhenTheOutputIsAnInput) {
  // c may be a (the contract allows it): each thread reads a[i] before writing c[i].
  ct::Rng rng;
  const int n = 100003;
  const auto a = rng.uniform(n, -1.0f, 1.0f);
  const auto b = rng.uniform(n, -1.0f, 1.0f);
  ct::DeviceBuffer<float> d_a(a), d_b(b);
  launch_vector_add(d_a.get(), d_b.get(), d_a.get(), n);
  EXPECT_TRUE(ct::all_close(cpu_vector_add(a, b), d_a.download(), ct::elementwise_tolerance()));
}

TEST(VectorAdd, OneThreadPerElementWithCoalescedAccesses) {
  // The contract is the lesson's first idea: one thread per element, so that the GPU's
  // thousands of threads share the work. One thread (or one block) looping over the whole
  // array gets the same numbers while leaving the GPU idle; neighbouring threads reading
  // far-apart elements get them without coalescing. The simulator counts both, at a length
  // drawn from the run's seed (2^16 to 2^20, mostly not a multiple of the block), so that a
  // kernel cannot take one element per thread for one length it recognises only.
  ct::Rng rng;
  const int n = rng.integer(1 << 16, 1 << 20);
  std::printf("[ COURSE   ] drawn: n = %d\n", n);
  const auto a = rng.uniform(n, -1.0f, 1.0f);
  const auto b = rng.uniform(n, -1.0f, 1.0f);
  ct::DeviceBuffer<float> d_a(a), d_b(b), d_c(n);
  d_c.poison();
  const auto counted = ct::count_global_traffic([&] { launch_vector_add(d_a.get(), d_b.get(), d_c.get(), n); });
  ASSERT_TRUE(ct::all_close(cpu_vector_add(a, b), d_c.download(), 0.0, 1e-6));
  if (!counted.counted) GTEST_SKIP() << counted.why_not;
  EXPECT_GE(counted.threads, std::uint64_t(n)) << "launch at least one thread per element";
  EXPECT_LE(counted.span_global_ops, 3u)
      << "one thread made " << counted.span_global_ops << " global accesses; with one thread per "
      << "element each makes 3 (load a[i], load b[i], store c[i])";
  EXPECT_LE(counted.sectors_per_request(), 4.0)
      << counted.sectors_per_request() << " 32-byte sectors per warp-wide access: neighbouring threads "
      << "should touch neighbouring elements (a warp's 32 floats are 4 sectors)";
}
