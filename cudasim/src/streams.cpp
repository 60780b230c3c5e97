// Streams, events, the worker pool that runs blocks, and kernel launch submission.
//
// A stream is an in-order queue served by its own host thread, so work queued on different
// streams really overlaps (lesson 04 depends on that). Ordering across streams follows CUDA:
// the legacy default stream (0) waits for all earlier work of blocking streams and they wait
// for its earlier work; cudaStreamNonBlocking streams are exempt; events order the rest.
// A kernel's blocks run on a pool of worker threads (one per core); the stream thread that
// launched the grid works on it too, so a one-block launch needs no hand-off.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "cudasim/timeline.hpp"
#include "internal.hpp"

struct CUstream_st {};
struct CUevent_st {};

namespace cudasim::detail {

namespace {

using Clock = std::chrono::steady_clock;

struct Stream;
class WorkerPool;
/// What stream capture records: the work of the stream that began it and of every stream
/// that joined it (by waiting on an event recorded in a capturing stream), in the order it was
/// captured. That order respects every dependency among them, since an operation is captured
/// after what it waits for, so the graph runs them in it.
struct CapturedGraph {
  GraphNodes nodes;
  const Stream* origin = nullptr;             // the stream that began the capture
  std::vector<std::weak_ptr<Stream>> joined;  // the streams that joined it
  // A call the capture cannot record (a stream synchronisation) invalidates it, as on a GPU:
  // cudaStreamEndCapture then gives no graph and cudaErrorStreamCaptureInvalidated (measured on
  // an H200, CUDA 13.0, 2026-11-27).
  bool invalidated = false;
};
WorkerPool& pool();

/// "Everything queued on `stream` up to `ticket` has finished."
struct Dependency {
  std::shared_ptr<Stream> stream;
  std::uint64_t ticket;
};

struct Task {
  std::function<void()> work;
  std::vector<Dependency> dependencies;
  double queued_ns = 0;  // the queuing host thread's time (the modelled clock)
};

/// A stream's name on the modelled timeline: "default stream", "stream 1", "stream 2", ...
std::string stream_track_name(bool legacy) {
  static std::atomic<int> created{0};
  return legacy ? std::string("default stream") : "stream " + std::to_string(++created);
}

struct Stream : CUstream_st {
  Stream(bool blocking_, int device_, bool legacy_)
      : blocking(blocking_), legacy(legacy_), device(device_),
        track(timeline_track(stream_track_name(legacy_), device_)) {}

  const bool blocking;  // synchronises with its device's legacy default stream
  const bool legacy;    // the legacy default stream of `device`
  const int device;     // current when the stream was created
  const int track;      // on the modelled timeline
  int priority = 0;     // as created; kept for cudaStreamGetPriority, not used to schedule
  // Kept for cudaStreamGetAttribute; neither changes what the simulator does.
  cudaAccessPolicyWindow access_policy{};
  cudaSynchronizationPolicy sync_policy = cudaSyncPolicyAuto;
  // While stream capture is on, work is recorded into this graph instead of queued.
  std::shared_ptr<CapturedGraph> capture;
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<Task> queue;
  std::uint64_t enqueued = 0;   // tickets handed out
  std::uint64_t completed = 0;  // tasks finished
  std::vector<double> ends;     // the modelled end of each finished task, by ticket - 1
  bool stopping = false;
  std::thread server;

  void wait_for(std::uint64_t ticket) {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] { return completed >= ticket; });
  }
  bool reached(std::uint64_t ticket) {
    std::lock_guard<std::mutex> lock(mutex);
    return completed >= ticket;
  }
  /// Where the task of `ticket` (finished) ended on the modelled timeline; 0 for ticket 0.
  double end_of(std::uint64_t ticket) {
    std::lock_guard<std::mutex> lock(mutex);
    return ticket == 0 ? 0.0 : ends[static_cast<std::size_t>(ticket - 1)];
  }
  /// Waits, as a host thread, for the task of `ticket`: the thread's modelled clock joins the
  /// task's end.
  void host_wait_for(std::uint64_t ticket) {
    const double entered = host_now_ns();
    wait_for(ticket);
    host_waited(entered, end_of(ticket));
  }

  void serve() {
    for (;;) {
      Task task;
      {
        std::unique_lock<std::mutex> lock(mutex);
        changed.wait(lock, [&] { return stopping || !queue.empty(); });
        if (queue.empty()) return;
        task = std::move(queue.front());
        queue.pop_front();
      }
      // On the modelled timeline the task starts when the stream's previous task, the work it
      // depends on and the host that queued it allow, whatever order the CPU ran things in.
      double start = task.queued_ns;
      for (const Dependency& d : task.dependencies) {
        d.stream->wait_for(d.ticket);
        start = std::max(start, d.stream->end_of(d.ticket));
      }
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (!ends.empty()) start = std::max(start, ends.back());
      }
      double end;
      {
        ModelledOperation operation(track, start);
        DeviceWorkScope device_work;
        if (task.work) task.work();
        end = operation.end_ns();
      }
      {
        std::lock_guard<std::mutex> lock(mutex);
        ends.push_back(end);
        ++completed;
      }
      changed.notify_all();
    }
  }
};

/// All streams, for the legacy streams' implicit synchronisation and cudaDeviceSynchronize.
/// Each device has its own legacy default stream (started on first use), as on a GPU: work on
/// device 1's stream 0 does not wait for device 0's.
struct StreamRegistry {
  std::mutex mutex;
  std::vector<std::shared_ptr<Stream>> legacy;  // per device; null until used
  std::map<const CUstream_st*, std::shared_ptr<Stream>> created;

