// Cooperative groups: this_thread_block() and its indices, block.sync() and cg::sync(),
// static tiles (tiled_partition<N>, also of a tile) with their shuffles (also of values wider
// than 8 bytes), votes and ballot,
// dynamic tiles (tiled_partition(block, n)), cg::reduce with each operator, and
// coalesced_threads() (the lanes of a branch; aggregated atomics; labeled and binary
// partitions, reduced), tiles of 64 to 512 threads (sync, shfl, any, all, reduce). Valid CUDA:
// the same file runs on a GPU. The simulator-only checks (a divergent tile shuffle is reported
// with its call site, an unsupported dynamic tile size traps) are under #ifdef CUDASIM.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "launch_report.cuh"

namespace cg = cooperative_groups;

namespace {

template <class T>
std::vector<T> download(const T* device, size_t count) {
  std::vector<T> host(count);
  EXPECT_EQ(cudaMemcpy(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  return host;
}

/// Per thread (8 ints): rank, size, num_threads, group_index.x/.y, thread_index.y, dim_threads.z,
/// and the value its mirror thread wrote to shared memory before block.sync().
__global__ void block_facts(int* out) {
  cg::thread_block block = cg::this_thread_block();
  __shared__ int mirror[64];
  const unsigned rank = block.thread_rank();
  mirror[rank] = 1000 + static_cast<int>(rank);
  block.sync();
  const int seen = mirror[block.size() - 1 - rank];
  cg::sync(block);  // nobody overwrites mirror before everybody has read it
  mirror[rank] = 0;
  const unsigned linear_block = blockIdx.x + gridDim.x * blockIdx.y;
  int* mine = out + 8 * (linear_block * block.size() + rank);
  mine[0] = static_cast<int>(rank);
  mine[1] = static_cast<int>(block.size());
  mine[2] = static_cast<int>(block.num_threads());
  mine[3] = static_cast<int>(block.group_index().x);
  mine[4] = static_cast<int>(block.group_index().y);
  mine[5] = static_cast<int>(block.thread_index().y);
  mine[6] = static_cast<int>(block.dim_threads().z);
  mine[7] = seen;
}

TEST(ThreadBlock, GivesRanksIndicesAndSynchronises) {
  const dim3 grid(3, 2), block(8, 4, 2);
  const int threads = 64, blocks = 6;
  int* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 8 * threads * blocks * sizeof(int)), cudaSuccess);
  block_facts<<<grid, block>>>(d);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  const std::vector<int> h = download(d, 8 * threads * blocks);
  for (int b = 0; b < blocks; ++b) {
    for (int t = 0; t < threads; ++t) {
      const int* mine = &h[8 * (b * threads + t)];
      EXPECT_EQ(mine[0], t);
      EXPECT_EQ(mine[1], threads);
      EXPECT_EQ(mine[2], threads);
      EXPECT_EQ(mine[3], b % 3);
      EXPECT_EQ(mine[4], b / 3);
      EXPECT_EQ(mine[5], t / 8 % 4);
      EXPECT_EQ(mine[6], 2);
      EXPECT_EQ(mine[7], 1000 + threads - 1 - t) << "block " << b << " thread " << t;
    }
  }
  EXPECT_EQ(cudaFree(d), cudaSuccess);
}

constexpr int kFacts = 11;

/// Per thread (kFacts ints): the tile's rank, size, meta rank and size, shfl from rank 1,
/// shfl_down 1, shfl_up 2, shfl_xor 1, any/all of (rank == 0), ballot of odd ranks.
template <unsigned N>
__global__ void tile_facts(int* out) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<N> tile = cg::tiled_partition<N>(block);
  const int value = 100 * static_cast<int>(block.thread_rank());
  int* mine = out + kFacts * block.thread_rank();
  mine[0] = static_cast<int>(tile.thread_rank());
  mine[1] = static_cast<int>(tile.size());
  mine[2] = static_cast<int>(tile.meta_group_rank());
  mine[3] = static_cast<int>(tile.meta_group_size());
  mine[4] = tile.shfl(value, 1);
  mine[5] = tile.shfl_down(value, 1);
  mine[6] = tile.shfl_up(value, 2);
  mine[7] = tile.shfl_xor(value, 1);
  mine[8] = tile.any(tile.thread_rank() == 0);
  mine[9] = tile.all(tile.thread_rank() == 0);
  tile.sync();
  mine[10] = static_cast<int>(tile.ballot(tile.thread_rank() % 2 == 1));
}

