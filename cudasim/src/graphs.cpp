// CUDA graphs, by stream capture and node by node. A graph is a set of nodes (the work of one
// operation each) with dependencies; a captured graph is the chain of the operations recorded
// on the stream, in order. Instantiating a graph orders its nodes once (dependencies first,
// otherwise in the order they were added); launching it queues one task on the target stream
// that runs them all, so the host pays one call for the whole sequence. That is the point
// lesson 01 makes: a chain of n tiny kernels costs n launch overheads one by one, and about one
// when replayed as a graph. Independent branches of a graph run one after another here, not
// side by side. Memory-allocation and free nodes keep their memory in graph_memory.cpp. (Event
// and child-graph nodes are not supported.)
#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <queue>

#include "internal.hpp"

struct CUgraph_st {};
struct CUgraphExec_st {};
struct CUgraphNode_st {};

namespace cudasim::detail {
namespace {
thread_local bool graph_replay_in_progress = false;
}  // namespace

bool replaying_graph() { return graph_replay_in_progress; }
GraphReplay::GraphReplay() { graph_replay_in_progress = true; }
GraphReplay::~GraphReplay() { graph_replay_in_progress = false; }

namespace {

struct Node : CUgraphNode_st {
  std::function<void()> work;             // empty for an empty node
  std::vector<const Node*> dependencies;  // nodes of the same graph that run before this one
};

struct Graph : CUgraph_st {
  std::vector<std::unique_ptr<Node>> nodes;      // in the order they were added
  std::map<const CUgraphNode_st*, size_t> index;  // a node's position in `nodes`

