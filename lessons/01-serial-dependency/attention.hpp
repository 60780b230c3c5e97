/// @file attention.hpp
/// @brief Contract of exercise 01/04 `attention`: single-head self-attention, forward pass:
/// two matrix products by cuBLAS around a numerically stable row softmax.
///
/// Implemented by `exercises/01-serial-dependency/04_attention.cu`, tested by
/// `autograder/tests/01-serial-dependency/test_attention.cpp`.
///
/// Every position is computed from the same Q, K, V at once: the chain of the RNN exercises
/// is gone, and a longer sequence makes the products bigger instead of the chain longer.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

/// Computes, for a sequence of `n` positions with `d` features each (row-major, device):
///   `probs = softmax_rows(Q·Kᵀ / sqrt(d))`  (n x n; with `causal`, row i only attends to
///                                           columns j <= i: probs[i][j] = 0 exactly for j > i)
///   `out   = probs · V`                     (n x d)
///
/// The two products are `cublasSgemm` calls on `handle`; the softmax is a kernel, one warp
/// per row, that finds the row's maximum and the sum of exp(s - max) with warp shuffles
/// (subtracting the maximum keeps exp() finite for any scores). The lanes stride through the
/// row, lane l taking columns l, l + 32, ..., so that each access of the warp reads 32
/// neighbouring floats (coalesced). Everything is queued on the handle's stream
/// (`cublasGetStream`); the function returns without waiting.
///
/// @param handle a cuBLAS handle (its stream is used for all the work)
/// @param q, k, v device, `n * d` floats each, row-major (read only)
/// @param probs  device, `n * n` floats (written): the attention weights, row-major
/// @param out    device, `n * d` floats (written), row-major
/// @param n      sequence length, >= 1
/// @param d      head dimension, >= 1
/// @param causal mask the future (decoder-style attention) when true
/// @throws course::CudaError, course::CublasError on a failed launch or cuBLAS call
void launch_attention(cublasHandle_t handle, const float* q, const float* k, const float* v,
                      float* probs, float* out, int n, int d, bool causal);
