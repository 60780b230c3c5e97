// Context switching for the simulator's fibers. See fiber.hpp for why it is hand-written.
#include "fiber.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

namespace cudasim::detail {

namespace {
std::size_t page_size() {
  static const std::size_t size = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return size;
}

/// Stacks with a guard page of their own, process-wide (FiberStack::kGuardedStackBudget).
std::atomic<std::size_t> guarded_stacks{0};

// The canary: the lowest bytes of a slab stack, which a thread reaches only by overflowing.
// They are zero as the system gave them (give_back cleans those of a damaged stack), and are
// left untouched, so a waiting thread costs the pages its frames use and not one more for
// the canary: a cooperative grid may hold a quarter of a million threads. (An overflow that
// writes only zeros there goes unseen; memcheck still sees a kernel's own stores below its
// stack.)
constexpr std::size_t kCanaryBytes = 64;
}  // namespace

FiberStack::FiberStack(std::size_t usable_bytes) {
  const std::size_t page = page_size();
  size_ = (usable_bytes + page - 1) / page * page;
  void* mapping = mmap(nullptr, size_ + page, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapping == MAP_FAILED) throw std::bad_alloc();
  mapping_ = static_cast<char*>(mapping);
  mprotect(mapping_, page, PROT_NONE);  // the guard page: stacks grow down into it
  base_ = mapping_ + page;
  guarded_stacks.fetch_add(1, std::memory_order_relaxed);
}

FiberStack::FiberStack(StackSlab& slab) : slab_(&slab), base_(slab.take()), size_(slab.stack_bytes()) {}

std::unique_ptr<FiberStack> new_fiber_stack(std::size_t usable_bytes, StackSlab& slab) {
  // Racy by a few stacks between OS threads, which the budget's margin absorbs.
  if (guarded_stacks.load(std::memory_order_relaxed) < FiberStack::kGuardedStackBudget)
    return std::make_unique<FiberStack>(usable_bytes);
  return std::make_unique<FiberStack>(slab);
}

FiberStack::~FiberStack() {
  if (slab_ != nullptr) {
    slab_->give_back(base_);
    return;
  }
  munmap(mapping_, size_ + page_size());
  guarded_stacks.fetch_sub(1, std::memory_order_relaxed);
}

bool FiberStack::in_guard(const void* address) const noexcept {
  if (slab_ != nullptr) return slab_->in_guard(address);
  const char* a = static_cast<const char*>(address);
  return a >= mapping_ && a < base_;
}

bool FiberStack::overflowed() const noexcept {
  if (slab_ == nullptr) return false;
  for (std::size_t i = 0; i < kCanaryBytes; ++i)
    if (base_[i] != 0) return true;
  return false;
}

StackSlab::StackSlab(std::size_t stack_bytes)
    : stack_bytes_((stack_bytes + page_size() - 1) / page_size() * page_size()) {}

StackSlab::~StackSlab() {
  for (char* chunk : chunks_) munmap(chunk, page_size() + kStacksPerChunk * stack_bytes_);
}

char* StackSlab::take() {
  if (free_.empty()) {
    const std::size_t page = page_size();
    void* mapping = mmap(nullptr, page + kStacksPerChunk * stack_bytes_, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mapping == MAP_FAILED) throw std::bad_alloc();
    char* chunk = static_cast<char*>(mapping);
    mprotect(chunk, page, PROT_NONE);  // below the lowest stack of the chunk
    chunks_.push_back(chunk);
    // Highest first, so that take() hands out the lowest stack first (pop_back).
    for (std::size_t i = kStacksPerChunk; i-- > 0;) free_.push_back(chunk + page + i * stack_bytes_);
  }
  char* base = free_.back();
  free_.pop_back();
  return base;
}

void StackSlab::give_back(char* base) noexcept {
  // Stacks are given back when their worker ends, just before the chunks are unmapped: no
  // madvise (a quarter of a million of them made most of a large cooperative launch's time).
  // One taken again must start with its canary clean.
  if (std::any_of(base, base + kCanaryBytes, [](char c) { return c != 0; })) std::memset(base, 0, kCanaryBytes);
  free_.push_back(base);
}

bool StackSlab::in_guard(const void* address) const noexcept {
  const char* a = static_cast<const char*>(address);
  for (const char* chunk : chunks_)
    if (a >= chunk && a < chunk + page_size()) return true;
  return false;
}

}  // namespace cudasim::detail

