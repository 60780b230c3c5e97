// The device heap: malloc and free, new and delete in kernels. Blocks live until freed (a later
// kernel may use and free them), an allocation larger than the heap gives null, and delete[]
// runs each element's destructor. Valid CUDA: the same file runs on a GPU. On the simulator the
// blocks are device memory that memcheck bounds, and misuses fail the launch.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace {

#define ASSERT_CUDA(expr) ASSERT_EQ((expr), cudaSuccess)

constexpr int kThreads = 64;

/// Each thread allocates its own scratch array, uses it, and frees it.
__global__ void sum_through_scratch(int* out, int n) {
  int* scratch = static_cast<int*>(malloc(n * sizeof(int)));
  if (scratch == nullptr) {
    out[threadIdx.x] = -1;
    return;
  }
  for (int i = 0; i < n; ++i) scratch[i] = static_cast<int>(threadIdx.x) * i;
  int sum = 0;
  for (int i = 0; i < n; ++i) sum += scratch[i];
  free(scratch);
  out[threadIdx.x] = sum;
}

TEST(DeviceHeap, EachThreadMallocsAndFreesItsOwnScratch) {
  int* out = nullptr;
  ASSERT_CUDA(cudaMalloc(&out, kThreads * sizeof(int)));
  sum_through_scratch<<<1, kThreads>>>(out, 10);
  ASSERT_CUDA(cudaGetLastError());
  ASSERT_CUDA(cudaDeviceSynchronize());
  std::vector<int> sums(kThreads);
  ASSERT_CUDA(cudaMemcpy(sums.data(), out, sizeof(int) * kThreads, cudaMemcpyDeviceToHost));
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(sums[t], t * 45) << t;
  ASSERT_CUDA(cudaFree(out));
}

struct Node {
  int value;
  Node* next;
};

/// Builds a list of `n` nodes with new; the head goes to `head` for a later kernel.
__global__ void build_list(Node** head, int n) {
  Node* list = nullptr;
  for (int i = 0; i < n; ++i) list = new Node{i, list};
  *head = list;
}

/// Sums the list and deletes it.
__global__ void sum_and_delete_list(Node** head, int* sum) {
  int total = 0;
  for (Node* node = *head; node != nullptr;) {
    Node* next = node->next;
    total += node->value;
    delete node;
    node = next;
  }
  *sum = total;
}

TEST(DeviceHeap, BlocksOutliveTheirKernelUntilALaterKernelDeletesThem) {
  Node** head = nullptr;
  int* sum = nullptr;
  ASSERT_CUDA(cudaMalloc(&head, sizeof(Node*)));
  ASSERT_CUDA(cudaMalloc(&sum, sizeof(int)));
  build_list<<<1, 1>>>(head, 100);
  sum_and_delete_list<<<1, 1>>>(head, sum);
  ASSERT_CUDA(cudaDeviceSynchronize());
  int total = 0;
  ASSERT_CUDA(cudaMemcpy(&total, sum, sizeof(int), cudaMemcpyDeviceToHost));
  EXPECT_EQ(total, 99 * 100 / 2);
  ASSERT_CUDA(cudaFree(head));
  ASSERT_CUDA(cudaFree(sum));
}

/// Asks for more than the default heap (8 MiB): malloc gives null, new too.
__global__ void ask_too_much(int* got) {
  void* block = malloc(std::size_t(64) << 20);
  got[0] = block != nullptr;
  free(block);
  float* many = new float[std::size_t(32) << 20];
  got[1] = many != nullptr;
  delete[] many;
}

TEST(DeviceHeap, MoreThanTheHeapHoldsIsNull) {
  int* got = nullptr;
  ASSERT_CUDA(cudaMalloc(&got, 2 * sizeof(int)));
  ask_too_much<<<1, 1>>>(got);
  ASSERT_CUDA(cudaDeviceSynchronize());
  int host[2] = {7, 7};
  ASSERT_CUDA(cudaMemcpy(host, got, sizeof host, cudaMemcpyDeviceToHost));
  EXPECT_EQ(host[0], 0) << "malloc of 64 MiB from an 8 MiB heap";
  EXPECT_EQ(host[1], 0) << "new of 128 MiB from an 8 MiB heap";
  ASSERT_CUDA(cudaFree(got));
}

