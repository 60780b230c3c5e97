/// @file cooperative_groups/reduce.h
/// @brief `cooperative_groups::reduce` over a tile or a coalesced group, and the operators it takes (`plus`, `less`,
/// `greater`, `bit_and`, `bit_or`, `bit_xor`).
///
/// A reduction is a butterfly of the tile's `shfl_xor` (log2 of its size steps), so every thread
/// of the tile gets the result, as in CUDA, and a thread missing from it is reported like a
/// missing lane of a shuffle. The order in which floating-point values are combined may differ
/// from a GPU's (CUDA does not specify it either). Values of at most 8 bytes, as the simulator's
/// shuffles move them. A tile of 64 to 512 threads reduces each of its warps by a butterfly,
/// then combines the warps' results, broadcast by the tile's `shfl`, in warp order.
#pragma once

#include <type_traits>

#include "cooperative_groups.h"

namespace cooperative_groups {

/// a + b.
template <class T>
struct plus {
  T operator()(const T& a, const T& b) const { return a + b; }
};
/// The smaller of a and b.
template <class T>
struct less {
  T operator()(const T& a, const T& b) const { return b < a ? b : a; }
};
/// The larger of a and b.
template <class T>
struct greater {
  T operator()(const T& a, const T& b) const { return a < b ? b : a; }
};
template <class T>
struct bit_and {
  T operator()(const T& a, const T& b) const { return a & b; }
};
template <class T>
struct bit_or {
  T operator()(const T& a, const T& b) const { return a | b; }
};
template <class T>
struct bit_xor {
  T operator()(const T& a, const T& b) const { return a ^ b; }
};

/// Combines every thread's `value` of `tile` with `op`; every thread gets the result.
template <class T, class Op, unsigned Size, class Parent>
std::decay_t<T> reduce(const thread_block_tile<Size, Parent>& tile, T&& value, Op&& op,
                       const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) {
  std::decay_t<T> result = value;
  if constexpr (Size <= 32) {
    for (unsigned offset = Size / 2; offset > 0; offset /= 2)
      result = op(result, tile.shfl_xor(result, offset, file, line));
  } else {
    // Each warp of the tile first (a butterfly over its full mask), then the warps' results,
    // broadcast from each warp's first thread, combined in warp order.
    for (unsigned offset = 16; offset > 0; offset /= 2)
      result = op(result, __shfl_xor_sync(0xffffffffu, result, offset, 32, file, line));
    std::decay_t<T> total = tile.shfl(result, 0, file, line);
    for (unsigned warp = 1; warp < Size / 32; ++warp) total = op(total, tile.shfl(result, warp * 32, file, line));
    result = total;
  }
  return result;
}

/// Combines every thread's `value` of a coalesced group with `op`, in rank order; every thread
/// gets the result (one shuffle per member: a group has at most 32).
template <class T, class Op>
std::decay_t<T> reduce(const coalesced_group& group, T&& value, Op&& op, const char* file = __builtin_FILE(),
                       unsigned line = __builtin_LINE()) {
  using V = std::decay_t<T>;
  const V mine = value;
  V result = group.shfl(mine, 0, file, line);
  for (unsigned rank = 1; rank < group.size(); ++rank) result = op(result, group.shfl(mine, rank, file, line));
  return result;
}

/// Reductions over a whole block or a dynamic tile need CUDA's scratch memory for blocks; not
/// supported here.
template <class T, class Op>
std::decay_t<T> reduce(const thread_group&, T&&, Op&&, const char* = __builtin_FILE(), unsigned = __builtin_LINE()) {
  static_assert(details::unsupported<T>,
                "cudasim: cooperative_groups::reduce is supported on thread_block_tile<N> (from "
                "tiled_partition<N>) only");
  return {};
}

}  // namespace cooperative_groups
