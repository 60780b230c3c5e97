// Performance case of exercise 03/01 dot_product for the grader (course_perf.hpp).
// Needs at least 8 bytes per element (x and y read once) and 2 FLOPs.
#include "dot_product.hpp"

#include "course_perf.hpp"
#include "course_test.hpp"

namespace ct = course::test;

TEST(CoursePerf, DotProduct) {
  COURSE_PERF_ONLY();
  // On a GPU 2^26 elements (512 MiB read, far past L2); on the simulator the counts are exact
  // at any size, and at 2^20 the modelled memory time (8 MiB) is more than the launch overhead.
  const int n = course::perf::on_gpu() ? (1 << 26) : (1 << 20);
  ct::Rng rng;
  const auto hx = rng.uniform(n, -1.0f, 1.0f), hy = rng.uniform(n, -1.0f, 1.0f);
  ct::DeviceBuffer<float> x0(hx), y0(hy), x1(rng.uniform(n, -1.0f, 1.0f)), y1(rng.uniform(n, -1.0f, 1.0f)), result(1);
  const float* x[2] = {x0.get(), x1.get()};
  const float* y[2] = {y0.get(), y1.get()};
  course::perf::measure(
      "dot_product", 8.0 * n, 2.0 * n, [&](int set) { launch_dot_product(x[set], y[set], result.get(), n); },
      [&] {
        double dot = 0.0;
        for (int i = 0; i < n; ++i) dot += double(hx[i]) * hy[i];
        return course::perf::sampled_close(result.download(), [&](std::size_t) { return dot; },
                                           ct::reduction_tolerance(n));
      });
}
