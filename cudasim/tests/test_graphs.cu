// CUDA graphs by stream capture: a recorded sequence replays with one host call, and gives the
// same results as the launches it recorded; a capture may fork into other streams through
// events and join back.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <vector>

namespace {

__global__ void add_one(int* values, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) values[i] += 1;
}

__global__ void times_two(int* values, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) values[i] *= 2;
}

__global__ void times_ten_plus(int* values, const int* other, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) values[i] = values[i] * 10 + other[i];
}

class Graphs : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(cudaStreamCreate(&stream_), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&values_, kN * sizeof(int)), cudaSuccess);
    ASSERT_EQ(cudaMemset(values_, 0, kN * sizeof(int)), cudaSuccess);
  }
  void TearDown() override {
    EXPECT_EQ(cudaFree(values_), cudaSuccess);
    EXPECT_EQ(cudaStreamDestroy(stream_), cudaSuccess);
  }
  std::vector<int> values() {
    std::vector<int> host(kN);
    EXPECT_EQ(cudaMemcpy(host.data(), values_, kN * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
    return host;
  }
  static constexpr int kN = 300;
  cudaStream_t stream_{};
  int* values_ = nullptr;
};

TEST_F(Graphs, ACapturedSequenceReplaysInOrderEachTimeItIsLaunched) {
  ASSERT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal), cudaSuccess);
  cudaStreamCaptureStatus status{};
  ASSERT_EQ(cudaStreamIsCapturing(stream_, &status), cudaSuccess);
  EXPECT_EQ(status, cudaStreamCaptureStatusActive);
  add_one<<<3, 128, 0, stream_>>>(values_, kN);    // (v + 1) * 2, in this order
  times_two<<<3, 128, 0, stream_>>>(values_, kN);
  cudaGraph_t graph{};
  ASSERT_EQ(cudaStreamEndCapture(stream_, &graph), cudaSuccess);
  // Recording ran nothing.
  EXPECT_EQ(values()[0], 0);

  size_t nodes = 0;
  ASSERT_EQ(cudaGraphGetNodes(graph, nullptr, &nodes), cudaSuccess);
  EXPECT_EQ(nodes, 2u);

  cudaGraphExec_t exec{};
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  for (int replay = 0; replay < 3; ++replay) ASSERT_EQ(cudaGraphLaunch(exec, stream_), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  const std::vector<int> after = values();
  for (int i = 0; i < kN; ++i) ASSERT_EQ(after[i], 14) << "at " << i;  // 0 -> 2 -> 6 -> 14
  EXPECT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
  EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess);
}

TEST_F(Graphs, ReplayingCostsOneHostCallInsteadOfOnePerKernel) {
#ifdef CUDASIM
  const int steps = 50;
  ASSERT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal), cudaSuccess);
  for (int s = 0; s < steps; ++s) add_one<<<3, 128, 0, stream_>>>(values_, kN);
  cudaGraph_t graph{};
  ASSERT_EQ(cudaStreamEndCapture(stream_, &graph), cudaSuccess);
  cudaGraphExec_t exec{};
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);

  cudasim::reset_stats();
  ASSERT_EQ(cudaGraphLaunch(exec, stream_), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  const cudasim::ApiStats api = cudasim::api_stats();
  EXPECT_EQ(api.graph_launch_calls, 1u);
  EXPECT_EQ(api.kernel_launch_calls, 0u);
  ASSERT_EQ(cudasim::kernel_stats().size(), 1u);
  EXPECT_EQ(cudasim::kernel_stats()[0].launches, static_cast<std::uint64_t>(steps));  // all ran
  EXPECT_EQ(values()[kN - 1], steps);
  EXPECT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
  EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess);
#else
  GTEST_SKIP() << "host API call counts come from the simulator";
#endif
}

