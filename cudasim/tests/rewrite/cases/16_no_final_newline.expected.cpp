#line 1 "@INPUT@"
__global__ void k() {} CUDASIM_KNOWN_KERNEL(k, ())
void run() { ::cudasim::launch_inline("k", CUDASIM_INLINE_KERNEL(k), 1, 1)(); }