  // The pool is created first so that it is destroyed last: streams still draining work at
  // exit run grids on it.
  StreamRegistry() : legacy((pool(), static_cast<std::size_t>(device_count()))) {}
  ~StreamRegistry() {
    for (auto& s : legacy)
      if (s) stop(s);
    for (auto& entry : created) stop(entry.second);
  }

  /// The legacy default stream of `device`, started on first use (the caller holds `mutex`).
  const std::shared_ptr<Stream>& legacy_of(int device) {
    std::shared_ptr<Stream>& s = legacy[static_cast<std::size_t>(device)];
    if (!s) s = start(std::make_shared<Stream>(true, device, true));
    return s;
  }

  static std::shared_ptr<Stream> start(std::shared_ptr<Stream> s) {
    Stream* raw = s.get();
    s->server = std::thread([raw] { raw->serve(); });
    return s;
  }
  static void stop(const std::shared_ptr<Stream>& s) {
    {
      std::lock_guard<std::mutex> lock(s->mutex);
      s->stopping = true;
    }
    s->changed.notify_all();
    if (s->server.joinable()) s->server.join();
  }

  /// Null for an unknown handle.
  std::shared_ptr<Stream> find(cudaStream_t handle) {
    if (handle == nullptr || handle == cudaStreamLegacy || handle == cudaStreamPerThread)
      return legacy_of(current_device());
    auto it = created.find(handle);
    return it == created.end() ? nullptr : it->second;
  }
};

StreamRegistry& streams() {
  static StreamRegistry registry;
  return registry;
}

/// Queues a task; the caller holds the registry lock so that implicit dependencies are taken
/// against a consistent picture of all streams. `after_device_work`: the task also waits for
/// the work queued so far on every other stream of its device, blocking or not; `after`: and
/// for these.
std::uint64_t push_task(StreamRegistry& r, const std::shared_ptr<Stream>& s, std::function<void()> work,
                        bool after_device_work = false, std::vector<Dependency> after = {}) {
  Task task{std::move(work), std::move(after), host_now_ns()};
  if (after_device_work) {
    const auto note = [&](const std::shared_ptr<Stream>& other) {
      if (!other || other == s || other->device != s->device) return;
      std::lock_guard<std::mutex> lock(other->mutex);
      task.dependencies.push_back({other, other->enqueued});
    };
    note(r.legacy[static_cast<std::size_t>(s->device)]);
    for (auto& entry : r.created) note(entry.second);
  } else if (s->legacy) {
    for (auto& entry : r.created) {
      const std::shared_ptr<Stream>& other = entry.second;
      if (!other->blocking || other->device != s->device) continue;
      std::lock_guard<std::mutex> lock(other->mutex);
      task.dependencies.push_back({other, other->enqueued});
    }
  } else if (s->blocking) {
    if (const std::shared_ptr<Stream>& legacy = r.legacy[static_cast<std::size_t>(s->device)]) {
      std::lock_guard<std::mutex> lock(legacy->mutex);
      task.dependencies.push_back({legacy, legacy->enqueued});
    }
  }
  std::uint64_t ticket;
  {
    std::lock_guard<std::mutex> lock(s->mutex);
    s->queue.push_back(std::move(task));
    ticket = ++s->enqueued;
  }
  s->changed.notify_all();
  return ticket;
}

// ---- worker pool --------------------------------------------------------------------------------

struct GridJob {
  std::shared_ptr<LaunchState> launch;
  unsigned long long total_blocks = 0;
  std::atomic<unsigned long long> next_block{0};
  std::atomic<unsigned long long> finished_blocks{0};
  std::mutex mutex;
  std::condition_variable done;

  /// Runs blocks until none is left to take. Returns true when this call finished the grid.
  bool work() {
    // Blocks are taken a few at a time once there are many: a shared counter bumped by every
    // worker for every block costs a contended cache line per block, which shows with small
    // blocks; the batches stay small enough to keep the workers evenly loaded.
    const unsigned long long batch = std::clamp<unsigned long long>(total_blocks / 256, 1, 16);
    unsigned long long ran = 0;
    for (;;) {
      const unsigned long long first = next_block.fetch_add(batch, std::memory_order_relaxed);
      if (first >= total_blocks) break;
      const unsigned long long end = std::min(first + batch, total_blocks);
      for (unsigned long long b = first; b < end; ++b) {
        // After a fault the remaining blocks are skipped, as a GPU aborts the whole grid.
        if (!launch->failed.load(std::memory_order_relaxed)) run_block(*launch, b);
        ++ran;
      }
    }
    if (ran == 0) return false;
    if (finished_blocks.fetch_add(ran) + ran == total_blocks) {
      std::lock_guard<std::mutex> lock(mutex);
      done.notify_all();
      return true;
    }
    return false;
  }
};

class WorkerPool {
 public:
  WorkerPool() {
    unsigned count = std::max(1u, std::thread::hardware_concurrency());
    if (const char* env = std::getenv("CUDASIM_THREADS")) {
      const int requested = std::atoi(env);
      if (requested > 0) count = static_cast<unsigned>(requested);
    }
    // The launching stream thread works on its grid too, so start one fewer.
    for (unsigned i = 1; i < count; ++i) threads_.emplace_back([this] { loop(); });
  }
  ~WorkerPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }

  void run(const std::shared_ptr<GridJob>& job) {
    if (!threads_.empty() && job->total_blocks > 1) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        jobs_.push_back(job);
      }
      wake_.notify_all();
    }
    job->work();
    std::unique_lock<std::mutex> lock(job->mutex);
    job->done.wait(lock, [&] { return job->finished_blocks.load() == job->total_blocks; });
  }

 private:
  void loop() {
    for (;;) {
      std::shared_ptr<GridJob> job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
        if (stopping_) return;
        job = jobs_.front();
        // A job with no blocks left to take leaves the queue; its last blocks may still run.
        if (job->next_block.load() >= job->total_blocks) {
          jobs_.pop_front();
          continue;
        }
      }
      job->work();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<GridJob>> jobs_;
  std::vector<std::thread> threads_;
  bool stopping_ = false;
};

