// The CPU's answer to exercise 01/05 linear_scan and its tolerance, for its tests and its
// performance case (autograder/perf/01-serial-dependency/perf_linear_scan.cpp).
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

/// The serial loop, in double: the definition the scan must reproduce.
inline std::vector<double> serial_recurrence(const std::vector<float>& a, const std::vector<float>& b,
                                      float h_init) {
  std::vector<double> h(a.size());
  double state = h_init;
  for (size_t t = 0; t < a.size(); ++t) {
    state = double(a[t]) * state + double(b[t]);
    h[t] = state;
  }
  return h;
}

/// With |a| <= a_max < 1 and |b| <= 1, |h| <= 1 / (1 - a_max) (after the effect of h_init
/// fades). The scan computes the same sum of b's times products of a's as the loop, in another
/// order: each path through it rounds about log2(n) + 2 * 4 times (the tree, plus a thread's
/// 4 elements in passes 1 and 3), each by eps of at most |h|. Factor 4 for safety; a carry
/// applied to the wrong tile, or a lost element, is off by O(1).
inline ct::Tolerance scan_tolerance(int n, double h_max) {
  const double roundings = std::log2(double(std::max(n, 2))) + 8.0;
  return {4.0 * kEps * roundings * h_max, 4.0 * kEps * roundings};
}

}  // namespace
