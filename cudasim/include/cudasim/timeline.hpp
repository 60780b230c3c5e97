/// @file timeline.hpp
/// @brief The simulator's modelled device clock: every operation queued on a stream gets a
/// start and an end on one timeline, in nanoseconds of a named GPU (cudasim/gpu_model.hpp),
/// so that overlap, idle time and `cudaEventElapsedTime` mean on a laptop what they mean on a
/// GPU.
///
/// The simulator runs kernels on the CPU, far slower than a GPU would. The clock does not care:
/// it places each operation by discrete-event rules, from what the operation is, not from how
/// long the CPU took to run it:
/// - an operation starts when its stream has finished the one before it, when the work it
///   depends on has ended (an event it waits for; the legacy default stream's implicit
///   ordering), and not before the host queued it;
/// - a kernel lasts its modelled time (launch overhead, roofline of its counted bytes and
///   declared FLOPs, its longest thread: KernelStats::modelled); a replayed graph's kernel
///   nodes cost the cheaper graph-node overhead;
/// - a copy lasts `latency + bytes / rate` of the link it crosses (cudasim/link_model.hpp) and
///   holds that link's copy engine: one engine per direction of the host link, one per device
///   for its outgoing peer copies. Copies in one direction queue; opposite directions, and
///   copies and kernels, overlap;
/// - a memset lasts its bytes over the GPU's memory bandwidth; a cuBLAS call, the roofline of
///   its FLOPs and operands plus a launch;
/// - an event record takes no time: the event's time is its stream's time when it is reached.
///
/// Kernels on different streams overlap completely: the model does not share the SMs between
/// them (docs/simulator.md says where that is off).
///
/// Host threads are placed on the same timeline by a HostClock:
/// - `kWall` (the default): a host thread moves in real time, except that the real time it
///   spends waiting for the simulator's device work is replaced by the modelled wait: where it
///   waits for the device (a stream, event or device synchronisation, a blocking copy, a query
///   that finds the work done) it continues at the later of its own time and the end of the
///   work it waited for. Loading data on the CPU therefore costs what it really costs, and a
///   kernel what it would cost on the GPU.
/// - `kFree`: host code takes no time at all; host threads move only where they wait for the
///   device. Every time is then exact and repeatable on any machine, which is what tests and
///   graded checks of a schedule use.
///
/// With the clock's figures chosen (`CUDASIM_MODEL_TIME=1`, `./course run --model-time`, or
/// set_model_time(true)), `cudaEventElapsedTime` returns modelled milliseconds and copies no
/// longer sleep for the link model in real time. `CUDASIM_TIMELINE=out.json` (`./course run
/// --timeline out.json`) writes the timeline at exit in the Chrome trace-event format, which
/// Perfetto (ui.perfetto.dev) and chrome://tracing open: one track per stream, per copy engine
/// and per host thread that waited.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cudasim {

/// How host threads move on the modelled timeline (see the file's comment).
enum class HostClock {
  kWall,  ///< real time, with the waits for the simulated device replaced by the modelled ones
  kFree,  ///< host code takes no time: exact and repeatable
};

/// Whether `cudaEventElapsedTime` reports modelled time (CUDASIM_MODEL_TIME=1 at start).
bool model_time_enabled();
void set_model_time(bool on);

/// The host clock in use (CUDASIM_HOST_CLOCK=wall|free at start; default wall).
HostClock host_clock();
/// Switches the host clock; each host thread continues from its current place.
void set_host_clock(HostClock clock);

/// The calling host thread's place on the modelled timeline, in ns.
double host_time_ns();
/// Moves the calling host thread's clock `ns` forward, on either clock: host work that a test or
/// an experiment stands for without doing it (reading a batch from a modelled disk).
void spend_host_time(double ns);
/// A hand-off between host threads: the calling thread continues at the later of its own time
/// and `ns`, the time (host_time_ns() there) at which another host thread handed it work or
/// freed what it waits for. A thread that has not used the clock yet starts at `ns`, instead of
/// at the latest time any host thread has reached, so that workers started together run side
/// by side. The simulator cannot see such hand-offs (a mutex, a condition variable, a queue);
/// on the free clock, a program whose threads pass work to each other calls this where they do.
void wait_for_host_time(double ns);

/// One operation on the timeline.
struct TimelineSpan {
  std::string track;   ///< "stream 1", "default stream", "copy engine HtoD", "host thread 1", ...
  int device = -1;     ///< the device the track belongs to; -1 for a host thread
  std::string kind;    ///< "kernel", "copy", "memset", "library" or "wait" (a host thread's)
  std::string name;    ///< the kernel's name, "HtoD 4.0 MB (pinned)", the cuBLAS call, ...
  double start_ns = 0;
  double end_ns = 0;
};

/// The operations recorded since the start or the last reset_timeline(), ordered by start
/// (the first million; later ones are counted, not kept: see dropped_timeline_spans()).
std::vector<TimelineSpan> timeline();
std::uint64_t dropped_timeline_spans();
/// Forgets the recorded operations (the clock itself runs on).
void reset_timeline();

/// Writes the recorded operations to `path` in the Chrome trace-event format. False, with
/// `error` set, when the file cannot be written.
bool write_timeline(const std::string& path, std::string* error = nullptr);

}  // namespace cudasim
