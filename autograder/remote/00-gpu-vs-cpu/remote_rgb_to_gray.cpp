// The contract of rgb_to_gray, as the judge and the worker exchange it (../course_remote.hpp).
#include "rgb_to_gray.hpp"

#include "course_remote.hpp"

COURSE_REMOTE_FUNCTION(void, launch_rgb_to_gray, (const float* rgb, float* gray, int height, int width),
                       (rgb, gray, height, width))