WorkerPool& pool() {
  static WorkerPool instance;
  return instance;
}

// ---- events ----------------------------------------------------------------------------------------

/// One cudaEventRecord: done once its stream reaches the ticket.
struct EventRecord {
  std::shared_ptr<Stream> stream;
  std::uint64_t ticket = 0;
  Clock::time_point time;
  std::shared_ptr<CapturedGraph> capture;  // recorded while `stream` captured: a point in that graph
};

struct Event : CUevent_st {
  bool timing = true;
  std::mutex mutex;
  std::shared_ptr<EventRecord> last;  // null until first recorded
};

std::mutex events_mutex;
std::map<const CUevent_st*, std::unique_ptr<Event>> events;

Event* find_event(cudaEvent_t handle) {
  std::lock_guard<std::mutex> lock(events_mutex);
  auto it = events.find(handle);
  return it == events.end() ? nullptr : it->second.get();
}

std::shared_ptr<EventRecord> last_record(Event* e) {
  std::lock_guard<std::mutex> lock(e->mutex);
  return e->last;
}

// ---- kernel attributes --------------------------------------------------------------------------

std::mutex attributes_mutex;
std::map<const void*, std::size_t> max_dynamic_shared;  // per kernel, set by cudaFuncSetAttribute

cudaError_t fail_launch(const LaunchConfig& c, cudaError_t error, const std::string& why) {
  report("launch of '%s' at %s:%u failed with %s: %s", c.site.kernel_name, c.site.file,
         c.site.line, cudaGetErrorName(error), why.c_str());
  return record_error(error);
}

}  // namespace

/// The kernel's dynamic shared memory limit. A null `kernel` is a launch that could not tell
/// which function it calls (an overloaded or deduced kernel whose arguments need converting,
/// see NamedLaunch): it gets the largest limit any kernel was given, so that a raised limit is
/// never refused, while a program that raised none is still held to the default.
std::size_t dynamic_shared_limit(const void* kernel) {
  std::lock_guard<std::mutex> lock(attributes_mutex);
  if (kernel == nullptr) {
    std::size_t largest = kDefaultDynamicSharedLimit;
    for (const auto& entry : max_dynamic_shared) largest = std::max(largest, entry.second);
    return largest;
  }
  auto it = max_dynamic_shared.find(kernel);
  return it == max_dynamic_shared.end() ? kDefaultDynamicSharedLimit : it->second;
}

cudaError_t enqueue(cudaStream_t handle, std::function<void()> work) {
  StreamRegistry& r = streams();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::shared_ptr<Stream> s = r.find(handle);
  if (!s) return cudaErrorInvalidResourceHandle;
  if (s->capture) {  // recorded, to run when the instantiated graph is launched
    s->capture->nodes.push_back(std::move(work));
    return cudaSuccess;
  }
  push_task(r, s, std::move(work));
  return cudaSuccess;
}

cudaError_t enqueue_graph_launch(cudaStream_t handle, std::function<void()> work, const std::vector<cudaEvent_t>& waits,
                                 const std::vector<cudaEvent_t>& records) {
  std::vector<Dependency> after;
  for (cudaEvent_t event : waits) {
    Event* e = find_event(event);
    if (e == nullptr) {
      report("cudaGraphLaunch: the event of an event wait node was destroyed");
      return cudaErrorInvalidResourceHandle;
    }
    std::shared_ptr<EventRecord> rec = last_record(e);
    if (!rec) continue;  // never recorded: nothing to wait for, as with cudaStreamWaitEvent
    if (rec->capture) {
      report("cudaGraphLaunch: an event wait node waits for an event last recorded in a stream capture");
      return cudaErrorCapturedEvent;
    }
    after.push_back({rec->stream, rec->ticket});
  }
  std::vector<Event*> recorded;
  for (cudaEvent_t event : records) {
    recorded.push_back(find_event(event));
    if (recorded.back() == nullptr) {
      report("cudaGraphLaunch: the event of an event record node was destroyed");
      return cudaErrorInvalidResourceHandle;
    }
  }
  StreamRegistry& r = streams();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::shared_ptr<Stream> s = r.find(handle);
  if (!s) return cudaErrorInvalidResourceHandle;
  if (s->capture) {
    report("cudaGraphLaunch: the simulator cannot capture the launch of a graph with event record or wait nodes");
    return cudaErrorStreamCaptureUnsupported;
  }
  std::vector<std::shared_ptr<EventRecord>> marks;
  for (std::size_t i = 0; i < records.size(); ++i) {
    marks.push_back(std::make_shared<EventRecord>());
    marks.back()->stream = s;
  }
  const std::uint64_t ticket = push_task(
      r, s,
      [work = std::move(work), marks] {
        work();
        for (const auto& mark : marks) mark->time = Clock::now();
      },
      false, std::move(after));
  for (std::size_t i = 0; i < marks.size(); ++i) {
    marks[i]->ticket = ticket;
    std::lock_guard<std::mutex> l(recorded[i]->mutex);
    recorded[i]->last = marks[i];
  }
  return cudaSuccess;
}

