/// @file remote_ranks.hpp
/// @brief How lesson 05's groups and buffers cross from the judge to the worker
/// (course_remote.hpp).
///
/// A test makes its RankGroup and SymmetricBuffers in the judge, where every CUDA call they
/// make is forwarded: their streams, events and device pointers are already the worker's. A
/// contract function that takes them gets, in the worker, a *view* of each: a RankGroup or a
/// SymmetricBuffer built from the same parts, which creates and destroys nothing
/// (`RankGroup(Parts)`, `SymmetricBuffer(group, count, pointers)` in ranks.hpp). The
/// submission therefore works on exactly the test's streams and memory, and nothing about
/// the group comes back: the judge's own object stays what the test made.
#pragma once

#include "course_remote.hpp"
#include "ranks.hpp"

#include <map>
#include <memory>
#include <utility>
#include <vector>

namespace course {
namespace remote {

/// The views of the groups decoded for the contract call being read, by the judge-side address
/// that names the group there: a buffer names its group the same way.
inline std::map<std::uint64_t, course::RankGroup*>& groups_in_this_call() {
  static std::map<std::uint64_t, course::RankGroup*> groups;
  return groups;
}

/// The worker's view of a group while the call runs.
struct GroupView {
  std::uint64_t judge_address = 0;
  std::unique_ptr<course::RankGroup> group;
  GroupView(std::uint64_t address, std::unique_ptr<course::RankGroup> view)
      : judge_address(address), group(std::move(view)) {
    groups_in_this_call()[judge_address] = group.get();
  }
  GroupView(GroupView&& other) noexcept = default;
  GroupView& operator=(GroupView&&) = delete;
  ~GroupView() {
    if (group) groups_in_this_call().erase(judge_address);
  }
  operator course::RankGroup&() { return *group; }
};

template <>
struct Marshal<course::RankGroup> {
  using Carried = GroupView;
  static void put(Writer& out, const course::RankGroup& group) {
    out.put_address(&group);
    const course::RankGroup::Parts parts = group.parts();
    out.put<std::int32_t>(parts.devices_used);
    out.put<std::uint64_t>(parts.devices.size());
    for (std::size_t r = 0; r < parts.devices.size(); ++r) {
      out.put<std::int32_t>(parts.devices[r]);
      out.put_address(parts.streams[r]);
      out.put_address(parts.events[r]);
    }
    for (bool peer : parts.peer_access) out.put<std::uint8_t>(peer);
  }
  static GroupView get(Reader& in) {
    const auto address = in.get<std::uint64_t>();
    course::RankGroup::Parts parts;
    parts.devices_used = in.get<std::int32_t>();
    if (parts.devices_used < 1 || parts.devices_used > 64) throw ProtocolError("a group on no devices or too many");
    const auto ranks = in.get<std::uint64_t>();
    for (std::uint64_t r = 0; r < ranks; ++r) {
      parts.devices.push_back(in.get<std::int32_t>());
      parts.streams.push_back(in.get_address<cudaStream_t>());
      parts.events.push_back(in.get_address<cudaEvent_t>());
    }
    for (int i = 0; i < parts.devices_used * parts.devices_used; ++i) parts.peer_access.push_back(in.get<std::uint8_t>() != 0);
    try {
      return GroupView(address, std::make_unique<course::RankGroup>(std::move(parts)));
    } catch (const std::invalid_argument& e) {
      throw ProtocolError(e.what());
    }
  }
};

/// The worker's view of a buffer while the call runs.
template <class T>
struct BufferView {
  std::unique_ptr<course::SymmetricBuffer<T>> buffer;
  operator course::SymmetricBuffer<T>&() { return *buffer; }
};

template <class T>
struct Marshal<course::SymmetricBuffer<T>> {
  using Carried = BufferView<T>;
  static void put(Writer& out, const course::SymmetricBuffer<T>& buffer) {
    out.put_address(&buffer.group());
    out.put<std::uint64_t>(buffer.size());
    out.put<std::uint64_t>(buffer.pointers().size());
    for (const T* pointer : buffer.pointers()) out.put_address(pointer);
  }
  static BufferView<T> get(Reader& in) {
    const auto group_address = in.get<std::uint64_t>();
    const auto found = groups_in_this_call().find(group_address);
    if (found == groups_in_this_call().end()) throw ProtocolError("a buffer of a group the call does not pass");
    const auto count = in.get<std::uint64_t>();
    const auto ranks = in.get<std::uint64_t>();
    std::vector<T*> pointers;
    for (std::uint64_t r = 0; r < ranks; ++r) pointers.push_back(in.get_address<T*>());
    try {
      return BufferView<T>{std::make_unique<course::SymmetricBuffer<T>>(*found->second, count, std::move(pointers))};
    } catch (const std::invalid_argument& e) {
      throw ProtocolError(e.what());
    }
  }
};

}  // namespace remote
}  // namespace course
