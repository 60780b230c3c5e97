// A plain `.h` header with a kernel and its launch, included by real_code_kernels.cuh (a header
// included by a header): the simulator's rewrite must follow the chain. Valid CUDA.
#pragma once

#include <cuda_runtime.h>

namespace real_code {

/// out[i] = i * step for the first n elements (step converted as a kernel call converts it).
template <class T>
__global__ void fill_steps(T* out, T step, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = static_cast<T>(i) * step;
}

/// The launch written in the header. `n` is a size_t, the kernel's parameter an int.
template <class T>
void fill_with_steps(T* out, T step, size_t n) {
  fill_steps<<<static_cast<unsigned>((n + 127) / 128), 128>>>(out, step, n);
}

}  // namespace real_code
