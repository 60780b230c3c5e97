/// @file cooperative_groups.h
/// @brief The simulator's stand-in for CUDA's cooperative groups: the thread block, its tiles
/// (static `thread_block_tile<N>` and dynamic `tiled_partition(block, n)`) and their
/// collectives, on top of the simulator's barriers and warp operations.
///
/// Every collective is one of the simulator's barriers or warp operations over the group's
/// threads, called with the caller's file and line: `block.sync()` is `__syncthreads()`, a
/// tile's `sync()` is `__syncwarp(tile lanes)`, its `shfl_down` is `__shfl_down_sync(tile lanes,
/// v, d, N)`, so divergence and deadlock inside a group are reported with both call sites as for
/// the plain intrinsics. Tiles partition the block by thread rank, as in CUDA. A tile of 64,
/// 128, 256 or 512 threads (whole warps; CUDA 11+) has the collectives CUDA gives such tiles:
/// `sync()`, `shfl(v, rank)`, `any`, `all`, and `cooperative_groups::reduce`, each a barrier over
/// the tile's threads in the simulator (`block_tile_memory`, which CUDA needs for them before
/// sm_80, is accepted and not needed).
///
/// The grid: `this_grid()` gives a `grid_group`, whose `sync()` is a grid-wide barrier in a
/// kernel launched with cudaLaunchCooperativeKernel (which runs every block of the grid at once,
/// each on an OS thread of its own). It is first a block barrier at the caller's call site, with
/// the same divergence reports, then a wait for every other block; a block that exits without
/// reaching it, or blocks waiting at different grid.sync() calls, are reported as a deadlock.
/// Outside a cooperative launch `sync()` ends the launch with a message; `is_valid()` is true in
/// every launch, as CUDA 13 answers it (measured on an H200, 2026-11-27), so it cannot tell.
///
/// `coalesced_threads()` gives the lanes of the caller's warp that reach that call together. The
/// simulator does not run a warp's lanes in lock step: a lane waits at the call until no thread
/// of its block can run on without waiting, and the lanes then waiting at that call site form
/// the group (lanes that took another branch have exited or wait elsewhere by then).
///
/// Shuffles move any trivially copyable type (larger than 8 bytes in 4-byte words), as in CUDA.
///
/// Not supported, each a compile error that names it: tiles of 1024 threads or of other sizes,
/// `this_multi_grid()`, clusters.
#pragma once

#include "cudasim/builtin_memory.hpp"

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cuda_runtime.h"

namespace cooperative_groups {

namespace details {
/// The calling thread's rank in its block (x fastest, as warps are formed).
inline unsigned block_rank() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }
inline unsigned block_size() { return blockDim.x * blockDim.y * blockDim.z; }
/// The lanes of the caller's warp in its tile of `tile_size` threads (a power of two <= 32).
inline unsigned tile_lanes(unsigned tile_size) {
  const unsigned lane = block_rank() % 32;
  const unsigned lanes = tile_size == 32 ? 0xffffffffu : ((1u << tile_size) - 1);
  return lanes << (lane / tile_size * tile_size);
}
/// For static_asserts that fire only when a template is used.
template <class T>
inline constexpr bool unsupported = false;
/// A group's shuffle of `var`, which may be any trivially copyable type, as in CUDA: a scalar
/// of up to 8 bytes takes one warp shuffle (`shuffle(var)`), anything else one per 4-byte word.
/// (The simulator's vector types, such as uint4, count their copies in instrumented builds, so
/// they are not trivially copyable there; they go word by word.)
template <class T, class Shuffle>
T shuffle_any(const T& var, Shuffle shuffle) {
  static_assert(std::is_trivially_destructible_v<T>, "cooperative groups shuffle trivially copyable values");
  if constexpr (sizeof(T) <= 8 && std::is_trivially_copyable_v<T>) {
    return shuffle(var);
  } else {
    constexpr std::size_t words = (sizeof(T) + 3) / 4;
    unsigned in[words] = {}, out[words];
    // Through void*: the vector types are not trivially copyable in instrumented builds (see
    // above), and newer clangs warn about a memcpy into or out of such a type.
    ::cudasim::detail::uncounted_memcpy(in, static_cast<const void*>(&var), sizeof(T));
    for (std::size_t i = 0; i < words; ++i) out[i] = shuffle(in[i]);
    T result;
    ::cudasim::detail::uncounted_memcpy(static_cast<void*>(&result), out, sizeof(T));
    return result;
  }
}
}  // namespace details

