// Lesson 02's fusion experiment: what a static graph buys. The same chains of elementwise
// steps, run eagerly (one kernel per step, launch_eager_chain) and fused (one kernel,
// launch_fused_chain: your exercise 02/05), side by side: launches, bytes moved per element
// and time.
//
//   ./course run lessons/02-roofline/fusion_experiment.cu exercises/02-roofline/05_fusion.cu
//            [--n ELEMENTS] [--gpu H100|H200|A100|T4]
//
// On the simulator, `./course run` runs it on the modelled clock (--wall-time for CPU time):
// the launches and bytes are the simulator's exact counts, the times are modelled on the
// named GPU from those counts (launch overhead + bytes at the GPU's bandwidth), the same on any
// machine. On a GPU the times are measured with events (the best of 5 runs) and the counts
// are not printed.
//
// What it shows, and what its exit status holds it to (on the simulator's counters): the
// fused chain moves 8 bytes per element (12 with a residual input) whatever its length, and
// one launch; the eager chain about 8 per step and one launch per step; the fused chain is
// faster for every chain of 2 or more steps.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cuda_check.hpp"
#include "fusion.hpp"
#ifdef CUDASIM
#include <cudasim/gpu_model.hpp>
#include <cudasim/stats.hpp>
#include <cudasim/timeline.hpp>
#endif

namespace {

/// One way of running a chain, as the table shows it.
struct Run {
  double ms = 0;             ///< modelled (simulator) or measured (GPU) time of one chain, in ms
  unsigned long long launches = 0, bytes = 0;  ///< simulator only
};

/// Times `launch` with events: once on the modelled clock (it does not vary), the best of 5
/// on a GPU or in CPU time. On the simulator the counters of the timed run come with it.
template <class Launch>
Run time_it(Launch launch, bool modelled) {
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  launch();  // warm-up (and on a GPU, the first launch's one-off costs)
  CUDA_CHECK(cudaDeviceSynchronize());
  Run run;
  run.ms = 1e30;
  for (int trial = 0; trial < (modelled ? 1 : 5); ++trial) {
#ifdef CUDASIM
    cudasim::reset_stats();
#endif
    CUDA_CHECK(cudaEventRecord(start));
    launch();
    CUDA_CHECK(cudaEventRecord(stop));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    run.ms = std::min(run.ms, double(ms));
  }
#ifdef CUDASIM
  for (const cudasim::KernelStats& k : cudasim::kernel_stats()) {
    run.launches += k.launches;
    run.bytes += k.global_bytes();
  }
#endif
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  return run;
}

/// A chain of `count` steps cycling scale, shift, ReLU; the step at `residual_at` (if >= 0)
/// adds the residual input instead.
Chain make_chain(int count, int residual_at) {
  const Step cycle[] = {{StepKind::scale, 0.9f}, {StepKind::shift, 0.1f}, {StepKind::relu, 0.0f}};
  Chain chain;
  chain.count = count;
  for (int s = 0; s < count; ++s) chain.steps[s] = s == residual_at ? Step{StepKind::residual, 0.0f} : cycle[s % 3];
  return chain;
}

int usage(const char* program) {
  std::fprintf(stderr, "usage: %s [--n ELEMENTS] [--gpu H100|H200|A100|T4] [--out IGNORED]\n", program);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int n = 1 << 22;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return usage(argv[0]);
    if (a == "--n") {
      char* end = nullptr;
      const long value = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || value < 1 || value > (1L << 28)) {
        std::fprintf(stderr, "--n %s: give a number of elements from 1 to 2^28\n", argv[i]);
        return 2;
      }
      n = static_cast<int>(value);
    } else if (a == "--gpu") {
#ifdef CUDASIM
      setenv("CUDASIM_GPU", argv[++i], 1);
#else
      std::fprintf(stderr, "--gpu names the GPU the simulator models; on a GPU the times are that GPU's\n");
      return 2;
#endif
    } else if (a == "--out") {
      ++i;  // the experiments' common option; this one writes no files
    } else {
      return usage(argv[0]);
    }
  }

  bool modelled = false;
  bool counted = false;
#ifdef CUDASIM
  modelled = cudasim::model_time_enabled();
  counted = cudasim::stats_available();
  // Host code free: the time between two events is the device work alone, exact and repeatable
  // (on the default wall clock the host's real time between the launches would count too).
  if (modelled) cudasim::set_host_clock(cudasim::HostClock::kFree);
  if (modelled)
    std::printf("simulator, modelled %s: launches and bytes counted, times modelled from them (the same on any "
                "machine)\n", cudasim::modelled_gpu().name);
  else
    std::printf("simulator, CPU time: the times below are this machine's, not a GPU's (./course run models a GPU "
                "unless --wall-time)\n");