  Node* find(cudaGraphNode_t handle) const {
    auto it = index.find(handle);
    return it == index.end() ? nullptr : nodes[it->second].get();
  }
  Node* add(std::function<void()> work) {
    nodes.push_back(std::make_unique<Node>());
    nodes.back()->work = std::move(work);
    index[nodes.back().get()] = nodes.size() - 1;
    return nodes.back().get();
  }
};

struct GraphExec : CUgraphExec_st {
  // The nodes' work in the order they run; replaced as a whole by an update, so that a launch
  // already queued keeps the work it was queued with.
  std::shared_ptr<const GraphNodes> nodes;
  // Where each node of the graph it was made from (or updated from) runs in `nodes`.
  std::map<const CUgraphNode_st*, size_t> position;
  // Each node's dependencies, by the order nodes were added: what an update must keep.
  std::vector<std::vector<size_t>> topology;
};

// One lock for graphs, their nodes and executables (guards the maps and the graphs' contents).
std::mutex graphs_mutex;
// Never destroyed: the work of a graph's allocation node holds device memory (graph_memory.cpp),
// which must not be given back at exit, after the device memory itself has gone.
std::map<const CUgraph_st*, std::unique_ptr<Graph>>& graphs = *new std::map<const CUgraph_st*, std::unique_ptr<Graph>>;
std::map<const CUgraphExec_st*, std::unique_ptr<GraphExec>>& executables =
    *new std::map<const CUgraphExec_st*, std::unique_ptr<GraphExec>>;

/// The caller holds graphs_mutex.
Graph* find_graph(cudaGraph_t handle) {
  auto it = graphs.find(handle);
  return it == graphs.end() ? nullptr : it->second.get();
}

Graph* register_graph(std::unique_ptr<Graph> g) {
  Graph* raw = g.get();
  std::lock_guard<std::mutex> lock(graphs_mutex);
  graphs[raw] = std::move(g);
  return raw;
}

/// Adds a node with `work` after `dependencies`, all of which must be nodes of `graph`.
cudaError_t add_node(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                     size_t dependency_count, std::function<void()> work) {
  if (node == nullptr || (dependencies == nullptr && dependency_count != 0)) return cudaErrorInvalidValue;
  std::lock_guard<std::mutex> lock(graphs_mutex);
  Graph* g = find_graph(graph);
  if (g == nullptr) return cudaErrorInvalidValue;
  std::vector<const Node*> before;
  for (size_t i = 0; i < dependency_count; ++i) {
    const Node* d = g->find(dependencies[i]);
    if (d == nullptr) {
      report("cudaGraphAdd*Node: dependency %zu is not a node of this graph", i);
      return cudaErrorInvalidValue;
    }
    before.push_back(d);
  }
  Node* added = g->add(std::move(work));
  added->dependencies = std::move(before);
  *node = added;
  return cudaSuccess;
}

/// Each node's dependencies, by the order the nodes were added.
std::vector<std::vector<size_t>> topology_of(const Graph& g) {
  std::vector<std::vector<size_t>> topology(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const Node* d : g.nodes[i]->dependencies) topology[i].push_back(g.index.at(d));
  return topology;
}

/// Makes `e` run `g`: its nodes' work with every node after its dependencies, ties in the order
/// the nodes were added. False when the dependencies form a cycle. The caller holds
/// graphs_mutex.
bool instantiate_into(const Graph& g, GraphExec& e) {
  const size_t count = g.nodes.size();
  const std::vector<std::vector<size_t>> topology = topology_of(g);
  std::vector<size_t> waiting(count, 0);          // dependencies not yet placed
  std::vector<std::vector<size_t>> after(count);  // the nodes that depend on each node
  for (size_t i = 0; i < count; ++i)
    for (size_t d : topology[i]) {
      ++waiting[i];
      after[d].push_back(i);
    }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;  // earliest added first
  for (size_t i = 0; i < count; ++i)
    if (waiting[i] == 0) ready.push(i);
  auto ordered = std::make_shared<GraphNodes>();
  std::map<const CUgraphNode_st*, size_t> position;
  while (!ready.empty()) {
    const size_t i = ready.top();
    ready.pop();
    position[g.nodes[i].get()] = ordered->size();
    ordered->push_back(g.nodes[i]->work ? g.nodes[i]->work : std::function<void()>([] {}));
    for (size_t next : after[i])
      if (--waiting[next] == 0) ready.push(next);
  }
  if (ordered->size() != count) return false;
  e.nodes = std::move(ordered);
  e.position.insert(position.begin(), position.end());
  e.topology = topology;
  return true;
}

/// The work of a kernel node: the kernel must be known with its type; the arguments are copied
/// and the configuration checked now.
cudaError_t kernel_node_work(const char* api, const cudaKernelNodeParams* params, const char* file, unsigned line,
                             std::function<void()>& work) {
  if (params == nullptr) return cudaErrorInvalidValue;
  ArgumentUnpacker unpack = nullptr;
  std::size_t parameter_count = 0;
  const char* name = nullptr;
  if (!find_kernel(params->func, unpack, parameter_count, name)) {
    report("%s at %s:%u: %p is not a kernel the simulator has seen with its type; name the kernel once before "
           "(for example cudaFuncGetAttributes(&attributes, kernel))",
           api, file, line, params->func);
    return kNotAKernelError;
  }
  if (params->extra != nullptr) {
    report("%s at %s:%u: arguments in the `extra` format are not supported by the simulator; pass them in "
           "kernelParams", api, file, line);
    return cudaErrorNotSupported;
  }
  if (params->kernelParams == nullptr && parameter_count != 0) return cudaErrorInvalidValue;
  const LaunchConfig config{{name, file, line}, params->gridDim, params->blockDim, params->sharedMemBytes, nullptr};
  const cudaError_t valid = check_launch(config, params->func);
  if (valid != cudaSuccess) return valid;
  work = launch_work(config, unpack(params->func, params->kernelParams));
  return cudaSuccess;
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
  GraphNodes recorded;
  const cudaError_t e = end_capture(stream, recorded);
  if (e == cudaErrorStreamCaptureInvalidated) {
    report("cudaStreamEndCapture: the capture was invalidated by a call it cannot record (a synchronisation of the "
           "capturing stream); no graph was made");
    *graph = nullptr;
  }
  if (e != cudaSuccess) return record_error(e);
  // Stream order: each recorded operation depends on the one before it.
  auto g = std::make_unique<Graph>();
  const Node* previous = nullptr;
  for (auto& work : recorded) {
    Node* n = g->add(std::move(work));
    if (previous != nullptr) n->dependencies.push_back(previous);
    previous = n;
  }
  *graph = register_graph(std::move(g));
  return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus* status) {
  if (status == nullptr) return record_error(cudaErrorInvalidValue);
  *status = !is_capturing(stream)         ? cudaStreamCaptureStatusNone
            : capture_invalidated(stream) ? cudaStreamCaptureStatusInvalidated
                                          : cudaStreamCaptureStatusActive;
  return cudaSuccess;
}

cudaError_t cudaGraphCreate(cudaGraph_t* graph, unsigned flags) {
  if (graph == nullptr || flags != 0) return record_error(cudaErrorInvalidValue);
  *graph = register_graph(std::make_unique<Graph>());
  return cudaSuccess;
}

cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* count) {
  std::lock_guard<std::mutex> lock(graphs_mutex);
  Graph* g = find_graph(graph);
  if (g == nullptr || count == nullptr) return record_error(cudaErrorInvalidValue);
  if (nodes == nullptr) {
    *count = g->nodes.size();
    return cudaSuccess;
  }
  const size_t filled = std::min(*count, g->nodes.size());
  for (size_t i = 0; i < *count; ++i) nodes[i] = i < filled ? g->nodes[i].get() : nullptr;
  *count = filled;
  return cudaSuccess;
}

cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                                   size_t dependency_count, const cudaKernelNodeParams* params, const char* file,
                                   unsigned line) {
  std::function<void()> work;
  const cudaError_t valid = kernel_node_work("cudaGraphAddKernelNode", params, file, line, work);
  if (valid != cudaSuccess) return record_error(valid);
  return record_error(add_node(node, graph, dependencies, dependency_count, std::move(work)));
}

cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                                     size_t dependency_count, void* dst, const void* src, size_t count,
                                     cudaMemcpyKind kind) {
  std::function<void()> work;
  const cudaError_t valid = copy_node_work(dst, src, count, kind, work);
  if (valid != cudaSuccess) return record_error(valid);
  return record_error(add_node(node, graph, dependencies, dependency_count, std::move(work)));
}

cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                                   size_t dependency_count, const cudaMemcpy3DParms* params) {
  std::function<void()> work;
  const cudaError_t valid = copy_3d_node_work(params, work);
  if (valid != cudaSuccess) return record_error(valid);
  return record_error(add_node(node, graph, dependencies, dependency_count, std::move(work)));
}

cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                                   size_t dependency_count, const cudaMemsetParams* params) {
  std::function<void()> work;
  const cudaError_t valid = memset_node_work(params, work);
  if (valid != cudaSuccess) return record_error(valid);
  return record_error(add_node(node, graph, dependencies, dependency_count, std::move(work)));
}

cudaError_t cudaGraphClone(cudaGraph_t* clone, cudaGraph_t original) {
  if (clone == nullptr) return record_error(cudaErrorInvalidValue);
  auto copy = std::make_unique<Graph>();
  {
    std::lock_guard<std::mutex> lock(graphs_mutex);
    const Graph* g = find_graph(original);
    if (g == nullptr) return record_error(cudaErrorInvalidValue);
    for (const auto& n : g->nodes) copy->add(n->work);
    for (size_t i = 0; i < g->nodes.size(); ++i)
      for (const Node* d : g->nodes[i]->dependencies) copy->nodes[i]->dependencies.push_back(copy->nodes[g->index.at(d)].get());
  }
  *clone = register_graph(std::move(copy));
  return cudaSuccess;
}

cudaError_t cudaGraphAddHostNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                                 size_t dependency_count, const cudaHostNodeParams* params) {
  if (params == nullptr || params->fn == nullptr) return record_error(cudaErrorInvalidValue);
  const cudaHostFn_t fn = params->fn;
  void* const user_data = params->userData;
  return record_error(add_node(node, graph, dependencies, dependency_count, [fn, user_data] { fn(user_data); }));
}

cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                                     size_t dependency_count, cudaMemAllocNodeParams* params, const char* file,
                                     unsigned line) {
  if (params == nullptr) return record_error(cudaErrorInvalidValue);
  const cudaMemLocation where = params->poolProps.location;
  if (where.type != cudaMemLocationTypeDevice || where.id < 0 || where.id >= device_count()) {
    report("cudaGraphAddMemAllocNode at %s:%u: poolProps.location must be a device (cudaMemLocationTypeDevice "
           "and its number)", file, line);
    return record_error(cudaErrorInvalidValue);
  }
  void* address = nullptr;
  std::function<void()> work;
  const cudaError_t made =  // the memory is the location's
      on_device(where.id, [&] { return new_graph_allocation(params->bytesize, file, line, address, work); });
  if (made != cudaSuccess) return record_error(made);
  const cudaError_t added = add_node(node, graph, dependencies, dependency_count, std::move(work));
  if (added != cudaSuccess) return record_error(added);  // the allocation went with the work
  params->dptr = address;
  return cudaSuccess;
}

cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                                    size_t dependency_count, void* dptr) {
  if (!is_graph_allocation(dptr)) {
    report("cudaGraphAddMemFreeNode(%p): not an allocation of a graph memory node (memory from cudaMalloc is "
           "freed by cudaFree)", dptr);
    return record_error(cudaErrorInvalidValue);
  }
  return record_error(
      add_node(node, graph, dependencies, dependency_count, graph_free_work(dptr, "a graph's free node")));
}

cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                                  size_t dependency_count) {
  return record_error(add_node(node, graph, dependencies, dependency_count, {}));
}

