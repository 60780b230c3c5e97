// Kernels known by address: the registry that lets cudaLaunchKernel (and graph kernel nodes)
// turn a `const void*` and an array of argument pointers into a launch; what the runtime says
// about a kernel (cudaFuncGetAttributes) and how many of its blocks fit an SM (occupancy). The compiler knows a
// kernel's parameter types only where the kernel's own type is visible, so the headers register
// each kernel there (execution.hpp, register_kernel); an address never registered cannot be
// launched, and says so.
#include <cxxabi.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

#include "internal.hpp"

namespace cudasim::detail {
namespace {

struct KnownKernel {
  ArgumentUnpacker unpack;
  std::size_t parameter_count;
  std::string name;  // for launch reports; stable while the entry lives
};

/// The registry. Kernels register themselves from static initialisers of the programs' own
/// files (the rewrite adds one after each kernel definition), which may run before this
/// file's, so it is made on first use.
struct KernelRegistry {
  std::mutex mutex;
  std::map<const void*, KnownKernel> kernels;
};
KernelRegistry& known() {
  static KernelRegistry* registry = new KernelRegistry;  // never destroyed: used until exit
  return *registry;
}

/// The kernel's name from the symbol table where the executable exports it, else `name` (as the
/// source spells it) when known, else its address.
std::string symbol_name(const void* kernel, const char* name) {
  Dl_info info{};
  if (dladdr(kernel, &info) != 0 && info.dli_sname != nullptr && info.dli_saddr == kernel) {
    int status = 0;
    char* demangled = abi::__cxa_demangle(info.dli_sname, nullptr, nullptr, &status);
    std::string name = status == 0 && demangled != nullptr ? demangled : info.dli_sname;
    std::free(demangled);
    return name;
  }
  return name != nullptr ? std::string(name) : format_string("kernel at %p", kernel);
}

}  // namespace

void register_kernel(const void* kernel, ArgumentUnpacker unpack, std::size_t parameter_count, const char* name) {
  KernelRegistry& r = known();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.kernels.find(kernel);
  if (it == r.kernels.end()) r.kernels.emplace(kernel, KnownKernel{unpack, parameter_count, symbol_name(kernel, name)});
}

bool find_kernel(const void* kernel, ArgumentUnpacker& unpack, std::size_t& parameter_count, const char*& name) {
  KernelRegistry& r = known();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.kernels.find(kernel);
  if (it == r.kernels.end()) return false;
  unpack = it->second.unpack;
  parameter_count = it->second.parameter_count;
  name = it->second.name.c_str();
  return true;
}

/// Registers per thread that the occupancy model assumes (the simulator compiles no GPU code).
/// At 32, a full SM's 2048 threads use exactly its 65536 registers, so registers never limit.
constexpr int kAssumedRegistersPerThread = 32;
/// Shared memory the runtime reserves per block on compute capability 8.0 and later.
constexpr std::size_t kReservedSharedPerBlock = 1024;

/// Blocks of `block_size` threads resident on one SM of the modelled device.
int resident_blocks(int block_size, std::size_t dynamic_shared_bytes) {
  const cudaDeviceProp& p = device_properties();
  if (dynamic_shared_bytes > p.sharedMemPerBlockOptin) return 0;
  const int warps = (block_size + p.warpSize - 1) / p.warpSize;
  const int by_threads = p.maxThreadsPerMultiProcessor / (warps * p.warpSize);
  const int by_registers = p.regsPerMultiprocessor / (warps * p.warpSize * kAssumedRegistersPerThread);
  const int by_shared =
      static_cast<int>(p.sharedMemPerMultiprocessor / (dynamic_shared_bytes + kReservedSharedPerBlock));
  return std::min({by_threads, by_registers, by_shared, p.maxBlocksPerMultiProcessor});
}

bool is_known_kernel(const void* kernel) {
  KernelRegistry& r = known();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.kernels.count(kernel) != 0;
}

cudaError_t max_potential_block_size(int* min_grid_size, int* block_size, const void* func,
                                     size_t dynamic_shared_bytes, int block_size_limit) {
  if (min_grid_size == nullptr || block_size == nullptr || block_size_limit < 0)
    return record_error(cudaErrorInvalidValue);
  if (!is_known_kernel(func)) return record_error(kNotAKernelError);
  const cudaDeviceProp& p = device_properties();
  const int limit = block_size_limit == 0 ? p.maxThreadsPerBlock : std::min(block_size_limit, p.maxThreadsPerBlock);
  // From the largest block size down, in whole warps (the limit itself first when it is not
  // one): a smaller block wins only with strictly more resident threads.
  int best_threads = 0, best_block = 0, best_blocks = 0;
  const int top = (limit + p.warpSize - 1) / p.warpSize * p.warpSize;
  for (int size = top; size > 0; size -= p.warpSize) {
    const int candidate = std::min(size, limit);
    const int blocks = resident_blocks(candidate, dynamic_shared_bytes);
    if (blocks * candidate > best_threads) {
      best_threads = blocks * candidate;
      best_block = candidate;
      best_blocks = blocks;
    }
    if (best_threads == p.maxThreadsPerMultiProcessor) break;
  }
  *block_size = best_block;
  *min_grid_size = best_blocks * p.multiProcessorCount;
  return cudaSuccess;
}

}  // namespace cudasim::detail

