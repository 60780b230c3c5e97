// The cuBLAS subset against naive CPU loops: cublasSgemm/Dgemm for non-square shapes, every
// transpose combination and padded leading dimensions; strided batched GEMM; GEMV; the level-1
// routines; pointer modes; ordering with kernels on a stream; argument validation and status
// names. Column-major throughout, as cuBLAS. Valid CUDA: the same file runs on a GPU.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "device_buffer.cuh"

namespace {

#define ASSERT_CUDA(expr) ASSERT_EQ((expr), cudaSuccess)
#define ASSERT_CUBLAS(expr) ASSERT_EQ((expr), CUBLAS_STATUS_SUCCESS)

/// Deterministic values in [-1, 1].
template <class T>
std::vector<T> values(size_t n, unsigned seed) {
  std::vector<T> v(n);
  unsigned state = seed * 2654435761u + 1;
  for (T& x : v) {
    state = state * 1664525u + 1013904223u;
    x = static_cast<T>(static_cast<int>(state >> 9) % 2001 - 1000) / T(1000);
  }
  return v;
}

class Cublas : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_CUBLAS(cublasCreate(&handle_)); }
  void TearDown() override { EXPECT_EQ(cublasDestroy(handle_), CUBLAS_STATUS_SUCCESS); }
  cublasHandle_t handle_ = nullptr;
};

/// C = alpha op(A) op(B) + beta C on the CPU, column-major.
template <class T>
void reference_gemm(bool ta, bool tb, int m, int n, int k, T alpha, const std::vector<T>& a, int lda,
                    const std::vector<T>& b, int ldb, T beta, std::vector<T>& c, int ldc) {
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double sum = 0;
      for (int p = 0; p < k; ++p) {
        const T av = ta ? a[p + i * lda] : a[i + p * lda];
        const T bv = tb ? b[j + p * ldb] : b[p + j * ldb];
        sum += static_cast<double>(av) * bv;
      }
      c[i + j * ldc] = static_cast<T>(alpha * sum + beta * c[i + j * ldc]);
    }
}

struct GemmShape { int m, n, k; };

TEST_F(Cublas, SgemmMatchesANaiveLoopForNonSquareShapesAndEveryTranspose) {
  for (const GemmShape s : {GemmShape{5, 7, 3}, GemmShape{33, 17, 65}, GemmShape{1, 40, 9}}) {
    for (const cublasOperation_t ta : {CUBLAS_OP_N, CUBLAS_OP_T}) {
      for (const cublasOperation_t tb : {CUBLAS_OP_N, CUBLAS_OP_T}) {
        const bool a_t = ta == CUBLAS_OP_T, b_t = tb == CUBLAS_OP_T;
        const int a_rows = a_t ? s.k : s.m, a_cols = a_t ? s.m : s.k;
        const int b_rows = b_t ? s.n : s.k, b_cols = b_t ? s.k : s.n;
        const int lda = a_rows + 2, ldb = b_rows + 1, ldc = s.m + 3;  // padded columns
        const std::vector<float> a = values<float>(lda * a_cols, 1), b = values<float>(ldb * b_cols, 2);
        std::vector<float> c = values<float>(ldc * s.n, 3);
        const float alpha = 1.5f, beta = -0.5f;
        DeviceBuffer<float> d_a(a), d_b(b), d_c(c);
        ASSERT_CUBLAS(cublasSgemm(handle_, ta, tb, s.m, s.n, s.k, &alpha, d_a.get(), lda, d_b.get(), ldb,
                                  &beta, d_c.get(), ldc));
        const std::vector<float> got = d_c.download();
        reference_gemm(a_t, b_t, s.m, s.n, s.k, alpha, a, lda, b, ldb, beta, c, ldc);
        for (int j = 0; j < s.n; ++j)
          for (int i = 0; i < ldc; ++i)
            ASSERT_NEAR(got[i + j * ldc], c[i + j * ldc], 1e-4f * (1 + s.k))
                << "m=" << s.m << " n=" << s.n << " k=" << s.k << " ta=" << ta << " tb=" << tb << " at ("
                << i << "," << j << ")" << (i >= s.m ? " (padding must stay untouched)" : "");
      }
    }
  }
}

TEST_F(Cublas, TheMathModeIsKeptPerHandle) {
  cublasMath_t mode = CUBLAS_TENSOR_OP_MATH;
  ASSERT_CUBLAS(cublasGetMathMode(handle_, &mode));
  EXPECT_EQ(mode, CUBLAS_DEFAULT_MATH);
  ASSERT_CUBLAS(cublasSetMathMode(handle_, CUBLAS_TF32_TENSOR_OP_MATH));
  ASSERT_CUBLAS(cublasGetMathMode(handle_, &mode));
  EXPECT_EQ(mode, CUBLAS_TF32_TENSOR_OP_MATH);
}

TEST_F(Cublas, SgemmWithBetaZeroDoesNotReadC) {
  const int m = 4, n = 3, k = 2;
  const std::vector<float> a = values<float>(m * k, 4), b = values<float>(k * n, 5);
  std::vector<float> c(m * n, std::numeric_limits<float>::quiet_NaN());
  DeviceBuffer<float> d_a(a), d_b(b), d_c(c);
  const float alpha = 1.0f, beta = 0.0f;
  ASSERT_CUBLAS(cublasSgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, d_a.get(), m, d_b.get(), k,
                            &beta, d_c.get(), m));
  const std::vector<float> got = d_c.download();
  std::fill(c.begin(), c.end(), 0.0f);
  reference_gemm(false, false, m, n, k, alpha, a, m, b, k, 0.0f, c, m);
  for (int i = 0; i < m * n; ++i) EXPECT_NEAR(got[i], c[i], 1e-5f) << "at " << i;
}

