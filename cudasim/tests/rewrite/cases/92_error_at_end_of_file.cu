// A <<< at the very end of the file, after a good launch on line 3.
__global__ void k() {}
void run() { k<<<1, 1>>>(); }
#define BROKEN(k) k<<<1, 1
