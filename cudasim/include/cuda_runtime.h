/// @file cuda_runtime.h
/// @brief The simulator's stand-in for the CUDA runtime header: student code includes
/// <cuda_runtime.h> unchanged and gets the CPU implementation.
#pragma once

// First, before any standard header: its memory builtins are counted (see there).
#include "cudasim/builtin_memory.hpp"

#define CUDASIM 1
// __CUDA_ARCH__ as nvcc's device pass defines it, for the modelled GPU (compute capability 9.0):
// the rewrite (cudasim_rewrite) puts this name in place of __CUDA_ARCH__ in preprocessor lines
// inside device-only functions. Elsewhere __CUDA_ARCH__ stays undefined, as in the host pass.
#define CUDASIM_DEVICE_ARCH 900
// The real header's include guard: code such as NVIDIA's helper_cuda.h only defines its CUDA
// helpers (checkCudaErrors, findCudaDevice) when it sees it.
#define __CUDA_RUNTIME_H__
// driver_types.h's guard: helper_cuda.h defines checkCudaErrors and getLastCudaError under it.
// The types it names (cudaError_t, cudaStream_t, ...) come with this header here.
#define __DRIVER_TYPES_H__

// What the real header brings in and programs rely on without including it themselves
// (NULL, malloc, memset, printf, assert, sqrtf, placement new).
// Not the C++ <math.h> wrapper: in C++20 it declares std::lerp in the global namespace, which
// collides with the lerp() that ML code often defines for itself; <cmath> brings the C
// functions (sqrtf, expf, ...) all the same.
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmath>
#include <cstdlib>
#include <new>

// What the C++ <math.h> adds to the global namespace (the float overloads, so that abs(-1.5f)
// is not abs(int), and the classification functions), except C++20's std::lerp, which collides
// with the lerp() that ML code often defines for itself (nvcc compiles C++17, without it).
using std::abs, std::fabs, std::isfinite, std::isinf, std::isnan, std::isnormal, std::signbit,
    std::fpclassify, std::sqrt, std::cbrt, std::exp, std::exp2, std::expm1, std::log, std::log2,
    std::log10, std::log1p, std::pow, std::sin, std::cos, std::tan, std::asin, std::acos, std::atan,
    std::atan2, std::sinh, std::cosh, std::tanh, std::asinh, std::acosh, std::atanh, std::floor,
    std::ceil, std::round, std::trunc, std::rint, std::nearbyint, std::lround, std::llround,
    std::fmod, std::remainder, std::fmin, std::fmax, std::fdim, std::fma, std::hypot, std::erf,
    std::erfc, std::tgamma, std::lgamma, std::copysign, std::frexp, std::ldexp, std::modf,
    std::scalbn, std::ilogb, std::logb, std::nextafter;

#include "cudasim/runtime_types.hpp"
#include "cudasim/execution.hpp"
#include "cudasim/device_functions.hpp"
#include "cudasim/runtime_api.hpp"
#include "cudasim/textures.hpp"
#include "cudasim/inline_ptx.hpp"
#include "cudasim/stats.hpp"
#include "cudasim/link_model.hpp"
#include "cudasim/timeline.hpp"
