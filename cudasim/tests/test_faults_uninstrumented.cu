// A segmentation fault in a kernel that is not instrumented (as `./course run` builds programs
// by default): the fault handler names the kernel, the block and the thread, then lets the
// signal end the process, as an illegal address ends the context on a GPU. Built without the
// memory instrumentation (which would report the access before it faults).
//
// Such kernels run with threadIdx kept in a register where nothing but a signal handler could
// read it (execution.hpp), so a fault first sends the block back to run again exactly; these
// tests hold that the report still names the right thread and that nothing is printed twice.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

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

// An elementwise kernel with no call, no volatile access and no int access (which could alias
// threadIdx) in it: the compiler keeps threadIdx in a register, so only the second, exact run of
// the block can name the thread. Which thread faults depends on the data: one row pointer is
// null.
__global__ void gather_rows(const float* const* rows, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = rows[i][0];
}

/// `n` pointers into device memory, in device memory, all valid but the one at `bad` (null).
const float* const* device_rows_with_one_null(int n, int bad) {
  float* values;
  const float** rows;
  (void)cudaMalloc(&values, n * sizeof(float));
  (void)cudaMalloc(&rows, n * sizeof(float*));
  (void)cudaMemset(values, 0, n * sizeof(float));
  std::vector<const float*> host_rows(n);
  for (int i = 0; i < n; ++i) host_rows[i] = values + (i * 7) % n;
  host_rows[bad] = nullptr;
  (void)cudaMemcpy(rows, host_rows.data(), n * sizeof(float*), cudaMemcpyHostToDevice);
  return rows;
}

void launch_gather_with_one_null_row(int bad) {
  const int n = 64 * 256;
  float* out;
  (void)cudaMalloc(&out, n * sizeof(float));
  gather_rows<<<n / 256, 256>>>(device_rows_with_one_null(n, bad), out, n);
  (void)cudaDeviceSynchronize();
}

TEST(FaultsDeathTest, AFaultInATightLoopStillNamesTheExactThread) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(launch_gather_with_one_null_row(37 * 256 + 201),
               "illegal memory access in kernel 'gather_rows'.*block \\(37,0,0\\), thread \\(201,0,0\\): "
               "access to (0x0|\\(nil\\))");
  EXPECT_DEATH(launch_gather_with_one_null_row(5),
               "illegal memory access in kernel 'gather_rows'.*block \\(0,0,0\\), thread \\(5,0,0\\)");
}

// A kernel with a barrier, run as loops over its threads (loop fission): its first stretch is a
// loop over x that the compiler vectorizes, storing threadIdx once per loop at most. The fault
// sends the block back to run again as one coroutine per thread, which names the thread.
__global__ void staged_transpose(const float* const* rows, float* out) {
  __shared__ float staged[16][16];
  staged[threadIdx.y][threadIdx.x] = rows[(blockIdx.x * 16 + threadIdx.y) * 16 + threadIdx.x][0];
  __syncthreads();
  out[(blockIdx.x * 16 + threadIdx.y) * 16 + threadIdx.x] = staged[threadIdx.x][threadIdx.y];
}

void launch_staged_transpose_with_one_null_row(int bad) {
  const int blocks = 8, n = blocks * 16 * 16;
  float* out;
  (void)cudaMalloc(&out, n * sizeof(float));
  staged_transpose<<<blocks, dim3(16, 16)>>>(device_rows_with_one_null(n, bad), out);
  (void)cudaDeviceSynchronize();
}

TEST(FaultsDeathTest, AFaultInAFissionedKernelNamesTheExactThread) {
  ASSERT_TRUE(cudasim::loop_fission());
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(launch_staged_transpose_with_one_null_row((6 * 16 + 9) * 16 + 5),
               "illegal memory access in kernel 'staged_transpose'.*block \\(6,0,0\\), thread \\(5,9,0\\)");
  EXPECT_DEATH(launch_staged_transpose_with_one_null_row(2 * 16 + 13),
               "illegal memory access in kernel 'staged_transpose'.*block \\(0,0,0\\), thread \\(13,2,0\\)");
}

/// Matches output that contains each of `once` exactly once.
class ContainsEachOnce : public testing::MatcherInterface<const std::string&> {
 public:
  explicit ContainsEachOnce(std::vector<std::string> once) : once_(std::move(once)) {}
  bool MatchAndExplain(const std::string& output, testing::MatchResultListener* listener) const override {
    for (const std::string& needle : once_) {
      const std::size_t first = output.find(needle);
      if (first == std::string::npos || output.find(needle, first + 1) != std::string::npos) {
        *listener << "\"" << needle << "\" is there " << (first == std::string::npos ? "not at all" : "more than once");
        return false;
      }
    }
    return true;
  }
  void DescribeTo(std::ostream* os) const override {
    *os << "contains each of";
    for (const std::string& needle : once_) *os << " \"" << needle << "\"";
    *os << " exactly once";
  }

 private:
  std::vector<std::string> once_;
};

// Threads 0..9 of block 2 print, thread 10 faults, so block 2 runs twice: the lines of threads
// 0..9 must still appear once, and the report must name thread 10.
__global__ void print_then_fault(float* pointer, int faulting_block) {
  if (blockIdx.x == faulting_block && threadIdx.x < 10) printf("thread %u of block %u was here\n", threadIdx.x, blockIdx.x);
  if (blockIdx.x == faulting_block && threadIdx.x == 10) pointer[threadIdx.x] = 1.0f;
}

void launch_print_then_fault() {
  dup2(STDERR_FILENO, STDOUT_FILENO);  // the death test sees stderr only
  setvbuf(stdout, nullptr, _IOLBF, 0);  // as on a terminal: each line is written at once
  print_then_fault<<<4, 32>>>(nullptr, 2);
  (void)cudaDeviceSynchronize();
}

TEST(FaultsDeathTest, LinesPrintedBeforeTheFaultArePrintedOnce) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(launch_print_then_fault(),
               testing::MakeMatcher(new ContainsEachOnce({"thread 0 of block 2 was here", "thread 9 of block 2 was here",
                                                          "block (2,0,0), thread (10,0,0)"})));
}

// A kernel whose fault depends on what its first run wrote: thread 7 reads through a null
// pointer only while the counter that thread 0 bumps is 1. The second run does not fault, so the
// thread cannot be named, and the report says so; the process still dies of the signal.
__global__ void faults_only_in_the_first_run(float* counter, const float* const* pointers) {
  if (threadIdx.x == 0) counter[0] += 1.0f;
  if (threadIdx.x == 7) counter[1] = *pointers[counter[0] > 1.5f ? 1 : 0];
}

void launch_fault_that_does_not_repeat() {
  float* counter;
  const float** pointers;
  (void)cudaMalloc(&counter, 2 * sizeof(float));
  (void)cudaMalloc(&pointers, 2 * sizeof(float*));
  (void)cudaMemset(counter, 0, 2 * sizeof(float));
  const float* host_pointers[2] = {nullptr, counter};
  (void)cudaMemcpy(pointers, host_pointers, sizeof host_pointers, cudaMemcpyHostToDevice);
  faults_only_in_the_first_run<<<1, 32>>>(counter, pointers);
  (void)cudaDeviceSynchronize();
}

TEST(FaultsDeathTest, AFaultThatDoesNotHappenAgainIsReportedWithoutAThread) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(launch_fault_that_does_not_repeat(), testing::KilledBySignal(SIGSEGV),
              "illegal memory access in kernel 'faults_only_in_the_first_run'.*block \\(0,0,0\\), thread unknown");
}

}  // namespace

#endif  // CUDASIM
