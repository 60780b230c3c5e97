/// @file coroutine.hpp
/// @brief The coroutine types the simulator needs, in C++17.
///
/// Kernels with barriers are compiled as coroutines (see device_functions.hpp), but the course
/// is C++17, as nvcc compiles it on a GPU. clang compiles coroutines in C++17 with
/// `-fcoroutines-ts` (the simulator's build passes it), looking up `std::coroutine_traits` and
/// `std::coroutine_handle`; libstdc++ only provides those in C++20, so in C++17 this header
/// defines the few members the simulator uses, over clang's coroutine builtins. In C++20 it is
/// just `<coroutine>`.
#pragma once

#if defined(__cpp_impl_coroutine)
#include <coroutine>
#elif defined(__cpp_coroutines)
#include <cstddef>

namespace std {

template <class Result, class... Params>
struct coroutine_traits {
  using promise_type = typename Result::promise_type;
};

template <class Promise = void>
struct coroutine_handle;

template <>
struct coroutine_handle<void> {
  constexpr coroutine_handle() noexcept = default;
  constexpr coroutine_handle(std::nullptr_t) noexcept {}
  static coroutine_handle from_address(void* frame) noexcept {
    coroutine_handle handle;
    handle.frame_ = frame;
    return handle;
  }
  void* address() const noexcept { return frame_; }
  explicit operator bool() const noexcept { return frame_ != nullptr; }
  void resume() const { __builtin_coro_resume(frame_); }
  void operator()() const { resume(); }
  void destroy() const { __builtin_coro_destroy(frame_); }
  bool done() const { return __builtin_coro_done(frame_); }

 protected:
  void* frame_ = nullptr;
};

template <class Promise>
struct coroutine_handle : coroutine_handle<> {
  using coroutine_handle<>::coroutine_handle;
  static coroutine_handle from_address(void* frame) noexcept {
    coroutine_handle handle;
    handle.frame_ = frame;
    return handle;
  }
  Promise& promise() const {
    return *static_cast<Promise*>(__builtin_coro_promise(frame_, alignof(Promise), false));
  }
};

struct suspend_never {
  constexpr bool await_ready() const noexcept { return true; }
  constexpr void await_suspend(coroutine_handle<>) const noexcept {}
  constexpr void await_resume() const noexcept {}
};

struct suspend_always {
  constexpr bool await_ready() const noexcept { return false; }
  constexpr void await_suspend(coroutine_handle<>) const noexcept {}
  constexpr void await_resume() const noexcept {}
};

}  // namespace std
#else
#error "cudasim compiles kernels with barriers as coroutines: build with clang and -fcoroutines-ts (C++17) or -std=c++20"
#endif
