// The worker: the process that runs the submission for the judge (course_remote.hpp).
//
// Linked with the submission's translation units, the exercise's remote_<name>.cpp (which
// registers a handler per contract function) and the real runtime. It answers requests on
// file descriptor 3, which the judge set up, until the judge closes it. Nothing it says is
// trusted: the judge reads every reply as untrusted data, and decides nothing from what this
// process claims about itself (a pass, a time, a score).
//
// The main thread reads the channel and hands each request to the thread of its lane
// (course_remote.hpp): one thread per judge thread, started at the lane's first request, so
// that what CUDA keeps per host thread stays per thread. A thread of the submission that calls
// one of the test's functions back (invoke_callback) opens a lane of its own.
//
// Page-locked host memory comes from the region the judge shares (descriptor 4, mapped at the
// address the judge names on the command line), so that the judge can read and write it.
#define COURSE_REMOTE_WORKER 1
#include "course_remote.hpp"

#include <cuda_runtime.h>

#include "course_traffic.hpp"
#include "remote_traffic.hpp"
#include "cuda_check.hpp"
#ifdef CUDASIM
#include "remote_cudasim.hpp"

#include <cudasim/host_memory.hpp>
#include <cudasim/link_model.hpp>
#include <cudasim/stats.hpp>
#endif

#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace course {
namespace remote {
namespace {

constexpr int kChannel = 3;
constexpr int kSharedMemoryFile = 4;
/// The worker's exit status when it cannot map the judge's shared host memory (the judge names
/// it in its failure message).
constexpr int kNoSharedMemory = 126;

std::map<std::string, Handler>& handlers() {
  static std::map<std::string, Handler> all;
  return all;
}

Sender& sender() {
  static Sender* one = new Sender(kChannel);
  return *one;
}

Mailboxes& boxes() {
  static Mailboxes* one = new Mailboxes;
  return *one;
}

/// The lane the calling thread talks on; 0 until it has one.
thread_local std::uint64_t t_lane = 0;

// ---- the shared host memory ---------------------------------------------------------------

SharedHostMemory g_shared;

/// Page-locked allocations in the shared region: page-aligned, first fit.
class SharedHostAllocator {
 public:
  void* allocate(std::size_t size) {
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const std::size_t bytes = (std::max<std::size_t>(size, 1) + page - 1) / page * page;
    std::lock_guard<std::mutex> lock(mutex_);
    if (!started_) {
      free_[0] = g_shared.bytes;
      started_ = true;
    }
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->second < bytes) continue;
      const std::size_t offset = it->first, left = it->second - bytes;
      free_.erase(it);
      if (left > 0) free_[offset + bytes] = left;
      used_[offset] = bytes;
      return g_shared.base + offset;
    }
    return nullptr;
  }
  bool release(void* pointer) {
    if (!g_shared.contains(pointer, 1)) return false;
    std::lock_guard<std::mutex> lock(mutex_);
    const auto found = used_.find(static_cast<std::size_t>(static_cast<char*>(pointer) - g_shared.base));
    if (found == used_.end()) return false;
    std::size_t offset = found->first, bytes = found->second;
    used_.erase(found);
    auto after = free_.lower_bound(offset);
    if (after != free_.end() && offset + bytes == after->first) {  // joins the free range after it
      bytes += after->second;
      after = free_.erase(after);
    }
    if (after != free_.begin()) {
      auto before = std::prev(after);
      if (before->first + before->second == offset) {  // ... and the one before it
        before->second += bytes;
        return true;
      }
    }
    free_[offset] = bytes;
    return true;
  }

 private:
  std::mutex mutex_;
  bool started_ = false;
  std::map<std::size_t, std::size_t> free_, used_;  // offset -> bytes
};

SharedHostAllocator& shared_allocator() {
  static SharedHostAllocator* one = new SharedHostAllocator;
  return *one;
}

