// Qualified kernel names, including the global namespace and `template` disambiguation.
namespace ns {
template <typename T, int N> __global__ void k(T*) {}
namespace inner { __global__ void tiled_matmul() {} }
}
__global__ void global_kernel() {}

struct Holder {
    template <typename T> static __global__ void member_kernel() {}
};

template <typename H>
void run(float* x, int n, unsigned smem, cudaStream_t stream) {
    ns::k<float, 4><<<dim3(n / 256 + 1), 256, smem, stream>>>(x);
    ns::inner::tiled_matmul<<<1, 1>>>();
    ::global_kernel<<<1, 1>>>();
    ::ns :: inner ::tiled_matmul<<<1, 1>>>();
    H::template member_kernel<int><<<1, 1>>>();
    int value = n > 0 ? 1 : (::ns::k<float, 4><<<1, 1>>>(x), 0);
}
