/// @file cublas_v2.h
/// @brief The simulator's stand-in for cuBLAS: the small subset of the cuBLAS v2 API the
/// course uses, computed on the CPU by a CBLAS (OpenBLAS).
///
/// Semantics follow the cuBLAS documentation:
/// - matrices are column-major; `lda` is the distance in elements between two columns;
/// - every call is asynchronous with respect to the host and runs on the handle's stream
///   (cublasSetStream), in order with kernels and copies queued on that stream;
/// - scalars (`alpha`, `beta`) and results (`cublasSdot`, `cublasSnrm2`, `cublasSasum`) are
///   host pointers in the default CUBLAS_POINTER_MODE_HOST: alpha/beta are read before the
///   call returns and a result is written before it returns (the call waits for the stream);
///   in CUBLAS_POINTER_MODE_DEVICE they are device pointers, read/written when the work runs;
/// - vectors and matrices must be device memory (cudaMalloc/cudaMallocManaged, or pinned host
///   memory); a host pointer is reported and faults the context with cudaErrorIllegalAddress,
///   as the kernel behind the call would on a GPU;
/// - invalid sizes, leading dimensions, increments or operations return
///   CUBLAS_STATUS_INVALID_VALUE and do nothing; a null or destroyed handle returns
///   CUBLAS_STATUS_NOT_INITIALIZED; after a kernel fault calls return
///   CUBLAS_STATUS_EXECUTION_FAILED.
///
/// Enumerator values are those of the CUDA toolkit, so printed codes match a GPU's.
#pragma once

// The include guard of the toolkit's cublas_api.h, which the real cublas_v2.h includes: helpers
// such as NVIDIA's helper_cuda.h test it to offer their cuBLAS error names.
#ifndef CUBLAS_API_H_
#define CUBLAS_API_H_
#endif

#include <cuda_runtime.h>
// What the real cublas_v2.h (and cublasLt.h) bring in through cublas_api.h: programs that
// include only a cuBLAS header use __half and __nv_bfloat16 (llm.c's dev/cuda kernels do).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

/// Status returned by every cuBLAS call.
typedef enum {
  CUBLAS_STATUS_SUCCESS = 0,           ///< the call succeeded (or was queued)
  CUBLAS_STATUS_NOT_INITIALIZED = 1,   ///< null or destroyed handle
  CUBLAS_STATUS_ALLOC_FAILED = 3,      ///< a resource could not be allocated
  CUBLAS_STATUS_INVALID_VALUE = 7,     ///< an argument is out of range (size, leading dimension, ...)
  CUBLAS_STATUS_ARCH_MISMATCH = 8,     ///< the device lacks a required feature
  CUBLAS_STATUS_MAPPING_ERROR = 11,    ///< access to GPU memory space failed
  CUBLAS_STATUS_EXECUTION_FAILED = 13, ///< the GPU program failed to execute (e.g. after a fault)
  CUBLAS_STATUS_INTERNAL_ERROR = 14,   ///< an internal operation failed
  CUBLAS_STATUS_NOT_SUPPORTED = 15,    ///< the requested functionality is not supported
  CUBLAS_STATUS_LICENSE_ERROR = 16,    ///< the requested functionality requires a license
} cublasStatus_t;

/// What to apply to a matrix operand before multiplying: nothing, transpose, or conjugate
/// transpose (the same as transpose for real types).
typedef enum {
  CUBLAS_OP_N = 0,
  CUBLAS_OP_T = 1,
  CUBLAS_OP_C = 2,
  CUBLAS_OP_HERMITAN = 2,  ///< synonym of CUBLAS_OP_C
  CUBLAS_OP_CONJG = 3,     ///< not supported (CUBLAS_STATUS_INVALID_VALUE), as in cuBLAS
} cublasOperation_t;

/// Where scalar arguments and scalar results live.
typedef enum {
  CUBLAS_POINTER_MODE_HOST = 0,    ///< host pointers (the default)
  CUBLAS_POINTER_MODE_DEVICE = 1,  ///< device pointers
} cublasPointerMode_t;

