/// @file execution.hpp
/// @brief How a launch reaches the simulator: the launch expressions produced by the chevron
/// rewrite, the per-kernel closure that runs a block's threads, and the built-in variables.
///
/// The rewrite turns `k<<<grid, block, smem, stream>>>(args)` into
/// `::cudasim::launch_inline("k", CUDASIM_INLINE_KERNEL(k), grid, block, smem, stream)(args)`.
/// CUDASIM_INLINE_KERNEL(k) calls `k` by name, so overload resolution and template argument
/// deduction happen on that call as in nvcc's launch, and templated, namespaced, overloaded
/// kernels need no parsing. When the rewrite finds no name before `<<<` (`(*table[i])<<<...>>>`)
/// it writes `expr * ::cudasim::launch("kernel", grid, block, smem, stream)(args)` instead:
/// `launch(...)` captures the configuration, the call `(args)` the arguments, and `operator*`
/// (found by argument-dependent lookup) pairs them with the kernel's function pointer.
#pragma once

#include <atomic>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

#include "cudasim/runtime_types.hpp"

// The built-in variables are real thread-local values, set by the simulator before a thread
// runs or resumes (a proxy object would break printf and auto). `__thread` rather than C++
// `thread_local`: an extern thread_local may need dynamic initialisation, so every access
// would go through a wrapper function call; `__thread` is a plain %fs-relative load.

/// Index of the running thread within its block.
extern __thread uint3 threadIdx;
/// Index of the running block within the grid.
extern __thread uint3 blockIdx;
/// Extent of the running block.
extern __thread dim3 blockDim;
/// Extent of the running grid.
extern __thread dim3 gridDim;
/// Threads per warp: 32. Not a compile-time constant, as in CUDA.
extern const int warpSize;

namespace cudasim {

/// Base address of the running block's dynamic shared memory (`extern __shared__` arrays
/// point here). One buffer per worker OS thread at a fixed address, which is why the rewrite
/// can turn a namespace-scope declaration into a `static thread_local` pointer; it passes that
/// pointer's own address as `pointer_slot` so the traffic counters do not count loads of it.
void* dynamic_shared_memory(const void* pointer_slot = nullptr) noexcept;

namespace detail {

/// In a counted build, the simulator's own stores to the built-ins are kept out of line and out
/// of the instrumentation's sight: an instrumented store to one is the kernel's, a fault
/// (instrumentation.cpp, fault_on_builtin_store). Elsewhere they are plain inline stores.
#if defined(CUDASIM_COUNT_MEMORY)
#define CUDASIM_BUILTIN_SETTER inline __attribute__((noinline, no_sanitize("coverage")))
#else
#define CUDASIM_BUILTIN_SETTER inline
#endif

/// Sets threadIdx.x for the next thread of a 1-D block. A volatile store, so that the compiler
/// can neither sink it past the kernel body once the body is inlined nor keep the index in a
/// register only: the fault handler and the memory checks read threadIdx to name the thread at
/// fault. Nothing else is volatile, so the kernel's arguments and the other built-ins stay in
/// registers from one thread to the next (a compiler barrier here would reload them all for
/// every thread: 2-3x slower on an elementwise kernel).
CUDASIM_BUILTIN_SETTER void publish_thread_x(std::size_t x) noexcept {
  *static_cast<volatile unsigned*>(&threadIdx.x) = static_cast<unsigned>(x);
}
/// Sets the whole threadIdx (2-D and 3-D blocks). Field by field: a copy of the struct may be
/// compiled as a call of memcpy, which a counted build checks as the kernel's own.
CUDASIM_BUILTIN_SETTER void set_thread_index(uint3 index) noexcept {
  threadIdx.x = index.x;
  threadIdx.y = index.y;
  threadIdx.z = index.z;
}

/// Which threads of a block have started. Shared by all fibers of the block (they live on one
/// OS thread, so no atomics). Kept tiny and inline because a kernel with a 2-D or 3-D block
/// runs all its threads through `begin_next_thread` in a plain loop.
struct ThreadCursor {
  // size_t rather than unsigned: a kernel's int stores may alias an unsigned (signed and
  // unsigned variants of a type may alias), which would force a reload per thread.
  std::size_t num_threads = 0;  ///< threads in the block
  /// Linear index of the next thread that has not started. The 1-D thread loop keeps its own
  /// count and writes it back at its end; whenever a thread calls the scheduler, the scheduler
  /// first sets this past that thread (sync_cursor in block_scheduler.cpp), so it is exact
  /// wherever the scheduler reads it.
  std::size_t next_thread = 0;
  uint3 next_index{0, 0, 0};  ///< threadIdx of that thread
  dim3 block_dim;             ///< the block's extent
  /// Keep threadIdx in memory for every thread, even where only a signal handler could read it
  /// (set when a faulted block runs again to name the faulting thread).
  bool exact_thread_index = false;