struct Counted {
  int* destroyed;
  __device__ ~Counted() { atomicAdd(destroyed, 1); }
};

__global__ void make_and_delete_array(int* destroyed, int n) {
  Counted* array = new Counted[n];
  for (int i = 0; i < n; ++i) array[i].destroyed = destroyed;
  delete[] array;
}

TEST(DeviceHeap, DeleteOfAnArrayRunsEveryElementsDestructor) {
  int* destroyed = nullptr;
  ASSERT_CUDA(cudaMalloc(&destroyed, sizeof(int)));
  ASSERT_CUDA(cudaMemset(destroyed, 0, sizeof(int)));
  make_and_delete_array<<<1, 4>>>(destroyed, 10);
  ASSERT_CUDA(cudaDeviceSynchronize());
  int count = 0;
  ASSERT_CUDA(cudaMemcpy(&count, destroyed, sizeof(int), cudaMemcpyDeviceToHost));
  EXPECT_EQ(count, 4 * 10);
  ASSERT_CUDA(cudaFree(destroyed));
}

#ifdef CUDASIM
// ---- the simulator: the blocks are bounded device memory, and misuses fail the launch ----------

__global__ void write_past_a_block(int* out) {
  int* block = static_cast<int*>(malloc(4 * sizeof(int)));
  block[4] = 1;  // one past the end
  *out = block[0];
  free(block);
}

__global__ void free_what_cudamalloc_gave(int* memory) { free(memory); }

__global__ void keep_a_block(int** kept) { *kept = static_cast<int*>(malloc(sizeof(int))); }

__global__ void release_a_block(int** kept) { free(*kept); }

TEST(DeviceHeapSimulator, AWritePastABlockAndAFreeOfOtherMemoryFailTheLaunch) {
  int* out = nullptr;
  ASSERT_CUDA(cudaMalloc(&out, sizeof(int)));
  testing::internal::CaptureStderr();
  write_past_a_block<<<1, 1>>>(out);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
  std::string report = testing::internal::GetCapturedStderr();
  EXPECT_NE(report.find("out-of-bounds global store of 4 bytes at byte 16 of the 16-byte allocation"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("malloc or new in a kernel"), std::string::npos) << report;
  ASSERT_CUDA(cudaDeviceReset());

  ASSERT_CUDA(cudaMalloc(&out, sizeof(int)));
  testing::internal::CaptureStderr();
  free_what_cudamalloc_gave<<<1, 1>>>(out);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
  report = testing::internal::GetCapturedStderr();
  EXPECT_NE(report.find("not a block that malloc or new in a kernel returned"), std::string::npos) << report;
  ASSERT_CUDA(cudaDeviceReset());
}

TEST(DeviceHeapSimulator, TheHostCannotCudaFreeABlockOfTheDeviceHeap) {
  int** kept = nullptr;
  ASSERT_CUDA(cudaMalloc(&kept, sizeof(int*)));
  keep_a_block<<<1, 1>>>(kept);
  int* block = nullptr;
  ASSERT_CUDA(cudaMemcpy(&block, kept, sizeof block, cudaMemcpyDeviceToHost));
  ASSERT_NE(block, nullptr);
  testing::internal::CaptureStderr();
  EXPECT_EQ(cudaFree(block), cudaErrorInvalidValue);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("freed by free or delete in a kernel"), std::string::npos);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  release_a_block<<<1, 1>>>(kept);
  ASSERT_CUDA(cudaDeviceSynchronize());
  ASSERT_CUDA(cudaFree(kept));
}
#endif

}  // namespace
