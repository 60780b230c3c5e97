// The lesson's experiment: at which batch size does a bf16 GEMM stop waiting for memory?
//
//   ./course run lessons/03-matmul-reuse/batch_sweep.cu   # GPU: cuBLAS timings; simulator: modelled clock
//   options: --gpu H100|H200|A100 (the machine to predict for)   --out PREFIX (default build/batch_sweep)
//
// C[B x 4096] = X[B x 4096] * W[4096 x 4096], all bf16 (fp32 accumulation): a linear layer
// applied to B tokens at once. FLOPs = 2*B*K*N; the compulsory traffic (each operand read
// once, C written once) = 2*(B*K + K*N + B*N) bytes. For B much smaller than 4096 the
// weights dominate the bytes, so the intensity is about B FLOP/B: one multiply-add (2 FLOPs)
// per 2-byte weight per token. The roofline says the GEMM is memory-bound until that
// intensity reaches the machine's ridge point (peak FLOP/s / bandwidth), then compute-bound.
//
// On a GPU: cuBLAS (cublasGemmEx, bf16, CUBLAS_COMPUTE_32F) timed with CUDA events for each B,
// L2 flushed before each repeat (W is 32 MiB and would otherwise stay in the H200's 50 MB L2),
// median of repeats; printed next to the roofline prediction for the GPU, with the measured
// crossover (where the two measured asymptotes meet: the time at B = 1, set by reading W, and
// the best measured FLOP rate).
//
// On the simulator: there is no GPU time to measure. A small weight-stationary bf16 kernel is
// run at a representative size (K = N = 256, B = 1..256) with the simulator's counters on
// (`./course run` builds it with them): its counted global bytes equal the compulsory traffic
// formula exactly, which is what a library GEMM approaches at DRAM level when its tiles and the
// L2 cache hold the reuse. The formula is then evaluated at K = N = 4096 for every B, and the
// roofline of the chosen GPU (dense bf16 peak, HBM bandwidth from the datasheet) gives the
// predicted curve. The run also checks the kernel and the simulator's cublasGemmEx against a
// CPU reference. On the modelled clock (`./course run`'s default for this program; --wall-time
// turns it off) each B also gets the time the clock charges a cublasGemmEx of that shape (a
// launch, then the roofline: cudasim/gpu_model.hpp), labelled "modelled", and the program exits
// with status 1 when those times contradict the lesson (lesson_claims_hold).
//
// Writes PREFIX.dat (the table), PREFIX.svg (the plot, drawn by this program) and, when
// gnuplot is installed, PREFIX.png.

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "cuda_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#ifdef CUDASIM
#include <cudasim/gpu_model.hpp>
#include <cudasim/stats.hpp>
#include <cudasim/timeline.hpp>
#endif

