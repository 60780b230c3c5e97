// Fibers: the simulated threads of one block, each with its own stack, switched by hand.
//
// Why hand-written: ucontext's swapcontext saves the signal mask with a system call (~300 ns
// a switch); a switch that saves only the callee-saved registers costs a few nanoseconds, and a
// tiled matmul switches twice per thread per tile step. x86-64 and AArch64 have the fast path;
// other machines fall back to ucontext.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace cudasim::detail {

/// A fiber's saved stack pointer (the registers sit on its stack).
struct FiberContext {
  void* stack_pointer = nullptr;
};

/// Saves the running context into `from` and resumes `to`.
void switch_context(FiberContext& from, FiberContext& to) noexcept;

/// Where a worker's stacks come from once the process holds many (see FiberStack): chunks of
/// one mapping each, a guard page below kStacksPerChunk stacks, so a chunk costs the process
/// two memory mappings however many threads wait on it.
class StackSlab {
 public:
  /// Stacks of `stack_bytes`, rounded up to whole pages.
  explicit StackSlab(std::size_t stack_bytes);
  ~StackSlab();
  StackSlab(const StackSlab&) = delete;
  StackSlab& operator=(const StackSlab&) = delete;

  /// The lowest byte of a free stack of stack_bytes().
  char* take();
  /// Returns a stack taken before, its canary clean for the next taker.
  void give_back(char* base) noexcept;
  /// True when `address` lies in the guard page of one of the chunks.
  bool in_guard(const void* address) const noexcept;
  std::size_t stack_bytes() const noexcept { return stack_bytes_; }

  static constexpr std::size_t kStacksPerChunk = 64;

 private:
  std::size_t stack_bytes_;
  std::vector<char*> chunks_;  // each: guard page, then kStacksPerChunk stacks
  std::vector<char*> free_;
};

/// A fiber's stack. While the process holds fewer than kGuardedStackBudget of them, each is a
/// mapping of its own with a guard page below it, so an overflow faults at once and is named.
/// Each such stack costs two memory mappings, and a process may have 65530: a cooperative grid
/// whose threads all wait at grid.sync() at once could not get one stack each. Past the budget
/// a stack is taken from the worker's `slab` instead, whose lowest bytes (zero as the system
/// gave them) are a canary that overflowed() checks whenever its thread stops running; an
/// overflow past a whole chunk reaches the chunk's guard page.
class FiberStack {
 public:
  /// A mapping of its own, with a guard page.
  explicit FiberStack(std::size_t usable_bytes);
  /// A stack of `slab`, with its canary.
  explicit FiberStack(StackSlab& slab);
  ~FiberStack();
  FiberStack(const FiberStack&) = delete;
  FiberStack& operator=(const FiberStack&) = delete;

  char* top() const noexcept { return base_ + size_; }
  char* base() const noexcept { return base_; }
  std::size_t size() const noexcept { return size_; }
  /// True when `address` lies in the guard page below this stack (or its slab chunk's): used
  /// to name a stack overflow.
  bool in_guard(const void* address) const noexcept;
  /// True when the thread on this slab stack has written below its bottom (the canary is
  /// damaged); always false for a stack with a guard page of its own.
  bool overflowed() const noexcept;

  static constexpr std::size_t kGuardedStackBudget = 16384;

 private:
  StackSlab* slab_ = nullptr;  // null: a mapping of its own
  char* mapping_ = nullptr;    // guard page + usable area (own mapping only)
  char* base_ = nullptr;       // lowest usable byte
  std::size_t size_ = 0;
};

/// A stack of `usable_bytes` for a new fiber: guarded while the process holds fewer than
/// FiberStack::kGuardedStackBudget guarded stacks, else from `slab`.
std::unique_ptr<FiberStack> new_fiber_stack(std::size_t usable_bytes, StackSlab& slab);

/// Prepares `context` so that the first switch to it calls `entry(argument)` on `stack`.
/// `entry` must never return.
void make_context(FiberContext& context, FiberStack& stack, void (*entry)(void*), void* argument);

}  // namespace cudasim::detail
