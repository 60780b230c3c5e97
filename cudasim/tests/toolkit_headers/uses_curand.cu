// A CUDA Toolkit header the simulator does not provide: the compile must stop with one
// error that names it ("cudasim: <curand.h> is part of the CUDA Toolkit ..."), not fall
// through to a toolkit installed on the compiler's default include path.
#include <curand.h>

int main() {
    curandGenerator_t generator;
    return curandCreateGenerator(&generator, CURAND_RNG_PSEUDO_DEFAULT) == CURAND_STATUS_SUCCESS ? 0 : 1;
}
