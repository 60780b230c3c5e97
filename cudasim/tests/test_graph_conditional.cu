// Conditional graph nodes (CUDA 12.3+, the CUDA 13 API): if (with an else body), while and
// switch nodes added with cudaGraphAddNode, their conditions set by kernels with
// cudaGraphSetConditional or given a default at each launch, their bodies filled node by node
// or by capturing a stream into them (cudaStreamBeginCaptureToGraph), and a conditional node
// added to a graph while a stream captures it (cudaStreamGetCaptureInfo,
// cudaStreamUpdateCaptureDependencies). Valid CUDA: the same file runs on a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

namespace {

#define ASSERT_CUDA(expr) ASSERT_EQ((expr), cudaSuccess)

__global__ void condition_from(const int* value, cudaGraphConditionalHandle handle) {
  cudaGraphSetConditional(handle, static_cast<unsigned>(*value));
}
__global__ void store(int* out, int value) { *out = value; }
/// One trip of a counted loop: counts the trip, and ends the loop when the counter reaches 0.
__global__ void count_down(int* counter, int* trips, cudaGraphConditionalHandle handle) {
  ++*trips;
  if (--*counter == 0) cudaGraphSetConditional(handle, 0);
}
/// A while loop's test and body in one, run before the loop and as its body: the condition is
/// the counter, taken down by one while it is not zero.
__global__ void take_one_while_any(int* counter, int* trips, cudaGraphConditionalHandle handle) {
  if (*counter > 0) {
    --*counter;
    ++*trips;
  }
  cudaGraphSetConditional(handle, static_cast<unsigned>(*counter));
}

/// Adds a one-thread kernel node to `graph` through cudaGraphAddNode, after `after` if not null.
cudaError_t add_kernel(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* after, void* kernel,
                       void** args) {
  cudaGraphNodeParams params{};
  params.type = cudaGraphNodeTypeKernel;
  params.kernel.func = kernel;
  params.kernel.gridDim = dim3(1);
  params.kernel.blockDim = dim3(1);
  params.kernel.kernelParams = args;
  return cudaGraphAddNode(node, graph, after, nullptr, after ? 1 : 0, &params);
}

/// Adds a conditional node of `type` with `size` bodies to `graph`; `bodies` gets them.
cudaError_t add_conditional(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* after, size_t after_count,
                            cudaGraphConditionalHandle handle, cudaGraphConditionalNodeType type, unsigned size,
                            cudaGraph_t** bodies) {
  cudaGraphNodeParams params{};
  params.type = cudaGraphNodeTypeConditional;
  params.conditional.handle = handle;
  params.conditional.type = type;
  params.conditional.size = size;
  const cudaError_t e = cudaGraphAddNode(node, graph, after, nullptr, after_count, &params);
  *bodies = params.conditional.phGraph_out;
  return e;
}

/// Managed memory for a few ints that kernels and, between launches, the test read and write.
struct Ints {
  int* p = nullptr;
  explicit Ints(int count) { EXPECT_EQ(cudaMallocManaged(&p, count * sizeof(int)), cudaSuccess); }
  ~Ints() { cudaFree(p); }
};

/// A graph to build, launched through one executable, and two ints for its kernels: `value_`,
/// the source of a condition, and `out_`, what a body stored.
class GraphConditional : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_CUDA(cudaGraphCreate(&graph_, 0)); }
  void TearDown() override {
    if (exec_ != nullptr) EXPECT_EQ(cudaGraphExecDestroy(exec_), cudaSuccess);
    EXPECT_EQ(cudaGraphDestroy(graph_), cudaSuccess);
  }
  /// Instantiates the graph at the first call; launches it and waits.
  void launch() {
    if (exec_ == nullptr) ASSERT_CUDA(cudaGraphInstantiate(&exec_, graph_, 0));
    ASSERT_CUDA(cudaGraphLaunch(exec_, 0));
    ASSERT_CUDA(cudaDeviceSynchronize());
  }
  /// The graph's first node: a kernel that sets the condition behind `handle` to *value_.
  void add_decision(cudaGraphNode_t* node, cudaGraphConditionalHandle& handle) {
    decision_args_[0] = &value_;
    decision_args_[1] = &handle;
    ASSERT_CUDA(add_kernel(node, graph_, nullptr, reinterpret_cast<void*>(condition_from), decision_args_));
  }

  Ints data_{2};
  int* value_ = data_.p;
  int* out_ = data_.p + 1;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;

 private:
  void* decision_args_[2] = {};
};

