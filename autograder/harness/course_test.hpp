/// @file course_test.hpp
/// @brief Header-only helpers shared by every lesson's GoogleTest suites.
///
/// What a suite gets from here, and why:
/// - `DeviceBuffer<T>`: owns device memory (RAII), uploads and downloads `std::vector`s, and
///   can `poison()` itself so an output element the kernel never wrote reads as NaN and fails.
/// - `Rng`: seeded random inputs. The seed comes from the environment variable `COURSE_SEED`
///   when set, else fresh from `std::random_device`; it is printed with every failing test
///   so the exact inputs can be replayed: `COURSE_SEED=<seed> ./<test> --gtest_filter=<name>`.
///   Each test mixes its own name into the seed, so one test replays alone with the same
///   inputs it had in the full run.
/// - `awkward_sizes()`: the sizes where indexing bugs live (1, around a block, around a
///   power of two, one large size).
/// - `all_close()` / `all_close_2d()`: tolerant comparison against a CPU reference (compute
///   it in `double`), rejecting NaN and Inf, with a message that says how many elements are
///   wrong, the first few (index or row/col) with expected and actual, the tolerance, the seed.
/// - `reduction_tolerance()`: a tolerance that grows with the length of a sum, for dot
///   products, reductions and matrix multiplications.
/// - `guard_pattern()` / `guard_untouched()`: detect writes past the end of an output.
///
/// A typical test:
/// @code
///   TEST(VectorAdd, MatchesCpuOnAwkwardSizes) {
///     course::test::Rng rng;
///     for (int n : course::test::awkward_sizes()) {
///       auto a = rng.uniform(n, -1.0f, 1.0f), b = rng.uniform(n, -1.0f, 1.0f);
///       std::vector<double> expected(n);
///       for (int i = 0; i < n; ++i) expected[i] = double(a[i]) + double(b[i]);
///       course::test::DeviceBuffer<float> d_a(a), d_b(b), d_c(n);
///       d_c.poison();
///       launch_vector_add(d_a.get(), d_b.get(), d_c.get(), n);
///       EXPECT_TRUE(course::test::all_close(expected, d_c.download(), 1e-6, 1e-6)) << "n = " << n;
///     }
///   }
/// @endcode
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include "cuda_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iterator>
#include <limits>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace course {
namespace test {

// ---------------------------------------------------------------------------------------
// Seeds
// ---------------------------------------------------------------------------------------

/// The run's base seed: `COURSE_SEED` from the environment when it is set to a number,
/// otherwise drawn once from `std::random_device`. The same value for the whole process.
inline std::uint64_t seed() {
  static const std::uint64_t value = [] {
    if (const char* env = std::getenv("COURSE_SEED")) {
      char* end = nullptr;
      const unsigned long long parsed = std::strtoull(env, &end, 10);
      if (end != env && *end == '\0') return static_cast<std::uint64_t>(parsed);
      std::fprintf(stderr, "[ COURSE   ] ignoring COURSE_SEED='%s' (not a number)\n", env);
    }
    std::random_device device;
    return (static_cast<std::uint64_t>(device()) << 32) ^ device();
  }();
  return value;
}

/// One line to append to failure messages: how to replay this run's inputs.
inline std::string seed_note() {
  return "seed: " + std::to_string(seed()) + " (replay with COURSE_SEED=" +
         std::to_string(seed()) + ")";
}

namespace detail {

/// FNV-1a, so a test's name maps to the same number on every platform and run.
inline std::uint64_t stable_hash(const std::string& text) {
  std::uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

/// "Suite.Name" of the running test, or "" outside a test.
inline std::string current_test_name() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  if (info == nullptr) return "";
  return std::string(info->test_suite_name()) + "." + info->name();
}

/// Prints the seed at the start of the run and again after every failing test, so every
/// failure in the log (including plain EXPECT_EQ ones) comes with its replay command.
class SeedReporter : public ::testing::EmptyTestEventListener {
 public:
  void OnTestProgramStart(const ::testing::UnitTest&) override {
    std::printf("[ COURSE   ] %s\n", seed_note().c_str());
  }
  void OnTestEnd(const ::testing::TestInfo& info) override {
    if (info.result() != nullptr && info.result()->Failed()) {
      std::printf("[ COURSE   ] %s.%s failed with seed %llu; replay: COURSE_SEED=%llu "
                  "<test binary> --gtest_filter=%s.%s\n",
                  info.test_suite_name(), info.name(),
                  static_cast<unsigned long long>(seed()),
                  static_cast<unsigned long long>(seed()), info.test_suite_name(), info.name());
    }
  }
};

/// Registered once per test binary, before `main` runs the tests (GoogleTest owns it).
inline const bool seed_reporter_registered = [] {
  ::testing::UnitTest::GetInstance()->listeners().Append(new SeedReporter);
  return true;
}();

}  // namespace detail

// ---------------------------------------------------------------------------------------
// Random inputs
// ---------------------------------------------------------------------------------------

/// Seeded random numbers for test inputs. Default-constructed inside a test, the stream
/// depends on the run's `seed()` and the test's name only, so it is reproducible.
class Rng {
 public:
  /// Stream for the running test (seed() mixed with "Suite.Name").
  Rng() : Rng(detail::stable_hash(detail::current_test_name())) {}

