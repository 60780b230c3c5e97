#line 1 "@INPUT@"
// Launches split across lines keep every line break where it was.
__global__ void k(int) {}
namespace ns { template <typename T, int N> __global__ void tiled(T) {} }

void run(int x, dim3 g, dim3 b) {
    k* ::cudasim::launch_inline("k", CUDASIM_INLINE_KERNEL(k), g,
        b)(x);
    k
        * ::cudasim::launch_inline("k", CUDASIM_INLINE_KERNEL(k), g, b)(x);
    ns::
        tiled<float,
              16>
        * ::cudasim::launch_inline("ns:: tiled<float, 16>", CUDASIM_INLINE_KERNEL(ns:: tiled<float, 16>), 
            g,
            b,
            0
        )
        (1.0f);
    k* ::cudasim::launch_inline("k", CUDASIM_INLINE_KERNEL(k), g, b /* block size */, 0 /* no
        dynamic shared memory */)(x);
}
