// Memory instrumentation: the simulator's profiler (traffic counters), memcheck and racecheck.
//
// Kernels built for counting are compiled by clang with
//   -fsanitize-coverage=inline-8bit-counters,trace-loads,trace-stores
// which calls __sanitizer_cov_loadN / __sanitizer_cov_storeN before every load and store
// (the 8-bit counters are the companion flag without which clang instruments nothing), and
// with -fno-vectorize -fno-slp-vectorize so that each element access stays one access.
// While a block runs, each access is classified by its address:
//   - inside the device arena: global memory; counted, and checked against the live
//     allocations (out of bounds, use after free, misaligned);
//   - inside the block's dynamic shared buffer or the executable's static thread-local block
//     (where __shared__ variables live): shared memory; counted, and (racecheck) recorded per
//     word between barriers;
//   - the running fiber's stack, the worker's own stack, the coroutine frames of the block's
//     threads, the kernel's bound arguments, the built-in variables: registers and local
//     memory, not counted;
//   - the executable's data segments: __device__ / __constant__ variables, counted as global;
//   - page-locked host memory: zero-copy host access, counted separately;
//   - anything else: a kernel dereferencing host memory, reported as an illegal address.
// Outside kernels (host code in the same .cu file) the hooks return at once.
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "internal.hpp"

extern "C" {
// Defined by the linker for --wrap=memcpy and the like: the C library's own functions.
void* __real_memcpy(void* destination, const void* source, std::size_t bytes);
void* __real_memmove(void* destination, const void* source, std::size_t bytes);
void* __real_memset(void* destination, int value, std::size_t bytes);
}

namespace cudasim::detail {

namespace {

struct Range {
  std::uintptr_t begin = 0, end = 0;
  bool contains(std::uintptr_t a) const { return a - begin < end - begin; }
};

/// The executable's static TLS block for this thread and its writable/readable data segments.
struct ModuleLayout {
  Range tls;
  std::vector<Range> data;
};

ModuleLayout main_module_layout() {
  ModuleLayout layout;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) -> int {
        auto* l = static_cast<ModuleLayout*>(out);
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type == PT_TLS && info->dlpi_tls_data != nullptr) {
            l->tls.begin = reinterpret_cast<std::uintptr_t>(info->dlpi_tls_data);
            l->tls.end = l->tls.begin + ph.p_memsz;
          } else if (ph.p_type == PT_LOAD && !(ph.p_flags & PF_X)) {
            const std::uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
            l->data.push_back({begin, begin + ph.p_memsz});
          }
        }
        return 1;  // the first module is the executable: stop there
      },
      &layout);
  return layout;
}

/// Where an address lies, as a kernel thread sees it. `Builtin`: threadIdx, blockIdx, blockDim or
/// gridDim, which a kernel may read (a local) but not write.
enum class Space { Global, Shared, Local, Builtin, Host, Illegal };

/// One byte of shared memory as racecheck sees it within the current barrier interval.
struct ByteState {
  unsigned writer = 0;  // linear thread + 1, 0 for none
  unsigned reader = 0;  // linear thread + 1, kWarpReaders | warp, kManyReaders, or 0
  const void* write_pc = nullptr;
  const void* read_pc = nullptr;
};
/// A 4-byte word's bytes, kept together so that one lookup serves a 4-byte access. Racecheck
/// is byte-granular, as on a GPU: neighbouring threads writing adjacent bf16 or char values
/// touch different bytes and do not race.
struct WordState {
  ByteState bytes[4];
};
constexpr unsigned kManyReaders = ~0u;
/// Several readers, all in one warp: kWarpReaders | the warp's index in the block. A
/// __syncwarp of that whole warp forgets them; readers from several warps only a block barrier.
constexpr unsigned kWarpReaders = 0x80000000u;
constexpr unsigned kWarp = 32;
bool several_readers(unsigned reader) { return reader != 0 && (reader & kWarpReaders) != 0; }
/// The reader state after thread `me` (rank + 1) reads a byte that `reader` had read.
unsigned add_reader(unsigned reader, unsigned me) {
  if (reader == 0 || reader == me || reader == kManyReaders) return reader == 0 ? me : reader;
  const unsigned my_warp = (me - 1) / kWarp;
  const unsigned their_warp = several_readers(reader) ? (reader & ~kWarpReaders) : (reader - 1) / kWarp;
  return my_warp == their_warp ? (kWarpReaders | my_warp) : kManyReaders;
}

/// One warp-wide global request being gathered: the same access (the k-th global access of
/// each lane, at the same instruction) of the lanes of one warp, and the 32-byte sectors it
/// touches, as bit sets over up to four aligned 2 KB windows (two rows of a 2-D block are two
/// windows); sectors beyond them, as with large strides, are counted one by one (such lanes
/// rarely share a sector).
struct SectorWindow {
  std::uint64_t first_sector = ~std::uint64_t{0};  // a multiple of 64; ~0: unused
  std::uint64_t sectors = 0;                        // bit s: sector first_sector + s
};
struct PendingRequest {
  const void* pc = nullptr;  // nullptr: no lane has made this access yet
  SectorWindow windows[4];
  std::uint32_t sectors_outside = 0;

  void touch(std::uint64_t sector) {
    const std::uint64_t first = sector & ~std::uint64_t{63};
    for (SectorWindow& w : windows) {
      if (w.first_sector == ~std::uint64_t{0}) w.first_sector = first;
      if (w.first_sector == first) {
        w.sectors |= std::uint64_t{1} << (sector - first);
        return;
      }
    }
    ++sectors_outside;
  }
  std::uint64_t sector_count() const {
    std::uint64_t n = sectors_outside;
    for (const SectorWindow& w : windows) n += static_cast<std::uint64_t>(__builtin_popcountll(w.sectors));
    return n;
  }
};
struct WarpRequests {
  std::uint64_t first_index = 0;        // the lane access index of pending[0]
  std::vector<PendingRequest> pending;  // by lane access index - first_index
};
/// A warp's pending requests are counted at every barrier and at the block's end; this many
/// accesses per lane in between, and they are counted early (later lanes' matching accesses
/// then count as requests of their own).
constexpr std::size_t kMaxPendingRequestsPerWarp = 16384;
constexpr unsigned kWarpLanes = 32;

