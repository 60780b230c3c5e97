// Exercise 04/01: pinned_copy, host-to-device copies from pageable and from pinned memory.
//
// What it teaches: where the bytes of a batch travel on their way to the GPU. From pageable
// memory the driver copies them into a page-locked staging buffer first (a CPU memcpy) and
// DMAs that: two copies, and the call blocks the CPU. From pinned memory the copy engine reads
// them directly and the CPU is free at once. PyTorch's `DataLoader(pin_memory=True)` and
// `tensor.to("cuda", non_blocking=True)` are these two lines.
//
// Run its tests:   ./course test 04/pinned_copy
//
// Napkin math: PCIe gen4 x16 carries 32 GB/s per direction on paper, ~26 GB/s in practice
// from pinned memory and about half that from pageable memory; a 64 MiB batch of images then
// takes ~2.6 ms pinned and ~5 ms pageable. An H200 reads the same 64 MiB from its own memory
// in ~15 us: the link, not the GPU, sets the pace of anything that streams data in.

#include <stdexcept>
#include <string>
#include <utility>

#include "cuda_check.hpp"
#include "pinned_copy.hpp"

// ---------------------------------------------------------------------------------------
// PinnedBuffer: page-locked host memory

PinnedBuffer::PinnedBuffer(std::size_t bytes) {
  if (bytes == 0) return;
  // BEGIN YOUR CODE
  // TODO(student): allocate `bytes` of page-locked memory into data_ with cudaMallocHost
  //                (check it with CUDA_CHECK) and remember the size in bytes_ (about 2 lines)
  // END YOUR CODE
}

PinnedBuffer::~PinnedBuffer() {
  // BEGIN YOUR CODE
  // TODO(student): free data_ with cudaFreeHost when it is not null; do not throw (about 1 line)
  // END YOUR CODE
}

PinnedBuffer::PinnedBuffer(PinnedBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& other) noexcept {
  if (this != &other) {
    PinnedBuffer old(std::move(*this));  // frees what this held when `old` goes out of scope
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

// ---------------------------------------------------------------------------------------
// the two paths to the device

void upload_pageable(void* d_dst, const void* h_src, std::size_t bytes) {
  // Synchronous: from pageable memory the driver stages the data through its own pinned
  // buffer, so this returns only when the source has been read.
  CUDA_CHECK(cudaMemcpy(d_dst, h_src, bytes, cudaMemcpyHostToDevice));
}

void upload_pinned_async(void* d_dst, const PinnedBuffer& h_src, std::size_t bytes,
                         cudaStream_t stream) {
  if (bytes > h_src.bytes())  // would read past the end of the pinned buffer
    throw std::length_error("upload_pinned_async: " + std::to_string(bytes) +
                            " bytes requested from a pinned buffer of " +
                            std::to_string(h_src.bytes()));
  // BEGIN YOUR CODE
  // TODO(student): queue the copy of `bytes` from h_src.data() to d_dst on `stream` with
  //                cudaMemcpyAsync (cudaMemcpyHostToDevice), checked; do not synchronize
  //                (about 2 lines)
  // END YOUR CODE
}
