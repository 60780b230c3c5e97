# cmake -DCOURSE_ROOT=... -DWORK=... -P check_stubs.cmake: course_toolkit_stubs() on made-up
# toolkits. A toolkit's own folder: everything the simulator lacks is stubbed. A folder shared
# with other libraries (/usr/include): only CUDA's names. What the simulator provides: never.
cmake_minimum_required(VERSION 3.22)   # the policies of the project that includes the module
include("${COURSE_ROOT}/cmake/CourseToolkitStubs.cmake")
file(REMOVE_RECURSE "${WORK}")

function(touch)
  foreach(path IN LISTS ARGN)
    file(WRITE "${WORK}/${path}" "")
  endforeach()
endfunction()

function(expect_stubs out_dir)
  cmake_parse_arguments(E "" "" "PRESENT;ABSENT" ${ARGN})
  foreach(path IN LISTS E_PRESENT)
    if(NOT EXISTS "${out_dir}/${path}")
      message(FATAL_ERROR "expected a stub for <${path}> in ${out_dir}")
    endif()
  endforeach()
  foreach(path IN LISTS E_ABSENT)
    if(EXISTS "${out_dir}/${path}")
      message(FATAL_ERROR "<${path}> must not be stubbed (${out_dir})")
    endif()
  endforeach()
endfunction()

touch(sim/cuda_runtime.h sim/cooperative_groups.h sim/cooperative_groups/reduce.h)

# /usr/local/include holding links into the toolkit's own folder.
touch(cuda-13.0/include/cuda_runtime.h cuda-13.0/include/curand.h cuda-13.0/include/cooperative_groups.h
      cuda-13.0/include/cooperative_groups/reduce.h cuda-13.0/include/cooperative_groups/scan.h
      cuda-13.0/include/cccl/thrust/device_vector.h cuda-13.0/include/cccl/cuda/std/atomic
      cuda-13.0/include/cccl/cuda/atomic)
file(MAKE_DIRECTORY "${WORK}/local/include")
foreach(name cuda_runtime.h curand.h cooperative_groups.h cooperative_groups cccl)
  file(CREATE_LINK "${WORK}/cuda-13.0/include/${name}" "${WORK}/local/include/${name}" SYMBOLIC)
endforeach()
touch(local/include/mylib.h)
set(CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES "${WORK}/local/include" "${WORK}/nothing-here")
course_toolkit_stubs("${WORK}/sim" "${WORK}/stubs-linked")
expect_stubs("${WORK}/stubs-linked" PRESENT curand.h cooperative_groups/scan.h thrust/device_vector.h cuda/atomic
             ABSENT cuda_runtime.h cooperative_groups.h cooperative_groups/reduce.h mylib.h)
file(READ "${WORK}/stubs-linked/curand.h" text)
if(NOT text MATCHES "#error \"cudasim: <curand.h> is part of the CUDA Toolkit but not of the simulator")
  message(FATAL_ERROR "the stub does not name the header:\n${text}")
endif()
# Configuring again leaves an unchanged stub untouched; a header the simulator gained since
# loses its stub.
file(TIMESTAMP "${WORK}/stubs-linked/cooperative_groups/scan.h" before "%s%f")
execute_process(COMMAND ${CMAKE_COMMAND} -E sleep 1.1)
touch(sim/curand.h)
course_toolkit_stubs("${WORK}/sim" "${WORK}/stubs-linked")
file(TIMESTAMP "${WORK}/stubs-linked/cooperative_groups/scan.h" after "%s%f")
if(NOT before STREQUAL after)
  message(FATAL_ERROR "an unchanged stub was written again (${before} -> ${after})")
endif()
expect_stubs("${WORK}/stubs-linked" PRESENT cooperative_groups/scan.h ABSENT curand.h)
file(REMOVE "${WORK}/sim/curand.h")

# Debian's nvidia-cuda-dev: the toolkit's headers among everything else in /usr/include.
touch(usr/include/cuda_runtime.h usr/include/curand.h usr/include/cufft.h usr/include/cuComplex.h
      usr/include/thrust/device_vector.h usr/include/stdio.h usr/include/curses.h usr/include/gtest/gtest.h
      usr/include/device_types.h)
set(CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES "${WORK}/usr/include")
course_toolkit_stubs("${WORK}/sim" "${WORK}/stubs-shared")
expect_stubs("${WORK}/stubs-shared" PRESENT curand.h cufft.h cuComplex.h thrust/device_vector.h device_types.h
             ABSENT cuda_runtime.h stdio.h curses.h gtest/gtest.h)

# No toolkit: an empty folder.
set(CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES "${WORK}/sim/cooperative_groups")
course_toolkit_stubs("${WORK}/sim" "${WORK}/stubs-none")
file(GLOB none "${WORK}/stubs-none/*")
if(none OR NOT IS_DIRECTORY "${WORK}/stubs-none")
  message(FATAL_ERROR "no toolkit, yet stubs: ${none}")
endif()
message(STATUS "toolkit stubs: all checks passed")
