/// @file device_functions.hpp
/// @brief What kernels call: qualifiers, barriers, warp operations, atomics and the math
/// intrinsics of the CUDA device library, as host C++.
///
/// Barriers and warp operations take the caller's file and line as hidden trailing
/// parameters (filled in by `__builtin_FILE()` / `__builtin_LINE()` at the call site) so that
/// a divergence or deadlock report can name both call sites.
///
/// A kernel whose own body calls `__syncthreads` is compiled as a coroutine: the chevron
/// rewrite turns its barriers into `co_await ::cudasim::detail::await_syncthreads()` and its
/// `return`s into `co_return` (see cudasim_rewrite.cpp). Each simulated thread is then a small
/// coroutine frame instead of a fiber with its own stack: a barrier suspends it and the block
/// scheduler resumes the block's threads one after another, so the code between two barriers
/// runs like a loop over the threads (several times faster than switching stacks).
#pragma once

#include "cudasim/builtin_memory.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <new>
#include <type_traits>

#include <coroutine>
#include "cudasim/execution.hpp"

// ---- qualifiers ----------------------------------------------------------------------------
#define __global__
#define __device__
#define __host__
#define __constant__
// A variable of its own section, which the grader's object check refuses (host code may
// read and write it with no copy the counters see; tools/course/symbol_policy.py).
#define __managed__ __attribute__((section("cudasim_managed")))
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __align__(n) __attribute__((aligned(n)))  // as nvcc defines it: allowed after the type too
#define __launch_bounds__(...)
#define __grid_constant__
/// Block-shared variables: one instance per worker OS thread, and a worker runs one block at a
/// time with all of that block's threads as fibers on that OS thread.
#define __shared__ static thread_local

namespace cudasim::detail {

/// Warp-collective operations, all implemented by one barrier over the lanes in the mask.
enum class WarpOp : int {
  Sync, Ballot, All, Any, ShflIndex, ShflUp, ShflDown, ShflXor, ReduceAdd, ReduceMin, ReduceMax,
  ReduceAnd, ReduceOr, ReduceXor, MatchAny, MatchAll,
};

/// Waits until every lane in `mask` reached the same warp operation, then returns this lane's
/// result. `value` carries the lane's operand bits, `param` the lane/delta/lane-mask operand.
std::uint64_t warp_collective(WarpOp op, unsigned mask, std::uint64_t value, int param, int width,
                              const char* file, unsigned line);

/// Collectives of a tile of whole warps (cooperative_groups' tiles of 64 to 512 threads).
enum class TileOp : int { Sync, Shfl, Any, All };

/// Waits until every thread of the caller's tile (the `tile_size` threads of the block whose
/// linear ranks share rank / tile_size) reached the same operation, then returns this
/// thread's result: Shfl the `value` of the tile's thread `param`, Any and All the predicate
/// (`value`) reduced over the tile, Sync 0.
std::uint64_t tile_collective(TileOp op, unsigned tile_size, std::uint64_t value, int param, const char* file,
                              unsigned line);

/// Block barriers: the plain one and the three that also reduce a predicate over the block.
/// Grid: the block's part of a grid-wide barrier (see grid_sync).
enum class BarrierKind : int { Plain, Count, And, Or, Grid };

/// Waits until every live thread of the block reached the same barrier; returns the
/// reduction of the predicates for Count/And/Or (0 for Plain). For barriers outside a kernel's
/// own body (in a __device__ function): the thread's fiber is parked.
int block_barrier(BarrierKind kind, int predicate, const char* file, unsigned line);

/// What the barrier a resumed thread waited at returns (Count/And/Or).
int released_barrier_result(BarrierKind kind);

/// cooperative_groups' grid_group::sync(): waits until every live thread of the block reached
/// this call (as a block barrier, with its divergence reports), then until every block of the
/// grid did. Ends the launch with a message outside a cooperative launch.
void grid_sync(const char* file, unsigned line);

/// cooperative_groups::coalesced_threads(): the lanes of the caller's warp that call it at the
/// same call site together. The caller waits there until no thread of its block can run on
/// without waiting (every other lane has arrived, exited, or waits elsewhere); the lanes then at
/// this call site form the group, as bits by lane.
unsigned coalesced_lanes(const char* file, unsigned line, const char* what = "coalesced_threads");
/// Memory for a thread's coroutine frame, taken from its worker's frame arena and reclaimed
/// when the block ends. Memory no other pointer points to (`malloc`): what lets the compiler
/// vectorize a fissioned loop that reads a thread's slot and writes shared memory.
__attribute__((malloc)) void* allocate_thread_frame(std::size_t bytes);

/// `co_await` on this is a barrier in a kernel compiled as a coroutine.
template <BarrierKind Kind>
struct BarrierAwaiter {
  int predicate;
  const char* file;
  unsigned line;
  bool await_ready() const noexcept { return false; }
  /// Registers the suspended `thread` as waiting at the barrier; the block scheduler resumes it
  /// once the barrier is released. Returns false (do not suspend) outside a kernel. Defined in
  /// the simulator's library, never inline: clang 14 crashes splitting a coroutine whose
  /// await_suspend body was inlined at two suspend points in different branches.
  bool await_suspend(std::coroutine_handle<> thread) const;
  auto await_resume() const {
    if constexpr (Kind == BarrierKind::Plain)
      return;
    else
      return released_barrier_result(Kind);
  }
};

// What the rewrite puts in place of __syncthreads & co. inside a kernel's body.
inline BarrierAwaiter<BarrierKind::Plain> await_syncthreads(const char* file = __builtin_FILE(),
                                                           unsigned line = __builtin_LINE()) {
  return {0, file, line};
}
inline BarrierAwaiter<BarrierKind::Count> await_syncthreads_count(int predicate,
                                                                 const char* file = __builtin_FILE(),
                                                                 unsigned line = __builtin_LINE()) {
  return {predicate, file, line};
}
inline BarrierAwaiter<BarrierKind::And> await_syncthreads_and(int predicate,
                                                             const char* file = __builtin_FILE(),
                                                             unsigned line = __builtin_LINE()) {
  return {predicate, file, line};
}
inline BarrierAwaiter<BarrierKind::Or> await_syncthreads_or(int predicate, const char* file = __builtin_FILE(),
                                                           unsigned line = __builtin_LINE()) {
  return {predicate, file, line};
}

// ---- loop fission ----------------------------------------------------------------------------
// A kernel with barriers whose barriers all sit where every thread of the block reaches them
// together (at the top level of its body, or of a loop whose trip count is the same for the whole
// block) gets, from the rewrite, a second version of its body: each stretch of code between two
// barriers becomes one loop over the block's threads, and the locals that live across a barrier
// become per-thread arrays (see cudasim_rewrite.cpp, "Loop fission"). That version runs when
// FissionedBlock says so: the block then runs in one call of the kernel, by its first thread,
// with no coroutine suspended or resumed. Thread order, threadIdx, the counters and the reports
// are those of the coroutine version, which runs instead under the checks that reorder threads
// or track them (CUDASIM_CHECK) and with CUDASIM_FISSION=0.

/// If the block may run as loops over its threads and the caller is its first thread: claims
/// every thread of the block for the caller and returns how many there are; else 0.
std::size_t begin_fissioned_block() noexcept;
/// A barrier passed by all `threads` threads of a fissioned block (counted as their arrivals).
void fissioned_barrier(std::size_t threads, const char* file, unsigned line);

/// What a fissioned kernel does besides the kernel's own work: setting threadIdx for each thread
/// and copying the locals that live across barriers to and from their slots. Their loads and
/// stores are of locals, which no counter counts; in a counted build they are kept out of line
/// and uninstrumented, so that they cost a call instead of a hook per access.
#if defined(CUDASIM_COUNT_MEMORY)
#define CUDASIM_FISSION_HELPER __attribute__((noinline, no_sanitize("coverage")))
#else
#define CUDASIM_FISSION_HELPER inline
#endif

/// The fissioned version's view of its block: the thread loop and the per-thread arrays.
class FissionedBlock {
 public:
  /// For the `threads` that begin_fissioned_block() gave the caller.
  explicit FissionedBlock(std::size_t threads) noexcept : threads_(threads), extent_(blockDim) {}

