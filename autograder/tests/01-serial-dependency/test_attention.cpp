// Tests for exercise 01/04 attention (contract: lessons/01-serial-dependency/attention.hpp).
// Run: ./course test 01/attention

#include "attention.hpp"

#include <cuda_runtime.h>

#include "attention_reference.hpp"
#include "course_test.hpp"
#include "cuda_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace ct = course::test;

namespace {

/// Runs the launcher on fresh random Q, K, V (|entries| <= `magnitude`) and checks probs and
/// out against the CPU. A cuBLAS handle per call keeps the tests independent. With `traffic`,
/// the launcher is counted on the simulator into it: the cuBLAS products are library calls,
/// not kernels, so what is counted is the softmax kernel's (and any other kernel's) work.
void check_attention(ct::Rng& rng, int n, int d, bool causal, float magnitude = 1.0f,
                     ct::GlobalTraffic* traffic = nullptr) {
  const auto q = rng.uniform(size_t(n) * d, -magnitude, magnitude);
  const auto k = rng.uniform(size_t(n) * d, -magnitude, magnitude);
  const auto v = rng.uniform(size_t(n) * d, -1.0f, 1.0f);
  const Reference ref = cpu_attention(q, k, v, n, d, causal);
  ct::DeviceBuffer<float> d_q(q), d_k(k), d_v(v), d_probs(size_t(n) * n), d_out(size_t(n) * d);
  d_probs.poison();
  d_out.poison();
  cublasHandle_t handle = nullptr;
  CUBLAS_CHECK(cublasCreate(&handle));
  const auto run = [&] {
    launch_attention(handle, d_q.get(), d_k.get(), d_v.get(), d_probs.get(), d_out.get(), n, d, causal);
  };
  if (traffic != nullptr) {
    *traffic = ct::count_global_traffic(run);
  } else {
    run();
  }
  const auto probs = d_probs.download();
  const auto out = d_out.download();
  CUBLAS_CHECK(cublasDestroy(handle));
  const double qk = double(magnitude) * magnitude;
  const std::string what = "n = " + std::to_string(n) + ", d = " + std::to_string(d) +
                           (causal ? ", causal" : "") + ", |q|, |k| <= " + std::to_string(magnitude);
  EXPECT_TRUE(ct::all_close_2d(ref.probs, probs, n, n, probs_tolerance(n, d, qk)))
      << "probs (the softmax of the scaled scores), " << what;
  EXPECT_TRUE(ct::all_close_2d(ref.out, out, n, d, out_tolerance(n, d, qk))) << "out = probs V, " << what;
}

const std::vector<std::pair<int, int>>& awkward_nd() {
  // n = 1 (a row of one), around a warp (the softmax's lanes), around 128; odd head sizes.
  static const std::vector<std::pair<int, int>> sizes = {
      {1, 1}, {1, 64}, {2, 3}, {31, 16}, {33, 64}, {32, 7}, {129, 32}, {300, 64}};
  return sizes;
}

/// The sequence length and head size the softmax's "how" checks count, drawn per run from the
/// run's seed (n from 160 to 400, mostly rows that do not start on a sector, d from 8 to 64),
/// so that a kernel cannot do the work as taught for one shape it recognises only.
std::pair<int, int> draw_counted_shape(ct::Rng& rng) {
  const int n = rng.integer(160, 400), d = rng.integer(8, 64);
  std::printf("[ COURSE   ] drawn: n = %d, d = %d\n", n, d);
  return {n, d};
}

}  // namespace

TEST(Attention, MatchesCpuOnAwkwardSizes) {
  ct::Rng rng;
  for (const auto& [n, d] : awkward_nd()) check_attention(rng, n, d, /*causal=*/false);
}

TEST(Attention, CausalMaskMatchesCpuOnAwkwardSizes) {
  ct::Rng rng;
  for (const auto& [n, d] : awkward_nd()) check_attention(rng, n, d, /*causal=*/true);
}