/// Math modes (cublasSetMathMode). The CPU BLAS computes every mode in full fp32, so the mode is
/// kept and reported but changes no result (a GPU's TF32 mode would round the inputs).
typedef enum {
  CUBLAS_DEFAULT_MATH = 0,
  CUBLAS_TENSOR_OP_MATH = 1,
  CUBLAS_PEDANTIC_MATH = 2,
  CUBLAS_TF32_TENSOR_OP_MATH = 3,
  CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION = 16,
} cublasMath_t;

struct cublasContext;
/// A cuBLAS library context: holds the stream and pointer mode. Create one per host thread
/// (or per stream) with cublasCreate and release it with cublasDestroy.
typedef struct cublasContext* cublasHandle_t;

// The real header maps these names to the *_v2 entry points with macros; the simulator
// defines the plain names directly.

/// Creates a handle bound to the legacy default stream, in host pointer mode.
/// @return CUBLAS_STATUS_INVALID_VALUE if `handle` is null.
cublasStatus_t cublasCreate(cublasHandle_t* handle);
/// Waits for all queued device work (as cuBLAS does) and releases the handle.
cublasStatus_t cublasDestroy(cublasHandle_t handle);
/// Makes later calls on `handle` run on `stream` (0 for the legacy default stream).
cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream);
/// The stream later calls on `handle` run on.
cublasStatus_t cublasGetStream(cublasHandle_t handle, cudaStream_t* stream);
/// Sets whether alpha/beta and scalar results are host or device pointers.
cublasStatus_t cublasSetPointerMode(cublasHandle_t handle, cublasPointerMode_t mode);
/// The handle's pointer mode.
cublasStatus_t cublasGetPointerMode(cublasHandle_t handle, cublasPointerMode_t* mode);
/// Sets the handle's math mode (kept, see cublasMath_t).
cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode);
/// The handle's math mode.
cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t* mode);
/// The enumerator's name, e.g. "CUBLAS_STATUS_INVALID_VALUE".
const char* cublasGetStatusName(cublasStatus_t status);
/// A short description of the status.
const char* cublasGetStatusString(cublasStatus_t status);

/// C = alpha * op(A) * op(B) + beta * C, single precision, column-major.
/// op(A) is m x k, op(B) is k x n, C is m x n. When beta is 0, C is not read (NaNs in C do
/// not propagate).
/// @return CUBLAS_STATUS_INVALID_VALUE if m, n or k < 0, an operation is not N/T/C,
///         lda < max(1, transa == N ? m : k), ldb < max(1, transb == N ? k : n) or
///         ldc < max(1, m).
cublasStatus_t cublasSgemm(cublasHandle_t handle, cublasOperation_t transa,
                           cublasOperation_t transb, int m, int n, int k, const float* alpha,
                           const float* A, int lda, const float* B, int ldb, const float* beta,
                           float* C, int ldc);
/// cublasSgemm in double precision.
cublasStatus_t cublasDgemm(cublasHandle_t handle, cublasOperation_t transa,
                           cublasOperation_t transb, int m, int n, int k, const double* alpha,
                           const double* A, int lda, const double* B, int ldb,
                           const double* beta, double* C, int ldc);
/// `batchCount` independent cublasSgemm calls; matrix i of A starts at A + i * strideA
/// (likewise B and C).
/// @return as cublasSgemm, and CUBLAS_STATUS_INVALID_VALUE if batchCount < 0.
cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k,
                                         const float* alpha, const float* A, int lda,
                                         long long int strideA, const float* B, int ldb,
                                         long long int strideB, const float* beta, float* C,
                                         int ldc, long long int strideC, int batchCount);
