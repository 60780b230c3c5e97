/// @file mma.h
/// @brief The simulator's stand-in for CUDA's warp matrix (WMMA) API, `nvcuda::wmma`: tensor
/// core fragments computed on the CPU, with the results a GPU gives and its memory traffic.
///
/// On a GPU a fragment is spread over the 32 lanes of a warp (each lane holds
/// `num_elements` of the tile, in an unspecified order) and the `*_sync` functions are
/// warp-collective. Here every lane holds the *whole* tile, so:
/// - results are those of a GPU (exact products, summed in k order in fp32, or in the
///   accumulator's own type for double and integers; the order may differ from a GPU's in the
///   last bits, as it does between GPU generations);
/// - element-wise code that loops `for (int i = 0; i < f.num_elements; ++i)` works, because it
///   does the same to every element on every lane; code that relies on which element a lane
///   holds (the mapping is undocumented in CUDA too) is not portable and is not supported;
/// - memory traffic is counted once per warp, as a GPU moves it: lane 0 of the warp performs
///   the counted (and memchecked) loads and stores, the other lanes read uncounted copies and
///   do not write (their values are identical);
/// - every lane of the warp must call each function with the same arguments, as in CUDA.
///
/// Supported, with row- or column-major operands, as CUDA has them:
/// - bf16 (`__nv_bfloat16`) or fp16 (`__half`) A and B with float accumulators, or fp16 with
///   `__half` ones (summed in float, rounded once), shapes 16x16x16, 32x8x16 and 8x32x16;
/// - 8-bit integers (`signed char` or `unsigned char`) with `int` accumulators, the same shapes
///   (a sum past the int range wraps, or saturates with `satf`);
/// - tf32 (`wmma::precision::tf32`, stored as float) with float accumulators, 16x16x8: the
///   products use each operand's top 19 bits, as the tensor cores do (`wmma::__float_to_tf32`
///   rounds a float to them);
/// - double with double accumulators, 8x8x4.
/// Anything else (the sub-byte types of wmma::experimental) stops the build with a message
/// (static_assert).
#pragma once

#include "cudasim/builtin_memory.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>  // as the real mma.h: __half and `half` come with it
#include <cuda_runtime.h>

#include <climits>
#include <cstddef>
#include <cstdint>
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

namespace precision {
/// TensorFloat-32: an fp32 operand of which the tensor cores use the sign, the 8 exponent bits
/// and the top 10 mantissa bits.
struct tf32 {};
}  // namespace precision

namespace detail {

/// `bits` with the low 13 mantissa bits of a finite float dropped, after adding `round`.
inline float tf32_bits(float value, std::uint32_t round) {
  std::uint32_t bits = 0;
  ::cudasim::detail::uncounted_memcpy(&bits, &value, sizeof bits);
  if ((bits & 0x7f800000u) != 0x7f800000u) bits = (bits + round) & 0xffffe000u;  // not inf or NaN
  float out = 0.0f;
  ::cudasim::detail::uncounted_memcpy(&out, &bits, sizeof out);
  return out;
}

}  // namespace detail

/// `in` rounded to tf32 (to nearest, ties away from zero), as PTX's cvt.rna.tf32.f32.
inline float __float_to_tf32(float in) { return detail::tf32_bits(in, 0x1000u); }

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

/// What a fragment of element type T stores, and what fill_fragment takes.
template <class T>
struct storage {
  using type = T;
};
template <>
struct storage<precision::tf32> {
  using type = float;
};
template <class T>
using storage_t = typename storage<T>::type;

template <class T, class... U>
inline constexpr bool one_of = (std::is_same_v<T, U> || ...);

/// The shapes and element types CUDA's wmma has (sub-byte types aside).
template <class Use, int M, int N, int K, class T>
constexpr bool supported() {
  const bool k16 = (M == 16 && N == 16 && K == 16) || (M == 32 && N == 8 && K == 16) || (M == 8 && N == 32 && K == 16);
  const bool k8 = M == 16 && N == 16 && K == 8;
  const bool k4 = M == 8 && N == 8 && K == 4;
  if constexpr (std::is_same_v<Use, accumulator>)
    return (k16 && one_of<T, float, __half, int>) || (k8 && std::is_same_v<T, float>) || (k4 && std::is_same_v<T, double>);
  else
    return (k16 && one_of<T, __nv_bfloat16, __half, signed char, unsigned char>) ||
           (k8 && std::is_same_v<T, precision::tf32>) || (k4 && std::is_same_v<T, double>);
}

}  // namespace detail

