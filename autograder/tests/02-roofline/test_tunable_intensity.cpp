// Tests for exercise 02/04 tunable_intensity (contract: lessons/02-roofline/tunable_intensity.hpp).
// Run: ./course test 02/tunable_intensity

#include "tunable_intensity.hpp"

#include <cuda_runtime.h>

#include "course_test.hpp"
#include "cuda_check.hpp"

#include <cmath>
#include <cstdio>
#include <cstdint>
#include <string>
#include <vector>

namespace ct = course::test;

namespace {

/// y = a^k x + b (1 - a^k) / (1 - a), in double.
std::vector<double> closed_form(const std::vector<float>& x, int k, float a, float b) {
  const double ak = std::pow(double(a), k);
  const double fixed = double(b) * (1.0 - ak) / (1.0 - double(a));
  std::vector<double> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = ak * x[i] + fixed;
  return out;
}

/// Fresh x, poisoned y followed by a guard; returns the comparison, and the counted traffic.
::testing::AssertionResult matches(ct::Rng& rng, int n, int k, ct::GlobalTraffic* traffic = nullptr) {
  const float a = static_cast<float>(rng.scalar(0.5, 0.95) * (rng.integer(0, 1) ? 1 : -1));
  const float b = static_cast<float>(rng.scalar(0.25, 1.0) * (rng.integer(0, 1) ? 1 : -1));
  const auto x = rng.nonzero(n, 0.25f, 2.0f);
  ct::DeviceBuffer<float> d_x(x), d_y(n + ct::kGuardElements);
  auto init = std::vector<float>(n, std::nanf(""));
  const auto guard = ct::guard_pattern<float>();
  init.insert(init.end(), guard.begin(), guard.end());
  d_y.upload(init);
  const auto counted = ct::count_global_traffic(
      [&] { launch_tunable_intensity(d_x.get(), d_y.get(), n, k, a, b); });
  if (traffic != nullptr) *traffic = counted;
  const auto all = d_y.download();
  const std::vector<float> y(all.begin(), all.begin() + n);
  const std::string where = "n = " + std::to_string(n) + ", k = " + std::to_string(k) +
                            ", a = " + std::to_string(a) + ", b = " + std::to_string(b);
  // Rounding errors contract by |a| per step: <= eps * |v| / (1 - |a|), |v| <= 20.
  const auto values = ct::all_close(closed_form(x, k, a, b), y, 3e-5, 1e-5);
  if (!values) return ::testing::AssertionFailure() << where << ":\n" << values.message();
  const auto untouched = ct::guard_untouched(all, n);
  if (!untouched) return ::testing::AssertionFailure() << where << ":\n" << untouched.message();
  return ::testing::AssertionSuccess();
}

}  // namespace

TEST(TunableIntensity, MatchesClosedFormOnAwkwardSizes) {
  ct::Rng rng;
  for (int n : ct::awkward_sizes(256)) {
    for (int k : {1, 3}) EXPECT_TRUE(matches(rng, n, k));
  }
}

TEST(TunableIntensity, MatchesClosedFormForManyK) {
  ct::Rng rng;
  for (int k : {2, 4, 7, 16, 33, 64, 255, 1024}) {
    for (int n : {1, 129, 4097}) EXPECT_TRUE(matches(rng, n, k));
  }
}

TEST(TunableIntensity, ZeroFmasCopies) {
  ct::Rng rng;
  for (int n : {1, 255, 65537}) EXPECT_TRUE(matches(rng, n, 0));
}

TEST(TunableIntensity, WorksInPlace) {
  // y == x: each element is read before it is written, by the same thread.
  ct::Rng rng;
  const int n = 10007, k = 5;
  const float a = 0.75f, b = -0.5f;
  const auto x = rng.nonzero(n);
  ct::DeviceBuffer<float> d(x);
  launch_tunable_intensity(d.get(), d.get(), n, k, a, b);
  EXPECT_TRUE(ct::all_close(closed_form(x, k, a, b), d.download(), 3e-5, 1e-5));
}