TEST_F(Cublas, DgemmMatchesANaiveLoop) {
  const int m = 6, n = 9, k = 4;
  const std::vector<double> a = values<double>(k * m, 6), b = values<double>(k * n, 7);
  std::vector<double> c = values<double>(m * n, 8);
  DeviceBuffer<double> d_a(a), d_b(b), d_c(c);
  const double alpha = 2.0, beta = 1.0;
  ASSERT_CUBLAS(cublasDgemm(handle_, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, d_a.get(), k, d_b.get(), k,
                            &beta, d_c.get(), m));
  const std::vector<double> got = d_c.download();
  reference_gemm(true, false, m, n, k, alpha, a, k, b, k, beta, c, m);
  for (int i = 0; i < m * n; ++i) EXPECT_NEAR(got[i], c[i], 1e-12) << "at " << i;
}

TEST_F(Cublas, SgemmStridedBatchedMultipliesEachBatchIndependently) {
  const int m = 3, n = 5, k = 4, batches = 3;
  const long long stride_a = m * k + 1, stride_b = k * n, stride_c = m * n + 2;
  const std::vector<float> a = values<float>(stride_a * batches, 9), b = values<float>(stride_b * batches, 10);
  std::vector<float> c = values<float>(stride_c * batches, 11);
  DeviceBuffer<float> d_a(a), d_b(b), d_c(c);
  const float alpha = 1.0f, beta = 2.0f;
  ASSERT_CUBLAS(cublasSgemmStridedBatched(handle_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, d_a.get(), m,
                                          stride_a, d_b.get(), k, stride_b, &beta, d_c.get(), m, stride_c,
                                          batches));
  const std::vector<float> got = d_c.download();
  for (int batch = 0; batch < batches; ++batch) {
    std::vector<float> a_i(a.begin() + batch * stride_a, a.begin() + batch * stride_a + m * k);
    std::vector<float> b_i(b.begin() + batch * stride_b, b.begin() + batch * stride_b + k * n);
    std::vector<float> c_i(c.begin() + batch * stride_c, c.begin() + batch * stride_c + m * n);
    reference_gemm(false, false, m, n, k, alpha, a_i, m, b_i, k, beta, c_i, m);
    for (int i = 0; i < m * n; ++i) EXPECT_NEAR(got[batch * stride_c + i], c_i[i], 1e-5f) << "batch " << batch;
  }
}

