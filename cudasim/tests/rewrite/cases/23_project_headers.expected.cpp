#line 1 "@INPUT@"
// Project headers included with quotes are rewritten too, each into its own folder next to the
// output (OUTPUT.headers/N/), and the #includes point at the copies. A header with nothing to
// rewrite is included as it is, unless it includes a rewritten one. Headers are looked for as
// the compiler does: next to the including file, then in the -iquote and -I folders (here
// 23_project_headers.args). Macros that return, from any of them, keep kernels on fibers.
#include <cuda_runtime.h>
#include "missing.h"
#include "23_project_headers/plain.h"
#  include   "23_project_headers.cpp.headers/1/kernels.cuh"  // a launch, extern __shared__, a macro
#include "23_project_headers.cpp.headers/2/from_include_dir.cuh"
#include "23_project_headers.cpp.headers/3/forwarding.h"
// #include "23_project_headers/plain.h" in a comment is no include
const char* text = "#include \"23_project_headers/plain.h\"";

__global__ void guarded(float* p) {
    GUARDED_RETURN(p);
    __syncthreads();
} CUDASIM_KNOWN_KERNEL(guarded, (float* p))

void run(float* p) { ::cudasim::launch_inline("guarded", CUDASIM_INLINE_KERNEL(guarded), 1, 1)(p); }
