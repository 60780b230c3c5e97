// The lesson's experiment: how fast can a training loop eat batches from disk?
//
//   ./course run lessons/04-data-loading/loader_benchmark.cu [--batches N] [--compute-repeats R] [--trials T] [--out DIR]
//
// Writes a synthetic data set (record_format.hpp) to real files in a temporary folder, then
// runs one epoch over it six ways and prints samples/s and the GPU's idle fraction:
//   sync        read, preprocess into pageable memory, cudaMemcpy, train step, wait
//   + pinned    the same into a pinned buffer
//   + W workers W threads read and preprocess ahead into a ring of pinned slots (1, 2, 4)
//   + overlap   4 workers, and copies on their own stream into 2 device slots (events)
// It does so for two configurations of the training step: loading-bound (a light step, so
// reading and preprocessing are the slowest stage) and compute-bound (the same step repeated
// R times, default 24, so that it is the slowest stage). For each configuration it first
// measures every stage alone (load with 4 workers, pinned copy, training step) and reports
// the overlapped pipeline's rate as a percentage of its slowest stage's rate, and its GPU
// idle fraction. It draws a timeline (one row per batch: read, preprocess, copy, compute;
// lanes for the link and the GPU) of the synchronous and overlapped runs as SVG, and as PNG
// when rsvg-convert (librsvg2-bin) or ImageMagick's convert is installed.
//
// On the simulator `./course run` puts it on the modelled clock (cudasim/timeline.hpp; as
// --model-time does): every copy and kernel takes a modelled GPU's time, and the host's work a
// modelled host's (ModelledHost below: each worker on its own core), with the times carried
// from thread to thread where the ring hands a batch or a slot over. Every figure is then
// modelled and the same on any machine, and the program exits with status 1 when the lesson's
// claims do not hold (the overlapped pipeline at 90% of its slowest stage or more, less GPU
// idle than the synchronous loader). With --wall-time it measures CPU time instead: copies take
// the modelled PCIe time in real time and the training step runs on the CPU, on the same cores
// as the loader's workers, so the figures show the pipeline's shape, not a GPU's speed.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <sys/resource.h>
#include <unistd.h>

#include "cuda_check.hpp"
#include "record_format.hpp"
#ifdef CUDASIM
#include <cudasim/gpu_model.hpp>
#include <cudasim/link_model.hpp>
#include <cudasim/stats.hpp>
#include <cudasim/timeline.hpp>
#endif

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kBatch = 128;          // samples per batch
constexpr std::uint32_t kFeatures = 64 * 64 * 3;  // one 64x64 RGB image per sample
constexpr int kLoadingRepeats = 2;   // the training step's weight (see the kernel): a light step
constexpr int kComputeRepeats = 24;  // default weight of the compute-bound configuration

__global__ void train_step_kernel(float* weights, const float* batch, int rows, int features, int repeats) {
  for (int f = blockIdx.x * blockDim.x + threadIdx.x; f < features; f += gridDim.x * blockDim.x) {
    float w = weights[f];
    for (int k = 0; k < repeats; ++k) {
      float sum = 0.0f;
      for (int r = 0; r < rows; ++r) sum += batch[static_cast<long long>(r) * features + f];
      w = 0.9f * w + 0.1f * (sum / rows);
    }
    weights[f] = w;
  }
}

// ---------------------------------------------------------------------------------------------
// The modelled clock (simulator only; see the file's comment).

/// The host that the modelled clock charges for reading and preprocessing: assumed figures, not
/// measured ones. The development machine's cores took about 3.3 ms of CPU per batch for both
/// (docs/benchmarks.md, lesson 04), roughly these rates on a core half as fast.
struct ModelledHost {
  static constexpr double kReadBytesPerSecond = 5e9;        ///< page-cache reads, per core
  static constexpr double kPreprocessBytesPerSecond = 1e9;  ///< checksums and normalising, per core
};

/// The compute-bound configuration's training step on the modelled clock: a stand-in for a
/// real network's forward and backward pass, declared to the model (cudasim::declare_flops)
/// rather than run, since a CPU cannot run a GPU's step in reasonable time. ResNet-18 does
/// 1.8 G multiply-adds per 224 x 224 image (He et al. 2016, table 1): about 0.15 G at 64 x 64,
/// 3 times that with the backward pass, 2 FLOPs each, times 128 samples: about 114 GFLOP per
/// batch, 1.7 ms at an H100's FP32 peak.
constexpr double kStandInStepFlops = 114e9;

bool g_modelled = false;  ///< set once in main: the figures are the modelled clock's

/// The calling thread's time in ms: modelled, or real since an arbitrary origin.
double now_ms() {
#ifdef CUDASIM
  if (g_modelled) return cudasim::host_time_ns() / 1e6;
#endif
  return std::chrono::duration<double, std::milli>(Clock::now().time_since_epoch()).count();
}
/// Charges `seconds` of host work to the calling thread on the modelled clock (nothing otherwise:
/// the work itself took its real time).
void spend_modelled(double seconds) {
#ifdef CUDASIM
  if (g_modelled) cudasim::spend_host_time(seconds * 1e9);
#else
  (void)seconds;
#endif
}
constexpr int kStepThreads = 256;

