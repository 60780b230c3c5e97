// Tests for exercise 02/02 stream (contract: lessons/02-roofline/stream.hpp).
// Run: ./course test 02/stream

#include "stream.hpp"

#include <cuda_runtime.h>

#include "course_test.hpp"
#include "cuda_check.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace ct = course::test;

namespace {

enum class Kind { copy, scale, add, triad };

const char* name_of(Kind k) {
  switch (k) {
    case Kind::copy: return "copy";
    case Kind::scale: return "scale";
    case Kind::add: return "add";
    default: return "triad";
  }
}

bool reads_y(Kind k) { return k == Kind::add || k == Kind::triad; }

/// STREAM's bytes per element: 8 for copy and scale, 12 for add and triad.
std::uint64_t bytes_per_element(Kind k) { return reads_y(k) ? 12u : 8u; }

std::vector<double> cpu_stream(Kind k, const std::vector<float>& x, const std::vector<float>& y,
                               float s) {
  std::vector<double> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    switch (k) {
      case Kind::copy: out[i] = x[i]; break;
      case Kind::scale: out[i] = double(s) * x[i]; break;
      case Kind::add: out[i] = double(x[i]) + y[i]; break;
      case Kind::triad: out[i] = double(x[i]) + double(s) * y[i]; break;
    }
  }
  return out;
}

void launch(Kind k, const float* x, const float* y, float* out, float s, int n, int blocks = 0,
            int threads = 256) {
  switch (k) {
    case Kind::copy: launch_stream_copy(x, out, n, blocks, threads); break;
    case Kind::scale: launch_stream_scale(x, out, s, n, blocks, threads); break;
    case Kind::add: launch_stream_add(x, y, out, n, blocks, threads); break;
    case Kind::triad: launch_stream_triad(x, y, out, s, n, blocks, threads); break;
  }
}

/// Scale factor away from 0 and 1 with a random sign, so "out = x" fails scale and triad.
float random_scalar(ct::Rng& rng) {
  const double m = rng.scalar(1.5, 3.0);
  return static_cast<float>(rng.integer(0, 1) ? m : -m);
}

/// Runs one kernel on fresh inputs of length n whose pointers start `offset` floats past an
/// allocation (offset_x, offset_y, offset_out in 0..3: 0 is 256-byte aligned), with the
/// output poisoned and followed by a guard; compares with the CPU and checks the guard.
/// `traffic` (optional) receives the counted bytes of the launch.
::testing::AssertionResult stream_matches_cpu(ct::Rng& rng, Kind k, int n, int offset_x,
                                              int offset_y, int offset_out, int blocks = 0,
                                              int threads = 256,
                                              ct::GlobalTraffic* traffic = nullptr) {
  const float s = random_scalar(rng);
  const auto x = rng.nonzero(n), y = rng.nonzero(n);
  auto padded = [](const std::vector<float>& v, int offset) {
    std::vector<float> p(offset, 7.0f);
    p.insert(p.end(), v.begin(), v.end());
    p.resize(p.size() + 4, 7.0f);
    return p;
  };
  ct::DeviceBuffer<float> d_x(padded(x, offset_x)), d_y(padded(y, offset_y));
  ct::DeviceBuffer<float> d_out(offset_out + n + ct::kGuardElements);
  d_out.poison();
  {
    // The guard after the output: a kernel that writes past n overwrites it.
    std::vector<float> head_and_guard(offset_out + n + ct::kGuardElements,
                                      std::numeric_limits<float>::quiet_NaN());
    const auto guard = ct::guard_pattern<float>();
    std::copy(guard.begin(), guard.end(), head_and_guard.begin() + offset_out + n);
    d_out.upload(head_and_guard);
  }
  const float* px = d_x.get() + offset_x;
  const float* py = reads_y(k) ? d_y.get() + offset_y : nullptr;
  float* pout = d_out.get() + offset_out;
  const auto counted =
      ct::count_global_traffic([&] { launch(k, px, py, pout, s, n, blocks, threads); });
  if (traffic != nullptr) *traffic = counted;
  const auto all = d_out.download();
  const std::vector<float> result(all.begin() + offset_out, all.begin() + offset_out + n);
  std::string where = std::string(name_of(k)) + ", n = " + std::to_string(n) +
                      ", s = " + std::to_string(s) + ", pointer offsets (floats past a " +
                      "16-byte boundary) x/y/out = " + std::to_string(offset_x) + "/" +
                      std::to_string(offset_y) + "/" + std::to_string(offset_out) +
                      (blocks ? ", grid " + std::to_string(blocks) + " x " + std::to_string(threads)
                              : std::string(", default grid"));
  const auto values = ct::all_close(cpu_stream(k, x, y, s), result, ct::elementwise_tolerance());
  if (!values) return ::testing::AssertionFailure() << where << ":\n" << values.message();
  const auto guard = ct::guard_untouched(all, offset_out + n);
  if (!guard) return ::testing::AssertionFailure() << where << ":\n" << guard.message();
  return ::testing::AssertionSuccess();
}

