#line 1 "@INPUT@"
// Preprocessor lines do not make the next brace look like a function body: this namespace
// holds a namespace-scope extern __shared__ (the static thread_local form) and a kernel that
// is converted to a coroutine.
#include <cuda_runtime.h>
#define TILE 16

namespace {
static thread_local float* const shared_at_namespace_scope = reinterpret_cast<float*>(::cudasim::dynamic_shared_memory(&shared_at_namespace_scope));

__global__ void k(float* out) { if (const std::size_t cudasim_fission = ::cudasim::detail::begin_fissioned_block(); cudasim_fission == 0) {
    out[threadIdx.x] = shared_at_namespace_scope[0];
    co_await ::cudasim::detail::await_syncthreads();
} else { ::cudasim::detail::FissionedBlock cudasim_block(cudasim_fission);
CUDASIM_FOR_EACH_THREAD(cudasim_block) {
#line 11
out[threadIdx.x] = shared_at_namespace_scope[0];
}
#line 12
cudasim_block.barrier();
#line 13
}} CUDASIM_KNOWN_KERNEL(k, (float* out))
}  // namespace

// A __global__ inside a #define is not a kernel definition: the helper after it stays as it is.
#define KERNEL_QUALIFIERS __global__ void
__device__ void helper_after_define(int* p) {
    __syncthreads();
    p[0] = 1;
}