  /// Starts the next thread: sets threadIdx (without a division per thread).
  void begin_next_thread() noexcept {
    ++next_thread;
    set_thread_index(next_index);
    if (++next_index.x == block_dim.x) {
      next_index.x = 0;
      if (++next_index.y == block_dim.y) {
        next_index.y = 0;
        ++next_index.z;
      }
    }
  }
  bool has_unstarted() const noexcept { return next_thread < num_threads; }
};

/// A kernel with its arguments bound: runs threads of one block until none is left to start.
class KernelInstance {
 public:
  virtual ~KernelInstance() = default;
  /// Runs unstarted threads of the block one after another on the calling fiber. When a thread
  /// waits at a barrier its fiber is parked with it and another fiber continues on the same
  /// cursor with the next unstarted thread.
  virtual void run_threads(ThreadCursor& cursor) const = 0;
  /// Size of the object, so that memcheck knows the kernel's bound arguments are not host
  /// memory the kernel dereferences.
  virtual std::size_t object_size() const = 0;
};

#if defined(CUDASIM_COUNT_MEMORY)
// Instrumented code calls a hook at every access, and the hooks read threadIdx to name the thread
// in reports. They are inserted after the optimiser has run, so a threadIdx store that the
// optimiser kept in a register would not be seen by them: always exact here.
inline constexpr bool kThreadIndexAlwaysExact = true;
#else
inline constexpr bool kThreadIndexAlwaysExact = false;
#endif

/// Keeps threadIdx in memory for a 2-D or 3-D block (set by set_thread_index) at that point.
inline void publish_thread_index() noexcept { asm volatile("" : : "m"(threadIdx)); }

/// Calls a kernel through its function pointer (used when the rewrite found no kernel name).
template <class... Params>
struct PointerInvoker {
  void (*kernel)(Params...);
  template <class... Args>
  void operator()(const Args&... args) const { kernel(args...); }
};

/// Calls the kernel once with the bound arguments. Not std::apply: the instrumentation's ignore
/// list (cudasim/instrumentation_ignorelist.txt) leaves the standard library's out-of-line
/// functions uncounted, and a compiler that inlines the kernel into std::apply but keeps
/// std::apply itself out of line (clang 22 does, for kernels that wait at a barrier in a header
/// function) would then run every access of the kernel uncounted and unchecked.
template <class Invoker, class Arguments, std::size_t... I>
inline void call_kernel(const Invoker& invoker, const Arguments& arguments, std::index_sequence<I...>) {
  invoker(std::get<I>(arguments)...);
}

template <class Invoker, class... Params>
class BoundKernel final : public KernelInstance {
 public:
  BoundKernel(Invoker invoker, std::tuple<std::decay_t<Params>...> args)
      : invoker_(std::move(invoker)), args_(std::move(args)) {}

  std::size_t object_size() const override { return sizeof(*this); }

  void run_threads(ThreadCursor& cursor) const override {
    if (kThreadIndexAlwaysExact || cursor.exact_thread_index)
      run<true>(cursor);
    else
      run<false>(cursor);
  }