namespace {

constexpr int kK = 4096, kN = 4096;  // the layer: 4096 -> 4096

struct Gpu {
  const char* name;
  double bf16_flops;  // dense bf16 tensor-core peak, FLOP/s (datasheet)
  double bandwidth;   // HBM bandwidth, bytes/s (datasheet)
};
// SXM parts. H100 and H200 have the same tensor cores; the H200's HBM3e is 43% faster.
const Gpu kGpus[] = {{"H100", 989e12, 3.35e12}, {"H200", 989e12, 4.8e12}, {"A100", 312e12, 2.039e12}};

const std::vector<int> kBatches = {1,   2,   4,   8,   16,  32,   48,   64,   96,   128,  160,  192,
                                   224, 256, 320, 384, 448, 512, 768, 1024, 1536, 2048, 3072, 4096};

double gemm_flops(double b, double k, double n) { return 2.0 * b * k * n; }
double gemm_bytes(double b, double k, double n) { return 2.0 * (b * k + k * n + b * n); }

double predicted_seconds(const Gpu& g, double flops, double bytes) {
  return std::max(flops / g.bf16_flops, bytes / g.bandwidth);
}

/// The batch where the GEMM's intensity B*K*N / (B*K + K*N + B*N) reaches the ridge point R:
/// B = R*K*N / (K*N - R*(K + N)). For B << K, N this is about R itself.
double crossover_batch(double ridge, double k, double n) { return ridge * k * n / (k * n - ridge * (k + n)); }

struct Row {
  int batch;
  double flops, bytes, intensity, predicted_tflops;
  double timed_tflops, seconds;  // measured on a GPU, modelled on the simulator's clock
  bool counted;
};

/// Where the table's timed column comes from: nothing (the roofline prediction alone), a GPU
/// (cuBLAS measured) or the simulator's modelled clock.
enum class Timing { kNone, kMeasured, kModelled };

const char* timing_word(Timing t) { return t == Timing::kModelled ? "modelled" : "measured"; }

// ---------------------------------------------------------------------------------------
// plot

void write_outputs(const std::string& prefix, const std::vector<Row>& rows, const Gpu& gpu, Timing timing,
                   double crossover) {
  const bool timed = timing != Timing::kNone;
  const std::string dat = prefix + ".dat", svg = prefix + ".svg", png = prefix + ".png";
  if (FILE* f = std::fopen(dat.c_str(), "w")) {
    std::fprintf(f, "# batch flops bytes intensity predicted_tflops %s\n",
                 timing == Timing::kNone ? "" : timing == Timing::kMeasured ? "measured_tflops" : "modelled_tflops");
    for (const Row& r : rows)
      std::fprintf(f, "%d %.6g %.6g %.6g %.6g %.6g\n", r.batch, r.flops, r.bytes, r.intensity, r.predicted_tflops,
                   timed ? r.timed_tflops : r.predicted_tflops);
    std::fclose(f);
  }
  // SVG: x = log2(B) from 0 to 12, y = TFLOP/s from 0 to 1.1 * peak.
  const double width = 760, height = 480, left = 70, right = 20, top = 40, bottom = 60;
  const double ymax = 1.1 * gpu.bf16_flops / 1e12;
  auto px = [&](double b) { return left + (std::log2(b) / 12.0) * (width - left - right); };
  auto py = [&](double t) { return top + (1.0 - t / ymax) * (height - top - bottom); };
  if (FILE* f = std::fopen(svg.c_str(), "w")) {
    std::fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%g' height='%g' font-family='sans-serif' "
                    "font-size='12'>\n<rect width='100%%' height='100%%' fill='white'/>\n", width, height);
    std::fprintf(f, "<text x='%g' y='22' font-size='15'>bf16 GEMM C[B x 4096] = X[B x 4096] W[4096 x 4096] on %s: "
                    "%s</text>\n", left, gpu.name,
                 timing == Timing::kNone       ? "roofline prediction"
                 : timing == Timing::kMeasured ? "cuBLAS measured vs roofline"
                                               : "cublasGemmEx modelled vs roofline");
    for (int e = 0; e <= 12; ++e) {  // x grid: powers of two
      const double x = px(std::pow(2.0, e));
      std::fprintf(f, "<line x1='%g' y1='%g' x2='%g' y2='%g' stroke='#ddd'/>\n", x, top, x, height - bottom);
      std::fprintf(f, "<text x='%g' y='%g' text-anchor='middle'>%d</text>\n", x, height - bottom + 16, 1 << e);
    }
    const double ystep = ymax > 600 ? 200 : 50;
    for (double t = 0; t <= ymax; t += ystep) {
      const double y = py(t);
      std::fprintf(f, "<line x1='%g' y1='%g' x2='%g' y2='%g' stroke='#ddd'/>\n", left, y, width - right, y);
      std::fprintf(f, "<text x='%g' y='%g' text-anchor='end'>%g</text>\n", left - 6, y + 4, t);
    }
    std::fprintf(f, "<text x='%g' y='%g' text-anchor='middle'>batch B (tokens), log scale</text>\n",
                 (left + width - right) / 2, height - 18);
    std::fprintf(f, "<text x='18' y='%g' transform='rotate(-90 18 %g)' text-anchor='middle'>TFLOP/s</text>\n",
                 (top + height - bottom) / 2, (top + height - bottom) / 2);
    // The roofline prediction, sampled finely.
    std::fprintf(f, "<polyline fill='none' stroke='#1f77b4' stroke-width='2' points='");
    for (double e = 0; e <= 12.0001; e += 0.05) {
      const double b = std::pow(2.0, e);
      const double t = gemm_flops(b, kK, kN) / predicted_seconds(gpu, gemm_flops(b, kK, kN), gemm_bytes(b, kK, kN));
      std::fprintf(f, "%.1f,%.1f ", px(b), py(t / 1e12));
    }
    std::fprintf(f, "'/>\n");
    // The ridge crossover.
    const double xc = px(crossover);
    std::fprintf(f, "<line x1='%g' y1='%g' x2='%g' y2='%g' stroke='#d62728' stroke-dasharray='5,4'/>\n", xc, top, xc,
                 height - bottom);
    std::fprintf(f, "<text x='%g' y='%g' fill='#d62728'>predicted crossover B = %.0f</text>\n", xc + 5, top + 14,
                 crossover);
    for (const Row& r : rows) {
      const double t = timed ? r.timed_tflops : r.predicted_tflops;
      std::fprintf(f, "<circle cx='%.1f' cy='%.1f' r='3.5' fill='%s'/>\n", px(r.batch), py(t),
                   timed ? "#ff7f0e" : "#1f77b4");
    }
    std::fprintf(f, "<line x1='%g' y1='%g' x2='%g' y2='%g' stroke='#1f77b4' stroke-width='2'/>"
                    "<text x='%g' y='%g'>roofline: min(peak, intensity x bandwidth)</text>\n",
                 width - 300, height - bottom - 40, width - 270, height - bottom - 40, width - 265,
                 height - bottom - 36);
    if (timed)
      std::fprintf(f, "<circle cx='%g' cy='%g' r='3.5' fill='#ff7f0e'/><text x='%g' y='%g'>cuBLAS, %s</text>\n",
                   width - 285, height - bottom - 20, width - 265, height - bottom - 16, timing_word(timing));
    std::fprintf(f, "</svg>\n");
    std::fclose(f);
  }
  std::printf("\nwrote %s and %s", dat.c_str(), svg.c_str());
  if (std::system("command -v gnuplot >/dev/null 2>&1") == 0) {
    const std::string script = prefix + ".gp";
    if (FILE* f = std::fopen(script.c_str(), "w")) {
      std::fprintf(f,
                   "set terminal pngcairo size 900,560 font 'sans,11'\nset output '%s'\n"
                   "set title 'bf16 GEMM C[B x 4096] = X[B x 4096] W[4096 x 4096] on %s'\n"
                   "set logscale x 2\nset xrange [1:4096]\nset yrange [0:%g]\nset grid\n"
                   "set xlabel 'batch B (tokens)'\nset ylabel 'TFLOP/s'\nset key bottom right\n"
                   "set arrow from %g, graph 0 to %g, graph 1 nohead dt 2 lc rgb '#d62728'\n"
                   "set label 'predicted crossover B = %.0f' at %g, graph 0.95 tc rgb '#d62728'\n"
                   "roof(b) = (2*b*%d*%d) / (((2*b*%d*%d)/%g > (2*(b*%d+%d*%d+b*%d))/%g) ? "
                   "(2*b*%d*%d)/%g : (2*(b*%d+%d*%d+b*%d))/%g) / 1e12\n"
                   "set samples 400\n"
                   "plot roof(x) w l lw 2 lc rgb '#1f77b4' t 'roofline prediction', "
                   "'%s' u 1:6 w p pt 7 ps 1.2 lc rgb '%s' t '%s'\n",
                   png.c_str(), gpu.name, ymax, crossover, crossover, crossover, crossover * 1.1, kK, kN, kK, kN,
                   gpu.bf16_flops, kK, kK, kN, kN, gpu.bandwidth, kK, kN, gpu.bf16_flops, kK, kK, kN, kN, gpu.bandwidth,
                   dat.c_str(), timed ? "#ff7f0e" : "#1f77b4",
                   timing == Timing::kNone       ? "predicted from the traffic model"
                   : timing == Timing::kMeasured ? "cuBLAS measured"
                                                 : "cublasGemmEx modelled");
      std::fclose(f);
      const std::string cmd = "gnuplot '" + script + "' 2>&1";
      if (std::system(cmd.c_str()) == 0) std::printf(" and %s", png.c_str());
    }
  }
  std::printf("\n");
}

