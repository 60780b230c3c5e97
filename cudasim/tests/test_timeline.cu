// The modelled device clock (cudasim/timeline.hpp): operations on streams are placed by the
// rules a GPU follows, whatever order and speed the CPU ran them at, and every figure is exact.
// The suite runs twice, on one and on two worker threads (CMakeLists.txt), and asserts the
// same exact times both ways.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#ifdef CUDASIM

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <cublas_v2.h>

namespace {

__global__ void scale(float* x, int n, float factor) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= factor;
}

/// One thread walks `steps` elements: slow on the CPU and, by its span, on the modelled GPU.
__global__ void walk(float* x, int steps) {
  float sum = 0;
  for (int i = 0; i < steps; ++i) sum += x[i];
  x[0] = sum;
}

constexpr int kN = 1 << 16;

/// The modelled time of one launch of `scale` over kN elements (from the counters: exact).
double scale_ns(float* x) {
  scale<<<kN / 256, 256>>>(x, kN, 1.0f);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return cudasim::last_launch_stats().modelled.total_ns;
}

/// The spans of one track, in start order.
std::vector<cudasim::TimelineSpan> on_track(const std::string& track, int device = 0) {
  std::vector<cudasim::TimelineSpan> out;
  for (const cudasim::TimelineSpan& s : cudasim::timeline())
    if (s.track == track && s.device == device) out.push_back(s);
  return out;
}

/// The device's operations, in start order (the host threads' waits left out).
std::vector<cudasim::TimelineSpan> device_spans() {
  std::vector<cudasim::TimelineSpan> out;
  for (const cudasim::TimelineSpan& s : cudasim::timeline())
    if (s.device >= 0) out.push_back(s);
  return out;
}

/// Modelled times are sums of exact terms; a difference of two large times loses the last bits.
constexpr double kNs = 1e-6;

class Timeline : public ::testing::Test {
 protected:
  void SetUp() override {
    cudasim::set_host_clock(cudasim::HostClock::kFree);
    cudasim::set_model_time(true);
    ASSERT_EQ(cudaMalloc(&a_, kN * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&b_, kN * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMemset(a_, 0, kN * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMemset(b_, 0, kN * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaStreamCreate(&s1_), cudaSuccess);
    ASSERT_EQ(cudaStreamCreate(&s2_), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    cudasim::reset_timeline();
  }
  void TearDown() override {
    EXPECT_EQ(cudaStreamDestroy(s1_), cudaSuccess);
    EXPECT_EQ(cudaStreamDestroy(s2_), cudaSuccess);
    EXPECT_EQ(cudaFree(a_), cudaSuccess);
    EXPECT_EQ(cudaFree(b_), cudaSuccess);
    cudasim::set_model_time(false);
    cudasim::set_host_clock(cudasim::HostClock::kWall);
  }
  float* a_ = nullptr;
  float* b_ = nullptr;
  cudaStream_t s1_ = nullptr;
  cudaStream_t s2_ = nullptr;
};

TEST_F(Timeline, KernelsOnOneStreamFollowEachOtherAndTheEventsMeasureThem) {
  const double one = scale_ns(a_);
  cudasim::reset_timeline();
  cudaEvent_t start, stop;
  ASSERT_EQ(cudaEventCreate(&start), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&stop), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(start, s1_), cudaSuccess);
  for (int i = 0; i < 3; ++i) scale<<<kN / 256, 256, 0, s1_>>>(a_, kN, 1.0f);
  ASSERT_EQ(cudaEventRecord(stop, s1_), cudaSuccess);
  ASSERT_EQ(cudaEventSynchronize(stop), cudaSuccess);
  float ms = 0;
  ASSERT_EQ(cudaEventElapsedTime(&ms, start, stop), cudaSuccess);
  EXPECT_FLOAT_EQ(ms, static_cast<float>(3 * one / 1e6)) << "modelled milliseconds";

  const std::vector<cudasim::TimelineSpan> spans = device_spans();
  ASSERT_EQ(spans.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(spans[i].kind, "kernel");
    EXPECT_EQ(spans[i].name, "scale");
    EXPECT_NEAR(spans[i].end_ns - spans[i].start_ns, one, kNs);
    if (i > 0) EXPECT_DOUBLE_EQ(spans[i].start_ns, spans[i - 1].end_ns) << "back to back on one stream";
  }
  EXPECT_EQ(cudaEventDestroy(start), cudaSuccess);
  EXPECT_EQ(cudaEventDestroy(stop), cudaSuccess);
}

TEST_F(Timeline, KernelsOnTwoStreamsOverlap) {
  const double t0 = cudasim::host_time_ns();
  scale<<<kN / 256, 256, 0, s1_>>>(a_, kN, 1.0f);
  scale<<<kN / 256, 256, 0, s2_>>>(b_, kN, 1.0f);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<cudasim::TimelineSpan> spans = device_spans();
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_NE(spans[0].track, spans[1].track);
  EXPECT_DOUBLE_EQ(spans[0].start_ns, t0);
  EXPECT_DOUBLE_EQ(spans[1].start_ns, t0) << "independent streams start together";
  // The host waited for both: it is at the end of the later one.
  EXPECT_DOUBLE_EQ(cudasim::host_time_ns(), std::max(spans[0].end_ns, spans[1].end_ns));
}

TEST_F(Timeline, AnEventWaitOrdersTheSecondStreamAfterTheFirst) {
  cudaEvent_t done;
  ASSERT_EQ(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), cudaSuccess);
  walk<<<1, 1, 0, s1_>>>(a_, 2000);  // long on both clocks
  ASSERT_EQ(cudaEventRecord(done, s1_), cudaSuccess);
  ASSERT_EQ(cudaStreamWaitEvent(s2_, done, 0), cudaSuccess);
  scale<<<kN / 256, 256, 0, s2_>>>(b_, kN, 1.0f);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<cudasim::TimelineSpan> spans = device_spans();
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0].name, "walk");
  EXPECT_EQ(spans[1].name, "scale");
  EXPECT_DOUBLE_EQ(spans[1].start_ns, spans[0].end_ns);
  EXPECT_EQ(cudaEventDestroy(done), cudaSuccess);
}