// CUDASIM_PORTABLE_CONTEXT forces the ucontext fallback (to test it on x86-64).
#if defined(__x86_64__) && !defined(CUDASIM_PORTABLE_CONTEXT)

// switch_context(from = rdi, to = rsi): push the System V callee-saved registers on the current
// stack, store rsp into from, load rsp from to, and pop the same set in reverse. `ret` then
// continues wherever `to` was suspended. The floating-point control words (MXCSR, x87 CW) are
// not switched: all fibers of a process share one rounding mode, and ldmxcsr/fldcw would
// double the cost of a switch.
asm(R"(
  .text
  .globl cudasim_switch_context
  .type cudasim_switch_context, @function
cudasim_switch_context:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq (%rsi), %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size cudasim_switch_context, .-cudasim_switch_context

  .globl cudasim_fiber_trampoline
  .type cudasim_fiber_trampoline, @function
cudasim_fiber_trampoline:
  movq %r12, %rdi
  callq *%r13
  ud2
  .size cudasim_fiber_trampoline, .-cudasim_fiber_trampoline
)");

extern "C" void cudasim_switch_context(void** from_sp, void** to_sp) noexcept;
extern "C" void cudasim_fiber_trampoline();

namespace cudasim::detail {

void switch_context(FiberContext& from, FiberContext& to) noexcept {
  cudasim_switch_context(&from.stack_pointer, &to.stack_pointer);
}

void make_context(FiberContext& context, FiberStack& stack, void (*entry)(void*), void* argument) {
  // Build the frame cudasim_switch_context pops: r15, r14, r13 (entry), r12 (argument), rbx,
  // rbp, and the return address (the trampoline). The top is 16-byte aligned so that the
  // trampoline's call leaves the ABI's alignment at the entry function.
  auto* top = reinterpret_cast<std::uintptr_t*>(reinterpret_cast<std::uintptr_t>(stack.top()) & ~std::uintptr_t{15});
  std::uintptr_t* sp = top - 7;
  sp[0] = 0;                                                  // r15
  sp[1] = 0;                                                  // r14
  sp[2] = reinterpret_cast<std::uintptr_t>(entry);            // r13
  sp[3] = reinterpret_cast<std::uintptr_t>(argument);         // r12
  sp[4] = 0;                                                  // rbx
  sp[5] = 0;                                                  // rbp
  sp[6] = reinterpret_cast<std::uintptr_t>(&cudasim_fiber_trampoline);  // return address
  context.stack_pointer = sp;
}

}  // namespace cudasim::detail

#elif defined(__aarch64__) && !defined(CUDASIM_PORTABLE_CONTEXT)

