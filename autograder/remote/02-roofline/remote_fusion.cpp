// The contract of fusion, as the judge and the worker exchange it (../course_remote.hpp). A
// Chain is plain data and crosses as its bytes; the worker's launcher checks it again.
#include "fusion.hpp"

#include "course_remote.hpp"

COURSE_REMOTE_FUNCTION(void, launch_fused_chain, (const Chain& chain, const float* x, const float* r, float* y, int n),
                       (chain, x, r, y, n))
COURSE_REMOTE_FUNCTION(void, launch_eager_chain, (const Chain& chain, const float* x, const float* r, float* y, int n),
                       (chain, x, r, y, n))