/// The training step's grid: a thread per feature; on the modelled clock four blocks per SM of
/// the modelled GPU (the kernel strides over the features), so that a step's declared FLOPs
/// use the whole GPU, as a real network's kernels would.
int step_blocks(std::uint32_t features) {
#ifdef CUDASIM
  if (g_modelled) return 4 * cudasim::modelled_gpu().sms;
#endif
  return static_cast<int>((features + kStepThreads - 1) / kStepThreads);
}

/// A hand-off from another host thread at `ms` (its now_ms()): on the modelled clock this
/// thread continues from there if it is behind.
void continue_from(double ms) {
#ifdef CUDASIM
  if (g_modelled) cudasim::wait_for_host_time(ms * 1e6);
#else
  (void)ms;
#endif
}

/// One timed interval of one batch in one stage, in ms since the run's start.
struct Span {
  int batch;
  int stage;  // 0 read, 1 preprocess, 2 copy, 3 compute
  double begin, end;
};
const char* kStageNames[] = {"read", "preprocess", "copy", "compute"};
const char* kStageColors[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759"};
const char* kWaitColor = "#e4e4e4";  // a batch in flight between its stages (waiting)

struct Timeline {
  std::mutex mutex;
  std::vector<Span> spans;
  double now() const { return now_ms(); }
  void add(int batch, int stage, double b, double e) {
    std::lock_guard<std::mutex> lock(mutex);
    spans.push_back({batch, stage, b, e});
  }
};

/// Reads the raw records of batch b (one file per 8 batches) into `raw`.
void read_raw(const dataset::Index& index, int b, std::vector<std::uint8_t>& raw) {
  const std::int64_t first = static_cast<std::int64_t>(b) * kBatch;
  const auto& file = *std::find_if(index.files.begin(), index.files.end(), [&](const dataset::FileInfo& f) {
    return first >= f.first_sample && first < f.first_sample + f.records;
  });
  const std::size_t rb = dataset::record_bytes(index.features);
  raw.resize(rb * kBatch);
  std::FILE* f = std::fopen(file.path.c_str(), "rb");
  if (!f) throw dataset::DataError(file.path, -1, "cannot open");
  dataset::detail::FileCloser closer{f};
  std::fseek(f, static_cast<long>(dataset::kHeaderBytes + rb * (first - file.first_sample)), SEEK_SET);
  if (std::fread(raw.data(), 1, raw.size(), f) != raw.size()) throw dataset::DataError(file.path, -1, "truncated");
}

/// Checks the records' checksums and normalises the pixels into `out` (kBatch x features).
void preprocess(const std::vector<std::uint8_t>& raw, std::uint32_t features, float* out) {
  const std::size_t rb = dataset::record_bytes(features);
  for (int s = 0; s < kBatch; ++s) {
    const std::uint8_t* rec = raw.data() + rb * s;
    const std::uint64_t id = dataset::detail::get_u64(rec);
    if (dataset::record_checksum(id, rec + 8, features) != dataset::detail::get_u32(rec + 8 + features))
      throw std::runtime_error("checksum mismatch in sample " + std::to_string(id));
    for (std::uint32_t j = 0; j < features; ++j) out[static_cast<std::size_t>(s) * features + j] = dataset::normalize_pixel(rec[8 + j]);
  }
}

/// Reads and preprocesses batch b into `out`, recording both spans; on the modelled clock each
/// takes the modelled host's time for its bytes.
void load_batch(const dataset::Index& index, int b, std::vector<std::uint8_t>& raw, float* out, Timeline& tl) {
  const double t0 = tl.now();
  read_raw(index, b, raw);
  spend_modelled(raw.size() / ModelledHost::kReadBytesPerSecond);
  const double t1 = tl.now();
  preprocess(raw, index.features, out);
  spend_modelled(raw.size() / ModelledHost::kPreprocessBytesPerSecond);
  tl.add(b, 0, t0, t1);
  tl.add(b, 1, t1, tl.now());
}

/// A minimal prefetching ring (the reference for exercise 02, without its error handling). It
/// also carries the modelled clock across its hand-offs: a batch is ready at the time its
/// worker finished it, a slot free at the time the consumer released it.
class Ring {
 public:
  /// `memory`: `slots` batches of pinned host memory, owned by the caller, already touched
  /// (allocated before the clock starts, so that page faults do not count as preprocessing).
  Ring(const dataset::Index& index, int batches, int workers, int slots, float* memory, Timeline& tl)
      : index_(index), batches_(batches), slots_(slots), state_(slots, 0), ready_ms_(slots, 0), freed_ms_(slots, 0),
        start_ms_(tl.now()), tl_(tl), memory_(memory) {
    for (int w = 0; w < workers; ++w) threads_.emplace_back([this, w, workers] { work(w, workers); });
  }
  ~Ring() {
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }
  float* slot(int b) { return memory_ + static_cast<std::size_t>(b % slots_) * kBatch * index_.features; }
  void wait_ready(int b) {
    double ready = 0;
    {
      std::unique_lock<std::mutex> lock(m_);
      cv_.wait(lock, [&] { return state_[b % slots_] == 2 + b; });
      ready = ready_ms_[b % slots_];
    }
    continue_from(ready);
  }
  void release(int b) {
    {
      std::lock_guard<std::mutex> lock(m_);
      state_[b % slots_] = 0;
      freed_ms_[b % slots_] = tl_.now();
    }
    cv_.notify_all();
  }

 private:
  /// Worker w of `workers` loads batches w, w + workers, ... in turn (round robin, as PyTorch's
  /// DataLoader hands out batches), each into its slot once the consumer has freed it. A fixed
  /// order keeps the modelled clock's figures independent of which thread the CPU ran first.
  void work(int w, int workers) {
    continue_from(start_ms_);  // the workers start together, when the ring was made
    std::vector<std::uint8_t> raw;
    for (int b = w; b < batches_; b += workers) {
      double freed = 0;
      {
        std::unique_lock<std::mutex> lock(m_);
        cv_.wait(lock, [&] { return stop_ || state_[b % slots_] == 0; });
        if (stop_) return;
        state_[b % slots_] = 1;
        freed = freed_ms_[b % slots_];
      }
      continue_from(freed);
      load_batch(index_, b, raw, slot(b), tl_);
      {
        std::lock_guard<std::mutex> lock(m_);
        state_[b % slots_] = 2 + b;  // ready, holding batch b
        ready_ms_[b % slots_] = tl_.now();
      }
      cv_.notify_all();
    }
  }
  const dataset::Index& index_;
  int batches_, slots_;
  std::vector<int> state_;  // 0 free, 1 filling, 2 + b: holds batch b
  std::vector<double> ready_ms_, freed_ms_;  // per slot: when its batch was ready, when it was freed
  double start_ms_;
  Timeline& tl_;
  float* memory_ = nullptr;
  std::mutex m_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

struct Result {
  std::string name;
  int batches = 0;
  double seconds = 0, busy_ms = 0;
  std::vector<Span> spans;
  double samples_per_second() const { return batches * kBatch / seconds; }
  double ms_per_batch() const { return 1e3 * seconds / batches; }
  double gpu_idle() const { return std::max(0.0, 1.0 - busy_ms / (1e3 * seconds)); }
};

/// Batches the ring holds: two per worker (4), as PyTorch's DataLoader keeps prefetch_factor = 2
/// batches per worker by default. With one per worker, a worker that has finished a batch waits
/// for its slot to be copied out before it may start the next: on the modelled clock the
/// loading-bound pipeline then reached only 68% of the load stage's rate.
constexpr int kRingSlots = 8;

/// Pinned host memory for `slots` batches, every page touched.
float* allocate_pinned(int slots, std::size_t floats) {
  float* p = nullptr;
  CUDA_CHECK(cudaMallocHost(&p, sizeof(float) * slots * floats));
  std::fill(p, p + slots * floats, 0.0f);
  return p;
}

/// Device memory that has been written once. The simulator's device memory is host memory
/// mapped on first touch: without this, the first copy into each fresh slot also pays ~1500
/// page faults (3-8 ms for 6 MB on the development machine, against 0.24 ms of modelled
/// PCIe time), which drew the first copies of every run as long bars. A GPU has no such cost.
void allocate_warm(float** p, std::size_t floats) {
  CUDA_CHECK(cudaMalloc(p, floats * sizeof(float)));
  CUDA_CHECK(cudaMemset(*p, 0, floats * sizeof(float)));
  CUDA_CHECK(cudaDeviceSynchronize());
}

/// Records the device-side spans of batch b (copy, compute) from events, in timeline ms.
struct DeviceClock {
  cudaEvent_t origin;
  double origin_ms;
  explicit DeviceClock(Timeline& tl) {
    CUDA_CHECK(cudaEventCreate(&origin));
    CUDA_CHECK(cudaEventRecord(origin));
    CUDA_CHECK(cudaEventSynchronize(origin));
    origin_ms = tl.now();
  }
  double at(cudaEvent_t e) const {
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, origin, e));
    return origin_ms + ms;
  }
};

