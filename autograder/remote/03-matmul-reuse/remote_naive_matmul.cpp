// The contract of naive_matmul, as the judge and the worker exchange it (../course_remote.hpp).
#include "naive_matmul.hpp"

#include "course_remote.hpp"

COURSE_REMOTE_FUNCTION(void, launch_naive_matmul, (const float* A, const float* B, float* C, int M, int N, int K),
                       (A, B, C, M, N, K))