/// Any group: the whole block, or a tile of it made by tiled_partition(parent, n).
class thread_group {
 public:
  unsigned long long size() const { return size_; }
  unsigned long long num_threads() const { return size_; }
  unsigned long long thread_rank() const { return tiled_ ? details::block_rank() % size_ : details::block_rank(); }
  /// Waits for every thread of the group (`__syncthreads()` for a block, `__syncwarp(tile
  /// lanes)` for a tile).
  void sync(const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) const {
    if (tiled_)
      __syncwarp(details::tile_lanes(size_), file, line);
    else
      __syncthreads(file, line);
  }
  /// For a tile: its index among its parent's tiles, and how many there are.
  unsigned meta_group_rank() const { return meta_rank_; }
  unsigned meta_group_size() const { return meta_size_; }

 protected:
  thread_group(bool tiled, unsigned size, unsigned meta_rank, unsigned meta_size)
      : tiled_(tiled), size_(size), meta_rank_(meta_rank), meta_size_(meta_size) {}
  bool tiled_;
  unsigned size_;
  unsigned meta_rank_;
  unsigned meta_size_;
  friend thread_group tiled_partition(const thread_group& parent, unsigned tile_size);
};

/// The calling thread's block.
class thread_block : public thread_group {
 public:
  static void sync(const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) { __syncthreads(file, line); }
  static unsigned size() { return details::block_size(); }
  static unsigned num_threads() { return details::block_size(); }
  static unsigned thread_rank() { return details::block_rank(); }
  /// blockIdx, threadIdx and blockDim.
  static dim3 group_index() { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
  static dim3 thread_index() { return dim3(threadIdx.x, threadIdx.y, threadIdx.z); }
  static dim3 group_dim() { return blockDim; }
  static dim3 dim_threads() { return blockDim; }

 private:
  thread_block() : thread_group(false, details::block_size(), 0, 1) {}
  friend thread_block this_thread_block();
};

inline thread_block this_thread_block() { return thread_block(); }

/// Shared scratch that CUDA needs for tiles of more than 32 threads before sm_80, passed to
/// this_thread_block(scratch). The simulator's tiles need none: it is accepted and unused.
template <unsigned MaxBlockSize = 1024, unsigned TileCommunicationSize = 8, unsigned MaxNumTiles = 32>
struct block_tile_memory {
  static_assert(MaxBlockSize >= 1 && MaxBlockSize <= 1024, "block_tile_memory: MaxBlockSize is 1 to 1024");
};
template <unsigned MaxBlockSize, unsigned TileCommunicationSize, unsigned MaxNumTiles>
thread_block this_thread_block(block_tile_memory<MaxBlockSize, TileCommunicationSize, MaxNumTiles>&) {
  return this_thread_block();
}

/// Waits for every thread of `group`.
template <class Group>
inline void sync(const Group& group, const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) {
  group.sync(file, line);
}

namespace details {
/// The sizes a static tile may have: a power of two up to a warp, or 64 to 512 (whole warps).
template <unsigned Size>
inline constexpr bool valid_tile_size = (Size >= 1 && Size <= 512 && (Size & (Size - 1)) == 0);

/// A tile of `Size` threads (a power of two up to 32) of its parent group, with the warp
/// collectives over its threads.
template <unsigned Size>
class warp_tile : public thread_group {
 public:
  /// The tile of the calling thread, `meta_rank`-th of `meta_size` tiles of the parent.
  warp_tile(unsigned meta_rank, unsigned meta_size) : thread_group(true, Size, meta_rank, meta_size) {}

  static constexpr unsigned num_threads() { return Size; }
  static constexpr unsigned size() { return Size; }
  unsigned thread_rank() const { return details::block_rank() % Size; }
  void sync(const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) const {
    __syncwarp(details::tile_lanes(Size), file, line);
  }

