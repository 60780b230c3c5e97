#line 1 "@INPUT@"
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
__global__ void fissioned(const float* in, float* out, int n) { if (const std::size_t cudasim_fission = ::cudasim::detail::begin_fissioned_block(); cudasim_fission == 0) {
    __shared__ float tile[TILE];
    float* const spill = reinterpret_cast<float*>(::cudasim::dynamic_shared_memory());
    const int tx = threadIdx.x, base = blockIdx.x * TILE;
    float acc = 0.0f, weights[2] = {1.0f, 2.0f};
    for (int step = 0; step < n / TILE + kSteps * kWidth; step += 1) {
        tile[tx] = in[base + tx] * weights[step % 2];  // a comment
        co_await ::cudasim::detail::await_syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) acc += tile[k];
        co_await ::cudasim::detail::await_syncthreads();
    }
    const float result = acc;
    ::cudasim::detail::device_memcpy(&spill[tx], &result, sizeof result);
    co_await ::cudasim::detail::await_syncthreads();
    if (tx < n) *out = spill[tx];
} else { ::cudasim::detail::FissionedBlock cudasim_block(cudasim_fission);
#line 15
__shared__ float tile[TILE];

#line 16
float* const spill = reinterpret_cast<float*>(::cudasim::dynamic_shared_memory());

auto* const cudasim_slot_tx = cudasim_block.slots<std::remove_cv_t<const int >>();
auto* const cudasim_slot_base = cudasim_block.slots<std::remove_cv_t<const int >>();
auto* const cudasim_slot_acc = cudasim_block.slots<std::remove_cv_t<float >>();
auto* const cudasim_slot_weights = cudasim_block.slots<std::remove_cv_t<float >[ 2 ]>();
CUDASIM_FOR_EACH_THREAD(cudasim_block) {
#line 17
const int tx = threadIdx.x, base = blockIdx.x * TILE;

#line 18
float acc = 0.0f, weights[2] = {1.0f, 2.0f};
 ::cudasim::detail::fission_keep(cudasim_slot_tx[cudasim_block.thread()], tx); ::cudasim::detail::fission_keep(cudasim_slot_base[cudasim_block.thread()], base); ::cudasim::detail::fission_keep(cudasim_slot_acc[cudasim_block.thread()], acc); ::cudasim::detail::fission_keep(cudasim_slot_weights[cudasim_block.thread()], weights);}
#line 19
for (int step = 0; step < n / TILE + kSteps * kWidth; step += 1)
{
CUDASIM_FOR_EACH_THREAD(cudasim_block) { ::cudasim::detail::FissionLocal<std::remove_cv_t<const int >> tx; ::cudasim::detail::fission_keep(tx, cudasim_slot_tx[cudasim_block.thread()]); ::cudasim::detail::FissionLocal<std::remove_cv_t<const int >> base; ::cudasim::detail::fission_keep(base, cudasim_slot_base[cudasim_block.thread()]); ::cudasim::detail::FissionLocal<std::remove_cv_t<float >[ 2 ]> weights; ::cudasim::detail::fission_keep(weights, cudasim_slot_weights[cudasim_block.thread()]);
#line 20
tile[tx] = in[base + tx] * weights[step % 2];
 ::cudasim::detail::fission_keep(cudasim_slot_tx[cudasim_block.thread()], tx); ::cudasim::detail::fission_keep(cudasim_slot_base[cudasim_block.thread()], base); ::cudasim::detail::fission_keep(cudasim_slot_weights[cudasim_block.thread()], weights);}
#line 21
cudasim_block.barrier();
CUDASIM_FOR_EACH_THREAD(cudasim_block) { ::cudasim::detail::FissionLocal<std::remove_cv_t<float >> acc; ::cudasim::detail::fission_keep(acc, cudasim_slot_acc[cudasim_block.thread()]);
#line 22
#pragma unroll
        for (int k = 0; k < TILE; ++k) acc += tile[k];
 ::cudasim::detail::fission_keep(cudasim_slot_acc[cudasim_block.thread()], acc);}
#line 24
cudasim_block.barrier();}
CUDASIM_FOR_EACH_THREAD(cudasim_block) { ::cudasim::detail::FissionLocal<std::remove_cv_t<const int >> tx; ::cudasim::detail::fission_keep(tx, cudasim_slot_tx[cudasim_block.thread()]); ::cudasim::detail::FissionLocal<std::remove_cv_t<float >> acc; ::cudasim::detail::fission_keep(acc, cudasim_slot_acc[cudasim_block.thread()]);
#line 26
const float result = acc;

#line 27
::cudasim::detail::device_memcpy(&spill[tx], &result, sizeof result);
 ::cudasim::detail::fission_keep(cudasim_slot_tx[cudasim_block.thread()], tx); ::cudasim::detail::fission_keep(cudasim_slot_acc[cudasim_block.thread()], acc);}
#line 28
cudasim_block.barrier();
CUDASIM_FOR_EACH_THREAD(cudasim_block) { ::cudasim::detail::FissionLocal<std::remove_cv_t<const int >> tx; ::cudasim::detail::fission_keep(tx, cudasim_slot_tx[cudasim_block.thread()]);
#line 29
if (tx < n) *out = spill[tx];
 ::cudasim::detail::fission_keep(cudasim_slot_tx[cudasim_block.thread()], tx);}
#line 30
}}

