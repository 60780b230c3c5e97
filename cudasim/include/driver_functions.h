/// @file driver_functions.h
/// @brief What the CUDA Toolkit declares in <driver_functions.h> is part of the simulator's <cuda_runtime.h>.
#pragma once
#include "cuda_runtime.h"
