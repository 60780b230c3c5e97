// The lesson's experiment: predicted vs measured step time of data, tensor and pipeline
// parallelism for a model size of your choice, over NVLink and over PCIe.
//
//   ./course run lessons/05-parallelism-nvlink/parallelism_experiment.cu [LAYERS HIDDEN BATCH]
//   options: --layers L (8)  --hidden H (512)  --batch B (64)  --ranks N (simulator: 4; GPU:
//            every visible GPU, at least 2 ranks)  --micro M (8, pipeline micro-batches)
//            --gpu H100|H200|A100 (FP32 peak for the compute prediction; GPU: the one found)
//            --links nvlink4,pcie4 (simulator: the peer-link models to compare)
//            --out PREFIX (build/parallelism_experiment)
//
// The model: L layers y = relu(W x + b), W of H x H, fp32, batch B, loss 1/(2B)|y - t|².
// One SGD training step (forward, backward, update) is run three ways on N ranks (ranks.hpp):
//   DP  every rank holds the whole model and B/N samples; one ring all-reduce of all
//       L(H²+H) gradients per step (the ring of exercise 02, written out below);
//   TP  layers in Megatron pairs: the first column-parallel, the second row-parallel (each
//       rank owns H/N hidden units); one all-reduce of B x H activations per pair forward
//       and one per pair backward (none for the input of the first pair);
//   PP  stage s holds L/N consecutive layers; the batch is cut into M micro-batches of B/M
//       rows; GPipe order; each boundary passes B/M x H activations forward and as many
//       gradients backward per micro-batch (the same bubble as 1F1B).
// All three start from the same weights and data, so their losses must agree (printed).
//
// Prediction, from the volume each scheme moves over the link:
//   communication = messages x latency + bytes / bandwidth, for the busiest rank's outgoing
//                   link (each device has one engine for its outgoing copies);
//   compute       = FLOPs / FP32 peak: 6·B·H²·L for the step, /N per rank (DP, TP), and for
//                   PP per stage x (M+N-1)/M (the bubble);
//   step          = compute + communication (DP, TP: nothing overlaps here), for PP compute
//                   + the 2(N-1) messages of filling and draining the pipeline.
// Measurement: CUDA events around every peer copy, on the stream that sends it, after the
// copy's waits: the time each link is busy, summed per rank, the busiest rank's sum reported;
// and events around the whole step (after a device-side barrier) for the step. A ring step's
// sends are queued together (they run at once); the pipeline's run on a second stream per
// stage, so that they overlap the stage's next micro-batch.
//
// On the simulator (cudasim), `./course run` turns on its modelled clock for this program (as
// --model-time does; it also builds the kernels with the counters their modelled times come
// from; --wall-time keeps CPU time), and the times are the modelled timeline's
// (cudasim/timeline.hpp) with host code free: a copy takes latency + bytes / rate of its link
// model (cudasim/link_model.hpp), a kernel its modelled time on the simulator's GPU (`--gpu`
// of ./course run, default H100, which this program's --gpu then defaults to), and the figures
// are the same on any machine. Without it they are CPU times: a copy takes the link model's
// time in wall time plus the simulator's own overhead, and the compute says nothing about a
// GPU. The link counters
// (cudasim::link_stats) are checked against the bytes the table predicts.
// On a GPU there is one link, whatever connects the devices (or one device shared by all
// ranks): its bandwidth and latency are measured first with a large and a small copy between
// ranks 0 and 1, and the topology (devices, peer access) is printed.
//
// Writes PREFIX.dat (the table), PREFIX.svg (drawn by this program) and, with gnuplot, PREFIX.png.

#include <cuda_runtime.h>

#include "cuda_check.hpp"
#include "ranks.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#ifdef CUDASIM
#include <cudasim/link_model.hpp>
#include <cudasim/timeline.hpp>
#endif

