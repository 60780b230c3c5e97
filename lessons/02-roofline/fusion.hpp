/// @file fusion.hpp
/// @brief Contract of exercise 02/05 `fusion`: a chain of elementwise operations run the
/// eager way (one kernel per operation, as a framework that builds its graph while it runs)
/// and fused (one kernel for the whole chain, which only a graph known in advance allows).
///
/// Implemented by `exercises/02-roofline/05_fusion.cu` and tested by
/// `autograder/tests/02-roofline/test_fusion.cpp`.
#pragma once

#include <stdexcept>
#include <string>

/// What one step of a chain does to a value `v` (element `i` of the tensor).
enum class StepKind : int {
  scale = 0,     ///< v = v * value
  shift = 1,     ///< v = v + value
  relu = 2,      ///< v = max(v, 0)
  residual = 3,  ///< v = v + r[i]: the chain's second input tensor, a skip connection
};

/// One step: its kind, and the constant of `scale` and `shift` (ignored by the others).
struct Step {
  StepKind kind = StepKind::scale;
  float value = 1.0f;
};

/// The longest chain a launch takes: the whole chain travels by value in the kernel's
/// parameters (16 steps of 8 bytes, far under the 4 KiB a launch may pass).
constexpr int kMaxSteps = 16;

/// A chain of elementwise steps, applied in order: `y[i] = step_{count-1}(... step_0(x[i]))`.
/// It is plain data, known completely before anything runs: that is what makes it a
/// *static* graph, and what lets one kernel do all of it.
struct Chain {
  int count = 0;  ///< steps used, 0 to kMaxSteps (0: y is a copy of x)
  Step steps[kMaxSteps];
};

/// True if some step reads the second input `r`.
inline bool reads_residual(const Chain& chain) {
  for (int s = 0; s < chain.count && s < kMaxSteps; ++s)
    if (chain.steps[s].kind == StepKind::residual) return true;
  return false;
}

/// Throws std::invalid_argument, naming `who`, for a chain or arguments no launch accepts:
/// `n < 0`, a count outside [0, kMaxSteps], a step kind that is none of StepKind's, or a
/// `residual` step with `r == nullptr`. Shared by both launchers.
inline void check_chain(const char* who, const Chain& chain, const float* r, int n) {
  const std::string name(who);
  if (n < 0) throw std::invalid_argument(name + ": n must be >= 0, got " + std::to_string(n));
  if (chain.count < 0 || chain.count > kMaxSteps)
    throw std::invalid_argument(name + ": a chain has 0 to " + std::to_string(kMaxSteps) + " steps, got " +
                                std::to_string(chain.count));
  for (int s = 0; s < chain.count; ++s) {
    const int kind = static_cast<int>(chain.steps[s].kind);
    if (kind < 0 || kind > static_cast<int>(StepKind::residual))
      throw std::invalid_argument(name + ": step " + std::to_string(s) + " has no such kind (" +
                                  std::to_string(kind) + ")");
  }
  if (r == nullptr && reads_residual(chain))
    throw std::invalid_argument(name + ": the chain has a residual step but r is null");
}

/// The eager way (given, the baseline): one kernel launch per step. The first step reads `x`
/// (and `r`) and writes `y`; each later step reads `y` and writes it back. A chain of k steps
/// makes k launches and moves about 8·k·n bytes (12 for a residual step); a chain of 0 steps
/// is one copy kernel.
/// @param chain  the steps, `0 <= chain.count <= kMaxSteps`
/// @param x      device pointer to `n` floats (read)
/// @param r      device pointer to `n` floats, read by `residual` steps; may be null if there is none
/// @param y      device pointer to `n` floats (written); may equal `x`, not `r` (a later
///               residual step must still read the original `r`)
/// @param n      number of elements, `n >= 0` (`0` launches nothing)
/// @throws std::invalid_argument as check_chain() says
/// @throws course::CudaError if a launch is rejected
void launch_eager_chain(const Chain& chain, const float* x, const float* r, float* y, int n);

/// The fused way (the exercise): one kernel launch for the whole chain, whatever its length.
/// Each element of `x` is loaded once, each element of `r` at most once (only if some step
/// reads it, however many do), each element of `y` stored once; every step happens in a
/// register in between. Bytes: `8 n`, or `12 n` with a residual step, for any chain.
/// Results equal the steps applied in order in fp32 (to rounding: a compiler may fuse a scale
/// and a shift into one FMA).
/// Grid: 256 threads per block, blocks to cover `n` (at most 65535; a grid-stride loop does
/// the rest).
/// Same parameters and errors as launch_eager_chain().
void launch_fused_chain(const Chain& chain, const float* x, const float* r, float* y, int n);
