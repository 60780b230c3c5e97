// Performance case of exercise 01/01 rnn_step for the grader (course_perf.hpp).
#include "rnn_step.hpp"

#include "course_perf.hpp"
#include "course_test.hpp"
#include "rnn_perf_buffers.hpp"

namespace ct = course::test;

using course_rnn_perf::RnnBuffers;

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
  }, [&] { return set0.output_ok(); });
}