bool is_event(cudaEvent_t event) { return find_event(event) != nullptr; }

cudaError_t run_synchronously(cudaStream_t handle, std::function<void()> work, bool after_device_work) {
  StreamRegistry& r = streams();
  std::shared_ptr<Stream> s;
  std::uint64_t ticket;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    s = r.find(handle);
    if (!s) return cudaErrorInvalidResourceHandle;
    // Waiting for a capturing stream would wait for work that is only being recorded.
    if (s->capture) {
      s->capture->invalidated = true;
      return cudaErrorStreamCaptureUnsupported;
    }
    ticket = push_task(r, s, std::move(work), after_device_work);
  }
  s->host_wait_for(ticket);
  return cudaSuccess;
}

cudaError_t begin_capture(cudaStream_t handle) {
  StreamRegistry& r = streams();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (handle == nullptr || handle == cudaStreamLegacy) return cudaErrorStreamCaptureUnsupported;
  std::shared_ptr<Stream> s = r.find(handle);
  if (!s) return cudaErrorInvalidResourceHandle;
  if (s->capture) return cudaErrorIllegalState;
  s->capture = std::make_shared<CapturedGraph>();
  s->capture->origin = s.get();
  return cudaSuccess;
}

/// The stream `handle` when it began the capture it is in; else null, and `why` says what it is
/// instead. The caller holds r.mutex.
std::shared_ptr<Stream> capture_origin(StreamRegistry& r, cudaStream_t handle, cudaError_t& why) {
  std::shared_ptr<Stream> s = r.find(handle);
  why = !s                               ? cudaErrorInvalidResourceHandle
        : !s->capture                    ? cudaErrorIllegalState
        : s->capture->origin != s.get() ? cudaErrorStreamCaptureUnmatched
                                         : cudaSuccess;
  return why == cudaSuccess ? s : nullptr;
}

cudaError_t end_capture(cudaStream_t handle, GraphNodes& nodes) {
  StreamRegistry& r = streams();
  std::lock_guard<std::mutex> lock(r.mutex);
  cudaError_t why;
  std::shared_ptr<Stream> s = capture_origin(r, handle, why);
  if (!s) return why;
  const bool invalidated = s->capture->invalidated;
  if (!invalidated) nodes = std::move(s->capture->nodes);
  for (const std::weak_ptr<Stream>& joined : s->capture->joined)
    if (std::shared_ptr<Stream> j = joined.lock(); j && j->capture == s->capture) j->capture.reset();
  s->capture.reset();
  return invalidated ? cudaErrorStreamCaptureInvalidated : cudaSuccess;
}

cudaError_t take_captured(cudaStream_t handle, GraphNodes& nodes) {
  StreamRegistry& r = streams();
  std::lock_guard<std::mutex> lock(r.mutex);
  cudaError_t why;
  std::shared_ptr<Stream> s = capture_origin(r, handle, why);
  if (!s) return why;
  if (s->capture->invalidated) return cudaErrorStreamCaptureInvalidated;
  nodes = std::move(s->capture->nodes);
  s->capture->nodes.clear();
  return cudaSuccess;
}

cudaStream_t capture_origin_of(cudaStream_t handle, bool* shared) {
  StreamRegistry& r = streams();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::shared_ptr<Stream> s = r.find(handle);
  if (!s || !s->capture) return nullptr;
  if (shared != nullptr) *shared = !s->capture->joined.empty();
  // The origin is a Stream, and a Stream is the CUstream_st its handle points to.
  return const_cast<Stream*>(s->capture->origin);
}

bool is_capturing(cudaStream_t handle) {
  StreamRegistry& r = streams();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::shared_ptr<Stream> s = r.find(handle);
  return s && s->capture;
}

bool capture_invalidated(cudaStream_t handle) {
  StreamRegistry& r = streams();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::shared_ptr<Stream> s = r.find(handle);
  return s && s->capture && s->capture->invalidated;
}

namespace {
/// The OS threads that run the blocks of cooperative launches (all but the first block, which
/// the launching stream's thread runs). They are kept between launches, each with its worker's
/// fibers and their stacks: a fresh thread per block and launch cost more than the launch itself
/// (16 blocks of 1024 threads that meet at one grid.sync(): 0.46-0.48 s per launch, most of it
/// the kernel unmapping the stacks of the threads that had ended; 8-18 ms with the threads kept).
/// What they hold is what the largest cooperative launch held at its peak (about 4 MiB per block
/// of 1024 threads, in the pages its threads' stacks touched), so a thread that has had no block
/// to run for kIdleSeconds ends and gives it back.
class CooperativeThreads {
 public:
  /// Runs `task` on an idle thread, or else on a new one (std::system_error when none starts).
  void start(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (idle_ > 0) {
        --idle_;
        tasks_.push_back(std::move(task));
        wake_.notify_one();
        return;
      }
    }
    std::thread([this, first = std::move(task)]() mutable { serve(std::move(first)); }).detach();
  }

 private:
  static constexpr auto kIdleSeconds = std::chrono::seconds(2);
  /// The most blocks a cooperative grid can have on the modelled GPUs: 32 per SM, 132 SMs.
  static constexpr unsigned kMaxIdle = 32 * 132;

