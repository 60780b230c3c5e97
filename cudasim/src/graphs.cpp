// CUDA graphs, by stream capture and node by node. A graph is a set of nodes (the work of one
// operation each) with dependencies; a captured graph is the chain of the operations recorded
// on the stream, in order. Instantiating a graph orders its nodes once (dependencies first,
// otherwise in the order they were added); launching it queues one task on the target stream
// that runs them all, so the host pays one call for the whole sequence. That is the point
// lesson 01 makes: a chain of n tiny kernels costs n launch overheads one by one, and about one
// when replayed as a graph. Independent branches of a graph run one after another here, not
// side by side. Memory-allocation and free nodes keep their memory in graph_memory.cpp. A child
// graph node runs its own copy of a graph inline; event record and wait nodes act on the whole
// launch (streams.cpp's enqueue_graph_launch).
//
// A conditional node holds body graphs, filled after the node is made, so its work is made when
// the graph is instantiated: the bodies are instantiated with it, and the node's work runs one
// of them, or one again and again, inline in the launch, reading the condition that kernels set
// with cudaGraphSetConditional. A capture builds its graph as it goes (cudaStreamGetCaptureInfo
// can hand it out mid-capture, for nodes added to it by hand): the work recorded on the stream
// is added to the graph as a chain each time the capture is asked about, and at its end.
#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
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

/// The value behind a cudaGraphConditionalHandle (the handle is its address). Shared by the
/// graph and every executable made from it, which may outlive the graph.
struct Condition {
  std::atomic<unsigned> value;
  unsigned default_value = 0;
  bool assign_default = false;  // cudaGraphCondAssignDefault: default_value at each launch
};

/// A conditional node: which kind, its condition and its body graphs (registered graphs that
/// the node owns; `bodies` is the array cudaGraphAddNode hands out).
struct Conditional {
  cudaGraphConditionalNodeType type = cudaGraphCondTypeIf;
  std::shared_ptr<Condition> condition;
  std::vector<cudaGraph_t> bodies;
};

struct Node : CUgraphNode_st {
  std::function<void()> work;  // empty for an empty, conditional, child graph or event node
  std::optional<cudaGraphNodeType> type;     // unknown for an operation recorded by stream capture
  std::shared_ptr<Conditional> conditional;  // a conditional node's; its work is made at instantiation
  cudaGraph_t child = nullptr;  // a child graph node's own graph; its work too is made at instantiation
  cudaEvent_t event = nullptr;  // an event record or wait node's event
  std::vector<const Node*> dependencies;  // nodes of the same graph that run before this one
};

/// A node added by hand, of `type`, doing `work`.
Node node_of(cudaGraphNodeType type, std::function<void()> work = {}) {
  Node n;
  n.type = type;
  n.work = std::move(work);
  return n;
}

/// The events of an executable's event nodes, its child graphs' included: a launch waits for the
/// records of `waits` and records `records` (enqueue_graph_launch).
struct GraphEvents {
  std::vector<cudaEvent_t> waits;
  std::vector<cudaEvent_t> records;
};

struct Graph : CUgraph_st {
  std::vector<std::unique_ptr<Node>> nodes;      // in the order they were added
  std::map<const CUgraphNode_st*, size_t> index;  // a node's position in `nodes`
  std::vector<std::shared_ptr<Condition>> conditions;  // cudaGraphConditionalHandleCreate's
  bool body_of_a_node = false;  // a conditional node's body or a child graph node's graph: destroyed with the node's graph

  std::shared_ptr<Condition> condition(cudaGraphConditionalHandle handle) const {
    for (const auto& c : conditions)
      if (reinterpret_cast<cudaGraphConditionalHandle>(c.get()) == handle) return c;
    return nullptr;
  }