void print_table(const std::vector<Row>& rows, const Gpu& gpu, Timing timing) {
  std::printf("%6s %10s %10s %9s %12s %10s", "B", "GFLOP", "MB moved", "FLOP/B", "predicted", "bound");
  if (timing != Timing::kNone) std::printf("   %8s  %% of pred.", timing_word(timing));
  std::printf("\n");
  for (const Row& r : rows) {
    const bool compute = r.flops / gpu.bf16_flops >= r.bytes / gpu.bandwidth;
    std::printf("%6d %10.3f %10.2f %9.1f %8.1f TF/s %10s", r.batch, r.flops / 1e9, r.bytes / 1e6, r.intensity,
                r.predicted_tflops, compute ? "compute" : "memory");
    if (timing != Timing::kNone)
      std::printf("  %7.1f TF/s %6.0f%%", r.timed_tflops, 100.0 * r.timed_tflops / r.predicted_tflops);
    std::printf("\n");
  }
}

const Gpu* find_gpu(const std::string& name) {
  for (const Gpu& g : kGpus)
    if (name.find(g.name) != std::string::npos) return &g;
  return nullptr;
}

// ---------------------------------------------------------------------------------------
// simulator: a small weight-stationary kernel whose bytes are counted

#ifdef CUDASIM
constexpr int kSmall = 256;       // K = N of the representative runs
constexpr int kChunk = 8;         // depth of the X slice staged in shared memory
constexpr int kMaxSmallB = 256;   // largest B of the representative runs

