/// @file link_model.hpp
/// @brief The simulator's model of the links around a GPU: host <-> device (PCIe) and
/// device <-> device (NVLink or PCIe), so that lessons 04 and 05 show on any machine what
/// these links cost.
///
/// On the simulator a copy across a link takes `latency + bytes / rate` of wall time on the
/// stream that issued it. Each direction of the host link has one copy engine (copies in the
/// same direction queue behind each other; opposite directions and kernels overlap), and each
/// device has one engine for its outgoing peer copies. Host copies from or to page-locked
/// memory run at the pinned rate, pageable ones at the pageable rate (they go through a
/// staging buffer). Figures are published x16 / per-GPU figures, rounded; they are a model,
/// not a measurement. Choose with the environment variables CUDASIM_HOST_LINK and
/// CUDASIM_PEER_LINK or at run time with set_host_link() / set_peer_link() (which also takes a
/// link of one's own figures).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cudasim {

/// One link model.
struct LinkModel {
  std::string name;                        ///< e.g. "pcie4", "nvlink4", "none"
  double pinned_bytes_per_second = 0;      ///< page-locked host memory, or device to device
  double pageable_bytes_per_second = 0;    ///< pageable host memory (host link only)
  double latency_seconds = 0;              ///< fixed cost per copy
};

/// The host <-> device link in use: "pcie4" (default: 26 / 13 GB/s pinned / pageable per
/// direction), "pcie5" (55 / 27 GB/s) or "none" (copies take no modelled time).
LinkModel host_link();
/// Switches the host link model; false for an unknown name.
bool set_host_link(const std::string& name);

/// The device <-> device link in use: "nvlink4" (default: 450 GB/s per direction per GPU,
/// H100/H200), "nvlink3" (300 GB/s, A100), "pcie4" (26 GB/s), "pcie5" (55 GB/s) or "none".
LinkModel peer_link();
/// Switches the peer link model; false for an unknown name.
bool set_peer_link(const std::string& name);
/// Switches to a peer link of one's own: `model.pinned_bytes_per_second` (finite, > 0) and
/// `model.latency_seconds` (finite, >= 0; its pageable rate is ignored). False, and no change,
/// for figures outside those. A test draws one so that only a copy timed on the modelled
/// clock, not a datasheet's figure, tells its speed.
bool set_peer_link(const LinkModel& model);

/// Bytes copied from device `source` to device `destination` since the last reset_stats().
struct LinkTraffic {
  int source = 0;
  int destination = 0;
  std::uint64_t bytes = 0;
};
/// Every pair that carried traffic, ordered by (source, destination).
std::vector<LinkTraffic> link_stats();

}  // namespace cudasim
