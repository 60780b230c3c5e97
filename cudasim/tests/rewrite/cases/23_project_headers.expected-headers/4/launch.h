#line 1 "@CASES@/23_project_headers/nested/launch.h"
// Included by kernels.cuh, and includes it back (the #pragma once ends the cycle).
#pragma once
#include "../1/kernels.cuh"

__global__ void nested_kernel() {} CUDASIM_KNOWN_KERNEL(nested_kernel, ())
inline void launch_nested() { ::cudasim::launch_inline("nested_kernel", CUDASIM_INLINE_KERNEL(nested_kernel), 1, 1)(); }
