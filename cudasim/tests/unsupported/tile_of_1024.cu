// Expected: a compile error naming the tile size limit (CUDA's static tiles have at most 512
// threads).
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void whole_block_tile(int* out) {
  auto tile = cg::tiled_partition<1024>(cg::this_thread_block());
  out[threadIdx.x] = static_cast<int>(tile.thread_rank());
}