  /// Stream for an explicit salt, still derived from the run's seed().
  explicit Rng(std::uint64_t salt) : engine_(seed() ^ (salt * 0x9E3779B97F4A7C15ull)) {}

  /// `count` values uniform in [lo, hi] (hi itself only through rounding to T). Requires
  /// lo < hi, so the inputs are never all zero (a kernel that writes zeros, or nothing,
  /// cannot pass by luck).
  template <typename T = float>
  std::vector<T> uniform(std::size_t count, T lo = T(-1), T hi = T(1)) {
    static_assert(std::is_floating_point<T>::value, "uniform() makes floating-point values");
    if (!(lo < hi)) throw std::invalid_argument("Rng::uniform: need lo < hi");
    const double low = static_cast<double>(lo), span = static_cast<double>(hi) - low;
    std::vector<T> out(count);
    for (auto& v : out) v = static_cast<T>(low + span * unit());
    return out;
  }

  /// `count` values whose magnitude is uniform in [min_abs, max_abs] with a random sign.
  /// Requires 0 < min_abs <= max_abs: no element is zero or tiny, so "output == input"
  /// (a kernel that did nothing) is always caught, element by element.
  template <typename T = float>
  std::vector<T> nonzero(std::size_t count, T min_abs = T(0.25), T max_abs = T(1)) {
    static_assert(std::is_floating_point<T>::value, "nonzero() makes floating-point values");
    if (!(min_abs > T(0) && min_abs <= max_abs))
      throw std::invalid_argument("Rng::nonzero: need 0 < min_abs <= max_abs");
    const double low = static_cast<double>(min_abs);
    const double span = static_cast<double>(max_abs) - low;
    std::vector<T> out(count);
    for (auto& v : out) {
      // One 64-bit draw: the top 53 bits give the magnitude, the lowest bit the sign.
      const std::uint64_t bits = engine_();
      const double m = low + span * (static_cast<double>(bits >> 11) * 0x1.0p-53);
      v = static_cast<T>((bits & 1u) ? -m : m);
    }
    return out;
  }

  /// One value uniform in [0, 1), from the top 53 bits of one draw. (Hand-rolled because
  /// libstdc++'s uniform_real_distribution calls log() per value: 10x slower on 10^6 values.)
  double unit() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

  /// One value uniform in [lo, hi).
  double scalar(double lo, double hi) { return lo + (hi - lo) * unit(); }

  /// One integer uniform in [lo, hi].
  int integer(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(engine_); }

  /// The underlying engine, for distributions not covered above.
  std::mt19937_64& engine() { return engine_; }

