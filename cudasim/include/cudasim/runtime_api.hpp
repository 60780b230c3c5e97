/// @file runtime_api.hpp
/// @brief The host-side CUDA runtime API subset the course uses, implemented on the CPU.
///
/// Semantics follow the CUDA Runtime API documentation: errors are returned, launch errors
/// are kept for cudaGetLastError, faults inside kernels are sticky until cudaDeviceReset.
/// Allocation functions take the caller's file and line as hidden trailing parameters so that
/// diagnostics can say where a buffer was allocated.
#pragma once

#include <cstddef>
#include <type_traits>

#include "cudasim/execution.hpp"
#include "cudasim/runtime_types.hpp"

/// The CUDA runtime version the simulator follows (what cudaRuntimeGetVersion returns).
#ifndef CUDART_VERSION
#define CUDART_VERSION 13000
#endif

// ---- errors --------------------------------------------------------------------------------
/// Returns the last error of this host thread and resets it to cudaSuccess (sticky errors
/// from faulted kernels stay).
cudaError_t cudaGetLastError();
/// Returns the last error of this host thread without resetting it.
cudaError_t cudaPeekAtLastError();
/// The enumerator's name, e.g. "cudaErrorInvalidConfiguration".
const char* cudaGetErrorName(cudaError_t error);
/// A sentence describing the error, as the CUDA runtime words it.
const char* cudaGetErrorString(cudaError_t error);

// ---- devices -------------------------------------------------------------------------------
cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDevice(int* device);
/// Virtual devices can all reach each other (as GPUs on one NVSwitch or PCIe switch).
cudaError_t cudaDeviceCanAccessPeer(int* can_access, int device, int peer);
cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned flags);
cudaError_t cudaDeviceDisablePeerAccess(int peer);
/// For two different devices: access and native atomics supported, performance rank 0 (one link
/// model for every pair), CUDA array access not (arrays are not simulated).
cudaError_t cudaDeviceGetP2PAttribute(int* value, cudaDeviceP2PAttr attribute, int source, int destination);
/// Properties of the modelled GPU (H100-like by default; the name says it is the simulator).
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device);
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device);
/// Waits for all work on all streams; returns the sticky error of a faulted kernel, if any.
cudaError_t cudaDeviceSynchronize();
/// Waits for all work, frees every allocation and clears the sticky error.
cudaError_t cudaDeviceReset();
/// The current device's flags (cudaDeviceSchedule*, cudaDeviceMapHost, ...): kept and given
/// back by cudaGetDeviceFlags, which also reports cudaDeviceMapHost, always on since CUDA 4 with
/// unified addressing. Nothing here depends on them. Unknown bits are cudaErrorInvalidValue.
cudaError_t cudaSetDeviceFlags(unsigned flags);
/// The current device's limits, kept and given back; they start at a GPU's defaults (1 KiB of
/// stack, a 1 MiB printf FIFO, an 8 MiB heap, ...). The simulator enforces the heap's (malloc
/// and new in kernels), not the others: its kernel threads' stacks are the host's and printf
/// writes straight through. An unknown limit is cudaErrorUnsupportedLimit.
cudaError_t cudaDeviceSetLimit(cudaLimit limit, size_t value);
cudaError_t cudaDeviceGetLimit(size_t* value, cudaLimit limit);
/// The device's preferred L1/shared split: kept and reported back, no effect (no L1 here).
cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache config);
cudaError_t cudaDeviceGetCacheConfig(cudaFuncCache* config);
cudaError_t cudaGetDeviceFlags(unsigned* flags);
/// CUDA's first names for the device calls above, deprecated since CUDA 4 and removed in CUDA 13
/// (nvcc 13 refuses them), which older teaching code still calls (CUDA by Example's
/// cudaThreadSynchronize): the simulator keeps them.
inline cudaError_t cudaThreadSynchronize() { return cudaDeviceSynchronize(); }
inline cudaError_t cudaThreadExit() { return cudaDeviceReset(); }
inline cudaError_t cudaThreadSetLimit(cudaLimit limit, size_t value) { return cudaDeviceSetLimit(limit, value); }
inline cudaError_t cudaThreadGetLimit(size_t* value, cudaLimit limit) { return cudaDeviceGetLimit(value, limit); }
inline cudaError_t cudaThreadSetCacheConfig(cudaFuncCache config) { return cudaDeviceSetCacheConfig(config); }
inline cudaError_t cudaThreadGetCacheConfig(cudaFuncCache* config) { return cudaDeviceGetCacheConfig(config); }
cudaError_t cudaDriverGetVersion(int* version);
cudaError_t cudaRuntimeGetVersion(int* version);