/// What the hooks need while a block runs on this OS thread.
struct AccessContext {
  LaunchState* launch = nullptr;
  BlockTraffic traffic;
  Range arena;
  Range dynamic_shared;      // the launch's requested dynamic shared memory
  Range dynamic_capacity;    // the whole per-thread buffer
  Range tls;
  Range stack;               // the running fiber's stack
  Range frames;              // the coroutine frames of the block's threads (their locals)
  Range native_stack;        // the OS thread's own stack
  Range closure;             // the kernel's bound arguments
  // The page-locked buffer of the last zero-copy access: a kernel that reads host memory does
  // so element after element, and the registry's lookup takes a lock (cleared per block, as
  // cudaFreeHost waits for every kernel first).
  Range pinned;
  std::vector<Range> data;
  Range builtins[4];                       // threadIdx, blockIdx, blockDim, gridDim
  std::vector<std::uintptr_t> pointer_slots;  // extern-shared pointers at namespace scope
  // The guard byte of the thread-local initialisation that set those pointers (the store just
  // before a pointer's registration): every access of the pointer loads it first, and it is
  // host bookkeeping, not shared memory, so neither counted nor race-checked.
  std::vector<std::uintptr_t> pointer_guards;
  std::uintptr_t last_byte_store = 0;  // the last one-byte store taken for shared memory
  // The allocations of recent global accesses: a kernel usually touches a few buffers, and a
  // hit here saves a locked lookup in the allocation table.
  static constexpr int kCachedAllocations = 8;
  struct CachedAllocation {
    Range range;
    int peer = -1;  // another device's allocation (peer access enabled), else -1
  };
  CachedAllocation cached[kCachedAllocations];
  int next_cached = 0;
  // Bytes loaded from / stored to each other device's memory by this block.
  static constexpr int kMaxDevices = 64;
  std::uint64_t peer_loaded[kMaxDevices] = {}, peer_stored[kMaxDevices] = {};
  bool peer_traffic = false;

  const CachedAllocation* cached_allocation(std::uintptr_t a, unsigned bytes) const {
    for (const CachedAllocation& r : cached)
      if (a >= r.range.begin && a + bytes <= r.range.end) return &r;
    return nullptr;
  }
  void remember(const AllocationInfo& info, int peer) {
    cached[next_cached] = {{info.begin, info.begin + info.size}, peer};
    next_cached = (next_cached + 1) % kCachedAllocations;
  }
  void count_peer(int peer, unsigned bytes, bool store) {
    (store ? peer_stored : peer_loaded)[peer] += bytes;
    peer_traffic = true;
  }
  bool racecheck = false;
  std::unordered_map<std::uintptr_t, WordState> shared_words;

  // The critical path: each thread's global (atomics included) and shared accesses.
  std::vector<std::uint64_t> thread_global_ops, thread_shared_ops, thread_warp_ops, thread_mma_ops;
  // Coalescing: the requests being gathered per warp, and those already counted.
  std::vector<WarpRequests> warps;
  std::uint64_t requests = 0, sectors = 0;
  std::unordered_map<std::uintptr_t, std::uint64_t> atomics_per_address;
  // A wmma tile access by lane 0 in progress (begin_warp_tile_access), and the bytes it moved.
  bool tile_access = false;
  std::uint64_t tile_global_bytes = 0, tile_shared_bytes = 0;

  void count_request(const PendingRequest& r) {
    ++requests;
    sectors += r.sector_count();
  }
  void flush_requests(WarpRequests& w) {
    for (const PendingRequest& r : w.pending)
      if (r.pc != nullptr) count_request(r);
    w.pending.clear();
  }
  void flush_all_requests() {
    for (WarpRequests& w : warps) flush_requests(w);
  }
  /// The `index`-th global access of a lane of warp `warp`, at `pc`, touching address `a`.
  void note_request(unsigned warp, std::uint64_t index, const void* pc, std::uintptr_t a) {
    WarpRequests& w = warps[warp];
    if (w.pending.empty()) w.first_index = index;
    const std::uint64_t sector = a / 32;
    if (index < w.first_index) {  // a lane behind the others after a flush: a request of its own
      ++requests;
      ++sectors;
      return;
    }
    std::uint64_t slot = index - w.first_index;
    if (slot >= kMaxPendingRequestsPerWarp) {
      flush_requests(w);
      w.first_index = index;
      slot = 0;
    }
    if (slot >= w.pending.size()) w.pending.resize(slot + 1);
    PendingRequest& r = w.pending[slot];
    if (r.pc == nullptr) {
      r.pc = pc;
    } else if (r.pc != pc) {  // this lane diverged: its access is a request of its own
      ++requests;
      ++sectors;
      return;
    }
    r.touch(sector);
  }
};

unsigned width_slot(unsigned bytes) { return bytes <= 1 ? 0 : bytes <= 2 ? 1 : bytes <= 4 ? 2 : bytes <= 8 ? 3 : 4; }

__thread AccessContext* active = nullptr;
// The per-thread context outlives blocks so that the maps keep their capacity.
thread_local AccessContext* context_storage = nullptr;

std::atomic<bool> instrumented_code_present{false};

unsigned linear_thread_id() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }

std::string describe_thread_id(unsigned linear) {
  const unsigned x = linear % blockDim.x, y = (linear / blockDim.x) % blockDim.y,
                 z = linear / (blockDim.x * blockDim.y);
  return format_string("thread (%u,%u,%u)", x, y, z);
}

