// The contract of rnn_graph, as the judge and the worker exchange it (../course_remote.hpp).
#include "rnn_graph.hpp"

#include "course_remote.hpp"

// The graph is the worker's object: the judge holds its address only, and passes it back.
COURSE_REMOTE_FUNCTION(RnnGraph*, rnn_graph_create,
                       (const RnnLayer& layer, const float* x, const float* h0, float* hs, int steps, int batch,
                        cudaStream_t stream),
                       (layer, x, h0, hs, steps, batch, stream))
COURSE_REMOTE_FUNCTION(void, rnn_graph_replay, (RnnGraph* graph), (graph))
COURSE_REMOTE_FUNCTION(void, rnn_graph_destroy, (RnnGraph* graph), (graph))
