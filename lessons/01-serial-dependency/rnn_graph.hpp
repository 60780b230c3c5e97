/// @file rnn_graph.hpp
/// @brief Contract of exercise 01/02 `rnn_graph`: the step loop of `rnn_step` recorded once
/// into a CUDA graph and replayed with one call.
///
/// Implemented by `exercises/01-serial-dependency/02_rnn_graph.cu`, tested by
/// `autograder/tests/01-serial-dependency/test_rnn_graph.cpp`. The layer and the layouts are
/// described in `rnn.hpp`.
///
/// A graph is *static*: it records the kernels, their launch configurations and their
/// arguments (the pointers, not the data behind them). Replaying it runs the same `steps`
/// kernels on the same buffers; to run a new sequence, copy new inputs into the same `x`
/// and replay. What it saves is the host's side of each launch: one `cudaGraphLaunch`
/// instead of `steps` launches.
#pragma once

#include <cuda_runtime.h>

#include "rnn.hpp"

/// A recorded and instantiated step loop (defined in the exercise's .cu file).
struct RnnGraph;

/// Records the `steps` launches of the step loop on `stream` by stream capture
/// (`cudaStreamBeginCapture` ... `cudaStreamEndCapture`) and instantiates the graph. Runs
/// nothing: `hs` is untouched until `rnn_graph_replay`.
///
/// @param layer, x, h0, hs, steps, batch  as for `launch_rnn_sequence` (`rnn_step.hpp`);
///               the pointers are recorded, so the buffers must outlive the graph;
///               `steps >= 1`
/// @param stream a stream made with `cudaStreamCreate` (the legacy default stream cannot be
///               captured); replays are queued on it
/// @return the graph, to pass to `rnn_graph_replay` and, at the end, `rnn_graph_destroy`
/// @throws course::CudaError if capture, a launch or the instantiation fails
RnnGraph* rnn_graph_create(const RnnLayer& layer, const float* x, const float* h0, float* hs,
                           int steps, int batch, cudaStream_t stream);

/// Runs the whole recorded sequence with exactly one `cudaGraphLaunch` on the graph's stream
/// and no kernel launch. Returns as soon as it is queued.
/// @throws course::CudaError if the launch fails
void rnn_graph_replay(RnnGraph* graph);

/// Frees the graph and its executable instance. `graph` may be null.
void rnn_graph_destroy(RnnGraph* graph);
