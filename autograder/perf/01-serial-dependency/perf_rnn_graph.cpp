// Performance case of exercise 01/02 rnn_graph for the grader (course_perf.hpp).
#include "rnn_graph.hpp"

#include "course_perf.hpp"
#include "course_test.hpp"
#include "rnn_perf_buffers.hpp"

namespace ct = course::test;

using course_rnn_perf::RnnBuffers;

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
  course::perf::measure(
      "rnn_graph", set0.min_bytes(), set0.flops(), [&](int s) { rnn_graph_replay(graphs[s]); },
      [&] { return set0.output_ok(); });   // measure() waits for the device first
  CUDA_CHECK(cudaStreamSynchronize(stream));
  for (RnnGraph* g : graphs) rnn_graph_destroy(g);
  CUDA_CHECK(cudaStreamDestroy(stream));
}
