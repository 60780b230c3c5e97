/// @file cuda_check.hpp
/// @brief The course's one error-check header: `CUDA_CHECK`, `CUBLAS_CHECK`, `CUDA_CHECK_LAUNCH`.
///
/// Every CUDA runtime call returns a status code, and every kernel launch can fail without
/// saying so: a launch returns nothing, its error waits in a per-thread slot until someone
/// asks with `cudaGetLastError()`. Code that does not check runs on with garbage.
///
/// The macros here turn a failed status into a C++ exception (`course::CudaError`,
/// `course::CublasError`) whose message names the file, the line, the error and the
/// expression. Throwing instead of calling `exit()` matters for graded code: GoogleTest
/// catches the exception, records the failure for that one test and runs the others.
///
/// Used by exercises, solutions, demo programs and tests alike:
/// @code
///   float* d_x = nullptr;
///   CUDA_CHECK(cudaMalloc(&d_x, n * sizeof(float)));
///   scale_kernel<<<blocks, threads>>>(d_x, n);
///   CUDA_CHECK_LAUNCH();                // a bad launch configuration is reported here
///   CUDA_CHECK(cudaDeviceSynchronize()); // a fault inside the kernel is reported here
/// @endcode
#pragma once

#include <cuda_runtime.h>

// cuBLAS is part of every CUDA toolkit; the simulator ships a stand-in next to its own
// cuda_runtime.h, found first on its include path. Where neither exists the header still
// works, without CUBLAS_CHECK.
#if defined(CUDASIM)
#include <cublas_v2.h>  // the simulator's stand-in, next to its cuda_runtime.h
#define COURSE_HAVE_CUBLAS 1
#elif __has_include(<cublas_v2.h>)
#include <cublas_v2.h>
#define COURSE_HAVE_CUBLAS 1
#endif

#include <stdexcept>
#include <string>

namespace course {

/// A CUDA runtime call failed. `what()` reads
/// `vector_add.cu:42: CUDA error cudaErrorX (description) in 'expression'` (the call's file and line).
class CudaError : public std::runtime_error {
 public:
  /// @param code    the status the runtime returned (never `cudaSuccess`)
  /// @param message the full, human-readable message
  CudaError(cudaError_t code, const std::string& message)
      : std::runtime_error(message), code_(code) {}

  /// The status the runtime returned, so a caller can react to a specific error.
  cudaError_t code() const noexcept { return code_; }

 private:
  cudaError_t code_;
};

#if defined(COURSE_HAVE_CUBLAS)
/// A cuBLAS call failed. `what()` reads
/// `tiled_matmul.cu:42: cuBLAS error CUBLAS_STATUS_X (description) in 'expression'` (the call's file and line).
class CublasError : public std::runtime_error {
 public:
  /// @param status  the status cuBLAS returned (never `CUBLAS_STATUS_SUCCESS`)
  /// @param message the full, human-readable message
  CublasError(cublasStatus_t status, const std::string& message)
      : std::runtime_error(message), status_(status) {}

  /// The status cuBLAS returned.
  cublasStatus_t status() const noexcept { return status_; }

 private:
  cublasStatus_t status_;
};
#endif  // COURSE_HAVE_CUBLAS

namespace detail {

/// Builds the message and throws `CudaError`. Out of line from the macro so each check
/// costs one compare and one call at the use site.
[[noreturn]] inline void throw_cuda_error(cudaError_t code, const char* expression,
                                          const char* file, int line) {
  std::string message = std::string(file) + ":" + std::to_string(line) + ": CUDA error " +
                        cudaGetErrorName(code) + " (" + cudaGetErrorString(code) + ") in '" +
                        expression + "'";
  throw CudaError(code, message);
}

#if defined(COURSE_HAVE_CUBLAS)
/// Builds the message and throws `CublasError`.
[[noreturn]] inline void throw_cublas_error(cublasStatus_t status, const char* expression,
                                            const char* file, int line) {
  std::string message = std::string(file) + ":" + std::to_string(line) + ": cuBLAS error " +
                        cublasGetStatusName(status) + " (" + cublasGetStatusString(status) +
                        ") in '" + expression + "'";
  throw CublasError(status, message);
}
#endif  // COURSE_HAVE_CUBLAS

}  // namespace detail
}  // namespace course

/// Evaluates `expr` (a CUDA runtime call returning `cudaError_t`) once and throws
/// `course::CudaError` unless it returned `cudaSuccess`.
#define CUDA_CHECK(expr)                                                                   \
  do {                                                                                     \
    const cudaError_t course_check_status_ = (expr);                                       \
    if (course_check_status_ != cudaSuccess) {                                             \
      ::course::detail::throw_cuda_error(course_check_status_, #expr, __FILE__, __LINE__); \
    }                                                                                      \
  } while (0)

#if defined(COURSE_HAVE_CUBLAS)
/// Evaluates `expr` (a cuBLAS call returning `cublasStatus_t`) once and throws
/// `course::CublasError` unless it returned `CUBLAS_STATUS_SUCCESS`.
#define CUBLAS_CHECK(expr)                                                                    \
  do {                                                                                        \
    const cublasStatus_t course_check_status_ = (expr);                                       \
    if (course_check_status_ != CUBLAS_STATUS_SUCCESS) {                                      \
      ::course::detail::throw_cublas_error(course_check_status_, #expr, __FILE__, __LINE__); \
    }                                                                                         \
  } while (0)
#endif  // COURSE_HAVE_CUBLAS

/// Put right after a kernel launch `k<<<grid, block>>>(...)`: throws `course::CudaError` if
/// the launch itself was rejected (bad grid or block size, too much shared memory, no
/// device). It reads and clears the error with `cudaGetLastError()` and does not wait for
/// the kernel; a fault while the kernel runs shows up at the next synchronizing call.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