/// One epoch. mode: 0 sync pageable, 1 sync pinned, 2 workers, 3 workers + overlap.
Result run(const std::string& name, const dataset::Index& index, int batches, int mode, int workers, int repeats,
           float* d_w) {
  Result res;
  res.name = name;
  res.batches = batches;
  const std::size_t floats = static_cast<std::size_t>(kBatch) * index.features;
  const int depth = 2;
  float* d_x[depth];
  for (auto& p : d_x) allocate_warm(&p, floats);
  float* ring_memory = mode >= 2 ? allocate_pinned(kRingSlots, floats) : nullptr;
  float* pinned = mode == 1 ? allocate_pinned(1, floats) : nullptr;
  std::vector<float> pageable(mode == 0 ? floats : 0, 0.0f);
  Timeline tl;
  cudaStream_t copy_s, comp_s;
  CUDA_CHECK(cudaStreamCreateWithFlags(&copy_s, cudaStreamNonBlocking));
  CUDA_CHECK(cudaStreamCreateWithFlags(&comp_s, cudaStreamNonBlocking));
  std::vector<cudaEvent_t> c0(batches), c1(batches), k0(batches), k1(batches);
  for (int b = 0; b < batches; ++b)
    for (auto* e : {&c0[b], &c1[b], &k0[b], &k1[b]}) CUDA_CHECK(cudaEventCreate(e));
  DeviceClock clock(tl);
  const double t_start_ms = tl.now();  // the timeline's 0 ms
  const int threads = kStepThreads, blocks = step_blocks(index.features);
  if (mode <= 1) {
    float* host = mode == 0 ? pageable.data() : pinned;
    std::vector<std::uint8_t> raw;
    for (int b = 0; b < batches; ++b) {
      load_batch(index, b, raw, host, tl);
      CUDA_CHECK(cudaEventRecord(c0[b], comp_s));
      CUDA_CHECK(cudaMemcpyAsync(d_x[0], host, floats * sizeof(float), cudaMemcpyHostToDevice, comp_s));
      CUDA_CHECK(cudaEventRecord(c1[b], comp_s));
      CUDA_CHECK(cudaEventRecord(k0[b], comp_s));
      train_step_kernel<<<blocks, threads, 0, comp_s>>>(d_w, d_x[0], kBatch, index.features, repeats);
      CUDA_CHECK_LAUNCH();
      CUDA_CHECK(cudaEventRecord(k1[b], comp_s));
      CUDA_CHECK(cudaStreamSynchronize(comp_s));
    }
  } else {
    Ring ring(index, batches, workers, kRingSlots, ring_memory, tl);
    for (int b = 0; b < batches; ++b) {
      const int s = mode == 3 ? b % depth : 0;
      ring.wait_ready(b);
      // Overlap: the copy into slot s waits for the step that read it (batch b - depth).
      if (mode == 3 && b >= depth) CUDA_CHECK(cudaStreamWaitEvent(copy_s, k1[b - depth], 0));
      cudaStream_t cs = mode == 3 ? copy_s : comp_s;
      CUDA_CHECK(cudaEventRecord(c0[b], cs));
      CUDA_CHECK(cudaMemcpyAsync(d_x[s], ring.slot(b), floats * sizeof(float), cudaMemcpyHostToDevice, cs));
      CUDA_CHECK(cudaEventRecord(c1[b], cs));
      if (mode == 3) CUDA_CHECK(cudaStreamWaitEvent(comp_s, c1[b], 0));
      CUDA_CHECK(cudaEventRecord(k0[b], comp_s));
      train_step_kernel<<<blocks, threads, 0, comp_s>>>(d_w, d_x[s], kBatch, index.features, repeats);
      CUDA_CHECK_LAUNCH();
      CUDA_CHECK(cudaEventRecord(k1[b], comp_s));
      if (mode == 2) {
        CUDA_CHECK(cudaStreamSynchronize(comp_s));
        ring.release(b);
      } else {
        // The ring slot may be refilled once its copy is done.
        CUDA_CHECK(cudaEventSynchronize(c1[b]));
        ring.release(b);
      }
    }
    CUDA_CHECK(cudaStreamSynchronize(comp_s));
  }
  res.seconds = (tl.now() - t_start_ms) / 1e3;
  for (int b = 0; b < batches; ++b) {
    tl.add(b, 2, clock.at(c0[b]), clock.at(c1[b]));
    tl.add(b, 3, clock.at(k0[b]), clock.at(k1[b]));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, k0[b], k1[b]));
    res.busy_ms += ms;
    for (auto e : {c0[b], c1[b], k0[b], k1[b]}) CUDA_CHECK(cudaEventDestroy(e));
  }
  res.spans = tl.spans;  // in the order the threads recorded them; sorted, the files are repeatable
  std::sort(res.spans.begin(), res.spans.end(),
            [](const Span& a, const Span& b) { return a.batch != b.batch ? a.batch < b.batch : a.stage < b.stage; });
  for (Span& sp : res.spans) {
    sp.begin -= t_start_ms;
    sp.end -= t_start_ms;
  }
  if (pinned) CUDA_CHECK(cudaFreeHost(pinned));
  if (ring_memory) CUDA_CHECK(cudaFreeHost(ring_memory));
  for (auto& p : d_x) CUDA_CHECK(cudaFree(p));
  CUDA_CHECK(cudaStreamDestroy(copy_s));
  CUDA_CHECK(cudaStreamDestroy(comp_s));
  return res;
}

