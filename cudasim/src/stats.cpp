// The statistics API (cudasim/stats.hpp) and the report printed at exit when CUDASIM_STATS is
// set (what `./course run --stats` shows): per kernel, launches and the memory traffic the
// instrumentation counted, plus copy traffic by direction. With CUDASIM_STATS_JSON=<path> the
// same figures are written as JSON for `./course profile`; with CUDASIM_LAUNCH_LOG=<path>, each
// launch's are appended to that file as it completes, one JSON object per line.
#include "cudasim/stats.hpp"
#include "cudasim/link_model.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "internal.hpp"

namespace cudasim {

namespace {

struct Registry {
  std::mutex mutex;
  std::vector<std::pair<std::string, std::uint64_t>> declared_flops;
  std::vector<KernelStats> per_kernel;  // in order of first launch
  std::vector<KernelStats> per_device;  // indexed by the device the launch ran on
  KernelStats last;
  TransferStats transfers;
  ApiStats api;
};

Registry& registry() {
  static Registry r;
  return r;
}

/// The model's view of one launch's counters.
LaunchWork work_of(const KernelStats& one, std::size_t dynamic_shared_bytes, bool graph_node) {
  LaunchWork w;
  w.blocks = one.blocks;
  w.threads_per_block = one.blocks == 0 ? 0 : one.threads / one.blocks;
  w.dynamic_shared_bytes = dynamic_shared_bytes;
  w.global_bytes = one.global_bytes();
  w.global_accesses = one.global_atomics;
  for (std::uint64_t count : one.global_accesses_by_width) w.global_accesses += count;
  w.host_access_bytes = one.host_access_bytes;
  // The link model is looked up (a copy under its lock) only for the rare zero-copy kernel.
  if (one.host_access_bytes > 0) w.host_link_bytes_per_s = host_link().pinned_bytes_per_second;
  w.flops = one.flops;
  w.tensor_cores = one.mma_ops > 0;
  w.span_global_ops = one.span_global_ops;
  w.span_shared_ops = one.span_shared_ops;
  w.barriers_per_thread = one.threads == 0 ? 0 : one.barrier_arrivals / one.threads;
  w.max_atomics_same_address = one.max_atomics_same_address;
  w.graph_node = graph_node;
  return w;
}

/// One kernel's (or launch's) counters as a JSON object.
std::string kernel_json(const KernelStats& k) {
  return detail::format_string(
      "{\"name\": \"%s\", \"launches\": %llu, \"blocks\": %llu, \"threads\": %llu, "
      "\"global_load_bytes\": %llu, \"global_store_bytes\": %llu, \"shared_load_bytes\": %llu, "
      "\"shared_store_bytes\": %llu, \"atomics\": %llu, \"host_access_bytes\": %llu, \"flops\": %llu, "
      "\"global_atomic_bytes\": %llu, \"max_atomics_same_address\": %llu, \"warp_ops\": %llu, "
      "\"barrier_arrivals\": %llu, \"mma_ops\": %llu, \"global_requests\": %llu, "
      "\"global_sectors\": %llu, \"span_global_ops\": %llu, \"span_shared_ops\": %llu, "
      "\"modelled_ns\": %.1f, \"modelled_launch_ns\": %.1f, \"modelled_memory_ns\": %.1f, "
      "\"modelled_compute_ns\": %.1f, \"modelled_span_ns\": %.1f, \"modelled_atomic_ns\": %.1f, "
      "\"modelled_bound\": \"%s\", \"modelled_gpu\": \"%s\", "
      "\"global_accesses_by_width\": [%llu, %llu, %llu, %llu, %llu], \"fissioned_blocks\": %llu}",
      detail::json_escape(k.kernel_name).c_str(),
      static_cast<unsigned long long>(k.launches), static_cast<unsigned long long>(k.blocks),
      static_cast<unsigned long long>(k.threads),
      static_cast<unsigned long long>(k.global_load_bytes),
      static_cast<unsigned long long>(k.global_store_bytes),
      static_cast<unsigned long long>(k.shared_load_bytes),
      static_cast<unsigned long long>(k.shared_store_bytes),
      static_cast<unsigned long long>(k.atomics),
      static_cast<unsigned long long>(k.host_access_bytes),
      static_cast<unsigned long long>(k.flops),
      static_cast<unsigned long long>(k.global_atomic_bytes),
      static_cast<unsigned long long>(k.max_atomics_same_address),
      static_cast<unsigned long long>(k.warp_ops),
      static_cast<unsigned long long>(k.barrier_arrivals),
      static_cast<unsigned long long>(k.mma_ops),
      static_cast<unsigned long long>(k.global_requests),
      static_cast<unsigned long long>(k.global_sectors),
      static_cast<unsigned long long>(k.span_global_ops),
      static_cast<unsigned long long>(k.span_shared_ops), k.modelled.total_ns, k.modelled.launch_ns,
      k.modelled.memory_ns, k.modelled.compute_ns, k.modelled.span_ns, k.modelled.atomic_ns,
      k.modelled.dominant(), modelled_gpu().name, static_cast<unsigned long long>(k.global_accesses_by_width[0]),
      static_cast<unsigned long long>(k.global_accesses_by_width[1]),
      static_cast<unsigned long long>(k.global_accesses_by_width[2]),
      static_cast<unsigned long long>(k.global_accesses_by_width[3]),
      static_cast<unsigned long long>(k.global_accesses_by_width[4]),
      static_cast<unsigned long long>(k.fissioned_blocks));
}

void print_report() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::FILE* out = std::getenv("CUDASIM_STATS") != nullptr ? stderr : nullptr;
  if (out == nullptr) out = std::fopen("/dev/null", "w");  // only the JSON was asked for
  std::fflush(stdout);
  std::fprintf(out, "\ncudasim statistics%s\n",
               stats_available() ? "" : " (kernels not instrumented: byte counts unavailable)");
  std::fprintf(out, "%-32s %8s %10s %14s %14s %14s %14s %10s %8s %12s  %s\n", "kernel", "launches", "threads",
               "global load B", "global store B", "shared load B", "shared store B", "atomics", "sect/req",
               "span (g/s)", "modelled time");
  const GpuSpec& gpu = modelled_gpu();
  for (const KernelStats& k : r.per_kernel) {
    const std::string span = std::to_string(k.span_global_ops) + "/" + std::to_string(k.span_shared_ops);
    std::fprintf(out, "%-32s %8llu %10llu %14llu %14llu %14llu %14llu %10llu %8.1f %12s  %s\n", k.kernel_name.c_str(),
                 static_cast<unsigned long long>(k.launches), static_cast<unsigned long long>(k.threads),
                 static_cast<unsigned long long>(k.global_load_bytes),
                 static_cast<unsigned long long>(k.global_store_bytes),
                 static_cast<unsigned long long>(k.shared_load_bytes),
                 static_cast<unsigned long long>(k.shared_store_bytes),
                 static_cast<unsigned long long>(k.atomics), k.sectors_per_request(), span.c_str(),
                 k.modelled.describe(gpu).c_str());
  }
  const TransferStats& t = r.transfers;
  std::fprintf(out, "copies: host->device %llu B, device->host %llu B, device->device %llu B, memset %llu B\n",
               static_cast<unsigned long long>(t.host_to_device_bytes),
               static_cast<unsigned long long>(t.device_to_host_bytes),
               static_cast<unsigned long long>(t.device_to_device_bytes),
               static_cast<unsigned long long>(t.memset_bytes));
  if (out != stderr) std::fclose(out);