  /// The block's extent (blockDim), the bounds of CUDASIM_FOR_EACH_THREAD's loops.
  const dim3& extent() const noexcept { return extent_; }

  /// Makes thread (x, y, z) of the block the running one (CUDASIM_FOR_EACH_THREAD).
  void enter(unsigned x, unsigned y, unsigned z) noexcept {
    thread_ = (std::size_t{z} * extent_.y + y) * extent_.x + x;
    publish(x, y, z);
  }
  /// Linear index of the running thread.
  std::size_t thread() const noexcept { return thread_; }

  /// One `T` per thread of the block, in the threads' frame memory (reclaimed when the block
  /// ends, and seen by the memory counters as locals, as the coroutine version's frames are).
  template <class T>
  T* slots() const {
    // The arena hands out 16-byte aligned memory. Wider alignments by pointer arithmetic, not
    // through an integer, which would lose what the compiler knows of where the pointer points.
    constexpr std::size_t kFrameAlignment = 16;
    if constexpr (alignof(T) <= kFrameAlignment) {
      return static_cast<T*>(allocate_thread_frame(sizeof(T) * threads_));
    } else {
      return static_cast<T*>(__builtin_align_up(allocate_thread_frame(sizeof(T) * threads_ + alignof(T)), alignof(T)));
    }
  }

  void barrier(const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) const {
    fissioned_barrier(threads_, file, line);
  }

 private:
  /// threadIdx in memory for every thread, as the device functions the kernel calls, the hooks
  /// and the fault handler read it.
  static CUDASIM_FISSION_HELPER void publish(unsigned x, unsigned y, unsigned z) noexcept {
    // Field by field: a copy of the struct may be a call of memcpy, which a counted build would
    // check as the kernel's own store to a built-in (a fault).
    threadIdx.x = x;
    threadIdx.y = y;
    threadIdx.z = z;
  }