  void serve(std::function<void()> task) {
    for (;;) {
      task();
      task = nullptr;  // what the task held goes before the thread waits
      std::unique_lock<std::mutex> lock(mutex_);
      if (idle_ >= kMaxIdle) return;
      ++idle_;
      if (!wake_.wait_for(lock, kIdleSeconds, [this] { return !tasks_.empty(); })) {
        --idle_;  // no task was handed to this thread: start() takes one from idle_ per task
        return;
      }
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;  // each already taken from idle_ by start()
  unsigned idle_ = 0;
};

CooperativeThreads& cooperative_threads() {
  // Never destroyed: its threads may still wait on it while the process exits.
  static CooperativeThreads* const threads = new CooperativeThreads;
  return *threads;
}

/// A cooperative launch: every block on an OS thread of its own (the launching stream's thread
/// runs the first), all at once, so that grid.sync() can wait for the whole grid. Each OS thread
/// has its own shared memory and fibers, as the pool's workers do.
void run_cooperative_grid(LaunchState& launch) {
  const dim3 g = launch.config.grid;
  const unsigned long long total = static_cast<unsigned long long>(g.x) * g.y * g.z;
  launch.grid_barrier = std::make_unique<GridBarrier>();
  launch.grid_barrier->total = total;
  const auto run_one = [&launch, g](unsigned long long linear) {
    // After a fault the remaining blocks are skipped, as a GPU aborts the whole grid.
    if (!launch.failed.load(std::memory_order_relaxed)) run_block(launch, linear);
    const uint3 index{static_cast<unsigned>(linear % g.x), static_cast<unsigned>((linear / g.x) % g.y),
                      static_cast<unsigned>(linear / (static_cast<unsigned long long>(g.x) * g.y))};
    grid_block_exited(launch, index);
  };
  std::mutex mutex;
  std::condition_variable finished;
  unsigned long long running = 0;  // blocks started on other threads and not finished
  for (unsigned long long b = 1; b < total; ++b) {
    try {
      {
        std::lock_guard<std::mutex> lock(mutex);
        ++running;
      }
      cooperative_threads().start([&, b] {
        run_one(b);
        std::lock_guard<std::mutex> lock(mutex);
        if (--running == 0) finished.notify_all();
      });
    } catch (const std::system_error& e) {
      {
        std::lock_guard<std::mutex> lock(mutex);
        --running;
      }
      report_kernel_fault(launch, uint3{0, 0, 0}, uint3{0, 0, 0}, cudaErrorLaunchOutOfResources,
                          format_string("cannot start an OS thread for every block of the cooperative grid "
                                        "(%llu of %llu started): %s", b, total, e.what()));
      for (unsigned long long rest = b; rest < total; ++rest) run_one(rest);  // skipped: the launch failed
      break;
    }
  }
  run_one(0);
  std::unique_lock<std::mutex> lock(mutex);
  finished.wait(lock, [&] { return running == 0; });
}
}  // namespace

void run_grid(const std::shared_ptr<LaunchState>& launch) {
  if (launch->config.cooperative) {
    run_cooperative_grid(*launch);
    record_launch_stats(*launch);
    return;
  }
  auto job = std::make_shared<GridJob>();
  job->launch = launch;
  const dim3 g = launch->config.grid;
  job->total_blocks = static_cast<unsigned long long>(g.x) * g.y * g.z;
  pool().run(job);
  record_launch_stats(*launch);
}

namespace {
/// Waits for the work queued so far on the streams of `device`, or of every device for -1.
void synchronize_streams(int device) {
  StreamRegistry& r = streams();
  std::vector<Dependency> all;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    auto note = [&](const std::shared_ptr<Stream>& s) {
      if (!s || (device >= 0 && s->device != device)) return;
      std::lock_guard<std::mutex> l(s->mutex);
      all.push_back({s, s->enqueued});
    };
    for (auto& s : r.legacy) note(s);
    for (auto& entry : r.created) note(entry.second);
  }
  const double entered = host_now_ns();
  double end = 0;
  for (const Dependency& d : all) {
    d.stream->wait_for(d.ticket);
    end = std::max(end, d.stream->end_of(d.ticket));
  }
  host_waited(entered, end);
}
}  // namespace

void synchronize_all_streams() { synchronize_streams(-1); }

void synchronize_device_streams(int device) { synchronize_streams(device); }

