/// @file cublasLt.h
/// @brief The simulator's stand-in for cuBLASLt: enough of the API for a plain matmul,
/// D = alpha·op(A)·op(B) + beta·C, computed on the CPU by the same CBLAS as cublas_v2.h.
///
/// Supported: column-major layouts (cublasLtMatrixLayoutCreate; the layout attributes, such as
/// row-major order or batches, are not provided), A and B both CUDA_R_32F, both CUDA_R_16BF or
/// both CUDA_R_16F, C and D CUDA_R_32F, CUDA_R_16BF or CUDA_R_16F (the same type; a narrow D is
/// rounded to nearest even from the float result), a CUBLAS_COMPUTE_32F* compute type with
/// CUDA_R_32F scale type, the descriptor attributes TRANSA, TRANSB, POINTER_MODE (host or
/// device), COMPUTE_TYPE, SCALE_TYPE, EPILOGUE (bias, RELU, GELU and GELU_AUX: see
/// cublasLtEpilogue_t) with BIAS_POINTER, BIAS_DATA_TYPE, EPILOGUE_AUX_POINTER and _LD. D may be C
/// or another buffer with C's layout. `algo` may be null (there is one algorithm) and the
/// workspace is not used. The heuristics API (cublasLtMatmulPreference*, with every preference
/// attribute stored and none changing the choice, and cublasLtMatmulAlgoGetHeuristic) finds
/// that one algorithm, needing no workspace, for every matmul the simulator supports. Other
/// types and attributes return CUBLAS_STATUS_NOT_SUPPORTED with a line on stderr; functions not
/// declared here (transforms, layout attributes, cublasLtMatmulAlgoInit and the other
/// lower-level algorithm calls) are a compile error. The call is queued on `stream`, in order
/// with kernels and copies there.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cublas_v2.h>

struct cublasLtContext;
/// A cuBLASLt context (cublasLtCreate / cublasLtDestroy).
typedef struct cublasLtContext* cublasLtHandle_t;

struct cublasLtMatmulDescOpaque_t;
/// What a matmul computes: compute and scale types, transposes, pointer mode.
typedef cublasLtMatmulDescOpaque_t* cublasLtMatmulDesc_t;

struct cublasLtMatrixLayoutOpaque_t;
/// A column-major matrix: element type, rows, columns, leading dimension.
typedef cublasLtMatrixLayoutOpaque_t* cublasLtMatrixLayout_t;

/// An algorithm choice; the simulator has one, so any value (or null) means it.
typedef struct {
  uint64_t data[8];
} cublasLtMatmulAlgo_t;

/// Where alpha and beta live (values as in the CUDA toolkit).
typedef enum {
  CUBLASLT_POINTER_MODE_HOST = CUBLAS_POINTER_MODE_HOST,
  CUBLASLT_POINTER_MODE_DEVICE = CUBLAS_POINTER_MODE_DEVICE,
} cublasLtPointerMode_t;

/// Matmul descriptor attributes (values as in the CUDA toolkit); the simulator accepts those
/// listed in the file comment.
typedef enum {
  CUBLASLT_MATMUL_DESC_COMPUTE_TYPE = 0,
  CUBLASLT_MATMUL_DESC_SCALE_TYPE = 1,
  CUBLASLT_MATMUL_DESC_POINTER_MODE = 2,
  CUBLASLT_MATMUL_DESC_TRANSA = 3,
  CUBLASLT_MATMUL_DESC_TRANSB = 4,
  CUBLASLT_MATMUL_DESC_TRANSC = 5,
  CUBLASLT_MATMUL_DESC_FILL_MODE = 6,
  CUBLASLT_MATMUL_DESC_EPILOGUE = 7,
  CUBLASLT_MATMUL_DESC_BIAS_POINTER = 8,            ///< const void*: m values, D's type by default
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER = 11,   ///< void*: where GELU_AUX keeps the pre-GELU values
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD = 12,        ///< int64_t: its leading dimension (>= m)
  CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE = 26,         ///< int32_t: CUDA_R_32F, CUDA_R_16BF or CUDA_R_16F
} cublasLtMatmulDescAttributes_t;