/// The first two lines a symbolizer prints for `command` (a function and a location), without
/// their line ends.
void run_symbolizer(const std::string& command, std::string& function, std::string& location) {
  function.clear();
  location.clear();
  if (FILE* pipe = popen(command.c_str(), "r")) {
    char line[1024];
    if (std::fgets(line, sizeof line, pipe)) function = line;
    if (std::fgets(line, sizeof line, pipe)) location = line;
    pclose(pipe);
  }
  for (std::string* s : {&function, &location})
    while (!s->empty() && (s->back() == '\n' || s->back() == '\r')) s->pop_back();
}

#ifdef CUDASIM_LLVM_SYMBOLIZER
/// "file.cu:42" from llvm-symbolizer's "file.cu:42:7" (the column goes).
void drop_column(std::string& location) {
  const auto last = location.rfind(':');
  if (last == std::string::npos || last + 1 == location.size() || location.rfind(':', last - 1) == std::string::npos)
    return;
  if (location.find_first_not_of("0123456789", last + 1) == std::string::npos) location.erase(last);
}
#endif

/// "file.cu:42" for a code address, through the compiler's llvm-symbolizer where the build found
/// one, else binutils' addr2line when it is installed; else "in kernel_name".
std::string describe_code_address(const void* pc) {
  Dl_info info{};
  if (pc == nullptr || dladdr(pc, &info) == 0 || info.dli_fname == nullptr) return "an unknown place";
  const auto offset = static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(pc) -
                                               reinterpret_cast<std::uintptr_t>(info.dli_fbase) - 1);
  const auto usable = [](const std::string& location) {
    return !location.empty() && location.find("??") == std::string::npos;
  };
  std::string function, location;
#ifdef CUDASIM_LLVM_SYMBOLIZER
  // The compiler's own LLVM reads the DWARF it wrote. Binutils' addr2line (2.40) names the
  // rewritten x.sim.cpp instead of x.cu for some code of the coroutine a kernel with barriers
  // becomes under --check (found with `./course run --check`).
  run_symbolizer(format_string("'%s' --obj='%s' 0x%zx 2>/dev/null", CUDASIM_LLVM_SYMBOLIZER, info.dli_fname, offset),
                 function, location);
  drop_column(location);
#endif
  if (!usable(location)) {
    run_symbolizer(format_string("addr2line -C -f -e '%s' 0x%zx 2>/dev/null", info.dli_fname, offset), function,
                   location);
    const auto discriminator = location.find(" (discriminator");
    if (discriminator != std::string::npos) location.erase(discriminator);
  }
  if (usable(location)) return location;
  return info.dli_sname ? std::string("in ") + info.dli_sname : std::string("an unknown place");
}

[[noreturn]] void fault(cudaError_t error, std::string message, const void* pc) {
  message += " (access at " + describe_code_address(pc) + ")";
  throw KernelFault{error, std::move(message)};
}

Space classify(AccessContext& c, std::uintptr_t a) {
  // Most frequent first: device memory, then the running fiber's own stack.
  if (c.arena.contains(a)) return Space::Global;
  if (c.stack.contains(a)) return Space::Local;
  if (c.frames.contains(a)) return Space::Local;
  // Before the worker's own stack: glibc puts a thread's TLS block inside its stack mapping.
  if (c.tls.contains(a)) {
    for (const Range& builtin : c.builtins)
      if (builtin.contains(a)) return Space::Builtin;
    for (std::uintptr_t slot : c.pointer_slots)
      if (a - slot < sizeof(void*)) return Space::Local;  // an extern-shared pointer
    for (std::uintptr_t guard : c.pointer_guards)
      if (a == guard) return Space::Local;  // its initialisation's guard
    return Space::Shared;
  }
  if (c.closure.contains(a) || c.native_stack.contains(a)) return Space::Local;
  if (c.dynamic_capacity.contains(a)) return Space::Shared;
  for (const Range& r : c.data)
    if (r.contains(a)) return Space::Global;  // __device__ and __constant__ variables
  if (c.pinned.contains(a)) return Space::Host;
  std::uintptr_t begin = 0;
  std::size_t size = 0;
  if (pinned_range_of(reinterpret_cast<const void*>(a), begin, size)) {
    c.pinned = {begin, begin + size};
    return Space::Host;
  }
  return Space::Illegal;
}

/// Checks a global access outside the cached allocations; returns the other device whose
/// memory it touches (peer access enabled), or -1 for the launch's own device.
int check_global(AccessContext& c, std::uintptr_t a, unsigned bytes, bool store, const void* pc) {
  if (const AccessContext::CachedAllocation* hit = c.cached_allocation(a, bytes)) return hit->peer;
  const void* p = reinterpret_cast<const void*>(a);
  const char* what = store ? "store" : "load";
  AllocationInfo info;
  if (find_live_allocation(p, info) && a + bytes <= info.begin + info.size) {
    const int here = c.launch->device;
    const int peer = info.device >= 0 && info.device != here ? info.device : -1;
    bool pool_grants = false;
    const bool from_pool = peer >= 0 && pool_allocation_access(info.begin, here, pool_grants);
    if (peer >= 0 && !(from_pool ? pool_grants : peer_access_enabled(here, peer))) {
      const std::string remedy =
          from_pool ? format_string("it came from device %d's memory pool (cudaMallocAsync), which peer access "
                                    "does not reach: call cudaMemPoolSetAccess on that pool with a "
                                    "cudaMemAccessDesc for device %d, cudaMemAccessFlagsProtReadWrite",
                                    peer, here)
                    : format_string("call cudaDeviceEnablePeerAccess(%d, 0) with device %d current first", peer, here);
      fault(cudaErrorIllegalAddress,
            format_string("global %s of %u bytes at byte %zu of the %zu-byte allocation made at %s:%u, "
                          "which is memory of device %d, but the kernel runs on device %d, which has "
                          "no %s to it (%s)",
                          what, bytes, static_cast<std::size_t>(a - info.begin), info.size, info.file,
                          info.line, peer, here, from_pool ? "access through the pool" : "peer access",
                          remedy.c_str()),
            pc);
    }
    c.remember(info, peer);
    return peer;
  }
  if (!(find_live_allocation(p, info) && a >= info.begin) && find_freed_allocation(p, info))
    fault(cudaErrorIllegalAddress,
          format_string("global %s of %u bytes at byte %zu of the %zu-byte allocation made at %s:%u, "
                        "which has been freed with cudaFree (use after free)",
                        what, bytes, static_cast<std::size_t>(a - info.begin), info.size, info.file,
                        info.line),
          pc);
  if (find_nearest_allocation(p, info) && a >= info.begin)
    fault(cudaErrorIllegalAddress,
          format_string("out-of-bounds global %s of %u bytes at byte %zu of the %zu-byte allocation "
                        "made at %s:%u (the access ends %zu bytes past its end)",
                        what, bytes, static_cast<std::size_t>(a - info.begin), info.size, info.file,
                        info.line, static_cast<std::size_t>(a + bytes - info.begin - info.size)),
          pc);
  std::string where;
  describe_device_address(p, where);
  fault(cudaErrorIllegalAddress,
        format_string("out-of-bounds global %s of %u bytes at %p: %s", what, bytes, p, where.c_str()), pc);
}

