// The cuBLASLt subset against a naive CPU loop: D = alpha·op(A)·op(B) + beta·C, column-major,
// fp32, bf16 or half inputs with fp32 compute, every transpose combination, padded leading
// dimensions, C and D the same buffer or not, on a stream. Valid CUDA: the same file runs on a
// GPU (the simulator's answers for unsupported types are checked under #ifdef CUDASIM).
// cuda_fp16.h and cuda_bf16.h are not included: cublasLt.h brings them, as the real one does
// (through cublas_api.h), and programs such as llm.c's dev/cuda kernels rely on it.
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace {

#define ASSERT_CUDA(expr) ASSERT_EQ((expr), cudaSuccess)
#define ASSERT_CUBLAS(expr) ASSERT_EQ((expr), CUBLAS_STATUS_SUCCESS)

/// Deterministic values in [-1, 1].
std::vector<float> values(size_t n, unsigned seed) {
  std::vector<float> v(n);
  unsigned state = seed * 2654435761u + 1;
  for (float& x : v) {
    state = state * 1664525u + 1013904223u;
    x = static_cast<float>(static_cast<int>(state >> 9) % 2001 - 1000) / 1000.0f;
  }
  return v;
}

template <class T>
T* upload(const std::vector<T>& host) {
  T* d = nullptr;
  EXPECT_EQ(cudaMalloc(&d, host.size() * sizeof(T)), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(d, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  return d;
}

template <class T>
std::vector<T> download(const T* d, size_t n) {
  std::vector<T> host(n);
  EXPECT_EQ(cudaMemcpy(host.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  return host;
}

/// op(X)[i][j] of a column-major matrix with leading dimension ld.
float at(const std::vector<float>& x, int ld, bool transposed, int i, int j) {
  return transposed ? x[static_cast<size_t>(i) * ld + j] : x[static_cast<size_t>(j) * ld + i];
}

class CublasLt : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_CUBLAS(cublasLtCreate(&handle_)); }
  void TearDown() override { EXPECT_EQ(cublasLtDestroy(handle_), CUBLAS_STATUS_SUCCESS); }

  /// Runs one fp32 matmul of m x k by k x n with the given transposes, padding and beta, and
  /// compares D with the CPU. `separate_d`: D is another buffer than C (C must stay unchanged).
  void check_fp32(int m, int n, int k, bool ta, bool tb, int pad, float alpha, float beta, bool separate_d) {
    const int a_rows = ta ? k : m, a_cols = ta ? m : k, b_rows = tb ? n : k, b_cols = tb ? k : n;
    const int lda = a_rows + pad, ldb = b_rows + pad, ldc = m + pad;
    const std::vector<float> a = values(static_cast<size_t>(lda) * a_cols, 1);
    const std::vector<float> b = values(static_cast<size_t>(ldb) * b_cols, 2);
    const std::vector<float> c = values(static_cast<size_t>(ldc) * n, 3);
    float* da = upload(a);
    float* db = upload(b);
    float* dc = upload(c);
    float* dd = separate_d ? upload(std::vector<float>(c.size(), -7.0f)) : dc;

    cublasLtMatmulDesc_t desc;
    ASSERT_CUBLAS(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t op_a = ta ? CUBLAS_OP_T : CUBLAS_OP_N, op_b = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    ASSERT_CUBLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof(op_a)));
    ASSERT_CUBLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof(op_b)));
    cublasLtMatrixLayout_t la, lb, lc;
    ASSERT_CUBLAS(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, a_rows, a_cols, lda));
    ASSERT_CUBLAS(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, b_rows, b_cols, ldb));
    ASSERT_CUBLAS(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, m, n, ldc));
    cudaStream_t s;
    ASSERT_CUDA(cudaStreamCreate(&s));
    ASSERT_CUBLAS(cublasLtMatmul(handle_, desc, &alpha, da, la, db, lb, &beta, dc, lc, dd, lc, nullptr, nullptr, 0, s));
    ASSERT_CUDA(cudaStreamSynchronize(s));

    const std::vector<float> got = download(dd, c.size());
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        double sum = 0;
        for (int p = 0; p < k; ++p) sum += static_cast<double>(at(a, lda, ta, i, p)) * at(b, ldb, tb, p, j);
        const double expected = alpha * sum + beta * c[static_cast<size_t>(j) * ldc + i];
        ASSERT_NEAR(got[static_cast<size_t>(j) * ldc + i], expected, 1e-4 * (k + 1))
            << "at (" << i << ", " << j << ") of " << m << "x" << n << "x" << k;
      }
    if (separate_d) EXPECT_EQ(download(dc, c.size()), c) << "C must not change";

    ASSERT_CUDA(cudaStreamDestroy(s));
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatmulDescDestroy(desc);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    if (separate_d) cudaFree(dd);
  }

  cublasLtHandle_t handle_ = nullptr;
};