void check_awkward_sizes(Kind k) {
  ct::Rng rng;
  // The awkward sizes, and more that are not multiples of 4 (tails of 1, 2 and 3
  // elements). Stops at the first wrong size: one clear message rather than twenty.
  std::vector<int> sizes = ct::awkward_sizes(256);
  for (int n : {3, 5, 6, 7, 1022, 1023, 100001}) sizes.push_back(n);
  for (int n : sizes) {
    const auto result = stream_matches_cpu(rng, k, n, 0, 0, 0);
    EXPECT_TRUE(result);
    if (!result) break;
  }
}

}  // namespace

TEST(StreamCopy, MatchesCpuOnAwkwardSizes) { check_awkward_sizes(Kind::copy); }
TEST(StreamScale, MatchesCpuOnAwkwardSizes) { check_awkward_sizes(Kind::scale); }
TEST(StreamAdd, MatchesCpuOnAwkwardSizes) { check_awkward_sizes(Kind::add); }
TEST(StreamTriad, MatchesCpuOnAwkwardSizes) { check_awkward_sizes(Kind::triad); }

TEST(Stream, HandlesPointersThatAreNot16ByteAligned) {
  // Same offset for all: a scalar head of 4 - offset elements, then float4s.
  // Different offsets: float4 cannot line up for all of them; every access is scalar.
  ct::Rng rng;
  struct Offsets { int x, y, out; };
  for (Kind k : {Kind::copy, Kind::scale, Kind::add, Kind::triad}) {
    for (Offsets o : {Offsets{1, 1, 1}, Offsets{2, 2, 2}, Offsets{3, 3, 3}, Offsets{0, 1, 2},
                      Offsets{3, 0, 0}, Offsets{0, 0, 1}}) {
      for (int n : {1, 2, 3, 4, 5, 129, 4097, 65537}) {
        const auto result = stream_matches_cpu(rng, k, n, o.x, o.y, o.out);
        EXPECT_TRUE(result);
        if (!result) break;  // the next offsets, rather than every size of these
      }
    }
  }
}

TEST(Stream, GridStrideLoopCoversAnyGrid) {
  // Far fewer threads than float4s: each thread must loop, in the head, body and tail.
  ct::Rng rng;
  struct Grid { int n, blocks, threads; };
  for (Kind k : {Kind::copy, Kind::triad}) {
    for (Grid g : {Grid{100003, 3, 64}, Grid{4099, 1, 1}, Grid{1000, 1, 32}, Grid{7, 1, 1},
                   Grid{ct::large_size(), 5, 128}, Grid{100, 64, 256}}) {
      const auto aligned = stream_matches_cpu(rng, k, g.n, 0, 0, 0, g.blocks, g.threads);
      EXPECT_TRUE(aligned);
      const auto offset = stream_matches_cpu(rng, k, g.n, 3, 3, 3, g.blocks, g.threads);
      EXPECT_TRUE(offset);
      if (!aligned || !offset) break;
    }
  }
}

TEST(Stream, MovesExactlyTheBytesStreamCounts) {
  // copy and scale read x and write out: 8 bytes per element; add and triad also read y:
  // 12. Every element once: no element loaded twice, none skipped, y untouched by copy and
  // scale. Counted by the simulator, including with misaligned pointers.
  ct::Rng rng;
  bool counted = true;
  std::string why_not;
  for (Kind k : {Kind::copy, Kind::scale, Kind::add, Kind::triad}) {
    for (int n : {1, 7, 4097, ct::large_size()}) {
      for (int offset : {0, 1}) {
        ct::GlobalTraffic traffic;
        EXPECT_TRUE(stream_matches_cpu(rng, k, n, offset, offset, offset, 0, 256, &traffic));
        if (!traffic.counted) {
          counted = false;
          why_not = traffic.why_not;
          continue;
        }
        const std::uint64_t per = bytes_per_element(k);
        EXPECT_EQ(traffic.bytes(), per * n)
            << name_of(k) << ", n = " << n << ", offset " << offset << ": expected " << per
            << " bytes per element (" << per * n << "), counted " << traffic.load_bytes
            << " loaded + " << traffic.store_bytes << " stored";
        EXPECT_EQ(traffic.store_bytes, 4u * n) << name_of(k) << ", n = " << n << ": stores";
      }
    }
  }
  if (!counted) GTEST_SKIP() << "values checked; byte counts not checked: " << why_not;
}