// A configuration no GPU can launch is cudaErrorInvalidValue ("invalid argument"), as CUDA 13
// returns it: measured on an H200 (CUDA 13.0, driver 580, 2026-11-27) for a block of more than
// 1024 threads, a block z above 64 and an empty grid, launched with <<<>>> and with
// cudaLaunchKernel; a grid past the maximum is taken to follow the same rule (not measured).
// Earlier CUDA releases are widely reported to say cudaErrorInvalidConfiguration instead.
cudaError_t check_launch(const LaunchConfig& config, const void* kernel_id) {
  const cudaDeviceProp& p = device_properties();
  const dim3 b = config.block, g = config.grid;
  const unsigned long long threads = static_cast<unsigned long long>(b.x) * b.y * b.z;
  if (b.x == 0 || b.y == 0 || b.z == 0 || g.x == 0 || g.y == 0 || g.z == 0) {
    return fail_launch(config, cudaErrorInvalidValue,
                       format_string("grid (%u,%u,%u) and block (%u,%u,%u) must be at least 1 in every "
                                     "dimension", g.x, g.y, g.z, b.x, b.y, b.z));
  }
  if (threads > static_cast<unsigned long long>(p.maxThreadsPerBlock) ||
      b.x > static_cast<unsigned>(p.maxThreadsDim[0]) || b.y > static_cast<unsigned>(p.maxThreadsDim[1]) ||
      b.z > static_cast<unsigned>(p.maxThreadsDim[2])) {
    return fail_launch(config, cudaErrorInvalidValue,
                       format_string("block (%u,%u,%u) has %llu threads; at most %d per block, and at "
                                     "most (%d,%d,%d) per dimension", b.x, b.y, b.z, threads,
                                     p.maxThreadsPerBlock, p.maxThreadsDim[0], p.maxThreadsDim[1],
                                     p.maxThreadsDim[2]));
  }
  if (g.x > static_cast<unsigned>(p.maxGridSize[0]) || g.y > static_cast<unsigned>(p.maxGridSize[1]) ||
      g.z > static_cast<unsigned>(p.maxGridSize[2])) {
    return fail_launch(config, cudaErrorInvalidValue,
                       format_string("grid (%u,%u,%u) exceeds the maximum (%d,%d,%d)", g.x, g.y, g.z,
                                     p.maxGridSize[0], p.maxGridSize[1], p.maxGridSize[2]));
  }
  const std::size_t limit = dynamic_shared_limit(kernel_id);
  if (config.dynamic_shared_bytes > limit) {
    return fail_launch(config, cudaErrorInvalidValue,
                       format_string("%zu bytes of dynamic shared memory requested; the limit for this "
                                     "kernel is %zu (raise it with cudaFuncSetAttribute(kernel, "
                                     "cudaFuncAttributeMaxDynamicSharedMemorySize, bytes), up to %zu)",
                                     config.dynamic_shared_bytes, limit, p.sharedMemPerBlockOptin));
  }
  if (config.cooperative) {
    // Every block must be resident at once, as on a GPU.
    const unsigned long long blocks = static_cast<unsigned long long>(g.x) * g.y * g.z;
    const unsigned long long resident =
        static_cast<unsigned long long>(resident_blocks(static_cast<int>(threads), config.dynamic_shared_bytes)) *
        static_cast<unsigned long long>(p.multiProcessorCount);
    if (blocks > resident) {
      return fail_launch(config, cudaErrorCooperativeLaunchTooLarge,
                         format_string("a cooperative grid of %llu blocks of %llu threads (%zu bytes of dynamic "
                                       "shared memory) does not fit the device at once: at most %llu blocks (%d "
                                       "SMs, see cudaOccupancyMaxActiveBlocksPerMultiprocessor)",
                                       blocks, threads, config.dynamic_shared_bytes, resident,
                                       p.multiProcessorCount));
    }
  }
  // A faulted context runs nothing more.
  if (sticky_error() != cudaSuccess) return record_error(sticky_error());
  return cudaSuccess;
}

std::function<void()> launch_work(const LaunchConfig& config, std::shared_ptr<const KernelInstance> kernel) {
  // The launch's state is made when it runs, so that a launch recorded into a graph starts
  // fresh (counters, fault flag) each time the graph is replayed.
  // The device is the one current when the launch is made (a graph's node: when it is added).
  return [config, kernel = std::move(kernel), device = current_device()] {
    auto launch = std::make_shared<LaunchState>();
    launch->config = config;
    launch->device = device;
    launch->kernel = kernel;
    launch->graph_node = replaying_graph();
    run_grid(launch);
  };
}

cudaError_t submit_launch(const LaunchConfig& config, std::shared_ptr<const KernelInstance> kernel,
                          const void* kernel_id) {
  const cudaError_t valid = check_launch(config, kernel_id);
  if (valid != cudaSuccess) return valid;
  count_kernel_launch_call();
  const cudaError_t queued = enqueue(config.stream, launch_work(config, std::move(kernel)));
  if (queued != cudaSuccess) return fail_launch(config, queued, "the stream handle is not valid");
  return cudaSuccess;
}

cudaError_t set_function_attribute(const void* kernel, cudaFuncAttribute attribute, int value) {
  if (attribute == cudaFuncAttributeMaxDynamicSharedMemorySize) {
    if (value < 0 || static_cast<std::size_t>(value) > device_properties().sharedMemPerBlockOptin)
      return record_error(cudaErrorInvalidValue);
    std::lock_guard<std::mutex> lock(attributes_mutex);
    max_dynamic_shared[kernel] = static_cast<std::size_t>(value);
    return cudaSuccess;
  }
  if (attribute == cudaFuncAttributePreferredSharedMemoryCarveout) return cudaSuccess;
  return record_error(cudaErrorInvalidValue);
}

}  // namespace cudasim::detail

using namespace cudasim::detail;

// ---- the public stream and event API ------------------------------------------------------------

cudaError_t cudaStreamCreate(cudaStream_t* stream) { return cudaStreamCreateWithFlags(stream, cudaStreamDefault); }

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned flags) {
  if (stream == nullptr) return record_error(cudaErrorInvalidValue);
  StreamRegistry& r = streams();
  auto s = StreamRegistry::start(
      std::make_shared<Stream>((flags & cudaStreamNonBlocking) == 0, current_device(), false));
  std::lock_guard<std::mutex> lock(r.mutex);
  r.created[s.get()] = s;
  *stream = s.get();
  return cudaSuccess;
}

// The stream priorities a GPU of compute capability 9.0 reports: a smaller number is a higher one.
constexpr int kLeastStreamPriority = 0, kGreatestStreamPriority = -5;

cudaError_t cudaDeviceGetStreamPriorityRange(int* least, int* greatest) {
  if (least != nullptr) *least = kLeastStreamPriority;
  if (greatest != nullptr) *greatest = kGreatestStreamPriority;
  return cudaSuccess;
}