/// CPU time of the whole process (all threads) so far, in seconds.
double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + 1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

/// One stage measured alone, over the same batches: wall time and the process's CPU time.
struct StageAlone {
  std::string name;
  int batches = 0;
  double seconds = 0, cpu = 0;
  double samples_per_second() const { return batches * kBatch / seconds; }
  double ms_per_batch() const { return 1e3 * seconds / batches; }
};

/// Measures each stage of the overlapped pipeline on its own: load (read + preprocess by
/// `workers` threads into the ring, the consumer releasing each batch at once), the pinned
/// host-to-device copy (back to back on one stream) and the training step (back to back).
std::vector<StageAlone> measure_stages(const dataset::Index& index, int batches, int workers, int repeats, float* d_w) {
  const std::size_t floats = static_cast<std::size_t>(kBatch) * index.features;
  std::vector<StageAlone> out;
  float* ring_memory = allocate_pinned(kRingSlots, floats);
  float* d_x = nullptr;
  allocate_warm(&d_x, floats);
  cudaStream_t s;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  {
    Timeline tl;
    const double c0 = cpu_seconds();
    const double t0 = now_ms();
    {
      Ring ring(index, batches, workers, kRingSlots, ring_memory, tl);
      for (int b = 0; b < batches; ++b) {
        ring.wait_ready(b);
        ring.release(b);
      }
    }
    out.push_back({"load (read + preprocess, " + std::to_string(workers) + " workers)", batches,
                   (now_ms() - t0) / 1e3, cpu_seconds() - c0});
  }
  {
    const double c0 = cpu_seconds();
    const double t0 = now_ms();
    for (int b = 0; b < batches; ++b)
      CUDA_CHECK(cudaMemcpyAsync(d_x, ring_memory + (b % kRingSlots) * floats, floats * sizeof(float), cudaMemcpyHostToDevice, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    out.push_back({"copy (pinned, host to device)", batches, (now_ms() - t0) / 1e3, cpu_seconds() - c0});
  }
  {
    const double c0 = cpu_seconds();
    const double t0 = now_ms();
    for (int b = 0; b < batches; ++b) {
      train_step_kernel<<<step_blocks(index.features), kStepThreads, 0, s>>>(d_w, d_x, kBatch, index.features, repeats);
      CUDA_CHECK_LAUNCH();
    }
    CUDA_CHECK(cudaStreamSynchronize(s));
    out.push_back({"compute (training step)", batches, (now_ms() - t0) / 1e3, cpu_seconds() - c0});
  }
  CUDA_CHECK(cudaStreamDestroy(s));
  CUDA_CHECK(cudaFree(d_x));
  CUDA_CHECK(cudaFreeHost(ring_memory));
  return out;
}

/// Host-to-device bandwidth of `count` copies of one batch from pageable and from pinned
/// memory (GB/s), each back to back on one stream, timed with events.
void print_bandwidth(std::size_t floats, int count) {
  std::vector<float> pageable(floats, 1.0f);
  float* pinned = allocate_pinned(1, floats);
  float* d_x = nullptr;
  allocate_warm(&d_x, floats);
  cudaEvent_t a, b;
  CUDA_CHECK(cudaEventCreate(&a));
  CUDA_CHECK(cudaEventCreate(&b));
  double gbs[2];
  for (int k = 0; k < 2; ++k) {
    const float* src = k == 0 ? pageable.data() : pinned;
    CUDA_CHECK(cudaEventRecord(a, 0));
    for (int i = 0; i < count; ++i)
      CUDA_CHECK(cudaMemcpyAsync(d_x, src, floats * sizeof(float), cudaMemcpyHostToDevice, 0));
    CUDA_CHECK(cudaEventRecord(b, 0));
    CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    gbs[k] = count * floats * sizeof(float) / (ms * 1e6);
  }
  std::printf("host to device, %d copies of %.1f MB: pageable %.1f GB/s, pinned %.1f GB/s (%.2fx)\n", count,
              floats * sizeof(float) / 1e6, gbs[0], gbs[1], gbs[1] / gbs[0]);
  CUDA_CHECK(cudaEventDestroy(a));
  CUDA_CHECK(cudaEventDestroy(b));
  CUDA_CHECK(cudaFree(d_x));
  CUDA_CHECK(cudaFreeHost(pinned));
}

/// A tick step of 1, 2 or 5 times a power of ten giving about `ticks` ticks over `range`.
double nice_step(double range, int ticks) {
  const double raw = range / ticks, p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}

/// One panel of the timeline: a run with its title.
struct Panel {
  std::string title;
  const Result* result;
};

/// Draws each run as a panel like a profiler's view: two lanes (the link's copies, the GPU's
/// training steps, so idle gaps show), then one row per batch with its read, preprocess, copy
/// and compute bars over a grey bar for the time the batch is in flight (waiting between
/// stages). Each panel has its own time axis in ms.
void write_svg(const std::string& path, const std::vector<Panel>& panels) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return;
  const double W = 1100, left = 110, right = 20, plot_w = W - left - right;
  const double lane = 16, row = 10, head = 34, axis = 34, gap = 18;
  auto panel_height = [&](const Panel& p) { return head + 2 * lane + 8 + p.result->batches * row + axis; };
  double H = 70;
  for (const Panel& p : panels) H += panel_height(p) + gap;
  std::fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' height='%.0f' font-family='DejaVu Sans, sans-serif' "
               "font-size='11'>\n<rect width='100%%' height='100%%' fill='white'/>\n", W, H);
  std::fprintf(f, "<text x='10' y='20' font-size='15' font-weight='bold'>Lesson 04: timeline of one epoch per loader "
               "(one row per batch; lanes: link and GPU)</text>\n");
  // Legend.
  double lx = left;
  for (int st = 0; st < 5; ++st) {
    const char* color = st < 4 ? kStageColors[st] : kWaitColor;
    const char* label = st < 4 ? kStageNames[st] : "in flight, waiting";
    std::fprintf(f, "<rect x='%.0f' y='34' width='14' height='10' fill='%s'/><text x='%.0f' y='43'>%s</text>\n", lx, color,
                 lx + 18, label);
    lx += 40 + 7.0 * std::string(label).size();
  }
  double y0 = 70;
  for (const Panel& p : panels) {
    const Result& r = *p.result;
    double t_max = 0;
    for (const Span& s : r.spans) t_max = std::max(t_max, s.end);
    const double step = nice_step(t_max, 10);
    t_max = std::ceil(t_max / step) * step;
    auto X = [&](double ms) { return left + plot_w * ms / t_max; };
    auto bar = [&](double b, double e, double y, double h, const char* color) {
      std::fprintf(f, "<rect x='%.2f' y='%.1f' width='%.2f' height='%.1f' fill='%s'/>\n", X(b), y,
                   std::max(0.6, X(e) - X(b)), h, color);
    };
    std::fprintf(f, "<text x='10' y='%.0f' font-size='13' font-weight='bold'>%s</text>\n", y0 + 14, p.title.c_str());
    const double top = y0 + head, rows_top = top + 2 * lane + 8, bottom = rows_top + r.batches * row;
    // Grid lines and the axis.
    for (double t = 0; t <= t_max + 1e-9; t += step) {
      std::fprintf(f, "<line x1='%.2f' y1='%.1f' x2='%.2f' y2='%.1f' stroke='#d0d0d0' stroke-width='0.6'/>\n", X(t), top - 2,
                   X(t), bottom + 4);
      std::fprintf(f, "<text x='%.2f' y='%.1f' text-anchor='middle'>%g</text>\n", X(t), bottom + 17, t);
    }
    std::fprintf(f, "<line x1='%.0f' y1='%.1f' x2='%.0f' y2='%.1f' stroke='black'/>\n", left, bottom + 4, left + plot_w,
                 bottom + 4);
    std::fprintf(f, "<text x='%.0f' y='%.1f' text-anchor='middle'>time since the epoch started (ms)</text>\n",
                 left + plot_w / 2, bottom + 30);
    // Lanes: the link (copies) and the GPU (training steps).
    const char* lane_names[] = {"link: copy", "GPU: compute"};
    for (int l = 0; l < 2; ++l) {
      const double y = top + l * lane;
      std::fprintf(f, "<rect x='%.0f' y='%.1f' width='%.0f' height='%.1f' fill='#f6f6f6'/>\n", left, y, plot_w, lane - 3);
      std::fprintf(f, "<text x='%.0f' y='%.1f' text-anchor='end'>%s</text>\n", left - 6, y + 10, lane_names[l]);
      for (const Span& s : r.spans)
        if (s.stage == 2 + l) bar(s.begin, s.end, y, lane - 3, kStageColors[s.stage]);
    }
    // One row per batch.
    for (int b = 0; b < r.batches; ++b) {
      const double y = rows_top + b * row;
      double first = 1e300, last = 0;
      for (const Span& s : r.spans)
        if (s.batch == b) first = std::min(first, s.begin), last = std::max(last, s.end);
      if (b % 4 == 0 || b == r.batches - 1)
        std::fprintf(f, "<text x='%.0f' y='%.1f' text-anchor='end' font-size='9'>batch %d</text>\n", left - 6, y + 8, b);
      if (last > first) bar(first, last, y + 2, row - 4, kWaitColor);
      for (const Span& s : r.spans)
        if (s.batch == b) bar(s.begin, s.end, y, row - 1, kStageColors[s.stage]);
    }
    y0 += panel_height(p) + gap;
  }
  std::fprintf(f, "</svg>\n");
  std::fclose(f);
}