template <unsigned N>
void check_tiles(int threads) {
  int* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, kFacts * threads * sizeof(int)), cudaSuccess);
  tile_facts<N><<<1, threads>>>(d);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  const std::vector<int> h = download(d, kFacts * threads);
  const int n = static_cast<int>(N);
  const unsigned odd_ranks = 0xAAAAAAAAu & static_cast<unsigned>((1ull << n) - 1);
  for (int t = 0; t < threads; ++t) {
    const int* mine = &h[kFacts * t];
    const int rank = t % n, first = t - rank;
    EXPECT_EQ(mine[0], rank) << "N " << n << " thread " << t;
    EXPECT_EQ(mine[1], n);
    EXPECT_EQ(mine[2], t / n);
    EXPECT_EQ(mine[3], threads / n);
    EXPECT_EQ(mine[4], 100 * (first + 1 % n)) << "N " << n << " thread " << t;
    EXPECT_EQ(mine[5], 100 * (rank + 1 < n ? t + 1 : t)) << "N " << n << " thread " << t;
    EXPECT_EQ(mine[6], 100 * (rank >= 2 ? t - 2 : t)) << "N " << n << " thread " << t;
    EXPECT_EQ(mine[7], 100 * (n > 1 ? (t ^ 1) : t)) << "N " << n << " thread " << t;
    EXPECT_EQ(mine[8], 1);
    EXPECT_EQ(mine[9], n == 1 ? 1 : 0);
    EXPECT_EQ(static_cast<unsigned>(mine[10]), odd_ranks) << "N " << n << " thread " << t;
  }
  EXPECT_EQ(cudaFree(d), cudaSuccess);
}

TEST(ThreadBlockTile, RanksShufflesVotesAndBallotsStayInsideTheTile) {
  check_tiles<2>(64);
  check_tiles<4>(96);
  check_tiles<8>(96);
  check_tiles<16>(32);
  check_tiles<32>(128);
}

/// A tile of 4 of a tile of 32: ranks and meta ranks relative to the parent tile.
__global__ void tile_of_tile(int* out) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  auto quad = cg::tiled_partition<4>(warp);
  int* mine = out + 4 * block.thread_rank();
  mine[0] = static_cast<int>(quad.thread_rank());
  mine[1] = static_cast<int>(quad.meta_group_rank());
  mine[2] = static_cast<int>(quad.meta_group_size());
  mine[3] = quad.shfl_down(static_cast<int>(block.thread_rank()), 3);
}

TEST(ThreadBlockTile, TilesOfATileAreNumberedWithinTheirParent) {
  int* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 4 * 64 * sizeof(int)), cudaSuccess);
  tile_of_tile<<<1, 64>>>(d);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  const std::vector<int> h = download(d, 4 * 64);
  for (int t = 0; t < 64; ++t) {
    EXPECT_EQ(h[4 * t], t % 4) << t;
    EXPECT_EQ(h[4 * t + 1], t % 32 / 4) << t;
    EXPECT_EQ(h[4 * t + 2], 8) << t;
    EXPECT_EQ(h[4 * t + 3], t % 4 == 0 ? t + 3 : t) << t;
  }
  EXPECT_EQ(cudaFree(d), cudaSuccess);
}

/// Dynamic tiles of 16: rank, size, tile index, and a sum in shared memory per tile
/// between two tile.sync() calls.
__global__ void dynamic_tiles(int* out) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_group tile = cg::tiled_partition(block, 16);
  __shared__ int values[96];
  values[block.thread_rank()] = static_cast<int>(block.thread_rank());
  tile.sync();
  int sum = 0;
  const unsigned first = block.thread_rank() - static_cast<unsigned>(tile.thread_rank());
  for (unsigned i = 0; i < tile.size(); ++i) sum += values[first + i];
  int* mine = out + 4 * block.thread_rank();
  mine[0] = static_cast<int>(tile.thread_rank());
  mine[1] = static_cast<int>(tile.size());
  // (Not num_threads(): CUDA 13 declares thread_group::num_threads() without defining it.)
  mine[2] = static_cast<int>(block.thread_rank()) / 16;
  mine[3] = sum;
}

