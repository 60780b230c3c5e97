// two_streams.cu: an event makes stream 2 wait for a kernel on stream 1.
//
// Stream 1 runs a kernel that fills a buffer with squares (after a deliberate delay, so that
// without the dependency stream 2 would read too early). cudaEventRecord marks the point after
// that kernel; cudaStreamWaitEvent makes stream 2 wait for it before its own kernel, which reads
// the buffer and adds 1. Only the result is printed, never times, so the output is the same on
// a GPU and on the simulator.
//
// Run: ./course run cudasim/examples/two_streams.cu
#include <cstdio>

#include <cuda_runtime.h>

#include "cuda_check.hpp"

constexpr int kN = 8;

__global__ void produce(int* data) {
  if (threadIdx.x == 0) {  // a slow producer: one thread delays the block by ~10-20 ms
    const long long start = clock64();
    while (clock64() - start < 20 * 1000 * 1000) {
    }
  }
  __syncthreads();
  data[threadIdx.x] = threadIdx.x * threadIdx.x;
}

__global__ void consume(const int* data, int* result) { result[threadIdx.x] = data[threadIdx.x] + 1; }

int main() {
  int *d_data = nullptr, *d_result = nullptr;
  CUDA_CHECK(cudaMalloc(&d_data, kN * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&d_result, kN * sizeof(int)));
  CUDA_CHECK(cudaMemset(d_data, 0, kN * sizeof(int)));

  // Non-blocking streams: no implicit ordering with the default stream, only the event's.
  cudaStream_t stream1, stream2;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream1, cudaStreamNonBlocking));
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream2, cudaStreamNonBlocking));
  cudaEvent_t produced;
  CUDA_CHECK(cudaEventCreateWithFlags(&produced, cudaEventDisableTiming));

  produce<<<1, kN, 0, stream1>>>(d_data);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaEventRecord(produced, stream1));
  CUDA_CHECK(cudaStreamWaitEvent(stream2, produced, 0));  // stream 2 waits here for stream 1
  consume<<<1, kN, 0, stream2>>>(d_data, d_result);
  CUDA_CHECK_LAUNCH();

  int result[kN];
  CUDA_CHECK(cudaMemcpyAsync(result, d_result, sizeof result, cudaMemcpyDeviceToHost, stream2));
  CUDA_CHECK(cudaStreamSynchronize(stream2));

  bool ok = true;
  for (int i = 0; i < kN; ++i) {
    std::printf("result[%d] = %d\n", i, result[i]);
    ok = ok && result[i] == i * i + 1;
  }
  std::printf("stream 2 saw stream 1's result: %s\n", ok ? "OK" : "MISMATCH (it ran too early)");

  CUDA_CHECK(cudaEventDestroy(produced));
  CUDA_CHECK(cudaStreamDestroy(stream1));
  CUDA_CHECK(cudaStreamDestroy(stream2));
  CUDA_CHECK(cudaFree(d_data));
  CUDA_CHECK(cudaFree(d_result));
  return ok ? 0 : 1;
}