/// The same picture as PNG, converted by rsvg-convert or ImageMagick when one is installed.
bool write_png(const std::string& svg, const std::string& png) {
  const std::string quoted_svg = "'" + svg + "'", quoted_png = "'" + png + "'";
  if (std::system("command -v rsvg-convert > /dev/null 2>&1") == 0)
    return std::system(("rsvg-convert -b white -o " + quoted_png + " " + quoted_svg).c_str()) == 0;
  if (std::system("command -v convert > /dev/null 2>&1") == 0)
    return std::system(("convert " + quoted_svg + " " + quoted_png).c_str()) == 0;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  int batches = 24, compute_repeats = kComputeRepeats, trials = 0;
  std::string out_dir = "build/04-data-loading";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--batches" && i + 1 < argc) batches = std::max(2, std::atoi(argv[++i]));
    else if (arg == "--compute-repeats" && i + 1 < argc) compute_repeats = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--trials" && i + 1 < argc) trials = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--out" && i + 1 < argc) out_dir = argv[++i];
    else {
      std::fprintf(stderr, "usage: loader_benchmark [--batches N] [--compute-repeats R] [--trials T] [--out DIR]\n");
      return 2;
    }
  }
#ifdef CUDASIM
  // The modelled clock, host code free: the host's work is charged by ModelledHost, and the
  // ring carries the time across its hand-offs, so every figure is exact and repeatable.
  g_modelled = cudasim::model_time_enabled();
  if (g_modelled) cudasim::set_host_clock(cudasim::HostClock::kFree);
