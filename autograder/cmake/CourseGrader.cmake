# The grader's additions to a submission's test program (only when COURSE_GRADER is ON,
# which only ./course grade sets; students' builds are unchanged):
#   - autograder/harness/course_grader_listener.cpp: writes the HMAC-signed result file;
#   - autograder/perf/<lesson>/perf_<name>.cpp, when it exists: the CoursePerf.* case that
#     measures the exercise for the performance part of the rubric.
option(COURSE_GRADER "Build test programs for ./course grade (signed results, performance cases)" OFF)

function(course_grader_sources target lesson name)
  if(NOT COURSE_GRADER)
    return()
  endif()
  target_sources(${target} PRIVATE "${COURSE_ROOT}/autograder/harness/course_grader_listener.cpp")
  set(perf_case "${COURSE_ROOT}/autograder/perf/${lesson}/perf_${name}.cpp")
  if(EXISTS "${perf_case}")
    target_sources(${target} PRIVATE "${perf_case}")
  endif()
endfunction()