/// What is applied to the result, in this order: a bias added to every column (BIAS), the
/// value kept in the AUX buffer (AUX), then RELU or GELU (the tanh approximation: the toolkit's
/// header does not say which GELU; frameworks fuse the approximate one into this epilogue).
/// The gradient epilogues (DRELU, DGELU, BGRAD*) are not supported.
typedef enum {
  CUBLASLT_EPILOGUE_DEFAULT = 1,
  CUBLASLT_EPILOGUE_RELU = 2,
  CUBLASLT_EPILOGUE_BIAS = 4,
  CUBLASLT_EPILOGUE_RELU_BIAS = 6,
  CUBLASLT_EPILOGUE_GELU = 32,
  CUBLASLT_EPILOGUE_GELU_BIAS = 36,
  CUBLASLT_EPILOGUE_GELU_AUX = 160,
  CUBLASLT_EPILOGUE_GELU_AUX_BIAS = 164,
} cublasLtEpilogue_t;

struct cublasLtMatmulPreferenceOpaque_t;
/// What cublasLtMatmulAlgoGetHeuristic may choose from (workspace limit, alignments, ...).
typedef cublasLtMatmulPreferenceOpaque_t* cublasLtMatmulPreference_t;

/// Preference attributes (values and value types as in the CUDA toolkit). The simulator stores
/// them all; none changes its one algorithm.
typedef enum {
  CUBLASLT_MATMUL_PREF_SEARCH_MODE = 0,                ///< uint32_t
  CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1,        ///< uint64_t
  CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK = 3,      ///< uint32_t
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES = 5,      ///< uint32_t
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES = 6,      ///< uint32_t
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES = 7,      ///< uint32_t
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES = 8,      ///< uint32_t
  CUBLASLT_MATMUL_PREF_MAX_WAVES_COUNT = 9,            ///< float
  CUBLASLT_MATMUL_PREF_IMPL_MASK = 12,                 ///< uint64_t
} cublasLtMatmulPreferenceAttributes_t;

/// One algorithm found by cublasLtMatmulAlgoGetHeuristic (layout as in the CUDA toolkit).
typedef struct {
  cublasLtMatmulAlgo_t algo;  ///< pass to cublasLtMatmul
  size_t workspaceSize;       ///< workspace it needs: 0 in the simulator
  cublasStatus_t state;       ///< CUBLAS_STATUS_SUCCESS when the other fields are valid
  float wavesCount;           ///< device utilisation estimate: 1.0 in the simulator
  int reserved[4];
} cublasLtMatmulHeuristicResult_t;

cublasStatus_t cublasLtCreate(cublasLtHandle_t* handle);
/// Waits for all queued device work and releases the handle.
cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle);
const char* cublasLtGetStatusName(cublasStatus_t status);
const char* cublasLtGetStatusString(cublasStatus_t status);

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc, cublasComputeType_t compute_type,
                                        cudaDataType_t scale_type);
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc);
/// CUBLAS_STATUS_INVALID_VALUE when `buf` is null or `size` is not the attribute's size.
cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute,
                                              const void* buf, size_t size);

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout, cudaDataType type, uint64_t rows,
                                          uint64_t cols, int64_t ld);
cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout);

/// D = alpha·op(A)·op(B) + beta·C, queued on `stream`. op(A) is m x k and op(B) k x n, where
/// D (and C) are m x n; a shape that does not agree is CUBLAS_STATUS_INVALID_VALUE.
cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha, const void* A,
                              cublasLtMatrixLayout_t Adesc, const void* B, cublasLtMatrixLayout_t Bdesc,
                              const void* beta, const void* C, cublasLtMatrixLayout_t Cdesc, void* D,
                              cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t* algo, void* workspace,
                              size_t workspace_bytes, cudaStream_t stream);

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* pref);
cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref);
/// CUBLAS_STATUS_INVALID_VALUE when `buf` is null or `sizeInBytes` is not the attribute's size.
cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr, const void* buf,
                                                    size_t sizeInBytes);
/// As in the toolkit: with `sizeInBytes` 0, `*sizeWritten` is the attribute's size.
cublasStatus_t cublasLtMatmulPreferenceGetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr, void* buf,
                                                    size_t sizeInBytes, size_t* sizeWritten);

/// Finds the algorithms for a matmul: one, with state CUBLAS_STATUS_SUCCESS and workspaceSize
/// 0, when the simulator supports the matmul (as cublasLtMatmul checks it); none, with
/// CUBLAS_STATUS_NOT_SUPPORTED and a line on stderr, when it does not.
/// CUBLAS_STATUS_INVALID_VALUE when `requestedAlgoCount` is not positive.
cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t operationDesc,
                                              cublasLtMatrixLayout_t Adesc, cublasLtMatrixLayout_t Bdesc,
                                              cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
                                              cublasLtMatmulPreference_t preference, int requestedAlgoCount,
                                              cublasLtMatmulHeuristicResult_t heuristicResultsArray[],
                                              int* returnAlgoCount);
