// cudasim's <cooperative_groups/memcpy_async.h>: collective asynchronous copies of a group, and
// the waits for them (see cudasim/async_copy.hpp for how copies run). Each thread of the group
// moves its share of the bytes when it calls memcpy_async; wait and wait_prior synchronise the
// group, after which every share has landed, as CUDA promises.
#pragma once

#include <cooperative_groups.h>

#include <algorithm>
#include <cstddef>

#include "cudasim/async_copy.hpp"

namespace cooperative_groups {

/// Copies `bytes` (a size_t or a cuda::aligned_size_t) from `src` to `dst` with `group`.
template <class Group, class T, class Size>
inline void memcpy_async(const Group& group, T* dst, const T* src, const Size& bytes) {
  ::cudasim::detail::copy_share(dst, src, static_cast<std::size_t>(bytes), group.thread_rank(), group.size());
}
/// Copies min(dst_count, src_count) elements of T.
template <class Group, class T, class DstCount, class SrcCount>
inline void memcpy_async(const Group& group, T* dst, const DstCount& dst_count, const T* src,
                         const SrcCount& src_count) {
  const std::size_t count = std::min(static_cast<std::size_t>(dst_count), static_cast<std::size_t>(src_count));
  ::cudasim::detail::copy_share(dst, src, count * sizeof(T), group.thread_rank(), group.size());
}

/// Waits for the group's copies: a synchronisation of the group.
template <class Group>
inline void wait(const Group& group, const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) {
  group.sync(file, line);
}
/// Waits until at most `NumStages` batches of copies are in flight: here none ever is, but the
/// group still synchronises, so that every thread's share is seen.
template <unsigned NumStages, class Group>
inline void wait_prior(const Group& group, const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) {
  group.sync(file, line);
}

}  // namespace cooperative_groups
