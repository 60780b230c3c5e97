// Expected: a compile error saying that nvcc refuses named operands in inline PTX. The statement
// is written as the rewrite leaves `asm("mov.s32 %[out], %[in];" : [out] "=r"(y) : [in] "r"(x))`
// (rewrite case 32_inline_ptx), since this test compiles without the rewrite.
__device__ int named_operand(int x) {
  int y;
  ::cudasim::ptx::run("mov.s32 %[out], %[in];", ::cudasim::ptx::colon,
                      ::cudasim::ptx::operand(::cudasim::ptx::Name{"out"}, "=r", (y)), ::cudasim::ptx::colon,
                      ::cudasim::ptx::operand(::cudasim::ptx::Name{"in"}, "r", (x)));
  return y;
}