/// C[b][j] = sum_k X[b][k] * W[k][j]: one thread per column j keeps that column of W "in
/// place" (each weight loaded once) and applies it to all B rows of X, which the block stages
/// in shared memory. With N <= blockDim.x there is one block, so X, W and C each cross global
/// memory exactly once: the compulsory traffic.
__global__ void weight_stationary_gemm(const __nv_bfloat16* X, const __nv_bfloat16* W, __nv_bfloat16* C, int B,
                                       int K, int N) {
  __shared__ float xs[kMaxSmallB][kChunk];
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  float acc[kMaxSmallB];
  for (int b = 0; b < B; ++b) acc[b] = 0.0f;
  for (int k0 = 0; k0 < K; k0 += kChunk) {
    for (int e = threadIdx.x; e < B * kChunk; e += blockDim.x) {
      const int b = e / kChunk, kk = e % kChunk;
      xs[b][kk] = k0 + kk < K ? __bfloat162float(X[static_cast<long long>(b) * K + k0 + kk]) : 0.0f;
    }
    __syncthreads();
    for (int kk = 0; kk < kChunk && k0 + kk < K; ++kk) {
      if (j >= N) break;
      const float w = __bfloat162float(W[static_cast<long long>(k0 + kk) * N + j]);
      for (int b = 0; b < B; ++b) acc[b] += xs[b][kk] * w;
    }
    __syncthreads();
  }
  if (j < N)
    for (int b = 0; b < B; ++b) C[static_cast<long long>(b) * N + j] = __float2bfloat16(acc[b]);
}

bool counters_on() {
  return cudasim::stats_available();
}