  std::size_t threads_;
  dim3 extent_;
  std::size_t thread_ = 0;
};

/// Before each loop over a block's threads in a fissioned kernel. The coalescing counters group
/// the lanes' accesses into a warp's requests by the code address of each access, which must
/// then be one per access of the source: the compiler must not unroll, peel or vectorize the
/// loop over the threads when the accesses are counted.
#if defined(CUDASIM_COUNT_MEMORY)
#define CUDASIM_THREAD_LOOP _Pragma("clang loop unroll(disable) vectorize(disable) interleave(disable)")
#else
#define CUDASIM_THREAD_LOOP
#endif

/// The loop over a fissioned block's threads, in thread order (x fastest), as the coroutine
/// version runs them between two barriers: `CUDASIM_FOR_EACH_THREAD(b) { stretch }`. Three
/// counted loops rather than one with a carry from x to y to z, so that the compiler sees the
/// innermost as an ordinary loop over x, which it can vectorize when nothing is counted.
#define CUDASIM_FOR_EACH_THREAD(block)                                                             \
  for (unsigned cudasim_z = 0; cudasim_z < (block).extent().z; ++cudasim_z)                        \
    for (unsigned cudasim_y = 0; cudasim_y < (block).extent().y; ++cudasim_y)                      \
      CUDASIM_THREAD_LOOP for (unsigned cudasim_x = 0; cudasim_x < (block).extent().x; ++cudasim_x) \
        if ((block).enter(cudasim_x, cudasim_y, cudasim_z); false) {                               \
        } else

/// The type of a thread's copy of a local that lives across a barrier (an alias, so that an
/// array type can be named before the variable: `FissionLocal<float[4]> acc;`).
template <class T>
using FissionLocal = T;

/// Copies a thread's local that lives across a barrier into its per-thread slot at the end of
/// a stretch of code between barriers, and back into a local at the start of the next one.
template <class T>
CUDASIM_FISSION_HELPER void fission_keep(T& slot, const T& value) {
  if constexpr (std::is_trivially_copyable_v<T>) {
    ::cudasim::detail::uncounted_memcpy(static_cast<void*>(&slot), static_cast<const void*>(&value), sizeof(T));
  } else if constexpr (std::is_array_v<T>) {
    for (std::size_t i = 0; i < std::extent_v<T>; ++i) fission_keep(slot[i], value[i]);
  } else {
    ::new (static_cast<void*>(&slot)) T(value);
  }
}

/// The promise of a kernel thread compiled as a coroutine: it starts at once (a thread runs
/// until its first barrier when the block starts it), is never awaited by anybody, and lets
/// exceptions (faults, traps) propagate to whoever started or resumed it: the block scheduler,
/// which reports them with the kernel, block and thread.
struct KernelThreadPromise {
  static void* operator new(std::size_t bytes) { return allocate_thread_frame(bytes); }
  static void operator delete(void*) noexcept {}  // the arena is reset when the block ends
  void get_return_object() noexcept {}
  std::suspend_never initial_suspend() noexcept { return {}; }
  std::suspend_never final_suspend() noexcept { return {}; }
  void return_void() noexcept {}
  void unhandled_exception() { throw; }
};

template <class T>
std::uint64_t to_bits(T value) noexcept {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>,
                "cudasim: warp shuffles move values of at most 8 bytes, as in CUDA");
  std::uint64_t bits = 0;
  ::cudasim::detail::uncounted_memcpy(&bits, &value, sizeof(T));
  return bits;
}
template <class T>
T from_bits(std::uint64_t bits) noexcept {
  T value;
  ::cudasim::detail::uncounted_memcpy(&value, &bits, sizeof(T));
  return value;
}

/// `__trap()` and faults in kernel code end the launch with this exception.
struct KernelTrap {
  const char* what;
};

/// malloc and free in device code (the rewrite renames the calls): the device heap, whose blocks
/// are device memory that later kernels may use and free (cudaFree of one is refused, as the
/// runtime API may not use them on a GPU), cudaLimitMallocHeapSize bytes per device (8 MiB
/// unless set), null when it is full. free of anything else in a kernel fails the launch.
/// Called from host code (a __host__ __device__ function), they are the C library's.
void* device_malloc(std::size_t bytes);
void device_free(void* pointer);
/// `new` in device code becomes `new (::cudasim::detail::device_heap)`: the same heap.
struct DeviceHeapTag {};
inline constexpr DeviceHeapTag device_heap{};


/// A failed `assert` in device code (see CUDASIM_DEVICE_ASSERT): in a kernel thread it ends the
/// launch with cudaErrorAssert, reported with the kernel, block and thread, as on a GPU; called
/// anywhere else it prints the C library's message and aborts. Never returns.
[[noreturn]] bool device_assert_failed(const char* expression, const char* file, unsigned line,
                                       const char* function);

/// Ends the launch with a KernelTrap carrying `what` (a string with static storage). Out of
/// line: the exception object lives in host memory, and a throw compiled into an instrumented
/// kernel would store to it through the memory check.
[[noreturn]] void trap(const char* what);

/// Counts an atomic operation (instrumented builds) and checks its address like a store.
void count_atomic(const void* address, unsigned bytes);
/// Counts one lane's call of wmma::mma_sync (32 lanes make one warp-level operation).
void count_mma();
/// Counts a warp's wmma::load_matrix_sync of an A or B tile, or its store_matrix_sync.
void count_fragment_transfer(bool store);
/// Between these, the calling lane's accesses are a whole warp's tile load or store (wmma),
/// made by one lane: one request, and one access on the lane's critical path.
void begin_warp_tile_access();
void end_warp_tile_access();

/// `delete p` and `delete[] p` in device code (the rewrite makes them these calls): the
/// destructors, then the block goes back to the device heap. An array of a type with a
/// destructor starts with the element count (the Itanium C++ ABI's cookie, which `new[]` wrote).
template <class T>
void device_delete(T* pointer) {
  if (pointer == nullptr) return;
  if constexpr (!std::is_trivially_destructible_v<T>) pointer->~T();
  device_free(const_cast<std::remove_cv_t<T>*>(pointer));
}
template <class T>
void device_delete_array(T* pointer) {
  if (pointer == nullptr) return;
  using Element = std::remove_cv_t<T>;
  if constexpr (std::is_trivially_destructible_v<Element>) {
    device_free(const_cast<Element*>(pointer));
  } else {
    constexpr std::size_t cookie = alignof(Element) > sizeof(std::size_t) ? alignof(Element) : sizeof(std::size_t);
    char* block = reinterpret_cast<char*>(const_cast<Element*>(pointer)) - cookie;
    const std::size_t count = *reinterpret_cast<std::size_t*>(block + cookie - sizeof(std::size_t));
    for (std::size_t i = count; i > 0; --i) pointer[i - 1].~Element();
    device_free(block);
  }
}

}  // namespace cudasim::detail

