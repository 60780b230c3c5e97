# Warnings: errors in the project's own code (simulator, tests), shown but not fatal in the
# student's files, where a warning is feedback, not a reason to refuse to build.
function(course_strict_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang|GNU")
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Werror>)
  endif()
endfunction()

function(course_student_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang|GNU")
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wall>)
  endif()
endfunction()
