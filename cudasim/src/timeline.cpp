// The modelled device clock (cudasim/timeline.hpp explains the rules): the host threads'
// clocks, the operation a stream thread is running, the copy engines' bookings, and the record
// of every span, written as a Chrome trace at exit when CUDASIM_TIMELINE names a file.
#include "cudasim/timeline.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "cudasim/gpu_model.hpp"
#include "internal.hpp"

namespace cudasim {

namespace {

using detail::json_escape;
using detail::report;

double real_ns() {
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool environment_says_model_time() {
  const char* env = std::getenv("CUDASIM_MODEL_TIME");
  return env != nullptr && *env != '\0' && std::strcmp(env, "0") != 0;
}

HostClock environment_host_clock() {
  const char* env = std::getenv("CUDASIM_HOST_CLOCK");
  if (env == nullptr || *env == '\0' || std::strcmp(env, "wall") == 0) return HostClock::kWall;
  if (std::strcmp(env, "free") == 0) return HostClock::kFree;
  report("CUDASIM_HOST_CLOCK=%s is not a host clock (wall, free): using wall", env);
  return HostClock::kWall;
}

std::atomic<bool> model_time_on{environment_says_model_time()};
std::atomic<int> clock_in_use{static_cast<int>(environment_host_clock())};
// Bumped at each set_host_clock, so that each thread re-anchors its clock once.
std::atomic<unsigned> clock_generation{0};
// The latest host time any thread reached at an operation it queued or a wait: where a host
// thread that has not used the device yet starts.
std::atomic<double> host_frontier{0};

void raise_frontier(double ns) {
  double seen = host_frontier.load(std::memory_order_relaxed);
  while (ns > seen && !host_frontier.compare_exchange_weak(seen, ns, std::memory_order_relaxed)) {
  }
}

/// One host thread's clock: its modelled time at `anchor_real_ns`, and (wall clock) real time
/// since then added.
struct HostThreadClock {
  bool started = false;
  unsigned generation = 0;
  HostClock clock = HostClock::kWall;
  double anchor_modelled_ns = 0;
  double anchor_real_ns = 0;
  int track = -1;  // made when the thread first waits

  double now(double real) const {
    return clock == HostClock::kWall ? anchor_modelled_ns + (real - anchor_real_ns) : anchor_modelled_ns;
  }
  void anchor(double modelled, double real) {
    anchor_modelled_ns = modelled;
    anchor_real_ns = real;
  }
};

thread_local HostThreadClock host_thread;

/// The calling thread's clock, started or re-anchored as needed; `real` is now.
HostThreadClock& this_host_thread(double real) {
  HostThreadClock& h = host_thread;
  const unsigned generation = clock_generation.load(std::memory_order_acquire);
  if (!h.started) {
    h.started = true;
    h.generation = generation;
    h.clock = static_cast<HostClock>(clock_in_use.load());
    h.anchor(host_frontier.load(std::memory_order_relaxed), real);
  } else if (h.generation != generation) {  // the clock changed: continue from here
    h.anchor(h.now(real), real);
    h.generation = generation;
    h.clock = static_cast<HostClock>(clock_in_use.load());
  }
  return h;
}

// ---- the record ------------------------------------------------------------------------------

constexpr std::size_t kMaxSpans = std::size_t{1} << 20;

struct Track {
  std::string name;
  int device;
};

struct SpanRecord {
  int track;
  const char* kind;
  std::string name;
  double start_ns, end_ns;
};

struct Record {
  std::mutex mutex;
  std::vector<Track> tracks;
  std::vector<SpanRecord> spans;
  std::uint64_t dropped = 0;
  int host_threads = 0;
};

void write_at_exit();

Record& record() {
  static Record* r = [] {
    auto* made = new Record;  // never destroyed: stream threads may still record at exit
    if (const char* path = std::getenv("CUDASIM_TIMELINE"); path != nullptr && *path != '\0')
      std::atexit(write_at_exit);
    return made;
  }();
  return *r;
}

void add_span(int track, const char* kind, std::string name, double start_ns, double end_ns) {
  Record& r = record();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.spans.size() >= kMaxSpans) {
    ++r.dropped;
    return;
  }
  r.spans.push_back({track, kind, std::move(name), start_ns, end_ns});
}

/// The calling host thread's track, made on first use.
int host_track(HostThreadClock& h) {
  if (h.track >= 0) return h.track;
  Record& r = record();
  std::lock_guard<std::mutex> lock(r.mutex);
  h.track = static_cast<int>(r.tracks.size());
  r.tracks.push_back({"host thread " + std::to_string(++r.host_threads), -1});
  return h.track;
}

// ---- the operation a stream thread runs -----------------------------------------------------------

thread_local clock_detail::ModelledOperation* current_operation = nullptr;

void write_at_exit() {
  const char* path = std::getenv("CUDASIM_TIMELINE");
  std::string error;
  if (!write_timeline(path, &error)) report("could not write the timeline: %s", error.c_str());
}

}  // namespace

bool model_time_enabled() { return model_time_on.load(std::memory_order_relaxed); }
void set_model_time(bool on) { model_time_on.store(on); }

HostClock host_clock() { return static_cast<HostClock>(clock_in_use.load()); }
void set_host_clock(HostClock clock) {
  clock_in_use.store(static_cast<int>(clock));
  clock_generation.fetch_add(1, std::memory_order_release);
}

double host_time_ns() {
  const double real = real_ns();
  return this_host_thread(real).now(real);
}

void spend_host_time(double ns) {
  if (!(ns > 0)) return;  // time does not run backwards (and NaN is no time)
  HostThreadClock& h = this_host_thread(real_ns());
  h.anchor_modelled_ns += ns;
  raise_frontier(h.now(real_ns()));
}

void wait_for_host_time(double ns) {
  if (!(ns >= 0)) return;
  const double real = real_ns();
  const bool first_use = !host_thread.started;
  HostThreadClock& h = this_host_thread(real);
  if (first_use || ns > h.now(real)) {
    h.anchor(ns, real);
    raise_frontier(ns);
  }
}

std::vector<TimelineSpan> timeline() {
  Record& r = record();
  std::vector<TimelineSpan> out;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    out.reserve(r.spans.size());
    for (const SpanRecord& s : r.spans) {
      const Track& t = r.tracks[static_cast<std::size_t>(s.track)];
      out.push_back({t.name, t.device, s.kind, s.name, s.start_ns, s.end_ns});
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const TimelineSpan& a, const TimelineSpan& b) { return a.start_ns < b.start_ns; });
  return out;
}

