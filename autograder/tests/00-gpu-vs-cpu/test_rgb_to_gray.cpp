// Tests for exercise 00/03 rgb_to_gray (contract: lessons/00-gpu-vs-cpu/rgb_to_gray.hpp).
// Run: ./course test 00/rgb_to_gray

#include "rgb_to_gray.hpp"

#include <cuda_runtime.h>

#include "course_test.hpp"
#include "cuda_check.hpp"

#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace ct = course::test;

namespace {

/// CPU reference in double: BT.601 luma of an interleaved RGB image.
std::vector<double> cpu_rgb_to_gray(const std::vector<float>& rgb, int height, int width) {
  std::vector<double> gray(static_cast<std::size_t>(height) * width);
  for (std::size_t p = 0; p < gray.size(); ++p) {
    gray[p] = 0.299 * rgb[3 * p] + 0.587 * rgb[3 * p + 1] + 0.114 * rgb[3 * p + 2];
  }
  return gray;
}

}  // namespace

TEST(RgbToGray, MatchesCpuOnAwkwardShapes) {
  ct::Rng rng;
  // One pixel, a single row, a single column, non-multiples of 16 both ways, a VGA frame.
  for (auto [height, width] : ct::awkward_shapes()) {
    const std::size_t pixels = static_cast<std::size_t>(height) * width;
    const auto rgb = rng.uniform(3 * pixels, 0.0f, 1.0f);  // intensities in [0, 1)
    ct::DeviceBuffer<float> d_rgb(rgb), d_gray(pixels);
    d_gray.poison();  // pixels nobody writes read as NaN
    launch_rgb_to_gray(d_rgb.get(), d_gray.get(), height, width);
    ASSERT_TRUE(ct::all_close_2d(cpu_rgb_to_gray(rgb, height, width), d_gray.download(), height,
                                 width, ct::elementwise_tolerance()))
        << "image " << height << " rows x " << width << " columns";
  }
}

TEST(RgbToGray, DoesNotWritePastTheLastPixel) {
  // Tiles hang over the right and bottom edges; their outside threads must not write.
  ct::Rng rng;
  for (auto [height, width] : {std::pair<int, int>{1, 1}, {17, 33}, {127, 129}, {3, 200}}) {
    const std::size_t pixels = static_cast<std::size_t>(height) * width;
    const auto rgb = rng.uniform(3 * pixels, 0.0f, 1.0f);
    // Room past the end in both buffers: rgb padded with values, gray with the guard pattern.
    auto rgb_padded = rgb;
    rgb_padded.resize(3 * (pixels + ct::kGuardElements), 0.5f);
    std::vector<float> gray(pixels, std::numeric_limits<float>::quiet_NaN());
    const auto guard = ct::guard_pattern<float>();
    gray.insert(gray.end(), guard.begin(), guard.end());
    ct::DeviceBuffer<float> d_rgb(rgb_padded), d_gray(gray);
    launch_rgb_to_gray(d_rgb.get(), d_gray.get(), height, width);
    const auto result = d_gray.download();
    const std::vector<float> image(result.begin(), result.begin() + pixels);
    EXPECT_TRUE(ct::all_close_2d(cpu_rgb_to_gray(rgb, height, width), image, height, width,
                                 ct::elementwise_tolerance()))
        << "image " << height << " rows x " << width << " columns";
    EXPECT_TRUE(ct::guard_untouched(result, pixels))
        << "image " << height << " rows x " << width << " columns";
  }
}

TEST(RgbToGray, KeepsRowsAndColumnsApartInTallAndWideImages) {
  // Swapping x and y (or height and width) goes unnoticed on square images; these are not.
  ct::Rng rng;
  for (auto [height, width] : {std::pair<int, int>{16, 300}, {300, 16}, {2, 2049}}) {
    const std::size_t pixels = static_cast<std::size_t>(height) * width;
    const auto rgb = rng.uniform(3 * pixels, 0.0f, 1.0f);
    ct::DeviceBuffer<float> d_rgb(rgb), d_gray(pixels);
    d_gray.poison();
    launch_rgb_to_gray(d_rgb.get(), d_gray.get(), height, width);
    EXPECT_TRUE(ct::all_close_2d(cpu_rgb_to_gray(rgb, height, width), d_gray.download(), height,
                                 width, ct::elementwise_tolerance()))
        << "image " << height << " rows x " << width << " columns";
  }
}

