// Device memory: one reserved address range ("the arena"), so that the simulator can tell a
// device pointer from a host pointer with a range check and name the allocation an address
// belongs to.
//
// Every allocation gets fresh pages followed by at least one inaccessible guard page, and
// freed pages become inaccessible again and are not handed out twice until the arena wraps:
// running past the end of a buffer by a page, or touching a freed buffer, faults at the
// access instead of corrupting a neighbour. (Finer checks, byte-exact, need instrumented loads.)
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include "cudasim/host_memory.hpp"
#include "internal.hpp"

namespace cudasim::detail {

namespace {

constexpr std::size_t kAlignment = 256;  // cudaMalloc guarantees at least 256-byte alignment

std::size_t page_size() {
  static const std::size_t size = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return size;
}

/// What fresh memory (cudaMalloc, cudaMallocManaged, cudaMallocHost) holds. A GPU does not
/// zero it, so neither does the simulator by default: every 32-bit word is 0x7fffffff, which
/// reads as NaN (float, double, half, bf16) or as INT_MAX, so a kernel that reads memory nobody
/// wrote gives an obviously wrong answer instead of a lucky zero. CUDASIM_FRESH_MEMORY=zero
/// fills with zeros instead (to tell whether a wrong answer comes from such a read).
bool fresh_memory_zeroed() {
  static const bool zero = [] {
    const char* env = std::getenv("CUDASIM_FRESH_MEMORY");
    if (env == nullptr || std::strcmp(env, "pattern") == 0) return false;
    if (std::strcmp(env, "zero") == 0) return true;
    report("CUDASIM_FRESH_MEMORY=%s is neither 'pattern' nor 'zero'; using pattern", env);
    return false;
  }();
  return zero;
}

constexpr std::uint32_t kFreshPattern = 0x7fffffffu;

/// Fills `bytes` of fresh memory starting at the page-aligned `p` (whole pages: `bytes` is a
/// multiple of 4).
void fill_fresh(void* p, std::size_t bytes) {
  if (fresh_memory_zeroed()) {
    cudasim::detail::raw_memset(p, 0, bytes);
    return;
  }
  auto* words = static_cast<std::uint32_t*>(p);
  std::fill(words, words + bytes / sizeof(std::uint32_t), kFreshPattern);
}

struct Allocation {
  std::size_t size;
  std::size_t mapped;  // bytes made accessible (size rounded up to pages)
  const char* file;
  unsigned line;
  int device;          // the current device when it was allocated
};

class Arena {
 public:
  Arena() {
    // Reserve address space only (no memory): PROT_NONE with MAP_NORESERVE. Try smaller
    // ranges where the address space is limited.
    for (std::size_t bytes = std::size_t{1} << 40; bytes >= (std::size_t{1} << 30); bytes >>= 1) {
      void* p = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (p != MAP_FAILED) {
        begin_ = static_cast<char*>(p);
        end_ = begin_ + bytes;
        next_ = begin_;
        break;
      }
    }
  }

  bool contains(const void* p) const {
    const char* c = static_cast<const char*>(p);
    return c >= begin_ && c < end_;
  }

  void* allocate(std::size_t size, const char* file, unsigned line, int device = current_device()) {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::size_t page = page_size();
    const std::size_t mapped = (std::max<std::size_t>(size, 1) + page - 1) / page * page;
    const std::size_t footprint = mapped + page;  // plus a guard page
    if (begin_ == nullptr || used_ + mapped > device_properties().totalGlobalMem) return nullptr;
    if (next_ + footprint > end_) next_ = begin_;  // wrap: reuse address space of freed buffers
    char* p = next_;
    // After a wrap, skip over live allocations.
    for (auto it = live_.lower_bound(reinterpret_cast<std::uintptr_t>(p)); it != live_.end(); ++it) {
      const char* live_begin = reinterpret_cast<const char*>(it->first);
      if (live_begin >= p + footprint) break;
      p = const_cast<char*>(live_begin) + it->second.mapped + page;
    }
    if (p + footprint > end_) return nullptr;
    if (mprotect(p, mapped, PROT_READ | PROT_WRITE) != 0) return nullptr;
    // The pages are fresh (zero) after a free's MADV_DONTNEED; a GPU's are not.
    if (!fresh_memory_zeroed()) fill_fresh(p, mapped);
    next_ = p + footprint;
    live_[reinterpret_cast<std::uintptr_t>(p)] = Allocation{size, mapped, file, line, device};
    used_ += mapped;
    static_assert(kAlignment <= 4096, "pages are at least 4 KiB");
    return p;
  }

  /// Returns false for a pointer that is not the start of a live allocation.
  bool free(void* p) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = live_.find(reinterpret_cast<std::uintptr_t>(p));
    if (it == live_.end()) return false;
    release(it);
    return true;
  }

  void free_device(int device) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = live_.begin(); it != live_.end();) {
      auto next = std::next(it);
      if (it->second.device == device) release(it);
      it = next;
    }
  }

  bool find(const void* p, AllocationInfo& info, bool nearest) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto address = reinterpret_cast<std::uintptr_t>(p);
    auto it = live_.upper_bound(address);
    if (it != live_.begin()) {
      auto before = std::prev(it);
      if (address < before->first + before->second.size || nearest) {
        info = {before->first, before->second.size, before->second.file, before->second.line, before->second.device};
        return address < before->first + before->second.size || nearest;
      }
    }
    if (nearest && it != live_.end()) {
      info = {it->first, it->second.size, it->second.file, it->second.line, it->second.device};
      return true;
    }
    return false;
  }

  std::size_t used() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return used_;
  }

  /// The device of the live allocation containing `p`, or -1.
  int device_of(const void* p) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto address = reinterpret_cast<std::uintptr_t>(p);
    auto it = live_.upper_bound(address);
    if (it == live_.begin()) return -1;
    --it;
    return address < it->first + std::max<std::size_t>(it->second.size, 1) ? it->second.device : -1;
  }

  bool find_freed(const void* p, AllocationInfo& info) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto address = reinterpret_cast<std::uintptr_t>(p);
    for (auto it = freed_.rbegin(); it != freed_.rend(); ++it)
      if (address >= it->begin && address < it->begin + std::max<std::size_t>(it->size, 1)) {
        info = *it;
        return true;
      }
    return false;
  }

  void range(std::uintptr_t& begin, std::uintptr_t& end) const {
    begin = reinterpret_cast<std::uintptr_t>(begin_);
    end = reinterpret_cast<std::uintptr_t>(end_);
  }

 private:
  void release(std::map<std::uintptr_t, Allocation>::iterator it) {
    void* p = reinterpret_cast<void*>(it->first);
    madvise(p, it->second.mapped, MADV_DONTNEED);  // give the memory back
    mprotect(p, it->second.mapped, PROT_NONE);     // and make use-after-free fault
    used_ -= it->second.mapped;
    // Remember recent frees so that a later access can be named as a use after free.
    if (freed_.size() == kFreedRemembered) freed_.erase(freed_.begin());
    freed_.push_back({it->first, it->second.size, it->second.file, it->second.line, it->second.device});
    live_.erase(it);
  }

  static constexpr std::size_t kFreedRemembered = 256;
  std::vector<AllocationInfo> freed_;

  mutable std::mutex mutex_;
  char* begin_ = nullptr;
  char* end_ = nullptr;
  char* next_ = nullptr;
  std::size_t used_ = 0;
  std::map<std::uintptr_t, Allocation> live_;
};

Arena& arena() {
  static Arena instance;
  return instance;
}

/// A device's default memory pool: the bytes that stream-ordered allocations hold (used and
/// reserved are the same here: freed memory goes back at once), and its attributes.
struct MemPool : CUmemPoolHandle_st {
  int device = 0;
  std::uint64_t accessible_from = 0;  // devices besides its own granted access, a bit each (cudaMemPoolSetAccess)
  std::uint64_t used = 0, used_high = 0;
  std::uint64_t release_threshold = 0;
  int reuse_follow_event_dependencies = 1, reuse_allow_opportunistic = 1, reuse_allow_internal_dependencies = 1;
};
std::mutex pools_mutex;
std::map<int, MemPool> pools;                                            // by device
std::map<std::uintptr_t, std::pair<int, std::size_t>> pool_allocations;  // start -> device, size

/// The caller holds pools_mutex.
MemPool& pool_of(int device) {
  MemPool& pool = pools[device];
  pool.device = device;
  return pool;
}

