// CUDA graphs built node by node: kernel, 1-D and 3-D copy, memset, host, empty, memory
// allocation and free nodes (and allocations in a captured stream), child graph nodes, event
// record and wait nodes, and
// clones of a graph, executables updated node by node or from another graph; dependencies given
// when a node is added or later with cudaGraphAddDependencies, instantiated and launched more
// than once. Kernel arguments are copied when the node is added. Valid CUDA: the same file runs
// on a GPU (cudaGraphAddDependencies takes edge data from CUDA 13 on).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

namespace {

#define ASSERT_CUDA(expr) ASSERT_EQ((expr), cudaSuccess)

__global__ void scale_into(const float* in, float* out, int n, float factor) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * factor;
}

__global__ void add_into(const float* a, const float* b, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}

__global__ void set_value(int* x, int value) { *x = value; }
__global__ void affine(int* x) { *x = *x * 2 + 1; }

cudaError_t add_edge(cudaGraph_t graph, cudaGraphNode_t from, cudaGraphNode_t to) {
#if CUDART_VERSION >= 13000
  return cudaGraphAddDependencies(graph, &from, &to, nullptr, 1);
#else
  return cudaGraphAddDependencies(graph, &from, &to, 1);
#endif
}

cudaKernelNodeParams kernel_params(void* func, dim3 grid, dim3 block, void** args) {
  cudaKernelNodeParams p = {};
  p.func = func;
  p.gridDim = grid;
  p.blockDim = block;
  p.sharedMemBytes = 0;
  p.kernelParams = args;
  p.extra = nullptr;
  return p;
}

TEST(GraphApi, DiamondOfCopiesAndKernelsRunsInDependencyOrderEachLaunch) {
  const int n = 1000;  // not a multiple of the block size
  const size_t bytes = n * sizeof(float);
  std::vector<float> h_in(n), h_out(n, -1.0f);
  for (int i = 0; i < n; ++i) h_in[i] = static_cast<float>(i % 17) - 8.0f;
  float *in = nullptr, *twice = nullptr, *thrice = nullptr, *sum = nullptr;
  ASSERT_CUDA(cudaMalloc(&in, bytes));
  ASSERT_CUDA(cudaMalloc(&twice, bytes));
  ASSERT_CUDA(cudaMalloc(&thrice, bytes));
  ASSERT_CUDA(cudaMalloc(&sum, bytes));

  cudaGraph_t graph;
  ASSERT_CUDA(cudaGraphCreate(&graph, 0));
  cudaGraphNode_t upload, scale2, scale3, add, download;
  ASSERT_CUDA(cudaGraphAddMemcpyNode1D(&upload, graph, nullptr, 0, in, h_in.data(), bytes, cudaMemcpyHostToDevice));
  int count = n;
  float factor = 2.0f;
  void* args2[] = {&in, &twice, &count, &factor};
  cudaKernelNodeParams p2 = kernel_params(reinterpret_cast<void*>(scale_into), dim3((n + 127) / 128), dim3(128), args2);
  // Neither kernel was launched or named with its type before: the simulator knows them as the
  // rewrite registered them (see cudaLaunchKernel).
  ASSERT_CUDA(cudaGraphAddKernelNode(&scale2, graph, &upload, 1, &p2));
  factor = 3.0f;  // the first node copied its arguments: this one gets 3
  void* args3[] = {&in, &thrice, &count, &factor};
  cudaKernelNodeParams p3 = kernel_params(reinterpret_cast<void*>(scale_into), dim3((n + 127) / 128), dim3(128), args3);
  ASSERT_CUDA(cudaGraphAddKernelNode(&scale3, graph, &upload, 1, &p3));
  factor = 100.0f;
  void* args_add[] = {&twice, &thrice, &sum, &count};
  cudaKernelNodeParams pa = kernel_params(reinterpret_cast<void*>(add_into), dim3((n + 63) / 64), dim3(64), args_add);
  cudaGraphNode_t both[] = {scale2, scale3};
  ASSERT_CUDA(cudaGraphAddKernelNode(&add, graph, both, 2, &pa));
  ASSERT_CUDA(cudaGraphAddMemcpyNode1D(&download, graph, &add, 1, h_out.data(), sum, bytes, cudaMemcpyDeviceToHost));

  size_t node_count = 0;
  ASSERT_CUDA(cudaGraphGetNodes(graph, nullptr, &node_count));
  EXPECT_EQ(node_count, 5u);

  cudaGraphExec_t exec;
  ASSERT_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  cudaStream_t s;
  ASSERT_CUDA(cudaStreamCreate(&s));
  for (int launch = 0; launch < 2; ++launch) {
    for (int i = 0; i < n; ++i) h_in[i] += 1.0f;  // the copy node reads the host buffer at each launch
    ASSERT_CUDA(cudaGraphLaunch(exec, s));
    ASSERT_CUDA(cudaStreamSynchronize(s));
    for (int i = 0; i < n; ++i) ASSERT_EQ(h_out[i], 5.0f * h_in[i]) << "launch " << launch << " at " << i;
  }
  ASSERT_CUDA(cudaGraphExecDestroy(exec));
  ASSERT_CUDA(cudaGraphDestroy(graph));
  ASSERT_CUDA(cudaStreamDestroy(s));
  for (float* p : {in, twice, thrice, sum}) ASSERT_CUDA(cudaFree(p));
}

