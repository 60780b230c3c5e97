/// @file course_remote.hpp
/// @brief The judge and the worker: how the grader keeps the submission out of the process
/// that decides its grade.
///
/// A graded test program is two executables (docs/instructor-guide.md, "The judge and the
/// worker"):
/// - the **judge**: the test sources, GoogleTest, the harness, the CPU references and the
///   signed-results listener. It never loads the submission. Its CUDA runtime
///   (judge_runtime.cpp) forwards each call to the worker, and each contract function of the
///   exercise (`launch_vector_add`, ...) is a proxy that sends its arguments to the worker;
/// - the **worker**: the submission's translation units, the real runtime (the simulator or
///   cudart) and a trusted loop (worker_main.cpp) that answers the judge's requests.
///
/// They talk over a socket pair. Every message is a request (an operation and its arguments)
/// or a reply (a status and its results), and travels on a **lane**: a judge thread and the
/// worker thread that runs its requests, so that what is per thread in CUDA (the current
/// device, the last error, a host thread's place on the simulator's modelled clock) is per
/// thread across the two processes as it is in one. A lane is a conversation: a side that
/// waits for its reply may first get a request on the same lane from the other side, which it
/// serves and answers before it goes on waiting. That is how a contract function calls back
/// into the test (a `std::function` the test passed, such as lesson 04's batch source), and how
/// the test's callback in turn makes CUDA calls on the worker's thread that called it. The judge
/// opens even lanes (one per judge thread); the worker opens odd ones for the threads the
/// submission starts itself, when they call back (lesson 04's reader threads).
///
/// Device pointers, events and opaque handles the submission returns stay the worker's values;
/// the judge only passes them back. Data crosses as bytes (uploads, downloads), or, for
/// page-locked host memory, in memory both processes map at the same address
/// (SharedHostMemory): the judge writes a test's inputs there and reads results from it, and
/// believes no pointer into it that it has not checked. Everything the worker sends is
/// untrusted: the judge checks every length it reads against what it asked for, and a malformed
/// message ends the worker.
///
/// An exercise lists its contract once, in autograder/remote/<lesson>/remote_<name>.cpp:
/// @code
///   #include "vector_add.hpp"
///   COURSE_REMOTE_FUNCTION(void, launch_vector_add, (const float* a, const float* b, float* c, int n),
///                          (a, b, c, n))
/// @endcode
/// compiled with `COURSE_REMOTE_JUDGE` (a proxy) into the judge and with
/// `COURSE_REMOTE_WORKER` (a handler that calls the submission) into the worker.
#pragma once

#include <sys/socket.h>
#include <unistd.h>

#include "cuda_check.hpp"