TEST(DynamicTile, PartitionsTheBlockIntoTilesOfTheGivenSize) {
  int* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 4 * 96 * sizeof(int)), cudaSuccess);
  dynamic_tiles<<<1, 96>>>(d);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  const std::vector<int> h = download(d, 4 * 96);
  for (int t = 0; t < 96; ++t) {
    const int first = t / 16 * 16;
    EXPECT_EQ(h[4 * t], t % 16) << t;
    EXPECT_EQ(h[4 * t + 1], 16) << t;
    EXPECT_EQ(h[4 * t + 2], t / 16) << t;
    EXPECT_EQ(h[4 * t + 3], 16 * first + 15 * 16 / 2) << t;
  }
  EXPECT_EQ(cudaFree(d), cudaSuccess);
}

/// Every reduction operator over tiles of 32 and of 8; out gets 6 ints per thread.
/// Three int lanes of a value wider than a shuffle's 8 bytes.
struct Triple {
  int a, b, c;
};

/// Per thread: a uint4 and a 12-byte struct through the tile's shfl_xor, shfl and shfl_down,
/// and through a coalesced group's shfl (NVIDIA's shfl_scan sample shuffles uint4 so).
__global__ void wide_shuffles(uint4* vectors, Triple* triples) {
  auto tile = cg::tiled_partition<8>(cg::this_thread_block());
  const unsigned t = threadIdx.x;
  const uint4 mine = make_uint4(t, 100 + t, 200 + t, 300 + t);
  vectors[3 * t] = tile.shfl_xor(mine, 1);
  vectors[3 * t + 1] = tile.shfl(mine, 2);
  const Triple three{static_cast<int>(t), -static_cast<int>(t), 7 * static_cast<int>(t)};
  triples[2 * t] = tile.shfl_down(three, 1);
  cg::coalesced_group all = cg::coalesced_threads();
  vectors[3 * t + 2] = all.shfl(mine, 0);
  triples[2 * t + 1] = all.shfl(three, 3);
}

TEST(ThreadBlockTile, ShufflesMoveValuesWiderThanEightBytes) {
  const int threads = 32;
  uint4* vectors = nullptr;
  Triple* triples = nullptr;
  ASSERT_EQ(cudaMalloc(&vectors, 3 * threads * sizeof(uint4)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&triples, 2 * threads * sizeof(Triple)), cudaSuccess);
  wide_shuffles<<<1, threads>>>(vectors, triples);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<uint4> v = download(vectors, 3 * threads);
  const std::vector<Triple> tr = download(triples, 2 * threads);
  auto expect_vector = [](const uint4& got, unsigned from, int t, const char* what) {
    EXPECT_EQ(got.x, from) << what << ", thread " << t;
    EXPECT_EQ(got.y, 100 + from) << what << ", thread " << t;
    EXPECT_EQ(got.z, 200 + from) << what << ", thread " << t;
    EXPECT_EQ(got.w, 300 + from) << what << ", thread " << t;
  };
  for (int t = 0; t < threads; ++t) {
    const unsigned tile_first = t / 8 * 8;
    expect_vector(v[3 * t], t ^ 1, t, "shfl_xor");
    expect_vector(v[3 * t + 1], tile_first + 2, t, "shfl");
    expect_vector(v[3 * t + 2], 0, t, "coalesced shfl");
    const int down = t % 8 == 7 ? t : t + 1;  // the tile's last thread keeps its own
    EXPECT_EQ(tr[2 * t].a, down) << "thread " << t;
    EXPECT_EQ(tr[2 * t].b, -down) << "thread " << t;
    EXPECT_EQ(tr[2 * t].c, 7 * down) << "thread " << t;
    EXPECT_EQ(tr[2 * t + 1].c, 21) << "thread " << t;
  }
  ASSERT_EQ(cudaFree(vectors), cudaSuccess);
  ASSERT_EQ(cudaFree(triples), cudaSuccess);
}