class Copies : public Timeline {
 protected:
  void SetUp() override {
    Timeline::SetUp();
    ASSERT_TRUE(cudasim::set_host_link("pcie4"));
    ASSERT_EQ(cudaMallocHost(&pinned_, kN * sizeof(float)), cudaSuccess);
    pageable_.assign(kN, 1.0f);
    const cudasim::LinkModel link = cudasim::host_link();
    pinned_ns_ = (link.latency_seconds + kN * sizeof(float) / link.pinned_bytes_per_second) * 1e9;
    pageable_ns_ = (link.latency_seconds + kN * sizeof(float) / link.pageable_bytes_per_second) * 1e9;
    cudasim::reset_timeline();
  }
  void TearDown() override {
    EXPECT_EQ(cudaFreeHost(pinned_), cudaSuccess);
    Timeline::TearDown();
  }
  float* pinned_ = nullptr;
  std::vector<float> pageable_;
  double pinned_ns_ = 0;
  double pageable_ns_ = 0;
};

TEST_F(Copies, TwoCopiesInOneDirectionShareTheEngineOppositeDirectionsOverlap) {
  const double t0 = cudasim::host_time_ns();
  ASSERT_EQ(cudaMemcpyAsync(a_, pinned_, kN * sizeof(float), cudaMemcpyHostToDevice, s1_), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(b_, pinned_, kN * sizeof(float), cudaMemcpyHostToDevice, s2_), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<cudasim::TimelineSpan> engine = on_track("copy engine HtoD");
  ASSERT_EQ(engine.size(), 2u);
  EXPECT_DOUBLE_EQ(engine[0].start_ns, t0);
  EXPECT_NEAR(engine[0].end_ns - engine[0].start_ns, pinned_ns_, kNs);
  EXPECT_DOUBLE_EQ(engine[1].start_ns, engine[0].end_ns) << "one engine per direction: the copies queue";
  EXPECT_NEAR(cudasim::host_time_ns(), t0 + 2 * pinned_ns_, kNs);

  cudasim::reset_timeline();
  const double t1 = cudasim::host_time_ns();
  ASSERT_EQ(cudaMemcpyAsync(a_, pinned_, kN * sizeof(float), cudaMemcpyHostToDevice, s1_), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(pinned_, b_, kN * sizeof(float), cudaMemcpyDeviceToHost, s2_), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  engine = on_track("copy engine HtoD");
  const std::vector<cudasim::TimelineSpan> back = on_track("copy engine DtoH");
  ASSERT_EQ(engine.size(), 1u);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_DOUBLE_EQ(engine[0].start_ns, t1);
  EXPECT_DOUBLE_EQ(back[0].start_ns, t1) << "the two directions have an engine each";
  EXPECT_EQ(back[0].name, "DtoH 256.0 KB (pinned)");
}

/// Four batches: copy batch b in, then work on it, with the copy of b+1 queued while b is
/// worked on. Returns the modelled time of the whole loop.
double copy_then_compute(float* host, float* d_slots[2], cudaStream_t copy, cudaStream_t compute) {
  cudaEvent_t copied[2];
  for (cudaEvent_t& e : copied) EXPECT_EQ(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), cudaSuccess);
  const double t0 = cudasim::host_time_ns();
  for (int b = 0; b < 4; ++b) {
    float* slot = d_slots[b % 2];
    EXPECT_EQ(cudaMemcpyAsync(slot, host, kN * sizeof(float), cudaMemcpyHostToDevice, copy), cudaSuccess);
    EXPECT_EQ(cudaEventRecord(copied[b % 2], copy), cudaSuccess);
    EXPECT_EQ(cudaStreamWaitEvent(compute, copied[b % 2], 0), cudaSuccess);
    walk<<<1, 1, 0, compute>>>(slot, 2000);
  }
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (cudaEvent_t& e : copied) EXPECT_EQ(cudaEventDestroy(e), cudaSuccess);
  return cudasim::host_time_ns() - t0;
}

TEST_F(Copies, PinnedCopiesOverlapComputePageableOnesDoNot) {
  walk<<<1, 1>>>(a_, 2000);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const double kernel = cudasim::last_launch_stats().modelled.total_ns;
  ASSERT_GT(kernel, pinned_ns_) << "the test needs a compute-bound loop";
  float* slots[2] = {a_, b_};

  cudasim::reset_timeline();
  const double pinned_loop = copy_then_compute(pinned_, slots, s1_, s2_);
  // The first copy, then the four kernels back to back: every later copy hides under a kernel.
  EXPECT_NEAR(pinned_loop, pinned_ns_ + 4 * kernel, kNs);

  cudasim::reset_timeline();
  const double pageable_loop = copy_then_compute(pageable_.data(), slots, s1_, s2_);
  // A pageable copy waits for the kernel before it: copy, kernel, copy, kernel, ...
  EXPECT_NEAR(pageable_loop, 4 * (pageable_ns_ + kernel), kNs);
}

TEST_F(Timeline, AProgramGivesTheSameTimesEveryRun) {
  // Independent of the order the CPU happens to run the streams in, and of its speed.
  std::vector<std::pair<double, double>> first;
  for (int run = 0; run < 3; ++run) {
    cudasim::reset_timeline();
    const double t0 = cudasim::host_time_ns();
    walk<<<1, 1, 0, s1_>>>(a_, 500);
    scale<<<kN / 256, 256, 0, s2_>>>(b_, kN, 1.0f);
    walk<<<1, 1, 0, s2_>>>(b_, 300);
    scale<<<kN / 256, 256, 0, s1_>>>(a_, kN, 1.0f);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<std::pair<double, double>> times;  // (start, end), sorted: spans that start together
    for (const cudasim::TimelineSpan& s : device_spans()) times.emplace_back(s.start_ns - t0, s.end_ns - t0);
    std::sort(times.begin(), times.end());         // may be recorded in either order
    if (run == 0) {
      first = times;
      continue;
    }
    ASSERT_EQ(times.size(), first.size());
    for (std::size_t i = 0; i < times.size(); ++i) {
      EXPECT_NEAR(times[i].first, first[i].first, kNs) << "run " << run << ", span " << i;
      EXPECT_NEAR(times[i].second, first[i].second, kNs) << "run " << run << ", span " << i;
    }
  }
}

TEST_F(Timeline, AReplayedGraphCostsTheGraphNodeOverheadPerKernel) {
  const double one = scale_ns(a_);
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  ASSERT_EQ(cudaStreamBeginCapture(s1_, cudaStreamCaptureModeGlobal), cudaSuccess);
  for (int i = 0; i < 4; ++i) scale<<<kN / 256, 256, 0, s1_>>>(a_, kN, 1.0f);
  ASSERT_EQ(cudaStreamEndCapture(s1_, &graph), cudaSuccess);
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  cudasim::reset_timeline();
  const double t0 = cudasim::host_time_ns();
  ASSERT_EQ(cudaGraphLaunch(exec, s1_), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s1_), cudaSuccess);
  using C = cudasim::ModelConstants;
  EXPECT_NEAR(cudasim::host_time_ns() - t0, 4 * (one - C::kLaunchNs + C::kGraphNodeNs), kNs);
  EXPECT_EQ(device_spans().size(), 4u);
  EXPECT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
  EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess);
}

