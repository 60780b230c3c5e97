// The lesson's kernels measured (GPU) or counted (simulator), printed as one JSON object for
// `./course roofline`, which places them on a roofline and draws the plot.
//
// Built by lessons/02-roofline/CMakeLists.txt twice: `roofline_demo` from your exercises and
// `roofline_demo_reference` from solutions/. Run it through `./course roofline`, or alone:
//   build/<backend>/demos/02-roofline/roofline_demo [--n N]
//
// Per kernel it reports FLOPs (counted by hand from the kernel's definition: the simulator
// counts bytes, not arithmetic), bytes (the simulator's counters when they exist, else the
// kernel's definition), seconds (CUDA events on a GPU: the median of repeats after warm-up;
// on the simulator CPU time, which says nothing about a GPU), on the simulator the modelled
// time on CUDASIM_GPU (cudasim/gpu_model.hpp, with the FLOPs declared to it) and its dominant
// term, and whether a sample of its output matched a CPU reference.

#include <cuda_runtime.h>

#include "cuda_check.hpp"
#include "peak_flops.hpp"
#include "roofline_model.hpp"
#include "stream.hpp"
#include "tunable_intensity.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#ifdef CUDASIM
#include <cudasim/gpu_model.hpp>
#include <cudasim/stats.hpp>
#endif

