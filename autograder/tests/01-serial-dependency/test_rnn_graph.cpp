// Tests for exercise 01/02 rnn_graph (contract: lessons/01-serial-dependency/rnn_graph.hpp).
// Run: ./course test 01/rnn_graph

#include "rnn_graph.hpp"

#include <cuda_runtime.h>

#include "course_test.hpp"
#include "cuda_check.hpp"

#include "rnn_test_support.hpp"

/// Owns a stream, made for capture (the legacy default stream cannot be captured).
struct Stream {
  cudaStream_t s = nullptr;
  Stream() { CUDA_CHECK(cudaStreamCreate(&s)); }
  ~Stream() { cudaStreamDestroy(s); }
};

/// Owns an RnnGraph.
struct GraphHolder {
  RnnGraph* g = nullptr;
  ~GraphHolder() { rnn_graph_destroy(g); }
};

TEST(RnnGraph, ReplayMatchesCpuOnAwkwardShapes) {
  ct::Rng rng;
  Stream stream;
  for (const Shape& s : awkward_shapes()) {
    const Problem p(rng, s.steps, s.batch, s.hidden, s.input);
    DeviceLayer dl(p.layer);
    ct::DeviceBuffer<float> d_x(p.x), d_h0(p.h0), d_hs(p.state_floats());
    d_hs.poison();
    GraphHolder graph;
    graph.g = rnn_graph_create(dl.layer, d_x.get(), d_h0.get(), d_hs.get(), p.steps, p.batch, stream.s);
    rnn_graph_replay(graph.g);
    CUDA_CHECK(cudaStreamSynchronize(stream.s));
    ASSERT_TRUE(ct::all_close(p.expected, d_hs.download(), rnn_tolerance(s.hidden, s.input)))
        << p.describe() << " (hs[t][s][i] is element (t * batch + s) * hidden + i)";
  }
}

TEST(RnnGraph, RecordingRunsNothingAndReplayRunsEverything) {
  // Capture records the launches; only a replay executes them.
  ct::Rng rng;
  Stream stream;
  const Problem p(rng, 12, 2, 64, 32);
  DeviceLayer dl(p.layer);
  ct::DeviceBuffer<float> d_x(p.x), d_h0(p.h0), d_hs(p.state_floats());
  d_hs.poison();
  GraphHolder graph;
  graph.g = rnn_graph_create(dl.layer, d_x.get(), d_h0.get(), d_hs.get(), p.steps, p.batch, stream.s);
  CUDA_CHECK(cudaDeviceSynchronize());
  const auto before = d_hs.download();
  size_t written = 0;
  for (float v : before) written += std::isnan(v) ? 0 : 1;
  EXPECT_EQ(written, 0u) << "rnn_graph_create wrote " << written
                         << " states: during stream capture launches are recorded, not run";
  rnn_graph_replay(graph.g);
  CUDA_CHECK(cudaStreamSynchronize(stream.s));
  EXPECT_TRUE(ct::all_close(p.expected, d_hs.download(), rnn_tolerance(64, 32))) << p.describe();
}

TEST(RnnGraph, ReplaysReadTheBuffersCurrentContents) {
  // A static graph holds pointers, not data: new inputs copied into the same x give a new
  // sequence on the next replay, with no new capture.
  ct::Rng rng;
  Stream stream;
  const int steps = 10, batch = 3, hidden = 50, input = 20;
  Problem p(rng, steps, batch, hidden, input);
  DeviceLayer dl(p.layer);
  ct::DeviceBuffer<float> d_x(p.x), d_h0(p.h0), d_hs(p.state_floats());
  GraphHolder graph;
  graph.g = rnn_graph_create(dl.layer, d_x.get(), d_h0.get(), d_hs.get(), steps, batch, stream.s);
  for (int round = 0; round < 3; ++round) {
    p.x = rng.uniform(p.x.size(), -1.0f, 1.0f);
    p.h0 = rng.uniform(p.h0.size(), -1.0f, 1.0f);
    p.expected = cpu_rnn(p.layer, p.x, p.h0, steps, batch);
    d_x.upload(p.x);
    d_h0.upload(p.h0);
    d_hs.poison();
    rnn_graph_replay(graph.g);
    CUDA_CHECK(cudaStreamSynchronize(stream.s));
    ASSERT_TRUE(ct::all_close(p.expected, d_hs.download(), rnn_tolerance(hidden, input)))
        << "replay " << round + 1 << " after uploading new x and h0; " << p.describe();
  }
}

TEST(RnnGraph, ReplayIsOneGraphLaunchAndNoKernelLaunch) {
  // At a shape drawn from the run's seed: no one shape marks the counted replay.
  ct::Rng rng;
  Stream stream;
  const int steps = rng.integer(9, 40), batch = rng.integer(1, 4), hidden = rng.integer(33, 96),
            input = rng.integer(8, 40);
  std::printf("[ COURSE   ] drawn: %d steps, batch %d, hidden %d, input %d\n", steps, batch, hidden, input);
  const Problem p(rng, steps, batch, hidden, input);
  DeviceLayer dl(p.layer);
  ct::DeviceBuffer<float> d_x(p.x), d_h0(p.h0), d_hs(p.state_floats());
  d_hs.poison();
  GraphHolder graph;
  graph.g = rnn_graph_create(dl.layer, d_x.get(), d_h0.get(), d_hs.get(), p.steps, p.batch, stream.s);
  const ct::GlobalTraffic c = ct::count_global_traffic([&] { rnn_graph_replay(graph.g); });
  ASSERT_TRUE(ct::all_close(p.expected, d_hs.download(), rnn_tolerance(hidden, input))) << p.describe();
  if (!c.counted) GTEST_SKIP() << c.why_not;
  EXPECT_EQ(c.graph_launch_calls, 1u) << "a replay of the " << p.steps
                                  << "-step sequence should be exactly one cudaGraphLaunch";
  EXPECT_EQ(c.kernel_launch_calls, 0u) << "a replay should launch no kernel from the host (the graph "
                                      "holds the " << p.steps << " steps)";
  EXPECT_EQ(c.launches, std::uint64_t(p.steps))
      << "a replay ran " << c.launches << " kernels; the graph should hold one kernel node per step ("
      << p.steps << "), the RNN's chain of launches recorded once";
  EXPECT_EQ(c.host_device_bytes, 0u)
      << "a replay moved " << c.host_device_bytes << " bytes between the host and the GPU (copy nodes, or "
      << "kernels reading page-locked host memory): the steps should run on the GPU, from device memory";
}
