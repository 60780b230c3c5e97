// Exercise 00/03: rgb_to_gray, one thread per pixel on a 2-D grid.
//
// What it teaches: 2-D indexing. Images and matrices are 2-D, and CUDA grids and blocks can
// be too: dim3 block(16, 16) is 256 threads arranged 16 x 16, and a 2-D grid of such blocks
// tiles the image. By convention x runs along a row (columns), y down the image (rows), so
// neighbouring threads of a warp (consecutive threadIdx.x) read neighbouring pixels. The
// image is rounded up to whole tiles on both axes, so both coordinates need a guard.
//
// Run its tests:   ./course test 00/rgb_to_gray
//
// Napkin math: per pixel 3 floats read and 1 written (16 bytes) for 5 FLOP. A 480 x 640
// frame is 4.9 MB of traffic: about 1 us of H200 bandwidth, less than the kernel launch.
// Moving the frame over PCIe (~55 GB/s) takes ~70 us: on a GPU the copy, not the math,
// is the cost of such a small job.

#include "cuda_check.hpp"
#include "rgb_to_gray.hpp"

// ---------------------------------------------------------------------------------------
// kernel

__global__ void rgb_to_gray_kernel(const float* rgb, float* gray, int height, int width) {
  // BEGIN YOUR CODE
  // TODO(student): compute this thread's column (x) and row (y), skip threads outside the
  //                image, and write the weighted sum of the pixel's r, g, b (about 8 lines)
  const int col = blockIdx.x * blockDim.x + threadIdx.x;  // x: along a row
  const int row = blockIdx.y * blockDim.y + threadIdx.y;  // y: down the columns
  // The last tiles on the right and at the bottom hang over the edge of the image.
  if (row >= height || col >= width) return;
  // Row-major: a row holds width pixels. 64-bit so that big images cannot overflow.
  const long long pixel = static_cast<long long>(row) * width + col;
  // Interleaved channels: the pixel's r, g, b are three consecutive floats.
  const float r = rgb[3 * pixel + 0];
  const float g = rgb[3 * pixel + 1];
  const float b = rgb[3 * pixel + 2];
  gray[pixel] = 0.299f * r + 0.587f * g + 0.114f * b;
  // END YOUR CODE
}

// ---------------------------------------------------------------------------------------
// launcher

void launch_rgb_to_gray(const float* rgb, float* gray, int height, int width) {
  // 16 x 16 = 256 threads in a square tile; a warp (32 consecutive threads in x, then y)
  // covers 16 neighbouring pixels in each of two rows.
  const dim3 block(16, 16);
  // BEGIN YOUR CODE
  // TODO(student): size the grid so its blocks cover all width columns (x) and all height
  //                rows (y), rounding up (about 1 line)
  const dim3 grid((width + block.x - 1) / block.x, (height + block.y - 1) / block.y);
  // END YOUR CODE
  rgb_to_gray_kernel<<<grid, block>>>(rgb, gray, height, width);
  CUDA_CHECK_LAUNCH();
}