  Node* find(cudaGraphNode_t handle) const {
    auto it = index.find(handle);
    return it == index.end() ? nullptr : nodes[it->second].get();
  }
  Node* add(Node prototype) {
    nodes.push_back(std::make_unique<Node>(std::move(prototype)));
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
  // What the launches wait for and record (replaced with `nodes`).
  std::shared_ptr<const GraphEvents> events;
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

/// The node behind `handle`, in whichever graph holds it, or null. The caller holds graphs_mutex.
Node* find_node(cudaGraphNode_t handle) {
  for (const auto& entry : graphs)
    if (Node* n = entry.second->find(handle)) return n;
  return nullptr;
}

Graph* register_graph(std::unique_ptr<Graph> g) {
  Graph* raw = g.get();
  std::lock_guard<std::mutex> lock(graphs_mutex);
  graphs[raw] = std::move(g);
  return raw;
}

/// The graph a capture builds, by the stream that began it, and the nodes the next captured
/// work depends on. Guarded by graphs_mutex.
struct CaptureTarget {
  Graph* graph = nullptr;
  bool graph_of_its_own = true;  // made by cudaStreamBeginCapture, not given to ...CaptureToGraph
  std::vector<cudaGraphNode_t> dependencies;
  std::vector<cudaGraphEdgeData> edges;  // all zero, one per dependency, for cudaStreamGetCaptureInfo
  unsigned long long id = 0;
};
std::map<cudaStream_t, CaptureTarget> capture_targets;
unsigned long long captures_begun = 0;

/// Begins capturing `stream` into `graph` after `dependencies` (nodes of it).
cudaError_t begin_capture_into(cudaStream_t stream, Graph* graph, bool graph_of_its_own,
                               std::vector<cudaGraphNode_t> dependencies) {
  const cudaError_t e = begin_capture(stream);
  if (e != cudaSuccess) return e;
  std::lock_guard<std::mutex> lock(graphs_mutex);
  CaptureTarget& target = capture_targets[stream];
  target = {graph, graph_of_its_own, std::move(dependencies), {}, ++captures_begun};
  return cudaSuccess;
}

/// Adds `recorded` to the capture's graph, each operation after the one before it, the first
/// after the capture's dependencies; the last becomes the dependency. The caller holds
/// graphs_mutex.
void add_chain(CaptureTarget& target, GraphNodes& recorded) {
  for (auto& work : recorded) {
    Node captured;  // of a type not kept
    captured.work = std::move(work);
    Node* n = target.graph->add(std::move(captured));
    for (cudaGraphNode_t d : target.dependencies)
      if (const Node* before = target.graph->find(d)) n->dependencies.push_back(before);
    target.dependencies = {n};
  }
}

/// Adds the work recorded so far in the capture `stream` is in (one it began or one it joined)
/// to the capture's graph and gives the capture, with `lock` holding graphs_mutex; `shared`:
/// whether other streams joined it. Else cudaErrorStreamCaptureInvalidated,
/// cudaErrorIllegalState (no capture) or cudaErrorInvalidResourceHandle (no such stream).
cudaError_t catch_up(cudaStream_t stream, std::unique_lock<std::mutex>& lock, CaptureTarget*& target,
                     bool& shared) {
  shared = false;
  const cudaStream_t origin = capture_origin_of(stream, &shared);
  GraphNodes recorded;
  // Not capturing (no origin): take_captured says whether the stream is unknown or only idle.
  const cudaError_t e = take_captured(origin != nullptr ? origin : stream, recorded);
  if (e != cudaSuccess) return e;
  lock = std::unique_lock<std::mutex>(graphs_mutex);
  auto it = capture_targets.find(origin);
  if (it == capture_targets.end()) return cudaErrorIllegalState;
  target = &it->second;
  add_chain(*target, recorded);
  return cudaSuccess;
}

/// Whether `ancestor` is `node` or a node that `node` depends on, directly or not.
bool follows(const Node* node, const Node* ancestor) {
  std::vector<const Node*> to_visit{node};
  std::vector<const Node*> seen;
  while (!to_visit.empty()) {
    const Node* n = to_visit.back();
    to_visit.pop_back();
    if (n == ancestor) return true;
    if (std::find(seen.begin(), seen.end(), n) != seen.end()) continue;
    seen.push_back(n);
    to_visit.insert(to_visit.end(), n->dependencies.begin(), n->dependencies.end());
  }
  return false;
}

/// Adds `prototype` to `graph` after `dependencies`, all of which must be nodes of `graph`.
cudaError_t add_node(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                     size_t dependency_count, Node prototype) {
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
  prototype.dependencies = std::move(before);
  Node* added = g->add(std::move(prototype));
  *node = added;
  return cudaSuccess;
}

/// Edge data of a CUDA 13 call: null, or all zero (the only edges the simulator has).
bool default_edges(const char* api, const cudaGraphEdgeData* edge_data, size_t count) {
  for (size_t i = 0; edge_data != nullptr && i < count; ++i) {
    const cudaGraphEdgeData& e = edge_data[i];
    if (e.from_port != 0 || e.to_port != 0 || e.type != 0) {
      report("%s: edge %zu has ports or a type; only default edges are supported", api, i);
      return false;
    }
  }
  return true;
}

/// Each node's dependencies, by the order the nodes were added.
std::vector<std::vector<size_t>> topology_of(const Graph& g) {
  std::vector<std::vector<size_t>> topology(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const Node* d : g.nodes[i]->dependencies) topology[i].push_back(g.index.at(d));
  return topology;
}

std::shared_ptr<GraphNodes> ordered_work(const Graph& g, std::map<const CUgraphNode_st*, size_t>* position,
                                         GraphEvents* events);

/// The work of a conditional node: its bodies instantiated now (null when one has a cycle).
/// A while loop stops, like the launch, once a kernel has faulted.
std::function<void()> conditional_work(const Conditional& c) {
  std::vector<std::shared_ptr<const GraphNodes>> bodies;
  for (cudaGraph_t body : c.bodies) {
    const Graph* g = find_graph(body);
    std::shared_ptr<const GraphNodes> work = g ? ordered_work(*g, nullptr, nullptr) : nullptr;
    if (!work) return nullptr;
    bodies.push_back(std::move(work));
  }
  return [type = c.type, condition = c.condition, bodies] {
    const auto run = [](const GraphNodes& body) {
      for (const auto& node : body) node();
    };
    switch (type) {
      case cudaGraphCondTypeIf:
        if (condition->value != 0) run(*bodies[0]);
        else if (bodies.size() == 2) run(*bodies[1]);
        break;
      case cudaGraphCondTypeWhile:
        while (condition->value != 0 && sticky_error() == cudaSuccess) run(*bodies[0]);
        break;
      case cudaGraphCondTypeSwitch:
        if (condition->value < bodies.size()) run(*bodies[condition->value]);
        break;
    }
  };
}

/// The work that runs `node` in an executable: its own, or made now for a conditional or child
/// graph node. An event node's event goes to `events` and its work does nothing: the whole
/// launch waits for or records the event. Empty (reported) when the work cannot be made: an
/// event node where `events` is null (a conditional node's body), or a cycle.
std::function<void()> instantiated_work(const Node& node, GraphEvents* events) {
  if (node.conditional) return conditional_work(*node.conditional);
  if (node.child != nullptr) {
    const Graph* child = find_graph(node.child);
    std::shared_ptr<const GraphNodes> work = child ? ordered_work(*child, nullptr, events) : nullptr;
    if (!work) return {};
    return [work] {
      for (const auto& w : *work) w();
    };
  }
  if (node.type == cudaGraphNodeTypeEventRecord || node.type == cudaGraphNodeTypeWaitEvent) {
    if (events == nullptr) {
      report("cudaGraphInstantiate: an event record or wait node in a conditional node's body (CUDA allows none "
             "there)");
      return {};
    }
    (node.type == cudaGraphNodeTypeEventRecord ? events->records : events->waits).push_back(node.event);
  }
  return node.work ? node.work : std::function<void()>([] {});
}

/// `g`'s nodes' work in an order that runs every node after its dependencies, ties in the order
/// the nodes were added, after the reset of the conditions that ask for their default at each
/// launch; each node's place in `position` (when not null); the events of its event nodes in
/// `events` (null in a conditional node's body, where none may be). Null, reported, when the
/// dependencies form a cycle, in `g` or in a graph it runs, or an event node is misplaced. The
/// caller holds graphs_mutex.
std::shared_ptr<GraphNodes> ordered_work(const Graph& g, std::map<const CUgraphNode_st*, size_t>* position,
                                         GraphEvents* events) {
  auto ordered = std::make_shared<GraphNodes>();
  std::vector<std::shared_ptr<Condition>> reset;
  for (const auto& c : g.conditions)
    if (c->assign_default) reset.push_back(c);
  if (!reset.empty())
    ordered->push_back([reset] {
      for (const auto& c : reset) c->value = c->default_value;
    });
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
  size_t placed = 0;
  while (!ready.empty()) {
    const size_t i = ready.top();
    ready.pop();
    const Node& node = *g.nodes[i];
    if (position != nullptr) (*position)[&node] = ordered->size();
    std::function<void()> work = instantiated_work(node, events);
    if (!work) return nullptr;
    ordered->push_back(std::move(work));
    ++placed;
    for (size_t next : after[i])
      if (--waiting[next] == 0) ready.push(next);
  }
  if (placed != count) {
    report("cudaGraphInstantiate: the graph's dependencies form a cycle");
    return nullptr;
  }
  return ordered;
}

/// Makes `e` run `g` (ordered_work). False, reported, when that cannot be done. The caller holds
/// graphs_mutex.
bool instantiate_into(const Graph& g, GraphExec& e) {
  std::map<const CUgraphNode_st*, size_t> position;
  auto events = std::make_shared<GraphEvents>();
  std::shared_ptr<GraphNodes> ordered = ordered_work(g, &position, events.get());
  if (!ordered) return false;
  e.nodes = std::move(ordered);
  e.events = std::move(events);
  e.position.insert(position.begin(), position.end());
  e.topology = topology_of(g);
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
  Graph* graph = register_graph(std::make_unique<Graph>());
  const cudaError_t e = begin_capture_into(stream, graph, true, {});
  if (e != cudaSuccess) cudaGraphDestroy(graph);
  if (e == cudaErrorStreamCaptureUnsupported)
    report("cudaStreamBeginCapture: the legacy default stream cannot be captured; create a stream");
  return record_error(e);
}

cudaError_t cudaStreamBeginCaptureToGraph(cudaStream_t stream, cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                                          const cudaGraphEdgeData* edge_data, size_t dependency_count,
                                          cudaStreamCaptureMode) {
  if (dependencies == nullptr && dependency_count != 0) return record_error(cudaErrorInvalidValue);
  if (!default_edges("cudaStreamBeginCaptureToGraph", edge_data, dependency_count))
    return record_error(cudaErrorNotSupported);
  Graph* g = nullptr;
  {
    std::lock_guard<std::mutex> lock(graphs_mutex);
    g = find_graph(graph);
    if (g == nullptr) return record_error(cudaErrorInvalidValue);
    for (size_t i = 0; i < dependency_count; ++i)
      if (g->find(dependencies[i]) == nullptr) return record_error(cudaErrorInvalidValue);
  }
  const cudaError_t e =
      begin_capture_into(stream, g, false, std::vector<cudaGraphNode_t>(dependencies, dependencies + dependency_count));
  if (e == cudaErrorStreamCaptureUnsupported)
    report("cudaStreamBeginCaptureToGraph: the legacy default stream cannot be captured; create a stream");
  return record_error(e);
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph) {
  GraphNodes recorded;
  {
    std::lock_guard<std::mutex> lock(graphs_mutex);
    auto it = capture_targets.find(stream);
    // A capture into a graph of one's own must give it somewhere.
    if (graph == nullptr && (it == capture_targets.end() || it->second.graph_of_its_own))
      return record_error(cudaErrorInvalidValue);
  }
  const cudaError_t e = end_capture(stream, recorded);
  if (e != cudaSuccess && e != cudaErrorStreamCaptureInvalidated) return record_error(e);
  std::unique_lock<std::mutex> lock(graphs_mutex);
  auto it = capture_targets.find(stream);
  if (it == capture_targets.end()) return record_error(cudaErrorIllegalState);
  CaptureTarget target = it->second;
  capture_targets.erase(it);
  if (e == cudaErrorStreamCaptureInvalidated) {
    report("cudaStreamEndCapture: the capture was invalidated by a call it cannot record (a synchronisation of the "
           "capturing stream); no graph was made");
    if (target.graph_of_its_own) graphs.erase(target.graph);
    if (graph != nullptr) *graph = nullptr;
    return record_error(e);
  }
  add_chain(target, recorded);  // stream order: each recorded operation after the one before it
  if (graph != nullptr) *graph = target.graph;
  return cudaSuccess;
}

cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, cudaStreamCaptureStatus* status, unsigned long long* id,
                                     cudaGraph_t* graph, const cudaGraphNode_t** dependencies,
                                     const cudaGraphEdgeData** edge_data, size_t* dependency_count) {
  if (status == nullptr || (edge_data != nullptr && dependencies == nullptr)) return record_error(cudaErrorInvalidValue);
  std::unique_lock<std::mutex> lock;
  CaptureTarget* target = nullptr;
  bool shared = false;
  const cudaError_t e = catch_up(stream, lock, target, shared);
  if (e == cudaErrorIllegalState || e == cudaErrorStreamCaptureInvalidated) {
    *status = e == cudaErrorIllegalState ? cudaStreamCaptureStatusNone : cudaStreamCaptureStatusInvalidated;
    return cudaSuccess;
  }
  if (e != cudaSuccess) return record_error(e);
  // Every stream of a capture, the one that began it or one that joined it, gets the same
  // answer: the simulator captures their work as one chain, in the order it was captured, so the
  // next operation of any of them follows the last one captured.
  *status = cudaStreamCaptureStatusActive;
  if (id != nullptr) *id = target->id;
  if (graph != nullptr) *graph = target->graph;
  target->edges.assign(target->dependencies.size(), cudaGraphEdgeData{});
  if (dependencies != nullptr) *dependencies = target->dependencies.data();
  if (edge_data != nullptr) *edge_data = target->edges.data();
  if (dependency_count != nullptr) *dependency_count = target->dependencies.size();
  return cudaSuccess;
}

cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t stream, cudaGraphNode_t* dependencies,
                                                const cudaGraphEdgeData* edge_data, size_t dependency_count,
                                                unsigned int flags) {
  if ((dependencies == nullptr && dependency_count != 0) ||
      (flags != cudaStreamAddCaptureDependencies && flags != cudaStreamSetCaptureDependencies))
    return record_error(cudaErrorInvalidValue);
  if (!default_edges("cudaStreamUpdateCaptureDependencies", edge_data, dependency_count))
    return record_error(cudaErrorNotSupported);
  std::unique_lock<std::mutex> lock;
  CaptureTarget* target = nullptr;
  bool shared = false;
  const cudaError_t e = catch_up(stream, lock, target, shared);
  if (e != cudaSuccess) return record_error(e);
  std::vector<const Node*> given;
  for (size_t i = 0; i < dependency_count; ++i) {
    const Node* d = target->graph->find(dependencies[i]);
    if (d == nullptr) {
      report("cudaStreamUpdateCaptureDependencies: dependency %zu is not a node of the capture's graph", i);
      return record_error(cudaErrorInvalidValue);
    }
    given.push_back(d);
  }
  std::vector<cudaGraphNode_t> kept;
  if (flags == cudaStreamAddCaptureDependencies) {
    kept = target->dependencies;
  } else if (shared) {
    // The streams of a shared capture have one chain: the nodes it follows now stay among its
    // dependencies unless a given node follows them, or the other streams' next operations would
    // lose their order after their own last ones.
    for (cudaGraphNode_t old : target->dependencies) {
      const Node* tail = target->graph->find(old);
      if (tail != nullptr &&
          std::none_of(given.begin(), given.end(), [tail](const Node* d) { return follows(d, tail); }))
        kept.push_back(old);
    }
  }
  kept.insert(kept.end(), dependencies, dependencies + dependency_count);
  target->dependencies = std::move(kept);
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
  return record_error(add_node(node, graph, dependencies, dependency_count, node_of(cudaGraphNodeTypeKernel, std::move(work))));
}

cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                                     size_t dependency_count, void* dst, const void* src, size_t count,
                                     cudaMemcpyKind kind) {
  std::function<void()> work;
  const cudaError_t valid = copy_node_work(dst, src, count, kind, work);
  if (valid != cudaSuccess) return record_error(valid);
  return record_error(add_node(node, graph, dependencies, dependency_count, node_of(cudaGraphNodeTypeMemcpy, std::move(work))));
}

cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                                   size_t dependency_count, const cudaMemcpy3DParms* params) {
  std::function<void()> work;
  const cudaError_t valid = copy_3d_node_work(params, work);
  if (valid != cudaSuccess) return record_error(valid);
  return record_error(add_node(node, graph, dependencies, dependency_count, node_of(cudaGraphNodeTypeMemcpy, std::move(work))));
}

cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                                   size_t dependency_count, const cudaMemsetParams* params) {
  std::function<void()> work;
  const cudaError_t valid = memset_node_work(params, work);
  if (valid != cudaSuccess) return record_error(valid);
  return record_error(add_node(node, graph, dependencies, dependency_count, node_of(cudaGraphNodeTypeMemset, std::move(work))));
}

namespace {
/// Whether `test` holds for `g` or for a child graph it runs, directly or not (conditional
/// nodes' bodies are not looked into). The caller holds graphs_mutex.
template <class Test>
bool any_graph_run_by(const Graph& g, const Test& test) {
  if (test(g)) return true;
  for (const auto& n : g.nodes) {
    const Graph* child = n->child != nullptr ? find_graph(n->child) : nullptr;
    if (child != nullptr && any_graph_run_by(*child, test)) return true;
  }
  return false;
}

/// Whether `g` or a child graph it runs holds a node of one of `types`. The caller holds
/// graphs_mutex.
bool holds_node_of(const Graph& g, std::initializer_list<cudaGraphNodeType> types) {
  return any_graph_run_by(g, [types](const Graph& x) {
    return std::any_of(x.nodes.begin(), x.nodes.end(), [types](const auto& n) {
      return n->type && std::find(types.begin(), types.end(), *n->type) != types.end();
    });
  });
}

std::unique_ptr<Graph> copy_of(const Graph& g);

/// A copy of `g` registered as a node's own graph (destroyed with the node's graph). The caller
/// holds graphs_mutex.
cudaGraph_t node_copy_of(const Graph& g) {
  std::unique_ptr<Graph> copy = copy_of(g);
  copy->body_of_a_node = true;
  Graph* raw = copy.get();
  graphs[raw] = std::move(copy);
  return raw;
}

/// A copy of `g`'s nodes and dependencies; each child graph node of the copy has a copy of its
/// graph of its own. `g` holds no conditional node (CUDA copies none). The caller holds
/// graphs_mutex.
std::unique_ptr<Graph> copy_of(const Graph& g) {
  auto copy = std::make_unique<Graph>();
  for (const auto& n : g.nodes) {
    Node c = *n;
    c.dependencies.clear();  // set below, to the copy's nodes
    if (n->child != nullptr) c.child = node_copy_of(*find_graph(n->child));
    copy->add(std::move(c));
  }
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const Node* d : g.nodes[i]->dependencies) copy->nodes[i]->dependencies.push_back(copy->nodes[g.index.at(d)].get());
  return copy;
}

