#line 1 "@INPUT@"
// Kernels whose template arguments are deduced from the launch and overloaded kernels are
// launched by name like any other: the launch calls the kernel by name, so overload resolution
// and deduction happen on that call (cudasim/execution.hpp).
#include <cstddef>

template <class T> __global__ void axpy(T a, const T* x, T* y, int n) {}
__global__ void scale(float* x, float by, int n) {} CUDASIM_KNOWN_KERNEL(scale, (float* x, float by, int n))
__global__ void scale(int* x, int by, int n) {} CUDASIM_KNOWN_KERNEL(scale, (int* x, int by, int n))
namespace ns { template <class T, int N = 4> __global__ void fill(T* x) {} }

void run(float* xf, float* yf, int* xi, std::size_t n, double* xd) {
    ::cudasim::launch_inline("axpy", CUDASIM_INLINE_KERNEL(axpy), 1, 256)(2.0f, xf, yf, n);
    ::cudasim::launch_inline("axpy<double>", CUDASIM_INLINE_KERNEL(axpy<double>), 1, 256)(2, xd, xd, n);
    ::cudasim::launch_inline("scale", CUDASIM_INLINE_KERNEL(scale), (n + 255) / 256, 256)(xf, 2.0f, n);
    ::cudasim::launch_inline("scale", CUDASIM_INLINE_KERNEL(scale), (n + 255) / 256, 256)(xi, 2, n);
    ::cudasim::launch_inline("ns::fill", CUDASIM_INLINE_KERNEL(ns::fill), 1, 32)(xd);
    ::cudasim::launch_inline("ns::fill<float, 8>", CUDASIM_INLINE_KERNEL(ns::fill<float, 8>), 1, 32)(xf);
}