namespace {

constexpr int kThreads = 128;
unsigned blocks_for(std::size_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

// ---------------------------------------------------------------------------------------
// Kernels: one thread per output value (as in the exercises). W is outs x ins, row-major.

/// y[r][o] = act(Σ_i W[o][i] x[r][i] + (b ? b[o] : 0)); act = relu when `relu`.
__global__ void linear_forward(const float* x, const float* w, const float* b, float* y, int rows, int ins,
                               int outs, bool relu) {
  const std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (k >= static_cast<std::size_t>(rows) * outs) return;
  const int r = static_cast<int>(k / outs), o = static_cast<int>(k % outs);
  float sum = b != nullptr ? b[o] : 0.0f;
  const float* wo = w + static_cast<std::size_t>(o) * ins;
  const float* xr = x + static_cast<std::size_t>(r) * ins;
  for (int i = 0; i < ins; ++i) sum += wo[i] * xr[i];
  y[k] = relu && sum < 0.0f ? 0.0f : sum;
}

/// dpre = y > 0 ? dy : 0 (relu's derivative, from its output).
__global__ void relu_backward(const float* y, const float* dy, float* dpre, std::size_t n) {
  const std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (k < n) dpre[k] = y[k] > 0.0f ? dy[k] : 0.0f;
}

/// dx[r][i] = Σ_o W[o][i] dpre[r][o].
__global__ void linear_backward_x(const float* w, const float* dpre, float* dx, int rows, int ins, int outs) {
  const std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (k >= static_cast<std::size_t>(rows) * ins) return;
  const int r = static_cast<int>(k / ins), i = static_cast<int>(k % ins);
  float sum = 0.0f;
  for (int o = 0; o < outs; ++o)
    sum += w[static_cast<std::size_t>(o) * ins + i] * dpre[static_cast<std::size_t>(r) * outs + o];
  dx[k] = sum;
}

/// dW[o][i] += Σ_r dpre[r][o] x[r][i]; db[o] += Σ_r dpre[r][o] (one thread per parameter).
__global__ void linear_backward_w(const float* x, const float* dpre, float* dw, float* db, int rows, int ins,
                                  int outs) {
  const std::size_t p = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  const std::size_t weights = static_cast<std::size_t>(outs) * ins;
  if (p >= weights + outs) return;
  const int o = static_cast<int>(p < weights ? p / ins : p - weights);
  float sum = 0.0f;
  for (int r = 0; r < rows; ++r) {
    const float d = dpre[static_cast<std::size_t>(r) * outs + o];
    sum += p < weights ? d * x[static_cast<std::size_t>(r) * ins + p % ins] : d;
  }
  if (p < weights) dw[p] += sum;
  else db[o] += sum;
}

/// y = relu(y + b) per row (the row-parallel layer's bias and activation, after the all-reduce).
__global__ void bias_relu(float* y, const float* b, int rows, int outs) {
  const std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (k >= static_cast<std::size_t>(rows) * outs) return;
  const float v = y[k] + b[k % outs];
  y[k] = v > 0.0f ? v : 0.0f;
}

/// dy = scale · (y - t).
__global__ void loss_grad(const float* y, const float* t, float* dy, std::size_t n, float scale) {
  const std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (k < n) dy[k] = scale * (y[k] - t[k]);
}

__global__ void add_into(float* dst, const float* src, std::size_t n) {
  const std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (k < n) dst[k] += src[k];
}

__global__ void sgd(float* p, const float* g, std::size_t n, float lr) {
  const std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (k < n) p[k] -= lr * g[k];
}

// Host wrappers: queue on rank r's stream.
struct Ops {
  course::RankGroup& g;
  float lr;  ///< the SGD step's learning rate (0 for a pass that must leave the parameters as they are)
  void fwd(int r, const float* x, const float* w, const float* b, float* y, int rows, int ins, int outs, bool relu) {
    if (rows == 0 || outs == 0) return;
    course::DeviceGuard guard(g.device(r));
    linear_forward<<<blocks_for(std::size_t(rows) * outs), kThreads, 0, g.stream(r)>>>(x, w, b, y, rows, ins, outs, relu);
    CUDA_CHECK_LAUNCH();
  }
  void relu_bwd(int r, const float* y, const float* dy, float* dpre, std::size_t n) {
    if (n == 0) return;
    course::DeviceGuard guard(g.device(r));
    relu_backward<<<blocks_for(n), kThreads, 0, g.stream(r)>>>(y, dy, dpre, n);
    CUDA_CHECK_LAUNCH();
  }
  void bwd_x(int r, const float* w, const float* dpre, float* dx, int rows, int ins, int outs) {
    if (rows == 0 || ins == 0) return;
    course::DeviceGuard guard(g.device(r));
    linear_backward_x<<<blocks_for(std::size_t(rows) * ins), kThreads, 0, g.stream(r)>>>(w, dpre, dx, rows, ins, outs);
    CUDA_CHECK_LAUNCH();
  }
  void bwd_w(int r, const float* x, const float* dpre, float* dw, float* db, int rows, int ins, int outs) {
    if (outs == 0) return;
    course::DeviceGuard guard(g.device(r));
    const std::size_t params = std::size_t(outs) * ins + outs;
    linear_backward_w<<<blocks_for(params), kThreads, 0, g.stream(r)>>>(x, dpre, dw, db, rows, ins, outs);
    CUDA_CHECK_LAUNCH();
  }
  void bias_act(int r, float* y, const float* b, int rows, int outs) {
    course::DeviceGuard guard(g.device(r));
    bias_relu<<<blocks_for(std::size_t(rows) * outs), kThreads, 0, g.stream(r)>>>(y, b, rows, outs);
    CUDA_CHECK_LAUNCH();
  }
  void dloss(int r, const float* y, const float* t, float* dy, std::size_t n, float scale) {
    if (n == 0) return;
    course::DeviceGuard guard(g.device(r));
    loss_grad<<<blocks_for(n), kThreads, 0, g.stream(r)>>>(y, t, dy, n, scale);
    CUDA_CHECK_LAUNCH();
  }
  void add(int r, float* dst, const float* src, std::size_t n) {
    if (n == 0) return;
    course::DeviceGuard guard(g.device(r));
    add_into<<<blocks_for(n), kThreads, 0, g.stream(r)>>>(dst, src, n);
    CUDA_CHECK_LAUNCH();
  }
  void update(int r, float* p, const float* grad, std::size_t n, float lr) {
    if (n == 0) return;
    course::DeviceGuard guard(g.device(r));
    sgd<<<blocks_for(n), kThreads, 0, g.stream(r)>>>(p, grad, n, lr);
    CUDA_CHECK_LAUNCH();
  }
  void zero(int r, float* p, std::size_t n) {
    if (n == 0) return;
    course::DeviceGuard guard(g.device(r));
    CUDA_CHECK(cudaMemsetAsync(p, 0, n * sizeof(float), g.stream(r)));
  }
};

// ---------------------------------------------------------------------------------------
// Peer copies with the time each one keeps its link busy.

/// `group.put`, with CUDA events on the sender's stream around the copy itself (after the
/// wait for the receiver): the link's busy time, summed per sending rank. Several copies that
/// may run at once (a ring's step) go through `send` together.
class TimedLinks {
 public:
  struct Message {
    int from;
    const float* src;
    int to;
    float* dst;
    std::size_t count;
  };
  explicit TimedLinks(course::RankGroup& g)
      : g_(g), free_(g.size(), nullptr), sides_(g.size()), events_(g.size()), used_(g.size(), 0), bytes_(g.size(), 0),
        messages_(g.size(), 0) {}
  ~TimedLinks() {
    for (int r = 0; r < g_.size(); ++r) {
      course::DeviceGuard guard(g_.device(r));
      if (free_[r]) cudaEventDestroy(free_[r]);
      if (sides_[r].stream) {
        cudaStreamDestroy(sides_[r].stream);
        cudaEventDestroy(sides_[r].ready);
        cudaEventDestroy(sides_[r].done);
      }
      for (auto& e : events_[r]) {
        cudaEventDestroy(e.first);
        cudaEventDestroy(e.second);
      }
    }
  }
  void reset() {
    std::fill(used_.begin(), used_.end(), 0);
    std::fill(bytes_.begin(), bytes_.end(), 0);
    std::fill(messages_.begin(), messages_.end(), 0);
  }
  /// One peer copy of `count` floats: `send`'s rules for one message.
  void put(int from, const float* src, int to, float* dst, std::size_t count) {
    send({{from, src, to, dst, count}});
  }
  /// Peer copies that may run at the same time, as one step of a ring does: each sender first
  /// waits until its receiver no longer uses the destination (as the receiver's stream stood
  /// before any of these copies was queued), then copies; only then does each receiver wait for
  /// its data. Waiting for the receiver inside each put instead would chain the ring's sends
  /// one after another, each behind the previous rank's send and add.
  void send(const std::vector<Message>& messages) {
    for (const Message& m : messages) {
      course::DeviceGuard guard(g_.device(m.to));
      CUDA_CHECK(cudaEventRecord(free_event(m.to), g_.stream(m.to)));
    }
    for (const Message& m : messages) {
      course::DeviceGuard guard(g_.device(m.from));
      if (m.from != m.to) CUDA_CHECK(cudaStreamWaitEvent(g_.stream(m.from), free_event(m.to), 0));
      timed_copy(g_.stream(m.from), m.from, m.src, m.to, m.dst, m.count);
    }
    for (const Message& m : messages) g_.wait(m.to, m.from);  // the receiver sees the data
  }
  /// A peer copy that overlaps the sender's compute, as pipeline stages send activations
  /// while they compute the next micro-batch: it runs on the sender's second stream once the
  /// data is ready, and the receiver waits for it. It does not wait for the receiver: the
  /// caller guarantees that nothing on rank `to` still uses `dst` (the pipeline gives each
  /// micro-batch its own slot, and synchronises between steps).
  void put_overlapped(int from, const float* src, int to, float* dst, std::size_t count) {
    Side& side = side_of(from);
    course::DeviceGuard guard(g_.device(from));
    CUDA_CHECK(cudaEventRecord(side.ready, g_.stream(from)));
    CUDA_CHECK(cudaStreamWaitEvent(side.stream, side.ready, 0));
    timed_copy(side.stream, from, src, to, dst, count);
    CUDA_CHECK(cudaEventRecord(side.done, side.stream));
    course::DeviceGuard receiver(g_.device(to));
    CUDA_CHECK(cudaStreamWaitEvent(g_.stream(to), side.done, 0));
  }
  /// After synchronising: the largest over ranks of the summed copy times, in seconds.
  double busiest_seconds() const {
    double worst = 0;
    for (int r = 0; r < g_.size(); ++r) {
      double sum = 0;
      for (std::size_t i = 0; i < used_[r]; ++i) {
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, events_[r][i].first, events_[r][i].second));
        sum += ms * 1e-3;
      }
      worst = std::max(worst, sum);
    }
    return worst;
  }
  double busiest_bytes() const { return double(*std::max_element(bytes_.begin(), bytes_.end())); }
  double total_bytes() const {
    double s = 0;
    for (auto b : bytes_) s += double(b);
    return s;
  }

 private:
  /// A rank's second stream, for copies that overlap its compute, and its two markers.
  struct Side {
    cudaStream_t stream = nullptr;
    cudaEvent_t ready = nullptr, done = nullptr;
  };
  Side& side_of(int r) {
    Side& side = sides_[r];
    if (!side.stream) {
      course::DeviceGuard guard(g_.device(r));
      CUDA_CHECK(cudaStreamCreateWithFlags(&side.stream, cudaStreamNonBlocking));
      CUDA_CHECK(cudaEventCreateWithFlags(&side.ready, cudaEventDisableTiming));
      CUDA_CHECK(cudaEventCreateWithFlags(&side.done, cudaEventDisableTiming));
    }
    return side;
  }
  /// The copy itself on `stream` (rank `from`'s device current), between two timing events.
  void timed_copy(cudaStream_t stream, int from, const float* src, int to, float* dst, std::size_t count) {
    if (used_[from] == events_[from].size()) {
      std::pair<cudaEvent_t, cudaEvent_t> e;
      CUDA_CHECK(cudaEventCreate(&e.first));
      CUDA_CHECK(cudaEventCreate(&e.second));
      events_[from].push_back(e);
    }
    const auto& e = events_[from][used_[from]++];
    CUDA_CHECK(cudaEventRecord(e.first, stream));
    if (count > 0)
      CUDA_CHECK(cudaMemcpyPeerAsync(dst, g_.device(to), src, g_.device(from), count * sizeof(float), stream));
    CUDA_CHECK(cudaEventRecord(e.second, stream));
    bytes_[from] += count * sizeof(float);
    messages_[from] += 1;
  }

