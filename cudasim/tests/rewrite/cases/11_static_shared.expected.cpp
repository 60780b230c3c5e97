#line 1 "@INPUT@"
// static __shared__ loses its static (the shim's __shared__ already is static thread_local).
__global__ void k() {
     __shared__ float tile[16][16];
      __shared__ int counter;
    
    __shared__ double spread;
    __shared__ float plain[32];
    static const int not_shared = 4;
    static int also_not_shared;
    // static __shared__ in a comment stays
    const char* text = "static __shared__ in a string stays";
    int static_ = 0, mystatic = 1;
} CUDASIM_KNOWN_KERNEL(k, ())

#define DECLARE_TILE  __shared__ float macro_tile[8];
