/// @file ranks.hpp
/// @brief Ranks for lesson 05: rank -> device, stream and buffers; peer copies between ranks.
///
/// Every exercise of lesson 05 is written against this small header (given, not graded):
///
/// - a **rank** is one worker of a parallel job: it has a device, a stream on that device and
///   its own buffers. Work for rank r is queued on `group.stream(r)` after
///   `group.use(r)` (or a `course::DeviceGuard`) made its device current;
/// - a `course::RankGroup` of n ranks places rank r on device `r % devices`, so the same code
///   runs on n GPUs (one rank each), on one GPU shared by n ranks (separate streams and
///   buffers; copies between them are device-to-device copies standing in for links), and on
///   the simulator's virtual devices (`CUDASIM_DEVICES`, joined by a modelled NVLink or PCIe);
/// - a `course::SymmetricBuffer<T>` is one allocation of the same size on every rank, as in
///   NVSHMEM or NCCL's user buffers: `buf.on(r)` is rank r's pointer;
/// - `group.put(from, src, to, dst, count)` is a **one-sided copy** from rank `from`'s memory
///   into rank `to`'s memory over the link between their devices (`cudaMemcpyPeerAsync`),
///   ordered as a message: it starts after all work queued so far on *both* ranks (so the
///   source is ready and the destination is no longer being read) and everything queued
///   later on rank `to` sees the data. No host synchronisation: the host only queues work.
///
/// How to write an algorithm with it (ring all-reduce, pipeline stages): loop over steps,
/// and inside a step over `group.local_ranks()`, queueing each rank's puts and kernels. A
/// step's puts must be queued before the work that consumes them, which the step-major loop
/// guarantees (CUDA waits only for events recorded *before* the wait is queued).
///
/// Ready for ranks in separate processes (not built): in a multi-process job
/// `local_ranks()` would return only the process's own rank, `SymmetricBuffer::on(peer)`
/// would be the peer's buffer mapped with CUDA IPC (`cudaIpcOpenMemHandle`), and the events
/// of `put` would be IPC events; code written step-major over `local_ranks()` stays the same.
/// Across machines, `put` would become a matched `ncclSend`/`ncclRecv` pair.
///
/// @code
///   course::RankGroup group(4);                       // 4 ranks over the visible devices
///   course::SymmetricBuffer<float> x(group, 1000);    // 1000 floats on every rank
///   x.upload(0, values);                              // rank 0's copy
///   group.put(0, x.on(0), 1, x.on(1), 1000);          // rank 0 -> rank 1 over the link
///   auto back = x.download(1);                        // waits for all ranks, then copies
/// @endcode
#pragma once

#include <cuda_runtime.h>

#include "cuda_check.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#if defined(CUDASIM)
#include <cudasim/link_model.hpp>  // the simulator's link models and per-pair byte counters
#include <cudasim/stats.hpp>
#endif

namespace course {

/// Makes `device` current for the lifetime of the guard and restores the previous one.
/// Kernels, `cudaMalloc`, streams and events all belong to the current device.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    CUDA_CHECK(cudaGetDevice(&previous_));
    if (device != previous_) CUDA_CHECK(cudaSetDevice(device));
  }
  ~DeviceGuard() { cudaSetDevice(previous_); }  // cannot throw from a destructor
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
};

/// Number of devices visible to this process (`cudaGetDeviceCount`).
inline int visible_device_count() {
  int count = 0;
  CUDA_CHECK(cudaGetDeviceCount(&count));
  return count;
}

/// n ranks, rank r on device `r % devices`, each with its own stream and an event used to
/// order work between ranks. Not copyable; destroying it waits for all ranks.
class RankGroup {
 public:
  /// @param ranks   number of ranks, >= 1
  /// @param devices how many devices to spread them over (0: all visible devices); more than
  ///                are visible is clamped. Several ranks on one device share it.
  /// @throws std::invalid_argument for ranks < 1; course::CudaError on CUDA failures
  explicit RankGroup(int ranks, int devices = 0) {
    if (ranks < 1) throw std::invalid_argument("RankGroup: need at least one rank");
    const int visible = visible_device_count();
    devices_used_ = std::min(devices <= 0 ? visible : devices, visible);
    devices_used_ = std::max(1, std::min(devices_used_, ranks));
    for (int r = 0; r < ranks; ++r) {
      const int device = r % devices_used_;
      DeviceGuard guard(device);
      cudaStream_t stream = nullptr;
      cudaEvent_t event = nullptr;
      CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
      CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
      devices_.push_back(device);
      streams_.push_back(stream);
      events_.push_back(event);
    }
    // Direct peer access (NVLink, or PCIe peer-to-peer) where the hardware offers it; without
    // it cudaMemcpyPeerAsync still works, staged through host memory by the driver.
    peer_access_.assign(static_cast<std::size_t>(devices_used_) * devices_used_, false);
    for (int a = 0; a < devices_used_; ++a) {
      for (int b = 0; b < devices_used_; ++b) {
        if (a == b) continue;
        int can = 0;
        if (cudaDeviceCanAccessPeer(&can, a, b) != cudaSuccess) can = 0;
        if (can) {
          DeviceGuard guard(a);
          // An error here means "already enabled" (fine) or "not possible" (copies still work).
          if (cudaDeviceEnablePeerAccess(b, 0) != cudaSuccess) (void)cudaGetLastError();
        }
        peer_access_[static_cast<std::size_t>(a) * devices_used_ + b] = can != 0;
      }
    }
    (void)cudaGetLastError();
  }

