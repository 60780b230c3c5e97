// Performance case of exercise 02/02 stream for the grader (course_perf.hpp): the triad,
// 12 bytes and 2 FLOPs per element, the kernel STREAM reports as the machine's bandwidth.
#include "stream.hpp"

#include "course_perf.hpp"
#include "course_test.hpp"

namespace ct = course::test;

TEST(CoursePerf, Stream) {
  COURSE_PERF_ONLY();
  // On a GPU 2^26 elements (768 MiB per launch, far past L2); on the simulator 2^20, enough
  // that the modelled memory time (12 MiB: 3.8 us on an H100) is not hidden behind the 2.5 us
  // launch overhead. The default grid (blocks = 0): the launcher's own choice is graded.
  const int n = course::perf::on_gpu() ? (1 << 26) : (1 << 20);
  ct::Rng rng;
  const auto hx = rng.uniform(n, -1.0f, 1.0f), hy = rng.uniform(n, -1.0f, 1.0f);
  ct::DeviceBuffer<float> x0(hx), y0(hy), x1(rng.uniform(n, -1.0f, 1.0f)), y1(rng.uniform(n, -1.0f, 1.0f)), out(n);
  const float* x[2] = {x0.get(), x1.get()};
  const float* y[2] = {y0.get(), y1.get()};
  course::perf::measure(
      "stream", 12.0 * n, 2.0 * n, [&](int set) { launch_stream_triad(x[set], y[set], out.get(), 3.0f, n, 0, 256); },
      [&] {
        return course::perf::sampled_close(out.download(), [&](std::size_t i) { return hx[i] + 3.0 * hy[i]; },
                                           ct::elementwise_tolerance());
      });
}
