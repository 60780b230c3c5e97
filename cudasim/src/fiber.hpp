// Fibers: the simulated threads of one block, each with its own stack, switched by hand.
//
// Why hand-written: ucontext's swapcontext saves the signal mask with a system call (~300 ns
// a switch); a switch that saves only the callee-saved registers costs a few nanoseconds, and a
// tiled matmul switches twice per thread per tile step. x86-64 and AArch64 have the fast path;
// other machines fall back to ucontext.
#pragma once

#include <cstddef>
#include <vector>

namespace cudasim::detail {

/// A fiber's saved stack pointer (the registers sit on its stack).
struct FiberContext {
  void* stack_pointer = nullptr;
};

/// Saves the running context into `from` and resumes `to`.
void switch_context(FiberContext& from, FiberContext& to) noexcept;

/// A stack from mmap with a guard page below it, so an overflow faults instead of silently
/// corrupting a neighbour.
class FiberStack {
 public:
  explicit FiberStack(std::size_t usable_bytes);
  ~FiberStack();
  FiberStack(const FiberStack&) = delete;
  FiberStack& operator=(const FiberStack&) = delete;

  char* top() const noexcept { return base_ + size_; }
  char* base() const noexcept { return base_; }
  std::size_t size() const noexcept { return size_; }
  /// True when `address` lies in the guard page (used to name a stack overflow).
  bool in_guard(const void* address) const noexcept;

 private:
  char* mapping_ = nullptr;  // guard page + usable area
  char* base_ = nullptr;     // lowest usable byte
  std::size_t size_ = 0;
};

/// Prepares `context` so that the first switch to it calls `entry(argument)` on `stack`.
/// `entry` must never return.
void make_context(FiberContext& context, FiberStack& stack, void (*entry)(void*), void* argument);

}  // namespace cudasim::detail
