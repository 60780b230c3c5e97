// Tests for exercise 04/02 prefetch_ring (contract: lessons/04-data-loading/prefetch_ring.hpp,
// file format: lessons/04-data-loading/record_format.hpp).
// Run: ./course test 04/prefetch_ring
//
// Every test runs the ring inside a thread with a deadline: a deadlock fails the test with a
// message instead of hanging the run (the stuck thread is abandoned, the process goes on).

#include "prefetch_ring.hpp"

#include <cuda_runtime.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "course_test.hpp"
#include "cuda_check.hpp"
#include "record_format.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <iterator>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace ct = course::test;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

/// A folder of data-set files for one test, removed at the end.
class TempDataset {
 public:
  /// Writes one file per entry of `records_per_file`, with `features` pixels per record.
  TempDataset(const std::vector<std::uint32_t>& records_per_file, std::uint32_t features) : features_(features) {
    const std::string name = ct::detail::current_test_name();
    dir_ = fs::temp_directory_path() /
           ("course04-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++) + "-" + name);
    fs::create_directories(dir_);
    std::uint64_t first = 0;
    for (std::size_t i = 0; i < records_per_file.size(); ++i) {
      char file[32];
      std::snprintf(file, sizeof file, "part-%03zu.dlr", i);
      files_.push_back((dir_ / file).string());
      dataset::write_file(files_.back(), first, records_per_file[i], features);
      first += records_per_file[i];
    }
    samples_ = static_cast<std::int64_t>(first);
  }
  ~TempDataset() {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  const std::vector<std::string>& files() const { return files_; }
  std::int64_t samples() const { return samples_; }
  std::uint32_t features() const { return features_; }

  /// Flips one pixel byte of record `record` of file `file`: its checksum no longer matches.
  void corrupt(std::size_t file, std::uint32_t record) const {
    std::fstream f(files_[file], std::ios::in | std::ios::out | std::ios::binary);
    const auto offset = static_cast<std::streamoff>(dataset::kHeaderBytes + dataset::record_bytes(features_) * record + 8 + features_ / 2);
    f.seekg(offset);
    char c = 0;
    f.read(&c, 1);
    c = static_cast<char>(c ^ 0x10);
    f.seekp(offset);
    f.write(&c, 1);
  }
  /// Cuts file `file` in the middle of record `record` (the header still promises more).
  void truncate_inside(std::size_t file, std::uint32_t record) const {
    fs::resize_file(files_[file], dataset::kHeaderBytes + dataset::record_bytes(features_) * record + 5);
  }

 private:
  static int& counter() {
    static int c = 0;
    return c;
  }
  fs::path dir_;
  std::vector<std::string> files_;
  std::int64_t samples_ = 0;
  std::uint32_t features_;
};

/// A data set whose files are named pipes that this object streams, each holding one batch,
/// to see from outside the ring whether two batches are read at once. Each file is served by a
/// thread of its own, to every reader that opens it (the ring's header scans, the reads) on a
/// pipe of its own: the header at once, the records only once two files have a reader past the
/// header (the two reads "meet"), or once a reader has waited 5 s in vain. A header
/// scan closes its end before the next file is opened, so it never meets anything.
class PipedDataset {
 public:
  PipedDataset(int files, std::uint32_t records_per_file, std::uint32_t features)
      : features_(features), samples_(static_cast<std::int64_t>(files) * records_per_file) {
    dir_ = fs::temp_directory_path() / ("course04-pipes-" + std::to_string(::getpid()) + "-" +
                                        ct::detail::current_test_name());
    fs::create_directories(dir_);
    for (int i = 0; i < files; ++i) {
      const fs::path side = dir_ / ("content-" + std::to_string(i));
      dataset::write_file(side.string(), static_cast<std::uint64_t>(i) * records_per_file, records_per_file, features);
      std::ifstream in(side, std::ios::binary);
      contents_.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      fs::remove(side);
      char name[32];
      std::snprintf(name, sizeof name, "part-%03d.dlr", i);
      files_.push_back((dir_ / name).string());
      if (::mkfifo(files_.back().c_str(), 0644) != 0) throw std::runtime_error("mkfifo " + files_.back() + " failed");
    }
    presence_.resize(static_cast<std::size_t>(files));
    for (int i = 0; i < files; ++i) servers_.emplace_back([this, i] { serve(i); });
  }
  ~PipedDataset() {
    stopping_ = true;
    meeting_changed_.notify_all();
    for (std::thread& t : servers_) t.join();
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  const std::vector<std::string>& files() const { return files_; }
  std::int64_t samples() const { return samples_; }
  std::uint32_t features() const { return features_; }
  /// Whether two pipes ever had a reader waiting for records at the same time.
  bool two_reads_met() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return met_;
  }

 private:
  static constexpr auto kPatience = 5s;

  /// Streams file `i` to each reader that opens it, until the object is destroyed.
  void serve(int i) {
    // A reader that goes away makes a write fail with EPIPE; the signal must not end the process.
    sigset_t pipe_signal;
    sigemptyset(&pipe_signal);
    sigaddset(&pipe_signal, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
    const std::string& content = contents_[static_cast<std::size_t>(i)];
    while (!stopping_) {
      // Non-blocking, to see `stopping_`: with no reader the open fails with ENXIO.
      const int fd = ::open(files_[static_cast<std::size_t>(i)].c_str(), O_WRONLY | O_NONBLOCK);
      if (fd < 0) {
        std::this_thread::sleep_for(1ms);
        continue;
      }
      // A fresh pipe for the next reader: one opening this one after the present reader has
      // left would find our end still open and be streamed the rest of someone else's file.
      const std::string& path = files_[static_cast<std::size_t>(i)];
      if (::mkfifo((path + ".next").c_str(), 0644) != 0 || ::rename((path + ".next").c_str(), path.c_str()) != 0)
        throw std::runtime_error("cannot replace the pipe " + path);
      ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
      if (write_all(fd, content.data(), dataset::kHeaderBytes) && wait_to_meet(static_cast<std::size_t>(i), fd))
        write_all(fd, content.data() + dataset::kHeaderBytes, content.size() - dataset::kHeaderBytes);
      ::close(fd);
    }
  }

  /// Holds the records back from the reader of file `i` (on `fd`) until the reads meet, the
  /// reader has waited 5 s in vain, or it closes its end (a header scan): false in the last case.
  ///
  /// The server sees its reader only by polling, so it may notice late that a header scan has
  /// left, after the scan of the next file has begun. Each server therefore records the first and
  /// the latest moment it saw its reader still there: a reader keeps its end open from the one to
  /// the other, so two such spans that overlap are two reads open at the same moment.
  bool wait_to_meet(std::size_t i, int fd) {
    using Clock = std::chrono::steady_clock;
    std::unique_lock<std::mutex> lock(mutex_);
    Presence& mine = presence_[i];
    bool reader_left = false;
    for (;;) {
      lock.unlock();
      pollfd end{fd, 0, 0};
      reader_left = ::poll(&end, 1, 0) > 0 && (end.revents & POLLERR) != 0;
      const Clock::time_point now = Clock::now();
      lock.lock();
      if (reader_left || met_ || gave_up_ || stopping_) break;
      if (!mine.seen) mine.first = now;
      mine.seen = true;
      mine.latest = now;
      for (const Presence& other : presence_)
        if (&other != &mine && other.seen && std::max(mine.first, other.first) <= std::min(mine.latest, other.latest))
          met_ = true;
      if (met_) {
        meeting_changed_.notify_all();
        break;
      }
      if (now - mine.first > kPatience) {
        gave_up_ = true;  // waited once in vain: let the rest run at full speed
        meeting_changed_.notify_all();
        break;
      }
      meeting_changed_.wait_for(lock, 2ms);
    }
    mine = Presence{};
    return !reader_left;
  }

  static bool write_all(int fd, const char* data, std::size_t bytes) {
    while (bytes > 0) {
      const ssize_t wrote = ::write(fd, data, bytes);
      if (wrote <= 0) return false;
      data += wrote;
      bytes -= static_cast<std::size_t>(wrote);
    }
    return true;
  }

  fs::path dir_;
  std::vector<std::string> files_;
  std::vector<std::string> contents_;
  std::uint32_t features_;
  std::int64_t samples_;
  std::vector<std::thread> servers_;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mutex_;
  std::condition_variable meeting_changed_;
  /// A server's view of its present reader: seen from `first` to `latest`, still there at both.
  struct Presence {
    bool seen = false;
    std::chrono::steady_clock::time_point first, latest;
  };
  std::vector<Presence> presence_;  // one per file
  bool met_ = false, gave_up_ = false;
};

/// Runs `work` on its own thread and waits at most `limit`. Returns "" when it finished,
/// its exception's message prefixed by "threw: " when it threw, or a timeout message. On a
/// timeout the thread is abandoned (detached) with everything it owns: the test fails, the
/// run goes on.
std::string run_with_deadline(std::chrono::milliseconds limit, std::function<void()> work) {
  auto done = std::make_shared<std::promise<std::string>>();
  std::future<std::string> result = done->get_future();
  std::thread([done, work = std::move(work)] {
    try {
      work();
      done->set_value("");
    } catch (const std::exception& e) {
      done->set_value(std::string("threw: ") + e.what());
    } catch (...) {
      done->set_value("threw a non-standard exception");
    }
  }).detach();
  if (result.wait_for(limit) == std::future_status::ready) return result.get();
  return "did not finish within " + std::to_string(limit.count()) +
         " ms: a deadlock (a thread waiting for a notification that never comes, or the "
         "destructor joining a worker that never returns)?";
}

/// What every batch must contain, checked sample by sample; "" when it does.
std::string check_batch(const Batch& batch, std::int64_t expected_index, int batch_size, std::int64_t samples,
                        std::uint32_t features) {
  std::ostringstream why;
  const std::int64_t first = expected_index * batch_size;
  const int expected_samples = static_cast<int>(std::min<std::int64_t>(batch_size, samples - first));
  if (batch.index != expected_index) {
    why << "expected batch " << expected_index << ", got batch " << batch.index << " (out of order?)";
    return why.str();
  }
  if (batch.samples != expected_samples) {
    why << "batch " << expected_index << " has " << batch.samples << " samples, expected " << expected_samples;
    return why.str();
  }
  if (batch.features == nullptr || batch.sample_ids == nullptr) return "batch with null pointers";
  for (int s = 0; s < batch.samples; ++s) {
    const std::int64_t id = first + s;
    if (batch.sample_ids[s] != id) {
      why << "batch " << expected_index << ", sample " << s << ": id " << batch.sample_ids[s] << ", expected " << id;
      return why.str();
    }
    for (std::uint32_t j = 0; j < features; ++j) {
      const float expected = dataset::normalize_pixel(dataset::pixel_value(id, j));
      const float actual = batch.features[static_cast<std::size_t>(s) * features + j];
      if (!(actual == expected)) {
        why << "batch " << expected_index << ", sample " << id << ", feature " << j << ": " << actual << ", expected "
            << expected;
        return why.str();
      }
    }
  }
  return "";
}

/// Drains a ring, checking each batch; returns the batches seen, or throws with a reason.
std::int64_t drain_and_check(PrefetchRing& ring, int batch_size, std::int64_t samples, std::uint32_t features) {
  Batch batch;
  std::int64_t seen = 0;
  while (ring.next(batch)) {
    const std::string why = check_batch(batch, seen, batch_size, samples, features);
    if (!why.empty()) throw std::runtime_error(why);
    ring.release(batch);
    ++seen;
  }
  if (ring.next(batch)) throw std::runtime_error("next() returned true again after returning false");
  return seen;
}

}  // namespace

TEST(PrefetchRing, DeliversEveryBatchOnceInOrder) {
  struct Case {
    std::vector<std::uint32_t> files;
    int batch_size, workers, slots;
  };
  // Batches that straddle files, an empty file, one sample per batch, more workers than
  // slots, a single slot, a partial last batch.
  const std::vector<Case> cases = {
      {{10}, 3, 1, 1},          {{7, 0, 50, 13}, 8, 2, 3}, {{1, 1, 1, 1, 1}, 1, 4, 2},
      {{64, 64}, 16, 4, 4},     {{100, 33}, 13, 3, 8},     {{5}, 64, 2, 2},
  };
  for (const Case& c : cases) {
    const TempDataset data(c.files, 67);
    std::ostringstream label;
    label << c.files.size() << " files, " << data.samples() << " samples, batch_size " << c.batch_size << ", "
          << c.workers << " workers, " << c.slots << " slots";
    std::int64_t seen = -1, count = -1;
    const std::string outcome = run_with_deadline(10s, [&] {
      PrefetchRing ring(RingConfig{data.files(), c.batch_size, c.workers, c.slots, nullptr});
      count = ring.batch_count();
      seen = drain_and_check(ring, c.batch_size, data.samples(), data.features());
    });
    ASSERT_EQ(outcome, "") << label.str();
    EXPECT_EQ(count, (data.samples() + c.batch_size - 1) / c.batch_size) << label.str();
    ASSERT_EQ(seen, count) << label.str() << ": every batch must be delivered, once";
  }
}

TEST(PrefetchRing, HandsOutPinnedSlotsAndReusesThem) {
  const TempDataset data({200}, 32);
  std::set<const float*> buffers;
  bool all_pinned = true;
  std::int64_t seen = 0;
  const std::string outcome = run_with_deadline(10s, [&] {
    PrefetchRing ring(RingConfig{data.files(), 10, 2, 3, nullptr});
    Batch batch;
    while (ring.next(batch)) {
      cudaPointerAttributes attributes{};
      CUDA_CHECK(cudaPointerGetAttributes(&attributes, batch.features));
      all_pinned = all_pinned && attributes.type == cudaMemoryTypeHost;
      buffers.insert(batch.features);
      ring.release(batch);
      ++seen;
    }
  });
  ASSERT_EQ(outcome, "");
  ASSERT_EQ(seen, 20) << "200 samples in batches of 10";
  EXPECT_TRUE(all_pinned) << "batches must sit in page-locked memory, ready for an asynchronous copy";
  EXPECT_LE(buffers.size(), 3u) << "20 batches went through " << buffers.size()
                                << " different buffers; a ring of 3 slots reuses its 3";
}

TEST(PrefetchRing, ReadsAheadButNeverMoreThanItsSlots) {
  // Memory stays bounded by the ring: count the batches read but not yet released.
  const TempDataset data({400}, 16);
  const int slots = 3;
  auto reads = std::make_shared<std::atomic<std::int64_t>>(0);
  std::int64_t read_while_idle = -1, worst_in_flight = 0, seen = 0;
  const std::string outcome = run_with_deadline(10s, [&] {
    PrefetchRing ring(RingConfig{data.files(), 8, 4, slots, [reads](std::int64_t) { ++*reads; }});
    std::this_thread::sleep_for(300ms);  // the consumer is busy: the workers fill the ring, then wait
    read_while_idle = reads->load();
    Batch batch;
    std::int64_t released = 0;
    while (ring.next(batch)) {
      worst_in_flight = std::max(worst_in_flight, reads->load() - released);
      std::this_thread::sleep_for(1ms);  // a slow consumer
      worst_in_flight = std::max(worst_in_flight, reads->load() - released);
      ring.release(batch);
      ++released;
      ++seen;
    }
  });
  ASSERT_EQ(outcome, "");
  ASSERT_EQ(seen, 50) << "400 samples in batches of 8";
  EXPECT_EQ(read_while_idle, slots) << "before the first next(), the workers should have filled all " << slots
                                    << " slots and no more";
  EXPECT_LE(worst_in_flight, slots) << "batches read but not yet released must never exceed the " << slots
                                    << " slots: the workers must wait for a free slot";
}

TEST(PrefetchRing, WorkersReadAtTheSameTime) {
  // The point of several workers: while one reads and preprocesses a batch, the others read
  // theirs. The files are named pipes, one batch each, that the test itself streams: a reader
  // gets the header at once and the records only once another file also has a reader waiting
  // for its records (or after 5 s). Workers that take turns (a single thread, or a lock held
  // across the read) never have two reads open at once.
  //
  // The configuration is drawn per run from the run's seed (2-6 workers, workers to 2 x workers
  // + 2 slots, batches of 4-32 samples, one batch per file, 6-20 files, 4-32 features; the other
  // tests' configurations lie in that range): a fixed one (4 workers, 8 slots, batches of 16) let
  // a submission read concurrently there only and take turns everywhere else (a seventh
  // red-team run, 25/25).
  ct::Rng rng;
  const int workers = rng.integer(2, 6), slots = rng.integer(workers, 2 * workers + 2);
  const int batch = rng.integer(4, 32), files = rng.integer(6, 20), features = rng.integer(4, 32);
  std::printf("[ COURSE   ] drawn: %d workers, %d slots, %d files of one batch of %d samples, %d features\n",
              workers, slots, files, batch, features);
  const PipedDataset data(files, static_cast<std::uint32_t>(batch), static_cast<std::uint32_t>(features));
  std::int64_t seen = 0;
  const std::string outcome = run_with_deadline(30s, [&] {
    PrefetchRing ring(RingConfig{data.files(), batch, workers, slots, nullptr});
    seen = drain_and_check(ring, batch, data.samples(), data.features());
  });
  ASSERT_EQ(outcome, "");
  ASSERT_EQ(seen, files) << data.samples() << " samples in batches of " << batch;
  EXPECT_TRUE(data.two_reads_met())
      << "with " << workers << " workers and " << slots << " free slots, no two workers were ever reading at the "
         "same time: a worker must read and preprocess its batch without holding the ring's lock (or any lock of "
         "its own), and every worker must run (config.workers threads), so that reading batch b+1 overlaps "
         "reading batch b";
}

TEST(PrefetchRing, HoldingEverySlotBlocksTheNextBatch) {
  // Back-pressure seen from the consumer: with all slots held, next() must wait, and a
  // release must let it go on.
  const TempDataset data({60}, 8);
  const int slots = 2;
  std::string sequence;
  const std::string outcome = run_with_deadline(10s, [&] {
    PrefetchRing ring(RingConfig{data.files(), 5, 2, slots, nullptr});
    Batch held[2];
    for (Batch& b : held)
      if (!ring.next(b)) throw std::runtime_error("no batch to hold");
    Batch third;
    auto got = std::async(std::launch::async, [&] { return ring.next(third); });
    if (got.wait_for(300ms) == std::future_status::ready)
      throw std::runtime_error("next() delivered a third batch while both slots were held");
    ring.release(held[0]);
    if (got.wait_for(10s) != std::future_status::ready)
      throw std::runtime_error("next() still waits after a slot was released");
    if (!got.get() || third.index != 2) throw std::runtime_error("the batch after the release is not batch 2");
    ring.release(held[1]);
    ring.release(third);
    sequence = "ok";
  });
  ASSERT_EQ(outcome, "");
  EXPECT_EQ(sequence, "ok");
}

TEST(PrefetchRing, StopsCleanlyWhenTheConsumerStopsEarly) {
  const TempDataset data({500, 500}, 64);
  std::vector<std::int64_t> first_batches;
  const std::string outcome = run_with_deadline(10s, [&] {
    // Two batches taken, one still held, then the ring goes away with workers waiting.
    {
      PrefetchRing ring(RingConfig{data.files(), 10, 4, 4, nullptr});
      Batch a, b;
      if (!ring.next(a) || !ring.next(b)) throw std::runtime_error("next() delivered nothing");
      first_batches = {a.index, b.index};
      ring.release(a);
    }
    // Destroyed right after construction, with the workers still reading.
    { PrefetchRing ring(RingConfig{data.files(), 10, 4, 4, nullptr}); }
  });
  ASSERT_EQ(outcome, "");
  EXPECT_EQ(first_batches, (std::vector<std::int64_t>{0, 1}));
}

TEST(PrefetchRing, CorruptRecordRaisesAnErrorNamingFileAndRecord) {
  // File 1 (samples 30..59), record 7 = sample 37, in batch 37 / 4 = 9.
  const TempDataset data({30, 30, 30}, 40);
  data.corrupt(1, 7);
  for (int workers : {1, 3}) {
    std::int64_t delivered = 0;
    std::string error, again;
    const std::string outcome = run_with_deadline(10s, [&] {
      PrefetchRing ring(RingConfig{data.files(), 4, workers, 3, nullptr});
      Batch batch;
      try {
        while (ring.next(batch)) {
          const std::string why = check_batch(batch, delivered, 4, data.samples(), data.features());
          if (!why.empty()) throw std::runtime_error(why);
          ring.release(batch);
          ++delivered;
        }
      } catch (const dataset::DataError& e) {
        error = e.what();
      }
      try {
        ring.next(batch);
      } catch (const dataset::DataError& e) {
        again = e.what();
      }
    });
    ASSERT_EQ(outcome, "") << workers << " workers";
    EXPECT_EQ(delivered, 9) << "batches 0..8 are intact and must be delivered before the error (" << workers
                            << " workers)";
    ASSERT_NE(error, "") << "the corrupt record was skipped silently: next() must throw dataset::DataError";
    EXPECT_NE(error.find("part-001.dlr"), std::string::npos) << "the error should name the file: " << error;
    EXPECT_NE(error.find("record 7"), std::string::npos) << "the error should name the record: " << error;
    EXPECT_NE(error.find("checksum"), std::string::npos) << error;
    EXPECT_EQ(again, error) << "after an error, next() keeps reporting it";
  }
}

TEST(PrefetchRing, TruncatedFileRaisesAnErrorNamingFileAndRecord) {
  // The last file loses its end in the middle of record 12 (sample 20 + 12 = 32, batch 5).
  const TempDataset data({20, 20}, 24);
  data.truncate_inside(1, 12);
  std::int64_t delivered = 0;
  std::string error;
  const std::string outcome = run_with_deadline(10s, [&] {
    PrefetchRing ring(RingConfig{data.files(), 6, 2, 2, nullptr});
    Batch batch;
    try {
      while (ring.next(batch)) {
        ring.release(batch);
        ++delivered;
      }
    } catch (const dataset::DataError& e) {
      error = e.what();
    }
  });
  ASSERT_EQ(outcome, "");
  EXPECT_EQ(delivered, 5) << "batches 0..4 (samples 0..29) are intact";
  ASSERT_NE(error, "") << "a truncated file must raise dataset::DataError, not end the data early";
  EXPECT_NE(error.find("part-001.dlr: record 12"), std::string::npos) << error;
  EXPECT_NE(error.find("truncated"), std::string::npos) << error;
  // A missing file is found at construction.
  EXPECT_THROW(PrefetchRing(RingConfig{{data.files()[0], data.files()[0] + ".missing"}, 4, 1, 1, nullptr}),
               dataset::DataError);
}