void count_pool_allocation(const void* p, int device, std::size_t size) {
  std::lock_guard<std::mutex> lock(pools_mutex);
  MemPool& pool = pool_of(device);
  pool.used += size;
  pool.used_high = std::max(pool.used_high, pool.used);
  pool_allocations[reinterpret_cast<std::uintptr_t>(p)] = {device, size};
}

void count_pool_free(const void* p) {
  std::lock_guard<std::mutex> lock(pools_mutex);
  auto it = pool_allocations.find(reinterpret_cast<std::uintptr_t>(p));
  if (it == pool_allocations.end()) return;
  pool_of(it->second.first).used -= it->second.second;
  pool_allocations.erase(it);
}

/// The memory of `device` was all freed (cudaDeviceReset), and its default pool is new.
void forget_pool_allocations(int device) {
  std::lock_guard<std::mutex> lock(pools_mutex);
  for (auto it = pool_allocations.begin(); it != pool_allocations.end();)
    it = it->second.first == device ? pool_allocations.erase(it) : std::next(it);
  pool_of(device).used = 0;
  pool_of(device).accessible_from = 0;
}

}  // namespace

bool pool_allocation_access(std::uintptr_t begin, int device, bool& accessible) {
  std::lock_guard<std::mutex> lock(pools_mutex);
  const auto it = pool_allocations.find(begin);
  if (it == pool_allocations.end()) return false;
  const int owner = it->second.first;
  accessible = owner == device || ((pool_of(owner).accessible_from >> device) & 1u);
  return true;
}

namespace {
/// Page-locked host buffers from cudaMallocHost/cudaHostAlloc/cudaHostRegister.
std::mutex pinned_mutex;
std::map<std::uintptr_t, std::size_t> pinned;
/// Where cudaHostAlloc takes its memory (cudasim/host_memory.hpp); guarded by pinned_mutex.
cudasim::PinnedAllocator pinned_allocator;

const char* space_name(bool device) { return device ? "device" : "host"; }

/// Checks that the pointers of a copy are where `kind` says they are, and that the
/// `dst_bytes` at dst and `src_bytes` at src each lie inside one live allocation where they are
/// device memory (a 2-D copy spans different byte ranges on its two sides).
cudaError_t check_copy_spans(void* dst, std::size_t dst_bytes, const void* src, std::size_t src_bytes,
                             cudaMemcpyKind kind, const char* api) {
  if (dst_bytes == 0 || src_bytes == 0) return cudaSuccess;
  if (dst == nullptr || src == nullptr) {
    report("%s: %s pointer is null", api, dst == nullptr ? "destination" : "source");
    return cudaErrorInvalidValue;
  }
  const bool dst_device = is_device_pointer(dst);
  const bool src_device = is_device_pointer(src);
  bool want_dst = dst_device, want_src = src_device;
  switch (kind) {
    case cudaMemcpyHostToHost: want_dst = false; want_src = false; break;
    case cudaMemcpyHostToDevice: want_dst = true; want_src = false; break;
    case cudaMemcpyDeviceToHost: want_dst = false; want_src = true; break;
    case cudaMemcpyDeviceToDevice: want_dst = true; want_src = true; break;
    case cudaMemcpyDefault: break;
    default:
      report("%s: %d is not a cudaMemcpyKind", api, static_cast<int>(kind));
      return cudaErrorInvalidMemcpyDirection;
  }
  if (want_dst != dst_device || want_src != src_device) {
    report("%s: the copy says %s -> %s, but the destination %p is %s memory and the source %p is "
           "%s memory (swapped arguments or the wrong cudaMemcpyKind?)",
           api, space_name(want_src), space_name(want_dst), dst, space_name(dst_device), src,
           space_name(src_device));
    return cudaErrorInvalidValue;
  }
  // A device range must lie inside one allocation.
  for (const auto& [p, count] : {std::pair<const void*, std::size_t>{dst, dst_bytes}, {src, src_bytes}}) {
    if (!is_device_pointer(p)) continue;
    AllocationInfo info;
    if (!arena().find(p, info, false)) {
      report("%s: %p is not inside a live cudaMalloc allocation (freed?)", api, p);
      return cudaErrorInvalidValue;
    }
    const auto offset = reinterpret_cast<std::uintptr_t>(p) - info.begin;
    if (offset + count > info.size) {
      report("%s: %zu bytes at offset %zu overrun the %zu-byte allocation made at %s:%u", api,
             count, static_cast<std::size_t>(offset), info.size, info.file, info.line);
      return cudaErrorInvalidValue;
    }
  }
  return cudaSuccess;
}

cudaError_t check_copy(void* dst, const void* src, std::size_t count, cudaMemcpyKind kind, const char* api) {
  return check_copy_spans(dst, count, src, count, kind, api);
}

/// Pointers handed to cudaFreeAsync whose free has not run yet: a second free is refused at
/// once, as the allocation is no longer the caller's.
std::mutex pending_frees_mutex;
std::set<std::uintptr_t> pending_frees;

bool free_is_pending(const void* p) {
  std::lock_guard<std::mutex> lock(pending_frees_mutex);
  return pending_frees.count(reinterpret_cast<std::uintptr_t>(p)) != 0;
}

}  // namespace

bool is_device_pointer(const void* pointer) { return arena().contains(pointer); }

bool kernel_accessible(const void* pointer) {
  if (is_device_pointer(pointer)) return true;
  cudaPointerAttributes attributes;
  return cudaPointerGetAttributes(&attributes, pointer) == cudaSuccess &&
         attributes.type != cudaMemoryTypeUnregistered;
}

void* allocate_device_memory(std::size_t bytes, const char* file, unsigned line) {
  return arena().allocate(bytes, file, line);
}

void release_device_memory(void* pointer) { arena().free(pointer); }

bool describe_device_address(const void* pointer, std::string& description) {
  if (!is_device_pointer(pointer)) return false;
  AllocationInfo info;
  if (!arena().find(pointer, info, true)) {
    description = "device address with no allocation near it";
    return true;
  }
  const auto address = reinterpret_cast<std::uintptr_t>(pointer);
  if (address >= info.begin && address < info.begin + info.size) {
    description = format_string("byte %zu of the %zu-byte allocation made at %s:%u",
                                static_cast<std::size_t>(address - info.begin), info.size, info.file, info.line);
  } else if (address >= info.begin + info.size) {
    description = format_string("%zu bytes past the end of the %zu-byte allocation made at %s:%u",
                                static_cast<std::size_t>(address - info.begin - info.size), info.size,
                                info.file, info.line);
  } else {
    description = format_string("%zu bytes before the %zu-byte allocation made at %s:%u",
                                static_cast<std::size_t>(info.begin - address), info.size, info.file, info.line);
  }
  return true;
}

void free_device_memory(int device) {
  arena().free_device(device);
  forget_pool_allocations(device);
  forget_device_heap(device);
  forget_graph_memory(device);
}

bool find_live_allocation(const void* pointer, AllocationInfo& info) { return arena().find(pointer, info, false); }

bool find_freed_allocation(const void* pointer, AllocationInfo& info) { return arena().find_freed(pointer, info); }

bool find_nearest_allocation(const void* pointer, AllocationInfo& info) { return arena().find(pointer, info, true); }

void device_arena_range(std::uintptr_t& begin, std::uintptr_t& end) { arena().range(begin, end); }

bool is_pinned_host_pointer(const void* pointer) {
  std::uintptr_t begin;
  std::size_t size;
  return pinned_range_of(pointer, begin, size);
}

bool pinned_range_of(const void* pointer, std::uintptr_t& begin, std::size_t& size) {
  std::lock_guard<std::mutex> lock(pinned_mutex);
  const auto address = reinterpret_cast<std::uintptr_t>(pointer);
  auto it = pinned.upper_bound(address);
  if (it == pinned.begin()) return false;
  --it;
  if (address >= it->first + it->second) return false;
  begin = it->first;
  size = it->second;
  return true;
}

namespace {
std::mutex managed_mutex;
std::set<std::uintptr_t>& managed_starts() {
  static std::set<std::uintptr_t> starts;  // the first byte of each live cudaMallocManaged buffer
  return starts;
}
}  // namespace

void remember_managed(const void* start, bool live) {
  std::lock_guard<std::mutex> lock(managed_mutex);
  const auto address = reinterpret_cast<std::uintptr_t>(start);
  if (live) managed_starts().insert(address); else managed_starts().erase(address);
}