TEST_F(Timeline, CudaMemsetReturnsAtOnceAndRunsOnTheLegacyStream) {
  // As on a GPU: the host does not wait for the fill, the next synchronisation does; and a
  // non-blocking stream is not ordered after it (on an H200, 2026-11-27, a fill landed after
  // such a stream's writes: docs/gpu-results.md).
  const cudasim::GpuSpec& gpu = cudasim::modelled_gpu();
  const double t0 = cudasim::host_time_ns();
  ASSERT_EQ(cudaMemset(a_, 0, kN * sizeof(float)), cudaSuccess);
  EXPECT_DOUBLE_EQ(cudasim::host_time_ns(), t0) << "cudaMemset returned only after the fill";
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_NEAR(cudasim::host_time_ns() - t0,
              cudasim::model_library_call(0, kN * sizeof(float), false, false, gpu).total_ns, kNs);
  cudaStream_t free_stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&free_stream, cudaStreamNonBlocking), cudaSuccess);
  cudasim::reset_timeline();
  const double t1 = cudasim::host_time_ns();
  ASSERT_EQ(cudaMemset(a_, 0, kN * sizeof(float)), cudaSuccess);
  scale<<<kN / 256, 256, 0, free_stream>>>(b_, kN, 1.0f);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<cudasim::TimelineSpan> spans = device_spans();
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_DOUBLE_EQ(spans[0].start_ns, t1);
  EXPECT_DOUBLE_EQ(spans[1].start_ns, t1) << "the non-blocking stream's kernel does not wait for the fill";
  EXPECT_EQ(cudaStreamDestroy(free_stream), cudaSuccess);
}

