/// @file course_perf.hpp
/// @brief Performance figures for the grader: one `CoursePerf.<Name>` GoogleTest per graded
/// exercise, compiled only into the grader's builds (autograder/perf/NN-x/perf_<name>.cpp).
///
/// The grader runs the submission's test program and the reference solution's test program
/// (built separately, from solutions/, so the submission can never link or call the
/// reference) with `--gtest_filter=CoursePerf.*` and `COURSE_PERF=1`, alternately, several
/// rounds; each run records its figures here and the signed result file carries them
/// (course_grader_listener.cpp). What a case measures:
/// - on a GPU: the median time of the launch (CUDA events), after warm-up, with the L2 cache
///   flushed before every repeat and the input sets rotated, repeated until the spread is
///   small or a time cap is reached; plus the bandwidth of a device-to-device copy, the
///   machine limit a figure is checked against;
/// - on the simulator: the modelled time on the simulator's GPU (cudasim/gpu_model.hpp) and its
///   terms, with the global-memory bytes and launches counted by cudasim (only when
///   `cudasim::stats_available()`; otherwise the figures are marked "not counted").
///
/// The output of the measured run is checked (`output_ok`), and a run whose output is wrong
/// records no figures, so the exercise gets no performance points: a kernel that recognises the
/// performance case (its shape, or a repeated call with the same arguments) and skips the work
/// would otherwise be timed at doing nothing. The input sets hold different values, so one
/// set's output is not another's.
///
/// A case:
/// @code
///   TEST(CoursePerf, VectorAdd) {
///     COURSE_PERF_ONLY();
///     const int n = course::perf::on_gpu() ? (1 << 26) : (1 << 16);
///     ...allocate 2 input sets with different values, host copies a0, b0 of set 0...
///     course::perf::measure("vector_add", /*bytes=*/12.0 * n, /*flops=*/n,
///                           [&](int set) { launch_vector_add(a[set], b[set], c, n); },
///                           [&] { return course::perf::sampled_close(c.download(),
///                                   [&](std::size_t i) { return double(a0[i]) + b0[i]; }, tol); });
///   }
/// @endcode
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include "course_test.hpp"  // count_global_traffic
#include "cuda_check.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>


namespace course {
namespace perf {

/// Whether the grader asked for performance figures (COURSE_PERF=1).
inline bool enabled() {
  const char* v = std::getenv("COURSE_PERF");
  return v && v[0] == '1';
}

inline bool on_gpu() {
#ifdef CUDASIM
  return false;
#else
  return true;
#endif
}

/// Lines added to the signed result file: "perf <case> key=value ...".
inline std::vector<std::string>& lines() {
  static std::vector<std::string> all;
  return all;
}

inline std::string signed_lines() {
  std::string out;
  for (const auto& l : lines()) out += l + "\n";
  return out;
}

#define COURSE_PERF_ONLY() \
  do { if (!::course::perf::enabled()) GTEST_SKIP() << "performance runs only under the grader"; } while (0)

/// Device-to-device copy bandwidth in bytes/s (read + write), the measured memory limit.
inline double copy_bandwidth(std::size_t bytes = std::size_t(1) << 28) {
  void *src = nullptr, *dst = nullptr;
  CUDA_CHECK(cudaMalloc(&src, bytes));
  CUDA_CHECK(cudaMalloc(&dst, bytes));
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<float> times;
  for (int i = 0; i < 7; ++i) {
    CUDA_CHECK(cudaEventRecord(start));
    CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice));
    CUDA_CHECK(cudaEventRecord(stop));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    if (i > 0) times.push_back(ms);  // the first is a warm-up
  }
  std::sort(times.begin(), times.end());
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  CUDA_CHECK(cudaFree(src));
  CUDA_CHECK(cudaFree(dst));
  const double seconds = times[times.size() / 2] * 1e-3;
  return seconds > 0 ? 2.0 * double(bytes) / seconds : 0.0;
}

/// At most `count` positions of [0, size), evenly spread, the first and the last included: where a
/// check compares an output that would take the CPU long to compute whole at a GPU's sizes.
inline std::vector<std::size_t> sample_positions(std::size_t size, std::size_t count = 4096) {
  std::vector<std::size_t> at;
  if (size == 0) return at;
  if (size <= count) {
    for (std::size_t i = 0; i < size; ++i) at.push_back(i);
    return at;
  }
  for (std::size_t k = 0; k < count; ++k) at.push_back(k * (size - 1) / (count - 1));
  return at;
}

/// Whether `actual[i]` is within `tol` of `expected(i)` (computed in double) at the sampled
/// positions, NaN and Inf refused; the message names the first positions that are not.
template <typename T, typename Expected>
::testing::AssertionResult sampled_close(const std::vector<T>& actual, Expected expected,
                                         course::test::Tolerance tol, std::size_t samples = 4096) {
  std::vector<double> want;
  std::vector<double> got;
  const std::vector<std::size_t> at = sample_positions(actual.size(), samples);
  for (std::size_t i : at) {
    want.push_back(expected(i));
    got.push_back(static_cast<double>(actual[i]));
  }
  ::testing::AssertionResult ok = course::test::all_close(want, got, tol);
  if (!ok && at.size() < actual.size()) ok << " (positions counted among the " << at.size() << " sampled)";
  return ok;
}

/// Element i of C = A·B (row-major, A m x k, B k x `cols`), in double: a sampled check of a
/// matrix product at a GPU's sizes, where the whole reference would take the CPU minutes.
inline std::function<double(std::size_t)> matmul_element(const std::vector<float>& a, const std::vector<float>& b,
                                                         int k, int cols) {
  return [&a, &b, k, cols](std::size_t i) {
    const std::size_t row = i / cols, col = i % cols;
    double sum = 0.0;
    for (int p = 0; p < k; ++p) sum += double(a[row * k + p]) * b[static_cast<std::size_t>(p) * cols + col];
    return sum;
  };
}

