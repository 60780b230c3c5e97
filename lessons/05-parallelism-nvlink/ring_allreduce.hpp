/// @file ring_allreduce.hpp
/// @brief Contract of exercise 05/02 `ring_allreduce`: the sum of a vector over all ranks,
/// left on every rank, by a ring (reduce-scatter, then all-gather).
///
/// Implemented by `exercises/05-parallelism-nvlink/02_ring_allreduce.cu`, tested by
/// `autograder/tests/05-parallelism-nvlink/test_ring_allreduce.cpp`. Ranks: `ranks.hpp`.
///
/// The ring: rank r sends only to rank (r+1) mod n and receives only from (r-1) mod n, so
/// with one GPU per rank every link carries the same load and none is idle. The vector is
/// cut into n chunks (`course::part_of(count, n, c)`, sizes differ by at most one element).
/// - reduce-scatter, n-1 steps: in step s rank r sends chunk (r - s) mod n to rank r+1, which
///   adds it into its own copy of that chunk. After n-1 steps rank r holds the full sum of
///   chunk (r + 1) mod n.
/// - all-gather, n-1 steps: in step s rank r sends chunk (r + 1 - s) mod n, which it holds
///   complete, to rank r+1, which stores it.
/// Each rank sends 2(n-1) chunks, 2(n-1)/n·S bytes for a vector of S bytes (exactly, when n
/// divides the count; in all cases 2(n-1)·S over all links together), independent of n for
/// large n: the reason NCCL uses it for large messages.
#pragma once

#include <cuda_runtime.h>

#include "ranks.hpp"

#include <cstddef>

/// Floats of scratch each rank needs: one chunk, the largest of n (ceil(count / n)).
inline std::size_t ring_allreduce_scratch_floats(std::size_t count, int ranks) {
  return ranks <= 0 ? 0 : (count + static_cast<std::size_t>(ranks) - 1) / static_cast<std::size_t>(ranks);
}

/// In-place sum all-reduce: afterwards `data.on(r)[i]` is the sum over all ranks q of the
/// value `data.on(q)[i]` had before, for i < `count`, on every rank r; nothing at or past
/// `count` is written. Ring algorithm as described above, with `group.put` (queued on the
/// sender's stream) and an add kernel on the receiver's stream; queues the work and returns
/// (no host synchronisation). A group of one rank returns at once.
///
/// @param data    `count` floats or more per rank (read and written)
/// @param count   elements to reduce, >= 0; need not be a multiple of the rank count
/// @param scratch at least `ring_allreduce_scratch_floats(count, n)` floats per rank
/// @throws course::CudaError on CUDA failures
void ring_allreduce(course::RankGroup& group, course::SymmetricBuffer<float>& data,
                    std::size_t count, course::SymmetricBuffer<float>& scratch);

/// Bandwidth figures of one all-reduce, as nccl-tests report them (bytes per second).
struct AllReduceBandwidth {
  double algbw;  ///< algorithm bandwidth: S / t, the vector's size over the time
  double busbw;  ///< bus bandwidth: algbw · 2(n-1)/n, comparable with the link's speed
};

/// The figures for an all-reduce of `bytes` over `ranks` ranks that took `seconds`.
AllReduceBandwidth allreduce_bandwidth(double bytes, int ranks, double seconds);
