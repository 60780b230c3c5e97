#line 1 "@INPUT@"
// extern __shared__ at namespace scope: the pointer is per worker thread, so this is fine.
#include <cuda_runtime.h>

static thread_local float* const global_scratch = reinterpret_cast<float*>(::cudasim::dynamic_shared_memory(&global_scratch));
static thread_local unsigned char* const aligned_scratch = reinterpret_cast<unsigned char*>(::cudasim::dynamic_shared_memory(&aligned_scratch));
static thread_local float (* const tile_rows)[33] = reinterpret_cast<float (*)[33]>(::cudasim::dynamic_shared_memory(&tile_rows));

namespace kernels {
static thread_local double* const ns_scratch = reinterpret_cast<double*>(::cudasim::dynamic_shared_memory(&ns_scratch));

__global__ void use() { ns_scratch[threadIdx.x] = global_scratch[threadIdx.x]; } CUDASIM_KNOWN_KERNEL(use, ())
}  // namespace kernels

namespace {
static thread_local int* const anonymous_scratch = reinterpret_cast<int*>(::cudasim::dynamic_shared_memory(&anonymous_scratch));
}
