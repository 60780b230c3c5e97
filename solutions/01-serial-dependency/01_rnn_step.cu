// Exercise 01/01: rnn_step, an RNN over a sequence with one kernel launch per time step.
//
// What it teaches: a recurrence is a chain. Step t reads the whole state h[t-1], so it cannot
// start before step t-1 has finished, whatever the number of cores. Inside one step the work
// is parallel (every hidden unit of every sequence is independent); across steps it is not.
// The host loop below queues one launch per step and the stream runs them in order.
//
// Run its tests:   ./course test 01/rnn_step
//
// Napkin math: one step of a layer with hidden = input = 128 and batch 1 does
// 128 x 256 multiply-adds (65 kFLOP) and reads W and U (128 KiB, from L2 after the first
// step). An H200 does that in well under a microsecond, but a kernel launch costs ~2.5 us
// back to back: the chain of tiny launches is bounded by launch latency, ~2.5 us per step,
// ~10 ms for 4096 steps, whatever the GPU. Exercises 02 and 03 remove that cost.

#include "cuda_check.hpp"
#include "rnn_step.hpp"

// ---------------------------------------------------------------------------------------
// kernel: one time step, one thread per (hidden unit i, sequence s)

__global__ void rnn_step_kernel(RnnLayer layer, const float* x_t, const float* h_prev,
                                float* h_next) {
  // The grid's x dimension covers the hidden units, its y dimension the sequences.
  // BEGIN YOUR CODE
  // TODO(student): unit i = blockIdx.x * blockDim.x + threadIdx.x of sequence s = blockIdx.y:
  //                h_next[s][i] = tanh(W·h_prev[s] + U·x_t[s] + b) in row i, for the units that
  //                exist (about 12 lines)
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int s = blockIdx.y;
  if (i >= layer.hidden) return;  // the last block is partly idle
  const float* w_row = layer.W + static_cast<size_t>(i) * layer.hidden;
  const float* u_row = layer.U + static_cast<size_t>(i) * layer.input;
  const float* h = h_prev + static_cast<size_t>(s) * layer.hidden;
  const float* x = x_t + static_cast<size_t>(s) * layer.input;
  float acc = layer.b[i];
  for (int j = 0; j < layer.hidden; ++j) acc += w_row[j] * h[j];
  for (int k = 0; k < layer.input; ++k) acc += u_row[k] * x[k];
  h_next[static_cast<size_t>(s) * layer.hidden + i] = tanhf(acc);
  // END YOUR CODE
}

// ---------------------------------------------------------------------------------------
// launcher: the host walks the chain, one launch per step

void launch_rnn_sequence(const RnnLayer& layer, const float* x, const float* h0, float* hs,
                         int steps, int batch, cudaStream_t stream) {
  // 128 threads per block: hidden sizes of RNNs are small, so a bigger block would idle.
  const int threads = 128;
  const dim3 grid((layer.hidden - 1) / threads + 1, batch);
  // BEGIN YOUR CODE
  // TODO(student): the chain: `steps` checked launches of rnn_step_kernel on `stream`, step
  //                t reading x[t] and the previous state (h0 for t = 0) and writing hs[t]
  //                (about 7 lines)
  const size_t state = static_cast<size_t>(batch) * layer.hidden;  // floats of one h[t]
  const size_t inputs = static_cast<size_t>(batch) * layer.input;  // floats of one x[t]
  for (int t = 0; t < steps; ++t) {
    const float* h_prev = t == 0 ? h0 : hs + (t - 1) * state;
    rnn_step_kernel<<<grid, threads, 0, stream>>>(layer, x + t * inputs, h_prev, hs + t * state);
    CUDA_CHECK_LAUNCH();
  }
  // END YOUR CODE
}