template <unsigned N>
__global__ void tile_reductions(const int* in, int* out) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<N> tile = cg::tiled_partition<N>(block);
  const int v = in[block.thread_rank()];
  int* mine = out + 6 * block.thread_rank();
  mine[0] = cg::reduce(tile, v, cg::plus<int>());
  mine[1] = cg::reduce(tile, v, cg::less<int>());
  mine[2] = cg::reduce(tile, v, cg::greater<int>());
  mine[3] = static_cast<int>(cg::reduce(tile, static_cast<unsigned>(v), cg::bit_and<unsigned>()));
  mine[4] = static_cast<int>(cg::reduce(tile, static_cast<unsigned>(v), cg::bit_or<unsigned>()));
  mine[5] = static_cast<int>(cg::reduce(tile, static_cast<unsigned>(v), cg::bit_xor<unsigned>()));
}

template <unsigned N>
void check_reductions() {
  const int threads = 64;
  std::vector<int> in(threads);
  for (int i = 0; i < threads; ++i) in[i] = (i * 37) % 101 + 0x100;  // all share bit 8
  int* d_in = nullptr;
  int* d_out = nullptr;
  ASSERT_EQ(cudaMalloc(&d_in, threads * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_out, 6 * threads * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d_in, in.data(), threads * sizeof(int), cudaMemcpyHostToDevice), cudaSuccess);
  tile_reductions<N><<<1, threads>>>(d_in, d_out);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  const std::vector<int> h = download(d_out, 6 * threads);
  for (int t = 0; t < threads; ++t) {
    const int first = t / static_cast<int>(N) * static_cast<int>(N);
    int sum = 0, lo = in[first], hi = in[first];
    unsigned all = ~0u, any = 0, parity = 0;
    for (int i = first; i < first + static_cast<int>(N); ++i) {
      sum += in[i];
      lo = std::min(lo, in[i]);
      hi = std::max(hi, in[i]);
      all &= static_cast<unsigned>(in[i]);
      any |= static_cast<unsigned>(in[i]);
      parity ^= static_cast<unsigned>(in[i]);
    }
    const int* mine = &h[6 * t];
    EXPECT_EQ(mine[0], sum) << "N " << N << " thread " << t;
    EXPECT_EQ(mine[1], lo) << "N " << N << " thread " << t;
    EXPECT_EQ(mine[2], hi) << "N " << N << " thread " << t;
    EXPECT_EQ(static_cast<unsigned>(mine[3]), all) << "N " << N << " thread " << t;
    EXPECT_EQ(static_cast<unsigned>(mine[4]), any) << "N " << N << " thread " << t;
    EXPECT_EQ(static_cast<unsigned>(mine[5]), parity) << "N " << N << " thread " << t;
  }
  EXPECT_EQ(cudaFree(d_in), cudaSuccess);
  EXPECT_EQ(cudaFree(d_out), cudaSuccess);
}

TEST(TileReduce, EveryOperatorGivesEveryThreadTheTilesResult) {
  check_reductions<32>();
  check_reductions<8>();
}

constexpr unsigned kBigBlock = 256;

/// Tiles of N (64 to 256) threads in blocks of 256, per thread (8 ints): its rank in the tile,
/// the tile's meta rank and count, the value of its mirror in the tile (staged in shared memory
/// before tile.sync()), the tile's rank-5 value by shfl, any(v == 7) * 10 + all(v >= 0), the
/// tile's sum by cg::reduce, and the tile's size.
template <unsigned N>
__global__ void multi_warp_tile_facts(const int* in, int* out) {
  __shared__ cg::block_tile_memory<kBigBlock> scratch;
  cg::thread_block block = cg::this_thread_block(scratch);
  cg::thread_block_tile<N> tile = cg::tiled_partition<N>(block);
  __shared__ int staged[kBigBlock];
  const unsigned r = block.thread_rank(), rank = tile.thread_rank();
  const int v = in[blockIdx.x * kBigBlock + r];
  staged[r] = v;
  tile.sync();
  int* mine = out + 8 * (blockIdx.x * kBigBlock + r);
  mine[0] = static_cast<int>(rank);
  mine[1] = static_cast<int>(tile.meta_group_rank());
  mine[2] = static_cast<int>(tile.meta_group_size());
  mine[3] = staged[r - rank + (N - 1 - rank)];
  mine[4] = tile.shfl(v, 5);
  mine[5] = tile.any(v == 7) * 10 + tile.all(v >= 0);
  mine[6] = cg::reduce(tile, v, cg::plus<int>());
  mine[7] = static_cast<int>(tile.num_threads());
}

