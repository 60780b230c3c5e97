#line 1 "@INPUT@"
// When no id-expression precedes <<<, the name is "kernel" and the expression before <<< is a
// function pointer; a member (s.fp, p->fp) is one too. * and & stay outside the name, so they
// apply to the launch, as nvcc reads them (an error there too).
__global__ void k() {} CUDASIM_KNOWN_KERNEL(k, ())
using kernel_t = void (*)();
struct Table { kernel_t fp; };

void run(kernel_t fp, kernel_t* table, int i, Table s, Table* p) {
    (*fp)* ::cudasim::launch("kernel", 1, 1)();
    table[i]* ::cudasim::launch("kernel", 1, 1)();
    (k)* ::cudasim::launch("kernel", 1, 1)();
    *::cudasim::launch_inline("fp", CUDASIM_INLINE_KERNEL(fp), 1, 1)();
    &::cudasim::launch_inline("k", CUDASIM_INLINE_KERNEL(k), 1, 1)();
    s.fp* ::cudasim::launch("fp", 1, 1)();
    p->fp* ::cudasim::launch("fp", 1, 1)();
    p -> fp * ::cudasim::launch("fp", 1, 1)();
    * ::cudasim::launch("kernel", 1, 1)();
}