__global__ void halve_narrow(__half* h, __nv_bfloat16* b) {
  *h = __float2half(__half2float(*h) * 0.5f);
  *b = __float2bfloat16(__bfloat162float(*b) * 0.5f);
}

TEST(CublasLtHeader, BringsHalfAndBfloat16) {
  __half* dh = nullptr;
  __nv_bfloat16* db = nullptr;
  ASSERT_CUDA(cudaMalloc(&dh, sizeof(__half)));
  ASSERT_CUDA(cudaMalloc(&db, sizeof(__nv_bfloat16)));
  const __half h = __float2half(3.0f);
  const __nv_bfloat16 b = __float2bfloat16(5.0f);
  ASSERT_CUDA(cudaMemcpy(dh, &h, sizeof(h), cudaMemcpyHostToDevice));
  ASSERT_CUDA(cudaMemcpy(db, &b, sizeof(b), cudaMemcpyHostToDevice));
  halve_narrow<<<1, 1>>>(dh, db);
  ASSERT_CUDA(cudaGetLastError());
  __half h_out;
  __nv_bfloat16 b_out;
  ASSERT_CUDA(cudaMemcpy(&h_out, dh, sizeof(h_out), cudaMemcpyDeviceToHost));
  ASSERT_CUDA(cudaMemcpy(&b_out, db, sizeof(b_out), cudaMemcpyDeviceToHost));
  EXPECT_EQ(__half2float(h_out), 1.5f);
  EXPECT_EQ(__bfloat162float(b_out), 2.5f);
  EXPECT_EQ(cudaFree(dh), cudaSuccess);
  EXPECT_EQ(cudaFree(db), cudaSuccess);
}

TEST_F(CublasLt, Fp32MatmulMatchesTheCpuForAwkwardShapes) {
  check_fp32(65, 33, 129, false, false, 0, 1.0f, 0.0f, false);
  check_fp32(1, 1, 1, false, false, 0, 2.0f, 0.0f, false);
  check_fp32(127, 5, 17, false, false, 3, 1.5f, 0.5f, false);
}

TEST_F(CublasLt, EveryTransposeCombination) {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) check_fp32(31, 17, 9, ta, tb, 2, 0.75f, -1.25f, false);
}

TEST_F(CublasLt, DCanBeAnotherBufferThanC) {
  check_fp32(33, 12, 20, false, true, 1, 1.0f, 1.0f, true);
  check_fp32(8, 8, 8, true, false, 0, 1.0f, 0.0f, true);
}

float widen_value(__nv_bfloat16 x) { return __bfloat162float(x); }
float widen_value(__half x) { return __half2float(x); }
void narrow_value(float f, __nv_bfloat16& out) { out = __float2bfloat16(f); }
void narrow_value(float f, __half& out) { out = __float2half_rn(f); }

