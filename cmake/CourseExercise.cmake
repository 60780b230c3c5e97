# course_cuda_sources(): add .cu files to a target for the active backend.
# course_add_exercise(): one exercise, built from the submission and from solutions/.
# course_write_manifest(): the JSON that ./course reads (docs/developer-guide.md).

set(COURSE_ROOT "${CMAKE_CURRENT_LIST_DIR}/..")
get_filename_component(COURSE_ROOT "${COURSE_ROOT}" ABSOLUTE)
set(COURSE_CMAKE_DIR "${CMAKE_CURRENT_LIST_DIR}")
include("${COURSE_ROOT}/autograder/cmake/CourseGrader.cmake")  # COURSE_GRADER, course_grader_sources()

# Adds CUDA sources to `target`. On the cuda backend nvcc compiles them as they are. On the
# sim backend each file is rewritten at build time (chevrons and extern __shared__, line
# numbers kept with #line) and the result compiles as C++ against the simulator's headers;
# -iquote keeps the file's own quoted includes working from the build folder. The rewrite also
# rewrites the project headers the file includes with quotes (found next to the including
# file, in the file's folder and in the target's include folders inside the course or the
# submission folder, never the simulator's own), into FILE.cpp.headers/ next to the output,
# and names every header it read in a depfile, so that editing a header reruns it.
# Kernels compiled with these flags count their memory traffic and are checked by memcheck
# (cudasim/src/instrumentation.cpp): clang calls a hook before every load and store; without
# vectorisation each element access stays one access. Only clang has these hooks (the sim
# backend requires it: cmake/CourseBackend.cmake).
# The ignorelist keeps the standard library's out-of-line code uninstrumented (why: see there).
# -fno-builtin-memset/-memcpy/-memmove stop the optimiser from turning a loop that fills or
# copies an array into a call of the C library's function, which no hook sees (a kernel whose
# thread filled a whole array counted no bytes); calls the code makes itself are renamed in
# device code by the rewrite to the simulator's counted ones. The simulator's own headers write
# __builtin_memcpy for their bit casts, which stay inline under these flags.
set(COURSE_SIM_INSTRUMENT_FLAGS
    -fsanitize-coverage=inline-8bit-counters,trace-loads,trace-stores
    "-fsanitize-coverage-ignorelist=${COURSE_ROOT}/cudasim/instrumentation_ignorelist.txt"
    -fno-vectorize -fno-slp-vectorize -fno-unroll-loops -fno-builtin-memset -fno-builtin-memcpy -fno-builtin-memmove
    -DCUDASIM_COUNT_MEMORY)

# The include folder, searched right after cudasim/include, in which each CUDA Toolkit header
# the simulator lacks is a stub naming it (cmake/CourseToolkitStubs.cmake, cudasim/CMakeLists.txt).
set(COURSE_SIM_TOOLKIT_STUBS_DIR "${CMAKE_BINARY_DIR}/cudasim-toolkit-stubs")

# Like nvcc, the simulator includes cuda_runtime.h in every .cu file, so that programs which
# never include it (most "hello world"s) compile on both backends.
set(COURSE_SIM_CU_FLAGS -include cuda_runtime.h)

# `text` as a regular expression that matches it literally, also inside a generator
# expression (where ',' and '>' would end it).
function(_course_regex_literal text out_var)
  string(REGEX REPLACE "([][.+*?^$()|{}\\\\])" "\\\\\\1" text "${text}")
  string(REPLACE "," "$<COMMA>" text "${text}")
  string(REPLACE ">" "$<ANGLE-R>" text "${text}")
  set(${out_var} "${text}" PARENT_SCOPE)
endfunction()

