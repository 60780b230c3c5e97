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
if(tests EQUAL 0 OR NOT failures EQUAL tests)
  message(FATAL_ERROR "skeleton ${TEST_BINARY}: ${failures} of ${tests} tests failed; an untouched "
                      "skeleton must fail every test.\n${output}")
endif()
message(STATUS "skeleton ${TEST_BINARY}: all ${tests} tests fail, as they must")