bool is_managed_allocation(std::uintptr_t start) {
  std::lock_guard<std::mutex> lock(managed_mutex);
  return managed_starts().count(start) != 0;
}

int device_of(const void* pointer) { return is_device_pointer(pointer) ? arena().device_of(pointer) : -1; }

namespace {
/// A synchronous copy runs on the current device's legacy stream; one that touches another
/// device's memory is also ordered after the work queued on that device, as cudaMemcpyPeer
/// is serialised with the work of both devices.
void wait_for_other_devices(const void* dst, const void* src) {
  const int here = current_device();
  for (const void* p : {dst, src}) {
    const int device = device_of(p);
    if (device >= 0 && device != here) synchronize_device_streams(device);
  }
}

/// Records a copy for the statistics: its direction and whether its host side is pinned.
void record_copy(const void* dst, const void* src, std::size_t bytes);

cudaMemcpyKind actual_direction(const void* dst, const void* src) {
  const bool d = is_device_pointer(dst), s = is_device_pointer(src);
  if (d && s) return cudaMemcpyDeviceToDevice;
  if (d) return cudaMemcpyHostToDevice;
  if (s) return cudaMemcpyDeviceToHost;
  return cudaMemcpyHostToHost;
}

void record_copy(const void* dst, const void* src, std::size_t bytes) {
  const cudaMemcpyKind direction = actual_direction(dst, src);
  const void* host_side = direction == cudaMemcpyHostToDevice ? src : dst;
  record_transfer(direction, bytes, is_pinned_host_pointer(host_side));
}
}  // namespace

cudaError_t copy_node_work(void* dst, const void* src, std::size_t count, cudaMemcpyKind kind,
                           std::function<void()>& work) {
  const cudaError_t valid = check_copy(dst, src, count, kind, "cudaGraphAddMemcpyNode1D");
  if (valid != cudaSuccess) return valid;
  work = [=] {
    if (count == 0) return;
    record_copy(dst, src, count);  // counted each time the graph runs
    copy_across_link(dst, src, count, [=] { cudasim::detail::raw_memcpy(dst, src, count); });
  };
  return cudaSuccess;
}

}  // namespace cudasim::detail

using namespace cudasim::detail;

cudaError_t cudaMalloc(void** ptr, size_t size, const char* file, unsigned line) {
  if (ptr == nullptr) return record_error(cudaErrorInvalidValue);
  if (sticky_error() != cudaSuccess) return record_error(sticky_error());
  void* p = arena().allocate(size, file, line);
  if (p == nullptr) {
    *ptr = nullptr;
    report("cudaMalloc of %zu bytes at %s:%u failed: out of (modelled) device memory", size, file, line);
    return record_error(cudaErrorMemoryAllocation);
  }
  *ptr = p;
  return cudaSuccess;
}

cudaError_t cudaMallocManaged(void** ptr, size_t size, unsigned, const char* file, unsigned line) {
  const cudaError_t status = cudaMalloc(ptr, size, file, line);
  if (status == cudaSuccess) remember_managed(*ptr, true);
  return status;
}

namespace {
/// The live managed allocation that holds `ptr` (what CUDA's managed-memory calls require).
bool find_managed_allocation(const void* ptr, AllocationInfo& info) {
  return ptr != nullptr && find_live_allocation(ptr, info) && is_managed_allocation(info.begin);
}

/// What an asynchronous call answers for its stream: an error only when the stream does not
/// exist (a busy stream is no error).
cudaError_t stream_must_exist(cudaStream_t stream) {
  const cudaError_t queried = cudaStreamQuery(stream);
  return queried == cudaErrorInvalidResourceHandle ? queried : cudaSuccess;
}

/// Whether [ptr, ptr + count) lies in one managed allocation and `location` names this
/// machine's host or one of its devices (the checks CUDA makes of a prefetch or an advice).
bool valid_managed_range(const void* ptr, size_t count, cudaMemLocation location) {
  AllocationInfo info;
  if (count == 0 || !find_managed_allocation(ptr, info)) return false;
  if (reinterpret_cast<std::uintptr_t>(ptr) + count > info.begin + info.size) return false;
  if (location.type == cudaMemLocationTypeDevice) return location.id >= 0 && location.id < device_count();
  return location.type == cudaMemLocationTypeHost || location.type == cudaMemLocationTypeHostNuma ||
         location.type == cudaMemLocationTypeHostNumaCurrent;
}
}  // namespace

cudaError_t cudaStreamAttachMemAsync(cudaStream_t stream, void* ptr, size_t length, unsigned flags) {
  if (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost && flags != cudaMemAttachSingle)
    return record_error(cudaErrorInvalidValue);
  AllocationInfo info;
  // A length of 0 attaches the whole allocation; any other must be exactly its extent.
  if (!find_managed_allocation(ptr, info) ||
      (length != 0 && (reinterpret_cast<std::uintptr_t>(ptr) != info.begin || length != info.size)))
    return record_error(cudaErrorInvalidValue);
  return stream_must_exist(stream);
}

cudaError_t cudaMemPrefetchAsync(const void* ptr, size_t count, cudaMemLocation location, unsigned flags,
                                 cudaStream_t stream) {
  if (flags != 0 || !valid_managed_range(ptr, count, location)) return record_error(cudaErrorInvalidValue);
  return stream_must_exist(stream);
}

cudaError_t cudaMemAdvise(const void* ptr, size_t count, cudaMemoryAdvise advice, cudaMemLocation location) {
  if (advice < cudaMemAdviseSetReadMostly || advice > cudaMemAdviseUnsetAccessedBy) return record_error(cudaErrorInvalidValue);
  // Read-mostly ignores the location; the others name a device or the host.
  if (advice == cudaMemAdviseSetReadMostly || advice == cudaMemAdviseUnsetReadMostly) location = {cudaMemLocationTypeHost, 0};
  return valid_managed_range(ptr, count, location) ? cudaSuccess : record_error(cudaErrorInvalidValue);
}

// ---- the device heap: malloc and free, new and delete in kernels ------------------------------
namespace cudasim::detail {
namespace {
/// What kernels allocated and have not freed: each block is a device allocation of its own (so
/// memcheck bounds it), charged to its device's heap, cudaLimitMallocHeapSize bytes.
struct DeviceHeap {
  std::mutex mutex;
  std::map<int, std::size_t> used;                          // bytes, by device
  std::map<std::uintptr_t, std::pair<int, std::size_t>> blocks;  // start -> device, bytes charged
};
DeviceHeap& heap_blocks() {
  static DeviceHeap heap;
  return heap;
}
bool in_kernel_thread() { return running_thread().launch != nullptr; }
}  // namespace

void forget_device_heap(int device) {
  DeviceHeap& h = heap_blocks();
  std::lock_guard<std::mutex> lock(h.mutex);
  h.used.erase(device);
  for (auto it = h.blocks.begin(); it != h.blocks.end();)
    it = it->second.first == device ? h.blocks.erase(it) : std::next(it);
}

bool is_device_heap_block(const void* pointer) {
  DeviceHeap& h = heap_blocks();
  std::lock_guard<std::mutex> lock(h.mutex);
  return h.blocks.count(reinterpret_cast<std::uintptr_t>(pointer)) != 0;
}

void* device_malloc(std::size_t bytes) {
  if (!in_kernel_thread()) return std::malloc(bytes);  // a __host__ __device__ function on the host
  const int device = running_thread().launch->device;
  // Charged in 16-byte units, as a GPU's heap aligns every block to 16 bytes.
  const std::size_t charged = (std::max<std::size_t>(bytes, 1) + 15) / 16 * 16;
  DeviceHeap& h = heap_blocks();
  std::lock_guard<std::mutex> lock(h.mutex);
  if (h.used[device] + charged > device_limit(device, cudaLimitMallocHeapSize)) return nullptr;  // as on a GPU
  void* p = arena().allocate(bytes, "malloc or new in a kernel (the device heap)", 0, device);
  if (p == nullptr) return nullptr;
  h.used[device] += charged;
  h.blocks[reinterpret_cast<std::uintptr_t>(p)] = {device, charged};
  return p;
}

void device_free(void* pointer) {
  if (pointer == nullptr) return;
  if (!in_kernel_thread() && !is_device_heap_block(pointer)) return std::free(pointer);
  {
    DeviceHeap& h = heap_blocks();
    std::lock_guard<std::mutex> lock(h.mutex);
    auto it = h.blocks.find(reinterpret_cast<std::uintptr_t>(pointer));
    if (it != h.blocks.end()) {
      h.used[it->second.first] -= it->second.second;
      h.blocks.erase(it);
      arena().free(pointer);
      return;
    }
  }
  throw KernelFault{cudaErrorIllegalAddress,
                    format_string("free or delete of %p in a kernel: not a block that malloc or new in a kernel "
                                  "returned (freed twice, or memory from cudaMalloc or the host?)",
                                  pointer)};
}
}  // namespace cudasim::detail

