// `__shared__ alignas(N)` becomes `alignas(N) __shared__` (C++ takes the alignment specifier
// before the declaration's specifiers, not among them); other orders stay as they are.
__global__ void k(float* out) {
    __shared__ alignas(alignof(float4)) float tile[32][32];
    static __shared__ alignas(16) int counters[4];
    alignas(16) __shared__ float already[8];
    __shared__ float plain[8];
    out[0] = tile[0][0] + counters[0] + already[0] + plain[0];
}