// The capture forks into `side` through one event and joins back through another: `side`'s
// work is captured too, and each replay runs it before the kernel that waits for it.
TEST_F(Graphs, ACaptureForksIntoAnotherStreamThroughAnEventAndJoinsBack) {
  cudaStream_t side{};
  cudaEvent_t fork{}, join{};
  int* other = nullptr;
  ASSERT_EQ(cudaStreamCreate(&side), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&fork), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&join), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&other, kN * sizeof(int)), cudaSuccess);

  ASSERT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(fork, stream_), cudaSuccess);
  ASSERT_EQ(cudaStreamWaitEvent(side, fork, 0), cudaSuccess);
  cudaStreamCaptureStatus status{};
  ASSERT_EQ(cudaStreamIsCapturing(side, &status), cudaSuccess);
  EXPECT_EQ(status, cudaStreamCaptureStatusActive);
  ASSERT_EQ(cudaMemsetAsync(other, 0, kN * sizeof(int), side), cudaSuccess);
  add_one<<<3, 128, 0, side>>>(other, kN);  // other = 1
  ASSERT_EQ(cudaEventRecord(join, side), cudaSuccess);
  add_one<<<3, 128, 0, stream_>>>(values_, kN);  // v + 1, alongside
  ASSERT_EQ(cudaStreamWaitEvent(stream_, join, 0), cudaSuccess);
  times_ten_plus<<<3, 128, 0, stream_>>>(values_, other, kN);  // (v + 1) * 10 + 1
  cudaGraph_t graph{};
  ASSERT_EQ(cudaStreamEndCapture(stream_, &graph), cudaSuccess);
  ASSERT_EQ(cudaStreamIsCapturing(side, &status), cudaSuccess);
  EXPECT_EQ(status, cudaStreamCaptureStatusNone);  // ending the capture ended it for side too
  EXPECT_EQ(values()[0], 0);                       // recording ran nothing

  size_t nodes = 0;
  ASSERT_EQ(cudaGraphGetNodes(graph, nullptr, &nodes), cudaSuccess);
  EXPECT_EQ(nodes, 4u);  // the memset and three kernels; events are edges, not nodes
  cudaGraphExec_t exec{};
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  for (int replay = 0; replay < 2; ++replay) ASSERT_EQ(cudaGraphLaunch(exec, stream_), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  const std::vector<int> after = values();
  for (int i = 0; i < kN; ++i) ASSERT_EQ(after[i], 121) << "at " << i;  // 0 -> 11 -> 121
  EXPECT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
  EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess);
  EXPECT_EQ(cudaFree(other), cudaSuccess);
  EXPECT_EQ(cudaEventDestroy(fork), cudaSuccess);
  EXPECT_EQ(cudaEventDestroy(join), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(side), cudaSuccess);
}

// A stream that joined a capture is asked about it (CUDA 13's cudaStreamGetCaptureInfo) and
// extends the graph by hand: a kernel node after the dependencies it was given, made the
// stream's dependency, so that its next captured kernel follows the node.
TEST_F(Graphs, AStreamThatJoinedACaptureAddsANodeByHandAfterItsDependencies) {
  cudaStream_t side{};
  cudaEvent_t fork{}, join{};
  ASSERT_EQ(cudaStreamCreate(&side), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&fork), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&join), cudaSuccess);

  ASSERT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal), cudaSuccess);
  add_one<<<3, 128, 0, stream_>>>(values_, kN);  // v + 1
  ASSERT_EQ(cudaEventRecord(fork, stream_), cudaSuccess);
  ASSERT_EQ(cudaStreamWaitEvent(side, fork, 0), cudaSuccess);

  cudaStreamCaptureStatus status{}, origin_status{};
  unsigned long long id = 0, origin_id = 1;
  cudaGraph_t graph{}, origin_graph{};
  const cudaGraphNode_t* dependencies = nullptr;
  size_t dependency_count = 0;
  ASSERT_EQ(cudaStreamGetCaptureInfo(stream_, &origin_status, &origin_id, &origin_graph), cudaSuccess);
  ASSERT_EQ(cudaStreamGetCaptureInfo(side, &status, &id, &graph, &dependencies, nullptr, &dependency_count),
            cudaSuccess);
  EXPECT_EQ(status, cudaStreamCaptureStatusActive);
  EXPECT_EQ(id, origin_id);  // one capture, seen from either stream
  EXPECT_EQ(graph, origin_graph);
  ASSERT_EQ(dependency_count, 1u);  // the kernel before the fork

  int n = kN;
  void* arguments[] = {&values_, &n};
  cudaKernelNodeParams params{};
  params.func = reinterpret_cast<void*>(times_two);
  params.gridDim = dim3(3);
  params.blockDim = dim3(128);
  params.kernelParams = arguments;
  cudaGraphNode_t doubled{};
  ASSERT_EQ(cudaGraphAddKernelNode(&doubled, graph, dependencies, dependency_count, &params), cudaSuccess);
  ASSERT_EQ(cudaStreamUpdateCaptureDependencies(side, &doubled, nullptr, 1, cudaStreamSetCaptureDependencies),
            cudaSuccess);
  add_one<<<3, 128, 0, side>>>(values_, kN);  // after the node: (v + 1) * 2 + 1
  ASSERT_EQ(cudaEventRecord(join, side), cudaSuccess);
  ASSERT_EQ(cudaStreamWaitEvent(stream_, join, 0), cudaSuccess);
  times_two<<<3, 128, 0, stream_>>>(values_, kN);  // ((v + 1) * 2 + 1) * 2
  cudaGraph_t captured{};
  ASSERT_EQ(cudaStreamEndCapture(stream_, &captured), cudaSuccess);
  EXPECT_EQ(captured, graph);
  ASSERT_EQ(cudaStreamGetCaptureInfo(side, &status), cudaSuccess);
  EXPECT_EQ(status, cudaStreamCaptureStatusNone);

  size_t nodes = 0;
  ASSERT_EQ(cudaGraphGetNodes(captured, nullptr, &nodes), cudaSuccess);
  EXPECT_EQ(nodes, 4u);
  cudaGraphExec_t exec{};
  ASSERT_EQ(cudaGraphInstantiate(&exec, captured, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream_), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  const std::vector<int> after = values();
  for (int i = 0; i < kN; ++i) ASSERT_EQ(after[i], 6) << "at " << i;  // 0 -> 1 -> 2 -> 3 -> 6
  EXPECT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
  EXPECT_EQ(cudaGraphDestroy(captured), cudaSuccess);
  EXPECT_EQ(cudaEventDestroy(fork), cudaSuccess);
  EXPECT_EQ(cudaEventDestroy(join), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(side), cudaSuccess);
}

