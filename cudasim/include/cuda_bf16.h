/// @file cuda_bf16.h
/// @brief The simulator's stand-in for CUDA's bfloat16 header: the `__nv_bfloat16` type and
/// its conversions, bit-exact with the CUDA toolkit's.
///
/// bfloat16 keeps float's sign and 8-bit exponent and only the top 7 bits of its 23-bit
/// mantissa: the same range as float, about 3 significant decimal digits. A bf16 value is
/// therefore the upper half of a float's bit pattern, and converting back is exact.
/// Converting float -> bf16 rounds to nearest, ties to even (what `__float2bfloat16` and
/// `__float2bfloat16_rn` do in CUDA); NaN stays NaN (quiet), infinities stay infinite and
/// values too large for bf16 round to infinity, as in CUDA.
///
/// Here: the type and its conversions, the pair type `__nv_bfloat162`, and the arithmetic
/// intrinsics (`__hadd`, `__hmul`, `__hfma`, `__hadd2`, `__hmul2`, `__hfma2`, ...), each rounded
/// once to nearest even as on a GPU (cudasim/narrow_float.hpp), and CUDA's operators on
/// `__nv_bfloat16` and `__nv_bfloat162` (`+ - * /`, their compound forms, unary `-`, `++`/`--`
/// and comparisons), each the matching intrinsic. As in CUDA, `bf16 * float` is ambiguous (the
/// type converts to and from float implicitly): convert one side explicitly.
#pragma once

#include "cudasim/builtin_memory.hpp"

#include <cstdint>
#include <cstring>

#include "cuda_runtime.h"
#include "cudasim/narrow_float.hpp"

/// A bfloat16 number: 1 sign bit, 8 exponent bits, 7 mantissa bits, stored in 16 bits.
/// Trivially copyable (device buffers of it are plain memory); converts implicitly from and
/// to float like CUDA's type.
struct __nv_bfloat16 {
  unsigned short __x;  ///< the raw bits (the upper 16 bits of the equivalent float)

  __nv_bfloat16() = default;
  /// Rounds `f` to the nearest bf16 (ties to even).
  __nv_bfloat16(float f);  // NOLINT(google-explicit-constructor): implicit as in CUDA
  /// Rounds `d` to float, then to bf16, as CUDA's double constructor does.
  __nv_bfloat16(double d) : __nv_bfloat16(static_cast<float>(d)) {}
  /// Integers round to the nearest bf16 (ties to even), as CUDA's integer constructors do, so
  /// that `__nv_bfloat16 z = 0;` compiles as with nvcc.
  __nv_bfloat16(short i) : __nv_bfloat16(static_cast<long long>(i)) {}                    // NOLINT
  __nv_bfloat16(unsigned short i) : __nv_bfloat16(static_cast<unsigned long long>(i)) {}  // NOLINT
  __nv_bfloat16(int i) : __nv_bfloat16(static_cast<long long>(i)) {}                      // NOLINT
  __nv_bfloat16(unsigned i) : __nv_bfloat16(static_cast<unsigned long long>(i)) {}        // NOLINT
  __nv_bfloat16(long i) : __nv_bfloat16(static_cast<long long>(i)) {}                     // NOLINT
  __nv_bfloat16(unsigned long i) : __nv_bfloat16(static_cast<unsigned long long>(i)) {}   // NOLINT
  __nv_bfloat16(long long i)  // NOLINT
      : __x(cudasim::detail::double_to_narrow<cudasim::detail::BFloat16>(static_cast<double>(i))) {}
  __nv_bfloat16(unsigned long long i)  // NOLINT
      : __x(cudasim::detail::double_to_narrow<cudasim::detail::BFloat16>(static_cast<double>(i))) {}
  /// The exact float value of this bf16.
  operator float() const;  // NOLINT(google-explicit-constructor)
};

/// CUDA spells the type both ways.
typedef __nv_bfloat16 nv_bfloat16;