/// Runs `use(Stream&)` on the stream `stream` names, under the registry's lock, and returns
/// what it returns; an unknown handle is cudaErrorInvalidResourceHandle.
template <class Use>
cudaError_t with_stream(cudaStream_t stream, Use use) {
  StreamRegistry& r = streams();
  std::lock_guard<std::mutex> lock(r.mutex);
  const std::shared_ptr<Stream> s = r.find(stream);
  if (!s) return record_error(cudaErrorInvalidResourceHandle);
  return use(*s);
}

/// A priority moved into the device's range, as CUDA does with one outside it.
int clamped_priority(int priority) { return std::clamp(priority, kGreatestStreamPriority, kLeastStreamPriority); }

cudaError_t cudaStreamCreateWithPriority(cudaStream_t* stream, unsigned flags, int priority) {
  const cudaError_t created = cudaStreamCreateWithFlags(stream, flags);
  if (created != cudaSuccess) return created;
  return with_stream(*stream, [&](Stream& s) {
    s.priority = clamped_priority(priority);
    return cudaSuccess;
  });
}

cudaError_t cudaStreamGetPriority(cudaStream_t stream, int* priority) {
  if (priority == nullptr) return record_error(cudaErrorInvalidValue);
  return with_stream(stream, [&](Stream& s) {
    *priority = s.priority;
    return cudaSuccess;
  });
}

cudaError_t cudaStreamGetFlags(cudaStream_t stream, unsigned* flags) {
  if (flags == nullptr) return record_error(cudaErrorInvalidValue);
  return with_stream(stream, [&](Stream& s) {
    *flags = s.blocking ? cudaStreamDefault : cudaStreamNonBlocking;
    return cudaSuccess;
  });
}

cudaError_t cudaStreamSetAttribute(cudaStream_t stream, cudaLaunchAttributeID attribute,
                                   const cudaLaunchAttributeValue* value) {
  if (value == nullptr) return record_error(cudaErrorInvalidValue);
  return with_stream(stream, [&](Stream& s) {
    switch (attribute) {
      case cudaLaunchAttributeAccessPolicyWindow: {
        const cudaAccessPolicyWindow& w = value->accessPolicyWindow;
        if (!(w.hitRatio >= 0.0f && w.hitRatio <= 1.0f) || w.missProp == cudaAccessPropertyPersisting) break;
        s.access_policy = w;
        return cudaSuccess;
      }
      case cudaLaunchAttributeSynchronizationPolicy:
        if (value->syncPolicy < cudaSyncPolicyAuto || value->syncPolicy > cudaSyncPolicyBlockingSync) break;
        s.sync_policy = value->syncPolicy;
        return cudaSuccess;
      case cudaLaunchAttributePriority:
        s.priority = clamped_priority(value->priority);
        return cudaSuccess;
      default:
        break;
    }
    return record_error(cudaErrorInvalidValue);
  });
}

cudaError_t cudaStreamGetAttribute(cudaStream_t stream, cudaLaunchAttributeID attribute,
                                   cudaLaunchAttributeValue* value) {
  if (value == nullptr) return record_error(cudaErrorInvalidValue);
  return with_stream(stream, [&](Stream& s) {
    switch (attribute) {
      case cudaLaunchAttributeAccessPolicyWindow: value->accessPolicyWindow = s.access_policy; return cudaSuccess;
      case cudaLaunchAttributeSynchronizationPolicy: value->syncPolicy = s.sync_policy; return cudaSuccess;
      case cudaLaunchAttributePriority: value->priority = s.priority; return cudaSuccess;
      default: return record_error(cudaErrorInvalidValue);
    }
  });
}

cudaError_t cudaCtxResetPersistingL2Cache() { return cudaSuccess; }

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  StreamRegistry& r = streams();
  std::shared_ptr<Stream> s;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.created.find(stream);
    if (it == r.created.end()) return record_error(cudaErrorInvalidResourceHandle);
    s = it->second;
    r.created.erase(it);
  }
  // CUDA lets queued work finish after destroy returns; waiting here is simpler and equivalent
  // for a correct program.
  StreamRegistry::stop(s);
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  const cudaError_t e = run_synchronously(stream, {});  // refused while the stream captures
  if (e != cudaSuccess) return record_error(e);
  return record_error(sticky_error());
}

