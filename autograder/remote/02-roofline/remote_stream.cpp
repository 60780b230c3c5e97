// The contract of stream, as the judge and the worker exchange it (../course_remote.hpp).
#include "stream.hpp"

#include "course_remote.hpp"

COURSE_REMOTE_FUNCTION(void, launch_stream_copy, (const float* x, float* out, int n, int blocks, int threads_per_block),
                       (x, out, n, blocks, threads_per_block))
COURSE_REMOTE_FUNCTION(void, launch_stream_scale,
                       (const float* x, float* out, float s, int n, int blocks, int threads_per_block),
                       (x, out, s, n, blocks, threads_per_block))
COURSE_REMOTE_FUNCTION(void, launch_stream_add,
                       (const float* x, const float* y, float* out, int n, int blocks, int threads_per_block),
                       (x, y, out, n, blocks, threads_per_block))
COURSE_REMOTE_FUNCTION(void, launch_stream_triad,
                       (const float* x, const float* y, float* out, float s, int n, int blocks, int threads_per_block),
                       (x, y, out, s, n, blocks, threads_per_block))
