// Expected: a compile error naming shfl_down, which CUDA gives tiles of at most 32 threads only
// (a 64-thread tile has sync, shfl, any, all and cg::reduce).
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void shift_a_wide_tile(int* out) {
  __shared__ cg::block_tile_memory<256> scratch;
  auto tile = cg::tiled_partition<64>(cg::this_thread_block(scratch));
  out[threadIdx.x] = tile.shfl_down(static_cast<int>(threadIdx.x), 1);
}