TEST(GraphApi, AddedDependenciesOrderNodesAgainstTheirInsertionOrder) {
  int* x = nullptr;
  ASSERT_CUDA(cudaMalloc(&x, sizeof(int)));
  ASSERT_CUDA(cudaMemset(x, 0, sizeof(int)));
  cudaFuncAttributes attributes;  // names both kernels with their types (see cudaLaunchKernel)
  ASSERT_CUDA(cudaFuncGetAttributes(&attributes, set_value));
  ASSERT_CUDA(cudaFuncGetAttributes(&attributes, affine));
  cudaGraph_t graph;
  ASSERT_CUDA(cudaGraphCreate(&graph, 0));
  int three = 3;
  void* set_args[] = {&x, &three};
  void* affine_args[] = {&x};
  cudaKernelNodeParams ps = kernel_params(reinterpret_cast<void*>(set_value), dim3(1), dim3(1), set_args);
  cudaKernelNodeParams pa = kernel_params(reinterpret_cast<void*>(affine), dim3(1), dim3(1), affine_args);
  cudaGraphNode_t set_node, affine_node;
  ASSERT_CUDA(cudaGraphAddKernelNode(&set_node, graph, nullptr, 0, &ps));
  ASSERT_CUDA(cudaGraphAddKernelNode(&affine_node, graph, nullptr, 0, &pa));
  // affine first, then set: x ends at 3 (the other order would give 7).
  ASSERT_CUDA(add_edge(graph, affine_node, set_node));
  cudaGraphExec_t exec;
  ASSERT_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  ASSERT_CUDA(cudaGraphLaunch(exec, nullptr));
  int h = -1;
  ASSERT_CUDA(cudaMemcpy(&h, x, sizeof(int), cudaMemcpyDeviceToHost));
  EXPECT_EQ(h, 3);
  ASSERT_CUDA(cudaGraphExecDestroy(exec));
  ASSERT_CUDA(cudaGraphDestroy(graph));
  ASSERT_CUDA(cudaFree(x));
}

struct Seen {
  const int* value;
  int copy = -1;
};

void CUDART_CB read_value(void* user_data) {
  auto* seen = static_cast<Seen*>(user_data);
  seen->copy = *seen->value;
}

TEST(GraphApi, HostAndEmptyNodesRunInDependencyOrder) {
  int* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, sizeof(int)));
  int h = 0;
  cudaFuncAttributes attributes;
  ASSERT_CUDA(cudaFuncGetAttributes(&attributes, set_value));
  cudaGraph_t graph;
  ASSERT_CUDA(cudaGraphCreate(&graph, 0));
  int value = 42;
  void* args[] = {&d, &value};
  cudaKernelNodeParams pk = kernel_params(reinterpret_cast<void*>(set_value), dim3(1), dim3(1), args);
  cudaGraphNode_t kernel, copy, join, host;
  ASSERT_CUDA(cudaGraphAddKernelNode(&kernel, graph, nullptr, 0, &pk));
  ASSERT_CUDA(cudaGraphAddMemcpyNode1D(&copy, graph, &kernel, 1, &h, d, sizeof(int), cudaMemcpyDeviceToHost));
  ASSERT_CUDA(cudaGraphAddEmptyNode(&join, graph, &copy, 1));
  Seen seen{&h};
  cudaHostNodeParams ph = {};
  ph.fn = read_value;
  ph.userData = &seen;
  ASSERT_CUDA(cudaGraphAddHostNode(&host, graph, &join, 1, &ph));
  cudaGraphExec_t exec;
  ASSERT_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  ASSERT_CUDA(cudaGraphLaunch(exec, nullptr));
  ASSERT_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(seen.copy, 42);
  size_t count = 4;
  cudaGraphNode_t nodes[4] = {};
  ASSERT_CUDA(cudaGraphGetNodes(graph, nodes, &count));
  EXPECT_EQ(count, 4u);
  ASSERT_CUDA(cudaGraphExecDestroy(exec));
  ASSERT_CUDA(cudaGraphDestroy(graph));
  ASSERT_CUDA(cudaFree(d));
}

