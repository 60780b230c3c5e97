/// @file remote_traffic.hpp
/// @brief How a counting window's summary (course_traffic.hpp) crosses from the worker, which
/// closes the window where the kernels ran, to the judge: one list of its fields for both ways.
#pragma once

#include "course_remote.hpp"
#include "course_traffic.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace course {
namespace remote {

template <>
struct Marshal<course::test::GlobalTraffic> {
  /// Calls `field` on each number of `t`, in the order they cross (`t` const to write, not to
  /// read). The flag, the two strings and the per-device bytes cross around them, in put() and get().
  template <class Traffic, class Field>
  static void numbers(Traffic& t, Field&& field) {
    for (auto* v : {&t.kernel_launch_calls, &t.graph_launch_calls, &t.host_device_bytes, &t.load_bytes, &t.store_bytes, &t.launches,
                    &t.blocks, &t.threads, &t.atomic_bytes, &t.global_atomics, &t.max_atomics_same_address, &t.max_atomics_per_block,
                    &t.shared_bytes, &t.warp_ops, &t.barrier_arrivals, &t.mma_ops, &t.fragment_loads, &t.fragment_stores, &t.requests, &t.sectors,
                    &t.span_global_ops, &t.span_shared_ops, &t.span_warp_ops, &t.span_mma_ops})
      field(*v);
    for (auto& v : t.accesses_by_width) field(v);
    for (auto* v : {&t.modelled_ns, &t.launch_ns, &t.memory_ns, &t.compute_ns, &t.span_ns, &t.atomic_ns}) field(*v);
  }

  static void put(Writer& out, const course::test::GlobalTraffic& t) {
    out.put<std::uint8_t>(t.counted ? 1 : 0);
    out.put_string(t.why_not);
    numbers(t, [&](const auto& v) { out.put(v); });
    out.put_string(t.gpu);
    Marshal<std::vector<std::uint64_t>>::put(out, t.device_bytes);
  }

  static course::test::GlobalTraffic get(Reader& in) {
    course::test::GlobalTraffic t;
    t.counted = in.get<std::uint8_t>() != 0;
    t.why_not = in.get_string(1024);
    numbers(t, [&](auto& v) { v = in.get<std::decay_t<decltype(v)>>(); });
    t.gpu = in.get_string(64);  // a GPU's short name
    t.device_bytes = Marshal<std::vector<std::uint64_t>>::get(in);
    if (t.device_bytes.size() > 64) throw ProtocolError("more devices than the simulator allows");
    return t;
  }
};

}  // namespace remote
}  // namespace course