/// Measures `launch(set)` (set = which input set to use, rotated) and records one line, once
/// `output_ok()` has said that the output of `launch(0)`, the last run, is right.
/// `bytes` and `flops`: what the exercise needs at the least (for GB/s, TFLOP/s and the
/// physical-limit check), not what a given kernel happens to move. `restore_set0`, for a
/// launch that works in place: puts set 0's inputs back before the run whose output is checked.
inline void measure(const std::string& name, double bytes, double flops, const std::function<void(int)>& launch,
                    const std::function<::testing::AssertionResult()>& output_ok,
                    const std::function<void()>& restore_set0 = {}, int input_sets = 2) {
  char line[1024];
  const auto output_right = [&] {
    CUDA_CHECK(cudaDeviceSynchronize());
    const ::testing::AssertionResult ok = output_ok();
    if (!ok)
      ADD_FAILURE() << "the measured run failed its check (its output, or how it made it), so it records no "
                       "figures (no performance points): "
                    << ok.message();
    return static_cast<bool>(ok);
  };
#ifdef CUDASIM
  // Deterministic counts: one run is enough. A first run, on the other input set, names the
  // kernels, so that the exercise's FLOPs can be declared for the model's compute term when one
  // kernel does the work; the counted run on set 0 is then the first to see set 0.
  if (flops > 0) {
    course::test::count_global_traffic([&] { launch(input_sets > 1 ? 1 : 0); });
    course::test::declare_window_flops(flops);
  }
  if (restore_set0) restore_set0();
  const course::test::GlobalTraffic t = course::test::count_global_traffic([&] { launch(0); });
  if (!output_right()) return;
  // The modelled time is the kernels' alone: a run that copied its inputs to the host and worked
  // there would be charged nothing for that work (a red-team run did so for rnn_step at this
  // case's shape, which no test uses). No case's work needs the host: none may reach it.
  if (t.host_device_bytes > 0) {
    ADD_FAILURE() << "the measured run moved " << t.host_device_bytes << " bytes between the host and the GPU "
                  << "(copies, or kernels reading page-locked host memory), so it records no figures (no "
                     "performance points): the work should run on the GPU, from device memory";
    return;
  }
  std::snprintf(line, sizeof line,
                "perf %s backend=sim counted=%d global_bytes=%llu launches=%llu bytes=%.0f flops=%.0f "
                "modelled_ns=%.1f launch_ns=%.1f memory_ns=%.1f compute_ns=%.1f span_ns=%.1f atomic_ns=%.1f gpu=%s "
                "atomic_bytes=%llu max_same_address=%llu span_global=%llu span_shared=%llu threads=%llu",
                name.c_str(), t.counted ? 1 : 0, (unsigned long long)t.bytes(), (unsigned long long)t.launches, bytes,
                flops, t.modelled_ns, t.launch_ns, t.memory_ns, t.compute_ns, t.span_ns, t.atomic_ns,
                t.gpu.empty() ? "H100" : t.gpu.c_str(), (unsigned long long)t.atomic_bytes,
                (unsigned long long)t.max_atomics_same_address, (unsigned long long)t.span_global_ops,
                (unsigned long long)t.span_shared_ops, (unsigned long long)t.threads);
#else
  int device = 0, l2 = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  const std::size_t flush_bytes = std::max<std::size_t>(std::size_t(2) * std::size_t(l2), std::size_t(64) << 20);
  void* flush = nullptr;
  CUDA_CHECK(cudaMalloc(&flush, flush_bytes));
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < 3; ++i) launch(i % input_sets);  // warm-up: clocks, caches, lazy loading
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> times;
  const auto began = std::chrono::steady_clock::now();
  for (int i = 0;; ++i) {
    CUDA_CHECK(cudaMemsetAsync(flush, i & 0xff, flush_bytes));  // evicts the inputs from L2
    CUDA_CHECK(cudaEventRecord(start));
    launch(i % input_sets);
    CUDA_CHECK(cudaEventRecord(stop));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    times.push_back(ms);
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    if (times.size() >= 10) {
      std::vector<float> sorted = times;
      std::sort(sorted.begin(), sorted.end());
      const float q1 = sorted[sorted.size() / 4], q3 = sorted[3 * sorted.size() / 4];
      const float median = sorted[sorted.size() / 2];
      if ((q3 - q1) <= 0.05f * median || times.size() >= 200 || elapsed > 2.0) break;
    }
  }
  std::sort(times.begin(), times.end());
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  CUDA_CHECK(cudaFree(flush));
  // One more run on set 0, its output checked. (A kernel that remembers its last call with the
  // same arguments could still skip work in the timed repeats; the simulator's grading, whose
  // counted run is the first on its set, catches that.)
  if (restore_set0) restore_set0();
  launch(0);
  if (!output_right()) return;
  const double copy_bps = copy_bandwidth();
  std::snprintf(line, sizeof line,
                "perf %s backend=cuda counted=1 median_ms=%.6f q1_ms=%.6f q3_ms=%.6f repeats=%zu bytes=%.0f "
                "flops=%.0f copy_bytes_per_s=%.6g",
                name.c_str(), times[times.size() / 2], times[times.size() / 4], times[3 * times.size() / 4],
                times.size(), bytes, flops, copy_bps);
#endif
  lines().push_back(line);
}

}  // namespace perf
}  // namespace course