#include <cerrno>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace course {
namespace remote {

/// The requests. Each names what the receiving side does; the reply's layout is documented at
/// the handler (worker_main.cpp; `callback` at judge_runtime.cpp).
enum class Op : std::uint32_t {
  call = 1,            ///< a contract function: name, arguments
  malloc_device,       ///< cudaMalloc
  free_device,         ///< cudaFree
  memcpy,              ///< cudaMemcpy; host bytes travel with the request or the reply
  memset,              ///< cudaMemset
  memset_async,        ///< cudaMemsetAsync
  synchronize,         ///< cudaDeviceSynchronize
  get_last_error,      ///< cudaGetLastError
  peek_last_error,     ///< cudaPeekAtLastError
  error_name,          ///< cudaGetErrorName
  error_string,        ///< cudaGetErrorString
  get_device,          ///< cudaGetDevice
  device_attribute,    ///< cudaDeviceGetAttribute
  device_properties,   ///< cudaGetDeviceProperties
  event_create,        ///< cudaEventCreate
  event_record,        ///< cudaEventRecord
  event_synchronize,   ///< cudaEventSynchronize
  event_elapsed,       ///< cudaEventElapsedTime
  event_destroy,       ///< cudaEventDestroy
  traffic_open,        ///< course::test::count_global_traffic: the window opens
  traffic_close,       ///< ... and closes: the summary
  declare_window_flops, ///< course::test::declare_window_flops
  stream_create,       ///< cudaStreamCreate
  stream_destroy,      ///< cudaStreamDestroy
  stream_synchronize,  ///< cudaStreamSynchronize
  memcpy_async,        ///< cudaMemcpyAsync, completed before the reply (the judge waits anyway)
  cublas_create,       ///< cublasCreate (exercises that may call cuBLAS)
  cublas_destroy,      ///< cublasDestroy
  cublas_set_stream,   ///< cublasSetStream
  cublas_status_name,  ///< cublasGetStatusName
  cublas_status_string, ///< cublasGetStatusString
  // Several devices (lesson 05's ranks.hpp)
  get_device_count,    ///< cudaGetDeviceCount
  set_device,          ///< cudaSetDevice
  stream_create_with_flags, ///< cudaStreamCreateWithFlags
  event_create_with_flags,  ///< cudaEventCreateWithFlags
  device_can_access_peer,   ///< cudaDeviceCanAccessPeer
  device_enable_peer_access, ///< cudaDeviceEnablePeerAccess
  stream_wait_event,   ///< cudaStreamWaitEvent
  memcpy_peer_async,   ///< cudaMemcpyPeerAsync (device to device: no bytes cross)
  reset_stats,         ///< cudasim::reset_stats (ranks.hpp's reset_link_counters)
  link_stats,          ///< cudasim::link_stats (ranks.hpp's read_link_counters)
  // Host memory and streams as lesson 04's tests see them
  pointer_attributes,  ///< cudaPointerGetAttributes
  stream_query,        ///< cudaStreamQuery
  // The simulator's own API that lesson 04's tests use (remote_cudasim.hpp)
  sim_host_link,       ///< cudasim::host_link
  sim_set_host_link,   ///< cudasim::set_host_link
  sim_transfer_stats,  ///< cudasim::transfer_stats
  sim_kernel_stats,    ///< cudasim::kernel_stats
  sim_timeline,        ///< cudasim::timeline
  sim_reset_timeline,  ///< cudasim::reset_timeline
  sim_set_host_clock,  ///< cudasim::set_host_clock
  sim_set_model_time,  ///< cudasim::set_model_time
  sim_host_time,       ///< cudasim::host_time_ns
  sim_spend_host_time, ///< cudasim::spend_host_time
  sim_modelled_gpu,    ///< cudasim::modelled_gpu
  device_reset,        ///< cudaDeviceReset (a test that made a kernel fail on purpose starts clean)
  sim_peer_link,       ///< cudasim::peer_link
  sim_set_peer_link,   ///< cudasim::set_peer_link(const LinkModel&) (05/peer_bandwidth draws a link)
  // From the worker to the judge
  callback = 1000,     ///< a function the test passed: its id, its arguments
};

/// What a message is.
enum class Kind : std::uint32_t {
  request = 1,  ///< `code` is an Op
  reply = 2,    ///< `code` is a Status
};

/// How a reply begins.
enum class Status : std::uint32_t {
  ok = 0,         ///< the results follow
  exception = 1,  ///< the call threw: kind, code, message follow (put_exception)
};

/// What starts every message, followed by `size` bytes of arguments or results. A request's
/// nonce is fresh and random, and its reply must carry it back: a submission that writes into
/// the channel itself (its code shares the worker's file descriptors) cannot answer a request
/// it has not seen, so it cannot feed the judge replies of its own making ahead of the
/// worker's (forged counters, say) without first finding the nonce in its process's memory.
struct Header {
  std::uint32_t kind;   ///< Kind
  std::uint32_t code;   ///< Op or Status
  std::uint64_t lane;   ///< the conversation: even, opened by a judge thread; odd, by a worker thread
  std::uint64_t nonce;
  std::uint64_t size;
};

/// What was caught, so that the other side can throw the same kind of exception.
enum class ExceptionKind : std::uint32_t {
  cuda_error = 0,  ///< course::CudaError (code: the cudaError_t)
  invalid_argument,
  out_of_range,
  length_error,
  domain_error,
  runtime_error,
  logic_error,
  bad_alloc,
  other_std,       ///< another std::exception
  not_std,         ///< something that is not a std::exception
  cublas_error,    ///< course::CublasError (code: the cublasStatus_t)
  registered,      ///< a contract's own exception type (ExceptionType): its name, its fields
};

/// The most bytes one message may carry: more than any exercise moves in one copy, less than
/// what would let a hostile worker make the judge allocate without bound.
constexpr std::uint64_t kMaxMessageBytes = std::uint64_t(1) << 31;
/// Longest string (a name, an error message) a reply may carry.
constexpr std::size_t kMaxStringBytes = 1 << 16;

/// A malformed message: the judge ends the worker and fails the test.
class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Writes all of `data` to the socket `fd` (no SIGPIPE when the other side has gone).
inline bool write_fully(int fd, const void* data, std::size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t wrote = ::send(fd, p, size, MSG_NOSIGNAL);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) return false;
    p += wrote;
    size -= static_cast<std::size_t>(wrote);
  }
  return true;
}