#else
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("GPU, measured: %s (best of 5 runs)\n", prop.name);
#endif
  std::printf("%d elements (%.1f MB per tensor)\n\n", n, 4.0 * n / 1e6);

  std::vector<float> host(n);
  for (int i = 0; i < n; ++i) host[i] = float(i % 1000) / 500.0f - 1.0f;
  float *x, *r, *y_eager, *y_fused;
  CUDA_CHECK(cudaMalloc(&x, sizeof(float) * n));
  CUDA_CHECK(cudaMalloc(&r, sizeof(float) * n));
  CUDA_CHECK(cudaMalloc(&y_eager, sizeof(float) * n));
  CUDA_CHECK(cudaMalloc(&y_fused, sizeof(float) * n));
  CUDA_CHECK(cudaMemcpy(x, host.data(), sizeof(float) * n, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(r, host.data(), sizeof(float) * n, cudaMemcpyHostToDevice));

  std::printf("%-6s %-9s | %8s %11s %11s | %8s %11s %11s | %7s\n", "steps", "residual", "launches", "bytes/elem",
              "eager", "launches", "bytes/elem", "fused", "speedup");
  bool holds = true;
  std::vector<float> eager_out(n), fused_out(n);
  for (int count : {1, 2, 4, 8, 16}) {
    for (bool residual : {false, true}) {
      const Chain chain = make_chain(count, residual ? count / 2 : -1);
      const Run eager = time_it([&] { launch_eager_chain(chain, x, r, y_eager, n); }, modelled);
      const Run fused = time_it([&] { launch_fused_chain(chain, x, r, y_fused, n); }, modelled);
      const double speedup = eager.ms / fused.ms;
      if (counted) {
        std::printf("%-6d %-9s | %8llu %11.1f %8.1f us | %8llu %11.1f %8.1f us | %6.2fx\n", count,
                    residual ? "yes" : "no", eager.launches, double(eager.bytes) / n, eager.ms * 1e3, fused.launches,
                    double(fused.bytes) / n, fused.ms * 1e3, speedup);
      } else {
        std::printf("%-6d %-9s | %8s %11s %8.1f us | %8s %11s %8.1f us | %6.2fx\n", count, residual ? "yes" : "no",
                    "-", "-", eager.ms * 1e3, "-", "-", fused.ms * 1e3, speedup);
      }
      // The two ways must agree (to rounding: the fused kernel may contract a scale and a shift).
      CUDA_CHECK(cudaMemcpy(eager_out.data(), y_eager, sizeof(float) * n, cudaMemcpyDeviceToHost));
      CUDA_CHECK(cudaMemcpy(fused_out.data(), y_fused, sizeof(float) * n, cudaMemcpyDeviceToHost));
      for (int i = 0; i < n; ++i) {
        if (!(std::abs(eager_out[i] - fused_out[i]) <= 1e-4f + 1e-5f * std::abs(eager_out[i]))) {
          std::printf("  the two ways disagree at element %d: eager %g, fused %g\n", i, eager_out[i], fused_out[i]);
          holds = false;
          break;
        }
      }
      if (counted) {
        const unsigned long long fused_bytes = (residual ? 12ull : 8ull) * n;
        if (fused.launches != 1 || fused.bytes != fused_bytes) {
          std::printf("  the fused chain should be 1 launch and %llu bytes, not %llu and %llu\n", fused_bytes,
                      fused.launches, fused.bytes);
          holds = false;
        }
        if (eager.launches != static_cast<unsigned long long>(count)) holds = false;
      }
      if (modelled && count >= 2 && !(speedup > 1.0)) {
        std::printf("  the fused chain should be faster on the modelled clock\n");
        holds = false;
      }
    }
  }
  std::printf("\n%s\n", holds ? "fused: one launch and one pass over memory for any chain; eager: one of each per step"
                              : "the figures above do not show what the lesson says (see the lines starting with two spaces)");
  CUDA_CHECK(cudaFree(x));
  CUDA_CHECK(cudaFree(r));
  CUDA_CHECK(cudaFree(y_eager));
  CUDA_CHECK(cudaFree(y_fused));
  return holds ? 0 : 1;
}
