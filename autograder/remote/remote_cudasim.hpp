/// @file remote_cudasim.hpp
/// @brief How the simulator's own figures cross from the worker, where the kernels and copies
/// ran, to the judge that asked (lesson 04's tests read the modelled timeline, the copies and
/// the link): one list of each structure's fields for both ways. Lists of them cross as any
/// vector does (course_remote.hpp).
#pragma once

#include "course_remote.hpp"

#include <cudasim/gpu_model.hpp>
#include <cudasim/link_model.hpp>
#include <cudasim/stats.hpp>
#include <cudasim/timeline.hpp>

#include <cstdint>
#include <string>

namespace course {
namespace remote {

template <>
struct Marshal<cudasim::LinkModel> {
  static void put(Writer& out, const cudasim::LinkModel& link) {
    out.put_string(link.name);
    out.put(link.pinned_bytes_per_second);
    out.put(link.pageable_bytes_per_second);
    out.put(link.latency_seconds);
  }
  static cudasim::LinkModel get(Reader& in) {
    cudasim::LinkModel link;
    link.name = in.get_string(64);
    link.pinned_bytes_per_second = in.get<double>();
    link.pageable_bytes_per_second = in.get<double>();
    link.latency_seconds = in.get<double>();
    return link;
  }
};

template <>
struct Marshal<cudasim::KernelStats> {
  /// Calls `field` on each number of `k`, in the order they cross.
  template <class Stats, class Field>
  static void numbers(Stats& k, Field&& field) {
    for (auto* v : {&k.launches, &k.blocks, &k.threads, &k.global_load_bytes, &k.global_store_bytes,
                    &k.shared_load_bytes, &k.shared_store_bytes, &k.atomics, &k.global_atomics,
                    &k.global_atomic_bytes, &k.max_atomics_same_address, &k.max_atomics_per_block, &k.host_access_bytes, &k.flops,
                    &k.warp_ops, &k.barrier_arrivals, &k.mma_ops, &k.fragment_loads, &k.fragment_stores, &k.global_requests, &k.global_sectors,
                    &k.span_global_ops, &k.span_shared_ops, &k.span_warp_ops, &k.fissioned_blocks, &k.span_mma_ops})
      field(*v);
    for (auto& v : k.global_accesses_by_width) field(v);
    for (auto* v : {&k.modelled.total_ns, &k.modelled.launch_ns, &k.modelled.memory_ns, &k.modelled.compute_ns,
                    &k.modelled.span_ns, &k.modelled.atomic_ns})
      field(*v);
  }
  static void put(Writer& out, const cudasim::KernelStats& k) {
    out.put_string(k.kernel_name);
    numbers(k, [&](const auto& v) { out.put(v); });
  }
  static cudasim::KernelStats get(Reader& in) {
    cudasim::KernelStats k;
    k.kernel_name = in.get_string(4096);
    numbers(k, [&](auto& v) { v = in.get<std::decay_t<decltype(v)>>(); });
    return k;
  }
};

template <>
struct Marshal<cudasim::TimelineSpan> {
  static void put(Writer& out, const cudasim::TimelineSpan& span) {
    out.put_string(span.track);
    out.put<std::int32_t>(span.device);
    out.put_string(span.kind);
    out.put_string(span.name);
    out.put(span.start_ns);
    out.put(span.end_ns);
  }
  static cudasim::TimelineSpan get(Reader& in) {
    cudasim::TimelineSpan span;
    span.track = in.get_string(256);
    span.device = in.get<std::int32_t>();
    span.kind = in.get_string(64);
    span.name = in.get_string(4096);
    span.start_ns = in.get<double>();
    span.end_ns = in.get<double>();
    return span;
  }
};

}  // namespace remote
}  // namespace course
