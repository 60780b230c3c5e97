#line 1 "@INPUT@"
// NULL among a launch's arguments becomes nullptr, which still converts to the kernel's pointer
// parameter after the simulator passes it on; NULL elsewhere, and names that contain it, stay.
#include <cstddef>
__global__ void k(float* out, const float* in, int n) {} CUDASIM_KNOWN_KERNEL(k, (float* out, const float* in, int n))
void launch(float* out, int n) {
    ::cudasim::launch_inline("k", CUDASIM_INLINE_KERNEL(k), 1, 32)(out, nullptr, n);
    ::cudasim::launch_inline("k", CUDASIM_INLINE_KERNEL(k), 1, 32)(nullptr,
                 nullptr /* NULL in a comment */, n);
    const float* NULL_LIKE = NULL;
    ::cudasim::launch_inline("k", CUDASIM_INLINE_KERNEL(k), 1, 32)(out, NULL_LIKE, n);
}
