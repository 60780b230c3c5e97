// A CUDA Toolkit header the simulator does not provide: the compile must stop with one
// error that names it ("cudasim: <cufft.h> is part of the CUDA Toolkit ..."), not fall
// through to a toolkit installed on the compiler's default include path.
#include <cufft.h>

int main() {
    cufftHandle plan;
    return cufftPlan1d(&plan, 1024, CUFFT_C2C, 1) == CUFFT_SUCCESS ? 0 : 1;
}
