/// @file rnn_step.hpp
/// @brief Contract of exercise 01/01 `rnn_step`: an RNN over a sequence, one kernel launch
/// per time step, driven by a host loop.
///
/// Implemented by `exercises/01-serial-dependency/01_rnn_step.cu`, tested by
/// `autograder/tests/01-serial-dependency/test_rnn_step.cpp`. The layer and the layouts are
/// described in `rnn.hpp`.
#pragma once

#include <cuda_runtime.h>

#include "rnn.hpp"

/// Runs the layer over `steps` time steps for `batch` sequences:
/// `h[t] = tanh(W·h[t-1] + U·x[t] + b)` with h[-1] = `h0`, writing every state to `hs`.
///
/// Makes exactly `steps` kernel launches on `stream`, one per time step (launch t reads the
/// state launch t-1 wrote, so the stream's order is the only synchronisation needed), and
/// nothing else: on the simulator the tests count the launches. Each launch has one thread
/// per (sequence, hidden unit). Returns as soon as the launches are queued.
///
/// @param layer  weights and sizes (device pointers), see `rnn.hpp`
/// @param x      device, `steps * batch * layer.input` floats (read only)
/// @param h0     device, `batch * layer.hidden` floats (read only)
/// @param hs     device, `steps * batch * layer.hidden` floats (written), must not overlap
///               the inputs
/// @param steps  number of time steps, >= 0 (0 launches nothing)
/// @param batch  number of independent sequences, 1 <= batch <= 65535
/// @param stream the stream to queue the launches on (0: the default stream)
/// @throws course::CudaError if a launch is rejected
void launch_rnn_sequence(const RnnLayer& layer, const float* x, const float* h0, float* hs,
                         int steps, int batch, cudaStream_t stream = 0);