// The Ex form of the strided batch, with float and with bf16 operands: each batch is the
// product of its own matrices.
TEST_F(Cublas, GemmStridedBatchedExMultipliesEachBatchIndependently) {
  const int m = 3, n = 5, k = 4, batches = 3;
  const long long stride_a = m * k + 1, stride_b = k * n, stride_c = m * n + 2;
  const std::vector<float> a = values<float>(stride_a * batches, 9), b = values<float>(stride_b * batches, 10);
  const std::vector<float> c = values<float>(stride_c * batches, 11);
  // bf16 copies of A and B, and the float values they hold.
  std::vector<__nv_bfloat16> a16(a.size()), b16(b.size());
  std::vector<float> a_held(a.size()), b_held(b.size());
  for (size_t i = 0; i < a.size(); ++i) a_held[i] = __bfloat162float(a16[i] = __float2bfloat16(a[i]));
  for (size_t i = 0; i < b.size(); ++i) b_held[i] = __bfloat162float(b16[i] = __float2bfloat16(b[i]));
  const float alpha = 1.0f, beta = 2.0f;
  for (const bool bf16 : {false, true}) {
    DeviceBuffer<float> d_a(a), d_b(b), d_c(c);
    DeviceBuffer<__nv_bfloat16> d_a16(a16), d_b16(b16);
    const void* A = bf16 ? static_cast<const void*>(d_a16.get()) : d_a.get();
    const void* B = bf16 ? static_cast<const void*>(d_b16.get()) : d_b.get();
    const cudaDataType type = bf16 ? CUDA_R_16BF : CUDA_R_32F;
    ASSERT_CUBLAS(cublasGemmStridedBatchedEx(handle_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, A, type, m,
                                             stride_a, B, type, k, stride_b, &beta, d_c.get(), CUDA_R_32F, m,
                                             stride_c, batches, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    const std::vector<float> got = d_c.download();
    const std::vector<float>& a_in = bf16 ? a_held : a;
    const std::vector<float>& b_in = bf16 ? b_held : b;
    for (int batch = 0; batch < batches; ++batch) {
      std::vector<float> a_i(a_in.begin() + batch * stride_a, a_in.begin() + batch * stride_a + m * k);
      std::vector<float> b_i(b_in.begin() + batch * stride_b, b_in.begin() + batch * stride_b + k * n);
      std::vector<float> c_i(c.begin() + batch * stride_c, c.begin() + batch * stride_c + m * n);
      reference_gemm(false, false, m, n, k, alpha, a_i, m, b_i, k, beta, c_i, m);
      for (int i = 0; i < m * n; ++i)
        EXPECT_NEAR(got[batch * stride_c + i], c_i[i], 1e-4f) << (bf16 ? "bf16" : "float") << " batch " << batch;
    }
  }
}

/// Half copies of `v`; `held` gets the float values they hold.
std::vector<__half> to_half(const std::vector<float>& v, std::vector<float>& held) {
  std::vector<__half> h(v.size());
  held.resize(v.size());
  for (size_t i = 0; i < v.size(); ++i) held[i] = __half2float(h[i] = __float2half_rn(v[i]));
  return h;
}

std::vector<float> widen(const std::vector<__half>& h) {
  std::vector<float> v(h.size());
  for (size_t i = 0; i < h.size(); ++i) v[i] = __half2float(h[i]);
  return v;
}

/// How far a half result may be from the exact one: the simulator rounds its float result to
/// half once (half an ulp, 2^-11 relative); a GPU under CUBLAS_COMPUTE_16F may round every
/// partial sum of the k terms too.
double half_tolerance(double exact, int k, bool half_compute) {
#ifdef CUDASIM
  (void)k, (void)half_compute;
  return std::fabs(exact) / 2048 + 1e-6;
#else
  return std::fabs(exact) / 2048 + (half_compute ? k * 4.0 / 2048 : 1e-5);
#endif
}

// cublasHgemm, and cublasGemmEx on half matrices with float or half compute and a float or half
// C: the products of the rounded inputs, with a transposed A and padded leading dimensions.
TEST_F(Cublas, HalfGemmsMultiplyTheRoundedInputs) {
  const int m = 5, n = 4, k = 6, lda = k + 1, ldb = k + 2, ldc = m + 1;
  std::vector<float> a_held, b_held, c_held;
  const std::vector<__half> a = to_half(values<float>(lda * m, 41), a_held);  // A^T is stored: k x m
  const std::vector<__half> b = to_half(values<float>(ldb * n, 42), b_held);
  const std::vector<__half> c = to_half(values<float>(ldc * n, 43), c_held);
  const float alpha = 1.5f, beta = 0.5f;  // exact in half
  std::vector<double> exact(ldc * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double sum = 0;
      for (int p = 0; p < k; ++p) sum += double(a_held[i * lda + p]) * b_held[j * ldb + p];
      exact[j * ldc + i] = alpha * sum + beta * c_held[j * ldc + i];
    }
  DeviceBuffer<__half> da(a), db(b);
  const __half alpha_h = __float2half_rn(alpha), beta_h = __float2half_rn(beta);
  struct Case { const char* what; cublasComputeType_t compute; bool half_c; };
  for (const Case& t : {Case{"cublasHgemm", CUBLAS_COMPUTE_16F, true}, Case{"GemmEx 16F", CUBLAS_COMPUTE_16F, true},
                        Case{"GemmEx 32F, half C", CUBLAS_COMPUTE_32F, true},
                        Case{"GemmEx 32F, float C", CUBLAS_COMPUTE_32F, false}}) {
    DeviceBuffer<__half> dc(c);
    DeviceBuffer<float> dc_float(c_held);
    const bool half_scalars = t.compute == CUBLAS_COMPUTE_16F;
    if (std::string(t.what) == "cublasHgemm") {
      ASSERT_CUBLAS(cublasHgemm(handle_, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha_h, da.get(), lda, db.get(), ldb,
                                &beta_h, dc.get(), ldc));
    } else {
      ASSERT_CUBLAS(cublasGemmEx(handle_, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k,
                                 half_scalars ? static_cast<const void*>(&alpha_h) : &alpha, da.get(), CUDA_R_16F, lda,
                                 db.get(), CUDA_R_16F, ldb, half_scalars ? static_cast<const void*>(&beta_h) : &beta,
                                 t.half_c ? static_cast<void*>(dc.get()) : dc_float.get(),
                                 t.half_c ? CUDA_R_16F : CUDA_R_32F, ldc, t.compute, CUBLAS_GEMM_DEFAULT));
    }
    const std::vector<float> got = t.half_c ? widen(dc.download()) : dc_float.download();
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        const double e = exact[j * ldc + i];
        const double tolerance = t.half_c ? half_tolerance(e, k, half_scalars) : 1e-5 * (1 + std::fabs(e));
        EXPECT_NEAR(got[j * ldc + i], e, tolerance) << t.what << " at (" << i << ", " << j << ")";
      }
    // The padding between columns is not written.
    for (int j = 0; j < n; ++j) EXPECT_EQ(got[j * ldc + m], c_held[j * ldc + m]) << t.what;
  }
}

TEST_F(Cublas, HgemmStridedBatchedMultipliesEachBatchIndependently) {
  const int m = 3, n = 2, k = 4, batches = 3;
  const long long stride_a = m * k + 1, stride_b = k * n, stride_c = m * n + 2;
  std::vector<float> a_held, b_held, c_held;
  const std::vector<__half> a = to_half(values<float>(stride_a * batches, 44), a_held);
  const std::vector<__half> b = to_half(values<float>(stride_b * batches, 45), b_held);
  const std::vector<__half> c = to_half(values<float>(stride_c * batches, 46), c_held);
  DeviceBuffer<__half> da(a), db(b), dc(c);
  const __half alpha = __float2half_rn(1.0f), beta = __float2half_rn(-1.0f);
  ASSERT_CUBLAS(cublasHgemmStridedBatched(handle_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, da.get(), m, stride_a,
                                          db.get(), k, stride_b, &beta, dc.get(), m, stride_c, batches));
  const std::vector<float> got = widen(dc.download());
  for (int batch = 0; batch < batches; ++batch)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        double sum = 0;
        for (int p = 0; p < k; ++p) sum += double(a_held[batch * stride_a + p * m + i]) * b_held[batch * stride_b + j * k + p];
        const double e = sum - c_held[batch * stride_c + j * m + i];
        EXPECT_NEAR(got[batch * stride_c + j * m + i], e, half_tolerance(e, k, true)) << "batch " << batch;
      }
}

