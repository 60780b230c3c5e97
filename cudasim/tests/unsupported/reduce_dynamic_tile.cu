// Expected: a compile error saying cg::reduce takes a thread_block_tile<N>.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
__global__ void reduce_group(int* out) {
  cg::thread_group tile = cg::tiled_partition(cg::this_thread_block(), 16);
  out[threadIdx.x] = cg::reduce(tile, 1, cg::plus<int>());
}
