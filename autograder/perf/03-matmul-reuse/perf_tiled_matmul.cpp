// Performance case of exercise 03/03 tiled_matmul for the grader (course_perf.hpp).
// Measures TILE = 32, the largest tile (the most reuse). Needs at least the compulsory
// traffic, 3 * N^2 * 4 bytes (A and B read once, C written once), and 2 * N^3 FLOPs.
#include "tiled_matmul.hpp"

#include "course_perf.hpp"
#include "course_test.hpp"

namespace ct = course::test;

TEST(CoursePerf, TiledMatmul) {
  COURSE_PERF_ONLY();
  // On a GPU 2048^3 (17 GFLOP); on the simulator 256^3: a short run whose modelled time is
  // more than the launch overhead.
  const int n = course::perf::on_gpu() ? 2048 : 256;
  const std::size_t count = static_cast<std::size_t>(n) * n;
  ct::Rng rng;
  const auto ha = rng.uniform(count, -1.0f, 1.0f), hb = rng.uniform(count, -1.0f, 1.0f);
  ct::DeviceBuffer<float> a0(ha), b0(hb), a1(rng.uniform(count, -1.0f, 1.0f)), b1(rng.uniform(count, -1.0f, 1.0f)),
      c(count);
  const float* a[2] = {a0.get(), a1.get()};
  const float* b[2] = {b0.get(), b1.get()};
  course::perf::measure(
      "tiled_matmul", 3.0 * 4.0 * count, 2.0 * count * n, [&](int set) { launch_tiled_matmul<32>(a[set], b[set], c.get(), n, n, n); },
      [&] { return course::perf::sampled_close(c.download(), course::perf::matmul_element(ha, hb, n, n), ct::reduction_tolerance(n), 512); });
}
