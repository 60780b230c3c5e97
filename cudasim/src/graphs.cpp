// CUDA graphs by stream capture. A captured graph is the list of operations recorded on the
// stream, in order; launching it queues one task on the target stream that runs them all, so
// the host pays one call for the whole sequence. That is the point lesson 01 makes: a chain of
// n tiny kernels costs n launch overheads one by one, and about one when replayed as a graph.
// (Graphs built node by node with cudaGraphAdd*Node, and multi-stream capture, are not
// supported.)
#include <map>
#include <memory>
#include <mutex>

#include "internal.hpp"

struct CUgraph_st {};
struct CUgraphExec_st {};

namespace cudasim::detail {
namespace {

struct Graph : CUgraph_st {
  GraphNodes nodes;
};
struct GraphExec : CUgraphExec_st {
  std::shared_ptr<const GraphNodes> nodes;
};

std::mutex graphs_mutex;
std::map<const CUgraph_st*, std::unique_ptr<Graph>> graphs;
std::map<const CUgraphExec_st*, std::unique_ptr<GraphExec>> executables;

Graph* find_graph(cudaGraph_t handle) {
  std::lock_guard<std::mutex> lock(graphs_mutex);
  auto it = graphs.find(handle);
  return it == graphs.end() ? nullptr : it->second.get();
}

GraphExec* find_exec(cudaGraphExec_t handle) {
  std::lock_guard<std::mutex> lock(graphs_mutex);
  auto it = executables.find(handle);
  return it == executables.end() ? nullptr : it->second.get();
}

}  // namespace
}  // namespace cudasim::detail

using namespace cudasim::detail;

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode) {
  const cudaError_t e = begin_capture(stream);
  if (e == cudaErrorStreamCaptureUnsupported)
    report("cudaStreamBeginCapture: the legacy default stream cannot be captured; create a stream");
  return record_error(e);
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph) {
  if (graph == nullptr) return record_error(cudaErrorInvalidValue);
  auto g = std::make_unique<Graph>();
  const cudaError_t e = end_capture(stream, g->nodes);
  if (e != cudaSuccess) return record_error(e);
  *graph = g.get();
  std::lock_guard<std::mutex> lock(graphs_mutex);
  graphs[g.get()] = std::move(g);
  return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus* status) {
  if (status == nullptr) return record_error(cudaErrorInvalidValue);
  *status = is_capturing(stream) ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
  return cudaSuccess;
}

cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* count) {
  Graph* g = find_graph(graph);
  if (g == nullptr || count == nullptr) return record_error(cudaErrorInvalidValue);
  if (nodes != nullptr) return record_error(cudaErrorNotSupported);  // node handles are not modelled
  *count = g->nodes.size();
  return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long) {
  Graph* g = find_graph(graph);
  if (g == nullptr || exec == nullptr) return record_error(cudaErrorInvalidValue);
  auto e = std::make_unique<GraphExec>();
  e->nodes = std::make_shared<const GraphNodes>(g->nodes);  // later edits of the graph do not change it
  *exec = e.get();
  std::lock_guard<std::mutex> lock(graphs_mutex);
  executables[e.get()] = std::move(e);
  return cudaSuccess;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
  GraphExec* e = find_exec(exec);
  if (e == nullptr) return record_error(cudaErrorInvalidValue);
  if (sticky_error() != cudaSuccess) return record_error(sticky_error());
  count_graph_launch_call();
  std::shared_ptr<const GraphNodes> nodes = e->nodes;
  return record_error(enqueue(stream, [nodes] {
    for (const auto& node : *nodes) node();
  }));
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  std::lock_guard<std::mutex> lock(graphs_mutex);
  return executables.erase(exec) ? cudaSuccess : record_error(cudaErrorInvalidValue);
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  std::lock_guard<std::mutex> lock(graphs_mutex);
  return graphs.erase(graph) ? cudaSuccess : record_error(cudaErrorInvalidValue);
}