  /// What a group is made of: its ranks' devices, streams and events, and which devices reach
  /// each other directly.
  struct Parts {
    std::vector<int> devices;
    std::vector<cudaStream_t> streams;
    std::vector<cudaEvent_t> events;
    std::vector<bool> peer_access;  ///< devices_used x devices_used
    int devices_used = 1;
  };
  /// This group's parts.
  Parts parts() const { return {devices_, streams_, events_, peer_access_, devices_used_}; }
  /// A second handle on a group made elsewhere: the same ranks, streams and events, which it
  /// neither creates nor destroys. (The grader rebuilds a test's group this way in the process
  /// that runs your code: autograder/remote/remote_ranks.hpp.)
  /// @throws std::invalid_argument if the parts do not fit together
  explicit RankGroup(Parts view)
      : devices_(std::move(view.devices)), streams_(std::move(view.streams)), events_(std::move(view.events)),
        peer_access_(std::move(view.peer_access)), devices_used_(view.devices_used), owner_(false) {
    const std::size_t n = devices_.size();
    if (n == 0 || streams_.size() != n || events_.size() != n || devices_used_ < 1 ||
        peer_access_.size() != static_cast<std::size_t>(devices_used_) * devices_used_)
      throw std::invalid_argument("RankGroup: parts that do not make a group");
    for (int d : devices_)
      if (d < 0 || d >= devices_used_) throw std::invalid_argument("RankGroup: a rank on a device the group does not use");
  }

  ~RankGroup() {
    if (!owner_) return;
    for (std::size_t r = 0; r < streams_.size(); ++r) {
      DeviceGuard guard(devices_[r]);
      cudaStreamSynchronize(streams_[r]);
      cudaEventDestroy(events_[r]);
      cudaStreamDestroy(streams_[r]);
    }
  }
  RankGroup(const RankGroup&) = delete;
  RankGroup& operator=(const RankGroup&) = delete;

  /// Number of ranks.
  int size() const { return static_cast<int>(devices_.size()); }
  /// The device rank r runs on.
  int device(int r) const { return devices_.at(check(r)); }
  /// Rank r's stream (created on `device(r)`, non-blocking).
  cudaStream_t stream(int r) const { return streams_.at(check(r)); }
  /// How many distinct devices the ranks use.
  int devices_used() const { return devices_used_; }
  /// True when every rank has a device of its own (then every put crosses a link).
  bool distinct_devices() const { return devices_used_ == size(); }
  /// True when `device(a)` can read and write `device(b)`'s memory directly (peer access).
  bool peer_access(int a, int b) const {
    const int da = device(a), db = device(b);
    return da == db || peer_access_[static_cast<std::size_t>(da) * devices_used_ + db];
  }
  /// The ranks this process drives: all of them (a multi-process version would return one).
  std::vector<int> local_ranks() const {
    std::vector<int> ranks(devices_.size());
    for (int r = 0; r < size(); ++r) ranks[r] = r;
    return ranks;
  }

  /// Makes rank r's device current (do this before launching on `stream(r)`).
  void use(int r) const { CUDA_CHECK(cudaSetDevice(device(r))); }

  /// Everything queued on rank `to` from now on waits for everything queued so far on rank
  /// `from`. Queues no work and does not block the host.
  void wait(int to, int from) {
    if (to == from) return;
    {
      DeviceGuard guard(device(from));
      CUDA_CHECK(cudaEventRecord(events_[check(from)], streams_[from]));
    }
    DeviceGuard guard(device(to));
    CUDA_CHECK(cudaStreamWaitEvent(streams_[check(to)], events_[from], 0));
  }

  /// One-sided copy of `bytes` from `src` (rank `from`'s memory) to `dst` (rank `to`'s
  /// memory), queued on rank `from`'s stream: the link's outgoing direction of `from`.
  /// Starts after all work queued so far on both ranks; later work on rank `to` sees it.
  /// `from == to` is a copy inside one rank. A zero-byte put only orders the ranks.
  void put_bytes(int from, const void* src, int to, void* dst, std::size_t bytes) {
    wait(from, to);  // the destination is no longer read or written by rank `to`
    if (bytes > 0) {
      DeviceGuard guard(device(from));
      CUDA_CHECK(cudaMemcpyPeerAsync(dst, device(to), src, device(from), bytes, streams_[from]));
    }
    wait(to, from);  // rank `to` sees the data
  }