/// `new` in device code (rewritten to `new (::cudasim::detail::device_heap) ...`): the device
/// heap; null when it is full, as on a GPU, where device code has no exceptions.
inline void* operator new(std::size_t bytes, cudasim::detail::DeviceHeapTag) noexcept {
  return cudasim::detail::device_malloc(bytes);
}
inline void* operator new[](std::size_t bytes, cudasim::detail::DeviceHeapTag) noexcept {
  return cudasim::detail::device_malloc(bytes);
}

/// Kernels return void, so a void function containing `co_await` is a kernel thread. (Only
/// kernels rewritten by cudasim_rewrite contain one; a .cu file of this course has no other
/// coroutines.)
template <class... Params>
struct std::coroutine_traits<void, Params...> {
  using promise_type = cudasim::detail::KernelThreadPromise;
};

// ---- barriers --------------------------------------------------------------------------------
inline void __syncthreads(const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) {
  cudasim::detail::block_barrier(cudasim::detail::BarrierKind::Plain, 0, file, line);
}
inline int __syncthreads_count(int predicate, const char* file = __builtin_FILE(),
                               unsigned line = __builtin_LINE()) {
  return cudasim::detail::block_barrier(cudasim::detail::BarrierKind::Count, predicate, file, line);
}
inline int __syncthreads_and(int predicate, const char* file = __builtin_FILE(),
                             unsigned line = __builtin_LINE()) {
  return cudasim::detail::block_barrier(cudasim::detail::BarrierKind::And, predicate, file, line);
}
inline int __syncthreads_or(int predicate, const char* file = __builtin_FILE(),
                            unsigned line = __builtin_LINE()) {
  return cudasim::detail::block_barrier(cudasim::detail::BarrierKind::Or, predicate, file, line);
}
/// Memory fences: blocks really run in parallel on OS threads, so these are real fences.
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_signal_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

// ---- warp operations ---------------------------------------------------------------------------
inline void __syncwarp(unsigned mask = 0xffffffffu, const char* file = __builtin_FILE(),
                       unsigned line = __builtin_LINE()) {
  cudasim::detail::warp_collective(cudasim::detail::WarpOp::Sync, mask, 0, 0, 32, file, line);
}
inline unsigned __ballot_sync(unsigned mask, int predicate, const char* file = __builtin_FILE(),
                              unsigned line = __builtin_LINE()) {
  return static_cast<unsigned>(cudasim::detail::warp_collective(
      cudasim::detail::WarpOp::Ballot, mask, predicate != 0, 0, 32, file, line));
}
inline int __all_sync(unsigned mask, int predicate, const char* file = __builtin_FILE(),
                      unsigned line = __builtin_LINE()) {
  return static_cast<int>(cudasim::detail::warp_collective(cudasim::detail::WarpOp::All, mask,
                                                           predicate != 0, 0, 32, file, line));
}
inline int __any_sync(unsigned mask, int predicate, const char* file = __builtin_FILE(),
                      unsigned line = __builtin_LINE()) {
  return static_cast<int>(cudasim::detail::warp_collective(cudasim::detail::WarpOp::Any, mask,
                                                           predicate != 0, 0, 32, file, line));
}
/// The lanes of the caller's warp that execute this call together, as on a GPU: inside a
/// divergent branch, the branch's lanes only. Lanes do not run in lock step in the simulator,
/// so the caller waits here as in coalesced_threads() (until every other lane has arrived,
/// exited or waits elsewhere), and the lanes then at this call site are the mask.
unsigned __activemask(const char* file = __builtin_FILE(), unsigned line = __builtin_LINE());

#define CUDASIM_SHUFFLE(name, op)                                                                 \
  template <class T>                                                                              \
  inline T name(unsigned mask, T var, int operand, int width = 32,                                \
                const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) {          \
    return cudasim::detail::from_bits<T>(cudasim::detail::warp_collective(                        \
        cudasim::detail::WarpOp::op, mask, cudasim::detail::to_bits(var), operand, width, file,   \
        line));                                                                                   \
  }
CUDASIM_SHUFFLE(__shfl_sync, ShflIndex)
CUDASIM_SHUFFLE(__shfl_up_sync, ShflUp)
CUDASIM_SHUFFLE(__shfl_down_sync, ShflDown)
CUDASIM_SHUFFLE(__shfl_xor_sync, ShflXor)
#undef CUDASIM_SHUFFLE

