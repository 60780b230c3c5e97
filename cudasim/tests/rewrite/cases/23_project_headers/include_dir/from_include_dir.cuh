// Found through the -I folder.
#pragma once
__global__ void from_include_dir(int* p) {
    extern __shared__ int s[];
    p[0] = s[0];
}