/// Runs the small kernel for each B and checks that its counted bytes are the compulsory
/// traffic; checks the kernel and cublasGemmEx against the CPU once. Returns false on a
/// mismatch.
bool representative_runs() {
  const bool counted = counters_on();
  std::vector<__nv_bfloat16> hx(kMaxSmallB * kSmall), hw(kSmall * kSmall);
  unsigned seed = 12345;
  auto next = [&] { seed = seed * 1664525u + 1013904223u; return (seed >> 8) * (1.0f / 16777216.0f) - 0.5f; };
  for (auto& v : hx) v = __float2bfloat16(next());
  for (auto& v : hw) v = __float2bfloat16(next());
  __nv_bfloat16 *x, *w, *c, *c_blas;
  CUDA_CHECK(cudaMalloc(&x, hx.size() * 2));
  CUDA_CHECK(cudaMalloc(&w, hw.size() * 2));
  CUDA_CHECK(cudaMalloc(&c, hx.size() * 2));
  CUDA_CHECK(cudaMalloc(&c_blas, hx.size() * 2));
  CUDA_CHECK(cudaMemcpy(x, hx.data(), hx.size() * 2, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(w, hw.data(), hw.size() * 2, cudaMemcpyHostToDevice));
  bool ok = true;
  std::printf("representative runs on the simulator, K = N = %d (%s):\n", kSmall,
              counted ? "global bytes counted by cudasim" : "counters off: run with --stats to count them");
  std::printf("%6s %14s %14s %9s\n", "B", "counted bytes", "compulsory", "FLOP/B");
  for (int b = 1; b <= kMaxSmallB; b *= 2) {
    CUDA_CHECK(cudaDeviceSynchronize());
    if (counted) cudasim::reset_stats();
    weight_stationary_gemm<<<(kSmall + 255) / 256, 256>>>(x, w, c, b, kSmall, kSmall);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    const double model = gemm_bytes(b, kSmall, kSmall);
    double bytes = model;
    if (counted) {
      bytes = 0;
      for (const auto& k : cudasim::kernel_stats()) bytes += double(k.global_bytes());
      if (bytes != model) ok = false;
    }
    std::printf("%6d %14.0f %14.0f %9.2f%s\n", b, counted ? bytes : NAN, model,
                gemm_flops(b, kSmall, kSmall) / bytes, counted && bytes != model ? "  <- differs" : "");
  }
  // Correctness at B = 5 against the CPU, for the kernel and for cuBLAS (OpenBLAS here).
  const int b = 5;
  weight_stationary_gemm<<<1, 256>>>(x, w, c, b, kSmall, kSmall);
  CUDA_CHECK_LAUNCH();
  cublasHandle_t handle;
  CUBLAS_CHECK(cublasCreate(&handle));
  const float one = 1.0f, zero = 0.0f;
  CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, kSmall, b, kSmall, &one, w, CUDA_R_16BF, kSmall, x,
                            CUDA_R_16BF, kSmall, &zero, c_blas, CUDA_R_16BF, kSmall, CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT));
  std::vector<__nv_bfloat16> got(b * kSmall), got_blas(b * kSmall);
  CUDA_CHECK(cudaMemcpy(got.data(), c, got.size() * 2, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(got_blas.data(), c_blas, got.size() * 2, cudaMemcpyDeviceToHost));
  CUBLAS_CHECK(cublasDestroy(handle));
  double worst = 0;
  for (int r = 0; r < b; ++r)
    for (int j = 0; j < kSmall; ++j) {
      double ref = 0;
      for (int k = 0; k < kSmall; ++k)
        ref += double(__bfloat162float(hx[r * kSmall + k])) * double(__bfloat162float(hw[k * kSmall + j]));
      worst = std::max({worst, std::fabs(ref - __bfloat162float(got[r * kSmall + j])),
                        std::fabs(ref - __bfloat162float(got_blas[r * kSmall + j]))});
    }
  // One bf16 rounding of results of size ~ sqrt(K) * 0.08: well under 0.02.
  std::printf("kernel and cublasGemmEx vs CPU at B = %d: largest difference %.4f (%s)\n\n", b, worst,
              worst < 0.02 ? "ok" : "TOO LARGE");
  ok = ok && worst < 0.02;
  CUDA_CHECK(cudaFree(x));
  CUDA_CHECK(cudaFree(w));
  CUDA_CHECK(cudaFree(c));
  CUDA_CHECK(cudaFree(c_blas));
  return ok;
}

/// The GPU the sweep is modelled on: `name` (--gpu) or the simulator's (./course run --gpu,
/// CUDASIM_GPU), with the figures of the simulator's own table, so that the prediction and the
/// clock use the same peaks.
const cudasim::GpuSpec* modelled_spec(const std::string& name) {
  return name.empty() ? &cudasim::modelled_gpu() : cudasim::find_gpu(name);
}