/// Forgets `graph` and the graphs its nodes own (conditional nodes' bodies, child graphs). The
/// caller holds graphs_mutex.
void forget_graph(cudaGraph_t graph) {
  auto it = graphs.find(graph);
  if (it == graphs.end()) return;
  std::unique_ptr<Graph> g = std::move(it->second);
  graphs.erase(it);
  for (const auto& n : g->nodes) {
    if (n->conditional)
      for (cudaGraph_t body : n->conditional->bodies) forget_graph(body);
    if (n->child != nullptr) forget_graph(n->child);
  }
}

/// A child graph node running a copy of `child` (Clone) or `child` itself (Move), after checking
/// what CUDA checks.
cudaError_t add_child_graph_node(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                                 size_t dependency_count, cudaGraph_t child,
                                 cudaGraphChildGraphNodeOwnership ownership) {
  const bool move = ownership == cudaGraphChildGraphOwnershipMove;
  if (!move && ownership != cudaGraphChildGraphOwnershipClone) return cudaErrorInvalidValue;
  Node prototype = node_of(cudaGraphNodeTypeGraph);
  {
    std::lock_guard<std::mutex> lock(graphs_mutex);
    const Graph* parent = find_graph(graph);
    Graph* c = find_graph(child);
    if (parent == nullptr || c == nullptr) return cudaErrorInvalidValue;
    if (holds_node_of(*c, {cudaGraphNodeTypeConditional})) {
      report("cudaGraphAddChildGraphNode: the child graph has a conditional node; a child graph may have none");
      return cudaErrorInvalidValue;
    }
    if (move) {
      if (c->body_of_a_node || any_graph_run_by(*c, [parent](const Graph& x) { return &x == parent; })) {
        report("cudaGraphAddNode: a child graph to move must be a graph of its own, and not one that holds the "
               "graph it is added to");
        return cudaErrorInvalidValue;
      }
      prototype.child = child;
    } else {
      if (holds_node_of(*c, {cudaGraphNodeTypeMemAlloc, cudaGraphNodeTypeMemFree})) {
        report("cudaGraphAddChildGraphNode: the child graph has a memory allocation or free node; such a graph "
               "can only be moved into the node (cudaGraphAddNode with cudaGraphChildGraphOwnershipMove)");
        return cudaErrorInvalidValue;
      }
      prototype.child = node_copy_of(*c);
    }
  }
  const cudaGraph_t own = prototype.child;
  const cudaError_t added = add_node(node, graph, dependencies, dependency_count, std::move(prototype));
  std::lock_guard<std::mutex> lock(graphs_mutex);
  if (added != cudaSuccess) {
    if (!move) forget_graph(own);
    return added;
  }
  if (move) find_graph(own)->body_of_a_node = true;  // the node's now
  return cudaSuccess;
}

