// The lesson's experiment: how fast can a training loop eat batches from disk?
//
//   ./course run lessons/04-data-loading/loader_benchmark.cu [--batches N] [--out DIR]
//
// Writes a synthetic data set (record_format.hpp) to real files in a temporary folder, then
// runs one epoch over it six ways and prints samples/s and the GPU's idle fraction:
//   sync        read, preprocess into pageable memory, cudaMemcpy, train step, wait
//   + pinned    the same into a pinned buffer
//   + W workers W threads read and preprocess ahead into a ring of pinned slots (1, 2, 4)
//   + overlap   4 workers, and copies on their own stream into 2 device slots (events)
// and draws a timeline of the last two (per batch: read, preprocess, copy, compute) as SVG,
// and PNG when gnuplot is installed. On the simulator copies take the modelled PCIe time
// (cudasim/link_model.hpp) and the training step runs on the CPU: the figures show the
// pipeline's shape, not a GPU's speed.

#include <algorithm>
#include <chrono>
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

#include <unistd.h>

#include "cuda_check.hpp"
#include "record_format.hpp"
#ifdef CUDASIM
#include <cudasim/link_model.hpp>
#endif

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kBatch = 128;          // samples per batch
constexpr std::uint32_t kFeatures = 64 * 64 * 3;  // one 64x64 RGB image per sample
constexpr int kRepeats = 2;          // the training step's weight (see the kernel)

__global__ void train_step_kernel(float* weights, const float* batch, int rows, int features, int repeats) {
  const int f = blockIdx.x * blockDim.x + threadIdx.x;
  if (f >= features) return;
  float w = weights[f];
  for (int k = 0; k < repeats; ++k) {
    float sum = 0.0f;
    for (int r = 0; r < rows; ++r) sum += batch[static_cast<long long>(r) * features + f];
    w = 0.9f * w + 0.1f * (sum / rows);
  }
  weights[f] = w;
}