/// What the simulator's clock charges one cublasGemmEx of the sweep (bf16, beta = 0) on `gpu`:
/// a launch, then the roofline of its FLOPs at the tensor-core peak and of its compulsory bytes
/// (cudasim/gpu_model.hpp, model_library_call). The sweep asks the model for it rather than
/// running the GEMM: at K = N = 4096 the simulator's CPU BLAS would take minutes per point to
/// compute values nobody reads, while the charge depends on the shape alone (clock_charges_the_model
/// checks that the clock charges exactly this).
double modelled_gemm_seconds(const cudasim::GpuSpec& gpu, double b, double k, double n) {
  const auto flops = static_cast<std::uint64_t>(gemm_flops(b, k, n));
  const auto bytes = static_cast<std::uint64_t>(gemm_bytes(b, k, n));
  return cudasim::model_library_call(flops, bytes, true, false, gpu).total_ns * 1e-9;
}

/// Times one cublasGemmEx at the representative size with events on the modelled clock and
/// compares it with modelled_gemm_seconds for the same shape on the simulator's GPU.
bool clock_charges_the_model() {
  const int b = 5;
  __nv_bfloat16 *x, *w, *c;
  CUDA_CHECK(cudaMalloc(&x, size_t(b) * kSmall * 2));
  CUDA_CHECK(cudaMalloc(&w, size_t(kSmall) * kSmall * 2));
  CUDA_CHECK(cudaMalloc(&c, size_t(b) * kSmall * 2));
  CUDA_CHECK(cudaMemset(x, 0, size_t(b) * kSmall * 2));
  CUDA_CHECK(cudaMemset(w, 0, size_t(kSmall) * kSmall * 2));
  cublasHandle_t handle;
  CUBLAS_CHECK(cublasCreate(&handle));
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  const float one = 1.0f, zero = 0.0f;
  CUDA_CHECK(cudaEventRecord(start));
  CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, kSmall, b, kSmall, &one, w, CUDA_R_16BF, kSmall, x,
                            CUDA_R_16BF, kSmall, &zero, c, CUDA_R_16BF, kSmall, CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT));
  CUDA_CHECK(cudaEventRecord(stop));
  CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  const double model = modelled_gemm_seconds(cudasim::modelled_gpu(), b, kSmall, kSmall);
  const bool same = std::fabs(ms * 1e-3 - model) <= 1e-6 * model;
  std::printf("one cublasGemmEx at B = %d, K = N = %d, timed with events on the modelled clock: %.3f us; "
              "the model for that shape: %.3f us (%s)\n\n", b, kSmall, ms * 1e3, model * 1e6,
              same ? "the same" : "DIFFERENT");
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  CUBLAS_CHECK(cublasDestroy(handle));
  CUDA_CHECK(cudaFree(x));
  CUDA_CHECK(cudaFree(w));
  CUDA_CHECK(cudaFree(c));
  return same;
}

/// The lesson's claims, on the modelled times: no time beats the roofline; the FLOP rate grows
/// with B; well below the crossover the time is that of reading W (memory-bound: a larger
/// batch is nearly free); at B = 4096 the GEMM runs within 5% of the tensor-core peak.
bool lesson_claims_hold(const std::vector<Row>& rows, const Gpu& gpu, double crossover) {
  std::vector<std::string> broken;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    if (r.timed_tflops > r.predicted_tflops * (1 + 1e-9))
      broken.push_back("B = " + std::to_string(r.batch) + " beats the roofline");
    if (i > 0 && r.timed_tflops < rows[i - 1].timed_tflops)
      broken.push_back("the rate falls from B = " + std::to_string(rows[i - 1].batch) + " to " +
                       std::to_string(r.batch));
    if (r.batch <= crossover / 4 && r.seconds > 1.25 * rows.front().seconds)
      broken.push_back("B = " + std::to_string(r.batch) + " takes over 1.25x the time of B = 1, below the crossover");
  }
  if (rows.back().timed_tflops < 0.95 * gpu.bf16_flops / 1e12)
    broken.push_back("B = " + std::to_string(rows.back().batch) + " runs below 95% of the peak");
  std::printf("lesson 03's claims on the modelled clock (memory-bound below B ~ %.0f, the time that of reading W; "
              "compute-bound above, near the peak): %s\n", crossover, broken.empty() ? "hold" : "BROKEN");
  for (const std::string& b : broken) std::printf("  - %s\n", b.c_str());
  return broken.empty();
}
#endif