cudaError_t cudaStreamQuery(cudaStream_t stream) {
  StreamRegistry& r = streams();
  std::shared_ptr<Stream> s;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    s = r.find(stream);
  }
  if (!s) return record_error(cudaErrorInvalidResourceHandle);
  std::uint64_t ticket;
  {
    std::lock_guard<std::mutex> lock(s->mutex);
    if (s->completed < s->enqueued) return cudaErrorNotReady;
    ticket = s->enqueued;
  }
  // Finding the work done is a wait that has ended: the host is past the work's end.
  host_waited(host_now_ns(), s->end_of(ticket));
  return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned) {
  Event* e = find_event(event);
  if (e == nullptr) return record_error(cudaErrorInvalidResourceHandle);
  std::shared_ptr<EventRecord> rec = last_record(e);
  if (!rec) return cudaSuccess;  // waiting on a never-recorded event is a no-op, as in CUDA
  StreamRegistry& r = streams();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::shared_ptr<Stream> s = r.find(stream);
  if (!s) return record_error(cudaErrorInvalidResourceHandle);
  if (rec->capture) {
    // The event marks a point of a capture: the stream joins that capture (its work from now
    // on is captured after everything captured so far), as CUDA forks a capture across streams.
    if (s->capture == rec->capture) return cudaSuccess;
    if (s->capture) {
      report("cudaStreamWaitEvent: the stream captures one graph and the event was recorded while capturing another");
      return record_error(cudaErrorStreamCaptureMerge);
    }
    if (s->legacy) {
      report("cudaStreamWaitEvent: the legacy default stream cannot join a capture; create a stream");
      return record_error(cudaErrorStreamCaptureUnsupported);
    }
    s->capture = rec->capture;
    rec->capture->joined.push_back(s);
    return cudaSuccess;
  }
  if (s->capture) {
    report("cudaStreamWaitEvent: a capturing stream waits for an event recorded outside the capture; a graph "
           "cannot depend on work outside it");
    return record_error(cudaErrorStreamCaptureIsolation);
  }
  // A no-op task that the stream may start only after the event's stream reached the record.
  Task task{{}, {{rec->stream, rec->ticket}}, host_now_ns()};
  {
    std::lock_guard<std::mutex> l(s->mutex);
    s->queue.push_back(std::move(task));
    ++s->enqueued;
  }
  s->changed.notify_all();
  return cudaSuccess;
}

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* user_data) {
  if (fn == nullptr) return record_error(cudaErrorInvalidValue);
  if (sticky_error() != cudaSuccess) return record_error(sticky_error());
  // Runs on the stream's own thread, in order with its kernels and copies (and is recorded
  // as a host node while the stream captures).
  return record_error(enqueue(stream, [fn, user_data] { fn(user_data); }));
}

cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback, void* user_data,
                                  unsigned flags) {
  if (callback == nullptr || flags != 0) return record_error(cudaErrorInvalidValue);
  if (sticky_error() != cudaSuccess) return record_error(sticky_error());
  if (is_capturing(stream)) return record_error(cudaErrorStreamCaptureUnsupported);
  // On the stream's own thread, in order with its kernels and copies, as cudaLaunchHostFunc;
  // the status is read when the callback runs, so a fault before it is passed on.
  return record_error(enqueue(stream, [stream, callback, user_data] { callback(stream, sticky_error(), user_data); }));
}

cudaError_t cudaEventCreate(cudaEvent_t* event) { return cudaEventCreateWithFlags(event, cudaEventDefault); }

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned flags) {
  if (event == nullptr) return record_error(cudaErrorInvalidValue);
  auto e = std::make_unique<Event>();
  e->timing = (flags & cudaEventDisableTiming) == 0;
  *event = e.get();
  std::lock_guard<std::mutex> lock(events_mutex);
  events[e.get()] = std::move(e);
  return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  std::lock_guard<std::mutex> lock(events_mutex);
  if (events.erase(event) == 0) return record_error(cudaErrorInvalidResourceHandle);
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  Event* e = find_event(event);
  if (e == nullptr) return record_error(cudaErrorInvalidResourceHandle);
  auto rec = std::make_shared<EventRecord>();
  StreamRegistry& r = streams();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::shared_ptr<Stream> s = r.find(stream);
  if (!s) return record_error(cudaErrorInvalidResourceHandle);
  rec->stream = s;
  if (s->capture) {  // a point in the captured graph, for other streams to join or wait on
    rec->capture = s->capture;
    std::lock_guard<std::mutex> l(e->mutex);
    e->last = rec;
    return cudaSuccess;
  }
  // The task owns the record: the event may be recorded again or destroyed before the stream
  // gets there (both legal), which drops the event's reference.
  rec->ticket = push_task(r, s, [rec] { rec->time = Clock::now(); });
  std::lock_guard<std::mutex> l(e->mutex);
  e->last = rec;
  return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  Event* e = find_event(event);
  if (e == nullptr) return record_error(cudaErrorInvalidResourceHandle);
  std::shared_ptr<EventRecord> rec = last_record(e);
  if (rec && rec->capture) return record_error(cudaErrorCapturedEvent);
  if (rec) rec->stream->host_wait_for(rec->ticket);
  return record_error(sticky_error());
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
  Event* e = find_event(event);
  if (e == nullptr) return record_error(cudaErrorInvalidResourceHandle);
  std::shared_ptr<EventRecord> rec = last_record(e);
  if (!rec) return cudaSuccess;
  if (rec->capture) return record_error(cudaErrorCapturedEvent);
  if (!rec->stream->reached(rec->ticket)) return cudaErrorNotReady;
  host_waited(host_now_ns(), rec->stream->end_of(rec->ticket));  // as cudaStreamQuery
  return cudaSuccess;
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  if (ms == nullptr) return record_error(cudaErrorInvalidValue);
  Event* a = find_event(start);
  Event* b = find_event(end);
  if (a == nullptr || b == nullptr) return record_error(cudaErrorInvalidResourceHandle);
  if (!a->timing || !b->timing) return record_error(cudaErrorInvalidResourceHandle);
  std::shared_ptr<EventRecord> ra = last_record(a), rb = last_record(b);
  if (!ra || !rb) return record_error(cudaErrorInvalidResourceHandle);
  if (ra->capture || rb->capture) return record_error(cudaErrorCapturedEvent);
  if (!ra->stream->reached(ra->ticket) || !rb->stream->reached(rb->ticket)) return cudaErrorNotReady;
  if (cudasim::model_time_enabled())
    *ms = static_cast<float>((rb->stream->end_of(rb->ticket) - ra->stream->end_of(ra->ticket)) / 1e6);
  else
    *ms = std::chrono::duration<float, std::milli>(rb->time - ra->time).count();
  return cudaSuccess;
}
