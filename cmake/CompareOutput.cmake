# cmake -DPROGRAM=exe -DEXPECTED=file -P CompareOutput.cmake
# Runs PROGRAM and fails unless its standard output is exactly the contents of EXPECTED (a file
# committed to the repository that something else is made from). On a difference it prints
# both, and how to update the file.
execute_process(COMMAND "${PROGRAM}" OUTPUT_VARIABLE actual RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} failed (${status})")
endif()
file(READ "${EXPECTED}" expected)
if(NOT actual STREQUAL expected)
  message(FATAL_ERROR "${PROGRAM}'s output is not ${EXPECTED}. If the change is meant, update the file with\n"
                      "  ${PROGRAM} > ${EXPECTED}\nand regenerate what is made from it.\n"
                      "--- expected\n${expected}--- actual\n${actual}")
endif()
