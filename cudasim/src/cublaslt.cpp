// The cuBLASLt subset (cublasLt.h): a plain matmul, D = alpha·op(A)·op(B) + beta·C, checked
// here and computed by the cuBLAS subset's cublasGemmEx (cublas.cpp) on an internal handle, so
// that both libraries validate operands, queue work and round half and bf16 the same way
// (blas_elements.hpp).
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <set>

#include "blas_elements.hpp"
#include "cublasLt.h"
#include "internal.hpp"

struct cublasLtContext {
  cublasHandle_t blas = nullptr;  // runs the computations; its stream and pointer mode set per call
  std::mutex mutex;               // one call at a time sets them
};

struct cublasLtMatmulDescOpaque_t {
  cublasComputeType_t compute_type;
  cudaDataType_t scale_type;
  cublasOperation_t transa = CUBLAS_OP_N;
  cublasOperation_t transb = CUBLAS_OP_N;
  cublasLtPointerMode_t pointer_mode = CUBLASLT_POINTER_MODE_HOST;
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  const void* bias = nullptr;     // m values, added to every column of D
  int32_t bias_type = -1;         // -1: D's type (the toolkit's default)
  void* aux = nullptr;            // GELU_AUX: the values before the GELU, D's type and layout
  int64_t aux_ld = 0;
};

struct cublasLtMatrixLayoutOpaque_t {
  cudaDataType type;
  uint64_t rows;
  uint64_t cols;
  int64_t ld;
};

/// The preference attributes, stored as given (defaults as in the toolkit's documentation).
struct cublasLtMatmulPreferenceOpaque_t {
  uint32_t search_mode = 0;  // CUBLASLT_SEARCH_BEST_FIT
  uint64_t max_workspace_bytes = 0;
  uint32_t reduction_scheme_mask = 0xff;  // every scheme
  uint32_t min_alignment[4] = {256, 256, 256, 256};  // A, B, C, D
  float max_waves_count = 0.0f;
  uint64_t impl_mask = ~uint64_t{0};
};

