#line 1 "@INPUT@"
// Launches split across lines keep every line break where it was.
__global__ void k(int) {} CUDASIM_KNOWN_KERNEL(k, (int))
namespace ns { template <typename T, int N> __global__ void tiled(T) {} }

void run(int x, dim3 g, dim3 b) {
    ::cudasim::launch_inline("k", CUDASIM_INLINE_KERNEL(k), g,
        b)(x);
    ::cudasim::launch_inline("k", CUDASIM_INLINE_KERNEL(k
        ), g, b)(x);
    ::cudasim::launch_inline("ns:: tiled<float, 16>", CUDASIM_INLINE_KERNEL(ns::
        tiled<float,
              16>
        ), 
            g,
            b,
            0
        )
        (1.0f);
    ::cudasim::launch_inline("k", CUDASIM_INLINE_KERNEL(k), g, b /* block size */, 0 /* no
        dynamic shared memory */)(x);
}
