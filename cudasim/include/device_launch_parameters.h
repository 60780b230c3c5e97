/// @file device_launch_parameters.h
/// @brief Same as <cuda_runtime.h> in the simulator.
#pragma once
#include "cuda_runtime.h"
