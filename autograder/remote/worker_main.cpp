// The worker: the process that runs the submission for the judge (course_remote.hpp).
//
// Linked with the submission's translation units, the exercise's remote_<name>.cpp (which
// registers a handler per contract function) and the real runtime. It answers requests on
// file descriptor 3, which the judge set up, until the judge closes it. Nothing it says is
// trusted: the judge reads every reply as untrusted data, and decides nothing from what this
// process claims about itself (a pass, a time, a score).
#define COURSE_REMOTE_WORKER 1
#include "course_remote.hpp"

#include <cuda_runtime.h>

#include "course_traffic.hpp"
#include "remote_traffic.hpp"
#include "cuda_check.hpp"
#ifdef CUDASIM
#include <cudasim/link_model.hpp>
#include <cudasim/stats.hpp>
#endif

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <new>
#include <string>
#include <vector>

namespace course {
namespace remote {
namespace {

constexpr int kChannel = 3;

std::map<std::string, Handler>& handlers() {
  static std::map<std::string, Handler> all;
  return all;
}

/// A reply carries the request's nonce back: the judge accepts no reply to a request it has
/// not sent yet (see RequestHeader).
bool send_reply(Status status, std::uint64_t nonce, const std::string& payload) {
  const ReplyHeader header{static_cast<std::uint32_t>(status), nonce, payload.size()};
  std::string message(reinterpret_cast<const char*>(&header), sizeof header);
  message += payload;  // one write per reply
  return write_fully(kChannel, message.data(), message.size());
}

// ---- the runtime requests: each reads its arguments and writes its results -------------------

void put_error(Writer& out, cudaError_t error) { out.put<std::int32_t>(static_cast<std::int32_t>(error)); }

// The simulator's counters of ranks.hpp (reset_link_counters, read_link_counters); on a GPU
// there are none, and ranks.hpp does not ask.
void cudasim_reset_stats() {
#ifdef CUDASIM
  cudasim::reset_stats();
#endif
}

void put_link_stats(Writer& out) {
#ifdef CUDASIM
  const std::vector<cudasim::LinkTraffic> links = cudasim::link_stats();
  out.put<std::uint64_t>(links.size());
  for (const cudasim::LinkTraffic& link : links) {
    out.put<std::int32_t>(link.source);
    out.put<std::int32_t>(link.destination);
    out.put<std::uint64_t>(link.bytes);
  }
#else
  out.put<std::uint64_t>(0);
#endif
}

void handle_runtime(Op op, Reader& in, Writer& out) {
  switch (op) {
    case Op::malloc_device: {  // size -> error, pointer
      const auto size = in.get<std::uint64_t>();
      void* pointer = nullptr;
      put_error(out, cudaMalloc(&pointer, static_cast<std::size_t>(size)));
      out.put_address(pointer);
      return;
    }
    case Op::free_device: put_error(out, cudaFree(in.get_address<void*>())); return;  // pointer -> error
    case Op::memcpy:
    case Op::memcpy_async: {  // dst, src, count, kind, [stream], [bytes] -> error, [bytes]
      void* dst = in.get_address<void*>();
      const void* src = in.get_address<const void*>();
      const auto count = static_cast<std::size_t>(in.get<std::uint64_t>());
      const auto kind = static_cast<cudaMemcpyKind>(in.get<std::int32_t>());
      const bool async = op == Op::memcpy_async;
      const cudaStream_t stream = async ? in.get_address<cudaStream_t>() : nullptr;
      // An asynchronous upload or download is complete before the reply: the judge reads the
      // downloaded bytes, and sent the uploaded ones in this request.
      const auto copy = [&](void* to, const void* from) {
        if (!async) return cudaMemcpy(to, from, count, kind);
        const cudaError_t queued = cudaMemcpyAsync(to, from, count, kind, stream);
        const bool crosses = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToHost;
        return queued == cudaSuccess && crosses ? cudaStreamSynchronize(stream) : queued;
      };
      if (kind == cudaMemcpyHostToDevice) {
        put_error(out, copy(dst, in.get_bytes(count)));
      } else if (kind == cudaMemcpyDeviceToHost) {
        std::string bytes(count, '\0');
        put_error(out, copy(&bytes[0], src));
        out.put_bytes(bytes.data(), bytes.size());
      } else {
        put_error(out, copy(dst, src));
      }
      return;
    }
    case Op::memset:
    case Op::memset_async: {  // pointer, value, count, [stream] -> error
      void* pointer = in.get_address<void*>();
      const int value = in.get<std::int32_t>();
      const auto count = static_cast<std::size_t>(in.get<std::uint64_t>());
      if (op == Op::memset) put_error(out, cudaMemset(pointer, value, count));
      else put_error(out, cudaMemsetAsync(pointer, value, count, in.get_address<cudaStream_t>()));
      return;
    }
    case Op::stream_create: {  // -> error, stream
      cudaStream_t stream = nullptr;
      put_error(out, cudaStreamCreate(&stream));
      out.put_address(stream);
      return;
    }
    case Op::stream_destroy: put_error(out, cudaStreamDestroy(in.get_address<cudaStream_t>())); return;
    case Op::stream_synchronize: put_error(out, cudaStreamSynchronize(in.get_address<cudaStream_t>())); return;
#ifdef COURSE_REMOTE_CUBLAS
    case Op::cublas_create: {  // -> status, handle
      cublasHandle_t blas = nullptr;
      out.put<std::int32_t>(cublasCreate(&blas));
      out.put_address(blas);
      return;
    }
    case Op::cublas_destroy: out.put<std::int32_t>(cublasDestroy(in.get_address<cublasHandle_t>())); return;
    case Op::cublas_set_stream: {  // handle, stream -> status
      const cublasHandle_t blas = in.get_address<cublasHandle_t>();
      out.put<std::int32_t>(cublasSetStream(blas, in.get_address<cudaStream_t>()));
      return;
    }
    case Op::cublas_status_name:
    case Op::cublas_status_string: {  // status -> text
      const auto status = static_cast<cublasStatus_t>(in.get<std::int32_t>());
      const char* text = op == Op::cublas_status_name ? cublasGetStatusName(status) : cublasGetStatusString(status);
      out.put_string(text ? text : "");
      return;
    }
#else
    case Op::cublas_create:
    case Op::cublas_destroy:
    case Op::cublas_set_stream:
    case Op::cublas_status_name:
    case Op::cublas_status_string:
      throw ProtocolError("this exercise does not use cuBLAS");
#endif
    case Op::synchronize: put_error(out, cudaDeviceSynchronize()); return;
    case Op::get_last_error: put_error(out, cudaGetLastError()); return;
    case Op::peek_last_error: put_error(out, cudaPeekAtLastError()); return;
    case Op::error_name:
    case Op::error_string: {  // error -> text
      const auto error = static_cast<cudaError_t>(in.get<std::int32_t>());
      const char* text = op == Op::error_name ? cudaGetErrorName(error) : cudaGetErrorString(error);
      out.put_string(text ? text : "");
      return;
    }
    case Op::get_device: {  // -> error, device
      int device = 0;
      put_error(out, cudaGetDevice(&device));
      out.put<std::int32_t>(device);
      return;
    }
    case Op::device_attribute: {  // attribute, device -> error, value
      const auto attribute = static_cast<cudaDeviceAttr>(in.get<std::int32_t>());
      const int device = in.get<std::int32_t>();
      int value = 0;
      put_error(out, cudaDeviceGetAttribute(&value, attribute, device));
      out.put<std::int32_t>(value);
      return;
    }
    case Op::device_properties: {  // device -> error, cudaDeviceProp
      cudaDeviceProp properties{};
      put_error(out, cudaGetDeviceProperties(&properties, in.get<std::int32_t>()));
      out.put(properties);
      return;
    }
    case Op::event_create: {  // -> error, event
      cudaEvent_t event = nullptr;
      put_error(out, cudaEventCreate(&event));
      out.put_address(event);
      return;
    }
    case Op::event_record: {  // event, stream -> error
      const auto event = in.get_address<cudaEvent_t>();
      put_error(out, cudaEventRecord(event, in.get_address<cudaStream_t>()));
      return;
    }
    case Op::event_synchronize:
    case Op::event_destroy: {  // event -> error
      const auto event = in.get_address<cudaEvent_t>();
      put_error(out, op == Op::event_synchronize ? cudaEventSynchronize(event) : cudaEventDestroy(event));
      return;
    }
    case Op::event_elapsed: {  // start, stop -> error, milliseconds
      const auto start = in.get_address<cudaEvent_t>();
      const auto stop = in.get_address<cudaEvent_t>();
      float ms = 0;
      put_error(out, cudaEventElapsedTime(&ms, start, stop));
      out.put(ms);
      return;
    }
    case Op::get_device_count: {  // -> error, count
      int count = 0;
      put_error(out, cudaGetDeviceCount(&count));
      out.put<std::int32_t>(count);
      return;
    }
    case Op::set_device: put_error(out, cudaSetDevice(in.get<std::int32_t>())); return;  // device -> error
    case Op::stream_create_with_flags: {  // flags -> error, stream
      cudaStream_t stream = nullptr;
      put_error(out, cudaStreamCreateWithFlags(&stream, in.get<std::uint32_t>()));
      out.put_address(stream);
      return;
    }
    case Op::event_create_with_flags: {  // flags -> error, event
      cudaEvent_t event = nullptr;
      put_error(out, cudaEventCreateWithFlags(&event, in.get<std::uint32_t>()));
      out.put_address(event);
      return;
    }
    case Op::device_can_access_peer: {  // device, peer -> error, can
      const int device = in.get<std::int32_t>();
      const int peer = in.get<std::int32_t>();
      int can = 0;
      put_error(out, cudaDeviceCanAccessPeer(&can, device, peer));
      out.put<std::int32_t>(can);
      return;
    }
    case Op::device_enable_peer_access: {  // peer, flags -> error
      const int peer = in.get<std::int32_t>();
      put_error(out, cudaDeviceEnablePeerAccess(peer, in.get<std::uint32_t>()));
      return;
    }
    case Op::stream_wait_event: {  // stream, event, flags -> error
      const auto stream = in.get_address<cudaStream_t>();
      const auto event = in.get_address<cudaEvent_t>();
      put_error(out, cudaStreamWaitEvent(stream, event, in.get<std::uint32_t>()));
      return;
    }
    case Op::memcpy_peer_async: {  // dst, dst device, src, src device, count, stream -> error
      void* dst = in.get_address<void*>();
      const int dst_device = in.get<std::int32_t>();
      const void* src = in.get_address<const void*>();
      const int src_device = in.get<std::int32_t>();
      const auto count = static_cast<std::size_t>(in.get<std::uint64_t>());
      put_error(out, cudaMemcpyPeerAsync(dst, dst_device, src, src_device, count, in.get_address<cudaStream_t>()));
      return;
    }
    case Op::reset_stats: cudasim_reset_stats(); return;
    case Op::link_stats: put_link_stats(out); return;  // -> count, (source, destination, bytes)...
    case Op::traffic_open: course::test::detail::open_local_traffic_window(); return;
    case Op::traffic_close:  // -> the window's summary
      Marshal<course::test::GlobalTraffic>::put(out, course::test::detail::close_local_traffic_window());
      return;
    case Op::declare_window_flops: course::test::detail::declare_local_window_flops(in.get<double>()); return;
    case Op::call: break;
  }
  throw ProtocolError("unknown request " + std::to_string(static_cast<std::uint32_t>(op)));
}

void handle_call(Reader& in, Writer& out) {
  const std::string name = in.get_string();
  const auto found = handlers().find(name);
  if (found == handlers().end()) throw ProtocolError("no contract function named " + name);
  found->second(in, out);
}

/// What the submission threw, as the judge will throw it again.
std::string exception_reply(ExceptionKind kind, std::int32_t code, const std::string& message) {
  Writer out;
  out.put(static_cast<std::uint32_t>(kind));
  out.put(code);
  out.put_string(message.substr(0, kMaxStringBytes));
  return out.bytes();
}

/// Runs one request; what it threw becomes an exception reply.
Status run(Op op, Reader& in, Writer& out) {
  try {
    if (op == Op::call) handle_call(in, out);
    else handle_runtime(op, in, out);
    return Status::ok;
  } catch (const course::CudaError& e) {
    out = Writer(exception_reply(ExceptionKind::cuda_error, e.code(), e.what()));
#ifdef COURSE_HAVE_CUBLAS
  } catch (const course::CublasError& e) {
    out = Writer(exception_reply(ExceptionKind::cublas_error, e.status(), e.what()));
#endif
  } catch (const std::invalid_argument& e) {
    out = Writer(exception_reply(ExceptionKind::invalid_argument, 0, e.what()));
  } catch (const std::out_of_range& e) {
    out = Writer(exception_reply(ExceptionKind::out_of_range, 0, e.what()));
  } catch (const std::length_error& e) {
    out = Writer(exception_reply(ExceptionKind::length_error, 0, e.what()));
  } catch (const std::domain_error& e) {
    out = Writer(exception_reply(ExceptionKind::domain_error, 0, e.what()));
  } catch (const std::logic_error& e) {
    out = Writer(exception_reply(ExceptionKind::logic_error, 0, e.what()));
  } catch (const std::runtime_error& e) {
    out = Writer(exception_reply(ExceptionKind::runtime_error, 0, e.what()));
  } catch (const std::bad_alloc& e) {
    out = Writer(exception_reply(ExceptionKind::bad_alloc, 0, e.what()));
  } catch (const std::exception& e) {
    out = Writer(exception_reply(ExceptionKind::other_std, 0, e.what()));
  } catch (...) {
    out = Writer(exception_reply(ExceptionKind::not_std, 0, "an exception that is not a std::exception"));
  }
  return Status::exception;
}

/// One request: runs it and answers. False when the judge has gone.
bool serve_one() {
  RequestHeader header{};
  if (!read_fully(kChannel, &header, sizeof header) || header.size > kMaxMessageBytes) return false;
  std::string payload(static_cast<std::size_t>(header.size), '\0');
  if (!read_fully(kChannel, &payload[0], payload.size())) return false;
  Reader in(payload);
  Writer out;
  const Status status = run(static_cast<Op>(header.op), in, out);
  return send_reply(status, header.nonce, out.bytes());
}

}  // namespace

bool register_handler(const char* name, Handler handler) {
  handlers()[name] = handler;
  return true;
}

}  // namespace remote
}  // namespace course

int main() {
  struct stat channel {};
  if (::fstat(course::remote::kChannel, &channel) != 0 || !S_ISSOCK(channel.st_mode)) {
    std::fprintf(stderr, "this is a grader's worker process: the judge starts it (autograder/remote/)\n");
    return 2;
  }
  while (course::remote::serve_one()) {
  }
  return 0;
}