#ifdef CUDASIM
TEST_F(Cublas, GemmExRefusesTypeCombinationsItDoesNotModel) {
  DeviceBuffer<__half> d(64);
  const float one = 1.0f;
  // Half inputs with a bf16 C, and half C under float compute with half inputs mixed with float.
  EXPECT_EQ(cublasGemmEx(handle_, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, d.get(), CUDA_R_16F, 2, d.get(), CUDA_R_16F,
                         2, &one, d.get(), CUDA_R_16BF, 2, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
            CUBLAS_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(cublasGemmEx(handle_, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, d.get(), CUDA_R_16F, 2, d.get(), CUDA_R_32F,
                         2, &one, d.get(), CUDA_R_32F, 2, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
            CUBLAS_STATUS_NOT_SUPPORTED);
  // A 16-bit compute type with float matrices.
  EXPECT_EQ(cublasGemmEx(handle_, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, d.get(), CUDA_R_32F, 2, d.get(), CUDA_R_32F,
                         2, &one, d.get(), CUDA_R_32F, 2, CUBLAS_COMPUTE_16F, CUBLAS_GEMM_DEFAULT),
            CUBLAS_STATUS_NOT_SUPPORTED);
}
#endif

// Matrices listed in device arrays of pointers: each product uses its own three.
TEST_F(Cublas, SgemmBatchedMultipliesTheMatricesItsArraysList) {
  const int m = 3, n = 4, k = 5, batches = 3;
  std::vector<std::vector<float>> a, b, c;
  std::vector<std::unique_ptr<DeviceBuffer<float>>> d_a, d_b, d_c;
  std::vector<const float*> a_ptrs, b_ptrs;
  std::vector<float*> c_ptrs;
  for (int i = 0; i < batches; ++i) {
    a.push_back(values<float>(m * k, 20 + i));
    b.push_back(values<float>(k * n, 30 + i));
    c.push_back(values<float>(m * n, 40 + i));
    d_a.push_back(std::make_unique<DeviceBuffer<float>>(a.back()));
    d_b.push_back(std::make_unique<DeviceBuffer<float>>(b.back()));
    d_c.push_back(std::make_unique<DeviceBuffer<float>>(c.back()));
    a_ptrs.push_back(d_a.back()->get());
    b_ptrs.push_back(d_b.back()->get());
    c_ptrs.push_back(d_c.back()->get());
  }
  // The arrays of pointers are themselves in device memory, listed in reverse order for C.
  std::reverse(c_ptrs.begin(), c_ptrs.end());
  const float** d_a_ptrs = nullptr;
  const float** d_b_ptrs = nullptr;
  float** d_c_ptrs = nullptr;
  ASSERT_EQ(cudaMalloc(&d_a_ptrs, batches * sizeof(float*)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_b_ptrs, batches * sizeof(float*)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_c_ptrs, batches * sizeof(float*)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d_a_ptrs, a_ptrs.data(), batches * sizeof(float*), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d_b_ptrs, b_ptrs.data(), batches * sizeof(float*), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d_c_ptrs, c_ptrs.data(), batches * sizeof(float*), cudaMemcpyHostToDevice), cudaSuccess);
  const float alpha = 1.0f, beta = -1.0f;
  ASSERT_CUBLAS(cublasSgemmBatched(handle_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, d_a_ptrs, m, d_b_ptrs, k,
                                   &beta, d_c_ptrs, m, batches));
  for (int i = 0; i < batches; ++i) {
    const int into = batches - 1 - i;  // C of product i is the buffer listed i-th, the reverse
    std::vector<float> expected = c[into];
    reference_gemm(false, false, m, n, k, alpha, a[i], m, b[i], k, beta, expected, m);
    const std::vector<float> got = d_c[into]->download();
    for (int j = 0; j < m * n; ++j) EXPECT_NEAR(got[j], expected[j], 1e-4f) << "product " << i << " at " << j;
  }
  cudaFree(d_a_ptrs);
  cudaFree(d_b_ptrs);
  cudaFree(d_c_ptrs);
}

/// L (unit lower) times U, both packed in `lu` as getrf leaves them, column-major.
template <class T>
std::vector<double> times_lu(const std::vector<T>& lu, int n, int lda) {
  std::vector<double> product(static_cast<size_t>(n) * n, 0.0);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i)
      for (int p = 0; p <= std::min(i, j); ++p) {
        const double l = p == i ? 1.0 : lu[i + p * lda];
        product[i + j * n] += l * lu[p + j * lda];
      }
  return product;
}

/// A device array listing `matrices`' device pointers.
template <class T>
T** device_pointer_array(const std::vector<std::unique_ptr<DeviceBuffer<T>>>& matrices) {
  std::vector<T*> pointers;
  for (const auto& m : matrices) pointers.push_back(m->get());
  T** array = nullptr;
  EXPECT_EQ(cudaMalloc(&array, pointers.size() * sizeof(T*)), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(array, pointers.data(), pointers.size() * sizeof(T*), cudaMemcpyHostToDevice), cudaSuccess);
  return array;
}

TEST_F(Cublas, DgetrfBatchedFactorsEachMatrixWithRowInterchanges) {
  const int n = 4, lda = 5, batches = 3;
  std::vector<std::vector<double>> a;
  std::vector<std::unique_ptr<DeviceBuffer<double>>> d_a;
  for (int b = 0; b < batches; ++b) {
    a.push_back(values<double>(lda * n, 50 + b));
    d_a.push_back(std::make_unique<DeviceBuffer<double>>(a.back()));
  }
  // The third matrix has a zero second column: U(2,2) is exactly zero, info says 2.
  for (int i = 0; i < lda; ++i) a[2][i + 1 * lda] = 0.0;
  d_a[2] = std::make_unique<DeviceBuffer<double>>(a[2]);
  double** d_array = device_pointer_array(d_a);
  DeviceBuffer<int> pivots(std::vector<int>(n * batches, -1)), info(std::vector<int>(batches, -1));
  ASSERT_CUBLAS(cublasDgetrfBatched(handle_, n, d_array, lda, pivots.get(), info.get(), batches));
  const std::vector<int> p = pivots.download(), status = info.download();
  EXPECT_EQ(status[0], 0);
  EXPECT_EQ(status[1], 0);
  EXPECT_EQ(status[2], 2);
  for (int b = 0; b < 2; ++b) {
    // Apply the interchanges to A in order (row i with row P[i], 1-based), then P A = L U.
    std::vector<double> pa = a[b];
    for (int i = 0; i < n; ++i) {
      const int with = p[b * n + i] - 1;
      ASSERT_GE(with, i) << "matrix " << b << ", pivot " << i;
      ASSERT_LT(with, n) << "matrix " << b << ", pivot " << i;
      for (int j = 0; j < n; ++j) std::swap(pa[i + j * lda], pa[with + j * lda]);
    }
    const std::vector<double> lu = times_lu(d_a[b]->download(), n, lda);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i)
        EXPECT_NEAR(lu[i + j * n], pa[i + j * lda], 1e-12) << "matrix " << b << " at (" << i << "," << j << ")";
    EXPECT_EQ(d_a[b]->download()[n], a[b][n]) << "the row past n in the leading dimension is left alone";
  }
  cudaFree(d_array);
}

TEST_F(Cublas, SgetrfBatchedWithoutPivotsFactorsInPlaceAndStopsAtAZeroPivot) {
  const int n = 5, batches = 2;
  std::vector<std::vector<float>> a;
  std::vector<std::unique_ptr<DeviceBuffer<float>>> d_a;
  for (int b = 0; b < batches; ++b) {
    a.push_back(values<float>(n * n, 60 + b));
    for (int i = 0; i < n; ++i) a[b][i + i * n] += 4.0f;  // diagonally dominant: no pivoting needed
    d_a.push_back(std::make_unique<DeviceBuffer<float>>(a.back()));
  }
  a[1][0] = 0.0f;  // the first pivot of the second matrix is zero: info says 1
  d_a[1] = std::make_unique<DeviceBuffer<float>>(a[1]);
  float** d_array = device_pointer_array(d_a);
  DeviceBuffer<int> info(std::vector<int>(batches, -1));
  ASSERT_CUBLAS(cublasSgetrfBatched(handle_, n, d_array, n, nullptr, info.get(), batches));
  const std::vector<int> status = info.download();
  EXPECT_EQ(status[0], 0);
  EXPECT_EQ(status[1], 1);
  const std::vector<double> lu = times_lu(d_a[0]->download(), n, n);
  for (int k = 0; k < n * n; ++k) EXPECT_NEAR(lu[k], a[0][k], 1e-5) << "at " << k;
  cudaFree(d_array);
}

/// A times its claimed inverse, minus the identity: its largest element (column-major, n x n).
template <class T>
double distance_from_identity(const std::vector<T>& a, int lda, const std::vector<T>& inverse, int ldc, int n) {
  double worst = 0.0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      double sum = 0.0;
      for (int p = 0; p < n; ++p) sum += static_cast<double>(a[i + p * lda]) * inverse[p + j * ldc];
      worst = std::max(worst, std::abs(sum - (i == j ? 1.0 : 0.0)));
    }
  return worst;
}

