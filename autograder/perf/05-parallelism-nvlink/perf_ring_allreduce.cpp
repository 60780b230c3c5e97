// Performance case of exercise 05/02 ring_allreduce for the grader (course_perf.hpp).
//
// On the simulator the criterion is the global-memory bytes of the all-reduce's kernels
// (rubric: criterion_sim = global_bytes), counted exactly: the reference adds every chunk it
// receives in the reduce-scatter once, 12 bytes per element (read both, write one), in all
// 3(n-1)·S for a vector of S bytes on n ranks. Extra passes (adding whole vectors, copying
// chunks around with kernels, re-reducing) show up as more bytes. The link traffic itself
// (2(n-1)/n·S out of every rank, to the ring neighbour only) and the modelled link time are
// not a grader criterion; the correctness suite checks the traffic exactly.
//
// On a GPU the criterion is the time of one all-reduce (host-synchronised, since the ranks'
// streams do not synchronise with the legacy stream the events are recorded on), on every
// visible GPU, at least 4 ranks (ranks share a GPU when there are fewer).
//
// `bytes` passed to measure() is 2(n-1)/n·S, the bytes every rank must send: the report's
// GB/s is then the bus bandwidth as nccl-tests define it, and on the simulator it is a safe
// lower bound of the kernels' bytes (each received reduce-scatter element is read and its sum
// written: at least 2(n-1)·S over all ranks).
#include "ring_allreduce.hpp"

#include "course_perf.hpp"
#include "course_test.hpp"

#include <algorithm>

namespace ct = course::test;

TEST(CoursePerf, RingAllReduce) {
  COURSE_PERF_ONLY();
  const int n = course::perf::on_gpu() ? std::min(8, std::max(4, course::visible_device_count())) : 4;
  // A GPU: 2^24 floats (64 MiB per rank, past L2); the simulator counts exactly at any size.
  // Not a multiple of n, as in the tests.
  const std::size_t count = course::perf::on_gpu() ? (std::size_t(1) << 24) + 3 : (std::size_t(1) << 16) + 3;
  course::RankGroup group(n);
  ct::Rng rng;
  course::SymmetricBuffer<float> data0(group, count), data1(group, count);
  course::SymmetricBuffer<float> scratch(group, ring_allreduce_scratch_floats(count, n));
  // Every rank holds other values; set 0's sum is what the checked run must leave on each.
  std::vector<std::vector<float>> values0;
  std::vector<double> sum(count, 0.0);
  for (int r = 0; r < n; ++r) {
    values0.push_back(rng.uniform(count, -1.0f, 1.0f));
    for (std::size_t i = 0; i < count; ++i) sum[i] += values0[r][i];
    data1.upload(r, rng.uniform(count, -1.0f, 1.0f));
  }
  const auto restore_set0 = [&] {   // the reduction works in place
    for (int r = 0; r < n; ++r) data0.upload(r, values0[r]);
    group.synchronize();
    course::reset_link_counters();   // the links of the checked run alone
  };
  restore_set0();
  course::SymmetricBuffer<float>* data[2] = {&data0, &data1};
  const double S = double(count) * sizeof(float);
  course::perf::measure(
      "ring_allreduce", 2.0 * (n - 1) / n * S, double(n - 1) * count,
      [&](int set) {
        ring_allreduce(group, *data[set], count, scratch);
        group.synchronize();
      },
      [&] {
        for (int r = 0; r < n; ++r) {
          ::testing::AssertionResult ok = course::perf::sampled_close(
              data0.download(r), [&](std::size_t i) { return sum[i]; }, ct::reduction_tolerance(n));
          if (!ok) return ok << " (rank " << r << ")";
        }
        // And it is a ring, at this shape too: a star through rank 0 is fewer kernels, and the
        // criterion (the kernels' modelled time) does not charge the links.
        const course::LinkCounters links = course::read_link_counters();
        if (links.counted && group.distinct_devices())
          for (int r = 0; r < n; ++r) {
            const int next = (r + 1) % n;
            if (links.out_of(group.device(r)) != links.at(group.device(r), group.device(next)))
              return ::testing::AssertionFailure() << "rank " << r << " sent " << links.out_of(group.device(r))
                                                   << " bytes, " << links.at(group.device(r), group.device(next))
                                                   << " of them to its ring neighbour " << next
                                                   << "; a ring all-reduce sends to the next rank only";
          }
        return ::testing::AssertionSuccess();
      },
      restore_set0);
}
