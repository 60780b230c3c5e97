/// @file channel_descriptor.h
/// @brief One of the CUDA headers that declare arrays, textures and surfaces: the simulator
/// declares them all in cudasim/textures.hpp, which <cuda_runtime.h> brings in, so a program
/// that includes this one by name gets them too (and not the toolkit's, which would collide).
#pragma once
#include "cuda_runtime.h"
