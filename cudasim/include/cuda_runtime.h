/// @file cuda_runtime.h
/// @brief The simulator's stand-in for the CUDA runtime header: student code includes
/// <cuda_runtime.h> unchanged and gets the CPU implementation.
#pragma once

#define CUDASIM 1
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

#include "cudasim/runtime_types.hpp"
#include "cudasim/execution.hpp"
#include "cudasim/device_functions.hpp"
#include "cudasim/runtime_api.hpp"
#include "cudasim/stats.hpp"
#include "cudasim/link_model.hpp"
