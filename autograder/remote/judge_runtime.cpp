// The judge's side of a split test program (course_remote.hpp): it starts the worker that
// runs the submission, and provides the CUDA runtime calls the tests and the harness make, each
// forwarded to the worker. The judge never loads the submission: a test's comparisons, its
// verdict, the performance figures and the signed result file are made here, from data the
// worker sent as bytes.
//
// One fresh worker per test (a GoogleTest listener ends the previous one): what a test's
// submission did cannot leak into the next test, and a crash costs the test it happened in.
// A worker that dies, or breaks the protocol, fails the running test with a WorkerFailure
// naming what it was doing; the test's later requests fail at once (its device buffers died
// with it), and the event goes into the signed results ("worker <test> <what>"), so that the
// grader can say the exercise crashed.
//
// The worker runs in fresh user and PID namespaces where the kernel allows it (the grader's
// sandbox, tools/course/sandbox.py, already hides the file system and the network for both):
// it cannot name the judge's process to signal or trace it, and its own children die with
// it. The judge is also made non-dumpable, so that where namespaces are refused a process of
// the same user still cannot read or write its memory through /proc or ptrace.
#define COURSE_REMOTE_JUDGE 1
#include "course_remote.hpp"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include "course_perf.hpp"
#include "course_traffic.hpp"
#include "remote_traffic.hpp"
#include "cuda_check.hpp"

#include <cudasim/link_model.hpp>
#include <cudasim/stats.hpp>

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <new>
#include <string>
#include <vector>

extern char** environ;

namespace course {
namespace remote {
namespace {

constexpr int kChannel = 3;  // the worker's end of the socket pair

std::string signal_text(int sig) {
  const char* name = sigabbrev_np(sig);
  return name ? std::string("SIG") + name : "signal " + std::to_string(sig);
}

/// The environment the worker gets: the judge's, without the grader's own variables.
std::vector<std::string> worker_environment() {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e)
    if (std::strncmp(*e, "COURSE_", 7) != 0) env.emplace_back(*e);
  return env;
}

/// 64 random bits from the kernel, one request's nonce (course_remote.hpp, RequestHeader).
/// Drawn 512 at a time: lesson 05's tests make thousands of requests, and a system call for
/// each was a tenth of their time. The unused ones sit in the judge's memory, out of the
/// worker's reach like the rest of it.
std::uint64_t fresh_nonce() {
  static std::uint64_t pool[512];
  static std::size_t used = sizeof pool / sizeof pool[0];
  if (used == sizeof pool / sizeof pool[0]) {
    char* p = reinterpret_cast<char*>(pool);
    std::size_t left = sizeof pool;
    while (left > 0) {
      const ssize_t got = ::getrandom(p, left, 0);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) throw WorkerFailure("the grader could not draw a random nonce");
      p += got;
      left -= static_cast<std::size_t>(got);
    }
    used = 0;
  }
  return pool[used++];
}

/// The worker process and its channel; at most one at a time.
class Worker {
 public:
  /// Sends a request and returns the reply's payload (status included in `status`).
  std::string exchange(Op op, const std::string& arguments, Status& status, const char* what) {
    if (failed_) throw WorkerFailure("the submission's process had already failed in this test (" + failure_ + ")");
    if (pid_ <= 0) start();
    // The submission's code may make another device current (cudaSetDevice persists in the
    // worker's thread): after a contract call the judge no longer knows which one is.
    if (op == Op::call) current_device_ = -1;
    const RequestHeader request{static_cast<std::uint32_t>(op), fresh_nonce(), arguments.size()};
    std::string message(reinterpret_cast<const char*>(&request), sizeof request);
    message += arguments;  // one write: lesson 05's tests make thousands of small requests
    if (!write_exactly(message.data(), message.size())) fail(what);
    ReplyHeader header{};
    if (!read_exactly(&header, sizeof header)) fail(what);
    if (header.status > static_cast<std::uint32_t>(Status::exception) || header.size > kMaxMessageBytes)
      fail(what, "it sent a malformed reply");
    if (header.nonce != request.nonce) fail(what, "a reply to a request that was not this one");
    std::string reply(static_cast<std::size_t>(header.size), '\0');
    if (!read_exactly(&reply[0], reply.size())) fail(what);
    status = static_cast<Status>(header.status);
    return reply;
  }