# The -I options for cudasim_rewrite: the target's include folders that hold project headers.
function(_course_rewrite_include_options target out_var)
  _course_regex_literal("${COURSE_ROOT}" root)
  _course_regex_literal("${COURSE_SUBMISSION_DIR}" submission)
  set(folders "$<TARGET_PROPERTY:${target},INCLUDE_DIRECTORIES>")
  set(folders "$<FILTER:${folders},INCLUDE,^(${root}|${submission})/>")
  set(folders "$<FILTER:${folders},EXCLUDE,^${root}/cudasim/include/?$>")
  _course_regex_literal("${COURSE_SIM_TOOLKIT_STUBS_DIR}" stubs)
  set(folders "$<FILTER:${folders},EXCLUDE,^${stubs}/?$>")
  set(${out_var} "$<$<BOOL:${folders}>:-I$<JOIN:${folders},;-I>>" PARENT_SCOPE)
endfunction()

# course_cuda_sources(target file.cu... [UNINSTRUMENTED] [RUNTIME library])
# RUNTIME replaces the simulator library the target links (default: cudasim).
function(course_cuda_sources target)
  cmake_parse_arguments(CU "UNINSTRUMENTED" "RUNTIME" "" ${ARGN})
  if(NOT CU_RUNTIME)
    set(CU_RUNTIME cudasim)
  endif()
  set(options ${COURSE_SIM_CU_FLAGS})
  if(NOT CU_UNINSTRUMENTED)
    list(APPEND options ${COURSE_SIM_INSTRUMENT_FLAGS})
  endif()
  foreach(source IN LISTS CU_UNPARSED_ARGUMENTS)
    get_filename_component(source "${source}" ABSOLUTE)
    if(COURSE_BACKEND_RESOLVED STREQUAL "cuda")
      target_sources(${target} PRIVATE "${source}")
      set_source_files_properties("${source}" TARGET_DIRECTORY ${target} PROPERTIES LANGUAGE CUDA)
    else()
      get_filename_component(name "${source}" NAME)
      get_filename_component(directory "${source}" DIRECTORY)
      set(rewritten "${CMAKE_CURRENT_BINARY_DIR}/cudasim_rewritten/${target}/${name}.cpp")
      _course_rewrite_include_options(${target} include_options)
      add_custom_command(
        OUTPUT "${rewritten}"
        COMMAND cudasim_rewrite -iquote "${directory}" "${include_options}" --depfile "${rewritten}.d"
                "${source}" "${rewritten}"
        DEPENDS "${source}" cudasim_rewrite
        DEPFILE "${rewritten}.d"
        COMMENT "cudasim: rewriting ${name}"
        COMMAND_EXPAND_LISTS
        VERBATIM)
      target_sources(${target} PRIVATE "${rewritten}")
      set_source_files_properties("${rewritten}" TARGET_DIRECTORY ${target}
                                  PROPERTIES COMPILE_OPTIONS "-iquote;${directory};${options}")
    endif()
  endforeach()
  if(COURSE_BACKEND_RESOLVED STREQUAL "cuda")
    target_link_libraries(${target} PRIVATE CUDA::cudart)
  else()
    target_link_libraries(${target} PRIVATE ${CU_RUNTIME})
  endif()
endfunction()

# Links the libraries an exercise may call (e.g. cublas) on either backend.
function(course_link_libraries target)
  foreach(library IN LISTS ARGN)
    # The simulator's cuBLASLt lives in its cuBLAS library (it computes through cublasGemmEx).
    if(library STREQUAL "cublas" OR library STREQUAL "cublasLt")
      if(COURSE_BACKEND_RESOLVED STREQUAL "cuda")
        target_link_libraries(${target} PRIVATE CUDA::${library})
      else()
        target_link_libraries(${target} PRIVATE cudasim_cublas)
      endif()
    elseif(library STREQUAL "curand")
      if(COURSE_BACKEND_RESOLVED STREQUAL "cuda")
        target_link_libraries(${target} PRIVATE CUDA::curand)
      else()
        target_link_libraries(${target} PRIVATE cudasim_curand)
      endif()
    else()
      message(FATAL_ERROR "course_add_exercise: unknown library '${library}'")
    endif()
  endforeach()
endfunction()

