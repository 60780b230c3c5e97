/// @file cuda_device_runtime_api.h
/// @brief What the CUDA Toolkit declares in <cuda_device_runtime_api.h> is part of the simulator's <cuda_runtime.h>.
#pragma once
#include "cuda_runtime.h"
