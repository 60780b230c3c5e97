// The contract of prefetch_ring, as the judge and the worker exchange it (../course_remote.hpp).
//
// The ring is the worker's object, and so are its reader threads. The judge's PrefetchRing
// stands for it: its State holds the worker's address of the ring. A batch's samples are in
// the submission's page-locked slots, in the host memory both processes map, where the test
// reads them directly once the judge has checked that the batch lies there whole, for the
// data set's shape as the judge itself reads it from the files' headers. The test's
// on_batch_read crosses as a callback, which each reader thread of the submission calls from
// its own lane: two may run in the judge at once, as the tests require of two readers.
#include "prefetch_ring.hpp"

#include "course_remote.hpp"
#include "record_format.hpp"

#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace {

using course::remote::Reader;
using course::remote::Writer;

// ---- dataset::DataError crosses as itself: the tests catch it by type and read its message ----

bool put_data_error(const std::exception_ptr& caught, Writer& out) {
  try {
    std::rethrow_exception(caught);
  } catch (const dataset::DataError& e) {
    out.put_string(e.file());
    out.put<std::int64_t>(e.record());
    out.put_string(e.what());
    return true;
  } catch (...) {
    return false;
  }
}

/// Throws the DataError put_data_error wrote, with the same message: its `why` is what follows
/// the "file: record N: " that DataError puts in front.
void throw_data_error(Reader& in) {
  const std::string file = in.get_string();
  const auto record = static_cast<long long>(in.get<std::int64_t>());
  const std::string message = in.get_string();
  const std::string prefix = file + (record >= 0 ? ": record " + std::to_string(record) : std::string()) + ": ";
  if (message.compare(0, prefix.size(), prefix) == 0) throw dataset::DataError(file, record, message.substr(prefix.size()));
  throw dataset::DataError(file, record, message);
}

const bool data_error_registered =
    course::remote::register_exception_type({"dataset::DataError", put_data_error, throw_data_error});

}  // namespace

#ifdef COURSE_REMOTE_JUDGE

struct PrefetchRing::State {
  std::uint64_t ring = 0;      ///< the worker's PrefetchRing
  std::uint64_t on_read = 0;   ///< the callback standing for config.on_batch_read, 0 for none
  int batch_size = 0;
  std::uint32_t features = 0;  ///< per sample, from the files' headers as the judge reads them
};

namespace {

void forward(const char* name, std::uint64_t ring) {
  Writer arguments;
  arguments.put(ring);
  course::remote::call_with(name, arguments, [](Reader&) {});
}

}  // namespace

PrefetchRing::PrefetchRing(RingConfig config) : state_(new State) {
  // The data set's shape, which the judge checks each batch against. Reading the headers
  // throws the DataError a missing file or a bad header gives, as the ring's own reading does.
  state_->features = dataset::scan(config.files).features;
  state_->batch_size = config.batch_size;
  if (config.on_batch_read) {
    state_->on_read = course::remote::add_callback([read = std::move(config.on_batch_read)](Reader& in, Writer&) {
      read(in.get<std::int64_t>());
    });
  }
  Writer arguments;
  course::remote::Marshal<std::vector<std::string>>::put(arguments, config.files);
  arguments.put<std::int32_t>(config.batch_size);
  arguments.put<std::int32_t>(config.workers);
  arguments.put<std::int32_t>(config.slots);
  arguments.put(state_->on_read);
  try {
    state_->ring = course::remote::call_with("PrefetchRing(RingConfig)", arguments,
                                             [](Reader& in) { return in.get<std::uint64_t>(); });
  } catch (...) {
    course::remote::remove_callback(state_->on_read);
    throw;
  }
}

PrefetchRing::~PrefetchRing() {
  if (state_->ring != 0) {
    try {
      forward("~PrefetchRing", state_->ring);
    } catch (...) {
      // A destructor cannot throw: a worker that failed has failed the test already.
    }
  }
  // After the ring's readers have stopped: nothing calls the test's function any more.
  course::remote::remove_callback(state_->on_read);
}

bool PrefetchRing::next(Batch& batch) {
  Writer arguments;
  arguments.put(state_->ring);
  const auto [delivered, got] = course::remote::call_with("PrefetchRing::next", arguments, [](Reader& in) {
    Batch b;
    const bool delivered = in.get<std::uint8_t>() != 0;
    b.index = in.get<std::int64_t>();
    b.samples = in.get<std::int32_t>();
    b.features = in.get_address<const float*>();
    b.sample_ids = in.get_address<const std::int64_t*>();
    b.slot = in.get<std::int32_t>();
    return std::make_pair(delivered, b);
  });
  if (got.samples < 0 || got.samples > state_->batch_size)
    throw std::runtime_error("PrefetchRing::next handed out batch " + std::to_string(got.index) + " with " +
                             std::to_string(got.samples) + " samples; a batch holds at most batch_size (" +
                             std::to_string(state_->batch_size) + ")");
  const auto samples = static_cast<std::size_t>(got.samples);
  batch = got;
  batch.features = course::remote::checked_shared_host(got.features, samples * state_->features,
                                                       "batch " + std::to_string(got.index) + "'s features");
  batch.sample_ids = course::remote::checked_shared_host(got.sample_ids, samples,
                                                         "batch " + std::to_string(got.index) + "'s sample_ids");
  return delivered;
}

