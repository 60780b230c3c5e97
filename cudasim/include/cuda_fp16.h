/// @file cuda_fp16.h
/// @brief The simulator's stand-in for CUDA's half-precision header: `__half` (IEEE binary16:
/// 1 sign bit, 5 exponent bits, 10 mantissa bits) and `__half2`, their conversions, operators
/// and intrinsics, bit-exact with a GPU.
///
/// Conversions from float and double and every arithmetic result round to nearest, ties to
/// even, once (cudasim/narrow_float.hpp): 65504 is the largest finite value (0x7BFF), larger
/// results become infinity, tiny ones subnormals (down to 2^-24), and a NaN result is the
/// canonical NaN 0x7FFF, as on a GPU. The approximate functions (`hexp`, `hsin`, ...) are
/// computed in float and rounded, so they may differ from a GPU's in the last bit.
///
/// As in CUDA, `__half` converts implicitly from and to float, and has its own operators, so
/// mixing `__half` and `float` in one expression (`h * 2.0f`) is ambiguous: write
/// `h * __float2half(2.0f)` or `__half2float(h) * 2.0f`. Not here: the rounding variants other
/// than _rn (`__float2half_rz`, ...), conversions to and from integer types other than int.
/// `atomicAdd` on `__half` and `__half2` is a compare-and-swap loop, rounded as `__hadd`.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "cuda_runtime.h"
#include "cudasim/narrow_float.hpp"

/// The bits of a half, for initialising one without a conversion.
struct __half_raw {
  unsigned short x;
};
/// The bits of a half2: x is the low half, y the high one.
struct __half2_raw {
  unsigned short x;
  unsigned short y;
};

/// An IEEE binary16 number. Trivially copyable (device buffers of it are plain memory, and
/// warp shuffles move it); converts implicitly from and to float like CUDA's type.
struct alignas(2) __half {
 protected:
  unsigned short __x;

 public:
  __half() = default;
  constexpr __half(const __half_raw& raw) : __x(raw.x) {}  // NOLINT(google-explicit-constructor)
  /// Rounds to the nearest half (ties to even).
  __half(float f) : __x(cudasim::detail::double_to_narrow<cudasim::detail::Binary16>(f)) {}  // NOLINT
  __half(double d) : __x(cudasim::detail::double_to_narrow<cudasim::detail::Binary16>(d)) {}  // NOLINT
  // Integers round to the nearest half, as CUDA's integer constructors do.
  __half(short i) : __half(static_cast<long long>(i)) {}                    // NOLINT
  __half(unsigned short i) : __half(static_cast<unsigned long long>(i)) {}  // NOLINT
  __half(int i) : __half(static_cast<long long>(i)) {}                      // NOLINT
  __half(unsigned i) : __half(static_cast<unsigned long long>(i)) {}        // NOLINT
  __half(long i) : __half(static_cast<long long>(i)) {}                     // NOLINT
  __half(unsigned long i) : __half(static_cast<unsigned long long>(i)) {}   // NOLINT
  __half(long long i) : __x(cudasim::detail::double_to_narrow<cudasim::detail::Binary16>(static_cast<double>(i))) {}  // NOLINT
  __half(unsigned long long i)  // NOLINT
      : __x(cudasim::detail::double_to_narrow<cudasim::detail::Binary16>(static_cast<double>(i))) {}
  __half& operator=(const __half_raw& raw) {
    __x = raw.x;
    return *this;
  }
  operator __half_raw() const { return __half_raw{__x}; }  // NOLINT
  /// The exact value.
  operator float() const { return cudasim::detail::narrow_to_float<cudasim::detail::Binary16>(__x); }  // NOLINT
};

/// Two halves in 32 bits: `x` the low one (lane 0 of the pair), `y` the high one.
struct alignas(4) __half2 {
  __half x;
  __half y;
  __half2() = default;
  constexpr __half2(const __half& low, const __half& high) : x(low), y(high) {}
  constexpr __half2(const __half2_raw& raw) : x(__half_raw{raw.x}), y(__half_raw{raw.y}) {}  // NOLINT
  __half2& operator=(const __half2_raw& raw) {
    x = __half_raw{raw.x};
    y = __half_raw{raw.y};
    return *this;
  }
  operator __half2_raw() const {  // NOLINT
    return __half2_raw{static_cast<__half_raw>(x).x, static_cast<__half_raw>(y).x};
  }
};

typedef __half half;
typedef __half2 half2;