// A memset node fills a buffer with a 4-byte value, a 3-D copy node uploads 100 ints into its
// middle and another copies it all back: each launch of the graph, and of its clone once the
// original is destroyed, does all three in order.
TEST(GraphApi, MemsetAndThreeDimensionalCopyNodesRunEachLaunchAndSoDoesAClone) {
  const int n = 300, part = 100, offset = 50;
  std::vector<int> h_in(part), h_out(n, 0);
  int* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, n * sizeof(int)));

  cudaGraph_t graph;
  ASSERT_CUDA(cudaGraphCreate(&graph, 0));
  cudaMemsetParams fill = {};
  fill.dst = d;
  fill.value = 7;
  fill.elementSize = sizeof(int);
  fill.width = n;
  fill.height = 1;
  cudaGraphNode_t set, upload, download;
  ASSERT_CUDA(cudaGraphAddMemsetNode(&set, graph, nullptr, 0, &fill));
  cudaMemcpy3DParms in = {};
  in.srcPtr = make_cudaPitchedPtr(h_in.data(), part * sizeof(int), part, 1);
  in.dstPtr = make_cudaPitchedPtr(d, n * sizeof(int), n, 1);
  in.dstPos = make_cudaPos(offset * sizeof(int), 0, 0);
  in.extent = make_cudaExtent(part * sizeof(int), 1, 1);
  in.kind = cudaMemcpyHostToDevice;
  ASSERT_CUDA(cudaGraphAddMemcpyNode(&upload, graph, &set, 1, &in));
  cudaMemcpy3DParms out = {};
  out.srcPtr = make_cudaPitchedPtr(d, n * sizeof(int), n, 1);
  out.dstPtr = make_cudaPitchedPtr(h_out.data(), n * sizeof(int), n, 1);
  out.extent = make_cudaExtent(n * sizeof(int), 1, 1);
  out.kind = cudaMemcpyDeviceToHost;
  ASSERT_CUDA(cudaGraphAddMemcpyNode(&download, graph, &upload, 1, &out));

  cudaGraph_t clone;
  ASSERT_CUDA(cudaGraphClone(&clone, graph));
  size_t node_count = 0;
  ASSERT_CUDA(cudaGraphGetNodes(clone, nullptr, &node_count));
  EXPECT_EQ(node_count, 3u);
  cudaGraphExec_t exec, clone_exec;
  ASSERT_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  ASSERT_CUDA(cudaGraphDestroy(graph));
  ASSERT_CUDA(cudaGraphInstantiate(&clone_exec, clone, 0));
  cudaStream_t s;
  ASSERT_CUDA(cudaStreamCreate(&s));
  for (int launch = 0; launch < 4; ++launch) {
    for (int i = 0; i < part; ++i) h_in[i] = launch * 1000 + i;
    std::fill(h_out.begin(), h_out.end(), 0);
    ASSERT_CUDA(cudaGraphLaunch(launch % 2 == 0 ? exec : clone_exec, s));
    ASSERT_CUDA(cudaStreamSynchronize(s));
    for (int i = 0; i < n; ++i) {
      const int expected = i >= offset && i < offset + part ? h_in[i - offset] : 7;
      ASSERT_EQ(h_out[i], expected) << "launch " << launch << " at " << i;
    }
  }
  ASSERT_CUDA(cudaGraphExecDestroy(exec));
  ASSERT_CUDA(cudaGraphExecDestroy(clone_exec));
  ASSERT_CUDA(cudaGraphDestroy(clone));
  ASSERT_CUDA(cudaStreamDestroy(s));
  ASSERT_CUDA(cudaFree(d));
}

// Two-byte elements in rows: only `width` elements of each row are set.
TEST(GraphApi, AMemsetNodeSetsTwoByteElementsRowByRow) {
  const size_t pitch = 32, rows = 3, width = 5;  // pitch in bytes, width in elements
  unsigned short* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, pitch * rows));
  ASSERT_CUDA(cudaMemset(d, 0, pitch * rows));
  cudaGraph_t graph;
  ASSERT_CUDA(cudaGraphCreate(&graph, 0));
  cudaMemsetParams fill = {};
  fill.dst = d;
  fill.pitch = pitch;
  fill.value = 0xbeef;
  fill.elementSize = 2;
  fill.width = width;
  fill.height = rows;
  cudaGraphNode_t set;
  ASSERT_CUDA(cudaGraphAddMemsetNode(&set, graph, nullptr, 0, &fill));
  cudaGraphExec_t exec;
  ASSERT_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  ASSERT_CUDA(cudaGraphLaunch(exec, nullptr));
  std::vector<unsigned short> back(pitch * rows / 2);
  ASSERT_CUDA(cudaMemcpy(back.data(), d, pitch * rows, cudaMemcpyDeviceToHost));
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < pitch / 2; ++c) ASSERT_EQ(back[r * pitch / 2 + c], c < width ? 0xbeef : 0) << r << "," << c;
  ASSERT_CUDA(cudaGraphExecDestroy(exec));
  ASSERT_CUDA(cudaGraphDestroy(graph));
  ASSERT_CUDA(cudaFree(d));
}

// New arguments for a kernel node of an executable change the launches after the call.
TEST(GraphApi, ExecKernelNodeSetParamsChangesTheLaunchesThatFollow) {
  int* x = nullptr;
  ASSERT_CUDA(cudaMalloc(&x, sizeof(int)));
  cudaGraph_t graph;
  ASSERT_CUDA(cudaGraphCreate(&graph, 0));
  int value = 1;
  void* args[] = {&x, &value};
  cudaKernelNodeParams p = kernel_params(reinterpret_cast<void*>(set_value), dim3(1), dim3(1), args);
  cudaGraphNode_t node;
  ASSERT_CUDA(cudaGraphAddKernelNode(&node, graph, nullptr, 0, &p));
  cudaGraphExec_t exec;
  ASSERT_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  ASSERT_CUDA(cudaGraphUpload(exec, nullptr));
  int got = 0;
  for (int v : {1, 5, 9}) {
    value = v;  // copied by the call below, not read at launch
    if (v != 1) ASSERT_CUDA(cudaGraphExecKernelNodeSetParams(exec, node, &p));
    value = -1;
    ASSERT_CUDA(cudaGraphLaunch(exec, nullptr));
    ASSERT_CUDA(cudaMemcpy(&got, x, sizeof(int), cudaMemcpyDeviceToHost));
    EXPECT_EQ(got, v);
  }
  ASSERT_CUDA(cudaGraphExecDestroy(exec));
  ASSERT_CUDA(cudaGraphDestroy(graph));
  ASSERT_CUDA(cudaFree(x));
}

