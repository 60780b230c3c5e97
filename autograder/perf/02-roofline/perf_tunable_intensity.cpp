// Performance case of exercise 02/04 tunable_intensity for the grader (course_perf.hpp): at
// k = 16 FMAs per element (4 FLOP/byte) the kernel is still memory-bound on an H100, so what
// counts is reading each element once with enough threads in flight.
#include "tunable_intensity.hpp"

#include "course_perf.hpp"
#include "course_test.hpp"

namespace ct = course::test;

TEST(CoursePerf, TunableIntensity) {
  COURSE_PERF_ONLY();
  const int n = course::perf::on_gpu() ? (1 << 26) : (1 << 20);
  const int k = 16;
  ct::Rng rng;
  const auto host = rng.uniform(n, -1.0f, 1.0f);
  ct::DeviceBuffer<float> x0(host), x1(rng.uniform(n, -1.0f, 1.0f)), y(n);
  const float* x[2] = {x0.get(), x1.get()};
  course::perf::measure(
      "tunable_intensity", 8.0 * n, 2.0 * k * double(n),
      [&](int set) { launch_tunable_intensity(x[set], y.get(), n, k, 0.9f, 0.1f); },
      [&] {
        // The tests' tolerance: the same chain with separate multiplies and adds passes too.
        return course::perf::sampled_close(y.download(), [&](std::size_t i) { return ct::fma_chain(host[i], 0.9f, 0.1f, k); },
                                           ct::Tolerance{3e-5, 1e-5});
      });
}
