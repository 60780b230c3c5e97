// Streams and events: work on one stream runs in order; cudaStreamWaitEvent orders two
// streams; cudaEventElapsedTime, cudaEventQuery and cudaStreamQuery report the right states;
// the legacy default stream waits for blocking streams (and they for it); cudaMemcpyAsync runs
// in order with kernels on its stream; stream priorities stay in the device's range. Delays
// come from clock64() spins, so the checks hold on a GPU too. Valid CUDA: the same file runs
// on a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <vector>

#include "clock_spin.cuh"

namespace {

#define ASSERT_CUDA(expr) ASSERT_EQ((expr), cudaSuccess)

/// One thread waits, then writes: a late write that a missing dependency would miss.
__global__ void slow_store(int* target, int value, long long cycles) {
  spin(cycles);
  *target = value;
}

__global__ void copy_value(const int* from, int* to) { *to = *from; }

__global__ void step(int* data, int n, int multiplier, int addend) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = data[i] * multiplier + addend;
}

TEST(Streams, WorkOnOneStreamRunsInOrder) {
  const int n = 4096;
  cudaStream_t s;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, n * sizeof(int)));
  ASSERT_CUDA(cudaMemsetAsync(d, 0, n * sizeof(int), s));
  // x -> 2x + k for k = 1..10: any reordering changes the result.
  int expected = 0;
  for (int k = 1; k <= 10; ++k) {
    step<<<(n + 255) / 256, 256, 0, s>>>(d, n, 2, k);
    expected = expected * 2 + k;
  }
  ASSERT_CUDA(cudaGetLastError());
  std::vector<int> h(n);
  ASSERT_CUDA(cudaMemcpyAsync(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost, s));
  ASSERT_CUDA(cudaStreamSynchronize(s));
  for (int i = 0; i < n; ++i) ASSERT_EQ(h[i], expected) << "at " << i;
  ASSERT_CUDA(cudaFree(d));
  ASSERT_CUDA(cudaStreamDestroy(s));
}

TEST(Streams, StreamWaitEventOrdersASecondStreamAfterTheFirst) {
  cudaStream_t first, second;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&first, cudaStreamNonBlocking));
  ASSERT_CUDA(cudaStreamCreateWithFlags(&second, cudaStreamNonBlocking));
  cudaEvent_t produced;
  ASSERT_CUDA(cudaEventCreateWithFlags(&produced, cudaEventDisableTiming));
  int *d_value, *d_copy;
  ASSERT_CUDA(cudaMalloc(&d_value, sizeof(int)));
  ASSERT_CUDA(cudaMalloc(&d_copy, sizeof(int)));
  ASSERT_CUDA(cudaMemset(d_value, 0, sizeof(int)));
  ASSERT_CUDA(cudaMemset(d_copy, 0, sizeof(int)));
  // cudaMemset returns at once and fills on the legacy stream, which non-blocking streams do
  // not wait for: without this the fills could land after the kernels' stores, on a GPU too.
  ASSERT_CUDA(cudaDeviceSynchronize());

  slow_store<<<1, 1, 0, first>>>(d_value, 42, kSlow);
  ASSERT_CUDA(cudaEventRecord(produced, first));
  ASSERT_CUDA(cudaStreamWaitEvent(second, produced, 0));
  copy_value<<<1, 1, 0, second>>>(d_value, d_copy);
  ASSERT_CUDA(cudaGetLastError());
  ASSERT_CUDA(cudaStreamSynchronize(second));

  int copy = 0;
  ASSERT_CUDA(cudaMemcpy(&copy, d_copy, sizeof(int), cudaMemcpyDeviceToHost));
  EXPECT_EQ(copy, 42) << "the second stream ran before the event it waits for";
  ASSERT_CUDA(cudaFree(d_value));
  ASSERT_CUDA(cudaFree(d_copy));
  ASSERT_CUDA(cudaEventDestroy(produced));
  ASSERT_CUDA(cudaStreamDestroy(first));
  ASSERT_CUDA(cudaStreamDestroy(second));
}

