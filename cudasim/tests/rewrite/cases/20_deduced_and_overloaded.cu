// Kernels whose template arguments are deduced from the launch and overloaded kernels are
// launched by name like any other: the launch calls the kernel by name, so overload resolution
// and deduction happen on that call (cudasim/execution.hpp).
#include <cstddef>

template <class T> __global__ void axpy(T a, const T* x, T* y, int n) {}
__global__ void scale(float* x, float by, int n) {}
__global__ void scale(int* x, int by, int n) {}
namespace ns { template <class T, int N = 4> __global__ void fill(T* x) {} }

void run(float* xf, float* yf, int* xi, std::size_t n, double* xd) {
    axpy<<<1, 256>>>(2.0f, xf, yf, n);
    axpy<double><<<1, 256>>>(2, xd, xd, n);
    scale<<<(n + 255) / 256, 256>>>(xf, 2.0f, n);
    scale<<<(n + 255) / 256, 256>>>(xi, 2, n);
    ns::fill<<<1, 32>>>(xd);
    ns::fill<float, 8><<<1, 32>>>(xf);
}