cudaError_t cudaFree(void* ptr) {
  if (ptr == nullptr) return cudaSuccess;
  if (is_device_heap_block(ptr)) {
    report("cudaFree(%p): memory from malloc or new in a kernel is freed by free or delete in a kernel", ptr);
    return record_error(cudaErrorInvalidValue);
  }
  // Freeing waits for work that may still use the buffer, as cudaFree synchronises (the
  // buffer's device; every device for a pointer that is not a live allocation).
  const int device = device_of(ptr);
  if (device >= 0) synchronize_device_streams(device); else synchronize_all_streams();
  if (is_graph_allocation(ptr)) {
    if (free_graph_allocation(ptr)) return cudaSuccess;
    report("cudaFree(%p): a graph allocation that is not in use (its graph has not run, or it was freed)", ptr);
    return record_error(cudaErrorInvalidValue);
  }
  remember_managed(ptr, false);
  if (!arena().free(ptr)) {
    report("cudaFree(%p): not the start of a live cudaMalloc allocation (double free, or a host "
           "pointer?)", ptr);
    return record_error(cudaErrorInvalidValue);
  }
  return cudaSuccess;
}

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int device) {
  if (pool == nullptr) return record_error(cudaErrorInvalidValue);
  if (device < 0 || device >= device_count()) return record_error(cudaErrorInvalidDevice);
  std::lock_guard<std::mutex> lock(pools_mutex);
  *pool = &pool_of(device);
  return cudaSuccess;
}