TEST(TunableIntensity, BytesDoNotDependOnK) {
  // 4 bytes loaded and 4 stored per element, for k = 1 as for k = 64: the FMAs work on a
  // register. Intensity is then exactly 2k FLOPs / 8 bytes = k/4 FLOP/byte.
  ct::Rng rng;
  bool counted = true;
  std::string why_not;
  for (int n : {1, 4097, 65537}) {
    for (int k : {0, 1, 16, 64}) {
      ct::GlobalTraffic traffic;
      EXPECT_TRUE(matches(rng, n, k, &traffic));
      if (!traffic.counted) {
        counted = false;
        why_not = traffic.why_not;
        continue;
      }
      EXPECT_EQ(traffic.load_bytes, 4u * n) << "n = " << n << ", k = " << k << ": loads";
      EXPECT_EQ(traffic.store_bytes, 4u * n) << "n = " << n << ", k = " << k << ": stores";
    }
  }
  if (!counted) GTEST_SKIP() << "values checked; byte counts not checked: " << why_not;
}

TEST(TunableIntensity, EveryThreadTakesItsOwnElement) {
  // The roofline's compute side needs every lane busy: the launcher starts a thread per
  // element, and each should take its element (one load, k FMAs, one store), not leave the
  // work to a few threads that walk many elements each. Counted at a length and a k drawn from
  // the run's seed (1000 to 8192 elements, 1 to 16 FMAs), so that a kernel cannot give each
  // thread its own element for one call it recognises only.
  ct::Rng rng;
  const int n = rng.integer(1000, 8192), k = rng.integer(1, 16);
  std::printf("[ COURSE   ] drawn: n = %d, k = %d\n", n, k);
  ct::GlobalTraffic traffic;
  ASSERT_TRUE(matches(rng, n, k, &traffic));
  if (!traffic.counted) GTEST_SKIP() << traffic.why_not;
  EXPECT_LE(traffic.span_global_ops, 2u)
      << "one thread made " << traffic.span_global_ops << " global loads and stores; each thread should load "
      << "its own element once and store it once";
  EXPECT_LE(traffic.span_shared_ops, 0u) << "one thread made " << traffic.span_shared_ops
                                         << " shared-memory accesses; the chain lives in a register";
}

TEST(TunableIntensity, ExecutesEveryFmaWhenTheValuesKeepMoving) {
  // The same with a != 1, so that a kernel cannot run the chain for a == 1 only: with
  // a = 1 - 2^-24, b = 1.25 and x in [2^23, 2^24), each step adds between 0.25 and 0.75 in real
  // numbers, which fp32 (whose spacing there is 1) rounds up to exactly 1, and never to 0: the
  // values never stop moving, and after k steps they are about k/4 above any closed form. The
  // expected values are the k FMAs run on the CPU, which fp32 makes exact on any machine.
  const int n = 1000, k = 400;
  const float a = 1.0f - 0x1p-24f, b = 1.25f;
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i) x[i] = 8388608.0f + float(3 * i);
  ct::DeviceBuffer<float> d_x(x), d_y(n);
  d_y.poison();
  launch_tunable_intensity(d_x.get(), d_y.get(), n, k, a, b);
  std::vector<double> expected(n);
  for (int i = 0; i < n; ++i) expected[i] = ct::fma_chain(x[i], a, b, k);
  EXPECT_TRUE(ct::all_close(expected, d_y.download(), 0.0, 0.0))
      << "with a = 1 - 2^-24 and b = 1.25, the kernel must apply v = fma(v, a, b) " << k << " times to each "
      << "element, one step after the other: a closed form lands about k/4 below the chain";
}

TEST(TunableIntensity, ExecutesEveryFma) {
  // The exercise walks the roofline by doing k FMAs per loaded element, so the kernel must do
  // them: a closed form (a^k with powf, or repeated squaring) skips the work the intensity is
  // about. With a = 1, b = 1 and x at 2^24 (and just above), fp32 rounds every `v + 1` back to
  // an even neighbour, so y stays at x where a closed form gives x + k. The expected values are
  // the k steps run on the CPU (with a = 1 an FMA is exactly an addition, fused or not).
  const int n = 1000, k = 300;
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i) x[i] = 16777216.0f * float(1 + i % 3) + float(2 * (i % 4));
  ct::DeviceBuffer<float> d_x(x), d_y(n);
  d_y.poison();
  launch_tunable_intensity(d_x.get(), d_y.get(), n, k, 1.0f, 1.0f);
  std::vector<double> expected(n);
  for (int i = 0; i < n; ++i) {
    float v = x[i];
    for (int s = 0; s < k; ++s) v = std::fma(v, 1.0f, 1.0f);
    expected[i] = v;
  }
  EXPECT_TRUE(ct::all_close(expected, d_y.download(), 0.0, 0.0))
      << "the kernel must apply v = fma(v, a, b) " << k << " times to each element, one step after "
      << "the other: the exercise's intensity is those FMAs, and a closed form skips them";
}