template <unsigned N>
void check_multi_warp_tiles() {
  const int blocks = 2, threads = blocks * static_cast<int>(kBigBlock);
  std::vector<int> in(threads);
  for (int i = 0; i < threads; ++i) in[i] = (i * 37 + 11) % 101;
  in[N + 3] = 7;  // only the second tile of block 0 holds a 7
  for (int& x : in) x = x == 7 ? 8 : x;
  in[N + 3] = 7;
  int *d_in = nullptr, *d_out = nullptr;
  ASSERT_EQ(cudaMalloc(&d_in, threads * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_out, 8 * threads * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d_in, in.data(), threads * sizeof(int), cudaMemcpyHostToDevice), cudaSuccess);
  multi_warp_tile_facts<N><<<blocks, kBigBlock>>>(d_in, d_out);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<int> out = download(d_out, 8 * static_cast<size_t>(threads));
  for (int t = 0; t < threads; ++t) {
    const int rank = t % static_cast<int>(N), first = t - rank;
    int sum = 0;
    bool seven = false;
    for (int i = first; i < first + static_cast<int>(N); ++i) sum += in[i], seven = seven || in[i] == 7;
    const int* mine = &out[8 * t];
    EXPECT_EQ(mine[0], rank) << "N " << N << " thread " << t;
    EXPECT_EQ(mine[1], (t % static_cast<int>(kBigBlock)) / static_cast<int>(N)) << "N " << N << " thread " << t;
    EXPECT_EQ(mine[2], static_cast<int>(kBigBlock / N)) << "N " << N << " thread " << t;
    EXPECT_EQ(mine[3], in[first + static_cast<int>(N) - 1 - rank]) << "N " << N << " thread " << t;
    EXPECT_EQ(mine[4], in[first + 5]) << "N " << N << " thread " << t;
    EXPECT_EQ(mine[5], (seven ? 10 : 0) + 1) << "N " << N << " thread " << t;
    EXPECT_EQ(mine[6], sum) << "N " << N << " thread " << t;
    EXPECT_EQ(mine[7], static_cast<int>(N)) << "N " << N << " thread " << t;
  }
  EXPECT_EQ(cudaFree(d_in), cudaSuccess);
  EXPECT_EQ(cudaFree(d_out), cudaSuccess);
}

/// A 256-thread tile of a 256-thread block is the block: its sync orders everyone's shared
/// memory, as a __syncthreads() would (a transpose through shared memory, read across warps).
__global__ void transpose_through_a_whole_block_tile(const int* in, int* out) {
  __shared__ int tile_data[16][17];
  auto tile = cg::tiled_partition<kBigBlock>(cg::this_thread_block());
  for (int round = 0; round < 2; ++round) {
    tile_data[threadIdx.y][threadIdx.x] = in[round * 256 + threadIdx.y * 16 + threadIdx.x];
    tile.sync();
    // Row 0 is read by threads of every warp, then overwritten in the next round.
    out[round * 256 + threadIdx.y * 16 + threadIdx.x] = tile_data[threadIdx.x][threadIdx.y] + tile_data[0][threadIdx.x];
    tile.sync();
  }
}

TEST(MultiWarpTile, ATileAsLargeAsTheBlockSynchronisesTheBlock) {
  std::vector<int> in(512);
  for (int i = 0; i < 512; ++i) in[i] = i * 3 + 1;
  int *d_in = nullptr, *d_out = nullptr;
  ASSERT_EQ(cudaMalloc(&d_in, 512 * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_out, 512 * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d_in, in.data(), 512 * sizeof(int), cudaMemcpyHostToDevice), cudaSuccess);
  transpose_through_a_whole_block_tile<<<1, dim3(16, 16)>>>(d_in, d_out);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<int> out = download(d_out, 512);
  for (int r = 0; r < 2; ++r)
    for (int y = 0; y < 16; ++y)
      for (int x = 0; x < 16; ++x)
        EXPECT_EQ(out[r * 256 + y * 16 + x], in[r * 256 + x * 16 + y] + in[r * 256 + x]);
  EXPECT_EQ(cudaFree(d_in), cudaSuccess);
  EXPECT_EQ(cudaFree(d_out), cudaSuccess);
}

