// The modelled GPU clock of one launch (cudasim/gpu_model.hpp explains the model).
#include "cudasim/gpu_model.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "internal.hpp"

namespace cudasim {

// Sources: NVIDIA's H100, H200, A100 and T4 datasheets (as lesson 02's table); SM counts from
// NVIDIA's architecture whitepapers (H100 SXM5 and H200: 132, A100: 108, T4: 40).
const GpuSpec kModelledGpus[4] = {
    {"H100", "NVIDIA H100 SXM5 80 GB HBM3", 66.9e12, 989.4e12, 3.35e12, 132},
    {"H200", "NVIDIA H200 SXM 141 GB HBM3e", 66.9e12, 989.4e12, 4.8e12, 132},
    {"A100", "NVIDIA A100 SXM4 80 GB HBM2e", 19.5e12, 312e12, 2.039e12, 108},
    {"T4", "NVIDIA T4 16 GB GDDR6", 8.1e12, 65e12, 320e9, 40},
};

const GpuSpec* find_gpu(const std::string& name) {
  for (const GpuSpec& gpu : kModelledGpus) {
    const std::string known = gpu.name;
    if (known.size() == name.size() &&
        std::equal(known.begin(), known.end(), name.begin(),
                   [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) ==
                                               std::tolower(static_cast<unsigned char>(b)); }))
      return &gpu;
  }
  return nullptr;
}

const GpuSpec& modelled_gpu() {
  static const GpuSpec& gpu = []() -> const GpuSpec& {
    const char* env = std::getenv("CUDASIM_GPU");
    if (env == nullptr || *env == '\0') return kModelledGpus[0];
    if (const GpuSpec* found = find_gpu(env)) return *found;
    detail::report("CUDASIM_GPU=%s is not a GPU the model knows (H100, H200, A100, T4): modelling an H100", env);
    return kModelledGpus[0];
  }();
  return gpu;
}

namespace {
/// One term of a modelled time: its name, how the feedback calls a launch it bounds, its value.
struct Term {
  const char* name;
  const char* bound;
  double ns;
};

/// The largest term (the launch overhead on a tie: it comes first).
Term largest_term(const ModelledTime& t) {
  const Term terms[] = {{"launch overhead", "launch-bound", t.launch_ns},
                        {"memory", "memory-bound", t.memory_ns},
                        {"compute", "compute-bound", t.compute_ns},
                        {"span", "span-bound (the longest thread)", t.span_ns},
                        {"atomics", "atomic-bound (one address)", t.atomic_ns}};
  Term largest = terms[0];
  for (const Term& term : terms)
    if (term.ns > largest.ns) largest = term;
  return largest;
}

std::string microseconds(double ns) {
  char text[64];
  std::snprintf(text, sizeof text, ns < 10e3 ? "%.2f us" : ns < 10e6 ? "%.1f us" : "%.0f us", ns / 1e3);
  return text;
}
}  // namespace

const char* ModelledTime::dominant() const { return largest_term(*this).name; }

std::string ModelledTime::describe(const GpuSpec& gpu) const {
  const Term term = largest_term(*this);
  return std::string(term.bound) + ": " + microseconds(term.ns) + " of " + microseconds(total_ns) + " modelled on " +
         gpu.name;
}

ModelledTime& ModelledTime::operator+=(const ModelledTime& other) {
  total_ns += other.total_ns;
  launch_ns += other.launch_ns;
  memory_ns += other.memory_ns;
  compute_ns += other.compute_ns;
  span_ns += other.span_ns;
  atomic_ns += other.atomic_ns;
  return *this;
}

