// Exercise 01/04: attention, single-head self-attention (forward): two cuBLAS matrix
// products around a row softmax you write.
//
// What it teaches: attention has no chain. Every output row is computed from the same Q, K
// and V, so the whole sequence is two big matrix products (what GPUs do best) and one
// element-wise pass; doubling n makes the products bigger, not the chain longer. The softmax
// is where care is needed: exp() of a score of 100 overflows float, so each row subtracts its
// maximum first (the result is the same, since exp(s - m) / sum exp(s - m) = exp(s) / sum
// exp(s)), and finding the maximum and the sum of a row is a reduction, done here with warp
// shuffles, one warp per row.
//
// Run its tests:   ./course test 01/attention
//
// Napkin math (n = 4096, d = 64, fp32): the products are 2 x 2n^2 d = 4.3 GFLOP, ~0.1 ms at
// the ~60 TFLOP/s an H200 does in fp32 (much less with tensor cores); the n x n matrix of
// scores is 64 MiB, written by the first product, read and written by the softmax, read by
// the second: ~256 MiB, ~60 us at ~4.3 TB/s. The n^2 memory is what FlashAttention removes.
//
// Row-major meets cuBLAS's column-major: a row-major matrix M is, to cuBLAS, the column-major
// matrix M^T with the same leading dimension. So row-major S = Q K^T is computed as the
// column-major product S^T = K Q^T (cuBLAS: A = K transposed, B = Q), and row-major O = P V as
// O^T = V^T P^T (A = V, B = P, neither transposed).

#include <cmath>

#include "attention.hpp"
#include "cuda_check.hpp"

// ---------------------------------------------------------------------------------------
// kernel: softmax of each row of the n x n scores, in place; one warp per row

constexpr int kWarpsPerBlock = 4;

__global__ void row_softmax_kernel(float* scores, int n, bool causal) {
  const int row = blockIdx.x * kWarpsPerBlock + threadIdx.x / 32;
  if (row >= n) return;  // whole warps leave together: the shuffles below see full warps
  // BEGIN YOUR CODE
  // TODO(student): softmax of row `row` in place, stable for scores in the hundreds, by this row's
  //                warp; with `causal` the columns after `row` become exact zeros (about 20 lines)
  const int lane = threadIdx.x % 32;
  float* p = scores + static_cast<size_t>(row) * n;
  // With the causal mask row `row` keeps columns 0..row; the rest become exact zeros.
  const int valid = causal ? row + 1 : n;
  float row_max = -INFINITY;
  for (int j = lane; j < valid; j += 32) row_max = fmaxf(row_max, p[j]);
  // Butterfly reduction: after 5 exchanges every lane holds the warp's maximum.
  for (int offset = 16; offset > 0; offset /= 2)
    row_max = fmaxf(row_max, __shfl_xor_sync(0xffffffffu, row_max, offset));
  float sum = 0.0f;
  for (int j = lane; j < valid; j += 32) sum += expf(p[j] - row_max);
  for (int offset = 16; offset > 0; offset /= 2)
    sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  // sum >= 1 (the maximum contributes exp(0)), so the division is safe.
  const float inv_sum = 1.0f / sum;
  for (int j = lane; j < n; j += 32) p[j] = j < valid ? expf(p[j] - row_max) * inv_sum : 0.0f;
  // END YOUR CODE
}

// ---------------------------------------------------------------------------------------
// launcher

void launch_attention(cublasHandle_t handle, const float* q, const float* k, const float* v,
                      float* probs, float* out, int n, int d, bool causal) {
  cudaStream_t stream = nullptr;
  CUBLAS_CHECK(cublasGetStream(handle, &stream));
  // BEGIN YOUR CODE
  // TODO(student): out = softmax(Q K^T / sqrt(d)) V: two cublasSgemm calls (see the comment at the
  //                top for the column-major view) around row_softmax_kernel on `stream`, every call
  //                checked (about 10 lines)
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  const float zero = 0.0f, one = 1.0f;
  const int blocks = (n - 1) / kWarpsPerBlock + 1;
  // Column-major S^T (n x n) = K (as A^T: K is d x n column-major) times Q^T (d x n).
  CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, n, n, d, &scale, k, d, q, d, &zero,
                           probs, n));
  row_softmax_kernel<<<blocks, kWarpsPerBlock * 32, 0, stream>>>(probs, n, causal);
  CUDA_CHECK_LAUNCH();
  // Column-major O^T (d x n) = V^T (d x n) times P^T (n x n).
  CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, d, n, n, &one, v, d, probs, n, &zero,
                           out, d));
  // END YOUR CODE
}