/// An event record or wait node (`type`) of `event`.
cudaError_t add_event_node(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                           size_t dependency_count, cudaEvent_t event, cudaGraphNodeType type) {
  if (!is_event(event)) return cudaErrorInvalidValue;
  Node prototype = node_of(type);
  prototype.event = event;
  return add_node(node, graph, dependencies, dependency_count, std::move(prototype));
}

/// The node behind `handle` when it is of `type`, else null. The caller holds graphs_mutex.
const Node* find_node_of(cudaGraphNode_t handle, cudaGraphNodeType type) {
  const Node* n = find_node(handle);
  return n != nullptr && n->type == type ? n : nullptr;
}
}  // namespace

cudaError_t cudaGraphClone(cudaGraph_t* clone, cudaGraph_t original) {
  if (clone == nullptr) return record_error(cudaErrorInvalidValue);
  std::unique_ptr<Graph> copy;
  {
    std::lock_guard<std::mutex> lock(graphs_mutex);
    const Graph* g = find_graph(original);
    if (g == nullptr) return record_error(cudaErrorInvalidValue);
    if (holds_node_of(*g, {cudaGraphNodeTypeConditional})) {  // as in CUDA
      report("cudaGraphClone: the graph has a conditional node; such graphs cannot be cloned");
      return record_error(cudaErrorNotSupported);
    }
    copy = copy_of(*g);
  }
  *clone = register_graph(std::move(copy));
  return cudaSuccess;
}

cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                                       size_t dependency_count, cudaGraph_t child) {
  return record_error(
      add_child_graph_node(node, graph, dependencies, dependency_count, child, cudaGraphChildGraphOwnershipClone));
}

cudaError_t cudaGraphChildGraphNodeGetGraph(cudaGraphNode_t node, cudaGraph_t* graph) {
  std::lock_guard<std::mutex> lock(graphs_mutex);
  const Node* n = find_node_of(node, cudaGraphNodeTypeGraph);
  if (n == nullptr || graph == nullptr) return record_error(cudaErrorInvalidValue);
  *graph = n->child;
  return cudaSuccess;
}

cudaError_t cudaGraphAddEventRecordNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                                        size_t dependency_count, cudaEvent_t event) {
  return record_error(
      add_event_node(node, graph, dependencies, dependency_count, event, cudaGraphNodeTypeEventRecord));
}

cudaError_t cudaGraphAddEventWaitNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                                      size_t dependency_count, cudaEvent_t event) {
  return record_error(add_event_node(node, graph, dependencies, dependency_count, event, cudaGraphNodeTypeWaitEvent));
}

cudaError_t cudaGraphEventRecordNodeGetEvent(cudaGraphNode_t node, cudaEvent_t* event) {
  std::lock_guard<std::mutex> lock(graphs_mutex);
  const Node* n = find_node_of(node, cudaGraphNodeTypeEventRecord);
  if (n == nullptr || event == nullptr) return record_error(cudaErrorInvalidValue);
  *event = n->event;
  return cudaSuccess;
}

