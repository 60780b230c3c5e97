#line 1 "@INPUT@"
// Template kernels: balanced argument lists are part of the name; quotes and backslashes in the
// name are escaped for the C string.
template <typename T, int BLOCK>
__global__ void reduce(const T* in, T* out, int n) {}

template <typename T>
struct Pair { T first, second; };

template <bool B> __global__ void flag_kernel() {}
template <char C> __global__ void char_kernel() {}
template <typename T> __global__ void nested_kernel(T) {}
template <int N> __global__ void int_kernel() {}

template <typename T, int BLOCK>
void run(const T* in, T* out, int n) {
    ::cudasim::launch_inline("reduce<T, BLOCK>", CUDASIM_INLINE_KERNEL(reduce<T, BLOCK>), n / BLOCK, BLOCK, BLOCK * sizeof(T))(in, out, n);
    ::cudasim::launch_inline("reduce<float, 256>", CUDASIM_INLINE_KERNEL(reduce<float, 256>), 1, 256)(nullptr, nullptr, 0);
    ::cudasim::launch_inline("reduce< T , BLOCK >", CUDASIM_INLINE_KERNEL(reduce< T ,   BLOCK >), 1, BLOCK)(in, out, n);
    ::cudasim::launch_inline("flag_kernel<(BLOCK > 128)>", CUDASIM_INLINE_KERNEL(flag_kernel<(BLOCK > 128)>), 1, 1)();
    ::cudasim::launch_inline("flag_kernel<sizeof(T) >= 4>", CUDASIM_INLINE_KERNEL(flag_kernel<sizeof(T) >= 4>), 1, 1)();
    ::cudasim::launch_inline("char_kernel<'\"'>", CUDASIM_INLINE_KERNEL(char_kernel<'"'>), 1, 1)();
    ::cudasim::launch_inline("char_kernel<'\\\\'>", CUDASIM_INLINE_KERNEL(char_kernel<'\\'>), 1, 1)();
    ::cudasim::launch_inline("int_kernel<1 << 4>", CUDASIM_INLINE_KERNEL(int_kernel<1 << 4>), 1, 1)();
    ::cudasim::launch_inline("int_kernel<(BLOCK >> 1)>", CUDASIM_INLINE_KERNEL(int_kernel<(BLOCK >> 1)>), 1, 1)();
    ::cudasim::launch_inline("nested_kernel<Pair<Pair<int>>>", CUDASIM_INLINE_KERNEL(nested_kernel<Pair<Pair<int>>>), 1, 1)(Pair<Pair<int>>{});
}