  /// `put_bytes` for `count` elements of type T.
  template <typename T>
  void put(int from, const T* src, int to, T* dst, std::size_t count) {
    put_bytes(from, src, to, dst, count * sizeof(T));
  }

  /// Every rank waits for everything queued so far on every rank (a device-side barrier).
  void barrier() {
    for (int r = 0; r < size(); ++r) {
      DeviceGuard guard(devices_[r]);
      CUDA_CHECK(cudaEventRecord(events_[r], streams_[r]));
    }
    for (int to = 0; to < size(); ++to) {
      DeviceGuard guard(devices_[to]);
      for (int from = 0; from < size(); ++from)
        if (from != to) CUDA_CHECK(cudaStreamWaitEvent(streams_[to], events_[from], 0));
    }
  }

  /// The host waits until every rank's stream is idle; reports errors of earlier work.
  void synchronize() const {
    for (int r = 0; r < size(); ++r) {
      DeviceGuard guard(devices_[r]);
      CUDA_CHECK(cudaStreamSynchronize(streams_[r]));
    }
  }

 private:
  int check(int r) const {
    if (r < 0 || r >= size())
      throw std::out_of_range("RankGroup: rank " + std::to_string(r) + " of " +
                              std::to_string(size()));
    return r;
  }

  std::vector<int> devices_;
  std::vector<cudaStream_t> streams_;
  std::vector<cudaEvent_t> events_;
  std::vector<bool> peer_access_;
  int devices_used_ = 1;
  bool owner_ = true;  ///< false for a view (RankGroup(Parts)): destroys nothing
};

/// `count` elements of T on every rank of a group, each allocated on its rank's device.
/// Move-only; frees on destruction. The group must outlive the buffer.
template <typename T>
class SymmetricBuffer {
  static_assert(std::is_trivially_copyable<T>::value, "SymmetricBuffer holds plain data only");

