// Performance case of exercise 00/01 vector_add for the grader (course_perf.hpp).
// Needs at least 12 bytes per element (two 4-byte loads, one store) and 1 FLOP.
#include "vector_add.hpp"

#include "course_perf.hpp"
#include "course_test.hpp"

namespace ct = course::test;

TEST(CoursePerf, VectorAdd) {
  COURSE_PERF_ONLY();
  // On a GPU 2^26 elements (768 MiB moved per launch, far past L2); on the simulator the
  // counts are exact at any size, and 2^20 is large enough that the modelled memory time
  // (12 MiB: 3.8 us on an H100) is not hidden behind the 2.5 us launch overhead.
  const int n = course::perf::on_gpu() ? (1 << 26) : (1 << 20);
  ct::Rng rng;
  const auto ha = rng.uniform(n, -1.0f, 1.0f), hb = rng.uniform(n, -1.0f, 1.0f);
  ct::DeviceBuffer<float> a0(ha), b0(hb), a1(rng.uniform(n, -1.0f, 1.0f)), b1(rng.uniform(n, -1.0f, 1.0f)), c(n);
  const float* a[2] = {a0.get(), a1.get()};
  const float* b[2] = {b0.get(), b1.get()};
  course::perf::measure(
      "vector_add", 12.0 * n, 1.0 * n, [&](int set) { launch_vector_add(a[set], b[set], c.get(), n); },
      [&] {
        return course::perf::sampled_close(c.download(), [&](std::size_t i) { return double(ha[i]) + hb[i]; },
                                           ct::elementwise_tolerance());
      });
}