/// `batchCount` cublasSgemm calls on the matrices listed in Aarray, Barray and Carray (arrays of
/// device pointers, in device memory). The arrays are read once the work queued before the call
/// on the handle's stream has run: the call waits for that work.
cublasStatus_t cublasSgemmBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                  int n, int k, const float* alpha, const float* const Aarray[], int lda,
                                  const float* const Barray[], int ldb, const float* beta, float* const Carray[],
                                  int ldc, int batchCount);
/// cublasSgemmBatched in double precision.
cublasStatus_t cublasDgemmBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                  int n, int k, const double* alpha, const double* const Aarray[], int lda,
                                  const double* const Barray[], int ldb, const double* beta, double* const Carray[],
                                  int ldc, int batchCount);
/// LU factorisations of `batchSize` n x n matrices, in place: matrix i is Aarray[i] (an array of
/// device pointers in device memory, read once the work queued before the call has run), with
/// its row interchanges in P[i*n .. i*n+n-1] (1-based, as LAPACK's getrf) and its status in
/// info[i]: 0, or k when U(k,k) is exactly zero (1-based). With P null nothing is pivoted, as
/// in cuBLAS, and the factorisation of a matrix stops at its first zero pivot. Pivoted
/// factorisations are LAPACK's getrf from the loaded OpenBLAS (or liblapack); where there is no
/// LAPACK the call returns CUBLAS_STATUS_NOT_SUPPORTED and says so.
cublasStatus_t cublasSgetrfBatched(cublasHandle_t handle, int n, float* const Aarray[], int lda, int* P, int* info,
                                   int batchSize);
/// cublasSgetrfBatched in double precision.
cublasStatus_t cublasDgetrfBatched(cublasHandle_t handle, int n, double* const Aarray[], int lda, int* P, int* info,
                                   int batchSize);
/// The inverses of `batchSize` n x n matrices from their LU factorisations (cublas<t>getrfBatched's
/// Aarray and P; P null when they were factorised without pivots), out of place: the inverse of
/// matrix i goes to Carray[i], and info[i] is 0, or k when U(k,k) is exactly zero (1-based; no
/// inverse). Computed by LAPACK's getri from the loaded libraries; without LAPACK the call
/// returns CUBLAS_STATUS_NOT_SUPPORTED and says so.
cublasStatus_t cublasSgetriBatched(cublasHandle_t handle, int n, const float* const Aarray[], int lda, const int* P,
                                   float* const Carray[], int ldc, int* info, int batchSize);
/// cublasSgetriBatched in double precision.
cublasStatus_t cublasDgetriBatched(cublasHandle_t handle, int n, const double* const Aarray[], int lda, const int* P,
                                   double* const Carray[], int ldc, int* info, int batchSize);
/// Copies n elements of elemSize bytes, incx apart in x, to incy apart in y: host to device
/// (Set) or device to host (Get); the Async forms queue the copy on `stream`. A bad size or
/// stride is CUBLAS_STATUS_INVALID_VALUE, a copy that fails CUBLAS_STATUS_MAPPING_ERROR.
cublasStatus_t cublasSetVector(int n, int elemSize, const void* x, int incx, void* y, int incy);
cublasStatus_t cublasGetVector(int n, int elemSize, const void* x, int incx, void* y, int incy);
cublasStatus_t cublasSetVectorAsync(int n, int elemSize, const void* x, int incx, void* y, int incy,
                                    cudaStream_t stream);
cublasStatus_t cublasGetVectorAsync(int n, int elemSize, const void* x, int incx, void* y, int incy,
                                    cudaStream_t stream);
/// Copies a rows x cols column-major matrix of elemSize-byte elements (leading dimensions lda
/// and ldb), as cublasSetVector does a vector.
cublasStatus_t cublasSetMatrix(int rows, int cols, int elemSize, const void* A, int lda, void* B, int ldb);
cublasStatus_t cublasGetMatrix(int rows, int cols, int elemSize, const void* A, int lda, void* B, int ldb);
cublasStatus_t cublasSetMatrixAsync(int rows, int cols, int elemSize, const void* A, int lda, void* B, int ldb,
                                    cudaStream_t stream);