TEST(Attention, CausalMaskGivesExactZerosAboveTheDiagonal) {
  ct::Rng rng;
  const int n = 70, d = 16;
  const auto q = rng.uniform(size_t(n) * d), k = rng.uniform(size_t(n) * d), v = rng.uniform(size_t(n) * d);
  ct::DeviceBuffer<float> d_q(q), d_k(k), d_v(v), d_probs(size_t(n) * n), d_out(size_t(n) * d);
  d_probs.poison();
  cublasHandle_t handle = nullptr;
  CUBLAS_CHECK(cublasCreate(&handle));
  launch_attention(handle, d_q.get(), d_k.get(), d_v.get(), d_probs.get(), d_out.get(), n, d, true);
  const auto probs = d_probs.download();
  CUBLAS_CHECK(cublasDestroy(handle));
  int nonzero = 0, first_i = -1, first_j = -1;
  double row0 = 0.0;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      const float p = probs[size_t(i) * n + j];
      if (j > i && !(p == 0.0f)) {
        if (nonzero++ == 0) first_i = i, first_j = j;
      }
    }
  }
  row0 = probs[0];
  EXPECT_EQ(nonzero, 0) << nonzero << " probabilities above the diagonal are not exactly 0 (first at row "
                        << first_i << ", col " << first_j << "): position i must not attend to j > i";
  EXPECT_EQ(row0, 1.0) << "row 0 of a causal softmax has one allowed column, so probs[0][0] = 1";
}

TEST(Attention, RowsAreProbabilityDistributions) {
  ct::Rng rng;
  const int n = 257, d = 32;
  const auto q = rng.uniform(size_t(n) * d), k = rng.uniform(size_t(n) * d), v = rng.uniform(size_t(n) * d);
  ct::DeviceBuffer<float> d_q(q), d_k(k), d_v(v), d_probs(size_t(n) * n), d_out(size_t(n) * d);
  d_probs.poison();
  cublasHandle_t handle = nullptr;
  CUBLAS_CHECK(cublasCreate(&handle));
  launch_attention(handle, d_q.get(), d_k.get(), d_v.get(), d_probs.get(), d_out.get(), n, d, false);
  const auto probs = d_probs.download();
  CUBLAS_CHECK(cublasDestroy(handle));
  std::vector<double> sums(n, 0.0);
  int negative = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      sums[i] += probs[size_t(i) * n + j];
      negative += probs[size_t(i) * n + j] < 0.0f;
    }
  EXPECT_TRUE(ct::all_close(std::vector<double>(n, 1.0), sums, 8.0 * kEps * (std::sqrt(double(n)) + 8.0), 0.0))
      << "each row of probs must sum to 1 (element i of this list is the sum of row i)";
  EXPECT_EQ(negative, 0) << "probabilities are never negative";
}

TEST(Attention, StaysFiniteAndAccurateForLargeScores) {
  // |q|, |k| up to 30 with d = 64: scores reach several hundred and exp(score) overflows
  // float (above ~88). Subtracting each row's maximum first keeps every exp() <= 1.
  ct::Rng rng;
  check_attention(rng, 100, 64, /*causal=*/false, 30.0f);
  check_attention(rng, 65, 64, /*causal=*/true, 30.0f);
}