 public:
  /// Allocates `count` elements (contents undefined) on every rank of `group`.
  SymmetricBuffer(RankGroup& group, std::size_t count) : group_(&group), count_(count) {
    pointers_.assign(group.size(), nullptr);
    for (int r = 0; r < group.size(); ++r) {
      if (count == 0) continue;
      DeviceGuard guard(group.device(r));
      CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&pointers_[r]), count * sizeof(T)));
    }
  }
  /// A second handle on buffers allocated elsewhere, one per rank of `group`, `count` elements
  /// each: it frees nothing. (The grader rebuilds a test's buffers this way in the process that
  /// runs your code: autograder/remote/remote_ranks.hpp.)
  /// @throws std::invalid_argument unless there is one pointer per rank
  SymmetricBuffer(RankGroup& group, std::size_t count, std::vector<T*> view)
      : group_(&group), count_(count), pointers_(std::move(view)), owner_(false) {
    if (pointers_.size() != static_cast<std::size_t>(group.size()))
      throw std::invalid_argument("SymmetricBuffer: one pointer per rank");
  }
  ~SymmetricBuffer() { release(); }
  SymmetricBuffer(const SymmetricBuffer&) = delete;
  SymmetricBuffer& operator=(const SymmetricBuffer&) = delete;
  SymmetricBuffer(SymmetricBuffer&& other) noexcept
      : group_(other.group_), count_(other.count_), pointers_(std::move(other.pointers_)), owner_(other.owner_) {
    other.pointers_.clear();
    other.count_ = 0;
  }

  /// Every rank's device pointer, rank by rank.
  const std::vector<T*>& pointers() const { return pointers_; }
  /// The group the buffer belongs to.
  RankGroup& group() const { return *group_; }

  /// Rank r's device pointer (null when the buffer is empty).
  T* on(int r) { return pointers_.at(r); }
  const T* on(int r) const { return pointers_.at(r); }
  /// Elements per rank.
  std::size_t size() const { return count_; }
  /// Bytes per rank.
  std::size_t bytes() const { return count_ * sizeof(T); }

  /// Waits for all ranks, then copies `host` to the start of rank r's buffer, on rank r's
  /// stream and finished before it returns. Not cudaMemcpy: that copy goes on the legacy
  /// stream, which the ranks' non-blocking streams do not wait for, and from pageable memory
  /// it may return before the data has reached the device (a rank's next kernel could read
  /// the old contents; seen on an H200 as a pipeline reading its poisoned gradients).
  void upload(int r, const std::vector<T>& host) {
    if (host.size() > count_) throw std::length_error("SymmetricBuffer::upload: too long");
    group_->synchronize();
    if (host.empty()) return;
    DeviceGuard guard(group_->device(r));
    CUDA_CHECK(cudaMemcpyAsync(pointers_.at(r), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice,
                               group_->stream(r)));
    CUDA_CHECK(cudaStreamSynchronize(group_->stream(r)));
  }
  /// `upload(r, host)` for every rank.
  void upload_all(const std::vector<T>& host) {
    for (int r = 0; r < group_->size(); ++r) upload(r, host);
  }
  /// Waits for all ranks (errors of earlier work are thrown here), then copies rank r's
  /// whole buffer to the host.
  std::vector<T> download(int r) const {
    group_->synchronize();
    std::vector<T> host(count_);
    if (count_ == 0) return host;
    DeviceGuard guard(group_->device(r));
    CUDA_CHECK(cudaMemcpy(host.data(), pointers_.at(r), count_ * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }
  /// Fills every byte of every rank's buffer with 0xFF (NaN for floats), so an element
  /// nobody wrote fails a comparison. Each fill runs on its rank's stream and is finished
  /// before this returns: cudaMemset returns at once and runs on the legacy stream, so on a
  /// GPU it could land after the ranks' next writes (seen on an H200: a peer copy's result,
  /// then overwritten with NaN).
  void poison() {
    group_->synchronize();
    for (int r = 0; r < group_->size(); ++r) {
      if (count_ == 0) continue;
      DeviceGuard guard(group_->device(r));
      CUDA_CHECK(cudaMemsetAsync(pointers_[r], 0xFF, count_ * sizeof(T), group_->stream(r)));
    }
    group_->synchronize();
  }

 private:
  void release() noexcept {
    if (!owner_) return;  // a view: the buffers are another SymmetricBuffer's
    int previous = 0;
    if (cudaGetDevice(&previous) != cudaSuccess) previous = 0;
    for (std::size_t r = 0; r < pointers_.size(); ++r) {
      if (pointers_[r] == nullptr) continue;
      cudaSetDevice(group_->device(static_cast<int>(r)));
      cudaFree(pointers_[r]);
    }
    cudaSetDevice(previous);
    pointers_.clear();
  }

  RankGroup* group_;
  std::size_t count_;
  std::vector<T*> pointers_;
  bool owner_ = true;  ///< false for a view: frees nothing
};

/// Bytes that crossed each link (source device -> destination device), as the simulator
/// counts them; a GPU has no such counters (`counted` is false, `why_not` says why).
struct LinkCounters {
  bool counted = false;
  std::string why_not;
  int devices = 0;
  std::vector<std::uint64_t> bytes;  ///< devices x devices, [source * devices + destination]
  /// Bytes copied from device `source` to device `destination`.
  std::uint64_t at(int source, int destination) const {
    return counted ? bytes.at(static_cast<std::size_t>(source) * devices + destination) : 0;
  }
  /// Bytes that left device `source` over its links.
  std::uint64_t out_of(int source) const {
    std::uint64_t sum = 0;
    for (int d = 0; d < devices; ++d) sum += d == source ? 0 : at(source, d);
    return sum;
  }
  /// Bytes over all links.
  std::uint64_t total() const {
    std::uint64_t sum = 0;
    for (int s = 0; s < devices; ++s) sum += out_of(s);
    return sum;
  }
};

/// Clears the simulator's link counters (and its other counters); nothing on a GPU.
inline void reset_link_counters() {
#if defined(CUDASIM)
  cudasim::reset_stats();
#endif
}

/// The link counters since the last `reset_link_counters()`. Synchronise first.
inline LinkCounters read_link_counters() {
  LinkCounters counters;
#if defined(CUDASIM)
  counters.counted = true;
  counters.devices = visible_device_count();
  counters.bytes.assign(static_cast<std::size_t>(counters.devices) * counters.devices, 0);
  for (const auto& link : cudasim::link_stats()) {
    if (link.source < counters.devices && link.destination < counters.devices)
      counters.bytes[static_cast<std::size_t>(link.source) * counters.devices + link.destination] +=
          link.bytes;
  }
#else
  counters.why_not = "link counters exist only on the simulator (use nsys or NCCL_DEBUG on a GPU)";
#endif
  return counters;
}

/// The part of `count` elements that rank (or chunk) r of n owns: [begin, end) with
/// begin = r * count / n, so the parts differ by at most one element and cover everything,
/// also when n does not divide count.
struct Part {
  std::size_t begin;
  std::size_t end;
  std::size_t size() const { return end - begin; }
};
inline Part part_of(std::size_t count, int n, int r) {
  return {count * static_cast<std::size_t>(r) / static_cast<std::size_t>(n),
          count * static_cast<std::size_t>(r + 1) / static_cast<std::size_t>(n)};
}

}  // namespace course