TEST_F(Cublas, DgetriBatchedInvertsFromPivotedFactorsAndReportsASingularOne) {
  const int n = 4, lda = 5, ldc = 6, batches = 2;
  std::vector<std::vector<double>> a;
  std::vector<std::unique_ptr<DeviceBuffer<double>>> d_a, d_c;
  for (int b = 0; b < batches; ++b) {
    a.push_back(values<double>(lda * n, 70 + b));
    d_c.push_back(std::make_unique<DeviceBuffer<double>>(std::vector<double>(ldc * n, -7.0)));
  }
  for (int i = 0; i < lda; ++i) a[1][i + 2 * lda] = 0.0;  // a zero third column: U(3,3) is zero
  for (int b = 0; b < batches; ++b) d_a.push_back(std::make_unique<DeviceBuffer<double>>(a[b]));
  double** d_a_array = device_pointer_array(d_a);
  double** d_c_array = device_pointer_array(d_c);
  DeviceBuffer<int> pivots(std::vector<int>(n * batches, -1)), info(std::vector<int>(batches, -1));
  ASSERT_CUBLAS(cublasDgetrfBatched(handle_, n, d_a_array, lda, pivots.get(), info.get(), batches));
  ASSERT_CUBLAS(cublasDgetriBatched(handle_, n, d_a_array, lda, pivots.get(), d_c_array, ldc, info.get(), batches));
  const std::vector<int> status = info.download();
  EXPECT_EQ(status[0], 0);
  EXPECT_EQ(status[1], 3);
  const std::vector<double> inverse = d_c[0]->download();
  EXPECT_LT(distance_from_identity(a[0], lda, inverse, ldc, n), 1e-10);
  EXPECT_EQ(inverse[n], -7.0) << "the rows past n in C's leading dimension are left alone";
  cudaFree(d_a_array);
  cudaFree(d_c_array);
}

TEST_F(Cublas, SgetriBatchedInvertsFromUnpivotedFactors) {
  const int n = 5;
  std::vector<float> a = values<float>(n * n, 80);
  for (int i = 0; i < n; ++i) a[i + i * n] += 4.0f;  // diagonally dominant: no pivoting needed
  std::vector<std::unique_ptr<DeviceBuffer<float>>> d_a, d_c;
  d_a.push_back(std::make_unique<DeviceBuffer<float>>(a));
  d_c.push_back(std::make_unique<DeviceBuffer<float>>(std::vector<float>(n * n, 0.0f)));
  float** d_a_array = device_pointer_array(d_a);
  float** d_c_array = device_pointer_array(d_c);
  DeviceBuffer<int> info(std::vector<int>(1, -1));
  ASSERT_CUBLAS(cublasSgetrfBatched(handle_, n, d_a_array, n, nullptr, info.get(), 1));
  ASSERT_CUBLAS(cublasSgetriBatched(handle_, n, d_a_array, n, nullptr, d_c_array, n, info.get(), 1));
  EXPECT_EQ(info.download()[0], 0);
  EXPECT_LT(distance_from_identity(a, n, d_c[0]->download(), n, n), 1e-4);
  EXPECT_EQ(cublasSgetriBatched(handle_, n, d_a_array, n, nullptr, d_c_array, n - 1, info.get(), 1),
            CUBLAS_STATUS_INVALID_VALUE);
  cudaFree(d_a_array);
  cudaFree(d_c_array);
}

TEST_F(Cublas, GetrfBatchedRefusesBadSizes) {
  DeviceBuffer<int> info(std::vector<int>(1, 0));
  float** none = nullptr;
  EXPECT_EQ(cublasSgetrfBatched(handle_, -1, none, 1, nullptr, info.get(), 1), CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(cublasSgetrfBatched(handle_, 4, none, 3, nullptr, info.get(), 1), CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(cublasSgetrfBatched(handle_, 4, none, 4, nullptr, info.get(), -1), CUBLAS_STATUS_INVALID_VALUE);
}

// Vectors with strides and sub-matrices with leading dimensions, up and down.
TEST_F(Cublas, SetAndGetVectorAndMatrixCopyWithStridesAndLeadingDimensions) {
  const std::vector<float> x = values<float>(12, 50);  // every third element: 4 of them
  float* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 8 * sizeof(float)), cudaSuccess);
  ASSERT_CUBLAS(cublasSetVector(4, sizeof(float), x.data(), 3, d, 2));  // to every second slot
  std::vector<float> back(4, 0.0f);
  ASSERT_CUBLAS(cublasGetVector(4, sizeof(float), d, 2, back.data(), 1));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(back[i], x[3 * i]) << i;
  // A 3 x 2 corner of a 5 x 2 host matrix into a device matrix with lda 4, and back.
  const std::vector<float> host = values<float>(10, 60);
  ASSERT_CUBLAS(cublasSetMatrix(3, 2, sizeof(float), host.data(), 5, d, 4));
  std::vector<float> corner(6, 0.0f);
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  ASSERT_CUBLAS(cublasGetMatrixAsync(3, 2, sizeof(float), d, 4, corner.data(), 3, s));
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  for (int col = 0; col < 2; ++col)
    for (int row = 0; row < 3; ++row) EXPECT_EQ(corner[col * 3 + row], host[col * 5 + row]) << row << "," << col;
  EXPECT_EQ(cublasSetVector(4, sizeof(float), x.data(), 0, d, 1), CUBLAS_STATUS_INVALID_VALUE);
  // lda < rows: the strided copy cannot be made (cuBLAS 13's answer on an H200, 2026-11-27).
  EXPECT_EQ(cublasSetMatrix(3, 2, sizeof(float), host.data(), 2, d, 4), CUBLAS_STATUS_MAPPING_ERROR);
  ASSERT_EQ(cudaStreamDestroy(s), cudaSuccess);
  cudaFree(d);
}

