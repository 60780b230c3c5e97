// CUDA graphs by stream capture: a recorded sequence replays with one host call, and gives the
// same results as the launches it recorded.
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

TEST_F(Graphs, TheLegacyStreamCannotBeCapturedAndACapturingStreamCannotBeWaitedFor) {
  EXPECT_EQ(cudaStreamBeginCapture(nullptr, cudaStreamCaptureModeGlobal), cudaErrorStreamCaptureUnsupported);
  (void)cudaGetLastError();
  ASSERT_EQ(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal), cudaSuccess);
  EXPECT_NE(cudaStreamSynchronize(stream_), cudaSuccess);
  cudaGraph_t graph{};
  ASSERT_EQ(cudaStreamEndCapture(stream_, &graph), cudaSuccess);
  (void)cudaGetLastError();
  EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess);
}

}  // namespace
