// Expected: a compile error naming this_grid() (grid-wide barriers are not simulated).
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void grid_wide(int* out) {
  cg::grid_group grid = cg::this_grid();
  out[0] = 1;
  grid.sync();
}
