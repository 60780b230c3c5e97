/// @file host_defines.h
/// @brief What the CUDA Toolkit declares in <host_defines.h> is part of the simulator's <cuda_runtime.h>.
#pragma once
#include "cuda_runtime.h"