ModelledTime model_launch(const LaunchWork& work, const GpuSpec& gpu) {
  using C = ModelConstants;
  ModelledTime t;
  t.launch_ns = work.graph_node ? C::kGraphNodeNs : C::kLaunchNs;
  if (work.blocks == 0 || work.threads_per_block == 0) {
    t.total_ns = t.launch_ns;
    return t;
  }
  // Occupancy: the SMs that get a block, and how many threads each keeps resident.
  const double sms = gpu.sms;
  const double threads = static_cast<double>(work.blocks) * static_cast<double>(work.threads_per_block);
  const double active_sms = std::min<double>(static_cast<double>(work.blocks), sms);
  const int per_sm_limit =
      std::max(1, detail::resident_blocks(static_cast<int>(work.threads_per_block), work.dynamic_shared_bytes));
  const double blocks_per_sm =
      std::min<double>(std::ceil(static_cast<double>(work.blocks) / sms), per_sm_limit);
  const double resident_per_sm = blocks_per_sm * static_cast<double>(work.threads_per_block);
  const double resident = std::min(threads, active_sms * resident_per_sm);

  // Memory: Little's law. Each resident thread keeps its next accesses in flight, as many as
  // it has up to what hides a round trip (latency / per-access issue time), so the bytes in
  // flight over the latency are the bandwidth the launch can draw; an SM draws at most
  // kSmBandwidthShare times its share of the GPU's, the GPU at most its peak.
  if (work.global_accesses > 0) {
    const double per_thread = static_cast<double>(work.global_accesses) / threads;
    const double bytes_per_access = static_cast<double>(work.global_bytes) / static_cast<double>(work.global_accesses);
    const double in_flight = std::min(per_thread, C::kMemoryLatencyNs / C::kGlobalOpNs) * bytes_per_access;
    const double drawable = resident * in_flight / (C::kMemoryLatencyNs * 1e-9);
    const double bandwidth = std::min({gpu.memory_bytes_per_s, drawable,
                                       active_sms * C::kSmBandwidthShare * gpu.memory_bytes_per_s / sms});
    t.memory_ns = static_cast<double>(work.global_bytes) / bandwidth * 1e9;
  }
  // Zero-copy: host memory read or written by the kernel crosses the host link, whatever the
  // parallelism; the link and the GPU's memory work at the same time, so the longer one counts.
  if (work.host_access_bytes > 0 && work.host_link_bytes_per_s > 0)
    t.memory_ns = std::max(t.memory_ns, static_cast<double>(work.host_access_bytes) / work.host_link_bytes_per_s * 1e9);
  // Compute: an SM needs about kSaturatingThreadsPerSm resident threads to keep its FP32 lanes
  // busy; fewer threads or SMs get that fraction of the peak.
  const double usable = (active_sms / sms) * std::min(1.0, resident_per_sm / C::kSaturatingThreadsPerSm);
  const double peak = work.tensor_cores ? gpu.tensor_flops_per_s : gpu.fp32_flops_per_s;
  t.compute_ns = static_cast<double>(work.flops) / (peak * usable) * 1e9;
  t.span_ns = static_cast<double>(work.span_global_ops) * C::kGlobalOpNs +
              static_cast<double>(work.span_shared_ops) * C::kSharedOpNs +
              static_cast<double>(work.barriers_per_thread) * C::kBarrierNs;
  t.atomic_ns = static_cast<double>(work.max_atomics_same_address) * C::kSameAddressAtomicNs;
  t.total_ns = t.launch_ns + std::max({t.memory_ns, t.compute_ns, t.span_ns, t.atomic_ns});
  return t;
}

ModelledTime model_library_call(std::uint64_t flops, std::uint64_t bytes, bool tensor_cores, bool graph_node,
                                const GpuSpec& gpu) {
  using C = ModelConstants;
  ModelledTime t;
  t.launch_ns = graph_node ? C::kGraphNodeNs : C::kLaunchNs;
  t.memory_ns = static_cast<double>(bytes) / gpu.memory_bytes_per_s * 1e9;
  t.compute_ns = static_cast<double>(flops) / (tensor_cores ? gpu.tensor_flops_per_s : gpu.fp32_flops_per_s) * 1e9;
  t.total_ns = t.launch_ns + std::max(t.memory_ns, t.compute_ns);
  return t;
}

}  // namespace cudasim