cudaError_t cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t* from, const cudaGraphNode_t* to,
                                     const cudaGraphEdgeData* edge_data, size_t count) {
  if (count != 0 && (from == nullptr || to == nullptr)) return record_error(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lock(graphs_mutex);
  Graph* g = find_graph(graph);
  if (g == nullptr) return record_error(cudaErrorInvalidValue);
  for (size_t i = 0; i < count; ++i) {
    if (edge_data != nullptr) {
      const cudaGraphEdgeData& e = edge_data[i];
      if (e.from_port != 0 || e.to_port != 0 || e.type != 0) {
        report("cudaGraphAddDependencies: edge %zu has ports or a type; only default edges are supported", i);
        return record_error(cudaErrorNotSupported);
      }
    }
    const Node* before = g->find(from[i]);
    Node* after = g->find(to[i]);
    if (before == nullptr || after == nullptr || before == after) return record_error(cudaErrorInvalidValue);
    after->dependencies.push_back(before);
  }
  return cudaSuccess;
}

cudaError_t cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t* from, const cudaGraphNode_t* to,
                                     size_t count) {
  return cudaGraphAddDependencies(graph, from, to, nullptr, count);
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long) {
  if (exec == nullptr) return record_error(cudaErrorInvalidValue);
  auto e = std::make_unique<GraphExec>();
  {
    std::lock_guard<std::mutex> lock(graphs_mutex);
    Graph* g = find_graph(graph);
    if (g == nullptr) return record_error(cudaErrorInvalidValue);
    // A copy of the work: later edits of the graph do not change the executable.
    if (!instantiate_into(*g, *e)) {
      report("cudaGraphInstantiate: the graph's dependencies form a cycle");
      return record_error(cudaErrorInvalidValue);
    }
  }
  *exec = e.get();
  std::lock_guard<std::mutex> lock(graphs_mutex);
  executables[e.get()] = std::move(e);
  return cudaSuccess;
}

cudaError_t cudaGraphExecUpdate(cudaGraphExec_t exec, cudaGraph_t graph, cudaGraphExecUpdateResultInfo* info) {
  if (info != nullptr) *info = {cudaGraphExecUpdateError, nullptr, nullptr};
  std::lock_guard<std::mutex> lock(graphs_mutex);
  auto it = executables.find(exec);
  Graph* g = find_graph(graph);
  if (it == executables.end() || g == nullptr) return record_error(cudaErrorInvalidValue);
  GraphExec& e = *it->second;
  if (topology_of(*g) != e.topology) {
    if (info != nullptr) info->result = cudaGraphExecUpdateErrorTopologyChanged;
    return record_error(cudaErrorGraphExecUpdateFailure);
  }
  if (!instantiate_into(*g, e)) return record_error(cudaErrorInvalidValue);  // a cycle: the topology had none
  if (info != nullptr) info->result = cudaGraphExecUpdateSuccess;
  return cudaSuccess;
}

cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                             const cudaKernelNodeParams* params, const char* file, unsigned line) {
  std::function<void()> work;
  const cudaError_t valid = kernel_node_work("cudaGraphExecKernelNodeSetParams", params, file, line, work);
  if (valid != cudaSuccess) return record_error(valid);
  std::lock_guard<std::mutex> lock(graphs_mutex);
  auto it = executables.find(exec);
  if (it == executables.end()) return record_error(cudaErrorInvalidValue);
  GraphExec& e = *it->second;
  auto at = e.position.find(node);
  if (at == e.position.end()) {
    report("cudaGraphExecKernelNodeSetParams at %s:%u: the node is not one of the graph this executable was made "
           "from", file, line);
    return record_error(cudaErrorInvalidValue);
  }
  auto nodes = std::make_shared<GraphNodes>(*e.nodes);  // launches already queued keep the old work
  (*nodes)[at->second] = std::move(work);
  e.nodes = std::move(nodes);
  return cudaSuccess;
}

cudaError_t cudaGraphUpload(cudaGraphExec_t exec, cudaStream_t) {
  std::lock_guard<std::mutex> lock(graphs_mutex);
  return executables.count(exec) != 0 ? cudaSuccess : record_error(cudaErrorInvalidValue);
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
  std::shared_ptr<const GraphNodes> nodes;
  {
    std::lock_guard<std::mutex> lock(graphs_mutex);
    auto it = executables.find(exec);
    if (it == executables.end()) return record_error(cudaErrorInvalidValue);
    nodes = it->second->nodes;
  }
  if (sticky_error() != cudaSuccess) return record_error(sticky_error());
  count_graph_launch_call();
  return record_error(enqueue(stream, [nodes] {
    cudasim::detail::GraphReplay replay;
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