  if (const char* path = std::getenv("CUDASIM_STATS_JSON")) {
    if (std::FILE* json = std::fopen(path, "w")) {
      std::fprintf(json, "{\n  \"instrumented\": %s,\n  \"kernels\": [", stats_available() ? "true" : "false");
      bool first = true;
      for (const KernelStats& k : r.per_kernel) {
        std::fprintf(json, "%s\n    %s", first ? "" : ",", kernel_json(k).c_str());
        first = false;
      }
      std::fprintf(json,
                   "\n  ],\n  \"copies\": {\"host_to_device_bytes\": %llu, \"device_to_host_bytes\": %llu, "
                   "\"device_to_device_bytes\": %llu, \"host_to_host_bytes\": %llu, \"memset_bytes\": %llu}\n}\n",
                   static_cast<unsigned long long>(t.host_to_device_bytes),
                   static_cast<unsigned long long>(t.device_to_host_bytes),
                   static_cast<unsigned long long>(t.device_to_device_bytes),
                   static_cast<unsigned long long>(t.host_to_host_bytes),
                   static_cast<unsigned long long>(t.memset_bytes));
      std::fclose(json);
    }
  }
}

void register_exit_report_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    // The registry must exist before the handler is registered, so that it is destroyed after
    // the handler has run (exit runs them in reverse order of registration).
    registry();
    if (std::getenv("CUDASIM_STATS") != nullptr || std::getenv("CUDASIM_STATS_JSON") != nullptr)
      std::atexit(print_report);
  });
}

}  // namespace

