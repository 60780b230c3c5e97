#line 1 "@INPUT@"
// Windows line endings are kept as they are.
__global__ void k(int) {} CUDASIM_KNOWN_KERNEL(k, (int))

__global__ void uses() {
    float* const smem = reinterpret_cast<float*>(::cudasim::dynamic_shared_memory());

     __shared__ int tile[4];
} CUDASIM_KNOWN_KERNEL(uses, ())

void run(int x) {
    ::cudasim::launch_inline("k", CUDASIM_INLINE_KERNEL(k), 1,
        1)(x);
}
#define M(x) ::cudasim::launch_inline("k", CUDASIM_INLINE_KERNEL(k), 1, 1)(x); \
    ::cudasim::launch_inline("k", CUDASIM_INLINE_KERNEL(k), 2, \
        2)(x)
