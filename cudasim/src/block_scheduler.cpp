// The block scheduler: runs the threads of one block on the calling OS thread.
//
// A block starts with a single fiber that runs threads one after another in a plain loop
// (BoundKernel::run_threads). A thread that waits does so in one of two ways:
//
//   * Suspended coroutine. A kernel whose own body calls __syncthreads is compiled as a
//     coroutine (the rewrite turns the barrier into `co_await`), so at a barrier the thread's
//     live locals are already saved in its small frame and the call simply returns to the loop,
//     which starts the next thread. Once all have arrived, the barrier is released and a fiber
//     with nothing of its own to do resumes the threads one after another. No stack switch at
//     all: the code between two barriers runs as a loop over the block's threads.
//   * Parked fiber. A barrier inside a __device__ function, and every warp operation, parks the
//     fiber the thread runs on, and a new fiber continues with the next thread, so such a
//     kernel costs one fiber per thread. A fiber that cannot go on (it waits, or it ran out of
//     threads to start) switches directly to the next fiber that can, so a barrier costs one
//     context switch per thread.
//
// Both kinds mix freely in one block (a coroutine thread may park its fiber in a warp shuffle).
// Control returns to the worker's own stack only when the block is done or has faulted.
//
// Waiting threads are released when every live thread of the block waits at the same
// __syncthreads (the same call site), or every lane of a warp operation's mask has arrived.
// When nothing can run and somebody still waits, the block can never finish on a GPU either:
// that is reported with both threads and both call sites instead of hanging.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <coroutine>
#include "cudasim/stats.hpp"
#include "fiber.hpp"
#include "internal.hpp"

// The built-in variables (declared in execution.hpp).
__thread uint3 threadIdx;
__thread uint3 blockIdx;
__thread dim3 blockDim;
__thread dim3 gridDim;
const int warpSize = 32;

namespace cudasim::detail {

namespace {

constexpr unsigned kWarpSize = 32;

std::size_t fiber_stack_bytes() {
  static const std::size_t bytes = [] {
    const char* env = std::getenv("CUDASIM_STACK_KB");
    const long kb = env ? std::atol(env) : 0;
    return static_cast<std::size_t>(kb > 0 ? kb : 256) * 1024;
  }();
  return bytes;
}

struct Fiber {
  FiberContext context;
  std::unique_ptr<FiberStack> stack;
  /// Left by a block that finished normally: the fiber waits in fiber_main for its next block,
  /// so it can be resumed as it is instead of being given a fresh frame.
  bool idle_in_fiber_main = false;
};

/// None: not started, running, or exited (which one follows from the cursor and the running
/// thread). A released thread keeps its Barrier or Warp until it is resumed (take_runnable):
/// only the reports read it, and they run when no released thread is left.
enum class WaitKind : unsigned char { None, Barrier, Warp, Coalesced, Tile };

/// Why a parked thread waits, for releasing it and for reports.
struct ThreadSlot {
  Fiber* fiber = nullptr;                // the parked fiber, or null for a suspended coroutine
  std::coroutine_handle<> coroutine;     // the suspended coroutine, if it waits as one
  uint3 index{0, 0, 0};  // its threadIdx, restored when it resumes
  WaitKind wait = WaitKind::None;
  const char* file = nullptr;
  unsigned line = 0;
  const char* what = nullptr;  // the operation's name, e.g. "__syncthreads" or "__shfl_down_sync"
  BarrierKind barrier_kind = BarrierKind::Plain;
  int predicate = 0;
  unsigned warp_mask = 0;
  std::uint64_t tile_result = 0;  // what a tile collective gave this thread (tile_collective)
};

/// Threads of a multi-warp tile that have arrived at one tile operation.
struct TileGroup {
  TileOp op;
  unsigned first;     // the tile's first thread (linear rank in the block)
  unsigned expected;  // the tile's threads that exist (a last tile may be cut by the block's end)
  const char* file;
  unsigned line;
  std::vector<unsigned> waiters;      // arrived threads, in arrival order
  std::vector<std::uint64_t> values;  // by rank in the tile
};

const char* tile_op_name(TileOp op) {
  switch (op) {
    case TileOp::Sync: return "thread_block_tile::sync";
    case TileOp::Shfl: return "thread_block_tile::shfl";
    case TileOp::Any: return "thread_block_tile::any";
    case TileOp::All: return "thread_block_tile::all";
  }
  return "a tile operation";
}

/// Lanes of a warp that have arrived at one warp operation.
struct WarpGroup {
  WarpOp op;
  unsigned mask;  // lanes that must arrive (the caller's mask, limited to existing lanes)
  unsigned arrived = 0;
  int width = 32;
  const char* file;
  unsigned line;
  std::uint64_t values[kWarpSize];
  int params[kWarpSize];
};

struct WarpState {
  std::vector<WarpGroup> pending;
  std::uint64_t results[kWarpSize];  // each lane reads its own as soon as it resumes
};

const char* warp_op_name(WarpOp op) {
  switch (op) {
    case WarpOp::Sync: return "__syncwarp";
    case WarpOp::Ballot: return "__ballot_sync";
    case WarpOp::All: return "__all_sync";
    case WarpOp::Any: return "__any_sync";
    case WarpOp::ShflIndex: return "__shfl_sync";
    case WarpOp::ShflUp: return "__shfl_up_sync";
    case WarpOp::ShflDown: return "__shfl_down_sync";
    case WarpOp::ShflXor: return "__shfl_xor_sync";
    case WarpOp::ReduceAdd: return "__reduce_add_sync";
    case WarpOp::ReduceMin: return "__reduce_min_sync";
    case WarpOp::ReduceMax: return "__reduce_max_sync";
    case WarpOp::ReduceAnd: return "__reduce_and_sync";
    case WarpOp::ReduceOr: return "__reduce_or_sync";
    case WarpOp::ReduceXor: return "__reduce_xor_sync";
    case WarpOp::MatchAny: return "__match_any_sync";
    case WarpOp::MatchAll: return "__match_all_sync";
  }
  return "warp operation";
}

const char* barrier_name(BarrierKind kind) {
  switch (kind) {
    case BarrierKind::Plain: return "__syncthreads";
    case BarrierKind::Count: return "__syncthreads_count";
    case BarrierKind::And: return "__syncthreads_and";
    case BarrierKind::Or: return "__syncthreads_or";
    case BarrierKind::Grid: return "grid_group::sync";
  }
  return "__syncthreads";
}

/// The per-thread bookkeeping of a block that waits. A worker keeps one from block to block and
/// lends it to each block at its first wait: it runs thousands of small blocks, and allocating
/// per block would show. Blocks that never wait leave it alone. Empty between blocks.
struct BlockVectors {
  std::vector<unsigned> runnable;
  std::vector<Fiber*> free_fibers;
  std::vector<ThreadSlot> slots;
  std::vector<WarpState> warps;
  std::vector<unsigned> barrier_waiters;
};

/// The state of the block a worker is running.
struct BlockRun {
  explicit BlockRun(std::vector<Fiber*>& worker_fibers) : fibers(worker_fibers) {}

  /// Takes the worker's vectors (for their memory) at the block's first wait.
  void borrow(BlockVectors& v) noexcept {
    swap_vectors(v);
    borrowed = true;
  }
  /// Gives them back, emptied, at the block's end.
  void give_back(BlockVectors& v) noexcept {
    if (!borrowed) return;
    swap_vectors(v);
    v.runnable.clear();
    v.free_fibers.clear();
    v.slots.clear();
    v.warps.clear();
    v.barrier_waiters.clear();
  }