/// A matmul of `Narrow` inputs (bf16 or half, `type`) with fp32 compute, against the products
/// of the rounded inputs accumulated exactly. D is float, or of the inputs' type when
/// `narrow_d` (rounded once from the float result, so within half an ulp of the narrow type).
template <class Narrow>
void check_narrow_matmul(cublasLtHandle_t handle, cudaDataType type, bool narrow_d) {
  const int m = 17, n = 9, k = 33;
  const std::vector<float> a = values(static_cast<size_t>(m) * k, 4), b = values(static_cast<size_t>(k) * n, 5);
  std::vector<Narrow> a16(a.size()), b16(b.size());
  for (size_t i = 0; i < a.size(); ++i) narrow_value(a[i], a16[i]);
  for (size_t i = 0; i < b.size(); ++i) narrow_value(b[i], b16[i]);
  Narrow* da = upload(a16);
  Narrow* db = upload(b16);
  void* dd = narrow_d ? static_cast<void*>(upload(std::vector<Narrow>(static_cast<size_t>(m) * n)))
                      : static_cast<void*>(upload(std::vector<float>(static_cast<size_t>(m) * n, 0.0f)));
  cublasLtMatmulDesc_t desc;
  ASSERT_CUBLAS(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasLtMatrixLayout_t la, lb, ld;
  ASSERT_CUBLAS(cublasLtMatrixLayoutCreate(&la, type, m, k, m));
  ASSERT_CUBLAS(cublasLtMatrixLayoutCreate(&lb, type, k, n, k));
  ASSERT_CUBLAS(cublasLtMatrixLayoutCreate(&ld, narrow_d ? type : CUDA_R_32F, m, n, m));
  const float alpha = 1.0f, beta = 0.0f;
  ASSERT_CUBLAS(cublasLtMatmul(handle, desc, &alpha, da, la, db, lb, &beta, dd, ld, dd, ld, nullptr, nullptr, 0, 0));
  std::vector<float> got(static_cast<size_t>(m) * n);
  if (narrow_d) {
    const std::vector<Narrow> narrow = download(static_cast<const Narrow*>(dd), got.size());
    for (size_t i = 0; i < got.size(); ++i) got[i] = widen_value(narrow[i]);
  } else {
    got = download(static_cast<const float*>(dd), got.size());
  }
  // Half an ulp of the narrow type: 2^-8 (bf16) or 2^-11 (half) relative.
  const double rounding = !narrow_d ? 0.0 : type == CUDA_R_16BF ? 1.0 / 256 : 1.0 / 2048;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double sum = 0;
      for (int p = 0; p < k; ++p)
        sum += static_cast<double>(widen_value(a16[static_cast<size_t>(p) * m + i])) *
               widen_value(b16[static_cast<size_t>(j) * k + p]);
      ASSERT_NEAR(got[static_cast<size_t>(j) * m + i], sum, 1e-4 * k + std::fabs(sum) * rounding)
          << "at (" << i << ", " << j << ")";
    }
  cublasLtMatrixLayoutDestroy(la);
  cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(ld);
  cublasLtMatmulDescDestroy(desc);
  cudaFree(da);
  cudaFree(db);
  cudaFree(dd);
}

TEST_F(CublasLt, Bf16InputsWithFp32Compute) { check_narrow_matmul<__nv_bfloat16>(handle_, CUDA_R_16BF, false); }

TEST_F(CublasLt, HalfInputsWithFp32ComputeAndAFloatOrHalfResult) {
  check_narrow_matmul<__half>(handle_, CUDA_R_16F, false);
  check_narrow_matmul<__half>(handle_, CUDA_R_16F, true);
}