cublasStatus_t cublasGetMatrixAsync(int rows, int cols, int elemSize, const void* A, int lda, void* B, int ldb,
                                    cudaStream_t stream);
/// y = alpha * op(A) * x + beta * y, where A is m x n column-major. A zero incx makes x[0]
/// stand for every element of x; a zero incy leaves one of the results in y[0].
/// @return CUBLAS_STATUS_INVALID_VALUE if m or n < 0, lda < max(1, m), or trans is not N/T/C.
cublasStatus_t cublasSgemv(cublasHandle_t handle, cublasOperation_t trans, int m, int n,
                           const float* alpha, const float* A, int lda, const float* x, int incx,
                           const float* beta, float* y, int incy);
cublasStatus_t cublasDgemv(cublasHandle_t handle, cublasOperation_t trans, int m, int n,
                           const double* alpha, const double* A, int lda, const double* x, int incx,
                           const double* beta, double* y, int incy);
/// y = alpha * x + y over n elements with strides incx, incy.
cublasStatus_t cublasSaxpy(cublasHandle_t handle, int n, const float* alpha, const float* x,
                           int incx, float* y, int incy);
cublasStatus_t cublasDaxpy(cublasHandle_t handle, int n, const double* alpha, const double* x,
                           int incx, double* y, int incy);
/// *result = sum of x[i] * y[i]; 0 when n <= 0.
cublasStatus_t cublasSdot(cublasHandle_t handle, int n, const float* x, int incx, const float* y,
                          int incy, float* result);
cublasStatus_t cublasDdot(cublasHandle_t handle, int n, const double* x, int incx, const double* y,
                          int incy, double* result);
/// *result = Euclidean norm of x; 0 when n <= 0 or incx <= 0.
cublasStatus_t cublasSnrm2(cublasHandle_t handle, int n, const float* x, int incx, float* result);
cublasStatus_t cublasDnrm2(cublasHandle_t handle, int n, const double* x, int incx, double* result);
/// x = alpha * x; nothing when n <= 0 or incx <= 0.
cublasStatus_t cublasSscal(cublasHandle_t handle, int n, const float* alpha, float* x, int incx);
cublasStatus_t cublasDscal(cublasHandle_t handle, int n, const double* alpha, double* x, int incx);
/// *result = sum of |x[i]|; 0 when n <= 0 or incx <= 0.
cublasStatus_t cublasSasum(cublasHandle_t handle, int n, const float* x, int incx, float* result);
cublasStatus_t cublasDasum(cublasHandle_t handle, int n, const double* x, int incx, double* result);

// ---- mixed precision: cublasGemmEx ---------------------------------------------------------
// In the toolkit these enums live in library_types.h and cublas_api.h; values are CUDA's.

#ifndef CUDASIM_HAVE_CUDA_DATA_TYPE
#define CUDASIM_HAVE_CUDA_DATA_TYPE 1
/// Element type of a matrix handed to a mixed-precision call (library_types.h).
typedef enum cudaDataType_t {
  CUDA_R_16F = 2,    ///< IEEE half
  CUDA_C_16F = 6,
  CUDA_R_16BF = 14,  ///< bfloat16 (__nv_bfloat16)
  CUDA_C_16BF = 15,
  CUDA_R_32F = 0,    ///< float
  CUDA_C_32F = 4,
  CUDA_R_64F = 1,    ///< double
  CUDA_C_64F = 5,
  CUDA_R_8I = 3,
  CUDA_C_8I = 7,
  CUDA_R_8U = 8,
  CUDA_C_8U = 9,
  CUDA_R_32I = 10,
  CUDA_C_32I = 11,
  CUDA_R_32U = 12,
  CUDA_C_32U = 13,
} cudaDataType;
#endif

