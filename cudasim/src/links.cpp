// The link models of cudasim/link_model.hpp: how long a copy across the host link or between
// two virtual devices takes, queued behind the other copies on the same engine.
#include "cudasim/link_model.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <functional>
#include <thread>

#include "cudasim/gpu_model.hpp"
#include "cudasim/timeline.hpp"
#include "internal.hpp"

namespace cudasim {

namespace {

using Clock = std::chrono::steady_clock;

const LinkModel* find_model(const std::string& name, bool host) {
  // Per direction, x16 for PCIe; per GPU for NVLink. Pageable host copies go through a
  // pinned staging buffer and reach about half the pinned rate.
  static const LinkModel host_models[] = {
      {"pcie4", 26e9, 13e9, 5e-6},
      {"pcie5", 55e9, 27e9, 5e-6},
      {"none", 0, 0, 0},
  };
  static const LinkModel peer_models[] = {
      {"nvlink4", 450e9, 450e9, 2e-6},
      {"nvlink3", 300e9, 300e9, 2e-6},
      {"pcie4", 26e9, 26e9, 5e-6},
      {"pcie5", 55e9, 55e9, 5e-6},
      {"none", 0, 0, 0},
  };
  if (host) {
    for (const LinkModel& m : host_models)
      if (m.name == name) return &m;
  } else {
    for (const LinkModel& m : peer_models)
      if (m.name == name) return &m;
  }
  return nullptr;
}

/// One engine: copies through it run one after another, in real time (when the modelled
/// clock's figures are not chosen) and on the modelled timeline.
struct Engine {
  std::mutex mutex;
  Clock::time_point free_at{};
  clock_detail::ModelledEngine modelled;
};

struct Links {
  std::mutex mutex;
  const LinkModel* host;
  const LinkModel* peer;
  LinkModel custom_peer;  // set_peer_link(const LinkModel&)'s, which `peer` then points to
  // Per device: its host link's engine for each direction, and one for its outgoing peer copies.
  std::map<int, Engine> host_to_device, device_to_host, peer_out;
  std::map<std::pair<int, int>, std::uint64_t> traffic;

  Links() {
    const char* h = std::getenv("CUDASIM_HOST_LINK");
    const char* p = std::getenv("CUDASIM_PEER_LINK");
    host = find_model(h ? h : "pcie4", true);
    peer = find_model(p ? p : "nvlink4", false);
    if (host == nullptr) {
      detail::report("CUDASIM_HOST_LINK=%s is not a link model (pcie4, pcie5, none); using pcie4", h);
      host = find_model("pcie4", true);
    }
    if (peer == nullptr) {
      detail::report("CUDASIM_PEER_LINK=%s is not a link model (nvlink4, nvlink3, pcie4, pcie5, none); using nvlink4", p);
      peer = find_model("nvlink4", false);
    }
  }
};

Links& links() {
  static Links l;
  return l;
}

/// `device`'s engine in `engines`, made (with its track on the timeline) on first use; the
/// caller holds the links' mutex.
Engine& engine_of(std::map<int, Engine>& engines, int device, const char* track) {
  auto [it, made] = engines.try_emplace(device);
  if (made) it->second.modelled.track = clock_detail::timeline_track(track, device);
  return it->second;
}

/// "4.0 MB", "512 B": a copy's size as the timeline names it.
std::string size_text(std::size_t bytes) {
  char text[32];
  if (bytes >= (1u << 20))
    std::snprintf(text, sizeof text, "%.1f MB", static_cast<double>(bytes) / (1 << 20));
  else if (bytes >= (1u << 10))
    std::snprintf(text, sizeof text, "%.1f KB", static_cast<double>(bytes) / (1 << 10));
  else
    std::snprintf(text, sizeof text, "%zu B", bytes);
  return text;
}

/// Books a copy of `bytes` at `rate` on `engine` (after the copies already queued on it) and
/// returns when it would end.
Clock::time_point book(Engine& engine, std::size_t bytes, double rate, double latency) {
  if (rate <= 0) return Clock::now();
  const auto duration = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(latency + static_cast<double>(bytes) / rate));
  std::lock_guard<std::mutex> lock(engine.mutex);
  const Clock::time_point start = std::max(Clock::now(), engine.free_at);
  engine.free_at = start + duration;
  return engine.free_at;
}

}  // namespace

