/// @file rgb_to_gray.hpp
/// @brief Contract of exercise 00/03 `rgb_to_gray`: a 2-D grid over an image.
///
/// Implemented by `exercises/00-gpu-vs-cpu/03_rgb_to_gray.cu` and tested by
/// `autograder/tests/00-gpu-vs-cpu/test_rgb_to_gray.cpp`.
#pragma once

/// Converts an interleaved RGB image to gray on the GPU:
/// `gray[row * width + col] = 0.299 * r + 0.587 * g + 0.114 * b`, where
/// `r, g, b = rgb[(row * width + col) * 3 + 0, 1, 2]` (the ITU-R BT.601 luma weights).
///
/// Launches 16x16 thread blocks (`dim3`) on a 2-D grid that covers the image: x runs along
/// columns, y along rows; threads that fall outside the image do nothing.
///
/// @param rgb     device pointer to `height * width * 3` floats, row-major, channels
///                interleaved (r, g, b, r, g, b, ...) (read only)
/// @param gray    device pointer to `height * width` floats, row-major (written)
/// @param height  number of rows, `height >= 1`
/// @param width   number of columns, `width >= 1`
/// @throws course::CudaError if the launch is rejected (checked with `CUDA_CHECK_LAUNCH`)
void launch_rgb_to_gray(const float* rgb, float* gray, int height, int width);
