/// @file overlap.hpp
/// @brief Contract of exercise 04/03 `overlap`: copy/compute overlap with streams, device
/// slots and events, against a synchronous baseline that must give the same result exactly.
///
/// Implemented by `exercises/04-data-loading/03_overlap.cu`, tested by
/// `autograder/tests/04-data-loading/test_overlap.cpp`.
///
/// The synchronous loop does one thing at a time: produce batch b on the CPU, copy it, train
/// on it, wait, repeat; the GPU idles during the first two. The overlapped loop keeps `depth`
/// slots (a pinned host buffer and a device buffer each): while the GPU trains on batch b
/// from slot b % depth, the copy engine moves batch b+1 into the next slot and the CPU
/// produces b+2. Two events per slot make the reuse safe:
/// - `copied[s]`: the copy out of host slot s is done, so the CPU may overwrite it;
/// - `consumed[s]`: the kernel that read device slot s is done, so a copy may overwrite it.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>

/// Writes batch `b` (`rows * features` floats) into `host_batch`, page-locked memory owned by
/// the training loop. Runs on the calling thread: in the lesson it stands for reading and
/// preprocessing (or taking the batch from the prefetch ring of exercise 02).
using BatchSource = std::function<void(std::int64_t b, float* host_batch)>;

/// The shape of a training run.
struct TrainConfig {
  std::int64_t batches = 0;  ///< number of batches, >= 0
  int rows = 1;              ///< samples per batch, >= 1
  int features = 1;          ///< floats per sample, >= 1
  int repeats = 1;           ///< how many times a step applies its update (a bigger model), >= 1
};

/// The "training step" (given): for every feature f, `repeats` times,
/// `w[f] = 0.9 * w[f] + 0.1 * mean over rows r of x[r][f]`, summing rows in order, so the
/// result is deterministic and depends on the order of the batches. Queued on `stream`.
/// @param d_weights device, `features` floats, updated in place
/// @param d_batch   device, `rows * features` floats (row-major), read only
void launch_train_step(float* d_weights, const float* d_batch, int rows, int features, int repeats,
                       cudaStream_t stream);

/// The synchronous baseline (given): one pinned buffer and one device buffer; for each batch:
/// source, `cudaMemcpy`, train step, wait. Returns when all steps are done.
/// @throws course::CudaError on a CUDA error; whatever `source` throws
void train_synchronous(const TrainConfig& config, const BatchSource& source, float* d_weights);

/// The overlapped loop: `depth` slots (2: double buffering, 3: triple buffering), copies on
/// one stream and train steps on another, ordered by events; batch b uses slot b % depth.
/// Calls `source` for b = 0, 1, ... in order, on the calling thread, and returns when every
/// step is done. The weights end bit-for-bit equal to `train_synchronous`'s.
/// @param depth slots, 1 <= depth <= 8
/// @throws std::invalid_argument for a bad depth; course::CudaError; whatever `source` throws
void train_overlapped(const TrainConfig& config, const BatchSource& source, float* d_weights, int depth);