// ---- memory ----------------------------------------------------------------------------------
namespace cudasim::detail {
/// A `T**` as the `void**` that the untyped call takes, whatever T's qualifiers: CUDA's own
/// templates cast with `(void**)(void*)p`, so `cudaMalloc(const float**, ...)` compiles with nvcc
/// (NVIDIA's HSOpticalFlow sample allocates into `const float*` pyramids so).
template <class T>
void** void_slot(T** p) {
  return reinterpret_cast<void**>(const_cast<std::remove_cv_t<T>**>(p));
}
}  // namespace cudasim::detail

cudaError_t cudaMalloc(void** ptr, size_t size, const char* file = __builtin_FILE(),
                       unsigned line = __builtin_LINE());
template <class T>
inline cudaError_t cudaMalloc(T** ptr, size_t size, const char* file = __builtin_FILE(),
                              unsigned line = __builtin_LINE()) {
  return cudaMalloc(cudasim::detail::void_slot(ptr), size, file, line);
}
cudaError_t cudaMallocManaged(void** ptr, size_t size, unsigned flags = cudaMemAttachGlobal,
                              const char* file = __builtin_FILE(), unsigned line = __builtin_LINE());
template <class T>
inline cudaError_t cudaMallocManaged(T** ptr, size_t size, unsigned flags = cudaMemAttachGlobal,
                                     const char* file = __builtin_FILE(),
                                     unsigned line = __builtin_LINE()) {
  return cudaMallocManaged(cudasim::detail::void_slot(ptr), size, flags, file, line);
}
cudaError_t cudaFree(void* ptr);
/// Stream-ordered allocation: the buffer may be used by work queued on `stream` after this
/// call (and by other streams once ordered after it). The simulator reserves it at once.
cudaError_t cudaMallocAsync(void** ptr, size_t size, cudaStream_t stream, const char* file = __builtin_FILE(),
                            unsigned line = __builtin_LINE());
template <class T>
inline cudaError_t cudaMallocAsync(T** ptr, size_t size, cudaStream_t stream, const char* file = __builtin_FILE(),
                                   unsigned line = __builtin_LINE()) {
  return cudaMallocAsync(cudasim::detail::void_slot(ptr), size, stream, file, line);
}
/// Frees in stream order: after the work queued on `stream` before it has finished.
cudaError_t cudaFreeAsync(void* ptr, cudaStream_t stream);
/// Each device has one memory pool, its default one, which cudaMallocAsync draws from. Its
/// attributes are kept; the release threshold and the reuse policies change nothing (freed
/// memory goes back at once); used and reserved memory are the bytes that stream-ordered
/// allocations of the device hold, the high marks their most (reset by setting them to 0).
cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int device);
cudaError_t cudaDeviceGetMemPool(cudaMemPool_t* pool, int device);
cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attribute, void* value);
cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attribute, void* value);
/// Which other devices' kernels may access the pool's allocations (read-write, or none; a
/// pool's own device always may). On a GPU, as here, cudaDeviceEnablePeerAccess does not reach
/// memory from a pool: a kernel on another device needs this.
cudaError_t cudaMemPoolSetAccess(cudaMemPool_t pool, const cudaMemAccessDesc* descriptions, size_t count);
cudaError_t cudaMemPoolGetAccess(cudaMemAccessFlags* flags, cudaMemPool_t pool, cudaMemLocation* location);
/// Nothing is kept back, so there is nothing to trim.
cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t min_bytes_to_keep);
/// cudaMallocAsync from `pool`, on the pool's device.
cudaError_t cudaMallocFromPoolAsync(void** ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream,
                                    const char* file = __builtin_FILE(), unsigned line = __builtin_LINE());
template <class T>
inline cudaError_t cudaMallocFromPoolAsync(T** ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream,
                                           const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) {
  return cudaMallocFromPoolAsync(cudasim::detail::void_slot(ptr), size, pool, stream, file, line);
}
/// Rows of `width` bytes, each starting at a multiple of the returned pitch (512 bytes here).
cudaError_t cudaMallocPitch(void** ptr, size_t* pitch, size_t width, size_t height,
                            const char* file = __builtin_FILE(), unsigned line = __builtin_LINE());
