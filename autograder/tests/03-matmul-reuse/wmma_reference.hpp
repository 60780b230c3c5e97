// Random bf16 inputs for exercise 03/05 wmma_matmul, for its tests and its performance case
// (autograder/perf/03-matmul-reuse/perf_wmma_matmul.cpp).
#pragma once

#include <cuda_bf16.h>

#include "course_test.hpp"

#include <cstddef>
#include <vector>

namespace {

/// Inputs as bf16 plus the float values they hold exactly (for the CPU reference: products of
/// bf16 are exact in fp32).
struct Bf16Matrix {
  std::vector<__nv_bfloat16> bits;
  std::vector<float> values;
};

inline Bf16Matrix random_bf16(course::test::Rng& rng, std::size_t count) {
  Bf16Matrix m;
  for (float v : rng.nonzero(count)) {
    m.bits.push_back(__float2bfloat16(v));
    m.values.push_back(__bfloat162float(m.bits.back()));
  }
  return m;
}

}  // namespace