 private:
  /// The thread loop. `Exact`: threadIdx is in memory whenever a thread runs (see
  /// publish_thread_x). Otherwise it is a plain store, which the compiler may keep in a register
  /// and write only where something could read it (before any call), so that the loop runs as
  /// fast as the same loop in plain C++; only a signal handler could then see a stale value, and
  /// the fault handler runs such a block again with `Exact` to name the faulting thread.
  template <bool Exact>
  void run(ThreadCursor& cursor) const {
    if (cursor.block_dim.y == 1 && cursor.block_dim.z == 1) {
      // 1-D blocks, the common case: threadIdx.y and .z stay 0 (set when the block starts),
      // so a thread costs one threadIdx.x update. The count of started threads stays in a
      // register (a store to the cursor per thread made the loop half as fast); the scheduler
      // brings the cursor up to date itself whenever a thread calls it (to wait at a barrier or
      // a warp operation), and other fibers may then start threads while this one's thread
      // waits: the check after each thread skips those.
      std::size_t next = cursor.next_thread;
      const std::size_t end = cursor.num_threads;
      while (next < end) {
        if constexpr (Exact)
          publish_thread_x(next);
        else
          threadIdx.x = static_cast<unsigned>(next);
        call_thread();  // kernel parameters are by value: each thread gets copies
        ++next;
        // A branch, not a max(): a conditional move would put a load on the counter's
        // dependency chain.
        if (__builtin_expect(cursor.next_thread > next, 0)) next = cursor.next_thread;
      }
      cursor.next_thread = next;
      return;
    }
    while (cursor.has_unstarted()) {
      cursor.begin_next_thread();
      if constexpr (Exact) publish_thread_index();
      call_thread();
    }
  }

  void call_thread() const { call_kernel(invoker_, args_, std::index_sequence_for<Params...>{}); }

