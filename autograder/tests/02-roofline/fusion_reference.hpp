// The CPU's answer to exercise 02/05 fusion, for its tests and its performance case
// (autograder/perf/02-roofline/perf_fusion.cpp).
#pragma once

#include "fusion.hpp"

#include <algorithm>
#include <cstddef>
#include <vector>

namespace {

/// The chain applied to one element `v` (residual input `r_i`), in fp32, step after step.
inline float chain_value(const Chain& chain, float v, float r_i) {
  for (int s = 0; s < chain.count; ++s) {
    const Step& step = chain.steps[s];
    switch (step.kind) {
      case StepKind::scale: v = v * step.value; break;
      case StepKind::shift: v = v + step.value; break;
      case StepKind::relu: v = std::max(v, 0.0f); break;
      case StepKind::residual: v = v + r_i; break;
    }
  }
  return v;
}

/// The chain on the CPU, element by element.
inline std::vector<float> chain_on_cpu(const Chain& chain, const std::vector<float>& x, const std::vector<float>& r) {
  std::vector<float> y(x.size());
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = chain_value(chain, x[i], r.empty() ? 0.0f : r[i]);
  return y;
}

}  // namespace