/// Reads exactly `size` bytes from `fd`; false at the end of the stream or on an error.
/// `ready()` is asked before each read and may say there is nothing to wait for.
template <class Ready>
bool read_fully(int fd, void* data, std::size_t size, Ready ready) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    if (!ready()) return false;
    const ssize_t got = ::read(fd, p, size);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    size -= static_cast<std::size_t>(got);
  }
  return true;
}

inline bool read_fully(int fd, void* data, std::size_t size) {
  return read_fully(fd, data, size, [] { return true; });
}

/// Builds a message.
class Writer {
 public:
  template <class T>
  void put(const T& value) {
    static_assert(std::is_trivially_copyable<T>::value, "only plain data crosses as bytes");
    append(&value, sizeof value);
  }
  void put_string(const std::string& text) {
    put<std::uint64_t>(text.size());
    append(text.data(), text.size());
  }
  Writer() = default;
  /// A message whose bytes are already made.
  explicit Writer(std::string bytes) : bytes_(std::move(bytes)) {}
  void put_bytes(const void* data, std::size_t size) {
    put<std::uint64_t>(size);
    append(data, size);
  }
  /// Room for a byte block of `size` bytes, to be filled where it is (a download straight
  /// into the message, not through a buffer of its own first).
  char* put_bytes_in_place(std::size_t size) {
    put<std::uint64_t>(size);
    bytes_.resize(bytes_.size() + size);
    return &bytes_[bytes_.size() - size];
  }
  /// A pointer or an opaque handle, as the worker's address (the judge never dereferences one
  /// it has not checked).
  void put_address(const void* pointer) { put<std::uint64_t>(reinterpret_cast<std::uintptr_t>(pointer)); }
  void append(const void* data, std::size_t size) {
    bytes_.append(static_cast<const char*>(data), size);
  }
  const std::string& bytes() const { return bytes_; }
  std::size_t size() const { return bytes_.size(); }
  /// Writes `value` over what was put at `offset` before (a status known only after the bytes
  /// that follow it were filled in).
  template <class T>
  void put_at(std::size_t offset, const T& value) {
    static_assert(std::is_trivially_copyable<T>::value, "only plain data crosses as bytes");
    std::memcpy(&bytes_[offset], &value, sizeof value);
  }
  /// Keeps `what` alive as long as this message (or a copy) is: a callback the message names
  /// stays callable until the request it travels with has been answered.
  void hold(std::shared_ptr<void> what) { held_.push_back(std::move(what)); }

 private:
  std::string bytes_;
  std::vector<std::shared_ptr<void>> held_;
};

/// Reads a message, checking every length against what is left.
class Reader {
 public:
  Reader(const char* data, std::size_t size) : next_(data), end_(data + size) {}
  explicit Reader(const std::string& bytes) : Reader(bytes.data(), bytes.size()) {}

  template <class T>
  T get() {
    static_assert(std::is_trivially_copyable<T>::value, "only plain data crosses as bytes");
    T value;
    std::memcpy(static_cast<void*>(&value), take(sizeof value), sizeof value);
    return value;
  }
  std::string get_string(std::size_t max_bytes = kMaxStringBytes) {
    const std::uint64_t size = get<std::uint64_t>();
    if (size > max_bytes) throw ProtocolError("a string of " + std::to_string(size) + " bytes");
    return std::string(take(size), size);
  }
  /// A byte block of exactly `expected` bytes (a download of a known size).
  const char* get_bytes(std::size_t expected) {
    const std::uint64_t size = get<std::uint64_t>();
    if (size != expected)
      throw ProtocolError(std::to_string(size) + " bytes where " + std::to_string(expected) + " were asked for");
    return take(size);
  }
  /// A byte block of any size (the length travels with it), where it lies in the message.
  std::pair<const char*, std::size_t> get_any_bytes() {
    const std::uint64_t size = get<std::uint64_t>();
    return {take(size), static_cast<std::size_t>(size)};
  }
  /// What Writer::put_address wrote, as a pointer or handle type.
  template <class Pointer>
  Pointer get_address() {
    return reinterpret_cast<Pointer>(static_cast<std::uintptr_t>(get<std::uint64_t>()));
  }
  bool at_end() const { return next_ == end_; }