namespace cudasim::detail {
inline unsigned short half_bits(__half h) { return static_cast<__half_raw>(h).x; }
inline __half bits_half(unsigned short bits) { return __half(__half_raw{bits}); }
inline __half round_half(double value) { return bits_half(double_to_narrow<Binary16>(value)); }
inline double half_value(__half h) { return narrow_to_float<Binary16>(half_bits(h)); }
inline bool half_is_nan(__half h) { return (half_bits(h) & 0x7FFF) > 0x7C00; }
}  // namespace cudasim::detail

// ---- conversions -----------------------------------------------------------------------------
inline __half __float2half(float f) { return __half(f); }
inline __half __float2half_rn(float f) { return __half(f); }
inline __half __double2half(double d) { return __half(d); }
inline float __half2float(__half h) { return static_cast<float>(h); }
inline __half __int2half_rn(int i) { return __half(i); }
inline __half __uint2half_rn(unsigned i) { return __half(i); }
/// half -> int, rounding toward zero (NaN gives 0, out-of-range values saturate, as on a GPU).
inline int __half2int_rz(__half h) {
  const float f = h;
  if (std::isnan(f)) return 0;
  if (f >= 2147483648.0f) return 2147483647;
  if (f < -2147483648.0f) return -2147483647 - 1;
  return static_cast<int>(f);
}
inline int __half2int_rn(__half h) {
  const float f = h;
  if (std::isnan(f)) return 0;
  return static_cast<int>(std::nearbyint(f));  // a half's magnitude is at most 65504
}
inline unsigned short __half_as_ushort(__half h) { return cudasim::detail::half_bits(h); }
inline short __half_as_short(__half h) { return static_cast<short>(cudasim::detail::half_bits(h)); }
inline __half __ushort_as_half(unsigned short bits) { return cudasim::detail::bits_half(bits); }
inline __half __short_as_half(short bits) { return cudasim::detail::bits_half(static_cast<unsigned short>(bits)); }

inline __half2 __halves2half2(__half low, __half high) { return __half2(low, high); }
inline __half2 make_half2(__half x, __half y) { return __half2(x, y); }
inline __half2 __half2half2(__half h) { return __half2(h, h); }
inline __half2 __float2half2_rn(float f) { return __half2(__half(f), __half(f)); }
inline __half2 __floats2half2_rn(float low, float high) { return __half2(__half(low), __half(high)); }
inline __half2 __float22half2_rn(float2 f) { return __half2(__half(f.x), __half(f.y)); }
inline float2 __half22float2(__half2 h) { return make_float2(static_cast<float>(h.x), static_cast<float>(h.y)); }
inline __half __low2half(__half2 h) { return h.x; }
inline __half __high2half(__half2 h) { return h.y; }
inline float __low2float(__half2 h) { return h.x; }
inline float __high2float(__half2 h) { return h.y; }
inline __half2 __lows2half2(__half2 a, __half2 b) { return __half2(a.x, b.x); }
inline __half2 __highs2half2(__half2 a, __half2 b) { return __half2(a.y, b.y); }
inline __half2 __low2half2(__half2 h) { return __half2(h.x, h.x); }
inline __half2 __high2half2(__half2 h) { return __half2(h.y, h.y); }
inline __half2 __lowhigh2highlow(__half2 h) { return __half2(h.y, h.x); }