void check_dynamic_shared(AccessContext& c, std::uintptr_t a, unsigned bytes, bool store, const void* pc) {
  if (a + bytes <= c.dynamic_shared.end) return;
  fault(cudaErrorIllegalAddress,
        format_string("out-of-bounds shared %s of %u bytes at byte %zu of the block's dynamic shared "
                      "memory, but the launch asked for %zu bytes (the third <<< >>> argument)",
                      store ? "store" : "load", bytes, static_cast<std::size_t>(a - c.dynamic_shared.begin),
                      static_cast<std::size_t>(c.dynamic_shared.end - c.dynamic_shared.begin)),
        pc);
}

void report_race(unsigned me, const ByteState& b, unsigned other_writer, std::uintptr_t a, unsigned bytes, bool store,
                 const void* pc) {
  const bool after_write = other_writer != 0;
  const std::string other = after_write || !several_readers(b.reader)
                                ? describe_thread_id((after_write ? other_writer : b.reader) - 1)
                                : std::string("several other threads");
  const std::string other_site = describe_code_address(after_write ? b.write_pc : b.read_pc);
  fault(cudaErrorLaunchFailure,
        format_string("race on shared memory: %s %s %u bytes at %p, which %s %s at %s in the same "
                      "barrier interval; separate the two accesses with __syncthreads()",
                      describe_thread_id(me - 1).c_str(), store ? "writes" : "reads", bytes,
                      reinterpret_cast<void*>(a), other.c_str(), after_write ? "wrote" : "read",
                      other_site.c_str()),
        pc);
}

void record_shared_access(AccessContext& c, std::uintptr_t a, unsigned bytes, bool store, const void* pc) {
  const unsigned me = linear_thread_id() + 1;
  for (std::uintptr_t word = a & ~std::uintptr_t{3}; word < a + bytes; word += 4) {
    WordState& w = c.shared_words[word];
    const std::uintptr_t first = std::max(word, a), last = std::min(word + 4, a + bytes);
    for (std::uintptr_t byte = first; byte < last; ++byte) {
      ByteState& b = w.bytes[byte - word];
      const unsigned other_writer = (b.writer != 0 && b.writer != me) ? b.writer : 0;
      const bool other_reader = b.reader != 0 && b.reader != me;
      if (other_writer != 0 || (store && other_reader)) report_race(me, b, other_writer, a, bytes, store, pc);
      if (store) {
        b.writer = me;
        b.write_pc = pc;
      } else {
        if (b.reader == 0 || b.reader == me) b.read_pc = pc;
        b.reader = add_reader(b.reader, me);
      }
    }
  }
}

/// Host code (instrumented: a .cu file's) that reads or writes device memory: on a GPU a
/// segmentation fault, so here too, with the allocation and the line named. Host code that
/// computed on cudaMalloc buffers would otherwise pass on the simulator (and move no counted
/// bytes). cudaMallocManaged memory is the host's too and stays allowed.
[[noreturn]] void host_touched_device_memory(std::uintptr_t a, unsigned bytes, bool store, const void* pc) {
  std::string where;
  describe_device_address(reinterpret_cast<const void*>(a), where);
  report("host code %s %u bytes of device memory at %p (%s) at %s: device memory from cudaMalloc is not "
         "the host's (on a GPU this is a segmentation fault); use a kernel, or cudaMemcpy the data to the host",
         store ? "writes" : "reads", bytes, reinterpret_cast<void*>(a), where.c_str(),
         describe_code_address(pc).c_str());
  std::signal(SIGSEGV, SIG_DFL);
  std::raise(SIGSEGV);
  std::abort();
}

/// The alignment a global access of `bytes` must have: its size (up to 16), as on a GPU, except
/// that an 8-byte access needs only 4. The host compiler copies a struct of 4-byte fields (a
/// `struct {float x, y, z;}` stored to global memory) with one 8-byte access for two fields,
/// where a GPU makes two 4-byte ones; the instrumentation sees only the access's size. A double
/// at an address that is a multiple of 4 but not of 8 therefore goes unreported.
unsigned required_alignment(unsigned bytes) {
  const unsigned natural = std::min(bytes & (~bytes + 1), 16u);
  return natural == 8 ? 4 : natural;
}

void check_host_access(std::uintptr_t a, unsigned bytes, bool store, const void* pc) {
  static const Range arena = [] {
    Range r;
    device_arena_range(r.begin, r.end);
    return r;
  }();
  if (!arena.contains(a)) return;
  AllocationInfo info;
  if (find_live_allocation(reinterpret_cast<const void*>(a), info) && is_managed_allocation(info.begin)) return;
  host_touched_device_memory(a, bytes, store, pc);
}

