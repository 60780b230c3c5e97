// Tests for exercise 05/02 ring_allreduce (contract: lessons/05-parallelism-nvlink/ring_allreduce.hpp).
// Run: ./course test 05/ring_allreduce

#include "ring_allreduce.hpp"

#include <cuda_runtime.h>

#include "course_test.hpp"
#include "cuda_check.hpp"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

namespace ct = course::test;

#ifdef CUDASIM
// Eight virtual devices: groups of 2, 3, 4 and 8 ranks each get devices of their own.
static const bool kEightSimDevices = (setenv("CUDASIM_DEVICES", "8", 0), true);
#endif

namespace {

/// Fills every rank with fresh values (and a guard after `count`), runs the all-reduce,
/// and checks every rank's result against the sum in double and the guard.
void check_allreduce(course::RankGroup& group, std::size_t count, ct::Rng& rng) {
  const int n = group.size();
  course::SymmetricBuffer<float> data(group, count + ct::kGuardElements);
  course::SymmetricBuffer<float> scratch(group, ring_allreduce_scratch_floats(count, n));
  scratch.poison();
  std::vector<double> expected(count, 0.0);
  for (int r = 0; r < n; ++r) {
    auto values = rng.nonzero(count);
    for (std::size_t i = 0; i < count; ++i) expected[i] += values[i];
    const auto guard = ct::guard_pattern<float>();
    values.insert(values.end(), guard.begin(), guard.end());
    data.upload(r, values);
  }
  ring_allreduce(group, data, count, scratch);
  for (int r = 0; r < n; ++r) {
    const auto result = data.download(r);
    ASSERT_TRUE(ct::all_close(expected, std::vector<float>(result.begin(), result.begin() + count),
                              ct::reduction_tolerance(n)))
        << "rank " << r << " of " << n << " (" << group.devices_used() << " devices), count = " << count;
    ASSERT_TRUE(ct::guard_untouched(result, count))
        << "rank " << r << " of " << n << ", count = " << count;
  }
}

}  // namespace

TEST(RingAllReduce, SumsOverAllRanksForCountsNotDivisibleByTheRankCount) {
  ct::Rng rng;
  for (int n : {2, 3, 4, 8}) {
    course::RankGroup group(n);
    for (std::size_t count : {std::size_t(1), std::size_t(2), std::size_t(7), std::size_t(n + 1),
                              std::size_t(1000), std::size_t(4097), std::size_t(65537)}) {
      check_allreduce(group, count, rng);
      if (HasFatalFailure()) return;
    }
  }
}

TEST(RingAllReduce, WorksWhenRanksShareADevice) {
  // On one GPU the ranks are streams and buffers; the ring is the same.
  ct::Rng rng;
  for (const auto& shape : std::vector<std::pair<int, int>>{{2, 1}, {3, 2}, {4, 1}, {8, 4}}) {
    course::RankGroup group(shape.first, shape.second);
    check_allreduce(group, 10007, rng);
    if (HasFatalFailure()) return;
  }
}

TEST(RingAllReduce, RepeatedCallsKeepSumming) {
  // Twice in a row on the same buffers, no synchronisation between: the second call must
  // wait for the first (scratch reused), and sums the sums: n · (sum over ranks).
  ct::Rng rng;
  const int n = 4;
  const std::size_t count = 3001;
  course::RankGroup group(n);
  course::SymmetricBuffer<float> data(group, count), scratch(group, ring_allreduce_scratch_floats(count, n));
  std::vector<double> expected(count, 0.0);
  for (int r = 0; r < n; ++r) {
    const auto values = rng.nonzero(count);
    for (std::size_t i = 0; i < count; ++i) expected[i] += n * double(values[i]);
    data.upload(r, values);
  }
  ring_allreduce(group, data, count, scratch);
  ring_allreduce(group, data, count, scratch);
  for (int r = 0; r < n; ++r)
    ASSERT_TRUE(ct::all_close(expected, data.download(r), ct::reduction_tolerance(2 * n, n)))
        << "rank " << r << " after two all-reduces";
}

TEST(RingAllReduce, BusBandwidthIsAlgorithmBandwidthTimesTwoNMinusOneOverN) {
  // As nccl-tests define them: algbw = S / t, busbw = algbw * 2(n-1)/n.
  for (int n : {2, 3, 4, 8}) {
    const double bytes = 6.0e9, seconds = 0.025;
    const AllReduceBandwidth bw = allreduce_bandwidth(bytes, n, seconds);
    EXPECT_NEAR(bw.algbw, 2.4e11, 1.0) << n << " ranks: algbw = bytes / seconds";
    EXPECT_NEAR(bw.busbw, 2.4e11 * 2.0 * (n - 1) / n, 1.0) << n << " ranks: busbw = algbw * 2(n-1)/n";
  }
}