TEST_F(Cublas, SgemvComputesAlphaOpAXPlusBetaY) {
  const int m = 7, n = 5, lda = 9;
  const std::vector<float> a = values<float>(lda * n, 12);
  for (const cublasOperation_t op : {CUBLAS_OP_N, CUBLAS_OP_T}) {
    const int x_len = op == CUBLAS_OP_N ? n : m, y_len = op == CUBLAS_OP_N ? m : n;
    const std::vector<float> x = values<float>(x_len, 13);
    std::vector<float> y = values<float>(y_len, 14);
    DeviceBuffer<float> d_a(a), d_x(x), d_y(y);
    const float alpha = 0.75f, beta = 1.25f;
    ASSERT_CUBLAS(cublasSgemv(handle_, op, m, n, &alpha, d_a.get(), lda, d_x.get(), 1, &beta, d_y.get(), 1));
    const std::vector<float> got = d_y.download();
    for (int i = 0; i < y_len; ++i) {
      double sum = 0;
      for (int p = 0; p < x_len; ++p) sum += (op == CUBLAS_OP_N ? a[i + p * lda] : a[p + i * lda]) * x[p];
      EXPECT_NEAR(got[i], alpha * sum + beta * y[i], 1e-5) << "op " << op << " at " << i;
    }
  }
}

TEST_F(Cublas, SdotSumsTheProductsIntoAHostResult) {
  const int n = 1000;
  const std::vector<float> x = values<float>(n, 15), y = values<float>(n, 16);
  DeviceBuffer<float> d_x(x), d_y(y);
  double expected = 0;
  for (int i = 0; i < n; ++i) expected += static_cast<double>(x[i]) * y[i];
  float result = 0;
  ASSERT_CUBLAS(cublasSdot(handle_, n, d_x.get(), 1, d_y.get(), 1, &result));
  EXPECT_NEAR(result, expected, 1e-3);

  // Every other element of x against the first half of y.
  double strided = 0;
  for (int i = 0; i < n / 2; ++i) strided += static_cast<double>(x[2 * i]) * y[i];
  ASSERT_CUBLAS(cublasSdot(handle_, n / 2, d_x.get(), 2, d_y.get(), 1, &result));
  EXPECT_NEAR(result, strided, 1e-3);

  result = 99;
  ASSERT_CUBLAS(cublasSdot(handle_, 0, d_x.get(), 1, d_y.get(), 1, &result));
  EXPECT_EQ(result, 0.0f);
}

TEST_F(Cublas, SdotInDevicePointerModeWritesADeviceResult) {
  const int n = 64;
  const std::vector<float> x(n, 2.0f), y(n, 0.5f);
  DeviceBuffer<float> d_x(x), d_y(y), d_result(std::vector<float>(1, 0.0f));
  ASSERT_CUBLAS(cublasSetPointerMode(handle_, CUBLAS_POINTER_MODE_DEVICE));
  cublasPointerMode_t mode;
  ASSERT_CUBLAS(cublasGetPointerMode(handle_, &mode));
  EXPECT_EQ(mode, CUBLAS_POINTER_MODE_DEVICE);
  ASSERT_CUBLAS(cublasSdot(handle_, n, d_x.get(), 1, d_y.get(), 1, d_result.get()));
  EXPECT_EQ(d_result.download()[0], 64.0f);
  ASSERT_CUBLAS(cublasSetPointerMode(handle_, CUBLAS_POINTER_MODE_HOST));
}

TEST_F(Cublas, Level1RoutinesMatchTheirDefinitions) {
  const std::vector<float> x = {3.0f, -4.0f, 12.0f, 0.0f};
  std::vector<float> y = {1.0f, 1.0f, 1.0f, 1.0f};
  DeviceBuffer<float> d_x(x), d_y(y);
  float norm = 0, sum = 0;
  ASSERT_CUBLAS(cublasSnrm2(handle_, 4, d_x.get(), 1, &norm));
  EXPECT_NEAR(norm, 13.0f, 1e-5f);
  ASSERT_CUBLAS(cublasSasum(handle_, 4, d_x.get(), 1, &sum));
  EXPECT_NEAR(sum, 19.0f, 1e-5f);
  const float two = 2.0f;
  ASSERT_CUBLAS(cublasSaxpy(handle_, 4, &two, d_x.get(), 1, d_y.get(), 1));
  const std::vector<float> axpy = d_y.download();
  for (int i = 0; i < 4; ++i) EXPECT_EQ(axpy[i], 2.0f * x[i] + 1.0f);
  const float half = 0.5f;
  ASSERT_CUBLAS(cublasSscal(handle_, 2, &half, d_x.get(), 2));  // elements 0 and 2 only
  const std::vector<float> scaled = d_x.download();
  EXPECT_EQ(scaled[0], 1.5f);
  EXPECT_EQ(scaled[1], -4.0f);
  EXPECT_EQ(scaled[2], 6.0f);
  EXPECT_EQ(scaled[3], 0.0f);
}