  /// Ends the worker (between tests, at the end of the program).
  void stop() {
    if (channel_ >= 0) ::close(channel_);
    channel_ = -1;
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      int status = 0;
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
    }
    pid_ = -1;
    failed_ = false;
    failure_.clear();
    current_device_ = -1;
  }

  bool failed() const { return failed_; }

  /// The worker's current device as the judge last set or read it, -1 when unknown: the
  /// judge's DeviceGuards ask for it, and set it, around almost every call of lesson 05.
  int current_device() const { return current_device_; }
  void set_current_device(int device) { current_device_ = device; }

  /// A reply that made no sense: the worker is ended, the test fails.
  [[noreturn]] void fail(const char* what, const std::string& why) {
    if (pid_ > 0) ::kill(pid_, SIGKILL);
    record_failure(what, "broke the protocol (" + why + ")", "protocol");
  }

 private:
  void start() {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
      throw WorkerFailure(std::string("the grader could not start the worker: socketpair: ") + std::strerror(errno));
    int status_pipe[2];
    if (::pipe2(status_pipe, O_CLOEXEC) != 0) {
      ::close(pair[0]);
      ::close(pair[1]);
      throw WorkerFailure(std::string("the grader could not start the worker: pipe: ") + std::strerror(errno));
    }
    const std::vector<std::string> env = worker_environment();
    std::vector<char*> envp;
    for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) throw WorkerFailure(std::string("the grader could not start the worker: fork: ") + std::strerror(errno));
    if (pid == 0) run_child(pair[1], status_pipe[1], envp.data());  // never returns
    ::close(pair[1]);
    ::close(status_pipe[1]);
    channel_ = pair[0];
    status_pipe_ = status_pipe[0];
    pid_ = pid;
  }

  /// In the child: the namespaces, then a reaper that is PID 1 of the new PID namespace (so
  /// that every process the worker leaves behind dies with it), and under it the worker. The
  /// worker itself is not PID 1: a namespace's first process ignores the signals it sends
  /// itself (raise, abort), which would let a crash go unseen. The reaper reports how the
  /// worker ended on the status pipe.
  [[noreturn]] static void run_child(int channel, int status_pipe, char** envp) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    // A user namespace of its own (no capability over the judge's) and a PID namespace (the
    // judge cannot be named). Network and IPC are the sandbox's already (empty, private);
    // where the sandbox has no namespaces, neither can this, and the report says so.
    if (::unshare(CLONE_NEWUSER | CLONE_NEWPID) != 0) {
    }
    const pid_t reaper = ::fork();
    if (reaper < 0) ::_exit(127);
    if (reaper > 0) {
      int ignored = 0;
      while (::waitpid(reaper, &ignored, 0) < 0 && errno == EINTR) {
      }
      ::_exit(0);
    }
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    const pid_t worker = ::fork();
    if (worker < 0) ::_exit(127);
    if (worker == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::dup2(channel, kChannel) < 0) ::_exit(127);
      ::closefrom(kChannel + 1);
      char* argv[] = {const_cast<char*>(worker_executable()), nullptr};
      ::execve(worker_executable(), argv, envp);
      ::_exit(127);
    }
    ::close(channel);
    int status = 0;
    while (::waitpid(worker, &status, 0) < 0 && errno == EINTR) {
    }
    ssize_t ignored = ::write(status_pipe, &status, sizeof status);
    (void)ignored;
    ::_exit(0);
  }

  /// The worker ended during `what`: how, in words; the failure is recorded and thrown.
  [[noreturn]] void fail(const char* what) {
    std::string how = "ended without answering", kind = "exited";
    int status = 0;
    if (status_pipe_ >= 0) {
      ::close(channel_);
      channel_ = -1;
      // A worker that closed its channel but lives on gets two seconds to end, then is ended.
      pollfd ended = {status_pipe_, POLLIN, 0};
      if (::poll(&ended, 1, 2000) == 1 &&
          ::read(status_pipe_, &status, sizeof status) == static_cast<ssize_t>(sizeof status)) {
        if (WIFSIGNALED(status)) {
          how = "was killed by " + signal_text(WTERMSIG(status));
          kind = "crashed " + signal_text(WTERMSIG(status));
        } else if (WIFEXITED(status)) {
          how = "exited with code " + std::to_string(WEXITSTATUS(status));
          if (WEXITSTATUS(status) == 127) how += " (the worker program could not be started)";
          kind = "exited " + std::to_string(WEXITSTATUS(status));
        }
      }
    }
    record_failure(what, how, kind);
  }

  [[noreturn]] void record_failure(const char* what, const std::string& how, const std::string& kind) {
    if (channel_ >= 0) ::close(channel_);
    channel_ = -1;
    if (status_pipe_ >= 0) ::close(status_pipe_);
    status_pipe_ = -1;
    if (pid_ > 0) {
      int ignored = 0;
      ::kill(pid_, SIGKILL);
      while (::waitpid(pid_, &ignored, 0) < 0 && errno == EINTR) {
      }
    }
    pid_ = -1;
    failed_ = true;
    failure_ = std::string("it ") + how + " during " + what;
    const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
    const std::string name = test ? std::string(test->test_suite_name()) + "." + test->name() : "(no test)";
    course::perf::lines().push_back("worker " + name + " " + kind);
    throw WorkerFailure("the submission's process " + how + " during " + what);
  }

  bool write_exactly(const void* data, std::size_t size) { return write_fully(channel_, data, size); }

  bool read_exactly(void* data, std::size_t size) {
    return read_fully(channel_, data, size, [this] { return wait_for_reply(); });
  }

  /// Waits until the channel has data, or the worker has ended. A descendant that the
  /// worker left behind may hold the channel open (where no PID namespace ends it with the
  /// worker): the worker's end, reported on the status pipe, is what counts.
  bool wait_for_reply() {
    for (;;) {
      pollfd watched[2] = {{channel_, POLLIN, 0}, {status_pipe_, POLLIN, 0}};
      const int ready = ::poll(watched, 2, -1);
      if (ready < 0 && errno == EINTR) continue;
      if (ready < 0) return false;
      if (watched[0].revents & POLLIN) return true;
      if (watched[0].revents & (POLLHUP | POLLERR)) return false;
      if (watched[1].revents) return false;  // the worker has ended without answering
    }
  }

  pid_t pid_ = -1;
  int current_device_ = -1;
  int channel_ = -1;
  int status_pipe_ = -1;
  bool failed_ = false;
  std::string failure_;
};