/// Maps the region the judge shares (`--shared-host-memory ADDRESS BYTES`, descriptor 4) at
/// its address, and makes the runtime take page-locked memory from it. Without the option,
/// page-locked memory is the runtime's own. Exits when the region cannot be mapped there:
/// the judge could not see the submission's host memory.
void map_shared_host_memory(int argc, char** argv) {
  if (argc != 4 || std::strcmp(argv[1], "--shared-host-memory") != 0) return;
  const auto address = static_cast<std::uintptr_t>(std::strtoull(argv[2], nullptr, 0));
  const auto bytes = static_cast<std::size_t>(std::strtoull(argv[3], nullptr, 0));
  void* wanted = reinterpret_cast<void*>(address);
  void* got = ::mmap(wanted, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED_NOREPLACE, kSharedMemoryFile, 0);
  ::close(kSharedMemoryFile);
  if (got != wanted) {
    std::fprintf(stderr, "worker: cannot map the judge's shared host memory at %p: %s\n", wanted,
                 got == MAP_FAILED ? std::strerror(errno) : "the address is taken");
    std::_Exit(kNoSharedMemory);
  }
  g_shared.base = static_cast<char*>(got);
  g_shared.bytes = bytes;
#ifdef CUDASIM
  cudasim::set_pinned_allocator(cudasim::PinnedAllocator{
      [](std::size_t size) { return shared_allocator().allocate(size); },
      [](void* pointer) { return shared_allocator().release(pointer); }});
#endif
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

/// The simulator's own API, as lesson 04's tests use it (remote_cudasim.hpp).
void handle_simulator(Op op, Reader& in, Writer& out) {
#ifdef CUDASIM
  switch (op) {
    case Op::sim_host_link: Marshal<cudasim::LinkModel>::put(out, cudasim::host_link()); return;  // -> link
    case Op::sim_set_host_link: out.put<std::uint8_t>(cudasim::set_host_link(in.get_string()) ? 1 : 0); return;  // name -> known
    case Op::sim_peer_link: Marshal<cudasim::LinkModel>::put(out, cudasim::peer_link()); return;  // -> link
    case Op::sim_set_peer_link:  // link -> accepted
      out.put<std::uint8_t>(cudasim::set_peer_link(Marshal<cudasim::LinkModel>::get(in)) ? 1 : 0);
      return;
    case Op::sim_transfer_stats: out.put(cudasim::transfer_stats()); return;  // -> TransferStats
    case Op::sim_kernel_stats: Marshal<std::vector<cudasim::KernelStats>>::put(out, cudasim::kernel_stats()); return;
    case Op::sim_timeline: Marshal<std::vector<cudasim::TimelineSpan>>::put(out, cudasim::timeline()); return;
    case Op::sim_reset_timeline: cudasim::reset_timeline(); return;
    case Op::sim_set_host_clock: cudasim::set_host_clock(static_cast<cudasim::HostClock>(in.get<std::int32_t>())); return;
    case Op::sim_set_model_time: cudasim::set_model_time(in.get<std::uint8_t>() != 0); return;
    case Op::sim_host_time: out.put(cudasim::host_time_ns()); return;  // -> ns
    case Op::sim_spend_host_time: cudasim::spend_host_time(in.get<double>()); return;  // ns
    case Op::sim_modelled_gpu: {  // -> name, description, FP32, tensor, memory, SMs
      const cudasim::GpuSpec& gpu = cudasim::modelled_gpu();
      out.put_string(gpu.name);
      out.put_string(gpu.description);
      out.put(gpu.fp32_flops_per_s);
      out.put(gpu.tensor_flops_per_s);
      out.put(gpu.memory_bytes_per_s);
      out.put<std::int32_t>(gpu.sms);
      return;
    }
    default: break;
  }
#else
  (void)in;
  (void)out;
#endif
  throw ProtocolError("the simulator's request " + std::to_string(static_cast<std::uint32_t>(op)) +
                      " where no simulator runs");
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
        // The status goes first, and is known once the bytes have been copied into their place.
        const std::size_t status_at = out.size();
        put_error(out, cudaSuccess);
        char* bytes = out.put_bytes_in_place(count);
        out.put_at<std::int32_t>(status_at, copy(bytes, src));
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
    case Op::device_reset: put_error(out, cudaDeviceReset()); return;
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
    case Op::pointer_attributes: {  // pointer -> error, type, device, device pointer, host pointer
      cudaPointerAttributes attributes{};
      put_error(out, cudaPointerGetAttributes(&attributes, in.get_address<const void*>()));
      out.put<std::int32_t>(attributes.type);
      out.put<std::int32_t>(attributes.device);
      out.put_address(attributes.devicePointer);
      out.put_address(attributes.hostPointer);
      return;
    }
    case Op::stream_query: put_error(out, cudaStreamQuery(in.get_address<cudaStream_t>())); return;  // stream -> error
    case Op::sim_host_link:
    case Op::sim_set_host_link:
    case Op::sim_transfer_stats:
    case Op::sim_kernel_stats:
    case Op::sim_timeline:
    case Op::sim_reset_timeline:
    case Op::sim_set_host_clock:
    case Op::sim_set_model_time:
    case Op::sim_host_time:
    case Op::sim_spend_host_time:
    case Op::sim_modelled_gpu:
    case Op::sim_peer_link:
    case Op::sim_set_peer_link: handle_simulator(op, in, out); return;
    case Op::call:
    case Op::callback: break;
  }
  throw ProtocolError("unknown request " + std::to_string(static_cast<std::uint32_t>(op)));
}

