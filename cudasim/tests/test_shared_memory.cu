// Block barriers and shared memory: __syncthreads releases only when every thread arrived,
// each block has its own __shared__ arrays even when blocks run in parallel, a tiled
// transpose, __syncthreads_count/and/or, and dynamic shared memory (extern __shared__, sized
// at launch, with the 48 KiB default limit raised by cudaFuncSetAttribute).
// Valid CUDA: the same file runs on a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <vector>

namespace {

#define ASSERT_CUDA(expr) ASSERT_EQ((expr), cudaSuccess)

template <class T>
std::vector<T> download(const T* device, size_t count) {
  std::vector<T> host(count);
  EXPECT_EQ(cudaMemcpy(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  return host;
}

// ---- __syncthreads -------------------------------------------------------------------------

constexpr int kBlock = 256;

// Each thread writes its slot, then reads its neighbour's: correct only if nobody passes the
// barrier before every thread has written.
__global__ void rotate_through_shared(int* out) {
  __shared__ int slots[kBlock];
  slots[threadIdx.x] = threadIdx.x * 7 + blockIdx.x;
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = slots[(threadIdx.x + 1) % blockDim.x];
}

TEST(Barriers, ReleaseOnlyWhenEveryThreadArrives) {
  const int blocks = 8;
  int* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, blocks * kBlock * sizeof(int)));
  rotate_through_shared<<<blocks, kBlock>>>(d);
  ASSERT_CUDA(cudaGetLastError());
  const std::vector<int> h = download(d, blocks * kBlock);
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < kBlock; ++t) ASSERT_EQ(h[b * kBlock + t], ((t + 1) % kBlock) * 7 + b);
  ASSERT_CUDA(cudaFree(d));
}