namespace cudasim::detail {

inline std::uint32_t float_bits(float f) {
  std::uint32_t u;
  ::cudasim::detail::uncounted_memcpy(&u, &f, sizeof u);
  return u;
}

inline float bits_float(std::uint32_t u) {
  float f;
  ::cudasim::detail::uncounted_memcpy(&f, &u, sizeof f);
  return f;
}

/// float -> bf16 bits, round to nearest even. Adding 0x7FFF plus the lowest kept bit and
/// truncating rounds a tie (lower half exactly 0x8000) up only when the kept part is odd.
inline unsigned short float_to_bf16_rn(float f) {
  const std::uint32_t u = float_bits(f);
  if ((u & 0x7F800000u) == 0x7F800000u && (u & 0x007FFFFFu) != 0)
    return static_cast<unsigned short>((u >> 16) | 0x0040u);  // NaN: keep it a (quiet) NaN
  const std::uint32_t rounding = 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<unsigned short>((u + rounding) >> 16);
}

/// float -> bf16 bits, round toward zero (truncation).
inline unsigned short float_to_bf16_rz(float f) {
  const std::uint32_t u = float_bits(f);
  if ((u & 0x7F800000u) == 0x7F800000u && (u & 0x007FFFFFu) != 0)
    return static_cast<unsigned short>((u >> 16) | 0x0040u);
  return static_cast<unsigned short>(u >> 16);
}

}  // namespace cudasim::detail

inline __nv_bfloat16::__nv_bfloat16(float f) : __x(cudasim::detail::float_to_bf16_rn(f)) {}

inline __nv_bfloat16::operator float() const {
  return cudasim::detail::bits_float(static_cast<std::uint32_t>(__x) << 16);
}

/// float -> bf16, round to nearest, ties to even.
inline __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }
/// float -> bf16, round to nearest, ties to even (the explicit spelling).
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16(f); }
/// float -> bf16, round toward zero.
inline __nv_bfloat16 __float2bfloat16_rz(float f) {
  __nv_bfloat16 b;
  b.__x = cudasim::detail::float_to_bf16_rz(f);
  return b;
}
/// bf16 -> float, exact.
inline float __bfloat162float(__nv_bfloat16 b) { return static_cast<float>(b); }
/// The raw bits of a bf16, and a bf16 from raw bits.
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 b) { return b.__x; }
inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short bits) {
  __nv_bfloat16 b;
  b.__x = bits;
  return b;
}

/// Two bf16 values in 32 bits: `x` the low one, `y` the high one.
struct alignas(4) __nv_bfloat162 {
  __nv_bfloat16 x;
  __nv_bfloat16 y;
  __nv_bfloat162() = default;
  constexpr __nv_bfloat162(const __nv_bfloat16& low, const __nv_bfloat16& high) : x(low), y(high) {}
};
typedef __nv_bfloat162 nv_bfloat162;

namespace cudasim::detail {
inline double bf16_value(__nv_bfloat16 b) { return static_cast<float>(b); }
inline __nv_bfloat16 round_bf16(double value) {
  __nv_bfloat16 b;
  b.__x = double_to_narrow<BFloat16>(value);
  return b;
}
}  // namespace cudasim::detail

inline __nv_bfloat162 __floats2bfloat162_rn(float low, float high) {
  return __nv_bfloat162(__nv_bfloat16(low), __nv_bfloat16(high));
}
inline __nv_bfloat162 __float2bfloat162_rn(float f) { return __nv_bfloat162(__nv_bfloat16(f), __nv_bfloat16(f)); }
inline __nv_bfloat162 __float22bfloat162_rn(float2 f) {
  return __nv_bfloat162(__nv_bfloat16(f.x), __nv_bfloat16(f.y));
}
inline float2 __bfloat1622float2(__nv_bfloat162 b) {
  return make_float2(static_cast<float>(b.x), static_cast<float>(b.y));
}
inline __nv_bfloat162 __halves2bfloat162(__nv_bfloat16 low, __nv_bfloat16 high) { return __nv_bfloat162(low, high); }
inline __nv_bfloat162 make_bfloat162(__nv_bfloat16 x, __nv_bfloat16 y) { return __nv_bfloat162(x, y); }
inline __nv_bfloat162 __bfloat162bfloat162(__nv_bfloat16 b) { return __nv_bfloat162(b, b); }
inline __nv_bfloat16 __low2bfloat16(__nv_bfloat162 b) { return b.x; }
inline __nv_bfloat16 __high2bfloat16(__nv_bfloat162 b) { return b.y; }
inline float __low2float(__nv_bfloat162 b) { return b.x; }
inline float __high2float(__nv_bfloat162 b) { return b.y; }

