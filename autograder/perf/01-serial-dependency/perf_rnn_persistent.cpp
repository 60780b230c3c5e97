// Performance case of exercise 01/03 rnn_persistent for the grader (course_perf.hpp).
#include "rnn_persistent.hpp"

#include "course_perf.hpp"
#include "course_test.hpp"
#include "rnn_perf_buffers.hpp"

namespace ct = course::test;

using course_rnn_perf::RnnBuffers;

TEST(CoursePerf, RnnPersistent) {
  COURSE_PERF_ONLY();
  const int steps = course::perf::on_gpu() ? 4096 : 64;
  ct::Rng rng;
  RnnBuffers set0(rng, steps, 1), set1(rng, steps, 1);
  RnnBuffers* sets[2] = {&set0, &set1};
  course::perf::measure("rnn_persistent", set0.min_bytes(), set0.flops(), [&](int s) {
    RnnBuffers& p = *sets[s];
    launch_rnn_persistent(p.layer, p.x.get(), p.h0.get(), p.hs.get(), p.steps, p.batch);
  }, [&] { return set0.output_ok(); });
}
