#line 1 "@INPUT@"
// When no id-expression precedes <<<, the name is "kernel"; & and * stay outside the name.
__global__ void k() {}
using kernel_t = void (*)();

void run(kernel_t fp, kernel_t* table, int i) {
    (*fp)* ::cudasim::launch("kernel", 1, 1)();
    table[i]* ::cudasim::launch("kernel", 1, 1)();
    (k)* ::cudasim::launch("kernel", 1, 1)();
    *fp* ::cudasim::launch_inline("fp", CUDASIM_INLINE_KERNEL(fp), 1, 1)();
    &k* ::cudasim::launch_inline("k", CUDASIM_INLINE_KERNEL(k), 1, 1)();
    * ::cudasim::launch("kernel", 1, 1)();
}