  /// The value of `var` in the tile's thread `source` (modulo Size).
  template <class T>
  T shfl(T var, int source, const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) const {
    return details::shuffle_any(var, [&](auto v) { return __shfl_sync(details::tile_lanes(Size), v, source, Size, file, line); });
  }
  template <class T>
  T shfl_down(T var, unsigned delta, const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) const {
    return details::shuffle_any(
        var, [&](auto v) { return __shfl_down_sync(details::tile_lanes(Size), v, delta, Size, file, line); });
  }
  template <class T>
  T shfl_up(T var, unsigned delta, const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) const {
    return details::shuffle_any(
        var, [&](auto v) { return __shfl_up_sync(details::tile_lanes(Size), v, delta, Size, file, line); });
  }
  template <class T>
  T shfl_xor(T var, unsigned lane_mask, const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) const {
    return details::shuffle_any(
        var, [&](auto v) { return __shfl_xor_sync(details::tile_lanes(Size), v, lane_mask, Size, file, line); });
  }
  int any(int predicate, const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) const {
    return __any_sync(details::tile_lanes(Size), predicate, file, line);
  }
  int all(int predicate, const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) const {
    return __all_sync(details::tile_lanes(Size), predicate, file, line);
  }
  /// Bit i is set when the tile's thread i passed a non-zero predicate.
  unsigned ballot(int predicate, const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) const {
    const unsigned lanes = details::tile_lanes(Size);
    return (__ballot_sync(lanes, predicate, file, line) & lanes) >> __builtin_ctz(lanes);
  }
  /// The tile's threads holding the same value, as bits by thread rank.
  template <class T>
  unsigned match_any(T value, const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) const {
    const unsigned lanes = details::tile_lanes(Size);
    return __match_any_sync(lanes, value, file, line) >> __builtin_ctz(lanes);
  }
  template <class T>
  unsigned match_all(T value, int& predicate, const char* file = __builtin_FILE(),
                     unsigned line = __builtin_LINE()) const {
    const unsigned lanes = details::tile_lanes(Size);
    return __match_all_sync(lanes, value, &predicate, file, line) >> __builtin_ctz(lanes);
  }
};

/// A tile of `Size` threads, 64 to 512 (whole warps), with the collectives CUDA gives such
/// tiles, each a barrier over the tile's threads (cudasim::detail::tile_collective).
template <unsigned Size>
class multi_warp_tile : public thread_group {
 public:
  multi_warp_tile(unsigned meta_rank, unsigned meta_size) : thread_group(true, Size, meta_rank, meta_size) {}

  static constexpr unsigned num_threads() { return Size; }
  static constexpr unsigned size() { return Size; }
  unsigned thread_rank() const { return details::block_rank() % Size; }
  void sync(const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) const {
    cudasim::detail::tile_collective(cudasim::detail::TileOp::Sync, Size, 0, 0, file, line);
  }
  /// The value of `var` in the tile's thread `source` (modulo Size); at most 8 bytes, as in CUDA.
  template <class T>
  T shfl(T var, unsigned source, const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) const {
    static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>,
                  "a tile of more than 32 threads shuffles trivially copyable values of at most 8 bytes");
    std::uint64_t bits = 0;
    ::cudasim::detail::uncounted_memcpy(&bits, &var, sizeof(T));
    bits = cudasim::detail::tile_collective(cudasim::detail::TileOp::Shfl, Size, bits, static_cast<int>(source % Size),
                                            file, line);
    T result;
    ::cudasim::detail::uncounted_memcpy(&result, &bits, sizeof(T));
    return result;
  }
  int any(int predicate, const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) const {
    return static_cast<int>(
        cudasim::detail::tile_collective(cudasim::detail::TileOp::Any, Size, predicate != 0, 0, file, line));
  }
  int all(int predicate, const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) const {
    return static_cast<int>(
        cudasim::detail::tile_collective(cudasim::detail::TileOp::All, Size, predicate != 0, 0, file, line));
  }
};

template <unsigned Size>
using tile_base = std::conditional_t<(Size <= 32), warp_tile<Size>, multi_warp_tile<Size>>;
}  // namespace details

/// A tile of `Size` threads of its parent group: a power of two up to 32 with the warp
/// collectives over its lanes, or 64 to 512 threads with sync, shfl, any and all. `Parent` only
/// records where it came from, as in CUDA.
template <unsigned Size, class Parent = void>
class thread_block_tile : public details::tile_base<Size> {
  static_assert(details::valid_tile_size<Size>,
                "cudasim: thread_block_tile supports sizes that are powers of two up to 512 "
                "(as CUDA does)");