/// A kernel stored to a built-in variable. In CUDA they are const (nvcc refuses the write); here
/// they are the simulator's thread-local variables, and the counters, racecheck and the reports
/// name a thread by them, so a thread that renames itself would have its work counted as
/// another's. The simulator sets them out of the instrumentation's sight (publish_thread_x).
[[noreturn]] void fault_on_builtin_store(const AccessContext& c, std::uintptr_t a, const void* pc) {
  static const char* const kNames[4] = {"threadIdx", "blockIdx", "blockDim", "gridDim"};
  const char* name = "a built-in variable";
  for (int i = 0; i < 4; ++i)
    if (c.builtins[i].contains(a)) name = kNames[i];
  fault(cudaErrorLaunchFailure,
        format_string("store to %s: threadIdx, blockIdx, blockDim and gridDim are read-only in a kernel "
                      "(const in CUDA, where nvcc refuses to compile a write); keep the value in a variable "
                      "of your own",
                      name),
        pc);
}

inline void on_access(const void* address, unsigned bytes, bool store, const void* pc) {
  AccessContext* c = active;
  if (c == nullptr) {  // host code, or not a kernel thread
    check_host_access(reinterpret_cast<std::uintptr_t>(address), bytes, store, pc);
    return;
  }
  const auto a = reinterpret_cast<std::uintptr_t>(address);
  switch (classify(*c, a)) {
    case Space::Local:
      return;
    case Space::Builtin:
      if (store) fault_on_builtin_store(*c, a, pc);
      return;
    case Space::Global:
      if (bytes > 1 && (a & (required_alignment(bytes) - 1)) != 0)
        fault(cudaErrorMisalignedAddress,
              format_string("misaligned global %s of %u bytes at %p", store ? "store" : "load", bytes, address), pc);
      if (c->arena.contains(a)) {
        const AccessContext::CachedAllocation* hit = c->cached_allocation(a, bytes);
        const int peer = hit != nullptr ? hit->peer : check_global(*c, a, bytes, store, pc);
        if (peer >= 0) c->count_peer(peer, bytes, store);
      }
      (store ? c->traffic.global_store : c->traffic.global_load) += bytes;
      ++c->traffic.global_accesses_by_width[width_slot(bytes)];
      if (c->tile_access) {
        c->tile_global_bytes += bytes;
      } else {
        const unsigned t = linear_thread_id();
        c->note_request(t / kWarpLanes, c->thread_global_ops[t]++, pc, a);
      }
      return;
    case Space::Shared:
      if (store && bytes == 1) c->last_byte_store = a;
      if (c->dynamic_capacity.contains(a)) check_dynamic_shared(*c, a, bytes, store, pc);
      if (c->racecheck) record_shared_access(*c, a, bytes, store, pc);
      (store ? c->traffic.shared_store : c->traffic.shared_load) += bytes;
      if (c->tile_access)
        c->tile_shared_bytes += bytes;
      else
        ++c->thread_shared_ops[linear_thread_id()];
      return;
    case Space::Host:
      c->traffic.host_access += bytes;
      return;
    case Space::Illegal:
      fault(cudaErrorIllegalAddress,
            format_string("%s of %u bytes at %p, which is host memory (malloc, new, a std::vector or "
                          "the host stack): a kernel can only use device memory from cudaMalloc, "
                          "page-locked memory from cudaMallocHost, and its own locals",
                          store ? "store" : "load", bytes, address),
            pc);
  }
}

std::string check_setting() {
  const char* env = std::getenv("CUDASIM_CHECK");
  return env ? env : "";
}

}  // namespace

bool racecheck_enabled() {
  static const bool on = [] {
    const std::string s = check_setting();
    return s.find("race") != std::string::npos || s.find("all") != std::string::npos;
  }();
  return on;
}

bool barrier_check_enabled() {
  static const bool on = [] {
    const std::string s = check_setting();
    return s.find("barrier") != std::string::npos || s.find("all") != std::string::npos;
  }();
  return on;
}

bool shuffle_enabled() {
  static const bool on = [] {
    const std::string s = check_setting();
    return s.find("shuffle") != std::string::npos || s.find("all") != std::string::npos ||
           std::getenv("CUDASIM_SHUFFLE_SEED") != nullptr;
  }();
  return on;
}

bool checks_reorder_or_track_threads() { return !check_setting().empty() || shuffle_enabled(); }

unsigned shuffle_seed() {
  static const unsigned seed = [] {
    const char* env = std::getenv("CUDASIM_SHUFFLE_SEED");
    return env ? static_cast<unsigned>(std::strtoul(env, nullptr, 10)) : 1u;
  }();
  return seed;
}