namespace cudasim::detail {
namespace {

std::mutex lt_handles_mutex;
std::set<const cublasLtContext*> lt_handles;

bool live(cublasLtHandle_t handle) {
  std::lock_guard<std::mutex> lock(lt_handles_mutex);
  return handle != nullptr && lt_handles.count(handle) != 0;
}

bool float_compute(cublasComputeType_t t) {
  return t == CUBLAS_COMPUTE_32F || t == CUBLAS_COMPUTE_32F_PEDANTIC || t == CUBLAS_COMPUTE_32F_FAST_16F ||
         t == CUBLAS_COMPUTE_32F_FAST_16BF || t == CUBLAS_COMPUTE_32F_FAST_TF32;
}

bool supported_type(cudaDataType t) { return t == CUDA_R_32F || t == CUDA_R_16BF || t == CUDA_R_16F; }

/// The bit of a cublasLtEpilogue_t that asks for the pre-activation in the AUX buffer (the
/// toolkit defines GELU_AUX as GELU | 128).
constexpr int kEpilogueAux = 128;

/// One matmul's epilogue, applied to D once the product is there (a host function on the stream).
struct Epilogue {
  cublasLtEpilogue_t kind;
  void* d;
  cudaDataType d_type;
  int m, n;
  int64_t ld;
  const void* bias;
  cudaDataType bias_type;
  void* aux;
  int64_t aux_ld;
};

/// GELU as the tanh approximation. The toolkit's header says only "GELU"; the approximate form
/// is the one that frameworks fuse into this epilogue (XLA's cuBLASLt rewrite matches it).
float gelu(float x) {
  const float inner = 0.7978845608028654f * (x + 0.044715f * x * x * x);  // sqrt(2/pi) (x + 0.044715 x^3)
  return 0.5f * x * (1.0f + std::tanh(inner));
}

/// Bias (per row of D), then the stored pre-activation (AUX), then RELU or GELU.
void apply_epilogue(void* data) {
  const Epilogue* e = static_cast<const Epilogue*>(data);
  const bool bias = (e->kind & CUBLASLT_EPILOGUE_BIAS) != 0;
  const bool relu = (e->kind & CUBLASLT_EPILOGUE_RELU) != 0, gelu_on = (e->kind & CUBLASLT_EPILOGUE_GELU) != 0;
  for (int j = 0; j < e->n; ++j) {
    for (int i = 0; i < e->m; ++i) {
      const std::size_t at = static_cast<std::size_t>(j) * static_cast<std::size_t>(e->ld) + i;
      float v = load_element(e->d, e->d_type, at);
      if (bias) v += load_element(e->bias, e->bias_type, i);
      if (e->aux != nullptr && (e->kind & kEpilogueAux))
        store_element(e->aux, e->d_type, static_cast<std::size_t>(j) * static_cast<std::size_t>(e->aux_ld) + i, v);
      if (relu) v = v > 0.0f ? v : 0.0f;
      if (gelu_on) v = gelu(v);
      store_element(e->d, e->d_type, at, v);
    }
  }
  delete e;
}

cublasStatus_t not_supported(const char* caller, const char* why) {
  report("%s: %s (CUBLAS_STATUS_NOT_SUPPORTED)", caller, why);
  return CUBLAS_STATUS_NOT_SUPPORTED;
}

/// Reads an attribute value of exactly `size` bytes.
template <class T>
bool read_attribute(const void* buf, std::size_t size, T& value) {
  if (buf == nullptr || size != sizeof(T)) return false;
  cudasim::detail::raw_memcpy(&value, buf, sizeof(T));
  return true;
}


/// What cublasLtMatmul and cublasLtMatmulAlgoGetHeuristic check of a matmul's descriptors:
/// CUBLAS_STATUS_SUCCESS with D's m x n and the inner dimension k, or the status (reported on
/// stderr, as `caller`'s) of what does not fit or is not supported.
cublasStatus_t check_matmul(const char* caller, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t Adesc,
                            cublasLtMatrixLayout_t Bdesc, cublasLtMatrixLayout_t Cdesc,
                            cublasLtMatrixLayout_t Ddesc, int& m, int& n, int& k) {
  if (desc == nullptr || Adesc == nullptr || Bdesc == nullptr || Cdesc == nullptr || Ddesc == nullptr)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (!float_compute(desc->compute_type) || desc->scale_type != CUDA_R_32F)
    return not_supported(caller, "the simulator supports a CUBLAS_COMPUTE_32F* compute type with a CUDA_R_32F scale type");
  if (Adesc->type != Bdesc->type || !supported_type(Adesc->type) || Cdesc->type != Ddesc->type ||
      !supported_type(Ddesc->type))
    return not_supported(caller, "the simulator supports A and B both CUDA_R_32F, both CUDA_R_16BF or both "
                                 "CUDA_R_16F, and C and D of one type, CUDA_R_32F, CUDA_R_16BF or CUDA_R_16F");
  for (const cublasLtMatrixLayoutOpaque_t* l : {Adesc, Bdesc, Cdesc, Ddesc})
    if (l->rows > INT_MAX || l->cols > INT_MAX || l->ld > INT_MAX)
      return not_supported(caller, "matrices of more than 2^31-1 rows, columns or leading dimension");
  m = static_cast<int>(Ddesc->rows);
  n = static_cast<int>(Ddesc->cols);
  const bool ta = desc->transa != CUBLAS_OP_N, tb = desc->transb != CUBLAS_OP_N;
  k = static_cast<int>(ta ? Adesc->rows : Adesc->cols);
  const uint64_t a_m = ta ? Adesc->cols : Adesc->rows;
  const uint64_t b_k = tb ? Bdesc->cols : Bdesc->rows, b_n = tb ? Bdesc->rows : Bdesc->cols;
  if (a_m != Ddesc->rows || b_k != static_cast<uint64_t>(k) || b_n != Ddesc->cols || Cdesc->rows != Ddesc->rows ||
      Cdesc->cols != Ddesc->cols) {
    report("%s: op(A) is %llux%d and op(B) %llux%llu, but C is %llux%llu and D %dx%d "
           "(CUBLAS_STATUS_INVALID_VALUE)",
           caller, static_cast<unsigned long long>(a_m), k, static_cast<unsigned long long>(b_k),
           static_cast<unsigned long long>(b_n), static_cast<unsigned long long>(Cdesc->rows),
           static_cast<unsigned long long>(Cdesc->cols), m, n);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace
}  // namespace cudasim::detail

using namespace cudasim::detail;

cublasStatus_t cublasLtCreate(cublasLtHandle_t* handle) {
  if (handle == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  auto* context = new cublasLtContext;
  const cublasStatus_t status = cublasCreate(&context->blas);  // loads the CBLAS
  if (status != CUBLAS_STATUS_SUCCESS) {
    delete context;
    return status;
  }
  std::lock_guard<std::mutex> lock(lt_handles_mutex);
  lt_handles.insert(context);
  *handle = context;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle) {
  {
    std::lock_guard<std::mutex> lock(lt_handles_mutex);
    if (handle == nullptr || lt_handles.erase(handle) == 0) return CUBLAS_STATUS_NOT_INITIALIZED;
  }
  const cublasStatus_t status = cublasDestroy(handle->blas);  // waits for queued work
  delete handle;
  return status;
}

const char* cublasLtGetStatusName(cublasStatus_t status) { return cublasGetStatusName(status); }
const char* cublasLtGetStatusString(cublasStatus_t status) { return cublasGetStatusString(status); }

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc, cublasComputeType_t compute_type,
                                        cudaDataType_t scale_type) {
  if (desc == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *desc = new cublasLtMatmulDescOpaque_t{compute_type, scale_type};
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
  delete desc;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute,
                                              const void* buf, size_t size) {
  if (desc == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  int32_t value = 0;  // every attribute the simulator takes is 32 bits wide
  const bool read = read_attribute(buf, size, value);
  switch (attribute) {
    case CUBLASLT_MATMUL_DESC_TRANSA:
    case CUBLASLT_MATMUL_DESC_TRANSB: {
      if (!read) return CUBLAS_STATUS_INVALID_VALUE;
      const auto op = static_cast<cublasOperation_t>(value);
      if (op != CUBLAS_OP_N && op != CUBLAS_OP_T && op != CUBLAS_OP_C) return CUBLAS_STATUS_INVALID_VALUE;
      (attribute == CUBLASLT_MATMUL_DESC_TRANSA ? desc->transa : desc->transb) = op;
      return CUBLAS_STATUS_SUCCESS;
    }
    case CUBLASLT_MATMUL_DESC_POINTER_MODE:
      if (!read) return CUBLAS_STATUS_INVALID_VALUE;
      if (value != CUBLASLT_POINTER_MODE_HOST && value != CUBLASLT_POINTER_MODE_DEVICE) {
        report("cublasLtMatmulDescSetAttribute: pointer mode %d is not supported by the simulator (host or "
               "device only) (CUBLAS_STATUS_NOT_SUPPORTED)", value);
        return CUBLAS_STATUS_NOT_SUPPORTED;
      }
      desc->pointer_mode = static_cast<cublasLtPointerMode_t>(value);
      return CUBLAS_STATUS_SUCCESS;
    case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE:
      if (!read) return CUBLAS_STATUS_INVALID_VALUE;
      desc->compute_type = static_cast<cublasComputeType_t>(value);
      return CUBLAS_STATUS_SUCCESS;
    case CUBLASLT_MATMUL_DESC_SCALE_TYPE:
      if (!read) return CUBLAS_STATUS_INVALID_VALUE;
      desc->scale_type = static_cast<cudaDataType_t>(value);
      return CUBLAS_STATUS_SUCCESS;
    case CUBLASLT_MATMUL_DESC_EPILOGUE:
      if (!read) return CUBLAS_STATUS_INVALID_VALUE;
      switch (value) {
        case CUBLASLT_EPILOGUE_DEFAULT:
        case CUBLASLT_EPILOGUE_RELU:
        case CUBLASLT_EPILOGUE_BIAS:
        case CUBLASLT_EPILOGUE_RELU_BIAS:
        case CUBLASLT_EPILOGUE_GELU:
        case CUBLASLT_EPILOGUE_GELU_BIAS:
        case CUBLASLT_EPILOGUE_GELU_AUX:
        case CUBLASLT_EPILOGUE_GELU_AUX_BIAS:
          desc->epilogue = static_cast<cublasLtEpilogue_t>(value);
          return CUBLAS_STATUS_SUCCESS;
      }
      report("cublasLtMatmulDescSetAttribute: epilogue %d is not supported by the simulator (DEFAULT, RELU, "
             "BIAS, RELU_BIAS, GELU, GELU_BIAS, GELU_AUX and GELU_AUX_BIAS are; the gradient epilogues are not) "
             "(CUBLAS_STATUS_NOT_SUPPORTED)", value);
      return CUBLAS_STATUS_NOT_SUPPORTED;
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER:
      return read_attribute(buf, size, desc->bias) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER:
      return read_attribute(buf, size, desc->aux) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD:
      return read_attribute(buf, size, desc->aux_ld) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
    case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE:
      if (!read) return CUBLAS_STATUS_INVALID_VALUE;
      if (!supported_type(static_cast<cudaDataType>(value))) {
        report("cublasLtMatmulDescSetAttribute: bias type %d is not supported by the simulator (CUDA_R_32F, "
               "CUDA_R_16BF or CUDA_R_16F) (CUBLAS_STATUS_NOT_SUPPORTED)", value);
        return CUBLAS_STATUS_NOT_SUPPORTED;
      }
      desc->bias_type = value;
      return CUBLAS_STATUS_SUCCESS;
    default:
      report("cublasLtMatmulDescSetAttribute: attribute %d is not supported by the simulator "
             "(CUBLAS_STATUS_NOT_SUPPORTED)", static_cast<int>(attribute));
      return CUBLAS_STATUS_NOT_SUPPORTED;
  }
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout, cudaDataType type, uint64_t rows,
                                          uint64_t cols, int64_t ld) {
  if (layout == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *layout = new cublasLtMatrixLayoutOpaque_t{type, rows, cols, ld};
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
  delete layout;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha, const void* A,
                              cublasLtMatrixLayout_t Adesc, const void* B, cublasLtMatrixLayout_t Bdesc,
                              const void* beta, const void* C, cublasLtMatrixLayout_t Cdesc, void* D,
                              cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t*, void*, size_t,
                              cudaStream_t stream) {
  if (!live(handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (alpha == nullptr || beta == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  int m = 0, n = 0, k = 0;
  const cublasStatus_t checked = check_matmul("cublasLtMatmul", desc, Adesc, Bdesc, Cdesc, Ddesc, m, n, k);
  if (checked != CUBLAS_STATUS_SUCCESS) return checked;
  std::lock_guard<std::mutex> lock(handle->mutex);
  cublasSetStream(handle->blas, stream);
  cublasSetPointerMode(handle->blas, static_cast<cublasPointerMode_t>(desc->pointer_mode));
  if (C != D && m > 0 && n > 0) {
    // Out of place: D starts as a copy of C (skipped when beta is a host 0: C is then not read).
    const bool reads_c = desc->pointer_mode == CUBLASLT_POINTER_MODE_DEVICE || *static_cast<const float*>(beta) != 0.0f;
    if (reads_c) {
      if (Cdesc->ld != Ddesc->ld)
        return not_supported("cublasLtMatmul", "C and D in different buffers must have the same leading dimension");
      const std::size_t row_bytes = static_cast<std::size_t>(m) * element_bytes(Ddesc->type);
      const std::size_t pitch = static_cast<std::size_t>(Ddesc->ld) * element_bytes(Ddesc->type);
      if (Ddesc->ld < m ||
          cudaMemcpy2DAsync(D, pitch, C, pitch, row_bytes, n, cudaMemcpyDeviceToDevice, stream) != cudaSuccess) {
        report("cublasLtMatmul: C (%p) or D (%p) is not device memory of the layout's size "
               "(CUBLAS_STATUS_INVALID_VALUE)", C, D);
        return CUBLAS_STATUS_INVALID_VALUE;
      }
    }
  }
  const bool bias = (desc->epilogue & CUBLASLT_EPILOGUE_BIAS) != 0;
  const bool aux = (desc->epilogue & cudasim::detail::kEpilogueAux) != 0;
  if (bias && desc->bias == nullptr) {
    report("cublasLtMatmul: the epilogue adds a bias but CUBLASLT_MATMUL_DESC_BIAS_POINTER is not set "
           "(CUBLAS_STATUS_INVALID_VALUE)");
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (aux && (desc->aux == nullptr || desc->aux_ld < m)) {
    report("cublasLtMatmul: a GELU_AUX epilogue needs CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER and an AUX_LD of at "
           "least m = %d (CUBLAS_STATUS_INVALID_VALUE)", m);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  const cublasStatus_t product =
      cublasGemmEx(handle->blas, desc->transa, desc->transb, m, n, k, alpha, A, Adesc->type,
                   static_cast<int>(Adesc->ld), B, Bdesc->type, static_cast<int>(Bdesc->ld), beta, D, Ddesc->type,
                   static_cast<int>(Ddesc->ld), desc->compute_type, CUBLAS_GEMM_DEFAULT);
  if (product != CUBLAS_STATUS_SUCCESS || desc->epilogue == CUBLASLT_EPILOGUE_DEFAULT || m == 0 || n == 0)
    return product;
  // The epilogue runs after the product, in stream order, on the product's values.
  auto* job = new cudasim::detail::Epilogue{desc->epilogue, D, Ddesc->type, m, n, Ddesc->ld, desc->bias,
                                            desc->bias_type < 0 ? Ddesc->type : static_cast<cudaDataType>(desc->bias_type),
                                            desc->aux, desc->aux_ld};
  if (cudaLaunchHostFunc(stream, cudasim::detail::apply_epilogue, job) != cudaSuccess) {
    delete job;
    return CUBLAS_STATUS_EXECUTION_FAILED;
  }
  return CUBLAS_STATUS_SUCCESS;
}

namespace {
/// Where attribute `attr` of a preference lives, and its size; null for an unknown attribute.
void* preference_field(cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr, size_t& size) {
  switch (attr) {
    case CUBLASLT_MATMUL_PREF_SEARCH_MODE: size = sizeof(pref->search_mode); return &pref->search_mode;
    case CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES:
      size = sizeof(pref->max_workspace_bytes);
      return &pref->max_workspace_bytes;
    case CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK:
      size = sizeof(pref->reduction_scheme_mask);
      return &pref->reduction_scheme_mask;
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES:
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES:
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES:
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES:
      size = sizeof(uint32_t);
      return &pref->min_alignment[attr - CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES];
    case CUBLASLT_MATMUL_PREF_MAX_WAVES_COUNT: size = sizeof(pref->max_waves_count); return &pref->max_waves_count;
    case CUBLASLT_MATMUL_PREF_IMPL_MASK: size = sizeof(pref->impl_mask); return &pref->impl_mask;
  }
  return nullptr;
}

/// preference_field for the attribute calls: CUBLAS_STATUS_NOT_SUPPORTED (reported as
/// `caller`'s) for an attribute the simulator does not know.
cublasStatus_t find_preference_field(const char* caller, cublasLtMatmulPreference_t pref,
                                     cublasLtMatmulPreferenceAttributes_t attr, size_t& size, void*& field) {
  if (pref == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  field = preference_field(pref, attr, size);
  if (field != nullptr) return CUBLAS_STATUS_SUCCESS;
  report("%s: attribute %d is not supported by the simulator (CUBLAS_STATUS_NOT_SUPPORTED)", caller,
         static_cast<int>(attr));
  return CUBLAS_STATUS_NOT_SUPPORTED;
}
}  // namespace

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* pref) {
  if (pref == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *pref = new cublasLtMatmulPreferenceOpaque_t;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
  delete pref;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr, const void* buf,
                                                    size_t sizeInBytes) {
  size_t size = 0;
  void* field = nullptr;
  const cublasStatus_t found = find_preference_field("cublasLtMatmulPreferenceSetAttribute", pref, attr, size, field);
  if (found != CUBLAS_STATUS_SUCCESS) return found;
  if (buf == nullptr || sizeInBytes != size) return CUBLAS_STATUS_INVALID_VALUE;
  cudasim::detail::raw_memcpy(field, buf, size);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceGetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr, void* buf,
                                                    size_t sizeInBytes, size_t* sizeWritten) {
  size_t size = 0;
  void* field = nullptr;
  const cublasStatus_t found = find_preference_field("cublasLtMatmulPreferenceGetAttribute", pref, attr, size, field);
  if (found != CUBLAS_STATUS_SUCCESS) return found;
  if (sizeInBytes == 0) {
    if (sizeWritten == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *sizeWritten = size;
    return CUBLAS_STATUS_SUCCESS;
  }
  if (buf == nullptr || sizeInBytes != size) return CUBLAS_STATUS_INVALID_VALUE;
  cudasim::detail::raw_memcpy(buf, field, size);
  if (sizeWritten != nullptr) *sizeWritten = size;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t operationDesc,
                                              cublasLtMatrixLayout_t Adesc, cublasLtMatrixLayout_t Bdesc,
                                              cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
                                              cublasLtMatmulPreference_t preference, int requestedAlgoCount,
                                              cublasLtMatmulHeuristicResult_t heuristicResultsArray[],
                                              int* returnAlgoCount) {
  if (!live(lightHandle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (preference == nullptr || requestedAlgoCount <= 0 || heuristicResultsArray == nullptr ||
      returnAlgoCount == nullptr)
    return CUBLAS_STATUS_INVALID_VALUE;
  *returnAlgoCount = 0;
  int m = 0, n = 0, k = 0;
  const cublasStatus_t checked =
      check_matmul("cublasLtMatmulAlgoGetHeuristic", operationDesc, Adesc, Bdesc, Cdesc, Ddesc, m, n, k);
  if (checked != CUBLAS_STATUS_SUCCESS) return checked;
  // The one algorithm: it needs no workspace, so it fits every workspace limit.
  cublasLtMatmulHeuristicResult_t& result = heuristicResultsArray[0];
  cudasim::detail::raw_memset(&result, 0, sizeof(result));
  result.workspaceSize = 0;
  result.state = CUBLAS_STATUS_SUCCESS;
  result.wavesCount = 1.0f;
  *returnAlgoCount = 1;
  return CUBLAS_STATUS_SUCCESS;
}
