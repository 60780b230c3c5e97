// Performance case of exercise 03/05 wmma_matmul for the grader (course_perf.hpp).
// Needs at least 2 * N^2 * 2 bytes (bf16 A and B read once) + N^2 * 4 (fp32 C written once)
// and 2 * N^3 FLOPs.
#include "wmma_matmul.hpp"

#include <cuda_bf16.h>

#include "course_perf.hpp"
#include "course_test.hpp"
#include "../../tests/03-matmul-reuse/wmma_reference.hpp"

#include <vector>

namespace ct = course::test;

TEST(CoursePerf, WmmaMatmul) {
  COURSE_PERF_ONLY();
  // On a GPU 4096^3; on the simulator 256^3, where the modelled time is more than the launch
  // overhead.
  const int n = course::perf::on_gpu() ? 4096 : 256;
  const std::size_t count = static_cast<std::size_t>(n) * n;
  ct::Rng rng;
  const Bf16Matrix ha = random_bf16(rng, count), hb = random_bf16(rng, count);
  ct::DeviceBuffer<__nv_bfloat16> a0(ha.bits), b0(hb.bits), a1(random_bf16(rng, count).bits),
      b1(random_bf16(rng, count).bits);
  ct::DeviceBuffer<float> c(count);
  const __nv_bfloat16* a[2] = {a0.get(), a1.get()};
  const __nv_bfloat16* b[2] = {b0.get(), b1.get()};
  course::perf::measure(
      "wmma_matmul", 2.0 * 2.0 * count + 4.0 * count, 2.0 * count * n,
      [&](int set) { launch_wmma_matmul(a[set], b[set], c.get(), n, n, n); },
      [&] {
        return course::perf::sampled_close(c.download(), course::perf::matmul_element(ha.values, hb.values, n, n),
                                           ct::reduction_tolerance(n), 512);
      });
}
