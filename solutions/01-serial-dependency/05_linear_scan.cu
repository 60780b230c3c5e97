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
  return Affine{first.a * then.a, then.a * first.b + then.b};
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
  __shared__ float warp_a[kWarps];  // each warp's composed map
  __shared__ float warp_b[kWarps];
  const Affine identity{1.0f, 0.0f};
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  Affine inclusive = mine;
  for (int offset = 1; offset < 32; offset *= 2) {
    // Every lane shuffles (the mask names all 32), lanes below `offset` ignore the result.
    const float below_a = __shfl_up_sync(0xffffffffu, inclusive.a, offset);
    const float below_b = __shfl_up_sync(0xffffffffu, inclusive.b, offset);
    if (lane >= offset) inclusive = compose(Affine{below_a, below_b}, inclusive);
  }
  if (lane == 31) {
    warp_a[warp] = inclusive.a;
    warp_b[warp] = inclusive.b;
  }
  __syncthreads();  // every warp's map is stored
  Affine prefix = identity;  // warps 0 .. warp-1 (8 warps: a serial loop is the cheap way)
  Affine all = identity;
  for (int w = 0; w < kWarps; ++w) {
    const Affine m{warp_a[w], warp_b[w]};
    if (w < warp) prefix = compose(prefix, m);
    all = compose(all, m);
  }
  *total = all;
  // The inclusive map of the lane below is this lane's exclusive map within the warp.
  const float below_a = __shfl_up_sync(0xffffffffu, inclusive.a, 1);
  const float below_b = __shfl_up_sync(0xffffffffu, inclusive.b, 1);
  const Affine in_warp = lane == 0 ? identity : Affine{below_a, below_b};
  __syncthreads();  // everyone has read warp_a/warp_b before a later call overwrites them
  return compose(prefix, in_warp);
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
  __shared__ float carry_in;  // the state entering this tile, loaded once for the block
  const size_t first = static_cast<size_t>(blockIdx.x) * kLinearScanTile + threadIdx.x * kItems;
  float my_a[kItems], my_b[kItems];  // registers: a and b are read from memory once per pass
  Affine mine{1.0f, 0.0f};
  for (int i = 0; i < kItems; ++i) {
    if (first + i < static_cast<size_t>(n)) {
      my_a[i] = a[first + i];
      my_b[i] = b[first + i];
      mine = compose(mine, Affine{my_a[i], my_b[i]});
    }
  }
  if (threadIdx.x == 0) carry_in = carry[blockIdx.x];
  Affine total;
  const Affine before = block_exclusive_scan(mine, &total);  // its barrier publishes carry_in
  float state = before.a * carry_in + before.b;
  for (int i = 0; i < kItems; ++i) {
    if (first + i < static_cast<size_t>(n)) {
      state = my_a[i] * state + my_b[i];
      h[first + i] = state;
    }
  }
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
