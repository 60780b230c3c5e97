// The device half of the two-file example (see include/scale.h): a kernel and its launcher.
// Each element is read once and written once: 8 bytes of traffic per float, no FLOPs worth
// counting beyond one multiply.
#include "scale.h"

__global__ void scale_elements(float* data, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {  // the last block runs past n when n is not a multiple of the block size
        data[i] *= SCALE;
    }
}

cudaError_t launch_scale(float* device_data, int n) {
    const int threads = 256;
    scale_elements<<<(n + threads - 1) / threads, threads>>>(device_data, n);
    return cudaGetLastError();
}