TEST(Stream, UsesSixteenByteAccessesWhenTheArraysAreAligned) {
  // The contract's float4 accesses: a warp's 32 lanes then move 512 contiguous bytes per
  // instruction, a quarter of the instructions of scalar code for the same bytes. With aligned
  // pointers and n a multiple of 4 there is no head and no tail: every access is 16 bytes. At
  // the performance case's size and at one drawn from the run's seed too, so that the float4
  // path cannot be kept for the one size a test looks at.
  ct::Rng rng;
  const int drawn = 4 * static_cast<int>(rng.integer(1024, 16384));
  for (Kind k : {Kind::copy, Kind::scale, Kind::add, Kind::triad}) {
    for (int n : {1 << 16, 1 << 20, drawn}) {
      ct::GlobalTraffic traffic;
      ASSERT_TRUE(stream_matches_cpu(rng, k, n, 0, 0, 0, 0, 256, &traffic));
      if (!traffic.counted) GTEST_SKIP() << traffic.why_not;
      EXPECT_EQ(16 * traffic.accesses_by_width[4], traffic.bytes())
          << name_of(k) << ", n = " << n << ": " << traffic.accesses_by_width[4] << " 16-byte accesses, "
          << traffic.accesses_by_width[2] << " 4-byte ones; load and store float4 "
          << "(reinterpret_cast<const float4*>) for the aligned bulk of the arrays";
      EXPECT_LE(traffic.sectors_per_request(), 16.0)
          << name_of(k) << ", n = " << n << ": " << traffic.sectors_per_request() << " sectors per warp-wide "
          << "access; a warp's 32 float4 should be 512 neighbouring bytes (16 sectors)";
    }
  }
}

TEST(Stream, UsesSixteenByteAccessesWithAHeadAndATail) {
  // The contract's head/body/tail split: where all pointers share one offset from a 16-byte
  // boundary, only the head (up to 3 elements before the boundary) and the tail (up to 3 after
  // the last whole float4) are scalar; the bulk still moves in 16-byte accesses. Two cases
  // drawn from the run's seed: a misaligned start (offset 1 to 3 floats, any n) and aligned
  // pointers with a tail (n not a multiple of 4), at sizes from 4096 to 65539, so that the
  // float4 path cannot be kept for aligned arrays of a multiple of 4 floats only.
  ct::Rng rng;
  const int offset = rng.integer(1, 3);
  const int misaligned_n = 4 * rng.integer(1024, 16384) + rng.integer(0, 3);
  const int tail_n = 4 * rng.integer(1024, 16384) + rng.integer(1, 3);
  struct Case { int n, offset; };
  for (Kind k : {Kind::copy, Kind::scale, Kind::add, Kind::triad}) {
    for (Case c : {Case{misaligned_n, offset}, Case{tail_n, 0}}) {
      ct::GlobalTraffic traffic;
      ASSERT_TRUE(stream_matches_cpu(rng, k, c.n, c.offset, c.offset, c.offset, 0, 256, &traffic));
      if (!traffic.counted) GTEST_SKIP() << traffic.why_not;
      // The head and the tail hold at most 6 elements; 8 elements' bytes leave room.
      const std::uint64_t wide = 16 * traffic.accesses_by_width[4];
      const std::uint64_t allowed_narrow = 8 * bytes_per_element(k);
      EXPECT_GE(wide + allowed_narrow, traffic.bytes())
          << name_of(k) << ", n = " << c.n << ", all pointers " << c.offset << " floats past a 16-byte boundary: "
          << traffic.bytes() - std::min(wide, traffic.bytes()) << " of " << traffic.bytes()
          << " bytes moved in narrower accesses than 16 bytes (" << traffic.accesses_by_width[4]
          << " 16-byte accesses, " << traffic.accesses_by_width[2] << " 4-byte ones); only the head (up to the "
          << "first 16-byte boundary) and the tail (after the last whole float4) should be scalar";
    }
  }
}
