// Performance case of exercise 01/02 rnn_graph for the grader (course_perf.hpp).
#include "rnn_graph.hpp"

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

TEST(CoursePerf, RnnGraph) {
  COURSE_PERF_ONLY();
  // Recorded once per input set, outside the measurement; one measured run is one replay.
  const int steps = course::perf::on_gpu() ? 4096 : 64;
  ct::Rng rng;
  RnnBuffers set0(rng, steps, 1), set1(rng, steps, 1);
  RnnBuffers* sets[2] = {&set0, &set1};
  RnnGraph* graphs[2] = {nullptr, nullptr};
  // The measurement queues its events on the default stream; a blocking stream orders with it.
  cudaStream_t stream = nullptr;
  CUDA_CHECK(cudaStreamCreate(&stream));
  for (int s = 0; s < 2; ++s) {
    RnnBuffers& p = *sets[s];
    graphs[s] = rnn_graph_create(p.layer, p.x.get(), p.h0.get(), p.hs.get(), p.steps, p.batch, stream);
  }
  course::perf::measure("rnn_graph", set0.min_bytes(), set0.flops(), [&](int s) { rnn_graph_replay(graphs[s]); });
  CUDA_CHECK(cudaStreamSynchronize(stream));
  for (RnnGraph* g : graphs) rnn_graph_destroy(g);
  CUDA_CHECK(cudaStreamDestroy(stream));
}
