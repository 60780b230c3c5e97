#line 1 "@INPUT@"
// A UTF-8 byte order mark stays first, before the #line directive.
__global__ void k() {} CUDASIM_KNOWN_KERNEL(k, ())
void run() { ::cudasim::launch_inline("k", CUDASIM_INLINE_KERNEL(k), 1, 1)(); }
