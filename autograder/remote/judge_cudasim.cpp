// The simulator's own API, as the tests call it in the judge (course_remote.hpp): each call is
// forwarded to the worker, where the kernels and copies ran and the simulator counted them,
// on the calling thread's lane (a host thread's place on the modelled clock is its own, as in
// one process). What comes back is read as untrusted data, like every reply.
#define COURSE_REMOTE_JUDGE 1
#include "course_remote.hpp"
#include "remote_cudasim.hpp"

#include <cudasim/gpu_model.hpp>
#include <cudasim/link_model.hpp>
#include <cudasim/stats.hpp>
#include <cudasim/timeline.hpp>

#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace {

using course::remote::Marshal;
using course::remote::Op;
using course::remote::Reader;
using course::remote::Writer;

/// Sends `op` with `arguments` and reads the whole reply with `read`.
template <class Read>
auto ask(Op op, const Writer& arguments, const char* what, Read read) {
  return course::remote::read_reply(course::remote::request(op, arguments.bytes(), what), what, read);
}

void tell(Op op, const Writer& arguments, const char* what) {
  ask(op, arguments, what, [](Reader&) {});
}

}  // namespace

namespace cudasim {

void reset_stats() { tell(Op::reset_stats, Writer(), "reset_link_counters"); }

/// The worker's link counters: at most one entry per ordered pair of the 64 devices the
/// simulator allows.
std::vector<LinkTraffic> link_stats() {
  return ask(Op::link_stats, Writer(), "read_link_counters", [](Reader& in) {
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

LinkModel host_link() {
  return ask(Op::sim_host_link, Writer(), "cudasim::host_link", [](Reader& in) { return Marshal<LinkModel>::get(in); });
}

bool set_host_link(const std::string& name) {
  Writer out;
  out.put_string(name);
  return ask(Op::sim_set_host_link, out, "cudasim::set_host_link", [](Reader& in) { return in.get<std::uint8_t>() != 0; });
}

LinkModel peer_link() {
  return ask(Op::sim_peer_link, Writer(), "cudasim::peer_link", [](Reader& in) { return Marshal<LinkModel>::get(in); });
}

bool set_peer_link(const LinkModel& model) {
  Writer out;
  Marshal<LinkModel>::put(out, model);
  return ask(Op::sim_set_peer_link, out, "cudasim::set_peer_link", [](Reader& in) { return in.get<std::uint8_t>() != 0; });
}

TransferStats transfer_stats() {
  return ask(Op::sim_transfer_stats, Writer(), "cudasim::transfer_stats", [](Reader& in) { return in.get<TransferStats>(); });
}

std::vector<KernelStats> kernel_stats() {
  return ask(Op::sim_kernel_stats, Writer(), "cudasim::kernel_stats",
             [](Reader& in) { return Marshal<std::vector<KernelStats>>::get(in); });
}

std::vector<TimelineSpan> timeline() {
  return ask(Op::sim_timeline, Writer(), "cudasim::timeline",
             [](Reader& in) { return Marshal<std::vector<TimelineSpan>>::get(in); });
}

void reset_timeline() { tell(Op::sim_reset_timeline, Writer(), "cudasim::reset_timeline"); }

void set_host_clock(HostClock clock) {
  Writer out;
  out.put<std::int32_t>(static_cast<std::int32_t>(clock));
  tell(Op::sim_set_host_clock, out, "cudasim::set_host_clock");
}

void set_model_time(bool on) {
  Writer out;
  out.put<std::uint8_t>(on ? 1 : 0);
  tell(Op::sim_set_model_time, out, "cudasim::set_model_time");
}

double host_time_ns() {
  return ask(Op::sim_host_time, Writer(), "cudasim::host_time_ns", [](Reader& in) { return in.get<double>(); });
}

void spend_host_time(double ns) {
  Writer out;
  out.put(ns);
  tell(Op::sim_spend_host_time, out, "cudasim::spend_host_time");
}

/// The modelled GPU, as the worker describes it. Each description is kept for the program's
/// life, as the simulator's own table is, so that the reference stays valid.
const GpuSpec& modelled_gpu() {
  struct Described {
    std::string name, description;
    GpuSpec spec;
  };
  Described got = ask(Op::sim_modelled_gpu, Writer(), "cudasim::modelled_gpu", [](Reader& in) {
    Described d;
    d.name = in.get_string(64);
    d.description = in.get_string(256);
    d.spec.fp32_flops_per_s = in.get<double>();
    d.spec.tensor_flops_per_s = in.get<double>();
    d.spec.memory_bytes_per_s = in.get<double>();
    d.spec.sms = in.get<std::int32_t>();
    return d;
  });
  static std::mutex mutex;
  static auto* kept = new std::vector<Described*>;
  std::lock_guard<std::mutex> lock(mutex);
  for (Described* d : *kept)
    if (d->name == got.name && d->description == got.description && d->spec.sms == got.spec.sms &&
        d->spec.fp32_flops_per_s == got.spec.fp32_flops_per_s && d->spec.tensor_flops_per_s == got.spec.tensor_flops_per_s &&
        d->spec.memory_bytes_per_s == got.spec.memory_bytes_per_s)
      return d->spec;
  auto* d = new Described(std::move(got));
  d->spec.name = d->name.c_str();
  d->spec.description = d->description.c_str();
  kept->push_back(d);
  return d->spec;
}

}  // namespace cudasim
