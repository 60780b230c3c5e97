// Expected: a compile error naming block_tile_memory (the scratch of tiles of more than 32
// threads), as NVIDIA's reduction sample uses it.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void wide_tiles(int* out) {
  __shared__ cg::block_tile_memory<256> scratch;
  auto block = cg::this_thread_block(scratch);
  out[threadIdx.x] = static_cast<int>(block.thread_rank());
}