// switch_context(from = x0, to = x1): store x19-x30 and d8-d15 (the AAPCS64 callee-saved
// set) below sp, save sp into from, load sp from to, restore, and return through x30.
asm(R"(
  .text
  .globl cudasim_switch_context
  .type cudasim_switch_context, %function
cudasim_switch_context:
  sub sp, sp, #160
  stp x19, x20, [sp, #0]
  stp x21, x22, [sp, #16]
  stp x23, x24, [sp, #32]
  stp x25, x26, [sp, #48]
  stp x27, x28, [sp, #64]
  stp x29, x30, [sp, #80]
  stp d8, d9, [sp, #96]
  stp d10, d11, [sp, #112]
  stp d12, d13, [sp, #128]
  stp d14, d15, [sp, #144]
  mov x2, sp
  str x2, [x0]
  ldr x2, [x1]
  mov sp, x2
  ldp x19, x20, [sp, #0]
  ldp x21, x22, [sp, #16]
  ldp x23, x24, [sp, #32]
  ldp x25, x26, [sp, #48]
  ldp x27, x28, [sp, #64]
  ldp x29, x30, [sp, #80]
  ldp d8, d9, [sp, #96]
  ldp d10, d11, [sp, #112]
  ldp d12, d13, [sp, #128]
  ldp d14, d15, [sp, #144]
  add sp, sp, #160
  ret
  .size cudasim_switch_context, .-cudasim_switch_context

  .globl cudasim_fiber_trampoline
  .type cudasim_fiber_trampoline, %function
cudasim_fiber_trampoline:
  mov x0, x19
  blr x20
  brk #0
  .size cudasim_fiber_trampoline, .-cudasim_fiber_trampoline
)");

extern "C" void cudasim_switch_context(void** from_sp, void** to_sp) noexcept;
extern "C" void cudasim_fiber_trampoline();

namespace cudasim::detail {

void switch_context(FiberContext& from, FiberContext& to) noexcept {
  cudasim_switch_context(&from.stack_pointer, &to.stack_pointer);
}

void make_context(FiberContext& context, FiberStack& stack, void (*entry)(void*), void* argument) {
  auto* top = reinterpret_cast<std::uintptr_t*>(reinterpret_cast<std::uintptr_t>(stack.top()) & ~std::uintptr_t{15});
  std::uintptr_t* sp = top - 20;  // 160 bytes: the frame the switch restores
  for (int i = 0; i < 20; ++i) sp[i] = 0;
  sp[0] = reinterpret_cast<std::uintptr_t>(argument);                    // x19
  sp[1] = reinterpret_cast<std::uintptr_t>(entry);                       // x20
  sp[11] = reinterpret_cast<std::uintptr_t>(&cudasim_fiber_trampoline);  // x30
  context.stack_pointer = sp;
}

}  // namespace cudasim::detail

#else

#include <ucontext.h>

#include <memory>

// Portable fallback: slower (swapcontext saves the signal mask with a system call) but correct.
namespace cudasim::detail {

namespace {
struct PortableContext {
  ucontext_t context;
};
}  // namespace

void switch_context(FiberContext& from, FiberContext& to) noexcept {
  if (from.stack_pointer == nullptr) from.stack_pointer = new PortableContext();
  swapcontext(&static_cast<PortableContext*>(from.stack_pointer)->context,
              &static_cast<PortableContext*>(to.stack_pointer)->context);
}

void make_context(FiberContext& context, FiberStack& stack, void (*entry)(void*), void* argument) {
  // A fiber's context is remade each time the fiber is reused: keep its allocation.
  auto* portable = context.stack_pointer != nullptr ? static_cast<PortableContext*>(context.stack_pointer)
                                                    : new PortableContext();
  getcontext(&portable->context);
  portable->context.uc_stack.ss_sp = stack.base();
  portable->context.uc_stack.ss_size = stack.size();
  portable->context.uc_link = nullptr;
  // makecontext passes int arguments; split the pointers into halves.
  const auto e = reinterpret_cast<std::uintptr_t>(entry);
  const auto a = reinterpret_cast<std::uintptr_t>(argument);
  makecontext(&portable->context,
              reinterpret_cast<void (*)()>(+[](unsigned e_lo, unsigned e_hi, unsigned a_lo, unsigned a_hi) {
                auto fn = reinterpret_cast<void (*)(void*)>((std::uintptr_t{e_hi} << 32) | e_lo);
                fn(reinterpret_cast<void*>((std::uintptr_t{a_hi} << 32) | a_lo));
              }),
              4, static_cast<unsigned>(e), static_cast<unsigned>(e >> 32), static_cast<unsigned>(a),
              static_cast<unsigned>(a >> 32));
  context.stack_pointer = portable;
}

}  // namespace cudasim::detail

#endif