 private:
  std::mt19937_64 engine_;
};

// ---------------------------------------------------------------------------------------
// Sizes
// ---------------------------------------------------------------------------------------

/// `v` after `steps` steps of v = fma(v, a, b) in fp32, one after the other, as a kernel that
/// runs the chain computes it (fp32's fused multiply-add gives the same bits on any machine).
inline float fma_chain(float v, float a, float b, int steps) {
  for (int s = 0; s < steps; ++s) v = std::fma(v, a, b);
  return v;
}

/// A size a little above one million (2^20 + 3): big enough to need many blocks and to show
/// bandwidth effects, small enough that a suite stays fast on the CPU simulator.
inline int large_size() { return (1 << 20) + 3; }

/// Sizes where 1-D indexing bugs show: 1, a warp and its neighbours, 127/128/129, the
/// block size and its neighbours, non-multiples of it, and `large_size()`. Sorted, unique.
/// @param block_size the block size the exercise uses (its neighbours are added)
inline std::vector<int> awkward_sizes(int block_size = 256) {
  std::vector<int> sizes = {1,    2,    31,   32,   33,   127,  128,  129,         255, 256,
                            257,  1000, 4097, 65537, large_size()};
  if (block_size > 1) {
    for (int s : {block_size - 1, block_size, block_size + 1, 3 * block_size + 7})
      sizes.push_back(s);
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

/// Like `awkward_sizes()` but without the large one, for exercises whose CPU reference
/// is expensive (e.g. O(n^2) or O(n^3)).
inline std::vector<int> small_awkward_sizes(int block_size = 256) {
  std::vector<int> sizes = awkward_sizes(block_size);
  sizes.erase(std::remove_if(sizes.begin(), sizes.end(), [](int s) { return s > 5000; }),
              sizes.end());
  return sizes;
}

/// 2-D shapes (rows, cols) where 2-D indexing bugs show: single row/column, one pixel,
/// non-multiples of a 16x16 tile, and a camera-sized frame.
inline std::vector<std::pair<int, int>> awkward_shapes() {
  return {{1, 1}, {1, 1000}, {1000, 1}, {15, 17}, {127, 129}, {129, 127}, {480, 640}};
}

// ---------------------------------------------------------------------------------------
// Device memory
// ---------------------------------------------------------------------------------------

/// Owns `size()` elements of device memory (`cudaMalloc`/`cudaFree`). Move-only.
/// A zero-sized buffer holds a null pointer and allocates nothing.
template <typename T>
class DeviceBuffer {
  static_assert(std::is_trivially_copyable<T>::value, "DeviceBuffer holds plain data only");

 public:
  DeviceBuffer() = default;

  /// Allocates `count` elements, contents undefined (call `poison()` for outputs).
  explicit DeviceBuffer(std::size_t count) : size_(count) {
    if (count > 0) CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), bytes()));
  }

