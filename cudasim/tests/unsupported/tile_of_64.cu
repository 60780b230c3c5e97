// Expected: a compile error naming the tile size limit (tiles of more than 32 threads).
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void wide_tile(int* out) {
  auto tile = cg::tiled_partition<64>(cg::this_thread_block());
  out[threadIdx.x] = static_cast<int>(tile.thread_rank());
}