cudaError_t cudaGraphEventWaitNodeGetEvent(cudaGraphNode_t node, cudaEvent_t* event) {
  std::lock_guard<std::mutex> lock(graphs_mutex);
  const Node* n = find_node_of(node, cudaGraphNodeTypeWaitEvent);
  if (n == nullptr || event == nullptr) return record_error(cudaErrorInvalidValue);
  *event = n->event;
  return cudaSuccess;
}

cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node, cudaGraphNodeType* type) {
  std::lock_guard<std::mutex> lock(graphs_mutex);
  const Node* n = find_node(node);
  if (n == nullptr || type == nullptr) return record_error(cudaErrorInvalidValue);
  if (!n->type) {
    report("cudaGraphNodeGetType: the node was recorded by stream capture; the simulator does not keep the type "
           "of captured operations");
    return record_error(cudaErrorNotSupported);
  }
  *type = *n->type;
  return cudaSuccess;
}

cudaError_t cudaGraphAddHostNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                                 size_t dependency_count, const cudaHostNodeParams* params) {
  if (params == nullptr || params->fn == nullptr) return record_error(cudaErrorInvalidValue);
  const cudaHostFn_t fn = params->fn;
  void* const user_data = params->userData;
  return record_error(add_node(node, graph, dependencies, dependency_count, node_of(cudaGraphNodeTypeHost, [fn, user_data] { fn(user_data); })));
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
  const cudaError_t added = add_node(node, graph, dependencies, dependency_count, node_of(cudaGraphNodeTypeMemAlloc, std::move(work)));
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
      add_node(node, graph, dependencies, dependency_count, node_of(cudaGraphNodeTypeMemFree, graph_free_work(dptr, "a graph's free node"))));
}

cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                                  size_t dependency_count) {
  return record_error(add_node(node, graph, dependencies, dependency_count, node_of(cudaGraphNodeTypeEmpty)));
}