// ---- arithmetic ------------------------------------------------------------------------------
// Each result is the exact result rounded once (see narrow_float.hpp).
inline __half __hadd(__half a, __half b) {
  using namespace cudasim::detail;
  return round_half(half_value(a) + half_value(b));
}
inline __half __hsub(__half a, __half b) {
  using namespace cudasim::detail;
  return round_half(half_value(a) - half_value(b));
}
inline __half __hmul(__half a, __half b) {
  using namespace cudasim::detail;
  return round_half(half_value(a) * half_value(b));
}
inline __half __hdiv(__half a, __half b) {
  using namespace cudasim::detail;
  return round_half(half_value(a) / half_value(b));
}
// The _rn forms are the same operations that nvcc never contracts: `a * b + c` written with
// the operators (or __hmul and __hadd) may become one fused multiply-add under nvcc's default
// -fmad=true (seen on an H200: one rounding, not two), which the simulator does not do.
inline __half __hadd_rn(__half a, __half b) { return __hadd(a, b); }
inline __half __hsub_rn(__half a, __half b) { return __hsub(a, b); }
inline __half __hmul_rn(__half a, __half b) { return __hmul(a, b); }
/// a * b + c with one rounding.
inline __half __hfma(__half a, __half b, __half c) {
  using namespace cudasim::detail;
  return round_half(fma_to_odd(half_value(a), half_value(b), half_value(c)));
}
inline __half __hneg(__half a) { return cudasim::detail::bits_half(cudasim::detail::half_bits(a) ^ 0x8000); }
inline __half __habs(__half a) { return cudasim::detail::bits_half(cudasim::detail::half_bits(a) & 0x7FFF); }
namespace cudasim::detail {
/// Clamps to [0, 1] (NaN gives 0), as the _sat intrinsics do.
inline __half saturate_half(__half h) {
  if (half_is_nan(h) || static_cast<float>(h) < 0.0f) return bits_half(0);
  return static_cast<float>(h) > 1.0f ? bits_half(0x3C00) : h;
}
}  // namespace cudasim::detail
inline __half __hadd_sat(__half a, __half b) { return cudasim::detail::saturate_half(__hadd(a, b)); }
inline __half __hsub_sat(__half a, __half b) { return cudasim::detail::saturate_half(__hsub(a, b)); }
inline __half __hmul_sat(__half a, __half b) { return cudasim::detail::saturate_half(__hmul(a, b)); }
inline __half __hfma_sat(__half a, __half b, __half c) { return cudasim::detail::saturate_half(__hfma(a, b, c)); }
/// max(a*b + c, 0); NaN stays NaN.
inline __half __hfma_relu(__half a, __half b, __half c) {
  const __half r = __hfma(a, b, c);
  if (cudasim::detail::half_is_nan(r)) return cudasim::detail::bits_half(0x7FFF);
  return static_cast<float>(r) < 0.0f ? cudasim::detail::bits_half(0) : r;
}
/// The larger (smaller) of two halves, +0 counting as larger than -0; a NaN operand gives the
/// other one (two NaNs: the canonical NaN).
inline __half __hmax(__half a, __half b) {
  using namespace cudasim::detail;
  if (half_is_nan(a)) return half_is_nan(b) ? bits_half(0x7FFF) : b;
  if (half_is_nan(b)) return a;
  if (static_cast<float>(a) == static_cast<float>(b)) return (half_bits(a) & 0x8000) ? b : a;  // +0 > -0
  return static_cast<float>(a) > static_cast<float>(b) ? a : b;
}
inline __half __hmin(__half a, __half b) {
  using namespace cudasim::detail;
  if (half_is_nan(a)) return half_is_nan(b) ? bits_half(0x7FFF) : b;
  if (half_is_nan(b)) return a;
  if (static_cast<float>(a) == static_cast<float>(b)) return (half_bits(a) & 0x8000) ? a : b;  // -0 < +0
  return static_cast<float>(a) < static_cast<float>(b) ? a : b;
}

inline __half2 __hadd2(__half2 a, __half2 b) { return __half2(__hadd(a.x, b.x), __hadd(a.y, b.y)); }
inline __half2 __hsub2(__half2 a, __half2 b) { return __half2(__hsub(a.x, b.x), __hsub(a.y, b.y)); }
inline __half2 __hmul2(__half2 a, __half2 b) { return __half2(__hmul(a.x, b.x), __hmul(a.y, b.y)); }
inline __half2 __h2div(__half2 a, __half2 b) { return __half2(__hdiv(a.x, b.x), __hdiv(a.y, b.y)); }
inline __half2 __hadd2_sat(__half2 a, __half2 b) { return __half2(__hadd_sat(a.x, b.x), __hadd_sat(a.y, b.y)); }
inline __half2 __hsub2_sat(__half2 a, __half2 b) { return __half2(__hsub_sat(a.x, b.x), __hsub_sat(a.y, b.y)); }
inline __half2 __hmul2_sat(__half2 a, __half2 b) { return __half2(__hmul_sat(a.x, b.x), __hmul_sat(a.y, b.y)); }
inline __half2 __hmax2(__half2 a, __half2 b) { return __half2(__hmax(a.x, b.x), __hmax(a.y, b.y)); }
inline __half2 __hmin2(__half2 a, __half2 b) { return __half2(__hmin(a.x, b.x), __hmin(a.y, b.y)); }
inline __half2 __hfma2(__half2 a, __half2 b, __half2 c) { return __half2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)); }
inline __half2 __hfma2_sat(__half2 a, __half2 b, __half2 c) {
  return __half2(__hfma_sat(a.x, b.x, c.x), __hfma_sat(a.y, b.y, c.y));
}
inline __half2 __hfma2_relu(__half2 a, __half2 b, __half2 c) {
  return __half2(__hfma_relu(a.x, b.x, c.x), __hfma_relu(a.y, b.y, c.y));
}
inline __half2 __hneg2(__half2 a) { return __half2(__hneg(a.x), __hneg(a.y)); }
inline __half2 __habs2(__half2 a) { return __half2(__habs(a.x), __habs(a.y)); }

