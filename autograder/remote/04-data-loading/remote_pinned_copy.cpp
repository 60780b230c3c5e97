// The contract of pinned_copy, as the judge and the worker exchange it (../course_remote.hpp).
//
// A PinnedBuffer is the worker's object: each of the judge's PinnedBuffers stands for one of
// the worker's (none, while it is default-constructed) and mirrors its data() and bytes()
// after every call that may change them. The memory itself is the submission's page-locked
// memory, in the host memory both processes map (SharedHostMemory): the test reads and writes
// it directly, once the judge has checked that all of it lies there.
#include "pinned_copy.hpp"

#include "course_remote.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace {

/// What the judge learns of one of the worker's PinnedBuffers.
struct BufferState {
  std::uint64_t object = 0;  ///< the worker's object (its address, passed back, never read)
  std::uint64_t data = 0;    ///< data(), in the worker (and, in the shared memory, the judge)
  std::uint64_t bytes = 0;   ///< bytes()
};

}  // namespace

#ifdef COURSE_REMOTE_JUDGE

namespace {

using course::remote::Reader;
using course::remote::Writer;

/// The worker's object behind each of the judge's PinnedBuffers that has one.
class Objects {
 public:
  std::uint64_t of(const PinnedBuffer* buffer) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto found = objects_.find(buffer);
    return found == objects_.end() ? 0 : found->second;
  }
  void set(const PinnedBuffer* buffer, std::uint64_t object) {
    std::lock_guard<std::mutex> lock(mutex_);
    objects_[buffer] = object;
  }
  std::uint64_t take(const PinnedBuffer* buffer) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto found = objects_.find(buffer);
    if (found == objects_.end()) return 0;
    const std::uint64_t object = found->second;
    objects_.erase(found);
    return object;
  }

 private:
  std::mutex mutex_;
  std::map<const PinnedBuffer*, std::uint64_t> objects_;
};

Objects& objects() {
  static Objects* all = new Objects;
  return *all;
}

BufferState read_state(Reader& in) {
  BufferState state;
  state.object = in.get<std::uint64_t>();
  state.data = in.get<std::uint64_t>();
  state.bytes = in.get<std::uint64_t>();
  return state;
}

/// The memory the worker's buffer owns, as the judge may touch it: null, or all of it in the
/// shared host memory.
void* checked_memory(const BufferState& state) {
  return course::remote::checked_shared_host(reinterpret_cast<char*>(static_cast<std::uintptr_t>(state.data)),
                                             static_cast<std::size_t>(state.bytes),
                                             "PinnedBuffer's memory (" + std::to_string(state.bytes) + " bytes)");
}

/// In a move, which cannot throw: the memory as checked_memory() takes it, or null where it
/// would not (the test then sees no memory and says so). A worker that fails in a move has
/// failed the test already (the judge recorded it): the buffers are left empty.
void* memory_or_null(const BufferState& state) {
  try {
    return checked_memory(state);
  } catch (...) {
    return nullptr;
  }
}

template <class Read>
auto call_in_move(const char* name, const Writer& arguments, Read read) noexcept -> decltype(read(std::declval<Reader&>())) {
  try {
    return course::remote::call_with(name, arguments, read);
  } catch (...) {
    return {};
  }
}

}  // namespace

PinnedBuffer::PinnedBuffer(std::size_t bytes) {
  Writer arguments;
  arguments.put<std::uint64_t>(bytes);
  const BufferState state = course::remote::call_with("PinnedBuffer(size_t)", arguments, read_state);
  objects().set(this, state.object);
  data_ = checked_memory(state);
  bytes_ = static_cast<std::size_t>(state.bytes);
}

PinnedBuffer::~PinnedBuffer() {
  const std::uint64_t object = objects().take(this);
  if (object == 0) return;
  try {
    Writer arguments;
    arguments.put(object);
    course::remote::call_with("~PinnedBuffer", arguments, [](Reader&) {});
  } catch (...) {
    // A destructor cannot throw: a worker that failed has failed the test already.
  }
}

PinnedBuffer::PinnedBuffer(PinnedBuffer&& other) noexcept {
  Writer arguments;
  arguments.put(objects().of(&other));
  const auto [moved, left] = call_in_move("PinnedBuffer(PinnedBuffer&&)", arguments, [](Reader& in) {
    const BufferState moved = read_state(in);
    return std::make_pair(moved, read_state(in));
  });
  if (moved.object != 0) objects().set(this, moved.object);
  if (left.object != 0) objects().set(&other, left.object);
  data_ = memory_or_null(moved);
  bytes_ = static_cast<std::size_t>(moved.bytes);
  other.data_ = memory_or_null(left);
  other.bytes_ = static_cast<std::size_t>(left.bytes);
}

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& other) noexcept {
  Writer arguments;
  arguments.put(objects().of(this));
  arguments.put(objects().of(&other));
  const auto [assigned, left] = call_in_move("PinnedBuffer::operator=(PinnedBuffer&&)", arguments, [](Reader& in) {
    const BufferState assigned = read_state(in);
    return std::make_pair(assigned, read_state(in));
  });
  if (assigned.object != 0) objects().set(this, assigned.object);
  if (left.object != 0) objects().set(&other, left.object);
  data_ = memory_or_null(assigned);
  bytes_ = static_cast<std::size_t>(assigned.bytes);
  other.data_ = memory_or_null(left);
  other.bytes_ = static_cast<std::size_t>(left.bytes);
  return *this;
}