/// One timed interval of one batch in one stage, in ms since the run's start.
struct Span {
  int batch;
  int stage;  // 0 read, 1 preprocess, 2 copy, 3 compute
  double begin, end;
};
const char* kStageNames[] = {"read", "preprocess", "copy", "compute"};
const char* kStageColors[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759"};

struct Timeline {
  Clock::time_point start = Clock::now();
  std::mutex mutex;
  std::vector<Span> spans;
  double now() const { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); }
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

/// A minimal prefetching ring (the reference for exercise 02, without its error handling).
class Ring {
 public:
  Ring(const dataset::Index& index, int batches, int workers, int slots, Timeline& tl)
      : index_(index), batches_(batches), slots_(slots), state_(slots, 0), tl_(tl) {
    CUDA_CHECK(cudaMallocHost(&memory_, sizeof(float) * slots * kBatch * index.features));
    for (int w = 0; w < workers; ++w) threads_.emplace_back([this] { work(); });
  }
  ~Ring() {
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
    cudaFreeHost(memory_);
  }
  float* slot(int b) { return memory_ + static_cast<std::size_t>(b % slots_) * kBatch * index_.features; }
  void wait_ready(int b) {
    std::unique_lock<std::mutex> lock(m_);
    cv_.wait(lock, [&] { return state_[b % slots_] == 2 + b; });
  }
  void release(int b) {
    {
      std::lock_guard<std::mutex> lock(m_);
      state_[b % slots_] = 0;
    }
    cv_.notify_all();
  }

 private:
  void work() {
    std::vector<std::uint8_t> raw;
    for (;;) {
      int b;
      {
        std::unique_lock<std::mutex> lock(m_);
        cv_.wait(lock, [&] { return stop_ || next_ >= batches_ || state_[next_ % slots_] == 0; });
        if (stop_ || next_ >= batches_) return;
        b = next_++;
        state_[b % slots_] = 1;
      }
      const double t0 = tl_.now();
      read_raw(index_, b, raw);
      const double t1 = tl_.now();
      preprocess(raw, index_.features, slot(b));
      tl_.add(b, 0, t0, t1);
      tl_.add(b, 1, t1, tl_.now());
      {
        std::lock_guard<std::mutex> lock(m_);
        state_[b % slots_] = 2 + b;  // ready, holding batch b
      }
      cv_.notify_all();
    }
  }
  const dataset::Index& index_;
  int batches_, slots_;
  std::vector<int> state_;  // 0 free, 1 filling, 2 + b: holds batch b
  Timeline& tl_;
  float* memory_ = nullptr;
  std::mutex m_;
  std::condition_variable cv_;
  int next_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

struct Result {
  std::string name;
  double seconds = 0, busy_ms = 0;
  std::vector<Span> spans;
};

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
Result run(const std::string& name, const dataset::Index& index, int batches, int mode, int workers, float* d_w) {
  Result res;
  res.name = name;
  Timeline tl;
  const std::size_t floats = static_cast<std::size_t>(kBatch) * index.features;
  const int depth = 2;
  float* d_x[depth];
  for (auto& p : d_x) CUDA_CHECK(cudaMalloc(&p, floats * sizeof(float)));
  cudaStream_t copy_s, comp_s;
  CUDA_CHECK(cudaStreamCreateWithFlags(&copy_s, cudaStreamNonBlocking));
  CUDA_CHECK(cudaStreamCreateWithFlags(&comp_s, cudaStreamNonBlocking));
  std::vector<cudaEvent_t> c0(batches), c1(batches), k0(batches), k1(batches);
  for (int b = 0; b < batches; ++b)
    for (auto* e : {&c0[b], &c1[b], &k0[b], &k1[b]}) CUDA_CHECK(cudaEventCreate(e));
  DeviceClock clock(tl);
  const auto t_start = Clock::now();
  const int threads = 256, blocks = (static_cast<int>(index.features) + threads - 1) / threads;
  if (mode <= 1) {
    std::vector<float> pageable(mode == 0 ? floats : 0);
    float* pinned = nullptr;
    if (mode == 1) CUDA_CHECK(cudaMallocHost(&pinned, floats * sizeof(float)));
    float* host = mode == 0 ? pageable.data() : pinned;
    std::vector<std::uint8_t> raw;
    for (int b = 0; b < batches; ++b) {
      const double t0 = tl.now();
      read_raw(index, b, raw);
      const double t1 = tl.now();
      preprocess(raw, index.features, host);
      tl.add(b, 0, t0, t1);
      tl.add(b, 1, t1, tl.now());
      CUDA_CHECK(cudaEventRecord(c0[b], comp_s));
      CUDA_CHECK(cudaMemcpyAsync(d_x[0], host, floats * sizeof(float), cudaMemcpyHostToDevice, comp_s));
      CUDA_CHECK(cudaEventRecord(c1[b], comp_s));
      CUDA_CHECK(cudaEventRecord(k0[b], comp_s));
      train_step_kernel<<<blocks, threads, 0, comp_s>>>(d_w, d_x[0], kBatch, index.features, kRepeats);
      CUDA_CHECK_LAUNCH();
      CUDA_CHECK(cudaEventRecord(k1[b], comp_s));
      CUDA_CHECK(cudaStreamSynchronize(comp_s));
    }
    if (pinned) CUDA_CHECK(cudaFreeHost(pinned));
  } else {
    Ring ring(index, batches, workers, 4, tl);
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
      train_step_kernel<<<blocks, threads, 0, comp_s>>>(d_w, d_x[s], kBatch, index.features, kRepeats);
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
  res.seconds = std::chrono::duration<double>(Clock::now() - t_start).count();
  for (int b = 0; b < batches; ++b) {
    tl.add(b, 2, clock.at(c0[b]), clock.at(c1[b]));
    tl.add(b, 3, clock.at(k0[b]), clock.at(k1[b]));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, k0[b], k1[b]));
    res.busy_ms += ms;
    for (auto e : {c0[b], c1[b], k0[b], k1[b]}) CUDA_CHECK(cudaEventDestroy(e));
  }
  res.spans = tl.spans;
  for (auto& p : d_x) CUDA_CHECK(cudaFree(p));
  CUDA_CHECK(cudaStreamDestroy(copy_s));
  CUDA_CHECK(cudaStreamDestroy(comp_s));
  return res;
}

/// Draws the spans of each result as one panel of horizontal bars (one row per stage).
void write_svg(const std::string& path, const std::vector<const Result*>& results) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return;
  double t_max = 0;
  for (auto* r : results)
    for (auto& s : r->spans) t_max = std::max(t_max, s.end);
  const double W = 1000, left = 170, row = 18, panel = 4 * row + 40;
  std::fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' height='%.0f' font-family='sans-serif' font-size='12'>\n",
               W + 20, 40 + panel * results.size());
  std::fprintf(f, "<rect width='100%%' height='100%%' fill='white'/>\n<text x='10' y='20' font-size='14'>Timeline per batch "
               "(ms): read, preprocess, copy, compute</text>\n");
  for (std::size_t p = 0; p < results.size(); ++p) {
    const double y0 = 40 + p * panel;
    std::fprintf(f, "<text x='10' y='%.0f' font-weight='bold'>%s</text>\n", y0 + 12, results[p]->name.c_str());
    for (int st = 0; st < 4; ++st) {
      const double y = y0 + 20 + st * row;
      std::fprintf(f, "<text x='20' y='%.0f'>%s</text>\n", y + 12, kStageNames[st]);
      for (auto& s : results[p]->spans) {
        if (s.stage != st) continue;
        const double x = left + (W - left) * s.begin / t_max, w = std::max(1.0, (W - left) * (s.end - s.begin) / t_max);
        std::fprintf(f, "<rect x='%.1f' y='%.0f' width='%.1f' height='%.0f' fill='%s' stroke='white' stroke-width='0.5'/>\n",
                     x, y, w, row - 4, kStageColors[st]);
      }
    }
  }
  std::fprintf(f, "<text x='%.0f' y='%.0f'>0 ms</text><text x='%.0f' y='%.0f' text-anchor='end'>%.0f ms</text>\n</svg>\n",
               left, 30 + panel * results.size(), W, 30 + panel * results.size(), t_max);
  std::fclose(f);
}