cudaError_t cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t* from, const cudaGraphNode_t* to,
                                     const cudaGraphEdgeData* edge_data, size_t count) {
  if (count != 0 && (from == nullptr || to == nullptr)) return record_error(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lock(graphs_mutex);
  Graph* g = find_graph(graph);
  if (g == nullptr) return record_error(cudaErrorInvalidValue);
  if (!default_edges("cudaGraphAddDependencies", edge_data, count)) return record_error(cudaErrorNotSupported);
  for (size_t i = 0; i < count; ++i) {
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
    if (!instantiate_into(*g, *e)) return record_error(cudaErrorInvalidValue);
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
  if (!instantiate_into(*g, e)) return record_error(cudaErrorInvalidValue);  // a child graph's cycle, say
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
  std::shared_ptr<const GraphEvents> events;
  {
    std::lock_guard<std::mutex> lock(graphs_mutex);
    auto it = executables.find(exec);
    if (it == executables.end()) return record_error(cudaErrorInvalidValue);
    nodes = it->second->nodes;
    events = it->second->events;
  }
  if (sticky_error() != cudaSuccess) return record_error(sticky_error());
  count_graph_launch_call();
  const auto run = [nodes] {
    cudasim::detail::GraphReplay replay;
    for (const auto& node : *nodes) node();
  };
  if (events->waits.empty() && events->records.empty()) return record_error(enqueue(stream, run));
  return record_error(enqueue_graph_launch(stream, run, events->waits, events->records));
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  std::lock_guard<std::mutex> lock(graphs_mutex);
  return executables.erase(exec) ? cudaSuccess : record_error(cudaErrorInvalidValue);
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  std::lock_guard<std::mutex> lock(graphs_mutex);
  const Graph* g = find_graph(graph);
  if (g == nullptr) return record_error(cudaErrorInvalidValue);
  if (g->body_of_a_node) {
    report("cudaGraphDestroy: the graph is a conditional node's body or a child graph node's graph; it goes with "
           "that node's graph");
    return record_error(cudaErrorInvalidValue);
  }
  forget_graph(graph);
  return cudaSuccess;
}

cudaError_t cudaGraphConditionalHandleCreate(cudaGraphConditionalHandle* handle, cudaGraph_t graph,
                                             unsigned int default_value, unsigned int flags) {
  if (handle == nullptr || (flags & ~static_cast<unsigned>(cudaGraphCondAssignDefault)) != 0)
    return record_error(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lock(graphs_mutex);
  Graph* g = find_graph(graph);
  if (g == nullptr) return record_error(cudaErrorInvalidValue);
  auto condition = std::make_shared<Condition>();
  condition->value = default_value;
  condition->default_value = default_value;
  condition->assign_default = (flags & cudaGraphCondAssignDefault) != 0;
  *handle = reinterpret_cast<cudaGraphConditionalHandle>(condition.get());
  g->conditions.push_back(std::move(condition));
  return cudaSuccess;
}

void cudaGraphSetConditional(cudaGraphConditionalHandle handle, unsigned int value) {
  // The handle is the address of its Condition, which the executable running the kernel holds.
  reinterpret_cast<Condition*>(handle)->value = value;
}

namespace {
/// A conditional node: `size` new body graphs, after checking the kind, the size and that
/// the handle is one of `graph`'s.
cudaError_t add_conditional_node(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                                 size_t dependency_count, cudaConditionalNodeParams& params) {
  const unsigned size = params.size;
  const bool size_fits = params.type == cudaGraphCondTypeIf      ? size == 1 || size == 2
                         : params.type == cudaGraphCondTypeWhile ? size == 1
                                                                 : params.type == cudaGraphCondTypeSwitch && size >= 1;
  if (!size_fits) {
    report("cudaGraphAddNode: a conditional node of type %d cannot have %u body graphs (if: 1 or 2, while: 1, "
           "switch: 1 or more)", static_cast<int>(params.type), size);
    return cudaErrorInvalidValue;
  }
  auto conditional = std::make_shared<Conditional>();
  conditional->type = params.type;
  {
    std::lock_guard<std::mutex> lock(graphs_mutex);
    const Graph* g = find_graph(graph);
    conditional->condition = g ? g->condition(params.handle) : nullptr;
    if (!conditional->condition) {
      report("cudaGraphAddNode: the conditional node's handle was not made for this graph "
             "(cudaGraphConditionalHandleCreate with the graph the node is added to)");
      return cudaErrorInvalidValue;
    }
    for (unsigned i = 0; i < size; ++i) {
      auto body = std::make_unique<Graph>();
      body->body_of_a_node = true;
      conditional->bodies.push_back(body.get());
      graphs[body.get()] = std::move(body);
    }
  }
  Node prototype = node_of(cudaGraphNodeTypeConditional);
  prototype.conditional = conditional;
  const cudaError_t added = add_node(node, graph, dependencies, dependency_count, std::move(prototype));
  std::lock_guard<std::mutex> lock(graphs_mutex);
  if (added != cudaSuccess) {
    for (cudaGraph_t body : conditional->bodies) graphs.erase(body);
    return added;
  }
  params.phGraph_out = conditional->bodies.data();
  return cudaSuccess;
}
}  // namespace

cudaError_t cudaGraphAddNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                             const cudaGraphEdgeData* edge_data, size_t dependency_count, cudaGraphNodeParams* params,
                             const char* file, unsigned line) {
  if (params == nullptr) return record_error(cudaErrorInvalidValue);
  if (!default_edges("cudaGraphAddNode", edge_data, dependency_count)) return record_error(cudaErrorNotSupported);
  switch (params->type) {
    case cudaGraphNodeTypeKernel:
      return cudaGraphAddKernelNode(node, graph, dependencies, dependency_count, &params->kernel, file, line);
    case cudaGraphNodeTypeHost:
      return cudaGraphAddHostNode(node, graph, dependencies, dependency_count, &params->host);
    case cudaGraphNodeTypeEmpty:
      return cudaGraphAddEmptyNode(node, graph, dependencies, dependency_count);
    case cudaGraphNodeTypeGraph:
      return record_error(add_child_graph_node(node, graph, dependencies, dependency_count, params->graph.graph,
                                               params->graph.ownership));
    case cudaGraphNodeTypeEventRecord:
      return cudaGraphAddEventRecordNode(node, graph, dependencies, dependency_count, params->eventRecord.event);
    case cudaGraphNodeTypeWaitEvent:
      return cudaGraphAddEventWaitNode(node, graph, dependencies, dependency_count, params->eventWait.event);
    case cudaGraphNodeTypeConditional:
      return record_error(add_conditional_node(node, graph, dependencies, dependency_count, params->conditional));
    default:
      report("cudaGraphAddNode at %s:%u: nodes of type %d are not supported by the simulator through "
             "cudaGraphAddNode (kernel, host, empty, child graph, event and conditional nodes are)", file, line,
             static_cast<int>(params->type));
      return record_error(cudaErrorNotSupported);
  }
}