  /// Rank r's "destination free" marker, recorded on its stream by `send` (created on first use).
  cudaEvent_t free_event(int r) {
    if (!free_[r]) {
      course::DeviceGuard guard(g_.device(r));
      CUDA_CHECK(cudaEventCreateWithFlags(&free_[r], cudaEventDisableTiming));
    }
    return free_[r];
  }

  course::RankGroup& g_;
  std::vector<cudaEvent_t> free_;
  std::vector<Side> sides_;
  std::vector<std::vector<std::pair<cudaEvent_t, cudaEvent_t>>> events_;
  std::vector<std::size_t> used_;
  std::vector<std::size_t> bytes_, messages_;
};

/// The ring all-reduce of exercise 02 (reduce-scatter, then all-gather), over TimedLinks:
/// each of its 2(N-1) steps sends one chunk from every rank to the next at the same time.
void ring_allreduce(course::RankGroup& g, Ops& ops, TimedLinks& links, course::SymmetricBuffer<float>& data,
                    std::size_t offset, std::size_t count, course::SymmetricBuffer<float>& scratch) {
  const int n = g.size();
  if (n == 1 || count == 0) return;
  auto chunk = [&](int c) { return course::part_of(count, n, ((c % n) + n) % n); };
  std::vector<TimedLinks::Message> step;
  for (int s = 0; s < n - 1; ++s) {
    step.clear();
    for (int r : g.local_ranks()) {
      const int next = (r + 1) % n;
      const course::Part c = chunk(r - s);
      step.push_back({r, data.on(r) + offset + c.begin, next, scratch.on(next), c.size()});
    }
    links.send(step);
    for (int r : g.local_ranks()) {  // each receiver adds the chunk it was sent to its own
      const int next = (r + 1) % n;
      const course::Part c = chunk(r - s);
      ops.add(next, data.on(next) + offset + c.begin, scratch.on(next), c.size());
    }
  }
  for (int s = 0; s < n - 1; ++s) {
    step.clear();
    for (int r : g.local_ranks()) {
      const int next = (r + 1) % n;
      const course::Part c = chunk(r + 1 - s);
      step.push_back({r, data.on(r) + offset + c.begin, next, data.on(next) + offset + c.begin, c.size()});
    }
    links.send(step);
  }
}

// ---------------------------------------------------------------------------------------
// The model, its data, and the three schemes

struct Model {
  int L, H, B;
  std::size_t layer_params() const { return std::size_t(H) * H + H; }
  std::size_t params() const { return layer_params() * L; }
  double flops() const { return 6.0 * B * double(H) * H * L; }  // forward 2, backward 4 per MAC
};

struct HostData {
  std::vector<float> params, x, t;  // params: per layer W (H x H) then b (H)
};

HostData make_data(const Model& m) {
  std::mt19937 rng(2024);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  HostData d;
  d.params.resize(m.params());
  const float scale = std::sqrt(6.0f / float(m.H));  // keeps the activations' size from layer to layer
  for (int l = 0; l < m.L; ++l) {
    float* w = d.params.data() + l * m.layer_params();
    for (std::size_t i = 0; i < std::size_t(m.H) * m.H; ++i) w[i] = scale * u(rng);
    for (int i = 0; i < m.H; ++i) w[std::size_t(m.H) * m.H + i] = 0.1f * u(rng);
  }
  d.x.resize(std::size_t(m.B) * m.H);
  d.t.resize(std::size_t(m.B) * m.H);
  for (auto& v : d.x) v = u(rng);
  for (auto& v : d.t) v = 0.5f * (u(rng) + 1.0f);
  return d;
}

struct Measured {
  double comm_s = 0, floor_s = 0, step_s = 0, busiest_bytes = 0, total_bytes = 0, loss = 0;
  double compute_s = 0;  ///< modelled time only: the whole step with links that take no time
#ifdef CUDASIM
  std::vector<cudasim::TimelineSpan> step_spans;  ///< modelled time only: the timed step's device work
#endif
};

/// Events around a whole step on rank 0, after a device-side barrier.
struct StepTimer {
  course::RankGroup& g;
  cudaEvent_t start{}, stop{};
  explicit StepTimer(course::RankGroup& group) : g(group) {
    course::DeviceGuard guard(g.device(0));
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
  }
  ~StepTimer() {
    course::DeviceGuard guard(g.device(0));
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  void begin() {
    g.synchronize();
    g.barrier();
    course::DeviceGuard guard(g.device(0));
    CUDA_CHECK(cudaEventRecord(start, g.stream(0)));
  }
  double end() {
    g.barrier();
    {
      course::DeviceGuard guard(g.device(0));
      CUDA_CHECK(cudaEventRecord(stop, g.stream(0)));
    }
    g.synchronize();
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    return ms * 1e-3;
  }
};

/// The communication alone (the step's copies and all-reduce adds, no layer kernels), once to
/// warm up and once timed, so that no compute competes with the copies; on the simulator once
/// more with the link model "none": in CPU time the same copies (the simulator's floor), on
/// the modelled timeline the whole step (its compute alone, the parameters left unchanged);
/// then the whole step, timed with events around it. Each pass crosses the links: 3 (GPU) or
/// 4 (simulator) times the traffic.
template <typename Step>
void measure(course::RankGroup& g, Ops& ops, TimedLinks& links, StepTimer& timer, Step& queue_step,
             Measured& out) {
  queue_step(false);
  g.synchronize();
  links.reset();
  queue_step(false);
  g.synchronize();
  out.comm_s = links.busiest_seconds();
  out.busiest_bytes = links.busiest_bytes();
  out.total_bytes = links.total_bytes();
#ifdef CUDASIM
  const cudasim::LinkModel model = cudasim::peer_link();
  cudasim::set_peer_link("none");
  links.reset();
  if (cudasim::model_time_enabled()) {
    const float lr = ops.lr;
    ops.lr = 0;
    timer.begin();
    queue_step(true);
    out.compute_s = timer.end();
    ops.lr = lr;
  } else {
    // The simulator's own cost of the same copies with no link time at all: thread
    // hand-offs and the CPU's memcpy. What the model adds comes on top.
    queue_step(false);
    g.synchronize();
    out.floor_s = links.busiest_seconds();
  }
  cudasim::set_peer_link(model.name);
#endif
  links.reset();
  timer.begin();
#ifdef CUDASIM
  cudasim::reset_timeline();  // from here, the timed step's spans only (after begin()'s synchronisation)
#endif
  queue_step(true);
  out.step_s = timer.end();
#ifdef CUDASIM
  if (cudasim::model_time_enabled())
    for (cudasim::TimelineSpan& span : cudasim::timeline())
      if (span.device >= 0) out.step_spans.push_back(std::move(span));
#endif
}

double loss_of(const std::vector<float>& y, const std::vector<float>& t, std::size_t begin, std::size_t n) {
  double s = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double d = double(y[i]) - double(t[begin + i]);
    s += d * d;
  }
  return s;
}

const float kLr = 0.01f;

