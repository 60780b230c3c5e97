// The contract of wmma_matmul, as the judge and the worker exchange it (../course_remote.hpp).
#include "wmma_matmul.hpp"

#include "course_remote.hpp"

COURSE_REMOTE_FUNCTION(void, launch_wmma_matmul,
                       (const __nv_bfloat16* A, const __nv_bfloat16* B, float* C, int M, int N, int K),
                       (A, B, C, M, N, K))
