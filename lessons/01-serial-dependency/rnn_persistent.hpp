/// @file rnn_persistent.hpp
/// @brief Contract of exercise 01/03 `rnn_persistent`: the whole RNN sequence in one kernel
/// launch, the state kept in shared memory between steps.
///
/// Implemented by `exercises/01-serial-dependency/03_rnn_persistent.cu`, tested by
/// `autograder/tests/01-serial-dependency/test_rnn_persistent.cpp`. The layer and the
/// layouts are described in `rnn.hpp`.
#pragma once

#include <cuda_runtime.h>

#include "rnn.hpp"

/// Same result as `launch_rnn_sequence` (`rnn_step.hpp`) with exactly one kernel launch.
///
/// One block per sequence walks all `steps` steps: its threads share the hidden units of
/// one step, keep h in shared memory, and meet at `__syncthreads()` between steps (a block
/// barrier is all a step needs, because the sequences of a batch are independent; a chain
/// spread over several blocks would need a grid-wide barrier instead).
///
/// @param layer, x, h0, hs, steps, batch, stream  as for `launch_rnn_sequence`;
///               `batch <= 2^31 - 1` (one block each); `layer.hidden <= 6144` (two copies of
///               h must fit the 48 KiB of shared memory a block gets by default)
/// @throws course::CudaError if the launch is rejected
void launch_rnn_persistent(const RnnLayer& layer, const float* x, const float* h0, float* hs,
                           int steps, int batch, cudaStream_t stream = 0);