// The pattern of llm.c and most cuBLASLt programs: a preference with a workspace limit, the
// heuristic's first algorithm, and that algorithm and the workspace passed to the matmul.
TEST_F(CublasLt, MatmulWithTheHeuristicsAlgorithm) {
  const int m = 8, n = 6, k = 5;
  const std::vector<float> a = values(static_cast<size_t>(m) * k, 6), b = values(static_cast<size_t>(k) * n, 7);
  float* da = upload(a);
  float* db = upload(b);
  float* dd = upload(std::vector<float>(static_cast<size_t>(m) * n, 0.0f));
  const size_t workspace_bytes = size_t{32} << 20;
  void* workspace = nullptr;
  ASSERT_CUDA(cudaMalloc(&workspace, workspace_bytes));

  cublasLtMatmulDesc_t desc;
  ASSERT_CUBLAS(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasLtMatrixLayout_t la, lb, ld;
  ASSERT_CUBLAS(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, m, k, m));
  ASSERT_CUBLAS(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, k, n, k));
  ASSERT_CUBLAS(cublasLtMatrixLayoutCreate(&ld, CUDA_R_32F, m, n, m));
  cublasLtMatmulPreference_t preference;
  ASSERT_CUBLAS(cublasLtMatmulPreferenceCreate(&preference));
  const uint64_t limit = workspace_bytes;
  ASSERT_CUBLAS(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &limit,
                                                     sizeof(limit)));
  uint64_t read_back = 0;
  size_t written = 0;
  ASSERT_CUBLAS(cublasLtMatmulPreferenceGetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                     &read_back, sizeof(read_back), &written));
  EXPECT_EQ(read_back, limit);
  EXPECT_EQ(written, sizeof(read_back));
  // A value of the wrong size is refused.
  const uint32_t narrow = 1024;
  EXPECT_EQ(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &narrow,
                                                 sizeof(narrow)),
            CUBLAS_STATUS_INVALID_VALUE);

  cublasLtMatmulHeuristicResult_t heuristic;
  int found = 0;
  EXPECT_EQ(cublasLtMatmulAlgoGetHeuristic(handle_, desc, la, lb, ld, ld, preference, 0, &heuristic, &found),
            CUBLAS_STATUS_INVALID_VALUE);
  ASSERT_CUBLAS(cublasLtMatmulAlgoGetHeuristic(handle_, desc, la, lb, ld, ld, preference, 1, &heuristic, &found));
  ASSERT_EQ(found, 1);
  EXPECT_EQ(heuristic.state, CUBLAS_STATUS_SUCCESS);
  EXPECT_LE(heuristic.workspaceSize, workspace_bytes);
#ifdef CUDASIM
  EXPECT_EQ(heuristic.workspaceSize, 0u);
#endif

  cudaStream_t s;
  ASSERT_CUDA(cudaStreamCreate(&s));
  const float alpha = 2.0f, beta = 0.0f;
  ASSERT_CUBLAS(cublasLtMatmul(handle_, desc, &alpha, da, la, db, lb, &beta, dd, ld, dd, ld, &heuristic.algo,
                               workspace, workspace_bytes, s));
  ASSERT_CUDA(cudaStreamSynchronize(s));
  const std::vector<float> got = download(dd, static_cast<size_t>(m) * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double sum = 0;
      for (int p = 0; p < k; ++p) sum += static_cast<double>(at(a, m, false, i, p)) * at(b, k, false, p, j);
      ASSERT_NEAR(got[static_cast<size_t>(j) * m + i], 2.0 * sum, 1e-4) << "at (" << i << ", " << j << ")";
    }

  ASSERT_CUDA(cudaStreamDestroy(s));
  ASSERT_CUBLAS(cublasLtMatmulPreferenceDestroy(preference));
  cublasLtMatrixLayoutDestroy(la);
  cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(ld);
  cublasLtMatmulDescDestroy(desc);
  cudaFree(workspace);
  cudaFree(da);
  cudaFree(db);
  cudaFree(dd);
}