/// The precision a mixed-precision call computes (accumulates) in.
typedef enum {
  CUBLAS_COMPUTE_16F = 64,
  CUBLAS_COMPUTE_16F_PEDANTIC = 65,
  CUBLAS_COMPUTE_32F = 68,            ///< float accumulation (the usual choice for bf16 inputs)
  CUBLAS_COMPUTE_32F_PEDANTIC = 69,
  CUBLAS_COMPUTE_32F_FAST_16F = 74,
  CUBLAS_COMPUTE_32F_FAST_16BF = 75,
  CUBLAS_COMPUTE_32F_FAST_TF32 = 77,
  CUBLAS_COMPUTE_64F = 70,
  CUBLAS_COMPUTE_64F_PEDANTIC = 71,
  CUBLAS_COMPUTE_32I = 72,
  CUBLAS_COMPUTE_32I_PEDANTIC = 73,
} cublasComputeType_t;

/// Algorithm hint; the simulator has one algorithm and accepts every value.
typedef enum {
  CUBLAS_GEMM_DEFAULT = -1,
  CUBLAS_GEMM_DFALT = -1,
  CUBLAS_GEMM_DEFAULT_TENSOR_OP = 99,
  CUBLAS_GEMM_DFALT_TENSOR_OP = 99,
} cublasGemmAlgo_t;

/// C = alpha * op(A) * op(B) + beta * C with per-matrix element types, column-major (see
/// cublasSgemm for the shapes and leading dimensions).
///
/// The simulator supports, with a CUBLAS_COMPUTE_32F* compute type (`alpha` and `beta` then
/// point to floats): A and B both CUDA_R_16F with C CUDA_R_16F or CUDA_R_32F; A and B both
/// CUDA_R_16BF or both CUDA_R_32F with C CUDA_R_16BF or CUDA_R_32F. With CUBLAS_COMPUTE_16F
/// (`alpha` and `beta` point to __half): A, B and C all CUDA_R_16F. It computes in float (half
/// and bf16 inputs are exact in float; FAST_* compute types are computed in full float) and
/// rounds a half or bf16 C to nearest even, as cuBLAS does. Under CUBLAS_COMPUTE_16F a GPU may
/// round partial sums to half in an order cuBLAS does not specify; the simulator's float sums
/// are at least as accurate, and a partial sum beyond half's range (65504) that a GPU would
/// overflow to infinity stays finite here when the result is in range.
/// @return CUBLAS_STATUS_NOT_SUPPORTED for other type combinations, and as cublasSgemm for
///         invalid sizes or leading dimensions.
cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                            int m, int n, int k, const void* alpha, const void* A, cudaDataType Atype,
                            int lda, const void* B, cudaDataType Btype, int ldb, const void* beta, void* C,
                            cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                            cublasGemmAlgo_t algo);
/// cublasSgemm on half matrices: cublasGemmEx with every type CUDA_R_16F and CUBLAS_COMPUTE_16F.
cublasStatus_t cublasHgemm(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                           int k, const __half* alpha, const __half* A, int lda, const __half* B, int ldb,
                           const __half* beta, __half* C, int ldc);
/// `batchCount` cublasHgemm products; matrix i of A starts `i * strideA` elements after A
/// (likewise B and C).
cublasStatus_t cublasHgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                         int m, int n, int k, const __half* alpha, const __half* A, int lda,
                                         long long int strideA, const __half* B, int ldb, long long int strideB,
                                         const __half* beta, __half* C, int ldc, long long int strideC,
                                         int batchCount);
/// `batchCount` cublasGemmEx products; matrix i of A starts `i * strideA` elements after A
/// (likewise B and C). The same types are supported as for cublasGemmEx.
cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                          int m, int n, int k, const void* alpha, const void* A, cudaDataType Atype,
                                          int lda, long long int strideA, const void* B, cudaDataType Btype, int ldb,
                                          long long int strideB, const void* beta, void* C, cudaDataType Ctype,
                                          int ldc, long long int strideC, int batchCount,
                                          cublasComputeType_t computeType, cublasGemmAlgo_t algo);