  /// Allocates `host.size()` elements and uploads `host`.
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }

  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }

  /// Frees the memory; an error here cannot be thrown from a destructor and is ignored.
  ~DeviceBuffer() { release(); }

  /// Device pointer (null when empty). Pass it to launchers; never dereference on the host.
  T* get() { return data_; }
  const T* get() const { return data_; }

  std::size_t size() const { return size_; }
  std::size_t bytes() const { return size_ * sizeof(T); }

  /// Copies `host` to the start of the buffer, finished before it returns. Requires
  /// `host.size() <= size()`. (cudaMemcpy from pageable memory may return before the data has
  /// reached the device, and a submission's non-blocking streams do not wait for it.)
  void upload(const std::vector<T>& host) {
    if (host.size() > size_) throw std::length_error("DeviceBuffer::upload: host data too long");
    if (!host.empty()) {
      CUDA_CHECK(cudaMemcpy(data_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
      CUDA_CHECK(cudaDeviceSynchronize());
    }
  }

  /// Copies the whole buffer to the host. Synchronizes, so errors from earlier kernels show
  /// up here as a `CudaError` (GoogleTest reports it as a failed test).
  std::vector<T> download() const {
    std::vector<T> host(size_);
    if (size_ > 0)
      CUDA_CHECK(cudaMemcpy(host.data(), data_, bytes(), cudaMemcpyDeviceToHost));
    return host;
  }

  /// Fills every byte with 0xFF. For float and double that bit pattern is a NaN, for signed
  /// integers -1: an output element the kernel never writes fails the comparison.
  /// Finished before it returns: cudaMemset fills on the legacy stream, which a submission's
  /// non-blocking streams do not wait for (lesson 05's own fill raced that way on an H200).
  void poison() {
    if (size_ > 0) {
      CUDA_CHECK(cudaMemset(data_, 0xFF, bytes()));
      CUDA_CHECK(cudaDeviceSynchronize());
    }
  }

 private:
  void release() noexcept {
    if (data_ != nullptr) cudaFree(data_);
    data_ = nullptr;
    size_ = 0;
  }

  T* data_ = nullptr;
  std::size_t size_ = 0;
};

// ---------------------------------------------------------------------------------------
// Tolerances
// ---------------------------------------------------------------------------------------

/// An element passes when |actual - expected| <= abs + rel * |expected|.
struct Tolerance {
  double abs;  ///< absolute part, dominates near zero
  double rel;  ///< relative part, dominates for large values
};

/// For element-wise float kernels (a few flops per element, no long sums): a few float ulps.
inline Tolerance elementwise_tolerance() { return {1e-6, 4.0 * std::numeric_limits<float>::epsilon()}; }

/// For results that are sums of `length` terms (dot products, reductions, matmul with
/// K = length), accumulated in a type whose unit round-off is `unit_roundoff`
/// (float: 2^-23 ~ 1.2e-7; pass e.g. 2^-8 for bf16 inputs or 2^-11 for tf32).
///
/// Why it grows: each of the `length` additions may round by one ulp of the running sum;
/// with random-sign terms of size `term_magnitude` the running sum is about
/// sqrt(length) * term_magnitude and the rounding errors add up like a random walk, so the
/// error stays below ~ unit_roundoff * length * term_magnitude in practice. A different
/// summation order (tree, warp shuffles, blocks) changes the result within that bound.
/// The safety factor 4 keeps correct kernels passing across seeds; a kernel that drops or
/// doubles one term is still off by ~term_magnitude and fails.
inline Tolerance reduction_tolerance(std::size_t length, double term_magnitude = 1.0,
                                     double unit_roundoff = std::numeric_limits<float>::epsilon()) {
  const double n = static_cast<double>(std::max<std::size_t>(length, 1));
  return {4.0 * unit_roundoff * n * term_magnitude + 1e-6 * term_magnitude,
          4.0 * unit_roundoff * std::sqrt(n)};
}

// ---------------------------------------------------------------------------------------
// Comparison
// ---------------------------------------------------------------------------------------

namespace detail {

/// How many mismatches a failure message lists.
constexpr std::size_t kShownMismatches = 8;

inline std::string format_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char text[64];
  std::snprintf(text, sizeof text, "%.9g", v);
  return text;
}

inline std::string format_tolerance(double abs_tol, double rel_tol) {
  return "|actual - expected| <= " + format_number(abs_tol) + " + " + format_number(rel_tol) +
         " * |expected|";
}

/// Shared by all_close() and all_close_2d(); `where(i)` names position i ("[i]", "(r, c)").
template <typename E, typename A>
::testing::AssertionResult compare(const std::vector<E>& expected, const std::vector<A>& actual,
                                   double abs_tol, double rel_tol,
                                   const std::function<std::string(std::size_t)>& where) {
  if (expected.size() != actual.size()) {
    return ::testing::AssertionFailure()
           << "size mismatch: expected " << expected.size() << " elements, got "
           << actual.size() << "\n" << seed_note();
  }
  std::size_t wrong = 0, not_finite = 0;
  std::ostringstream shown;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const double e = static_cast<double>(expected[i]);
    const double a = static_cast<double>(actual[i]);
    const bool finite = std::isfinite(a);
    // Written as !(ok) so that a NaN (which compares false with everything) counts as wrong.
    const bool ok = finite && std::fabs(a - e) <= abs_tol + rel_tol * std::fabs(e);
    if (ok) continue;
    ++wrong;
    if (!finite) ++not_finite;
    if (wrong <= kShownMismatches) {
      shown << "  at " << where(i) << ": expected " << format_number(e) << ", actual "
            << format_number(a);
      if (finite) shown << " (off by " << format_number(std::fabs(a - e)) << ")";
      else shown << " (not finite)";
      shown << "\n";
    }
  }
  if (wrong == 0) return ::testing::AssertionSuccess();

  auto failure = ::testing::AssertionFailure();
  failure << wrong << " of " << expected.size() << " elements are wrong";
  if (not_finite > 0) failure << " (" << not_finite << " NaN/Inf)";
  failure << "; tolerance " << format_tolerance(abs_tol, rel_tol) << "\n";
  failure << "first " << std::min(wrong, kShownMismatches) << ":\n" << shown.str();
  if (not_finite > 0) {
    failure << "  hint: NaN is what outputs are filled with before the run (poisoned), so these "
               "elements were probably never written\n";
  }
  failure << seed_note();
  return failure;
}

}  // namespace detail

/// Compares `actual` (what the GPU produced) with `expected` (a CPU reference, ideally
/// computed in double) element by element: |actual - expected| <= abs_tol + rel_tol*|expected|.
/// NaN and Inf in `actual` always fail. The failure message gives the number of wrong
/// elements, the first few indices with expected/actual, the tolerance and the seed.
template <typename E, typename A>
::testing::AssertionResult all_close(const std::vector<E>& expected, const std::vector<A>& actual,
                                     double abs_tol, double rel_tol) {
  return detail::compare(expected, actual, abs_tol, rel_tol,
                         [](std::size_t i) { return "[" + std::to_string(i) + "]"; });
}

