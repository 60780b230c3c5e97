#line 1 "@INPUT@"
// A kernel whose own body calls __syncthreads becomes a coroutine: barriers become co_await,
// returns become co_return. Everything else is left as it is.
#include <cuda_runtime.h>

template <int kTile>
__global__ void __launch_bounds__(256) tiled(const float* in, float* out, int n) { /* cudasim: not fissioned: `return` */
    __shared__ float tile[kTile];
    float* const spill = reinterpret_cast<float*>(::cudasim::dynamic_shared_memory());
    if (threadIdx.x >= n) co_return;
    tile[threadIdx.x] = in[threadIdx.x];
    co_await ::cudasim::detail::await_syncthreads ();
    // __syncthreads() in a comment and "return __syncthreads()" in a string stay
    const int count = co_await ::cudasim::detail::await_syncthreads_count(tile[0] > 0) + 1;
    if (!co_await ::cudasim::detail::await_syncthreads_and(count) || co_await ::cudasim::detail::await_syncthreads_or(0)) { co_return; }
    out[threadIdx.x] = tile[(threadIdx.x + 1) % kTile] + spill[0];
}

static __global__ void
    spread_over_lines(int* p)
{ if (const std::size_t cudasim_fission = ::cudasim::detail::begin_fissioned_block(); cudasim_fission == 0) {
    p[0] = 1;
    co_await ::cudasim::detail::await_syncthreads(
    );
} else { ::cudasim::detail::FissionedBlock cudasim_block(cudasim_fission);
CUDASIM_FOR_EACH_THREAD(cudasim_block) {
#line 21
p[0] = 1;
}
#line 22
cudasim_block.barrier();
#line 24
}} CUDASIM_KNOWN_KERNEL(spread_over_lines, (int* p))

// Declarations, kernels without barriers and __device__ functions are not converted.
__global__ void declared_only(int* p);
__global__ void no_barrier(int* p) { if (p == nullptr) return; p[0] = 1; } CUDASIM_KNOWN_KERNEL(no_barrier, (int* p))
__device__ void helper() { __syncthreads(); return; }
__global__ void calls_helper() { helper(); return; } CUDASIM_KNOWN_KERNEL(calls_helper, ())

// Kernels that cannot be converted safely keep fiber barriers.
__global__ void has_lambda(int* p) {
    auto f = [p](int v) { p[v] = v; return v; };
    __syncthreads();
    f(1);
} CUDASIM_KNOWN_KERNEL(has_lambda, (int* p))
__global__ void has_local_class(int* p) {
    struct Local { int get() { return 1; } };
    __syncthreads();
    p[0] = Local{}.get();
} CUDASIM_KNOWN_KERNEL(has_local_class, (int* p))
__global__ void has_attribute(int* p) {
    [[maybe_unused]] int unused = 0;
    __syncthreads();
} CUDASIM_KNOWN_KERNEL(has_attribute, (int* p))
__global__ void qualified_barrier(int* p) {
    ::__syncthreads();
    p[0] = 1;
} CUDASIM_KNOWN_KERNEL(qualified_barrier, (int* p))
__global__ auto deduced_return_type(int* p) -> void {
    __syncthreads();
} CUDASIM_KNOWN_KERNEL(deduced_return_type, (int* p))

// Subscripts are not lambdas.
__global__ void subscripts(int* p, int (*table)[4]) { if (const std::size_t cudasim_fission = ::cudasim::detail::begin_fissioned_block(); cudasim_fission == 0) {
    __shared__ int s[4][4];
    s[0][p[1]] = table[0][1] + "abc"[1];
    co_await ::cudasim::detail::await_syncthreads();
    p[0] = s[p[2]][0];
} else { ::cudasim::detail::FissionedBlock cudasim_block(cudasim_fission);
#line 57
__shared__ int s[4][4];

CUDASIM_FOR_EACH_THREAD(cudasim_block) {
#line 58
s[0][p[1]] = table[0][1] + "abc"[1];
}
#line 59
cudasim_block.barrier();
CUDASIM_FOR_EACH_THREAD(cudasim_block) {
#line 60
p[0] = s[p[2]][0];
}
#line 61
}} CUDASIM_KNOWN_KERNEL(subscripts, (int* p, int (*table)[4]))

void host() { ::cudasim::launch_inline("tiled<16>", CUDASIM_INLINE_KERNEL(tiled<16>), 1, 16, 64)(nullptr, nullptr, 16); }