TEST(MultiWarpTile, SyncShuffleVotesAndReduceStayInsideTheTile) {
  check_multi_warp_tiles<64>();
  check_multi_warp_tiles<128>();
  check_multi_warp_tiles<256>();
}

/// Per thread (8 ints, -1 for the even lanes, which do not take the branch): the odd lanes'
/// coalesced group's size, the thread's rank, the rank-0 thread's value by shfl, shfl_down(1),
/// shfl_up(1), any/all of (rank < 3), and its ballot of (rank % 3 == 0).
__global__ void odd_lanes_coalesced(int* out) {
  const unsigned t = threadIdx.x;
  int* mine = out + 8 * t;
  if (t % 2 == 1) {
    cg::coalesced_group odd = cg::coalesced_threads();
    const int rank = static_cast<int>(odd.thread_rank());
    const int value = 100 + static_cast<int>(t);
    mine[0] = static_cast<int>(odd.size());
    mine[1] = rank;
    mine[2] = odd.shfl(value, 0);
    mine[3] = odd.shfl_down(value, 1);
    mine[4] = odd.shfl_up(value, 1);
    mine[5] = odd.any(rank == 2) * 10 + odd.all(rank < 3);
    mine[6] = static_cast<int>(odd.ballot(rank % 3 == 0));
    odd.sync();
    mine[7] = static_cast<int>(odd.num_threads());
  } else {
    for (int i = 0; i < 8; ++i) mine[i] = -1;
  }
}

TEST(CoalescedGroup, TheLanesOfABranchFormTheGroup) {
  const int threads = 48;  // a full warp and a partial one of 16 lanes
  int* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, threads * 8 * sizeof(int)), cudaSuccess);
  odd_lanes_coalesced<<<1, threads>>>(d);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<int> out = download(d, threads * 8);
  for (int t = 0; t < threads; ++t) {
    const int* mine = &out[8 * t];
    if (t % 2 == 0) {
      EXPECT_EQ(mine[0], -1) << "thread " << t;
      continue;
    }
    const int warp_first = t / 32 * 32;
    const int size = t < 32 ? 16 : 8;  // odd lanes of each warp
    const int rank = (t - warp_first) / 2;
    const int lane_of = warp_first + 1;  // the rank-0 thread
    EXPECT_EQ(mine[0], size) << "thread " << t;
    EXPECT_EQ(mine[1], rank) << "thread " << t;
    EXPECT_EQ(mine[2], 100 + lane_of) << "thread " << t;
    EXPECT_EQ(mine[3], rank + 1 < size ? 100 + t + 2 : 100 + t) << "thread " << t;
    EXPECT_EQ(mine[4], rank >= 1 ? 100 + t - 2 : 100 + t) << "thread " << t;
    EXPECT_EQ(mine[5], 10) << "thread " << t;  // somebody has rank 2; not all ranks are below 3
    unsigned ballot = 0;
    for (int r = 0; r < size; r += 3) ballot |= 1u << r;
    EXPECT_EQ(static_cast<unsigned>(mine[6]), ballot) << "thread " << t;
    EXPECT_EQ(mine[7], size) << "thread " << t;
  }
  EXPECT_EQ(cudaFree(d), cudaSuccess);
}

/// A kernel whose own body has barriers (compiled as a coroutine on the simulator): the lanes
/// whose value is above the block's first one form the group, between two __syncthreads.
__global__ void coalesced_between_barriers(const int* in, int* sizes) {
  __shared__ int first;
  if (threadIdx.x == 0) first = in[0];
  __syncthreads();
  int size = 0;
  if (in[threadIdx.x] > first) size = static_cast<int>(cg::coalesced_threads().size());
  __syncthreads();
  sizes[threadIdx.x] = size;
}

