// Tests for exercise 01/01 rnn_step (contract: lessons/01-serial-dependency/rnn_step.hpp).
// Run: ./course test 01/rnn_step

#include "rnn_step.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

#include "course_test.hpp"
#include "cuda_check.hpp"

#include "rnn_test_support.hpp"

/// Runs the step loop on the default stream and returns every state.
std::vector<float> run_sequence(const Problem& p) {
  DeviceLayer dl(p.layer);
  ct::DeviceBuffer<float> d_x(p.x), d_h0(p.h0), d_hs(p.state_floats());
  d_hs.poison();  // a state a step never writes reads as NaN
  launch_rnn_sequence(dl.layer, d_x.get(), d_h0.get(), d_hs.get(), p.steps, p.batch);
  return d_hs.download();
}

TEST(RnnStep, MatchesCpuOnAwkwardShapes) {
  ct::Rng rng;
  for (const Shape& s : awkward_shapes()) {
    const Problem p(rng, s.steps, s.batch, s.hidden, s.input);
    ASSERT_TRUE(ct::all_close(p.expected, run_sequence(p), rnn_tolerance(s.hidden, s.input)))
        << p.describe() << " (hs[t][s][i] is element (t * batch + s) * hidden + i)";
  }
}

TEST(RnnStep, StaysAccurateOverALongSequence) {
  // 300 steps: each one starts from the state the previous launch wrote to hs.
  ct::Rng rng;
  const Problem p(rng, 300, 2, 40, 24);
  EXPECT_TRUE(ct::all_close(p.expected, run_sequence(p), rnn_tolerance(40, 24))) << p.describe();
}

TEST(RnnStep, LaunchesOneKernelPerStep) {
  // The point of the exercise: the chain costs `steps` launches. Counted on the simulator, at a
  // shape drawn from the run's seed (no one shape marks the counted call).
  ct::Rng rng;
  const int steps = rng.integer(9, 40), batch = rng.integer(1, 4), hidden = rng.integer(33, 96),
            input = rng.integer(8, 40);
  std::printf("[ COURSE   ] drawn: %d steps, batch %d, hidden %d, input %d\n", steps, batch, hidden, input);
  const Problem p(rng, steps, batch, hidden, input);
  DeviceLayer dl(p.layer);
  ct::DeviceBuffer<float> d_x(p.x), d_h0(p.h0), d_hs(p.state_floats());
  d_hs.poison();
  const ct::GlobalTraffic c = ct::count_global_traffic(
      [&] { launch_rnn_sequence(dl.layer, d_x.get(), d_h0.get(), d_hs.get(), p.steps, p.batch); });
  ASSERT_TRUE(ct::all_close(p.expected, d_hs.download(), rnn_tolerance(hidden, input))) << p.describe();
  if (!c.counted) GTEST_SKIP() << c.why_not;
  EXPECT_EQ(c.kernel_launch_calls, std::uint64_t(p.steps))
      << "one forward pass over " << p.steps << " steps should make exactly " << p.steps
      << " kernel launches (one per step), made " << c.kernel_launch_calls;
  EXPECT_EQ(c.graph_launch_calls, 0u);
  EXPECT_EQ(c.host_device_bytes, 0u)
      << "the forward pass moved " << c.host_device_bytes << " bytes between the host and the GPU (copies, or "
      << "kernels reading page-locked host memory): every step should run on the GPU, from device memory";
}

TEST(RnnStep, EachUnitOfAStepHasAThreadOfItsOwn) {
  // The steps are a chain, but within a step the hidden units are independent: a thread per
  // (unit, sequence), each making one row's dot products. A thread that walks every unit of
  // its sequence gets the same numbers with `hidden` times the chain the lesson is about. At a
  // shape drawn from the run's seed, so that no one shape marks the checked call.
  ct::Rng rng;
  const int steps = rng.integer(3, 6), batch = rng.integer(1, 4), hidden = rng.integer(33, 96),
            input = rng.integer(8, 40);
  std::printf("[ COURSE   ] drawn: %d steps, batch %d, hidden %d, input %d\n", steps, batch, hidden, input);
  const Problem p(rng, steps, batch, hidden, input);
  DeviceLayer dl(p.layer);
  ct::DeviceBuffer<float> d_x(p.x), d_h0(p.h0), d_hs(p.state_floats());
  d_hs.poison();
  const ct::GlobalTraffic c = ct::count_global_traffic(
      [&] { launch_rnn_sequence(dl.layer, d_x.get(), d_h0.get(), d_hs.get(), p.steps, p.batch); });
  ASSERT_TRUE(ct::all_close(p.expected, d_hs.download(), rnn_tolerance(hidden, input))) << p.describe();
  if (!c.counted) GTEST_SKIP() << c.why_not;
  const std::uint64_t units = std::uint64_t(steps) * batch * hidden;
  EXPECT_GE(c.threads, units) << p.describe() << ": " << c.threads << " threads over " << steps
                              << " steps; each step needs one per hidden unit of each sequence (" << units << " in all)";
  // One unit: its row of W and of U, the state and the input (2 (hidden + input) loads), b, the store.
  const std::uint64_t one_unit = 2 * std::uint64_t(hidden + input) + 8;
  EXPECT_LE(c.span_global_ops, one_unit)
      << p.describe() << ": one thread made " << c.span_global_ops << " global accesses; a thread that computes "
      << "one unit makes about " << 2 * (hidden + input) + 2 << " (its rows of W and U, h_prev, x_t, b, h_next)";
}

TEST(RnnStep, QueuesItsWorkOnTheGivenStream) {
  ct::Rng rng;
  const Problem p(rng, 9, 2, 48, 16);
  DeviceLayer dl(p.layer);
  ct::DeviceBuffer<float> d_x(p.x), d_h0(p.h0), d_hs(p.state_floats());
  d_hs.poison();
  cudaStream_t stream = nullptr;
  CUDA_CHECK(cudaStreamCreate(&stream));
  launch_rnn_sequence(dl.layer, d_x.get(), d_h0.get(), d_hs.get(), p.steps, p.batch, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));  // waits for this stream only
  std::vector<float> hs(p.state_floats());
  CUDA_CHECK(cudaMemcpyAsync(hs.data(), d_hs.get(), hs.size() * sizeof(float),
                             cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  CUDA_CHECK(cudaStreamDestroy(stream));
  EXPECT_TRUE(ct::all_close(p.expected, hs, rnn_tolerance(48, 16))) << p.describe();
}
