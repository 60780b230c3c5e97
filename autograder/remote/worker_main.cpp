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
#include "cuda_check.hpp"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <new>
#include <string>

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
  return write_fully(kChannel, &header, sizeof header) && write_fully(kChannel, payload.data(), payload.size());
}

// ---- the runtime requests: each reads its arguments and writes its results -------------------

/// A handle (stream, event, cuBLAS handle) that crossed as the worker's own value.
template <class Handle>
Handle handle(Reader& in) {
  return reinterpret_cast<Handle>(static_cast<std::uintptr_t>(in.get<std::uint64_t>()));
}

void put_error(Writer& out, cudaError_t error) { out.put<std::int32_t>(static_cast<std::int32_t>(error)); }

void handle_runtime(Op op, Reader& in, Writer& out) {
  switch (op) {
    case Op::malloc_device: {  // size -> error, pointer
      const auto size = in.get<std::uint64_t>();
      void* pointer = nullptr;
      put_error(out, cudaMalloc(&pointer, static_cast<std::size_t>(size)));
      out.put<std::uint64_t>(reinterpret_cast<std::uintptr_t>(pointer));
      return;
    }
    case Op::free_device:  // pointer -> error
      put_error(out, cudaFree(reinterpret_cast<void*>(static_cast<std::uintptr_t>(in.get<std::uint64_t>()))));
      return;
    case Op::memcpy: {  // dst, src, count, kind, [bytes] -> error, [bytes]
      const auto dst = static_cast<std::uintptr_t>(in.get<std::uint64_t>());
      const auto src = static_cast<std::uintptr_t>(in.get<std::uint64_t>());
      const auto count = static_cast<std::size_t>(in.get<std::uint64_t>());
      const auto kind = static_cast<cudaMemcpyKind>(in.get<std::int32_t>());
      if (kind == cudaMemcpyHostToDevice) {
        const char* bytes = in.get_bytes(count);
        put_error(out, cudaMemcpy(reinterpret_cast<void*>(dst), bytes, count, kind));
      } else if (kind == cudaMemcpyDeviceToHost) {
        std::string bytes(count, '\0');
        const cudaError_t error = cudaMemcpy(&bytes[0], reinterpret_cast<const void*>(src), count, kind);
        put_error(out, error);
        out.put_bytes(bytes.data(), bytes.size());
      } else {
        put_error(out, cudaMemcpy(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), count, kind));
      }
      return;
    }
    case Op::memcpy_async: {  // dst, src, count, kind, stream, [bytes] -> error, [bytes]; waits for the stream
      const auto dst = static_cast<std::uintptr_t>(in.get<std::uint64_t>());
      const auto src = static_cast<std::uintptr_t>(in.get<std::uint64_t>());
      const auto count = static_cast<std::size_t>(in.get<std::uint64_t>());
      const auto kind = static_cast<cudaMemcpyKind>(in.get<std::int32_t>());
      const cudaStream_t stream = handle<cudaStream_t>(in);
      if (kind == cudaMemcpyHostToDevice) {
        const char* bytes = in.get_bytes(count);
        const cudaError_t error = cudaMemcpyAsync(reinterpret_cast<void*>(dst), bytes, count, kind, stream);
        put_error(out, error != cudaSuccess ? error : cudaStreamSynchronize(stream));
      } else if (kind == cudaMemcpyDeviceToHost) {
        std::string bytes(count, '\0');
        cudaError_t error = cudaMemcpyAsync(&bytes[0], reinterpret_cast<const void*>(src), count, kind, stream);
        if (error == cudaSuccess) error = cudaStreamSynchronize(stream);
        put_error(out, error);
        out.put_bytes(bytes.data(), bytes.size());
      } else {
        put_error(out, cudaMemcpyAsync(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), count, kind,
                                       stream));
      }
      return;
    }
    case Op::memset:
    case Op::memset_async: {  // pointer, value, count, [stream] -> error
      void* pointer = reinterpret_cast<void*>(static_cast<std::uintptr_t>(in.get<std::uint64_t>()));
      const int value = in.get<std::int32_t>();
      const auto count = static_cast<std::size_t>(in.get<std::uint64_t>());
      if (op == Op::memset) put_error(out, cudaMemset(pointer, value, count));
      else put_error(out, cudaMemsetAsync(pointer, value, count, handle<cudaStream_t>(in)));
      return;
    }
    case Op::stream_create: {  // -> error, stream
      cudaStream_t stream = nullptr;
      put_error(out, cudaStreamCreate(&stream));
      out.put<std::uint64_t>(reinterpret_cast<std::uintptr_t>(stream));
      return;
    }
    case Op::stream_destroy: put_error(out, cudaStreamDestroy(handle<cudaStream_t>(in))); return;
    case Op::stream_synchronize: put_error(out, cudaStreamSynchronize(handle<cudaStream_t>(in))); return;