// ---- comparisons -----------------------------------------------------------------------------
// The ordered ones (__heq, __hlt, ...) are false when an operand is NaN; the unordered ones
// (__hequ, __hltu, ...) true. The half2 forms compare lane by lane: __heq2 & co. give 1.0 or
// 0.0 in each lane, __hbeq2 & co. whether the comparison holds in both lanes.
inline bool __hisnan(__half a) { return cudasim::detail::half_is_nan(a); }
inline int __hisinf(__half a) {
  const unsigned short bits = cudasim::detail::half_bits(a);
  return bits == 0x7C00 ? 1 : (bits == 0xFC00 ? -1 : 0);
}
#define CUDASIM_HALF_COMPARE(ordered, unordered, expression)                                      \
  inline bool ordered(__half a, __half b) {                                                        \
    if (__hisnan(a) || __hisnan(b)) return false;                                                  \
    const float x = a, y = b;                                                                      \
    return expression;                                                                             \
  }                                                                                                \
  inline bool unordered(__half a, __half b) { return __hisnan(a) || __hisnan(b) || ordered(a, b); } \
  inline __half2 ordered##2(__half2 a, __half2 b) {                                                \
    return __half2(__half(ordered(a.x, b.x) ? 1.0f : 0.0f), __half(ordered(a.y, b.y) ? 1.0f : 0.0f)); \
  }                                                                                                \
  inline __half2 unordered##2(__half2 a, __half2 b) {                                              \
    return __half2(__half(unordered(a.x, b.x) ? 1.0f : 0.0f), __half(unordered(a.y, b.y) ? 1.0f : 0.0f)); \
  }
CUDASIM_HALF_COMPARE(__heq, __hequ, x == y)
CUDASIM_HALF_COMPARE(__hne, __hneu, x != y)
CUDASIM_HALF_COMPARE(__hlt, __hltu, x < y)
CUDASIM_HALF_COMPARE(__hle, __hleu, x <= y)
CUDASIM_HALF_COMPARE(__hgt, __hgtu, x > y)
CUDASIM_HALF_COMPARE(__hge, __hgeu, x >= y)
#undef CUDASIM_HALF_COMPARE
#define CUDASIM_HALF2_BOTH(both, scalar) \
  inline bool both(__half2 a, __half2 b) { return scalar(a.x, b.x) && scalar(a.y, b.y); }
CUDASIM_HALF2_BOTH(__hbeq2, __heq)
CUDASIM_HALF2_BOTH(__hbne2, __hne)
CUDASIM_HALF2_BOTH(__hblt2, __hlt)
CUDASIM_HALF2_BOTH(__hble2, __hle)
CUDASIM_HALF2_BOTH(__hbgt2, __hgt)
CUDASIM_HALF2_BOTH(__hbge2, __hge)
CUDASIM_HALF2_BOTH(__hbequ2, __hequ)
CUDASIM_HALF2_BOTH(__hbneu2, __hneu)
CUDASIM_HALF2_BOTH(__hbltu2, __hltu)
CUDASIM_HALF2_BOTH(__hbleu2, __hleu)
CUDASIM_HALF2_BOTH(__hbgtu2, __hgtu)
CUDASIM_HALF2_BOTH(__hbgeu2, __hgeu)
#undef CUDASIM_HALF2_BOTH
inline __half2 __hisnan2(__half2 a) {
  return __half2(__half(__hisnan(a.x) ? 1.0f : 0.0f), __half(__hisnan(a.y) ? 1.0f : 0.0f));
}

