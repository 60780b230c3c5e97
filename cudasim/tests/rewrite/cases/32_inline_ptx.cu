// Inline PTX in device-only code becomes a call of the simulator's PTX interpreter; the operands
// keep their text (and their own edits). Host and __host__ __device__ code keep their asm.
__device__ unsigned lane_id() {
    unsigned lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    return lane;
}

__device__ unsigned usad4(unsigned a, unsigned b, unsigned c = 0) {
    unsigned result;
    asm("vabsdiff4.u32.u32.u32.add"
        " %0, %1, %2, %3;"
        : "=r"(result)
        : "r"(a), "r"(b), "r"(c));
    return result;
}

__global__ void publish(unsigned* flag, const float* in, float* out) {
    asm volatile("" ::: "memory");
    asm volatile("st.release.gpu.global.u32 [%0], %1;" :: "l"(flag), "r"(1u) : "memory");
    float v;
    asm __volatile__
        ("ld.global.nc.f32 %0, [%1];" : "=f"(v) : "l"(in + (threadIdx.x > 2 ? 1 : 0)));
    out[threadIdx.x] = v + usad4(lane_id(), 3u);  // "asm(" in a comment or "asm(" a string stays
}

__device__ int named_operand(int x) {
    int y;
    asm("mov.s32 %[out], %[in];" : [out] "=r"(y) : [in] "r"(x));
    return y;
}

__host__ __device__ inline void host_and_device() {
    asm volatile("pause");
}

void host_only() {
    asm volatile("nop" ::: "memory");
}