cudaError_t cudaDeviceGetMemPool(cudaMemPool_t* pool, int device) { return cudaDeviceGetDefaultMemPool(pool, device); }

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attribute, void* value) {
  if (pool == nullptr || value == nullptr) return record_error(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lock(pools_mutex);
  MemPool& p = *static_cast<MemPool*>(pool);
  switch (attribute) {
    case cudaMemPoolReuseFollowEventDependencies: p.reuse_follow_event_dependencies = *static_cast<int*>(value); break;
    case cudaMemPoolReuseAllowOpportunistic: p.reuse_allow_opportunistic = *static_cast<int*>(value); break;
    case cudaMemPoolReuseAllowInternalDependencies: p.reuse_allow_internal_dependencies = *static_cast<int*>(value); break;
    case cudaMemPoolAttrReleaseThreshold: p.release_threshold = *static_cast<std::uint64_t*>(value); break;
    case cudaMemPoolAttrReservedMemHigh:
    case cudaMemPoolAttrUsedMemHigh:  // may only be reset, to the current use
      if (*static_cast<std::uint64_t*>(value) != 0) return record_error(cudaErrorInvalidValue);
      p.used_high = p.used;
      break;
    default:
      return record_error(cudaErrorInvalidValue);
  }
  return cudaSuccess;
}

cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attribute, void* value) {
  if (pool == nullptr || value == nullptr) return record_error(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lock(pools_mutex);
  const MemPool& p = *static_cast<MemPool*>(pool);
  switch (attribute) {
    case cudaMemPoolReuseFollowEventDependencies: *static_cast<int*>(value) = p.reuse_follow_event_dependencies; break;
    case cudaMemPoolReuseAllowOpportunistic: *static_cast<int*>(value) = p.reuse_allow_opportunistic; break;
    case cudaMemPoolReuseAllowInternalDependencies: *static_cast<int*>(value) = p.reuse_allow_internal_dependencies; break;
    case cudaMemPoolAttrReleaseThreshold: *static_cast<std::uint64_t*>(value) = p.release_threshold; break;
    case cudaMemPoolAttrReservedMemCurrent:
    case cudaMemPoolAttrUsedMemCurrent: *static_cast<std::uint64_t*>(value) = p.used; break;
    case cudaMemPoolAttrReservedMemHigh:
    case cudaMemPoolAttrUsedMemHigh: *static_cast<std::uint64_t*>(value) = p.used_high; break;
    default: return record_error(cudaErrorInvalidValue);
  }
  return cudaSuccess;
}

cudaError_t cudaMemPoolSetAccess(cudaMemPool_t pool, const cudaMemAccessDesc* descriptions, size_t count) {
  if (pool == nullptr || (descriptions == nullptr && count != 0)) return record_error(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lock(pools_mutex);
  MemPool& p = *static_cast<MemPool*>(pool);
  // All are checked before any is applied, as the driver does.
  for (size_t i = 0; i < count; ++i) {
    const cudaMemAccessDesc& d = descriptions[i];
    if (d.location.type != cudaMemLocationTypeDevice) return record_error(cudaErrorInvalidValue);
    if (d.location.id < 0 || d.location.id >= device_count()) return record_error(cudaErrorInvalidDevice);
    // A pool's memory is read-write for its own device, always; read-only access is not offered.
    if (d.flags == cudaMemAccessFlagsProtRead) return record_error(cudaErrorInvalidValue);
    if (d.flags != cudaMemAccessFlagsProtNone && d.flags != cudaMemAccessFlagsProtReadWrite)
      return record_error(cudaErrorInvalidValue);
    if (d.location.id == p.device && d.flags != cudaMemAccessFlagsProtReadWrite)
      return record_error(cudaErrorInvalidDevice);
  }
  for (size_t i = 0; i < count; ++i) {
    const cudaMemAccessDesc& d = descriptions[i];
    if (d.location.id == p.device) continue;
    const std::uint64_t bit = std::uint64_t{1} << d.location.id;
    p.accessible_from = d.flags == cudaMemAccessFlagsProtReadWrite ? (p.accessible_from | bit) : (p.accessible_from & ~bit);
  }
  return cudaSuccess;
}

cudaError_t cudaMemPoolGetAccess(cudaMemAccessFlags* flags, cudaMemPool_t pool, cudaMemLocation* location) {
  if (flags == nullptr || pool == nullptr || location == nullptr || location->type != cudaMemLocationTypeDevice)
    return record_error(cudaErrorInvalidValue);
  if (location->id < 0 || location->id >= device_count()) return record_error(cudaErrorInvalidDevice);
  std::lock_guard<std::mutex> lock(pools_mutex);
  const MemPool& p = *static_cast<MemPool*>(pool);
  const bool granted = location->id == p.device || ((p.accessible_from >> location->id) & 1u);
  *flags = granted ? cudaMemAccessFlagsProtReadWrite : cudaMemAccessFlagsProtNone;
  return cudaSuccess;
}

cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t) {
  return pool == nullptr ? record_error(cudaErrorInvalidValue) : cudaSuccess;  // nothing is kept back
}

cudaError_t cudaMallocFromPoolAsync(void** ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream,
                                    const char* file, unsigned line) {
  if (pool == nullptr) return record_error(cudaErrorInvalidValue);
  // The pool's device owns the memory.
  return on_device(static_cast<MemPool*>(pool)->device,
                   [&] { return cudaMallocAsync(ptr, size, stream, file, line); });
}

cudaError_t cudaMallocAsync(void** ptr, size_t size, cudaStream_t stream, const char* file, unsigned line) {
  if (ptr == nullptr) return record_error(cudaErrorInvalidValue);
  if (is_capturing(stream)) {  // an allocation node of the graph being captured
    void* address = nullptr;
    std::function<void()> work;
    const cudaError_t made = new_graph_allocation(size, file, line, address, work);
    if (made != cudaSuccess) return record_error(made);
    const cudaError_t queued = enqueue(stream, std::move(work));
    if (queued != cudaSuccess) return record_error(queued);
    *ptr = address;
    return cudaSuccess;
  }
  // The address is reserved now, which is at least as early as stream order asks; the empty
  // task only checks the stream handle.
  const cudaError_t queued = enqueue(stream, [] {});
  if (queued != cudaSuccess) return record_error(queued);
  const cudaError_t e = cudaMalloc(ptr, size, file, line);
  if (e == cudaSuccess) count_pool_allocation(*ptr, current_device(), size);
  return e;
}

cudaError_t cudaFreeAsync(void* ptr, cudaStream_t stream) {
  if (ptr == nullptr) return cudaSuccess;
  if (is_graph_allocation(ptr)) {  // in a capture, the graph's free node
    return record_error(enqueue(stream, graph_free_work(ptr, "cudaFreeAsync")));
  }
  AllocationInfo info;
  if (!arena().find(ptr, info, false) || info.begin != reinterpret_cast<std::uintptr_t>(ptr) ||
      free_is_pending(ptr)) {
    report("cudaFreeAsync(%p): not the start of a live allocation (freed twice, or a host pointer?)", ptr);
    return record_error(cudaErrorInvalidValue);
  }
  if (is_capturing(stream)) {
    report("cudaFreeAsync(%p): a captured graph may free only what a graph allocated (cudaMallocAsync in a "
           "capture, or an allocation node); free memory from cudaMalloc after the graph has run", ptr);
    return record_error(cudaErrorStreamCaptureUnsupported);
  }
  {
    std::lock_guard<std::mutex> lock(pending_frees_mutex);
    pending_frees.insert(reinterpret_cast<std::uintptr_t>(ptr));
  }
  const cudaError_t queued = enqueue(stream, [ptr] {
    count_pool_free(ptr);
    arena().free(ptr);  // on the stream's thread, after the work queued before it
    std::lock_guard<std::mutex> lock(pending_frees_mutex);
    pending_frees.erase(reinterpret_cast<std::uintptr_t>(ptr));
  });
  if (queued != cudaSuccess) {
    std::lock_guard<std::mutex> lock(pending_frees_mutex);
    pending_frees.erase(reinterpret_cast<std::uintptr_t>(ptr));
  }
  return record_error(queued);
}

cudaError_t cudaMallocPitch(void** ptr, size_t* pitch, size_t width, size_t height, const char* file,
                            unsigned line) {
  if (ptr == nullptr || pitch == nullptr) return record_error(cudaErrorInvalidValue);
  // Rows start at multiples of the texture alignment (512 bytes), as on current GPUs, so that
  // a warp's row accesses are aligned.
  const std::size_t alignment = device_properties().textureAlignment;
  const std::size_t row = (width + alignment - 1) / alignment * alignment;
  const cudaError_t e = cudaMalloc(ptr, row * height, file, line);
  if (e == cudaSuccess) *pitch = row;
  return e;
}

cudaError_t cudaMallocHost(void** ptr, size_t size) { return cudaHostAlloc(ptr, size, cudaHostAllocDefault); }

cudaError_t cudaHostAlloc(void** ptr, size_t size, unsigned) {
  if (ptr == nullptr) return record_error(cudaErrorInvalidValue);
  const std::size_t page = page_size();
  const std::size_t bytes = (std::max<std::size_t>(size, 1) + page - 1) / page * page;
  void* p = nullptr;
  {
    std::lock_guard<std::mutex> lock(pinned_mutex);
    p = pinned_allocator.allocate ? pinned_allocator.allocate(bytes) : std::aligned_alloc(page, bytes);
  }
  if (p == nullptr) return record_error(cudaErrorMemoryAllocation);
  fill_fresh(p, bytes);  // page-locked memory is not defined to be zero either
  std::lock_guard<std::mutex> lock(pinned_mutex);
  pinned[reinterpret_cast<std::uintptr_t>(p)] = size;
  *ptr = p;
  return cudaSuccess;
}

cudaError_t cudaFreeHost(void* ptr) {
  if (ptr == nullptr) return cudaSuccess;
  synchronize_all_streams();
  {
    std::lock_guard<std::mutex> lock(pinned_mutex);
    if (pinned.erase(reinterpret_cast<std::uintptr_t>(ptr)) == 0) {
      report("cudaFreeHost(%p): not a pointer from cudaMallocHost/cudaHostAlloc", ptr);
      return record_error(cudaErrorInvalidValue);
    }
    if (pinned_allocator.release && pinned_allocator.release(ptr)) return cudaSuccess;
  }
  std::free(ptr);
  return cudaSuccess;
}

void cudasim::set_pinned_allocator(PinnedAllocator allocator) {
  std::lock_guard<std::mutex> lock(pinned_mutex);
  pinned_allocator = allocator;
}

cudaError_t cudaHostRegister(void* ptr, size_t size, unsigned) {
  if (ptr == nullptr || size == 0) return record_error(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lock(pinned_mutex);
  pinned[reinterpret_cast<std::uintptr_t>(ptr)] = size;
  return cudaSuccess;
}

cudaError_t cudaHostUnregister(void* ptr) {
  std::lock_guard<std::mutex> lock(pinned_mutex);
  if (pinned.erase(reinterpret_cast<std::uintptr_t>(ptr)) == 0) return record_error(cudaErrorInvalidValue);
  return cudaSuccess;
}

cudaError_t cudaHostGetDevicePointer(void** device_pointer, void* host_pointer, unsigned flags) {
  if (device_pointer == nullptr || flags != 0) return record_error(cudaErrorInvalidValue);
  if (!is_pinned_host_pointer(host_pointer)) {
    report("cudaHostGetDevicePointer(%p): not page-locked host memory (cudaHostAlloc, cudaMallocHost or "
           "cudaHostRegister)", host_pointer);
    return record_error(cudaErrorInvalidValue);
  }
  *device_pointer = host_pointer;  // unified addressing: a kernel uses the host address itself
  return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  if (free_bytes == nullptr || total_bytes == nullptr) return record_error(cudaErrorInvalidValue);
  *total_bytes = device_properties().totalGlobalMem;
  *free_bytes = *total_bytes - arena().used();
  return cudaSuccess;
}

cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* ptr) {
  if (attributes == nullptr) return record_error(cudaErrorInvalidValue);
  *attributes = {};
  attributes->device = 0;
  if (is_device_pointer(ptr)) {
    attributes->device = device_of(ptr);
    attributes->type = cudaMemoryTypeDevice;
    attributes->devicePointer = const_cast<void*>(ptr);
  } else if (is_pinned_host_pointer(ptr)) {
    attributes->type = cudaMemoryTypeHost;
    attributes->hostPointer = const_cast<void*>(ptr);
    attributes->devicePointer = const_cast<void*>(ptr);
  } else {
    attributes->type = cudaMemoryTypeUnregistered;
    attributes->device = -2;
  }
  return cudaSuccess;
}

namespace {
/// A copy between the host's pageable memory and a device: it does not overlap the device's
/// kernels (see cudaMemcpyAsync).
bool pageable_host_side(const void* dst, const void* src) {
  if (is_device_pointer(dst) == is_device_pointer(src)) return false;
  return !is_pinned_host_pointer(is_device_pointer(dst) ? src : dst);
}
}  // namespace

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind, cudaStream_t stream) {
  const cudaError_t valid = check_copy(dst, src, count, kind, "cudaMemcpyAsync");
  if (valid != cudaSuccess) return record_error(valid);
  if (sticky_error() != cudaSuccess) return record_error(sticky_error());
  if (count == 0) return cudaSuccess;
  // CUDA overlaps a copy with the host only when the host side is page-locked: with pageable
  // memory a device-to-host copy returns when done and a host-to-device copy has consumed its
  // source before returning, and the copy does not overlap kernels either (CUDA's Best
  // Practices Guide: overlapping transfers with computation needs pinned memory). Copies
  // between device buffers stay asynchronous.
  const void* host_side = is_device_pointer(dst) ? src : dst;
  // While the stream captures, the copy becomes a node of the graph, pageable or not, as in CUDA.
  const bool asynchronous = is_device_pointer(host_side) || is_pinned_host_pointer(host_side) || is_capturing(stream);
  auto copy = [=] { copy_across_link(dst, src, count, [=] { cudasim::detail::raw_memcpy(dst, src, count); }); };
  record_copy(dst, src, count);
  return record_error(asynchronous ? enqueue(stream, copy) : run_synchronously(stream, copy, true));
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  const cudaError_t valid = check_copy(dst, src, count, kind, "cudaMemcpy");
  if (valid != cudaSuccess) return record_error(valid);
  if (sticky_error() != cudaSuccess) return record_error(sticky_error());
  wait_for_other_devices(dst, src);
  // Ordered after earlier work on the legacy stream (and so after every blocking stream).
  record_copy(dst, src, count);
  run_synchronously(nullptr, [=] { copy_across_link(dst, src, count, [=] { cudasim::detail::raw_memcpy(dst, src, count); }); },
                    pageable_host_side(dst, src));
  return record_error(sticky_error());
}