TEST(Streams, StreamsKeepTheirPriorityWithinTheDevicesRange) {
  int least = 1, greatest = 1;
  ASSERT_EQ(cudaDeviceGetStreamPriorityRange(&least, &greatest), cudaSuccess);
  EXPECT_EQ(least, 0);
  EXPECT_LT(greatest, least) << "a smaller number is a higher priority";
  cudaStream_t high = nullptr, beyond = nullptr;
  ASSERT_EQ(cudaStreamCreateWithPriority(&high, cudaStreamNonBlocking, greatest), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithPriority(&beyond, cudaStreamNonBlocking, greatest - 10), cudaSuccess);
  int priority = 1;
  ASSERT_EQ(cudaStreamGetPriority(high, &priority), cudaSuccess);
  EXPECT_EQ(priority, greatest);
  ASSERT_EQ(cudaStreamGetPriority(beyond, &priority), cudaSuccess);
  EXPECT_EQ(priority, greatest) << "a priority beyond the range is clamped to it";
  EXPECT_EQ(cudaStreamDestroy(high), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(beyond), cudaSuccess);
}

TEST(Streams, AStreamKeepsItsAccessPolicyWindowAndRunsWorkWithIt) {
  int* data = nullptr;
  ASSERT_CUDA(cudaMalloc(&data, 4096));
  ASSERT_CUDA(cudaMemset(data, 0, 4096));
  ASSERT_CUDA(cudaDeviceSynchronize());  // the fill is on the legacy stream; `stream` is non-blocking
  cudaStream_t stream = nullptr;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaStreamAttrValue value{};
  value.accessPolicyWindow.base_ptr = data;
  value.accessPolicyWindow.num_bytes = 4096;
  value.accessPolicyWindow.hitRatio = 0.5f;
  value.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  value.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  ASSERT_CUDA(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &value));
  ASSERT_CUDA(cudaCtxResetPersistingL2Cache());
  cudaStreamAttrValue read{};
  ASSERT_CUDA(cudaStreamGetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &read));
  EXPECT_EQ(read.accessPolicyWindow.base_ptr, static_cast<void*>(data));
  EXPECT_EQ(read.accessPolicyWindow.num_bytes, 4096u);
  EXPECT_EQ(read.accessPolicyWindow.hitRatio, 0.5f);
  EXPECT_EQ(read.accessPolicyWindow.hitProp, cudaAccessPropertyPersisting);
  EXPECT_EQ(read.accessPolicyWindow.missProp, cudaAccessPropertyStreaming);
  step<<<4, 256, 0, stream>>>(data, 1024, 1, 7);
  ASSERT_CUDA(cudaStreamSynchronize(stream));
  std::vector<int> out(1024);
  ASSERT_CUDA(cudaMemcpy(out.data(), data, 4096, cudaMemcpyDeviceToHost));
  EXPECT_EQ(out[1023], 7);
#ifdef CUDASIM
  value.accessPolicyWindow.hitRatio = 1.5f;
  EXPECT_EQ(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &value), cudaErrorInvalidValue);
  value.accessPolicyWindow.hitRatio = 1.0f;
  value.accessPolicyWindow.missProp = cudaAccessPropertyPersisting;
  EXPECT_EQ(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &value), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  value.priority = -100;
  ASSERT_CUDA(cudaStreamSetAttribute(stream, cudaStreamAttributePriority, &value));
  int greatest = 0, least = 0, priority = 0;
  ASSERT_CUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  ASSERT_CUDA(cudaStreamGetPriority(stream, &priority));
  EXPECT_EQ(priority, greatest) << "clamped, as at creation";
#endif
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
  EXPECT_EQ(cudaFree(data), cudaSuccess);
}