// Not fissioned, one kernel per reason.
__global__ void under_if(float* out) { /* cudasim: not fissioned: a __syncthreads() under control flow other than a `for` loop's braces, or inside an expression */
    if (threadIdx.x < 16) { co_await ::cudasim::detail::await_syncthreads(); }
    out[0] = 1;
} CUDASIM_KNOWN_KERNEL(under_if, (float* out))
__global__ void thread_dependent_loop(float* out) { /* cudasim: not fissioned: a __syncthreads() in a loop whose trips may differ between threads (line 38) */
    for (int i = 0; i < threadIdx.x; ++i) { co_await ::cudasim::detail::await_syncthreads(); }
    out[0] = 1;
} CUDASIM_KNOWN_KERNEL(thread_dependent_loop, (float* out))
__global__ void device_variable_bound(float* out) { /* cudasim: not fissioned: a __syncthreads() in a loop whose trips may differ between threads (line 42) */
    for (int i = 0; i < scale_on_device; ++i) { co_await ::cudasim::detail::await_syncthreads(); }
    out[0] = 1;
} CUDASIM_KNOWN_KERNEL(device_variable_bound, (float* out))
__global__ void local_bound(float* out, int n) { /* cudasim: not fissioned: a __syncthreads() in a loop whose trips may differ between threads (line 47) */
    int trips = n;
    for (int i = 0; i < trips; ++i) { co_await ::cudasim::detail::await_syncthreads(); }
    out[0] = 1;
} CUDASIM_KNOWN_KERNEL(local_bound, (float* out, int n))
__global__ void written_loop_variable(float* out, int n) { /* cudasim: not fissioned: a __syncthreads() in a loop whose trips may differ between threads (line 51) */
    for (int i = 0; i < n; ++i) { co_await ::cudasim::detail::await_syncthreads(); i += threadIdx.x; }
    out[0] = 1;
} CUDASIM_KNOWN_KERNEL(written_loop_variable, (float* out, int n))
__global__ void while_loop(float* out, int n) { /* cudasim: not fissioned: a __syncthreads() under control flow other than a `for` loop's braces, or inside an expression */
    int i = 0;
    while (i < n) { co_await ::cudasim::detail::await_syncthreads(); ++i; }
    out[0] = 1;
} CUDASIM_KNOWN_KERNEL(while_loop, (float* out, int n))
__global__ void early_return(float* out, int n) { /* cudasim: not fissioned: `return` */
    if (threadIdx.x >= n) co_return;
    co_await ::cudasim::detail::await_syncthreads();
    out[0] = 1;
} CUDASIM_KNOWN_KERNEL(early_return, (float* out, int n))
__global__ void returning_macro_inside(float* out, int n) {
    GUARD(threadIdx.x < n)
    __syncthreads();
    out[0] = 1;
} CUDASIM_KNOWN_KERNEL(returning_macro_inside, (float* out, int n))
__global__ void with_goto(float* out) { /* cudasim: not fissioned: `goto` */
    co_await ::cudasim::detail::await_syncthreads();
    if (out == nullptr) goto done;
    out[0] = 1;
done:
    out[1] = 2;
} CUDASIM_KNOWN_KERNEL(with_goto, (float* out))
__global__ void break_leaves(float* out, int n) { /* cudasim: not fissioned: a `break` or `continue` outside a loop of its own */
    for (int i = 0; i < n; ++i) {
        co_await ::cudasim::detail::await_syncthreads();
        if (out[i] > 0) break;
    }
} CUDASIM_KNOWN_KERNEL(break_leaves, (float* out, int n))
__global__ void shuffles(float* out) { /* cudasim: not fissioned: `__shfl_xor_sync`: threads may wait for each other */
    float v = out[threadIdx.x];
    co_await ::cudasim::detail::await_syncthreads();
    out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, v, 1);
} CUDASIM_KNOWN_KERNEL(shuffles, (float* out))
__global__ void helper_that_shuffles(float* out) { /* cudasim: not fissioned: `warp_total` may wait for other threads or leave the kernel */
    co_await ::cudasim::detail::await_syncthreads();
    out[threadIdx.x] = warp_total(out[threadIdx.x]);
} CUDASIM_KNOWN_KERNEL(helper_that_shuffles, (float* out))
__global__ void recursive(float* out, int depth) { /* cudasim: not fissioned: `recursive` may wait for other threads or leave the kernel */
    co_await ::cudasim::detail::await_syncthreads();
    if (depth > 0) ::cudasim::launch_inline("recursive", CUDASIM_INLINE_KERNEL(recursive), 1, 1)(out, depth - 1);
} CUDASIM_KNOWN_KERNEL(recursive, (float* out, int depth))
__global__ void written_parameter(float* out, int n) { /* cudasim: not fissioned: parameter `n` may be written (or passed to a function) */
    n += threadIdx.x;
    co_await ::cudasim::detail::await_syncthreads();
    out[0] = n;
} CUDASIM_KNOWN_KERNEL(written_parameter, (float* out, int n))
__global__ void address_of_parameter(float* out, int n) { /* cudasim: not fissioned: parameter `n` may be written (or passed to a function) */
    co_await ::cudasim::detail::await_syncthreads();
    atomicAdd(&n, 1);
    out[0] = n;
} CUDASIM_KNOWN_KERNEL(address_of_parameter, (float* out, int n))
__global__ void auto_across_barrier(float* out) { /* cudasim: not fissioned: `v` lives across a barrier and is auto, a reference or static */
    auto v = out[threadIdx.x];
    co_await ::cudasim::detail::await_syncthreads();
    out[threadIdx.x] = v;
} CUDASIM_KNOWN_KERNEL(auto_across_barrier, (float* out))
__global__ void reference_across_barrier(float* out) { /* cudasim: not fissioned: `v` lives across a barrier and is auto, a reference or static */
    float x = out[threadIdx.x];
    float& v = x;
    co_await ::cudasim::detail::await_syncthreads();
    out[threadIdx.x] = v;
} CUDASIM_KNOWN_KERNEL(reference_across_barrier, (float* out))
__global__ void declared_twice(float* out, int n) { /* cudasim: not fissioned: `v` is declared twice */
    for (int i = 0; i < n; ++i) {
        float v = out[i];
        co_await ::cudasim::detail::await_syncthreads();
        out[i] = v;
    }
    float v = 0;
    co_await ::cudasim::detail::await_syncthreads();
    out[0] = v;
} CUDASIM_KNOWN_KERNEL(declared_twice, (float* out, int n))
__global__ void conditional_compilation(float* out) { /* cudasim: not fissioned: a preprocessor directive other than #pragma */
#if TILE > 8
    out[threadIdx.x] = 1;
#endif
    co_await ::cudasim::detail::await_syncthreads();
} CUDASIM_KNOWN_KERNEL(conditional_compilation, (float* out))
__global__ void barrier_in_expression(int* out) { /* cudasim: not fissioned: `__syncthreads_count`: threads may wait for each other */
    co_await ::cudasim::detail::await_syncthreads();
    out[0] = co_await ::cudasim::detail::await_syncthreads_count(out[threadIdx.x] > 0);
} CUDASIM_KNOWN_KERNEL(barrier_in_expression, (int* out))
#define DECLARE_ZERO(name) float name = 0
__global__ void declaring_macro(float* out) { /* cudasim: not fissioned: a statement made by the macro `DECLARE_ZERO` (it may declare names) */
    DECLARE_ZERO(total);
    co_await ::cudasim::detail::await_syncthreads();
    out[0] = total;
} CUDASIM_KNOWN_KERNEL(declaring_macro, (float* out))
__global__ void unreadable_declaration(float* out) { /* cudasim: not fissioned: a declaration the rewrite cannot read (line 143) */
    float (*row)[4] = reinterpret_cast<float (*)[4]>(out);
    co_await ::cudasim::detail::await_syncthreads();
    out[0] = row[0][0];
} CUDASIM_KNOWN_KERNEL(unreadable_declaration, (float* out))
// Fissioned: integer specifiers alone as the type, and a local used only where it is declared.
__global__ void integer_specifiers(unsigned* out) { if (const std::size_t cudasim_fission = ::cudasim::detail::begin_fissioned_block(); cudasim_fission == 0) {
    unsigned mine = threadIdx.x, twice;
    long long wide = 2;
    twice = mine * wide;
    co_await ::cudasim::detail::await_syncthreads();
    out[threadIdx.x] = mine + twice;
    for (int i = 0; i < 2; ++i) {
        const unsigned here = out[(threadIdx.x + i) % blockDim.x];
        co_await ::cudasim::detail::await_syncthreads();
        out[threadIdx.x] = here;
        co_await ::cudasim::detail::await_syncthreads();
    }
} else { ::cudasim::detail::FissionedBlock cudasim_block(cudasim_fission);
auto* const cudasim_slot_here = cudasim_block.slots<std::remove_cv_t<const unsigned >>();
auto* const cudasim_slot_mine = cudasim_block.slots<std::remove_cv_t<unsigned >>();
auto* const cudasim_slot_twice = cudasim_block.slots<std::remove_cv_t<unsigned >>();
CUDASIM_FOR_EACH_THREAD(cudasim_block) {
#line 149
unsigned mine = threadIdx.x, twice;

#line 150
long long wide = 2;

#line 151
twice = mine * wide;
 ::cudasim::detail::fission_keep(cudasim_slot_mine[cudasim_block.thread()], mine); ::cudasim::detail::fission_keep(cudasim_slot_twice[cudasim_block.thread()], twice);}
#line 152
cudasim_block.barrier();
CUDASIM_FOR_EACH_THREAD(cudasim_block) { ::cudasim::detail::FissionLocal<std::remove_cv_t<unsigned >> mine; ::cudasim::detail::fission_keep(mine, cudasim_slot_mine[cudasim_block.thread()]); ::cudasim::detail::FissionLocal<std::remove_cv_t<unsigned >> twice; ::cudasim::detail::fission_keep(twice, cudasim_slot_twice[cudasim_block.thread()]);
#line 153
out[threadIdx.x] = mine + twice;
 ::cudasim::detail::fission_keep(cudasim_slot_mine[cudasim_block.thread()], mine); ::cudasim::detail::fission_keep(cudasim_slot_twice[cudasim_block.thread()], twice);}
#line 154
for (int i = 0; i < 2; ++i)
{
CUDASIM_FOR_EACH_THREAD(cudasim_block) {
#line 155
const unsigned here = out[(threadIdx.x + i) % blockDim.x];
 ::cudasim::detail::fission_keep(cudasim_slot_here[cudasim_block.thread()], here);}
#line 156
cudasim_block.barrier();
CUDASIM_FOR_EACH_THREAD(cudasim_block) { ::cudasim::detail::FissionLocal<std::remove_cv_t<const unsigned >> here; ::cudasim::detail::fission_keep(here, cudasim_slot_here[cudasim_block.thread()]);
#line 157
out[threadIdx.x] = here;
 ::cudasim::detail::fission_keep(cudasim_slot_here[cudasim_block.thread()], here);}
#line 158
cudasim_block.barrier();}
#line 160
}} CUDASIM_KNOWN_KERNEL(integer_specifiers, (unsigned* out))
// Not fissioned: a loop bound in shared memory (one load per thread on a GPU), and a parameter
// or loop variable bound to a reference (which could write it).
__global__ void shared_bound(int* out, int n) { /* cudasim: not fissioned: a __syncthreads() in a loop whose trips may differ between threads (line 167) */
    __shared__ int trips;
    if (threadIdx.x == 0) trips = n;
    co_await ::cudasim::detail::await_syncthreads();
    for (int i = 0; i < trips; ++i) { out[i] = i; co_await ::cudasim::detail::await_syncthreads(); }
} CUDASIM_KNOWN_KERNEL(shared_bound, (int* out, int n))
__global__ void parameter_by_reference(int* out, int n) { /* cudasim: not fissioned: parameter `n` may be written (or passed to a function) */
    int& alias = n;
    co_await ::cudasim::detail::await_syncthreads();
    out[0] = alias;
} CUDASIM_KNOWN_KERNEL(parameter_by_reference, (int* out, int n))
__global__ void loop_variable_by_reference(int* out, int n) { /* cudasim: not fissioned: a __syncthreads() in a loop whose trips may differ between threads (line 175) */
    for (int i = 0; i < n; ++i) {
        const int& alias = i;
        co_await ::cudasim::detail::await_syncthreads();
        out[i] = alias;
    }
} CUDASIM_KNOWN_KERNEL(loop_variable_by_reference, (int* out, int n))
// Not fissioned: the address of a local that lives across a barrier, and an array of them that
// decays to a pointer (each stretch works on a copy of the thread's values).
__global__ void address_across_barrier(float* out) { /* cudasim: not fissioned: the address of `total`, which lives across a barrier, is taken */
    float total = 0;
    float* where = &total;
    co_await ::cudasim::detail::await_syncthreads();
    *where += 1;
    out[threadIdx.x] = total;
} CUDASIM_KNOWN_KERNEL(address_across_barrier, (float* out))
__global__ void array_decays(float* out) { /* cudasim: not fissioned: the address of `values`, which lives across a barrier, is taken */
    float values[2] = {1, 2};
    float* first = values;
    co_await ::cudasim::detail::await_syncthreads();
    out[threadIdx.x] = first[0] + values[1];
} CUDASIM_KNOWN_KERNEL(array_decays, (float* out))