// An executable takes the work of another graph of the same shape; a graph of another shape is
// refused and the executable keeps its work.
TEST(GraphApi, ExecUpdateTakesTheWorkOfAGraphOfTheSameShape) {
  int* x = nullptr;
  ASSERT_CUDA(cudaMalloc(&x, sizeof(int)));
  cudaStream_t s;
  ASSERT_CUDA(cudaStreamCreate(&s));
  auto capture = [&](int value, bool twice) {
    cudaGraph_t g{};
    EXPECT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    set_value<<<1, 1, 0, s>>>(x, value);
    affine<<<1, 1, 0, s>>>(x);  // 2v + 1
    if (twice) affine<<<1, 1, 0, s>>>(x);
    EXPECT_EQ(cudaStreamEndCapture(s, &g), cudaSuccess);
    return g;
  };
  cudaGraph_t first = capture(1, false), second = capture(10, false), longer = capture(3, true);
  cudaGraphExec_t exec;
  ASSERT_CUDA(cudaGraphInstantiate(&exec, first, 0));
  cudaGraphExecUpdateResultInfo info{};
  ASSERT_CUDA(cudaGraphExecUpdate(exec, second, &info));
  EXPECT_EQ(info.result, cudaGraphExecUpdateSuccess);
  int got = 0;
  ASSERT_CUDA(cudaGraphLaunch(exec, s));
  ASSERT_CUDA(cudaMemcpyAsync(&got, x, sizeof(int), cudaMemcpyDeviceToHost, s));
  ASSERT_CUDA(cudaStreamSynchronize(s));
  EXPECT_EQ(got, 21);
  EXPECT_EQ(cudaGraphExecUpdate(exec, longer, &info), cudaErrorGraphExecUpdateFailure);
  EXPECT_EQ(info.result, cudaGraphExecUpdateErrorTopologyChanged);
  (void)cudaGetLastError();
  ASSERT_CUDA(cudaGraphLaunch(exec, s));  // still the second graph's work
  ASSERT_CUDA(cudaMemcpyAsync(&got, x, sizeof(int), cudaMemcpyDeviceToHost, s));
  ASSERT_CUDA(cudaStreamSynchronize(s));
  EXPECT_EQ(got, 21);
  ASSERT_CUDA(cudaGraphExecDestroy(exec));
  for (cudaGraph_t g : {first, second, longer}) ASSERT_CUDA(cudaGraphDestroy(g));
  ASSERT_CUDA(cudaStreamDestroy(s));
  ASSERT_CUDA(cudaFree(x));
}

cudaMemAllocNodeParams allocation_of(size_t bytes) {
  cudaMemAllocNodeParams p = {};
  p.poolProps.allocType = cudaMemAllocationTypePinned;
  p.poolProps.location.type = cudaMemLocationTypeDevice;
  p.poolProps.location.id = 0;
  p.bytesize = bytes;
  return p;
}

unsigned long long graph_memory(cudaGraphMemAttributeType attribute) {
  unsigned long long value = ~0ull;
  EXPECT_EQ(cudaDeviceGetGraphMemAttribute(0, attribute, &value), cudaSuccess);
  return value;
}

// Allocation, kernel, copy out, free: the graph owns its buffer while it runs, and the graph
// itself may be destroyed once instantiated (NVIDIA's graphMemoryNodes does).
TEST(GraphApi, AnAllocationNodeGivesTheGraphItsOwnBufferEachLaunch) {
  const int n = 3000;
  const size_t bytes = n * sizeof(float);
  std::vector<float> h_in(n), h_out(n, -1.0f);
  for (int i = 0; i < n; ++i) h_in[i] = static_cast<float>(i % 13);
  ASSERT_CUDA(cudaDeviceGraphMemTrim(0));
  cudaGraph_t graph;
  ASSERT_CUDA(cudaGraphCreate(&graph, 0));
  cudaMemAllocNodeParams alloc = allocation_of(bytes);
  cudaGraphNode_t allocated, copied_in, scaled, copied_out, freed;
  ASSERT_CUDA(cudaGraphAddMemAllocNode(&allocated, graph, nullptr, 0, &alloc));
  float* buffer = static_cast<float*>(alloc.dptr);
  ASSERT_NE(buffer, nullptr);
  ASSERT_CUDA(cudaGraphAddMemcpyNode1D(&copied_in, graph, &allocated, 1, buffer, h_in.data(), bytes,
                                       cudaMemcpyHostToDevice));
  int count = n;
  float factor = 3.0f;
  void* args[] = {&buffer, &buffer, &count, &factor};
  const cudaKernelNodeParams k = kernel_params(reinterpret_cast<void*>(scale_into), dim3((n + 255) / 256), dim3(256), args);
  ASSERT_CUDA(cudaGraphAddKernelNode(&scaled, graph, &copied_in, 1, &k));
  ASSERT_CUDA(cudaGraphAddMemcpyNode1D(&copied_out, graph, &scaled, 1, h_out.data(), buffer, bytes,
                                       cudaMemcpyDeviceToHost));
  ASSERT_CUDA(cudaGraphAddMemFreeNode(&freed, graph, &copied_out, 1, buffer));
  cudaGraphExec_t exec;
  ASSERT_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  ASSERT_CUDA(cudaGraphDestroy(graph));
  for (int launch = 0; launch < 2; ++launch) {
    std::fill(h_out.begin(), h_out.end(), -1.0f);
    ASSERT_CUDA(cudaGraphLaunch(exec, nullptr));
    ASSERT_CUDA(cudaDeviceSynchronize());
    for (int i = 0; i < n; ++i) ASSERT_EQ(h_out[i], h_in[i] * 3.0f) << "launch " << launch << ", element " << i;
  }
  EXPECT_GE(graph_memory(cudaGraphMemAttrUsedMemHigh), bytes);
  EXPECT_GE(graph_memory(cudaGraphMemAttrReservedMemCurrent), bytes);
#ifdef CUDASIM
  // Exact here; a GPU rounds up to its granularity and keeps a launched executable's memory
  // mapped until the executable is destroyed.
  EXPECT_EQ(graph_memory(cudaGraphMemAttrUsedMemHigh), bytes);
  EXPECT_EQ(graph_memory(cudaGraphMemAttrUsedMemCurrent), 0u);
#endif
  ASSERT_CUDA(cudaGraphExecDestroy(exec));
  ASSERT_CUDA(cudaDeviceGraphMemTrim(0));
  EXPECT_EQ(graph_memory(cudaGraphMemAttrUsedMemCurrent), 0u);
  EXPECT_EQ(graph_memory(cudaGraphMemAttrReservedMemCurrent), 0u);
}