namespace {
/// A copy of rows of `width` bytes: `height` rows per slice and `depth` slices, each side with
/// its own row pitch and slice stride (a 2-D copy is one slice).
struct StridedCopy {
  char* dst;
  const char* src;
  std::size_t width, height, depth;
  std::size_t dst_pitch, dst_slice, src_pitch, src_slice;

  std::size_t bytes() const { return width * height * depth; }
  void run() const {
    const StridedCopy c = *this;
    copy_across_link(dst, src, bytes(), [c] {
      for (std::size_t z = 0; z < c.depth; ++z)
        for (std::size_t y = 0; y < c.height; ++y)
          cudasim::detail::raw_memcpy(c.dst + z * c.dst_slice + y * c.dst_pitch, c.src + z * c.src_slice + y * c.src_pitch, c.width);
    });
  }
};

/// The bytes from the first to the last one a strided access touches; false on overflow.
bool strided_span(std::size_t width, std::size_t height, std::size_t depth, std::size_t pitch, std::size_t slice,
                  std::size_t& span) {
  std::size_t rows = 0, slices = 0;
  return !__builtin_mul_overflow(pitch, height - 1, &rows) && !__builtin_mul_overflow(slice, depth - 1, &slices) &&
         !__builtin_add_overflow(rows, slices, &span) && !__builtin_add_overflow(span, width, &span);
}

/// Checks a strided copy's pitches, the memory spaces `kind` names and its device ranges.
cudaError_t check_strided_copy(const StridedCopy& c, cudaMemcpyKind kind, const char* api) {
  if (c.width > c.dst_pitch || c.width > c.src_pitch) {
    report("%s: the width (%zu bytes) is larger than the destination pitch (%zu) or the source pitch (%zu)",
           api, c.width, c.dst_pitch, c.src_pitch);
    return cudaErrorInvalidPitchValue;
  }
  if (c.width == 0 || c.height == 0 || c.depth == 0) return cudaSuccess;
  std::size_t dst_span = 0, src_span = 0;
  if (!strided_span(c.width, c.height, c.depth, c.dst_pitch, c.dst_slice, dst_span) ||
      !strided_span(c.width, c.height, c.depth, c.src_pitch, c.src_slice, src_span)) {
    report("%s: the copy's size overflows the address space", api);
    return cudaErrorInvalidValue;
  }
  const cudaError_t valid = check_copy_spans(c.dst, dst_span, c.src, src_span, kind, api);
  if (valid != cudaSuccess) return valid;
  return sticky_error();
}

StridedCopy copy_2d(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height) {
  return {static_cast<char*>(dst), static_cast<const char*>(src), width, height, 1, dpitch, dpitch * height,
          spitch, spitch * height};
}

/// One side of a 3-D copy: where its first byte is, and its row pitch and slice stride.
cudaError_t pitched_side(const cudaPitchedPtr& side, const cudaPos& pos, const cudaExtent& extent,
                         const char* which, const char* api, char*& first, std::size_t& pitch,
                         std::size_t& slice) {
  if (extent.width > side.pitch || pos.x > side.pitch - extent.width) {
    report("%s: the %s's rows are %zu bytes apart, but the copy reaches byte %zu of a row", api, which, side.pitch,
           pos.x + extent.width);
    // cudaErrorInvalidValue, not the 2-D copies' cudaErrorInvalidPitchValue: measured on an H200
    // (CUDA 13.0, 2026-11-27).
    return cudaErrorInvalidValue;
  }
  if (extent.depth > 1 && pos.y + extent.height > side.ysize) {
    report("%s: the %s's slices have %zu rows, but the copy of %zu slices reaches row %zu of each", api, which,
           side.ysize, extent.depth, pos.y + extent.height);
    return cudaErrorInvalidValue;
  }
  pitch = side.pitch;
  slice = side.pitch * side.ysize;
  first = static_cast<char*>(side.ptr) + pos.z * slice + pos.y * pitch + pos.x;
  return cudaSuccess;
}

/// `p` with its CUDA arrays as pitched regions (an array's texels are packed in rows), in `q`:
/// where an array takes part, the extent's width and the array's position count texels, so they
/// become bytes.
cudaError_t arrays_as_pitched(const cudaMemcpy3DParms& p, const char* api, cudaMemcpy3DParms& q) {
  q = p;
  if (p.srcArray == nullptr && p.dstArray == nullptr) return cudaSuccess;
  ArrayLayout src, dst;
  if ((p.srcArray != nullptr && !array_layout(p.srcArray, src)) || (p.dstArray != nullptr && !array_layout(p.dstArray, dst))) {
    report("%s: the %s array is not a live CUDA array", api, p.srcArray != nullptr && src.data == nullptr ? "source"
                                                                                                          : "destination");
    return cudaErrorInvalidResourceHandle;
  }
  const std::size_t element = p.srcArray != nullptr ? src.element_bytes : dst.element_bytes;
  const cudaExtent& e = p.extent;
  const auto as_pitched = [&](const ArrayLayout& a, const cudaPos& pos, const char* which, cudaPitchedPtr& side,
                              cudaPos& at) {
    if (pos.y + e.height > a.rows || pos.z + e.depth > a.slices || (pos.x + e.width) * element > a.row_bytes) {
      report("%s: a copy of %zu x %zu x %zu texels at (%zu, %zu, %zu) does not fit the %s array of %zu x %zu x %zu "
             "texels", api, e.width, e.height, e.depth, pos.x, pos.y, pos.z, which, a.row_bytes / element, a.rows,
             a.slices);
      return cudaErrorInvalidValue;
    }
    side = make_cudaPitchedPtr(a.data, a.row_bytes, a.row_bytes, a.rows);
    at = make_cudaPos(pos.x * element, pos.y, pos.z);
    return cudaSuccess;
  };
  cudaError_t valid = cudaSuccess;
  if (p.srcArray != nullptr) valid = as_pitched(src, p.srcPos, "source", q.srcPtr, q.srcPos);
  if (valid == cudaSuccess && p.dstArray != nullptr) valid = as_pitched(dst, p.dstPos, "destination", q.dstPtr, q.dstPos);
  q.srcArray = q.dstArray = nullptr;
  q.extent.width = e.width * element;
  return valid;
}

/// The strided copy that a cudaMemcpy3DParms describes, validated.
cudaError_t copy_3d(const cudaMemcpy3DParms* given, const char* api, StridedCopy& c) {
  if (given == nullptr) return cudaErrorInvalidValue;
  cudaMemcpy3DParms linear;
  const cudaError_t arrays = arrays_as_pitched(*given, api, linear);
  if (arrays != cudaSuccess) return arrays;
  const cudaMemcpy3DParms* p = &linear;
  const cudaExtent& e = p->extent;
  char* src = nullptr;
  c = {nullptr, nullptr, e.width, e.height, e.depth, 0, 0, 0, 0};
  if (c.bytes() == 0) return cudaSuccess;
  cudaError_t valid = pitched_side(p->dstPtr, p->dstPos, e, "destination", api, c.dst, c.dst_pitch, c.dst_slice);
  if (valid == cudaSuccess)
    valid = pitched_side(p->srcPtr, p->srcPos, e, "source", api, src, c.src_pitch, c.src_slice);
  c.src = src;
  return valid == cudaSuccess ? check_strided_copy(c, p->kind, api) : valid;
}

/// A checked strided copy, done as cudaMemcpy does a copy: after the legacy stream's work.
cudaError_t copy_now(const StridedCopy& c) {
  if (c.bytes() == 0) return cudaSuccess;
  wait_for_other_devices(c.dst, c.src);
  record_copy(c.dst, c.src, c.bytes());
  run_synchronously(nullptr, [c] { c.run(); }, pageable_host_side(c.dst, c.src));
  return sticky_error();
}

/// A checked strided copy, queued on `stream` as cudaMemcpyAsync queues a copy: asynchronous
/// only when the host side, if any, is page-locked.
cudaError_t copy_on_stream(const StridedCopy& c, cudaStream_t stream) {
  if (c.bytes() == 0) return cudaSuccess;
  record_copy(c.dst, c.src, c.bytes());
  const void* host_side = is_device_pointer(c.dst) ? c.src : c.dst;
  const bool asynchronous = is_device_pointer(host_side) || is_pinned_host_pointer(host_side) || is_capturing(stream);
  auto rows = [c] { c.run(); };
  return asynchronous ? enqueue(stream, rows) : run_synchronously(stream, rows, true);
}
}  // namespace

cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                         size_t height, cudaMemcpyKind kind) {
  const StridedCopy c = copy_2d(dst, dpitch, src, spitch, width, height);
  const cudaError_t valid = check_strided_copy(c, kind, "cudaMemcpy2D");
  return record_error(valid != cudaSuccess ? valid : copy_now(c));
}

cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                              size_t height, cudaMemcpyKind kind, cudaStream_t stream) {
  const StridedCopy c = copy_2d(dst, dpitch, src, spitch, width, height);
  const cudaError_t valid = check_strided_copy(c, kind, "cudaMemcpy2DAsync");
  return record_error(valid != cudaSuccess ? valid : copy_on_stream(c, stream));
}

namespace {
/// A block of `height` rows of `width` bytes in `array`, from byte `w_offset` of row `h_offset`:
/// its first byte and the array's row pitch; an error where it is not a live array or the block
/// does not fit its first slice.
cudaError_t array_block(const cudaArray* array, std::size_t w_offset, std::size_t h_offset, std::size_t width,
                        std::size_t height, const char* api, char*& first, std::size_t& pitch) {
  ArrayLayout a;
  if (!array_layout(array, a)) {
    report("%s: %p is not a live CUDA array", api, static_cast<const void*>(array));
    return cudaErrorInvalidResourceHandle;
  }
  if (w_offset + width > a.row_bytes || h_offset + height > a.rows) {
    report("%s: %zu rows of %zu bytes from byte %zu of row %zu do not fit the array's %zu rows of %zu bytes", api,
           height, width, w_offset, h_offset, a.rows, a.row_bytes);
    return cudaErrorInvalidValue;
  }
  first = a.data + h_offset * a.row_bytes + w_offset;
  pitch = a.row_bytes;
  return cudaSuccess;
}

/// The copy of cudaMemcpy2DToArray and cudaMemcpy2DFromArray (`to_array`), checked.
cudaError_t array_copy_2d(bool to_array, const cudaArray* array, std::size_t w_offset, std::size_t h_offset,
                          const void* other, std::size_t other_pitch, std::size_t width, std::size_t height,
                          cudaMemcpyKind kind, const char* api, StridedCopy& c) {
  char* first = nullptr;
  std::size_t pitch = 0;
  const cudaError_t block = array_block(array, w_offset, h_offset, width, height, api, first, pitch);
  if (block != cudaSuccess) return block;
  c = to_array ? copy_2d(first, pitch, other, other_pitch, width, height)
               : copy_2d(const_cast<void*>(other), other_pitch, first, pitch, width, height);
  return check_strided_copy(c, kind, api);
}
}  // namespace

cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, size_t w_offset, size_t h_offset, const void* src, size_t spitch,
                                size_t width, size_t height, cudaMemcpyKind kind) {
  StridedCopy c;
  const cudaError_t valid =
      array_copy_2d(true, dst, w_offset, h_offset, src, spitch, width, height, kind, "cudaMemcpy2DToArray", c);
  return record_error(valid != cudaSuccess ? valid : copy_now(c));
}

cudaError_t cudaMemcpy2DToArrayAsync(cudaArray_t dst, size_t w_offset, size_t h_offset, const void* src,
                                     size_t spitch, size_t width, size_t height, cudaMemcpyKind kind,
                                     cudaStream_t stream) {
  StridedCopy c;
  const cudaError_t valid =
      array_copy_2d(true, dst, w_offset, h_offset, src, spitch, width, height, kind, "cudaMemcpy2DToArrayAsync", c);
  return record_error(valid != cudaSuccess ? valid : copy_on_stream(c, stream));
}

cudaError_t cudaMemcpy2DFromArray(void* dst, size_t dpitch, cudaArray_const_t src, size_t w_offset, size_t h_offset,
                                  size_t width, size_t height, cudaMemcpyKind kind) {
  StridedCopy c;
  const cudaError_t valid =
      array_copy_2d(false, src, w_offset, h_offset, dst, dpitch, width, height, kind, "cudaMemcpy2DFromArray", c);
  return record_error(valid != cudaSuccess ? valid : copy_now(c));
}

cudaError_t cudaMemcpy2DFromArrayAsync(void* dst, size_t dpitch, cudaArray_const_t src, size_t w_offset,
                                       size_t h_offset, size_t width, size_t height, cudaMemcpyKind kind,
                                       cudaStream_t stream) {
  StridedCopy c;
  const cudaError_t valid = array_copy_2d(false, src, w_offset, h_offset, dst, dpitch, width, height, kind,
                                          "cudaMemcpy2DFromArrayAsync", c);
  return record_error(valid != cudaSuccess ? valid : copy_on_stream(c, stream));
}

namespace {
/// Where `count` bytes from byte `w_offset` of row `h_offset` on, row after row, lie in `array`.
cudaError_t array_run(const cudaArray* array, std::size_t w_offset, std::size_t h_offset, std::size_t count,
                      const char* api, char*& first) {
  ArrayLayout a;
  if (!array_layout(array, a)) {
    report("%s: %p is not a live CUDA array", api, static_cast<const void*>(array));
    return cudaErrorInvalidResourceHandle;
  }
  const std::size_t offset = h_offset * a.row_bytes + w_offset;
  if (w_offset >= a.row_bytes || offset + count > a.row_bytes * a.rows * a.slices) {
    report("%s: %zu bytes from byte %zu of row %zu do not fit the array's %zu rows of %zu bytes", api, count,
           w_offset, h_offset, a.rows * a.slices, a.row_bytes);
    return cudaErrorInvalidValue;
  }
  first = a.data + offset;
  return cudaSuccess;
}
}  // namespace

cudaError_t cudaMemcpyToArray(cudaArray_t dst, size_t w_offset, size_t h_offset, const void* src, size_t count,
                              cudaMemcpyKind kind) {
  char* first = nullptr;
  const cudaError_t valid = array_run(dst, w_offset, h_offset, count, "cudaMemcpyToArray", first);
  return valid != cudaSuccess ? record_error(valid) : cudaMemcpy(first, src, count, kind);
}

cudaError_t cudaMemcpyFromArray(void* dst, cudaArray_const_t src, size_t w_offset, size_t h_offset, size_t count,
                                cudaMemcpyKind kind) {
  char* first = nullptr;
  const cudaError_t valid = array_run(src, w_offset, h_offset, count, "cudaMemcpyFromArray", first);
  return valid != cudaSuccess ? record_error(valid) : cudaMemcpy(dst, first, count, kind);
}

cudaError_t cudaMemcpy3D(const cudaMemcpy3DParms* params) {
  StridedCopy c;
  const cudaError_t valid = copy_3d(params, "cudaMemcpy3D", c);
  return record_error(valid != cudaSuccess ? valid : copy_now(c));
}

cudaError_t cudaMemcpy3DAsync(const cudaMemcpy3DParms* params, cudaStream_t stream) {
  StridedCopy c;
  const cudaError_t valid = copy_3d(params, "cudaMemcpy3DAsync", c);
  return record_error(valid != cudaSuccess ? valid : copy_on_stream(c, stream));
}

cudaError_t cudaMalloc3D(cudaPitchedPtr* pitched, cudaExtent extent, const char* file, unsigned line) {
  if (pitched == nullptr) return record_error(cudaErrorInvalidValue);
  void* p = nullptr;
  size_t pitch = 0;
  const cudaError_t e = cudaMallocPitch(&p, &pitch, extent.width, extent.height * extent.depth, file, line);
  if (e == cudaSuccess) *pitched = make_cudaPitchedPtr(p, pitch, extent.width, extent.height);
  return e;
}

namespace cudasim::detail {
cudaError_t copy_3d_node_work(const cudaMemcpy3DParms* params, std::function<void()>& work) {
  StridedCopy c;
  const cudaError_t valid = copy_3d(params, "cudaGraphAddMemcpyNode", c);
  if (valid != cudaSuccess) return valid;
  work = [c] {
    if (c.bytes() == 0) return;
    record_copy(c.dst, c.src, c.bytes());  // counted each time the graph runs
    c.run();
  };
  return cudaSuccess;
}
}  // namespace cudasim::detail

