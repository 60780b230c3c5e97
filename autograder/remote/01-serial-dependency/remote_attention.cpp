// The contract of attention, as the judge and the worker exchange it (../course_remote.hpp).
#include "attention.hpp"

#include "course_remote.hpp"

COURSE_REMOTE_FUNCTION(void, launch_attention,
                       (cublasHandle_t handle, const float* q, const float* k, const float* v, float* probs, float* out,
                        int n, int d, bool causal),
                       (handle, q, k, v, probs, out, n, d, causal))
