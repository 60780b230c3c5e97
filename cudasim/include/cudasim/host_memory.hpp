/// @file host_memory.hpp
/// @brief Where the simulator takes page-locked host memory from (cudaMallocHost,
/// cudaHostAlloc).
///
/// By default from the C library, page-aligned. The grader's worker process
/// (autograder/remote/worker_main.cpp) takes it instead from memory it shares with the judge,
/// so that a test reads and writes the submission's pinned buffers as it would in one process.
/// Set before the program allocates any.
#pragma once

#include <cstddef>

namespace cudasim {

struct PinnedAllocator {
  /// Memory for `bytes` (a whole number of pages), page-aligned, or null when there is none.
  void* (*allocate)(std::size_t bytes) = nullptr;
  /// Gives back what allocate() gave; false for a pointer it did not give (the C library's).
  bool (*release)(void* pointer) = nullptr;
};

/// Page-locked memory from now on comes from `allocator` (both functions set), or from the C
/// library again (both null).
void set_pinned_allocator(PinnedAllocator allocator);

}  // namespace cudasim
