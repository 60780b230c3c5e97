// Windows line endings are kept as they are.
__global__ void k(int) {}

__global__ void uses() {
    extern __shared__
        float smem[];
    static __shared__ int tile[4];
}

void run(int x) {
    k<<<1,
        1>>>(x);
}
#define M(x) k<<<1, 1>>>(x); \
    k<<<2, \
        2>>>(x)
