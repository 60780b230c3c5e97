// Tests for exercise 01/03 rnn_persistent (contract: lessons/01-serial-dependency/rnn_persistent.hpp).
// Run: ./course test 01/rnn_persistent

#include "rnn_persistent.hpp"

#include <cuda_runtime.h>

#include "course_test.hpp"
#include "cuda_check.hpp"

#include <cstdio>

#include "rnn_test_support.hpp"

std::vector<float> run_persistent(const Problem& p, cudaStream_t stream = 0) {
  DeviceLayer dl(p.layer);
  ct::DeviceBuffer<float> d_x(p.x), d_h0(p.h0), d_hs(p.state_floats());
  d_hs.poison();
  launch_rnn_persistent(dl.layer, d_x.get(), d_h0.get(), d_hs.get(), p.steps, p.batch, stream);
  return d_hs.download();
}

TEST(RnnPersistent, MatchesCpuOnAwkwardShapes) {
  ct::Rng rng;
  for (const Shape& s : awkward_shapes()) {
    const Problem p(rng, s.steps, s.batch, s.hidden, s.input);
    ASSERT_TRUE(ct::all_close(p.expected, run_persistent(p), rnn_tolerance(s.hidden, s.input)))
        << p.describe() << " (hs[t][s][i] is element (t * batch + s) * hidden + i)";
  }
}

TEST(RnnPersistent, HandlesMoreHiddenUnitsThanThreads) {
  // hidden = 300 > 256 threads: some threads own two units, and all must finish a step before
  // any starts the next.
  ct::Rng rng;
  const Problem p(rng, 4, 2, 300, 7);
  EXPECT_TRUE(ct::all_close(p.expected, run_persistent(p), rnn_tolerance(300, 7))) << p.describe();
}

TEST(RnnPersistent, StaysAccurateOverALongSequence) {
  ct::Rng rng;
  const Problem p(rng, 300, 2, 40, 24);
  EXPECT_TRUE(ct::all_close(p.expected, run_persistent(p), rnn_tolerance(40, 24))) << p.describe();
}

TEST(RnnPersistent, RunsTheWholeSequenceInOneLaunch) {
  // Counted at a shape drawn from the run's seed (8 to 40 steps, 1 to 4 sequences, 17 to 130
  // hidden units, 3 to 64 inputs: around a warp and a block's 128 threads), so that a kernel
  // cannot keep h on chip for one shape it recognises only.
  ct::Rng rng;
  const int steps = rng.integer(8, 40), batch = rng.integer(1, 4);  // drawn in this order
  const int hidden = rng.integer(17, 130), input = rng.integer(3, 64);
  const Problem p(rng, steps, batch, hidden, input);
  std::printf("[ COURSE   ] drawn: %s\n", p.describe().c_str());
  DeviceLayer dl(p.layer);
  ct::DeviceBuffer<float> d_x(p.x), d_h0(p.h0), d_hs(p.state_floats());
  d_hs.poison();
  const ct::GlobalTraffic c = ct::count_global_traffic(
      [&] { launch_rnn_persistent(dl.layer, d_x.get(), d_h0.get(), d_hs.get(), p.steps, p.batch); });
  ASSERT_TRUE(ct::all_close(p.expected, d_hs.download(), rnn_tolerance(p.layer.hidden, p.layer.input))) << p.describe();
  if (!c.counted) GTEST_SKIP() << c.why_not;
  EXPECT_EQ(c.kernel_launch_calls, 1u) << "the " << p.steps << "-step sequence should be one launch";
  // Between the steps h stays on chip: each step's hidden units read all of h, hidden x hidden
  // floats per sequence, from shared memory. Reading it back from hs (global memory, where the
  // last step stored it) gives the same numbers and makes every step wait on global loads.
  const std::uint64_t h_reads = 4ull * p.steps * p.batch * p.layer.hidden * p.layer.hidden;
  EXPECT_GE(c.shared_bytes, h_reads)
      << "the kernel moved " << c.shared_bytes << " bytes of shared memory; each step's units read the whole "
      << "state, " << h_reads << " bytes in all: keep h (and the next h) in the block's dynamic shared memory "
         "between the steps, not in global memory";
}
