// Performance case of exercise 01/05 linear_scan for the grader (course_perf.hpp).
// Needs at least 12 bytes per element (read a and b, write h) and 2 FLOPs.
#include "linear_scan.hpp"

#include "course_perf.hpp"
#include "course_test.hpp"
#include "../../tests/01-serial-dependency/linear_scan_reference.hpp"

#include <vector>

namespace ct = course::test;

TEST(CoursePerf, LinearScan) {
  COURSE_PERF_ONLY();
  // GPU: 2^26 elements (768 MiB of a, b and h, far past L2); the simulator counts exactly at
  // any size, and at 2^20 the modelled memory time is more than the three launches' overhead.
  const int n = course::perf::on_gpu() ? (1 << 26) : (1 << 20);
  ct::Rng rng;
  const auto a = rng.nonzero(n, 0.5f, 0.95f);
  const auto b = rng.uniform(n, -1.0f, 1.0f);
  ct::DeviceBuffer<float> a0(a), b0(b), a1(rng.nonzero(n, 0.5f, 0.95f)), b1(rng.uniform(n, -1.0f, 1.0f)), h(n),
      work(linear_scan_workspace_floats(n));
  const float* as[2] = {a0.get(), a1.get()};
  const float* bs[2] = {b0.get(), b1.get()};
  course::perf::measure(
      "linear_scan", 12.0 * n, 2.0 * n, [&](int s) { launch_linear_scan(as[s], bs[s], 0.0f, h.get(), n, work.get()); },
      [&] {
        const std::vector<double> serial = serial_recurrence(a, b, 0.0f);
        return course::perf::sampled_close(h.download(), [&](std::size_t i) { return serial[i]; },
                                           scan_tolerance(n, 20.0));   // |h| <= 1 / (1 - 0.95)
      });
}
