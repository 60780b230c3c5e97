/// @file data_parallel_step.hpp
/// @brief Contract of exercise 05/03 `data_parallel_step`: data-parallel SGD training of the
/// MLP of `mlp.hpp`, equal to training on one device with the whole batch.
///
/// Implemented by `exercises/05-parallelism-nvlink/03_data_parallel_step.cu`, tested by
/// `autograder/tests/05-parallelism-nvlink/test_data_parallel_step.cpp`.
///
/// Every rank holds a full copy of the parameters (a replica) and a shard of the batch:
/// rank r takes samples `course::part_of(batch, n, r)`. Because the loss is a mean over the
/// batch, its gradient is the sum over ranks of each shard's gradient scaled by 1/batch (not
/// 1/shard size): summing those with an all-reduce gives every rank the full-batch gradient,
/// and the same update keeps the replicas identical.
#pragma once

#include <cuda_runtime.h>

#include "mlp.hpp"
#include "ranks.hpp"

/// Runs `steps` SGD steps `params -= lr · gradient(full batch)` data-parallel: per step,
/// every rank computes the gradient of its shard (scaled by 1/batch), the gradients are
/// summed over the ranks (one all-reduce of all parameters), every rank applies the update.
/// Queues the work and returns.
///
/// @param params `shape.parameters()` floats per rank, the same on every rank (updated)
/// @param x      `batch · shape.inputs` floats per rank, the whole batch, row per sample
/// @param t      `batch · shape.outputs` floats per rank, the targets
/// @param batch  samples, >= 1 (ranks whose shard is empty contribute a zero gradient)
/// @throws course::CudaError on CUDA failures
void data_parallel_train(course::RankGroup& group, const MlpShape& shape,
                         course::SymmetricBuffer<float>& params, course::SymmetricBuffer<float>& x,
                         course::SymmetricBuffer<float>& t, int batch, int steps, float lr);
