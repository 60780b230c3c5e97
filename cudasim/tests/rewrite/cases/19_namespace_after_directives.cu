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