#ifdef COURSE_REMOTE_CUBLAS
    case Op::cublas_create: {  // -> status, handle
      cublasHandle_t blas = nullptr;
      out.put<std::int32_t>(cublasCreate(&blas));
      out.put<std::uint64_t>(reinterpret_cast<std::uintptr_t>(blas));
      return;
    }
    case Op::cublas_destroy: out.put<std::int32_t>(cublasDestroy(handle<cublasHandle_t>(in))); return;
    case Op::cublas_set_stream: {  // handle, stream -> status
      const cublasHandle_t blas = handle<cublasHandle_t>(in);
      out.put<std::int32_t>(cublasSetStream(blas, handle<cudaStream_t>(in)));
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
      out.put<std::uint64_t>(reinterpret_cast<std::uintptr_t>(event));
      return;
    }
    case Op::event_record: {  // event, stream -> error
      const auto event = handle<cudaEvent_t>(in);
      put_error(out, cudaEventRecord(event, handle<cudaStream_t>(in)));
      return;
    }
    case Op::event_synchronize:
    case Op::event_destroy: {  // event -> error
      const auto event = handle<cudaEvent_t>(in);
      put_error(out, op == Op::event_synchronize ? cudaEventSynchronize(event) : cudaEventDestroy(event));
      return;
    }
    case Op::event_elapsed: {  // start, stop -> error, milliseconds
      const auto start = reinterpret_cast<cudaEvent_t>(static_cast<std::uintptr_t>(in.get<std::uint64_t>()));
      const auto stop = reinterpret_cast<cudaEvent_t>(static_cast<std::uintptr_t>(in.get<std::uint64_t>()));
      float ms = 0;
      put_error(out, cudaEventElapsedTime(&ms, start, stop));
      out.put(ms);
      return;
    }
    case Op::traffic_open: course::test::detail::open_local_traffic_window(); return;
    case Op::traffic_close: {  // -> the window's summary (judge_runtime.cpp reads it back)
      const course::test::GlobalTraffic t = course::test::detail::close_local_traffic_window();
      out.put<std::uint8_t>(t.counted ? 1 : 0);
      out.put_string(t.why_not);
      for (std::uint64_t v : {t.kernel_launch_calls, t.graph_launch_calls, t.load_bytes, t.store_bytes, t.launches, t.blocks, t.threads, t.atomic_bytes,
                              t.global_atomics, t.max_atomics_same_address, t.shared_bytes, t.warp_ops,
                              t.barrier_arrivals, t.mma_ops, t.requests, t.sectors, t.span_global_ops,
                              t.span_shared_ops})
        out.put(v);
      for (std::uint64_t v : t.accesses_by_width) out.put(v);
      for (double v : {t.modelled_ns, t.launch_ns, t.memory_ns, t.compute_ns, t.span_ns, t.atomic_ns}) out.put(v);
      out.put_string(t.gpu);
      return;
    }
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
