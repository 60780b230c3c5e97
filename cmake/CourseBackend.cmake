# Resolves COURSE_BACKEND (auto|cuda|sim) into COURSE_BACKEND_RESOLVED.
#   auto: cuda when nvcc is found and nvidia-smi lists a GPU, otherwise sim.
#   cuda: nvcc compiles the .cu files; CMAKE_CUDA_ARCHITECTURES defaults to native on a GPU
#         machine and to 90 (H100/H200) for build-only checks on machines without one.
#   sim:  the .cu files are rewritten and compiled as C++ against cudasim (clang++ preferred).
set(COURSE_BACKEND "auto" CACHE STRING "auto, cuda or sim")
set_property(CACHE COURSE_BACKEND PROPERTY STRINGS auto cuda sim)

function(_course_gpu_present out)
  find_program(_course_nvidia_smi nvidia-smi)
  set(present OFF)
  if(_course_nvidia_smi)
    execute_process(COMMAND "${_course_nvidia_smi}" -L RESULT_VARIABLE rc OUTPUT_VARIABLE listing
                    ERROR_QUIET TIMEOUT 20)
    if(rc EQUAL 0 AND listing MATCHES "GPU")
      set(present ON)
    endif()
  endif()
  set(${out} ${present} PARENT_SCOPE)
endfunction()

if(COURSE_BACKEND STREQUAL "auto")
  find_program(_course_nvcc nvcc HINTS /usr/local/cuda/bin)
  _course_gpu_present(_course_has_gpu)
  if(_course_nvcc AND _course_has_gpu)
    set(COURSE_BACKEND_RESOLVED cuda)
  else()
    set(COURSE_BACKEND_RESOLVED sim)
  endif()
elseif(COURSE_BACKEND STREQUAL "cuda" OR COURSE_BACKEND STREQUAL "sim")
  set(COURSE_BACKEND_RESOLVED ${COURSE_BACKEND})
else()
  message(FATAL_ERROR "COURSE_BACKEND must be auto, cuda or sim (got '${COURSE_BACKEND}')")
endif()

if(COURSE_BACKEND_RESOLVED STREQUAL "cuda")
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "")
    _course_gpu_present(_course_has_gpu)
    if(_course_has_gpu)
      set(CMAKE_CUDA_ARCHITECTURES native)
    else()
      set(CMAKE_CUDA_ARCHITECTURES 90)
    endif()
  endif()
  enable_language(CUDA)
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  find_package(CUDAToolkit REQUIRED)
  message(STATUS "Course backend: cuda (architectures: ${CMAKE_CUDA_ARCHITECTURES})")
else()
  # Only clang can build the simulator honestly: its memory counters and checks are clang's
  # sanitizer-coverage hooks, which GCC does not have. tools/course/backend.py says the same.
  set(COURSE_MIN_CLANG 14)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang" OR CMAKE_CXX_COMPILER_VERSION VERSION_LESS COURSE_MIN_CLANG)
    message(FATAL_ERROR "The simulator needs clang ${COURSE_MIN_CLANG} or newer (found ${CMAKE_CXX_COMPILER_ID} "
                        "${CMAKE_CXX_COMPILER_VERSION} at ${CMAKE_CXX_COMPILER}): install clang (Debian/Ubuntu: "
                        "sudo apt-get install clang) and configure with -DCMAKE_CXX_COMPILER=clang++")
  endif()
  # The simulator compiles kernels with barriers as C++20 coroutines (cudasim/include/cudasim/
  # device_functions.hpp), so everything built for it is C++20: clang 17 removed the C++17
  # coroutine switch (-fcoroutines-ts) that older builds used.
  set(CMAKE_CXX_STANDARD 20)
  # clang 18 and newer warn about deprecated names that libstdc++ 12 (Debian 12) uses inside its
  # own headers, e.g. get_temporary_buffer under std::stable_sort: a warning in every file that
  # sorts stably, and an error where warnings are errors. Silence that class of warning only
  # where this pairing of compiler and library produces it.
  include(CheckCXXSourceCompiles)
  set(CMAKE_REQUIRED_FLAGS "-std=c++20 -Werror=deprecated-declarations")
  check_cxx_source_compiles([[
    #include <algorithm>
    #include <vector>
    int main() { std::vector<int> v{2, 1}; std::stable_sort(v.begin(), v.end()); return v[0]; }
  ]] COURSE_STDLIB_HEADERS_FREE_OF_DEPRECATION_WARNINGS)
  unset(CMAKE_REQUIRED_FLAGS)
  # COURSE_SIM_CXX_FLAGS: what every C++ compile for the simulator adds to CMake's own flags;
  # `./course run` compiles with the same (course_write_manifest()).
  set(COURSE_SIM_CXX_FLAGS "")
  if(NOT COURSE_STDLIB_HEADERS_FREE_OF_DEPRECATION_WARNINGS)
    list(APPEND COURSE_SIM_CXX_FLAGS -Wno-deprecated-declarations)
  endif()
  add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:${COURSE_SIM_CXX_FLAGS}>")
  message(STATUS "Course backend: sim (clang ${CMAKE_CXX_COMPILER_VERSION})")
endif()
