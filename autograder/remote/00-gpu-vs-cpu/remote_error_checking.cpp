// The contract of error_checking, as the judge and the worker exchange it (../course_remote.hpp).
#include "error_checking.hpp"

#include "course_remote.hpp"

COURSE_REMOTE_FUNCTION(cudaError_t, launch_scale_checked, (float* x, int n, float factor, int threads_per_block),
                       (x, n, factor, threads_per_block))
