// The headers the simulator provides still compile when a CUDA Toolkit is installed beside
// it: none of them may be replaced by a toolkit-header stub.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cuda_runtime_api.h>
#include <cublas_v2.h>
#include <curand.h>
#include <curand_kernel.h>
#include <cuda_bf16.h>
#include <mma.h>

__global__ void fill(float* out) { out[threadIdx.x] = 1.0f; }

int main() {
    float* device = nullptr;
    return cudaMalloc(&device, 32 * sizeof(float)) == cudaSuccess ? 0 : 1;
}
