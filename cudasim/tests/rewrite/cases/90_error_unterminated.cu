// A launch whose >>> is missing (here: only >>).
__global__ void k(int) {}

void run(int x) {
    k<<<1, 1>>(x);
}
