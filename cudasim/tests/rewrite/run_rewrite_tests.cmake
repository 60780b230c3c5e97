# Golden-file tests for cudasim_rewrite (cudasim/tools/cudasim_rewrite.cpp).
#
#   cmake -DREWRITE=<path to the built tool> -DCASES=<cases folder> [-DWORK_DIR=<scratch folder>]
#         -P run_rewrite_tests.cmake
#
# Every CASES/NAME.cu is one case:
#   * with NAME.expected.cpp next to it, the tool must succeed and write exactly that file,
#     byte for byte, where the placeholder @INPUT@ in the expected file stands for the input's
#     absolute path as escaped inside #line "..."; the output must have one line more than the
#     input (the #line directive), not counting the fissioned versions of kernels (which put each
#     stretch under a #line of its own and end with a #line for the line they sit on); running the tool again must leave an unchanged output alone
#     and must replace a changed one by renaming a new file over it;
#   * with NAME.expected-error.txt, the tool must exit with status 1, write exactly that text
#     to stderr (@INPUT@ stands for the input path as given) and create no output.
# Project headers: NAME.args gives options to put before INPUT and OUTPUT, one per line (e.g.
# -I and a folder). When NAME.expected-headers/ exists, the rewritten copies of the headers the
# case includes (OUTPUT.headers/) must be exactly its files, byte for byte, each with one line
# more than the header it copies (fissioned versions aside, as above); otherwise the tool must
# write no copies. When NAME.expected.d
# exists, the tool runs with --depfile and must write exactly that. In these three, @CASES@
# stands for the cases folder (escaped as in #line, which the paths here do not need) and
# @OUTPUT@ for the output path.
# The script also checks the command-line errors (exit status 2, one line on stderr starting
# "cudasim_rewrite: "), the escaping of odd characters in the #line path, and that header
# copies a later run does not write again are removed.
#
# Every failure is collected; the script ends with FATAL_ERROR listing them all.
cmake_minimum_required(VERSION 3.16)

if(NOT DEFINED REWRITE OR NOT DEFINED CASES)
  message(FATAL_ERROR "usage: cmake -DREWRITE=<cudasim_rewrite> -DCASES=<dir> [-DWORK_DIR=<dir>] -P run_rewrite_tests.cmake")
endif()
get_filename_component(REWRITE "${REWRITE}" ABSOLUTE)
get_filename_component(CASES "${CASES}" ABSOLUTE)
if(NOT EXISTS "${REWRITE}")
  message(FATAL_ERROR "REWRITE: no such file: ${REWRITE}")
endif()
if(NOT IS_DIRECTORY "${CASES}")
  message(FATAL_ERROR "CASES: no such folder: ${CASES}")
endif()
if(NOT DEFINED WORK_DIR)
  set(WORK_DIR "${CMAKE_CURRENT_BINARY_DIR}/rewrite-test-work")
endif()
get_filename_component(WORK_DIR "${WORK_DIR}" ABSOLUTE)
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

set_property(GLOBAL PROPERTY REWRITE_TEST_FAILURES "")
set_property(GLOBAL PROPERTY REWRITE_TEST_FAILURE_COUNT 0)

function(report_failure test_name message_text)
  get_property(count GLOBAL PROPERTY REWRITE_TEST_FAILURE_COUNT)
  math(EXPR count "${count} + 1")
  set_property(GLOBAL PROPERTY REWRITE_TEST_FAILURE_COUNT ${count})
  set_property(GLOBAL APPEND_STRING PROPERTY REWRITE_TEST_FAILURES "\n[${test_name}] ${message_text}\n")
  message(STATUS "FAIL ${test_name}")
endfunction()

# The path exactly as the tool writes it inside #line "...": native separators, then
# backslashes and double quotes escaped.
function(line_directive_path path out_var)
  file(TO_NATIVE_PATH "${path}" native)
  string(REPLACE "\\" "\\\\" escaped "${native}")
  string(REPLACE "\"" "\\\"" escaped "${escaped}")
  set(${out_var} "${escaped}" PARENT_SCOPE)
endfunction()

function(count_line_breaks text out_var)
  string(LENGTH "${text}" with_breaks)
  string(REPLACE "\n" "" without_breaks "${text}")
  string(LENGTH "${without_breaks}" without_length)
  math(EXPR breaks "${with_breaks} - ${without_length}")
  set(${out_var} ${breaks} PARENT_SCOPE)
