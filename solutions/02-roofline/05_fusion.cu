// Exercise 02/05: fusion, what a static graph buys.
//
// What it teaches: a chain of elementwise operations (scale, shift, ReLU, a residual add) is
// memory-bound step by step: each step does 1 FLOP per element and moves 8 bytes. Run eagerly,
// one kernel per step, as a framework does when it meets each operation only as the program
// reaches it, a chain of k steps moves 8·k bytes per element and pays k launches. Known in
// advance, as a static graph is, the whole chain becomes one kernel: each element is loaded
// once, goes through every step in a register, and is stored once. Same FLOPs, 1/k of the
// bytes: the intensity rises k-fold and the time falls with it, until the chain is long
// enough to reach the ridge.
//
// Run its tests:   ./course test 02/fusion
// See both ways counted and modelled:
//                  ./course run lessons/02-roofline/fusion_experiment.cu exercises/02-roofline/05_fusion.cu
//
// Napkin math (H100, 3.35 TB/s, 2^24 floats, 8 steps): eagerly 8 × 134 MB = 1.07 GB, 320 us,
// plus 8 launches; fused 134 MB, 40 us, plus 1 launch.

#include "cuda_check.hpp"
#include "fusion.hpp"

#include <algorithm>

// ---------------------------------------------------------------------------------------
// one step on one value (given; both ways use it)

/// `v` after `step`; `r_i` is element i of the residual input (read only by a residual step).
__device__ inline float apply_step(const Step& step, float v, float r_i) {
  switch (step.kind) {
    case StepKind::scale: return v * step.value;
    case StepKind::shift: return v + step.value;
    case StepKind::relu: return fmaxf(v, 0.0f);
    case StepKind::residual: return v + r_i;
  }
  return v;
}

// ---------------------------------------------------------------------------------------
// the eager way (given): one kernel per step

/// out[i] = step(in[i]) for every i < n. `r` is read only by a residual step.
__global__ void eager_step_kernel(Step step, const float* in, const float* r, float* out, int n) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float r_i = step.kind == StepKind::residual ? r[i] : 0.0f;
    out[i] = apply_step(step, in[i], r_i);
  }
}

namespace {
constexpr int kThreads = 256;
int blocks_for(int n) { return std::min((n - 1) / kThreads + 1, 65535); }
}  // namespace

void launch_eager_chain(const Chain& chain, const float* x, const float* r, float* y, int n) {
  check_chain("eager_chain", chain, r, n);
  if (n == 0) return;
  if (chain.count == 0) {  // the empty chain: a copy (a scale by 1 is exact)
    eager_step_kernel<<<blocks_for(n), kThreads>>>(Step{StepKind::scale, 1.0f}, x, r, y, n);
    CUDA_CHECK_LAUNCH();
    return;
  }
  for (int s = 0; s < chain.count; ++s) {
    // The first step reads the input; every later one reads what the step before wrote.
    eager_step_kernel<<<blocks_for(n), kThreads>>>(chain.steps[s], s == 0 ? x : y, r, y, n);
    CUDA_CHECK_LAUNCH();
  }
}

// ---------------------------------------------------------------------------------------
// the fused way: one kernel for the whole chain

/// y[i] = the chain applied to x[i], for every i < n, with any grid. `reads_r`: some step is a
/// residual (then r[i] is needed, once).
__global__ void fused_chain_kernel(Chain chain, bool reads_r, const float* x, const float* r, float* y, int n) {
  // BEGIN YOUR CODE
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    float v = x[i];                              // the only load of x[i] ...
    const float r_i = reads_r ? r[i] : 0.0f;     // ... and of r[i], however many steps read it
    for (int s = 0; s < chain.count; ++s) v = apply_step(chain.steps[s], v, r_i);
    y[i] = v;                                    // the only store: the steps lived in a register
  }
  // END YOUR CODE
}

// ---------------------------------------------------------------------------------------
// launcher (given)

void launch_fused_chain(const Chain& chain, const float* x, const float* r, float* y, int n) {
  check_chain("fused_chain", chain, r, n);
  if (n == 0) return;
  fused_chain_kernel<<<blocks_for(n), kThreads>>>(chain, reads_residual(chain), x, r, y, n);
  CUDA_CHECK_LAUNCH();
}
