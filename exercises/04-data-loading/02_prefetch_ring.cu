// Exercise 04/02: prefetch_ring, worker threads reading batches from disk into a bounded ring
// of pinned buffers, delivered in order.
//
// What it teaches: the CPU side of feeding a GPU. Reading and decoding a batch takes the
// CPU milliseconds; done in the training loop, the GPU waits that long every step. Done by
// worker threads ahead of time, into a few reusable page-locked buffers, it overlaps with
// training, and the copy to the GPU can start the moment a batch is needed (exercise 03).
// The hard part is not the reading but the rules around it: bounded memory, order, every
// sample exactly once, stopping cleanly, and an error that reaches the consumer instead of
// a hang or a silently skipped batch.
//
// Run its tests:   ./course test 04/prefetch_ring
//
// Napkin math: a batch of 256 images of 224x224x3 bytes is 38 MiB raw and 154 MiB as floats.
// A fast NVMe drive reads ~7 GB/s, one core converts bytes to floats at a few GB/s: one
// worker produces a batch in ~50 ms, while an H200 trains a ResNet-50 step in ~100 ms. Two
// or three workers keep ahead; one worker on a slower disk does not, and the GPU idles.
//
// The ring (see prefetch_ring.hpp): batch b lives in slot b % slots. Each slot is
//   Free -> Filling (a worker claimed it) -> Ready (read, or failed) -> InUse (handed out)
//   -> Free (released).
// One mutex guards the states and two counters; two condition variables wake the workers
// (a slot became free) and the consumer (a batch became ready).

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cuda_check.hpp"
#include "prefetch_ring.hpp"

namespace {

enum class SlotState { Free, Filling, Ready, InUse };

/// One slot of the ring: a batch's worth of pinned memory and where it stands.
struct Slot {
  SlotState state = SlotState::Free;
  std::int64_t batch = -1;     ///< the batch it holds (or is being filled with)
  int samples = 0;             ///< samples in that batch
  std::exception_ptr error;    ///< set when reading the batch failed
  float* features = nullptr;   ///< batch_size * features floats (pinned)
  std::int64_t* ids = nullptr; ///< batch_size ids (pinned)
};

}  // namespace

struct PrefetchRing::State {
  RingConfig config;
  dataset::Index index;
  std::int64_t batches = 0;
  void* pinned = nullptr;  // every slot's memory, one cudaMallocHost allocation
  std::vector<Slot> slots;

  std::mutex mutex;                     // guards everything below
  std::condition_variable slot_freed;   // workers wait on it
  std::condition_variable batch_ready;  // the consumer waits on it
  std::int64_t next_to_read = 0;        // the next batch a worker claims
  std::int64_t next_to_deliver = 0;     // the next batch next() hands out
  bool stopping = false;                // set by the destructor

  std::vector<std::thread> workers;

  Slot& slot_of(std::int64_t b) { return slots[static_cast<std::size_t>(b % static_cast<std::int64_t>(slots.size()))]; }

  /// Reads batch `b` into `slot` (no lock held: this is the slow part, done in parallel).
  void read_batch(std::int64_t b, Slot& slot) {
    const std::int64_t first = b * config.batch_size;
    const int count = static_cast<int>(std::min<std::int64_t>(config.batch_size, index.samples - first));
    dataset::read_samples(index, first, count, slot.features, slot.ids);
    slot.samples = count;
    if (config.on_batch_read) config.on_batch_read(b);
  }

  void worker_loop();
};

// ---------------------------------------------------------------------------------------
// the workers

void PrefetchRing::State::worker_loop() {
  // BEGIN YOUR CODE
  // TODO(student): the worker's loop: claim the next batch once its slot is Free, read it without
  //                holding the lock, hand it (or its exception) to the consumer; return when
  //                stopping or when no batch is left (about 30 lines)
  // END YOUR CODE
}

// ---------------------------------------------------------------------------------------
// construction and shutdown

PrefetchRing::PrefetchRing(RingConfig config) : state_(new State) {
  if (config.batch_size < 1 || config.workers < 1 || config.slots < 1)
    throw std::invalid_argument("PrefetchRing: batch_size, workers and slots must be >= 1");
  State& s = *state_;
  s.index = dataset::scan(config.files);
  s.config = std::move(config);
  s.batches = (s.index.samples + s.config.batch_size - 1) / s.config.batch_size;
  // One pinned allocation for all slots: features first, then the ids.
  const std::size_t per_slot_floats = static_cast<std::size_t>(s.config.batch_size) * s.index.features;
  const std::size_t nslots = static_cast<std::size_t>(s.config.slots);
  CUDA_CHECK(cudaMallocHost(&s.pinned, nslots * (per_slot_floats * sizeof(float) +
                                                 s.config.batch_size * sizeof(std::int64_t))));
  s.slots.resize(nslots);
  float* features = static_cast<float*>(s.pinned);
  auto* ids = reinterpret_cast<std::int64_t*>(features + nslots * per_slot_floats);
  for (std::size_t i = 0; i < nslots; ++i) {
    s.slots[i].features = features + i * per_slot_floats;
    s.slots[i].ids = ids + i * s.config.batch_size;
  }
  for (int w = 0; w < s.config.workers; ++w) s.workers.emplace_back([&s] { s.worker_loop(); });
}

PrefetchRing::~PrefetchRing() {
  State& s = *state_;
  // BEGIN YOUR CODE
  // TODO(student): under the mutex set s.stopping, then wake everyone waiting on s.slot_freed
  //                and s.batch_ready, so that the join below cannot hang (about 6 lines)
  // END YOUR CODE
  for (std::thread& t : s.workers) t.join();  // a worker in the middle of a read finishes it first
  if (s.pinned != nullptr) cudaFreeHost(s.pinned);
}

// ---------------------------------------------------------------------------------------
// the consumer's side

bool PrefetchRing::next(Batch& batch) {
  [[maybe_unused]] State& s = *state_;
  // BEGIN YOUR CODE
  // TODO(student): the next batch in order, once it is Ready; rethrow its read error; false when
  //                every batch has been handed out (about 16 lines)
  // END YOUR CODE
  return false;  // reached only by the untouched skeleton
}

void PrefetchRing::release(const Batch& batch) {
  [[maybe_unused]] State& s = *state_;
  // BEGIN YOUR CODE
  // TODO(student): give the batch's slot back (std::logic_error if it is not a batch handed out and
  //                not yet released) and wake the workers (about 9 lines)
  // END YOUR CODE
}

std::int64_t PrefetchRing::batch_count() const { return state_->batches; }

int PrefetchRing::features() const { return static_cast<int>(state_->index.features); }
