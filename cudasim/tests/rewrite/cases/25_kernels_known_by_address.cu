// After each kernel definition that is not a template, the kernel is registered with its own
// parameter list (on the same line, so that line numbers stay), for cudaLaunchKernel((void*)k)
// and graph kernel nodes.
#define AFTER_A_DIRECTIVE 1
__global__ void __launch_bounds__(256) bounded(float* x, int n) { x[0] = n; }
__global__ void spread(float* __restrict__ x,
                       int n /* elements */) {
  x[n] = 0;
}
__global__ void overloaded(float* x) {}
__global__ void overloaded(int* x) {}
__global__ void no_parameters(void) {}
// Left alone: templates, qualified definitions, default arguments and preprocessor lines
// inside the parameter list.
template <class T>
__global__ void templated(T* x) {}
namespace ns { __global__ void declared_here(int* x); }
__global__ void ns::declared_here(int* x) {}
__global__ void with_default(int* x = nullptr) {}
__global__ void with_directive(
#if AFTER_A_DIRECTIVE
    int* x
#endif
) {}
// A declaration alone registers nothing; its definition does.
__global__ void later(int* x);
__global__ void later(int* x) { x[0] = 1; }