  LaunchState* launch = nullptr;
  uint3 block_index{0, 0, 0};
  ThreadCursor cursor;
  std::vector<unsigned> runnable;  // released threads, resumed in this order from runnable_head
  std::size_t runnable_head = 0;
  unsigned waiting = 0;            // parked threads
  // Fibers this block used, returned to the pool at its end: the worker's own list, as every
  // block uses at least one.
  std::vector<Fiber*>& fibers;
  std::vector<Fiber*> free_fibers;  // fibers holding no thread, ready to resume coroutines
  std::vector<ThreadSlot> slots;  // sized on the first wait (plain-loop blocks never need it)
  std::vector<WarpState> warps;
  // The barrier being gathered: its waiters in arrival order (which is thread order, since
  // threads start and resume in thread order), the first call site, and whether anybody
  // arrived elsewhere or at a warp operation (then the slow diagnostic path runs).
  std::vector<unsigned> barrier_waiters;
  const char* barrier_file = nullptr;
  unsigned barrier_line = 0;
  BarrierKind barrier_kind = BarrierKind::Plain;
  bool barrier_mixed = false;
  unsigned warp_waiters = 0;
  unsigned coalesced_waiters = 0;  // threads gathering in coalesced_threads() (coalesced_lanes)
  unsigned tile_waiters = 0;       // threads parked in a multi-warp tile's collective
  std::vector<TileGroup> tile_groups;  // multi-warp tile collectives being gathered
  // Result of the barrier most recently released; read by each thread as it resumes.
  int barrier_count = 0;
  int barrier_participants = 0;
  unsigned barriers_released = 0;
  bool faulted = false;
  bool borrowed = false;  // holds the worker's BlockVectors
  // The first thread runs the whole block as loops over its threads (loop fission): nothing
  // may wait for another thread, as nothing else will run until it returns.
  bool fissioned = false;
  // A grid.sync() was released within the block: the first of its threads to resume waits for
  // the other blocks (wait_for_grid) before any of them goes on.
  bool grid_wait_pending = false;

 private:
  void swap_vectors(BlockVectors& v) noexcept {
    runnable.swap(v.runnable);
    free_fibers.swap(v.free_fibers);
    slots.swap(v.slots);
    warps.swap(v.warps);
    barrier_waiters.swap(v.barrier_waiters);
  }
};

/// Where the coroutine frames of a block's threads live: one reserved address range per worker,
/// handed out by bumping a pointer and reset when a block starts. One fixed range so that the
/// memory instrumentation can tell a thread's locals (in its frame) from host memory. The range
/// is reserved without access and made writable as frames reach it, so that the grader's
/// RLIMIT_DATA (which counts writable private mappings) sees only what is used.
class FrameArena {
 public:
  static constexpr std::size_t kReservedBytes = std::size_t{256} << 20;
  static constexpr std::size_t kCommitStep = std::size_t{256} << 10;

  void* allocate(std::size_t bytes) {
    if (!reserve()) throw KernelTrap{"cannot reserve address space for the threads' locals"};
    const std::size_t rounded = (bytes + 15) & ~std::size_t{15};
    if (rounded > kReservedBytes - used_)
      throw KernelTrap{"the locals of this block's threads need more than 256 MiB in the simulator "
                       "(a very large local array?)"};
    if (used_ + rounded > committed_) {
      const std::size_t target = std::min(kReservedBytes, (used_ + rounded + kCommitStep - 1) / kCommitStep * kCommitStep);
      if (mprotect(base_ + committed_, target - committed_, PROT_READ | PROT_WRITE) != 0)
        throw KernelTrap{"out of memory for the threads' locals"};
      committed_ = target;
    }
    void* frame = base_ + used_;
    used_ += rounded;
    return frame;
  }
  void reset() noexcept { used_ = 0; }
  const unsigned char* begin() const noexcept { return base_; }
  const unsigned char* end() const noexcept { return base_ == nullptr ? nullptr : base_ + kReservedBytes; }

  /// Reserves the range (address space only) if not yet done; false if that failed.
  bool reserve() noexcept {
    if (base_ != nullptr) return true;
    void* mapping = mmap(nullptr, kReservedBytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mapping == MAP_FAILED) return false;
    base_ = static_cast<unsigned char*>(mapping);
    return true;
  }

 private:
  unsigned char* base_ = nullptr;
  std::size_t used_ = 0;
  std::size_t committed_ = 0;
};

/// Per-OS-thread simulator state: the scheduler's own context, a pool of fibers and stacks,
/// the coroutine frames, the dynamic shared memory buffer. Fibers never move between OS
/// threads, which is what makes `static thread_local` work as __shared__.
struct Worker {
  FiberContext scheduler_context;
  StackSlab slab{fiber_stack_bytes()};  // before `fibers`: their stacks go back to it
  std::vector<std::unique_ptr<Fiber>> fibers;
  std::vector<Fiber*> idle_fibers;
  BlockRun* block = nullptr;
  std::vector<Fiber*> block_fibers;  // the running block's fibers (BlockRun::fibers)
  BlockVectors block_vectors;        // lent to each block that waits
  Fiber* current = nullptr;
  FrameArena frames;
  // On the heap, not in the thread-local block itself: every OS thread of the process would
  // otherwise carry it.
  std::unique_ptr<unsigned char, void (*)(void*)> dynamic_shared{
      static_cast<unsigned char*>(std::aligned_alloc(128, kDynamicSharedCapacity)), &std::free};

  Worker() {
    install_fault_handler();
    running_thread().is_stack_guard = &address_in_fiber_guard;
  }

