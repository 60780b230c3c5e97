// A UTF-8 byte order mark stays first, before the #line directive.
__global__ void k() {}
void run() { k<<<1, 1>>>(); }
