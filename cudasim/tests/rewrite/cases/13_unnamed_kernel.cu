// When no id-expression precedes <<<, the name is "kernel"; & and * stay outside the name.
__global__ void k() {}
using kernel_t = void (*)();

void run(kernel_t fp, kernel_t* table, int i) {
    (*fp)<<<1, 1>>>();
    table[i]<<<1, 1>>>();
    (k)<<<1, 1>>>();
    *fp<<<1, 1>>>();
    &k<<<1, 1>>>();
    <<<1, 1>>>();
}
