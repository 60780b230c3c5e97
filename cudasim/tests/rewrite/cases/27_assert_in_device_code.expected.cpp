#line 1 "@INPUT@"
// assert in device code becomes CUDASIM_DEVICE_ASSERT, which fails the launch (cudaErrorAssert)
// instead of aborting the process (in a __host__ __device__ function too: called from host code,
// it aborts as before); host code keeps its assert, and other uses of the word stay.
#include <cassert>
__device__ void device_only(int i) { CUDASIM_DEVICE_ASSERT(i >= 0); }
__host__ __device__ void both(int i) { CUDASIM_DEVICE_ASSERT(i >= 0); }
__global__ void kernel(int* p, int n) {
    static_assert(sizeof(int) == 4, "assert");
    int assert_count = 0;
    CUDASIM_DEVICE_ASSERT (p != nullptr && n > 0);
    p[0] = n + assert_count;
} CUDASIM_KNOWN_KERNEL(kernel, (int* p, int n))
int main() { assert(true); }
