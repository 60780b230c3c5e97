# ctest's course/docs-site: builds the Doxygen site, then checks its images and links.
# cmake -DBUILD_DIR=... -DPYTHON=... -DSOURCE_DIR=... -P CheckDocsSite.cmake
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${BUILD_DIR}" --target docs
                RESULT_VARIABLE built OUTPUT_VARIABLE output ERROR_VARIABLE output)
if(NOT built EQUAL 0)
  message(FATAL_ERROR "the docs site did not build:\n${output}")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" -E env "PYTHONPATH=${SOURCE_DIR}/tools"
                        "${PYTHON}" -m course.site_check "${BUILD_DIR}/docs/html"
                RESULT_VARIABLE checked)
if(NOT checked EQUAL 0)
  message(FATAL_ERROR "the docs site has broken images or links (listed above)")
endif()