std::uint64_t dropped_timeline_spans() {
  Record& r = record();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.dropped;
}

void reset_timeline() {
  Record& r = record();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.spans.clear();
  r.dropped = 0;
}

bool write_timeline(const std::string& path, std::string* error) {
  // The records as they are: a trace viewer orders the events itself, and each span keeps
  // its track's index, which is the trace's thread id.
  std::vector<Track> tracks;
  std::vector<SpanRecord> spans;
  {
    Record& r = record();
    std::lock_guard<std::mutex> lock(r.mutex);
    tracks = r.tracks;
    spans = r.spans;
  }
  std::FILE* out = std::fopen(path.c_str(), "w");
  if (out == nullptr) {
    if (error != nullptr) *error = path + ": " + std::strerror(errno);
    return false;
  }
  // Chrome's trace-event format: a process per device (and one for the host threads), a
  // thread per track; times in microseconds.
  const GpuSpec& gpu = modelled_gpu();
  std::fprintf(out, "{\"displayTimeUnit\": \"ns\", \"otherData\": {\"clock\": \"modelled %s\"},\n\"traceEvents\": [\n",
               gpu.name);
  const char* separator = "";
  int largest_device = -1;
  for (const Track& t : tracks) largest_device = std::max(largest_device, t.device);
  for (int device = -1; device <= largest_device; ++device) {
    const std::string process = device < 0 ? "host" : "device " + std::to_string(device) + " (modelled " + gpu.name + ")";
    std::fprintf(out, "%s{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %d, \"args\": {\"name\": \"%s\"}}", separator,
                 device + 1, json_escape(process).c_str());
    separator = ",\n";
  }
  for (std::size_t i = 0; i < tracks.size(); ++i)
    std::fprintf(out, ",\n{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %d, \"tid\": %zu, \"args\": {\"name\": \"%s\"}}",
                 tracks[i].device + 1, i, json_escape(tracks[i].name).c_str());
  for (const SpanRecord& s : spans) {
    std::fprintf(out, ",\n{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": %d, \"tid\": %d, \"ts\": %.3f, \"dur\": %.3f}",
                 s.kind, json_escape(s.name).c_str(), tracks[static_cast<std::size_t>(s.track)].device + 1, s.track,
                 s.start_ns / 1e3, (s.end_ns - s.start_ns) / 1e3);
  }
  std::fprintf(out, "\n]}\n");
  const bool written = std::ferror(out) == 0;
  if (std::fclose(out) != 0 || !written) {
    if (error != nullptr) *error = path + ": write failed";
    return false;
  }
  return true;
}