TEST_F(Timeline, AMemsetAndACublasGemmTakeTheirRooflineTime) {
  const cudasim::GpuSpec& gpu = cudasim::modelled_gpu();
  const double t0 = cudasim::host_time_ns();
  ASSERT_EQ(cudaMemsetAsync(a_, 0, kN * sizeof(float), s1_), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s1_), cudaSuccess);
  EXPECT_NEAR(cudasim::host_time_ns() - t0,
              cudasim::model_library_call(0, kN * sizeof(float), false, false, gpu).total_ns, kNs);

  cublasHandle_t handle;
  ASSERT_EQ(cublasCreate(&handle), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasSetStream(handle, s1_), CUBLAS_STATUS_SUCCESS);
  const int n = 128;  // 128 x 128 matrices fit in a_
  const float one = 1.0f, zero = 0.0f;
  cudasim::reset_timeline();
  ASSERT_EQ(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a_, n, a_, n, &zero, b_, n),
            CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cudaStreamSynchronize(s1_), cudaSuccess);
  const std::vector<cudasim::TimelineSpan> spans = device_spans();
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].kind, "library");
  EXPECT_EQ(spans[0].name, "cublasSgemm");
  // With beta = 0 the GEMM reads A and B and writes C: three matrices of N x N floats.
  const std::uint64_t N = n;
  EXPECT_NEAR(spans[0].end_ns - spans[0].start_ns,
              cudasim::model_library_call(2 * N * N * N, 3 * N * N * 4, false, false, gpu).total_ns, kNs);
  // With beta = 1 it reads C too.
  cudasim::reset_timeline();
  ASSERT_EQ(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a_, n, a_, n, &one, b_, n),
            CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cudaStreamSynchronize(s1_), cudaSuccess);
  const std::vector<cudasim::TimelineSpan> accumulating = device_spans();
  ASSERT_EQ(accumulating.size(), 1u);
  EXPECT_NEAR(accumulating[0].end_ns - accumulating[0].start_ns,
              cudasim::model_library_call(2 * N * N * N, 4 * N * N * 4, false, false, gpu).total_ns, kNs);
  EXPECT_EQ(cublasDestroy(handle), CUBLAS_STATUS_SUCCESS);
}