# course_add_exercise(ORDER 01 NAME vector_add [LIBRARIES cublas])
# Called from lessons/NN-x/CMakeLists.txt. Builds the GoogleTest binary
# autograder/tests/NN-x/test_<name>.cpp against NN-x/<order>_<name>.cu from the submission
# folder and, unless COURSE_WITH_SOLUTIONS is OFF, from solutions/.
# TIMED: the tests measure wall time (a copy that overlaps, a pipeline that beats the serial
# loop); ctest runs them alone, as another test on the same cores could make them fail.
function(course_add_exercise)
  cmake_parse_arguments(EX "TIMED" "ORDER;NAME" "LIBRARIES" ${ARGN})
  if(NOT EX_ORDER OR NOT EX_NAME)
    message(FATAL_ERROR "course_add_exercise needs ORDER and NAME")
  endif()
  get_filename_component(lesson "${CMAKE_CURRENT_SOURCE_DIR}" NAME)
  string(SUBSTRING "${lesson}" 0 2 lesson_number)
  set(file "${EX_ORDER}_${EX_NAME}.cu")
  set(test_source "${COURSE_ROOT}/autograder/tests/${lesson}/test_${EX_NAME}.cpp")
  if(NOT EXISTS "${test_source}")
    message(FATAL_ERROR "course_add_exercise: missing test ${test_source}")
  endif()

  set(variants submission)
  if(COURSE_WITH_SOLUTIONS)
    list(APPEND variants solution)
  endif()
  set(variant_json "")
  foreach(variant IN LISTS variants)
    if(variant STREQUAL "submission")
      set(source "${COURSE_SUBMISSION_DIR}/${lesson}/${file}")
    else()
      set(source "${COURSE_ROOT}/solutions/${lesson}/${file}")
    endif()
    set(target "${variant}_${lesson_number}_${EX_NAME}")
    set(output_dir "${CMAKE_BINARY_DIR}/exercises/${variant}/${lesson}")
    set(executable "${output_dir}/${EX_NAME}_test")
    if(EXISTS "${source}" AND COURSE_GRADER AND COURSE_BACKEND_RESOLVED STREQUAL "sim"
       AND EXISTS "${COURSE_ROOT}/autograder/remote/${lesson}/remote_${EX_NAME}.cpp")
      # The grader's split program: `target` is the worker (the submission, never the tests),
      # and the test program that ./course grade runs is the judge (course_grader_split()).
      course_grader_split(${target} "${lesson}" "${EX_NAME}" "${source}" "${test_source}" "${output_dir}"
                          LIBRARIES ${EX_LIBRARIES})
      set(test_target ${target}_judge)
    elseif(EXISTS "${source}")
      add_executable(${target} "${test_source}")
      course_cuda_sources(${target} "${source}")
      # No start-up code in an exercise's object (see CUDASIM_KNOWN_KERNEL in execution.hpp).
      target_compile_definitions(${target} PRIVATE CUDASIM_NO_KERNEL_REGISTRATION=1)
      course_link_libraries(${target} ${EX_LIBRARIES})
      target_include_directories(${target} PRIVATE
        "${COURSE_ROOT}/lessons/${lesson}" "${COURSE_ROOT}/lessons/common" "${COURSE_ROOT}/autograder/harness")
      target_link_libraries(${target} PRIVATE GTest::gtest_main Threads::Threads)
      set_target_properties(${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${output_dir}"
                                                 OUTPUT_NAME "${EX_NAME}_test")
      course_student_warnings(${target})
      course_grader_sources(${target} "${lesson}" "${EX_NAME}")
      set(test_target ${target})
    endif()
    if(EXISTS "${source}")

      set(test_name "${variant}/${lesson}/${EX_NAME}")
      if(variant STREQUAL "submission" AND COURSE_EXPECT_SKELETONS)
        # An untouched skeleton must build, run, and fail every one of its tests.
        add_test(NAME "skeleton/${lesson}/${EX_NAME}"
                 COMMAND ${CMAKE_COMMAND} -DTEST_BINARY=$<TARGET_FILE:${test_target}>
                         -DREPORT=${CMAKE_BINARY_DIR}/skeleton-reports/${target}.json
                         -P "${COURSE_CMAKE_DIR}/ExpectAllTestsFail.cmake")
        set(test_name "skeleton/${lesson}/${EX_NAME}")
      else()
        add_test(NAME "${test_name}" COMMAND ${test_target})
      endif()
      set_tests_properties("${test_name}" PROPERTIES LABELS "lesson-${lesson_number};${variant}" TIMEOUT 300)
      # A reference solution with barriers runs fissioned on the simulator (loop fission, see
      # cudasim_rewrite.cpp): its tests must pass both ways, with the same counters per launch.
      file(READ "${source}" _solution_text)
      if(variant STREQUAL "solution" AND COURSE_BACKEND_RESOLVED STREQUAL "sim" AND
         _solution_text MATCHES "__syncthreads")
        add_test(NAME "fission/${lesson}/${EX_NAME}"
                 COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:${test_target}>
                         -DWORK=${CMAKE_BINARY_DIR}/fission-both-ways/${target}
                         -DREWRITTEN_DIR=${CMAKE_CURRENT_BINARY_DIR}/cudasim_rewritten/${target}
                         -P "${COURSE_ROOT}/cudasim/tests/check_fission_both_ways.cmake")
        set_tests_properties("fission/${lesson}/${EX_NAME}" PROPERTIES LABELS "lesson-${lesson_number};cudasim"
                             TIMEOUT 600)
      endif()
      if(EX_TIMED)
        set_tests_properties("${test_name}" PROPERTIES RUN_SERIAL TRUE)
      endif()
    endif()
    string(APPEND variant_json
      "\"${variant}\": {\"source\": \"${source}\", \"target\": \"${target}\", \"executable\": \"${executable}\"},")
  endforeach()
  string(REGEX REPLACE ",$" "" variant_json "${variant_json}")
  _course_json_strings(_libs ${EX_LIBRARIES})

  set_property(GLOBAL APPEND PROPERTY COURSE_EXERCISES_JSON
    "{\"lesson\": \"${lesson}\", \"lesson_number\": \"${lesson_number}\", \"order\": \"${EX_ORDER}\", \"name\": \"${EX_NAME}\", \"file\": \"${file}\", \"test_source\": \"${test_source}\", \"libraries\": [${_libs}], \"variants\": {${variant_json}}}")
endfunction()

# Sets `out` to the arguments as the items of a JSON array of strings: "a", "b".
function(_course_json_strings out)
  set(items "")
  foreach(item IN LISTS ARGN)
    list(APPEND items "\"${item}\"")
  endforeach()
  list(JOIN items ", " items)
  set(${out} "${items}" PARENT_SCOPE)
endfunction()

# Writes <build>/course_manifest.json and <build>/course_run.json.
function(course_write_manifest)
  get_property(exercises GLOBAL PROPERTY COURSE_EXERCISES_JSON)
  list(JOIN exercises ",\n    " body)
  file(WRITE "${CMAKE_BINARY_DIR}/course_manifest.json"
"{
  \"backend\": \"${COURSE_BACKEND_RESOLVED}\",
  \"source_dir\": \"${COURSE_ROOT}\",
  \"build_dir\": \"${CMAKE_BINARY_DIR}\",
  \"submission_dir\": \"${COURSE_SUBMISSION_DIR}\",
  \"exercises\": [
    ${body}
  ]
}
")
  # The recipe for `./course run FILE.cu`: the same compiler and flags as the exercises;
  # `--stats` and `--check` add the instrumentation flags.
  if(COURSE_BACKEND_RESOLVED STREQUAL "sim")
    _course_json_strings(_course_flags_json -std=c++${CMAKE_CXX_STANDARD} ${COURSE_SIM_CXX_FLAGS} -O2 -g -pthread)
    _course_json_strings(_course_instrument_json ${COURSE_SIM_INSTRUMENT_FLAGS})
    _course_json_strings(_course_cu_json ${COURSE_SIM_CU_FLAGS})
    file(GENERATE OUTPUT "${CMAKE_BINARY_DIR}/course_run.json" CONTENT
"{
  \"backend\": \"sim\",
  \"targets\": [\"cudasim_rewrite\", \"cudasim\", \"cudasim_cublas\", \"cudasim_curand\"],
  \"rewrite_tool\": \"$<TARGET_FILE:cudasim_rewrite>\",
  \"compiler\": \"${CMAKE_CXX_COMPILER}\",
  \"flags\": [${_course_flags_json}],
  \"instrument_flags\": [${_course_instrument_json}],
  \"cu_flags\": [${_course_cu_json}],
  \"include_dirs\": [\"${COURSE_ROOT}/cudasim/include\", \"${COURSE_SIM_TOOLKIT_STUBS_DIR}\", \"${COURSE_ROOT}/lessons/common\"],
  \"rewrite_include_dirs\": [\"${COURSE_ROOT}/lessons/common\"],
  \"link\": [\"$<TARGET_FILE:cudasim_cublas>\", \"$<TARGET_FILE:cudasim_curand>\", \"$<TARGET_FILE:cudasim>\", \"-pthread\", \"-ldl\",
           \"-Wl,--wrap=memcpy,--wrap=memmove,--wrap=memset\"]
}
")
  else()
    if(CMAKE_CUDA_ARCHITECTURES STREQUAL "native")
      set(_course_run_arch native)
    else()
      list(GET CMAKE_CUDA_ARCHITECTURES 0 _course_run_arch)
      string(REGEX REPLACE "-(real|virtual)$" "" _course_run_arch "${_course_run_arch}")
      set(_course_run_arch "sm_${_course_run_arch}")
    endif()
    file(WRITE "${CMAKE_BINARY_DIR}/course_run.json"
"{
  \"backend\": \"cuda\",
  \"targets\": [],
  \"rewrite_tool\": null,
  \"compiler\": \"${CMAKE_CUDA_COMPILER}\",
  \"flags\": [\"-std=c++17\", \"-O2\", \"-lineinfo\", \"-arch=${_course_run_arch}\"],
  \"include_dirs\": [\"${COURSE_ROOT}/lessons/common\"],
  \"link\": [\"-lcublas\", \"-lcurand\"]
}
")
  endif()
