// The contract of tiled_matmul, as the judge and the worker exchange it (../course_remote.hpp):
// the three tile sizes the tests and the performance case call.
#include "tiled_matmul.hpp"

#include "course_remote.hpp"

COURSE_REMOTE_INSTANCE(void, launch_tiled_matmul, (8), (const float* A, const float* B, float* C, int M, int N, int K),
                       (A, B, C, M, N, K))
COURSE_REMOTE_INSTANCE(void, launch_tiled_matmul, (16), (const float* A, const float* B, float* C, int M, int N, int K),
                       (A, B, C, M, N, K))
COURSE_REMOTE_INSTANCE(void, launch_tiled_matmul, (32), (const float* A, const float* B, float* C, int M, int N, int K),
                       (A, B, C, M, N, K))