// Arithmetic: the exact result rounded once to nearest even (a fused multiply-add included).
inline __nv_bfloat16 __hadd(__nv_bfloat16 a, __nv_bfloat16 b) {
  using namespace cudasim::detail;
  return round_bf16(bf16_value(a) + bf16_value(b));
}
inline __nv_bfloat16 __hsub(__nv_bfloat16 a, __nv_bfloat16 b) {
  using namespace cudasim::detail;
  return round_bf16(bf16_value(a) - bf16_value(b));
}
inline __nv_bfloat16 __hmul(__nv_bfloat16 a, __nv_bfloat16 b) {
  using namespace cudasim::detail;
  return round_bf16(bf16_value(a) * bf16_value(b));
}
inline __nv_bfloat16 __hdiv(__nv_bfloat16 a, __nv_bfloat16 b) {
  using namespace cudasim::detail;
  return round_bf16(bf16_value(a) / bf16_value(b));
}
// Never contracted into a fused multiply-add by nvcc (cuda_fp16.h says why that matters).
inline __nv_bfloat16 __hadd_rn(__nv_bfloat16 a, __nv_bfloat16 b) { return __hadd(a, b); }
inline __nv_bfloat16 __hsub_rn(__nv_bfloat16 a, __nv_bfloat16 b) { return __hsub(a, b); }
inline __nv_bfloat16 __hmul_rn(__nv_bfloat16 a, __nv_bfloat16 b) { return __hmul(a, b); }
inline __nv_bfloat16 __hfma(__nv_bfloat16 a, __nv_bfloat16 b, __nv_bfloat16 c) {
  using namespace cudasim::detail;
  return round_bf16(fma_to_odd(bf16_value(a), bf16_value(b), bf16_value(c)));
}
inline __nv_bfloat16 __hneg(__nv_bfloat16 a) { return __ushort_as_bfloat16(a.__x ^ 0x8000); }
inline __nv_bfloat16 __habs(__nv_bfloat16 a) { return __ushort_as_bfloat16(a.__x & 0x7FFF); }

inline __nv_bfloat162 __hadd2(__nv_bfloat162 a, __nv_bfloat162 b) { return {__hadd(a.x, b.x), __hadd(a.y, b.y)}; }
inline __nv_bfloat162 __hsub2(__nv_bfloat162 a, __nv_bfloat162 b) { return {__hsub(a.x, b.x), __hsub(a.y, b.y)}; }
inline __nv_bfloat162 __hmul2(__nv_bfloat162 a, __nv_bfloat162 b) { return {__hmul(a.x, b.x), __hmul(a.y, b.y)}; }
inline __nv_bfloat162 __h2div(__nv_bfloat162 a, __nv_bfloat162 b) { return {__hdiv(a.x, b.x), __hdiv(a.y, b.y)}; }
inline __nv_bfloat162 __hfma2(__nv_bfloat162 a, __nv_bfloat162 b, __nv_bfloat162 c) {
  return {__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)};
}
inline __nv_bfloat162 __hneg2(__nv_bfloat162 a) { return {__hneg(a.x), __hneg(a.y)}; }
inline __nv_bfloat162 __habs2(__nv_bfloat162 a) { return {__habs(a.x), __habs(a.y)}; }

// A compare-and-swap loop on the 16 or 32 bits: the addition is rounded as __hadd/__hadd2 round.
inline __nv_bfloat162 atomicAdd(__nv_bfloat162* address, __nv_bfloat162 value) {
  CUDASIM_COUNT_ATOMIC(address);
  return cudasim::detail::atomic_update(address, [value](__nv_bfloat162 old) { return __hadd2(old, value); });
}
inline __nv_bfloat16 atomicAdd(__nv_bfloat16* address, __nv_bfloat16 value) {
  CUDASIM_COUNT_ATOMIC(address);
  return cudasim::detail::atomic_update(address, [value](__nv_bfloat16 old) { return __hadd(old, value); });
}

