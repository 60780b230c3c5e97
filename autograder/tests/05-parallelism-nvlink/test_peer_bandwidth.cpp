// Tests for exercise 05/01 peer_bandwidth (contract: lessons/05-parallelism-nvlink/peer_bandwidth.hpp).
// Run: ./course test 05/peer_bandwidth

#include "peer_bandwidth.hpp"

#include <cuda_runtime.h>

#include "course_test.hpp"
#include "course_traffic.hpp"
#include "cuda_check.hpp"

#ifdef CUDASIM
#include <cudasim/link_model.hpp>
#endif

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <utility>
#include <vector>

namespace ct = course::test;

#ifdef CUDASIM
// Eight virtual devices, so that groups of 2, 3, 4 and 8 ranks each get devices of their
// own; read by the simulator at its first CUDA call. An explicit CUDASIM_DEVICES wins.
static const bool kEightSimDevices = (setenv("CUDASIM_DEVICES", "8", 0), true);
#endif

namespace {

const std::vector<int> kRankCounts = {2, 3, 4, 8};

}  // namespace

TEST(PeerBandwidth, CopiesTheBytesBetweenEveryOrderedPair) {
  ct::Rng rng;
  for (int n : kRankCounts) {
    course::RankGroup group(n);
    const std::size_t count = 1000 + 7 * n;  // not a multiple of anything in particular
    course::SymmetricBuffer<float> src(group, count), dst(group, count);
    std::vector<std::vector<float>> values;
    for (int r = 0; r < n; ++r) {
      values.push_back(rng.nonzero(count));
      src.upload(r, values.back());
    }
    for (int from = 0; from < n; ++from) {
      for (int to = 0; to < n; ++to) {
        dst.poison();
        const double seconds =
            time_peer_copy(group, from, to, src.on(from), dst.on(to), count * sizeof(float), 2);
        ASSERT_TRUE(ct::all_close(values[from], dst.download(to), 0.0, 0.0))
            << n << " ranks: after time_peer_copy from rank " << from << " to rank " << to
            << ", rank " << to << "'s buffer must hold rank " << from << "'s data";
        EXPECT_TRUE(std::isfinite(seconds) && seconds > 0.0)
            << n << " ranks, " << from << " -> " << to << ": time_peer_copy returned " << seconds
            << " s; it must return the (positive) seconds one copy took";
      }
    }
  }
}

TEST(PeerBandwidth, MatrixHasAPositiveEntryForEveryOrderedPair) {
  for (int n : kRankCounts) {
    course::RankGroup group(n);
    const BandwidthMatrix m = measure_peer_bandwidth(group, 1 << 20, 3);
    ASSERT_EQ(m.ranks, n) << "the matrix must have one row and one column per rank";
    ASSERT_EQ(m.gb_per_s.size(), static_cast<std::size_t>(n) * n) << "n x n entries";
    int bad = 0;
    for (int from = 0; from < n; ++from)
      for (int to = 0; to < n; ++to)
        if (!(std::isfinite(m.at(from, to)) && m.at(from, to) > 0.0)) ++bad;
    EXPECT_EQ(bad, 0) << n << " ranks: " << bad << " entries are not a positive number of GB/s:\n"
                      << format_topology(group, m);
    if (bad == 0) std::printf("[ COURSE   ] %d ranks on %d devices, 1 MiB copies:\n%s", n,
                              group.devices_used(), format_topology(group, m).c_str());
  }
}