/// The same picture through gnuplot (when installed): one box per span.
void write_png(const std::string& dir, const std::vector<const Result*>& results) {
  if (std::system("command -v gnuplot > /dev/null 2>&1") != 0) return;
  const std::string data = dir + "/loader_timeline.dat", script = dir + "/loader_timeline.gp";
  std::FILE* d = std::fopen(data.c_str(), "w");
  if (!d) return;
  for (std::size_t p = 0; p < results.size(); ++p)
    for (auto& s : results[p]->spans)  // x_begin x_end y_low y_high color
      std::fprintf(d, "%.3f %.3f %.2f %.2f %d\n", s.begin, s.end, p * 5.0 + (3 - s.stage) + 0.1, p * 5.0 + (3 - s.stage) + 0.9, s.stage);
  std::fclose(d);
  std::FILE* g = std::fopen(script.c_str(), "w");
  std::fprintf(g, "set terminal pngcairo size 1200,%d\nset output '%s/loader_timeline.png'\n", 160 + 150 * int(results.size()), dir.c_str());
  std::fprintf(g, "set title 'Timeline per batch: read, preprocess, copy, compute'\nset xlabel 'ms'\nunset key\n");
  std::fprintf(g, "set palette defined (0 '%s', 1 '%s', 2 '%s', 3 '%s')\nset cbrange [0:3]\nunset colorbox\n", kStageColors[0],
               kStageColors[1], kStageColors[2], kStageColors[3]);
  std::string tics;
  for (std::size_t p = 0; p < results.size(); ++p)
    for (int st = 0; st < 4; ++st)
      tics += (tics.empty() ? "" : ", ") + std::string("'") + results[p]->name + ": " + kStageNames[st] + "' " +
              std::to_string(p * 5.0 + (3 - st) + 0.5);
  std::fprintf(g, "set ytics (%s)\nset yrange [-0.5:%f]\n", tics.c_str(), results.size() * 5.0 - 0.5);
  std::fprintf(g, "plot '%s' using (($1+$2)/2):(($3+$4)/2):(($2-$1)/2):(($4-$3)/2):5 with boxxyerror fs solid 1.0 noborder lc palette\n",
               data.c_str());
  std::fclose(g);
  if (std::system(("gnuplot '" + script + "'").c_str()) != 0) std::fprintf(stderr, "gnuplot failed; the SVG is there\n");
}

}  // namespace

int main(int argc, char** argv) {
  int batches = 24;
  std::string out_dir = "build/04-data-loading";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--batches" && i + 1 < argc) batches = std::max(2, std::atoi(argv[++i]));
    else if (arg == "--out" && i + 1 < argc) out_dir = argv[++i];
    else {
      std::fprintf(stderr, "usage: loader_benchmark [--batches N] [--out DIR]\n");
      return 2;
    }
  }
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
  std::printf("simulator: copies take the modelled time of the %s link; the training step runs on the CPU\n",
              cudasim::host_link().name.c_str());
#endif
  float* d_w = nullptr;
  CUDA_CHECK(cudaMalloc(&d_w, kFeatures * sizeof(float)));
  CUDA_CHECK(cudaMemset(d_w, 0, kFeatures * sizeof(float)));
  std::vector<Result> results;
  results.push_back(run("sync", index, batches, 0, 0, d_w));
  results.push_back(run("+ pinned", index, batches, 1, 0, d_w));
  for (int w : {1, 2, 4}) results.push_back(run("+ " + std::to_string(w) + " worker" + (w > 1 ? "s" : ""), index, batches, 2, w, d_w));
  results.push_back(run("+ overlap (4 workers)", index, batches, 3, 4, d_w));
  std::printf("\n%-24s %12s %12s %10s\n", "loader", "samples/s", "ms/batch", "GPU idle");
  for (const Result& r : results)
    std::printf("%-24s %12.0f %12.2f %9.0f%%\n", r.name.c_str(), batches * kBatch / r.seconds, 1e3 * r.seconds / batches,
                100.0 * std::max(0.0, 1.0 - r.busy_ms / (1e3 * r.seconds)));
  fs::create_directories(out_dir);
  const std::vector<const Result*> drawn = {&results[1], &results[4], &results[5]};
  write_svg(out_dir + "/loader_timeline.svg", drawn);
  write_png(out_dir, drawn);
  std::printf("\ntimeline: %s/loader_timeline.svg%s\n", out_dir.c_str(),
              fs::exists(out_dir + "/loader_timeline.png") ? " and .png" : "");
  CUDA_CHECK(cudaFree(d_w));
  fs::remove_all(dir);
  return 0;
}
