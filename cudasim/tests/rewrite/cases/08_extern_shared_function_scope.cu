// extern __shared__ inside kernels: every TYPE form, __align__ anywhere among the tokens, and
// __shared__ anywhere among the specifiers.
struct float4 { float x, y, z, w; };
template <typename T> struct Vec { T v[4]; };

__global__ void reduce_sum(const float* in, float* out) {
    extern __shared__ float partial[];
    partial[threadIdx.x] = in[threadIdx.x];
}

__global__ void bytes_kernel() {
    extern __shared__ unsigned char raw_bytes[];
    extern __shared__ volatile int flags[];
    extern __shared__ float4 vectors[];
    extern  __shared__   unsigned   long  long   counters [ ] ;
}

template <typename T>
__global__ void generic_kernel(T* out) {
    extern __shared__ T cache[];
    extern __shared__ __align__(16) T aligned_first[];
    extern __shared__ unsigned __align__(8) char aligned_middle[];
    extern __shared__ double __align__(sizeof(T) * 2) aligned_last[];
    extern __shared__ __align__(16) unsigned char __align__(32) aligned_twice[];
    extern __shared__ Vec<T> vecs[];
    extern __shared__ ::Vec<float>* pointers[];
    extern __shared__ float not_dynamic[256];
    extern int not_shared[];
    out[0] = cache[0];
}

__global__ void specifier_orders(float* out) {
    extern float __shared__ type_first[];
    extern volatile __shared__ int qualifier_first[];
    extern unsigned __shared__ __align__(8) char shared_middle[];
    extern __shared__ float __shared__ twice[];
    out[0] = type_first[0];
}

#define CHUNK 8
__global__ void rows_of_fixed_size(float* out) {
    extern __shared__ float rows[][CHUNK * 4 + 1];
    extern __shared__ int cube[][4][ 2 ];
    out[0] = rows[1][2] + cube[0][1][1];
}