using namespace cudasim::detail;

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, const void* func, int block_size,
                                                          size_t dynamic_shared_bytes) {
  if (blocks == nullptr || block_size <= 0 || block_size > device_properties().maxThreadsPerBlock)
    return record_error(cudaErrorInvalidValue);
  if (!is_known_kernel(func)) return record_error(kNotAKernelError);
  *blocks = resident_blocks(block_size, dynamic_shared_bytes);
  return cudaSuccess;
}

cudaError_t cudaFuncSetCacheConfig(const void* func, cudaFuncCache config) {
  if (config < cudaFuncCachePreferNone || config > cudaFuncCachePreferEqual) return record_error(cudaErrorInvalidValue);
  if (!is_known_kernel(func)) return record_error(kNotAKernelError);
  return cudaSuccess;
}

cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attributes, const void* func) {
  if (attributes == nullptr) return record_error(cudaErrorInvalidValue);
  if (!is_known_kernel(func)) return record_error(kNotAKernelError);
  const cudaDeviceProp& p = device_properties();
  *attributes = {};
  attributes->sharedSizeBytes = 0;  // static __shared__ variables are not known to the simulator
  attributes->maxThreadsPerBlock = p.maxThreadsPerBlock;
  attributes->numRegs = kAssumedRegistersPerThread;
  attributes->ptxVersion = p.major * 10 + p.minor;
  attributes->binaryVersion = p.major * 10 + p.minor;
  attributes->maxDynamicSharedSizeBytes = static_cast<int>(dynamic_shared_limit(func));
  attributes->preferredShmemCarveout = -1;  // the default: no preference
  return cudaSuccess;
}

namespace {
/// cudaLaunchKernel and cudaLaunchCooperativeKernel (`api` names the call in reports).
cudaError_t launch_by_address(const char* api, const void* func, dim3 grid, dim3 block, void** args,
                              size_t shared_bytes, cudaStream_t stream, const char* file, unsigned line,
                              bool cooperative) {
  ArgumentUnpacker unpack = nullptr;
  std::size_t parameter_count = 0;
  const char* name = nullptr;
  if (func == nullptr || !find_kernel(func, unpack, parameter_count, name)) {
    report("%s at %s:%u: %p is not a kernel the simulator has seen with its type. Pass the kernel itself "
           "(%s(kernel, ...), not a void*), or let the program name it once before (for example "
           "cudaFuncGetAttributes(&attributes, kernel))", api, file, line, func, api);
    return record_error(kNotAKernelError);
  }
  if (args == nullptr && parameter_count != 0) {
    report("%s at %s:%u: '%s' takes %zu arguments but args is null", api, file, line, name, parameter_count);
    return record_error(cudaErrorInvalidValue);
  }
  LaunchConfig config{{name, file, line}, grid, block, shared_bytes, stream};
  config.cooperative = cooperative;
  // The arguments are copied now, as cudaLaunchKernel copies them before it returns.
  return submit_launch(config, unpack(func, args), func);
}
}  // namespace

cudaError_t cudaLaunchKernel(const void* func, dim3 grid, dim3 block, void** args, size_t shared_bytes,
                             cudaStream_t stream, const char* file, unsigned line) {
  return launch_by_address("cudaLaunchKernel", func, grid, block, args, shared_bytes, stream, file, line, false);
}

cudaError_t cudaLaunchCooperativeKernel(const void* func, dim3 grid, dim3 block, void** args, size_t shared_bytes,
                                        cudaStream_t stream, const char* file, unsigned line) {
  return launch_by_address("cudaLaunchCooperativeKernel", func, grid, block, args, shared_bytes, stream, file, line,
                           true);
}
