// NULL among a launch's arguments becomes nullptr, which still converts to the kernel's pointer
// parameter after the simulator passes it on; NULL elsewhere, and names that contain it, stay.
#include <cstddef>
__global__ void k(float* out, const float* in, int n) {}
void launch(float* out, int n) {
    k<<<1, 32>>>(out, NULL, n);
    k<<<1, 32>>>(NULL,
                 NULL /* NULL in a comment */, n);
    const float* NULL_LIKE = NULL;
    k<<<1, 32>>>(out, NULL_LIKE, n);
}