endfunction()

# Removes from `text_var` the text that loop fission inserts before each kernel's closing brace,
# "} else { ::cudasim::detail::FissionedBlock ... \n#line N\n", up to the "}}" that ends it.
function(strip_fissioned_versions text_var)
  set(text "${${text_var}}")
  while(TRUE)
    string(FIND "${text}" "} else { ::cudasim::detail::FissionedBlock" start)
    if(start EQUAL -1)
      break()
    endif()
    string(SUBSTRING "${text}" ${start} -1 rest)
    string(FIND "${rest}" "\n}}" stop)
    if(stop EQUAL -1)
      break()
    endif()
    math(EXPR after "${start} + ${stop} + 1")
    string(SUBSTRING "${text}" 0 ${start} head)
    string(SUBSTRING "${text}" ${after} -1 tail)
    set(text "${head}${tail}")
  endwhile()
  set(${text_var} "${text}" PARENT_SCOPE)
endfunction()

# Makes carriage returns and tabs visible in a line shown in a failure message.
function(visible_line line out_var)
  string(REPLACE "\r" "<CR>" line "${line}")
  string(REPLACE "\t" "<TAB>" line "${line}")
  set(${out_var} "${line}" PARENT_SCOPE)
endfunction()

# Splits off the first line of `text_var`'s value: sets <prefix>_line, <prefix>_ended (no line
# was left) and <prefix>_has_break (the line ended with \n), and removes it from `text_var`.
macro(take_first_line text_var prefix)
  string(FIND "${${text_var}}" "\n" _break_at)
  string(LENGTH "${${text_var}}" _text_length)
  if(_text_length EQUAL 0)
    set(${prefix}_ended TRUE)
    set(${prefix}_line "")
    set(${prefix}_has_break FALSE)
  elseif(_break_at EQUAL -1)
    set(${prefix}_ended FALSE)
    set(${prefix}_line "${${text_var}}")
    set(${prefix}_has_break FALSE)
    set(${text_var} "")
  else()
    set(${prefix}_ended FALSE)
    string(SUBSTRING "${${text_var}}" 0 ${_break_at} ${prefix}_line)
    math(EXPR _rest_at "${_break_at} + 1")
    string(SUBSTRING "${${text_var}}" ${_rest_at} -1 ${text_var})
    set(${prefix}_has_break TRUE)
  endif()
endmacro()

# A diff-style description of the first line where `expected` and `actual` differ.
function(describe_first_difference expected actual out_var)
  set(line_number 1)
  set(expected_rest "${expected}")
  set(actual_rest "${actual}")
  while(TRUE)
    take_first_line(expected_rest expected)
    take_first_line(actual_rest actual)
    if(expected_ended AND actual_ended)
      set(${out_var} "the outputs are equal" PARENT_SCOPE)
      return()
    endif()
    if(expected_ended)
      visible_line("${actual_line}" shown)
      set(${out_var} "line ${line_number}: unexpected extra line\n  expected: <end of file>\n  actual:   ${shown}" PARENT_SCOPE)
      return()
    endif()
    if(actual_ended)
      visible_line("${expected_line}" shown)
      set(${out_var} "line ${line_number}: missing line\n  expected: ${shown}\n  actual:   <end of file>" PARENT_SCOPE)
      return()
    endif()
    if(NOT expected_line STREQUAL actual_line)
      visible_line("${expected_line}" shown_expected)
      visible_line("${actual_line}" shown_actual)
      set(${out_var} "line ${line_number} differs\n  expected: ${shown_expected}\n  actual:   ${shown_actual}" PARENT_SCOPE)
      return()
    endif()
    if(NOT expected_has_break STREQUAL actual_has_break)
      set(${out_var} "line ${line_number}: line break at its end expected: ${expected_has_break}, actual: ${actual_has_break}" PARENT_SCOPE)
      return()
    endif()
    math(EXPR line_number "${line_number} + 1")
  endwhile()
endfunction()

# Runs the tool; sets <prefix>_rc, <prefix>_stdout and <prefix>_stderr in the caller.
macro(run_rewrite prefix)
  execute_process(COMMAND "${REWRITE}" ${ARGN}
    RESULT_VARIABLE ${prefix}_rc
    OUTPUT_VARIABLE ${prefix}_stdout
    ERROR_VARIABLE ${prefix}_stderr)
endmacro()