// ---- operators -------------------------------------------------------------------------------
inline __half operator+(const __half& a, const __half& b) { return __hadd(a, b); }
inline __half operator-(const __half& a, const __half& b) { return __hsub(a, b); }
inline __half operator*(const __half& a, const __half& b) { return __hmul(a, b); }
inline __half operator/(const __half& a, const __half& b) { return __hdiv(a, b); }
inline __half& operator+=(__half& a, const __half& b) { return a = __hadd(a, b); }
inline __half& operator-=(__half& a, const __half& b) { return a = __hsub(a, b); }
inline __half& operator*=(__half& a, const __half& b) { return a = __hmul(a, b); }
inline __half& operator/=(__half& a, const __half& b) { return a = __hdiv(a, b); }
inline __half operator+(const __half& a) { return a; }
inline __half operator-(const __half& a) { return __hneg(a); }
inline __half& operator++(__half& a) { return a = __hadd(a, __half_raw{0x3C00}); }
inline __half& operator--(__half& a) { return a = __hsub(a, __half_raw{0x3C00}); }
inline __half operator++(__half& a, int) { const __half old = a; ++a; return old; }
inline __half operator--(__half& a, int) { const __half old = a; --a; return old; }
inline bool operator==(const __half& a, const __half& b) { return __heq(a, b); }
inline bool operator!=(const __half& a, const __half& b) { return __hneu(a, b); }
inline bool operator<(const __half& a, const __half& b) { return __hlt(a, b); }
inline bool operator<=(const __half& a, const __half& b) { return __hle(a, b); }
inline bool operator>(const __half& a, const __half& b) { return __hgt(a, b); }
inline bool operator>=(const __half& a, const __half& b) { return __hge(a, b); }

inline __half2 operator+(const __half2& a, const __half2& b) { return __hadd2(a, b); }
inline __half2 operator-(const __half2& a, const __half2& b) { return __hsub2(a, b); }
inline __half2 operator*(const __half2& a, const __half2& b) { return __hmul2(a, b); }
inline __half2 operator/(const __half2& a, const __half2& b) { return __h2div(a, b); }
inline __half2& operator+=(__half2& a, const __half2& b) { return a = __hadd2(a, b); }
inline __half2& operator-=(__half2& a, const __half2& b) { return a = __hsub2(a, b); }
inline __half2& operator*=(__half2& a, const __half2& b) { return a = __hmul2(a, b); }
inline __half2& operator/=(__half2& a, const __half2& b) { return a = __h2div(a, b); }
inline __half2 operator+(const __half2& a) { return a; }
inline __half2 operator-(const __half2& a) { return __hneg2(a); }
inline bool operator==(const __half2& a, const __half2& b) { return __hbeq2(a, b); }
inline bool operator!=(const __half2& a, const __half2& b) { return __hbneu2(a, b); }

// ---- math functions ----------------------------------------------------------------------------
// sqrt, rcp and the rounding functions are correctly rounded; the others are computed in float
// and rounded (a GPU's may differ in the last bit).
#define CUDASIM_HALF_MATH(name, expression)                                                       \
  inline __half h##name(__half a) {                                                                \
    const float x = a;                                                                             \
    return cudasim::detail::round_half(expression);                                                \
  }                                                                                                \
  inline __half2 h2##name(__half2 a) { return __half2(h##name(a.x), h##name(a.y)); }
CUDASIM_HALF_MATH(sqrt, std::sqrt(static_cast<double>(x)))
CUDASIM_HALF_MATH(rsqrt, 1.0f / std::sqrt(x))
CUDASIM_HALF_MATH(rcp, 1.0 / static_cast<double>(x))
CUDASIM_HALF_MATH(exp, std::exp(x))
CUDASIM_HALF_MATH(exp2, std::exp2(x))
CUDASIM_HALF_MATH(exp10, std::pow(10.0f, x))
CUDASIM_HALF_MATH(log, std::log(x))
CUDASIM_HALF_MATH(log2, std::log2(x))
CUDASIM_HALF_MATH(log10, std::log10(x))
CUDASIM_HALF_MATH(sin, std::sin(x))
CUDASIM_HALF_MATH(cos, std::cos(x))
CUDASIM_HALF_MATH(tanh, std::tanh(x))
CUDASIM_HALF_MATH(floor, std::floor(x))
CUDASIM_HALF_MATH(ceil, std::ceil(x))
CUDASIM_HALF_MATH(trunc, std::trunc(x))
CUDASIM_HALF_MATH(rint, std::nearbyint(x))
#undef CUDASIM_HALF_MATH

// ---- atomics ---------------------------------------------------------------------------------
// A compare-and-swap loop on the 16 or 32 bits: the addition is rounded as __hadd/__hadd2 round.
inline __half2 atomicAdd(__half2* address, __half2 value) {
  CUDASIM_COUNT_ATOMIC(address);
  return cudasim::detail::atomic_update(address, [value](__half2 old) { return __hadd2(old, value); });
}
inline __half atomicAdd(__half* address, __half value) {
  CUDASIM_COUNT_ATOMIC(address);
  return cudasim::detail::atomic_update(address, [value](__half old) { return __hadd(old, value); });
}
