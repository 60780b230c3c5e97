/// @file stream.hpp
/// @brief Contract of exercise 02/02 `stream`: the four STREAM kernels (copy, scale, add,
/// triad) with 16-byte vector accesses and a grid-stride loop.
///
/// Implemented by `exercises/02-roofline/02_stream.cu` and tested by
/// `autograder/tests/02-roofline/test_stream.cpp`.
///
/// STREAM (John McCalpin's memory benchmark) measures sustainable memory bandwidth with
/// four loops that do almost no arithmetic. Bytes and FLOPs per element (fp32):
///
/// | kernel | operation             | global bytes | FLOPs | FLOP/byte |
/// |--------|-----------------------|--------------|-------|-----------|
/// | copy   | out = x               | 8            | 0     | 0         |
/// | scale  | out = s * x           | 8            | 1     | 1/8       |
/// | add    | out = x + y           | 12           | 1     | 1/12      |
/// | triad  | out = x + s * y       | 12           | 2     | 1/6       |
///
/// Every input element is read exactly once and every output element written exactly once,
/// so on the simulator the global-memory traffic is exactly `bytes per element x n`.
///
/// Common to all four launchers:
/// - `n >= 0` elements; `n == 0` launches nothing.
/// - Pointers need only be `float`-aligned (4 bytes). Where `out` and the inputs share the
///   same offset from a 16-byte boundary, the bulk of the work uses `float4` (16-byte)
///   loads and stores, with scalar accesses for the few elements before the first boundary
///   (the head) and after the last whole `float4` (the tail); otherwise every access is
///   scalar. Results are the same either way.
/// - `blocks` x `threads_per_block` is the grid. `blocks == 0` picks enough blocks for one
///   `float4` per thread (at least 1, at most 65535). Any grid is correct: the kernel walks
///   the array with a grid-stride loop.
/// - Returns once the kernel is queued.
/// @throws std::invalid_argument if `n < 0`, `blocks < 0` or `threads_per_block` is not in [1, 1024]
/// @throws course::CudaError if the launch is rejected
#pragma once

/// out[i] = x[i]. 8 bytes and 0 FLOPs per element.
void launch_stream_copy(const float* x, float* out, int n, int blocks = 0,
                        int threads_per_block = 256);

/// out[i] = s * x[i]. 8 bytes and 1 FLOP per element.
void launch_stream_scale(const float* x, float* out, float s, int n, int blocks = 0,
                         int threads_per_block = 256);

/// out[i] = x[i] + y[i]. 12 bytes and 1 FLOP per element.
void launch_stream_add(const float* x, const float* y, float* out, int n, int blocks = 0,
                       int threads_per_block = 256);

/// out[i] = x[i] + s * y[i]. 12 bytes and 2 FLOPs (one FMA) per element.
void launch_stream_triad(const float* x, const float* y, float* out, float s, int n,
                         int blocks = 0, int threads_per_block = 256);
