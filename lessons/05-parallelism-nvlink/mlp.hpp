/// @file mlp.hpp
/// @brief The small MLP of exercises 05/03 and 05/04: its shape and how its parameters are
/// packed into one vector.
///
/// `y = W2 · relu(W1 · x + b1) + b2` for every sample x (a row of `inputs` floats), with
/// W1: hidden x inputs, b1: hidden, W2: outputs x hidden, b2: outputs, all row-major.
/// Training minimises the mean squared error L = 1/(2B) · Σ_samples |y - t|² over a batch of B.
///
/// The parameters are packed in one vector, W1 then b1 then W2 then b2, so a data-parallel
/// step all-reduces all gradients in one call (as PyTorch DDP does with its gradient buckets).
#pragma once

#include <cuda_runtime.h>  // __host__ __device__: the kernels read the offsets too

#include <cstddef>

/// Sizes of the MLP.
struct MlpShape {
  int inputs;   ///< features per sample, >= 1
  int hidden;   ///< hidden units, >= 1
  int outputs;  ///< outputs per sample, >= 1

  __host__ __device__ std::size_t w1_offset() const { return 0; }
  __host__ __device__ std::size_t b1_offset() const { return static_cast<std::size_t>(hidden) * inputs; }
  __host__ __device__ std::size_t w2_offset() const { return b1_offset() + hidden; }
  __host__ __device__ std::size_t b2_offset() const { return w2_offset() + static_cast<std::size_t>(outputs) * hidden; }
  /// Number of parameters: hidden·inputs + hidden + outputs·hidden + outputs.
  __host__ __device__ std::size_t parameters() const { return b2_offset() + outputs; }
};