/// Data parallelism: replicas, B/N samples each, one all-reduce of the gradients.
Measured run_dp(course::RankGroup& g, const Model& m, const HostData& d) {
  const int n = g.size();
  const std::size_t P = m.params(), LP = m.layer_params();
  const int max_rows = int(course::part_of(m.B, n, n - 1).size()) + 1;
  course::SymmetricBuffer<float> params(g, P), grad(g, P), scratch(g, P / n + 1), x(g, d.x.size()), t(g, d.t.size());
  course::SymmetricBuffer<float> acts(g, std::size_t(m.L + 1) * max_rows * m.H), dy(g, std::size_t(max_rows) * m.H),
      dpre(g, std::size_t(max_rows) * m.H);
  params.upload_all(d.params);
  x.upload_all(d.x);
  t.upload_all(d.t);
  Ops ops{g, kLr};
  TimedLinks links(g);
  StepTimer timer(g);
  std::vector<std::size_t> slab(n);
  auto queue_step = [&](bool compute) {
    for (int r : g.local_ranks()) {
      const course::Part shard = course::part_of(m.B, n, r);
      const int rows = int(shard.size());
      const std::size_t slot = std::size_t(rows) * m.H;
      float* a = acts.on(r);
      ops.zero(r, grad.on(r), P);
      if (!compute) continue;
      CUDA_CHECK(cudaMemcpyAsync(a, x.on(r) + shard.begin * m.H, slot * sizeof(float), cudaMemcpyDeviceToDevice,
                                 g.stream(r)));
      for (int l = 0; l < m.L; ++l)
        ops.fwd(r, a + l * slot, params.on(r) + l * LP, params.on(r) + l * LP + std::size_t(m.H) * m.H,
                a + (l + 1) * slot, rows, m.H, m.H, true);
      ops.dloss(r, a + m.L * slot, t.on(r) + shard.begin * m.H, dy.on(r), slot, 1.0f / m.B);
      for (int l = m.L - 1; l >= 0; --l) {
        ops.relu_bwd(r, a + (l + 1) * slot, dy.on(r), dpre.on(r), slot);
        ops.bwd_w(r, a + l * slot, dpre.on(r), grad.on(r) + l * LP, grad.on(r) + l * LP + std::size_t(m.H) * m.H,
                  rows, m.H, m.H);
        if (l > 0) ops.bwd_x(r, params.on(r) + l * LP, dpre.on(r), dy.on(r), rows, m.H, m.H);
      }
    }
    ring_allreduce(g, ops, links, grad, 0, P, scratch);
    for (int r : g.local_ranks()) ops.update(r, params.on(r), grad.on(r), P, ops.lr);
  };
  Measured out;
  measure(g, ops, links, timer, queue_step, out);
  for (int r = 0; r < n; ++r) {
    const course::Part shard = course::part_of(m.B, n, r);
    const auto a = acts.download(r);
    out.loss += loss_of(std::vector<float>(a.begin() + std::size_t(m.L) * shard.size() * m.H, a.end()), d.t,
                        shard.begin * m.H, shard.size() * m.H);
  }
  out.loss /= 2.0 * m.B;
  return out;
}

/// Tensor parallelism: layer pairs, column- then row-parallel; one all-reduce of B x H per
/// pair forward, one per pair backward (but the first pair's).
Measured run_tp(course::RankGroup& g, const Model& m, const HostData& d) {
  const int n = g.size(), pairs = m.L / 2, H = m.H, B = m.B;
  const std::size_t act = std::size_t(B) * H;
  const int hmax = int(course::part_of(H, n, n - 1).size()) + 1;
  // Per rank and pair: A (hs x H), a (hs), Bw (H x hs), b (H): at most this many floats.
  const std::size_t per_pair = std::size_t(hmax) * H * 2 + hmax + H;
  course::SymmetricBuffer<float> params(g, per_pair * pairs), grad(g, per_pair * pairs), x(g, act), t(g, act);
  course::SymmetricBuffer<float> acts(g, act * (pairs + 1)), hid(g, std::size_t(B) * hmax * pairs),
      dy(g, act), dz(g, act), dh(g, std::size_t(B) * hmax), scratch(g, act / n + 1);
  for (int r = 0; r < n; ++r) {
    const course::Part p = course::part_of(H, n, r);
    const int hs = int(p.size());
    std::vector<float> mine(per_pair * pairs, 0.0f);
    for (int k = 0; k < pairs; ++k) {
      const float* w1 = d.params.data() + (2 * k) * m.layer_params();
      const float* w2 = d.params.data() + (2 * k + 1) * m.layer_params();
      float* A = mine.data() + k * per_pair;
      float* a = A + std::size_t(hs) * H;
      float* Bw = a + hs;
      float* b = Bw + std::size_t(H) * hs;
      for (int j = 0; j < hs; ++j) {
        for (int i = 0; i < H; ++i) A[std::size_t(j) * H + i] = w1[std::size_t(p.begin + j) * H + i];
        a[j] = w1[std::size_t(H) * H + p.begin + j];
      }
      for (int o = 0; o < H; ++o)
        for (int j = 0; j < hs; ++j) Bw[std::size_t(o) * hs + j] = w2[std::size_t(o) * H + p.begin + j];
      for (int o = 0; o < H; ++o) b[o] = w2[std::size_t(H) * H + o];
    }
    params.upload(r, mine);
  }
  x.upload_all(d.x);
  t.upload_all(d.t);
  Ops ops{g, kLr};
  TimedLinks links(g);
  StepTimer timer(g);
  auto queue_step = [&](bool compute) {
    for (int r : g.local_ranks()) ops.zero(r, grad.on(r), per_pair * pairs);
    for (int k = 0; k < pairs; ++k) {  // forward
      for (int r : g.local_ranks()) {
        const int hs = int(course::part_of(H, n, r).size());
        float* A = params.on(r) + k * per_pair;
        float* a = A + std::size_t(hs) * H;
        float* Bw = a + hs;
        const float* in = k == 0 ? x.on(r) : acts.on(r) + k * act;
        float* h = hid.on(r) + std::size_t(k) * B * hmax;
        if (!compute) continue;
        ops.fwd(r, in, A, a, h, B, H, hs, true);                           // column-parallel: no communication
        ops.fwd(r, h, Bw, nullptr, acts.on(r) + (k + 1) * act, B, hs, H, false);  // row-parallel: partial sums
      }
      ring_allreduce(g, ops, links, acts, (k + 1) * act, act, scratch);  // the sum of the partial outputs
      for (int r : g.local_ranks()) {
        const int hs = int(course::part_of(H, n, r).size());
        float* b = params.on(r) + k * per_pair + std::size_t(hs) * H + hs + std::size_t(H) * hs;
        if (compute) ops.bias_act(r, acts.on(r) + (k + 1) * act, b, B, H);
      }
    }
    for (int r : g.local_ranks())
      if (compute) ops.dloss(r, acts.on(r) + pairs * act, t.on(r), dy.on(r), act, 1.0f / B);
    for (int k = pairs - 1; k >= 0; --k) {  // backward
      for (int r : g.local_ranks()) {
        if (!compute) continue;
        const int hs = int(course::part_of(H, n, r).size());
        float* A = params.on(r) + k * per_pair;
        float* Bw = A + std::size_t(hs) * H + hs;
        float* gA = grad.on(r) + k * per_pair;
        float* ga = gA + std::size_t(hs) * H;
        float* gB = ga + hs;
        float* gb = gB + std::size_t(H) * hs;
        const float* in = k == 0 ? x.on(r) : acts.on(r) + k * act;
        float* h = hid.on(r) + std::size_t(k) * B * hmax;
        ops.relu_bwd(r, acts.on(r) + (k + 1) * act, dy.on(r), dz.on(r), act);  // replicated on every rank
        ops.bwd_w(r, h, dz.on(r), gB, gb, B, hs, H);
        ops.bwd_x(r, Bw, dz.on(r), dh.on(r), B, hs, H);
        ops.relu_bwd(r, h, dh.on(r), dh.on(r), std::size_t(B) * hs);
        ops.bwd_w(r, in, dh.on(r), gA, ga, B, H, hs);
        if (k > 0) ops.bwd_x(r, A, dh.on(r), dy.on(r), B, H, hs);  // this rank's part of dx
      }
      if (k > 0) ring_allreduce(g, ops, links, dy, 0, act, scratch);  // dx = sum of the parts
    }
    for (int r : g.local_ranks()) ops.update(r, params.on(r), grad.on(r), per_pair * pairs, ops.lr);
  };
  Measured out;
  measure(g, ops, links, timer, queue_step, out);
  const auto a = acts.download(0);
  out.loss = loss_of(std::vector<float>(a.begin() + pairs * act, a.begin() + (pairs + 1) * act), d.t, 0, act) /
             (2.0 * B);
  return out;
}

