// The contract of tensor_parallel_mlp, as the judge and the worker exchange it
// (../course_remote.hpp, ../remote_ranks.hpp).
#include "tensor_parallel_mlp.hpp"

#include "remote_ranks.hpp"

COURSE_REMOTE_FUNCTION(void, tensor_parallel_forward,
                       (course::RankGroup& group, const MlpShape& shape, course::SymmetricBuffer<float>& w1,
                        course::SymmetricBuffer<float>& b1, course::SymmetricBuffer<float>& w2,
                        course::SymmetricBuffer<float>& b2, course::SymmetricBuffer<float>& x,
                        course::SymmetricBuffer<float>& y, int batch),
                       (group, shape, w1, b1, w2, b2, x, y, batch))
