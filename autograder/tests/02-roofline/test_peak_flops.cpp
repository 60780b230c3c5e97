// Tests for exercise 02/03 peak_flops (contract: lessons/02-roofline/peak_flops.hpp).
// Run: ./course test 02/peak_flops
//
// The FLOP rate itself is a GPU measurement (./course roofline); what is tested here is
// that the kernel computes exactly the chains the contract describes.

#include "peak_flops.hpp"

#include <cuda_runtime.h>

#include "course_test.hpp"
#include "cuda_check.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace ct = course::test;

namespace {

/// The closed form of the chains, in double: sum over j of a^T (s + j) + b (1 - a^T)/(1 - a).
std::vector<double> closed_form(const std::vector<float>& seeds, int iterations, float a,
                                float b) {
  const double at = std::pow(double(a), iterations);
  const double fixed = double(b) * (1.0 - at) / (1.0 - double(a));
  std::vector<double> out(seeds.size());
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    double sum = 0.0;
    for (int j = 0; j < kFmaChains; ++j) sum += at * (double(seeds[i]) + j) + fixed;
    out[i] = sum;
  }
  return out;
}

/// |a| in [0.5, 0.95] with a random sign, so the chains neither blow up nor die out at once;
/// b away from 0 so the "+ b" part matters.
::testing::AssertionResult chains_match(ct::Rng& rng, int n, int iterations) {
  const float a = static_cast<float>(rng.scalar(0.5, 0.95) * (rng.integer(0, 1) ? 1 : -1));
  const float b = static_cast<float>(rng.scalar(0.25, 1.0) * (rng.integer(0, 1) ? 1 : -1));
  const auto seeds = rng.uniform(n, -2.0f, 2.0f);
  ct::DeviceBuffer<float> d_seeds(seeds), d_out(n + ct::kGuardElements);
  auto init = std::vector<float>(n, std::nanf(""));
  const auto guard = ct::guard_pattern<float>();
  init.insert(init.end(), guard.begin(), guard.end());
  d_out.upload(init);  // NaN where the results go, the guard after them
  launch_fma_chains(d_seeds.get(), d_out.get(), n, iterations, a, b);
  const auto all = d_out.download();
  const std::vector<float> result(all.begin(), all.begin() + n);
  // Each chain's rounding errors shrink by |a| per step: they stay below
  // eps * |v| / (1 - |a|) <= 1.2e-7 * 10 * 20 per chain, times 8 chains.
  const ct::Tolerance tol{kFmaChains * 3e-5, 1e-5};
  const auto values = ct::all_close(closed_form(seeds, iterations, a, b), result, tol);
  const std::string where = "n = " + std::to_string(n) + ", iterations = " +
                            std::to_string(iterations) + ", a = " + std::to_string(a) +
                            ", b = " + std::to_string(b);
  if (!values) return ::testing::AssertionFailure() << where << ":\n" << values.message();
  const auto untouched = ct::guard_untouched(all, n);
  if (!untouched) return ::testing::AssertionFailure() << where << ":\n" << untouched.message();
  return ::testing::AssertionSuccess();
}

}  // namespace

TEST(FmaChains, MatchClosedFormOnAwkwardSizes) {
  ct::Rng rng;
  for (int n : ct::awkward_sizes(256)) EXPECT_TRUE(chains_match(rng, n, n > 100000 ? 3 : 17));
}

TEST(FmaChains, MatchClosedFormForManyIterations) {
  // Long chains: after ~200 steps a^T is negligible and every chain sits at its fixed point
  // b / (1 - a); before that, a kernel that stops early or steps too often is caught.
  ct::Rng rng;
  for (int iterations : {1, 2, 5, 31, 64, 257, 1000}) EXPECT_TRUE(chains_match(rng, 1000, iterations));
  EXPECT_TRUE(chains_match(rng, 129, 4096));
}

TEST(FmaChains, ZeroIterationsSumsTheStartValues) {
  // No FMA at all: out = 8 * seed + (0 + 1 + ... + 7) = 8 * seed + 28.
  ct::Rng rng;
  for (int n : {1, 33, 1000}) EXPECT_TRUE(chains_match(rng, n, 0));
}

TEST(FmaChains, EveryChainStartsAtItsOwnValue) {
  // With a = -1 and b = 0 each chain flips sign every step, from seed + j: after an odd
  // number of steps the sum is -(8 seed + 28). A kernel that starts every chain at the seed
  // gives -(8 seed) and is off by 28.
  const int n = 257;
  ct::Rng rng;
  const auto seeds = rng.uniform(n, -2.0f, 2.0f);
  ct::DeviceBuffer<float> d_seeds(seeds), d_out(n);
  d_out.poison();
  launch_fma_chains(d_seeds.get(), d_out.get(), n, 7, -1.0f, 0.0f);
  std::vector<double> expected(n);
  for (int i = 0; i < n; ++i) expected[i] = -(8.0 * seeds[i] + 28.0);
  EXPECT_TRUE(ct::all_close(expected, d_out.download(), 1e-5, 1e-6));
}

