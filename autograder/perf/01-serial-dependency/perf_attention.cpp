// Performance case of exercise 01/04 attention for the grader (course_perf.hpp).
// Needs at least: read Q, K, V and write out (4 n d floats) plus the n x n probabilities
// written once (4 n^2 bytes); 4 n^2 d FLOPs for the two products.
#include "attention.hpp"

#include "course_perf.hpp"
#include "course_test.hpp"
#include "../../tests/01-serial-dependency/attention_reference.hpp"

namespace ct = course::test;

TEST(CoursePerf, Attention) {
  COURSE_PERF_ONLY();
  // GPU: n = 4096, d = 64 (the products dominate, the softmax is a few percent). Simulator:
  // the softmax kernel's global bytes (cuBLAS runs on the CPU there and is not counted).
  const int n = course::perf::on_gpu() ? 4096 : 256;
  const int d = 64;
  ct::Rng rng;
  const size_t nd = static_cast<size_t>(n) * d;
  const auto hq = rng.uniform(nd), hk = rng.uniform(nd), hv = rng.uniform(nd);
  ct::DeviceBuffer<float> q0(hq), k0(hk), v0(hv);
  ct::DeviceBuffer<float> q1(rng.uniform(nd)), k1(rng.uniform(nd)), v1(rng.uniform(nd));
  ct::DeviceBuffer<float> probs(static_cast<size_t>(n) * n), out(nd);
  const float* q[2] = {q0.get(), q1.get()};
  const float* k[2] = {k0.get(), k1.get()};
  const float* v[2] = {v0.get(), v1.get()};
  cublasHandle_t handle = nullptr;
  CUBLAS_CHECK(cublasCreate(&handle));
  const double bytes = 4.0 * (4.0 * nd + double(n) * n);
  course::perf::measure(
      "attention", bytes, 4.0 * double(n) * n * d,
      [&](int s) { launch_attention(handle, q[s], k[s], v[s], probs.get(), out.get(), n, d, /*causal=*/true); },
      [&] {
        const Reference ref = cpu_attention(hq, hk, hv, n, d, /*causal=*/true);
        return course::perf::sampled_close(out.download(), [&](std::size_t i) { return ref.out[i]; },
                                           out_tolerance(n, d, 1.0));
      });
  CUBLAS_CHECK(cublasDestroy(handle));
}
