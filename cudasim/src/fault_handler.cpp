// Faults inside kernels. A segmentation fault in a kernel thread would otherwise kill the
// process with no hint of which kernel, block or thread did it. The handler runs on its own
// signal stack (the fault may be a fiber's stack overflow), prints what it knows, and then lets
// the signal take the process down as it would have without the simulator: a GPU cannot
// recover from an illegal address either.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "internal.hpp"

namespace cudasim::detail {

namespace {

thread_local RunningThread running;

/// Prints what is known about a fault in a kernel of `launch` on this OS thread; `thread` null
/// when it is not known.
void print_fault(const LaunchState& launch, int signal_number, const void* address, const uint3& block,
                 const uint3* thread) {
  const LaunchConfig& c = launch.config;
  std::string where;
  if (running.is_stack_guard != nullptr && running.is_stack_guard(address)) {
    where = "stack overflow in the kernel thread (set CUDASIM_STACK_KB to more than the "
            "default 256 if the kernel really needs a large stack)";
  } else if (!describe_device_address(address, where)) {
    where = "a host or unmapped address (a device kernel may only touch device memory)";
  }
  char who[160];
  if (thread != nullptr)
    std::snprintf(who, sizeof who, "thread (%u,%u,%u)", thread->x, thread->y, thread->z);
  else
    std::snprintf(who, sizeof who, "thread unknown (the fault did not happen again when the block ran again)");
  // snprintf/write: no allocation in the handler beyond what describe_device_address did.
  char line[1024];
  const int n = std::snprintf(
      line, sizeof line, "cudasim: %s in kernel '%s' (launched at %s:%u), block (%u,%u,%u), %s: access to %p, %s\n",
      signal_number == SIGSEGV ? "illegal memory access" : strsignal(signal_number), c.site.kernel_name,
      c.site.file, c.site.line, block.x, block.y, block.z, who, address, where.c_str());
  if (n > 0) {
    const ssize_t ignored = write(STDERR_FILENO, line, static_cast<size_t>(n) < sizeof line ? n : sizeof line - 1);
    (void)ignored;
  }
}

[[noreturn]] void die_of(int signal_number) {
  // The default action: the process dies with the original signal.
  signal(signal_number, SIG_DFL);
  raise(signal_number);
  std::abort();  // not reached: the signal is not blocked (the handler is not running)
}

void describe_fault(int signal_number, siginfo_t* info, void*) {
  RunningThread& r = running;
  if (r.launch != nullptr && r.rerun_exactly != nullptr) {
    // threadIdx may be stale (see RunningThread): back to run_block, which runs the block again.
    sigjmp_buf* rerun = r.rerun_exactly;
    r.rerun_exactly = nullptr;
    r.fault_signal = signal_number;
    r.fault_address = info->si_addr;
    siglongjmp(*rerun, 1);
  }
  if (r.launch != nullptr) print_fault(*r.launch, signal_number, info->si_addr, blockIdx, &threadIdx);
  // Fall back to the default action: the process dies with the original signal once the
  // handler returns and the faulting instruction runs again.
  signal(signal_number, SIG_DFL);
  raise(signal_number);
}

/// The signal stack of one OS thread, given back when the thread ends (stream threads come and
/// go with their streams).
struct AlternateStack {
  std::unique_ptr<char[]> memory;
  AlternateStack() : memory(new char[kSize]) {
    stack_t stack{};
    stack.ss_size = kSize;
    stack.ss_sp = memory.get();
    sigaltstack(&stack, nullptr);
  }
  ~AlternateStack() {
    stack_t off{};
    off.ss_flags = SS_DISABLE;
    sigaltstack(&off, nullptr);
  }
  static constexpr std::size_t kSize = 64 * 1024;
};

void ensure_alternate_stack() { static thread_local AlternateStack stack; }

}  // namespace

RunningThread& running_thread() noexcept {
  ensure_alternate_stack();
  return running;
}

void die_of_unrepeated_fault(const LaunchState& launch, int signal_number, const void* address,
                             const uint3& block) {
  print_fault(launch, signal_number, address, block, nullptr);
  die_of(signal_number);
}

void install_fault_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction action{};
    action.sa_sigaction = &describe_fault;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    for (int s : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) sigaction(s, &action, nullptr);
  });
}

void report_kernel_fault(LaunchState& launch, const uint3& block, const uint3& thread,
                         cudaError_t error, const std::string& message) {
  bool expected = false;
  if (launch.failed.compare_exchange_strong(expected, true)) {
    const LaunchConfig& c = launch.config;
    report("error in kernel '%s' (launched at %s:%u), block (%u,%u,%u), thread (%u,%u,%u): %s",
           c.site.kernel_name, c.site.file, c.site.line, block.x, block.y, block.z, thread.x,
           thread.y, thread.z, message.c_str());
  }
  set_sticky_error(error);
}

}  // namespace cudasim::detail
