// The contract between main.cpp (host code) and kernels.cu (its kernel): a program in two
// files, with this header in its own folder, as real projects are laid out.
//   ./course run cudasim/examples/two_files/main.cpp cudasim/examples/two_files/kernels.cu \
//       -I cudasim/examples/two_files/include -D SCALE=3
#pragma once
#include <cuda_runtime.h>

// The factor the kernel multiplies by: 2 unless the build defines it (-D SCALE=3).
#ifndef SCALE
#define SCALE 2
#endif

/// Multiplies the n floats at `device_data` by SCALE on the device; returns the launch's error.
cudaError_t launch_scale(float* device_data, int n);
