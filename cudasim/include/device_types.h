/// @file device_types.h
/// @brief What the CUDA Toolkit declares in <device_types.h> is part of the simulator's <cuda_runtime.h>.
#pragma once
#include "cuda_runtime.h"