/// The lanes of `mask` whose `value` has the same bits as the caller's (sm_70+). T is a 32- or
/// 64-bit integer or floating-point type, as in CUDA.
template <class T>
inline unsigned __match_any_sync(unsigned mask, T value, const char* file = __builtin_FILE(),
                                 unsigned line = __builtin_LINE()) {
  static_assert(std::is_arithmetic_v<T> && (sizeof(T) == 4 || sizeof(T) == 8),
                "__match_any_sync takes a 32- or 64-bit integer or floating-point value, as in CUDA");
  return static_cast<unsigned>(cudasim::detail::warp_collective(
      cudasim::detail::WarpOp::MatchAny, mask, cudasim::detail::to_bits(value), 0, 32, file, line));
}
/// `mask` when every lane of it holds the same bits in `value` (and *predicate = 1), else 0
/// (and *predicate = 0).
template <class T>
inline unsigned __match_all_sync(unsigned mask, T value, int* predicate, const char* file = __builtin_FILE(),
                                 unsigned line = __builtin_LINE()) {
  static_assert(std::is_arithmetic_v<T> && (sizeof(T) == 4 || sizeof(T) == 8),
                "__match_all_sync takes a 32- or 64-bit integer or floating-point value, as in CUDA");
  const auto result = static_cast<unsigned>(cudasim::detail::warp_collective(
      cudasim::detail::WarpOp::MatchAll, mask, cudasim::detail::to_bits(value), 0, 32, file, line));
  *predicate = result != 0;
  return result;
}

#define CUDASIM_WARP_REDUCE(name, op, T)                                                          \
  inline T name(unsigned mask, T value, const char* file = __builtin_FILE(),                      \
                unsigned line = __builtin_LINE()) {                                               \
    return cudasim::detail::from_bits<T>(cudasim::detail::warp_collective(                        \
        cudasim::detail::WarpOp::op, mask, cudasim::detail::to_bits(value),                       \
        std::is_signed_v<T> ? 1 : 0, 32, file, line));                                            \
  }
CUDASIM_WARP_REDUCE(__reduce_add_sync, ReduceAdd, unsigned)
CUDASIM_WARP_REDUCE(__reduce_add_sync, ReduceAdd, int)
CUDASIM_WARP_REDUCE(__reduce_min_sync, ReduceMin, unsigned)
CUDASIM_WARP_REDUCE(__reduce_min_sync, ReduceMin, int)
CUDASIM_WARP_REDUCE(__reduce_max_sync, ReduceMax, unsigned)
CUDASIM_WARP_REDUCE(__reduce_max_sync, ReduceMax, int)
CUDASIM_WARP_REDUCE(__reduce_and_sync, ReduceAnd, unsigned)
CUDASIM_WARP_REDUCE(__reduce_or_sync, ReduceOr, unsigned)
CUDASIM_WARP_REDUCE(__reduce_xor_sync, ReduceXor, unsigned)
#undef CUDASIM_WARP_REDUCE

// ---- atomics -------------------------------------------------------------------------------------
// Blocks run in parallel on several OS threads, so these are real hardware atomics. Each returns
// the old value, as in CUDA.
namespace cudasim::detail {
template <class T, class Update>
T atomic_update(T* address, Update update) {
  using Bits = std::conditional_t<sizeof(T) == 2, std::uint16_t,
                                  std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>;
  static_assert(sizeof(T) == sizeof(Bits) && std::is_trivially_copyable_v<T>);
  Bits* word = reinterpret_cast<Bits*>(address);
  // Start from a guess instead of a plain load: a failed compare-and-swap returns the current
  // value, and the whole loop is one atomic operation (a plain load here would be counted as
  // global memory traffic by the instrumentation).
  Bits expected = 0;
  for (;;) {
    T old;
    ::cudasim::detail::uncounted_memcpy(&old, &expected, sizeof(T));
    const T updated = update(old);
    Bits desired;
    ::cudasim::detail::uncounted_memcpy(&desired, &updated, sizeof(T));
    if (__atomic_compare_exchange_n(word, &expected, desired, true, __ATOMIC_SEQ_CST,
                                    __ATOMIC_RELAXED))
      return old;
  }
}
}  // namespace cudasim::detail

// In builds that count memory traffic each atomic is counted (and its address checked)
// before it is performed.
#if defined(CUDASIM_COUNT_MEMORY)
#define CUDASIM_COUNT_ATOMIC(a) ::cudasim::detail::count_atomic(a, sizeof(*(a)))
#else
#define CUDASIM_COUNT_ATOMIC(a) ((void)0)
#endif

#define CUDASIM_ATOMIC_INTEGER(T)                                                                 \
  inline T atomicAdd(T* a, T v) { CUDASIM_COUNT_ATOMIC(a); return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST); } \
  inline T atomicSub(T* a, T v) { CUDASIM_COUNT_ATOMIC(a); return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST); } \
  inline T atomicExch(T* a, T v) { CUDASIM_COUNT_ATOMIC(a); return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST); } \
  inline T atomicAnd(T* a, T v) { CUDASIM_COUNT_ATOMIC(a); return __atomic_fetch_and(a, v, __ATOMIC_SEQ_CST); } \
  inline T atomicOr(T* a, T v) { CUDASIM_COUNT_ATOMIC(a); return __atomic_fetch_or(a, v, __ATOMIC_SEQ_CST); } \
  inline T atomicXor(T* a, T v) { CUDASIM_COUNT_ATOMIC(a); return __atomic_fetch_xor(a, v, __ATOMIC_SEQ_CST); } \
  inline T atomicMin(T* a, T v) {                                                                 \
    CUDASIM_COUNT_ATOMIC(a);                                                                      \
    return cudasim::detail::atomic_update(a, [v](T old) { return old < v ? old : v; });           \
  }                                                                                               \
  inline T atomicMax(T* a, T v) {                                                                 \
    CUDASIM_COUNT_ATOMIC(a);                                                                      \
    return cudasim::detail::atomic_update(a, [v](T old) { return old > v ? old : v; });           \
  }                                                                                               \
  inline T atomicCAS(T* a, T compare, T v) {                                                      \
    CUDASIM_COUNT_ATOMIC(a);                                                                      \
    __atomic_compare_exchange_n(a, &compare, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);       \
    return compare;                                                                               \
  }
