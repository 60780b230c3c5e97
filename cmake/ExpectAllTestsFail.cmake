# Runs a GoogleTest binary built from an untouched skeleton and passes only if the binary ran
# to completion (no crash, no hang) and every one of its tests failed: a skeleton must never
# earn points, and must never break the build or the test run.
#   cmake -DTEST_BINARY=<exe> -DREPORT=<json path> -P ExpectAllTestsFail.cmake
if(NOT TEST_BINARY OR NOT REPORT)
  message(FATAL_ERROR "usage: cmake -DTEST_BINARY=<exe> -DREPORT=<json> -P ExpectAllTestsFail.cmake")
endif()
file(REMOVE "${REPORT}")
execute_process(COMMAND "${TEST_BINARY}" "--gtest_output=json:${REPORT}"
                RESULT_VARIABLE exit_code OUTPUT_VARIABLE output ERROR_VARIABLE errors TIMEOUT 240)
if(NOT exit_code STREQUAL "1")
  message(FATAL_ERROR "skeleton ${TEST_BINARY}: expected GoogleTest to exit with 1 (tests failed), "
                      "got '${exit_code}'.\n${output}\n${errors}")
endif()
if(NOT EXISTS "${REPORT}")
  message(FATAL_ERROR "skeleton ${TEST_BINARY}: no GoogleTest report was written")
endif()
file(READ "${REPORT}" report)
string(JSON tests GET "${report}" tests)
string(JSON failures GET "${report}" failures)
# A test that cannot check anything on this backend skips itself (GTEST_SKIP: the counted-traffic
# tests on a GPU); it earns nothing, so it counts with the failures. GoogleTest's report gives
# no total of skips: each test says so in its "result".
set(skipped 0)
string(JSON suites LENGTH "${report}" testsuites)
if(suites GREATER 0)
  math(EXPR last_suite "${suites} - 1")
  foreach(s RANGE ${last_suite})
    string(JSON cases LENGTH "${report}" testsuites ${s} testsuite)
    if(cases GREATER 0)
      math(EXPR last_case "${cases} - 1")
      foreach(c RANGE ${last_case})
        string(JSON result GET "${report}" testsuites ${s} testsuite ${c} result)
        string(JSON case_failures ERROR_VARIABLE no_failures GET "${report}" testsuites ${s} testsuite ${c} failures)
        if(result STREQUAL "SKIPPED" AND no_failures)
          math(EXPR skipped "${skipped} + 1")
        endif()
      endforeach()
    endif()
  endforeach()
endif()
math(EXPR not_passed "${failures} + ${skipped}")
if(tests EQUAL 0 OR failures EQUAL 0 OR NOT not_passed EQUAL tests)
  message(FATAL_ERROR "skeleton ${TEST_BINARY}: ${failures} of ${tests} tests failed (${skipped} skipped); "
                      "an untouched skeleton must fail every test.\n${output}")
endif()
if(skipped GREATER 0)
  message(STATUS "skeleton ${TEST_BINARY}: ${failures} of ${tests} tests fail and ${skipped} skip themselves "
                 "on this backend: none passes, as it must")
else()
  message(STATUS "skeleton ${TEST_BINARY}: all ${tests} tests fail, as they must")
endif()
