/// @file cuda_runtime_api.h
/// @brief Same as <cuda_runtime.h> in the simulator.
#pragma once
#include "cuda_runtime.h"
