/// @file device_functions.h
/// @brief What the CUDA Toolkit declares in <device_functions.h> is part of the simulator's <cuda_runtime.h>.
#pragma once
#include "cuda_runtime.h"