namespace {

bool counters_available() {
#ifdef CUDASIM
  return cudasim::stats_available();
#else
  return false;
#endif
}

struct Figures {
  double seconds = 0.0;
  double counted_bytes = -1.0;      // -1: not counted
  double modelled_seconds = -1.0;   // -1: not modelled (on a GPU, or without the counters)
  std::string modelled_bound;       // the model's dominant term
};

/// GPU: median of `repeats` timed runs (CUDA events) after 2 warm-ups. Simulator: one run,
/// CPU time, plus the counted global bytes and the modelled time, for which `kernel` (the
/// exercise's kernel, as its launch names it) is declared to do `flops` per launch.
Figures measure(const std::function<void()>& launch, int repeats, const char* kernel = nullptr,
                double flops = 0.0) {
  Figures f;
#ifdef CUDASIM
  if (kernel != nullptr) cudasim::declare_flops(kernel, static_cast<std::uint64_t>(flops));
#else
  (void)kernel, (void)flops;
#endif
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
#ifdef CUDASIM
  repeats = 1;
  const bool counted = counters_available();
  CUDA_CHECK(cudaDeviceSynchronize());
  if (counted) cudasim::reset_stats();
#else
  for (int i = 0; i < 2; ++i) launch();
#endif
  std::vector<float> times;
  for (int i = 0; i < repeats; ++i) {
    CUDA_CHECK(cudaEventRecord(start));
    launch();
    CUDA_CHECK(cudaEventRecord(stop));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    times.push_back(ms);
  }
#ifdef CUDASIM
  if (counted) {
    double bytes = 0.0, modelled_ns = 0.0, longest_ns = -1.0;
    for (const auto& k : cudasim::kernel_stats()) {
      bytes += double(k.global_bytes());
      modelled_ns += k.modelled.total_ns;
      if (k.modelled.total_ns > longest_ns) {
        longest_ns = k.modelled.total_ns;
        f.modelled_bound = k.modelled.dominant();
      }
    }
    f.counted_bytes = bytes;
    if (longest_ns >= 0.0) f.modelled_seconds = modelled_ns * 1e-9;
  }
#endif
  std::sort(times.begin(), times.end());
  f.seconds = times[times.size() / 2] * 1e-3;
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  return f;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out + "\"";
}

std::vector<std::string> kernel_lines;

void report(const std::string& name, const std::string& family, double parameter, double flops,
            double model_bytes, const Figures& f, bool correct) {
  const bool counted = f.counted_bytes >= 0.0;
  std::string modelled;
  if (f.modelled_seconds >= 0.0) {
    char text[160];
    std::snprintf(text, sizeof text, "\"modelled_seconds\": %.9g, \"modelled_bound\": %s, ", f.modelled_seconds,
                  json_string(f.modelled_bound).c_str());
    modelled = text;
  }
  char line[640];
  std::snprintf(line, sizeof line,
                "    {\"name\": %s, \"family\": %s, \"parameter\": %.17g, \"flops\": %.17g, "
                "\"bytes\": %.17g, \"model_bytes\": %.17g, \"bytes_source\": \"%s\", "
                "\"seconds\": %.9g, %s\"correct\": %s}",
                json_string(name).c_str(), json_string(family).c_str(), parameter, flops,
                counted ? f.counted_bytes : model_bytes, model_bytes, counted ? "counters" : "model",
                f.seconds, modelled.c_str(), correct ? "true" : "false");
  kernel_lines.push_back(line);
}

/// Compares `count` evenly spread elements of a device array with `expected(i)`.
bool sample_matches(const float* d, long long n, const std::function<double(long long)>& expected) {
  const int count = 64;
  for (int s = 0; s < count; ++s) {
    const long long i = std::min<long long>(n - 1, (n - 1) * s / (count - 1) + (s % 3));
    float v = 0.0f;
    CUDA_CHECK(cudaMemcpy(&v, d + i, sizeof v, cudaMemcpyDeviceToHost));
    const double e = expected(i);
    if (!(std::fabs(v - e) <= 1e-4 + 1e-4 * std::fabs(e))) return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
#ifdef CUDASIM
  const bool on_gpu = false;
#else
  const bool on_gpu = true;
#endif
  // 256 MiB per array on a GPU. 16 MiB on the simulator, where every element runs on the CPU:
  // enough that the modelled launch overhead (2.5 us) is a quarter of a STREAM kernel's time.
  long long n = on_gpu ? (1ll << 26) : (1ll << 22);
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--n") == 0) n = std::atoll(argv[i + 1]);
  }
  const int repeats = 15;

  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  int sms = 0, clock_khz = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));

  // Inputs: x[i] = 1 + (i % 7) / 8, y[i] = 2 - (i % 5) / 4, written by the host once.
  auto xv = [](long long i) { return 1.0 + double(i % 7) / 8.0; };
  auto yv = [](long long i) { return 2.0 - double(i % 5) / 4.0; };
  std::vector<float> hx(n), hy(n);
  for (long long i = 0; i < n; ++i) {
    hx[i] = float(xv(i));
    hy[i] = float(yv(i));
  }
  float *x = nullptr, *y = nullptr, *out = nullptr;
  CUDA_CHECK(cudaMalloc(&x, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&y, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&out, n * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(x, hx.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(y, hy.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  const int in = static_cast<int>(n);
  const double dn = double(n);
  const float s = 3.0f;

  // The machine's memory roof as a library sees it: a device-to-device copy (read + write).
  Figures memcpy_fig = measure([&] {
    CUDA_CHECK(cudaMemcpy(out, x, n * sizeof(float), cudaMemcpyDeviceToDevice));
  }, repeats);

  // STREAM.
  auto poison = [&] { CUDA_CHECK(cudaMemset(out, 0xFF, n * sizeof(float))); };
  poison();
  Figures f = measure([&] { launch_stream_copy(x, out, in); }, repeats, "stream_kernel", 0.0);
  report("copy", "stream", 0, 0.0, 8.0 * dn, f, sample_matches(out, n, xv));
  poison();
  f = measure([&] { launch_stream_scale(x, out, s, in); }, repeats, "stream_kernel", dn);
  report("scale", "stream", 0, dn, 8.0 * dn, f,
         sample_matches(out, n, [&](long long i) { return s * xv(i); }));
  poison();
  f = measure([&] { launch_stream_add(x, y, out, in); }, repeats, "stream_kernel", dn);
  report("add", "stream", 0, dn, 12.0 * dn, f,
         sample_matches(out, n, [&](long long i) { return xv(i) + yv(i); }));
  poison();
  f = measure([&] { launch_stream_triad(x, y, out, s, in); }, repeats, "stream_kernel", 2.0 * dn);
  report("triad", "stream", 0, 2.0 * dn, 12.0 * dn, f,
         sample_matches(out, n, [&](long long i) { return xv(i) + s * yv(i); }));

  // Tunable intensity: k FMAs per element, intensity k/4, over the same n elements as STREAM
  // (on the simulator the larger k take a few seconds of CPU: every FMA runs).
  const float a = 0.5f, b = 0.25f;
  for (int k : {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}) {
    poison();
    f = measure([&] { launch_tunable_intensity(x, out, in, k, a, b); }, repeats, "tunable_intensity_kernel",
                2.0 * k * dn);
    const double ak = std::pow(double(a), k), fixed = double(b) * (1.0 - ak) / (1.0 - double(a));
    report("fma k=" + std::to_string(k), "tunable", k, 2.0 * k * dn, 8.0 * dn, f,
           sample_matches(out, n, [&](long long i) { return ak * xv(i) + fixed; }));
  }

  // Peak FLOPs: enough threads to fill every SM several times, long chains (on the simulator
  // one full wave, 2048 threads per SM of the modelled GPU, and shorter chains).
  const long long np = std::min<long long>(n, (long long)sms * 2048 * (on_gpu ? 4 : 1));
  const int iterations = on_gpu ? 2048 : 256;
  poison();
  const double chain_flops = 2.0 * kFmaChains * iterations * double(np);
  f = measure([&] { launch_fma_chains(x, out, int(np), iterations, a, b); }, on_gpu ? 7 : 1, "fma_chains_kernel",
              chain_flops);
  {
    const double at = std::pow(double(a), iterations);
    const double fixed = double(b) * (1.0 - at) / (1.0 - double(a));
    report("fma chains", "peak", iterations, chain_flops,
           8.0 * double(np), f, sample_matches(out, np, [&](long long i) {
             double sum = 0.0;
             for (int j = 0; j < kFmaChains; ++j) sum += at * (xv(i) + j) + fixed;
             return sum;
           }));
  }

  CUDA_CHECK(cudaFree(x));
  CUDA_CHECK(cudaFree(y));
  CUDA_CHECK(cudaFree(out));

  // FP32 peak from the device's own figures: SMs x 128 lanes x 2 FLOPs x clock (Hopper,
  // Ampere GA100 has 64 lanes per SM; the Python side knows the generations).
  std::printf("{\n  \"backend\": \"%s\",\n  \"device\": %s,\n  \"sm_count\": %d,\n"
              "  \"clock_khz\": %d,\n  \"compute_capability\": \"%d.%d\",\n"
              "  \"counters\": %s,\n  \"n\": %lld,\n"
              "  \"memcpy_bytes_per_s\": %.9g,\n  \"machines\": [\n",
              on_gpu ? "cuda" : "sim", json_string(prop.name).c_str(), sms, clock_khz, prop.major,
              prop.minor, counters_available() ? "true" : "false", n,
              memcpy_fig.seconds > 0 ? 2.0 * double(n) * sizeof(float) / memcpy_fig.seconds : 0.0);
  for (std::size_t i = 0; i < roofline::kMachineCount; ++i) {
    const roofline::Machine& m = roofline::kMachines[i];
    std::printf("    {\"name\": %s, \"description\": %s, \"fp32_flops\": %.6g, "
                "\"bf16_flops\": %.6g, \"memory_bytes_per_s\": %.6g}%s\n",
                json_string(m.name).c_str(), json_string(m.description).c_str(), m.fp32_flops,
                m.bf16_flops, m.memory_bytes_per_s, i + 1 < roofline::kMachineCount ? "," : "");
  }
  std::printf("  ],\n");
#ifdef CUDASIM
  std::printf("  \"modelled_gpu\": %s,\n", json_string(cudasim::modelled_gpu().name).c_str());
#endif
  std::printf("  \"kernels\": [\n");
  for (std::size_t i = 0; i < kernel_lines.size(); ++i)
    std::printf("%s%s\n", kernel_lines[i].c_str(), i + 1 < kernel_lines.size() ? "," : "");
  std::printf("  ]\n}\n");
  return 0;
}