TEST(FmaChains, EveryThreadRunsItsOwnChains) {
  // Peak FLOPs needs every lane busy: the launcher starts a thread per element, and each
  // should run its element's chains (one load, the FMAs in registers, one store), not leave
  // the work to one thread of its block. Counted at a length drawn from the run's seed (1000 to
  // 8192, mostly a ragged last block), so that a kernel cannot give each thread its own chains
  // for one length it recognises only.
  ct::Rng rng;
  const int n = rng.integer(1000, 8192);
  std::printf("[ COURSE   ] drawn: n = %d\n", n);
  const auto seeds = rng.uniform(n, -2.0f, 2.0f);
  ct::DeviceBuffer<float> d_seeds(seeds), d_out(n);
  const ct::GlobalTraffic traffic =
      ct::count_global_traffic([&] { launch_fma_chains(d_seeds.get(), d_out.get(), n, 16, 0.75f, 0.5f); });
  ASSERT_TRUE(ct::all_close(closed_form(seeds, 16, 0.75f, 0.5f), d_out.download(), ct::Tolerance{kFmaChains * 3e-5, 1e-5}));
  if (!traffic.counted) GTEST_SKIP() << traffic.why_not;
  EXPECT_LE(traffic.span_global_ops, 2u)
      << "one thread made " << traffic.span_global_ops << " global loads and stores; each thread should load "
      << "its own seed once and store its own sum once";
  EXPECT_LE(traffic.span_shared_ops, 0u) << "one thread made " << traffic.span_shared_ops
                                         << " shared-memory accesses; the chains live in registers";
}

TEST(FmaChains, ExecuteEveryStepWhenTheChainsKeepMoving) {
  // The same with a != 1, so that a kernel cannot run the chain for a == 1 only: with
  // a = 1 - 2^-24, b = 1.25 and chains in [2^23, 2^24), each step adds between 0.25 and 0.75 in
  // real numbers, which fp32 (whose spacing there is 1) rounds up to exactly 1, and never to 0:
  // the chains never stop moving, and after T steps they are about T/4 above the closed form.
  const int n = 256, iterations = 1000;
  const float a = 1.0f - 0x1p-24f, b = 1.25f;
  std::vector<float> seeds(n);
  for (int i = 0; i < n; ++i) seeds[i] = 8388608.0f + float(16 * i);
  ct::DeviceBuffer<float> d_seeds(seeds), d_out(n);
  d_out.poison();
  launch_fma_chains(d_seeds.get(), d_out.get(), n, iterations, a, b);
  std::vector<double> expected(n);
  for (int i = 0; i < n; ++i) {
    double sum = 0.0;
    for (int j = 0; j < kFmaChains; ++j) sum += ct::fma_chain(seeds[i] + float(j), a, b, iterations);
    expected[i] = sum;
  }
  // The 8 chains of about 2^23 summed in fp32 in any order: within 8 units of 16 of the exact
  // sum (1e-6 of it); the closed form is about 8 * 250 away (3e-5).
  EXPECT_TRUE(ct::all_close(expected, d_out.download(), 0.0, 2e-6))
      << "with a = 1 - 2^-24 and b = 1.25, the kernel must execute the chain v = fma(v, a, b) step by step, "
      << iterations << " times per chain: a closed form lands about T/4 below each chain";
}

TEST(FmaChains, RejectsNegativeArgumentsAndHandlesEmpty) {
  // The launcher's checks are given; this checks the empty case leaves memory alone and a
  // small real case still runs after it.
  ct::Rng rng;
  ct::DeviceBuffer<float> d_seeds(rng.uniform(4, -1.0f, 1.0f)), d_out(4);
  EXPECT_THROW(launch_fma_chains(d_seeds.get(), d_out.get(), -1, 1, 0.5f, 1.0f), std::invalid_argument);
  EXPECT_THROW(launch_fma_chains(d_seeds.get(), d_out.get(), 4, -1, 0.5f, 1.0f), std::invalid_argument);
  launch_fma_chains(d_seeds.get(), d_out.get(), 0, 10, 0.5f, 1.0f);
  EXPECT_TRUE(chains_match(rng, 4, 3));
}

TEST(FmaChains, ExecuteEveryStepOfTheChain) {
  // The exercise measures how fast the chip runs FMAs, so the kernel must run them: a closed
  // form (a^T with powf, or by repeated squaring) gets the right numbers for most inputs with
  // a fraction of the work. Here each step cannot be skipped: with a = 1, b = 1 and chains
  // starting at 2^24 (and just above), fp32 rounds every `v + 1` back to an even neighbour,
  // so the chains stay stuck where the closed form (start + T) moves by T. The expected values
  // are the chains run step by step on the CPU (an FMA with a = 1 is exactly an addition, fused
  // or not); only the order of the final sum of the 8 chains is left free.
  const int n = 512, iterations = 1000;
  std::vector<float> seeds(n);
  for (int i = 0; i < n; ++i) seeds[i] = 16777216.0f * float(1 + i % 3);  // 2^24, 2^25, 3 * 2^24
  ct::DeviceBuffer<float> d_seeds(seeds), d_out(n);
  d_out.poison();
  launch_fma_chains(d_seeds.get(), d_out.get(), n, iterations, 1.0f, 1.0f);
  std::vector<double> expected(n);
  for (int i = 0; i < n; ++i) {
    double sum = 0.0;
    for (int j = 0; j < kFmaChains; ++j) {
      float v = seeds[i] + float(j);
      for (int t = 0; t < iterations; ++t) v = std::fma(v, 1.0f, 1.0f);
      sum += v;
    }
    expected[i] = sum;
  }
  // Eight fp32 values of about 2^26 summed in any order: a few units of 2^3 apart; the closed
  // form is 8 * 1000 away.
  EXPECT_TRUE(ct::all_close(expected, d_out.download(), 0.0, 1e-6))
      << "the kernel must execute the chain v = fma(v, a, b) step by step, " << iterations
      << " times per chain: the exercise is about running FMAs, and a closed form skips them";
}
