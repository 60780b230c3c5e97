/// @file mma.h
/// @brief The simulator's stand-in for CUDA's warp matrix (WMMA) API, `nvcuda::wmma`: tensor
/// core fragments computed on the CPU, with the results a GPU gives and its memory traffic.
///
/// On a GPU a fragment is spread over the 32 lanes of a warp (each lane holds
/// `num_elements` of the tile, in an unspecified order) and the `*_sync` functions are
/// warp-collective. Here every lane holds the *whole* tile, so:
/// - results are those of a GPU (fp32 accumulation of exact bf16 products; summation order
///   along k may differ in the last bits, as it does between GPU generations);
/// - element-wise code that loops `for (int i = 0; i < f.num_elements; ++i)` works, because it
///   does the same to every element on every lane; code that relies on which element a lane
///   holds (the mapping is undocumented in CUDA too) is not portable and is not supported;
/// - memory traffic is counted once per warp, as a GPU moves it: lane 0 of the warp performs
///   the counted (and memchecked) loads and stores, the other lanes read uncounted copies and
///   do not write (their values are identical);
/// - every lane of the warp must call each function with the same arguments, as in CUDA.
///
/// Supported: bf16 (`__nv_bfloat16`) or fp16 (`__half`) A and B fragments with float accumulators, shapes
/// 16x16x16, 32x8x16 and 8x32x16, row- or column-major operands. Anything else stops the
/// build with a message (static_assert).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>  // as the real mma.h: __half and `half` come with it
#include <cuda_runtime.h>

#include <cstddef>
#include <type_traits>

namespace nvcuda {
namespace wmma {

/// Which operand a fragment holds.
struct matrix_a {};
struct matrix_b {};
struct accumulator {};

/// Memory layout of an A or B operand, fixed in the fragment's type.
struct row_major {};
struct col_major {};

/// Memory layout of an accumulator, given at load/store time.
enum layout_t { mem_row_major, mem_col_major };

namespace detail {

template <class Use, int M, int N, int K>
struct shape;  // rows and columns of the tile each operand covers
template <int M, int N, int K>
struct shape<matrix_a, M, N, K> {
  static constexpr int rows = M, cols = K;
};
template <int M, int N, int K>
struct shape<matrix_b, M, N, K> {
  static constexpr int rows = K, cols = N;
};
template <int M, int N, int K>
struct shape<accumulator, M, N, K> {
  static constexpr int rows = M, cols = N;
};

/// The warp lane of the calling thread (its linear index in the block, modulo 32).
inline int lane() {
  const unsigned linear = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  return static_cast<int>(linear % 32u);
}

template <class T>
inline float to_float(T v) {
  return static_cast<float>(v);
}

}  // namespace detail

/// A warp's tile of an operand. `x[]` holds the whole tile (row-major for the tile as the
/// fragment sees it); see the file comment for how that differs from a GPU.
template <class Use, int M, int N, int K, class T, class Layout = void>
class fragment {
  static_assert((M == 16 && N == 16 && K == 16) || (M == 32 && N == 8 && K == 16) ||
                    (M == 8 && N == 32 && K == 16),
                "cudasim's wmma supports the bf16 shapes m16n16k16, m32n8k16 and m8n32k16");
  static_assert(!std::is_same<Use, accumulator>::value || std::is_same<T, float>::value,
                "cudasim's wmma supports float accumulators only");
  static_assert(std::is_same<Use, accumulator>::value || std::is_same<T, __nv_bfloat16>::value ||
                    std::is_same<T, __half>::value,
                "cudasim's wmma supports __nv_bfloat16 and __half matrix_a/matrix_b fragments only");
  static_assert(std::is_same<Use, accumulator>::value || std::is_same<Layout, row_major>::value ||
                    std::is_same<Layout, col_major>::value,
                "a matrix_a or matrix_b fragment needs wmma::row_major or wmma::col_major");