 public:
  /// The tile of the calling thread, `meta_rank`-th of `meta_size` tiles of the parent.
  thread_block_tile(unsigned meta_rank, unsigned meta_size) : details::tile_base<Size>(meta_rank, meta_size) {}
  /// A tile with a parent type converts to one without (and back), as in CUDA.
  template <class OtherParent>
  thread_block_tile(const thread_block_tile<Size, OtherParent>& other)  // NOLINT(google-explicit-constructor)
      : details::tile_base<Size>(other.meta_group_rank(), other.meta_group_size()) {}
};

namespace details {
inline unsigned tiles_in(unsigned parent_size, unsigned tile_size) { return (parent_size + tile_size - 1) / tile_size; }
inline unsigned rank_in_parent(const thread_block&) { return block_rank(); }
template <unsigned Size, class Parent>
unsigned rank_in_parent(const thread_block_tile<Size, Parent>& tile) { return tile.thread_rank(); }
}  // namespace details

/// Splits `parent` (the block or a larger tile) into tiles of `Size` threads; returns the
/// caller's.
template <unsigned Size, class Parent>
thread_block_tile<Size, Parent> tiled_partition(const Parent& parent) {
  static_assert(details::valid_tile_size<Size>,
                "cudasim: tiled_partition<N> supports N a power of two up to 512 (as CUDA does)");
  const unsigned parent_size = static_cast<unsigned>(parent.size());
  return thread_block_tile<Size, Parent>(details::rank_in_parent(parent) / Size, details::tiles_in(parent_size, Size));
}

/// Splits `parent` into tiles of `tile_size` threads (a power of two up to 32, and at most the
/// parent's size); returns the caller's.
inline thread_group tiled_partition(const thread_group& parent, unsigned tile_size) {
  if (tile_size == 0 || tile_size > 32 || (tile_size & (tile_size - 1)) != 0 ||
      (parent.tiled_ && tile_size > parent.size_))
    cudasim::detail::trap(
        "tiled_partition(parent, n): the simulator supports n a power of two up to 32 and at most "
        "the parent's size");
  return thread_group(true, tile_size, static_cast<unsigned>(parent.thread_rank()) / tile_size,
                      details::tiles_in(parent.size_, tile_size));
}

/// The whole grid of a cooperative launch (cudaLaunchCooperativeKernel).
class grid_group {
 public:
  /// Waits for every thread of the grid (a cooperative launch only).
  void sync(const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) const {
    cudasim::detail::grid_sync(file, line);
  }
  /// True, as on a GPU with CUDA 13 also outside a cooperative launch (measured on an H200,
  /// 2026-11-27): it does not say whether sync() may be called.
  bool is_valid() const { return true; }
  static unsigned long long size() { return num_threads(); }
  static unsigned long long num_threads() {
    return static_cast<unsigned long long>(num_blocks()) * details::block_size();
  }
  /// The calling thread's rank in the grid: its block's rank times the block size, plus its
  /// rank in the block.
  static unsigned long long thread_rank() {
    return static_cast<unsigned long long>(block_rank()) * details::block_size() + details::block_rank();
  }
  static unsigned num_blocks() { return gridDim.x * gridDim.y * gridDim.z; }
  static unsigned block_rank() { return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z); }
  static dim3 block_index() { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
  static dim3 dim_blocks() { return gridDim; }

 private:
  grid_group() = default;
  friend grid_group this_grid();
};

/// The calling thread's grid.
inline grid_group this_grid() { return grid_group(); }

/// The lanes of a warp that called coalesced_threads() together, ranked by lane. Its
/// collectives are the warp operations over those lanes (every lane of the group must call
/// them, as in CUDA).
class coalesced_group;
namespace details {
struct coalesced_access;
}  // namespace details