LinkModel host_link() {
  std::lock_guard<std::mutex> lock(links().mutex);
  return *links().host;
}

bool set_host_link(const std::string& name) {
  const LinkModel* m = find_model(name, true);
  if (m == nullptr) return false;
  std::lock_guard<std::mutex> lock(links().mutex);
  links().host = m;
  return true;
}

LinkModel peer_link() {
  std::lock_guard<std::mutex> lock(links().mutex);
  return *links().peer;
}

bool set_peer_link(const std::string& name) {
  const LinkModel* m = find_model(name, false);
  if (m == nullptr) return false;
  std::lock_guard<std::mutex> lock(links().mutex);
  links().peer = m;
  return true;
}

bool set_peer_link(const LinkModel& model) {
  const double rate = model.pinned_bytes_per_second, latency = model.latency_seconds;
  if (!(rate > 0) || !std::isfinite(rate) || !(latency >= 0) || !std::isfinite(latency)) return false;
  std::lock_guard<std::mutex> lock(links().mutex);
  Links& l = links();
  l.custom_peer = model;
  l.custom_peer.pageable_bytes_per_second = rate;
  if (l.custom_peer.name.empty()) l.custom_peer.name = "custom";
  l.peer = &l.custom_peer;
  return true;
}

std::vector<LinkTraffic> link_stats() {
  Links& l = links();
  std::lock_guard<std::mutex> lock(l.mutex);
  std::vector<LinkTraffic> out;
  for (const auto& entry : l.traffic) out.push_back({entry.first.first, entry.first.second, entry.second});
  return out;
}

namespace detail {

void reset_link_stats() {
  Links& l = links();
  std::lock_guard<std::mutex> lock(l.mutex);
  l.traffic.clear();
}

void count_peer_access(int source, int destination, std::uint64_t bytes) {
  Links& l = links();
  std::lock_guard<std::mutex> lock(l.mutex);
  l.traffic[{source, destination}] += bytes;
}

void copy_across_link(void* dst, const void* src, std::size_t bytes, const std::function<void()>& copy) {
  const int dst_device = device_of(dst), src_device = device_of(src);
  Links& l = links();
  Engine* engine = nullptr;
  double rate = 0, latency = 0;
  std::string name;
  if (dst_device >= 0 && src_device >= 0) {
    if (dst_device != src_device) {
      std::lock_guard<std::mutex> lock(l.mutex);
      l.traffic[{src_device, dst_device}] += bytes;
      engine = &engine_of(l.peer_out, src_device, "peer copy engine");
      rate = l.peer->pinned_bytes_per_second;
      latency = l.peer->latency_seconds;
      name = "peer " + std::to_string(src_device) + " to " + std::to_string(dst_device) + " " + size_text(bytes);
    } else {
      // Within one device's memory there is no link to cross: the copy reads and writes its
      // memory once, as a kernel would.
      detail::charge_operation("copy", "DtoD " + size_text(bytes),
                               model_library_call(0, 2 * static_cast<std::uint64_t>(bytes), false,
                                                  detail::replaying_graph(), modelled_gpu()).total_ns);
    }
  } else if (dst_device >= 0 || src_device >= 0) {
    const bool pinned = is_pinned_host_pointer(dst_device >= 0 ? src : dst);
    std::lock_guard<std::mutex> lock(l.mutex);
    engine = dst_device >= 0 ? &engine_of(l.host_to_device, dst_device, "copy engine HtoD")
                             : &engine_of(l.device_to_host, src_device, "copy engine DtoH");
    rate = pinned ? l.host->pinned_bytes_per_second : l.host->pageable_bytes_per_second;
    latency = l.host->latency_seconds;
    name = std::string(dst_device >= 0 ? "HtoD " : "DtoH ") + size_text(bytes) + (pinned ? " (pinned)" : " (pageable)");
  }
  if (engine == nullptr) {
    copy();
    return;
  }
  detail::charge_copy(engine->modelled, name, rate > 0 ? (latency + static_cast<double>(bytes) / rate) * 1e9 : 0.0);
  if (model_time_enabled()) {  // the modelled timeline has the copy's time: no need to wait for it
    copy();
    return;
  }
  // In real time, the copy itself runs inside the modelled time: it takes the longer of the two.
  const Clock::time_point end = book(*engine, bytes, rate, latency);
  copy();
  std::this_thread::sleep_until(end);
}

}  // namespace detail
}  // namespace cudasim