TEST(RingAllReduce, SendsTwoNMinusOneOverNOfTheVectorOutOfEveryRank) {
  // Counted on the simulator, one device per rank: rank r sends to rank r + 1 only; when n
  // divides the count every rank sends exactly 2(n-1)/n·S bytes; otherwise rank r sends
  // every chunk but (r+1) and (r+2) once each... and all ranks together always 2(n-1)·S.
  ct::Rng rng;
  for (int n : {2, 3, 4, 8}) {
    for (std::size_t count : {std::size_t(n) * 1250, std::size_t(n) * 1250 + 3}) {
      course::RankGroup group(n);
      course::SymmetricBuffer<float> data(group, count), scratch(group, ring_allreduce_scratch_floats(count, n));
      std::vector<double> expected(count, 0.0);
      for (int r = 0; r < n; ++r) {
        const auto values = rng.nonzero(count);
        for (std::size_t i = 0; i < count; ++i) expected[i] += values[i];
        data.upload(r, values);
      }
      group.synchronize();
      course::reset_link_counters();
      ring_allreduce(group, data, count, scratch);
      group.synchronize();
      const course::LinkCounters links = course::read_link_counters();
      ASSERT_TRUE(ct::all_close(expected, data.download(n - 1), ct::reduction_tolerance(n)))
          << "rank " << n - 1 << " of " << n << ", count = " << count;
      if (!links.counted) GTEST_SKIP() << links.why_not;
      if (!group.distinct_devices()) GTEST_SKIP() << "needs one device per rank (CUDASIM_DEVICES >= " << n << ")";
      const std::uint64_t S = count * sizeof(float);
      EXPECT_EQ(links.total(), 2ull * (n - 1) * S)
          << n << " ranks, " << S << " bytes: all links together carry 2(n-1)·S";
      for (int r = 0; r < n; ++r) {
        const int next = (r + 1) % n;
        const std::uint64_t not_sent = (course::part_of(count, n, (r + 1) % n).size() +
                                        course::part_of(count, n, (r + 2) % n).size()) * sizeof(float);
        const std::uint64_t want = count % n == 0 ? 2ull * (n - 1) * S / n : 2 * S - not_sent;
        EXPECT_EQ(links.at(group.device(r), group.device(next)), want)
            << n << " ranks, count = " << count << ": bytes rank " << r << " sends to rank " << next
            << (count % n == 0 ? " (2(n-1)/n·S)" : " (every chunk twice, but its chunks r+1 and r+2 once each)");
        EXPECT_EQ(links.out_of(group.device(r)), links.at(group.device(r), group.device(next)))
            << "rank " << r << " must send to its ring neighbour " << next << " only";
      }
    }
  }
}

TEST(RingAllReduce, ReportsItsBandwidth) {
  // Timed on the host around one all-reduce of 4 MiB (after a warm-up); printed like
  // nccl-tests. On the simulator the time is the modelled link time plus CPU work.
  ct::Rng rng;
  for (int n : {2, 4, 8}) {
    course::RankGroup group(n);
    const std::size_t count = (4u << 20) / sizeof(float);
    course::SymmetricBuffer<float> data(group, count), scratch(group, ring_allreduce_scratch_floats(count, n));
    data.upload_all(rng.nonzero(count));
    ring_allreduce(group, data, count, scratch);
    group.synchronize();
    const auto start = std::chrono::steady_clock::now();
    ring_allreduce(group, data, count, scratch);
    group.synchronize();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const AllReduceBandwidth bw = allreduce_bandwidth(double(count * sizeof(float)), n, seconds);
    std::printf("[ COURSE   ] all-reduce of 4 MiB on %d ranks: %.3f ms, algbw %.2f GB/s, busbw %.2f GB/s\n",
                n, seconds * 1e3, bw.algbw / 1e9, bw.busbw / 1e9);
    EXPECT_GT(bw.algbw, 0.0);
    EXPECT_GT(bw.busbw, bw.algbw * (n > 2 ? 1.0 : 0.99)) << "busbw = algbw * 2(n-1)/n";
  }
}

TEST(RingAllReduce, TheSumsAreMadeOnTheDevices) {
  // The reduction runs where the data is: summing on the host (copying every rank's vector out
  // and the sum back) gives the right result and, with a few token puts, the right link counts,
  // but it is not an all-reduce over the links. Counted on the simulator: the all-reduce copies
  // nothing between the host and the devices, and its additions are kernels reading and
  // writing the ranks' data (at least the n-1 received chunks added into each rank's own).
  ct::Rng rng;
  const int n = 4;
  const std::size_t count = std::size_t(n) * 2000;
  course::RankGroup group(n);
  course::SymmetricBuffer<float> data(group, count), scratch(group, ring_allreduce_scratch_floats(count, n));
  for (int r = 0; r < n; ++r) data.upload(r, rng.nonzero(count));
  group.synchronize();
  const auto traffic = ct::count_global_traffic([&] {
    ring_allreduce(group, data, count, scratch);
    group.synchronize();
  });
  if (!traffic.counted) GTEST_SKIP() << traffic.why_not;
  EXPECT_EQ(traffic.host_device_bytes, 0u)
      << "the all-reduce moved " << traffic.host_device_bytes << " bytes between the host and the devices "
      << "(copies, or kernels reading and writing page-locked host memory): each rank should add the chunk it "
      << "receives from its neighbour into its own with a kernel, on its device";
  // Reduce-scatter: every rank adds n-1 received chunks of count/n floats into its own, reading
  // two floats and writing one per element.
  const std::uint64_t additions = std::uint64_t(n) * (n - 1) * (count / n) * 3 * sizeof(float);
  EXPECT_GE(traffic.bytes(), additions)
      << "the kernels of the all-reduce moved " << traffic.bytes() << " bytes of global memory; adding the "
      << "received chunks on every rank moves at least " << additions;
}
