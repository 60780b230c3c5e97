// Loop fission: a kernel whose barriers every thread of a block reaches together gets a second
// version of its body, run as one loop over the block's threads per stretch between barriers.
// Every other kernel with barriers says, in a comment, why it keeps only the coroutine version.
#include <cuda_runtime.h>
#define TILE 16
#define GUARD(c) if (!(c)) return;
constexpr int kSteps = 4;
__device__ int scale_on_device = 2;
__device__ float warp_total(float v) { return v + __shfl_down_sync(0xffffffffu, v, 16); }

// Fissioned: locals across barriers (slots), __shared__ and extern __shared__ first, a uniform
// loop, a #pragma, comments and the other rewrites (memcpy) inside a stretch.
template <int kWidth>
__global__ void fissioned(const float* in, float* out, int n) {
    __shared__ float tile[TILE];
    extern __shared__ float spill[];
    const int tx = threadIdx.x, base = blockIdx.x * TILE;
    float acc = 0.0f, weights[2] = {1.0f, 2.0f};
    for (int step = 0; step < n / TILE + kSteps * kWidth; step += 1) {
        tile[tx] = in[base + tx] * weights[step % 2];  // a comment
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) acc += tile[k];
        __syncthreads();
    }
    const float result = acc;
    memcpy(&spill[tx], &result, sizeof result);
    __syncthreads();
    if (tx < n) *out = spill[tx];
}

// Not fissioned, one kernel per reason.
__global__ void under_if(float* out) {
    if (threadIdx.x < 16) { __syncthreads(); }
    out[0] = 1;
}
__global__ void thread_dependent_loop(float* out) {
    for (int i = 0; i < threadIdx.x; ++i) { __syncthreads(); }
    out[0] = 1;
}
__global__ void device_variable_bound(float* out) {
    for (int i = 0; i < scale_on_device; ++i) { __syncthreads(); }
    out[0] = 1;
}
__global__ void local_bound(float* out, int n) {
    int trips = n;
    for (int i = 0; i < trips; ++i) { __syncthreads(); }
    out[0] = 1;
}
__global__ void written_loop_variable(float* out, int n) {
    for (int i = 0; i < n; ++i) { __syncthreads(); i += threadIdx.x; }
    out[0] = 1;
}
__global__ void while_loop(float* out, int n) {
    int i = 0;
    while (i < n) { __syncthreads(); ++i; }
    out[0] = 1;
}
__global__ void early_return(float* out, int n) {
    if (threadIdx.x >= n) return;
    __syncthreads();
    out[0] = 1;
}
__global__ void returning_macro_inside(float* out, int n) {
    GUARD(threadIdx.x < n)
    __syncthreads();
    out[0] = 1;
}
__global__ void with_goto(float* out) {
    __syncthreads();
    if (out == nullptr) goto done;
    out[0] = 1;
done:
    out[1] = 2;
}
__global__ void break_leaves(float* out, int n) {
    for (int i = 0; i < n; ++i) {
        __syncthreads();
        if (out[i] > 0) break;
    }
}
__global__ void shuffles(float* out) {
    float v = out[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, v, 1);
}
__global__ void helper_that_shuffles(float* out) {
    __syncthreads();
    out[threadIdx.x] = warp_total(out[threadIdx.x]);
}
__global__ void recursive(float* out, int depth) {
    __syncthreads();
    if (depth > 0) recursive<<<1, 1>>>(out, depth - 1);
}
__global__ void written_parameter(float* out, int n) {
    n += threadIdx.x;
    __syncthreads();
    out[0] = n;
}
__global__ void address_of_parameter(float* out, int n) {
    __syncthreads();
    atomicAdd(&n, 1);
    out[0] = n;
}
__global__ void auto_across_barrier(float* out) {
    auto v = out[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = v;
}
__global__ void reference_across_barrier(float* out) {
    float x = out[threadIdx.x];
    float& v = x;
    __syncthreads();
    out[threadIdx.x] = v;
}
__global__ void declared_twice(float* out, int n) {
    for (int i = 0; i < n; ++i) {
        float v = out[i];
        __syncthreads();
        out[i] = v;
    }
    float v = 0;
    __syncthreads();
    out[0] = v;
}
__global__ void conditional_compilation(float* out) {
#if TILE > 8
    out[threadIdx.x] = 1;
#endif
    __syncthreads();
}
__global__ void barrier_in_expression(int* out) {
    __syncthreads();
    out[0] = __syncthreads_count(out[threadIdx.x] > 0);
}
#define DECLARE_ZERO(name) float name = 0
__global__ void declaring_macro(float* out) {
    DECLARE_ZERO(total);
    __syncthreads();
    out[0] = total;
}
__global__ void unreadable_declaration(float* out) {
    float (*row)[4] = reinterpret_cast<float (*)[4]>(out);
    __syncthreads();
    out[0] = row[0][0];
}
// Fissioned: integer specifiers alone as the type, and a local used only where it is declared.
__global__ void integer_specifiers(unsigned* out) {
    unsigned mine = threadIdx.x, twice;
    long long wide = 2;
    twice = mine * wide;
    __syncthreads();
    out[threadIdx.x] = mine + twice;
    for (int i = 0; i < 2; ++i) {
        const unsigned here = out[(threadIdx.x + i) % blockDim.x];
        __syncthreads();
        out[threadIdx.x] = here;
        __syncthreads();
    }
}
// Not fissioned: a loop bound in shared memory (one load per thread on a GPU), and a parameter
// or loop variable bound to a reference (which could write it).
__global__ void shared_bound(int* out, int n) {
    __shared__ int trips;
    if (threadIdx.x == 0) trips = n;
    __syncthreads();
    for (int i = 0; i < trips; ++i) { out[i] = i; __syncthreads(); }
}
__global__ void parameter_by_reference(int* out, int n) {
    int& alias = n;
    __syncthreads();
    out[0] = alias;
}
__global__ void loop_variable_by_reference(int* out, int n) {
    for (int i = 0; i < n; ++i) {
        const int& alias = i;
        __syncthreads();
        out[i] = alias;
    }
}
// Not fissioned: the address of a local that lives across a barrier, and an array of them that
// decays to a pointer (each stretch works on a copy of the thread's values).
__global__ void address_across_barrier(float* out) {
    float total = 0;
    float* where = &total;
    __syncthreads();
    *where += 1;
    out[threadIdx.x] = total;
}
__global__ void array_decays(float* out) {
    float values[2] = {1, 2};
    float* first = values;
    __syncthreads();
    out[threadIdx.x] = first[0] + values[1];
}