TEST_F(GraphConditional, AnIfNodeRunsItsBodyOrItsElseBodyAsAKernelDecided) {
  cudaGraphConditionalHandle handle;
  ASSERT_CUDA(cudaGraphConditionalHandleCreate(&handle, graph_));
  cudaGraphNode_t decide, branch, then_node, else_node;
  add_decision(&decide, handle);
  cudaGraph_t* bodies = nullptr;
  ASSERT_CUDA(add_conditional(&branch, graph_, &decide, 1, handle, cudaGraphCondTypeIf, 2, &bodies));
  int then_value = 1, else_value = 2;
  void* then_args[] = {&out_, &then_value};
  void* else_args[] = {&out_, &else_value};
  ASSERT_CUDA(add_kernel(&then_node, bodies[0], nullptr, reinterpret_cast<void*>(store), then_args));
  ASSERT_CUDA(add_kernel(&else_node, bodies[1], nullptr, reinterpret_cast<void*>(store), else_args));
  for (int condition : {0, 7, 0}) {
    *value_ = condition;
    *out_ = -1;
    launch();
    EXPECT_EQ(*out_, condition ? 1 : 2) << "condition " << condition;
  }
}

TEST_F(GraphConditional, AWhileNodeWithADefaultOfOneRunsItsBodyUntilAKernelClearsIt) {
  int* counter = value_;
  int* trips = out_;
  cudaGraphConditionalHandle handle;
  ASSERT_CUDA(cudaGraphConditionalHandleCreate(&handle, graph_, 1, cudaGraphCondAssignDefault));
  cudaGraphNode_t loop, body_node;
  cudaGraph_t* bodies = nullptr;
  ASSERT_CUDA(add_conditional(&loop, graph_, nullptr, 0, handle, cudaGraphCondTypeWhile, 1, &bodies));
  void* args[] = {&counter, &trips, &handle};
  ASSERT_CUDA(add_kernel(&body_node, bodies[0], nullptr, reinterpret_cast<void*>(count_down), args));
  *counter = 5;
  *trips = 0;
  launch();
  EXPECT_EQ(*trips, 5);
  // The last trip left the condition 0; the default makes it 1 again at the next launch.
  *counter = 3;
  launch();
  EXPECT_EQ(*trips, 8);
}

TEST_F(GraphConditional, ASwitchNodeRunsTheBodyOfTheConditionsValueAndNonePastTheLast) {
  cudaGraphConditionalHandle handle;
  ASSERT_CUDA(cudaGraphConditionalHandleCreate(&handle, graph_));
  cudaGraphNode_t decide, choice;
  add_decision(&decide, handle);
  cudaGraph_t* bodies = nullptr;
  ASSERT_CUDA(add_conditional(&choice, graph_, &decide, 1, handle, cudaGraphCondTypeSwitch, 3, &bodies));
  int stored[3] = {10, 11, 12};
  void* args[3][2] = {{&out_, &stored[0]}, {&out_, &stored[1]}, {&out_, &stored[2]}};
  for (int i = 0; i < 3; ++i) {
    cudaGraphNode_t node;
    ASSERT_CUDA(add_kernel(&node, bodies[i], nullptr, reinterpret_cast<void*>(store), args[i]));
  }
  for (int condition : {2, 0, 1, 3}) {
    *value_ = condition;
    *out_ = -1;
    launch();
    EXPECT_EQ(*out_, condition < 3 ? 10 + condition : -1) << "condition " << condition;
  }
}