namespace {
/// Checks that `count` bytes at `ptr` lie inside one live cudaMalloc allocation.
cudaError_t check_memset_range(void* ptr, std::size_t count, const char* api) {
  AllocationInfo info;
  if (!is_device_pointer(ptr) || !arena().find(ptr, info, false) ||
      reinterpret_cast<std::uintptr_t>(ptr) - info.begin + count > info.size) {
    report("%s(%p, ..., %zu bytes): the range is not inside one live cudaMalloc allocation", api, ptr, count);
    return cudaErrorInvalidValue;
  }
  return sticky_error();
}

/// Rows of elements of 1, 2 or 4 bytes set to (the low bytes of) `value`: `height` rows per
/// slice, `depth` slices (cudaMemset is one row of bytes).
struct StridedFill {
  char* dst;
  std::size_t element_size, width, height, depth;  // width in elements
  std::size_t pitch, slice;
  unsigned value;

  std::size_t bytes() const { return element_size * width * height * depth; }
  void run() const {
    for (std::size_t z = 0; z < depth; ++z)
      for (std::size_t y = 0; y < height; ++y) {
        char* row = dst + z * slice + y * pitch;
        if (element_size == 1) {
          cudasim::detail::raw_memset(row, static_cast<int>(value & 0xff), width);
          continue;
        }
        for (std::size_t x = 0; x < width; ++x) cudasim::detail::raw_memcpy(row + x * element_size, &value, element_size);
      }
    charge_operation("memset", format_string("memset %zu bytes", bytes()),
                     cudasim::model_library_call(0, bytes(), false, replaying_graph(), cudasim::modelled_gpu()).total_ns);
  }
};

/// Checks a fill's pitch and that it lies inside one allocation.
cudaError_t check_fill(const StridedFill& f, const char* api) {
  const std::size_t row_bytes = f.element_size * f.width;
  if (f.height > 1 && row_bytes > f.pitch) {
    report("%s: rows of %zu bytes do not fit a pitch of %zu bytes", api, row_bytes, f.pitch);
    return cudaErrorInvalidPitchValue;
  }
  if (f.bytes() == 0) return cudaSuccess;
  std::size_t span = 0;
  if (!strided_span(row_bytes, f.height, f.depth, f.pitch, f.slice, span)) {
    report("%s: the fill's size overflows the address space", api);
    return cudaErrorInvalidValue;
  }
  return check_memset_range(f.dst, span, api);
}

/// A checked fill, queued on `stream` (or, with `wait`, done before returning).
cudaError_t fill_on_stream(const StridedFill& f, cudaStream_t stream, bool wait) {
  if (f.bytes() == 0) return cudaSuccess;
  record_memset(f.bytes());
  const cudaError_t queued = enqueue(stream, [f] { f.run(); });
  if (queued != cudaSuccess || !wait) return queued;
  run_synchronously(nullptr, {});
  return sticky_error();
}

/// cudaMemset, cudaMemset2D and cudaMemset3D: queued on the legacy stream and returning at
/// once, as on a GPU (CUDA's API notes: memset is asynchronous with respect to the host except
/// when the target is pinned host memory). Waiting here would order work on non-blocking
/// streams after the fill by accident: that hid a race in lesson 05's harness that a GPU showed
/// (docs/gpu-results.md, 2026-11-27).
cudaError_t fill_on_legacy_stream(const StridedFill& f) {
  return fill_on_stream(f, nullptr, is_pinned_host_pointer(f.dst));
}

StridedFill fill_3d(const cudaPitchedPtr& pitched, int value, const cudaExtent& extent) {
  return {static_cast<char*>(pitched.ptr), 1, extent.width, extent.height, extent.depth, pitched.pitch,
          pitched.pitch * pitched.ysize, static_cast<unsigned>(value)};
}
}  // namespace

cudaError_t cudaMemsetAsync(void* ptr, int value, size_t count, cudaStream_t stream) {
  const StridedFill f{static_cast<char*>(ptr), 1, count, 1, 1, count, count, static_cast<unsigned>(value)};
  const cudaError_t valid = check_fill(f, "cudaMemset");
  return record_error(valid != cudaSuccess ? valid : fill_on_stream(f, stream, false));
}

cudaError_t cudaMemset(void* ptr, int value, size_t count) {
  const StridedFill f{static_cast<char*>(ptr), 1, count, 1, 1, count, count, static_cast<unsigned>(value)};
  const cudaError_t valid = check_fill(f, "cudaMemset");
  return record_error(valid != cudaSuccess ? valid : fill_on_legacy_stream(f));
}

cudaError_t cudaMemset2DAsync(void* ptr, size_t pitch, int value, size_t width, size_t height, cudaStream_t stream) {
  const StridedFill f{static_cast<char*>(ptr), 1, width, height, 1, pitch, pitch * height, static_cast<unsigned>(value)};
  const cudaError_t valid = check_fill(f, "cudaMemset2D");
  return record_error(valid != cudaSuccess ? valid : fill_on_stream(f, stream, false));
}

cudaError_t cudaMemset2D(void* ptr, size_t pitch, int value, size_t width, size_t height) {
  const StridedFill f{static_cast<char*>(ptr), 1, width, height, 1, pitch, pitch * height, static_cast<unsigned>(value)};
  const cudaError_t valid = check_fill(f, "cudaMemset2D");
  return record_error(valid != cudaSuccess ? valid : fill_on_legacy_stream(f));
}

cudaError_t cudaMemset3DAsync(cudaPitchedPtr pitched, int value, cudaExtent extent, cudaStream_t stream) {
  const StridedFill f = fill_3d(pitched, value, extent);
  const cudaError_t valid = check_fill(f, "cudaMemset3D");
  return record_error(valid != cudaSuccess ? valid : fill_on_stream(f, stream, false));
}

cudaError_t cudaMemset3D(cudaPitchedPtr pitched, int value, cudaExtent extent) {
  const StridedFill f = fill_3d(pitched, value, extent);
  const cudaError_t valid = check_fill(f, "cudaMemset3D");
  return record_error(valid != cudaSuccess ? valid : fill_on_legacy_stream(f));
}

namespace cudasim::detail {
cudaError_t memset_node_work(const cudaMemsetParams* params, std::function<void()>& work) {
  if (params == nullptr) return cudaErrorInvalidValue;
  if (params->elementSize != 1 && params->elementSize != 2 && params->elementSize != 4) {
    report("cudaGraphAddMemsetNode: elements of %u bytes; a memset node sets elements of 1, 2 or 4 bytes",
           params->elementSize);
    return cudaErrorInvalidValue;
  }
  const StridedFill f{static_cast<char*>(params->dst), params->elementSize, params->width, params->height, 1,
                      params->pitch, params->pitch * params->height, params->value};
  const cudaError_t valid = check_fill(f, "cudaGraphAddMemsetNode");
  if (valid != cudaSuccess) return valid;
  work = [f] {
    if (f.bytes() == 0) return;
    record_memset(f.bytes());  // counted each time the graph runs
    f.run();
  };
  return cudaSuccess;
}
}  // namespace cudasim::detail

namespace {
/// Checks a peer copy's devices and that each pointer is memory of its device.
cudaError_t check_peer_copy(void* dst, int dst_device, const void* src, int src_device, size_t count) {
  if (dst_device < 0 || dst_device >= device_count() || src_device < 0 || src_device >= device_count())
    return cudaErrorInvalidDevice;
  if (count != 0 && (device_of(dst) != dst_device || device_of(src) != src_device)) {
    report("cudaMemcpyPeer: the destination %p is not memory of device %d or the source %p is not memory of "
           "device %d", dst, dst_device, src, src_device);
    return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}
}  // namespace

cudaError_t cudaMemcpyPeerAsync(void* dst, int dst_device, const void* src, int src_device, size_t count,
                                cudaStream_t stream) {
  const cudaError_t valid = check_peer_copy(dst, dst_device, src, src_device, count);
  if (valid != cudaSuccess) return record_error(valid);
  return cudaMemcpyAsync(dst, src, count, cudaMemcpyDeviceToDevice, stream);
}

cudaError_t cudaMemcpyPeer(void* dst, int dst_device, const void* src, int src_device, size_t count) {
  const cudaError_t valid = check_peer_copy(dst, dst_device, src, src_device, count);
  if (valid != cudaSuccess) return record_error(valid);
  return cudaMemcpy(dst, src, count, cudaMemcpyDeviceToDevice);
}