void instrumentation_begin_block(LaunchState& launch, const void* native_stack_hint) {
  if (!instrumented_code_present.load(std::memory_order_relaxed)) return;
  if (context_storage == nullptr) {
    context_storage = new AccessContext();
    AccessContext& c = *context_storage;
    device_arena_range(c.arena.begin, c.arena.end);
    const ModuleLayout layout = main_module_layout();
    c.tls = layout.tls;
    c.data = layout.data;
    // The linker may place other objects' thread-locals (e.g. __shared__ arrays) between the
    // built-ins, so each is its own range.
    int i = 0;
    for (const void* builtin : {static_cast<const void*>(&threadIdx), static_cast<const void*>(&blockIdx),
                                static_cast<const void*>(&blockDim), static_cast<const void*>(&gridDim)}) {
      const auto address = reinterpret_cast<std::uintptr_t>(builtin);
      c.builtins[i++] = {address, address + sizeof(uint3)};
    }
    pthread_attr_t attributes;
    if (pthread_getattr_np(pthread_self(), &attributes) == 0) {
      void* low = nullptr;
      size_t size = 0;
      pthread_attr_getstack(&attributes, &low, &size);
      c.native_stack = {reinterpret_cast<std::uintptr_t>(low), reinterpret_cast<std::uintptr_t>(low) + size};
      pthread_attr_destroy(&attributes);
    }
    if (!c.native_stack.contains(reinterpret_cast<std::uintptr_t>(native_stack_hint))) c.native_stack = {};
    c.racecheck = racecheck_enabled();
  }
  AccessContext& c = *context_storage;
  c.launch = &launch;
  c.traffic = {};
  // Allocations may have been freed since the last block: forget them.
  for (AccessContext::CachedAllocation& r : c.cached) r = {};
  c.pinned = {};
  const auto base = reinterpret_cast<std::uintptr_t>(cudasim::dynamic_shared_memory());
  c.dynamic_shared = {base, base + launch.config.dynamic_shared_bytes};
  c.dynamic_capacity = {base, base + kDynamicSharedCapacity};
  const auto closure = reinterpret_cast<std::uintptr_t>(launch.kernel.get());
  c.closure = {closure, closure + launch.kernel->object_size()};
  c.shared_words.clear();
  const std::size_t threads = static_cast<std::size_t>(launch.config.block.x) * launch.config.block.y *
                              launch.config.block.z;
  c.thread_global_ops.assign(threads, 0);
  c.thread_shared_ops.assign(threads, 0);
  c.thread_warp_ops.assign(threads, 0);
  c.thread_mma_ops.assign(threads, 0);
  c.warps.resize((threads + kWarpLanes - 1) / kWarpLanes);
  for (WarpRequests& w : c.warps) w.pending.clear();
  c.requests = c.sectors = 0;
  c.atomics_per_address.clear();
  c.tile_access = false;
  const void* frames_begin = nullptr;
  const void* frames_end = nullptr;
  thread_frame_range(frames_begin, frames_end);
  c.frames = {reinterpret_cast<std::uintptr_t>(frames_begin), reinterpret_cast<std::uintptr_t>(frames_end)};
  active = &c;
}

void instrumentation_set_stack(const void* low, const void* high) {
  if (AccessContext* c = active)
    c->stack = {reinterpret_cast<std::uintptr_t>(low), reinterpret_cast<std::uintptr_t>(high)};
}

void instrumentation_threads_synced(unsigned first, unsigned count, std::uint32_t lanes, bool whole_block) {
  AccessContext* c = active;
  if (c == nullptr || !c->racecheck) return;
  if (whole_block) {
    c->shared_words.clear();
    return;
  }
  // Threads are stored as rank + 1. Readers of one warp (kWarpReaders) are forgotten when the
  // group holds that whole warp: a __syncwarp of all its lanes, or a tile it belongs to. Readers
  // of several warps (kManyReaders) stay until a block barrier: a __syncwarp cannot order them
  // (a tiled kernel with a block barrier swapped for __syncwarp still races).
  const auto synced = [&](unsigned stored) {
    if (stored == 0 || stored - 1 < first || stored - 1 >= first + count) return false;
    return count > 32 || ((lanes >> (stored - 1 - first)) & 1u) != 0;
  };
  const unsigned first_warp = first / kWarp, warps = (count + kWarp - 1) / kWarp;
  const bool whole_warps = count > 32 || lanes == (count == 32 ? ~0u : (1u << count) - 1);
  const auto warp_synced = [&](unsigned reader) {
    if (!whole_warps || reader == kManyReaders || !several_readers(reader)) return false;
    const unsigned warp = reader & ~kWarpReaders;
    return warp >= first_warp && warp < first_warp + warps;
  };
  for (auto& [word, state] : c->shared_words)
    for (ByteState& b : state.bytes) {
      if (synced(b.writer)) b.writer = 0;
      if (synced(b.reader) || warp_synced(b.reader)) b.reader = 0;
    }
}

void instrumentation_barrier_released(unsigned arrivals) {
  if (AccessContext* c = active) {
    if (c->racecheck) c->shared_words.clear();
    c->flush_all_requests();
    c->traffic.barrier_arrivals += arrivals;
  }
}

void instrumentation_count_warp_op() {
  AccessContext* c = active;
  if (c == nullptr) return;
  ++c->traffic.warp_ops;
  const unsigned t = linear_thread_id();
  if (t < c->thread_warp_ops.size()) ++c->thread_warp_ops[t];
}

void count_mma() {
  AccessContext* c = active;
  if (c == nullptr) return;
  ++c->traffic.mma_lane_calls;
  const unsigned t = linear_thread_id();
  if (t < c->thread_mma_ops.size()) ++c->thread_mma_ops[t];
}

void count_fragment_transfer(bool store) {
  if (AccessContext* c = active) ++(store ? c->traffic.fragment_stores : c->traffic.fragment_loads);
}

void begin_warp_tile_access() {
  if (AccessContext* c = active) {
    c->tile_access = true;
    c->tile_global_bytes = c->tile_shared_bytes = 0;
  }
}

void end_warp_tile_access() {
  AccessContext* c = active;
  if (c == nullptr || !c->tile_access) return;
  c->tile_access = false;
  const unsigned t = linear_thread_id();
  if (c->tile_global_bytes > 0) {
    ++c->requests;
    c->sectors += (c->tile_global_bytes + 31) / 32;
    ++c->thread_global_ops[t];
  }
  if (c->tile_shared_bytes > 0) ++c->thread_shared_ops[t];
}

