// Warp matrix multiply (nvcuda::wmma) beyond bf16 and fp16 with float accumulators: double at
// m8n8k4, tf32 at m16n16k8, 8-bit integers with int accumulators (wrapping, or saturating with
// satf), and fp16 with __half accumulators. One warp computes D = A * B + C for one tile; the
// inputs are small integers (and halves), so every product and sum is exact and the results must
// equal the CPU's bit for bit. Valid CUDA: the same file runs on a GPU (compute capability 8.0
// or newer).
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <mma.h>

#include <climits>
#include <cstdint>
#include <vector>

namespace {

using namespace nvcuda;

#define ASSERT_CUDA(expr) ASSERT_EQ((expr), cudaSuccess)

/// Copies `values` to a fresh device buffer (freed by the caller).
template <class T>
T* to_device(const std::vector<T>& values) {
  T* p = nullptr;
  EXPECT_EQ(cudaMalloc(&p, values.size() * sizeof(T)), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(p, values.data(), values.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  return p;
}

template <class T>
std::vector<T> to_host(const T* p, std::size_t n) {
  std::vector<T> values(n);
  EXPECT_EQ(cudaMemcpy(values.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  return values;
}

/// D = A * B + C on the CPU, A row-major M x K, B column-major K x N, C and D row-major M x N.
template <class Sum, class A, class C>
std::vector<Sum> reference(const std::vector<A>& a, const std::vector<A>& b, const std::vector<C>& c, int m, int n,
                           int k) {
  std::vector<Sum> d(static_cast<std::size_t>(m) * n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      Sum sum = static_cast<Sum>(c[i * n + j]);
      for (int x = 0; x < k; ++x) sum += static_cast<Sum>(a[i * k + x]) * static_cast<Sum>(b[j * k + x]);
      d[i * n + j] = sum;
    }
  return d;
}

// ---- double, m8n8k4 ---------------------------------------------------------------------------------

__global__ void mma_double(const double* a, const double* b, const double* c, double* d) {
  wmma::fragment<wmma::matrix_a, 8, 8, 4, double, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 8, 8, 4, double, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 8, 8, 4, double> acc;
  wmma::load_matrix_sync(fa, a, 4);
  wmma::load_matrix_sync(fb, b, 4);
  wmma::load_matrix_sync(acc, c, 8, wmma::mem_row_major);
  wmma::mma_sync(acc, fa, fb, acc);
  wmma::store_matrix_sync(d, acc, 8, wmma::mem_row_major);
}

TEST(Wmma, DoubleTilesOfEightByEightByFour) {
  std::vector<double> a(8 * 4), b(8 * 4), c(8 * 8);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(i % 7) - 3.0;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = 0.5 * static_cast<double>(i % 5);
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = static_cast<double>(i);
  double *da = to_device(a), *db = to_device(b), *dc = to_device(c), *dd = to_device(std::vector<double>(64));
  mma_double<<<1, 32>>>(da, db, dc, dd);
  ASSERT_CUDA(cudaGetLastError());
  ASSERT_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(to_host(dd, 64), (reference<double>(a, b, c, 8, 8, 4)));
  for (double* p : {da, db, dc, dd}) cudaFree(p);
}

// ---- tf32, m16n16k8 -----------------------------------------------------------------------------------

__global__ void mma_tf32(const float* a, const float* b, float* d) {
  wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc;
  wmma::load_matrix_sync(fa, a, 8);
  wmma::load_matrix_sync(fb, b, 8);
  for (int i = 0; i < fa.num_elements; ++i) fa.x[i] = wmma::__float_to_tf32(fa.x[i]);
  for (int i = 0; i < fb.num_elements; ++i) fb.x[i] = wmma::__float_to_tf32(fb.x[i]);
  wmma::fill_fragment(acc, 1.0f);
  wmma::mma_sync(acc, fa, fb, acc);
  wmma::store_matrix_sync(d, acc, 16, wmma::mem_row_major);
}

__global__ void round_to_tf32(const float* in, float* out, int n) {
  const int i = threadIdx.x;
  if (i < n) out[i] = wmma::__float_to_tf32(in[i]);
}

TEST(Wmma, Tf32TilesOfSixteenBySixteenByEight) {
  std::vector<float> a(16 * 8), b(16 * 8);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 9) - 4.0f;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = 0.25f * static_cast<float>(i % 6);
  float *da = to_device(a), *db = to_device(b), *dd = to_device(std::vector<float>(256));
  mma_tf32<<<1, 32>>>(da, db, dd);
  ASSERT_CUDA(cudaGetLastError());
  ASSERT_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(to_host(dd, 256), (reference<float>(a, b, std::vector<float>(256, 1.0f), 16, 16, 8)));
  // Rounding keeps 10 mantissa bits, to nearest, ties away from zero: 1 + 2^-11 is a tie.
  const std::vector<float> in = {1.0f + 1.0f / 2048, 1.0f + 1.0f / 4096, -(1.0f + 3.0f / 2048), 3.0f};
  float *d_in = to_device(in), *d_out = to_device(std::vector<float>(in.size()));
  round_to_tf32<<<1, 32>>>(d_in, d_out, static_cast<int>(in.size()));
  ASSERT_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(to_host(d_out, in.size()),
            (std::vector<float>{1.0f + 1.0f / 1024, 1.0f, -(1.0f + 2.0f / 1024), 3.0f}));
  for (float* p : {da, db, dd, d_in, d_out}) cudaFree(p);
}

// ---- 8-bit integers, int accumulators ---------------------------------------------------------------

template <class T>
__global__ void mma_int8(const T* a, const T* b, const int* c, int* d, bool saturate) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, int> acc;
  wmma::load_matrix_sync(fa, a, 16);
  wmma::load_matrix_sync(fb, b, 16);
  wmma::load_matrix_sync(acc, c, 16, wmma::mem_row_major);
  wmma::mma_sync(acc, fa, fb, acc, saturate);
  wmma::store_matrix_sync(d, acc, 16, wmma::mem_row_major);
}

template <class T>
void check_int8(T low, T high) {
  std::vector<T> a(256), b(256);
  for (int i = 0; i < 256; ++i) a[i] = static_cast<T>(i % 2 ? high : low + i % 5);
  for (int i = 0; i < 256; ++i) b[i] = static_cast<T>(i % 3 ? high : low + i % 7);
  std::vector<int> c(256);
  for (int i = 0; i < 256; ++i) c[i] = i - 128;
  c[0] = INT_MAX - 1;  // row 0, column 0 overflows: wraps, or saturates with satf
  T *da = to_device(a), *db = to_device(b);
  int *dc = to_device(c), *dd = to_device(std::vector<int>(256));
  const std::vector<long long> exact = reference<long long>(a, b, c, 16, 16, 16);
  ASSERT_GT(exact[0], static_cast<long long>(INT_MAX));
  for (const bool saturate : {false, true}) {
    mma_int8<T><<<1, 32>>>(da, db, dc, dd, saturate);
    ASSERT_CUDA(cudaGetLastError());
    ASSERT_CUDA(cudaDeviceSynchronize());
    const std::vector<int> d = to_host(dd, 256);
    for (int i = 1; i < 256; ++i) ASSERT_EQ(d[i], exact[i]) << i;
    const int wrapped = static_cast<int>(static_cast<std::uint32_t>(static_cast<unsigned long long>(exact[0])));
    EXPECT_EQ(d[0], saturate ? INT_MAX : wrapped) << "satf " << saturate;
  }
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  cudaFree(dd);
}

TEST(Wmma, SignedAndUnsignedEightBitTilesSumInInt) {
  check_int8<signed char>(-128, 127);
  check_int8<unsigned char>(0, 255);
}

// ---- fp16 with __half accumulators ----------------------------------------------------------------------

__global__ void mma_half_accumulate(const __half* a, const __half* b, __half* d) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, __half> acc;
  wmma::load_matrix_sync(fa, a, 16);
  wmma::load_matrix_sync(fb, b, 16);
  wmma::fill_fragment(acc, __float2half(0.5f));
  wmma::mma_sync(acc, fa, fb, acc);
  wmma::store_matrix_sync(d, acc, 16, wmma::mem_row_major);
}

TEST(Wmma, HalfTilesWithHalfAccumulators) {
  std::vector<float> a(256), b(256);
  for (int i = 0; i < 256; ++i) a[i] = static_cast<float>(i % 5) - 2.0f;
  for (int i = 0; i < 256; ++i) b[i] = static_cast<float>(i % 3);
  std::vector<__half> ha(256), hb(256);
  for (int i = 0; i < 256; ++i) {
    ha[i] = __float2half(a[i]);
    hb[i] = __float2half(b[i]);
  }
  __half *da = to_device(ha), *db = to_device(hb), *dd = to_device(std::vector<__half>(256));
  mma_half_accumulate<<<1, 32>>>(da, db, dd);
  ASSERT_CUDA(cudaGetLastError());
  ASSERT_CUDA(cudaDeviceSynchronize());
  const std::vector<__half> d = to_host(dd, 256);
  const std::vector<float> expected = reference<float>(a, b, std::vector<float>(256, 0.5f), 16, 16, 16);
  for (int i = 0; i < 256; ++i) ASSERT_EQ(__half2float(d[i]), expected[i]) << i;
  for (__half* p : {da, db, dd}) cudaFree(p);
}

}  // namespace
