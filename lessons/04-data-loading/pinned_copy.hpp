/// @file pinned_copy.hpp
/// @brief Contract of exercise 04/01 `pinned_copy`: host-to-device copies from pageable and
/// from page-locked (pinned) host memory.
///
/// Implemented by `exercises/04-data-loading/01_pinned_copy.cu`, tested by
/// `autograder/tests/04-data-loading/test_pinned_copy.cpp`.
///
/// Why two paths: the GPU's copy engine moves data by DMA, reading host memory on its own while
/// the CPU does something else. DMA needs physical pages that cannot be swapped out or moved
/// while it reads them. Ordinary (pageable) memory from `new` or `std::vector` gives no such
/// promise, so the driver first copies it, piece by piece, into a page-locked staging buffer
/// of its own and sends that: two copies, and the call cannot return before the CPU's part is
/// done. Memory allocated page-locked (`cudaMallocHost`) is sent directly, at the link's full
/// rate, and `cudaMemcpyAsync` from it returns at once.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

/// Page-locked host memory that owns its allocation (RAII), move-only.
///
/// Allocate it once and reuse it: page-locking memory is slow (the OS pins every page), so a
/// data loader keeps a few pinned buffers and fills them again and again.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;

  /// Allocates `bytes` of page-locked host memory with `cudaMallocHost` (nothing for 0).
  /// @throws course::CudaError if the allocation fails
  explicit PinnedBuffer(std::size_t bytes);

  /// Frees the memory with `cudaFreeHost`; an error cannot be thrown from here and is ignored.
  ~PinnedBuffer();

  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  PinnedBuffer(PinnedBuffer&& other) noexcept;
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept;

  /// The host pointer (null when empty). The CPU reads and writes it like any memory.
  void* data() const { return data_; }
  /// The size in bytes.
  std::size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

/// The pageable path (given): copies `bytes` from ordinary host memory `h_src` to the device
/// pointer `d_dst` with `cudaMemcpy`. Returns when the copy is done.
/// @throws course::CudaError if the copy fails
void upload_pageable(void* d_dst, const void* h_src, std::size_t bytes);

/// The pinned path: queues a copy of the first `bytes` of `h_src` to the device pointer
/// `d_dst` on `stream` with `cudaMemcpyAsync` and returns without waiting for it (the caller
/// synchronizes the stream, or records an event, before using `d_dst` or refilling `h_src`).
/// `bytes == 0` queues nothing.
/// @throws std::length_error if `bytes > h_src.bytes()`
/// @throws course::CudaError if the copy cannot be queued
void upload_pinned_async(void* d_dst, const PinnedBuffer& h_src, std::size_t bytes,
                         cudaStream_t stream);
