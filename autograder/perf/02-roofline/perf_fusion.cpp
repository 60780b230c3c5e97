// Performance case of exercise 02/05 fusion for the grader (course_perf.hpp): a chain of 8
// steps with one residual add, memory-bound step by step. Fused, it moves 12 bytes per element
// in one launch; run step by step it would move about 8 bytes per step and launch 8 kernels.
#include "fusion.hpp"

#include "course_perf.hpp"
#include "course_test.hpp"
#include "../../tests/02-roofline/fusion_reference.hpp"

namespace ct = course::test;

TEST(CoursePerf, Fusion) {
  COURSE_PERF_ONLY();
  const int n = course::perf::on_gpu() ? (1 << 26) : (1 << 20);
  Chain chain;
  const Step steps[] = {{StepKind::scale, 0.5f}, {StepKind::shift, 0.25f}, {StepKind::relu, 0.0f},
                        {StepKind::residual, 0.0f}, {StepKind::scale, 1.5f}, {StepKind::shift, -0.5f},
                        {StepKind::relu, 0.0f}, {StepKind::scale, 0.75f}};
  for (const Step& step : steps) chain.steps[chain.count++] = step;
  ct::Rng rng;
  const auto hx = rng.uniform(n, -1.0f, 1.0f), hr = rng.uniform(n, -1.0f, 1.0f);
  ct::DeviceBuffer<float> x0(hx), x1(rng.uniform(n, -1.0f, 1.0f)), r(hr), y(n);
  const float* x[2] = {x0.get(), x1.get()};
  course::perf::measure(
      "fusion", 12.0 * n, double(chain.count) * n,
      [&](int set) { launch_fused_chain(chain, x[set], r.get(), y.get(), n); },
      [&] {
        return course::perf::sampled_close(y.download(), [&](std::size_t i) { return chain_value(chain, hx[i], hr[i]); },
                                           ct::Tolerance{1e-4, 1e-5});   // the tests' tolerance
      });
}
