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
  # The pictures the pages show (the lessons' PNG and SVG, the docs' timelines): Doxygen copies
  # an image into the site only when it finds it on IMAGE_PATH.
  file(GLOB _course_doc_image_dirs LIST_DIRECTORIES true "${CMAKE_CURRENT_SOURCE_DIR}/lessons/[0-9]*")
  set(DOXYGEN_IMAGE_PATH ${_course_doc_image_dirs} "${CMAKE_CURRENT_SOURCE_DIR}/docs")
  # Files the pages link to rather than show.
  set(DOXYGEN_HTML_EXTRA_FILES "${CMAKE_CURRENT_SOURCE_DIR}/docs/lesson04-timeline.svg")
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

# The site's own test: build it, then check that every image and every link between its pages
# points at a file that is there (tools/course/site_check.py).
find_package(Python3 COMPONENTS Interpreter QUIET)
if(DOXYGEN_FOUND AND Python3_Interpreter_FOUND)
  add_test(NAME course/docs-site
           COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${CMAKE_BINARY_DIR} -DPYTHON=${Python3_EXECUTABLE}
                   -DSOURCE_DIR=${CMAKE_CURRENT_SOURCE_DIR} -P "${CMAKE_CURRENT_SOURCE_DIR}/cmake/CheckDocsSite.cmake")
  set_tests_properties(course/docs-site PROPERTIES LABELS "course" TIMEOUT 300 RUN_SERIAL TRUE
                       FIXTURES_SETUP course_docs_site)
  # The same site as a reader gets it, in a headless Chromium (tools/course/browser_check.py):
  # every page loads and shows its text, every image is drawn, every link and anchor between
  # pages resolves, the search box finds. Skipped (exit 77) where no Chromium is installed,
  # unless COURSE_DOCS_BROWSER_REQUIRED=1 (CI sets it). The screenshot of lesson 03 it writes
  # is the one docs/docs-site-lesson03.png was taken from.
  add_test(NAME course/docs-browser
           COMMAND ${CMAKE_COMMAND} -E env "PYTHONPATH=${CMAKE_CURRENT_SOURCE_DIR}/tools"
                   ${Python3_EXECUTABLE} -m course.browser_check "${CMAKE_BINARY_DIR}/docs/html"
                   --screenshot md_lessons_03_matmul_reuse_README.html
                   "${CMAKE_BINARY_DIR}/docs/docs-site-lesson03.png")
  set_tests_properties(course/docs-browser PROPERTIES LABELS "course" TIMEOUT 600 RUN_SERIAL TRUE
                       SKIP_RETURN_CODE 77 FIXTURES_REQUIRED course_docs_site)
endif()