 private:
  const char* take(std::size_t size) {
    if (size > static_cast<std::size_t>(end_ - next_)) throw ProtocolError("a message ended early");
    const char* at = next_;
    next_ += size;
    return at;
  }
  const char* next_;
  const char* end_;
};

// ---- exceptions, in both directions --------------------------------------------------------

/// A contract's own exception type (lesson 04's dataset::DataError), registered by its
/// remote_<name>.cpp on both sides: `put` recognises and writes one (false: not this type),
/// `rethrow` throws it again from what `put` wrote (and must not return).
struct ExceptionType {
  const char* name;
  bool (*put)(const std::exception_ptr& caught, Writer& out);
  void (*rethrow)(Reader& in);
};

inline std::vector<ExceptionType>& exception_types() {
  static std::vector<ExceptionType> all;
  return all;
}

/// For the static initialisation of a trusted remote_<name>.cpp.
inline bool register_exception_type(ExceptionType type) {
  exception_types().push_back(type);
  return true;
}

/// Writes what was thrown (`caught`), so that the other side can throw it again.
inline void put_exception(Writer& out, const std::exception_ptr& caught) {
  for (const ExceptionType& type : exception_types()) {
    Writer fields;
    if (type.put(caught, fields)) {
      out.put(static_cast<std::uint32_t>(ExceptionKind::registered));
      out.put<std::int32_t>(0);
      out.put_string(type.name);
      out.append(fields.bytes().data(), fields.bytes().size());
      return;
    }
  }
  const auto put = [&](ExceptionKind kind, std::int32_t code, const std::string& message) {
    out.put(static_cast<std::uint32_t>(kind));
    out.put(code);
    out.put_string(message.substr(0, kMaxStringBytes));
  };
  try {
    std::rethrow_exception(caught);
  } catch (const course::CudaError& e) {
    put(ExceptionKind::cuda_error, e.code(), e.what());
#ifdef COURSE_HAVE_CUBLAS
  } catch (const course::CublasError& e) {
    put(ExceptionKind::cublas_error, e.status(), e.what());
#endif
  } catch (const std::invalid_argument& e) {
    put(ExceptionKind::invalid_argument, 0, e.what());
  } catch (const std::out_of_range& e) {
    put(ExceptionKind::out_of_range, 0, e.what());
  } catch (const std::length_error& e) {
    put(ExceptionKind::length_error, 0, e.what());
  } catch (const std::domain_error& e) {
    put(ExceptionKind::domain_error, 0, e.what());
  } catch (const std::logic_error& e) {
    put(ExceptionKind::logic_error, 0, e.what());
  } catch (const std::runtime_error& e) {
    put(ExceptionKind::runtime_error, 0, e.what());
  } catch (const std::bad_alloc& e) {
    put(ExceptionKind::bad_alloc, 0, e.what());
  } catch (const std::exception& e) {
    put(ExceptionKind::other_std, 0, e.what());
  } catch (...) {
    put(ExceptionKind::not_std, 0, "an exception that is not a std::exception");
  }
}