namespace {
void store_max(std::atomic<std::uint64_t>& target, std::uint64_t value) {
  std::uint64_t seen = target.load(std::memory_order_relaxed);
  while (value > seen && !target.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}
}  // namespace

void instrumentation_end_block(LaunchState& launch) {
  AccessContext* c = active;
  if (c == nullptr) return;
  active = nullptr;
  TrafficCounters& t = launch.traffic;
  t.global_load += c->traffic.global_load;
  t.global_store += c->traffic.global_store;
  t.shared_load += c->traffic.shared_load;
  t.shared_store += c->traffic.shared_store;
  t.atomics += c->traffic.atomics;
  t.host_access += c->traffic.host_access;
  t.global_atomics += c->traffic.global_atomics;
  t.global_atomic_bytes += c->traffic.global_atomic_bytes;
  t.warp_ops += c->traffic.warp_ops;
  t.barrier_arrivals += c->traffic.barrier_arrivals;
  t.mma_lane_calls += c->traffic.mma_lane_calls;
  t.fragment_loads += c->traffic.fragment_loads;
  t.fragment_stores += c->traffic.fragment_stores;
  for (int i = 0; i < 5; ++i) t.global_accesses_by_width[i] += c->traffic.global_accesses_by_width[i];
  c->flush_all_requests();
  t.global_requests += c->requests;
  t.global_sectors += c->sectors;
  if (!c->thread_global_ops.empty()) {
    store_max(t.span_global_ops, *std::max_element(c->thread_global_ops.begin(), c->thread_global_ops.end()));
    store_max(t.span_shared_ops, *std::max_element(c->thread_shared_ops.begin(), c->thread_shared_ops.end()));
    store_max(t.span_warp_ops, *std::max_element(c->thread_warp_ops.begin(), c->thread_warp_ops.end()));
    store_max(t.span_mma_ops, *std::max_element(c->thread_mma_ops.begin(), c->thread_mma_ops.end()));
  }
  store_max(t.max_block_global_atomics, c->traffic.global_atomics);
  if (!c->atomics_per_address.empty()) {
    std::lock_guard<std::mutex> lock(t.atomic_addresses_mutex);
    for (const auto& [address, count] : c->atomics_per_address) t.atomics_per_address[address] += count;
  }
  if (c->peer_traffic) {
    // Loads came from the peer to the launch's device, stores went the other way.
    for (int peer = 0; peer < AccessContext::kMaxDevices; ++peer) {
      if (c->peer_loaded[peer] != 0) count_peer_access(peer, launch.device, c->peer_loaded[peer]);
      if (c->peer_stored[peer] != 0) count_peer_access(launch.device, peer, c->peer_stored[peer]);
      c->peer_loaded[peer] = c->peer_stored[peer] = 0;
    }
    c->peer_traffic = false;
  }
}

bool instrumentation_present() { return instrumented_code_present.load(std::memory_order_relaxed); }

void count_atomic(const void* address, unsigned bytes) {
  AccessContext* c = active;
  if (c == nullptr) return;
  const auto a = reinterpret_cast<std::uintptr_t>(address);
  const Space space = classify(*c, a);
  if (space == Space::Illegal || space == Space::Local || space == Space::Builtin) {
    on_access(address, bytes, true, __builtin_return_address(0));  // reports the illegal address
    return;
  }
  if (space == Space::Global && c->arena.contains(a)) {
    const int peer = check_global(*c, a, bytes, true, __builtin_return_address(0));
    if (peer >= 0) c->count_peer(peer, bytes, true);  // an atomic's bytes, counted as sent
  }
  ++c->traffic.atomics;
  if (space == Space::Global) {
    // A read-modify-write: its operand is read and written back.
    ++c->traffic.global_atomics;
    c->traffic.global_atomic_bytes += 2u * bytes;
    ++c->thread_global_ops[linear_thread_id()];
    ++c->atomics_per_address[a];
  } else if (space == Space::Shared) {
    ++c->thread_shared_ops[linear_thread_id()];
  }
}

void vector_copy(void* destination, const void* source, unsigned bytes) {
  const void* pc = __builtin_return_address(0);
  if (source != destination) {
    on_access(source, bytes, false, pc);
    on_access(destination, bytes, true, pc);
  }
  raw_memmove(destination, source, bytes);
}

namespace {
/// Counts and checks `bytes` at `address` as the loads or stores a GPU thread makes to copy or
/// fill them: the widest naturally aligned pieces, 16 bytes at most, so that the bytes, the
/// accesses' widths and the thread's operations (the span) come out as for a loop of them.
void on_range_access(const void* address, std::size_t bytes, bool store, const void* pc) {
  auto a = reinterpret_cast<std::uintptr_t>(address);
  while (bytes > 0) {
    unsigned width = 16;
    while (width > 1 && ((a & (width - 1)) != 0 || width > bytes)) width /= 2;
    on_access(reinterpret_cast<const void*>(a), width, store, pc);
    a += width;
    bytes -= width;
  }
}
}  // namespace

void count_device_access(const void* address, unsigned bytes, bool store, const void* pc) {
  if (active != nullptr) on_access(address, bytes, store, pc);
}

void* device_memcpy(void* destination, const void* source, std::size_t bytes) {
  const void* pc = __builtin_return_address(0);
  on_range_access(source, bytes, false, pc);
  on_range_access(destination, bytes, true, pc);
  return raw_memcpy(destination, source, bytes);
}

void* device_memmove(void* destination, const void* source, std::size_t bytes) {
  const void* pc = __builtin_return_address(0);
  on_range_access(source, bytes, false, pc);
  on_range_access(destination, bytes, true, pc);
  return raw_memmove(destination, source, bytes);
}

void* device_memset(void* destination, int value, std::size_t bytes) {
  on_range_access(destination, bytes, true, __builtin_return_address(0));
  return raw_memset(destination, value, bytes);
}

// The C library's functions, as the linker's --wrap names them (the simulator library is always
// linked with the wrap: cudasim/CMakeLists.txt).
void* raw_memcpy(void* destination, const void* source, std::size_t bytes) noexcept {
  return __real_memcpy(destination, source, bytes);
}
void* raw_memmove(void* destination, const void* source, std::size_t bytes) noexcept {
  return __real_memmove(destination, source, bytes);
}
void* raw_memset(void* destination, int value, std::size_t bytes) noexcept {
  return __real_memset(destination, value, bytes);
}

namespace {
/// Counts the part of [address, address + bytes) that is device, shared or page-locked memory as
/// the running kernel thread's access at `pc`; the thread's own locals and other host memory are
/// left alone (a call from the simulator's own bookkeeping, such as a growing table, lands there).
void count_library_range(const void* address, std::size_t bytes, bool store, const void* pc) {
  AccessContext* c = active;
  auto a = reinterpret_cast<std::uintptr_t>(address);
  while (bytes > 0) {
    unsigned width = 16;
    while (width > 1 && ((a & (width - 1)) != 0 || width > bytes)) width /= 2;
    const Space space = classify(*c, a);
    if (space == Space::Global || space == Space::Shared || space == Space::Host || (store && space == Space::Builtin))
      on_access(reinterpret_cast<const void*>(a), width, store, pc);
    a += width;
    bytes -= width;
  }
}
thread_local int device_work_depth = 0;

/// What the C library moves for host code: device memory is not the host's (check_host_access).
void check_host_range(const void* address, std::size_t bytes, bool store, const void* pc) {
  const auto a = reinterpret_cast<std::uintptr_t>(address);
  check_host_access(a, 1, store, pc);
  check_host_access(a + bytes - 1, 1, store, pc);
}

/// Both ends of a library copy, for a kernel thread (counted) or for host code (checked).
void library_copy(const void* destination, const void* source, std::size_t bytes, const void* pc) {
  if (bytes == 0) return;
  if (active != nullptr) {
    if (source != nullptr) count_library_range(source, bytes, false, pc);
    count_library_range(destination, bytes, true, pc);
  } else if (device_work_depth == 0 && running_thread().launch == nullptr) {
    // Host code. (A kernel thread of an uninstrumented program, which has no access context,
    // is not: the optimiser turns a kernel's zero-filling or copying loop into such a call.)
    if (source != nullptr) check_host_range(source, bytes, false, pc);
    check_host_range(destination, bytes, true, pc);
  }
}
}  // namespace

DeviceWorkScope::DeviceWorkScope() noexcept { ++device_work_depth; }
DeviceWorkScope::~DeviceWorkScope() { --device_work_depth; }

}  // namespace cudasim::detail

