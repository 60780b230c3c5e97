// The contract of data_parallel_step, as the judge and the worker exchange it
// (../course_remote.hpp, ../remote_ranks.hpp).
#include "data_parallel_step.hpp"

#include "remote_ranks.hpp"

COURSE_REMOTE_FUNCTION(void, data_parallel_train,
                       (course::RankGroup& group, const MlpShape& shape, course::SymmetricBuffer<float>& params,
                        course::SymmetricBuffer<float>& x, course::SymmetricBuffer<float>& t, int batch, int steps,
                        float lr),
                       (group, shape, params, x, t, batch, steps, lr))
