// The modelled device: an H100 SXM-like GPU (132 SMs, 80 GB, 228 KB shared memory per SM),
// named so that nobody mistakes the simulator for a real GPU. Only limits that change what a
// program may do (threads per block, shared memory, grid size) are enforced; the others are
// there so that device-query code prints sensible numbers.
#include <sched.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <utility>

#include "internal.hpp"

namespace cudasim::detail {

const cudaDeviceProp& device_properties() {
  static const cudaDeviceProp props = [] {
    cudaDeviceProp p{};
    std::strncpy(p.name, "cudasim CPU simulator (H100-like model, not a GPU)", sizeof(p.name) - 1);
    cudasim::detail::raw_memcpy(p.uuid.bytes, "cudasim-model-00", 16);
    p.totalGlobalMem = std::size_t{80} * 1000 * 1000 * 1000;
    p.sharedMemPerBlock = kDefaultDynamicSharedLimit;
    p.regsPerBlock = 65536;
    p.warpSize = 32;
    p.memPitch = 2147483647;
    p.maxThreadsPerBlock = 1024;
    p.maxThreadsDim[0] = 1024;
    p.maxThreadsDim[1] = 1024;
    p.maxThreadsDim[2] = 64;
    p.maxGridSize[0] = 2147483647;
    p.maxGridSize[1] = 65535;
    p.maxGridSize[2] = 65535;
    p.totalConstMem = 65536;
    p.major = 9;
    p.minor = 0;
    p.textureAlignment = 512;
    p.multiProcessorCount = 132;
    p.canMapHostMemory = 1;
    p.concurrentKernels = 1;
    p.asyncEngineCount = 2;
    p.unifiedAddressing = 1;
    p.memoryBusWidth = 5120;
    p.l2CacheSize = 50 * 1024 * 1024;
    p.maxThreadsPerMultiProcessor = 2048;
    p.sharedMemPerMultiprocessor = 228 * 1024;
    p.regsPerMultiprocessor = 65536;
    p.managedMemory = 1;
    p.cooperativeLaunch = 1;  // cudaLaunchCooperativeKernel and this_grid().sync()
    p.sharedMemPerBlockOptin = 227 * 1024;
    p.maxBlocksPerMultiProcessor = 32;
    p.surfaceAlignment = 512;
    // Texture limits as an H100 reports them (cudaGetDeviceProperties on CUDA 12).
    p.maxTexture1D = 131072;
    p.maxTexture1DLayered[0] = 32768;
    p.maxTexture1DLayered[1] = 2048;
    p.maxTexture2D[0] = 131072;
    p.maxTexture2D[1] = 65536;
    p.maxTexture2DLayered[0] = 32768;
    p.maxTexture2DLayered[1] = 32768;
    p.maxTexture2DLayered[2] = 2048;
    p.maxTexture3D[0] = 16384;
    p.maxTexture3D[1] = 16384;
    p.maxTexture3D[2] = 16384;
    p.maxTextureCubemap = 32768;
    p.maxTextureCubemapLayered[0] = 32768;
    p.maxTextureCubemapLayered[1] = 2046;
    p.computePreemptionSupported = 1;
    p.concurrentManagedAccess = 1;
    p.directManagedMemAccessFromHost = 1;
    p.hostNativeAtomicSupported = 1;
    p.canUseHostPointerForRegisteredMem = 1;
    p.hostRegisterSupported = 1;
    p.streamPrioritiesSupported = 1;
    p.globalL1CacheSupported = 1;
    p.localL1CacheSupported = 1;
    p.reservedSharedMemPerBlock = 1024;
    p.clockRate = 1980000;        // kHz, as cudaDevAttrClockRate below
    p.memoryClockRate = 2619000;  // kHz, as cudaDevAttrMemoryClockRate
    p.deviceOverlap = 1;          // asyncEngineCount > 0
    p.kernelExecTimeoutEnabled = 0;
    p.computeMode = 0;            // cudaComputeModeDefault
    return p;
  }();
  return props;
}

int device_count() {
  static const int count = [] {
    const char* env = std::getenv("CUDASIM_DEVICES");
    const int n = env ? std::atoi(env) : 4;
    if (n < 1 || n > 64) {
      report("CUDASIM_DEVICES=%s is not a device count from 1 to 64; using 4", env);
      return 4;
    }
    return n;
  }();
  return count;
}

namespace {
thread_local int this_thread_device = 0;
}

int current_device() { return this_thread_device; }

}  // namespace cudasim::detail