template <class T>
inline cudaError_t cudaMallocPitch(T** ptr, size_t* pitch, size_t width, size_t height,
                                   const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) {
  return cudaMallocPitch(cudasim::detail::void_slot(ptr), pitch, width, height, file, line);
}
/// Page-locked host memory (recorded as such, so copies from it can be modelled as DMA).
cudaError_t cudaMallocHost(void** ptr, size_t size);
template <class T>
inline cudaError_t cudaMallocHost(T** ptr, size_t size) {
  return cudaMallocHost(cudasim::detail::void_slot(ptr), size);
}
cudaError_t cudaHostAlloc(void** ptr, size_t size, unsigned flags);
template <class T>
inline cudaError_t cudaHostAlloc(T** ptr, size_t size, unsigned flags) {
  return cudaHostAlloc(cudasim::detail::void_slot(ptr), size, flags);
}
cudaError_t cudaFreeHost(void* ptr);
cudaError_t cudaHostRegister(void* ptr, size_t size, unsigned flags);
cudaError_t cudaHostUnregister(void* ptr);
/// The device address of page-locked host memory (cudaHostAlloc, cudaMallocHost,
/// cudaHostRegister): with unified addressing it is the host address itself, as on a GPU.
/// Memory that is not page-locked is cudaErrorInvalidValue; `flags` must be 0.
cudaError_t cudaHostGetDevicePointer(void** device_pointer, void* host_pointer, unsigned flags);
template <class T>
inline cudaError_t cudaHostGetDevicePointer(T** device_pointer, void* host_pointer, unsigned flags) {
  return cudaHostGetDevicePointer(cudasim::detail::void_slot(device_pointer), host_pointer, flags);
}
cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes);
cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* ptr);

cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                            cudaStream_t stream = nullptr);
cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                         size_t height, cudaMemcpyKind kind);
/// `height` rows of `width` bytes; cudaErrorInvalidPitchValue when a pitch is below the width.
cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                              size_t height, cudaMemcpyKind kind, cudaStream_t stream = nullptr);
cudaError_t cudaMemset(void* ptr, int value, size_t count);
/// `extent.depth` slices of `extent.height` rows of `extent.width` bytes, between pitched
/// regions (each `ptr`, offset by its `pos`): slices are `pitch * ysize` bytes apart. Where a
/// CUDA array takes part (cudasim/textures.hpp), the width and its position count texels. A
/// width beyond a pitch is cudaErrorInvalidPitchValue, rows beyond `ysize` in a copy of several
/// slices cudaErrorInvalidValue.
cudaError_t cudaMemcpy3D(const cudaMemcpy3DParms* params);
cudaError_t cudaMemcpy3DAsync(const cudaMemcpy3DParms* params, cudaStream_t stream = nullptr);
/// A pitched 3-D allocation: rows of `extent.width` bytes padded to the pitch of cudaMallocPitch.
cudaError_t cudaMalloc3D(cudaPitchedPtr* pitched, cudaExtent extent, const char* file = __builtin_FILE(),
                         unsigned line = __builtin_LINE());
/// Sets `height` rows of `width` bytes, `pitch` bytes apart, to `value`.
cudaError_t cudaMemset2D(void* ptr, size_t pitch, int value, size_t width, size_t height);
cudaError_t cudaMemset2DAsync(void* ptr, size_t pitch, int value, size_t width, size_t height,
                              cudaStream_t stream = nullptr);
cudaError_t cudaMemset3D(cudaPitchedPtr pitched, int value, cudaExtent extent);
cudaError_t cudaMemset3DAsync(cudaPitchedPtr pitched, int value, cudaExtent extent, cudaStream_t stream = nullptr);
/// Copies between two devices' memory across the modelled peer link (cudasim/link_model.hpp).
cudaError_t cudaMemcpyPeer(void* dst, int dst_device, const void* src, int src_device, size_t count);
cudaError_t cudaMemcpyPeerAsync(void* dst, int dst_device, const void* src, int src_device, size_t count,
                                cudaStream_t stream = nullptr);
cudaError_t cudaMemsetAsync(void* ptr, int value, size_t count, cudaStream_t stream = nullptr);

