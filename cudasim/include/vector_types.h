/// @file vector_types.h
/// @brief What the CUDA Toolkit declares in <vector_types.h> is part of the simulator's <cuda_runtime.h>.
#pragma once
#include "cuda_runtime.h"
