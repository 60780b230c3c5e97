/// @file prefetch_ring.hpp
/// @brief Contract of exercise 04/02 `prefetch_ring`: worker threads that read and preprocess
/// batches from disk into a bounded ring of pinned host buffers, ahead of the consumer.
///
/// Implemented by `exercises/04-data-loading/02_prefetch_ring.cu`, tested by
/// `autograder/tests/04-data-loading/test_prefetch_ring.cpp`. The files are described in
/// `record_format.hpp`.
///
/// This is what PyTorch's `DataLoader(num_workers=N, prefetch_factor=..., pin_memory=True)`
/// does for a training loop (with processes instead of threads): while the GPU trains on
/// batch b, workers are already reading b+1, b+2, ... into page-locked memory, so that the
/// next copy to the GPU can start at once.
///
/// The ring has `slots` buffers. Batch b always goes to slot `b % slots`; a worker may start
/// on batch b only when that slot is free, i.e. when the consumer has released batch
/// b - slots. That one rule gives all four properties the tests check:
/// - **bounded**: at most `slots` batches exist at any time (read, being read, or held);
/// - **back-pressure**: a slow consumer stops the workers instead of letting them fill memory;
/// - **in order** and **exactly once**: batch numbers are handed out by a counter and
///   delivered by a second one, whichever worker finishes first;
/// - **no deadlock**: batch b waits only for batches before it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "record_format.hpp"

/// What to load and how.
struct RingConfig {
  std::vector<std::string> files;  ///< the data set, in order (see record_format.hpp)
  int batch_size = 32;             ///< samples per batch (the last batch may be smaller), >= 1
  int workers = 2;                 ///< reader threads, >= 1
  int slots = 4;                   ///< pinned buffers in the ring (batches in flight), >= 1
  /// Optional: called by a worker thread right after it has read batch `b` into its slot
  /// (tests count reads with it; the benchmark draws its timeline from it). Workers read
  /// without holding the ring's lock, so two workers may be inside it at once. A test checks
  /// that two reads are under way at once (it serves the files itself, through named pipes),
  /// since workers that take turns read no faster than one.
  std::function<void(std::int64_t b)> on_batch_read;
};

/// One batch, as the consumer sees it: valid until it is passed to `release()`.
struct Batch {
  std::int64_t index = -1;              ///< batch number, 0, 1, 2, ... in order
  int samples = 0;                      ///< samples in it (batch_size, fewer for the last)
  const float* features = nullptr;      ///< `samples * features()` floats, in pinned memory
  const std::int64_t* sample_ids = nullptr;  ///< `samples` ids (their global positions)
  int slot = -1;                        ///< the ring slot holding it
};

/// A prefetching, bounded, ordered ring of batches.
class PrefetchRing {
 public:
  /// Reads the files' headers (`dataset::scan`), allocates `slots` pinned buffers of one batch
  /// each and starts `workers` threads, which begin reading at once.
  /// @throws dataset::DataError if a file is missing or its header is bad
  /// @throws std::invalid_argument for batch_size, workers or slots < 1
  explicit PrefetchRing(RingConfig config);

  /// Stops the workers and waits for them; safe at any time, also when the consumer stopped
  /// early, still holds batches, or an error happened. Frees the slots.
  ~PrefetchRing();

  PrefetchRing(const PrefetchRing&) = delete;
  PrefetchRing& operator=(const PrefetchRing&) = delete;

  /// Waits for the next batch in order and hands it out (its slot stays taken until
  /// `release()`). Returns false, at once, once every batch has been handed out.
  /// @throws dataset::DataError the error a worker met while reading this batch (a
  ///         truncated or corrupt file; the message names the file and the record). Every
  ///         batch before it has been delivered; later calls throw the same error again.
  bool next(Batch& batch);

  /// Gives a batch's slot back to the workers. Batches may be released in any order.
  void release(const Batch& batch);

  /// Number of batches in the data set: ceil(samples / batch_size).
  std::int64_t batch_count() const;
  /// Floats per sample.
  int features() const;

 private:
  struct State;  // defined in the exercise file
  std::unique_ptr<State> state_;
};