namespace {

std::string image_name(int height, int width) {
  return "image " + std::to_string(height) + " rows x " + std::to_string(width) + " columns";
}

/// Converts one random height x width image with the traffic counted into `counted`, and
/// checks the values (a fatal failure when they are wrong: then the counts say nothing).
void convert_counted(ct::Rng& rng, int height, int width, ct::GlobalTraffic* counted) {
  const std::size_t pixels = static_cast<std::size_t>(height) * width;
  const auto rgb = rng.uniform(3 * pixels, 0.0f, 1.0f);
  ct::DeviceBuffer<float> d_rgb(rgb), d_gray(pixels);
  d_gray.poison();
  *counted = ct::count_global_traffic([&] { launch_rgb_to_gray(d_rgb.get(), d_gray.get(), height, width); });
  ASSERT_TRUE(ct::all_close(cpu_rgb_to_gray(rgb, height, width), d_gray.download(), 1e-6, 1e-5))
      << image_name(height, width);
}

/// Converts one random height x width image with the traffic counted and checks the values,
/// one pixel per thread (4 global accesses) and a warp's accesses along rows.
void check_one_pixel_per_thread_along_the_row(ct::Rng& rng, int height, int width) {
  const std::string where = image_name(height, width);
  ct::GlobalTraffic counted;
  convert_counted(rng, height, width, &counted);
  if (::testing::Test::HasFatalFailure()) return;
  if (!counted.counted) GTEST_SKIP() << counted.why_not;
  EXPECT_LE(counted.span_global_ops, 4u) << where << ": one thread made " << counted.span_global_ops
                                         << " global accesses: one thread per pixel makes 4 (r, g, b, gray)";
  EXPECT_LE(counted.sectors_per_request(), 12.0)
      << where << ": " << counted.sectors_per_request() << " 32-byte sectors per warp-wide access (16 x 16 blocks "
      << "with x along the columns give about 10): threadIdx.x should follow the columns, so that a warp reads "
      << "neighbouring pixels";
}

}  // namespace

TEST(RgbToGray, EachThreadConvertsOnePixelAlongTheRow) {
  // x runs along columns: the 16 threads of a half-warp read 16 neighbouring pixels of one
  // row (192 contiguous bytes per channel load) and write 16 neighbouring floats. Mapping x to
  // rows instead puts every lane in a different row: the same numbers, 3 times the sectors.
  // And one pixel per thread: no thread loops over the image. Two images drawn from the run's
  // seed (17 to 160 rows, 17 to 320 columns: other tests' shapes among them), of different
  // shapes, so that no one image marks the checked call.
  ct::Rng rng;
  const int height = rng.integer(17, 160), width = rng.integer(17, 320);
  int height2 = rng.integer(17, 160), width2 = rng.integer(17, 320);
  while (height2 == height && width2 == width) width2 = rng.integer(17, 320);
  for (auto [h, w] : {std::pair<int, int>{height, width}, {height2, width2}}) {
    check_one_pixel_per_thread_along_the_row(rng, h, w);
    if (::testing::Test::HasFatalFailure() || ::testing::Test::IsSkipped()) return;
  }
}

namespace {

/// Blocks of a 2-D grid of 16 x 16 tiles over the image: ceil(width/16) x ceil(height/16).
std::uint64_t tiles_over(int height, int width) {
  return std::uint64_t((width + 15) / 16) * std::uint64_t((height + 15) / 16);
}

/// Blocks of a flat 1-D grid of 256-thread blocks over the image's pixels.
std::uint64_t flat_blocks_over(int height, int width) { return (std::uint64_t(height) * width + 255) / 256; }

}  // namespace

TEST(RgbToGray, CoversTheImageWithATwoDimensionalGridOfTiles) {
  // The exercise is 2-D indexing: a grid of 16 x 16 tiles, blockIdx.x along the columns and
  // blockIdx.y down the rows, ceil(width/16) x ceil(height/16) of them, each thread its
  // (column, row). A flat 1-D grid over the pixels with a flat index gets the same numbers
  // with a different count of blocks (a tile's rows no longer match the image's). The image is
  // drawn from the run's seed (17 to 160 rows, 17 to 320 columns) among those where the counts
  // differ, so that no one image marks the checked call.
  ct::Rng rng;
  int height = 0, width = 0;
  do {
    height = rng.integer(17, 160);
    width = rng.integer(17, 320);
  } while (tiles_over(height, width) == flat_blocks_over(height, width));
  const std::string where = image_name(height, width);
  std::printf("[ COURSE   ] drawn: %s\n", where.c_str());
  ct::GlobalTraffic counted;
  convert_counted(rng, height, width, &counted);
  if (HasFatalFailure()) return;
  if (!counted.counted) GTEST_SKIP() << counted.why_not;
  EXPECT_EQ(counted.blocks, tiles_over(height, width))
      << where << ": " << counted.blocks << " blocks launched; a 2-D grid of 16 x 16 tiles covers it with "
      << (width + 15) / 16 << " x " << (height + 15) / 16 << " = " << tiles_over(height, width)
      << " (ceil(width/16) columns of tiles in x, ceil(height/16) rows in y), each thread taking column "
         "blockIdx.x * blockDim.x + threadIdx.x and row blockIdx.y * blockDim.y + threadIdx.y ("
      << flat_blocks_over(height, width) << " is a flat grid over the pixels)";
  EXPECT_EQ(counted.threads, 256 * tiles_over(height, width))
      << where << ": " << counted.threads << " threads launched; the given 16 x 16 blocks, one per tile";
}