TEST(PeerBandwidth, SendsExactlyRepeatsCopiesOverEachLink) {
  // Counted on the simulator: every ordered pair of ranks on different devices sends
  // `repeats` copies of `bytes` from its source device to its destination device. Ranks
  // sharing a device (8 ranks on 4 devices) add up on their devices' link.
  for (const auto& shape : std::vector<std::pair<int, int>>{{2, 0}, {3, 0}, {4, 0}, {8, 0}, {8, 4}}) {
    const int n = shape.first;
    course::RankGroup group(n, shape.second);
    const std::size_t bytes = 65536 + 12;
    const int repeats = 3;
    course::reset_link_counters();
    const BandwidthMatrix m = measure_peer_bandwidth(group, bytes, repeats);
    ASSERT_EQ(m.gb_per_s.size(), static_cast<std::size_t>(n) * n);
    ASSERT_GT(m.at(0, n - 1), 0.0) << "no bandwidth measured from rank 0 to rank " << n - 1;
    const course::LinkCounters links = course::read_link_counters();
    if (!links.counted) GTEST_SKIP() << links.why_not;
    std::map<std::pair<int, int>, std::uint64_t> expected;
    for (int from = 0; from < n; ++from)
      for (int to = 0; to < n; ++to)
        if (group.device(from) != group.device(to))
          expected[{group.device(from), group.device(to)}] += std::uint64_t(repeats) * bytes;
    for (int a = 0; a < links.devices; ++a) {
      for (int b = 0; b < links.devices; ++b) {
        if (a == b) continue;
        const auto it = expected.find({a, b});
        EXPECT_EQ(links.at(a, b), it == expected.end() ? 0u : it->second)
            << n << " ranks on " << group.devices_used() << " devices: bytes from device " << a
            << " to device " << b << " (each ordered pair of ranks sends " << repeats
            << " copies of " << bytes << " bytes)";
      }
    }
  }
}

#ifdef CUDASIM
TEST(PeerBandwidth, ReturnsTheTimeOneCopyTook) {
  // The measurement is the exercise. On the simulator's modelled clock a copy over a link
  // takes the same time whenever it is made (latency + bytes / the link's bandwidth), so the
  // seconds time_peer_copy returns must be what the test's own events measure for the same
  // copies, per copy. The size is drawn per run, so no constant can stand in for it, and so is
  // the link (from the run's seed, so a grade replays with its --seed): its bandwidth and
  // latency are not NVLink 4's, so a datasheet's formula (2 us + bytes / 450 GB/s) instead of a
  // measurement is off by a third or more (a red-team run passed with the formula before).
  ct::Rng rng;
  ct::ModelledClock clock;
  cudasim::LinkModel drawn;
  drawn.name = "test link";
  drawn.pinned_bytes_per_second = rng.scalar(40e9, 300e9);  // at most 2/3 of NVLink 4's 450 GB/s
  drawn.pageable_bytes_per_second = drawn.pinned_bytes_per_second;
  drawn.latency_seconds = rng.scalar(5e-6, 20e-6);          // at least 2.5 times its 2 us
  struct RestoreLink {
    cudasim::LinkModel previous = cudasim::peer_link();
    ~RestoreLink() { cudasim::set_peer_link(previous); }  // its figures, under its name
  } restore;
  ASSERT_TRUE(cudasim::set_peer_link(drawn)) << "test bug: the simulator refused the drawn link";
  course::RankGroup group(2);
  const std::size_t bytes = static_cast<std::size_t>(rng.integer(1 << 20, 1 << 24));
  const int repeats = 3;
  course::SymmetricBuffer<char> src(group, bytes), dst(group, bytes);
  for (const auto& [from, to] : std::vector<std::pair<int, int>>{{0, 1}, {1, 0}}) {
    double expected = 0.0;
    {
      course::DeviceGuard guard(group.device(from));
      cudaEvent_t start = nullptr, stop = nullptr;
      CUDA_CHECK(cudaEventCreate(&start));
      CUDA_CHECK(cudaEventCreate(&stop));
      group.wait(from, to);
      CUDA_CHECK(cudaEventRecord(start, group.stream(from)));
      for (int i = 0; i < repeats; ++i) group.put(from, src.on(from), to, dst.on(to), bytes);
      CUDA_CHECK(cudaEventRecord(stop, group.stream(from)));
      CUDA_CHECK(cudaEventSynchronize(stop));
      float ms = 0.0f;
      CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
      CUDA_CHECK(cudaEventDestroy(start));
      CUDA_CHECK(cudaEventDestroy(stop));
      expected = 1e-3 * ms / repeats;
    }
    const double seconds = time_peer_copy(group, from, to, src.on(from), dst.on(to), bytes, repeats);
    EXPECT_NEAR(seconds, expected, 0.05 * expected)
        << from << " -> " << to << ", " << bytes << " bytes: time_peer_copy returned " << seconds << " s per copy, "
        << "the copies took " << expected << " s each on the modelled link (this run's link: "
        << drawn.pinned_bytes_per_second / 1e9 << " GB/s, " << drawn.latency_seconds * 1e6 << " us per copy, "
        << "drawn per run); time them with events recorded on the sender's stream around the copies, and divide "
        << "by the repeats";
  }
}
#endif