/// `__device__` and `__constant__` variables are ordinary host variables here.
template <class T>
inline cudaError_t cudaMemcpyToSymbol(T& symbol, const void* src, size_t count, size_t offset = 0,
                                      cudaMemcpyKind kind = cudaMemcpyHostToDevice) {
  if (offset + count > sizeof(T)) return cudaErrorInvalidValue;
  (void)kind;  // the symbol lives in host memory here, so let the runtime infer the direction
  return cudaMemcpy(reinterpret_cast<char*>(&symbol) + offset, src, count, cudaMemcpyDefault);
}
template <class T>
inline cudaError_t cudaMemcpyFromSymbol(void* dst, const T& symbol, size_t count, size_t offset = 0,
                                        cudaMemcpyKind kind = cudaMemcpyDeviceToHost) {
  if (offset + count > sizeof(T)) return cudaErrorInvalidValue;
  (void)kind;
  return cudaMemcpy(dst, reinterpret_cast<const char*>(&symbol) + offset, count, cudaMemcpyDefault);
}
/// The same copies in stream order.
template <class T>
inline cudaError_t cudaMemcpyToSymbolAsync(T& symbol, const void* src, size_t count, size_t offset = 0,
                                           cudaMemcpyKind kind = cudaMemcpyHostToDevice, cudaStream_t stream = nullptr) {
  if (offset + count > sizeof(T)) return cudaErrorInvalidValue;
  (void)kind;
  return cudaMemcpyAsync(reinterpret_cast<char*>(&symbol) + offset, src, count, cudaMemcpyDefault, stream);
}
template <class T>
inline cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const T& symbol, size_t count, size_t offset = 0,
                                             cudaMemcpyKind kind = cudaMemcpyDeviceToHost,
                                             cudaStream_t stream = nullptr) {
  if (offset + count > sizeof(T)) return cudaErrorInvalidValue;
  (void)kind;
  return cudaMemcpyAsync(dst, reinterpret_cast<const char*>(&symbol) + offset, count, cudaMemcpyDefault, stream);
}
/// A symbol's size. (cudaGetSymbolAddress is not declared: a symbol lives in host memory here,
/// which cudaMemset and the copies' direction checks do not take for device memory.)
template <class T>
inline cudaError_t cudaGetSymbolSize(size_t* size, const T&) {
  if (size == nullptr) return cudaErrorInvalidValue;
  *size = sizeof(T);
  return cudaSuccess;
}

// ---- streams and events ------------------------------------------------------------------------
cudaError_t cudaStreamCreate(cudaStream_t* stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned flags);
/// Stream priorities: the range of a GPU of compute capability 9.0 (0 least, -5 greatest). A
/// stream keeps the priority it was created with (clamped to the range), but the simulator does
/// not schedule by it: on its modelled clock kernels of different streams overlap fully anyway.
cudaError_t cudaDeviceGetStreamPriorityRange(int* least, int* greatest);
cudaError_t cudaStreamCreateWithPriority(cudaStream_t* stream, unsigned flags, int priority);
cudaError_t cudaStreamGetPriority(cudaStream_t stream, int* priority);
/// cudaStreamDefault or cudaStreamNonBlocking, as the stream was created.
cudaError_t cudaStreamGetFlags(cudaStream_t stream, unsigned* flags);
/// A stream's attributes: its L2 access policy window and synchronization policy are kept and
/// read back (the simulator has no persisting L2 and always blocks), its priority is the one
/// cudaStreamGetPriority gives. Other attributes, a hit ratio outside [0, 1] or a persisting
/// miss property are cudaErrorInvalidValue, as in CUDA.
cudaError_t cudaStreamSetAttribute(cudaStream_t stream, cudaLaunchAttributeID attribute,
                                   const cudaLaunchAttributeValue* value);
cudaError_t cudaStreamGetAttribute(cudaStream_t stream, cudaLaunchAttributeID attribute,
                                   cudaLaunchAttributeValue* value);
/// Nothing persists in the simulator's L2: succeeds and does nothing.
cudaError_t cudaCtxResetPersistingL2Cache();
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
/// cudaSuccess when all work queued on the stream has finished, else cudaErrorNotReady.
cudaError_t cudaStreamQuery(cudaStream_t stream);
/// Which streams may touch a managed allocation (cudaMemAttachGlobal, Host or Single; `length`
/// 0 or the whole allocation). Checked, then a no-op: the simulator's managed memory is always
/// reachable from the host and every stream, as on a GPU with concurrent managed access.
cudaError_t cudaStreamAttachMemAsync(cudaStream_t stream, void* ptr, size_t length = 0,
                                     unsigned flags = cudaMemAttachSingle);
/// Moves managed memory [ptr, ptr + count) to `location` ahead of use (CUDA 13's form): checked
/// (managed memory, a valid device or the host, flags 0, a live stream), then a no-op, since the
/// simulator's managed memory is where both the host and every device reach it already.
cudaError_t cudaMemPrefetchAsync(const void* ptr, size_t count, cudaMemLocation location, unsigned flags,
                                 cudaStream_t stream = nullptr);
