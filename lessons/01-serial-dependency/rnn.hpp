/// @file rnn.hpp
/// @brief The recurrent layer of lesson 01, shared by exercises `rnn_step`, `rnn_graph` and
/// `rnn_persistent`: an Elman RNN, h[t] = tanh(W·h[t-1] + U·x[t] + b).
///
/// Layouts (all row-major, all `float`, all device pointers):
/// - `W`: `hidden` x `hidden`, `W[i * hidden + j]` weighs unit j of h[t-1] into unit i;
/// - `U`: `hidden` x `input`, `U[i * input + k]` weighs input k into unit i;
/// - `b`: `hidden` biases;
/// - a sequence of `steps` inputs for `batch` independent sequences:
///   `x[(t * batch + s) * input + k]` (time-major, as cuDNN and PyTorch's default);
/// - the initial state `h0[s * hidden + i]`;
/// - the output, every state the layer goes through: `hs[(t * batch + s) * hidden + i]` is
///   h[t+1] of sequence s, i.e. `hs` starts with the state after the first step.
///
/// Step t needs the whole of h[t-1]: that is the chain of length `steps` that no number of
/// cores shortens. The three exercises run the same chain three ways and count its launches.
#pragma once

/// The weights of one recurrent layer (device pointers) and its sizes.
struct RnnLayer {
  const float* W;  ///< hidden x hidden, row-major
  const float* U;  ///< hidden x input, row-major
  const float* b;  ///< hidden
  int hidden;      ///< size of the state h, >= 1
  int input;       ///< size of one input vector x[t], >= 1
};
