// Exercise 04/03: overlap, copy/compute overlap with two streams, `depth` slots and events.
//
// What it teaches: a GPU has copy engines that work independently of its SMs. Copies queued
// on one stream and kernels on another run at the same time, so the next batch can cross
// PCIe while the current one trains, and the CPU can prepare the one after. Running at once
// is the easy part; the hard part is never overwriting a buffer that is still being read.
//
// Run its tests:   ./course test 04/overlap
//
// Napkin math: a pipeline runs at the rate of its slowest stage. Batches of 64 MiB over PCIe
// gen4 (26 GB/s pinned) take 2.6 ms each; with a 4 ms training step, the synchronous loop
// needs 6.6 ms per batch and the GPU idles 40% of the time; overlapped, 4 ms per batch and
// it never idles. With a 1 ms step the copy is the slowest stage: 2.6 ms per batch either way
// overlapped, and only a faster link (or smaller batches: bf16, uint8 + decode on the GPU)
// helps.

#include <stdexcept>
#include <vector>

#include "cuda_check.hpp"
#include "overlap.hpp"

// ---------------------------------------------------------------------------------------
// the training step (given): one thread per feature, rows summed in order

__global__ void train_step_kernel(float* weights, const float* batch, int rows, int features, int repeats) {
  const int f = blockIdx.x * blockDim.x + threadIdx.x;
  if (f >= features) return;
  float w = weights[f];
  for (int k = 0; k < repeats; ++k) {
    float sum = 0.0f;
    for (int r = 0; r < rows; ++r) sum += batch[static_cast<long long>(r) * features + f];  // coalesced across f
    w = 0.9f * w + 0.1f * (sum / static_cast<float>(rows));
  }
  weights[f] = w;
}

void launch_train_step(float* d_weights, const float* d_batch, int rows, int features, int repeats,
                       cudaStream_t stream) {
  const int threads = 256;
  train_step_kernel<<<(features + threads - 1) / threads, threads, 0, stream>>>(d_weights, d_batch, rows,
                                                                                  features, repeats);
  CUDA_CHECK_LAUNCH();
}

// ---------------------------------------------------------------------------------------
// the synchronous baseline (given)

void train_synchronous(const TrainConfig& config, const BatchSource& source, float* d_weights) {
  const std::size_t bytes = static_cast<std::size_t>(config.rows) * config.features * sizeof(float);
  float* host = nullptr;
  float* device = nullptr;
  CUDA_CHECK(cudaMallocHost(&host, bytes));
  try {
    CUDA_CHECK(cudaMalloc(&device, bytes));
    for (std::int64_t b = 0; b < config.batches; ++b) {
      source(b, host);                                                       // CPU: the GPU waits
      CUDA_CHECK(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice));  // link: the GPU waits
      launch_train_step(d_weights, device, config.rows, config.features, config.repeats, 0);
      CUDA_CHECK(cudaDeviceSynchronize());  // GPU: the CPU and the link wait
    }
  } catch (...) {
    cudaDeviceSynchronize();
    cudaFree(device);
    cudaFreeHost(host);
    throw;
  }
  CUDA_CHECK(cudaFree(device));
  CUDA_CHECK(cudaFreeHost(host));
}

// ---------------------------------------------------------------------------------------
// the overlapped loop

namespace {

/// The slots, streams and events of train_overlapped (given): allocated together, freed
/// together, also when `source` throws half-way.
struct Pipeline {
  std::vector<float*> host;            // pinned host slots
  std::vector<float*> device;          // device slots
  std::vector<cudaEvent_t> copied;     // copied[s]: the copy out of host[s] is done
  std::vector<cudaEvent_t> consumed;   // consumed[s]: the train step that read device[s] is done
  cudaStream_t copy_stream = nullptr;  // host-to-device copies, in batch order
  cudaStream_t compute_stream = nullptr;  // train steps, in batch order (they update the same weights)

  Pipeline(int depth, std::size_t bytes)
      : host(depth, nullptr), device(depth, nullptr), copied(depth, nullptr), consumed(depth, nullptr) {
    CUDA_CHECK(cudaStreamCreateWithFlags(&copy_stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&compute_stream, cudaStreamNonBlocking));
    for (int s = 0; s < depth; ++s) {
      CUDA_CHECK(cudaMallocHost(&host[s], bytes));
      CUDA_CHECK(cudaMalloc(&device[s], bytes));
      // Timing off: these events only order work, which makes them cheaper on a GPU.
      CUDA_CHECK(cudaEventCreateWithFlags(&copied[s], cudaEventDisableTiming));
      CUDA_CHECK(cudaEventCreateWithFlags(&consumed[s], cudaEventDisableTiming));
    }
  }
  ~Pipeline() {
    // Nothing may be freed while a copy or a kernel still uses it.
    if (copy_stream) cudaStreamSynchronize(copy_stream);
    if (compute_stream) cudaStreamSynchronize(compute_stream);
    for (std::size_t s = 0; s < host.size(); ++s) {
      if (host[s]) cudaFreeHost(host[s]);
      if (device[s]) cudaFree(device[s]);
      if (copied[s]) cudaEventDestroy(copied[s]);
      if (consumed[s]) cudaEventDestroy(consumed[s]);
    }
    if (copy_stream) cudaStreamDestroy(copy_stream);
    if (compute_stream) cudaStreamDestroy(compute_stream);
  }
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;
};

}  // namespace

void train_overlapped(const TrainConfig& config, const BatchSource& source, float* d_weights, int depth) {
  if (depth < 1 || depth > 8) throw std::invalid_argument("train_overlapped: depth must be in 1..8");
  const std::size_t bytes = static_cast<std::size_t>(config.rows) * config.features * sizeof(float);
  Pipeline p(depth, bytes);
  for (std::int64_t b = 0; b < config.batches; ++b) {
    [[maybe_unused]] const int s = static_cast<int>(b % depth);  // batch b's slot
    // BEGIN YOUR CODE
    // TODO(student): batch b through slot s: fill host slot s from the source, copy it on
    //                p.copy_stream, train on p.compute_stream, with the events p.copied /
    //                p.consumed so that no slot is refilled before its last reader is done; never
    //                wait for the whole device (about 9 lines)
    // END YOUR CODE
  }
  CUDA_CHECK(cudaStreamSynchronize(p.compute_stream));
}
