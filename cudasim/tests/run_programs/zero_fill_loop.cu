// A kernel whose loops the optimiser turns into calls of memset and memcpy (llm.c's attention
// kernel zeroes its output row this way), as `./course run` builds it (uninstrumented, -O2):
// those calls come from a kernel thread, not from host code. Prints "rows zeroed and copied: OK".
#include <cstdio>
#include <vector>

__global__ void zero_then_copy_rows(float* out, const float* in, int rows, int width) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  float* mine = out + static_cast<long>(row) * 2 * width;
  for (int i = 0; i < width; i++) mine[i] = 0.0f;
  for (int i = 0; i < width; i++) mine[width + i] = in[static_cast<long>(row) * width + i];
}

int main() {
  const int rows = 64, width = 48;
  std::vector<float> in(rows * width), out(2 * rows * width, -1.0f);
  for (int i = 0; i < rows * width; ++i) in[i] = static_cast<float>(i);
  float *d_in = nullptr, *d_out = nullptr;
  cudaMalloc(&d_in, in.size() * sizeof(float));
  cudaMalloc(&d_out, out.size() * sizeof(float));
  cudaMemcpy(d_in, in.data(), in.size() * sizeof(float), cudaMemcpyHostToDevice);
  zero_then_copy_rows<<<2, 32>>>(d_out, d_in, rows, width);
  if (cudaDeviceSynchronize() != cudaSuccess) return 1;
  cudaMemcpy(out.data(), d_out, out.size() * sizeof(float), cudaMemcpyDeviceToHost);
  for (int r = 0; r < rows; ++r)
    for (int i = 0; i < width; ++i)
      if (out[r * 2 * width + i] != 0.0f || out[r * 2 * width + width + i] != in[r * width + i]) {
        std::printf("row %d element %d wrong\n", r, i);
        return 1;
      }
  std::printf("rows zeroed and copied: OK\n");
  cudaFree(d_in);
  cudaFree(d_out);
  return 0;
}
