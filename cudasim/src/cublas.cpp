// The cuBLAS subset (cublas_v2.h), computed by a CBLAS on the CPU.
//
// Each call validates its arguments as cuBLAS does, then queues the computation on the
// handle's stream, so it runs in order with kernels and copies on that stream and overlaps
// with the host like the real library. Scalars in host pointer mode are copied before the call
// returns; scalar results in host pointer mode make the call wait for its stream, as cuBLAS
// does. Operands must be memory a GPU kernel could touch (device or pinned host memory): a
// pageable host pointer is reported and faults the context, as the kernel behind the call
// would on a GPU.
//
// The CBLAS is loaded (dlopen) on the first cublasCreate, not linked. A linked OpenBLAS starts
// its thread pool when the program starts, and its idle threads spin (sched_yield) for about a
// tenth of a second at start-up and after every call before they sleep: on a 2-core machine that
// is one core taken from the simulator's workers in every program, most of which never call
// cuBLAS (the 4M-element vector add of cudasim_bench ran at half speed for its first 70 ms).
// Before loading it, OPENBLAS_THREAD_TIMEOUT (unless already set) is set to its minimum, so that
// idle OpenBLAS threads go to sleep at once.
#include <cblas.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "blas_elements.hpp"
#include "cublas_v2.h"
#include "cuda_bf16.h"
#include "internal.hpp"

struct cublasContext {
  cudaStream_t stream = nullptr;
  cublasPointerMode_t pointer_mode = CUBLAS_POINTER_MODE_HOST;
  cublasMath_t math_mode = CUBLAS_DEFAULT_MATH;
};