endfunction()

# course_add_experiment(LESSON 04 SOURCE program.cu [WITH files.cu ...] [ARGS ...] [TIMEOUT seconds])
# A lesson's experiment program as a test, on the simulator only: run on the modelled clock
# (CUDASIM_MODEL_TIME=1), where its figures are exact, its exit status says whether the
# lesson's claims hold. It writes its outputs under the build folder (--out). A run that fell
# back to CPU time (its output says "simulator, CPU time") could not fail the claims: it fails.
# WITH: more sources the program is built from (the reference of the exercise it runs).
# LIBRARIES: the libraries it calls, as for course_add_exercise (cublas).
function(course_add_experiment)
  cmake_parse_arguments(XP "" "LESSON;SOURCE;TIMEOUT" "ARGS;WITH;LIBRARIES" ${ARGN})
  if(NOT COURSE_BACKEND_RESOLVED STREQUAL "sim")
    return()
  endif()
  if(NOT XP_TIMEOUT)
    set(XP_TIMEOUT 120)
  endif()
  get_filename_component(name "${XP_SOURCE}" NAME_WE)
  set(target lesson${XP_LESSON}_${name})
  add_executable(${target})
  course_cuda_sources(${target} "${XP_SOURCE}" ${XP_WITH})
  target_include_directories(${target} PRIVATE "${CMAKE_CURRENT_SOURCE_DIR}" "${COURSE_ROOT}/lessons/common")
  target_link_libraries(${target} PRIVATE Threads::Threads)
  course_link_libraries(${target} ${XP_LIBRARIES})
  add_test(NAME "experiment/${XP_LESSON}/${name}"
           COMMAND ${target} ${XP_ARGS} --out "${CMAKE_CURRENT_BINARY_DIR}/${name}")
  set_tests_properties("experiment/${XP_LESSON}/${name}" PROPERTIES
    ENVIRONMENT "CUDASIM_MODEL_TIME=1" LABELS "experiment" TIMEOUT ${XP_TIMEOUT}
    FAIL_REGULAR_EXPRESSION "simulator, CPU time")
endfunction()
