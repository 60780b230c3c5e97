// Included by kernels.cuh, and includes it back (the #pragma once ends the cycle).
#pragma once
#include "../kernels.cuh"

__global__ void nested_kernel() {}
inline void launch_nested() { nested_kernel<<<1, 1>>>(); }