// cudaMallocAsync and cudaFreeAsync in a captured stream become the graph's allocation and free;
// an allocation the graph does not free stays in use after it has run, until cudaFree.
TEST(GraphApi, StreamOrderedAllocationsInACaptureBecomeGraphMemory) {
  const int n = 2048;
  const size_t bytes = n * sizeof(float);
  std::vector<float> h_in(n), h_out(n, -1.0f);
  for (int i = 0; i < n; ++i) h_in[i] = static_cast<float>(i % 7) - 3.0f;
  cudaStream_t s;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *scratch = nullptr, *kept = nullptr;
  cudaGraph_t graph;
  ASSERT_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  ASSERT_CUDA(cudaMallocAsync(&scratch, bytes, s));
  ASSERT_CUDA(cudaMallocAsync(&kept, bytes, s));
  ASSERT_CUDA(cudaMemcpyAsync(scratch, h_in.data(), bytes, cudaMemcpyHostToDevice, s));
  scale_into<<<(n + 127) / 128, 128, 0, s>>>(scratch, kept, n, -2.0f);
  ASSERT_CUDA(cudaFreeAsync(scratch, s));
  ASSERT_CUDA(cudaStreamEndCapture(s, &graph));
  cudaGraphExec_t exec;
  ASSERT_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  ASSERT_CUDA(cudaGraphLaunch(exec, s));
  ASSERT_CUDA(cudaStreamSynchronize(s));
  ASSERT_CUDA(cudaMemcpy(h_out.data(), kept, bytes, cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) ASSERT_EQ(h_out[i], h_in[i] * -2.0f) << "element " << i;
  EXPECT_GE(graph_memory(cudaGraphMemAttrUsedMemCurrent), bytes);  // `kept` is still in use
  ASSERT_CUDA(cudaFree(kept));
  ASSERT_CUDA(cudaGraphExecDestroy(exec));
  ASSERT_CUDA(cudaGraphDestroy(graph));
  ASSERT_CUDA(cudaStreamDestroy(s));
  ASSERT_CUDA(cudaDeviceGraphMemTrim(0));
  EXPECT_EQ(graph_memory(cudaGraphMemAttrUsedMemCurrent), 0u);
}

// Another graph may free what one allocated (graphMemoryNodes' free graph).
TEST(GraphApi, AFreeNodeInAnotherGraphFreesAGraphAllocation) {
  const size_t bytes = 4096;
  cudaGraph_t allocating, freeing;
  ASSERT_CUDA(cudaGraphCreate(&allocating, 0));
  cudaMemAllocNodeParams alloc = allocation_of(bytes);
  cudaGraphNode_t allocated, freed;
  ASSERT_CUDA(cudaGraphAddMemAllocNode(&allocated, allocating, nullptr, 0, &alloc));
  ASSERT_CUDA(cudaGraphCreate(&freeing, 0));
  ASSERT_CUDA(cudaGraphAddMemFreeNode(&freed, freeing, nullptr, 0, alloc.dptr));
  cudaGraphExec_t allocate_exec, free_exec;
  ASSERT_CUDA(cudaGraphInstantiate(&allocate_exec, allocating, 0));
  ASSERT_CUDA(cudaGraphInstantiate(&free_exec, freeing, 0));
  ASSERT_CUDA(cudaGraphDestroy(allocating));
  ASSERT_CUDA(cudaGraphDestroy(freeing));
  ASSERT_CUDA(cudaGraphLaunch(allocate_exec, nullptr));
  ASSERT_CUDA(cudaMemset(alloc.dptr, 0x5a, bytes));  // in use between the two graphs
  ASSERT_CUDA(cudaDeviceSynchronize());
  EXPECT_GE(graph_memory(cudaGraphMemAttrUsedMemCurrent), bytes);
  ASSERT_CUDA(cudaGraphLaunch(free_exec, nullptr));
  ASSERT_CUDA(cudaDeviceSynchronize());
#ifdef CUDASIM
  EXPECT_EQ(graph_memory(cudaGraphMemAttrUsedMemCurrent), 0u);  // a GPU keeps it mapped to allocate_exec
#endif
  ASSERT_CUDA(cudaGraphExecDestroy(allocate_exec));
  ASSERT_CUDA(cudaGraphExecDestroy(free_exec));
  ASSERT_CUDA(cudaDeviceGraphMemTrim(0));
  EXPECT_EQ(graph_memory(cudaGraphMemAttrUsedMemCurrent), 0u);
}

TEST(GraphApi, AFreeNodeOfMemoryFromCudaMallocIsRefused) {
  void* plain = nullptr;
  ASSERT_CUDA(cudaMalloc(&plain, 256));
  cudaGraph_t graph;
  ASSERT_CUDA(cudaGraphCreate(&graph, 0));
  cudaGraphNode_t node;
  EXPECT_EQ(cudaGraphAddMemFreeNode(&node, graph, nullptr, 0, plain), cudaErrorInvalidValue);
  cudaGetLastError();
  ASSERT_CUDA(cudaGraphDestroy(graph));
  ASSERT_CUDA(cudaFree(plain));
}

/// Adds a one-thread launch of `affine` on `x` to `graph` after `after` (if not null).
cudaError_t add_affine(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* after, int** x) {
  void* args[] = {x};
  const cudaKernelNodeParams k = kernel_params(reinterpret_cast<void*>(affine), dim3(1), dim3(1), args);
  return cudaGraphAddKernelNode(node, graph, after, after ? 1 : 0, &k);
}

/// The int at `x` once the device is idle.
int value_at(const int* x) {
  int h = -1;
  EXPECT_EQ(cudaMemcpy(&h, x, sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  return h;
}

// A child graph node runs its own copy of a graph (here one made by stream capture, as a library
// call would be) between its dependencies: later changes to the original do not reach it, nodes
// added to the node's embedded graph do, from the next instantiation on; a clone of the parent
// copies the child too. x: 3, then (x * 2 + 1) per affine kernel.
TEST(GraphApi, AChildGraphNodeRunsItsOwnCopyOfAGraphBetweenItsDependencies) {
  int* x = nullptr;
  ASSERT_CUDA(cudaMalloc(&x, sizeof(int)));
  cudaStream_t s;
  ASSERT_CUDA(cudaStreamCreate(&s));
  cudaGraph_t library;
  ASSERT_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  affine<<<1, 1, 0, s>>>(x);
  ASSERT_CUDA(cudaStreamEndCapture(s, &library));

  cudaGraph_t graph;
  ASSERT_CUDA(cudaGraphCreate(&graph, 0));
  int three = 3;
  void* set_args[] = {&x, &three};
  const cudaKernelNodeParams set = kernel_params(reinterpret_cast<void*>(set_value), dim3(1), dim3(1), set_args);
  cudaGraphNode_t first, child, last;
  ASSERT_CUDA(cudaGraphAddKernelNode(&first, graph, nullptr, 0, &set));
  ASSERT_CUDA(cudaGraphAddChildGraphNode(&child, graph, &first, 1, library));
  ASSERT_CUDA(add_affine(&last, graph, &child, &x));
  cudaGraphNodeType type;
  ASSERT_CUDA(cudaGraphNodeGetType(child, &type));
  EXPECT_EQ(type, cudaGraphNodeTypeGraph);
  ASSERT_CUDA(cudaGraphNodeGetType(first, &type));
  EXPECT_EQ(type, cudaGraphNodeTypeKernel);

  // The node holds a copy: a kernel added to the original afterwards is not run.
  size_t count = 1;
  cudaGraphNode_t captured;
  ASSERT_CUDA(cudaGraphGetNodes(library, &captured, &count));
  ASSERT_EQ(count, 1u);
  cudaGraphNode_t unused;
  ASSERT_CUDA(add_affine(&unused, library, &captured, &x));
  cudaGraphExec_t exec;
  ASSERT_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  ASSERT_CUDA(cudaGraphLaunch(exec, s));
  ASSERT_CUDA(cudaStreamSynchronize(s));
  EXPECT_EQ(value_at(x), 15);  // 3 -> 7 (child) -> 15

  // The node's own graph is not a copy: a kernel added to it runs in the next executable.
  cudaGraph_t embedded;
  ASSERT_CUDA(cudaGraphChildGraphNodeGetGraph(child, &embedded));
  count = 2;
  cudaGraphNode_t inside[2] = {};
  ASSERT_CUDA(cudaGraphGetNodes(embedded, inside, &count));
  ASSERT_EQ(count, 1u);
  cudaGraphNode_t added;
  ASSERT_CUDA(add_affine(&added, embedded, &inside[0], &x));
  cudaGraphExec_t longer;
  ASSERT_CUDA(cudaGraphInstantiate(&longer, graph, 0));
  ASSERT_CUDA(cudaGraphLaunch(longer, s));
  ASSERT_CUDA(cudaStreamSynchronize(s));
  EXPECT_EQ(value_at(x), 31);  // 3 -> 7 -> 15 (child) -> 31
  ASSERT_CUDA(cudaGraphLaunch(exec, s));  // made before: unchanged
  ASSERT_CUDA(cudaStreamSynchronize(s));
  EXPECT_EQ(value_at(x), 15);

  cudaGraph_t clone;
  ASSERT_CUDA(cudaGraphClone(&clone, graph));
  ASSERT_CUDA(cudaGraphDestroy(graph));  // the clone has its own child graph
  ASSERT_CUDA(cudaGraphDestroy(library));
  cudaGraphExec_t cloned;
  ASSERT_CUDA(cudaGraphInstantiate(&cloned, clone, 0));
  ASSERT_CUDA(cudaGraphLaunch(cloned, s));
  ASSERT_CUDA(cudaStreamSynchronize(s));
  EXPECT_EQ(value_at(x), 31);
  for (cudaGraphExec_t e : {exec, longer, cloned}) ASSERT_CUDA(cudaGraphExecDestroy(e));
  ASSERT_CUDA(cudaGraphDestroy(clone));
  ASSERT_CUDA(cudaStreamDestroy(s));
  ASSERT_CUDA(cudaFree(x));
}

void CUDART_CB sleep_a_while(void*) { std::this_thread::sleep_for(std::chrono::milliseconds(100)); }

// An event record node in a graph launched on one stream, and a wait node for the same event in a
// graph launched on another: the second graph's kernel runs after the first graph's, although
// the first stream is held up by a slow host function and the second is launched at once. x is
// set to 5 by the first graph, then taken to 11 by the second (to 5 if they ran the other way).
TEST(GraphApi, EventNodesOrderGraphsLaunchedOnDifferentStreams) {
  int* x = nullptr;
  ASSERT_CUDA(cudaMalloc(&x, sizeof(int)));
  ASSERT_CUDA(cudaMemset(x, 0, sizeof(int)));
  cudaEvent_t done;
  ASSERT_CUDA(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  cudaStream_t first_stream, second_stream;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&first_stream, cudaStreamNonBlocking));
  ASSERT_CUDA(cudaStreamCreateWithFlags(&second_stream, cudaStreamNonBlocking));

  cudaGraph_t setter, follower;
  ASSERT_CUDA(cudaGraphCreate(&setter, 0));
  ASSERT_CUDA(cudaGraphCreate(&follower, 0));
  int five = 5;
  void* set_args[] = {&x, &five};
  const cudaKernelNodeParams set = kernel_params(reinterpret_cast<void*>(set_value), dim3(1), dim3(1), set_args);
  cudaGraphNode_t set_node, record, wait, affine_node;
  ASSERT_CUDA(cudaGraphAddKernelNode(&set_node, setter, nullptr, 0, &set));
  ASSERT_CUDA(cudaGraphAddEventRecordNode(&record, setter, &set_node, 1, done));
  ASSERT_CUDA(cudaGraphAddEventWaitNode(&wait, follower, nullptr, 0, done));
  ASSERT_CUDA(add_affine(&affine_node, follower, &wait, &x));
  cudaEvent_t seen = nullptr;
  ASSERT_CUDA(cudaGraphEventRecordNodeGetEvent(record, &seen));
  EXPECT_EQ(seen, done);
  seen = nullptr;
  ASSERT_CUDA(cudaGraphEventWaitNodeGetEvent(wait, &seen));
  EXPECT_EQ(seen, done);
  cudaGraphNodeType type;
  ASSERT_CUDA(cudaGraphNodeGetType(wait, &type));
  EXPECT_EQ(type, cudaGraphNodeTypeWaitEvent);

  cudaGraphExec_t setter_exec, follower_exec;
  ASSERT_CUDA(cudaGraphInstantiate(&setter_exec, setter, 0));
  ASSERT_CUDA(cudaGraphInstantiate(&follower_exec, follower, 0));
  ASSERT_CUDA(cudaLaunchHostFunc(first_stream, sleep_a_while, nullptr));
  ASSERT_CUDA(cudaGraphLaunch(setter_exec, first_stream));
  ASSERT_CUDA(cudaGraphLaunch(follower_exec, second_stream));
  ASSERT_CUDA(cudaStreamSynchronize(second_stream));
  EXPECT_EQ(value_at(x), 11);
  // The launch recorded the event: the host can wait for it too.
  ASSERT_CUDA(cudaEventSynchronize(done));
  EXPECT_EQ(cudaEventQuery(done), cudaSuccess);

  for (cudaGraphExec_t e : {setter_exec, follower_exec}) ASSERT_CUDA(cudaGraphExecDestroy(e));
  for (cudaGraph_t g : {setter, follower}) ASSERT_CUDA(cudaGraphDestroy(g));
  for (cudaStream_t st : {first_stream, second_stream}) ASSERT_CUDA(cudaStreamDestroy(st));
  ASSERT_CUDA(cudaEventDestroy(done));
  ASSERT_CUDA(cudaFree(x));
}

TEST(GraphApi, BadArgumentsAreInvalidValues) {
  cudaGraph_t graph;
  ASSERT_CUDA(cudaGraphCreate(&graph, 0));
  cudaGraphNode_t node;
  EXPECT_EQ(cudaGraphAddKernelNode(&node, graph, nullptr, 0, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGraphAddEmptyNode(nullptr, graph, nullptr, 0), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGraphCreate(nullptr, 0), cudaErrorInvalidValue);
  int* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, 64));
  cudaMemsetParams fill = {};
  fill.dst = d;
  fill.elementSize = 3;  // 1, 2 or 4
  fill.width = 4;
  fill.height = 1;
  EXPECT_EQ(cudaGraphAddMemsetNode(&node, graph, nullptr, 0, &fill), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGraphAddMemcpyNode(&node, graph, nullptr, 0, nullptr), cudaErrorInvalidValue);
  cudaGetLastError();
  ASSERT_CUDA(cudaFree(d));
  ASSERT_CUDA(cudaGraphDestroy(graph));
}

#ifdef CUDASIM
void not_a_kernel(int*) {}

TEST(GraphApi, SimulatorRefusesUnknownKernelsAndCycles) {
  cudaGraph_t graph;
  ASSERT_CUDA(cudaGraphCreate(&graph, 0));
  int* p = nullptr;
  void* args[] = {&p};
  cudaKernelNodeParams bad = kernel_params(reinterpret_cast<void*>(not_a_kernel), dim3(1), dim3(1), args);
  cudaGraphNode_t node;
  EXPECT_EQ(cudaGraphAddKernelNode(&node, graph, nullptr, 0, &bad), cudaErrorInvalidResourceHandle);
  cudaGraphNode_t a, b;
  ASSERT_CUDA(cudaGraphAddEmptyNode(&a, graph, nullptr, 0));
  ASSERT_CUDA(cudaGraphAddEmptyNode(&b, graph, &a, 1));
  ASSERT_CUDA(add_edge(graph, b, a));  // a cycle
  cudaGraphExec_t exec;
  EXPECT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaErrorInvalidValue);
  cudaGetLastError();
  ASSERT_CUDA(cudaGraphDestroy(graph));
}