using namespace cudasim::detail;

cudaError_t cudaGetDeviceCount(int* count) {
  if (count == nullptr) return record_error(cudaErrorInvalidValue);
  *count = device_count();
  return cudaSuccess;
}

// Virtual devices share the CPU and one address space; what differs is which device an
// allocation belongs to, and so which link a copy between two of them crosses.
cudaError_t cudaSetDevice(int device) {
  if (device < 0 || device >= device_count()) return record_error(cudaErrorInvalidDevice);
  this_thread_device = device;
  return cudaSuccess;
}

namespace {
std::mutex device_flags_mutex;
std::map<int, unsigned> device_flags;  // per device, as set by cudaSetDeviceFlags
}  // namespace

cudaError_t cudaSetDeviceFlags(unsigned flags) {
  if ((flags & ~static_cast<unsigned>(cudaDeviceMask)) != 0) return record_error(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lock(device_flags_mutex);
  device_flags[this_thread_device] = flags;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceFlags(unsigned* flags) {
  if (flags == nullptr) return record_error(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lock(device_flags_mutex);
  *flags = device_flags[this_thread_device] | cudaDeviceMapHost;
  return cudaSuccess;
}

namespace {
constexpr int kLimitCount = cudaLimitPersistingL2CacheSize + 1;
/// A GPU's defaults, by cudaLimit (the persisting L2 share starts at 0).
constexpr size_t kDefaultLimits[kLimitCount] = {1024, 1 << 20, 8 << 20, 2, 2048, 64, 0};
std::mutex limits_mutex;
std::map<int, std::array<size_t, kLimitCount>> device_limits;  // per device, once one is set

std::array<size_t, kLimitCount>& limits_of_current_device() {
  auto [it, added] = device_limits.try_emplace(this_thread_device);
  if (added) std::copy(std::begin(kDefaultLimits), std::end(kDefaultLimits), it->second.begin());
  return it->second;
}
}  // namespace

namespace cudasim::detail {
size_t device_limit(int device, cudaLimit limit) {
  std::lock_guard<std::mutex> lock(limits_mutex);
  const auto it = device_limits.find(device);
  return it == device_limits.end() ? kDefaultLimits[limit] : it->second[limit];
}
}  // namespace cudasim::detail

cudaError_t cudaDeviceSetLimit(cudaLimit limit, size_t value) {
  if (limit < 0 || limit >= kLimitCount) return record_error(cudaErrorUnsupportedLimit);
  std::lock_guard<std::mutex> lock(limits_mutex);
  limits_of_current_device()[limit] = value;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetLimit(size_t* value, cudaLimit limit) {
  if (value == nullptr) return record_error(cudaErrorInvalidValue);
  if (limit < 0 || limit >= kLimitCount) return record_error(cudaErrorUnsupportedLimit);
  std::lock_guard<std::mutex> lock(limits_mutex);
  *value = limits_of_current_device()[limit];
  return cudaSuccess;
}

namespace {
std::mutex cache_config_mutex;
std::map<int, cudaFuncCache> cache_configs;  // by device; absent: cudaFuncCachePreferNone
}  // namespace

cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache config) {
  if (config < cudaFuncCachePreferNone || config > cudaFuncCachePreferEqual) return record_error(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lock(cache_config_mutex);
  cache_configs[this_thread_device] = config;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetCacheConfig(cudaFuncCache* config) {
  if (config == nullptr) return record_error(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lock(cache_config_mutex);
  const auto it = cache_configs.find(this_thread_device);
  *config = it == cache_configs.end() ? cudaFuncCachePreferNone : it->second;
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
  if (device == nullptr) return record_error(cudaErrorInvalidValue);
  *device = this_thread_device;
  return cudaSuccess;
}

cudaError_t cudaDeviceCanAccessPeer(int* can_access, int device, int peer) {
  if (can_access == nullptr) return record_error(cudaErrorInvalidValue);
  if (device < 0 || device >= device_count() || peer < 0 || peer >= device_count())
    return record_error(cudaErrorInvalidDevice);
  *can_access = device != peer ? 1 : 0;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetP2PAttribute(int* value, cudaDeviceP2PAttr attribute, int source, int destination) {
  if (value == nullptr) return record_error(cudaErrorInvalidValue);
  if (source < 0 || source >= device_count() || destination < 0 || destination >= device_count() ||
      source == destination)
    return record_error(cudaErrorInvalidDevice);
  switch (attribute) {
    case cudaDevP2PAttrPerformanceRank: *value = 0; break;  // one link model for every pair
    case cudaDevP2PAttrAccessSupported: *value = 1; break;
    case cudaDevP2PAttrNativeAtomicSupported: *value = 1; break;
    case cudaDevP2PAttrCudaArrayAccessSupported: *value = 0; break;  // CUDA arrays are not simulated
    default: return record_error(cudaErrorInvalidValue);
  }
  return cudaSuccess;
}

namespace {
/// (device, peer) pairs whose kernels on `device` may access `peer`'s memory.
std::mutex peer_mutex;
std::set<std::pair<int, int>> peer_access;
}  // namespace

bool cudasim::detail::peer_access_enabled(int device, int peer) {
  std::lock_guard<std::mutex> lock(peer_mutex);
  return peer_access.count({device, peer}) != 0;
}

// Enables access from the current device's kernels to `peer`'s memory (one direction only).
cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned flags) {
  if (peer < 0 || peer >= device_count() || peer == this_thread_device) return record_error(cudaErrorInvalidDevice);
  if (flags != 0) return record_error(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lock(peer_mutex);
  if (!peer_access.insert({this_thread_device, peer}).second) return record_error(cudaErrorPeerAccessAlreadyEnabled);
  return cudaSuccess;
}

cudaError_t cudaDeviceDisablePeerAccess(int peer) {
  if (peer < 0 || peer >= device_count() || peer == this_thread_device) return record_error(cudaErrorInvalidDevice);
  std::lock_guard<std::mutex> lock(peer_mutex);
  if (peer_access.erase({this_thread_device, peer}) == 0) return record_error(cudaErrorPeerAccessNotEnabled);
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  if (prop == nullptr) return record_error(cudaErrorInvalidValue);
  if (device < 0 || device >= device_count()) return record_error(cudaErrorInvalidDevice);
  *prop = device_properties();
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  if (value == nullptr) return record_error(cudaErrorInvalidValue);
  if (device < 0 || device >= device_count()) return record_error(cudaErrorInvalidDevice);
  const cudaDeviceProp& p = device_properties();
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: *value = p.maxThreadsPerBlock; break;
    case cudaDevAttrMaxBlockDimX: *value = p.maxThreadsDim[0]; break;
    case cudaDevAttrMaxBlockDimY: *value = p.maxThreadsDim[1]; break;
    case cudaDevAttrMaxBlockDimZ: *value = p.maxThreadsDim[2]; break;
    case cudaDevAttrMaxGridDimX: *value = p.maxGridSize[0]; break;
    case cudaDevAttrMaxGridDimY: *value = p.maxGridSize[1]; break;
    case cudaDevAttrMaxGridDimZ: *value = p.maxGridSize[2]; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *value = static_cast<int>(p.sharedMemPerBlock); break;
    case cudaDevAttrTotalConstantMemory: *value = static_cast<int>(p.totalConstMem); break;
    case cudaDevAttrWarpSize: *value = p.warpSize; break;
    case cudaDevAttrMaxRegistersPerBlock: *value = p.regsPerBlock; break;
    case cudaDevAttrClockRate: *value = 1980000; break;        // kHz, H100 SXM boost clock
    case cudaDevAttrMemoryClockRate: *value = 2619000; break;  // kHz
    case cudaDevAttrMultiProcessorCount: *value = p.multiProcessorCount; break;
    case cudaDevAttrComputeMode: *value = cudaComputeModeDefault; break;
    case cudaDevAttrGpuOverlap: *value = p.asyncEngineCount > 0; break;
    case cudaDevAttrAsyncEngineCount: *value = p.asyncEngineCount; break;
    case cudaDevAttrConcurrentKernels: *value = p.concurrentKernels; break;
    case cudaDevAttrIntegrated: *value = p.integrated; break;
    case cudaDevAttrCanMapHostMemory: *value = p.canMapHostMemory; break;
    case cudaDevAttrUnifiedAddressing: *value = p.unifiedAddressing; break;
    case cudaDevAttrManagedMemory: *value = p.managedMemory; break;
    case cudaDevAttrConcurrentManagedAccess: *value = p.concurrentManagedAccess; break;  // one shared memory
    case cudaDevAttrCooperativeLaunch: *value = p.cooperativeLaunch; break;
    case cudaDevAttrMemoryPoolsSupported: *value = 1; break;  // cudaMallocAsync and cudaFreeAsync
    case cudaDevAttrGlobalMemoryBusWidth: *value = p.memoryBusWidth; break;
    case cudaDevAttrL2CacheSize: *value = p.l2CacheSize; break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: *value = p.maxThreadsPerMultiProcessor; break;
    case cudaDevAttrComputeCapabilityMajor: *value = p.major; break;
    case cudaDevAttrComputeCapabilityMinor: *value = p.minor; break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: *value = static_cast<int>(p.sharedMemPerMultiprocessor); break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = static_cast<int>(p.sharedMemPerBlockOptin); break;
    case cudaDevAttrMaxPitch: *value = static_cast<int>(p.memPitch); break;
    case cudaDevAttrTextureAlignment: *value = static_cast<int>(p.textureAlignment); break;
    case cudaDevAttrSurfaceAlignment: *value = static_cast<int>(p.surfaceAlignment); break;
    case cudaDevAttrMaxTexture1DWidth: *value = p.maxTexture1D; break;
    case cudaDevAttrKernelExecTimeout: *value = 0; break;               // no watchdog
    case cudaDevAttrEccEnabled: *value = p.ECCEnabled; break;
    case cudaDevAttrPciBusId: *value = p.pciBusID; break;
    case cudaDevAttrPciDeviceId: *value = p.pciDeviceID; break;
    case cudaDevAttrPciDomainId: *value = p.pciDomainID; break;
    case cudaDevAttrTccDriver: *value = p.tccDriver; break;
    case cudaDevAttrStreamPrioritiesSupported: *value = p.streamPrioritiesSupported; break;  // kept, not scheduled by
    case cudaDevAttrGlobalL1CacheSupported:
    case cudaDevAttrLocalL1CacheSupported: *value = 1; break;
    case cudaDevAttrMaxRegistersPerMultiprocessor: *value = p.regsPerMultiprocessor; break;
    case cudaDevAttrIsMultiGpuBoard: *value = 0; break;
    case cudaDevAttrMultiGpuBoardGroupID: *value = device; break;
    case cudaDevAttrHostNativeAtomicSupported: *value = p.hostNativeAtomicSupported; break;
    case cudaDevAttrSingleToDoublePrecisionPerfRatio: *value = 2; break;
    case cudaDevAttrPageableMemoryAccess: *value = p.pageableMemoryAccess; break;
    case cudaDevAttrComputePreemptionSupported: *value = p.computePreemptionSupported; break;
    case cudaDevAttrCanUseHostPointerForRegisteredMem: *value = p.canUseHostPointerForRegisteredMem; break;
    case cudaDevAttrDirectManagedMemAccessFromHost: *value = p.directManagedMemAccessFromHost; break;
    case cudaDevAttrMaxBlocksPerMultiprocessor: *value = p.maxBlocksPerMultiProcessor; break;
    case cudaDevAttrMaxPersistingL2CacheSize: *value = p.persistingL2CacheMaxSize; break;
    case cudaDevAttrMaxAccessPolicyWindowSize: *value = p.accessPolicyMaxWindowSize; break;
    case cudaDevAttrReservedSharedMemoryPerBlock: *value = static_cast<int>(p.reservedSharedMemPerBlock); break;
    default: return record_error(cudaErrorInvalidValue);
  }
  return cudaSuccess;
}

// Both act on the calling thread's current device only, as in CUDA.
cudaError_t cudaDeviceSynchronize() {
  synchronize_device_streams(this_thread_device);
  return record_error(sticky_error());
}

cudaError_t cudaDeviceReset() {
  synchronize_device_streams(this_thread_device);
  free_device_memory(this_thread_device);
  {
    std::lock_guard<std::mutex> lock(peer_mutex);  // the device's peer mappings go with its context
    for (auto it = peer_access.begin(); it != peer_access.end();)
      it = it->first == this_thread_device ? peer_access.erase(it) : std::next(it);
  }
  clear_sticky_error();
  return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int* version) {
  if (version == nullptr) return record_error(cudaErrorInvalidValue);
  *version = 13000;
  return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int* version) { return cudaDriverGetVersion(version); }

long long clock64() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void __nanosleep(unsigned) { sched_yield(); }

namespace cudasim::detail {
void trap(const char* what) { throw KernelTrap{what}; }
}  // namespace cudasim::detail