/// The epilogues llm.c's matmul_forward uses: D = act(A·B + bias), with the pre-activation
/// kept in AUX for the GELU_AUX variants. fp32, m a multiple of 8 (as cuBLASLt wants for AUX).
TEST_F(CublasLt, EpiloguesAddTheBiasThenApplyTheActivation) {
  const int m = 16, n = 5, k = 7;
  const std::vector<float> a = values(static_cast<size_t>(m) * k, 11), b = values(static_cast<size_t>(k) * n, 12);
  std::vector<float> bias = values(m, 13);
  for (float& v : bias) v *= 3.0f;  // big enough that RELU and GELU cut some values
  float* da = upload(a);
  float* db = upload(b);
  float* dbias = upload(bias);
  cublasLtMatrixLayout_t la, lb, ld;
  ASSERT_CUBLAS(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, m, k, m));
  ASSERT_CUBLAS(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, k, n, k));
  ASSERT_CUBLAS(cublasLtMatrixLayoutCreate(&ld, CUDA_R_32F, m, n, m));
  const float alpha = 1.0f, beta = 0.0f;
  for (cublasLtEpilogue_t epilogue : {CUBLASLT_EPILOGUE_BIAS, CUBLASLT_EPILOGUE_RELU_BIAS, CUBLASLT_EPILOGUE_GELU,
                                      CUBLASLT_EPILOGUE_GELU_BIAS, CUBLASLT_EPILOGUE_GELU_AUX_BIAS}) {
    const bool add_bias = epilogue != CUBLASLT_EPILOGUE_GELU, keep = epilogue == CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
    float* dd = upload(std::vector<float>(static_cast<size_t>(m) * n, -7.0f));
    float* daux = upload(std::vector<float>(static_cast<size_t>(m) * n, -7.0f));
    cublasLtMatmulDesc_t desc;
    ASSERT_CUBLAS(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    ASSERT_CUBLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
    if (add_bias)
      ASSERT_CUBLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &dbias, sizeof(dbias)));
    if (keep) {
      const int64_t aux_ld = m;
      ASSERT_CUBLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &daux, sizeof(daux)));
      ASSERT_CUBLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &aux_ld, sizeof(aux_ld)));
    }
    ASSERT_CUBLAS(cublasLtMatmul(handle_, desc, &alpha, da, la, db, lb, &beta, dd, ld, dd, ld, nullptr, nullptr, 0, 0));
    ASSERT_CUDA(cudaDeviceSynchronize());
    const std::vector<float> got = download(dd, static_cast<size_t>(m) * n), aux = download(daux, got.size());
    int cut = 0;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        double pre = add_bias ? bias[i] : 0.0;
        for (int p = 0; p < k; ++p) pre += static_cast<double>(a[static_cast<size_t>(p) * m + i]) * b[static_cast<size_t>(j) * k + p];
        double expected = pre;
        if (epilogue == CUBLASLT_EPILOGUE_RELU_BIAS) expected = pre > 0 ? pre : 0;
        if (epilogue != CUBLASLT_EPILOGUE_BIAS && epilogue != CUBLASLT_EPILOGUE_RELU_BIAS)
          expected = 0.5 * pre * (1.0 + std::tanh(0.7978845608028654 * (pre + 0.044715 * pre * pre * pre)));
        cut += expected != pre;
        const size_t at = static_cast<size_t>(j) * m + i;
        ASSERT_NEAR(got[at], expected, 1e-4) << "epilogue " << epilogue << " at (" << i << ", " << j << ")";
        if (keep) ASSERT_NEAR(aux[at], pre, 1e-4) << "the pre-activation kept in AUX at (" << i << ", " << j << ")";
      }
    if (epilogue != CUBLASLT_EPILOGUE_BIAS) EXPECT_GT(cut, 0) << "the activation changed nothing: a weak test";
    if (!keep) EXPECT_EQ(aux, std::vector<float>(aux.size(), -7.0f)) << "AUX written without a GELU_AUX epilogue";
    cublasLtMatmulDescDestroy(desc);
    cudaFree(dd);
    cudaFree(daux);
  }
  cublasLtMatrixLayoutDestroy(la);
  cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(ld);
  cudaFree(da);
  cudaFree(db);
  cudaFree(dbias);
}