namespace clock_detail {

int timeline_track(const std::string& name, int device) {
  Record& r = record();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.tracks.push_back({name, device});
  return static_cast<int>(r.tracks.size()) - 1;
}

double host_now_ns() {
  const double now = host_time_ns();
  raise_frontier(now);
  return now;
}

void host_waited(double entered_ns, double end_ns) {
  const double real = real_ns();
  HostThreadClock& h = this_host_thread(real);
  if (end_ns > entered_ns) add_span(host_track(h), "wait", "waits for the device", entered_ns, end_ns);
  // The real time spent waiting for the simulator is dropped: the thread is where the wait
  // would have left it on a GPU.
  h.anchor(std::max(entered_ns, end_ns), real);
  raise_frontier(h.anchor_modelled_ns);
}

ModelledOperation::ModelledOperation(int track, double start_ns) : track_(track), cursor_ns_(start_ns) {
  previous_ = current_operation;
  current_operation = this;
}

ModelledOperation::~ModelledOperation() { current_operation = previous_; }

void charge_operation(const char* kind, const std::string& name, double duration_ns) {
  ModelledOperation* op = current_operation;
  if (op == nullptr) return;  // not on a stream (nothing to place)
  add_span(op->track_, kind, name, op->cursor_ns_, op->cursor_ns_ + duration_ns);
  op->cursor_ns_ += duration_ns;
}

void charge_copy(ModelledEngine& engine, const std::string& name, double duration_ns) {
  ModelledOperation* op = current_operation;
  if (op == nullptr) return;
  double start;
  {
    std::lock_guard<std::mutex> lock(engine.mutex);
    // The earliest gap on the engine, from when the copy's stream is ready, that holds the
    // copy: bookings come in the order the CPU happens to run the streams, which need not be
    // the order of their modelled times.
    start = op->cursor_ns_;
    auto it = engine.busy.begin();
    for (; it != engine.busy.end(); ++it) {
      if (it->second <= start) continue;
      if (it->first >= start + duration_ns) break;
      start = it->second;
    }
    engine.busy.insert(it, {start, start + duration_ns});
    constexpr std::size_t kRemembered = 4096;
    if (engine.busy.size() > kRemembered) engine.busy.erase(engine.busy.begin());
  }
  add_span(engine.track, "copy", name, start, start + duration_ns);
  add_span(op->track_, "copy", name, start, start + duration_ns);
  op->cursor_ns_ = start + duration_ns;
}

}  // namespace clock_detail
}  // namespace cudasim