// The double routines compute in double: each result below differs from float arithmetic's by
// far more than the tolerance (1 + 1e-12 is 1 in float).
TEST_F(Cublas, DoublePrecisionLevel1And2RoutinesComputeInDouble) {
  const double tiny = 1e-12;
  const std::vector<double> x = {1.0 + tiny, -4.0, 12.0, tiny};
  std::vector<double> y = {1.0, tiny, 1.0, 1.0};
  DeviceBuffer<double> d_x(x), d_y(y);
  double dot = 0, norm = 0, sum = 0;
  ASSERT_CUBLAS(cublasDdot(handle_, 4, d_x.get(), 1, d_y.get(), 1, &dot));
  EXPECT_NEAR(dot, (1.0 + tiny) - 4.0 * tiny + 12.0 + tiny, 1e-15);
  ASSERT_CUBLAS(cublasDnrm2(handle_, 4, d_x.get(), 1, &norm));
  EXPECT_NEAR(norm, std::sqrt((1.0 + tiny) * (1.0 + tiny) + 16.0 + 144.0 + tiny * tiny), 1e-14);
  ASSERT_CUBLAS(cublasDasum(handle_, 4, d_x.get(), 1, &sum));
  EXPECT_NEAR(sum, 17.0 + 2 * tiny, 1e-14);
  const double two = 2.0, half = 0.5;
  ASSERT_CUBLAS(cublasDaxpy(handle_, 4, &two, d_x.get(), 1, d_y.get(), 1));
  const std::vector<double> axpy = d_y.download();
  for (int i = 0; i < 4; ++i) EXPECT_EQ(axpy[i], 2.0 * x[i] + y[i]) << i;
  ASSERT_CUBLAS(cublasDscal(handle_, 2, &half, d_x.get(), 2));  // elements 0 and 2 only
  const std::vector<double> scaled = d_x.download();
  EXPECT_EQ(scaled[0], 0.5 * (1.0 + tiny));
  EXPECT_EQ(scaled[1], -4.0);
  EXPECT_EQ(scaled[2], 6.0);

  // y = alpha op(A) x + beta y, both ways, against a loop in double.
  const int m = 7, n = 5, lda = 9;
  std::vector<double> a = values<double>(lda * n, 21);
  a[0] += tiny;
  for (const cublasOperation_t op : {CUBLAS_OP_N, CUBLAS_OP_T}) {
    const int x_len = op == CUBLAS_OP_N ? n : m, y_len = op == CUBLAS_OP_N ? m : n;
    const std::vector<double> gx = values<double>(x_len, 22), gy = values<double>(y_len, 23);
    DeviceBuffer<double> d_a(a), d_gx(gx), d_gy(gy);
    const double alpha = 0.75, beta = 1.25;
    ASSERT_CUBLAS(cublasDgemv(handle_, op, m, n, &alpha, d_a.get(), lda, d_gx.get(), 1, &beta, d_gy.get(), 1));
    const std::vector<double> got = d_gy.download();
    for (int i = 0; i < y_len; ++i) {
      double s = 0;
      for (int p = 0; p < x_len; ++p) s += (op == CUBLAS_OP_N ? a[i + p * lda] : a[p + i * lda]) * gx[p];
      EXPECT_NEAR(got[i], alpha * s + beta * gy[i], 1e-14) << "op " << op << " at " << i;
    }
  }
}

__global__ void fill_slowly(float* x, int n, float value) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {  // one late thread makes the whole kernel late
    const long long start = clock64();
    while (clock64() - start < 20 * 1000 * 1000) {
    }
  }
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = value;
}

__global__ void add_to_each(float* x, int n, float value) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += value;
}

TEST_F(Cublas, CallsRunInOrderWithKernelsOnTheHandlesStream) {
  const int n = 512;
  cudaStream_t stream;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  ASSERT_CUBLAS(cublasSetStream(handle_, stream));
  cudaStream_t got_stream = nullptr;
  ASSERT_CUBLAS(cublasGetStream(handle_, &got_stream));
  EXPECT_EQ(got_stream, stream);

  DeviceBuffer<float> d_x(std::vector<float>(n, 0.0f));
  const float three = 3.0f;
  fill_slowly<<<n / 128, 128, 0, stream>>>(d_x.get(), n, 2.0f);       // x = 2 (late)
  ASSERT_CUBLAS(cublasSscal(handle_, n, &three, d_x.get(), 1));       // x = 6
  add_to_each<<<n / 128, 128, 0, stream>>>(d_x.get(), n, 1.0f);       // x = 7
  float sum = 0;
  ASSERT_CUBLAS(cublasSasum(handle_, n, d_x.get(), 1, &sum));         // waits for the stream
  EXPECT_EQ(sum, 7.0f * n);
  ASSERT_CUDA(cudaStreamSynchronize(stream));
  const std::vector<float> x = d_x.download();
  for (int i = 0; i < n; ++i) ASSERT_EQ(x[i], 7.0f) << "at " << i;
  ASSERT_CUBLAS(cublasSetStream(handle_, nullptr));
  ASSERT_CUDA(cudaStreamDestroy(stream));
}

TEST_F(Cublas, InvalidArgumentsReturnInvalidValueAndDoNothing) {
  std::vector<float> host(64, 1.0f);
  DeviceBuffer<float> d(host);
  const float one = 1.0f;
  float* p = d.get();
  EXPECT_EQ(cublasSgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, -1, 2, 2, &one, p, 2, p, 2, &one, p, 2),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(cublasSgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, 4, 2, 2, &one, p, 3, p, 2, &one, p, 4),
            CUBLAS_STATUS_INVALID_VALUE) << "lda < m";
  EXPECT_EQ(cublasSgemm(handle_, CUBLAS_OP_T, CUBLAS_OP_N, 4, 2, 3, &one, p, 2, p, 3, &one, p, 4),
            CUBLAS_STATUS_INVALID_VALUE) << "lda < k for a transposed A";
  EXPECT_EQ(cublasSgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_T, 2, 4, 2, &one, p, 2, p, 3, &one, p, 2),
            CUBLAS_STATUS_INVALID_VALUE) << "ldb < n for a transposed B";
  EXPECT_EQ(cublasSgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, p, 2, p, 2, &one, p, 1),
            CUBLAS_STATUS_INVALID_VALUE) << "ldc < m";
  EXPECT_EQ(cublasSgemv(handle_, CUBLAS_OP_N, 4, 2, &one, p, 3, p, 1, &one, p, 1), CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(cublasSgemmStridedBatched(handle_, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, p, 2, 4, p, 2, 4, &one,
                                      p, 2, 4, -1),
            CUBLAS_STATUS_INVALID_VALUE);
  // Zero-sized problems are valid and do nothing.
  EXPECT_EQ(cublasSgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, 0, 0, 0, &one, p, 1, p, 1, &one, p, 1),
            CUBLAS_STATUS_SUCCESS);
  for (float v : d.download()) ASSERT_EQ(v, 1.0f);
}