/// `all_close()` with a `Tolerance`.
template <typename E, typename A>
::testing::AssertionResult all_close(const std::vector<E>& expected, const std::vector<A>& actual,
                                     Tolerance tol) {
  return all_close(expected, actual, tol.abs, tol.rel);
}

/// `all_close()` for a row-major `rows` x `cols` matrix (or image): positions are reported
/// as (row, col). Requires expected.size() == rows * cols.
template <typename E, typename A>
::testing::AssertionResult all_close_2d(const std::vector<E>& expected,
                                        const std::vector<A>& actual, std::size_t rows,
                                        std::size_t cols, double abs_tol, double rel_tol) {
  if (expected.size() != rows * cols) {
    return ::testing::AssertionFailure()
           << "test bug: expected has " << expected.size() << " elements, not " << rows << " x "
           << cols;
  }
  return detail::compare(expected, actual, abs_tol, rel_tol, [cols](std::size_t i) {
    return "(row " + std::to_string(i / cols) + ", col " + std::to_string(i % cols) + ")";
  });
}

/// `all_close_2d()` with a `Tolerance`.
template <typename E, typename A>
::testing::AssertionResult all_close_2d(const std::vector<E>& expected,
                                        const std::vector<A>& actual, std::size_t rows,
                                        std::size_t cols, Tolerance tol) {
  return all_close_2d(expected, actual, rows, cols, tol.abs, tol.rel);
}

// ---------------------------------------------------------------------------------------
// Guards: catching writes past the end
// ---------------------------------------------------------------------------------------

/// How many guard elements tests put after an output: more than a warp, so a kernel that
/// rounds n up to a whole warp or a small block and writes there is caught.
constexpr std::size_t kGuardElements = 300;

/// `count` distinctive values (12345.5, 12346.5, ...) no kernel of the course produces by
/// accident; place them after the real output and check them with `guard_untouched()`.
template <typename T = float>
std::vector<T> guard_pattern(std::size_t count = kGuardElements) {
  std::vector<T> out(count);
  for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<T>(12345.5 + static_cast<double>(i));
  return out;
}

/// Checks that `buffer[first + i] == guard_pattern()[i]` bit for bit for every guard element.
/// The message names the first overwritten element as "n + k" (k elements past the end).
template <typename T>
::testing::AssertionResult guard_untouched(const std::vector<T>& buffer, std::size_t first,
                                           std::size_t count = kGuardElements) {
  const std::vector<T> pattern = guard_pattern<T>(count);
  if (buffer.size() < first + count)
    return ::testing::AssertionFailure() << "test bug: buffer too small for its guard";
  std::size_t overwritten = 0, first_bad = 0;
  for (std::size_t i = 0; i < count; ++i) {
    // Compared as values written by guard_pattern(); a NaN or any other value is a write.
    if (!(buffer[first + i] == pattern[i])) {
      if (overwritten++ == 0) first_bad = i;
    }
  }
  if (overwritten == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << overwritten << " of " << count << " guard elements past the end were overwritten; "
         << "first at n + " << first_bad << " (now " << detail::format_number(static_cast<double>(buffer[first + first_bad]))
         << "). A thread with index >= n wrote memory it does not own: add or fix the bounds "
            "check.\n"
         << seed_note();
}

/// CPU reference of a row-major matrix product, accumulated in double:
/// C (m x n) = A (m x k) * B (k x n). The reference every matmul-shaped test compares with.
inline std::vector<double> reference_matmul(const std::vector<float>& a, const std::vector<float>& b, int m,
                                            int n, int k) {
  std::vector<double> c(static_cast<std::size_t>(m) * n, 0.0);
  for (int i = 0; i < m; ++i)
    for (int p = 0; p < k; ++p) {
      const double aip = a[static_cast<std::size_t>(i) * k + p];
      for (int j = 0; j < n; ++j) c[static_cast<std::size_t>(i) * n + j] += aip * b[static_cast<std::size_t>(p) * n + j];
    }
  return c;
}

}  // namespace test
}  // namespace course

// ---------------------------------------------------------------------------------------
// Memory traffic counted by the simulator: course_traffic.hpp (no GoogleTest there, so the
// grader's worker process, which runs the submission, can count without it)
// ---------------------------------------------------------------------------------------

#include "course_traffic.hpp"