/// Pipeline parallelism: stage s holds layers part_of(L, N, s); M micro-batches, GPipe order.
Measured run_pp(course::RankGroup& g, const Model& m, const HostData& d, int micro) {
  const int p = g.size(), H = m.H, rows = m.B / micro;
  const std::size_t slot = std::size_t(rows) * H, LP = m.layer_params();
  int max_layers = 0;
  for (int s = 0; s < p; ++s) max_layers = std::max(max_layers, int(course::part_of(m.L, p, s).size()));
  // Per stage and micro-batch: its input and each of its layers' outputs; gradients at output and input.
  const std::size_t per_micro = std::size_t(max_layers + 1) * slot;
  course::SymmetricBuffer<float> params(g, max_layers * LP), grad(g, max_layers * LP), x(g, d.x.size()),
      t(g, d.t.size());
  course::SymmetricBuffer<float> acts(g, per_micro * micro), dout(g, slot * micro), din(g, slot * micro),
      dpre(g, slot), dcur(g, slot);
  for (int s = 0; s < p; ++s) {
    const course::Part ls = course::part_of(m.L, p, s);
    params.upload(s, std::vector<float>(d.params.begin() + ls.begin * LP, d.params.begin() + ls.end * LP));
  }
  x.upload_all(d.x);
  t.upload_all(d.t);
  Ops ops{g, kLr};
  TimedLinks links(g);
  StepTimer timer(g);
  auto queue_step = [&](bool compute) {
    for (int s : g.local_ranks()) {
      ops.zero(s, grad.on(s), max_layers * LP);
      if (compute)
        for (int i = 0; i < micro; ++i)
          if (s == 0)
            CUDA_CHECK(cudaMemcpyAsync(acts.on(0) + i * per_micro, x.on(0) + i * slot, slot * sizeof(float),
                                       cudaMemcpyDeviceToDevice, g.stream(0)));
    }
    for (int i = 0; i < micro; ++i)  // GPipe: every forward pass, stage after stage
      for (int s = 0; s < p; ++s) {
        const int nl = int(course::part_of(m.L, p, s).size());
        float* a = acts.on(s) + i * per_micro;
        for (int l = 0; l < nl && compute; ++l)
          ops.fwd(s, a + l * slot, params.on(s) + l * LP, params.on(s) + l * LP + std::size_t(H) * H,
                  a + (l + 1) * slot, rows, H, H, true);
        if (s + 1 < p) links.put_overlapped(s, a + nl * slot, s + 1, acts.on(s + 1) + i * per_micro, slot);  // activations
        else if (compute) ops.dloss(s, a + nl * slot, t.on(s) + i * slot, dout.on(s) + i * slot, slot, 1.0f / m.B);
      }
    for (int i = 0; i < micro; ++i)  // then every backward pass, last stage first
      for (int s = p - 1; s >= 0; --s) {
        const int nl = int(course::part_of(m.L, p, s).size());
        float* a = acts.on(s) + i * per_micro;
        if (compute) {
          CUDA_CHECK(cudaMemcpyAsync(dcur.on(s), dout.on(s) + i * slot, slot * sizeof(float), cudaMemcpyDeviceToDevice,
                                     g.stream(s)));
          for (int l = nl - 1; l >= 0; --l) {
            ops.relu_bwd(s, a + (l + 1) * slot, dcur.on(s), dpre.on(s), slot);
            ops.bwd_w(s, a + l * slot, dpre.on(s), grad.on(s) + l * LP, grad.on(s) + l * LP + std::size_t(H) * H, rows,
                      H, H);
            if (l > 0 || s > 0)
              ops.bwd_x(s, params.on(s) + l * LP, dpre.on(s), l > 0 ? dcur.on(s) : din.on(s) + i * slot, rows, H, H);
          }
        }
        if (s > 0) links.put_overlapped(s, din.on(s) + i * slot, s - 1, dout.on(s - 1) + i * slot, slot);  // gradients
      }
    for (int s : g.local_ranks())
      ops.update(s, params.on(s), grad.on(s), int(course::part_of(m.L, p, s).size()) * LP, ops.lr);
  };
  Measured out;
  measure(g, ops, links, timer, queue_step, out);
  const auto a = acts.download(p - 1);
  const int nl = int(course::part_of(m.L, p, p - 1).size());
  for (int i = 0; i < micro; ++i)
    out.loss += loss_of(std::vector<float>(a.begin() + i * per_micro + nl * slot, a.begin() + i * per_micro + (nl + 1) * slot),
                        d.t, i * slot, slot);
  out.loss /= 2.0 * m.B;
  return out;
}

// ---------------------------------------------------------------------------------------
// Predictions

struct Link {
  std::string name;
  double bandwidth;  // bytes/s per direction
  double latency;    // s per message
};

struct Prediction {
  double busiest_bytes, total_bytes, messages, comm_s, compute_s, step_s;
};

Prediction predict(const std::string& scheme, const Model& m, int n, int micro, const Link& link, double peak) {
  Prediction p{};
  const double S_act = 4.0 * m.B * m.H;
  if (scheme == "DP") {  // one ring all-reduce of the gradients
    const double S = 4.0 * double(m.params());
    p.busiest_bytes = 2.0 * (n - 1) / n * S;
    p.total_bytes = 2.0 * (n - 1) * S;
    p.messages = 2.0 * (n - 1);
    p.compute_s = m.flops() / n / peak;
    p.comm_s = p.messages * link.latency + p.busiest_bytes / link.bandwidth;
    p.step_s = p.compute_s + p.comm_s;
  } else if (scheme == "TP") {  // L/2 all-reduces forward, L/2 - 1 backward, of B x H
    const double reduces = (m.L / 2) + (m.L / 2 - 1);
    p.busiest_bytes = reduces * 2.0 * (n - 1) / n * S_act;
    p.total_bytes = reduces * 2.0 * (n - 1) * S_act;
    p.messages = reduces * 2.0 * (n - 1);
    p.compute_s = m.flops() / n / peak;
    p.comm_s = p.messages * link.latency + p.busiest_bytes / link.bandwidth;
    p.step_s = p.compute_s + p.comm_s;
  } else {  // PP: each boundary, per micro-batch, B/M x H forward and as much backward
    const double msg = S_act / micro;
    const double per_rank_msgs = n >= 3 ? 2.0 * micro : double(micro);
    p.busiest_bytes = per_rank_msgs * msg;
    p.total_bytes = 2.0 * (n - 1) * micro * msg;
    p.messages = per_rank_msgs;
    p.comm_s = p.messages * link.latency + p.busiest_bytes / link.bandwidth;
    p.compute_s = m.flops() / n / peak * double(micro + n - 1) / micro;
    p.step_s = p.compute_s + 2.0 * (n - 1) * (link.latency + msg / link.bandwidth);
  }
  return p;
}

struct Row {
  std::string scheme, link;
  Prediction pred;
  Measured meas;
};

std::string fmt_time(double s) {
  char b[32];
  if (s >= 1.0) std::snprintf(b, sizeof b, "%.3f s", s);
  else if (s >= 1e-3) std::snprintf(b, sizeof b, "%.3f ms", s * 1e3);
  else std::snprintf(b, sizeof b, "%.1f us", s * 1e6);
  return b;
}

std::string fmt_bytes(double b) {
  char s[32];
  if (b >= 1e9) std::snprintf(s, sizeof s, "%.2f GB", b / 1e9);
  else if (b >= 1e6) std::snprintf(s, sizeof s, "%.2f MB", b / 1e6);
  else std::snprintf(s, sizeof s, "%.1f kB", b / 1e3);
  return s;
}