TEST(HostClock, TheWallClockDropsTheTimeTheSimulatorTakesToRunAKernel) {
  cudasim::set_host_clock(cudasim::HostClock::kWall);
  const int n = 1 << 22;
  float* x = nullptr;
  ASSERT_EQ(cudaMalloc(&x, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemset(x, 0, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  using Clock = std::chrono::steady_clock;
  const auto ns = [](Clock::duration d) { return std::chrono::duration<double, std::nano>(d).count(); };
  const double before = cudasim::host_time_ns();
  const Clock::time_point r0 = Clock::now();
  scale<<<n / 256, 256>>>(x, n, 2.0f);  // tens of milliseconds on the CPU, microseconds on the GPU
  const Clock::time_point r1 = Clock::now();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const Clock::time_point r2 = Clock::now();
  const double kernel = cudasim::last_launch_stats().modelled.total_ns;
  const double advanced = cudasim::host_time_ns() - before;
  const double launching = ns(r1 - r0), waiting = ns(r2 - r1);
  ASSERT_GT(waiting, 4 * kernel) << "the test needs a kernel the CPU runs far slower than the model";
  // The host continues where the kernel ends on the model, not where the CPU finished it: the
  // real time of the launch call counts (host time), the real wait does not.
  EXPECT_GE(advanced, kernel);
  EXPECT_LT(advanced, launching + kernel + waiting / 2)
      << "launch call " << launching << " ns, wait " << waiting << " ns, modelled kernel " << kernel << " ns";
  // Between waits it moves in real time.
  const double t = cudasim::host_time_ns();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_GE(cudasim::host_time_ns() - t, 20e6);
  EXPECT_EQ(cudaFree(x), cudaSuccess);
}

TEST(HostClock, TheFreeClockMovesOnlyWhereTheHostWaits) {
  cudasim::set_host_clock(cudasim::HostClock::kFree);
  const double t = cudasim::host_time_ns();
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(cudasim::host_time_ns(), t);
  cudasim::set_host_clock(cudasim::HostClock::kWall);
}

TEST(HostClock, WorkersStartedTogetherRunSideBySideAndAHandOffCarriesTheTime) {
  cudasim::set_host_clock(cudasim::HostClock::kFree);
  cudasim::spend_host_time(1e6);
  const double start = cudasim::host_time_ns();
  // Two workers, each doing 3 ms of modelled work; the first may run to the end (and raise the
  // latest host time) before the second thread even starts in real time.
  double ends[2] = {0, 0};
  for (int w = 0; w < 2; ++w) {
    std::thread([&ends, w, start] {
      cudasim::wait_for_host_time(start);
      cudasim::spend_host_time(3e6);
      ends[w] = cudasim::host_time_ns();
    }).join();  // one after the other in real time: the worst case for the second
  }
  EXPECT_EQ(ends[0], start + 3e6);
  EXPECT_EQ(ends[1], start + 3e6) << "the second worker must not start where the first ended";
  // A thread that does not say where it starts begins at the latest host time reached.
  double late = 0;
  std::thread([&late] { late = cudasim::host_time_ns(); }).join();
  EXPECT_GE(late, start + 3e6);
  // The hand-off: the consumer continues at the later of its time and the producer's.
  EXPECT_EQ(cudasim::host_time_ns(), start);
  cudasim::wait_for_host_time(ends[0]);
  EXPECT_EQ(cudasim::host_time_ns(), start + 3e6);
  cudasim::wait_for_host_time(start);  // an earlier time does not move it back
  EXPECT_EQ(cudasim::host_time_ns(), start + 3e6);
  cudasim::set_host_clock(cudasim::HostClock::kWall);
}

TEST_F(Timeline, TheTimelineIsWrittenAsAChromeTrace) {
  ASSERT_EQ(cudaMemcpyAsync(a_, b_, 1024, cudaMemcpyDeviceToDevice, s1_), cudaSuccess);
  scale<<<kN / 256, 256, 0, s1_>>>(a_, kN, 2.0f);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::string path = ::testing::TempDir() + "cudasim_timeline_test.json";
  std::string error;
  ASSERT_TRUE(cudasim::write_timeline(path, &error)) << error;
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string json = text.str();
  EXPECT_NE(json.find("\"traceEvents\""), std::string::npos);
  EXPECT_NE(json.find("\"name\": \"scale\""), std::string::npos);
  EXPECT_NE(json.find("\"name\": \"DtoD 1.0 KB\""), std::string::npos);
  EXPECT_NE(json.find("\"thread_name\""), std::string::npos);
  EXPECT_NE(json.find("modelled " + std::string(cudasim::modelled_gpu().name)), std::string::npos);
  std::remove(path.c_str());

  EXPECT_FALSE(cudasim::write_timeline("/nonexistent-folder/t.json", &error));
  EXPECT_NE(error.find("/nonexistent-folder/t.json"), std::string::npos);
}

}  // namespace

#else

TEST(Timeline, IsASimulatorFeature) { GTEST_SKIP() << "the modelled clock is the simulator's"; }

#endif
