// Preprocessor lines do not make the next brace look like a function body: this namespace
// holds a namespace-scope extern __shared__ (the static thread_local form) and a kernel that
// is converted to a coroutine.
#include <cuda_runtime.h>
#define TILE 16

namespace {
extern __shared__ float shared_at_namespace_scope[];

__global__ void k(float* out) {
    out[threadIdx.x] = shared_at_namespace_scope[0];
    __syncthreads();
}
}  // namespace

// A __global__ inside a #define is not a kernel definition: the helper after it stays as it is.
#define KERNEL_QUALIFIERS __global__ void
__device__ void helper_after_define(int* p) {
    __syncthreads();
    p[0] = 1;
}