CUDASIM_ATOMIC_INTEGER(int)
CUDASIM_ATOMIC_INTEGER(unsigned int)
CUDASIM_ATOMIC_INTEGER(unsigned long long)
CUDASIM_ATOMIC_INTEGER(long long)
#undef CUDASIM_ATOMIC_INTEGER

inline float atomicAdd(float* a, float v) {
  CUDASIM_COUNT_ATOMIC(a);
  return cudasim::detail::atomic_update(a, [v](float old) { return old + v; });
}
inline double atomicAdd(double* a, double v) {
  CUDASIM_COUNT_ATOMIC(a);
  return cudasim::detail::atomic_update(a, [v](double old) { return old + v; });
}
inline float atomicExch(float* a, float v) {
  CUDASIM_COUNT_ATOMIC(a);
  return cudasim::detail::atomic_update(a, [v](float) { return v; });
}
inline float atomicMin(float* a, float v) {
  CUDASIM_COUNT_ATOMIC(a);
  return cudasim::detail::atomic_update(a, [v](float old) { return old < v ? old : v; });
}
inline float atomicMax(float* a, float v) {
  CUDASIM_COUNT_ATOMIC(a);
  return cudasim::detail::atomic_update(a, [v](float old) { return old > v ? old : v; });
}
/// ((old >= limit) ? 0 : old + 1), as CUDA defines it.
inline unsigned atomicInc(unsigned* a, unsigned limit) {
  CUDASIM_COUNT_ATOMIC(a);
  return cudasim::detail::atomic_update(a, [limit](unsigned old) { return old >= limit ? 0u : old + 1; });
}
/// (((old == 0) || (old > limit)) ? limit : old - 1), as CUDA defines it.
inline unsigned atomicDec(unsigned* a, unsigned limit) {
  CUDASIM_COUNT_ATOMIC(a);
  return cudasim::detail::atomic_update(
      a, [limit](unsigned old) { return (old == 0 || old > limit) ? limit : old - 1; });
}
// Scoped variants (_block: atomic for the block's threads only; _system: also for the host and
// other devices): every scope is the whole machine here, which is at least what each promises.
#define atomicAdd_block atomicAdd
#define atomicAdd_system atomicAdd
#define atomicSub_block atomicSub
#define atomicSub_system atomicSub
#define atomicExch_block atomicExch
#define atomicExch_system atomicExch
#define atomicMin_block atomicMin
#define atomicMin_system atomicMin
#define atomicMax_block atomicMax
#define atomicMax_system atomicMax
#define atomicInc_block atomicInc
#define atomicInc_system atomicInc
#define atomicDec_block atomicDec
#define atomicDec_system atomicDec
#define atomicCAS_block atomicCAS
#define atomicCAS_system atomicCAS
#define atomicAnd_block atomicAnd
#define atomicAnd_system atomicAnd
#define atomicOr_block atomicOr
#define atomicOr_system atomicOr
#define atomicXor_block atomicXor
#define atomicXor_system atomicXor

// ---- integer and float intrinsics ----------------------------------------------------------------
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned>(x)); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x)); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned __brev(unsigned x) {
  unsigned r = 0;
  for (int i = 0; i < 32; ++i) r |= ((x >> i) & 1u) << (31 - i);
  return r;
}
inline int __mul24(int a, int b) { return (a << 8 >> 8) * (b << 8 >> 8); }
inline unsigned __umul24(unsigned a, unsigned b) { return (a & 0xffffffu) * (b & 0xffffffu); }
inline int __mulhi(int a, int b) { return static_cast<int>((static_cast<long long>(a) * b) >> 32); }
inline unsigned __umulhi(unsigned a, unsigned b) {
  return static_cast<unsigned>((static_cast<unsigned long long>(a) * b) >> 32);
}
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return static_cast<unsigned long long>((static_cast<unsigned __int128>(a) * b) >> 64);
}

inline float __int_as_float(int x) { return cudasim::detail::from_bits<float>(static_cast<unsigned>(x)); }
inline int __float_as_int(float x) { return static_cast<int>(cudasim::detail::to_bits(x)); }
inline float __uint_as_float(unsigned x) { return cudasim::detail::from_bits<float>(x); }
inline unsigned __float_as_uint(float x) { return static_cast<unsigned>(cudasim::detail::to_bits(x)); }
inline double __longlong_as_double(long long x) { return cudasim::detail::from_bits<double>(static_cast<std::uint64_t>(x)); }
inline long long __double_as_longlong(double x) { return static_cast<long long>(cudasim::detail::to_bits(x)); }

// Fast-math intrinsics: the simulator computes them exactly; a GPU's versions are approximate,
// so tests must use tolerances anyway.
inline float __expf(float x) { return std::exp(x); }
inline float __exp10f(float x) { return std::pow(10.0f, x); }
inline float __logf(float x) { return std::log(x); }
inline float __log2f(float x) { return std::log2(x); }
inline float __log10f(float x) { return std::log10(x); }
inline float __sinf(float x) { return std::sin(x); }
inline float __cosf(float x) { return std::cos(x); }
inline float __tanf(float x) { return std::tan(x); }
inline void __sincosf(float x, float* s, float* c) { *s = std::sin(x); *c = std::cos(x); }
inline float __powf(float x, float y) { return std::pow(x, y); }
inline float __fdividef(float x, float y) { return x / y; }
inline float fdividef(float x, float y) { return x / y; }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __fsqrt_rn(float x) { return std::sqrt(x); }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __fma_rn(double a, double b, double c) { return std::fma(a, b, c); }

