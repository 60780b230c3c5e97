// What the asynchronous copies of CUDA 11 (<cuda/pipeline>, <cuda/barrier>,
// <cooperative_groups/memcpy_async.h>, <cuda_pipeline.h>) share in the simulator.
//
// On a GPU these copies move global memory into shared memory in the background while the
// thread goes on, and a wait (on a pipeline, a barrier or the group) says when the bytes have
// landed. The simulator copies at once, in the calling thread, with ordinary loads and stores,
// so the memory counters see exactly the bytes a GPU moves and memcheck checks both ranges.
// Every wait is then already satisfied for the thread's own bytes; where other threads' bytes
// are awaited (a collective copy), the wait synchronises the group, which is what the wait
// guarantees on a GPU. A copy that a program reads before waiting for it reads the right bytes
// here: that bug is not caught.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cuda {

/// How far a synchronisation object reaches (libcu++'s cuda::thread_scope).
enum thread_scope {
  thread_scope_system = 0,
  thread_scope_device = 1,
  thread_scope_block = 2,
  thread_scope_thread = 3,
};

/// A size that the caller promises is a multiple of Alignment, as are the pointers it goes with.
template <std::size_t Alignment>
struct aligned_size_t {
  static constexpr std::size_t align = Alignment;
  std::size_t value;
  explicit constexpr aligned_size_t(std::size_t size) : value(size) {}
  constexpr operator std::size_t() const { return value; }
};

}  // namespace cuda

namespace cudasim::detail {

/// One load and one store of a Word per step, written as such: a memcpy, even of a constant
/// size, may reach the instrumentation as a call that it does not see (clang 22 leaves it so),
/// and the counters would miss the bytes. may_alias: the words are read from and written to
/// memory of any type.
template <class Word>
inline void copy_words(char* dst, const char* src, std::size_t bytes, std::size_t rank, std::size_t count) {
  typedef Word AnyWord __attribute__((may_alias));
  for (std::size_t at = rank * sizeof(Word); at < bytes; at += count * sizeof(Word))
    *reinterpret_cast<AnyWord*>(dst + at) = *reinterpret_cast<const AnyWord*>(src + at);
}

/// The share of a copy of `bytes` from `src` to `dst` that thread `rank` of `count` moves: every
/// count-th word from its rank on, in the widest word that the pointers and the size allow, as a
/// GPU spreads a collective copy over the group.
inline void copy_share(void* dst, const void* src, std::size_t bytes, std::size_t rank, std::size_t count) {
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  const auto alignment = reinterpret_cast<std::uintptr_t>(d) | reinterpret_cast<std::uintptr_t>(s) | bytes;
  typedef unsigned Word16 __attribute__((vector_size(16)));
  if (alignment % 16 == 0) return copy_words<Word16>(d, s, bytes, rank, count);
  if (alignment % 8 == 0) return copy_words<unsigned long long>(d, s, bytes, rank, count);
  if (alignment % 4 == 0) return copy_words<unsigned>(d, s, bytes, rank, count);
  copy_words<unsigned char>(d, s, bytes, rank, count);
}

}  // namespace cudasim::detail
