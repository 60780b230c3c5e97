/// @file tensor_parallel_mlp.hpp
/// @brief Contract of exercise 05/04 `tensor_parallel_mlp`: the forward pass of the MLP of
/// `mlp.hpp` split Megatron-style over n ranks, equal to the unsharded MLP.
///
/// Implemented by `exercises/05-parallelism-nvlink/04_tensor_parallel_mlp.cu`, tested by
/// `autograder/tests/05-parallelism-nvlink/test_tensor_parallel_mlp.cpp`.
///
/// The shards (Megatron-LM, Shoeybi et al. 2019): rank r owns the hidden units
/// `course::part_of(hidden, n, r)` = [h0, h1), hs = h1 - h0 of them.
/// - **column-parallel** first layer: rows h0..h1 of W1 (hs x inputs, row-major: a contiguous
///   slice of W1) and b1[h0..h1); rank r computes its hidden slice relu(W1_r x + b1_r) alone,
///   because relu acts element by element: no communication;
/// - **row-parallel** second layer: columns h0..h1 of W2, stored as an outputs x hs row-major
///   matrix; rank r computes the partial output W2_r h_r, and the sum over ranks of the
///   partial outputs is W2 h: **one all-reduce** of batch x outputs floats per forward;
/// - b2 is replicated and added once, after the all-reduce.
/// Per forward each rank holds 1/n of the weights and sends ≈ 2(n-1)/n · batch·outputs·4
/// bytes; the all-reduce sits on the critical path (nothing else to do meanwhile), which is
/// why tensor parallelism stays inside an NVLink domain.
#pragma once

#include <cuda_runtime.h>

#include "mlp.hpp"
#include "ranks.hpp"

/// Forward pass of the sharded MLP: afterwards `y.on(r)` holds W2 relu(W1 x + b1) + b2 for
/// every sample, on every rank r. Queues the work and returns.
///
/// @param w1 per rank: its W1 rows (hs x inputs)
/// @param b1 per rank: its b1 slice (hs)
/// @param w2 per rank: its W2 columns (outputs x hs)
/// @param b2 per rank: the whole b2 (outputs), the same on every rank
/// @param x  per rank: the whole input, batch x inputs (the same on every rank)
/// @param y  per rank: batch x outputs floats (written)
/// @throws course::CudaError on CUDA failures
void tensor_parallel_forward(course::RankGroup& group, const MlpShape& shape,
                             course::SymmetricBuffer<float>& w1, course::SymmetricBuffer<float>& b1,
                             course::SymmetricBuffer<float>& w2, course::SymmetricBuffer<float>& b2,
                             course::SymmetricBuffer<float>& x, course::SymmetricBuffer<float>& y,
                             int batch);
