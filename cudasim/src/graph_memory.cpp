// Graph memory: the allocations of graph memory nodes (cudaGraphAddMemAllocNode, and
// cudaMallocAsync in a captured stream) and their frees (cudaGraphAddMemFreeNode, cudaFreeAsync
// in a captured stream, or cudaFree/cudaFreeAsync after the graph has run).
//
// On a GPU the address of a graph allocation is fixed when its node is made and stays the
// graph's; running the node maps memory there, and the free unmaps it. Here the address is a
// device allocation made when the node is made, kept while any graph or executable holds the
// node (its work holds a GraphAllocationHold) or the memory is in use; running the allocation
// node and the free only move the device's "used" figure, which cudaDeviceGetGraphMemAttribute
// reports with the reserved one.
#include <algorithm>
#include <map>
#include <mutex>

#include "internal.hpp"

namespace cudasim::detail {
namespace {

struct GraphAllocation {
  int device = 0;
  std::size_t bytes = 0;
  bool in_use = false;  // its allocation node ran and no free has run since
  bool held = true;     // some graph or executable still holds its allocation node
};

/// The graph memory of one device, in bytes (cudaGraphMemAttributeType).
struct GraphMemoryUse {
  std::uint64_t used = 0, used_high = 0, reserved = 0, reserved_high = 0;
};

// Never destroyed, like the graphs that hold allocations (graphs.cpp): what a captured stream
// still holds at exit may be released during the exit.
std::mutex& graph_memory_mutex = *new std::mutex;
std::map<const void*, GraphAllocation>& graph_allocations = *new std::map<const void*, GraphAllocation>;
std::map<int, GraphMemoryUse>& graph_memory_use = *new std::map<int, GraphMemoryUse>;

/// Gives the address back to the device once nothing can use it. The caller holds the lock.
void release_if_unused(std::map<const void*, GraphAllocation>::iterator it) {
  if (it->second.held || it->second.in_use) return;
  void* address = const_cast<void*>(it->first);
  graph_allocations.erase(it);
  release_device_memory(address);
}

/// Kept alive by the allocation node's work, in every graph and executable that holds it.
struct GraphAllocationHold {
  explicit GraphAllocationHold(void* a) : address(a) {}
  GraphAllocationHold(const GraphAllocationHold&) = delete;
  GraphAllocationHold& operator=(const GraphAllocationHold&) = delete;
  void* address;
  ~GraphAllocationHold() {
    std::lock_guard<std::mutex> lock(graph_memory_mutex);
    auto it = graph_allocations.find(address);
    if (it == graph_allocations.end()) return;
    it->second.held = false;
    release_if_unused(it);
  }
};

/// An allocation node ran: the memory is the graph's until it is freed.
void start_using(const void* address) {
  std::lock_guard<std::mutex> lock(graph_memory_mutex);
  auto it = graph_allocations.find(address);
  if (it == graph_allocations.end() || it->second.in_use) return;  // launched again unfreed: as AutoFree
  it->second.in_use = true;
  GraphMemoryUse& use = graph_memory_use[it->second.device];
  use.used += it->second.bytes;
  use.used_high = std::max(use.used_high, use.used);
  use.reserved = std::max(use.reserved, use.used);
  use.reserved_high = std::max(use.reserved_high, use.reserved);
}

}  // namespace

cudaError_t new_graph_allocation(std::size_t bytes, const char* file, unsigned line, void*& address,
                                 std::function<void()>& allocation_work) {
  if (bytes == 0) return cudaErrorInvalidValue;
  void* p = allocate_device_memory(bytes, file, line);
  if (p == nullptr) {
    report("a graph allocation of %zu bytes at %s:%u failed: out of (modelled) device memory", bytes, file, line);
    return cudaErrorMemoryAllocation;
  }
  {
    std::lock_guard<std::mutex> lock(graph_memory_mutex);
    graph_allocations[p] = GraphAllocation{current_device(), bytes};
  }
  auto hold = std::make_shared<GraphAllocationHold>(p);
  allocation_work = [hold] { start_using(hold->address); };
  address = p;
  return cudaSuccess;
}

bool is_graph_allocation(const void* address) {
  std::lock_guard<std::mutex> lock(graph_memory_mutex);
  return graph_allocations.count(address) != 0;
}

bool free_graph_allocation(const void* address) {
  std::lock_guard<std::mutex> lock(graph_memory_mutex);
  auto it = graph_allocations.find(address);
  if (it == graph_allocations.end() || !it->second.in_use) return false;
  it->second.in_use = false;
  graph_memory_use[it->second.device].used -= it->second.bytes;
  release_if_unused(it);
  return true;
}

std::function<void()> graph_free_work(void* address, const char* api) {
  return [address, api] {
    if (!free_graph_allocation(address)) report("%s: graph allocation %p is not in use (freed twice?)", api, address);
  };
}

void forget_graph_memory(int device) {
  std::lock_guard<std::mutex> lock(graph_memory_mutex);
  for (auto it = graph_allocations.begin(); it != graph_allocations.end();)
    it = it->second.device == device ? graph_allocations.erase(it) : std::next(it);
  graph_memory_use.erase(device);
}

}  // namespace cudasim::detail

using namespace cudasim::detail;

cudaError_t cudaDeviceGetGraphMemAttribute(int device, cudaGraphMemAttributeType attribute, void* value) {
  if (value == nullptr) return record_error(cudaErrorInvalidValue);
  if (device < 0 || device >= device_count()) return record_error(cudaErrorInvalidDevice);
  std::lock_guard<std::mutex> lock(graph_memory_mutex);
  const GraphMemoryUse& use = graph_memory_use[device];
  std::uint64_t figure = 0;
  switch (attribute) {
    case cudaGraphMemAttrUsedMemCurrent: figure = use.used; break;
    case cudaGraphMemAttrUsedMemHigh: figure = use.used_high; break;
    case cudaGraphMemAttrReservedMemCurrent: figure = use.reserved; break;
    case cudaGraphMemAttrReservedMemHigh: figure = use.reserved_high; break;
    default: return record_error(cudaErrorInvalidValue);
  }
  *static_cast<std::uint64_t*>(value) = figure;
  return cudaSuccess;
}

cudaError_t cudaDeviceSetGraphMemAttribute(int device, cudaGraphMemAttributeType attribute, void* value) {
  if (value == nullptr || *static_cast<const std::uint64_t*>(value) != 0) return record_error(cudaErrorInvalidValue);
  if (device < 0 || device >= device_count()) return record_error(cudaErrorInvalidDevice);
  std::lock_guard<std::mutex> lock(graph_memory_mutex);
  GraphMemoryUse& use = graph_memory_use[device];
  if (attribute == cudaGraphMemAttrUsedMemHigh) {
    use.used_high = use.used;
  } else if (attribute == cudaGraphMemAttrReservedMemHigh) {
    use.reserved_high = use.reserved;
  } else {
    return record_error(cudaErrorInvalidValue);
  }
  return cudaSuccess;
}

cudaError_t cudaDeviceGraphMemTrim(int device) {
  if (device < 0 || device >= device_count()) return record_error(cudaErrorInvalidDevice);
  synchronize_device_streams(device);  // as on a GPU: what is freed by queued work counts
  std::lock_guard<std::mutex> lock(graph_memory_mutex);
  GraphMemoryUse& use = graph_memory_use[device];
  use.reserved = use.used;
  return cudaSuccess;
}