Worker& worker() {
  static Worker* one = new Worker;  // never destroyed: the listener stops it at the end
  return *one;
}

/// The device allocations of the current worker: to tell device from host pointers for
/// cudaMemcpyDefault, and to free nothing of a worker that has gone.
std::map<std::uint64_t, std::uint64_t>& allocations() {
  static auto* all = new std::map<std::uint64_t, std::uint64_t>;
  return *all;
}



[[noreturn]] void throw_again(Reader& in) {
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
    case ExceptionKind::not_std: throw 0;  // the submission threw a non-std exception
    case ExceptionKind::cublas_error: throw course::CublasError(static_cast<cublasStatus_t>(code), message);
  }
  throw ProtocolError("an unknown kind of exception");
}

/// Ends each test's worker, so that the next test starts a fresh one.
class WorkerPerTest : public ::testing::EmptyTestEventListener {
 public:
  void OnTestStart(const ::testing::TestInfo&) override { reset(); }
  void OnTestEnd(const ::testing::TestInfo&) override { reset(); }
  void OnTestProgramEnd(const ::testing::UnitTest&) override { reset(); }

 private:
  static void reset() {
    worker().stop();
    allocations().clear();
  }
};

// Before any test: the judge cannot be traced or read through /proc by a process of the same
// user (the worker, where namespaces are refused), and the listener is in place.
const bool g_judge_ready = [] {
  ::prctl(PR_SET_DUMPABLE, 0);
  ::testing::UnitTest::GetInstance()->listeners().Append(new WorkerPerTest);
  return true;
}();

}  // namespace

void protocol_failure(const char* what, const std::string& why) { worker().fail(what, why); }