// ---------------------------------------------------------------------------------------
// GPU: cuBLAS timed

#ifndef CUDASIM
double time_gemm(cublasHandle_t handle, const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* c, int b,
                 void* flush, size_t flush_bytes) {
  const float one = 1.0f, zero = 0.0f;
  // Row-major C[B x N] = X[B x K] W[K x N] is column-major C^T = W^T X^T: cuBLAS sees W as an
  // N x K column-major matrix (ld N) and X as K x B (ld K).
  auto gemm = [&] {
    CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, kN, b, kK, &one, w, CUDA_R_16BF, kN, x, CUDA_R_16BF,
                              kK, &zero, c, CUDA_R_16BF, kN, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  };
  for (int i = 0; i < 3; ++i) gemm();  // warm-up: clocks, cuBLAS's heuristics and kernels
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<float> ms;
  for (int i = 0; i < 15; ++i) {
    CUDA_CHECK(cudaMemsetAsync(flush, i, flush_bytes));  // evict W from L2
    CUDA_CHECK(cudaEventRecord(start));
    gemm();
    CUDA_CHECK(cudaEventRecord(stop));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float t = 0;
    CUDA_CHECK(cudaEventElapsedTime(&t, start, stop));
    ms.push_back(t);
  }
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2] * 1e-3;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  std::string gpu_name, prefix;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--gpu") && i + 1 < argc) {
      gpu_name = argv[++i];
    } else if (!std::strcmp(argv[i], "--out") && i + 1 < argc) {
      prefix = argv[++i];
    } else {
      std::fprintf(stderr, "usage: batch_sweep [--gpu H100|H200|A100] [--out PREFIX]\n");
      return 2;
    }
  }
  if (prefix.empty()) prefix = std::system("test -d build") == 0 ? "build/batch_sweep" : "batch_sweep";

  const Gpu* gpu = nullptr;
#ifdef CUDASIM
  // On the modelled clock: the simulator's GPU and its table's figures, and host code that
  // takes no time (the times are the device's alone, the same on any machine).
  const bool modelled = cudasim::model_time_enabled();
  if (modelled) cudasim::set_host_clock(cudasim::HostClock::kFree);
  const cudasim::GpuSpec* spec = modelled ? modelled_spec(gpu_name) : nullptr;
  const Gpu from_spec{spec ? spec->name : "", spec ? spec->tensor_flops_per_s : 0, spec ? spec->memory_bytes_per_s : 0};
  if (modelled && spec == nullptr) {
    std::fprintf(stderr, "the simulator models no GPU named '%s'; pass --gpu H100, H200, A100 or T4\n",
                 gpu_name.c_str());
    return 2;
  }
  if (modelled) gpu = &from_spec;
#else
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  if (gpu_name.empty()) gpu_name = prop.name;
#endif
  if (gpu == nullptr) {
    if (gpu_name.empty()) gpu_name = "H200";
    for (auto& ch : gpu_name) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    gpu = find_gpu(gpu_name);
  }
  if (gpu == nullptr) {
    std::fprintf(stderr, "no datasheet figures for '%s'; pass --gpu H100, H200 or A100\n", gpu_name.c_str());
    gpu = &kGpus[0];
  }
  const double ridge = gpu->bf16_flops / gpu->bandwidth;
  const double crossover = crossover_batch(ridge, kK, kN);
  std::printf("bf16 GEMM C[B x %d] = X[B x %d] * W[%d x %d]\n", kN, kK, kK, kN);
  std::printf("%s (datasheet): %.0f TFLOP/s dense bf16, %.2f TB/s -> ridge point %.0f FLOP/B;\n", gpu->name,
              gpu->bf16_flops / 1e12, gpu->bandwidth / 1e12, ridge);
  std::printf("intensity = B*K*N / (B*K + K*N + B*N) reaches it at B = %.0f (about the ridge point itself "
              "while B << 4096)\n\n", crossover);

  std::vector<Row> rows;
  Timing timing = Timing::kNone;
  bool ok = true;