TEST(GraphConditionalCapture, AWhileNodeAddedDuringACaptureRunsBetweenTheCapturedKernels) {
  Ints data(3);
  int* counter = data.p;
  int* trips = data.p + 1;
  int* after_loop = data.p + 2;
  cudaStream_t stream;
  ASSERT_CUDA(cudaStreamCreate(&stream));
  cudaStreamCaptureStatus status;
  ASSERT_CUDA(cudaStreamGetCaptureInfo(stream, &status));
  EXPECT_EQ(status, cudaStreamCaptureStatusNone);

  ASSERT_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  cudaGraph_t graph = nullptr;
  const cudaGraphNode_t* dependencies = nullptr;
  size_t dependency_count = 1;
  ASSERT_CUDA(cudaStreamGetCaptureInfo(stream, &status, nullptr, &graph, &dependencies, nullptr, &dependency_count));
  EXPECT_EQ(status, cudaStreamCaptureStatusActive);
  EXPECT_EQ(dependency_count, 0u);
  cudaGraphConditionalHandle handle;
  ASSERT_CUDA(cudaGraphConditionalHandleCreate(&handle, graph));
  take_one_while_any<<<1, 1, 0, stream>>>(counter, trips, handle);  // the loop's first test
  ASSERT_CUDA(cudaStreamGetCaptureInfo(stream, &status, nullptr, &graph, &dependencies, nullptr, &dependency_count));
  ASSERT_EQ(dependency_count, 1u);
  cudaGraphNode_t loop;
  cudaGraph_t* bodies = nullptr;
  ASSERT_CUDA(add_conditional(&loop, graph, dependencies, dependency_count, handle, cudaGraphCondTypeWhile, 1, &bodies));
  ASSERT_CUDA(cudaStreamUpdateCaptureDependencies(stream, &loop, nullptr, 1, cudaStreamSetCaptureDependencies));
  store<<<1, 1, 0, stream>>>(after_loop, 1);
  cudaGraph_t captured = nullptr;
  ASSERT_CUDA(cudaStreamEndCapture(stream, &captured));
  EXPECT_EQ(captured, graph);
  size_t node_count = 0;
  ASSERT_CUDA(cudaGraphGetNodes(captured, nullptr, &node_count));
  EXPECT_EQ(node_count, 3u);

  // The loop's body, captured into the graph the node made (no graph to return: null).
  const cudaGraph_t body = bodies[0];
  ASSERT_CUDA(cudaStreamBeginCaptureToGraph(stream, body, nullptr, nullptr, 0, cudaStreamCaptureModeGlobal));
  take_one_while_any<<<1, 1, 0, stream>>>(counter, trips, handle);
  ASSERT_CUDA(cudaStreamEndCapture(stream, nullptr));
  ASSERT_CUDA(cudaGraphGetNodes(body, nullptr, &node_count));
  EXPECT_EQ(node_count, 1u);

  cudaGraphExec_t exec;
  ASSERT_CUDA(cudaGraphInstantiate(&exec, captured, 0));
  for (int start : {0, 4}) {
    *counter = start;
    *trips = 0;
    *after_loop = 0;
    ASSERT_CUDA(cudaGraphLaunch(exec, stream));
    ASSERT_CUDA(cudaStreamSynchronize(stream));
    EXPECT_EQ(*trips, start) << "a while loop: no trip when the counter starts at 0";
    EXPECT_EQ(*counter, 0);
    EXPECT_EQ(*after_loop, 1) << "the kernel captured after the loop ran";
  }
  ASSERT_CUDA(cudaGraphExecDestroy(exec));
  ASSERT_CUDA(cudaGraphDestroy(captured));
  ASSERT_CUDA(cudaStreamDestroy(stream));
}

#ifdef CUDASIM
TEST_F(GraphConditional, SimulatorRefusesABadSizeAHandleOfAnotherGraphAndDestroyingABody) {
  cudaGraph_t other;
  ASSERT_CUDA(cudaGraphCreate(&other, 0));
  cudaGraphConditionalHandle mine, theirs;
  ASSERT_CUDA(cudaGraphConditionalHandleCreate(&mine, graph_));
  ASSERT_CUDA(cudaGraphConditionalHandleCreate(&theirs, other));
  cudaGraphNode_t node;
  cudaGraph_t* bodies = nullptr;
  EXPECT_EQ(add_conditional(&node, graph_, nullptr, 0, mine, cudaGraphCondTypeWhile, 2, &bodies),
            cudaErrorInvalidValue);
  EXPECT_EQ(add_conditional(&node, graph_, nullptr, 0, mine, cudaGraphCondTypeIf, 3, &bodies), cudaErrorInvalidValue);
  EXPECT_EQ(add_conditional(&node, graph_, nullptr, 0, theirs, cudaGraphCondTypeIf, 1, &bodies),
            cudaErrorInvalidValue);
  ASSERT_CUDA(add_conditional(&node, graph_, nullptr, 0, mine, cudaGraphCondTypeIf, 1, &bodies));
  EXPECT_EQ(cudaGraphDestroy(bodies[0]), cudaErrorInvalidValue);
  (void)cudaGetLastError();
  ASSERT_CUDA(cudaGraphDestroy(other));
}
#endif

}  // namespace
