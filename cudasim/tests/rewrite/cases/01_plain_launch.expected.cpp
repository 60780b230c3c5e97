#line 1 "@INPUT@"
// Plain launches: the kernel's name moves into the launch and is copied into its string.
#include <cuda_runtime.h>

__global__ void vector_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
} CUDASIM_KNOWN_KERNEL(vector_add, (const float* a, const float* b, float* c, int n))

__global__ void fill() {} CUDASIM_KNOWN_KERNEL(fill, ())

void launch_all(const float* a, const float* b, float* c, int n, dim3 grid, dim3 block) {
    ::cudasim::launch_inline("vector_add", CUDASIM_INLINE_KERNEL(vector_add), grid, block)(a, b, c, n);
    ::cudasim::launch_inline("vector_add", CUDASIM_INLINE_KERNEL(vector_add), (n + 255) / 256, 256)(a, b, c, n);
    ::cudasim::launch_inline("fill", CUDASIM_INLINE_KERNEL(fill), 1,1)();
    ::cudasim::launch_inline("fill", CUDASIM_INLINE_KERNEL(fill ),  1, 1 ) ();
    ::cudasim::launch_inline("fill", CUDASIM_INLINE_KERNEL(fill	), dim3(2, 2), dim3(16, 16), 0, 0)();
    if (n > 0) ::cudasim::launch_inline("fill", CUDASIM_INLINE_KERNEL(fill), 1, 1)(); else ::cudasim::launch_inline("fill", CUDASIM_INLINE_KERNEL(fill), 2, 2)();
    int shifted = n << 2 >> 1;  // ordinary shifts are not launches
    (void)shifted;
}
