// Exercise 01/05: linear_scan, h[t] = a[t] * h[t-1] + b[t] by a parallel scan over many blocks.
//
// What it teaches: a chain can be broken when its step is linear. Step t is the affine map
// f_t(h) = a[t] h + b[t]; two steps compose into one affine map (compose() below), and
// composition is associative, so the maps of n steps can be combined in any bracketing: a
// tree of depth O(log n) instead of a chain of n. That is a scan, like a prefix sum (a = 1),
// with "compose" in place of "+". Modern state-space models (S4, Mamba) train recurrences
// this way; a nonlinear step such as tanh(W h + ...) has no such shortcut.
//
// The passes (reduce, then scan), over tiles of kLinearScanTile = 256 x 4 elements:
//   1. tile_maps_kernel: each block composes its tile's 1024 maps into one, stored per tile;
//   2. tile_carries_kernel: one block scans the tiles' maps from h_init and stores, per tile,
//      the state h entering it;
//   3. tile_apply_kernel: each block scans its tile again, starts from the state entering
//      it, and writes h.
// Inside a block: each thread composes its 4 consecutive elements serially, a warp scans its
// 32 threads' maps with shuffles, and the warps' totals are combined through shared memory.
//
// Run its tests:   ./course test 01/linear_scan
//
// Napkin math: a and b are read twice (passes 1 and 3) and h written once: 20 bytes per
// element against 12 for a single pass, so at most 60% of the time a copy of the same data
// would take, if each pass runs at copy bandwidth (~4.3 TB/s on an H200): n = 2^26 moves
// 1.3 GB in ~0.3 ms. The serial loop on one CPU core does one element per ~4 cycles of
// latency (a multiply-add that waits for the previous one): ~0.1 s.

#include "cuda_check.hpp"
#include "linear_scan.hpp"

constexpr int kThreads = 256;  // threads per block
constexpr int kItems = 4;      // consecutive elements per thread
static_assert(kThreads * kItems == kLinearScanTile, "the tile size is part of the contract");
constexpr int kWarps = kThreads / 32;
static_assert(kWarps * 32 == kThreads, "the block scan works on whole warps");

/// The affine map h -> a h + b.
struct Affine {
  float a;
  float b;
};

/// The map "first `first`, then `then`": h -> then.a (first.a h + first.b) + then.b.
__device__ Affine compose(Affine first, Affine then) {
  // BEGIN YOUR CODE
  // TODO(student): return the composed map (about 1 line)
  return Affine{1.0f, 0.0f};  // placeholder: the identity map
  // END YOUR CODE
}

/// Exclusive scan of one Affine per thread across the block, in thread order: returns the
/// composition of the maps of threads 0 .. threadIdx.x - 1 (the identity for thread 0) and
/// stores the composition of all the block's maps in *total. Every thread of the block must
/// call it (it contains barriers).
__device__ Affine block_exclusive_scan(Affine mine, Affine* total) {
  // BEGIN YOUR CODE
  // TODO(student): the exclusive scan the contract above describes, for kWarps warps: within each
  //                warp with shuffles, across the warps through shared memory; safe to call again
  //                right after (about 30 lines)
  *total = mine;  // placeholder: wrong for any block of more than one thread
  return Affine{1.0f, 0.0f};
  // END YOUR CODE
}

// ---------------------------------------------------------------------------------------
// pass 1: one composed map per tile (given)

__global__ void tile_maps_kernel(const float* a, const float* b, int n, float* tile_a,
                                 float* tile_b) {
  const size_t first = static_cast<size_t>(blockIdx.x) * kLinearScanTile + threadIdx.x * kItems;
  Affine mine{1.0f, 0.0f};
  for (int i = 0; i < kItems; ++i) {
    if (first + i < static_cast<size_t>(n)) mine = compose(mine, Affine{a[first + i], b[first + i]});
  }
  Affine total;
  block_exclusive_scan(mine, &total);
  if (threadIdx.x == 0) {
    tile_a[blockIdx.x] = total.a;
    tile_b[blockIdx.x] = total.b;
  }
}

// ---------------------------------------------------------------------------------------
// pass 2: the state entering each tile, one block for all tiles (given)

__global__ void tile_carries_kernel(const float* tile_a, const float* tile_b, int tiles,
                                    float h_init, float* carry) {
  // Thread t owns tiles [t * per_thread, (t + 1) * per_thread): serial inside, scanned across.
  const int per_thread = (tiles - 1) / kThreads + 1;
  const int begin = min(tiles, static_cast<int>(threadIdx.x) * per_thread);
  const int end = min(tiles, begin + per_thread);
  Affine mine{1.0f, 0.0f};
  for (int k = begin; k < end; ++k) mine = compose(mine, Affine{tile_a[k], tile_b[k]});
  Affine total;
  const Affine before = block_exclusive_scan(mine, &total);
  float h = before.a * h_init + before.b;  // the state entering tile `begin`
  for (int k = begin; k < end; ++k) {
    carry[k] = h;
    h = tile_a[k] * h + tile_b[k];
  }
}

// ---------------------------------------------------------------------------------------
// pass 3: each tile from the state entering it

__global__ void tile_apply_kernel(const float* a, const float* b, int n, const float* carry,
                                  float* h) {
  // BEGIN YOUR CODE
  // TODO(student): h for this block's tile, starting from the state carry[blockIdx.x] entering it,
  //                reading each a and b once (about 22 lines)
  // END YOUR CODE
}

// ---------------------------------------------------------------------------------------
// launcher: three passes on one stream (given)

void launch_linear_scan(const float* a, const float* b, float h_init, float* h, int n,
                        float* workspace, cudaStream_t stream) {
  if (n <= 0) return;
  const int tiles = (n - 1) / kLinearScanTile + 1;
  float* tile_a = workspace;
  float* tile_b = workspace + tiles;
  float* carry = workspace + 2 * static_cast<size_t>(tiles);
  tile_maps_kernel<<<tiles, kThreads, 0, stream>>>(a, b, n, tile_a, tile_b);
  CUDA_CHECK_LAUNCH();
  tile_carries_kernel<<<1, kThreads, 0, stream>>>(tile_a, tile_b, tiles, h_init, carry);
  CUDA_CHECK_LAUNCH();
  tile_apply_kernel<<<tiles, kThreads, 0, stream>>>(a, b, n, carry, h);
  CUDA_CHECK_LAUNCH();
}
