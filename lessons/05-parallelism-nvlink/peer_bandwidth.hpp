/// @file peer_bandwidth.hpp
/// @brief Contract of exercise 05/01 `peer_bandwidth`: peer copies between ranks, the
/// bandwidth of every link, and the topology matrix.
///
/// Implemented by `exercises/05-parallelism-nvlink/01_peer_bandwidth.cu`, tested by
/// `autograder/tests/05-parallelism-nvlink/test_peer_bandwidth.cpp`. Ranks: `ranks.hpp`.
#pragma once

#include <cuda_runtime.h>

#include "ranks.hpp"

#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

/// Copies `bytes` from `src` (rank `from`'s memory) to `dst` (rank `to`'s memory) `repeats`
/// times with `group.put`, timed with CUDA events on rank `from`'s stream, and returns the
/// seconds one copy took on average. Exactly `repeats` copies of `bytes` cross the link from
/// `device(from)` to `device(to)`, nothing else. `from == to` times a copy inside one device.
///
/// @param repeats number of copies, >= 1
/// @return seconds per copy, > 0
/// @throws course::CudaError on CUDA failures
double time_peer_copy(course::RankGroup& group, int from, int to, const void* src, void* dst,
                      std::size_t bytes, int repeats);

/// Bandwidth of every ordered pair of ranks: `gb_per_s[from * ranks + to]` in GB/s
/// (10^9 bytes per second) for copies of `bytes` from `from` to `to`; the diagonal is a copy
/// inside one rank's device.
struct BandwidthMatrix {
  int ranks = 0;
  std::vector<double> gb_per_s;
  double at(int from, int to) const { return gb_per_s.at(static_cast<std::size_t>(from) * ranks + to); }
};

/// Measures every ordered pair (the diagonal too) with `time_peer_copy`, on two buffers of
/// `bytes` per rank it allocates, `repeats` copies per pair: n·n·repeats copies in all.
/// @throws course::CudaError on CUDA failures
BandwidthMatrix measure_peer_bandwidth(course::RankGroup& group, std::size_t bytes, int repeats);

/// The matrix as text, one row per source rank (given): the device of each rank and whether
/// each pair of devices has direct peer access ("P" after the number), e.g.
/// @code
///   GB/s     to 0 (d0)  to 1 (d1)
///   from 0     1650.2     389.1 P
///   from 1      388.7 P  1648.9
/// @endcode
inline std::string format_topology(const course::RankGroup& group, const BandwidthMatrix& m) {
  std::string text = "GB/s    ";
  char cell[64];
  for (int to = 0; to < m.ranks; ++to) {
    std::snprintf(cell, sizeof cell, "  to %d (d%d)", to, group.device(to));
    text += cell;
  }
  text += "\n";
  for (int from = 0; from < m.ranks; ++from) {
    std::snprintf(cell, sizeof cell, "from %-3d", from);
    text += cell;
    for (int to = 0; to < m.ranks; ++to) {
      const bool direct = group.device(from) != group.device(to) && group.peer_access(from, to);
      std::snprintf(cell, sizeof cell, " %9.1f %s", m.at(from, to), direct ? "P" : " ");
      text += cell;
    }
    text += "\n";
  }
  return text;
}
