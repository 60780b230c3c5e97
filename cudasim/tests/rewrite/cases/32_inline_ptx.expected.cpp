#line 1 "@INPUT@"
// Inline PTX in device-only code becomes a call of the simulator's PTX interpreter; the operands
// keep their text (and their own edits). Host and __host__ __device__ code keep their asm.
__device__ unsigned lane_id() {
    unsigned lane;
    ::cudasim::ptx::run("mov.u32 %0, %%laneid;" , ::cudasim::ptx::colon, ::cudasim::ptx::operand("=r",(lane)));
    return lane;
}

__device__ unsigned usad4(unsigned a, unsigned b, unsigned c = 0) {
    unsigned result;
    ::cudasim::ptx::run("vabsdiff4.u32.u32.u32.add"
        " %0, %1, %2, %3;"
        , ::cudasim::ptx::colon, ::cudasim::ptx::operand("=r",(result))
        , ::cudasim::ptx::colon, ::cudasim::ptx::operand("r",(a)), ::cudasim::ptx::operand("r",(b)), ::cudasim::ptx::operand("r",(c)));
    return result;
}

__global__ void publish(unsigned* flag, const float* in, float* out) {
    ::cudasim::ptx::run("" , ::cudasim::ptx::colon, ::cudasim::ptx::colon, ::cudasim::ptx::colon, "memory");
    ::cudasim::ptx::run("st.release.gpu.global.u32 [%0], %1;" , ::cudasim::ptx::colon, ::cudasim::ptx::colon, ::cudasim::ptx::operand("l",(flag)), ::cudasim::ptx::operand("r",(1u)) , ::cudasim::ptx::colon, "memory");
    float v;
    ::cudasim::ptx::run(
"ld.global.nc.f32 %0, [%1];" , ::cudasim::ptx::colon, ::cudasim::ptx::operand("=f",(v)) , ::cudasim::ptx::colon, ::cudasim::ptx::operand("l",(in + (threadIdx.x > 2 ? 1 : 0))));
    out[threadIdx.x] = v + usad4(lane_id(), 3u);  // "asm(" in a comment or "asm(" a string stays
} CUDASIM_KNOWN_KERNEL(publish, (unsigned* flag, const float* in, float* out))

__device__ int named_operand(int x) {
    int y;
    ::cudasim::ptx::run("mov.s32 %[out], %[in];" , ::cudasim::ptx::colon, ::cudasim::ptx::operand(::cudasim::ptx::Name{"out"}, "=r",(y)) , ::cudasim::ptx::colon, ::cudasim::ptx::operand(::cudasim::ptx::Name{"in"}, "r",(x)));
    return y;
}

__host__ __device__ inline void host_and_device() {
    asm volatile("pause");
}

void host_only() {
    asm volatile("nop" ::: "memory");
}