/// Throws again what put_exception wrote; ProtocolError for what it cannot have written.
[[noreturn]] inline void throw_exception(Reader& in) {
  const auto kind = static_cast<ExceptionKind>(in.get<std::uint32_t>());
  const auto code = in.get<std::int32_t>();
  const std::string message = in.get_string();
  switch (kind) {
    case ExceptionKind::cuda_error: throw course::CudaError(static_cast<cudaError_t>(code), message);
    case ExceptionKind::invalid_argument: throw std::invalid_argument(message);
    case ExceptionKind::out_of_range: throw std::out_of_range(message);
    case ExceptionKind::length_error: throw std::length_error(message);
    case ExceptionKind::domain_error: throw std::domain_error(message);
    case ExceptionKind::logic_error: throw std::logic_error(message);
    case ExceptionKind::runtime_error: throw std::runtime_error(message);
    case ExceptionKind::bad_alloc: throw std::bad_alloc();
    case ExceptionKind::other_std: throw std::runtime_error(message);
    case ExceptionKind::not_std: throw 0;  // a non-std exception
#ifdef COURSE_HAVE_CUBLAS
    case ExceptionKind::cublas_error: throw course::CublasError(static_cast<cublasStatus_t>(code), message);
#endif
    case ExceptionKind::registered:
      for (const ExceptionType& type : exception_types()) {
        if (message != type.name) continue;
        type.rethrow(in);
        throw ProtocolError("the exception type " + message + " was not thrown again");
      }
      throw ProtocolError("an exception of an unknown type " + message.substr(0, 64));
    default: break;
  }
  throw ProtocolError("an unknown kind of exception");
}

// ---- how values cross ------------------------------------------------------------------------

/// How a value of type T crosses. Plain data crosses as its bytes; pointers cross as their
/// value, which on either side means "the worker's address" (the judge never dereferences
/// one it has not checked: device pointers and opaque handles only). A contract whose
/// parameters need more (strings, structs holding host pointers) specialises this in its
/// remote_<name>.cpp.
template <class T, class Enable = void>
struct Marshal {
  static_assert(std::is_trivially_copyable<T>::value,
                "a contract parameter that is not plain data needs its own course::remote::Marshal");
  static void put(Writer& out, const T& value) { out.put(value); }
  static T get(Reader& in) { return in.get<T>(); }
};

/// A vector crosses as its length and its elements. No room is reserved from the length a
/// message claims: a hostile length runs into the end of the message first.
template <class T>
struct Marshal<std::vector<T>> {
  static void put(Writer& out, const std::vector<T>& values) {
    out.put<std::uint64_t>(values.size());
    for (const T& value : values) Marshal<T>::put(out, value);
  }
  static std::vector<T> get(Reader& in) {
    const auto count = in.get<std::uint64_t>();
    std::vector<T> values;
    for (std::uint64_t i = 0; i < count; ++i) values.push_back(Marshal<T>::get(in));
    return values;
  }
};

template <>
struct Marshal<std::string> {
  static void put(Writer& out, const std::string& value) { out.put_string(value); }
  static std::string get(Reader& in) { return in.get_string(); }
};

/// A parameter's value type: `const Machine&` crosses as a Machine.
template <class T>
using Value = std::remove_cv_t<std::remove_reference_t<T>>;

// ---- host memory both processes map -----------------------------------------------------------

/// Page-locked host memory as the grader's two processes share it: the judge maps one region
/// and the worker maps the same one at the same address, and the worker's cudaMallocHost and
/// cudaHostAlloc take their memory from it. A host pointer of the submission into it means the
/// same bytes in the judge, so a test reads and writes a PinnedBuffer or a prefetched batch
/// directly, as it would in one process. The worker can write there at any time: the judge
/// keeps nothing of its own in it, and takes a pointer the worker gives it only after checking
/// that the whole range it will touch lies inside (contains()).
struct SharedHostMemory {
  char* base = nullptr;
  std::size_t bytes = 0;
  /// Whether the `size` bytes at `pointer` lie inside the region.
  bool contains(const void* pointer, std::size_t size) const {
    const auto at = reinterpret_cast<std::uintptr_t>(pointer), begin = reinterpret_cast<std::uintptr_t>(base);
    return base != nullptr && at >= begin && size <= bytes && at - begin <= bytes - size;
  }
};

/// The region (empty where it could not be made: the exercises that need it then fail with a
/// message saying so).
SharedHostMemory shared_host_memory();

/// The preferred address and the size of the region. Far from where the kernel places other
/// mappings, so that the worker (a fresh process, laid out differently) finds it free too. Its
/// size stays under the sandbox's file-size limit (256 MiB, tools/course/sandbox.py), which
/// also bounds the memory file behind it.
constexpr std::uintptr_t kSharedHostAddress = std::uintptr_t(0x2000) << 32;
constexpr std::size_t kSharedHostBytes = std::size_t(192) << 20;

// ---- lanes -----------------------------------------------------------------------------------

/// One message as it arrived.
struct Message {
  Header header{};
  std::string payload;
};