// Directed rounding: _rd toward -infinity, _ru toward +infinity, _rz toward zero (nvcc's
// intrinsics; _rn is the default rounding above). Each is the round-to-nearest result moved by
// one step where the exact result lies on the other side of it; the side comes from an
// error-free transformation (the exact error of a sum, a product, a quotient's remainder),
// so no floating-point environment is changed: other threads of the simulator keep theirs.
namespace cudasim {
namespace detail {

enum class Toward { down, up, zero };

/// `nearest` (the result rounded to nearest) rounded `toward` instead, given `error`, the sign
/// of (exact result - nearest): < 0, 0 or > 0. `finite_inputs`: an infinite `nearest` is an
/// overflow, which rounds to the largest finite value unless it rounds away from zero.
template <class T>
T round_toward(T nearest, double error, Toward toward, bool finite_inputs) {
  constexpr T inf = std::numeric_limits<T>::infinity(), largest = std::numeric_limits<T>::max();
  if (std::isnan(nearest)) return nearest;
  if (std::isinf(nearest)) {
    if (!finite_inputs) return nearest;
    const bool positive = nearest > 0;
    if (toward == Toward::zero || (positive && toward == Toward::down) || (!positive && toward == Toward::up))
      return positive ? largest : -largest;
    return nearest;
  }
  if (error == 0) return nearest;
  if (toward == Toward::zero) {
    if (nearest == 0) return nearest;  // a tiny exact result rounds to zero anyway
    toward = nearest > 0 ? Toward::down : Toward::up;
  }
  if (toward == Toward::down) return error < 0 ? std::nextafter(nearest, -inf) : nearest;
  return error > 0 ? std::nextafter(nearest, inf) : nearest;
}

/// The exact error of a + b rounded to nearest (Knuth's TwoSum).
template <class T>
T sum_error(T a, T b, T s) {
  const T bb = s - a;
  return (a - (s - bb)) + (b - bb);
}

template <class T>
T add_toward(T a, T b, Toward toward) {
  const T s = a + b;
  return round_toward(s, std::isfinite(s) ? double(sum_error(a, b, s)) : 0.0, toward,
                      std::isfinite(a) && std::isfinite(b));
}
template <class T>
T mul_toward(T a, T b, Toward toward) {
  const T p = a * b;
  return round_toward(p, std::isfinite(p) ? double(std::fma(a, b, -p)) : 0.0, toward,
                      std::isfinite(a) && std::isfinite(b));
}
template <class T>
T div_toward(T a, T b, Toward toward) {
  const T q = a / b;
  // a - q b, exact: the quotient is above q where it has b's sign.
  const T remainder = std::isfinite(q) && b != 0 ? std::fma(-q, b, a) : T(0);
  return round_toward(q, double(remainder) * (b < 0 ? -1.0 : 1.0), toward,
                      std::isfinite(a) && std::isfinite(b) && b != 0);
}
template <class T>
T sqrt_toward(T x, Toward toward) {
  const T s = std::sqrt(x);
  return round_toward(s, std::isfinite(s) ? double(std::fma(-s, s, x)) : 0.0, toward, std::isfinite(x));
}
/// fmaf directed: a·b is exact in double; the sum with c and its exact error decide the side.
inline float fmaf_toward(float a, float b, float c, Toward toward) {
  const float nearest = std::fma(a, b, c);
  const double product = double(a) * double(b), sum = product + double(c);
  const double beyond = sum_error(product, double(c), sum), difference = sum - double(nearest);
  return round_toward(nearest, difference != 0 ? difference : beyond, toward,
                      std::isfinite(a) && std::isfinite(b) && std::isfinite(c));
}

}  // namespace detail
}  // namespace cudasim

#define CUDASIM_DIRECTED(suffix, toward)                                                                        \
  inline float __fadd_##suffix(float a, float b) { return cudasim::detail::add_toward(a, b, toward); }             \
  inline float __fsub_##suffix(float a, float b) { return cudasim::detail::add_toward(a, -b, toward); }            \
  inline float __fmul_##suffix(float a, float b) { return cudasim::detail::mul_toward(a, b, toward); }             \
  inline float __fdiv_##suffix(float a, float b) { return cudasim::detail::div_toward(a, b, toward); }             \
  inline float __frcp_##suffix(float x) { return cudasim::detail::div_toward(1.0f, x, toward); }                   \
  inline float __fsqrt_##suffix(float x) { return cudasim::detail::sqrt_toward(x, toward); }                       \
  inline float __fmaf_##suffix(float a, float b, float c) { return cudasim::detail::fmaf_toward(a, b, c, toward); } \
  inline double __dadd_##suffix(double a, double b) { return cudasim::detail::add_toward(a, b, toward); }          \
  inline double __dsub_##suffix(double a, double b) { return cudasim::detail::add_toward(a, -b, toward); }         \
  inline double __dmul_##suffix(double a, double b) { return cudasim::detail::mul_toward(a, b, toward); }          \
  inline double __ddiv_##suffix(double a, double b) { return cudasim::detail::div_toward(a, b, toward); }          \
  inline double __drcp_##suffix(double x) { return cudasim::detail::div_toward(1.0, x, toward); }                  \
  inline double __dsqrt_##suffix(double x) { return cudasim::detail::sqrt_toward(x, toward); }
