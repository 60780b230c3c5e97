// Performance case of exercise 01/01 rnn_step for the grader (course_perf.hpp).
#include "rnn_step.hpp"

#include "course_perf.hpp"
#include "course_test.hpp"

namespace ct = course::test;

namespace {

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

}  // namespace

TEST(CoursePerf, RnnStep) {
  COURSE_PERF_ONLY();
  // The lesson's figure: d = 128, n = 4096 steps, batch 1, on a GPU (one timed run is the whole
  // sequence, launch latency included); the simulator counts launches, exact at any length.
  const int steps = course::perf::on_gpu() ? 4096 : 64;
  ct::Rng rng;
  RnnBuffers set0(rng, steps, 1), set1(rng, steps, 1);
  RnnBuffers* sets[2] = {&set0, &set1};
  course::perf::measure("rnn_step", set0.min_bytes(), set0.flops(), [&](int s) {
    RnnBuffers& p = *sets[s];
    launch_rnn_sequence(p.layer, p.x.get(), p.h0.get(), p.hs.get(), p.steps, p.batch);
  });
}
