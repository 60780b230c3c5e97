// A race that --check reports: after a barrier, each thread reads its neighbour's value and
// overwrites its own in the same barrier interval. The report must name this file's lines
// (tools/course/tests/test_run_end_to_end.py), not the rewritten copy the compiler saw.
#include <cstdio>

__global__ void neighbour_read_then_overwritten(int* out) {
  __shared__ int values[64];
  values[threadIdx.x] = static_cast<int>(threadIdx.x);
  __syncthreads();
  const int neighbour = values[(threadIdx.x + 1) % 64];  // READ_LINE
  values[threadIdx.x] = neighbour;                        // WRITE_LINE
  out[threadIdx.x] = neighbour;
}

int main() {
  int* out = nullptr;
  cudaMalloc(&out, 64 * sizeof(int));
  neighbour_read_then_overwritten<<<1, 64>>>(out);
  std::printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  cudaFree(out);
  return 0;
}
