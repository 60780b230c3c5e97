/// @file cuda_runtime.h
/// @brief The simulator's stand-in for the CUDA runtime header: student code includes
/// <cuda_runtime.h> unchanged and gets the CPU implementation.
#pragma once

#define CUDASIM 1

#include "cudasim/runtime_types.hpp"
#include "cudasim/execution.hpp"
#include "cudasim/device_functions.hpp"
#include "cudasim/runtime_api.hpp"
#include "cudasim/stats.hpp"
#include "cudasim/link_model.hpp"
