// Declarations spread over lines: the replacement goes on the first line, the breaks follow.
__global__ void k() {
    extern __shared__
        float split_once[];
    extern
        __shared__
        __align__(
            16)
        unsigned
        char
        split_everywhere
        [
        ]
        ;
    int after = 0;  // still on its own line
}

#define DECLARE_SCRATCH(T, name) extern __shared__ T \
    name[];
#define DECLARE_FLOATS extern __shared__ float floats[];

__global__ void uses_macros() {
    DECLARE_SCRATCH(int, ints)
    DECLARE_FLOATS
}
