// The contract of saxpy, as the judge and the worker exchange it (../course_remote.hpp).
#include "saxpy.hpp"

#include "course_remote.hpp"

COURSE_REMOTE_FUNCTION(void, launch_saxpy, (int n, float alpha, const float* x, float* y, int blocks, int threads_per_block),
                       (n, alpha, x, y, blocks, threads_per_block))