// What the simulator refuses of child graph and event nodes, each with a line on stderr: a child
// graph holding a memory allocation node (unless moved into the node), a child graph's own graph
// destroyed alone, a moved graph moved again, the type of a captured operation (not kept), and a
// graph with event nodes launched into a stream capture.
TEST(GraphApi, SimulatorRefusesWhatItCannotDoWithChildGraphsAndEventNodes) {
  cudaGraph_t allocating, parent;
  ASSERT_CUDA(cudaGraphCreate(&allocating, 0));
  ASSERT_CUDA(cudaGraphCreate(&parent, 0));
  cudaMemAllocNodeParams alloc = allocation_of(256);
  cudaGraphNode_t allocated, child;
  ASSERT_CUDA(cudaGraphAddMemAllocNode(&allocated, allocating, nullptr, 0, &alloc));
  ASSERT_CUDA(cudaGraphAddMemFreeNode(&allocated, allocating, &allocated, 1, alloc.dptr));
  EXPECT_EQ(cudaGraphAddChildGraphNode(&child, parent, nullptr, 0, allocating), cudaErrorInvalidValue);
  cudaGraphNodeParams moved{};
  moved.type = cudaGraphNodeTypeGraph;
  moved.graph.graph = allocating;
  moved.graph.ownership = cudaGraphChildGraphOwnershipMove;
  ASSERT_CUDA(cudaGraphAddNode(&child, parent, nullptr, nullptr, 0, &moved));
  EXPECT_EQ(cudaGraphAddNode(&child, parent, nullptr, nullptr, 0, &moved), cudaErrorInvalidValue);  // moved already
  EXPECT_EQ(cudaGraphDestroy(allocating), cudaErrorInvalidValue);  // the node's now
  cudaGraphExec_t exec;
  ASSERT_CUDA(cudaGraphInstantiate(&exec, parent, 0));
  ASSERT_CUDA(cudaGraphLaunch(exec, nullptr));
  ASSERT_CUDA(cudaDeviceSynchronize());
  ASSERT_CUDA(cudaGraphExecDestroy(exec));

  cudaStream_t s;
  ASSERT_CUDA(cudaStreamCreate(&s));
  int* x = nullptr;
  ASSERT_CUDA(cudaMalloc(&x, sizeof(int)));
  cudaGraph_t captured;
  ASSERT_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  affine<<<1, 1, 0, s>>>(x);
  ASSERT_CUDA(cudaStreamEndCapture(s, &captured));
  size_t count = 1;
  cudaGraphNode_t kernel;
  ASSERT_CUDA(cudaGraphGetNodes(captured, &kernel, &count));
  cudaGraphNodeType type;
  EXPECT_EQ(cudaGraphNodeGetType(kernel, &type), cudaErrorNotSupported);

  cudaEvent_t event;
  ASSERT_CUDA(cudaEventCreate(&event));
  cudaGraphNode_t record;
  ASSERT_CUDA(cudaGraphAddEventRecordNode(&record, parent, nullptr, 0, event));
  ASSERT_CUDA(cudaGraphInstantiate(&exec, parent, 0));
  cudaGraph_t outer;
  ASSERT_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  EXPECT_EQ(cudaGraphLaunch(exec, s), cudaErrorStreamCaptureUnsupported);
  ASSERT_CUDA(cudaStreamEndCapture(s, &outer));
  cudaGetLastError();
  for (cudaGraph_t g : {parent, captured, outer}) ASSERT_CUDA(cudaGraphDestroy(g));
  ASSERT_CUDA(cudaGraphExecDestroy(exec));
  ASSERT_CUDA(cudaEventDestroy(event));
  ASSERT_CUDA(cudaStreamDestroy(s));
  ASSERT_CUDA(cudaFree(x));
}
#endif

}  // namespace