// ---------------------------------------------------------------------------------------
// Plot: for every scheme and link, predicted vs measured communication time (log scale).

#ifdef CUDASIM
/// The modelled timeline of each timed step (the simulator's modelled clock), one panel per
/// scheme and link: a lane per stream and per copy engine of each device, with its kernels,
/// copies and memsets, so that what overlaps and what waits shows. Written as SVG.
void write_step_timelines(const std::string& path, const std::vector<Row>& rows, const course::RankGroup& g) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return;
  struct Lane {
    int device;
    std::string track;
  };
  auto rank_of = [&](int device) {
    for (int r = 0; r < g.size(); ++r)
      if (g.device(r) == device) return r;
    return -1;
  };
  const double W = 1100, left = 230, right = 20, plot_w = W - left - right, lane_h = 13, head = 30, axis = 30;
  std::vector<std::vector<Lane>> lanes(rows.size());
  double H = 50;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (const auto& s : rows[i].meas.step_spans) {
      const bool seen = std::any_of(lanes[i].begin(), lanes[i].end(),
                                    [&](const Lane& l) { return l.device == s.device && l.track == s.track; });
      if (!seen) lanes[i].push_back({s.device, s.track});
    }
    // By rank; within a rank, in the order the lanes first have work.
    std::stable_sort(lanes[i].begin(), lanes[i].end(),
                     [&](const Lane& a, const Lane& b) { return rank_of(a.device) < rank_of(b.device); });
    H += head + lanes[i].size() * lane_h + axis;
  }
  std::fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' height='%.0f' font-family='DejaVu Sans, "
               "sans-serif' font-size='10'>\n<rect width='100%%' height='100%%' fill='white'/>\n", W, H);
  std::fprintf(f, "<text x='10' y='20' font-size='14' font-weight='bold'>One training step on the modelled timeline "
               "(%s): kernels red, peer copies green, memsets and device copies grey</text>\n",
               cudasim::modelled_gpu().name);
  double y = 40;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    double t0 = 1e300, t1 = 0;
    for (const auto& s : r.meas.step_spans) t0 = std::min(t0, s.start_ns), t1 = std::max(t1, s.end_ns);
    if (lanes[i].empty() || t1 <= t0) continue;
    std::fprintf(f, "<text x='10' y='%.0f' font-size='12' font-weight='bold'>%s over %s: %s modelled</text>\n", y + 16,
                 r.scheme.c_str(), r.link.c_str(), fmt_time(r.meas.step_s).c_str());
    const double top = y + head;
    auto X = [&](double ns) { return left + plot_w * (ns - t0) / (t1 - t0); };
    for (std::size_t l = 0; l < lanes[i].size(); ++l) {
      const Lane& lane = lanes[i][l];
      const double ly = top + l * lane_h;
      std::fprintf(f, "<rect x='%.0f' y='%.1f' width='%.0f' height='%.1f' fill='%s'/>\n", left, ly, plot_w, lane_h - 2,
                   l % 2 ? "#f7f7f7" : "#efefef");
      std::fprintf(f, "<text x='%.0f' y='%.1f' text-anchor='end'>rank %d: %s</text>\n", left - 6, ly + 9,
                   rank_of(lane.device), lane.track.c_str());
      for (const auto& s : r.meas.step_spans) {
        if (s.device != lane.device || s.track != lane.track) continue;
        const char* color = s.kind == "kernel" ? "#e15759" : s.kind == "copy" && s.name.find("peer") != std::string::npos
                                                                 ? "#59a14f" : "#9c9c9c";
        std::fprintf(f, "<rect x='%.2f' y='%.1f' width='%.2f' height='%.1f' fill='%s'><title>%s</title></rect>\n",
                     X(s.start_ns), ly, std::max(0.5, X(s.end_ns) - X(s.start_ns)), lane_h - 2, color, s.name.c_str());
      }
    }
    const double bottom = top + lanes[i].size() * lane_h;
    std::fprintf(f, "<line x1='%.0f' y1='%.1f' x2='%.0f' y2='%.1f' stroke='black'/>\n", left, bottom + 2,
                 left + plot_w, bottom + 2);
    for (int k = 0; k <= 4; ++k)
      std::fprintf(f, "<text x='%.1f' y='%.1f' text-anchor='middle'>%s</text>\n", left + plot_w * k / 4, bottom + 14,
                   fmt_time((t1 - t0) * 1e-9 * k / 4).c_str());
    y = bottom + axis;
  }
  std::fprintf(f, "</svg>\n");
  std::fclose(f);
}
#endif

void write_outputs(const std::string& prefix, const std::vector<Row>& rows, const Model& m, int n) {
  const std::string dat = prefix + ".dat", svg = prefix + ".svg", png = prefix + ".png", gp = prefix + ".gp";
  if (FILE* f = std::fopen(dat.c_str(), "w")) {
    std::fprintf(f, "# L=%d H=%d B=%d ranks=%d\n# label busiest_bytes predicted_comm_ms measured_comm_ms "
                    "predicted_step_ms measured_step_ms\n", m.L, m.H, m.B, n);
    for (const Row& r : rows)
      std::fprintf(f, "\"%s %s\" %.0f %.6g %.6g %.6g %.6g\n", r.scheme.c_str(), r.link.c_str(), r.pred.busiest_bytes,
                   r.pred.comm_s * 1e3, r.meas.comm_s * 1e3, r.pred.step_s * 1e3, r.meas.step_s * 1e3);
    std::fclose(f);
  }
  double lo = 1e30, hi = 0;
  for (const Row& r : rows)
    for (double v : {r.pred.comm_s, r.meas.comm_s})
      if (v > 0) lo = std::min(lo, v), hi = std::max(hi, v);
  const double e0 = std::floor(std::log10(lo * 1e3)), e1 = std::ceil(std::log10(hi * 1e3));
  const double width = 820, height = 460, left = 80, right = 20, top = 50, bottom = 70;
  const double group_w = (width - left - right) / std::max<std::size_t>(1, rows.size());
  auto py = [&](double ms) {
    return top + (1.0 - (std::log10(ms) - e0) / std::max(1.0, e1 - e0)) * (height - top - bottom);
  };
  if (FILE* f = std::fopen(svg.c_str(), "w")) {
    std::fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%g' height='%g' font-family='sans-serif' "
                    "font-size='12'>\n<rect width='100%%' height='100%%' fill='white'/>\n", width, height);
    std::fprintf(f, "<text x='%g' y='22' font-size='15'>Communication per training step, busiest link: predicted vs "
                    "measured</text>\n<text x='%g' y='40'>L = %d layers, H = %d, B = %d, %d ranks</text>\n",
                 left, left, m.L, m.H, m.B, n);
    for (double e = e0; e <= e1; e += 1) {
      const double y = py(std::pow(10.0, e));
      std::fprintf(f, "<line x1='%g' y1='%g' x2='%g' y2='%g' stroke='#ddd'/>\n", left, y, width - right, y);
      std::fprintf(f, "<text x='%g' y='%g' text-anchor='end'>%g</text>\n", left - 6, y + 4, std::pow(10.0, e));
    }
    std::fprintf(f, "<text x='18' y='%g' transform='rotate(-90 18 %g)' text-anchor='middle'>ms (log scale)</text>\n",
                 (top + height - bottom) / 2, (top + height - bottom) / 2);
    const double base = height - bottom;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const double x0 = left + i * group_w + group_w * 0.15, bw = group_w * 0.33;
      const double vals[2] = {rows[i].pred.comm_s * 1e3, rows[i].meas.comm_s * 1e3};
      const char* colors[2] = {"#1f77b4", "#ff7f0e"};
      for (int k = 0; k < 2; ++k) {
        if (!(vals[k] > 0)) continue;
        const double y = std::min(base, py(vals[k]));
        std::fprintf(f, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='%s'/>\n", x0 + k * bw, y, bw,
                     base - y, colors[k]);
      }
      std::fprintf(f, "<text x='%.1f' y='%g' text-anchor='middle'>%s</text><text x='%.1f' y='%g' "
                      "text-anchor='middle'>%s</text>\n", x0 + bw, base + 16, rows[i].scheme.c_str(), x0 + bw, base + 30,
                   rows[i].link.c_str());
    }
    std::fprintf(f, "<rect x='%g' y='%g' width='12' height='12' fill='#1f77b4'/><text x='%g' y='%g'>predicted "
                    "(messages x latency + bytes / bandwidth)</text>\n", left, height - 28, left + 18, height - 18);
    std::fprintf(f, "<rect x='%g' y='%g' width='12' height='12' fill='#ff7f0e'/><text x='%g' y='%g'>measured "
                    "(CUDA events around the copies)</text>\n", left + 380, height - 28, left + 398, height - 18);
    std::fprintf(f, "</svg>\n");
    std::fclose(f);
  }
  std::printf("\nwrote %s and %s", dat.c_str(), svg.c_str());
  if (std::system("command -v gnuplot >/dev/null 2>&1") == 0) {
    if (FILE* f = std::fopen(gp.c_str(), "w")) {
      std::fprintf(f,
                   "set terminal pngcairo size 900,500 font 'sans,11'\nset output '%s'\n"
                   "set title 'Communication per step, busiest link: L=%d, H=%d, B=%d, %d ranks'\n"
                   "set style data histogram\nset style histogram clustered gap 1\nset style fill solid 0.9 border -1\n"
                   "set logscale y\nset ylabel 'ms (log scale)'\nset grid ytics\nset key top left\n"
                   "set xtics rotate by -25\n"
                   "plot '%s' using 3:xtic(1) title 'predicted' lc rgb '#1f77b4', '' using 4 title 'measured' "
                   "lc rgb '#ff7f0e'\n",
                   png.c_str(), m.L, m.H, m.B, n, dat.c_str());
      std::fclose(f);
      const std::string cmd = "gnuplot '" + gp + "' 2>&1";
      if (std::system(cmd.c_str()) == 0) std::printf(" and %s", png.c_str());
    }
  }
  std::printf("\n");
}