namespace cudasim::detail {
namespace {

std::mutex handles_mutex;
std::set<const cublasContext*> live_handles;

/// The CBLAS functions the subset needs, found in the libraries CMake's FindBLAS and FindLAPACK
/// named (CUDASIM_BLAS_LIBRARIES: paths separated by ';').
struct Cblas {
  decltype(&::cblas_sgemm) sgemm = nullptr;
  decltype(&::cblas_dgemm) dgemm = nullptr;
  decltype(&::cblas_sgemv) sgemv = nullptr;
  decltype(&::cblas_dgemv) dgemv = nullptr;
  decltype(&::cblas_saxpy) saxpy = nullptr;
  decltype(&::cblas_daxpy) daxpy = nullptr;
  decltype(&::cblas_sdot) sdot = nullptr;
  decltype(&::cblas_ddot) ddot = nullptr;
  decltype(&::cblas_snrm2) snrm2 = nullptr;
  decltype(&::cblas_dnrm2) dnrm2 = nullptr;
  decltype(&::cblas_sasum) sasum = nullptr;
  decltype(&::cblas_dasum) dasum = nullptr;
  // LAPACK's LU factorisation and the inverse from it (Fortran calling convention), when a
  // library has LAPACK (OpenBLAS, or a reference liblapack); optional, so that a BLAS without
  // it still serves everything else.
  void (*sgetrf)(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info) = nullptr;
  void (*dgetrf)(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info) = nullptr;
  void (*sgetri)(const int* n, float* a, const int* lda, const int* ipiv, float* work, const int* lwork,
                 int* info) = nullptr;
  void (*dgetri)(const int* n, double* a, const int* lda, const int* ipiv, double* work, const int* lwork,
                 int* info) = nullptr;
};
Cblas loaded_cblas;

/// Loads the CBLAS once; on failure returns false and says why in `error` (every time).
bool load_cblas(std::string& error) {
  static std::once_flag once;
  static std::string failure;
  std::call_once(once, [] {
    setenv("OPENBLAS_THREAD_TIMEOUT", "4", /*overwrite=*/0);
    std::vector<void*> libraries;
    const std::string paths = CUDASIM_BLAS_LIBRARIES;
    for (std::size_t start = 0; start <= paths.size();) {
      const std::size_t end = std::min(paths.find(';', start), paths.size());
      const std::string path = paths.substr(start, end - start);
      start = end + 1;
      if (path.empty()) continue;
      void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
      if (library == nullptr) {
        failure = dlerror();
        return;
      }
      libraries.push_back(library);
    }
    const auto find_optional = [&](auto& function, const char* name) {
      for (void* library : libraries)
        if (void* symbol = dlsym(library, name)) {
          function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(symbol);
          return true;
        }
      return false;
    };
    const auto find = [&](auto& function, const char* name) {
      if (!find_optional(function, name) && failure.empty())
        failure = format_string("%s not found in %s", name, CUDASIM_BLAS_LIBRARIES);
    };
    Cblas c;
    find(c.sgemm, "cblas_sgemm");
    find(c.dgemm, "cblas_dgemm");
    find(c.sgemv, "cblas_sgemv");
    find(c.dgemv, "cblas_dgemv");
    find(c.saxpy, "cblas_saxpy");
    find(c.daxpy, "cblas_daxpy");
    find(c.sdot, "cblas_sdot");
    find(c.ddot, "cblas_ddot");
    find(c.snrm2, "cblas_snrm2");
    find(c.dnrm2, "cblas_dnrm2");
    find(c.sasum, "cblas_sasum");
    find(c.dasum, "cblas_dasum");
    find_optional(c.sgetrf, "sgetrf_");
    find_optional(c.dgetrf, "dgetrf_");
    find_optional(c.sgetri, "sgetri_");
    find_optional(c.dgetri, "dgetri_");
    if (failure.empty()) loaded_cblas = c;
  });
  error = failure;
  return failure.empty();
}

/// The loaded CBLAS. Only computations queued through a live handle call it, and a handle
/// exists only once load_cblas succeeded.
const Cblas& cblas() { return loaded_cblas; }

/// The handle's state, copied under the lock; false for a null or destroyed handle.
bool lookup(cublasHandle_t handle, cublasContext& state) {
  if (handle == nullptr) return false;
  std::lock_guard<std::mutex> lock(handles_mutex);
  if (live_handles.count(handle) == 0) return false;
  state = *handle;
  return true;
}

bool valid_operation(cublasOperation_t op) {
  return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C;
}

CBLAS_TRANSPOSE to_cblas(cublasOperation_t op) { return op == CUBLAS_OP_N ? CblasNoTrans : CblasTrans; }

const char* op_name(cublasOperation_t op) {
  switch (op) {
    case CUBLAS_OP_N: return "CUBLAS_OP_N";
    case CUBLAS_OP_T: return "CUBLAS_OP_T";
    case CUBLAS_OP_C: return "CUBLAS_OP_C";
    default: return "an unsupported cublasOperation_t";
  }
}

cublasStatus_t invalid(const char* api, const std::string& why) {
  report("%s: %s (CUBLAS_STATUS_INVALID_VALUE)", api, why.c_str());
  return CUBLAS_STATUS_INVALID_VALUE;
}

/// One operand of a call: where it starts and the last byte the call touches.
struct Operand {
  const char* name;
  const void* first;
  const void* last;
};

template <class T>
Operand matrix(const char* name, const T* a, int rows, int cols, int ld) {
  const long long span = rows > 0 && cols > 0 ? static_cast<long long>(cols - 1) * ld + rows - 1 : 0;
  return {name, a, a + span};
}

template <class T>
Operand vector_operand(const char* name, const T* x, int n, int inc) {
  const long long step = inc < 0 ? -static_cast<long long>(inc) : inc;
  return {name, x, x + (n > 0 ? static_cast<long long>(n - 1) * step : 0)};
}

Operand scalar(const char* name, const void* p) { return {name, p, p}; }

/// What a call costs on the modelled timeline (cudasim/timeline.hpp): its FLOPs and the bytes
/// it must move at least once (model_library_call).
struct LibraryCost {
  std::uint64_t flops = 0;
  std::uint64_t bytes = 0;
  bool tensor_cores = false;
};

/// A GEMM's cost: 2mnk FLOPs, A and B read and C written once (read too when `reads_c`: beta
/// may be non-zero), per batch.
LibraryCost gemm_cost(int m, int n, int k, int batch, std::size_t ab_element, std::size_t c_element, bool tensor,
                      bool reads_c) {
  const auto M = static_cast<std::uint64_t>(m), N = static_cast<std::uint64_t>(n), K = static_cast<std::uint64_t>(k);
  const auto B = static_cast<std::uint64_t>(batch);
  const std::uint64_t c_passes = reads_c ? 2 : 1;
  return {2 * M * N * K * B, ((M * K + K * N) * ab_element + c_passes * M * N * c_element) * B, tensor};
}

/// Queues `work` on the handle's stream, or a fault instead of it when an operand is not
/// memory a GPU kernel could access. Returns the status the call returns.
template <class Work>
cublasStatus_t submit(const char* api, const cublasContext& h, std::initializer_list<Operand> operands,
                      Work work, bool wait = false, LibraryCost cost = {}) {
  if (sticky_error() != cudaSuccess) return CUBLAS_STATUS_EXECUTION_FAILED;
  std::string problem;
  for (const Operand& o : operands) {
    if (o.name == nullptr) continue;  // not applicable to this call
    if (o.first == nullptr) {
      problem = format_string("%s is a null pointer", o.name);
    } else if (!kernel_accessible(o.first) || !kernel_accessible(o.last)) {
      problem = format_string("%s (%p) is not device memory: cuBLAS runs on the GPU and can only "
                              "read buffers from cudaMalloc (copy host data there first)",
                              o.name, o.first);
    } else {
      continue;
    }
    break;
  }
  std::function<void()> task;
  if (problem.empty()) {
    task = [api, cost, work = std::move(work)] {
      work();
      charge_operation("library", api,
                       model_library_call(cost.flops, cost.bytes, cost.tensor_cores, replaying_graph(), modelled_gpu())
                           .total_ns);
    };
  } else {
    task = [api, problem] {
      report("illegal memory access in %s: %s", api, problem.c_str());
      set_sticky_error(cudaErrorIllegalAddress);
    };
  }
  const cudaError_t queued = wait ? run_synchronously(h.stream, std::move(task))
                                  : enqueue(h.stream, std::move(task));
  if (queued != cudaSuccess) {
    report("%s: the handle's stream is not a valid stream (destroyed?)", api);
    return CUBLAS_STATUS_EXECUTION_FAILED;
  }
  if (wait && sticky_error() != cudaSuccess) return CUBLAS_STATUS_EXECUTION_FAILED;
  return CUBLAS_STATUS_SUCCESS;
}

/// A scalar argument: its value now in host pointer mode, else the device address to read
/// when the work runs.
template <class T>
struct Scalar {
  T value{};
  const T* device = nullptr;
  T get() const { return device ? *device : value; }
  /// Whether the value may be non-zero when the call runs (one in device memory may be).
  bool may_be_nonzero() const { return device != nullptr || value != T(0); }
};

template <class T>
Scalar<T> take_scalar(const cublasContext& h, const T* p) {
  Scalar<T> s;
  if (h.pointer_mode == CUBLAS_POINTER_MODE_DEVICE) {
    s.device = p;
  } else {
    s.value = *p;
  }
  return s;
}

/// A scalar operand: device memory in device pointer mode, not applicable in host mode.
template <class T>
Operand scalar_operand(const cublasContext& h, const char* name, const T* p) {
  return h.pointer_mode == CUBLAS_POINTER_MODE_DEVICE ? scalar(name, p) : Operand{nullptr, nullptr, nullptr};
}

template <class T>
void zero_matrix(T* c, int m, int n, int ldc) {
  for (int j = 0; j < n; ++j) std::fill(c + static_cast<long long>(j) * ldc, c + static_cast<long long>(j) * ldc + m, T(0));
}

template <class T>
cublasStatus_t check_gemm(const char* api, cublasOperation_t transa, cublasOperation_t transb, int m,
                          int n, int k, int lda, int ldb, int ldc) {
  if (!valid_operation(transa) || !valid_operation(transb))
    return invalid(api, format_string("transa/transb must be CUBLAS_OP_N, CUBLAS_OP_T or CUBLAS_OP_C "
                                      "(got %d and %d)", transa, transb));
  if (m < 0 || n < 0 || k < 0) return invalid(api, format_string("m=%d, n=%d, k=%d must not be negative", m, n, k));
  const int a_rows = transa == CUBLAS_OP_N ? m : k;
  const int b_rows = transb == CUBLAS_OP_N ? k : n;
  if (lda < std::max(1, a_rows))
    return invalid(api, format_string("lda=%d is smaller than the %d rows of A (transa=%s)", lda, a_rows, op_name(transa)));
  if (ldb < std::max(1, b_rows))
    return invalid(api, format_string("ldb=%d is smaller than the %d rows of B (transb=%s)", ldb, b_rows, op_name(transb)));
  if (ldc < std::max(1, m)) return invalid(api, format_string("ldc=%d is smaller than the m=%d rows of C", ldc, m));
  return CUBLAS_STATUS_SUCCESS;
}

void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, float alpha, const float* a,
          int lda, const float* b, int ldb, float beta, float* c, int ldc) {
  if (beta == 0.0f) zero_matrix(c, m, n, ldc);  // cuBLAS does not read C when beta is 0
  if (k == 0 || alpha == 0.0f) {
    if (beta != 0.0f && beta != 1.0f)
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) c[static_cast<long long>(j) * ldc + i] *= beta;
    return;
  }
  cblas().sgemm(CblasColMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, double alpha, const double* a,
          int lda, const double* b, int ldb, double beta, double* c, int ldc) {
  if (beta == 0.0) zero_matrix(c, m, n, ldc);
  if (k == 0 || alpha == 0.0) {
    if (beta != 0.0 && beta != 1.0)
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) c[static_cast<long long>(j) * ldc + i] *= beta;
    return;
  }
  cblas().dgemm(CblasColMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

template <class T>
cublasStatus_t gemm_call(const char* api, cublasHandle_t handle, cublasOperation_t transa,
                         cublasOperation_t transb, int m, int n, int k, const T* alpha, const T* A,
                         int lda, long long stride_a, const T* B, int ldb, long long stride_b,
                         const T* beta, T* C, int ldc, long long stride_c, int batch) {
  cublasContext h;
  if (!lookup(handle, h)) return CUBLAS_STATUS_NOT_INITIALIZED;
  const cublasStatus_t status = check_gemm<T>(api, transa, transb, m, n, k, lda, ldb, ldc);
  if (status != CUBLAS_STATUS_SUCCESS) return status;
  if (batch < 0) return invalid(api, format_string("batchCount=%d must not be negative", batch));
  if (m == 0 || n == 0 || batch == 0) return CUBLAS_STATUS_SUCCESS;  // nothing to compute
  if (alpha == nullptr || beta == nullptr) return invalid(api, "alpha and beta must not be null");
  const Scalar<T> a_scalar = take_scalar(h, alpha);
  const Scalar<T> b_scalar = take_scalar(h, beta);
  const int a_rows = transa == CUBLAS_OP_N ? m : k, a_cols = transa == CUBLAS_OP_N ? k : m;
  const int b_rows = transb == CUBLAS_OP_N ? k : n, b_cols = transb == CUBLAS_OP_N ? n : k;
  const T* last_a = A + (batch - 1) * stride_a;
  const T* last_b = B + (batch - 1) * stride_b;
  T* last_c = C + (batch - 1) * stride_c;
  const bool reads_ab = k > 0;
  const Operand none{nullptr, nullptr, nullptr};
  return submit(
      api, h,
      {reads_ab ? matrix("A", A, a_rows, a_cols, lda) : none,
       reads_ab ? matrix("A (last batch)", last_a, a_rows, a_cols, lda) : none,
       reads_ab ? matrix("B", B, b_rows, b_cols, ldb) : none,
       reads_ab ? matrix("B (last batch)", last_b, b_rows, b_cols, ldb) : none,
       matrix("C", C, m, n, ldc), matrix("C (last batch)", last_c, m, n, ldc),
       scalar_operand(h, "alpha", alpha), scalar_operand(h, "beta", beta)},
      [=] {
        const T a_value = a_scalar.get(), b_value = b_scalar.get();
        for (int i = 0; i < batch; ++i)
          gemm(to_cblas(transa), to_cblas(transb), m, n, k, a_value, A + i * stride_a, lda,
               B + i * stride_b, ldb, b_value, C + i * stride_c, ldc);
      },
      false, gemm_cost(m, n, k, batch, sizeof(T), sizeof(T), false, b_scalar.may_be_nonzero()));
}

/// Level-1 reductions: the result goes to a host pointer (the call waits) or a device pointer.
template <class T, class Compute>
cublasStatus_t reduction_call(const char* api, cublasHandle_t handle, std::initializer_list<Operand> inputs,
                              T* result, bool empty, Compute compute) {
  cublasContext h;
  if (!lookup(handle, h)) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (result == nullptr) return invalid(api, "result must not be null");
  const Operand none{nullptr, nullptr, nullptr};
  std::vector<Operand> operands;
  if (!empty) operands.assign(inputs.begin(), inputs.end());
  const bool device_result = h.pointer_mode == CUBLAS_POINTER_MODE_DEVICE;
  const Operand out = device_result ? scalar("result", result) : none;
  const Operand in0 = operands.size() > 0 ? operands[0] : none;
  const Operand in1 = operands.size() > 1 ? operands[1] : none;
  return submit(api, h, {in0, in1, out},
                [=] { *result = empty ? T(0) : compute(); }, !device_result);
}

// The CBLAS level-1 and level-2 routine of each precision, chosen by overload.
void cblas_gemv(CBLAS_TRANSPOSE t, int m, int n, float a, const float* A, int lda, const float* x, int incx,
                float b, float* y, int incy) {
  cblas().sgemv(CblasColMajor, t, m, n, a, A, lda, x, incx, b, y, incy);
}
void cblas_gemv(CBLAS_TRANSPOSE t, int m, int n, double a, const double* A, int lda, const double* x, int incx,
                double b, double* y, int incy) {
  cblas().dgemv(CblasColMajor, t, m, n, a, A, lda, x, incx, b, y, incy);
}
void cblas_axpy(int n, float a, const float* x, int incx, float* y, int incy) { cblas().saxpy(n, a, x, incx, y, incy); }
void cblas_axpy(int n, double a, const double* x, int incx, double* y, int incy) { cblas().daxpy(n, a, x, incx, y, incy); }
float cblas_dot(int n, const float* x, int incx, const float* y, int incy) { return cblas().sdot(n, x, incx, y, incy); }
double cblas_dot(int n, const double* x, int incx, const double* y, int incy) { return cblas().ddot(n, x, incx, y, incy); }
float cblas_nrm2(int n, const float* x, int incx) { return cblas().snrm2(n, x, incx); }
double cblas_nrm2(int n, const double* x, int incx) { return cblas().dnrm2(n, x, incx); }
float cblas_asum(int n, const float* x, int incx) { return cblas().sasum(n, x, incx); }
double cblas_asum(int n, const double* x, int incx) { return cblas().dasum(n, x, incx); }

template <class T>
cublasStatus_t gemv_call(const char* api, cublasHandle_t handle, cublasOperation_t trans, int m, int n,
                         const T* alpha, const T* A, int lda, const T* x, int incx, const T* beta, T* y, int incy) {
  cublasContext h;
  if (!lookup(handle, h)) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!valid_operation(trans))
    return invalid(api, format_string("trans must be CUBLAS_OP_N, CUBLAS_OP_T or CUBLAS_OP_C (got %d)", trans));
  if (m < 0 || n < 0) return invalid(api, format_string("m=%d, n=%d must not be negative", m, n));
  if (lda < std::max(1, m)) return invalid(api, format_string("lda=%d is smaller than the m=%d rows of A", lda, m));
  // Zero strides are accepted, as cuBLAS 13 accepts them (measured on an H200, 2026-11-27):
  // incx == 0 makes x[0] stand for every element of x (as the GPU computed); with incy == 0
  // every element of the result goes to y[0], in an order a GPU does not promise: here the
  // last one, each computed from y[0] as it was.
  if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
  if (alpha == nullptr || beta == nullptr) return invalid(api, "alpha and beta must not be null");
  const Scalar<T> a_scalar = take_scalar(h, alpha), b_scalar = take_scalar(h, beta);
  const int x_len = trans == CUBLAS_OP_N ? n : m, y_len = trans == CUBLAS_OP_N ? m : n;
  return submit(api, h,
                {matrix("A", A, m, n, lda), vector_operand("x", x, x_len, incx), vector_operand("y", y, y_len, incy),
                 scalar_operand(h, "alpha", alpha), scalar_operand(h, "beta", beta)},
                [=] {
                  const T a_value = a_scalar.get(), b_value = b_scalar.get();
                  // OpenBLAS refuses zero strides: spell the repeated x out, and compute every
                  // result for a y of one element apart, keeping the last.
                  const std::vector<T> repeated = incx == 0 ? std::vector<T>(x_len, x[0]) : std::vector<T>();
                  const T* xs = incx == 0 ? repeated.data() : x;
                  const int x_step = incx == 0 ? 1 : incx;
                  if (incy == 0) {
                    std::vector<T> results(static_cast<std::size_t>(y_len), b_value == T(0) ? T(0) : y[0]);
                    cblas_gemv(to_cblas(trans), m, n, a_value, A, lda, xs, x_step, b_value, results.data(), 1);
                    y[0] = results.back();
                    return;
                  }
                  if (b_value == T(0)) {  // y is not read when beta is 0
                    T* start = incy < 0 ? y + static_cast<long long>(1 - y_len) * incy : y;
                    for (int i = 0; i < y_len; ++i) start[static_cast<long long>(i) * incy] = T(0);
                  }
                  cblas_gemv(to_cblas(trans), m, n, a_value, A, lda, xs, x_step, b_value, y, incy);
                });
}

template <class T>
cublasStatus_t axpy_call(const char* api, cublasHandle_t handle, int n, const T* alpha, const T* x, int incx, T* y,
                         int incy) {
  cublasContext h;
  if (!lookup(handle, h)) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (n <= 0) return CUBLAS_STATUS_SUCCESS;
  if (alpha == nullptr) return invalid(api, "alpha must not be null");
  const Scalar<T> a_scalar = take_scalar(h, alpha);
  return submit(api, h,
                {vector_operand("x", x, n, incx), vector_operand("y", y, n, incy), scalar_operand(h, "alpha", alpha)},
                [=] { cblas_axpy(n, a_scalar.get(), x, incx, y, incy); });
}

template <class T>
cublasStatus_t scal_call(const char* api, cublasHandle_t handle, int n, const T* alpha, T* x, int incx) {
  cublasContext h;
  if (!lookup(handle, h)) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (n <= 0 || incx <= 0) return CUBLAS_STATUS_SUCCESS;
  if (alpha == nullptr) return invalid(api, "alpha must not be null");
  const Scalar<T> a_scalar = take_scalar(h, alpha);
  return submit(api, h, {vector_operand("x", x, n, incx), scalar_operand(h, "alpha", alpha)}, [=] {
    const T a = a_scalar.get();
    // Element by element, without a CBLAS special case for alpha == 0.
    for (int i = 0; i < n; ++i) x[static_cast<long long>(i) * incx] *= a;
  });
}

}  // namespace
}  // namespace cudasim::detail

