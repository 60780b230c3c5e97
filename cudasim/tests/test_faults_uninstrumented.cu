// A segmentation fault in a kernel that is not instrumented (as `./course run` builds programs
// by default): the fault handler names the kernel, the block and the thread, then lets the
// signal end the process, as an illegal address ends the context on a GPU. Built without the
// memory instrumentation (which would report the access before it faults).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#ifdef CUDASIM

namespace {

__global__ void write_through_null(int* pointer) {
  if (blockIdx.x == 1 && threadIdx.x == 3) *static_cast<volatile int*>(pointer) = 1;
}

void launch_null_write() {
  write_through_null<<<2, 8>>>(nullptr);
  (void)cudaDeviceSynchronize();
}

TEST(FaultsDeathTest, SegfaultInAKernelNamesKernelBlockAndThread) {
  ASSERT_FALSE(cudasim::stats_available());
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // the simulator runs worker threads
  EXPECT_DEATH(launch_null_write(),
               "illegal memory access in kernel 'write_through_null'.*block \\(1,0,0\\), thread \\(3,0,0\\)");
}

}  // namespace

#endif  // CUDASIM