/// A hint about how managed memory [ptr, ptr + count) is used (CUDA 13's form): checked as
/// cudaMemPrefetchAsync is, and changes nothing.
cudaError_t cudaMemAdvise(const void* ptr, size_t count, cudaMemoryAdvise advice, cudaMemLocation location);
/// The CUDA 12 forms of the two, with a device number (cudaCpuDeviceId: the host), as most
/// unified-memory tutorials call them. CUDA 13 removed them (nvcc 13 refuses them); the
/// simulator keeps them so that programs written for CUDA 12 run.
inline cudaMemLocation cudasim_location_of_device(int device) {
  return device == cudaCpuDeviceId ? cudaMemLocation{cudaMemLocationTypeHost, 0}
                                   : cudaMemLocation{cudaMemLocationTypeDevice, device};
}
inline cudaError_t cudaMemPrefetchAsync(const void* ptr, size_t count, int device, cudaStream_t stream = nullptr) {
  return cudaMemPrefetchAsync(ptr, count, cudasim_location_of_device(device), 0, stream);
}
inline cudaError_t cudaMemAdvise(const void* ptr, size_t count, cudaMemoryAdvise advice, int device) {
  return cudaMemAdvise(ptr, count, advice, cudasim_location_of_device(device));
}
template <class T>
inline cudaError_t cudaStreamAttachMemAsync(cudaStream_t stream, T* ptr, size_t length = 0,
                                            unsigned flags = cudaMemAttachSingle) {
  return cudaStreamAttachMemAsync(stream, const_cast<void*>(static_cast<const void*>(ptr)), length, flags);
}
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned flags = 0);
/// Queues a call of `fn(user_data)` on the stream: it runs after the work queued before it and
/// before the work queued after it. (It must not call the CUDA API, as on a GPU.)
cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* user_data);
/// The older form of cudaLaunchHostFunc: queues `callback(stream, status, user_data)` in the
/// same stream order; `status` is cudaSuccess, or the error of a kernel that faulted before it
/// ran. `flags` must be 0 (cudaErrorInvalidValue otherwise). As in CUDA it cannot be captured
/// into a graph: while the stream captures it returns cudaErrorStreamCaptureUnsupported.
cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback, void* user_data,
                                  unsigned flags);

cudaError_t cudaEventCreate(cudaEvent_t* event);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned flags);
/// The C++ overload of the toolkit's cuda_runtime.h: cudaEventCreateWithFlags.
inline cudaError_t cudaEventCreate(cudaEvent_t* event, unsigned flags) { return cudaEventCreateWithFlags(event, flags); }
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = nullptr);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventQuery(cudaEvent_t event);
/// Milliseconds between two recorded events, measured on the host's steady clock when the
/// stream reached each record.
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);

// ---- CUDA graphs (stream capture) ----------------------------------------------------------------
/// Starts recording the stream: kernel launches, copies, memsets and cuBLAS calls queued on it
/// are recorded into a graph instead of running. The legacy default stream cannot capture.
cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal);
/// Stops recording and returns the graph of what was recorded, in stream order.
cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph);
cudaError_t cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus* status);
/// Starts recording the stream into an existing graph (a conditional node's body, say): the
/// recorded work is added to `graph` after `dependencies` (edge data null or all zero), and
/// cudaStreamEndCapture's graph may then be null.
cudaError_t cudaStreamBeginCaptureToGraph(cudaStream_t stream, cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                                          const cudaGraphEdgeData* edge_data, size_t dependency_count,
                                          cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal);
/// The CUDA 13 form: whether the stream captures and, while it does, the capture's id, its graph
/// (nodes may be added to it meanwhile) and the nodes the next captured work will depend on
/// (valid until the next capture call for a stream of the capture; their edge data all zero).
/// A stream that joined the capture gets the same answer as the one that began it: the
/// simulator captures their work as one chain.
cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, cudaStreamCaptureStatus* status,
                                     unsigned long long* id = nullptr, cudaGraph_t* graph = nullptr,
                                     const cudaGraphNode_t** dependencies = nullptr,
                                     const cudaGraphEdgeData** edge_data = nullptr, size_t* dependency_count = nullptr);
/// Sets (cudaStreamSetCaptureDependencies) or adds to (cudaStreamAddCaptureDependencies, 0) the
/// nodes the next work captured on `stream` depends on: nodes of the capture's graph.
cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t stream, cudaGraphNode_t* dependencies,
                                                const cudaGraphEdgeData* edge_data, size_t dependency_count,
                                                unsigned int flags = 0);