KernelStats& KernelStats::operator+=(const KernelStats& one) {
  KernelStats& total = *this;
  total.launches += one.launches;
  total.blocks += one.blocks;
  total.threads += one.threads;
  total.global_load_bytes += one.global_load_bytes;
  total.global_store_bytes += one.global_store_bytes;
  total.shared_load_bytes += one.shared_load_bytes;
  total.shared_store_bytes += one.shared_store_bytes;
  total.atomics += one.atomics;
  total.host_access_bytes += one.host_access_bytes;
  total.flops += one.flops;
  total.global_atomics += one.global_atomics;
  total.global_atomic_bytes += one.global_atomic_bytes;
  total.max_atomics_same_address = std::max(total.max_atomics_same_address, one.max_atomics_same_address);
  total.max_atomics_per_block = std::max(total.max_atomics_per_block, one.max_atomics_per_block);
  total.warp_ops += one.warp_ops;
  total.barrier_arrivals += one.barrier_arrivals;
  total.mma_ops += one.mma_ops;
  total.fragment_loads += one.fragment_loads;
  total.fragment_stores += one.fragment_stores;
  total.fissioned_blocks += one.fissioned_blocks;
  for (int i = 0; i < 5; ++i) total.global_accesses_by_width[i] += one.global_accesses_by_width[i];
  total.global_requests += one.global_requests;
  total.global_sectors += one.global_sectors;
  total.span_global_ops = std::max(total.span_global_ops, one.span_global_ops);
  total.span_shared_ops = std::max(total.span_shared_ops, one.span_shared_ops);
  total.span_warp_ops = std::max(total.span_warp_ops, one.span_warp_ops);
  total.span_mma_ops = std::max(total.span_mma_ops, one.span_mma_ops);
  total.modelled += one.modelled;
  return total;
}

bool stats_available() { return detail::instrumentation_present(); }

void reset_stats() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.per_kernel.clear();
  r.per_device.clear();
  r.last = {};
  r.transfers = {};
  r.api = {};
  detail::reset_link_stats();
}

ApiStats api_stats() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.api;
}

KernelStats last_launch_stats() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.last;
}

std::vector<KernelStats> kernel_stats() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.per_kernel;
}

std::vector<KernelStats> device_kernel_stats() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.per_device;
}

TransferStats transfer_stats() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.transfers;
}

void declare_flops(const char* kernel_name, std::uint64_t flops_per_launch) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (auto& entry : r.declared_flops)
    if (entry.first == kernel_name) {
      entry.second = flops_per_launch;
      return;
    }
  r.declared_flops.emplace_back(kernel_name, flops_per_launch);
}