// A copy into pageable host memory is captured as a node like any other (outside a capture it
// would wait for the stream instead), and each replay copies again.
TEST_F(Graphs, ACopyToPageableMemoryIsCapturedAndRunsAtEachReplay) {
  std::vector<int> host(kN, -1);
  ASSERT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal), cudaSuccess);
  add_one<<<3, 128, 0, stream_>>>(values_, kN);
  ASSERT_EQ(cudaMemcpyAsync(host.data(), values_, kN * sizeof(int), cudaMemcpyDeviceToHost, stream_), cudaSuccess);
  cudaGraph_t graph{};
  ASSERT_EQ(cudaStreamEndCapture(stream_, &graph), cudaSuccess);
  EXPECT_EQ(host[0], -1);  // recording copied nothing
  cudaGraphExec_t exec{};
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  for (int replay = 1; replay <= 2; ++replay) {
    ASSERT_EQ(cudaGraphLaunch(exec, stream_), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    for (int i = 0; i < kN; ++i) ASSERT_EQ(host[i], replay) << "replay " << replay << " at " << i;
  }
  EXPECT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
  EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess);
}

#ifdef CUDASIM  // how a GPU answers these misuses is documented only in part
TEST_F(Graphs, ACaptureEndsOnlyWhereItBeganAndItsEventsCannotBeWaitedForByTheHost) {
  cudaStream_t side{};
  cudaEvent_t fork{}, outside{};
  ASSERT_EQ(cudaStreamCreate(&side), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&fork), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&outside), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(outside, side), cudaSuccess);
  ASSERT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal), cudaSuccess);
  EXPECT_EQ(cudaStreamWaitEvent(stream_, outside, 0), cudaErrorStreamCaptureIsolation);
  ASSERT_EQ(cudaEventRecord(fork, stream_), cudaSuccess);
  EXPECT_EQ(cudaEventSynchronize(fork), cudaErrorCapturedEvent);
  EXPECT_EQ(cudaEventQuery(fork), cudaErrorCapturedEvent);
  ASSERT_EQ(cudaStreamWaitEvent(side, fork, 0), cudaSuccess);
  cudaGraph_t graph{};
  EXPECT_EQ(cudaStreamEndCapture(side, &graph), cudaErrorStreamCaptureUnmatched);
  ASSERT_EQ(cudaStreamEndCapture(stream_, &graph), cudaSuccess);
  cudaStream_t destroyed{};
  ASSERT_EQ(cudaStreamCreate(&destroyed), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(destroyed), cudaSuccess);
  cudaStreamCaptureStatus status{};
  EXPECT_EQ(cudaStreamGetCaptureInfo(destroyed, &status), cudaErrorInvalidResourceHandle);
  (void)cudaGetLastError();
  EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess);
  EXPECT_EQ(cudaEventDestroy(fork), cudaSuccess);
  EXPECT_EQ(cudaEventDestroy(outside), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(side), cudaSuccess);
}
#endif

TEST_F(Graphs, TheLegacyStreamCannotBeCapturedAndACapturingStreamCannotBeWaitedFor) {
  EXPECT_EQ(cudaStreamBeginCapture(nullptr, cudaStreamCaptureModeGlobal), cudaErrorStreamCaptureUnsupported);
  (void)cudaGetLastError();
  ASSERT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal), cudaSuccess);
  EXPECT_NE(cudaStreamSynchronize(stream_), cudaSuccess);
  // The refused synchronisation invalidates the capture: no graph (as on an H200, 2026-11-27).
  cudaStreamCaptureStatus status{};
  EXPECT_EQ(cudaStreamIsCapturing(stream_, &status), cudaSuccess);
  EXPECT_EQ(status, cudaStreamCaptureStatusInvalidated);
  cudaGraph_t graph = reinterpret_cast<cudaGraph_t>(&status);
  EXPECT_EQ(cudaStreamEndCapture(stream_, &graph), cudaErrorStreamCaptureInvalidated);
  EXPECT_EQ(graph, nullptr);
  (void)cudaGetLastError();
  // The stream is usable again: a fresh capture gives a graph.
  ASSERT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal), cudaSuccess);
  ASSERT_EQ(cudaStreamEndCapture(stream_, &graph), cudaSuccess);
  EXPECT_NE(graph, nullptr);
  EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess);
}

}  // namespace
