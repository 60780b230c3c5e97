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

# course_grader_split(target lesson name source test_source output_dir [LIBRARIES ...])
# The grader's test program as two executables (autograder/remote/course_remote.hpp):
#   - `target`, output <name>_worker: the submission's source, the exercise's contract
#     (autograder/remote/<lesson>/remote_<name>.cpp) as handlers, and the worker's loop;
#   - `target`_judge, output <name>_test: the tests, the harness, the signed-results listener,
#     the performance case, the contract as proxies and the forwarding runtime. It never links
#     the submission, the simulator or the reference.
# The worker keeps the target's name, so the grader's object checks find the submission's
# objects where they always were, and building it builds the judge.
function(course_grader_split target lesson name source test_source output_dir)
  cmake_parse_arguments(SPLIT "" "" "LIBRARIES" ${ARGN})
  set(remote_dir "${COURSE_ROOT}/autograder/remote")
  set(contract "${remote_dir}/${lesson}/remote_${name}.cpp")
  set(includes "${COURSE_ROOT}/lessons/${lesson}" "${COURSE_ROOT}/lessons/common"
               "${COURSE_ROOT}/autograder/harness" "${remote_dir}")

  add_executable(${target} "${remote_dir}/worker_main.cpp" "${contract}")
  course_cuda_sources(${target} "${source}")
  course_link_libraries(${target} ${SPLIT_LIBRARIES})
  target_include_directories(${target} PRIVATE ${includes})
  target_compile_definitions(${target} PRIVATE COURSE_REMOTE_WORKER=1)
  if("cublas" IN_LIST SPLIT_LIBRARIES)
    target_compile_definitions(${target} PRIVATE COURSE_REMOTE_CUBLAS=1)
  endif()
  target_link_libraries(${target} PRIVATE Threads::Threads)
  set_target_properties(${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${output_dir}" OUTPUT_NAME "${name}_worker")
  course_student_warnings(${target})

  set(judge ${target}_judge)
  add_executable(${judge} "${test_source}" "${remote_dir}/judge_runtime.cpp" "${contract}")
  course_grader_sources(${judge} "${lesson}" "${name}")
  # The simulator's headers (the types and declarations the tests compile against), not its library.
  target_include_directories(${judge} PRIVATE ${includes} "${COURSE_ROOT}/cudasim/include" "${COURSE_SIM_TOOLKIT_STUBS_DIR}")
  target_compile_definitions(${judge} PRIVATE COURSE_REMOTE_JUDGE=1 "COURSE_WORKER_EXECUTABLE=\"$<TARGET_FILE:${target}>\"")
  target_link_libraries(${judge} PRIVATE GTest::gtest_main Threads::Threads)
  set_target_properties(${judge} PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${output_dir}" OUTPUT_NAME "${name}_test")
  # The grader builds `target` by name (the manifest's target): that builds the judge too.
  add_dependencies(${target} ${judge})
endfunction()