/// A warp's tile of an operand. `x[]` holds the whole tile (row-major for the tile as the
/// fragment sees it); see the file comment for how that differs from a GPU.
template <class Use, int M, int N, int K, class T, class Layout = void>
class fragment {
  static_assert(detail::supported<Use, M, N, K, T>(),
                "cudasim's wmma has CUDA's shapes and types: bf16, fp16 or 8-bit integer operands at "
                "m16n16k16, m32n8k16 and m8n32k16 (accumulators: float, or __half for fp16, int for 8-bit), "
                "tf32 at m16n16k8 (float accumulators) and double at m8n8k4");
  static_assert(std::is_same<Use, accumulator>::value || std::is_same<Layout, row_major>::value ||
                    std::is_same<Layout, col_major>::value,
                "a matrix_a or matrix_b fragment needs wmma::row_major or wmma::col_major");

 public:
  static constexpr int rows = detail::shape<Use, M, N, K>::rows;
  static constexpr int cols = detail::shape<Use, M, N, K>::cols;
  static constexpr int num_elements = rows * cols;
  typedef T element_type;
  typedef detail::storage_t<T> storage_element_type;
  storage_element_type x[num_elements];
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

/// The type a tile's products are summed in: double for double operands, a 64-bit integer for
/// 8-bit integers (wrapped or saturated to int at the end), float otherwise.
template <class T>
using sum_t = std::conditional_t<std::is_same_v<T, double>, double,
                                 std::conditional_t<one_of<T, signed char, unsigned char>, long long, float>>;

/// An A or B element as the tensor cores read it: exact for the 16-bit and 8-bit types and
/// double; a tf32 operand loses its low 13 mantissa bits.
template <class T>
sum_t<T> operand_value(const storage_t<T>& v) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return ::cudasim::detail::bits_float(static_cast<std::uint32_t>(v.__x) << 16);
  else if constexpr (std::is_same_v<T, precision::tf32>)
    return tf32_bits(v, 0u);
  else
    return static_cast<sum_t<T>>(v);
}

/// A sum as the accumulator type D: an int wraps (or saturates with `saturate`), a __half rounds.
template <class D, class Sum>
D to_accumulator(Sum sum, bool saturate) {
  if constexpr (std::is_same_v<D, int>) {
    if (saturate) return static_cast<int>(sum < INT_MIN ? INT_MIN : sum > INT_MAX ? INT_MAX : sum);
    return static_cast<int>(static_cast<std::uint32_t>(static_cast<unsigned long long>(sum)));
  } else {
    return static_cast<D>(sum);
  }
}

/// D = A * B + C over one tile, summed in k order. Registers only: uncounted, and out of line
/// so that no instrumented caller code is mixed into the loops.
template <int M, int N, int K, class T, class D, class C>
__attribute__((no_sanitize("coverage"), noinline)) void multiply_accumulate(D* d, const storage_t<T>* a,
                                                                             const storage_t<T>* b, const C* c,
                                                                             bool saturate) {
  using Sum = sum_t<T>;
  Sum fa[M * K], fb[K * N], result[M * N];
  for (int i = 0; i < M * K; ++i) fa[i] = operand_value<T>(a[i]);
  for (int i = 0; i < K * N; ++i) fb[i] = operand_value<T>(b[i]);
  for (int i = 0; i < M * N; ++i) result[i] = static_cast<Sum>(c[i]);
  for (int i = 0; i < M; ++i)
    for (int k = 0; k < K; ++k) {
      const Sum aik = fa[i * K + k];
      for (int j = 0; j < N; ++j) result[i * N + j] += aik * fb[k * N + j];
    }
  for (int i = 0; i < M * N; ++i) d[i] = to_accumulator<D>(result[i], saturate);
}

}  // namespace detail

