#line 1 "@CASES@/23_project_headers/include_dir/from_include_dir.cuh"
// Found through the -I folder.
#pragma once
__global__ void from_include_dir(int* p) {
    int* const s = reinterpret_cast<int*>(::cudasim::dynamic_shared_memory());
    p[0] = s[0];
} CUDASIM_KNOWN_KERNEL(from_include_dir, (int* p))
