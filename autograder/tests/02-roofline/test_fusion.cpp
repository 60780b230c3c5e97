// Tests for exercise 02/05 fusion (contract: lessons/02-roofline/fusion.hpp).
// Run: ./course test 02/fusion
//
// Only the fused launcher is graded: the eager one is given code, the baseline the lesson's
// experiment (lessons/02-roofline/fusion_experiment.cu) compares it with.

#include "fusion.hpp"

#include <cuda_runtime.h>

#include "course_test.hpp"
#include "cuda_check.hpp"
#include "fusion_reference.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace ct = course::test;

namespace {

const char* kind_name(StepKind kind) {
  switch (kind) {
    case StepKind::scale: return "scale";
    case StepKind::shift: return "shift";
    case StepKind::relu: return "relu";
    case StepKind::residual: return "residual";
  }
  return "?";
}

std::string describe(const Chain& chain) {
  std::string text = "chain of " + std::to_string(chain.count) + " [";
  for (int s = 0; s < chain.count; ++s) {
    const Step& step = chain.steps[s];
    text += (s ? ", " : "") + std::string(kind_name(step.kind));
    if (step.kind == StepKind::scale || step.kind == StepKind::shift) text += " " + std::to_string(step.value);
  }
  return text + "]";
}

/// A chain of `count` random steps; `residuals` of them (at random places) are residual adds.
Chain random_chain(ct::Rng& rng, int count, int residuals) {
  Chain chain;
  chain.count = count;
  for (int s = 0; s < count; ++s) {
    Step& step = chain.steps[s];
    switch (rng.integer(0, 2)) {
      case 0: step = {StepKind::scale, static_cast<float>(rng.scalar(0.5, 1.25) * (rng.integer(0, 1) ? 1 : -1))}; break;
      case 1: step = {StepKind::shift, static_cast<float>(rng.scalar(0.1, 1.0) * (rng.integer(0, 1) ? 1 : -1))}; break;
      default: step = {StepKind::relu, 0.0f}; break;
    }
  }
  for (int placed = 0; placed < std::min(residuals, count); ++placed) {
    int s = rng.integer(0, count - 1);
    while (chain.steps[s].kind == StepKind::residual) s = (s + 1) % count;
    chain.steps[s] = {StepKind::residual, 0.0f};
  }
  return chain;
}


/// Runs the fused chain on fresh inputs into a poisoned output followed by a guard, and
/// compares with the CPU. `r` is passed as null when no step reads it: a kernel that loads it
/// anyway reads through a null pointer. The counted traffic goes to `traffic`, if given.
::testing::AssertionResult fused_matches(ct::Rng& rng, const Chain& chain, int n,
                                         ct::GlobalTraffic* traffic = nullptr) {
  const bool needs_r = reads_residual(chain);
  const auto x = rng.nonzero(n, 0.25f, 2.0f);
  const auto r = rng.uniform(n, -1.0f, 1.0f);
  ct::DeviceBuffer<float> d_x(x), d_r(r), d_y(n + ct::kGuardElements);
  auto init = std::vector<float>(n, std::nanf(""));
  const auto guard = ct::guard_pattern<float>();
  init.insert(init.end(), guard.begin(), guard.end());
  d_y.upload(init);
  const float* r_arg = needs_r ? d_r.get() : nullptr;
  const auto counted = ct::count_global_traffic([&] { launch_fused_chain(chain, d_x.get(), r_arg, d_y.get(), n); });
  if (traffic != nullptr) *traffic = counted;
  const auto all = d_y.download();
  const std::vector<float> y(all.begin(), all.begin() + n);
  const std::string where = "n = " + std::to_string(n) + ", " + describe(chain);
  // The steps are exact fp32 operations; a compiler may fuse a scale and the next shift into
  // one FMA (one rounding fewer), which moves a result by an ulp or so.
  const auto values = ct::all_close(chain_on_cpu(chain, x, r), y, 1e-4, 1e-5);
  if (!values) return ::testing::AssertionFailure() << where << ":\n" << values.message();
  const auto untouched = ct::guard_untouched(all, n);
  if (!untouched) return ::testing::AssertionFailure() << where << ":\n" << untouched.message();
  return ::testing::AssertionSuccess();
}

}  // namespace

TEST(Fusion, MatchesTheStepsOnAwkwardSizes) {
  ct::Rng rng;
  for (int n : ct::awkward_sizes(256)) {
    EXPECT_TRUE(fused_matches(rng, random_chain(rng, rng.integer(1, kMaxSteps), 0), n));
    EXPECT_TRUE(fused_matches(rng, random_chain(rng, rng.integer(1, kMaxSteps), 1), n));
  }
}