// A block-wide tree reduction: several barriers in a loop, all threads reach each one.
__global__ void block_sum(const int* in, int* out) {
  __shared__ int partial[kBlock];
  partial[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}

TEST(Barriers, BarrierInALoopGivesACorrectTreeReduction) {
  const int blocks = 16, n = blocks * kBlock;
  std::vector<int> in(n);
  for (int i = 0; i < n; ++i) in[i] = i % 13;
  int *d_in = nullptr, *d_out = nullptr;
  ASSERT_CUDA(cudaMalloc(&d_in, n * sizeof(int)));
  ASSERT_CUDA(cudaMalloc(&d_out, blocks * sizeof(int)));
  ASSERT_CUDA(cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  block_sum<<<blocks, kBlock>>>(d_in, d_out);
  ASSERT_CUDA(cudaGetLastError());
  const std::vector<int> h = download(d_out, blocks);
  for (int b = 0; b < blocks; ++b) {
    int expected = 0;
    for (int t = 0; t < kBlock; ++t) expected += in[b * kBlock + t];
    EXPECT_EQ(h[b], expected) << "block " << b;
  }
  ASSERT_CUDA(cudaFree(d_in));
  ASSERT_CUDA(cudaFree(d_out));
}

// ---- one __shared__ array per block ----------------------------------------------------------

// Every thread of a block adds its block's id into one shared accumulator several times,
// with barriers in between so that blocks interleave; another block writing the same array
// would show up in the result.
__global__ void private_accumulator(int* out) {
  __shared__ int accumulator;
  __shared__ int scratch[64];
  if (threadIdx.x == 0) accumulator = 0;
  scratch[threadIdx.x] = blockIdx.x;
  __syncthreads();
  for (int round = 0; round < 10; ++round) {
    if (threadIdx.x == round % blockDim.x) accumulator += scratch[(threadIdx.x + round) % blockDim.x];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = accumulator;
}

TEST(SharedMemory, EachBlockSeesItsOwnArrayWhileBlocksRunInParallel) {
  const int blocks = 512;
  int* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, blocks * sizeof(int)));
  private_accumulator<<<blocks, 64>>>(d);
  ASSERT_CUDA(cudaGetLastError());
  const std::vector<int> h = download(d, blocks);
  for (int b = 0; b < blocks; ++b) ASSERT_EQ(h[b], 10 * b) << "block " << b;
  ASSERT_CUDA(cudaFree(d));
}

// ---- tiled transpose ---------------------------------------------------------------------------

constexpr int kTile = 32;
constexpr int kRows = 8;  // a 32x8 block moves a 32x32 tile in four steps

__global__ void transpose_tiled(const float* in, float* out, int width, int height) {
  __shared__ float tile[kTile][kTile + 1];  // +1: no bank conflicts on the column reads
  int x = blockIdx.x * kTile + threadIdx.x;
  int y = blockIdx.y * kTile + threadIdx.y;
  for (int j = 0; j < kTile; j += kRows)
    if (x < width && y + j < height) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
  __syncthreads();
  x = blockIdx.y * kTile + threadIdx.x;
  y = blockIdx.x * kTile + threadIdx.y;
  for (int j = 0; j < kTile; j += kRows)
    if (x < height && y + j < width) out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}

TEST(SharedMemory, TiledTransposeMatchesTheCpu) {
  const int width = 100, height = 70;  // not multiples of the tile
  std::vector<float> in(width * height);
  for (int i = 0; i < width * height; ++i) in[i] = static_cast<float>(i);
  float *d_in = nullptr, *d_out = nullptr;
  ASSERT_CUDA(cudaMalloc(&d_in, in.size() * sizeof(float)));
  ASSERT_CUDA(cudaMalloc(&d_out, in.size() * sizeof(float)));
  ASSERT_CUDA(cudaMemcpy(d_in, in.data(), in.size() * sizeof(float), cudaMemcpyHostToDevice));
  const dim3 grid((width + kTile - 1) / kTile, (height + kTile - 1) / kTile);
  transpose_tiled<<<grid, dim3(kTile, kRows)>>>(d_in, d_out, width, height);
  ASSERT_CUDA(cudaGetLastError());
  const std::vector<float> out = download(d_out, in.size());
  for (int r = 0; r < height; ++r)
    for (int c = 0; c < width; ++c) ASSERT_EQ(out[c * height + r], in[r * width + c]) << r << "," << c;
  ASSERT_CUDA(cudaFree(d_in));
  ASSERT_CUDA(cudaFree(d_out));
}

// ---- __syncthreads_count / _and / _or -------------------------------------------------------

__global__ void barrier_reductions(int* out, int threshold) {
  const int count = __syncthreads_count(threadIdx.x < threshold);
  const int all = __syncthreads_and(threadIdx.x < threshold);
  const int any = __syncthreads_or(threadIdx.x < threshold);
  const int none = __syncthreads_or(0);
  if (threadIdx.x == blockDim.x - 1) {
    out[0] = count;
    out[1] = all != 0;
    out[2] = any != 0;
    out[3] = none != 0;
  }
}

TEST(Barriers, SyncthreadsCountAndOrReduceThePredicateOverTheBlock) {
  int* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, 4 * sizeof(int)));
  struct Case { int threshold, count, all, any; };
  for (const Case& c : {Case{37, 37, 0, 1}, Case{0, 0, 0, 0}, Case{200, 100, 1, 1}}) {
    barrier_reductions<<<1, 100>>>(d, c.threshold);
    ASSERT_CUDA(cudaGetLastError());
    const std::vector<int> h = download(d, 4);
    EXPECT_EQ(h[0], c.count) << "threshold " << c.threshold;
    EXPECT_EQ(h[1], c.all) << "threshold " << c.threshold;
    EXPECT_EQ(h[2], c.any) << "threshold " << c.threshold;
    EXPECT_EQ(h[3], 0);
  }
  ASSERT_CUDA(cudaFree(d));
}

// ---- dynamic shared memory -------------------------------------------------------------------

// Reverses each block's slice through a dynamically sized shared buffer.
__global__ void reverse_dynamic(const int* in, int* out) {
  extern __shared__ int buffer[];
  const int base = blockIdx.x * blockDim.x;
  buffer[threadIdx.x] = in[base + threadIdx.x];
  __syncthreads();
  out[base + threadIdx.x] = buffer[blockDim.x - 1 - threadIdx.x];
}