# --- cases with an expected output -----------------------------------------------------------

# The options of a case (NAME.args, one per line; --depfile when NAME.expected.d exists).
function(case_options case_name output out_var)
  line_directive_path("${CASES}" escaped_cases)
  set(options "")
  if(EXISTS "${CASES}/${case_name}.args")
    file(STRINGS "${CASES}/${case_name}.args" lines)
    foreach(line IN LISTS lines)
      string(REPLACE "@CASES@" "${escaped_cases}" line "${line}")
      list(APPEND options "${line}")
    endforeach()
  endif()
  if(EXISTS "${CASES}/${case_name}.expected.d")
    list(APPEND options --depfile "${output}.d")
  endif()
  set(${out_var} "${options}" PARENT_SCOPE)
endfunction()

# Compares `actual_file` with `expected_file`, where @CASES@ and @OUTPUT@ stand for the cases
# folder and `output`; sets out_var to what differs ("`label` differs: ..."), or to nothing.
function(compare_with_expected expected_file actual_file output label out_var)
  line_directive_path("${CASES}" escaped_cases)
  file(READ "${expected_file}" expected_text)
  string(REPLACE "@CASES@" "${escaped_cases}" expected_text "${expected_text}")
  string(REPLACE "@OUTPUT@" "${output}" expected_text "${expected_text}")
  file(READ "${actual_file}" actual_text)
  set(${out_var} "" PARENT_SCOPE)
  if(NOT actual_text STREQUAL expected_text)
    describe_first_difference("${expected_text}" "${actual_text}" difference)
    set(${out_var} "${label} differs: ${difference}" PARENT_SCOPE)
  endif()
endfunction()