  Invoker invoker_;
  std::tuple<std::decay_t<Params>...> args_;
};

/// Where a launch was written and what it launches, for error reports.
struct LaunchSite {
  const char* kernel_name;
  const char* file;
  unsigned line;
};

struct LaunchConfig {
  LaunchSite site;
  dim3 grid;
  dim3 block;
  size_t dynamic_shared_bytes;
  cudaStream_t stream;
  /// cudaLaunchCooperativeKernel: every block runs at once, and this_grid().sync() works.
  bool cooperative = false;
};

/// Validates the configuration (setting the launch error as a GPU would) and queues the
/// launch on its stream; returns the launch error. `kernel_id` identifies the kernel for
/// cudaFuncSetAttribute; null when the launch cannot tell which function it calls (see
/// NamedLaunch).
cudaError_t submit_launch(const LaunchConfig& config, std::shared_ptr<const KernelInstance> kernel,
                          const void* kernel_id);

// ---- kernels known by address (cudaLaunchKernel, graph kernel nodes) ----------------------
// A `const void*` to a kernel says nothing of its parameters, which the simulator needs to copy
// `void** args` into a launch. Every place where the compiler still sees a kernel's type (a
// launch by chevrons of one function, the C++ overloads of cudaLaunchKernel, cudaFuncSetAttribute,
// cudaFuncGetAttributes and the occupancy calls) registers it with the function below, which
// unpacks its arguments; the C API then finds it by address.

/// Copies the arguments that `args` points to (one pointer per parameter, as cudaLaunchKernel
/// takes them) into an instance of `kernel` that can run.
using ArgumentUnpacker = std::shared_ptr<const KernelInstance> (*)(const void* kernel, void* const* args);

template <class... Params, std::size_t... I>
std::shared_ptr<const KernelInstance> unpack_arguments(void (*kernel)(Params...), void* const* args,
                                                       std::index_sequence<I...>) {
  (void)args;  // unused when the kernel has no parameters
  std::tuple<std::decay_t<Params>...> bound(*static_cast<const std::decay_t<Params>*>(args[I])...);
  return std::make_shared<const BoundKernel<PointerInvoker<Params...>, Params...>>(PointerInvoker<Params...>{kernel},
                                                                                   std::move(bound));
}
template <class... Params>
std::shared_ptr<const KernelInstance> unpack_arguments_of(const void* kernel, void* const* args) {
  auto typed = reinterpret_cast<void (*)(Params...)>(const_cast<void*>(kernel));
  return unpack_arguments(typed, args, std::index_sequence_for<Params...>{});
}

/// Records that `kernel` has `parameter_count` parameters unpacked by `unpack`; `name`, when
/// given, names it in reports where the symbol table does not.
void register_kernel(const void* kernel, ArgumentUnpacker unpack, std::size_t parameter_count,
                     const char* name = nullptr);

/// Registers a kernel whose type the caller sees, and returns its address as the runtime's key.
template <class... Params>
const void* known_kernel(void (*kernel)(Params...), const char* name = nullptr) {
  const void* id = reinterpret_cast<const void*>(kernel);
  register_kernel(id, &unpack_arguments_of<Params...>, sizeof...(Params), name);
  return id;
}
/// Anything else (a `void*` already): nothing to register.
template <class T>
const void* known_kernel(T* pointer) {
  return reinterpret_cast<const void*>(pointer);
}

/// What the rewrite adds after each kernel definition that is not a template (see
/// cudasim_rewrite.cpp): registers the kernel with its parameter types when the program starts,
/// so that cudaLaunchKernel and graph kernel nodes can launch it by address, as with nvcc, even
/// if nothing launched it with chevrons before. The cast picks the definition among overloads.
///
/// The course's exercises are built with CUDASIM_NO_KERNEL_REGISTRATION, which turns it off:
/// the grader refuses start-up code in a submission's object beyond what the reference's object
/// has, and registrations are start-up code; exercises launch their kernels by chevrons.
#ifdef CUDASIM_NO_KERNEL_REGISTRATION
#define CUDASIM_KNOWN_KERNEL(name, parameters)
#else
#define CUDASIM_KNOWN_KERNEL(name, parameters)                                             \
  [[maybe_unused]] static const void* const CUDASIM_KNOWN_KERNEL_ID(__COUNTER__) = \
      ::cudasim::detail::known_kernel(static_cast<void(*) parameters>(name), #name);
#endif
#define CUDASIM_KNOWN_KERNEL_ID(counter) CUDASIM_KNOWN_KERNEL_JOIN(cudasim_known_kernel_, counter)
#define CUDASIM_KNOWN_KERNEL_JOIN(a, b) a##b

/// Registers the kernel of a launch by chevrons once per launch site (and again when the same
/// site launches another function through a pointer variable).
template <class Site, class... Params>
void register_launched_kernel(void (*kernel)(Params...)) {
  static std::atomic<const void*> last{nullptr};
  const void* id = reinterpret_cast<const void*>(kernel);
  if (last.load(std::memory_order_relaxed) != id) {
    known_kernel(kernel);
    last.store(id, std::memory_order_relaxed);
  }
}

/// Binds arguments converted to the parameter types of `kernel`, once, as a real launch
/// converts them, and submits; each thread gets copies. `invoker` runs one thread. Arguments
/// that do not fit were reported by the caller; nothing more is said about them here.
template <class Invoker, class... Params, class... Args>
void submit_converted(const LaunchConfig& config, Invoker invoker, void (*kernel)(Params...), Args&&... args) {
  if constexpr (sizeof...(Params) == sizeof...(Args) &&
                std::is_constructible_v<std::tuple<std::decay_t<Params>...>, Args&&...>) {
    std::tuple<std::decay_t<Params>...> bound(std::forward<Args>(args)...);
    register_launched_kernel<Invoker>(kernel);
    submit_launch(config,
                  std::make_shared<const BoundKernel<Invoker, Params...>>(std::move(invoker), std::move(bound)),
                  reinterpret_cast<const void*>(kernel));
  }
}

/// The configuration half of an unnamed launch expression, with its arguments.
template <class... Args>
struct PendingLaunch {
  LaunchConfig config;
  std::tuple<Args...> args;
};

struct LaunchBuilder {
  LaunchConfig config;
  template <class... Args>
  PendingLaunch<std::decay_t<Args>...> operator()(Args&&... args) const {
    return {config, std::tuple<std::decay_t<Args>...>(std::forward<Args>(args)...)};
  }
};

/// `kernel * launch(...)(args)`: binds the arguments, converted to the kernel's parameter
/// types as a real launch converts them, and submits.
template <class... Params, class... Args>
void operator*(void (*kernel)(Params...), PendingLaunch<Args...>&& pending) {
  static_assert(sizeof...(Params) == sizeof...(Args),
                "cudasim: the kernel is launched with a different number of arguments than it "
                "declares");
  static_assert(std::is_constructible_v<std::tuple<std::decay_t<Params>...>, Args&&...>,
                "cudasim: the launch's arguments do not convert to the kernel's parameter types");
  std::apply(
      [&](auto&&... args) {
        submit_converted(pending.config, PointerInvoker<Params...>{kernel}, kernel, std::move(args)...);
      },
      std::move(pending.args));
}

/// How NamedKernel::resolve is asked for the kernel's function pointer: from its name alone
/// (`k` is one function, `k<float>` one specialization, or `k` a function-pointer variable),
/// or as the overload or specialization whose type is exactly `Signature`.
struct ByName {};
template <class Signature>
struct ByType {};

template <class T>
struct NotDeduced {
  using type = T;
};
template <class Function>
Function* kernel_pointer(ByName, Function* kernel) {
  return kernel;
}
template <class... Params>
auto kernel_pointer(ByType<void(Params...)>, typename NotDeduced<void (*)(Params...)>::type kernel) {
  return kernel;
}

/// What CUDASIM_INLINE_KERNEL(k) makes of a kernel's name: `call` calls `k` by name with a
/// thread's arguments; `resolve(ByName{})` / `resolve(ByType<...>{})` give its function pointer
/// where the name identifies one (both are substitution failures otherwise).
template <class Call, class Resolve>
struct NamedKernel {
  Call call;
  Resolve resolve;
};

template <class Call, class Resolve>
NamedKernel<Call, Resolve> named_kernel(Call call, Resolve resolve) {
  return {std::move(call), std::move(resolve)};
}

/// Whether launching `Kernel` (a function pointer type) with `Args` binds every parameter to
/// an argument that converts to it (and leaves none to a default argument).
template <class Kernel, class... Args>
struct BindsEveryParameter : std::false_type {};
template <class... Params, class... Args>
struct BindsEveryParameter<void (*)(Params...), Args...>
    : std::bool_constant<sizeof...(Params) == sizeof...(Args) &&
                         std::is_constructible_v<std::tuple<std::decay_t<Params>...>, Args&&...>> {};

/// Whether a launch by name can convert its arguments once: the name is one function whose
/// parameters the arguments all bind.
template <class Resolve, class... Args>
constexpr bool converts_at_launch() {
  if constexpr (std::is_invocable_v<const Resolve&, ByName>)
    return BindsEveryParameter<std::invoke_result_t<const Resolve&, ByName>, Args...>::value;
  else
    return false;
}

/// The function a launch by name calls, where the name or the arguments' exact types identify
/// it, for cudaFuncSetAttribute; null otherwise.
template <class... Args, class Resolve>
const void* kernel_id_of(const Resolve& resolve) {
  using Exact = ByType<void(std::decay_t<Args>...)>;
  if constexpr (std::is_invocable_v<const Resolve&, ByName>)
    return reinterpret_cast<const void*>(resolve(ByName{}));
  else if constexpr (std::is_invocable_v<const Resolve&, Exact>)
    return reinterpret_cast<const void*>(resolve(Exact{}));
  else
    return nullptr;
}

/// `::cudasim::launch_inline("k", CUDASIM_INLINE_KERNEL(k), config...)(args)`: a launch by name.
template <class Call, class Resolve>
struct NamedLaunch {
  LaunchConfig config;
  NamedKernel<Call, Resolve> kernel;

  template <class... Args>
  void operator()(Args&&... args) const {
    // The launch is a call of the kernel with the arguments: valid exactly when that call is.
    // Naming the call first makes the compiler's message for a bad launch the one for the call,
    // which names the candidate kernels and why each does not fit.
    using CallResult = decltype(kernel.call(std::declval<const std::decay_t<Args>&>()...));
    static_assert(std::is_void_v<CallResult>, "a kernel returns void");
    if constexpr (converts_at_launch<Resolve, Args...>()) {
      // One function: the arguments are converted to its parameter types once, at the launch.
      submit_converted(config, kernel.call, kernel.resolve(ByName{}), std::forward<Args>(args)...);
    } else {
      // An overloaded kernel, a template whose arguments the call deduces, or a kernel with
      // default arguments: the launch binds the arguments as given (decayed, as a call decays
      // them) and each thread's call converts them to the chosen kernel's parameter types.
      // When kernel_id_of cannot tell which kernel that is, the launch gets the largest dynamic
      // shared memory limit that any kernel was given.
      std::tuple<std::decay_t<Args>...> bound(std::forward<Args>(args)...);
      submit_launch(config,
                    std::make_shared<const BoundKernel<Call, std::decay_t<Args>...>>(kernel.call, std::move(bound)),
                    kernel_id_of<Args...>(kernel.resolve));
    }
  }
};

}  // namespace detail

/// Start of an unnamed launch expression written by the chevron rewrite (`<<<` becomes
/// `* ::cudasim::launch("kernel", `). The trailing file and line default to the call site,
/// which `#line` maps back to the student's .cu file.
inline detail::LaunchBuilder launch(const char* kernel_name, dim3 grid, dim3 block, size_t dynamic_shared_bytes = 0,
                                    cudaStream_t stream = nullptr, const char* file = __builtin_FILE(),
                                    unsigned line = __builtin_LINE()) {
  return {detail::LaunchConfig{{kernel_name, file, line}, grid, block, dynamic_shared_bytes, stream}};
}

/// The form the rewrite emits when it found the kernel's name: `kernel` (CUDASIM_INLINE_KERNEL)
/// calls the kernel by name, so the compiler can also inline the kernel body into the loop that
/// runs a block's threads (a call through a function pointer cannot be inlined), which makes
/// kernels without barriers several times faster.
template <class Call, class Resolve>
inline detail::NamedLaunch<Call, Resolve> launch_inline(const char* kernel_name, detail::NamedKernel<Call, Resolve> kernel,
                                                        dim3 grid, dim3 block, size_t dynamic_shared_bytes = 0,
                                                        cudaStream_t stream = nullptr,
                                                        const char* file = __builtin_FILE(),
                                                        unsigned line = __builtin_LINE()) {
  return {detail::LaunchConfig{{kernel_name, file, line}, grid, block, dynamic_shared_bytes, stream},
          std::move(kernel)};
}

}  // namespace cudasim

/// What the rewrite passes to launch_inline for a kernel named `k` (variadic because a
/// templated kernel's name contains commas): a lambda that calls `k` by name with a thread's
/// arguments, and one that gives `k`'s function pointer where the name (or the arguments'
/// exact types) identify one, and fails substitution otherwise. Both capture by copy, so that
/// a kernel held in a local function-pointer variable stays valid while the launch waits on
/// its stream.
#define CUDASIM_INLINE_KERNEL(...)                                                        \
  ::cudasim::detail::named_kernel(                                                        \
      [=](const auto&... cudasim_kernel_args) { __VA_ARGS__(cudasim_kernel_args...); },   \
      [=](auto cudasim_how) -> decltype(::cudasim::detail::kernel_pointer(cudasim_how, __VA_ARGS__)) { \
        return ::cudasim::detail::kernel_pointer(cudasim_how, __VA_ARGS__);               \
      })
