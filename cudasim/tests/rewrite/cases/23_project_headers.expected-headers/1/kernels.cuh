#line 1 "@CASES@/23_project_headers/kernels.cuh"
// A header with a launch and dynamic shared memory.
#pragma once
#include "@CASES@/23_project_headers/plain.h"
#include "../4/launch.h"

#define GUARDED_RETURN(p) if (!(p)) return

static thread_local float* const dynamic = reinterpret_cast<float*>(::cudasim::dynamic_shared_memory(&dynamic));

template <class T>
__global__ void scale(T* p) { if (const std::size_t cudasim_fission = ::cudasim::detail::begin_fissioned_block(); cudasim_fission == 0) {
    T* const tile = reinterpret_cast<T*>(::cudasim::dynamic_shared_memory());
    tile[threadIdx.x] = p[threadIdx.x];
    co_await ::cudasim::detail::await_syncthreads();
    p[threadIdx.x] = 2 * tile[threadIdx.x] + dynamic[0];
} else { ::cudasim::detail::FissionedBlock cudasim_block(cudasim_fission);
#line 12
T* const tile = reinterpret_cast<T*>(::cudasim::dynamic_shared_memory());

CUDASIM_FOR_EACH_THREAD(cudasim_block) {
#line 13
tile[threadIdx.x] = p[threadIdx.x];
}
#line 14
cudasim_block.barrier();
CUDASIM_FOR_EACH_THREAD(cudasim_block) {
#line 15
p[threadIdx.x] = 2 * tile[threadIdx.x] + dynamic[0];
}
#line 16
}}

inline void launch_scale(float* p) { ::cudasim::launch_inline("scale", CUDASIM_INLINE_KERNEL(scale), 1, 32, 32 * sizeof(float))(p); }