TEST(Attention, TheSoftmaxRunsOnTheDevice) {
  // The lesson's point is that attention is parallel work for the GPU: every step, the softmax
  // between the two GEMMs included, runs there, on device memory. Counted on the simulator.
  ct::Rng rng;
  const auto [n, d] = draw_counted_shape(rng);
  ct::GlobalTraffic c;
  check_attention(rng, n, d, /*causal=*/false, 1.0f, &c);
  if (HasFailure()) return;  // wrong numbers: what was counted says nothing
  if (!c.counted) GTEST_SKIP() << c.why_not;
  EXPECT_EQ(c.host_device_bytes, 0u)
      << "attention moved " << c.host_device_bytes << " bytes between the host and the GPU (copies, or kernels "
      << "reading page-locked host memory): the softmax should be a kernel on the device, between the GEMMs";
  // And a parallel one: a warp per row, its lanes sharing the row's n scores (a few passes of
  // n / 32 each, about 3n/32 + n/32 accesses per lane), not one lane walking the row.
  EXPECT_LE(c.span_global_ops, std::uint64_t(n) / 2)
      << "one thread made " << c.span_global_ops << " global loads and stores for rows of " << n
      << " scores: the row's max, sum and normalisation should be shared by the lanes of its warp "
         "(each lane a slice, combined with shuffles), not walked by one thread";
}

TEST(Attention, TheSoftmaxLanesReadNeighbouringScores) {
  // A warp per row, and its lanes stride through the row: lane l takes columns l, l + 32,
  // l + 64, ..., the block-level version of lesson 00's grid-stride loop. Then each of the
  // warp's loads and stores covers 32 neighbouring floats, 4 sectors of 32 bytes (coalesced).
  // Lanes that each take a contiguous chunk of the row (lane l: columns l*n/32 ...) compute
  // the same numbers with the same bytes, but every lane of an access is in another sector:
  // at n = 256, 32 sectors where 4 would do. Counted on the simulator. Where a row does not
  // start on a sector, a strided access touches 5 sectors.
  ct::Rng rng;
  const auto [n, d] = draw_counted_shape(rng);
  ct::GlobalTraffic c;
  check_attention(rng, n, d, /*causal=*/false, 1.0f, &c);
  if (HasFailure()) return;  // wrong numbers: what was counted says nothing
  if (!c.counted) GTEST_SKIP() << c.why_not;
  std::printf("[ COURSE   ] attention, n = %d: %.2f sectors per warp-wide access of the scores\n", n,
              c.sectors_per_request());
  EXPECT_LE(c.sectors_per_request(), 8.0)
      << c.sectors_per_request() << " 32-byte sectors per warp-wide access of the scores (rows of " << n
      << "): the lanes of a row's warp should take columns lane, lane + 32, lane + 64, ... (a stride of 32), so "
         "that each access reads 32 neighbouring floats (4 sectors), not a contiguous chunk each";
}

TEST(Attention, HandlesALongSequence) {
  ct::Rng rng;
  check_attention(rng, 700, 64, /*causal=*/true);
}

TEST(Attention, QueuesItsWorkOnTheHandlesStream) {
  ct::Rng rng;
  const int n = 96, d = 24;
  const auto q = rng.uniform(size_t(n) * d), k = rng.uniform(size_t(n) * d), v = rng.uniform(size_t(n) * d);
  const Reference ref = cpu_attention(q, k, v, n, d, false);
  ct::DeviceBuffer<float> d_q(q), d_k(k), d_v(v), d_probs(size_t(n) * n), d_out(size_t(n) * d);
  d_out.poison();
  cudaStream_t stream = nullptr;
  CUDA_CHECK(cudaStreamCreate(&stream));
  cublasHandle_t handle = nullptr;
  CUBLAS_CHECK(cublasCreate(&handle));
  CUBLAS_CHECK(cublasSetStream(handle, stream));
  launch_attention(handle, d_q.get(), d_k.get(), d_v.get(), d_probs.get(), d_out.get(), n, d, false);
  std::vector<float> out(size_t(n) * d);
  CUDA_CHECK(cudaMemcpyAsync(out.data(), d_out.get(), out.size() * sizeof(float), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  CUBLAS_CHECK(cublasDestroy(handle));
  CUDA_CHECK(cudaStreamDestroy(stream));
  EXPECT_TRUE(ct::all_close_2d(ref.out, out, n, d, out_tolerance(n, d, 1.0)))
      << "out, with the work queued on the handle's stream and read back on that stream";
}