using namespace cudasim::detail;

cublasStatus_t cublasCreate(cublasHandle_t* handle) {
  if (handle == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  std::string why;
  if (!load_cblas(why)) {
    report("cublasCreate: the simulator cannot load the CBLAS library that computes cuBLAS calls "
           "(%s); install OpenBLAS (Debian/Ubuntu: libopenblas-dev) and rebuild",
           why.c_str());
    return CUBLAS_STATUS_NOT_INITIALIZED;
  }
  auto* context = new cublasContext;
  std::lock_guard<std::mutex> lock(handles_mutex);
  live_handles.insert(context);
  *handle = context;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy(cublasHandle_t handle) {
  {
    std::lock_guard<std::mutex> lock(handles_mutex);
    if (handle == nullptr || live_handles.erase(handle) == 0) return CUBLAS_STATUS_NOT_INITIALIZED;
  }
  synchronize_all_streams();  // cublasDestroy implicitly synchronises the device
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream) {
  std::lock_guard<std::mutex> lock(handles_mutex);
  if (handle == nullptr || live_handles.count(handle) == 0) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetStream(cublasHandle_t handle, cudaStream_t* stream) {
  cublasContext h;
  if (!lookup(handle, h)) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (stream == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *stream = h.stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetPointerMode(cublasHandle_t handle, cublasPointerMode_t mode) {
  std::lock_guard<std::mutex> lock(handles_mutex);
  if (handle == nullptr || live_handles.count(handle) == 0) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (mode != CUBLAS_POINTER_MODE_HOST && mode != CUBLAS_POINTER_MODE_DEVICE) return CUBLAS_STATUS_INVALID_VALUE;
  handle->pointer_mode = mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetPointerMode(cublasHandle_t handle, cublasPointerMode_t* mode) {
  cublasContext h;
  if (!lookup(handle, h)) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (mode == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *mode = h.pointer_mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  std::lock_guard<std::mutex> lock(handles_mutex);
  if (handle == nullptr || live_handles.count(handle) == 0) return CUBLAS_STATUS_NOT_INITIALIZED;
  const int base = mode & ~CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
  if (base < CUBLAS_DEFAULT_MATH || base > CUBLAS_TF32_TENSOR_OP_MATH) return CUBLAS_STATUS_INVALID_VALUE;
  handle->math_mode = mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t* mode) {
  cublasContext h;
  if (!lookup(handle, h)) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (mode == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *mode = h.math_mode;
  return CUBLAS_STATUS_SUCCESS;
}

const char* cublasGetStatusName(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "CUBLAS_STATUS_UNKNOWN";
}

const char* cublasGetStatusString(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "success";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
    case CUBLAS_STATUS_ALLOC_FAILED: return "the resource allocation failed";
    case CUBLAS_STATUS_INVALID_VALUE: return "an invalid numeric value was used as an argument";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "an absent device architectural feature is required";
    case CUBLAS_STATUS_MAPPING_ERROR: return "an access to GPU memory space failed";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "the GPU program failed to execute";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "an internal operation failed";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "the functionality requested is not supported";
    case CUBLAS_STATUS_LICENSE_ERROR: return "the functionality requested requires some license";
  }
  return "unknown error";
}

cublasStatus_t cublasSgemm(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                           int m, int n, int k, const float* alpha, const float* A, int lda,
                           const float* B, int ldb, const float* beta, float* C, int ldc) {
  return gemm_call<float>("cublasSgemm", handle, transa, transb, m, n, k, alpha, A, lda, 0, B, ldb,
                          0, beta, C, ldc, 0, 1);
}

cublasStatus_t cublasDgemm(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                           int m, int n, int k, const double* alpha, const double* A, int lda,
                           const double* B, int ldb, const double* beta, double* C, int ldc) {
  return gemm_call<double>("cublasDgemm", handle, transa, transb, m, n, k, alpha, A, lda, 0, B,
                           ldb, 0, beta, C, ldc, 0, 1);
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k,
                                         const float* alpha, const float* A, int lda,
                                         long long int strideA, const float* B, int ldb,
                                         long long int strideB, const float* beta, float* C,
                                         int ldc, long long int strideC, int batchCount) {
  return gemm_call<float>("cublasSgemmStridedBatched", handle, transa, transb, m, n, k, alpha, A,
                          lda, strideA, B, ldb, strideB, beta, C, ldc, strideC, batchCount);
}

cublasStatus_t cublasSgemv(cublasHandle_t handle, cublasOperation_t trans, int m, int n, const float* alpha,
                           const float* A, int lda, const float* x, int incx, const float* beta, float* y, int incy) {
  return gemv_call("cublasSgemv", handle, trans, m, n, alpha, A, lda, x, incx, beta, y, incy);
}

cublasStatus_t cublasDgemv(cublasHandle_t handle, cublasOperation_t trans, int m, int n, const double* alpha,
                           const double* A, int lda, const double* x, int incx, const double* beta, double* y,
                           int incy) {
  return gemv_call("cublasDgemv", handle, trans, m, n, alpha, A, lda, x, incx, beta, y, incy);
}

cublasStatus_t cublasSaxpy(cublasHandle_t handle, int n, const float* alpha, const float* x, int incx,
                           float* y, int incy) {
  return axpy_call("cublasSaxpy", handle, n, alpha, x, incx, y, incy);
}

cublasStatus_t cublasDaxpy(cublasHandle_t handle, int n, const double* alpha, const double* x, int incx,
                           double* y, int incy) {
  return axpy_call("cublasDaxpy", handle, n, alpha, x, incx, y, incy);
}

cublasStatus_t cublasSscal(cublasHandle_t handle, int n, const float* alpha, float* x, int incx) {
  return scal_call("cublasSscal", handle, n, alpha, x, incx);
}

cublasStatus_t cublasDscal(cublasHandle_t handle, int n, const double* alpha, double* x, int incx) {
  return scal_call("cublasDscal", handle, n, alpha, x, incx);
}

cublasStatus_t cublasSdot(cublasHandle_t handle, int n, const float* x, int incx, const float* y,
                          int incy, float* result) {
  return reduction_call("cublasSdot", handle, {vector_operand("x", x, n, incx), vector_operand("y", y, n, incy)}, result,
                        n <= 0, [=] { return cblas_dot(n, x, incx, y, incy); });
}

cublasStatus_t cublasDdot(cublasHandle_t handle, int n, const double* x, int incx, const double* y,
                          int incy, double* result) {
  return reduction_call("cublasDdot", handle, {vector_operand("x", x, n, incx), vector_operand("y", y, n, incy)}, result,
                        n <= 0, [=] { return cblas_dot(n, x, incx, y, incy); });
}

cublasStatus_t cublasSnrm2(cublasHandle_t handle, int n, const float* x, int incx, float* result) {
  return reduction_call("cublasSnrm2", handle, {vector_operand("x", x, n, incx)}, result, n <= 0 || incx <= 0,
                        [=] { return cblas_nrm2(n, x, incx); });
}

cublasStatus_t cublasDnrm2(cublasHandle_t handle, int n, const double* x, int incx, double* result) {
  return reduction_call("cublasDnrm2", handle, {vector_operand("x", x, n, incx)}, result, n <= 0 || incx <= 0,
                        [=] { return cblas_nrm2(n, x, incx); });
}

cublasStatus_t cublasSasum(cublasHandle_t handle, int n, const float* x, int incx, float* result) {
  return reduction_call("cublasSasum", handle, {vector_operand("x", x, n, incx)}, result, n <= 0 || incx <= 0,
                        [=] { return cblas_asum(n, x, incx); });
}

cublasStatus_t cublasDasum(cublasHandle_t handle, int n, const double* x, int incx, double* result) {
  return reduction_call("cublasDasum", handle, {vector_operand("x", x, n, incx)}, result, n <= 0 || incx <= 0,
                        [=] { return cblas_asum(n, x, incx); });
}

// ---- cublasGemmEx and cublasHgemm: mixed precision ------------------------------------------------

namespace cudasim::detail {

std::size_t element_bytes(cudaDataType type) { return type == CUDA_R_16F || type == CUDA_R_16BF ? 2 : 4; }

float load_element(const void* base, cudaDataType type, std::size_t at) {
  switch (type) {
    case CUDA_R_16BF: return static_cast<float>(static_cast<const __nv_bfloat16*>(base)[at]);
    case CUDA_R_16F: return static_cast<float>(static_cast<const __half*>(base)[at]);
    default: return static_cast<const float*>(base)[at];
  }
}

void store_element(void* base, cudaDataType type, std::size_t at, float v) {
  switch (type) {
    case CUDA_R_16BF: static_cast<__nv_bfloat16*>(base)[at] = __float2bfloat16(v); break;
    case CUDA_R_16F: static_cast<__half*>(base)[at] = __float2half_rn(v); break;
    default: static_cast<float*>(base)[at] = v; break;
  }
}

}  // namespace cudasim::detail

namespace cudasim::detail {
namespace {

bool float_compute(cublasComputeType_t t) {
  return t == CUBLAS_COMPUTE_32F || t == CUBLAS_COMPUTE_32F_PEDANTIC || t == CUBLAS_COMPUTE_32F_FAST_16F ||
         t == CUBLAS_COMPUTE_32F_FAST_16BF || t == CUBLAS_COMPUTE_32F_FAST_TF32;
}

bool half_compute(cublasComputeType_t t) { return t == CUBLAS_COMPUTE_16F || t == CUBLAS_COMPUTE_16F_PEDANTIC; }

/// Whether the simulator multiplies these types (see cublasGemmEx in cublas_v2.h).
bool supported_mixed_types(cudaDataType a, cudaDataType b, cudaDataType c, cublasComputeType_t compute) {
  if (half_compute(compute)) return a == CUDA_R_16F && b == CUDA_R_16F && c == CUDA_R_16F;
  if (!float_compute(compute) || a != b) return false;
  if (a == CUDA_R_16F) return c == CUDA_R_16F || c == CUDA_R_32F;
  return (a == CUDA_R_16BF || a == CUDA_R_32F) && (c == CUDA_R_16BF || c == CUDA_R_32F);
}

Operand typed_matrix(const char* name, const void* p, cudaDataType type, int rows, int cols, int ld) {
  if (type == CUDA_R_16BF) return matrix(name, static_cast<const __nv_bfloat16*>(p), rows, cols, ld);
  if (type == CUDA_R_16F) return matrix(name, static_cast<const __half*>(p), rows, cols, ld);
  return matrix(name, static_cast<const float*>(p), rows, cols, ld);
}

/// A rows x cols column-major matrix (leading dimension ld) of `type`, as packed floats.
std::vector<float> widen(const void* p, cudaDataType type, int rows, int cols, int ld) {
  std::vector<float> out(static_cast<size_t>(rows) * cols);
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < rows; ++i)
      out[static_cast<size_t>(j) * rows + i] = load_element(p, type, static_cast<size_t>(j) * ld + i);
  return out;
}

/// alpha or beta of a mixed-precision call: a __half under a 16-bit compute type, else a float.
struct MixedScalar {
  bool half;
  Scalar<float> single;
  Scalar<__half> narrow;
  float get() const { return half ? static_cast<float>(narrow.get()) : single.get(); }
  bool may_be_nonzero() const {
    return half ? narrow.device != nullptr || static_cast<float>(narrow.value) != 0.0f : single.may_be_nonzero();
  }
};

MixedScalar take_mixed_scalar(const cublasContext& h, const void* p, bool half) {
  MixedScalar s{half, {}, {}};
  if (half)
    s.narrow = take_scalar(h, static_cast<const __half*>(p));
  else
    s.single = take_scalar(h, static_cast<const float*>(p));
  return s;
}

Operand mixed_scalar_operand(const cublasContext& h, const char* name, const void* p, bool half) {
  return half ? scalar_operand(h, name, static_cast<const __half*>(p)) : scalar_operand(h, name, static_cast<const float*>(p));
}

/// cublasGemmEx's product, for the call named `api`.
cublasStatus_t mixed_gemm(const char* api, cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                          int m, int n, int k, const void* alpha, const void* A, cudaDataType Atype, int lda,
                          const void* B, cudaDataType Btype, int ldb, const void* beta, void* C, cudaDataType Ctype,
                          int ldc, cublasComputeType_t computeType) {
  cublasContext h;
  if (!lookup(handle, h)) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!supported_mixed_types(Atype, Btype, Ctype, computeType)) {
    report("%s: the simulator supports A and B both CUDA_R_16F (C CUDA_R_16F or CUDA_R_32F), both CUDA_R_16BF or "
           "both CUDA_R_32F (C CUDA_R_16BF or CUDA_R_32F) with a CUBLAS_COMPUTE_32F* compute type, and all three "
           "CUDA_R_16F with CUBLAS_COMPUTE_16F (got Atype=%d, Btype=%d, Ctype=%d, computeType=%d) "
           "(CUBLAS_STATUS_NOT_SUPPORTED)",
           api, Atype, Btype, Ctype, computeType);
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  const cublasStatus_t status = check_gemm<float>(api, transa, transb, m, n, k, lda, ldb, ldc);
  if (status != CUBLAS_STATUS_SUCCESS) return status;
  if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
  if (alpha == nullptr || beta == nullptr) return invalid(api, "alpha and beta must not be null");
  const bool half_scalars = half_compute(computeType);
  const MixedScalar a_scalar = take_mixed_scalar(h, alpha, half_scalars);
  const MixedScalar b_scalar = take_mixed_scalar(h, beta, half_scalars);
  const int a_rows = transa == CUBLAS_OP_N ? m : k, a_cols = transa == CUBLAS_OP_N ? k : m;
  const int b_rows = transb == CUBLAS_OP_N ? k : n, b_cols = transb == CUBLAS_OP_N ? n : k;
  const bool reads_ab = k > 0;
  const Operand none{nullptr, nullptr, nullptr};
  return submit(
      api, h,
      {reads_ab ? typed_matrix("A", A, Atype, a_rows, a_cols, lda) : none,
       reads_ab ? typed_matrix("B", B, Btype, b_rows, b_cols, ldb) : none, typed_matrix("C", C, Ctype, m, n, ldc),
       mixed_scalar_operand(h, "alpha", alpha, half_scalars), mixed_scalar_operand(h, "beta", beta, half_scalars)},
      [=] {
        const float a_value = a_scalar.get(), b_value = b_scalar.get();
        const std::vector<float> a = reads_ab ? widen(A, Atype, a_rows, a_cols, lda) : std::vector<float>();
        const std::vector<float> b = reads_ab ? widen(B, Btype, b_rows, b_cols, ldb) : std::vector<float>();
        // C is read only when beta is not 0 (NaNs in an unread C do not propagate).
        std::vector<float> c = b_value != 0.0f ? widen(C, Ctype, m, n, ldc)
                                               : std::vector<float>(static_cast<size_t>(m) * n, 0.0f);
        // In float also under CUBLAS_COMPUTE_16F (see cublasHgemm in cublas_v2.h).
        gemm(to_cblas(transa), to_cblas(transb), m, n, k, a_value, a.data(), std::max(1, a_rows), b.data(),
             std::max(1, b_rows), b_value, c.data(), m);
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < m; ++i)
            store_element(C, Ctype, static_cast<size_t>(j) * ldc + i, c[static_cast<size_t>(j) * m + i]);
      },
      false,
      gemm_cost(m, n, k, 1, element_bytes(Atype), element_bytes(Ctype), Atype != CUDA_R_32F,
                b_scalar.may_be_nonzero()));
}

}  // namespace
}  // namespace cudasim::detail

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                            int m, int n, int k, const void* alpha, const void* A, cudaDataType Atype,
                            int lda, const void* B, cudaDataType Btype, int ldb, const void* beta, void* C,
                            cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                            cublasGemmAlgo_t algo) {
  (void)algo;  // one algorithm here
  return mixed_gemm("cublasGemmEx", handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C,
                    Ctype, ldc, computeType);
}

cublasStatus_t cublasHgemm(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                           int k, const __half* alpha, const __half* A, int lda, const __half* B, int ldb,
                           const __half* beta, __half* C, int ldc) {
  return mixed_gemm("cublasHgemm", handle, transa, transb, m, n, k, alpha, A, CUDA_R_16F, lda, B, CUDA_R_16F, ldb,
                    beta, C, CUDA_R_16F, ldc, CUBLAS_COMPUTE_16F);
}

namespace cudasim::detail {
namespace {
/// cublasGemmStridedBatchedEx's and cublasHgemmStridedBatched's products, one mixed_gemm each.
cublasStatus_t mixed_gemm_strided(const char* api, cublasHandle_t handle, cublasOperation_t transa,
                                  cublasOperation_t transb, int m, int n, int k, const void* alpha, const void* A,
                                  cudaDataType Atype, int lda, long long strideA, const void* B, cudaDataType Btype,
                                  int ldb, long long strideB, const void* beta, void* C, cudaDataType Ctype, int ldc,
                                  long long strideC, int batchCount, cublasComputeType_t computeType) {
  if (batchCount < 0) return invalid(api, format_string("batchCount=%d must not be negative", batchCount));
  const auto a_step = static_cast<long long>(element_bytes(Atype)) * strideA;
  const auto b_step = static_cast<long long>(element_bytes(Btype)) * strideB;
  const auto c_step = static_cast<long long>(element_bytes(Ctype)) * strideC;
  for (int i = 0; i < batchCount; ++i) {
    const cublasStatus_t status =
        mixed_gemm(api, handle, transa, transb, m, n, k, alpha, static_cast<const char*>(A) + i * a_step, Atype, lda,
                   static_cast<const char*>(B) + i * b_step, Btype, ldb, beta, static_cast<char*>(C) + i * c_step,
                   Ctype, ldc, computeType);
    if (status != CUBLAS_STATUS_SUCCESS) return status;
  }
  return CUBLAS_STATUS_SUCCESS;
}
}  // namespace
}  // namespace cudasim::detail

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                          int m, int n, int k, const void* alpha, const void* A, cudaDataType Atype,
                                          int lda, long long int strideA, const void* B, cudaDataType Btype, int ldb,
                                          long long int strideB, const void* beta, void* C, cudaDataType Ctype,
                                          int ldc, long long int strideC, int batchCount,
                                          cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  (void)algo;
  const bool all_float = Atype == CUDA_R_32F && Btype == CUDA_R_32F && Ctype == CUDA_R_32F;
  if (all_float && float_compute(computeType) && batchCount >= 0) {  // one call, modelled as one batched product
    return cublasSgemmStridedBatched(handle, transa, transb, m, n, k, static_cast<const float*>(alpha),
                                     static_cast<const float*>(A), lda, strideA, static_cast<const float*>(B), ldb,
                                     strideB, static_cast<const float*>(beta), static_cast<float*>(C), ldc, strideC,
                                     batchCount);
  }
  // Otherwise one product per matrix, which checks the types and shapes and says what it does
  // not support.
  return mixed_gemm_strided("cublasGemmStridedBatchedEx", handle, transa, transb, m, n, k, alpha, A, Atype, lda,
                            strideA, B, Btype, ldb, strideB, beta, C, Ctype, ldc, strideC, batchCount, computeType);
}

cublasStatus_t cublasHgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                         int m, int n, int k, const __half* alpha, const __half* A, int lda,
                                         long long int strideA, const __half* B, int ldb, long long int strideB,
                                         const __half* beta, __half* C, int ldc, long long int strideC,
                                         int batchCount) {
  return mixed_gemm_strided("cublasHgemmStridedBatched", handle, transa, transb, m, n, k, alpha, A, CUDA_R_16F, lda,
                            strideA, B, CUDA_R_16F, ldb, strideB, beta, C, CUDA_R_16F, ldc, strideC, batchCount,
                            CUBLAS_COMPUTE_16F);
}

// ---- batches of separate matrices, and copies of vectors and matrices ----------------------------

namespace cudasim::detail {
namespace {
/// batchCount products whose matrices are listed in arrays of pointers held in device memory.
/// The arrays are read once the work queued before the call on the handle's stream has run (it
/// may have written them); each product is then queued as a cublas<t>gemm call.
template <class T, class Gemm>
cublasStatus_t gemm_batched(const char* api, cublasHandle_t handle, const T* const A[], const T* const B[],
                            T* const C[], int batchCount, Gemm gemm) {
  cublasContext h;
  if (!lookup(handle, h)) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (batchCount < 0) return invalid(api, format_string("batchCount=%d must not be negative", batchCount));
  if (batchCount == 0) return CUBLAS_STATUS_SUCCESS;
  if (A == nullptr || B == nullptr || C == nullptr) return invalid(api, "the arrays of pointers must not be null");
  if (cudaStreamSynchronize(h.stream) != cudaSuccess) return CUBLAS_STATUS_EXECUTION_FAILED;
  for (int i = 0; i < batchCount; ++i) {
    const cublasStatus_t status = gemm(A[i], B[i], C[i]);
    if (status != CUBLAS_STATUS_SUCCESS) return status;
  }
  return CUBLAS_STATUS_SUCCESS;
}

void lapack_getrf(int n, float* a, int lda, int* pivots, int* info) { cblas().sgetrf(&n, &n, a, &lda, pivots, info); }
void lapack_getrf(int n, double* a, int lda, int* pivots, int* info) { cblas().dgetrf(&n, &n, a, &lda, pivots, info); }
bool have_lapack_getrf(float*) { return cblas().sgetrf != nullptr; }
bool have_lapack_getrf(double*) { return cblas().dgetrf != nullptr; }
/// The inverse from an LU factorisation in place; `work` holds n elements (getri's minimum).
void lapack_getri(int n, float* a, int lda, const int* pivots, float* work, int* info) {
  cblas().sgetri(&n, a, &lda, pivots, work, &n, info);
}
void lapack_getri(int n, double* a, int lda, const int* pivots, double* work, int* info) {
  cblas().dgetri(&n, a, &lda, pivots, work, &n, info);
}
bool have_lapack_getri(float*) { return cblas().sgetri != nullptr; }
bool have_lapack_getri(double*) { return cblas().dgetri != nullptr; }

/// A pivoted LU routine's CUBLAS_STATUS_NOT_SUPPORTED where the loaded libraries lack LAPACK.
cublasStatus_t no_lapack(const char* api, const char* routine) {
  report("%s: the BLAS libraries loaded (%s) have no LAPACK %s, which it uses (install OpenBLAS, "
         "Debian/Ubuntu libopenblas-dev, or LAPACK, liblapack-dev, and rebuild) (CUBLAS_STATUS_NOT_SUPPORTED)",
         api, CUDASIM_BLAS_LIBRARIES, routine);
  return CUBLAS_STATUS_NOT_SUPPORTED;
}

/// LU without pivoting, in place (column-major), as cuBLAS's getrfBatched does when P is null:
/// LAPACK has no such routine. Returns 0, or the 1-based column of the first zero pivot, where
/// it stops (nothing can be divided by it).
template <class T>
int unpivoted_lu(int n, T* a, int lda) {
  const auto at = [&](int row, int col) -> T& { return a[static_cast<long long>(col) * lda + row]; };
  for (int k = 0; k < n; ++k) {
    const T pivot = at(k, k);
    if (pivot == T(0)) return k + 1;
    for (int i = k + 1; i < n; ++i) at(i, k) /= pivot;
    for (int j = k + 1; j < n; ++j)
      for (int i = k + 1; i < n; ++i) at(i, j) -= at(i, k) * at(k, j);
  }
  return 0;
}

/// cublas<t>getrfBatched: each matrix is queued on the handle's stream as work of its own,
/// with its pivots and its info, so that a bad pointer faults as the kernel would on a GPU.
template <class T>
cublasStatus_t getrf_batched(const char* api, cublasHandle_t handle, int n, T* const A[], int lda, int* P, int* info,
                             int batchSize) {
  cublasContext h;
  if (!lookup(handle, h)) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (n < 0 || lda < std::max(1, n) || batchSize < 0)
    return invalid(api, format_string("n=%d and batchSize=%d must not be negative, lda=%d at least max(1, n)", n,
                                      batchSize, lda));
  if (batchSize == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
  if (A == nullptr || info == nullptr) return invalid(api, "Aarray and info must not be null");
  if (P != nullptr && !have_lapack_getrf(static_cast<T*>(nullptr))) return no_lapack(api, "getrf");
  if (!kernel_accessible(A) || !kernel_accessible(A + (batchSize - 1))) {
    report("illegal memory access in %s: Aarray (%p) is not device memory", api, static_cast<const void*>(A));
    return CUBLAS_STATUS_EXECUTION_FAILED;
  }
  if (cudaStreamSynchronize(h.stream) != cudaSuccess) return CUBLAS_STATUS_EXECUTION_FAILED;
  const auto N = static_cast<std::uint64_t>(n);
  // (2/3)n^3 FLOPs; the matrix read and written once, the pivots and info written.
  const LibraryCost cost{2 * N * N * N / 3, 2 * N * N * sizeof(T) + (P ? N * sizeof(int) : 0) + sizeof(int)};
  for (int b = 0; b < batchSize; ++b) {
    T* a = A[b];
    int* pivots = P ? P + static_cast<long long>(b) * n : nullptr;
    int* status = info + b;
    const cublasStatus_t queued = submit(
        api, h,
        {matrix("Aarray[i]", a, n, n, lda), Operand{"info", status, status},
         P ? vector_operand("P", pivots, n, 1) : Operand{nullptr, nullptr, nullptr}},
        [=] {
          if (pivots != nullptr) {
            lapack_getrf(n, a, lda, pivots, status);
          } else {
            *status = unpivoted_lu(n, a, lda);
          }
        },
        false, cost);
    if (queued != CUBLAS_STATUS_SUCCESS) return queued;
  }
  return CUBLAS_STATUS_SUCCESS;
}

/// cublas<t>getriBatched: the inverse of each matrix from its LU factorisation (getrfBatched's
/// output: A, P, or no pivots when P is null) into C, out of place. Each matrix is queued on
/// the handle's stream as work of its own, as in getrf_batched.
template <class T>
cublasStatus_t getri_batched(const char* api, cublasHandle_t handle, int n, const T* const A[], int lda, const int* P,
                             T* const C[], int ldc, int* info, int batchSize) {
  cublasContext h;
  if (!lookup(handle, h)) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (n < 0 || lda < std::max(1, n) || ldc < std::max(1, n) || batchSize < 0)
    return invalid(api, format_string("n=%d and batchSize=%d must not be negative, lda=%d and ldc=%d at least "
                                      "max(1, n)", n, batchSize, lda, ldc));
  if (batchSize == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
  if (A == nullptr || C == nullptr || info == nullptr) return invalid(api, "Aarray, Carray and info must not be null");
  if (!have_lapack_getri(static_cast<T*>(nullptr))) return no_lapack(api, "getri");
  for (const void* array : {static_cast<const void*>(A), static_cast<const void*>(C)})
    if (!kernel_accessible(array) || !kernel_accessible(static_cast<const char*>(array) + (batchSize - 1) * sizeof(T*))) {
      report("illegal memory access in %s: Aarray or Carray (%p) is not device memory", api, array);
      return CUBLAS_STATUS_EXECUTION_FAILED;
    }
  if (cudaStreamSynchronize(h.stream) != cudaSuccess) return CUBLAS_STATUS_EXECUTION_FAILED;
  const auto N = static_cast<std::uint64_t>(n);
  // (4/3)n^3 FLOPs; the factors read, the inverse written, the pivots read and info written.
  const LibraryCost cost{4 * N * N * N / 3, 2 * N * N * sizeof(T) + (P ? N * sizeof(int) : 0) + sizeof(int)};
  for (int b = 0; b < batchSize; ++b) {
    const T* a = A[b];
    T* c = C[b];
    const int* pivots = P ? P + static_cast<long long>(b) * n : nullptr;
    int* status = info + b;
    const cublasStatus_t queued = submit(
        api, h,
        {matrix("Aarray[i]", a, n, n, lda), matrix("Carray[i]", c, n, n, ldc), Operand{"info", status, status},
         P ? vector_operand("P", pivots, n, 1) : Operand{nullptr, nullptr, nullptr}},
        [=] {
          for (int col = 0; col < n; ++col)
            std::copy_n(a + static_cast<long long>(col) * lda, n, c + static_cast<long long>(col) * ldc);
          std::vector<int> no_interchanges;  // getri's pivots when getrf ran without: row i stays row i
          if (pivots == nullptr)
            for (int i = 1; i <= n; ++i) no_interchanges.push_back(i);
          std::vector<T> work(static_cast<std::size_t>(n));
          lapack_getri(n, c, ldc, pivots ? pivots : no_interchanges.data(), work.data(), status);
        },
        false, cost);
    if (queued != CUBLAS_STATUS_SUCCESS) return queued;
  }
  return CUBLAS_STATUS_SUCCESS;
}

/// A strided copy for cublasSet/GetVector and cublasSet/GetMatrix: `count` runs of `run` bytes,
/// `from_stride` and `to_stride` bytes apart.
cublasStatus_t copy_runs(const char* api, void* to, std::size_t to_stride, const void* from, std::size_t from_stride,
                         std::size_t run, std::size_t count, cudaMemcpyKind kind, cudaStream_t stream, bool async) {
  if (count == 0 || run == 0) return CUBLAS_STATUS_SUCCESS;
  const cudaError_t e = async ? cudaMemcpy2DAsync(to, to_stride, from, from_stride, run, count, kind, stream)
                              : cudaMemcpy2D(to, to_stride, from, from_stride, run, count, kind);
  if (e == cudaSuccess) return CUBLAS_STATUS_SUCCESS;
  report("%s: the copy failed (%s)", api, cudaGetErrorName(e));
  return CUBLAS_STATUS_MAPPING_ERROR;
}

cublasStatus_t copy_vector(const char* api, int n, int elemSize, const void* x, int incx, void* y, int incy,
                           cudaMemcpyKind kind, cudaStream_t stream, bool async) {
  if (n < 0 || elemSize <= 0 || incx <= 0 || incy <= 0)
    return invalid(api, format_string("n=%d must not be negative, elemSize=%d, incx=%d and incy=%d must be positive",
                                      n, elemSize, incx, incy));
  const auto size = static_cast<std::size_t>(elemSize);
  return copy_runs(api, y, size * incy, x, size * incx, size, static_cast<std::size_t>(n), kind, stream, async);
}

cublasStatus_t copy_matrix(const char* api, int rows, int cols, int elemSize, const void* A, int lda, void* B, int ldb,
                           cudaMemcpyKind kind, cudaStream_t stream, bool async) {
  if (rows < 0 || cols < 0 || elemSize <= 0)
    return invalid(api, format_string("rows=%d and cols=%d must not be negative, elemSize=%d positive", rows, cols,
                                      elemSize));
  if (lda < std::max(1, rows) || ldb < std::max(1, rows)) {
    // The strided copy behind it cannot be made: cuBLAS 13 says CUBLAS_STATUS_MAPPING_ERROR
    // (measured on an H200 for lda < rows, 2026-11-27), not INVALID_VALUE.
    report("%s: lda=%d and ldb=%d must be at least the rows (%d)", api, lda, ldb, rows);
    return CUBLAS_STATUS_MAPPING_ERROR;
  }
  const auto size = static_cast<std::size_t>(elemSize);
  return copy_runs(api, B, size * ldb, A, size * lda, size * rows, static_cast<std::size_t>(cols), kind, stream,
                   async);
}
}  // namespace
}  // namespace cudasim::detail

cublasStatus_t cublasSgemmBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                  int n, int k, const float* alpha, const float* const Aarray[], int lda,
                                  const float* const Barray[], int ldb, const float* beta, float* const Carray[],
                                  int ldc, int batchCount) {
  return gemm_batched<float>("cublasSgemmBatched", handle, Aarray, Barray, Carray, batchCount,
                             [&](const float* A, const float* B, float* C) {
                               return cublasSgemm(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
                             });
}

cublasStatus_t cublasDgemmBatched(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                  int n, int k, const double* alpha, const double* const Aarray[], int lda,
                                  const double* const Barray[], int ldb, const double* beta, double* const Carray[],
                                  int ldc, int batchCount) {
  return gemm_batched<double>("cublasDgemmBatched", handle, Aarray, Barray, Carray, batchCount,
                              [&](const double* A, const double* B, double* C) {
                                return cublasDgemm(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
                              });
}

cublasStatus_t cublasSgetrfBatched(cublasHandle_t handle, int n, float* const Aarray[], int lda, int* P, int* info,
                                   int batchSize) {
  return getrf_batched<float>("cublasSgetrfBatched", handle, n, Aarray, lda, P, info, batchSize);
}

cublasStatus_t cublasDgetrfBatched(cublasHandle_t handle, int n, double* const Aarray[], int lda, int* P, int* info,
                                   int batchSize) {
  return getrf_batched<double>("cublasDgetrfBatched", handle, n, Aarray, lda, P, info, batchSize);
}

cublasStatus_t cublasSgetriBatched(cublasHandle_t handle, int n, const float* const Aarray[], int lda, const int* P,
                                   float* const Carray[], int ldc, int* info, int batchSize) {
  return getri_batched<float>("cublasSgetriBatched", handle, n, Aarray, lda, P, Carray, ldc, info, batchSize);
}

cublasStatus_t cublasDgetriBatched(cublasHandle_t handle, int n, const double* const Aarray[], int lda, const int* P,
                                   double* const Carray[], int ldc, int* info, int batchSize) {
  return getri_batched<double>("cublasDgetriBatched", handle, n, Aarray, lda, P, Carray, ldc, info, batchSize);
}

cublasStatus_t cublasSetVector(int n, int elemSize, const void* x, int incx, void* y, int incy) {
  return copy_vector("cublasSetVector", n, elemSize, x, incx, y, incy, cudaMemcpyHostToDevice, nullptr, false);
}
cublasStatus_t cublasGetVector(int n, int elemSize, const void* x, int incx, void* y, int incy) {
  return copy_vector("cublasGetVector", n, elemSize, x, incx, y, incy, cudaMemcpyDeviceToHost, nullptr, false);
}
cublasStatus_t cublasSetMatrix(int rows, int cols, int elemSize, const void* A, int lda, void* B, int ldb) {
  return copy_matrix("cublasSetMatrix", rows, cols, elemSize, A, lda, B, ldb, cudaMemcpyHostToDevice, nullptr, false);
}
cublasStatus_t cublasGetMatrix(int rows, int cols, int elemSize, const void* A, int lda, void* B, int ldb) {
  return copy_matrix("cublasGetMatrix", rows, cols, elemSize, A, lda, B, ldb, cudaMemcpyDeviceToHost, nullptr, false);
}
cublasStatus_t cublasSetVectorAsync(int n, int elemSize, const void* x, int incx, void* y, int incy,
                                    cudaStream_t stream) {
  return copy_vector("cublasSetVectorAsync", n, elemSize, x, incx, y, incy, cudaMemcpyHostToDevice, stream, true);
}
cublasStatus_t cublasGetVectorAsync(int n, int elemSize, const void* x, int incx, void* y, int incy,
                                    cudaStream_t stream) {
  return copy_vector("cublasGetVectorAsync", n, elemSize, x, incx, y, incy, cudaMemcpyDeviceToHost, stream, true);
}
cublasStatus_t cublasSetMatrixAsync(int rows, int cols, int elemSize, const void* A, int lda, void* B, int ldb,
                                    cudaStream_t stream) {
  return copy_matrix("cublasSetMatrixAsync", rows, cols, elemSize, A, lda, B, ldb, cudaMemcpyHostToDevice, stream,
                     true);
}
cublasStatus_t cublasGetMatrixAsync(int rows, int cols, int elemSize, const void* A, int lda, void* B, int ldb,
                                    cudaStream_t stream) {
  return copy_matrix("cublasGetMatrixAsync", rows, cols, elemSize, A, lda, B, ldb, cudaMemcpyDeviceToHost, stream,
                     true);
}