CUDASIM_DIRECTED(rd, cudasim::detail::Toward::down)
CUDASIM_DIRECTED(ru, cudasim::detail::Toward::up)
CUDASIM_DIRECTED(rz, cudasim::detail::Toward::zero)
#undef CUDASIM_DIRECTED
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
inline double __drcp_rn(double x) { return 1.0 / x; }
inline double __dsqrt_rn(double x) { return std::sqrt(x); }

inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }
inline int __float2int_rn(float x) { return static_cast<int>(std::nearbyint(x)); }
inline int __float2int_rz(float x) { return static_cast<int>(x); }
inline int __float2int_rd(float x) { return static_cast<int>(std::floor(x)); }
inline int __float2int_ru(float x) { return static_cast<int>(std::ceil(x)); }
inline float __int2float_rn(int x) { return static_cast<float>(x); }
inline float __uint2float_rn(unsigned x) { return static_cast<float>(x); }

/// Loads and stores with a cache hint (read-only, streaming, cache-global, last-use, volatile;
/// write-back, cache-global, streaming, write-through) are plain loads and stores here: the
/// hint changes where a GPU keeps the line, never the value.
template <class T>
inline T __ldg(const T* p) { return *p; }
template <class T>
inline T __ldca(const T* p) { return *p; }
template <class T>
inline T __ldcg(const T* p) { return *p; }
template <class T>
inline T __ldcs(const T* p) { return *p; }
template <class T>
inline T __ldlu(const T* p) { return *p; }
template <class T>
inline T __ldcv(const T* p) { return *p; }
template <class T>
inline void __stwb(T* p, T value) { *p = value; }
template <class T>
inline void __stcg(T* p, T value) { *p = value; }
template <class T>
inline void __stcs(T* p, T value) { *p = value; }
template <class T>
inline void __stwt(T* p, T value) { *p = value; }

/// Ends the launch with an error naming the kernel, block and thread (a GPU reports
/// cudaErrorLaunchFailure after a trap).
/// What the rewrite makes of `assert(...)` in device code: the program's own assert (NDEBUG
/// still turns it off, and a program that never included <cassert> gets the compiler's error, as
/// with nvcc), around a condition that fails the launch when false (device_assert_failed).
#define CUDASIM_DEVICE_ASSERT(...) \
  assert((__VA_ARGS__) ||          \
         ::cudasim::detail::device_assert_failed(#__VA_ARGS__, __FILE__, __LINE__, __PRETTY_FUNCTION__))

[[noreturn]] inline void __trap() { throw cudasim::detail::KernelTrap{"__trap() called"}; }

/// Cycle counter: nanoseconds of the host's steady clock, not GPU cycles. It never goes back,
/// so differences measure (CPU) time. `clock()` in a kernel is the C library's: the process's
/// CPU time in CLOCKS_PER_SEC units, also never decreasing.
long long clock64();

/// Sleeps about `nanoseconds` on a GPU (sm_70+). Here it lets the OS thread's other work run
/// (sched_yield), so a spin-wait on another block sleeping in its loop makes progress; it
/// changes no result.
void __nanosleep(unsigned nanoseconds);

// CUDA's min/max overloads for device and host code.
inline int min(int a, int b) { return a < b ? a : b; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline unsigned long long min(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
inline float min(float a, float b) { return std::fmin(a, b); }
inline double min(double a, double b) { return std::fmin(a, b); }
// Mixed signedness and precision, as CUDA's math headers resolve them (to the unsigned or the
// wider type), so that min(n - 1, i + threadIdx.x) is not ambiguous.
inline unsigned min(int a, unsigned b) { return min(static_cast<unsigned>(a), b); }
inline unsigned min(unsigned a, int b) { return min(a, static_cast<unsigned>(b)); }
inline unsigned long long min(long long a, unsigned long long b) { return min(static_cast<unsigned long long>(a), b); }
inline unsigned long long min(unsigned long long a, long long b) { return min(a, static_cast<unsigned long long>(b)); }
inline double min(float a, double b) { return min(static_cast<double>(a), b); }
inline double min(double a, float b) { return min(a, static_cast<double>(b)); }
inline int max(int a, int b) { return a > b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
inline unsigned long long max(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
inline float max(float a, float b) { return std::fmax(a, b); }
inline double max(double a, double b) { return std::fmax(a, b); }
inline unsigned max(int a, unsigned b) { return max(static_cast<unsigned>(a), b); }
inline unsigned max(unsigned a, int b) { return max(a, static_cast<unsigned>(b)); }
inline unsigned long long max(long long a, unsigned long long b) { return max(static_cast<unsigned long long>(a), b); }
inline unsigned long long max(unsigned long long a, long long b) { return max(a, static_cast<unsigned long long>(b)); }
inline double max(float a, double b) { return max(static_cast<double>(a), b); }
inline double max(double a, float b) { return max(a, static_cast<double>(b)); }
// The named forms of CUDA's math API (device_functions.h), one type each.
inline unsigned umin(unsigned a, unsigned b) { return min(a, b); }
inline unsigned umax(unsigned a, unsigned b) { return max(a, b); }
inline long long llmin(long long a, long long b) { return min(a, b); }
inline long long llmax(long long a, long long b) { return max(a, b); }
inline unsigned long long ullmin(unsigned long long a, unsigned long long b) { return min(a, b); }
inline unsigned long long ullmax(unsigned long long a, unsigned long long b) { return max(a, b); }
