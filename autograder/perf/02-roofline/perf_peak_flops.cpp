// Performance case of exercise 02/03 peak_flops for the grader (course_perf.hpp): the FMA
// chains at an intensity far right of any ridge point, where only the arithmetic counts.
#include "peak_flops.hpp"

#include "course_perf.hpp"
#include "course_test.hpp"

namespace ct = course::test;

TEST(CoursePerf, PeakFlops) {
  COURSE_PERF_ONLY();
  // 2 * 8 * iterations FLOPs per element. On a GPU 2^22 threads x 4096 steps (2.7e11 FLOPs,
  // about 4 ms at the H100's FP32 peak); on the simulator the FLOPs are declared, not counted,
  // so a size whose modelled compute time (2^16 x 512 steps: 5.4e8 FLOPs, 17 us with 496
  // threads per SM) dominates the launch overhead keeps the run short.
  const int n = course::perf::on_gpu() ? (1 << 22) : (1 << 16);
  const int iterations = course::perf::on_gpu() ? 4096 : 512;
  // Chains that never settle: with a = 1 - 2^-24, b = 1.25 and values in [2^23, 2^24) every
  // step moves a chain up by exactly 1 (test_peak_flops.cpp says why), so a kernel that stops
  // once its chains stop changing runs every step here too (with a = 0.9 they settled within
  // 150 steps, and such a kernel ran 4% of them on a GPU).
  ct::Rng rng;
  const auto host = rng.uniform(n, 8388608.0f, 9437184.0f);
  ct::DeviceBuffer<float> s0(host), s1(rng.uniform(n, 8388608.0f, 9437184.0f)), out(n);
  const float* seeds[2] = {s0.get(), s1.get()};
  const float a = 1.0f - 0x1p-24f, b = 1.25f;
  course::perf::measure(
      "peak_flops", 8.0 * n, 2.0 * kFmaChains * iterations * double(n),
      [&](int set) { launch_fma_chains(seeds[set], out.get(), n, iterations, a, b); },
      [&] {
        const auto chains = [&](std::size_t i) {
          double sum = 0.0;
          for (int j = 0; j < kFmaChains; ++j) sum += ct::fma_chain(host[i] + static_cast<float>(j), a, b, iterations);
          return sum;
        };
        return course::perf::sampled_close(out.download(), chains, ct::Tolerance{kFmaChains * 3e-5, 1e-5}, 1024);
      });
}