  static bool address_in_fiber_guard(const void* address);
};

// The worker of this OS thread. A plain pointer for the hot paths (barriers, warp operations):
// a function-local thread_local object costs an initialisation check on every access.
__thread Worker* this_worker = nullptr;

Worker& worker() {
  if (this_worker == nullptr) {
    static thread_local Worker instance;
    this_worker = &instance;
  }
  return *this_worker;
}

bool Worker::address_in_fiber_guard(const void* address) {
  for (const auto& fiber : worker().fibers)
    if (fiber->stack->in_guard(address)) return true;
  return false;
}

/// Two call sites are the same when file and line match. File names come from
/// __builtin_FILE(), usually one literal per translation unit, so compare pointers first.
bool same_site(const char* file_a, unsigned line_a, const char* file_b, unsigned line_b) {
  return line_a == line_b && (file_a == file_b || std::strcmp(file_a, file_b) == 0);
}

uint3 index_of(unsigned linear, const dim3& extent) {
  return uint3{linear % extent.x, (linear / extent.x) % extent.y, linear / (extent.x * extent.y)};
}

unsigned linear_thread() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

/// Called first whenever a thread calls the scheduler: the 1-D thread loop keeps its count of
/// started threads in a register, so the cursor may still be behind the calling thread, and
/// everything the scheduler decides (are there unstarted threads? has a lane exited?) reads it.
/// Every thread up to the caller has started, as threads start in order.
inline void sync_cursor(BlockRun& b, unsigned caller) {
  if (b.cursor.next_thread <= caller) b.cursor.next_thread = std::size_t{caller} + 1;
}

std::string describe_thread(unsigned linear, const dim3& extent) {
  const uint3 t = index_of(linear, extent);
  return format_string("thread (%u,%u,%u)", t.x, t.y, t.z);
}

void fiber_main(void* argument);

Fiber* acquire_fiber(Worker& w) {
  Fiber* fiber;
  if (!w.idle_fibers.empty()) {
    fiber = w.idle_fibers.back();
    w.idle_fibers.pop_back();
  } else {
    w.fibers.push_back(std::make_unique<Fiber>());
    fiber = w.fibers.back().get();
    fiber->stack = new_fiber_stack(fiber_stack_bytes(), w.slab);
  }
  // A fiber abandoned by a faulted block may still hold a thread's frames: start it afresh.
  if (!fiber->idle_in_fiber_main) make_context(fiber->context, *fiber->stack, &fiber_main, fiber);
  fiber->idle_in_fiber_main = false;
  return fiber;
}

/// True when thread `t` has run to its end (valid while no thread of the block is running, or
/// for threads other than the running one).
bool has_exited(const BlockRun& b, unsigned t) {
  return t < b.cursor.next_thread && (b.slots.empty() || b.slots[t].wait == WaitKind::None);
}

void resolve_waiting(BlockRun& b);

/// Tells the memory instrumentation which stack the next thread runs on (its locals are not
/// memory traffic).
void note_stack(Fiber* fiber) {
  instrumentation_set_stack(fiber->stack->top() - fiber_stack_bytes(), fiber->stack->top());
}

/// Takes the next released thread off `runnable`: it counts as running again (wait None) and
/// threadIdx is its own.
ThreadSlot& take_runnable(BlockRun& b) {
  ThreadSlot& s = b.slots[b.runnable[b.runnable_head++]];
  if (b.runnable_head == b.runnable.size()) {
    b.runnable.clear();
    b.runnable_head = 0;
  }
  s.wait = WaitKind::None;
  threadIdx = s.index;
  return s;
}

/// A fiber that holds no thread: one of the block's free fibers, or a new one. It goes on in
/// fiber_main, starting threads or resuming suspended coroutines.
Fiber* free_fiber(Worker& w, BlockRun& b) {
  Fiber* fiber;
  if (!b.free_fibers.empty()) {
    fiber = b.free_fibers.back();
    b.free_fibers.pop_back();
  } else {
    fiber = acquire_fiber(w);
    b.fibers.push_back(fiber);
  }
  note_stack(fiber);
  return fiber;
}

/// The fiber to run next in this block, or null when nothing can run now: released threads
/// first, in release order, then the threads that have not started. A released thread parked
/// on a fiber resumes there (threadIdx already set for it); a suspended coroutine and an
/// unstarted thread need a fiber holding no thread: `self` when it is free (`self_free`: the
/// caller then returns to fiber_main, which runs them), another one otherwise.
Fiber* pick_next(Worker& w, BlockRun& b, Fiber* self, bool self_free) {
  if (b.runnable_head < b.runnable.size()) {
    ThreadSlot& s = b.slots[b.runnable[b.runnable_head]];
    if (s.coroutine) return self_free ? self : free_fiber(w, b);
    take_runnable(b);
    note_stack(s.fiber);
    return s.fiber;
  }
  if (b.cursor.has_unstarted()) return self_free ? self : free_fiber(w, b);
  return nullptr;
}

void fault_current_thread(Worker& w, cudaError_t error, const std::string& message) {
  BlockRun& b = *w.block;
  b.faulted = true;
  report_kernel_fault(*b.launch, b.block_index, threadIdx, error, message);
}

/// Called on a fiber that cannot go on (its thread waits, or it has nothing left to run):
/// runs the next fiber of the block directly, releasing a barrier first when every live thread
/// waits at it. Returns when this fiber is resumed (or at once when it is itself the one to
/// go on). Goes back to the worker's own stack when the block is finished or has faulted.
void switch_away(Worker& w, Fiber* self, bool self_free) {
  BlockRun& b = *w.block;
  // A stack without a guard page of its own (FiberStack) is checked whenever its thread stops
  // running: before any other fiber, whose frames the overflow may have damaged, runs again.
  if (self->stack->overflowed() && !b.faulted)
    fault_current_thread(w, cudaErrorIllegalAddress,
                         "stack overflow in the kernel thread: it wrote below the bottom of its stack (set "
                         "CUDASIM_STACK_KB to more than the default 256 if the kernel really needs a large stack)");
  for (;;) {
    Fiber* next = b.faulted ? nullptr : pick_next(w, b, self, self_free);
    if (next == nullptr && !b.faulted && b.waiting > 0) {
      resolve_waiting(b);  // releases everybody into `runnable`, or faults the block
      continue;
    }
    if (next == self) return;  // this fiber itself goes on: no switch
    if (self_free && next != nullptr) b.free_fibers.push_back(self);
    w.current = next;
    switch_context(self->context, next != nullptr ? next->context : w.scheduler_context);
    return;
  }
}

/// Called on a fiber: parks the running thread until it is released and resumed.
void park(Worker& w) { switch_away(w, w.current, false); }

/// On a free fiber: resumes released coroutine threads one after another, releasing the next
/// barrier whenever every live thread waits at one, until the block is done or the next thread
/// to run is parked on a fiber of its own.
void resume_suspended_threads(BlockRun& b) {
  for (;;) {
    if (b.faulted) return;
    if (b.runnable_head < b.runnable.size()) {
      ThreadSlot& s = b.slots[b.runnable[b.runnable_head]];
      if (!s.coroutine) return;  // parked on a fiber: switch_away goes there
      take_runnable(b);
      const std::coroutine_handle<> thread = s.coroutine;
      s.coroutine = nullptr;
      thread.resume();  // runs to its next barrier or its end
      continue;
    }
    if (b.cursor.has_unstarted() || b.waiting == 0) return;
    resolve_waiting(b);
  }
}

void fiber_main(void* argument) {
  Fiber* self = static_cast<Fiber*>(argument);
  Worker& w = worker();
  for (;;) {
    BlockRun& b = *w.block;
    try {
      b.launch->kernel->run_threads(b.cursor);
      resume_suspended_threads(b);
    } catch (const KernelFault& fault) {
      fault_current_thread(w, fault.error, fault.message);
    } catch (const KernelTrap& trap) {
      fault_current_thread(w, cudaErrorLaunchFailure, trap.what);
    } catch (const std::exception& e) {
      fault_current_thread(w, cudaErrorLaunchFailure,
                           format_string("uncaught exception: %s", e.what()));
    } catch (...) {
      fault_current_thread(w, cudaErrorLaunchFailure, "uncaught exception of unknown type");
    }
    // Nothing left for this fiber to run: hand over to whoever can run. It may be resumed, as a
    // free fiber, to start threads or resume coroutines, and after its block ends, by the next
    // block that takes it (acquire_fiber remakes its frame only after a fault).
    switch_away(w, self, true);
  }
}

__attribute__((noinline)) void make_slots(BlockRun& b) {
  b.borrow(worker().block_vectors);
  b.slots.resize(b.cursor.num_threads);
  b.runnable.reserve(b.cursor.num_threads);
  b.barrier_waiters.reserve(b.cursor.num_threads);
  b.warps.resize((b.cursor.num_threads + kWarpSize - 1) / kWarpSize);
}

/// The per-thread state is made on the first wait: blocks that never wait need none.
inline void ensure_slots(BlockRun& b) {
  if (__builtin_expect(b.slots.empty(), 0)) make_slots(b);
}

/// Lanes that exist in warp `warp` (the last warp of a block may be partial).
unsigned existing_lanes(const BlockRun& b, unsigned warp) {
  const unsigned first = warp * kWarpSize;
  const unsigned count = static_cast<unsigned>(std::min<std::size_t>(kWarpSize, b.cursor.num_threads - first));
  return count == kWarpSize ? 0xffffffffu : ((1u << count) - 1);
}

std::uint64_t lane_result(const WarpGroup& g, unsigned lane) {
  const auto in_group = [&](unsigned l) { return l < kWarpSize && ((g.mask >> l) & 1u); };
  const int width = g.width;
  const int param = g.params[lane];
  switch (g.op) {
    case WarpOp::Sync: return 0;
    case WarpOp::Ballot:
    case WarpOp::All:
    case WarpOp::Any: {
      std::uint64_t ballot = 0;
      for (unsigned l = 0; l < kWarpSize; ++l)
        if (in_group(l) && g.values[l] != 0) ballot |= (1ull << l);
      if (g.op == WarpOp::Ballot) return ballot;
      if (g.op == WarpOp::Any) return ballot != 0;
      return ballot == g.mask;
    }
    case WarpOp::ShflIndex:
    case WarpOp::ShflUp:
    case WarpOp::ShflDown:
    case WarpOp::ShflXor: {
      const int segment_start = static_cast<int>(lane) / width * width;
      const int position = static_cast<int>(lane) - segment_start;
      int source = static_cast<int>(lane);
      if (g.op == WarpOp::ShflIndex) {
        source = segment_start + (((param % width) + width) % width);
      } else if (g.op == WarpOp::ShflUp) {
        if (position - param >= 0) source = static_cast<int>(lane) - param;
      } else if (g.op == WarpOp::ShflDown) {
        if (position + param < width) source = static_cast<int>(lane) + param;
      } else {
        const int target = static_cast<int>(lane) ^ param;
        if (target >= 0 && target < segment_start + width) source = target;
      }
      // Reading a lane outside the mask is undefined in CUDA. GPUs have been seen to return 0
      // (apache/tvm issue 12274, PaddlePaddle/CINN pull request 938), and NVIDIA's reduction
      // sample (reduce7's last warp) is only right with 0: so 0 here too.
      return in_group(static_cast<unsigned>(source)) ? g.values[source] : 0;
    }
    case WarpOp::MatchAny:
    case WarpOp::MatchAll: {
      // Values are compared as the bits the lanes passed (zero-extended to 64 bits).
      std::uint64_t same = 0;
      for (unsigned l = 0; l < kWarpSize; ++l)
        if (in_group(l) && g.values[l] == g.values[lane]) same |= 1ull << l;
      if (g.op == WarpOp::MatchAny) return same;
      return same == g.mask ? g.mask : 0;
    }
    case WarpOp::ReduceAdd:
    case WarpOp::ReduceMin:
    case WarpOp::ReduceMax:
    case WarpOp::ReduceAnd:
    case WarpOp::ReduceOr:
    case WarpOp::ReduceXor: {
      const bool is_signed = param != 0;
      std::uint32_t acc = 0;
      bool first = true;
      for (unsigned l = 0; l < kWarpSize; ++l) {
        if (!in_group(l)) continue;
        const auto v = static_cast<std::uint32_t>(g.values[l]);
        if (first) { acc = v; first = false; continue; }
        switch (g.op) {
          case WarpOp::ReduceAdd: acc += v; break;
          case WarpOp::ReduceAnd: acc &= v; break;
          case WarpOp::ReduceOr: acc |= v; break;
          case WarpOp::ReduceXor: acc ^= v; break;
          case WarpOp::ReduceMin:
            acc = is_signed ? static_cast<std::uint32_t>(std::min(static_cast<std::int32_t>(acc), static_cast<std::int32_t>(v)))
                            : std::min(acc, v);
            break;
          default:
            acc = is_signed ? static_cast<std::uint32_t>(std::max(static_cast<std::int32_t>(acc), static_cast<std::int32_t>(v)))
                            : std::max(acc, v);
        }
      }
      return acc;
    }
  }
  return 0;
}

/// Under CUDASIM_CHECK=barrier: every live thread waits at one barrier, but some threads of
/// the block never arrived (they exited, or took a branch without it), which is undefined in
/// CUDA. Reports the barrier and the missing threads and fails the block; returns false when
/// the whole block arrived.
bool report_partial_barrier(BlockRun& b) {
  const unsigned threads = b.cursor.num_threads;
  if (b.barrier_waiters.size() >= threads) return false;
  std::vector<bool> arrived(threads, false);
  for (unsigned t : b.barrier_waiters) arrived[t] = true;
  const dim3& extent = b.cursor.block_dim;
  constexpr unsigned kNamed = 8;  // threads named in the report; the rest are counted
  std::string missing;
  unsigned named = 0, first_missing = 0;
  for (unsigned t = 0; t < threads; ++t) {
    if (arrived[t]) continue;
    if (named == 0) first_missing = t;
    if (named < kNamed) missing += (named == 0 ? "" : ", ") + describe_thread(t, extent);
    ++named;
  }
  if (named > kNamed) missing += format_string(" and %u more", named - kNamed);
  const ThreadSlot& waiter = b.slots[b.barrier_waiters.front()];
  threadIdx = index_of(first_missing, extent);
  report_kernel_fault(
      *b.launch, b.block_index, threadIdx, cudaErrorLaunchFailure,
      format_string("partial barrier: %s() at %s:%u was reached by %zu of the block's %u threads; %s "
                    "never arrived (they have exited, or took a branch without this barrier). Every "
                    "thread of a block must reach the same __syncthreads: on a GPU this is undefined "
                    "behaviour (it may hang, or release early)",
                    waiter.what, waiter.file, waiter.line, b.barrier_waiters.size(), threads,
                    missing.c_str()));
  b.faulted = true;
  return true;
}

/// Releases the threads gathering in coalesced_threads(): each gets, as its result, the lanes of
/// its warp gathering at the same call site. Called when nothing else can run, so these are
/// exactly the lanes that reached the call together.
void release_coalesced(BlockRun& b) {
  const unsigned threads = static_cast<unsigned>(b.cursor.num_threads);
  for (unsigned t = 0; t < threads; ++t) {
    const ThreadSlot& s = b.slots[t];
    if (s.wait != WaitKind::Coalesced) continue;
    const unsigned warp = t / kWarpSize;
    unsigned mask = 0;
    for (unsigned lane = 0; lane < kWarpSize && warp * kWarpSize + lane < threads; ++lane) {
      const ThreadSlot& o = b.slots[warp * kWarpSize + lane];
      if (o.wait == WaitKind::Coalesced && same_site(o.file, o.line, s.file, s.line)) mask |= 1u << lane;
    }
    b.warps[warp].results[t % kWarpSize] = mask;
    b.runnable.push_back(t);  // its wait stays Coalesced until it resumes (take_runnable)
  }
  b.waiting -= b.coalesced_waiters;
  b.coalesced_waiters = 0;
}

/// Everything that can run has run and somebody still waits: lanes gathering in
/// coalesced_threads() are released first (those lanes may still reach a barrier); then either
/// all live threads wait at one __syncthreads (release them), or the block is stuck (report it
/// and fail the block).
void resolve_waiting(BlockRun& b) {
  if (b.coalesced_waiters > 0) {
    release_coalesced(b);
    return;
  }
  if (b.warp_waiters == 0 && b.tile_waiters == 0 && !b.barrier_mixed) {
    // Releasing when only the live threads arrived keeps programs running that a GPU might
    // run too; the check reports it instead.
    if (barrier_check_enabled() && report_partial_barrier(b)) return;
    // Every live thread waits at one __syncthreads: release them in arrival order.
    int count = 0;
    if (b.barrier_kind != BarrierKind::Plain)
      for (unsigned t : b.barrier_waiters) count += b.slots[t].predicate != 0;
    b.barrier_count = count;
    b.barrier_participants = static_cast<int>(b.barrier_waiters.size());
    if (shuffle_enabled()) {
      // A different but reproducible order of threads after each barrier, so that code that
      // is only right for one order (a missing barrier, a race) shows up.
      std::mt19937 order(shuffle_seed() ^ (b.block_index.x * 0x9e3779b9u) ^ (b.block_index.y << 16) ^
                         (++b.barriers_released * 0x85ebca6bu));
      std::shuffle(b.barrier_waiters.begin(), b.barrier_waiters.end(), order);
    }
    instrumentation_barrier_released(static_cast<unsigned>(b.barrier_waiters.size()));
    b.runnable.swap(b.barrier_waiters);
    b.runnable_head = 0;
    b.barrier_waiters.clear();
    b.barrier_file = nullptr;
    b.waiting = 0;
    b.grid_wait_pending = b.barrier_kind == BarrierKind::Grid;
    return;
  }
  const dim3& extent = b.cursor.block_dim;
  unsigned first_barrier = ~0u;
  for (unsigned t = 0; t < b.cursor.num_threads; ++t) {
    const ThreadSlot& s = b.slots[t];
    if (s.wait == WaitKind::Warp) {
      // A warp operation that cannot complete: name a lane it waits for.
      const unsigned warp = t / kWarpSize;
      for (unsigned lane = 0; lane < kWarpSize; ++lane) {
        if (!((s.warp_mask >> lane) & 1u)) continue;
        const unsigned other = warp * kWarpSize + lane;
        const ThreadSlot& o = b.slots[other];
        std::string why;
        if (has_exited(b, other)) {
          why = describe_thread(other, extent) + " has already exited";
        } else if (o.wait == WaitKind::Barrier) {
          why = format_string("%s waits at %s() at %s:%u", describe_thread(other, extent).c_str(),
                              o.what, o.file, o.line);
        } else if (o.wait == WaitKind::Warp && !same_site(o.file, o.line, s.file, s.line)) {
          why = format_string("%s waits at %s at %s:%u", describe_thread(other, extent).c_str(),
                              o.what, o.file, o.line);
        } else if (o.wait == WaitKind::Warp && o.warp_mask != s.warp_mask) {
          why = format_string("%s calls it with mask 0x%08x", describe_thread(other, extent).c_str(),
                              o.warp_mask);
        } else {
          continue;
        }
        threadIdx = index_of(t, extent);
        report_kernel_fault(
            *b.launch, b.block_index, threadIdx, cudaErrorLaunchFailure,
            format_string("deadlock: %s waits at %s(mask 0x%08x) at %s:%u for lane %u, but %s; "
                          "every lane named in the mask must reach the same warp operation",
                          describe_thread(t, extent).c_str(), s.what, s.warp_mask, s.file, s.line,
                          lane, why.c_str()));
        b.faulted = true;
        return;
      }
    } else if (s.wait == WaitKind::Tile) {
      // A tile operation that cannot complete: name a thread of the tile that is not there.
      const TileGroup* group = nullptr;
      for (const TileGroup& g : b.tile_groups)
        if (std::find(g.waiters.begin(), g.waiters.end(), t) != g.waiters.end()) group = &g;
      if (group == nullptr) continue;
      for (unsigned other = group->first; other < group->first + group->expected; ++other) {
        if (std::find(group->waiters.begin(), group->waiters.end(), other) != group->waiters.end()) continue;
        const ThreadSlot& o = b.slots[other];
        const std::string why = has_exited(b, other) ? describe_thread(other, extent) + " has already exited"
                                : o.wait == WaitKind::None
                                    ? describe_thread(other, extent) + " never arrived"
                                    : format_string("%s waits at %s at %s:%u", describe_thread(other, extent).c_str(),
                                                    o.what, o.file, o.line);
        threadIdx = index_of(t, extent);
        report_kernel_fault(*b.launch, b.block_index, threadIdx, cudaErrorLaunchFailure,
                            format_string("deadlock: %s waits at %s at %s:%u for the %u threads of its tile, but %s; "
                                          "every thread of a tile must reach the same tile operation",
                                          describe_thread(t, extent).c_str(), s.what, s.file, s.line,
                                          group->expected, why.c_str()));
        b.faulted = true;
        return;
      }
    } else if (s.wait == WaitKind::Barrier) {
      if (first_barrier == ~0u) {
        first_barrier = t;
      } else {
        const ThreadSlot& f = b.slots[first_barrier];
        if (!same_site(f.file, f.line, s.file, s.line)) {
          threadIdx = index_of(t, extent);
          report_kernel_fault(
              *b.launch, b.block_index, threadIdx, cudaErrorLaunchFailure,
              format_string("barrier divergence: %s waits at %s() at %s:%u while %s waits at %s() "
                            "at %s:%u; all threads of a block must reach the same __syncthreads",
                            describe_thread(first_barrier, extent).c_str(), f.what, f.file, f.line,
                            describe_thread(t, extent).c_str(), s.what, s.file, s.line));
          b.faulted = true;
          return;
        }
      }
    }
  }
  // Unreachable in practice: warp waiters always have a partner to blame above. Fail loudly
  // rather than release a barrier while lanes are still parked in a warp operation.
  report_kernel_fault(*b.launch, b.block_index, threadIdx, cudaErrorUnknown,
                      "internal error: a warp operation can never complete, with no reason found");
  b.faulted = true;
}

}  // namespace

void* dynamic_shared_memory_of_this_thread() { return worker().dynamic_shared.get(); }

void* allocate_thread_frame(std::size_t bytes) { return worker().frames.allocate(bytes); }

void thread_frame_range(const void*& begin, const void*& end) {
  FrameArena& frames = worker().frames;
  frames.reserve();
  begin = frames.begin();
  end = frames.end();
}

namespace {

/// What ends every block, finished or not: the instrumentation's bookkeeping, the running
/// block, and its fibers back to the pool. `fibers_reusable`: every fiber of the block is back
/// in fiber_main's switch_away (a normal end), so it can be resumed as it is; otherwise each gets
/// a fresh frame before it is used again.
void end_block(Worker& w, LaunchState& launch, bool fibers_reusable) {
  instrumentation_end_block(launch);
  w.block = nullptr;
  running_thread().launch = nullptr;
  for (Fiber* f : w.block_fibers) {
    f->idle_in_fiber_main = fibers_reusable;
    w.idle_fibers.push_back(f);
  }
  w.block_fibers.clear();
}

/// Runs one block; `exact_thread_index` as in ThreadCursor.
__attribute__((noinline)) bool run_block_attempt(LaunchState& launch, unsigned long long linear_block,
                                                 bool exact_thread_index) {
  Worker& w = worker();
  const dim3 grid = launch.config.grid;
  const dim3 block = launch.config.block;

  // On this stack, not in the thread-local worker: the kernel's inlined thread loop reads and
  // writes the cursor, and the memory instrumentation takes thread-local storage for shared
  // memory.
  BlockRun b(w.block_fibers);
  b.launch = &launch;
  uint3 index{static_cast<unsigned>(linear_block), 0, 0};  // a 1-D grid needs no 64-bit divisions
  if (grid.y != 1 || grid.z != 1) {
    index = uint3{static_cast<unsigned>(linear_block % grid.x),
                  static_cast<unsigned>((linear_block / grid.x) % grid.y),
                  static_cast<unsigned>(linear_block / (static_cast<unsigned long long>(grid.x) * grid.y))};
  }
  b.block_index = index;
  b.cursor.num_threads = block.x * block.y * block.z;
  b.cursor.block_dim = block;
  b.cursor.exact_thread_index = exact_thread_index;

  blockIdx = index;  // not read back from b: a wide load of narrow stores stalls forwarding
  threadIdx = uint3{0, 0, 0};  // 1-D blocks only ever update .x
  blockDim = block;
  gridDim = grid;
  w.block = &b;
  running_thread().launch = &launch;
  instrumentation_begin_block(launch, &b);

  // The first fiber runs threads in a plain loop; fibers hand over to each other from then on
  // and come back here only when the block is finished or has faulted.
  w.frames.reset();
  Fiber* first = free_fiber(w, b);
  w.current = first;
  switch_context(w.scheduler_context, first->context);
  w.current = nullptr;
  // Threads of a faulted block may still be suspended: end them (their locals' destructors run).
  for (ThreadSlot& s : b.slots)
    if (s.coroutine) s.coroutine.destroy();

  end_block(w, launch, /*fibers_reusable=*/!b.faulted);
  b.give_back(w.block_vectors);
  return !b.faulted;
}


/// The block faulted while threadIdx was not kept in memory (a signal: see RunningThread). Runs
/// it again with threadIdx exact, so that the fault happens again with the right thread named by
/// the handler, which ends the process. Output of the threads that run a second time is
/// discarded (their printf lines were printed the first time). Should the fault not happen again
/// (the kernel read what its first run wrote), it is reported without a thread.
[[noreturn]] void rerun_faulted_block(LaunchState& launch, unsigned long long linear_block) {
  RunningThread& running = running_thread();
  const int signal_number = running.fault_signal;
  const void* address = running.fault_address;
  // The handler was left by a jump, so its signal is still blocked: a second fault would kill
  // the process silently.
  sigset_t faulted;
  sigemptyset(&faulted);
  sigaddset(&faulted, signal_number);
  pthread_sigmask(SIG_UNBLOCK, &faulted, nullptr);
  // What the abandoned attempt left: its fibers stopped mid-thread; its suspended coroutines are
  // not ended (the process ends soon).
  Worker& w = worker();
  w.current = nullptr;
  end_block(w, launch, /*fibers_reusable=*/false);

  std::fflush(stdout);
  const int saved_stdout = dup(STDOUT_FILENO);
  const int null_output = open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (saved_stdout >= 0 && null_output >= 0) dup2(null_output, STDOUT_FILENO);
  run_block_attempt(launch, linear_block, /*exact_thread_index=*/true);
  std::fflush(stdout);
  if (saved_stdout >= 0) dup2(saved_stdout, STDOUT_FILENO);
  die_of_unrepeated_fault(launch, signal_number, address, blockIdx);
}

}  // namespace

bool run_block(LaunchState& launch, unsigned long long linear_block) {
  RunningThread& running = running_thread();
  sigjmp_buf rerun;
  if (sigsetjmp(rerun, /*savemask=*/0) != 0) rerun_faulted_block(launch, linear_block);
  running.rerun_exactly = &rerun;
  const bool ok = run_block_attempt(launch, linear_block, /*exact_thread_index=*/false);
  running.rerun_exactly = nullptr;
  return ok;
}

namespace {

/// Records the running thread as waiting at a barrier (as a parked fiber when `fiber` is set,
/// else as the suspended coroutine `coroutine`).
/// Hot: every thread of a kernel with barriers comes here at every barrier, so it is kept to a
/// few stores (the per-thread call site only matters for reports).
inline void arrive_at_barrier(BlockRun* b, Fiber* fiber, std::coroutine_handle<> coroutine, BarrierKind kind,
                              int predicate, const char* file, unsigned line) {
  ensure_slots(*b);
  const unsigned t = linear_thread();
  sync_cursor(*b, t);
  ThreadSlot& s = b->slots[t];
  s.fiber = fiber;
  s.coroutine = coroutine;
  s.index = threadIdx;
  s.wait = WaitKind::Barrier;
  s.file = file;
  s.line = line;
  s.what = barrier_name(kind);
  s.barrier_kind = kind;
  s.predicate = predicate;
  ++b->waiting;
  if (b->barrier_file == nullptr) {
    b->barrier_file = file;
    b->barrier_line = line;
    b->barrier_kind = kind;
  } else if ((b->barrier_file != file || b->barrier_line != line) &&
             !same_site(b->barrier_file, b->barrier_line, file, line)) {
    b->barrier_mixed = true;
  }
  b->barrier_waiters.push_back(t);
}

}  // namespace

namespace {

/// The rewrite fissions a kernel only where it sees every barrier and warp operation the kernel
/// makes; one reached through a call it could not follow (a function pointer, a library) would
/// wait forever for threads that run only after the caller returns. Fail the launch with a
/// message that says what to do, rather than hang or compute something wrong.
[[noreturn]] void refuse_wait_in_fissioned_block(const char* what, const char* file, unsigned line) {
  static thread_local std::string message;  // a trap carries a C string
  message = format_string(
      "%s at %s:%u was reached in a kernel that the simulator runs as loops over the threads of "
      "a block (loop fission), where no thread can wait for another; run it with "
      "CUDASIM_FISSION=0 and report this to the course",
      what, file, line);
  throw KernelTrap{message.c_str()};
}

std::atomic<int> fission_override{1};  // 0: the program turned it off (set_loop_fission)

}  // namespace

bool fission_allowed() {
  static const bool on = [] {
    const char* env = std::getenv("CUDASIM_FISSION");
    const bool off = env != nullptr && (std::strcmp(env, "0") == 0 || std::strcmp(env, "off") == 0);
    return !off && !checks_reorder_or_track_threads();
  }();
  return on && fission_override.load(std::memory_order_relaxed) != 0;
}

std::size_t begin_fissioned_block() noexcept {
  BlockRun* b = this_worker != nullptr ? this_worker->block : nullptr;
  // The block's first thread, before any other started (the 1-D thread loop leaves the cursor
  // at 0 until a thread calls the scheduler; the 2-D one counts the running thread) or waited.
  // A block run again exactly after a fault (rerun_faulted_block) takes the coroutine path: the
  // fissioned loops let the compiler keep threadIdx in registers (and vectorize them), so the
  // fault handler could not tell which thread faulted.
  if (b == nullptr || linear_thread() != 0 || b->cursor.next_thread > 1 || !b->slots.empty() ||
      b->cursor.exact_thread_index || !fission_allowed())
    return 0;
  b->cursor.next_thread = b->cursor.num_threads;
  b->fissioned = true;
  b->launch->traffic.fissioned_blocks.fetch_add(1, std::memory_order_relaxed);
  return b->cursor.num_threads;
}

void fissioned_barrier(std::size_t threads, const char*, unsigned) {
  instrumentation_barrier_released(static_cast<unsigned>(threads));
}

int block_barrier(BarrierKind kind, int predicate, const char* file, unsigned line) {
  Worker& w = worker();
  BlockRun* b = w.block;
  if (b == nullptr) {
    report("%s() called outside a kernel at %s:%u; ignored", barrier_name(kind), file, line);
    return 0;
  }
  if (b->fissioned) refuse_wait_in_fissioned_block(barrier_name(kind), file, line);
  arrive_at_barrier(b, w.current, nullptr, kind, predicate, file, line);
  park(w);
  return released_barrier_result(kind);
}

namespace {

std::string describe_block(const uint3& b) { return format_string("block (%u,%u,%u)", b.x, b.y, b.z); }

/// The report of a grid.sync() that a block which has exited never reached.
std::string grid_deadlock(const GridBarrier& g, const uint3& waiter, const char* file, unsigned line) {
  return format_string("deadlock: %s waits at grid_group::sync() at %s:%u for every block of the cooperative grid, "
                       "but %s has exited without reaching it; every block must reach the same grid.sync()",
                       describe_block(waiter).c_str(), file, line, describe_block(g.first_exited).c_str());
}

/// Called by the first thread of block `b` to resume from a released grid.sync(): waits (the
/// whole OS thread, that is the whole block) until every block of the grid has arrived. Throws
/// a KernelTrap when that can never happen (a block exited, or waits at another grid.sync()), or
/// when another block faulted.
void wait_for_grid(BlockRun& b, const char* file, unsigned line) {
  LaunchState& launch = *b.launch;
  GridBarrier& g = *launch.grid_barrier;
  static thread_local std::string message;
  std::unique_lock<std::mutex> lock(g.mutex);
  if (g.broken.empty()) {
    if (g.arrived == 0) {
      g.file = file;
      g.line = line;
      g.first_waiter = b.block_index;
    } else if (!same_site(g.file, g.line, file, line)) {
      g.broken = format_string("grid barrier divergence: %s waits at grid_group::sync() at %s:%u while %s waits at "
                               "grid_group::sync() at %s:%u; every block of a cooperative grid must reach the same "
                               "grid.sync()",
                               describe_block(b.block_index).c_str(), file, line,
                               describe_block(g.first_waiter).c_str(), g.file, g.line);
    }
  }
  if (g.broken.empty()) {
    const unsigned long long generation = g.generation;
    ++g.arrived;
    if (g.arrived + g.exited == g.total && g.any_exited) {
      g.broken = grid_deadlock(g, b.block_index, file, line);
    } else if (g.arrived == g.total) {
      g.arrived = 0;
      ++g.generation;
      g.changed.notify_all();
      return;
    } else {
      g.changed.wait(lock, [&] {
        return g.generation != generation || !g.broken.empty() || launch.failed.load(std::memory_order_relaxed);
      });
      if (g.generation != generation) return;
    }
  }
  g.changed.notify_all();
  // Another block faulted first: its report stands (the launch reports one fault).
  message = g.broken.empty() ? std::string("another block of the cooperative grid faulted") : g.broken;
  throw KernelTrap{message.c_str()};
}

}  // namespace

void grid_block_exited(LaunchState& launch, const uint3& block) {
  GridBarrier& g = *launch.grid_barrier;
  std::lock_guard<std::mutex> lock(g.mutex);
  ++g.exited;
  if (!g.any_exited) {
    g.any_exited = true;
    g.first_exited = block;
  }
  if (g.arrived > 0 && g.arrived + g.exited == g.total && g.broken.empty())
    g.broken = grid_deadlock(g, g.first_waiter, g.file, g.line);
  g.changed.notify_all();
}

void grid_sync(const char* file, unsigned line) {
  Worker& w = worker();
  BlockRun* b = w.block;
  if (b == nullptr) {
    report("grid_group::sync() called outside a kernel at %s:%u; ignored", file, line);
    return;
  }
  if (b->fissioned) refuse_wait_in_fissioned_block("grid_group::sync()", file, line);
  if (b->launch->grid_barrier == nullptr) {
    static thread_local std::string message;
    message = format_string("grid_group::sync() at %s:%u in a kernel not launched with cudaLaunchCooperativeKernel: "
                            "a grid-wide barrier needs a cooperative launch (this_grid().is_valid() is false)",
                            file, line);
    throw KernelTrap{message.c_str()};
  }
  arrive_at_barrier(b, w.current, nullptr, BarrierKind::Grid, 0, file, line);
  park(w);
  if (b->grid_wait_pending) {
    b->grid_wait_pending = false;
    wait_for_grid(*b, file, line);
  }
}

template <BarrierKind Kind>
bool BarrierAwaiter<Kind>::await_suspend(std::coroutine_handle<> thread) const {
  BlockRun* b = this_worker != nullptr ? this_worker->block : nullptr;
  if (b == nullptr) {
    report("%s() called outside a kernel at %s:%u; ignored", barrier_name(Kind), file, line);
    return false;
  }
  if (b->fissioned) refuse_wait_in_fissioned_block(barrier_name(Kind), file, line);
  arrive_at_barrier(b, nullptr, thread, Kind, predicate, file, line);
  return true;
}
template struct BarrierAwaiter<BarrierKind::Plain>;
template struct BarrierAwaiter<BarrierKind::Count>;
template struct BarrierAwaiter<BarrierKind::And>;
template struct BarrierAwaiter<BarrierKind::Or>;

int released_barrier_result(BarrierKind kind) {
  const BlockRun* b = this_worker != nullptr ? this_worker->block : nullptr;
  if (b == nullptr) return 0;
  switch (kind) {
    case BarrierKind::Plain: return 0;
    case BarrierKind::Count: return b->barrier_count;
    case BarrierKind::And: return b->barrier_count == b->barrier_participants;
    case BarrierKind::Or: return b->barrier_count != 0;
    case BarrierKind::Grid: return 0;
  }
  return 0;
}

namespace {
/// Records the running thread `t` as waiting (`kind`, at `file`:`line` in `what`) on its fiber,
/// which the caller then parks.
ThreadSlot& record_fiber_wait(Worker& w, BlockRun& b, unsigned t, WaitKind kind, const char* file, unsigned line,
                              const char* what) {
  ThreadSlot& s = b.slots[t];
  s.fiber = w.current;
  s.coroutine = nullptr;
  s.index = threadIdx;
  s.wait = kind;
  s.file = file;
  s.line = line;
  s.what = what;
  ++b.waiting;
  return s;
}
}  // namespace

namespace {
/// The prologue of every operation a thread may wait in besides the block barrier: the
/// thread's block (nullptr outside a kernel) with its bookkeeping ready, and the thread's
/// linear index. A fissioned block runs its threads one after another and cannot wait.
BlockRun* enter_collective(const char* what, const char* file, unsigned line, unsigned& thread) {
  BlockRun* b = worker().block;
  if (b == nullptr) return nullptr;
  if (b->fissioned) refuse_wait_in_fissioned_block(what, file, line);
  ensure_slots(*b);
  thread = linear_thread();
  sync_cursor(*b, thread);
  return b;
}
}  // namespace

std::uint64_t warp_collective(WarpOp op, unsigned mask, std::uint64_t value, int param, int width,
                              const char* file, unsigned line) {
  unsigned t = 0;
  BlockRun* b = enter_collective(warp_op_name(op), file, line, t);
  if (b == nullptr) {
    report("%s called outside a kernel at %s:%u; ignored", warp_op_name(op), file, line);
    return value;
  }
  Worker& w = worker();
  const unsigned warp = t / kWarpSize;
  const unsigned lane = t % kWarpSize;
  if (!((mask >> lane) & 1u))
    throw KernelTrap{"a warp operation was called by a lane whose bit is not set in its mask "
                     "(the mask must include the calling lane)"};
  instrumentation_count_warp_op();
  if (width <= 0 || width > 32 || (width & (width - 1)) != 0)
    throw KernelTrap{"the width of a warp shuffle must be a power of two from 1 to 32"};

  WarpState& ws = b->warps[warp];
  const unsigned effective_mask = mask & existing_lanes(*b, warp);
  WarpGroup* group = nullptr;
  for (WarpGroup& g : ws.pending) {
    if (!(g.mask & effective_mask)) continue;  // a disjoint group of lanes: independent
    // Another collective over another set of lanes is independent too, even where the sets
    // overlap: a lane of both finishes that one, then comes here, as on a GPU with independent
    // thread scheduling (NVIDIA's binaryPartitionCG reduces in each partition, then
    // __syncwarp()s the warp). If it never comes, the block is reported stuck. The same lanes
    // at another call, or the same call with another mask, are a divergence.
    const bool same_call = g.op == op && same_site(g.file, g.line, file, line);
    if (g.mask != effective_mask && !same_call) continue;
    if (g.mask != effective_mask || !same_call) {
      static thread_local std::string message;
      const unsigned first_waiting = warp * kWarpSize + static_cast<unsigned>(__builtin_ctz(g.arrived));
      message = format_string(
          "warp divergence: lane %u calls %s(mask 0x%08x) at %s:%u while %s and the other lanes "
          "0x%08x of its warp wait in %s(mask 0x%08x) at %s:%u",
          lane, warp_op_name(op), mask, file, line,
          describe_thread(first_waiting, b->cursor.block_dim).c_str(), g.arrived,
          warp_op_name(g.op), g.mask, g.file, g.line);
      throw KernelTrap{message.c_str()};
    }
    group = &g;
    break;
  }
  if (group == nullptr) {
    ws.pending.push_back(WarpGroup{op, effective_mask, 0, width, file, line, {}, {}});
    group = &ws.pending.back();
  }
  group->values[lane] = value;
  group->params[lane] = param;
  group->arrived |= 1u << lane;

  if (group->arrived == group->mask) {
    // The last lane to arrive computes everybody's result and releases the others.
    for (unsigned l = 0; l < kWarpSize; ++l) {
      if (!((group->mask >> l) & 1u)) continue;
      ws.results[l] = lane_result(*group, l);
      if (l != lane) {
        --b->waiting;
        --b->warp_waiters;
        b->runnable.push_back(warp * kWarpSize + l);
      }
    }
    if (group->op == WarpOp::Sync)  // the warp's lanes that exist: all 32 but in a block's last warp
      instrumentation_threads_synced(warp * kWarpSize,
                                     static_cast<unsigned>(__builtin_popcount(existing_lanes(*b, warp))), group->mask);
    ws.pending.erase(ws.pending.begin() + (group - ws.pending.data()));
    return ws.results[lane];
  }

  record_fiber_wait(w, *b, t, WaitKind::Warp, file, line, warp_op_name(op)).warp_mask = effective_mask;
  ++b->warp_waiters;
  park(w);
  return ws.results[lane];
}

std::uint64_t tile_collective(TileOp op, unsigned tile_size, std::uint64_t value, int param, const char* file,
                              unsigned line) {
  unsigned t = 0;
  BlockRun* b = enter_collective(tile_op_name(op), file, line, t);
  if (b == nullptr) {
    report("%s called outside a kernel at %s:%u; ignored", tile_op_name(op), file, line);
    return value;
  }
  Worker& w = worker();
  instrumentation_count_warp_op();
  const unsigned first = t - t % tile_size;
  const unsigned expected = std::min<unsigned>(tile_size, static_cast<unsigned>(b->cursor.num_threads) - first);
  TileGroup* group = nullptr;
  for (TileGroup& g : b->tile_groups) {
    if (g.first != first) continue;
    if (g.op != op || !same_site(g.file, g.line, file, line)) {
      static thread_local std::string message;
      message = format_string(
          "tile divergence: %s calls %s at %s:%u while %s of its %u-thread tile waits in %s at %s:%u; "
          "every thread of a tile must reach the same tile operation",
          describe_thread(t, b->cursor.block_dim).c_str(), tile_op_name(op), file, line,
          describe_thread(g.waiters.front(), b->cursor.block_dim).c_str(), tile_size, tile_op_name(g.op), g.file,
          g.line);
      throw KernelTrap{message.c_str()};
    }
    group = &g;
    break;
  }
  if (group == nullptr) {
    b->tile_groups.push_back(TileGroup{op, first, expected, file, line, {}, std::vector<std::uint64_t>(expected, 0)});
    group = &b->tile_groups.back();
  }
  group->values[t - first] = op == TileOp::Shfl ? value : (value != 0);
  group->waiters.push_back(t);
  if (group->waiters.size() < group->expected) {
    record_fiber_wait(w, *b, t, WaitKind::Tile, file, line, tile_op_name(op));
    ++b->tile_waiters;
    park(w);
    return b->slots[t].tile_result;
  }
  // The last thread to arrive computes the result and releases the others.
  std::uint64_t result = 0;
  if (op == TileOp::Shfl) {
    result = group->values[static_cast<unsigned>(param) % group->expected];
  } else if (op == TileOp::Any || op == TileOp::All) {
    result = op == TileOp::All ? 1 : 0;
    for (std::uint64_t v : group->values) result = op == TileOp::All ? (result & v) : (result | v);
  }
  for (unsigned other : group->waiters) {
    if (other == t) continue;
    b->slots[other].tile_result = result;
    --b->waiting;
    --b->tile_waiters;
    b->runnable.push_back(other);
  }
  instrumentation_threads_synced(group->first, group->expected, ~0u,
                                 group->expected == static_cast<unsigned>(b->cursor.num_threads));
  b->tile_groups.erase(b->tile_groups.begin() + (group - b->tile_groups.data()));
  return result;
}

unsigned coalesced_lanes(const char* file, unsigned line, const char* what) {
  unsigned t = 0;
  BlockRun* b = enter_collective(what, file, line, t);
  if (b == nullptr) return 1;
  Worker& w = worker();
  record_fiber_wait(w, *b, t, WaitKind::Coalesced, file, line, what);
  ++b->coalesced_waiters;
  park(w);
  return static_cast<unsigned>(b->warps[t / kWarpSize].results[t % kWarpSize]);
}

}  // namespace cudasim::detail

unsigned __activemask(const char* file, unsigned line) {
  return cudasim::detail::coalesced_lanes(file, line, "__activemask");
}


namespace cudasim::detail {
bool device_assert_failed(const char* expression, const char* file, unsigned line, const char* function) {
  if (this_worker != nullptr && this_worker->block != nullptr) {
    // As on a GPU: the launch fails with cudaErrorAssert, which is sticky.
    throw KernelFault{cudaErrorAssert,
                      format_string("Assertion `%s' failed (%s:%u, in %s)", expression, file, line, function)};
  }
  // Not in a kernel thread (a device function called from host code): what the C library does.
  std::fprintf(stderr, "%s:%u: %s: Assertion `%s' failed.\n", file, line, function, expression);
  std::abort();
}
}  // namespace cudasim::detail

namespace cudasim {
void set_loop_fission(bool on) { detail::fission_override.store(on ? 1 : 0, std::memory_order_relaxed); }
bool loop_fission() { return detail::fission_allowed(); }
}  // namespace cudasim