TEST(Events, QueryReportsNotReadyUntilTheStreamReachesTheRecord) {
  cudaStream_t s;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t never_recorded, done;
  ASSERT_CUDA(cudaEventCreate(&never_recorded));
  ASSERT_CUDA(cudaEventCreate(&done));
  EXPECT_EQ(cudaEventQuery(never_recorded), cudaSuccess);  // nothing to wait for
  EXPECT_EQ(cudaStreamQuery(s), cudaSuccess);               // empty stream

  int* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, sizeof(int)));
  slow_store<<<1, 1, 0, s>>>(d, 1, 5 * kSlow);
  ASSERT_CUDA(cudaEventRecord(done, s));
  EXPECT_EQ(cudaEventQuery(done), cudaErrorNotReady);
  EXPECT_EQ(cudaStreamQuery(s), cudaErrorNotReady);

  ASSERT_CUDA(cudaEventSynchronize(done));
  EXPECT_EQ(cudaEventQuery(done), cudaSuccess);
  EXPECT_EQ(cudaStreamQuery(s), cudaSuccess);
  ASSERT_CUDA(cudaFree(d));
  ASSERT_CUDA(cudaEventDestroy(never_recorded));
  ASSERT_CUDA(cudaEventDestroy(done));
  ASSERT_CUDA(cudaStreamDestroy(s));
}

TEST(Events, ElapsedTimeBetweenTwoRecordsIsNonNegativeAndCoversTheKernel) {
  cudaEvent_t start, stop;
  ASSERT_CUDA(cudaEventCreate(&start));
  ASSERT_CUDA(cudaEventCreate(&stop));
  int* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, sizeof(int)));
  ASSERT_CUDA(cudaEventRecord(start));
  slow_store<<<1, 1>>>(d, 1, kSlow);
  ASSERT_CUDA(cudaEventRecord(stop));
  ASSERT_CUDA(cudaEventSynchronize(stop));
  float ms = -1.0f;
  ASSERT_CUDA(cudaEventElapsedTime(&ms, start, stop));
  EXPECT_GE(ms, 0.0f);
  EXPECT_LT(ms, 10000.0f);

  float same = -1.0f;
  ASSERT_CUDA(cudaEventElapsedTime(&same, start, start));
  EXPECT_GE(same, 0.0f);
  ASSERT_CUDA(cudaFree(d));
  ASSERT_CUDA(cudaEventDestroy(start));
  ASSERT_CUDA(cudaEventDestroy(stop));
}

TEST(Events, ElapsedTimeNeedsTimingEnabledOnBothEvents) {
  cudaEvent_t timed, untimed;
  ASSERT_CUDA(cudaEventCreate(&timed));
  ASSERT_CUDA(cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming));
  ASSERT_CUDA(cudaEventRecord(timed));
  ASSERT_CUDA(cudaEventRecord(untimed));
  ASSERT_CUDA(cudaDeviceSynchronize());
  float ms = 0;
  EXPECT_EQ(cudaEventElapsedTime(&ms, timed, untimed), cudaErrorInvalidResourceHandle);
  (void)cudaGetLastError();
  // The C++ overload that takes the flags too.
  cudaEvent_t also_untimed;
  ASSERT_CUDA(cudaEventCreate(&also_untimed, cudaEventDisableTiming));
  ASSERT_CUDA(cudaEventRecord(also_untimed));
  ASSERT_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(cudaEventElapsedTime(&ms, timed, also_untimed), cudaErrorInvalidResourceHandle);
  (void)cudaGetLastError();
  ASSERT_CUDA(cudaEventDestroy(also_untimed));
  ASSERT_CUDA(cudaEventDestroy(timed));
  ASSERT_CUDA(cudaEventDestroy(untimed));
}