std::string request(Op op, const std::string& arguments, const char* what) {
  Status status = Status::ok;
  std::string reply = worker().exchange(op, arguments, status, what);
  if (status == Status::exception) {
    Reader in(reply);
    try {
      throw_again(in);
    } catch (const ProtocolError& e) {
      worker().fail(what, e.what());
    }
  }
  return reply;
}

namespace {

/// A call whose reply begins with a status (a cudaError_t, a cublasStatus_t); `read` takes the
/// rest.
template <class Code, class Read>
Code status_call(Op op, const Writer& arguments, const char* what, Read read) {
  return read_reply(request(op, arguments.bytes(), what), what, [&](Reader& in) {
    const auto code = static_cast<Code>(in.get<std::int32_t>());
    read(in);
    return code;
  });
}

template <class Read>
cudaError_t runtime_call(Op op, const Writer& arguments, const char* what, Read read) {
  return status_call<cudaError_t>(op, arguments, what, read);
}

cudaError_t runtime_call(Op op, const Writer& arguments, const char* what) {
  return runtime_call(op, arguments, what, [](Reader&) {});
}

/// For calls that must not throw (destructors free memory): a failed worker frees nothing.
template <class Call>
cudaError_t quietly(Call call) {
  if (worker().failed()) return cudaSuccess;
  try {
    return call();
  } catch (...) {
    return cudaErrorUnknown;
  }
}

/// For calls that destructors make (RankGroup's, DeviceGuard's), where a second exception
/// would end the judge: once the worker has failed (the test has failed with it), they do
/// nothing, as quietly() does; while an exception unwinds the stack, a failure is an error
/// code. Otherwise they fail the test as any call does.
template <class Call>
cudaError_t unwinding_safe(Call call) {
  if (worker().failed()) return cudaSuccess;
  if (std::uncaught_exceptions() > 0) {
    try {
      return call();
    } catch (...) {
      return cudaErrorUnknown;
    }
  }
  return call();
}

/// The key of `pointer` in allocations().
std::uint64_t address(const void* pointer) { return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(pointer)); }

bool is_device_pointer(const void* pointer) {
  const std::uint64_t at = address(pointer);
  auto after = allocations().upper_bound(at);
  if (after == allocations().begin()) return false;
  --after;
  return at < after->first + std::max<std::uint64_t>(after->second, 1);
}

/// Error names and sentences, asked once per code (a dead worker cannot answer: a fallback).
const char* error_text(Op op, cudaError_t error) {
  static auto* known = new std::map<std::pair<int, int>, std::string>;
  const auto key = std::make_pair(static_cast<int>(op), static_cast<int>(error));
  auto found = known->find(key);
  if (found != known->end()) return found->second.c_str();
  std::string text;
  try {
    Writer out;
    out.put<std::int32_t>(error);
    const std::string reply = request(op, out.bytes(), "cudaGetErrorString");
    Reader in(reply);
    text = in.get_string(1024);
  } catch (...) {
    return error == cudaSuccess ? "no error" : "a CUDA error (the worker could not name it)";
  }
  return known->emplace(key, text).first->second.c_str();
}

}  // namespace
}  // namespace remote

// ---- the traffic windows of course_traffic.hpp -------------------------------------------------

namespace test {
namespace detail {

void open_remote_traffic_window() {
  remote::request(remote::Op::traffic_open, std::string(), "count_global_traffic");
}

GlobalTraffic close_remote_traffic_window() {
  const char* what = "count_global_traffic";
  return remote::read_reply(remote::request(remote::Op::traffic_close, std::string(), what), what,
                            [](remote::Reader& in) { return remote::Marshal<GlobalTraffic>::get(in); });
}

void declare_remote_window_flops(double flops) {
  remote::Writer out;
  out.put(flops);
  remote::request(remote::Op::declare_window_flops, out.bytes(), "declare_window_flops");
}

}  // namespace detail
}  // namespace test
}  // namespace course

// ---- the CUDA runtime the tests call, forwarded ------------------------------------------------

using course::remote::address;
using course::remote::Op;
using course::remote::Reader;
using course::remote::runtime_call;
using course::remote::Writer;