/// Number of nodes; `nodes` may be null to ask for the count only. Otherwise up to `*count`
/// node handles are written (the rest of the array set to null) and `*count` says how many.
cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* count);
cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long flags = 0);
/// The CUDA 11 form, which the toolkit's cuda_runtime.h still offers: no node is ever at fault
/// here beyond what the return value says, so the error node and the log are left as they are.
inline cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, cudaGraphNode_t*, char*, size_t) {
  return cudaGraphInstantiate(exec, graph, 0);
}
/// Makes `exec` run `graph` instead of the graph it was made from, when both have the same
/// dependencies between the same number of nodes (by the order the nodes were added), else
/// cudaErrorGraphExecUpdateFailure with cudaGraphExecUpdateErrorTopologyChanged. Launches already
/// queued run the old work. Node types are not compared (those of captured work are unknown).
cudaError_t cudaGraphExecUpdate(cudaGraphExec_t exec, cudaGraph_t graph, cudaGraphExecUpdateResultInfo* info);
/// The CUDA 11 form, which the toolkit's cuda_runtime.h still offers.
inline cudaError_t cudaGraphExecUpdate(cudaGraphExec_t exec, cudaGraph_t graph, cudaGraphNode_t* error_node,
                                       cudaGraphExecUpdateResult* result) {
  cudaGraphExecUpdateResultInfo info{};
  const cudaError_t e = cudaGraphExecUpdate(exec, graph, &info);
  if (error_node != nullptr) *error_node = info.errorNode;
  if (result != nullptr) *result = info.result;
  return e;
}
/// New arguments or configuration for a kernel node of an instantiated graph (`node` of the graph
/// it was made or updated from), checked as cudaGraphAddKernelNode checks them; launches already
/// queued keep the old ones.
/// Prepares an executable for launch on `stream`: nothing to prepare here; an unknown executable
/// is cudaErrorInvalidValue.
cudaError_t cudaGraphUpload(cudaGraphExec_t exec, cudaStream_t stream);
cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                             const cudaKernelNodeParams* params, const char* file = __builtin_FILE(),
                                             unsigned line = __builtin_LINE());
inline cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* exec, cudaGraph_t graph,
                                                 unsigned long long flags = 0) {
  return cudaGraphInstantiate(exec, graph, flags);
}
/// Queues the whole graph on `stream` as one operation: one host call instead of one per node.
cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream);
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec);
cudaError_t cudaGraphDestroy(cudaGraph_t graph);

// ---- CUDA graphs built node by node ----------------------------------------------------------------
// A node runs after the nodes it depends on; the simulator runs a launched graph's nodes one
// after another in an order that respects the dependencies (independent branches do not
// overlap). `dependencies` may be null when `dependency_count` is 0.
/// `flags` must be 0.
cudaError_t cudaGraphCreate(cudaGraph_t* graph, unsigned flags);
/// A kernel launch; the kernel must be known to the simulator with its type, as for
/// cudaLaunchKernel's C overload (else cudaErrorInvalidDeviceFunction). The arguments are copied
/// now; the configuration is checked now, with the errors a launch gives.
cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                                   size_t dependency_count, const cudaKernelNodeParams* params,
                                   const char* file = __builtin_FILE(), unsigned line = __builtin_LINE());
/// A copy of `count` bytes, checked now as cudaMemcpy checks it, done each time the graph runs.
cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                                     size_t dependency_count, void* dst, const void* src, size_t count,
                                     cudaMemcpyKind kind);
/// A 3-D copy (as cudaMemcpy3D), checked now, done each time the graph runs.
cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                                   size_t dependency_count, const cudaMemcpy3DParms* params);
/// Rows of 1-, 2- or 4-byte elements set to a value, checked now, done each time the graph runs.
cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                                   size_t dependency_count, const cudaMemsetParams* params);
/// A new graph with the same nodes and dependencies.
cudaError_t cudaGraphClone(cudaGraph_t* clone, cudaGraph_t original);
cudaError_t cudaGraphAddHostNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                                 size_t dependency_count, const cudaHostNodeParams* params);
/// Graph memory. An allocation node gives its address at once (`params->dptr`), the same for
/// every launch; running it makes the memory the graph's (its contents are not kept from one
/// launch to the next), and a free node, or cudaFree/cudaFreeAsync after the graph has run,
/// gives it back. A free node's `dptr` must come from an allocation node or from
/// cudaMallocAsync in a captured stream. The memory stays addressable until the last graph
/// and executable holding its allocation node are destroyed and it has been freed. Launching
/// again a graph whose allocation was not freed is not refused here (as with
/// cudaGraphInstantiateFlagAutoFreeOnLaunch on a GPU).
cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                                     size_t dependency_count, cudaMemAllocNodeParams* params,
                                     const char* file = __builtin_FILE(), unsigned line = __builtin_LINE());
cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                                    size_t dependency_count, void* dptr);
/// The device's graph memory in use (allocated by a node that ran and not yet freed) and
/// reserved (what it has used at most since the last trim), and their highest values. (A GPU
/// keeps a launched executable's memory mapped, and counted as used, until the executable is
/// destroyed, and rounds to its granularity.)
cudaError_t cudaDeviceGetGraphMemAttribute(int device, cudaGraphMemAttributeType attribute, void* value);
/// Resets a highest value (UsedMemHigh, ReservedMemHigh) to the current one; `*value` must be 0.
cudaError_t cudaDeviceSetGraphMemAttribute(int device, cudaGraphMemAttributeType attribute, void* value);
/// Gives back the device's reserved graph memory that is not in use.
cudaError_t cudaDeviceGraphMemTrim(int device);
/// A node that does nothing: a join point for dependencies.
cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                                  size_t dependency_count);
/// A node that runs a graph: a copy of `child` made now, so later changes to `child` do not
/// reach it. As in CUDA, `child` may hold no memory allocation, free or conditional node (the
/// allocations of a captured cudaMallocAsync are not told apart from other captured work here).
cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                                       size_t dependency_count, cudaGraph_t child);
/// A child graph node's own graph (not a copy): nodes added to it run in the executables made
/// afterwards. It goes with the node's graph; destroying it alone is cudaErrorInvalidValue.
cudaError_t cudaGraphChildGraphNodeGetGraph(cudaGraphNode_t node, cudaGraph_t* graph);
/// Event nodes: each launch of the graph records `event` (a record node), or waits for the record
/// the event had when the graph was launched (a wait node). The simulator applies them to the
/// whole launch: it starts after what every wait node waits for, and the events of its record
/// nodes complete, and are timed, when all of it has run. As in CUDA, they may not be in a
/// conditional node's body; nor may such a graph be launched into a stream capture here
/// (cudaErrorStreamCaptureUnsupported).
cudaError_t cudaGraphAddEventRecordNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                                        size_t dependency_count, cudaEvent_t event);
cudaError_t cudaGraphAddEventWaitNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                                      size_t dependency_count, cudaEvent_t event);
cudaError_t cudaGraphEventRecordNodeGetEvent(cudaGraphNode_t node, cudaEvent_t* event);
cudaError_t cudaGraphEventWaitNodeGetEvent(cudaGraphNode_t node, cudaEvent_t* event);
/// A node's type, for the nodes added by hand (cudaGraphAdd*Node); the type of an operation
/// recorded by stream capture is not kept (cudaErrorNotSupported, with a line on stderr).
cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node, cudaGraphNodeType* type);
/// A node of any type cudaGraphNodeParams describes, after `dependencies` (edge data null or
/// all zero): kernel, host, empty, child graph and event nodes as their cudaGraphAdd*Node (a
/// child graph handed over with cudaGraphChildGraphOwnershipMove becomes the node's own
/// graph), and conditional nodes,
/// whose `size` empty body graphs it makes and returns in `params->conditional.phGraph_out`
/// (they belong to the node: fill them, never destroy them). The condition's handle must be
/// one of `graph` (cudaGraphConditionalHandleCreate). Other types are cudaErrorNotSupported.
cudaError_t cudaGraphAddNode(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                             const cudaGraphEdgeData* edge_data, size_t dependency_count, cudaGraphNodeParams* params,
                             const char* file = __builtin_FILE(), unsigned line = __builtin_LINE());
/// A condition of `graph` for its conditional nodes, `default_value` at first; with
/// cudaGraphCondAssignDefault in `flags` it is set to `default_value` again at each launch of
/// an executable made from the graph (else it keeps what the last launch left).
cudaError_t cudaGraphConditionalHandleCreate(cudaGraphConditionalHandle* handle, cudaGraph_t graph,
                                             unsigned int default_value = 0, unsigned int flags = 0);
/// Device code: sets the condition behind `handle`, which the conditional nodes after the
/// kernel read.
void cudaGraphSetConditional(cudaGraphConditionalHandle handle, unsigned int value);
/// `to[i]` runs after `from[i]`. The CUDA 13 form with edge data (null, or all zero) and the
/// CUDA 12 form without.
cudaError_t cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t* from, const cudaGraphNode_t* to,
                                     const cudaGraphEdgeData* edge_data, size_t count);
cudaError_t cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t* from, const cudaGraphNode_t* to,
                                     size_t count);

// ---- kernels --------------------------------------------------------------------------------------
/// Launches `func` with `args[i]` pointing to its i-th argument (copied before the call returns).
/// The simulator must know the kernel's parameter types to copy them: it knows every kernel the
/// rewrite registered (each definition in the program's files that is not a template) and every
/// kernel it has seen with its type (launched by chevrons, or passed without a cast to the C++
/// overloads below, cudaFuncGetAttributes, cudaFuncSetAttribute or the occupancy calls). Any
/// other address is cudaErrorInvalidDeviceFunction, with a line on stderr saying how to make it
/// known.
cudaError_t cudaLaunchKernel(const void* func, dim3 grid, dim3 block, void** args, size_t shared_bytes,
                             cudaStream_t stream, const char* file = __builtin_FILE(),
                             unsigned line = __builtin_LINE());