void handle_call(Reader& in, Writer& out) {
  const std::string name = in.get_string();
  const auto found = handlers().find(name);
  if (found == handlers().end()) throw ProtocolError("no contract function named " + name);
  found->second(in, out);
}

/// Runs one request; what it threw becomes an exception reply.
Status run(Op op, Reader& in, Writer& out) {
  try {
    if (op == Op::call) handle_call(in, out);
    else handle_runtime(op, in, out);
    return Status::ok;
  } catch (...) {
    out = Writer();
    put_exception(out, std::current_exception());
    return Status::exception;
  }
}

/// Runs a request of the judge and sends the reply on its lane, with its nonce: the judge
/// accepts no reply to a request it has not sent yet (see Header).
void serve(const Message& request) {
  Reader in(request.payload);
  Writer out;
  const Status status = run(static_cast<Op>(request.header.code), in, out);
  if (!sender().send(Header{static_cast<std::uint32_t>(Kind::reply), static_cast<std::uint32_t>(status),
                            request.header.lane, request.header.nonce, out.bytes().size()},
                     out.bytes()))
    std::_Exit(0);  // the judge has gone
}

/// The thread of a lane the judge opened: it runs the lane's requests, in order.
void serve_judge_lane(std::uint64_t lane) {
  t_lane = lane;
  Message request;
  while (boxes().take(lane, request)) serve(request);
}

/// Reads every message of the judge and hands it to its lane, until the judge closes the
/// channel.
void read_channel() {
  std::set<std::uint64_t> judge_lanes;
  for (;;) {
    Message message;
    if (!read_fully(kChannel, &message.header, sizeof message.header) || message.header.size > kMaxMessageBytes) return;
    message.payload.resize(static_cast<std::size_t>(message.header.size));
    if (!read_fully(kChannel, &message.payload[0], message.payload.size())) return;
    const std::uint64_t lane = message.header.lane;
    if (lane % 2 == 0 && judge_lanes.insert(lane).second) std::thread(serve_judge_lane, lane).detach();
    boxes().deliver(std::move(message));
  }
}

}  // namespace

bool register_handler(const char* name, Handler handler) {
  handlers()[name] = handler;
  return true;
}

std::string invoke_callback(const std::string& arguments) {
  static std::atomic<std::uint64_t> next_lane{1}, next_nonce{1};
  if (t_lane == 0) t_lane = next_lane.fetch_add(2);  // a thread of the submission: a lane of its own
  const std::uint64_t nonce = next_nonce.fetch_add(1);
  if (!sender().send(Header{static_cast<std::uint32_t>(Kind::request), static_cast<std::uint32_t>(Op::callback), t_lane,
                            nonce, arguments.size()},
                     arguments))
    std::_Exit(0);  // the judge has gone
  Message reply;
  if (await_reply(boxes(), t_lane, nonce, serve, reply) == Awaited::closed) std::_Exit(0);
  if (reply.header.code == static_cast<std::uint32_t>(Status::exception)) {
    Reader in(reply.payload);
    throw_exception(in);
  }
  return std::move(reply.payload);
}

}  // namespace remote
}  // namespace course

int main(int argc, char** argv) {
  struct stat channel {};
  if (::fstat(course::remote::kChannel, &channel) != 0 || !S_ISSOCK(channel.st_mode)) {
    std::fprintf(stderr, "this is a grader's worker process: the judge starts it (autograder/remote/)\n");
    return 2;
  }
  course::remote::map_shared_host_memory(argc, argv);
  course::remote::read_channel();
  // The judge has gone: end at once, without running destructors under threads that may
  // still be inside the submission.
  std::fflush(nullptr);
  std::_Exit(0);
}