cudaError_t cudaMalloc(void** pointer, size_t size, const char*, unsigned) {
  if (pointer == nullptr) return cudaErrorInvalidValue;
  Writer out;
  out.put<std::uint64_t>(size);
  const cudaError_t error =
      runtime_call(Op::malloc_device, out, "cudaMalloc", [&](Reader& in) { *pointer = in.get_address<void*>(); });
  if (error == cudaSuccess && *pointer != nullptr) course::remote::allocations()[address(*pointer)] = size;
  return error;
}

cudaError_t cudaFree(void* pointer) {
  if (pointer == nullptr) return cudaSuccess;
  const auto found = course::remote::allocations().find(address(pointer));
  if (found == course::remote::allocations().end()) return cudaSuccess;  // a worker that has gone
  course::remote::allocations().erase(found);
  return course::remote::quietly([&] {
    Writer out;
    out.put_address(pointer);
    return runtime_call(Op::free_device, out, "cudaFree");
  });
}

/// cudaMemcpy and cudaMemcpyAsync (`stream` not null): host bytes travel with the request (an
/// upload) or the reply (a download); a copy on the host never leaves the judge.
static cudaError_t forward_copy(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                                const cudaStream_t* stream) {
  if (stream && (kind == cudaMemcpyDefault || kind == cudaMemcpyHostToHost)) {
    // Where the direction is the judge's to find out: after the stream's work, synchronously.
    const cudaError_t waited = cudaStreamSynchronize(*stream);
    if (waited != cudaSuccess) return waited;
    stream = nullptr;
  }
  if (kind == cudaMemcpyDefault) {
    const bool device_dst = course::remote::is_device_pointer(dst), device_src = course::remote::is_device_pointer(src);
    kind = device_dst ? (device_src ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
                      : (device_src ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
  }
  if (kind == cudaMemcpyHostToHost) {
    if (count > 0) std::memmove(dst, src, count);
    return cudaSuccess;
  }
  const Op op = stream ? Op::memcpy_async : Op::memcpy;
  const char* what = stream ? "cudaMemcpyAsync" : "cudaMemcpy";
  Writer out;
  out.put_address(dst);
  out.put_address(src);
  out.put<std::uint64_t>(count);
  out.put<std::int32_t>(kind);
  if (stream) out.put_address(*stream);
  if (kind == cudaMemcpyHostToDevice) out.put_bytes(src, count);
  if (kind != cudaMemcpyDeviceToHost) return runtime_call(op, out, what);
  return runtime_call(op, out, what, [&](Reader& in) {
    const char* bytes = in.get_bytes(count);
    if (count > 0) std::memcpy(dst, bytes, count);
  });
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  return forward_copy(dst, src, count, kind, nullptr);
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind, cudaStream_t stream) {
  return forward_copy(dst, src, count, kind, &stream);
}

cudaError_t cudaMemset(void* pointer, int value, size_t count) {
  Writer out;
  out.put_address(pointer);
  out.put<std::int32_t>(value);
  out.put<std::uint64_t>(count);
  return runtime_call(Op::memset, out, "cudaMemset");
}

cudaError_t cudaMemsetAsync(void* pointer, int value, size_t count, cudaStream_t stream) {
  Writer out;
  out.put_address(pointer);
  out.put<std::int32_t>(value);
  out.put<std::uint64_t>(count);
  out.put_address(stream);
  return runtime_call(Op::memset_async, out, "cudaMemsetAsync");
}

cudaError_t cudaStreamCreate(cudaStream_t* stream) {
  if (stream == nullptr) return cudaErrorInvalidValue;
  return runtime_call(Op::stream_create, Writer(), "cudaStreamCreate", [&](Reader& in) {
    *stream = in.get_address<cudaStream_t>();
  });
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  return course::remote::quietly([&] {
    Writer out;
    out.put_address(stream);
    return runtime_call(Op::stream_destroy, out, "cudaStreamDestroy");
  });
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  // RankGroup's destructor waits for its streams: not a second exception while one unwinds.
  return course::remote::unwinding_safe([&] {
    Writer out;
    out.put_address(stream);
    return runtime_call(Op::stream_synchronize, out, "cudaStreamSynchronize");
  });
}

cudaError_t cudaDeviceSynchronize() { return runtime_call(Op::synchronize, Writer(), "cudaDeviceSynchronize"); }
cudaError_t cudaGetLastError() { return runtime_call(Op::get_last_error, Writer(), "cudaGetLastError"); }
cudaError_t cudaPeekAtLastError() { return runtime_call(Op::peek_last_error, Writer(), "cudaPeekAtLastError"); }
const char* cudaGetErrorName(cudaError_t error) { return course::remote::error_text(Op::error_name, error); }
const char* cudaGetErrorString(cudaError_t error) { return course::remote::error_text(Op::error_string, error); }

cudaError_t cudaGetDevice(int* device) {
  if (device == nullptr) return cudaErrorInvalidValue;
  return course::remote::unwinding_safe([&] {  // DeviceGuard, in destructors too
    if (course::remote::worker().current_device() >= 0) {
      *device = course::remote::worker().current_device();
      return cudaSuccess;
    }
    const cudaError_t error = runtime_call(Op::get_device, Writer(), "cudaGetDevice",
                                           [&](Reader& in) { *device = in.get<std::int32_t>(); });
    if (error == cudaSuccess) course::remote::worker().set_current_device(*device);
    return error;
  });
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attribute, int device) {
  if (value == nullptr) return cudaErrorInvalidValue;
  Writer out;
  out.put<std::int32_t>(attribute);
  out.put<std::int32_t>(device);
  return runtime_call(Op::device_attribute, out, "cudaDeviceGetAttribute",
                      [&](Reader& in) { *value = in.get<std::int32_t>(); });
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* properties, int device) {
  if (properties == nullptr) return cudaErrorInvalidValue;
  Writer out;
  out.put<std::int32_t>(device);
  return runtime_call(Op::device_properties, out, "cudaGetDeviceProperties",
                      [&](Reader& in) { *properties = in.get<cudaDeviceProp>(); });
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  if (event == nullptr) return cudaErrorInvalidValue;
  return runtime_call(Op::event_create, Writer(), "cudaEventCreate", [&](Reader& in) {
    *event = in.get_address<cudaEvent_t>();
  });
}

static cudaError_t forward_event(Op op, cudaEvent_t event, const char* what) {
  Writer out;
  out.put_address(event);
  return runtime_call(op, out, what);
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  Writer out;
  out.put_address(event);
  out.put_address(stream);
  return runtime_call(Op::event_record, out, "cudaEventRecord");
}
cudaError_t cudaEventSynchronize(cudaEvent_t event) { return forward_event(Op::event_synchronize, event, "cudaEventSynchronize"); }
cudaError_t cudaEventDestroy(cudaEvent_t event) {
  return course::remote::quietly([&] { return forward_event(Op::event_destroy, event, "cudaEventDestroy"); });
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t stop) {
  if (ms == nullptr) return cudaErrorInvalidValue;
  Writer out;
  out.put_address(start);
  out.put_address(stop);
  return runtime_call(Op::event_elapsed, out, "cudaEventElapsedTime", [&](Reader& in) { *ms = in.get<float>(); });
}

// ---- several devices (lesson 05's ranks.hpp) ------------------------------------------------------

cudaError_t cudaGetDeviceCount(int* count) {
  if (count == nullptr) return cudaErrorInvalidValue;
  return runtime_call(Op::get_device_count, Writer(), "cudaGetDeviceCount",
                      [&](Reader& in) { *count = in.get<std::int32_t>(); });
}

cudaError_t cudaSetDevice(int device) {
  return course::remote::unwinding_safe([&] {
    if (device >= 0 && device == course::remote::worker().current_device()) return cudaSuccess;
    Writer out;
    out.put<std::int32_t>(device);
    const cudaError_t error = runtime_call(Op::set_device, out, "cudaSetDevice");
    if (error == cudaSuccess) course::remote::worker().set_current_device(device);
    return error;
  });
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned flags) {
  if (stream == nullptr) return cudaErrorInvalidValue;
  Writer out;
  out.put<std::uint32_t>(flags);
  return runtime_call(Op::stream_create_with_flags, out, "cudaStreamCreateWithFlags",
                      [&](Reader& in) { *stream = in.get_address<cudaStream_t>(); });
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned flags) {
  if (event == nullptr) return cudaErrorInvalidValue;
  Writer out;
  out.put<std::uint32_t>(flags);
  return runtime_call(Op::event_create_with_flags, out, "cudaEventCreateWithFlags",
                      [&](Reader& in) { *event = in.get_address<cudaEvent_t>(); });
}

cudaError_t cudaDeviceCanAccessPeer(int* can_access, int device, int peer) {
  if (can_access == nullptr) return cudaErrorInvalidValue;
  Writer out;
  out.put<std::int32_t>(device);
  out.put<std::int32_t>(peer);
  return runtime_call(Op::device_can_access_peer, out, "cudaDeviceCanAccessPeer",
                      [&](Reader& in) { *can_access = in.get<std::int32_t>(); });
}

cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned flags) {
  Writer out;
  out.put<std::int32_t>(peer);
  out.put<std::uint32_t>(flags);
  return runtime_call(Op::device_enable_peer_access, out, "cudaDeviceEnablePeerAccess");
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned flags) {
  Writer out;
  out.put_address(stream);
  out.put_address(event);
  out.put<std::uint32_t>(flags);
  return runtime_call(Op::stream_wait_event, out, "cudaStreamWaitEvent");
}

cudaError_t cudaMemcpyPeerAsync(void* dst, int dst_device, const void* src, int src_device, size_t count,
                                cudaStream_t stream) {
  Writer out;
  out.put_address(dst);
  out.put<std::int32_t>(dst_device);
  out.put_address(src);
  out.put<std::int32_t>(src_device);
  out.put<std::uint64_t>(count);
  out.put_address(stream);
  return runtime_call(Op::memcpy_peer_async, out, "cudaMemcpyPeerAsync");
}

namespace cudasim {

void reset_stats() {
  const char* what = "reset_link_counters";
  course::remote::read_reply(course::remote::request(Op::reset_stats, std::string(), what), what, [](Reader&) {});
}

/// The worker's link counters: at most one entry per ordered pair of the 64 devices the
/// simulator allows.
std::vector<LinkTraffic> link_stats() {
  const char* what = "read_link_counters";
  return course::remote::read_reply(course::remote::request(Op::link_stats, std::string(), what), what,
                                    [](Reader& in) {
                                      const auto count = in.get<std::uint64_t>();
                                      if (count > 64 * 64) throw course::remote::ProtocolError("too many links");
                                      std::vector<LinkTraffic> links(static_cast<std::size_t>(count));
                                      for (LinkTraffic& link : links) {
                                        link.source = in.get<std::int32_t>();
                                        link.destination = in.get<std::int32_t>();
                                        link.bytes = in.get<std::uint64_t>();
                                      }
                                      return links;
                                    });
}

}  // namespace cudasim

// ---- cuBLAS handles, for exercises that may call cuBLAS ------------------------------------------

template <class Read>
static cublasStatus_t cublas_call(Op op, const Writer& arguments, const char* what, Read read) {
  return course::remote::status_call<cublasStatus_t>(op, arguments, what, read);
}

cublasStatus_t cublasCreate(cublasHandle_t* blas) {
  if (blas == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  return cublas_call(Op::cublas_create, Writer(), "cublasCreate", [&](Reader& in) {
    *blas = in.get_address<cublasHandle_t>();
  });
}

cublasStatus_t cublasDestroy(cublasHandle_t blas) {
  Writer out;
  out.put_address(blas);
  try {
    return cublas_call(Op::cublas_destroy, out, "cublasDestroy", [](Reader&) {});
  } catch (...) {
    return CUBLAS_STATUS_NOT_INITIALIZED;  // the worker has gone, and its handles with it
  }
}

cublasStatus_t cublasSetStream(cublasHandle_t blas, cudaStream_t stream) {
  Writer out;
  out.put_address(blas);
  out.put_address(stream);
  return cublas_call(Op::cublas_set_stream, out, "cublasSetStream", [](Reader&) {});
}

const char* cublasGetStatusName(cublasStatus_t status) {
  return course::remote::error_text(Op::cublas_status_name, static_cast<cudaError_t>(status));
}
const char* cublasGetStatusString(cublasStatus_t status) {
  return course::remote::error_text(Op::cublas_status_string, static_cast<cudaError_t>(status));
}