#endif
  if (trials == 0) trials = g_modelled ? 1 : 3;  // the modelled figures do not vary
  batches = (batches + 7) / 8 * 8;  // whole files of 8 batches
  const fs::path dir = fs::temp_directory_path() / ("course04-bench-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::vector<std::string> files;
  for (int i = 0; i < batches / 8; ++i) {
    files.push_back((dir / ("part-" + std::to_string(i) + ".dlr")).string());
    dataset::write_file(files.back(), static_cast<std::uint64_t>(i) * 8 * kBatch, 8 * kBatch, kFeatures);
  }
  const dataset::Index index = dataset::scan(files);
  std::printf("data set: %d batches of %d samples x %u bytes in %zu files (%.0f MB) in %s\n", batches, kBatch, kFeatures,
              files.size(), index.samples * dataset::record_bytes(kFeatures) / 1e6, dir.c_str());
#ifdef CUDASIM
  if (g_modelled)
    std::printf("simulator, modelled %s: every figure below is modelled. Copies take the %s link's time, the "
                "training step its modelled time, and the host reads %.0f GB/s and preprocesses %.0f GB/s per "
                "core, one core per worker (ModelledHost)\n",
                cudasim::modelled_gpu().name, cudasim::host_link().name.c_str(),
                ModelledHost::kReadBytesPerSecond / 1e9, ModelledHost::kPreprocessBytesPerSecond / 1e9);
  else
    std::printf("simulator, CPU time: copies take the modelled time of the %s link; the training step runs on the "
                "CPU\n", cudasim::host_link().name.c_str());
#endif
  if (!g_modelled) {  // what the CPU times depend on
    double load[3] = {0, 0, 0};
    std::printf("host: %u CPU threads, load average %s\n", std::thread::hardware_concurrency(),
                getloadavg(load, 3) == 3 ? (std::to_string(load[0]).substr(0, 4) + " " + std::to_string(load[1]).substr(0, 4) + " " +
                                            std::to_string(load[2]).substr(0, 4)).c_str()
                                         : "unknown");
  }
  float* d_w = nullptr;
  CUDA_CHECK(cudaMalloc(&d_w, kFeatures * sizeof(float)));
  CUDA_CHECK(cudaMemset(d_w, 0, kFeatures * sizeof(float)));
  // The fill runs on the legacy stream, which the benchmark's non-blocking streams do not wait for.
  CUDA_CHECK(cudaDeviceSynchronize());

  struct Config {
    std::string name;
    int repeats;
    std::vector<StageAlone> stages;
    std::vector<Result> results;
    struct Trial {
      StageAlone slowest;
      double stages_cpu_ms = 0;  // CPU ms per batch of all stages alone, together
      double pipeline = 0, idle = 0;
      double percent() const { return 100.0 * pipeline / slowest.samples_per_second(); }
    };
    std::vector<Trial> trials;
  };
  auto make_trial = [](const std::vector<StageAlone>& stages, const Result& overlap) {
    Config::Trial t;
    t.slowest = *std::min_element(stages.begin(), stages.end(), [](const StageAlone& a, const StageAlone& b) {
      return a.samples_per_second() < b.samples_per_second();
    });
    for (const StageAlone& s : stages) t.stages_cpu_ms += 1e3 * s.cpu / s.batches;
    t.pipeline = overlap.samples_per_second();
    t.idle = overlap.gpu_idle();
    return t;
  };
  print_bandwidth(static_cast<std::size_t>(kBatch) * index.features, 16);
  std::vector<Config> configs = {{"loading-bound", kLoadingRepeats, {}, {}, {}}, {"compute-bound", compute_repeats, {}, {}, {}}};
  const int workers = 4;
  for (Config& c : configs) {
    const bool stand_in = g_modelled && c.name == "compute-bound";
    if (stand_in) {
      c.repeats = kLoadingRepeats;  // the real work stays light; the declared FLOPs make the step
      std::printf("\n== %s: training step = a stand-in for a network's step, %.0f GFLOP per batch (declared to "
                  "the model; the kernel makes %d passes) ==\n", c.name.c_str(), kStandInStepFlops / 1e9, c.repeats);
    } else {
      std::printf("\n== %s: training step = %d passes over the batch ==\n", c.name.c_str(), c.repeats);
    }
#ifdef CUDASIM
    // One add per element per pass, or the stand-in's FLOPs.
    cudasim::declare_flops("train_step_kernel",
                           stand_in ? static_cast<std::uint64_t>(kStandInStepFlops)
                                    : static_cast<std::uint64_t>(kBatch) * kFeatures * c.repeats);
#endif
    c.stages = measure_stages(index, batches, workers, c.repeats, d_w);
    if (g_modelled) std::printf("%-40s %12s %12s\n", "stage, modelled alone", "samples/s", "ms/batch");
    else std::printf("%-40s %12s %12s %14s\n", "stage, measured alone", "samples/s", "ms/batch", "CPU ms/batch");
    for (const StageAlone& s : c.stages) {
      std::printf("%-40s %12.0f %12.2f", s.name.c_str(), s.samples_per_second(), s.ms_per_batch());
      if (!g_modelled) std::printf(" %14.2f", 1e3 * s.cpu / s.batches);
      std::printf("\n");
    }
    c.results.push_back(run("sync", index, batches, 0, 0, c.repeats, d_w));
    c.results.push_back(run("+ pinned", index, batches, 1, 0, c.repeats, d_w));
    for (int w : {1, 2, 4})
      c.results.push_back(run("+ " + std::to_string(w) + " worker" + (w > 1 ? "s" : ""), index, batches, 2, w, c.repeats, d_w));
    c.results.push_back(run("+ overlap (4 workers)", index, batches, 3, workers, c.repeats, d_w));
    std::printf("\n%-40s %12s %12s %10s\n", "loader", "samples/s", "ms/batch", "GPU idle");
    for (const Result& r : c.results)
      std::printf("%-40s %12.0f %12.2f %9.0f%%\n", r.name.c_str(), r.samples_per_second(), r.ms_per_batch(), 100.0 * r.gpu_idle());
    c.trials.push_back(make_trial(c.stages, c.results.back()));
    // More trials of (each stage alone, then the overlapped pipeline): the machine's noise.
    for (int t = 1; t < trials; ++t) {
      const std::vector<StageAlone> stages = measure_stages(index, batches, workers, c.repeats, d_w);
      const Result overlap = run("+ overlap (4 workers)", index, batches, 3, workers, c.repeats, d_w);
      c.trials.push_back(make_trial(stages, overlap));
    }
  }

  std::printf("\n== the overlapped pipeline (4 workers) against its slowest stage measured alone, %d trial%s ==\n", trials,
              trials > 1 ? "s" : "");
  std::printf("%-14s %5s %-26s %10s %10s %8s %9s", "configuration", "trial", "slowest stage (alone)", "stage/s",
              "pipeline/s", "% of it", "GPU idle");
  std::printf(g_modelled ? "\n" : " %14s\n", "CPU ms/batch*");
  for (const Config& c : configs) {
    for (std::size_t t = 0; t < c.trials.size(); ++t) {
      const Config::Trial& tr = c.trials[t];
      const std::string stage = tr.slowest.name.substr(0, tr.slowest.name.find(' '));
      std::printf("%-14s %5zu %-26s %10.0f %10.0f %7.0f%% %8.0f%%", c.name.c_str(), t + 1,
                  (stage + " (" + std::to_string(tr.slowest.ms_per_batch()).substr(0, 5) + " ms/batch)").c_str(),
                  tr.slowest.samples_per_second(), tr.pipeline, tr.percent(), 100.0 * tr.idle);
      if (!g_modelled) std::printf(" %6.2f / %5.2f", tr.stages_cpu_ms, tr.slowest.ms_per_batch());
      std::printf("\n");
    }
    std::vector<double> pct, idle;
    for (const Config::Trial& tr : c.trials) pct.push_back(tr.percent()), idle.push_back(100.0 * tr.idle);
    std::sort(pct.begin(), pct.end());
    std::sort(idle.begin(), idle.end());
    std::printf("%-14s %5s %-26s %10s %10s %7.0f%% %8.0f%%   (range %.0f-%.0f%%, idle %.0f-%.0f%%)\n", c.name.c_str(), "med.", "",
                "", "", pct[pct.size() / 2], idle[idle.size() / 2], pct.front(), pct.back(), idle.front(), idle.back());
  }
  bool claims_hold = true;
  if (g_modelled) {
    // The lesson's claims, on the modelled clock where they must hold exactly: the overlapped
    // pipeline runs at 90% or more of its slowest stage, with less GPU idle than the
    // synchronous loader. The exit status says whether they do.
    for (const Config& c : configs) {
      const double percent = c.trials.front().percent(), idle = c.trials.front().idle;
      const double sync_idle = c.results.front().gpu_idle();
      const bool holds = percent >= 90.0 && idle < sync_idle;
      claims_hold = claims_hold && holds;
      std::printf("%s: the overlapped pipeline at %.0f%% of its slowest stage (lesson: 90%% or more), GPU idle %.0f%% "
                  "against %.0f%% for the synchronous loader: %s\n", c.name.c_str(), percent, 100.0 * idle,
                  100.0 * sync_idle, holds ? "as the lesson says" : "NOT AS THE LESSON SAYS");
    }
  } else {
    std::printf("* CPU ms per batch of all stages together (each measured alone) / the slowest stage's ms per batch. On the\n"
                "  simulator the loader, the copy engine and the training step share the host's cores: where the first figure\n"
                "  exceeds what the free cores give in the second, the pipeline cannot reach its slowest stage's rate.\n");
  }

  fs::create_directories(out_dir);
  std::vector<Panel> panels;
  for (const Config& c : configs)
    for (const Result* r : {&c.results[1], &c.results.back()}) {
      char title[256];
      std::snprintf(title, sizeof title, "%s, %s: %.2f ms/batch, %.0f samples/s, GPU idle %.0f%%%s", c.name.c_str(),
                    r->name.c_str(), r->ms_per_batch(), r->samples_per_second(), 100.0 * r->gpu_idle(),
                    g_modelled ? " (modelled)" : "");
      panels.push_back({title, r});
    }
  // Every span of every run, for your own analysis.
  if (std::FILE* csv = std::fopen((out_dir + "/loader_timeline.csv").c_str(), "w")) {
    std::fprintf(csv, "configuration,loader,batch,stage,begin_ms,end_ms\n");
    for (const Config& c : configs)
      for (const Result& r : c.results)
        for (const Span& s : r.spans)
          std::fprintf(csv, "%s,%s,%d,%s,%.3f,%.3f\n", c.name.c_str(), r.name.c_str(), s.batch, kStageNames[s.stage], s.begin, s.end);
    std::fclose(csv);
  }
  const std::string svg = out_dir + "/loader_timeline.svg", png = out_dir + "/loader_timeline.png";
  write_svg(svg, panels);
  const bool have_png = write_png(svg, png);
  std::printf("\ntimeline: %s%s\n", svg.c_str(), have_png ? " and .png" : " (no PNG: install rsvg-convert or ImageMagick)");
  CUDA_CHECK(cudaFree(d_w));
  fs::remove_all(dir);
  return claims_hold ? 0 : 1;
}
