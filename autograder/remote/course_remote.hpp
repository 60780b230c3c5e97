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
/// They talk over a socket pair: a request is an operation code and its arguments, a reply is
/// a status and its results. Device pointers, events and opaque handles the submission
/// returns stay the worker's values; the judge only passes them back. Data crosses as bytes
/// (uploads, downloads). Everything the worker sends is untrusted: the judge checks every
/// length it reads against what it asked for, and a malformed reply ends the worker.
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

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace course {
namespace remote {

/// The requests the judge sends. Each names what the worker does; the reply's layout is
/// documented at the handler (worker_main.cpp).
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
};

/// How a reply begins.
enum class Status : std::uint32_t {
  ok = 0,         ///< the results follow
  exception = 1,  ///< the contract function threw: kind, code, message follow
};

/// What starts a request on the channel, followed by `size` bytes of arguments. The nonce is
/// fresh and random per request, and the reply must carry it back: a submission that writes
/// into the channel itself (its code shares the worker's file descriptors) cannot answer a
/// request it has not seen, so it cannot feed the judge replies of its own making ahead of
/// the worker's (forged counters, say) without first finding the nonce in its process's
/// memory.
struct RequestHeader {
  std::uint32_t op;
  std::uint64_t nonce;
  std::uint64_t size;
};

/// What starts a reply, followed by `size` bytes of results.
struct ReplyHeader {
  std::uint32_t status;
  std::uint64_t nonce;
  std::uint64_t size;
};

/// What the worker caught, so that the judge can throw the same kind of exception.
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
  /// A pointer or an opaque handle, as the worker's address (the judge never dereferences one).
  void put_address(const void* pointer) { put<std::uint64_t>(reinterpret_cast<std::uintptr_t>(pointer)); }
  void append(const void* data, std::size_t size) {
    bytes_.append(static_cast<const char*>(data), size);
  }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
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

/// How a value of type T crosses. Plain data crosses as its bytes; pointers cross as their
/// value, which on either side means "the worker's address" (the judge never dereferences
/// one: device pointers and opaque handles only). A contract whose parameters need more
/// (strings, structs holding host pointers) specialises this in its remote_<name>.cpp.
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

template <class Signature>
struct Contract;

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
/// Sends one request and returns the reply's results (after the status). Throws the worker's
/// exception again in the judge, or `WorkerFailure` when the worker died, hung or answered
/// nonsense: either fails the running test, and the next request starts a fresh worker.
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

template <class Signature, class... Args>
typename Contract<Signature>::Result call(const char* name, const Args&... args) {
  using C = Contract<Signature>;
  Writer out;
  out.put_string(name);
  C::put_arguments(out, args...);
  const std::string reply = request(Op::call, out.bytes(), name);
  return read_reply(reply, name, [](Reader& in) -> typename C::Result {
    if constexpr (!std::is_void<typename C::Result>::value) return Marshal<Value<typename C::Result>>::get(in);
  });
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
