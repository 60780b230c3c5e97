/// @file narrow_float.hpp
/// @brief Rounding to the 16-bit floating-point formats (IEEE binary16 for `__half`, bfloat16
/// for `__nv_bfloat16`), shared by cuda_fp16.h and cuda_bf16.h.
///
/// Every operation on a 16-bit value is computed in double and rounded once to the 16-bit
/// format, to nearest with ties to even, which gives the correctly rounded result a GPU gives:
/// double has more than 2p+2 bits for both formats (p = 11 and 8), so rounding +, -, *, / and
/// sqrt first to double and then to 16 bits never differs from rounding the exact result once.
/// A fused multiply-add is the exception: its exact result may need more than 53 bits, so it is
/// rounded to double "to odd" first (fma_to_odd), which makes the second rounding exact.
#pragma once

#include "cudasim/builtin_memory.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace cudasim::detail {

/// A 16-bit binary floating-point format with one sign bit and `MantissaBits` stored mantissa
/// bits (the rest is the exponent).
template <int MantissaBits>
struct NarrowFormat {
  static constexpr int kMantissaBits = MantissaBits;
  static constexpr int kExponentBits = 15 - MantissaBits;
  static constexpr int kBias = (1 << (kExponentBits - 1)) - 1;
  static constexpr int kMinExponent = 1 - kBias;  // of the smallest normal number
  static constexpr int kMaxExponent = kBias;      // of the largest finite number
  static constexpr std::uint16_t kInfinity = static_cast<std::uint16_t>(((1 << kExponentBits) - 1) << MantissaBits);
  static constexpr std::uint16_t kCanonicalNaN = 0x7FFF;  // what a GPU returns for a NaN result
};
using Binary16 = NarrowFormat<10>;
using BFloat16 = NarrowFormat<7>;

/// Rounds `magnitude * 2^exponent` (magnitude < 2^64) to format F, to nearest with ties to even;
/// `negative` gives the sign bit. Values too large for F become infinity, tiny ones subnormals
/// or zero, as IEEE 754 says.
template <class F>
std::uint16_t round_to_narrow(bool negative, std::uint64_t magnitude, int exponent) {
  const std::uint16_t sign = negative ? 0x8000 : 0;
  if (magnitude == 0) return sign;
  const int top = 63 - __builtin_clzll(magnitude);  // magnitude is in [2^top, 2^(top+1))
  const int value_exponent = top + exponent;
  if (value_exponent > F::kMaxExponent) return sign | F::kInfinity;
  // The weight of the last kept bit: that of a normal number with this exponent, or the
  // subnormal step for numbers below the smallest normal.
  const int unit = (value_exponent >= F::kMinExponent ? value_exponent : F::kMinExponent) - F::kMantissaBits;
  const int shift = unit - exponent;  // bits of magnitude below the last kept one
  std::uint64_t kept;
  if (shift <= 0) {
    kept = magnitude << -shift;
  } else if (shift > top + 1) {
    kept = 0;  // below half of the smallest subnormal
  } else if (shift == 64) {
    kept = magnitude > (std::uint64_t{1} << 63) ? 1 : 0;  // top == 63: more than half (a tie is even: 0)
  } else {
    kept = magnitude >> shift;
    const std::uint64_t rest = magnitude & ((std::uint64_t{1} << shift) - 1);
    const std::uint64_t half = std::uint64_t{1} << (shift - 1);
    if (rest > half || (rest == half && (kept & 1))) ++kept;
  }
  // kept holds the implicit bit for normal numbers: adding it to the exponent field one below
  // the right one gives the right bits, and a carry out of the mantissa (rounding up to the next
  // power of two, or from the largest finite number to infinity) lands in the exponent.
  if (value_exponent < F::kMinExponent) return static_cast<std::uint16_t>(sign | kept);
  const std::uint64_t bits = (static_cast<std::uint64_t>(value_exponent + F::kBias - 1) << F::kMantissaBits) + kept;
  return static_cast<std::uint16_t>(sign | (bits >= F::kInfinity ? F::kInfinity : bits));
}

/// Rounds a double to format F (one rounding, ties to even). NaN gives the canonical NaN.
template <class F>
std::uint16_t double_to_narrow(double value) {
  std::uint64_t u;
  ::cudasim::detail::uncounted_memcpy(&u, &value, sizeof u);
  const bool negative = (u >> 63) != 0;
  const int biased = static_cast<int>((u >> 52) & 0x7FF);
  const std::uint64_t fraction = u & ((std::uint64_t{1} << 52) - 1);
  if (biased == 0x7FF) {
    if (fraction != 0) return F::kCanonicalNaN;
    return static_cast<std::uint16_t>((negative ? 0x8000 : 0) | F::kInfinity);
  }
  if (biased == 0) return round_to_narrow<F>(negative, fraction, -1074);
  return round_to_narrow<F>(negative, fraction | (std::uint64_t{1} << 52), biased - 1075);
}

/// The exact value of a format-F number, as a float (every such number is a float). A NaN gives
/// the canonical float NaN 0x7FFFFFFF, as CUDA's conversion does.
template <class F>
float narrow_to_float(std::uint16_t bits) {
  const bool negative = (bits & 0x8000) != 0;
  const int biased = (bits >> F::kMantissaBits) & ((1 << F::kExponentBits) - 1);
  const int fraction = bits & ((1 << F::kMantissaBits) - 1);
  float magnitude;
  if (biased == (1 << F::kExponentBits) - 1) {
    if (fraction != 0) {
      const std::uint32_t nan = 0x7FFFFFFFu;
      float f;
      ::cudasim::detail::uncounted_memcpy(&f, &nan, sizeof f);
      return f;
    }
    magnitude = INFINITY;
  } else if (biased == 0) {
    magnitude = std::ldexp(static_cast<float>(fraction), F::kMinExponent - F::kMantissaBits);
  } else {
    magnitude = std::ldexp(static_cast<float>(fraction | (1 << F::kMantissaBits)),
                           biased - F::kBias - F::kMantissaBits);
  }
  return negative ? -magnitude : magnitude;
}

/// a * b + c rounded to double "to odd": when the exact result lies strictly between two
/// doubles, the one whose last bit is 1. Exact for operands with at most 26 significant bits
/// (so that a * b is exact in double), which 16-bit formats have.
inline double fma_to_odd(double a, double b, double c) {
  const double product = a * b;  // exact
  const double sum = product + c;
  if (!std::isfinite(sum)) return sum;
  // Knuth's two-sum: the exact rounding error of the addition.
  const double b_virtual = sum - product;
  const double error = (product - (sum - b_virtual)) + (c - b_virtual);
  if (error == 0) return sum;
  const double neighbour = std::nextafter(sum, error > 0 ? INFINITY : -INFINITY);
  std::uint64_t bits;
  ::cudasim::detail::uncounted_memcpy(&bits, &sum, sizeof bits);
  return (bits & 1) ? sum : neighbour;
}

}  // namespace cudasim::detail