// ---- memcpy, memmove and memset reached from library code in a kernel ---------------------------
// The rewrite makes a kernel's own calls of these the counted device_memcpy and the like. Library
// code the counters do not see calls them too: std::copy of floats is a memmove in libstdc++'s
// out-of-line code, a large struct copy is a memcpy call. Every program linking the simulator
// gets -Wl,--wrap=memcpy,--wrap=memmove,--wrap=memset (cudasim/CMakeLists.txt), so that every call in
// the program comes here: while a kernel thread runs, what it moves in device, shared or
// page-locked memory is counted as that thread's (memcheck included); in host code, device memory
// is refused as the host's own loads and stores of it are (a host memcpy out of a cudaMalloc
// buffer is a segmentation fault on a GPU, and no host-copy counter would see it here). Then the
// C library copies; the simulator's own copies call it directly (raw_memcpy).
extern "C" {
void* __wrap_memcpy(void* destination, const void* source, std::size_t bytes) {
  cudasim::detail::library_copy(destination, source, bytes, __builtin_return_address(0));
  return cudasim::detail::raw_memcpy(destination, source, bytes);
}
void* __wrap_memmove(void* destination, const void* source, std::size_t bytes) {
  cudasim::detail::library_copy(destination, source, bytes, __builtin_return_address(0));
  return cudasim::detail::raw_memmove(destination, source, bytes);
}
void* __wrap_memset(void* destination, int value, std::size_t bytes) {
  cudasim::detail::library_copy(destination, nullptr, bytes, __builtin_return_address(0));
  return cudasim::detail::raw_memset(destination, value, bytes);
}
}

void* cudasim::dynamic_shared_memory(const void* pointer_slot) noexcept {
  // The slot is the `static thread_local T* const` the rewrite made from an `extern __shared__`
  // declaration: loading that pointer is not a shared-memory access. It is being initialised
  // now, on this OS thread's first use, after the store that set its guard byte (the Itanium
  // ABI's __tls_guard, also in the thread-local block): the GPU thread that ran the
  // initialisation wrote that byte and the block's other threads read it, which racecheck would
  // report as a race on shared memory.
  if (pointer_slot != nullptr && detail::context_storage != nullptr) {
    detail::AccessContext& c = *detail::context_storage;
    c.pointer_slots.push_back(reinterpret_cast<std::uintptr_t>(pointer_slot));
    const std::uintptr_t guard = c.last_byte_store;
    if (guard != 0 && c.tls.contains(guard) &&
        std::find(c.pointer_guards.begin(), c.pointer_guards.end(), guard) == c.pointer_guards.end()) {
      c.pointer_guards.push_back(guard);
      auto word = c.shared_words.find(guard & ~std::uintptr_t{3});
      if (word != c.shared_words.end()) word->second.bytes[guard & 3] = {};
    }
  }
  return detail::dynamic_shared_memory_of_this_thread();
}

// ---- the sanitizer-coverage hooks ------------------------------------------------------------
extern "C" {
#define CUDASIM_HOOKS(bits, bytes)                                                       \
  void __sanitizer_cov_load##bytes(void* address) {                                     \
    cudasim::detail::on_access(address, bytes, false, __builtin_return_address(0));      \
  }                                                                                      \
  void __sanitizer_cov_store##bytes(void* address) {                                    \
    cudasim::detail::on_access(address, bytes, true, __builtin_return_address(0));       \
  }
CUDASIM_HOOKS(8, 1)
CUDASIM_HOOKS(16, 2)
CUDASIM_HOOKS(32, 4)
CUDASIM_HOOKS(64, 8)
CUDASIM_HOOKS(128, 16)
#undef CUDASIM_HOOKS

/// Called once per instrumented object file at start-up: the program has counting kernels.
void __sanitizer_cov_8bit_counters_init(char*, char*) {
  cudasim::detail::instrumented_code_present.store(true);
}
}
