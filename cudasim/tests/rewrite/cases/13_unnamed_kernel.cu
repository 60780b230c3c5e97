// When no id-expression precedes <<<, the name is "kernel" and the expression before <<< is a
// function pointer; a member (s.fp, p->fp) is one too. * and & stay outside the name, so they
// apply to the launch, as nvcc reads them (an error there too).
__global__ void k() {}
using kernel_t = void (*)();
struct Table { kernel_t fp; };

void run(kernel_t fp, kernel_t* table, int i, Table s, Table* p) {
    (*fp)<<<1, 1>>>();
    table[i]<<<1, 1>>>();
    (k)<<<1, 1>>>();
    *fp<<<1, 1>>>();
    &k<<<1, 1>>>();
    s.fp<<<1, 1>>>();
    p->fp<<<1, 1>>>();
    p -> fp <<<1, 1>>>();
    <<<1, 1>>>();
}