TEST(Fusion, EveryKindOfStepAndEveryLength) {
  ct::Rng rng;
  for (StepKind kind : {StepKind::scale, StepKind::shift, StepKind::relu, StepKind::residual}) {
    Chain one;
    one.count = 1;
    one.steps[0] = {kind, kind == StepKind::scale ? -0.75f : 0.5f};
    EXPECT_TRUE(fused_matches(rng, one, 1000));
  }
  for (int count = 1; count <= kMaxSteps; ++count) {
    EXPECT_TRUE(fused_matches(rng, random_chain(rng, count, rng.integer(0, 3)), 4097));
  }
}

TEST(Fusion, StepsApplyInTheirOrder) {
  // shift by -1 then ReLU is not ReLU then shift by -1: a kernel that reorders steps (or
  // applies each kind in a fixed order) gets one of them wrong.
  ct::Rng rng;
  Chain shift_then_relu;
  shift_then_relu.count = 2;
  shift_then_relu.steps[0] = {StepKind::shift, -1.0f};
  shift_then_relu.steps[1] = {StepKind::relu, 0.0f};
  Chain relu_then_shift = shift_then_relu;
  std::swap(relu_then_shift.steps[0], relu_then_shift.steps[1]);
  Chain residual_then_scale;
  residual_then_scale.count = 2;
  residual_then_scale.steps[0] = {StepKind::residual, 0.0f};
  residual_then_scale.steps[1] = {StepKind::scale, 3.0f};
  for (const Chain& chain : {shift_then_relu, relu_then_shift, residual_then_scale})
    EXPECT_TRUE(fused_matches(rng, chain, 4097));
}

TEST(Fusion, TheEmptyChainCopies) {
  ct::Rng rng;
  for (int n : {1, 255, 65537}) EXPECT_TRUE(fused_matches(rng, Chain{}, n));
}

TEST(Fusion, WorksInPlace) {
  // y == x: each element is read before it is written, by the same thread.
  ct::Rng rng;
  const int n = 10007;
  const Chain chain = random_chain(rng, 9, 2);
  const auto x = rng.nonzero(n, 0.25f, 2.0f);
  const auto r = rng.uniform(n, -1.0f, 1.0f);
  ct::DeviceBuffer<float> d(x), d_r(r);
  launch_fused_chain(chain, d.get(), d_r.get(), d.get(), n);
  EXPECT_TRUE(ct::all_close(chain_on_cpu(chain, x, r), d.download(), 1e-4, 1e-5)) << describe(chain);
}

TEST(Fusion, OneLaunchMovesEachElementOnce) {
  // What fusion buys, counted exactly on the simulator: one launch for the whole chain, x and
  // y moved once per element (4 + 4 bytes), r once if any step reads it, however many do.
  // Eagerly, the same chains would take one launch and 8 bytes per element per step.
  // Besides n = 1, two sizes drawn from the run's seed (1000 to 16384 and 16385 to 70000: the
  // other tests' sizes among them), so that no one size marks the calls whose sectors count.
  ct::Rng rng;
  bool counted = true;
  std::string why_not;
  const int small = rng.integer(1000, 16384), large = rng.integer(16385, 70000);
  for (int n : {1, small, large}) {
    for (int count : {0, 1, 4, kMaxSteps}) {
      for (int residuals : {0, 1, 3}) {
        if (residuals > count) continue;
        const Chain chain = random_chain(rng, count, residuals);
        ct::GlobalTraffic traffic;
        EXPECT_TRUE(fused_matches(rng, chain, n, &traffic));
        if (!traffic.counted) {
          counted = false;
          why_not = traffic.why_not;
          continue;
        }
        const std::string where = "n = " + std::to_string(n) + ", " + describe(chain);
        const std::uint64_t inputs = residuals > 0 ? 2 : 1;
        EXPECT_EQ(traffic.launches, 1u) << where << ": kernel launches (the whole chain is one kernel)";
        EXPECT_EQ(traffic.load_bytes, 4u * inputs * n)
            << where << ": bytes loaded (x" << (residuals > 0 ? " and r" : "") << ", each element once)";
        EXPECT_EQ(traffic.store_bytes, 4u * n) << where << ": bytes stored (y, each element once)";
        EXPECT_EQ(traffic.host_device_bytes, 0u)
            << where << ": bytes moved between host and device, by copies or by the kernel reading page-locked host memory "
               "(the chain runs on the GPU, on device memory)";
        if (n >= 1000) {
          // Coalesced: a warp's accesses fill the 32-byte sectors they touch (neighbouring
          // threads, neighbouring elements); a thread walking 4 neighbours of its own uses a
          // quarter of each sector a warp-wide access touches.
          EXPECT_GE(traffic.bytes(), 24 * traffic.sectors)
              << where << ": " << traffic.bytes() << " bytes moved in " << traffic.sectors << " 32-byte sectors ("
              << 100 * traffic.bytes() / (32 * std::max<std::uint64_t>(1, traffic.sectors)) << "% of each used): "
              << "neighbouring threads should take neighbouring elements, every thread of the grid one of them";
        }
      }
    }
  }
  if (!counted) GTEST_SKIP() << "values checked; launches and bytes not checked: " << why_not;
}
