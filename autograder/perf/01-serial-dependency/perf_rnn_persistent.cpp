// Performance case of exercise 01/03 rnn_persistent for the grader (course_perf.hpp).
#include "rnn_persistent.hpp"

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

TEST(CoursePerf, RnnPersistent) {
  COURSE_PERF_ONLY();
  const int steps = course::perf::on_gpu() ? 4096 : 64;
  ct::Rng rng;
  RnnBuffers set0(rng, steps, 1), set1(rng, steps, 1);
  RnnBuffers* sets[2] = {&set0, &set1};
  course::perf::measure("rnn_persistent", set0.min_bytes(), set0.flops(), [&](int s) {
    RnnBuffers& p = *sets[s];
    launch_rnn_persistent(p.layer, p.x.get(), p.h0.get(), p.hs.get(), p.steps, p.batch);
  });
}
