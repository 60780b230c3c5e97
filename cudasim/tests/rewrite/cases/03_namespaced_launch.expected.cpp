#line 1 "@INPUT@"
// Qualified kernel names, including the global namespace and `template` disambiguation.
namespace ns {
template <typename T, int N> __global__ void k(T*) {}
namespace inner { __global__ void tiled_matmul() {} CUDASIM_KNOWN_KERNEL(tiled_matmul, ()) }
}
__global__ void global_kernel() {} CUDASIM_KNOWN_KERNEL(global_kernel, ())

struct Holder {
    template <typename T> static __global__ void member_kernel() {}
};

template <typename H>
void run(float* x, int n, unsigned smem, cudaStream_t stream) {
    ::cudasim::launch_inline("ns::k<float, 4>", CUDASIM_INLINE_KERNEL(ns::k<float, 4>), dim3(n / 256 + 1), 256, smem, stream)(x);
    ::cudasim::launch_inline("ns::inner::tiled_matmul", CUDASIM_INLINE_KERNEL(ns::inner::tiled_matmul), 1, 1)();
    ::cudasim::launch_inline("::global_kernel", CUDASIM_INLINE_KERNEL(::global_kernel), 1, 1)();
    ::cudasim::launch_inline("::ns :: inner ::tiled_matmul", CUDASIM_INLINE_KERNEL(::ns :: inner ::tiled_matmul), 1, 1)();
    ::cudasim::launch_inline("H::template member_kernel<int>", CUDASIM_INLINE_KERNEL(H::template member_kernel<int>), 1, 1)();
    int value = n > 0 ? 1 : (::cudasim::launch_inline("::ns::k<float, 4>", CUDASIM_INLINE_KERNEL(::ns::k<float, 4>), 1, 1)(x), 0);
}