namespace detail {

void record_launch_stats(const LaunchState& launch) {
  register_exit_report_once();
  const dim3 g = launch.config.grid, b = launch.config.block;
  KernelStats one;
  one.kernel_name = launch.config.site.kernel_name;
  one.launches = 1;
  one.blocks = static_cast<std::uint64_t>(g.x) * g.y * g.z;
  one.threads = one.blocks * b.x * b.y * b.z;
  one.global_load_bytes = launch.traffic.global_load.load();
  one.global_store_bytes = launch.traffic.global_store.load();
  one.shared_load_bytes = launch.traffic.shared_load.load();
  one.shared_store_bytes = launch.traffic.shared_store.load();
  one.atomics = launch.traffic.atomics.load();
  one.host_access_bytes = launch.traffic.host_access.load();
  const TrafficCounters& t = launch.traffic;
  one.global_atomics = t.global_atomics.load();
  one.global_atomic_bytes = t.global_atomic_bytes.load();
  one.max_atomics_per_block = t.max_block_global_atomics.load();
  for (const auto& entry : t.atomics_per_address)  // every block has ended: no lock needed
    one.max_atomics_same_address = std::max(one.max_atomics_same_address, entry.second);
  one.warp_ops = t.warp_ops.load();
  one.barrier_arrivals = t.barrier_arrivals.load();
  one.mma_ops = (t.mma_lane_calls.load() + 31) / 32;
  one.fragment_loads = t.fragment_loads.load();
  one.fragment_stores = t.fragment_stores.load();
  for (int i = 0; i < 5; ++i) one.global_accesses_by_width[i] = t.global_accesses_by_width[i].load();
  one.global_requests = t.global_requests.load();
  one.global_sectors = t.global_sectors.load();
  one.span_global_ops = t.span_global_ops.load();
  one.span_shared_ops = t.span_shared_ops.load();
  one.span_warp_ops = t.span_warp_ops.load();
  one.span_mma_ops = t.span_mma_ops.load();
  one.fissioned_blocks = t.fissioned_blocks.load();

  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const auto& entry : r.declared_flops)
    if (entry.first == one.kernel_name) one.flops = entry.second;
  one.modelled = model_launch(work_of(one, launch.config.dynamic_shared_bytes, launch.graph_node), modelled_gpu());
  charge_operation("kernel", one.kernel_name, one.modelled.total_ns);
  r.last = one;
  if (const char* path = std::getenv("CUDASIM_LAUNCH_LOG")) {
    // Every launch's counters, one JSON object per line, whatever reset_stats() cleared: the
    // loop fission tests compare two runs of a program launch by launch.
    if (std::FILE* log = std::fopen(path, "a")) {
      std::fprintf(log, "%s\n", kernel_json(one).c_str());
      std::fclose(log);
    }
  }
  if (launch.device >= 0) {
    const std::size_t device = static_cast<std::size_t>(launch.device);
    if (r.per_device.size() <= device) r.per_device.resize(device + 1);
    r.per_device[device] += one;
  }
  for (KernelStats& k : r.per_kernel)
    if (k.kernel_name == one.kernel_name) {
      k += one;
      return;
    }
  r.per_kernel.push_back(one);
}

void record_transfer(cudaMemcpyKind direction, std::size_t bytes, bool host_side_pinned) {
  register_exit_report_once();
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (direction == cudaMemcpyHostToDevice || direction == cudaMemcpyDeviceToHost)
    (host_side_pinned ? r.transfers.pinned_host_bytes : r.transfers.pageable_host_bytes) += bytes;
  switch (direction) {
    case cudaMemcpyHostToDevice: r.transfers.host_to_device_bytes += bytes; break;
    case cudaMemcpyDeviceToHost: r.transfers.device_to_host_bytes += bytes; break;
    case cudaMemcpyDeviceToDevice: r.transfers.device_to_device_bytes += bytes; break;
    default: r.transfers.host_to_host_bytes += bytes; break;
  }
}

void count_kernel_launch_call() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  ++r.api.kernel_launch_calls;
}

void count_graph_launch_call() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  ++r.api.graph_launch_calls;
}

void record_memset(std::size_t bytes) {
  register_exit_report_once();
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.transfers.memset_bytes += bytes;
}

}  // namespace detail
}  // namespace cudasim
