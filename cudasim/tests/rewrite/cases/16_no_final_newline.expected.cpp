#line 1 "@INPUT@"
__global__ void k() {}
void run() { k* ::cudasim::launch_inline("k", CUDASIM_INLINE_KERNEL(k), 1, 1)(); }