void upload_pageable(void* d_dst, const void* h_src, std::size_t bytes) {
  // The pageable source is the test's own memory: its bytes travel with the request.
  Writer arguments;
  arguments.put_address(d_dst);
  arguments.put_bytes(h_src, bytes);
  course::remote::call_with("upload_pageable", arguments, [](Reader&) {});
}

void upload_pinned_async(void* d_dst, const PinnedBuffer& h_src, std::size_t bytes, cudaStream_t stream) {
  Writer arguments;
  arguments.put_address(d_dst);
  arguments.put(objects().of(&h_src));
  arguments.put<std::uint64_t>(bytes);
  arguments.put_address(stream);
  course::remote::call_with("upload_pinned_async", arguments, [](Reader&) {});
}

#endif  // COURSE_REMOTE_JUDGE

#ifdef COURSE_REMOTE_WORKER

namespace {

using course::remote::Reader;
using course::remote::Writer;

/// The PinnedBuffers the judge's stand for, by address.
std::map<std::uint64_t, std::unique_ptr<PinnedBuffer>>& objects() {
  static auto* all = new std::map<std::uint64_t, std::unique_ptr<PinnedBuffer>>;
  return *all;
}

std::uint64_t address_of(const PinnedBuffer* buffer) { return reinterpret_cast<std::uintptr_t>(buffer); }

/// The buffer `object` names; 0 (a default-constructed buffer of the judge's) makes one.
PinnedBuffer& object(std::uint64_t object) {
  if (object == 0) {
    auto fresh = std::make_unique<PinnedBuffer>();
    PinnedBuffer& made = *fresh;
    objects()[address_of(&made)] = std::move(fresh);
    return made;
  }
  const auto found = objects().find(object);
  if (found == objects().end()) throw course::remote::ProtocolError("no such PinnedBuffer");
  return *found->second;
}

void put_state(Writer& out, const PinnedBuffer& buffer) {
  out.put<std::uint64_t>(address_of(&buffer));
  out.put_address(buffer.data());
  out.put<std::uint64_t>(buffer.bytes());
}

void construct(Reader& in, Writer& out) {
  auto buffer = std::make_unique<PinnedBuffer>(static_cast<std::size_t>(in.get<std::uint64_t>()));
  put_state(out, *buffer);
  objects()[address_of(buffer.get())] = std::move(buffer);
}

void destroy(Reader& in, Writer&) { objects().erase(in.get<std::uint64_t>()); }

void move_construct(Reader& in, Writer& out) {
  PinnedBuffer& other = object(in.get<std::uint64_t>());
  auto buffer = std::make_unique<PinnedBuffer>(std::move(other));
  put_state(out, *buffer);
  put_state(out, other);
  objects()[address_of(buffer.get())] = std::move(buffer);
}

void move_assign(Reader& in, Writer& out) {
  PinnedBuffer& self = object(in.get<std::uint64_t>());
  PinnedBuffer& other = object(in.get<std::uint64_t>());
  self = std::move(other);
  put_state(out, self);
  put_state(out, other);
}

void pageable(Reader& in, Writer&) {
  void* d_dst = in.get_address<void*>();
  const auto [source, bytes] = in.get_any_bytes();  // in the request: pageable memory of this process
  upload_pageable(d_dst, source, bytes);
}

void pinned_async(Reader& in, Writer&) {
  void* d_dst = in.get_address<void*>();
  const PinnedBuffer& source = object(in.get<std::uint64_t>());
  const auto bytes = static_cast<std::size_t>(in.get<std::uint64_t>());
  upload_pinned_async(d_dst, source, bytes, in.get_address<cudaStream_t>());
}

const bool registered = course::remote::register_handler("PinnedBuffer(size_t)", construct) &&
                        course::remote::register_handler("~PinnedBuffer", destroy) &&
                        course::remote::register_handler("PinnedBuffer(PinnedBuffer&&)", move_construct) &&
                        course::remote::register_handler("PinnedBuffer::operator=(PinnedBuffer&&)", move_assign) &&
                        course::remote::register_handler("upload_pageable", pageable) &&
                        course::remote::register_handler("upload_pinned_async", pinned_async);

}  // namespace

#endif  // COURSE_REMOTE_WORKER
