// The RNN problem the three RNN performance cases (rnn_step, rnn_graph, rnn_persistent) time:
// weights, inputs and outputs on the device, hidden = input = 128.
#pragma once

#include "rnn.hpp"

#include "course_test.hpp"

namespace course_rnn_perf {

namespace ct = course::test;

/// Weights, inputs and outputs of one RNN problem on the device (hidden = input = 128).
struct RnnBuffers {
  int steps, batch, hidden = 128, input = 128;
  ct::DeviceBuffer<float> W, U, b, x, h0, hs;
  RnnLayer layer;
  RnnBuffers(ct::Rng& rng, int steps_, int batch_)
      : steps(steps_), batch(batch_),
        W(rng.uniform(128 * 128, -0.1f, 0.1f)), U(rng.uniform(128 * 128, -0.1f, 0.1f)),
        b(rng.uniform(128, -0.5f, 0.5f)),
        x(rng.uniform(static_cast<size_t>(steps_) * batch_ * 128, -1.0f, 1.0f)),
        h0(rng.uniform(static_cast<size_t>(batch_) * 128, -1.0f, 1.0f)),
        hs(static_cast<size_t>(steps_) * batch_ * 128) {
    layer = RnnLayer{W.get(), U.get(), b.get(), hidden, input};
  }
  /// What a step must move at the least: read x[t], write h[t] (the weights stay in L2).
  double min_bytes() const { return 4.0 * steps * batch * (input + hidden); }
  double flops() const { return 2.0 * steps * batch * hidden * (hidden + input); }
};

}  // namespace course_rnn_perf