void PrefetchRing::release(const Batch& batch) {
  Writer arguments;
  arguments.put(state_->ring);
  arguments.put<std::int64_t>(batch.index);
  arguments.put<std::int32_t>(batch.samples);
  arguments.put_address(batch.features);
  arguments.put_address(batch.sample_ids);
  arguments.put<std::int32_t>(batch.slot);
  course::remote::call_with("PrefetchRing::release", arguments, [](Reader&) {});
}

std::int64_t PrefetchRing::batch_count() const {
  Writer arguments;
  arguments.put(state_->ring);
  return course::remote::call_with("PrefetchRing::batch_count", arguments,
                                   [](Reader& in) { return in.get<std::int64_t>(); });
}

int PrefetchRing::features() const {
  Writer arguments;
  arguments.put(state_->ring);
  return course::remote::call_with("PrefetchRing::features", arguments, [](Reader& in) { return in.get<std::int32_t>(); });
}

#endif  // COURSE_REMOTE_JUDGE

#ifdef COURSE_REMOTE_WORKER

namespace {

/// The rings the judge's stand for, by address.
std::mutex g_rings_mutex;
std::map<std::uint64_t, std::unique_ptr<PrefetchRing>> g_rings;

PrefetchRing& ring(Reader& in) {
  std::lock_guard<std::mutex> lock(g_rings_mutex);
  const auto found = g_rings.find(in.get<std::uint64_t>());
  if (found == g_rings.end()) throw course::remote::ProtocolError("no such PrefetchRing");
  return *found->second;
}

void construct(Reader& in, Writer& out) {
  RingConfig config;
  config.files = course::remote::Marshal<std::vector<std::string>>::get(in);
  config.batch_size = in.get<std::int32_t>();
  config.workers = in.get<std::int32_t>();
  config.slots = in.get<std::int32_t>();
  config.on_batch_read = course::remote::callback_function<std::int64_t>(in.get<std::uint64_t>());
  auto made = std::make_unique<PrefetchRing>(std::move(config));
  const auto address = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(made.get()));
  std::lock_guard<std::mutex> lock(g_rings_mutex);
  g_rings[address] = std::move(made);
  out.put(address);
}

void destroy(Reader& in, Writer&) {
  std::unique_ptr<PrefetchRing> gone;
  {
    std::lock_guard<std::mutex> lock(g_rings_mutex);
    const auto found = g_rings.find(in.get<std::uint64_t>());
    if (found == g_rings.end()) return;
    gone = std::move(found->second);
    g_rings.erase(found);
  }
  gone.reset();  // the ring's destructor, which stops its readers, outside the lock
}

void next(Reader& in, Writer& out) {
  Batch batch;
  const bool delivered = ring(in).next(batch);
  out.put<std::uint8_t>(delivered ? 1 : 0);
  out.put<std::int64_t>(batch.index);
  out.put<std::int32_t>(batch.samples);
  out.put_address(batch.features);
  out.put_address(batch.sample_ids);
  out.put<std::int32_t>(batch.slot);
}

void release(Reader& in, Writer&) {
  PrefetchRing& r = ring(in);
  Batch batch;
  batch.index = in.get<std::int64_t>();
  batch.samples = in.get<std::int32_t>();
  batch.features = in.get_address<const float*>();
  batch.sample_ids = in.get_address<const std::int64_t*>();
  batch.slot = in.get<std::int32_t>();
  r.release(batch);
}

void batch_count(Reader& in, Writer& out) { out.put<std::int64_t>(ring(in).batch_count()); }
void features(Reader& in, Writer& out) { out.put<std::int32_t>(ring(in).features()); }

const bool registered = course::remote::register_handler("PrefetchRing(RingConfig)", construct) &&
                        course::remote::register_handler("~PrefetchRing", destroy) &&
                        course::remote::register_handler("PrefetchRing::next", next) &&
                        course::remote::register_handler("PrefetchRing::release", release) &&
                        course::remote::register_handler("PrefetchRing::batch_count", batch_count) &&
                        course::remote::register_handler("PrefetchRing::features", features);

}  // namespace

#endif  // COURSE_REMOTE_WORKER
