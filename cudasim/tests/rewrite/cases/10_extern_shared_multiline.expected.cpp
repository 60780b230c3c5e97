#line 1 "@INPUT@"
// Declarations spread over lines: the replacement goes on the first line, the breaks follow.
__global__ void k() {
    float* const split_once = reinterpret_cast<float*>(::cudasim::dynamic_shared_memory());

    unsigned char* const split_everywhere = reinterpret_cast<unsigned char*>(::cudasim::dynamic_shared_memory());









    int after = 0;  // still on its own line
} CUDASIM_KNOWN_KERNEL(k, ())

#define DECLARE_SCRATCH(T, name) static thread_local T* const name = reinterpret_cast<T*>(::cudasim::dynamic_shared_memory(&name));\

#define DECLARE_FLOATS static thread_local float* const floats = reinterpret_cast<float*>(::cudasim::dynamic_shared_memory(&floats));

__global__ void uses_macros() {
    DECLARE_SCRATCH(int, ints)
    DECLARE_FLOATS
} CUDASIM_KNOWN_KERNEL(uses_macros, ())
