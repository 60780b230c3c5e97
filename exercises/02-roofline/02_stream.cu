// Exercise 02/02: STREAM copy, scale, add and triad with 16-byte accesses.
//
// What it teaches: a memory-bound kernel is as fast as its bytes move, so the only things
// that matter are moving each byte once and moving it in big, aligned pieces. A float4 load
// is one 16-byte instruction instead of four 4-byte ones: a quarter of the load/store
// instructions, and whole 128-byte cache lines per warp. float4 accesses need 16-byte
// aligned addresses, so an array that starts mid-way through 16 bytes is done in three
// parts: a scalar head up to the first 16-byte boundary, float4s, and a scalar tail of the
// last n % 4 (or fewer) elements.
//
// Run its tests:   ./course test 02/stream
//
// Napkin math: triad moves 12 bytes per element. At an H200's 4.8 TB/s (≈4.3 measured for
// a device-to-device copy) 2^26 elements (768 MiB of traffic) take ≈ 0.17-0.19 ms; its 2
// FLOPs per element use 0.8 TFLOP/s of the 67 available.

#include "cuda_check.hpp"
#include "stream.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

// ---------------------------------------------------------------------------------------
// given: the four operations, on one element and on four

enum class StreamOp { copy, scale, add, triad };

/// Whether an operation reads y at all: copy and scale must not touch it (not even load
/// it), or they would move 12 bytes per element instead of 8.
template <StreamOp kOp>
constexpr bool kReadsY = kOp == StreamOp::add || kOp == StreamOp::triad;

template <StreamOp kOp>
__device__ __forceinline__ float stream_scalar(const float* x, const float* y, long long i,
                                               float s) {
  if constexpr (kOp == StreamOp::copy) return x[i];
  if constexpr (kOp == StreamOp::scale) return s * x[i];
  if constexpr (kOp == StreamOp::add) return x[i] + y[i];
  return fmaf(s, y[i], x[i]);  // triad
}

template <StreamOp kOp>
__device__ __forceinline__ float4 stream_vector(const float4* x, const float4* y, long long v,
                                                float s) {
  const float4 a = x[v];  // one 16-byte load
  if constexpr (kOp == StreamOp::copy) return a;
  if constexpr (kOp == StreamOp::scale) return make_float4(s * a.x, s * a.y, s * a.z, s * a.w);
  const float4 b = y[v];
  if constexpr (kOp == StreamOp::add) return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
  return make_float4(fmaf(s, b.x, a.x), fmaf(s, b.y, a.y), fmaf(s, b.z, a.z), fmaf(s, b.w, a.w));
}

// ---------------------------------------------------------------------------------------
// kernel

/// Elements [0, head) and [head + 4 * vectors, n) one float at a time, the `vectors`
/// float4s from element `head` on with 16-byte accesses. Any grid: grid-stride loops.
/// y is nullptr for copy and scale.
template <StreamOp kOp>
__global__ void stream_kernel(const float* x, const float* y, float* out, float s, long long n,
                              long long head, long long vectors) {
  // BEGIN YOUR CODE
  // TODO(student): out = op(x, y) over the head, the float4 body and the tail described above, each
  //                with a grid-stride loop; stream_scalar and stream_vector do the arithmetic
  //                (about 12 lines)
  // END YOUR CODE
}

// ---------------------------------------------------------------------------------------
// launchers (given)

namespace {

std::uintptr_t offset_in_16_bytes(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 16;
}

template <StreamOp kOp>
void launch_stream(const float* x, const float* y, float* out, float s, int n, int blocks,
                   int threads_per_block) {
  if (n < 0) throw std::invalid_argument("stream: n must be >= 0, got " + std::to_string(n));
  if (blocks < 0) throw std::invalid_argument("stream: blocks must be >= 0");
  if (threads_per_block < 1 || threads_per_block > 1024)
    throw std::invalid_argument("stream: threads_per_block must be in [1, 1024]");
  if (n == 0) return;
  // float4 needs every pointer 16-byte aligned at the same element: possible only when
  // they all sit at the same offset from a 16-byte boundary.
  const std::uintptr_t offset = offset_in_16_bytes(out);
  const bool vectorisable = offset % 4 == 0 && offset_in_16_bytes(x) == offset &&
                            (!kReadsY<kOp> || offset_in_16_bytes(y) == offset);
  long long head = vectorisable ? static_cast<long long>((16 - offset) % 16 / 4) : n;
  head = std::min<long long>(head, n);
  const long long vectors = (n - head) / 4;
  if (blocks == 0) {
    const long long work = std::max<long long>(vectors, 1);
    blocks = static_cast<int>(std::min<long long>((work - 1) / threads_per_block + 1, 65535));
  }
  stream_kernel<kOp><<<blocks, threads_per_block>>>(x, y, out, s, n, head, vectors);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void launch_stream_copy(const float* x, float* out, int n, int blocks, int threads_per_block) {
  launch_stream<StreamOp::copy>(x, nullptr, out, 0.0f, n, blocks, threads_per_block);
}

void launch_stream_scale(const float* x, float* out, float s, int n, int blocks,
                         int threads_per_block) {
  launch_stream<StreamOp::scale>(x, nullptr, out, s, n, blocks, threads_per_block);
}

void launch_stream_add(const float* x, const float* y, float* out, int n, int blocks,
                       int threads_per_block) {
  launch_stream<StreamOp::add>(x, y, out, 0.0f, n, blocks, threads_per_block);
}

void launch_stream_triad(const float* x, const float* y, float* out, float s, int n, int blocks,
                         int threads_per_block) {
  launch_stream<StreamOp::triad>(x, y, out, s, n, blocks, threads_per_block);
}