TEST(CoalescedGroup, FormsBetweenBlockBarriers) {
  const int threads = 64;
  std::vector<int> in(threads);
  for (int t = 0; t < threads; ++t) in[t] = t < 32 ? t % 4 : 0;  // warp 0: 24 lanes above 0; warp 1: none
  int *d_in = nullptr, *d_sizes = nullptr;
  ASSERT_EQ(cudaMalloc(&d_in, threads * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_sizes, threads * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d_in, in.data(), threads * sizeof(int), cudaMemcpyHostToDevice), cudaSuccess);
  coalesced_between_barriers<<<1, threads>>>(d_in, d_sizes);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<int> sizes = download(d_sizes, threads);
  for (int t = 0; t < threads; ++t) EXPECT_EQ(sizes[t], in[t] > 0 ? 24 : 0) << "thread " << t;
  EXPECT_EQ(cudaFree(d_in), cudaSuccess);
  EXPECT_EQ(cudaFree(d_sizes), cudaSuccess);
}

/// The aggregated increment: one atomicAdd per coalesced group, each thread a distinct slot.
__device__ int aggregated_increment(int* counter) {
  cg::coalesced_group active = cg::coalesced_threads();
  int first = 0;
  if (active.thread_rank() == 0) first = atomicAdd(counter, static_cast<int>(active.size()));
  return active.shfl(first, 0) + static_cast<int>(active.thread_rank());
}

__global__ void compact_positive(const int* in, int n, int* out, int* count) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && in[i] > 0) out[aggregated_increment(count)] = in[i];
}

TEST(CoalescedGroup, AggregatedAtomicsCompactAnArray) {
  const int n = 1000;
  std::vector<int> in(n);
  int positives = 0;
  for (int i = 0; i < n; ++i) {
    in[i] = (i * 7919) % 13 < 5 ? i + 1 : -i;
    positives += in[i] > 0;
  }
  int *d_in = nullptr, *d_out = nullptr, *d_count = nullptr;
  ASSERT_EQ(cudaMalloc(&d_in, n * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_out, n * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_count, sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemset(d_count, 0, sizeof(int)), cudaSuccess);
  compact_positive<<<(n + 127) / 128, 128>>>(d_in, n, d_out, d_count);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const int count = download(d_count, 1)[0];
  ASSERT_EQ(count, positives);
  std::vector<int> got = download(d_out, static_cast<size_t>(count));
  std::vector<int> expected;
  for (int v : in)
    if (v > 0) expected.push_back(v);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, expected);  // every positive value exactly once
  EXPECT_EQ(cudaFree(d_in), cudaSuccess);
  EXPECT_EQ(cudaFree(d_out), cudaSuccess);
  EXPECT_EQ(cudaFree(d_count), cudaSuccess);
}

#ifdef CUDASIM
/// "test_cooperative_groups.cu:<line>", how the reports name a call site in this file.
std::string site(int line) { return "test_cooperative_groups.cu:" + std::to_string(line); }


/// Per thread (4 ints): its labeled group's size and rank, the group's sum of the lanes by
/// cg::reduce, and the size of its side of a binary partition of a tile.
__global__ void partitions(int* out) {
  const unsigned t = threadIdx.x;
  int* mine = out + 4 * t;
  auto tile = cg::tiled_partition<8>(cg::this_thread_block());
  mine[3] = static_cast<int>(cg::binary_partition(tile, t % 8 < 3).size());
  const unsigned label = t % 3;  // three labels in every warp
  cg::coalesced_group all = cg::coalesced_threads();
  cg::coalesced_group same = cg::labeled_partition(all, label);
  mine[0] = static_cast<int>(same.size());
  mine[1] = static_cast<int>(same.thread_rank());
  // Last: the groups have different sizes, so their reductions end at different times.
  mine[2] = cg::reduce(same, static_cast<int>(t), cg::plus<int>());
}

TEST(CoalescedGroup, LabeledAndBinaryPartitionsGroupTheThreadsOfOneLabel) {
  const int threads = 32;
  int* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, threads * 4 * sizeof(int)), cudaSuccess);
  partitions<<<1, threads>>>(d);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<int> out = download(d, threads * 4);
  for (int t = 0; t < threads; ++t) {
    const int label = t % 3;
    int size = 0, rank = 0, sum = 0;
    for (int u = 0; u < threads; ++u) {
      if (u % 3 != label) continue;
      rank += u < t;
      ++size;
      sum += u;
    }
    EXPECT_EQ(out[4 * t], size) << "thread " << t;
    EXPECT_EQ(out[4 * t + 1], rank) << "thread " << t;
    EXPECT_EQ(out[4 * t + 2], sum) << "thread " << t;
    EXPECT_EQ(out[4 * t + 3], t % 8 < 3 ? 3 : 5) << "thread " << t;
  }
  ASSERT_EQ(cudaFree(d), cudaSuccess);
}