/// The C++ overload: the kernel's type is known here, so any kernel works.
template <class T>
inline cudaError_t cudaLaunchKernel(T* func, dim3 grid, dim3 block, void** args, size_t shared_bytes = 0,
                                    cudaStream_t stream = nullptr, const char* file = __builtin_FILE(),
                                    unsigned line = __builtin_LINE()) {
  return cudaLaunchKernel(cudasim::detail::known_kernel(func), grid, block, args, shared_bytes, stream, file,
                          line);
}

/// A cooperative launch: every block of the grid runs at once, so that the kernel may wait for
/// the whole grid with cooperative_groups::this_grid().sync(). The grid must fit the device at
/// once (at most cudaOccupancyMaxActiveBlocksPerMultiprocessor blocks per SM, on every SM),
/// else cudaErrorCooperativeLaunchTooLarge. Every block runs on an OS thread of its own, and
/// every thread waiting at grid.sync() holds a stack: the whole modelled H100 (270,336 threads)
/// takes about a gigabyte of memory while it waits.
cudaError_t cudaLaunchCooperativeKernel(const void* func, dim3 grid, dim3 block, void** args, size_t shared_bytes,
                                        cudaStream_t stream, const char* file = __builtin_FILE(),
                                        unsigned line = __builtin_LINE());
template <class T>
inline cudaError_t cudaLaunchCooperativeKernel(T* func, dim3 grid, dim3 block, void** args, size_t shared_bytes = 0,
                                               cudaStream_t stream = nullptr, const char* file = __builtin_FILE(),
                                               unsigned line = __builtin_LINE()) {
  return cudaLaunchCooperativeKernel(cudasim::detail::known_kernel(func), grid, block, args, shared_bytes, stream,
                                     file, line);
}

namespace cudasim::detail {
cudaError_t set_function_attribute(const void* kernel, cudaFuncAttribute attribute, int value);
}  // namespace cudasim::detail

/// Only cudaFuncAttributeMaxDynamicSharedMemorySize has an effect: it raises the kernel's
/// dynamic shared memory limit above the default 48 KiB, up to the device's opt-in maximum.
template <class Kernel>
inline cudaError_t cudaFuncSetAttribute(Kernel* kernel, cudaFuncAttribute attribute, int value) {
  return cudasim::detail::set_function_attribute(cudasim::detail::known_kernel(kernel), attribute, value);
}

/// A kernel's preferred L1/shared split: a hint on a GPU, checked and ignored here (no L1).
cudaError_t cudaFuncSetCacheConfig(const void* func, cudaFuncCache config);
template <class T>
inline cudaError_t cudaFuncSetCacheConfig(T* func, cudaFuncCache config) {
  return cudaFuncSetCacheConfig(cudasim::detail::known_kernel(func), config);
}

/// The kernel's limits: maxThreadsPerBlock (1024), maxDynamicSharedSizeBytes (48 KiB or what
/// cudaFuncSetAttribute set), numRegs (32, assumed), sharedSizeBytes 0 (static shared memory is
/// not known to the simulator). cudaErrorInvalidDeviceFunction for an address the simulator has
/// not seen as a kernel (see cudaLaunchKernel).
cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attributes, const void* func);
template <class T>
inline cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attributes, T* func) {
  return cudaFuncGetAttributes(attributes, cudasim::detail::known_kernel(func));
}

/// Resident blocks per SM for a block size, from the modelled SM's limits: 2048 threads (block
/// sizes rounded up to whole warps), 32 blocks, 228 KiB of shared memory of which each block
/// takes its dynamic bytes plus 1 KiB reserved; registers are assumed never to limit (32 per
/// thread fit 2048 threads). 0 when the dynamic shared memory exceeds what a block may have.
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, const void* func, int block_size,
                                                          size_t dynamic_shared_bytes);
template <class T>
inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, T func, int block_size,
                                                                 size_t dynamic_shared_bytes) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, cudasim::detail::known_kernel(func), block_size,
                                                       dynamic_shared_bytes);
}

namespace cudasim::detail {
cudaError_t max_potential_block_size(int* min_grid_size, int* block_size, const void* func,
                                     size_t dynamic_shared_bytes, int block_size_limit);
}  // namespace cudasim::detail

/// The block size (at most `block_size_limit`, if not 0) with the most resident threads per SM,
/// the largest on a tie, and the grid that fills every SM with it, as CUDA's calculator.
template <class T>
inline cudaError_t cudaOccupancyMaxPotentialBlockSize(int* min_grid_size, int* block_size, T func,
                                                      size_t dynamic_shared_bytes = 0, int block_size_limit = 0) {
  return cudasim::detail::max_potential_block_size(min_grid_size, block_size, cudasim::detail::known_kernel(func),
                                                   dynamic_shared_bytes, block_size_limit);
}