// ---- operators, as CUDA's cuda_bf16.hpp defines them: each the matching intrinsic ----------------
inline __nv_bfloat16 operator+(const __nv_bfloat16& a, const __nv_bfloat16& b) { return __hadd(a, b); }
inline __nv_bfloat16 operator-(const __nv_bfloat16& a, const __nv_bfloat16& b) { return __hsub(a, b); }
inline __nv_bfloat16 operator*(const __nv_bfloat16& a, const __nv_bfloat16& b) { return __hmul(a, b); }
inline __nv_bfloat16 operator/(const __nv_bfloat16& a, const __nv_bfloat16& b) { return __hdiv(a, b); }
inline __nv_bfloat16& operator+=(__nv_bfloat16& a, const __nv_bfloat16& b) { return a = __hadd(a, b); }
inline __nv_bfloat16& operator-=(__nv_bfloat16& a, const __nv_bfloat16& b) { return a = __hsub(a, b); }
inline __nv_bfloat16& operator*=(__nv_bfloat16& a, const __nv_bfloat16& b) { return a = __hmul(a, b); }
inline __nv_bfloat16& operator/=(__nv_bfloat16& a, const __nv_bfloat16& b) { return a = __hdiv(a, b); }
inline __nv_bfloat16 operator+(const __nv_bfloat16& a) { return a; }
inline __nv_bfloat16 operator-(const __nv_bfloat16& a) { return __hneg(a); }
inline __nv_bfloat16& operator++(__nv_bfloat16& a) { return a = __hadd(a, __ushort_as_bfloat16(0x3F80)); }
inline __nv_bfloat16& operator--(__nv_bfloat16& a) { return a = __hsub(a, __ushort_as_bfloat16(0x3F80)); }
inline __nv_bfloat16 operator++(__nv_bfloat16& a, int) { const __nv_bfloat16 old = a; ++a; return old; }
inline __nv_bfloat16 operator--(__nv_bfloat16& a, int) { const __nv_bfloat16 old = a; --a; return old; }
// Ordered comparisons (false with a NaN), except != (true with a NaN), as float's.
inline bool operator==(const __nv_bfloat16& a, const __nv_bfloat16& b) { return static_cast<float>(a) == static_cast<float>(b); }
inline bool operator!=(const __nv_bfloat16& a, const __nv_bfloat16& b) { return static_cast<float>(a) != static_cast<float>(b); }
inline bool operator<(const __nv_bfloat16& a, const __nv_bfloat16& b) { return static_cast<float>(a) < static_cast<float>(b); }
inline bool operator<=(const __nv_bfloat16& a, const __nv_bfloat16& b) { return static_cast<float>(a) <= static_cast<float>(b); }
inline bool operator>(const __nv_bfloat16& a, const __nv_bfloat16& b) { return static_cast<float>(a) > static_cast<float>(b); }
inline bool operator>=(const __nv_bfloat16& a, const __nv_bfloat16& b) { return static_cast<float>(a) >= static_cast<float>(b); }

inline __nv_bfloat162 operator+(const __nv_bfloat162& a, const __nv_bfloat162& b) { return __hadd2(a, b); }
inline __nv_bfloat162 operator-(const __nv_bfloat162& a, const __nv_bfloat162& b) { return __hsub2(a, b); }
inline __nv_bfloat162 operator*(const __nv_bfloat162& a, const __nv_bfloat162& b) { return __hmul2(a, b); }
inline __nv_bfloat162 operator/(const __nv_bfloat162& a, const __nv_bfloat162& b) { return __h2div(a, b); }
inline __nv_bfloat162& operator+=(__nv_bfloat162& a, const __nv_bfloat162& b) { return a = __hadd2(a, b); }
inline __nv_bfloat162& operator-=(__nv_bfloat162& a, const __nv_bfloat162& b) { return a = __hsub2(a, b); }
inline __nv_bfloat162& operator*=(__nv_bfloat162& a, const __nv_bfloat162& b) { return a = __hmul2(a, b); }
inline __nv_bfloat162& operator/=(__nv_bfloat162& a, const __nv_bfloat162& b) { return a = __h2div(a, b); }
inline __nv_bfloat162 operator+(const __nv_bfloat162& a) { return a; }
inline __nv_bfloat162 operator-(const __nv_bfloat162& a) { return __hneg2(a); }
// True when both halves compare so (__hbeq2, __hbne2 in CUDA).
inline bool operator==(const __nv_bfloat162& a, const __nv_bfloat162& b) { return a.x == b.x && a.y == b.y; }
inline bool operator!=(const __nv_bfloat162& a, const __nv_bfloat162& b) { return a.x != b.x && a.y != b.y; }
