__global__ void k() {}
void run() { k<<<1, 1>>>(); }