/// Sets every element of the fragment to `value`.
template <class Use, int M, int N, int K, class T, class Layout>
inline void fill_fragment(fragment<Use, M, N, K, T, Layout>& f, const detail::storage_t<T>& value) {
  for (int i = 0; i < f.num_elements; ++i) f.x[i] = value;
}

/// Loads an A or B tile from `ptr` (global or shared memory); `ldm` is the distance in
/// elements between two rows (row_major) or two columns (col_major) in memory. A tf32 tile is
/// loaded from floats.
template <class Use, int M, int N, int K, class T, class Layout>
inline void load_matrix_sync(fragment<Use, M, N, K, T, Layout>& f, const detail::storage_t<T>* ptr, unsigned ldm) {
  static_assert(!std::is_same<Use, accumulator>::value,
                "loading an accumulator needs a layout: load_matrix_sync(f, ptr, ldm, wmma::mem_row_major)");
  typedef fragment<Use, M, N, K, T, Layout> F;
  typedef detail::storage_t<T> S;
  const bool col = std::is_same<Layout, col_major>::value;
  if (detail::lane() == 0) {
    ::cudasim::detail::count_fragment_transfer(false);
    detail::copy_in_counted<S, F::rows, F::cols>(f.x, ptr, ldm, col);
  } else {
    detail::copy_in_uncounted<S, F::rows, F::cols>(f.x, ptr, ldm, col);
  }
}

/// Loads an accumulator tile stored with the given layout.
template <int M, int N, int K, class T>
inline void load_matrix_sync(fragment<accumulator, M, N, K, T>& f, const T* ptr, unsigned ldm, layout_t layout) {
  typedef fragment<accumulator, M, N, K, T> F;
  if (detail::lane() == 0) {
    detail::copy_in_counted<T, F::rows, F::cols>(f.x, ptr, ldm, layout == mem_col_major);
  } else {
    detail::copy_in_uncounted<T, F::rows, F::cols>(f.x, ptr, ldm, layout == mem_col_major);
  }
}

/// d = a * b + c (d may be c): a and b of one element type, d and c accumulators of the type
/// CUDA pairs with it (fp16 operands may mix float and __half). `satf`, for 8-bit integers,
/// saturates the int sums instead of letting them wrap.
template <int M, int N, int K, class T, class LayoutA, class LayoutB, class D, class C>
inline void mma_sync(fragment<accumulator, M, N, K, D>& d, const fragment<matrix_a, M, N, K, T, LayoutA>& a,
                     const fragment<matrix_b, M, N, K, T, LayoutB>& b, const fragment<accumulator, M, N, K, C>& c,
                     bool satf = false) {
  static_assert(std::is_same_v<D, C> || (std::is_same_v<T, __half> && detail::one_of<D, float, __half> &&
                                         detail::one_of<C, float, __half>),
                "d and c must be accumulators of one type (fp16 operands may mix float and __half)");
  static_assert(!std::is_same_v<T, __nv_bfloat16> || std::is_same_v<D, float>, "bf16 operands accumulate in float");
  static_assert(detail::one_of<T, signed char, unsigned char> == std::is_same_v<D, int>,
                "8-bit integer operands, and only they, accumulate in int");
  ::cudasim::detail::count_mma();
  detail::multiply_accumulate<M, N, K, T, D, C>(d.x, a.x, b.x, c.x, satf);
}

/// Stores an accumulator tile to `ptr` (global or shared memory) with the given layout. Only
/// lane 0 writes (every lane holds the same values), so the stores are counted once per warp.
template <int M, int N, int K, class T>
inline void store_matrix_sync(T* ptr, const fragment<accumulator, M, N, K, T>& f, unsigned ldm, layout_t layout) {
  if (detail::lane() != 0) return;
  ::cudasim::detail::count_fragment_transfer(true);
  typedef fragment<accumulator, M, N, K, T> F;
  detail::WarpTileAccess tile;
  for (int r = 0; r < F::rows; ++r)
    for (int c = 0; c < F::cols; ++c) {
      const size_t at = layout == mem_col_major ? static_cast<size_t>(c) * ldm + r : static_cast<size_t>(r) * ldm + c;
      ptr[at] = f.x[r * F::cols + c];
    }
}

}  // namespace wmma
}  // namespace nvcuda
