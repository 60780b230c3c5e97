#line 1 "@INPUT@"
// extern __shared__ inside kernels: every TYPE form, __align__ anywhere among the tokens, and
// __shared__ anywhere among the specifiers.
struct float4 { float x, y, z, w; };
template <typename T> struct Vec { T v[4]; };

__global__ void reduce_sum(const float* in, float* out) {
    float* const partial = reinterpret_cast<float*>(::cudasim::dynamic_shared_memory());
    partial[threadIdx.x] = in[threadIdx.x];
} CUDASIM_KNOWN_KERNEL(reduce_sum, (const float* in, float* out))

__global__ void bytes_kernel() {
    unsigned char* const raw_bytes = reinterpret_cast<unsigned char*>(::cudasim::dynamic_shared_memory());
    volatile int* const flags = reinterpret_cast<volatile int*>(::cudasim::dynamic_shared_memory());
    float4* const vectors = reinterpret_cast<float4*>(::cudasim::dynamic_shared_memory());
    unsigned long long* const counters = reinterpret_cast<unsigned long long*>(::cudasim::dynamic_shared_memory());
} CUDASIM_KNOWN_KERNEL(bytes_kernel, ())

template <typename T>
__global__ void generic_kernel(T* out) {
    T* const cache = reinterpret_cast<T*>(::cudasim::dynamic_shared_memory());
    T* const aligned_first = reinterpret_cast<T*>(::cudasim::dynamic_shared_memory());
    unsigned char* const aligned_middle = reinterpret_cast<unsigned char*>(::cudasim::dynamic_shared_memory());
    double* const aligned_last = reinterpret_cast<double*>(::cudasim::dynamic_shared_memory());
    unsigned char* const aligned_twice = reinterpret_cast<unsigned char*>(::cudasim::dynamic_shared_memory());
    Vec<T>* const vecs = reinterpret_cast<Vec<T>*>(::cudasim::dynamic_shared_memory());
    ::Vec<float>** const pointers = reinterpret_cast<::Vec<float>**>(::cudasim::dynamic_shared_memory());
    extern __shared__ float not_dynamic[256];
    extern int not_shared[];
    out[0] = cache[0];
}

__global__ void specifier_orders(float* out) {
    float* const type_first = reinterpret_cast<float*>(::cudasim::dynamic_shared_memory());
    volatile int* const qualifier_first = reinterpret_cast<volatile int*>(::cudasim::dynamic_shared_memory());
    unsigned char* const shared_middle = reinterpret_cast<unsigned char*>(::cudasim::dynamic_shared_memory());
    extern __shared__ float __shared__ twice[];
    out[0] = type_first[0];
} CUDASIM_KNOWN_KERNEL(specifier_orders, (float* out))

#define CHUNK 8
__global__ void rows_of_fixed_size(float* out) {
    float (* const rows)[CHUNK * 4 + 1] = reinterpret_cast<float (*)[CHUNK * 4 + 1]>(::cudasim::dynamic_shared_memory());
    int (* const cube)[4][ 2 ] = reinterpret_cast<int (*)[4][ 2 ]>(::cudasim::dynamic_shared_memory());
    out[0] = rows[1][2] + cube[0][1][1];
} CUDASIM_KNOWN_KERNEL(rows_of_fixed_size, (float* out))