constexpr int kDivergentShuffleLine = __LINE__ + 6;
/// The odd threads of each tile of 8 shuffle at one line, the even ones at another.
__global__ void divergent_tile_shuffle(int* out) {
  cg::thread_block_tile<8> tile = cg::tiled_partition<8>(cg::this_thread_block());
  int v = static_cast<int>(tile.thread_rank());
  if (tile.thread_rank() % 2)
    v = tile.shfl_down(v, 1);
  else
    v = tile.shfl_down(v, 2);
  out[threadIdx.x] = v;
}

TEST(CooperativeGroupsSimulator, DivergentTileShuffleIsReportedWithBothCallSites) {
  int* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 32 * sizeof(int)), cudaSuccess);
  const std::string report = failing_launch_report([&] { divergent_tile_shuffle<<<1, 32>>>(d); });
  EXPECT_NE(report.find("__shfl_down_sync"), std::string::npos) << report;
  EXPECT_NE(report.find(site(kDivergentShuffleLine)), std::string::npos) << report;
  EXPECT_NE(report.find(site(kDivergentShuffleLine + 2)), std::string::npos) << report;
}

constexpr int kTileSyncLine = __LINE__ + 6;
/// Thread 70 leaves before its 64-thread tile's sync(): the other 63 wait for it forever.
__global__ void tile_thread_exits_early(int* out) {
  cg::thread_block_tile<64> tile = cg::tiled_partition<64>(cg::this_thread_block());
  if (threadIdx.x == 70) return;
  out[threadIdx.x] = 1;
  tile.sync();
}

TEST(CooperativeGroupsSimulator, AMultiWarpTileWaitingForAnExitedThreadIsADeadlock) {
  int* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 128 * sizeof(int)), cudaSuccess);
  const std::string report = failing_launch_report([&] { tile_thread_exits_early<<<1, 128>>>(d); });
  EXPECT_NE(report.find("deadlock"), std::string::npos) << report;
  EXPECT_NE(report.find("thread_block_tile::sync"), std::string::npos) << report;
  EXPECT_NE(report.find(site(kTileSyncLine)), std::string::npos) << report;
  EXPECT_NE(report.find("thread (70,0,0) has already exited"), std::string::npos) << report;
}

constexpr int kTileDivergenceLine = __LINE__ + 5;
/// The first warp of each 64-thread tile syncs, the second shuffles.
__global__ void divergent_multi_warp_tile(int* out) {
  cg::thread_block_tile<64> tile = cg::tiled_partition<64>(cg::this_thread_block());
  if (tile.thread_rank() < 32)
    tile.sync();
  else
    out[threadIdx.x] = tile.shfl(static_cast<int>(threadIdx.x), 0);
}

TEST(CooperativeGroupsSimulator, AMultiWarpTileSplitOverTwoOperationsIsReportedWithBoth) {
  int* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 64 * sizeof(int)), cudaSuccess);
  const std::string report = failing_launch_report([&] { divergent_multi_warp_tile<<<1, 64>>>(d); });
  EXPECT_NE(report.find("tile divergence"), std::string::npos) << report;
  EXPECT_NE(report.find(site(kTileDivergenceLine)), std::string::npos) << report;
  EXPECT_NE(report.find(site(kTileDivergenceLine + 2)), std::string::npos) << report;
}

__global__ void tile_of_three(int* out) {
  cg::thread_group tile = cg::tiled_partition(cg::this_thread_block(), 3);
  out[threadIdx.x] = static_cast<int>(tile.thread_rank());
}

TEST(CooperativeGroupsSimulator, UnsupportedDynamicTileSizeTraps) {
  int* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 32 * sizeof(int)), cudaSuccess);
  const std::string report = failing_launch_report([&] { tile_of_three<<<1, 32>>>(d); });
  EXPECT_NE(report.find("tiled_partition(parent, n)"), std::string::npos) << report;
}
#endif

}  // namespace
