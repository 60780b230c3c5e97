// extern __shared__ at namespace scope: the pointer is per worker thread, so this is fine.
#include <cuda_runtime.h>

extern __shared__ float global_scratch[];
extern __shared__ __align__(16) unsigned char aligned_scratch[];
extern __shared__ float tile_rows[][33];

namespace kernels {
extern __shared__ __align__(8) double ns_scratch[];

__global__ void use() { ns_scratch[threadIdx.x] = global_scratch[threadIdx.x]; }
}  // namespace kernels

namespace {
extern __shared__ int anonymous_scratch[];
}
