// The CPU's answer to exercise 01/04 attention and its tolerances, for its tests and its
// performance case (autograder/perf/01-serial-dependency/perf_attention.cpp).
#pragma once

#include "course_test.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

namespace {

namespace ct = course::test;

constexpr double kEps = std::numeric_limits<float>::epsilon();

/// The CPU's answer, in double.
struct Reference {
  std::vector<double> probs, out;
};

inline Reference cpu_attention(const std::vector<float>& q, const std::vector<float>& k,
                        const std::vector<float>& v, int n, int d, bool causal) {
  Reference r;
  r.probs.assign(static_cast<size_t>(n) * n, 0.0);
  r.out.assign(static_cast<size_t>(n) * d, 0.0);
  const double scale = 1.0 / std::sqrt(double(d));
  std::vector<double> s(n);
  for (int i = 0; i < n; ++i) {
    const int valid = causal ? i + 1 : n;
    double m = -INFINITY;
    for (int j = 0; j < valid; ++j) {
      double dot = 0.0;
      for (int c = 0; c < d; ++c) dot += double(q[size_t(i) * d + c]) * k[size_t(j) * d + c];
      s[j] = dot * scale;
      m = std::max(m, s[j]);
    }
    double sum = 0.0;
    for (int j = 0; j < valid; ++j) sum += std::exp(s[j] - m);
    for (int j = 0; j < valid; ++j) {
      const double p = std::exp(s[j] - m) / sum;
      r.probs[size_t(i) * n + j] = p;
      for (int c = 0; c < d; ++c) r.out[size_t(i) * d + c] += p * v[size_t(j) * d + c];
    }
  }
  return r;
}

/// A score is a d-term dot product of size up to sqrt(d) * |q|max * |k|max after scaling, so
/// float rounds it by ~eps * sqrt(d) * qk in absolute terms, and exp() turns an absolute
/// error of a score into a relative error of its probability. The row sum (n terms) and the
/// n-term products P·V (weights summing to 1, |v| <= 1) add ~eps * sqrt(n). Factor 8 for
/// safety across seeds; a wrong index or a missing scale is off by far more.
inline ct::Tolerance probs_tolerance(int n, int d, double qk) {
  return {1e-7, 8.0 * kEps * (std::sqrt(double(d)) * qk + std::sqrt(double(n)) + 8.0)};
}
inline ct::Tolerance out_tolerance(int n, int d, double qk) {
  const double t = 8.0 * kEps * (std::sqrt(double(d)) * qk + std::sqrt(double(n)) + 8.0);
  return {t, t};
}

}  // namespace