TEST(Streams, LegacyDefaultStreamWaitsForBlockingStreams) {
  cudaStream_t blocking;
  ASSERT_CUDA(cudaStreamCreate(&blocking));  // default flags: synchronises with stream 0
  int *d_value, *d_copy;
  ASSERT_CUDA(cudaMalloc(&d_value, sizeof(int)));
  ASSERT_CUDA(cudaMalloc(&d_copy, sizeof(int)));
  ASSERT_CUDA(cudaMemset(d_value, 0, sizeof(int)));

  slow_store<<<1, 1, 0, blocking>>>(d_value, 7, kSlow);
  copy_value<<<1, 1>>>(d_value, d_copy);  // legacy stream: starts after the blocking stream's work
  ASSERT_CUDA(cudaGetLastError());
  int copy = 0;
  ASSERT_CUDA(cudaMemcpy(&copy, d_copy, sizeof(int), cudaMemcpyDeviceToHost));
  EXPECT_EQ(copy, 7);

  // And the other way round: work on a blocking stream waits for earlier legacy-stream work.
  slow_store<<<1, 1>>>(d_value, 8, kSlow);
  copy_value<<<1, 1, 0, blocking>>>(d_value, d_copy);
  ASSERT_CUDA(cudaStreamSynchronize(blocking));
  ASSERT_CUDA(cudaMemcpy(&copy, d_copy, sizeof(int), cudaMemcpyDeviceToHost));
  EXPECT_EQ(copy, 8);

  ASSERT_CUDA(cudaFree(d_value));
  ASSERT_CUDA(cudaFree(d_copy));
  ASSERT_CUDA(cudaStreamDestroy(blocking));
}

__global__ void add_one(float* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += 1.0f;
}

TEST(Streams, MemcpyAsyncRunsInOrderWithKernelsOnItsStream) {
  const int chunks = 4, chunk = 1 << 16, n = chunks * chunk;
  float* host = nullptr;
  ASSERT_CUDA(cudaMallocHost(&host, n * sizeof(float)));
  for (int i = 0; i < n; ++i) host[i] = static_cast<float>(i % 1000);
  float* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, n * sizeof(float)));
  cudaStream_t streams[2];
  for (cudaStream_t& s : streams) ASSERT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  // Chunked copy-in / compute / copy-out, alternating between two streams.
  for (int c = 0; c < chunks; ++c) {
    cudaStream_t s = streams[c % 2];
    float* h_part = host + c * chunk;
    float* d_part = d + c * chunk;
    ASSERT_CUDA(cudaMemcpyAsync(d_part, h_part, chunk * sizeof(float), cudaMemcpyHostToDevice, s));
    add_one<<<chunk / 256, 256, 0, s>>>(d_part, chunk);
    add_one<<<chunk / 256, 256, 0, s>>>(d_part, chunk);
    ASSERT_CUDA(cudaMemcpyAsync(h_part, d_part, chunk * sizeof(float), cudaMemcpyDeviceToHost, s));
  }
  ASSERT_CUDA(cudaGetLastError());
  ASSERT_CUDA(cudaDeviceSynchronize());
  for (int i = 0; i < n; ++i) ASSERT_EQ(host[i], static_cast<float>(i % 1000) + 2.0f) << "at " << i;

  for (cudaStream_t s : streams) ASSERT_CUDA(cudaStreamDestroy(s));
  ASSERT_CUDA(cudaFree(d));
  ASSERT_CUDA(cudaFreeHost(host));
}

TEST(Streams, DeviceSynchronizeWaitsForEveryStream) {
  cudaStream_t s;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, sizeof(int)));
  ASSERT_CUDA(cudaMemset(d, 0, sizeof(int)));
  ASSERT_CUDA(cudaDeviceSynchronize());  // the fill is on the legacy stream; `s` is non-blocking
  slow_store<<<1, 1, 0, s>>>(d, 99, kSlow);
  ASSERT_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(cudaStreamQuery(s), cudaSuccess);
  int value = 0;
  ASSERT_CUDA(cudaMemcpy(&value, d, sizeof(int), cudaMemcpyDeviceToHost));
  EXPECT_EQ(value, 99);
  ASSERT_CUDA(cudaFree(d));
  ASSERT_CUDA(cudaStreamDestroy(s));
}

}  // namespace
