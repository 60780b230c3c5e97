// Expected: a compile error naming coalesced_threads().
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void aggregate(int* counter, const int* flags) {
  if (flags[threadIdx.x]) {
    auto active = cg::coalesced_threads();
    (void)active;
    atomicAdd(counter, 1);
  }
}
