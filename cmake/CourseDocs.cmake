# `cmake --build <dir> --target docs` runs Doxygen over the contract headers and the
# simulator's public API when Doxygen is installed.
find_package(Doxygen QUIET)
if(DOXYGEN_FOUND)
  set(DOXYGEN_PROJECT_NAME "CUDA course")
  set(DOXYGEN_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/docs")
  set(DOXYGEN_EXTRACT_ALL NO)
  set(DOXYGEN_WARN_IF_UNDOCUMENTED NO)
  set(DOXYGEN_FILE_PATTERNS *.hpp *.h *.md)
  set(DOXYGEN_USE_MDFILE_AS_MAINPAGE "${CMAKE_CURRENT_SOURCE_DIR}/README.md")
  set(DOXYGEN_EXCLUDE_PATTERNS "*/build/*")
  doxygen_add_docs(docs
    "${CMAKE_CURRENT_SOURCE_DIR}/README.md"
    "${CMAKE_CURRENT_SOURCE_DIR}/lessons"
    "${CMAKE_CURRENT_SOURCE_DIR}/cudasim/include"
    "${CMAKE_CURRENT_SOURCE_DIR}/autograder/harness"
    "${CMAKE_CURRENT_SOURCE_DIR}/docs"
    COMMENT "Building the API documentation with Doxygen")
else()
  add_custom_target(docs COMMAND ${CMAKE_COMMAND} -E echo
    "Doxygen is not installed (Debian/Ubuntu: sudo apt-get install doxygen); no docs built.")
endif()
