#line 1 "@INPUT@"
// Preprocessor lines are code: launches inside #define bodies are rewritten too.
#define LAUNCH_1D(kernel, n, ...) ::cudasim::launch_inline("kernel", CUDASIM_INLINE_KERNEL(kernel), ((n) + 255) / 256, 256)(__VA_ARGS__)
#define LAUNCH_CHECKED(kernel, grid, block, ...)      \
    do {                                             \
        ::cudasim::launch_inline("kernel", CUDASIM_INLINE_KERNEL(kernel), grid, block)(__VA_ARGS__);        \
        CUDA_CHECK(cudaGetLastError());              \
    } while (0)
#define SPLIT_LAUNCH(kernel) ::cudasim::launch_inline("kernel", CUDASIM_INLINE_KERNEL(kernel), 1, \
                                     1)()
#include "not<<<a_launch>>>.h"

__global__ void scale(float* x, int n) {} CUDASIM_KNOWN_KERNEL(scale, (float* x, int n))

void run(float* x, int n) {
    LAUNCH_1D(scale, n, x, n);
    LAUNCH_CHECKED(scale, 1, 256, x, n);
}