# Compares the rewritten headers and the depfile of a case with what it expects; sets out_var
# to what differs, or to nothing.
function(check_case_headers case_name output out_var)
  set(expected_dir "${CASES}/${case_name}.expected-headers")
  set(actual_dir "${output}.headers")
  set(expected_files "")
  set(actual_files "")
  if(IS_DIRECTORY "${expected_dir}")
    file(GLOB_RECURSE expected_files RELATIVE "${expected_dir}" "${expected_dir}/*")
  endif()
  if(IS_DIRECTORY "${actual_dir}")
    file(GLOB_RECURSE actual_files RELATIVE "${actual_dir}" "${actual_dir}/*")
  endif()
  list(SORT expected_files)
  list(SORT actual_files)
  if(NOT expected_files STREQUAL actual_files)
    set(${out_var} "rewritten headers: expected [${expected_files}], got [${actual_files}]" PARENT_SCOPE)
    return()
  endif()
  foreach(header IN LISTS expected_files)
    compare_with_expected("${expected_dir}/${header}" "${actual_dir}/${header}" "${output}"
                          "rewritten header ${header}" difference)
    if(difference)
      set(${out_var} "${difference}" PARENT_SCOPE)
      return()
    endif()
    # One line more than the header it copies, which its #line names.
    file(READ "${actual_dir}/${header}" actual_text)
    if(NOT actual_text MATCHES "^#line 1 \"([^\n]*)\"\n")
      set(${out_var} "rewritten header ${header} does not start with #line 1 \"...\"" PARENT_SCOPE)
      return()
    endif()
    string(REPLACE "\\\"" "\"" original "${CMAKE_MATCH_1}")
    string(REPLACE "\\\\" "\\" original "${original}")
    file(READ "${original}" original_text)
    count_line_breaks("${original_text}" original_breaks)
    strip_fissioned_versions(actual_text)
    count_line_breaks("${actual_text}" copy_breaks)
    math(EXPR expected_breaks "${original_breaks} + 1")
    if(NOT copy_breaks EQUAL expected_breaks)
      set(${out_var} "rewritten header ${header} has ${copy_breaks} line breaks, its original ${original_breaks}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  set(difference "")
  if(EXISTS "${CASES}/${case_name}.expected.d")
    compare_with_expected("${CASES}/${case_name}.expected.d" "${output}.d" "${output}" "depfile" difference)
  endif()
  set(${out_var} "${difference}" PARENT_SCOPE)
endfunction()

function(check_output_case case_name input expected_file)
  set(output "${WORK_DIR}/${case_name}.cpp")
  file(READ "${input}" input_text)
  file(READ "${expected_file}" expected_text)
  line_directive_path("${input}" escaped_input)
  string(REPLACE "@INPUT@" "${escaped_input}" expected_text "${expected_text}")
  case_options(${case_name} "${output}" options)

  run_rewrite(first ${options} "${input}" "${output}")
  if(NOT first_rc EQUAL 0 OR NOT first_stderr STREQUAL "")
    report_failure(${case_name} "expected exit status 0 and no message, got ${first_rc}: ${first_stderr}")
    return()
  endif()
  file(READ "${output}" actual_text)
  if(NOT actual_text STREQUAL expected_text)
    describe_first_difference("${expected_text}" "${actual_text}" difference)
    report_failure(${case_name} "output differs from ${expected_file}: ${difference}")
    return()
  endif()

  # Diagnostics must point at the student's lines: exactly one line (the #line) is added.
  count_line_breaks("${input_text}" input_breaks)
  set(unfissioned_text "${actual_text}")
  strip_fissioned_versions(unfissioned_text)
  count_line_breaks("${unfissioned_text}" output_breaks)
  math(EXPR expected_breaks "${input_breaks} + 1")
  if(NOT output_breaks EQUAL expected_breaks)
    report_failure(${case_name} "the input has ${input_breaks} line breaks, so the output must have ${expected_breaks}, not ${output_breaks}")
    return()
  endif()
  check_case_headers(${case_name} "${output}" header_failure)
  if(header_failure)
    report_failure(${case_name} "${header_failure}")
    return()
  endif()

  # An unchanged output must not be rewritten (build systems would rebuild needlessly), and a
  # changed one must be replaced by renaming a new file over it, never edited in place. A hard
  # link to the output tells the two apart.
  set(link "${output}.link")
  file(CREATE_LINK "${output}" "${link}" RESULT link_result)
  if(link_result STREQUAL "0")
    run_rewrite(second ${options} "${input}" "${output}")
    file(APPEND "${link}" "marker written through the hard link")
    file(READ "${output}" after_second_run)
    if(NOT second_rc EQUAL 0 OR NOT after_second_run STREQUAL "${expected_text}marker written through the hard link")
      report_failure(${case_name} "running again on an up-to-date output must leave the file alone (exit status ${second_rc})")
      return()
    endif()
    run_rewrite(third ${options} "${input}" "${output}")
    file(READ "${output}" after_third_run)
    file(READ "${link}" link_after_third_run)
    if(NOT third_rc EQUAL 0 OR NOT after_third_run STREQUAL expected_text)
      report_failure(${case_name} "running again on an outdated output must rewrite it (exit status ${third_rc})")
      return()
    endif()
    if(link_after_third_run STREQUAL expected_text)
      report_failure(${case_name} "an outdated output was edited in place instead of being replaced atomically")
      return()
    endif()
  else()
    message(STATUS "note: no hard links in ${WORK_DIR} (${link_result}); rewrite-avoidance checks skipped")
  endif()

  file(GLOB leftovers "${output}.tmp*")
  if(leftovers)
    report_failure(${case_name} "temporary files left behind: ${leftovers}")
    return()
  endif()
  message(STATUS "ok   ${case_name}")
endfunction()

# --- cases that must fail ----------------------------------------------------------------------

function(check_error_case case_name input expected_file)
  set(output "${WORK_DIR}/${case_name}.cpp")
  file(READ "${expected_file}" expected_stderr)
  string(REPLACE "@INPUT@" "${input}" expected_stderr "${expected_stderr}")
  line_directive_path("${CASES}" escaped_cases)
  string(REPLACE "@CASES@" "${escaped_cases}" expected_stderr "${expected_stderr}")
  case_options(${case_name} "${output}" options)
  run_rewrite(result ${options} "${input}" "${output}")
  if(NOT result_rc EQUAL 1)
    report_failure(${case_name} "expected exit status 1, got ${result_rc} (stderr: ${result_stderr})")
    return()
  endif()
  if(NOT result_stderr STREQUAL expected_stderr)
    describe_first_difference("${expected_stderr}" "${result_stderr}" difference)
    report_failure(${case_name} "stderr differs from ${expected_file}: ${difference}")
    return()
  endif()
  if(EXISTS "${output}" OR EXISTS "${output}.headers")
    report_failure(${case_name} "no output may be written when the input has an error")
    return()
  endif()
  message(STATUS "ok   ${case_name}")
endfunction()

file(GLOB case_inputs LIST_DIRECTORIES false "${CASES}/*.cu")
list(SORT case_inputs)
list(LENGTH case_inputs case_count)
if(case_count EQUAL 0)
  message(FATAL_ERROR "no *.cu cases in ${CASES}")
endif()
foreach(input IN LISTS case_inputs)
  get_filename_component(case_name "${input}" NAME_WE)
  set(expected_output "${CASES}/${case_name}.expected.cpp")
  set(expected_error "${CASES}/${case_name}.expected-error.txt")
  if(EXISTS "${expected_output}" AND EXISTS "${expected_error}")
    report_failure(${case_name} "has both ${case_name}.expected.cpp and ${case_name}.expected-error.txt")
  elseif(EXISTS "${expected_output}")
    check_output_case(${case_name} "${input}" "${expected_output}")
  elseif(EXISTS "${expected_error}")
    check_error_case(${case_name} "${input}" "${expected_error}")
  else()
    report_failure(${case_name} "has neither ${case_name}.expected.cpp nor ${case_name}.expected-error.txt")
  endif()
endforeach()

# The first case that has CASES/NAME<suffix> (a file or a folder), or nothing.
function(first_case_with suffix out_var)
  set(${out_var} "" PARENT_SCOPE)
  foreach(input IN LISTS case_inputs)
    get_filename_component(case_name "${input}" NAME_WE)
    if(EXISTS "${CASES}/${case_name}${suffix}")
      set(${out_var} "${case_name}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
endfunction()

# The hard-link check above cannot tell "left alone" from "rewritten in place with the same
# bytes"; the modification time can. Once, on the first successful case: a rewrite at least a
# second later would change the timestamp's seconds.
first_case_with(.expected.cpp timestamp_case)
if(timestamp_case)
  set(timestamp_output "${WORK_DIR}/timestamp-${timestamp_case}.cpp")
  run_rewrite(before "${CASES}/${timestamp_case}.cu" "${timestamp_output}")
  file(TIMESTAMP "${timestamp_output}" time_before "%s" UTC)
  execute_process(COMMAND "${CMAKE_COMMAND}" -E sleep 1)
  run_rewrite(after "${CASES}/${timestamp_case}.cu" "${timestamp_output}")
  file(TIMESTAMP "${timestamp_output}" time_after "%s" UTC)
  if(NOT before_rc EQUAL 0 OR NOT after_rc EQUAL 0 OR NOT time_before STREQUAL time_after)
    report_failure(up-to-date-output-untouched "rerunning on an up-to-date output changed its modification time (${time_before} -> ${time_after})")
  else()
    message(STATUS "ok   up-to-date-output-untouched")
  endif()
endif()

# Header copies that a later run does not write again are removed: the first case with
# rewritten headers, then a case without any, into the same output.
first_case_with(.expected-headers headers_case)
if(headers_case AND timestamp_case)
  set(stale_output "${WORK_DIR}/stale-headers.cpp")
  case_options(${headers_case} "${stale_output}" options)
  run_rewrite(with_headers ${options} "${CASES}/${headers_case}.cu" "${stale_output}")
  set(had_copies FALSE)
  if(IS_DIRECTORY "${stale_output}.headers")
    set(had_copies TRUE)
  endif()
  run_rewrite(without_headers "${CASES}/${timestamp_case}.cu" "${stale_output}")
  if(NOT with_headers_rc EQUAL 0 OR NOT without_headers_rc EQUAL 0 OR NOT had_copies OR EXISTS "${stale_output}.headers")
    report_failure(stale-header-copies-removed "rewriting ${timestamp_case} over ${headers_case}'s output must remove the header copies (exit status ${with_headers_rc}, ${without_headers_rc}; copies at first: ${had_copies})")
  else()
    message(STATUS "ok   stale-header-copies-removed")
  endif()
endif()

# --- bad command lines and unusable files: exit status 2, one line starting "cudasim_rewrite: " ---

list(GET case_inputs 0 any_input)
function(check_usage_error test_name)
  run_rewrite(result ${ARGN})
  if(NOT result_rc EQUAL 2)
    report_failure(${test_name} "expected exit status 2, got ${result_rc} (stderr: ${result_stderr})")
  elseif(NOT result_stderr MATCHES "^cudasim_rewrite: [^\n]+\n$")
    report_failure(${test_name} "expected one line on stderr starting 'cudasim_rewrite: ', got: '${result_stderr}'")
  elseif(NOT result_stdout STREQUAL "")
    report_failure(${test_name} "expected nothing on stdout, got: '${result_stdout}'")
  else()
    string(STRIP "${result_stderr}" shown)
    message(STATUS "ok   ${test_name}: ${shown}")
  endif()
endfunction()

check_usage_error(usage/no-arguments)
check_usage_error(usage/one-argument "${any_input}")
check_usage_error(usage/three-arguments "${any_input}" "${WORK_DIR}/a.cpp" "${WORK_DIR}/b.cpp")
check_usage_error(usage/unknown-option --no-such-option "${any_input}" "${WORK_DIR}/a.cpp")
check_usage_error(usage/option-without-value "${any_input}" "${WORK_DIR}/a.cpp" --depfile)
check_usage_error(usage/missing-input "${WORK_DIR}/no-such-file.cu" "${WORK_DIR}/missing-input.cpp")
check_usage_error(usage/input-is-a-folder "${WORK_DIR}" "${WORK_DIR}/folder-input.cpp")
check_usage_error(usage/output-folder-missing "${any_input}" "${WORK_DIR}/no-such-folder/out.cpp")
file(MAKE_DIRECTORY "${WORK_DIR}/output-is-a-folder")
check_usage_error(usage/output-is-a-folder "${any_input}" "${WORK_DIR}/output-is-a-folder")

# --- the #line path: absolute, with backslashes and quotes escaped -----------------------------

function(check_line_directive test_name working_directory input_argument expected_first_line)
  string(REPLACE "/" "-" output_name "${test_name}")
  set(output "${WORK_DIR}/${output_name}.cpp")
  execute_process(COMMAND "${REWRITE}" "${input_argument}" "${output}"
    WORKING_DIRECTORY "${working_directory}"
    RESULT_VARIABLE rc ERROR_VARIABLE stderr)
  if(NOT rc EQUAL 0)
    report_failure(${test_name} "expected exit status 0, got ${rc}: ${stderr}")
    return()
  endif()
  file(READ "${output}" actual_text)
  take_first_line(actual_text actual)
  if(NOT actual_line STREQUAL expected_first_line)
    report_failure(${test_name} "first line\n  expected: ${expected_first_line}\n  actual:   ${actual_line}")
    return()
  endif()
  message(STATUS "ok   ${test_name}")
endfunction()

# A relative input path is made absolute against the working directory.
set(relative_dir "${WORK_DIR}/relative")
file(MAKE_DIRECTORY "${relative_dir}/sub")
file(WRITE "${relative_dir}/sub/input.cu" "k<<<1, 1>>>();\n")
get_filename_component(real_relative_dir "${relative_dir}" REALPATH)
line_directive_path("${real_relative_dir}/sub/input.cu" escaped)
check_line_directive(line-directive/relative-input "${relative_dir}" "sub/./input.cu" "#line 1 \"${escaped}\"")

# Quotes and backslashes in the path are escaped (such names cannot exist on Windows). CMake's
# own file commands turn backslashes into slashes, so mkdir and cp make the odd folder.
if(NOT CMAKE_HOST_WIN32)
  set(odd_dir "${WORK_DIR}/odd \"quoted\" back\\slash")
  execute_process(COMMAND mkdir -p "${odd_dir}" RESULT_VARIABLE mkdir_rc)
  execute_process(COMMAND cp "${relative_dir}/sub/input.cu" "${odd_dir}/input.cu" RESULT_VARIABLE cp_rc)
  if(mkdir_rc EQUAL 0 AND cp_rc EQUAL 0)
    line_directive_path("${WORK_DIR}" escaped_work_dir)
    check_line_directive(line-directive/odd-characters "${WORK_DIR}" "${odd_dir}/input.cu"
      "#line 1 \"${escaped_work_dir}/odd \\\"quoted\\\" back\\\\slash/input.cu\"")
  else()
    report_failure(line-directive/odd-characters "could not create ${odd_dir}")
  endif()
endif()

# --- summary -------------------------------------------------------------------------------------

get_property(failure_count GLOBAL PROPERTY REWRITE_TEST_FAILURE_COUNT)
if(failure_count GREATER 0)
  get_property(failures GLOBAL PROPERTY REWRITE_TEST_FAILURES)
  message(FATAL_ERROR "${failure_count} cudasim_rewrite check(s) failed:\n${failures}")
endif()
message(STATUS "all cudasim_rewrite checks passed (${case_count} cases)")