TEST_F(CublasLt, BadArgumentsAreInvalidValues) {
  cublasLtMatmulDesc_t desc;
  EXPECT_EQ(cublasLtMatmulDescCreate(nullptr, CUBLAS_COMPUTE_32F, CUDA_R_32F), CUBLAS_STATUS_INVALID_VALUE);
  ASSERT_CUBLAS(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t op = CUBLAS_OP_T;
  EXPECT_EQ(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, nullptr, sizeof(op)),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &op, 1), CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(cublasLtMatrixLayoutCreate(nullptr, CUDA_R_32F, 4, 4, 4), CUBLAS_STATUS_INVALID_VALUE);
  ASSERT_CUBLAS(cublasLtMatmulDescDestroy(desc));
}

#ifdef CUDASIM
TEST_F(CublasLt, SimulatorRefusesWhatItDoesNotModel) {
  float* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, 64 * sizeof(double)));
  cublasLtMatmulDesc_t desc;
  ASSERT_CUBLAS(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasLtMatrixLayout_t doubles, floats, wrong_shape;
  ASSERT_CUBLAS(cublasLtMatrixLayoutCreate(&doubles, CUDA_R_64F, 4, 4, 4));
  ASSERT_CUBLAS(cublasLtMatrixLayoutCreate(&floats, CUDA_R_32F, 4, 4, 4));
  ASSERT_CUBLAS(cublasLtMatrixLayoutCreate(&wrong_shape, CUDA_R_32F, 5, 4, 5));
  const float alpha = 1.0f, beta = 0.0f;
  EXPECT_EQ(cublasLtMatmul(handle_, desc, &alpha, d, doubles, d, doubles, &beta, d, floats, d, floats, nullptr,
                           nullptr, 0, 0),
            CUBLAS_STATUS_NOT_SUPPORTED);
  // op(A) is 5 x 4 but D is 4 x 4.
  EXPECT_EQ(cublasLtMatmul(handle_, desc, &alpha, d, wrong_shape, d, floats, &beta, d, floats, d, floats, nullptr,
                           nullptr, 0, 0),
            CUBLAS_STATUS_INVALID_VALUE);
  const int epilogue = 192;  // CUBLASLT_EPILOGUE_DGELU: a gradient epilogue
  EXPECT_EQ(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)),
            CUBLAS_STATUS_NOT_SUPPORTED);
  // A bias epilogue without a bias pointer.
  const cublasLtEpilogue_t with_bias = CUBLASLT_EPILOGUE_BIAS;
  ASSERT_CUBLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &with_bias, sizeof(with_bias)));
  EXPECT_EQ(cublasLtMatmul(handle_, desc, &alpha, d, floats, d, floats, &beta, d, floats, d, floats, nullptr,
                           nullptr, 0, 0),
            CUBLAS_STATUS_INVALID_VALUE);
  const cublasLtEpilogue_t plain = CUBLASLT_EPILOGUE_DEFAULT;
  ASSERT_CUBLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &plain, sizeof(plain)));
  // The heuristic finds no algorithm for what the matmul would refuse.
  cublasLtMatmulPreference_t preference;
  ASSERT_CUBLAS(cublasLtMatmulPreferenceCreate(&preference));
  cublasLtMatmulHeuristicResult_t heuristic;
  int found = -1;
  EXPECT_EQ(cublasLtMatmulAlgoGetHeuristic(handle_, desc, doubles, doubles, floats, floats, preference, 1,
                                           &heuristic, &found),
            CUBLAS_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(found, 0);
  ASSERT_CUBLAS(cublasLtMatmulPreferenceDestroy(preference));
  cublasLtMatrixLayoutDestroy(doubles);
  cublasLtMatrixLayoutDestroy(floats);
  cublasLtMatrixLayoutDestroy(wrong_shape);
  cublasLtMatmulDescDestroy(desc);
  ASSERT_CUDA(cudaFree(d));
}
#endif

}  // namespace
