/// @file linear_scan.hpp
/// @brief Contract of exercise 01/05 `linear_scan`: the linear recurrence
/// h[t] = a[t]·h[t-1] + b[t] computed by a parallel scan over many blocks.
///
/// Implemented by `exercises/01-serial-dependency/05_linear_scan.cu`, tested by
/// `autograder/tests/01-serial-dependency/test_linear_scan.cpp`.
///
/// Why it can be parallel at all: step t is the affine map f_t(h) = a[t]·h + b[t], and
/// composing two affine maps gives another one, (f_2 ∘ f_1)(h) = (a1·a2)·h + (a2·b1 + b2).
/// Composition is associative, so the maps of a whole block can be combined in a tree of
/// depth O(log n) instead of a chain of length n: the same scan as a prefix sum (which is the
/// case a[t] = 1). State-space models (S4, Mamba) train their recurrences this way.
#pragma once

#include <cstddef>

#include <cuda_runtime.h>

/// Elements each block handles in one pass (256 threads x 4 consecutive elements each).
constexpr int kLinearScanTile = 1024;

/// Floats of device workspace `launch_linear_scan` needs for `n` elements: room for the
/// per-tile carries (a composed map, two floats, and the state entering the tile, one float).
inline std::size_t linear_scan_workspace_floats(int n) {
  const std::size_t tiles = n <= 0 ? 0 : (static_cast<std::size_t>(n) - 1) / kLinearScanTile + 1;
  return 3 * tiles;
}

/// Computes `h[t] = a[t] * h[t-1] + b[t]` for t in [0, n), with h[-1] = `h_init`.
///
/// Three passes, each a kernel over all tiles of `kLinearScanTile` elements:
/// 1. every tile composes its n maps into one (a block-wide scan) and stores it in the
///    workspace;
/// 2. one block scans the tiles' maps and stores, per tile, the state that enters it;
/// 3. every tile scans its maps again, applies them to the state entering it, writes h.
///
/// Memory budget (checked on the simulator): at most 22 bytes of global memory per element
/// in total (reading a and b twice and writing h once is 20), plus a few KiB; reading a and
/// b once and writing h (12 bytes per element) is the floor.
///
/// @param a, b      device, `n` floats each (read only)
/// @param h_init    the state before the first element
/// @param h         device, `n` floats (written); must not overlap a or b
/// @param n         number of elements, >= 0 (0 launches nothing)
/// @param workspace device, at least `linear_scan_workspace_floats(n)` floats (scratch)
/// @param stream    the stream to queue the passes on
/// @throws course::CudaError if a launch is rejected
void launch_linear_scan(const float* a, const float* b, float h_init, float* h, int n,
                        float* workspace, cudaStream_t stream = 0);
