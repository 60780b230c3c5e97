// cudasim's <cuda_pipeline_primitives.h>: the per-thread asynchronous-copy primitives of CUDA 11
// (see cudasim/async_copy.hpp for how copies run: at once, in the calling thread).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "cudasim/async_copy.hpp"

/// Copies `size_and_align - zfill` bytes (4, 8 or 16 in CUDA) from `src` to `dst` and sets the
/// `zfill` bytes after them to zero.
inline void __pipeline_memcpy_async(void* dst, const void* src, std::size_t size_and_align, std::size_t zfill = 0) {
  const std::size_t copied = size_and_align - zfill;
  ::cudasim::detail::copy_share(dst, src, copied, 0, 1);
  char* rest = static_cast<char*>(dst) + copied;
  for (std::size_t i = 0; i < zfill; ++i) rest[i] = 0;
}
/// Ends a batch of copies: nothing is in flight here.
inline void __pipeline_commit() {}
/// Waits until at most `prior` committed batches are in flight: here none ever is.
inline void __pipeline_wait_prior(std::size_t) {}