struct Gpu {
  const char* name;
  double fp32;  // FP32 (non-tensor) peak FLOP/s, datasheet, SXM
};
const Gpu kGpus[] = {{"H100", 67e12}, {"H200", 67e12}, {"A100", 19.5e12}};

int usage() {
  std::fprintf(stderr, "usage: parallelism_experiment [LAYERS HIDDEN BATCH] [--layers L] [--hidden H] [--batch B] "
                       "[--ranks N] [--micro M] [--gpu H100|H200|A100] [--links nvlink4,pcie4] [--out PREFIX]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Model m{8, 512, 64};
  int ranks = 0, micro = 8;
  std::string gpu_name, prefix, link_list = "nvlink4,pcie4";
  std::vector<int> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (a == "--layers" && (v = value())) m.L = std::atoi(v);
    else if (a == "--hidden" && (v = value())) m.H = std::atoi(v);
    else if (a == "--batch" && (v = value())) m.B = std::atoi(v);
    else if (a == "--ranks" && (v = value())) ranks = std::atoi(v);
    else if (a == "--micro" && (v = value())) micro = std::atoi(v);
    else if (a == "--gpu" && (v = value())) gpu_name = v;
    else if (a == "--links" && (v = value())) link_list = v;
    else if (a == "--out" && (v = value())) prefix = v;
    else if (!a.empty() && std::isdigit(static_cast<unsigned char>(a[0]))) positional.push_back(std::atoi(a.c_str()));
    else return usage();
  }
  if (positional.size() > 3) return usage();
  if (positional.size() > 0) m.L = positional[0];
  if (positional.size() > 1) m.H = positional[1];
  if (positional.size() > 2) m.B = positional[2];
  if (prefix.empty()) prefix = std::system("test -d build") == 0 ? "build/parallelism_experiment" : "parallelism_experiment";

  const int visible = course::visible_device_count();
#ifdef CUDASIM
  if (ranks == 0) ranks = std::min(4, visible);
#else
  if (ranks == 0) ranks = std::max(2, std::min(visible, 8));
#endif
  const int n = ranks;
  if (n < 2 || m.L < 2 || m.L % 2 != 0 || m.L < n || m.H < n || m.B < n || micro < 1 || m.B % micro != 0) {
    std::fprintf(stderr, "need: ranks >= 2, an even number of layers >= ranks (TP pairs them, PP needs a layer per "
                         "stage), hidden and batch >= ranks, batch divisible by --micro (got L=%d H=%d B=%d N=%d M=%d)\n",
                 m.L, m.H, m.B, n, micro);
    return 2;
  }

  const Gpu* gpu = &kGpus[0];
#ifdef CUDASIM
  // The modelled timeline (./course run --model-time), host code free: every figure below is
  // the modelled GPU's and the same on any machine (one host thread drives every rank, so the
  // free host clock is exact).
  const bool modelled = cudasim::model_time_enabled();
  if (modelled) {
    cudasim::set_host_clock(cudasim::HostClock::kFree);
    if (gpu_name.empty()) gpu_name = cudasim::modelled_gpu().name;
  }
#else
  const bool modelled = false;
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  if (gpu_name.empty()) gpu_name = prop.name;
#endif
  for (auto& ch : gpu_name) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  for (const Gpu& g : kGpus)
    if (!gpu_name.empty() && gpu_name.find(g.name) != std::string::npos) gpu = &g;

  course::RankGroup group(n);
  const HostData data = make_data(m);
  std::printf("Model: %d layers relu(W x + b), hidden %d, batch %d, fp32: %.2f M parameters (%s), %.2f GFLOP per "
              "training step\n", m.L, m.H, m.B, m.params() / 1e6, fmt_bytes(4.0 * m.params()).c_str(), m.flops() / 1e9);
  std::printf("%d ranks on %d device(s); pipeline: %d micro-batches of %d rows, bubble (p-1)/(m+p-1) = %.3f\n", n,
              group.devices_used(), micro, m.B / micro, double(n - 1) / (micro + n - 1));
  std::printf("compute predicted at the %s's FP32 peak, %.1f TFLOP/s\n", gpu->name, gpu->fp32 / 1e12);

  std::vector<Link> links;
#ifdef CUDASIM
  {
    std::string rest = link_list;
    while (!rest.empty()) {
      const std::size_t comma = rest.find(',');
      const std::string name = rest.substr(0, comma);
      rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
      if (!cudasim::set_peer_link(name) || name == "none") {
        std::fprintf(stderr, "unknown or unmodelled link '%s' (nvlink4, nvlink3, pcie4, pcie5)\n", name.c_str());
        return 2;
      }
      const cudasim::LinkModel lm = cudasim::peer_link();
      links.push_back({lm.name, lm.pinned_bytes_per_second, lm.latency_seconds});
    }
  }
  if (modelled)
    std::printf("simulator, modelled %s: copies and kernels on the modelled timeline (latency + bytes / rate per copy, "
                "each kernel's modelled time), host code free\n", cudasim::modelled_gpu().name);
  else
    std::printf("simulator, CPU time: links modelled by cudasim (latency + bytes / rate per copy); compute is CPU time "
                "(./course run without --wall-time gives the modelled GPU's times)\n");
#else
  {
    // The machine's own link: calibrated between ranks 0 and 1 with a large and a small copy.
    std::printf("topology (peer access P: direct NVLink or PCIe peer-to-peer; otherwise staged or same device):\n");
    for (int a = 0; a < n; ++a) {
      std::printf("  rank %d: device %d", a, group.device(a));
      for (int b = 0; b < n; ++b)
        if (b != a) std::printf(" %s", group.device(a) == group.device(b) ? "=" : group.peer_access(a, b) ? "P" : ".");
      std::printf("\n");
    }
    course::SymmetricBuffer<float> probe(group, std::size_t(16) << 20);
    TimedLinks tl(group);
    auto time_copy = [&](std::size_t count, int reps) {
      std::vector<double> t;
      for (int i = 0; i < reps; ++i) {
        tl.reset();
        tl.put(0, probe.on(0), 1, probe.on(1), count);
        group.synchronize();
        t.push_back(tl.busiest_seconds());
      }
      std::sort(t.begin(), t.end());
      return t[t.size() / 2];
    };
    time_copy(std::size_t(16) << 20, 2);  // warm-up
    const double lat = time_copy(1, 21);
    const double big = time_copy(std::size_t(16) << 20, 7);
    const double bw = (64.0 * (1 << 20)) / std::max(1e-9, big - lat);
    const char* kind = group.devices_used() == 1 ? "one GPU (device-to-device)"
                       : group.peer_access(0, 1) ? "peer link (P2P)" : "staged via host";
    std::printf("link 0 -> 1, %s: measured %.1f GB/s, %.1f us per message\n", kind, bw / 1e9, lat * 1e6);
    links.push_back({group.devices_used() == 1 ? "same-GPU" : group.peer_access(0, 1) ? "P2P" : "staged", bw, lat});
  }
#endif

  std::vector<Row> rows;
  bool counters_ok = true;
  double loss[3] = {0, 0, 0};
  for (const Link& link : links) {
#ifdef CUDASIM
    cudasim::set_peer_link(link.name);
#endif
    for (const std::string scheme : {"DP", "TP", "PP"}) {
#ifdef CUDASIM
      cudasim::reset_stats();
#endif
      Row row{scheme, link.name, predict(scheme, m, n, micro, link, gpu->fp32), {}};
      row.meas = scheme == "DP" ? run_dp(group, m, data) : scheme == "TP" ? run_tp(group, m, data)
                                                                          : run_pp(group, m, data, micro);
      loss[scheme == "DP" ? 0 : scheme == "TP" ? 1 : 2] = row.meas.loss;
#ifdef CUDASIM
      // Four passes (warm-up, timed communication, floor, timed step) crossed the links.
      double counted = 0;
      for (const auto& l : cudasim::link_stats()) counted += double(l.bytes);
      if (std::fabs(counted - 4.0 * row.pred.total_bytes) > 0.5) {
        counters_ok = false;
        std::printf("  %s on %s: link counters %.0f bytes, expected 4 x %.0f\n", scheme.c_str(), link.name.c_str(),
                    counted, row.pred.total_bytes);
      }
#endif
      rows.push_back(row);
    }
  }

  std::printf("\nCommunication per training step (busiest rank's outgoing link; its time = sum of its copies):\n");
#ifdef CUDASIM
  const bool sim = !modelled;  // the simulator's own overhead is a column in CPU time only
#else
  const bool sim = false;
#endif
  const char* measured = modelled ? "modelled" : "measured";
  std::printf("%-6s %-9s %12s %9s %13s %13s %10s%s\n", "scheme", "link", "bytes/step", "messages", "predicted", measured,
              modelled ? "pred/mod" : "pred/meas", sim ? "  sim floor (link none)" : "");
  for (const Row& r : rows) {
    std::printf("%-6s %-9s %12s %9.0f %13s %13s %10.2f", r.scheme.c_str(), r.link.c_str(),
                fmt_bytes(r.pred.busiest_bytes).c_str(), r.pred.messages, fmt_time(r.pred.comm_s).c_str(),
                fmt_time(r.meas.comm_s).c_str(), r.pred.comm_s / r.meas.comm_s);
    if (sim) std::printf("  %13s", fmt_time(r.meas.floor_s).c_str());
    std::printf("\n");
  }
  std::printf("\nWhole step (predicted on %s at %.0f TFLOP/s FP32; %s with events around the step%s):\n",
              gpu->name, gpu->fp32 / 1e12, measured,
#ifdef CUDASIM
              modelled ? ", each kernel at its modelled time" : ", compute = the simulator's CPU time"
#else
              ""
#endif
  );
  std::printf("%-6s %-9s %13s %13s %13s %13s %9s\n", "scheme", "link", "pred compute", "pred comm", "pred step",
              modelled ? "modelled step" : "measured step", "comm share");
  for (const Row& r : rows) {
    const double critical_comm = r.pred.step_s - r.pred.compute_s;
    std::printf("%-6s %-9s %13s %13s %13s %13s %8.0f%%\n", r.scheme.c_str(), r.link.c_str(),
                fmt_time(r.pred.compute_s).c_str(), fmt_time(critical_comm).c_str(), fmt_time(r.pred.step_s).c_str(),
                fmt_time(r.meas.step_s).c_str(), 100.0 * critical_comm / r.pred.step_s);
  }
  bool formula_holds = true;
  if (modelled) {
    // The lesson's formula with the compute term taken from the model itself (the step with
    // links that take no time): what remains to check is how compute and communication add up.
    // The exit status holds it to 10% (tested: lessons/05-parallelism-nvlink/CMakeLists.txt).
    std::printf("\nThe lesson's step formula, compute term modelled (the step with free links, kernels at their "
                "modelled time):\n");
    std::printf("%-6s %-9s %13s %13s %13s %13s %10s\n", "scheme", "link", "compute", "+ comm", "= formula",
                "modelled step", "formula/mod");
    for (const Row& r : rows) {
      const double critical_comm = r.pred.step_s - r.pred.compute_s, formula = r.meas.compute_s + critical_comm;
      const bool close = std::fabs(formula / r.meas.step_s - 1.0) <= 0.10;
      formula_holds = formula_holds && close;
      std::printf("%-6s %-9s %13s %13s %13s %13s %10.2f%s\n", r.scheme.c_str(), r.link.c_str(),
                  fmt_time(r.meas.compute_s).c_str(), fmt_time(critical_comm).c_str(), fmt_time(formula).c_str(),
                  fmt_time(r.meas.step_s).c_str(), formula / r.meas.step_s, close ? "" : "  MORE THAN 10% OFF");
    }
  }
  const double spread = std::max({std::fabs(loss[0] - loss[1]), std::fabs(loss[0] - loss[2])});
  const bool same = spread <= 1e-4 * std::max(1.0, std::fabs(loss[0]));
  std::printf("\nloss before the step: DP %.6f, TP %.6f, PP %.6f (%s)\n", loss[0], loss[1], loss[2],
              same ? "the same model, as it must be" : "DIFFERENT: a scheme is wrong");
#ifdef CUDASIM
  std::printf("link counters (cudasim::link_stats) %s the predicted bytes of every scheme\n",
              counters_ok ? "match" : "DO NOT match");
  if (modelled)
    std::printf("note: the modelled communication follows the same link model as the prediction, so they agree. The "
                "modelled step is longer than the prediction, which counts the FLOPs at the peak only: the model also "
                "charges each kernel's launch (2.5 us) and the global bytes it counted, and this program's layer "
                "kernels (one thread per output, no tiling) read W again for every sample, which the model (no "
                "caches) charges at HBM bandwidth. ./course run --model-time --stats shows each kernel's modelled time "
                "and what bounds it. The last table takes the compute term from the model instead (the same step "
                "with links that take no time): DP and TP add compute and communication, and PP, whose stages send "
                "on a second stream while they compute, pays only the 2(N-1) messages of filling and draining the "
                "pipeline, as the lesson's formulas say.\n");
  else
    std::printf("note: on the simulator a copy takes max(modelled time, the CPU's memcpy) plus the simulator's own "
                "cost per copy (thread hand-offs, the sleep's overshoot: the 'sim floor' column, the same copies with "
                "no link model), so fast links and small messages measure slower than the model; the compute is CPU "
                "time and says nothing about a GPU.\n");
#endif
  write_outputs(prefix, rows, m, n);
#ifdef CUDASIM
  if (modelled) {
    write_step_timelines(prefix + "_timeline.svg", rows, group);
    std::printf("wrote %s_timeline.svg (each timed step on the modelled timeline)\n", prefix.c_str());
  }
#endif
  return same && counters_ok && formula_holds ? 0 : 1;
}