TEST(DynamicSharedMemory, ExternSharedArrayIsSizedAtLaunch) {
  for (int threads : {32, 100, 1024}) {
    const int blocks = 6, n = blocks * threads;
    std::vector<int> in(n);
    for (int i = 0; i < n; ++i) in[i] = i * 5 - 3;
    int *d_in = nullptr, *d_out = nullptr;
    ASSERT_CUDA(cudaMalloc(&d_in, n * sizeof(int)));
    ASSERT_CUDA(cudaMalloc(&d_out, n * sizeof(int)));
    ASSERT_CUDA(cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    reverse_dynamic<<<blocks, threads, threads * sizeof(int)>>>(d_in, d_out);
    ASSERT_CUDA(cudaGetLastError());
    const std::vector<int> h = download(d_out, n);
    for (int b = 0; b < blocks; ++b)
      for (int t = 0; t < threads; ++t)
        ASSERT_EQ(h[b * threads + t], in[b * threads + threads - 1 - t]) << threads << " threads";
    ASSERT_CUDA(cudaFree(d_in));
    ASSERT_CUDA(cudaFree(d_out));
  }
}

// Uses the whole dynamic buffer: writes it all, then sums it.
__global__ void fill_and_sum_dynamic(int* out, int words) {
  extern __shared__ int big[];
  for (int i = threadIdx.x; i < words; i += blockDim.x) big[i] = 1;
  __syncthreads();
  if (threadIdx.x == 0) {
    int sum = 0;
    for (int i = 0; i < words; ++i) sum += big[i];
    out[blockIdx.x] = sum;
  }
}

TEST(DynamicSharedMemory, MoreThan48KiBNeedsCudaFuncSetAttribute) {
  const int bytes = 64 * 1024, words = bytes / 4;
  int* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, 2 * sizeof(int)));
  ASSERT_CUDA(cudaMemset(d, 0, 2 * sizeof(int)));

  fill_and_sum_dynamic<<<2, 256, bytes>>>(d, words);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // a launch error is not sticky
  EXPECT_EQ(download(d, 2)[0], 0) << "the rejected launch must not run";

  ASSERT_CUDA(cudaFuncSetAttribute(fill_and_sum_dynamic, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  fill_and_sum_dynamic<<<2, 256, bytes>>>(d, words);
  ASSERT_CUDA(cudaGetLastError());
  const std::vector<int> h = download(d, 2);
  EXPECT_EQ(h[0], words);
  EXPECT_EQ(h[1], words);
  ASSERT_CUDA(cudaFree(d));
}

TEST(DynamicSharedMemory, TheDefaultLimitIsExactly48KiB) {
  int* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, sizeof(int)));
  ASSERT_CUDA(cudaMemset(d, 0, sizeof(int)));
  // reverse_dynamic never gets the attribute: 48 KiB is allowed, one byte more is not.
  reverse_dynamic<<<1, 1, 48 * 1024>>>(d, d);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  reverse_dynamic<<<1, 1, 48 * 1024 + 1>>>(d, d);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  ASSERT_CUDA(cudaDeviceSynchronize());
  ASSERT_CUDA(cudaFree(d));
}

// `__shared__ alignas(N)`, as NVIDIA's samples write it: the array starts at a multiple of N.
__global__ void aligned_shared(unsigned long long* misalignment) {
  __shared__ char before[3];
  __shared__ alignas(64) float tile[16];
  if (threadIdx.x < 3) before[threadIdx.x] = 1;
  tile[threadIdx.x] = 1.0f;
  misalignment[threadIdx.x] =
      reinterpret_cast<unsigned long long>(&tile[0]) % 64 + (threadIdx.x < 3 ? before[threadIdx.x] - 1 : 0);
}

TEST(SharedMemory, AnAlignasAfterSharedAlignsTheArray) {
  unsigned long long* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, 16 * sizeof(unsigned long long)));
  aligned_shared<<<1, 16>>>(d);
  std::vector<unsigned long long> got(16);
  ASSERT_CUDA(cudaMemcpy(got.data(), d, 16 * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
  for (int i = 0; i < 16; ++i) EXPECT_EQ(got[i], 0u) << i;
  ASSERT_CUDA(cudaFree(d));
}

}  // namespace
