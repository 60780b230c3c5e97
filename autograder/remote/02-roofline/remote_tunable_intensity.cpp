// The contract of tunable_intensity, as the judge and the worker exchange it (../course_remote.hpp).
#include "tunable_intensity.hpp"

#include "course_remote.hpp"

COURSE_REMOTE_FUNCTION(void, launch_tunable_intensity, (const float* x, float* y, int n, int k, float a, float b),
                       (x, y, n, k, a, b))
