// The RNN problem the three RNN performance cases (rnn_step, rnn_graph, rnn_persistent) time:
// weights, inputs and outputs on the device, hidden = input = 128, and the CPU's answer.
#pragma once

#include "rnn.hpp"

#include "course_perf.hpp"
#include "course_test.hpp"
#include "../../tests/01-serial-dependency/rnn_test_support.hpp"

#include <vector>

namespace course_rnn_perf {

namespace ct = course::test;

/// One RNN problem on the host and on the device (hidden = input = 128).
struct RnnBuffers {
  int steps, batch, hidden = 128, input = 128;
  HostLayer host_layer;
  std::vector<float> host_x, host_h0;
  DeviceLayer device_layer;
  ct::DeviceBuffer<float> x, h0, hs;
  RnnLayer layer;
  RnnBuffers(ct::Rng& rng, int steps_, int batch_)
      : steps(steps_), batch(batch_), host_layer(random_layer(rng, 128, 128)),
        host_x(rng.uniform(static_cast<size_t>(steps_) * batch_ * 128, -1.0f, 1.0f)),
        host_h0(rng.uniform(static_cast<size_t>(batch_) * 128, -1.0f, 1.0f)), device_layer(host_layer),
        x(host_x), h0(host_h0), hs(static_cast<size_t>(steps_) * batch_ * 128), layer(device_layer.layer) {}
  /// What a step must move at the least: read x[t], write h[t] (the weights stay in L2).
  double min_bytes() const { return 4.0 * steps * batch * (input + hidden); }
  double flops() const { return 2.0 * steps * batch * hidden * (hidden + input); }
  /// Whether hs holds every state of the sequence (after a run on these buffers).
  ::testing::AssertionResult output_ok() const {
    const std::vector<double> expected = cpu_rnn(host_layer, host_x, host_h0, steps, batch);
    return course::perf::sampled_close(hs.download(), [&](std::size_t i) { return expected[i]; },
                                       rnn_tolerance(hidden, input));
  }
};

}  // namespace course_rnn_perf
