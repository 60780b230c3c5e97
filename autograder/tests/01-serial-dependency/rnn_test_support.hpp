// What the three RNN suites (rnn_step, rnn_graph, rnn_persistent) share: the CPU reference of
// h' = tanh(W h + U x + b), random layers and problems, device copies of the weights.
#pragma once

#include "rnn.hpp"

#include <cuda_runtime.h>

#include "course_test.hpp"
#include "cuda_check.hpp"

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ct = course::test;

namespace {

/// The layer's weights on the host, and the same on the device.
struct HostLayer {
  int hidden = 0, input = 0;
  std::vector<float> W, U, b;
};

/// Random weights scaled so that a pre-activation is O(1) (no saturated tanh, no vanishing):
/// each of the hidden + input terms has a weight of size ~ 1/sqrt(hidden + input).
HostLayer random_layer(ct::Rng& rng, int hidden, int input) {
  HostLayer l;
  l.hidden = hidden;
  l.input = input;
  const float s = static_cast<float>(std::sqrt(3.0 / (hidden + input)));
  l.W = rng.uniform(static_cast<size_t>(hidden) * hidden, -s, s);
  l.U = rng.uniform(static_cast<size_t>(hidden) * input, -s, s);
  l.b = rng.uniform(hidden, -0.5f, 0.5f);
  return l;
}

struct DeviceLayer {
  ct::DeviceBuffer<float> W, U, b;
  RnnLayer layer;
  explicit DeviceLayer(const HostLayer& h) : W(h.W), U(h.U), b(h.b) {
    layer = RnnLayer{W.get(), U.get(), b.get(), h.hidden, h.input};
  }
};

/// CPU reference in double: every state h[1..steps] of every sequence, laid out as hs.
std::vector<double> cpu_rnn(const HostLayer& l, const std::vector<float>& x,
                            const std::vector<float>& h0, int steps, int batch) {
  const int H = l.hidden, D = l.input;
  std::vector<double> prev(h0.begin(), h0.end()), next(prev.size());
  std::vector<double> hs;
  hs.reserve(static_cast<size_t>(steps) * batch * H);
  for (int t = 0; t < steps; ++t) {
    for (int s = 0; s < batch; ++s) {
      const float* xt = x.data() + (static_cast<size_t>(t) * batch + s) * D;
      for (int i = 0; i < H; ++i) {
        double acc = l.b[i];
        for (int j = 0; j < H; ++j) acc += double(l.W[size_t(i) * H + j]) * prev[size_t(s) * H + j];
        for (int k = 0; k < D; ++k) acc += double(l.U[size_t(i) * D + k]) * xt[k];
        next[size_t(s) * H + i] = std::tanh(acc);
      }
    }
    hs.insert(hs.end(), next.begin(), next.end());
    std::swap(prev, next);
  }
  return hs;
}

/// A step sums hidden + input + 1 float products of size ~1/sqrt(hidden + input); the
/// rounding of one step is carried into the next but shrunk by tanh' <= 1 and by W (whose
/// scale keeps the map contracting), so the error settles at a few steps' worth: 4x.
ct::Tolerance rnn_tolerance(int hidden, int input) {
  const int terms = hidden + input + 1;
  ct::Tolerance tol = ct::reduction_tolerance(terms, 1.0 / std::sqrt(double(terms)));
  tol.abs *= 4.0;
  return tol;
}

/// A problem: sizes, random inputs, and the CPU's answer.
struct Problem {
  int steps, batch;
  HostLayer layer;
  std::vector<float> x, h0;
  std::vector<double> expected;
  Problem(ct::Rng& rng, int steps_, int batch_, int hidden, int input)
      : steps(steps_), batch(batch_), layer(random_layer(rng, hidden, input)) {
    x = rng.uniform(static_cast<size_t>(steps) * batch * input, -1.0f, 1.0f);
    h0 = rng.uniform(static_cast<size_t>(batch) * hidden, -1.0f, 1.0f);
    expected = cpu_rnn(layer, x, h0, steps, batch);
  }
  size_t state_floats() const { return static_cast<size_t>(steps) * batch * layer.hidden; }
  std::string describe() const {
    return "steps = " + std::to_string(steps) + ", batch = " + std::to_string(batch) +
           ", hidden = " + std::to_string(layer.hidden) + ", input = " + std::to_string(layer.input);
  }
};

/// Shapes where indexing bugs show: a single unit, hidden sizes around a warp and a block of
/// 128, inputs smaller and larger than the state, several sequences.
struct Shape {
  int steps, batch, hidden, input;
};
const std::vector<Shape>& awkward_shapes() {
  static const std::vector<Shape> shapes = {
      {1, 1, 1, 1}, {3, 2, 31, 5}, {5, 3, 33, 64}, {4, 1, 127, 3}, {6, 2, 129, 17}, {8, 4, 128, 128}};
  return shapes;
}

}  // namespace