 public:
  static constexpr int rows = detail::shape<Use, M, N, K>::rows;
  static constexpr int cols = detail::shape<Use, M, N, K>::cols;
  static constexpr int num_elements = rows * cols;
  typedef T element_type;
  T x[num_elements];
};

namespace detail {

/// Reads the tile without counting (the lanes other than 0 of a warp). Out of line: inlined
/// into an instrumented caller, newer clangs (22) instrument its loads after all, and lanes
/// 1-31 would be counted as if each had loaded the tile.
template <class T, int R, int C>
__attribute__((no_sanitize("coverage"), noinline)) void copy_in_uncounted(T (&dst)[R * C], const T* src,
                                                                 unsigned ldm, bool col_major) {
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c)
      dst[r * C + c] = col_major ? src[static_cast<size_t>(c) * ldm + r] : src[static_cast<size_t>(r) * ldm + c];
}

/// While alive, lane 0's counted accesses are the whole warp's tile access: one warp-wide request
/// for the coalescing counters and one access on lane 0's critical path.
struct WarpTileAccess {
  WarpTileAccess() { ::cudasim::detail::begin_warp_tile_access(); }
  ~WarpTileAccess() { ::cudasim::detail::end_warp_tile_access(); }
  WarpTileAccess(const WarpTileAccess&) = delete;
  WarpTileAccess& operator=(const WarpTileAccess&) = delete;
};

/// Reads the tile as ordinary, counted and checked accesses (lane 0).
template <class T, int R, int C>
void copy_in_counted(T (&dst)[R * C], const T* src, unsigned ldm, bool col_major) {
  WarpTileAccess tile;
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c)
      dst[r * C + c] = col_major ? src[static_cast<size_t>(c) * ldm + r] : src[static_cast<size_t>(r) * ldm + c];
}

/// An A or B element as a float (exact for both 16-bit types).
inline float operand_float(__nv_bfloat16 v) {
  return ::cudasim::detail::bits_float(static_cast<std::uint32_t>(v.__x) << 16);
}
inline float operand_float(__half v) { return static_cast<float>(v); }

/// D = A * B + C over one tile, float accumulation in k order. Registers only: uncounted,
/// and out of line so that no instrumented caller code is mixed into the loops.
template <int M, int N, int K, class T>
__attribute__((no_sanitize("coverage"), noinline)) void multiply_accumulate(float* d, const T* a, const T* b,
                                                                             const float* c) {
  float fa[M * K], fb[K * N], result[M * N];
  for (int i = 0; i < M * K; ++i) fa[i] = operand_float(a[i]);
  for (int i = 0; i < K * N; ++i) fb[i] = operand_float(b[i]);
  for (int i = 0; i < M * N; ++i) result[i] = c[i];
  for (int i = 0; i < M; ++i)
    for (int k = 0; k < K; ++k) {
      const float aik = fa[i * K + k];
      for (int j = 0; j < N; ++j) result[i * N + j] += aik * fb[k * N + j];
    }
  for (int i = 0; i < M * N; ++i) d[i] = result[i];
}

}  // namespace detail

/// Sets every element of the fragment to `value`.
template <class Use, int M, int N, int K, class T, class Layout>
inline void fill_fragment(fragment<Use, M, N, K, T, Layout>& f, const T& value) {
  for (int i = 0; i < f.num_elements; ++i) f.x[i] = value;
}

/// Loads an A or B tile from `ptr` (global or shared memory); `ldm` is the distance in
/// elements between two rows (row_major) or two columns (col_major) in memory.
template <class Use, int M, int N, int K, class T, class Layout>
inline void load_matrix_sync(fragment<Use, M, N, K, T, Layout>& f, const T* ptr, unsigned ldm) {
  static_assert(!std::is_same<Use, accumulator>::value,
                "loading an accumulator needs a layout: load_matrix_sync(f, ptr, ldm, wmma::mem_row_major)");
  typedef fragment<Use, M, N, K, T, Layout> F;
  const bool col = std::is_same<Layout, col_major>::value;
  if (detail::lane() == 0) {
    detail::copy_in_counted<T, F::rows, F::cols>(f.x, ptr, ldm, col);
  } else {
    detail::copy_in_uncounted<T, F::rows, F::cols>(f.x, ptr, ldm, col);
  }
}

/// Loads an accumulator tile (float) stored with the given layout.
template <int M, int N, int K>
inline void load_matrix_sync(fragment<accumulator, M, N, K, float>& f, const float* ptr, unsigned ldm,
                             layout_t layout) {
  typedef fragment<accumulator, M, N, K, float> F;
  if (detail::lane() == 0) {
    detail::copy_in_counted<float, F::rows, F::cols>(f.x, ptr, ldm, layout == mem_col_major);
  } else {
    detail::copy_in_uncounted<float, F::rows, F::cols>(f.x, ptr, ldm, layout == mem_col_major);
  }
}

/// d = a * b + c (d may be c); a and b both __nv_bfloat16 or both __half.
template <int M, int N, int K, class T, class LayoutA, class LayoutB>
inline void mma_sync(fragment<accumulator, M, N, K, float>& d, const fragment<matrix_a, M, N, K, T, LayoutA>& a,
                     const fragment<matrix_b, M, N, K, T, LayoutB>& b,
                     const fragment<accumulator, M, N, K, float>& c) {
  ::cudasim::detail::count_mma();
  detail::multiply_accumulate<M, N, K, T>(d.x, a.x, b.x, c.x);
}

/// Stores an accumulator tile to `ptr` (global or shared memory) with the given layout. Only
/// lane 0 writes (every lane holds the same values), so the stores are counted once per warp.
template <int M, int N, int K>
inline void store_matrix_sync(float* ptr, const fragment<accumulator, M, N, K, float>& f, unsigned ldm,
                              layout_t layout) {
  if (detail::lane() != 0) return;
  typedef fragment<accumulator, M, N, K, float> F;
  detail::WarpTileAccess tile;
  for (int r = 0; r < F::rows; ++r)
    for (int c = 0; c < F::cols; ++c) {
      const size_t at = layout == mem_col_major ? static_cast<size_t>(c) * ldm + r : static_cast<size_t>(r) * ldm + c;
      ptr[at] = f.x[r * F::cols + c];
    }
}

}  // namespace wmma
}  // namespace nvcuda
