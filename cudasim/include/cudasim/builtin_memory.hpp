/// @file builtin_memory.hpp
/// @brief The compiler's memory builtins, counted in instrumented code.
///
/// The standard library copies and fills with __builtin_memcpy, __builtin_memmove and
/// __builtin_memset (std::copy of 16 floats is one 64-byte __builtin_memmove). A copy whose size
/// the compiler knows stays an LLVM intrinsic that the back end expands into moves after the
/// load and store instrumentation has run, so no hook saw it: such a copy in a kernel was
/// neither counted nor checked by memcheck (found in a red-team pass, 2026-11-28: std::copy,
/// std::char_traits<char>::copy, 0 bytes counted). Where memory is counted (CUDASIM_COUNT_MEMORY)
/// the three names are macros for calls of the C library's functions, which the simulator's
/// wrappers count, in every header the program includes; a constant evaluation still gets the
/// builtin. The simulator's own headers move bits between locals with uncounted_memcpy, the
/// builtin by another name.
///
/// Included first by cuda_runtime.h, before any standard header, so it includes none itself.
#pragma once

// The C library's functions, as glibc declares them. An instrumented program is linked with
// --wrap=memcpy,memmove,memset: a call reaches the simulator's wrapper, which counts and checks
// what the call moves of device, shared and page-locked memory in a kernel thread, as it does for
// the calls the standard library makes out of line (cudasim/src/instrumentation.cpp).
extern "C" {
void* memcpy(void* destination, const void* source, __SIZE_TYPE__ bytes) noexcept;
void* memmove(void* destination, const void* source, __SIZE_TYPE__ bytes) noexcept;
void* memset(void* destination, int value, __SIZE_TYPE__ bytes) noexcept;
}

namespace cudasim::detail {
/// __builtin_memcpy, never counted: for the simulator's headers, which copy the bits of locals.
template <class D, class S>
constexpr void* uncounted_memcpy(D* destination, S* source, __SIZE_TYPE__ bytes) {
  return __builtin_memcpy(destination, source, bytes);
}

/// The builtins as the macros below call them: a call of the C library's function at run time
/// (instrumented code is compiled with -fno-builtin-memcpy and its kin, so it stays a call), the
/// builtin itself in a constant evaluation (written before the macros, so these are the
/// compiler's own).
template <class D, class S>
constexpr void* counted_builtin_memcpy(D* destination, S* source, __SIZE_TYPE__ bytes) {
  if (__builtin_is_constant_evaluated()) return __builtin_memcpy(destination, source, bytes);
  return memcpy(destination, source, bytes);
}
template <class D, class S>
constexpr void* counted_builtin_memmove(D* destination, S* source, __SIZE_TYPE__ bytes) {
  if (__builtin_is_constant_evaluated()) return __builtin_memmove(destination, source, bytes);
  return memmove(destination, source, bytes);
}
template <class D>
constexpr void* counted_builtin_memset(D* destination, int value, __SIZE_TYPE__ bytes) {
  if (__builtin_is_constant_evaluated()) return __builtin_memset(destination, value, bytes);
  return memset(destination, value, bytes);
}
}  // namespace cudasim::detail

#if defined(CUDASIM_COUNT_MEMORY)
#define __builtin_memcpy(...) ::cudasim::detail::counted_builtin_memcpy(__VA_ARGS__)
#define __builtin_memmove(...) ::cudasim::detail::counted_builtin_memmove(__VA_ARGS__)
#define __builtin_memset(...) ::cudasim::detail::counted_builtin_memset(__VA_ARGS__)
#endif
