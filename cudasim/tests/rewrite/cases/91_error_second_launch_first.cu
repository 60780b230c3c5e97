// The first launch lacks its >>>; the second launch's >>> must not be taken for it.
__global__ void k(int) {}

void run(int x) {
    k<<<1, 1>(x);
    k<<<1, 1>>>(x);
}