/// The messages that have arrived, by lane, until the thread of that lane takes them. One
/// thread of each process reads the channel and delivers; any thread waits for its own lane.
class Mailboxes {
 public:
  void deliver(Message message) {
    std::lock_guard<std::mutex> lock(mutex_);
    Box& box = boxes_[message.header.lane];
    box.queue.push_back(std::move(message));
    box.ready.notify_one();
  }
  /// The next message of `lane`; false once the channel has closed.
  bool take(std::uint64_t lane, Message& message) {
    std::unique_lock<std::mutex> lock(mutex_);
    Box& box = boxes_[lane];
    box.ready.wait(lock, [&] { return closed_ || !box.queue.empty(); });
    if (box.queue.empty()) return false;
    message = std::move(box.queue.front());
    box.queue.pop_front();
    return true;
  }
  /// No more messages: every waiting thread wakes and finds none.
  void close() {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
    for (auto& lane : boxes_) lane.second.ready.notify_all();
  }

 private:
  struct Box {
    std::deque<Message> queue;
    std::condition_variable ready;
  };
  std::mutex mutex_;
  std::map<std::uint64_t, Box> boxes_;  // a map: a box stays where it is while threads wait on it
  bool closed_ = false;
};

/// Writes whole messages to the channel, one at a time from any thread.
class Sender {
 public:
  explicit Sender(int fd = -1) : fd_(fd) {}
  bool send(const Header& header, const std::string& payload) {
    if (payload.size() > kJoinedBytes) {  // a large copy: not copied once more to join the header
      std::lock_guard<std::mutex> lock(mutex_);
      return write_fully(fd_, &header, sizeof header) && write_fully(fd_, payload.data(), payload.size());
    }
    std::string message(reinterpret_cast<const char*>(&header), sizeof header);
    message += payload;  // one write per message: lesson 05's tests make thousands of small requests
    std::lock_guard<std::mutex> lock(mutex_);
    return write_fully(fd_, message.data(), message.size());
  }

 private:
  static constexpr std::size_t kJoinedBytes = std::size_t(1) << 16;
  int fd_;
  std::mutex mutex_;
};

/// How a wait for a reply ended.
enum class Awaited { reply, closed };

/// Waits on `lane` for the reply to the request with `nonce`, serving meanwhile each request
/// the other side makes on the lane (`serve(message)` runs it and sends its reply). Throws
/// ProtocolError for a reply that is not to this request.
template <class Serve>
Awaited await_reply(Mailboxes& boxes, std::uint64_t lane, std::uint64_t nonce, Serve&& serve, Message& reply) {
  for (;;) {
    if (!boxes.take(lane, reply)) return Awaited::closed;
    if (reply.header.kind == static_cast<std::uint32_t>(Kind::request)) {
      serve(reply);
      continue;
    }
    if (reply.header.nonce != nonce) throw ProtocolError("a reply to a request that was not this one");
    if (reply.header.code > static_cast<std::uint32_t>(Status::exception)) throw ProtocolError("it sent a malformed reply");
    return Awaited::reply;
  }
}

template <class Signature>
struct Contract;

/// What holds a parameter's value in the worker while the contract function runs: the value
/// itself, or, for a type that cannot be copied (a RankGroup), the holder its Marshal names as
/// `Carried` (it converts to a reference to the rebuilt object).
template <class T, class Enable = void>
struct CarriedOf {
  using type = T;
};
template <class T>
struct CarriedOf<T, std::void_t<typename Marshal<T>::Carried>> {
  using type = typename Marshal<T>::Carried;
};

/// The parameter and result types of a contract function.
template <class R, class... Args>
struct Contract<R (*)(Args...)> {
  using Result = R;
  using Arguments = std::tuple<typename CarriedOf<Value<Args>>::type...>;

  static void put_arguments(Writer& out, const Value<Args>&... args) {
    (Marshal<Value<Args>>::put(out, args), ...);
  }
  static Arguments get_arguments(Reader& in) {
    // Braced initialisation reads the arguments left to right.
    return Arguments{Marshal<Value<Args>>::get(in)...};
  }
};

// ---- the judge's side ------------------------------------------------------------------------