TEST_F(Cublas, SgemvWithAZeroStrideOfXRepeatsItsFirstElement) {
  // cuBLAS 13 accepts incx = 0 (on an H200, 2026-11-27): x[0] stands for every element. It
  // accepts incy = 0 too, all results then going to y[0] in no promised order: not checked.
  const int m = 3, n = 4;
  const std::vector<float> a = values<float>(m * n, 31), x = {2.5f, -7.0f}, y0 = values<float>(m, 32);
  DeviceBuffer<float> da(a), dx(x), dy(y0);
  const float alpha = 0.5f, beta = -1.0f;
  ASSERT_CUBLAS(cublasSgemv(handle_, CUBLAS_OP_N, m, n, &alpha, da.get(), m, dx.get(), 0, &beta, dy.get(), 1));
  const std::vector<float> y = dy.download();
  for (int i = 0; i < m; ++i) {
    double row = 0.0;
    for (int j = 0; j < n; ++j) row += double(a[j * m + i]) * x[0];
    EXPECT_NEAR(y[i], alpha * row + beta * y0[i], 1e-5 * (1.0 + std::fabs(row))) << i;
  }
#ifdef CUDASIM
  // The simulator's choice for incy = 0: the last row's result, computed from y[0] as it was.
  DeviceBuffer<float> one_y(std::vector<float>{4.0f});
  ASSERT_CUBLAS(cublasSgemv(handle_, CUBLAS_OP_N, m, n, &alpha, da.get(), m, dx.get(), 0, &beta, one_y.get(), 0));
  double last = 0.0;
  for (int j = 0; j < n; ++j) last += double(a[j * m + m - 1]) * x[0];
  EXPECT_NEAR(one_y.download()[0], alpha * last + beta * 4.0f, 1e-5 * (1.0 + std::fabs(last)));
#endif
}

TEST(CublasHandles, ANullHandleIsNotInitialized) {
  float result = 0;
  const float one = 1.0f;
  EXPECT_EQ(cublasSdot(nullptr, 0, nullptr, 1, nullptr, 1, &result), CUBLAS_STATUS_NOT_INITIALIZED);
  EXPECT_EQ(cublasSgemm(nullptr, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &one, nullptr, 1, nullptr, 1, &one, nullptr, 1),
            CUBLAS_STATUS_NOT_INITIALIZED);
  EXPECT_EQ(cublasSetStream(nullptr, nullptr), CUBLAS_STATUS_NOT_INITIALIZED);
  EXPECT_EQ(cublasDestroy(nullptr), CUBLAS_STATUS_NOT_INITIALIZED);
}

TEST(CublasStatus, NamesAndValuesMatchTheToolkit) {
  EXPECT_EQ(static_cast<int>(CUBLAS_STATUS_NOT_INITIALIZED), 1);
  EXPECT_EQ(static_cast<int>(CUBLAS_STATUS_INVALID_VALUE), 7);
  EXPECT_EQ(static_cast<int>(CUBLAS_STATUS_EXECUTION_FAILED), 13);
  EXPECT_STREQ(cublasGetStatusName(CUBLAS_STATUS_SUCCESS), "CUBLAS_STATUS_SUCCESS");
  EXPECT_STREQ(cublasGetStatusName(CUBLAS_STATUS_INVALID_VALUE), "CUBLAS_STATUS_INVALID_VALUE");
  EXPECT_STRNE(cublasGetStatusString(CUBLAS_STATUS_INVALID_VALUE), "");
}

#ifdef CUDASIM
// Simulator only: on a GPU a host pointer passed to cuBLAS faults the kernel behind the call
// (cudaErrorIllegalAddress at the next synchronising call); the simulator does the same, and
// says which operand was not device memory.
TEST(CublasDiagnostics, AHostPointerOperandFaultsLikeAnIllegalAddress) {
  {
    cublasHandle_t handle;
    ASSERT_CUBLAS(cublasCreate(&handle));
    std::vector<float> host_a(4, 1.0f);
    DeviceBuffer<float> d_b(std::vector<float>(4, 1.0f)), d_c(std::vector<float>(4, 0.0f));
    const float one = 1.0f, zero = 0.0f;
    testing::internal::CaptureStderr();
    const cublasStatus_t queued = cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, host_a.data(), 2,
                                              d_b.get(), 2, &zero, d_c.get(), 2);
    const cudaError_t synced = cudaDeviceSynchronize();
    const std::string report = testing::internal::GetCapturedStderr();
    EXPECT_EQ(queued, CUBLAS_STATUS_SUCCESS) << "the call is asynchronous; the fault comes later";
    EXPECT_EQ(synced, cudaErrorIllegalAddress);
    EXPECT_NE(report.find("cublasSgemm"), std::string::npos) << report;
    EXPECT_NE(report.find("A ("), std::string::npos) << report;
    EXPECT_NE(report.find("not device memory"), std::string::npos) << report;
    // Later calls fail until the device is reset.
    EXPECT_EQ(cublasSscal(handle, 4, &one, d_c.get(), 1), CUBLAS_STATUS_EXECUTION_FAILED);
    EXPECT_EQ(cublasDestroy(handle), CUBLAS_STATUS_SUCCESS);
  }  // buffers freed before the reset
  EXPECT_EQ(cudaDeviceReset(), cudaSuccess);
  (void)cudaGetLastError();
}
#endif  // CUDASIM

}  // namespace