class coalesced_group {
 public:
  unsigned long long size() const { return static_cast<unsigned long long>(__builtin_popcount(mask_)); }
  unsigned long long num_threads() const { return size(); }
  /// The caller's rank: how many lanes of the group are below it.
  unsigned long long thread_rank() const {
    return static_cast<unsigned long long>(__builtin_popcount(mask_ & ((1u << lane()) - 1u)));
  }
  unsigned meta_group_rank() const { return 0; }
  unsigned meta_group_size() const { return 1; }
  void sync(const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) const {
    __syncwarp(mask_, file, line);
  }
  /// The value of `var` in the group's thread of rank `source` (modulo the size).
  template <class T>
  T shfl(T var, unsigned source, const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) const {
    const int from = static_cast<int>(lane_of(source % size()));
    return details::shuffle_any(var, [&](auto v) { return __shfl_sync(mask_, v, from, 32, file, line); });
  }
  /// The value of `var` in the thread `delta` ranks above (its own where there is none).
  template <class T>
  T shfl_down(T var, unsigned delta, const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) const {
    const unsigned long long target = thread_rank() + delta;
    const unsigned source = target < size() ? lane_of(target) : lane();
    return details::shuffle_any(var, [&](auto v) { return __shfl_sync(mask_, v, static_cast<int>(source), 32, file, line); });
  }
  /// The value of `var` in the thread `delta` ranks below (its own where there is none).
  template <class T>
  T shfl_up(T var, unsigned delta, const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) const {
    const unsigned long long rank = thread_rank();
    const unsigned source = rank >= delta ? lane_of(rank - delta) : lane();
    return details::shuffle_any(var, [&](auto v) { return __shfl_sync(mask_, v, static_cast<int>(source), 32, file, line); });
  }
  int any(int predicate, const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) const {
    return __any_sync(mask_, predicate, file, line);
  }
  int all(int predicate, const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) const {
    return __all_sync(mask_, predicate, file, line);
  }
  /// Bit i is set when the group's thread of rank i passed a non-zero predicate.
  unsigned ballot(int predicate, const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) const {
    const unsigned lanes = __ballot_sync(mask_, predicate, file, line);
    unsigned bits = 0, rank = 0;
    for (unsigned l = 0; l < 32; ++l) {
      if (!((mask_ >> l) & 1u)) continue;
      if ((lanes >> l) & 1u) bits |= 1u << rank;
      ++rank;
    }
    return bits;
  }

 private:
  explicit coalesced_group(unsigned mask) : mask_(mask) {}
  static unsigned lane() { return details::block_rank() % 32; }
  /// The lane of the group's thread of rank `rank` (< size()).
  unsigned lane_of(unsigned long long rank) const {
    unsigned m = mask_;
    for (unsigned long long i = 0; i < rank; ++i) m &= m - 1;  // drop the lowest lanes
    return static_cast<unsigned>(__builtin_ctz(m));
  }
  unsigned mask_;
  friend coalesced_group coalesced_threads(const char* file, unsigned line);
  friend struct details::coalesced_access;
};

namespace details {
/// What the partitions below need of a coalesced group: its lanes, and a group of given lanes.
struct coalesced_access {
  static unsigned lanes(const coalesced_group& group) { return group.mask_; }
  static coalesced_group of_lanes(unsigned lanes) { return coalesced_group(lanes); }
};
}  // namespace details

/// The lanes of the caller's warp that call this together: those that reach this call while
/// the other lanes have exited, or wait elsewhere. The caller waits here until no thread of its
/// block can run on without waiting, so that every lane that would arrive has.
inline coalesced_group coalesced_threads(const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) {
  return coalesced_group(cudasim::detail::coalesced_lanes(file, line));
}

/// The threads of `parent` that pass the same `label`, as a coalesced group (CUDA 11+, sm_70+):
/// a __match_any_sync of the label over the parent's lanes.
inline coalesced_group labeled_partition(const coalesced_group& parent, unsigned label,
                                         const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) {
  const unsigned lanes = details::coalesced_access::lanes(parent);
  return details::coalesced_access::of_lanes(__match_any_sync(lanes, label, file, line) & lanes);
}
template <unsigned Size, class Parent>
coalesced_group labeled_partition(const thread_block_tile<Size, Parent>& parent, unsigned label,
                                  const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) {
  static_assert(Size <= 32, "labeled_partition and binary_partition take a tile of at most 32 threads (as in CUDA)");
  (void)parent;
  const unsigned lanes = details::tile_lanes(Size);
  return details::coalesced_access::of_lanes(__match_any_sync(lanes, label, file, line) & lanes);
}
/// The threads of `parent` (a coalesced group or a tile) whose predicate is true, or those
/// whose predicate is false: the caller's side (a labeled_partition by 0 or 1).
template <class Group>
coalesced_group binary_partition(const Group& parent, bool predicate, const char* file = __builtin_FILE(),
                                 unsigned line = __builtin_LINE()) {
  return labeled_partition(parent, predicate ? 1u : 0u, file, line);
}

}  // namespace cooperative_groups