#ifdef COURSE_REMOTE_JUDGE
/// Sends one request on the calling thread's lane and returns the reply's results (after the
/// status), serving the worker's callbacks meanwhile. Throws the worker's exception again in
/// the judge, or `WorkerFailure` when the worker died, hung or answered nonsense: either
/// fails the running test, and the next test starts a fresh worker.
std::string request(Op op, const std::string& arguments, const char* what);

/// The worker died, hung or broke the protocol.
class WorkerFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The worker executable of this judge (generated per judge by course_remote_worker_path()
/// in autograder/cmake/CourseGrader.cmake).
const char* worker_executable();

/// A reply to `what` that made no sense: ends the worker and throws WorkerFailure.
[[noreturn]] void protocol_failure(const char* what, const std::string& why);

/// Reads the whole reply to `what` with `read(Reader&)` and returns what it returns. A reply
/// shorter or longer than `read` takes breaks the protocol.
template <class Read>
auto read_reply(const std::string& reply, const char* what, Read read) -> decltype(read(std::declval<Reader&>())) {
  try {
    Reader in(reply);
    if constexpr (std::is_void<decltype(read(in))>::value) {
      read(in);
      if (!in.at_end()) throw ProtocolError("a reply longer than the result");
    } else {
      auto result = read(in);
      if (!in.at_end()) throw ProtocolError("a reply longer than the result");
      return result;
    }
  } catch (const ProtocolError& e) {
    protocol_failure(what, e.what());
  }
}

/// Sends a call of the contract function `name` with arguments already written, and reads its
/// result with `read`.
template <class Read>
auto call_with(const char* name, const Writer& arguments, Read read) {
  Writer out;
  out.put_string(name);
  out.append(arguments.bytes().data(), arguments.bytes().size());
  return read_reply(request(Op::call, out.bytes(), name), name, read);
}

template <class Signature, class... Args>
typename Contract<Signature>::Result call(const char* name, const Args&... args) {
  using C = Contract<Signature>;
  Writer arguments;
  C::put_arguments(arguments, args...);
  return call_with(name, arguments, [](Reader& in) -> typename C::Result {
    if constexpr (!std::is_void<typename C::Result>::value) return Marshal<Value<typename C::Result>>::get(in);
  });
}

/// A function of the test that the worker may call back while it is registered: it reads its
/// arguments and writes its result (nothing, for the callbacks of today's contracts).
using CallbackBody = std::function<void(Reader& in, Writer& out)>;

/// Registers `body` until remove_callback(); its id crosses to the worker, 0 never being one.
std::uint64_t add_callback(CallbackBody body);
/// Unregisters a callback, after any call of it that is running has returned: once this has
/// returned, nothing the worker does runs it again.
void remove_callback(std::uint64_t id);

/// A registered callback, unregistered when this goes.
class CallbackRegistration {
 public:
  explicit CallbackRegistration(CallbackBody body) : id_(add_callback(std::move(body))) {}
  ~CallbackRegistration() { remove_callback(id_); }
  CallbackRegistration(const CallbackRegistration&) = delete;
  CallbackRegistration& operator=(const CallbackRegistration&) = delete;
  std::uint64_t id() const { return id_; }

 private:
  std::uint64_t id_;
};

/// Registers `body` for as long as the message `out` is alive (the request it travels with,
/// until answered) and writes its id.
inline void put_borrowed_callback(Writer& out, CallbackBody body) {
  auto registration = std::make_shared<CallbackRegistration>(std::move(body));
  out.put<std::uint64_t>(registration->id());
  out.hold(std::move(registration));
}

/// A `std::function` argument of a contract function: the test's function, callable by the
/// worker while the call runs. Its parameters cross as plain data only: a pointer would have to
/// be checked before the test's function may touch it, which a contract's own Marshal does.
template <class... Args>
struct Marshal<std::function<void(Args...)>> {
  static_assert(!(std::is_pointer<Value<Args>>::value || ...),
                "a callback with pointer parameters needs a Marshal that checks them (see remote_overlap.cpp)");
  static void put(Writer& out, const std::function<void(Args...)>& function) {
    if (!function) {
      out.put<std::uint64_t>(0);
      return;
    }
    const auto* borrowed = &function;
    put_borrowed_callback(out, [borrowed](Reader& in, Writer&) {
      std::tuple<Value<Args>...> arguments{Marshal<Value<Args>>::get(in)...};
      std::apply(*borrowed, arguments);
    });
  }
};

/// A host pointer the worker handed back, checked: null, or `count` elements that lie wholly in
/// the shared host memory (SharedHostMemory). Anything else throws std::runtime_error with a
/// message that names `what`: the judge never touches memory the worker chose outside it.
template <class T>
T* checked_shared_host(T* pointer, std::size_t count, const std::string& what) {
  if (pointer == nullptr) return nullptr;
  if (count > kSharedHostBytes / sizeof(T) || !shared_host_memory().contains(pointer, count * sizeof(T)))
    throw std::runtime_error(what + " is not page-locked memory from cudaMallocHost or cudaHostAlloc (the grader "
                             "reads host memory back from the submission only there)");
  return pointer;
}

#define COURSE_REMOTE_FUNCTION(result, name, parameters, arguments) \
  result name parameters { return ::course::remote::call<decltype(&name)>(#name, COURSE_REMOTE_UNPACK arguments); }
/// One instantiation of a function template (`launch_tiled_matmul<16>`): an explicit
/// specialisation here, the instantiation the submission provides there.
#define COURSE_REMOTE_INSTANCE(result, name, instance, parameters, arguments)                \
  template <>                                                                              \
  result name<COURSE_REMOTE_UNPACK instance> parameters {                                  \
    return ::course::remote::call<decltype(&name<COURSE_REMOTE_UNPACK instance>)>(           \
        #name "<" #instance ">", COURSE_REMOTE_UNPACK arguments);                          \
  }
#define COURSE_REMOTE_UNPACK(...) __VA_ARGS__
#endif  // COURSE_REMOTE_JUDGE

// ---- the worker's side -----------------------------------------------------------------------

#ifdef COURSE_REMOTE_WORKER
/// Reads a contract function's arguments, calls it and writes its result.
using Handler = void (*)(Reader& in, Writer& out);

/// Registers a handler under the function's name (static initialisation of the trusted
/// remote_<name>.cpp, before main).
bool register_handler(const char* name, Handler handler);

/// Calls the test's callback whose id begins `arguments` from the calling thread, serving the
/// judge's requests on the thread's lane until it returns; throws what the callback threw.
/// Returns the callback's results.
std::string invoke_callback(const std::string& arguments);

/// The test's function behind callback `id`, as the submission calls it.
template <class... Args>
std::function<void(Args...)> callback_function(std::uint64_t id) {
  if (id == 0) return {};
  return [id](Args... args) {
    Writer out;
    out.put<std::uint64_t>(id);
    (Marshal<Value<Args>>::put(out, args), ...);
    invoke_callback(out.bytes());
  };
}

template <class... Args>
struct Marshal<std::function<void(Args...)>> {
  static std::function<void(Args...)> get(Reader& in) { return callback_function<Args...>(in.get<std::uint64_t>()); }
};

template <auto Function>
void handle(Reader& in, Writer& out) {
  using C = Contract<decltype(Function)>;
  auto arguments = C::get_arguments(in);
  if constexpr (std::is_void<typename C::Result>::value) {
    std::apply(Function, arguments);
  } else {
    Marshal<Value<typename C::Result>>::put(out, std::apply(Function, arguments));
  }
}

#define COURSE_REMOTE_FUNCTION(result, name, parameters, arguments) \
  static const bool course_remote_registered_##name =               \
      ::course::remote::register_handler(#name, &::course::remote::handle<&name>);
#define COURSE_REMOTE_INSTANCE(result, name, instance, parameters, arguments)              \
  COURSE_REMOTE_REGISTER_AS(COURSE_REMOTE_JOIN(course_remote_registered_, __LINE__),      \
                            #name "<" #instance ">", &name<COURSE_REMOTE_UNPACK instance>)
#define COURSE_REMOTE_REGISTER_AS(variable, text, function) \
  static const bool variable = ::course::remote::register_handler(text, &::course::remote::handle<function>);
#define COURSE_REMOTE_JOIN(a, b) COURSE_REMOTE_JOIN_(a, b)
#define COURSE_REMOTE_JOIN_(a, b) a##b
#define COURSE_REMOTE_UNPACK(...) __VA_ARGS__
#endif  // COURSE_REMOTE_WORKER

}  // namespace remote
}  // namespace course