#ifdef CUDASIM
  ok = representative_runs();
  const bool counted = counters_on();
  if (modelled) {
    timing = Timing::kModelled;
    ok = clock_charges_the_model() && ok;
  }
  std::printf("K = N = %d, scaled analytically (bytes = 2*(B*K + K*N + B*N), as counted above), on %s:\n", kK,
              gpu->name);
  if (modelled)
    std::printf("modelled %s: the time the simulator's clock charges each cublasGemmEx (a launch, then the "
                "roofline), not a measurement\n", gpu->name);
  else
    std::printf("(simulator, CPU time: no modelled clock, so no times; ./course run turns it on)\n");
#else
  timing = Timing::kMeasured;
  const bool counted = false;
  __nv_bfloat16 *x, *w, *c;
  CUDA_CHECK(cudaMalloc(&x, size_t(4096) * kK * 2));
  CUDA_CHECK(cudaMalloc(&w, size_t(kK) * kN * 2));
  CUDA_CHECK(cudaMalloc(&c, size_t(4096) * kN * 2));
  CUDA_CHECK(cudaMemset(x, 0x3c, size_t(4096) * kK * 2));  // bf16 0x3c3c ~ 0.0115: finite, nonzero
  CUDA_CHECK(cudaMemset(w, 0x3c, size_t(kK) * kN * 2));
  const size_t flush_bytes = size_t(256) << 20;
  void* flush = nullptr;
  CUDA_CHECK(cudaMalloc(&flush, flush_bytes));
  cublasHandle_t handle;
  CUBLAS_CHECK(cublasCreate(&handle));
  std::printf("measured on %s: cuBLAS cublasGemmEx, bf16 in/out, fp32 accumulate, median of 15, L2 flushed\n",
              prop.name);
#endif
  for (int b : kBatches) {
    Row r{};
    r.batch = b;
    r.flops = gemm_flops(b, kK, kN);
    r.bytes = gemm_bytes(b, kK, kN);
    r.intensity = r.flops / r.bytes;
    r.predicted_tflops = r.flops / predicted_seconds(*gpu, r.flops, r.bytes) / 1e12;
    r.counted = counted;
#ifdef CUDASIM
    if (modelled) r.seconds = modelled_gemm_seconds(*spec, b, kK, kN);
#else
    r.seconds = time_gemm(handle, x, w, c, b, flush, flush_bytes);
#endif
    if (timing != Timing::kNone) r.timed_tflops = r.flops / r.seconds / 1e12;
    rows.push_back(r);
  }
  print_table(rows, *gpu, timing);
  if (timing != Timing::kNone) {
    // The timed crossover: where the memory-bound time (B = 1: reading W) meets the best FLOP rate.
    double best = 0;
    for (const Row& r : rows) best = std::max(best, r.timed_tflops * 1e12);
    const double t1 = rows.front().seconds;
    std::printf("\n%s: W read at %.2f TB/s (B = 1), best %.0f TFLOP/s -> %s crossover B ~ %.0f (predicted %.0f)\n",
                timing_word(timing), gemm_bytes(1, kK, kN) / t1 / 1e12, best / 1e12, timing_word(timing),
                t1 * best / (2.0 * kK * kN), crossover);
  }
#ifdef CUDASIM
  if (modelled) {
    std::printf("(every modelled time includes the %.1f us launch: that is why B = 1 reads W below the full "
                "bandwidth)\n", cudasim::ModelConstants::kLaunchNs / 1e3);
    ok = lesson_claims_hold(rows, *gpu, crossover) && ok;
  }
#else
  CUBLAS_CHECK(cublasDestroy(handle));
  CUDA_CHECK(cudaFree(x));
  CUDA_CHECK(cudaFree(w));
  CUDA_CHECK(cudaFree(c));
  CUDA_CHECK(cudaFree(flush));
#endif
  write_outputs(prefix, rows, *gpu, timing, crossover);
  return ok ? 0 : 1;
}
