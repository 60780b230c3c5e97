/// @file runtime_types.hpp
/// @brief The CUDA runtime's value types as the simulator defines them: dim3 and the vector
/// types, error codes (with the real numeric values, so printed codes match a GPU's), memcpy
/// kinds, device properties, and the opaque stream/event handles.
#pragma once

#include <cstddef>
#include <cstdint>

// ---- built-in vector types -------------------------------------------------------------
// Alignments follow the CUDA headers so that a float4 load is a 16-byte access on both backends.
//
// When the simulator counts memory traffic (CUDASIM_COUNT_MEMORY, set for instrumented
// kernels), copying a vector value reports one access of the whole vector's size: the
// compiler turns a plain struct copy into a memcpy that the load/store instrumentation does
// not see, and a float4 load must count as one 16-byte access, not four or none.
namespace cudasim::detail {
/// Copies a vector value, counting one load of `bytes` at `source` and one store at
/// `destination` (locals are not counted). Out of line on purpose: if the copy were visible to
/// the compiler, it could turn `float4 v = p[i]; v.x ...` into separate scalar loads that the
/// instrumentation would count a second time.
void vector_copy(void* destination, const void* source, unsigned bytes);
/// memcpy, memmove and memset called in device code (the rewrite renames the calls): the C
/// library's are not instrumented, so these count and check each byte range as the loads and
/// stores of a loop over it would be.
void* device_memcpy(void* destination, const void* source, std::size_t bytes);
void* device_memmove(void* destination, const void* source, std::size_t bytes);
void* device_memset(void* destination, int value, std::size_t bytes);
}
#if defined(CUDASIM_COUNT_MEMORY)
#define CUDASIM_VECTOR_COPY(name)                                                               \
  name(const name& other) { ::cudasim::detail::vector_copy(this, &other, sizeof(name)); }     \
  name& operator=(const name& other) {                                                          \
    ::cudasim::detail::vector_copy(this, &other, sizeof(name));                                \
    return *this;                                                                               \
  }
#else
#define CUDASIM_VECTOR_COPY(name)
#endif

// Constructors rather than aggregates so that both builds accept the same code:
// `float4 v = {a, b, c, d}`, `float4{}` and make_float4 work; partial braces do not.
#define CUDASIM_VECTOR_TYPES(T, name)                                                          \
  struct name##1 {                                                                              \
    T x;                                                                                        \
    name##1() = default;                                                                        \
    constexpr name##1(T vx) : x(vx) {}                                                          \
    CUDASIM_VECTOR_COPY(name##1)                                                                \
  };                                                                                            \
  struct alignas(2 * sizeof(T) <= 16 ? 2 * sizeof(T) : 16) name##2 {                           \
    T x, y;                                                                                     \
    name##2() = default;                                                                        \
    constexpr name##2(T vx, T vy) : x(vx), y(vy) {}                                             \
    CUDASIM_VECTOR_COPY(name##2)                                                                \
  };                                                                                            \
  struct name##3 {                                                                              \
    T x, y, z;                                                                                  \
    name##3() = default;                                                                        \
    constexpr name##3(T vx, T vy, T vz) : x(vx), y(vy), z(vz) {}                                \
    CUDASIM_VECTOR_COPY(name##3)                                                                \
  };                                                                                            \
  struct alignas(4 * sizeof(T) <= 16 ? 4 * sizeof(T) : 16) name##4 {                           \
    T x, y, z, w;                                                                               \
    name##4() = default;                                                                        \
    constexpr name##4(T vx, T vy, T vz, T vw) : x(vx), y(vy), z(vz), w(vw) {}                   \
    CUDASIM_VECTOR_COPY(name##4)                                                                \
  };                                                                                            \
  inline name##1 make_##name##1(T x) { return name##1(x); }                                     \
  inline name##2 make_##name##2(T x, T y) { return name##2(x, y); }                             \
  inline name##3 make_##name##3(T x, T y, T z) { return name##3(x, y, z); }                     \
  inline name##4 make_##name##4(T x, T y, T z, T w) { return name##4(x, y, z, w); }

CUDASIM_VECTOR_TYPES(signed char, char)
CUDASIM_VECTOR_TYPES(unsigned char, uchar)
CUDASIM_VECTOR_TYPES(short, short)
CUDASIM_VECTOR_TYPES(unsigned short, ushort)
CUDASIM_VECTOR_TYPES(int, int)
CUDASIM_VECTOR_TYPES(unsigned int, uint)
CUDASIM_VECTOR_TYPES(long long, longlong)
CUDASIM_VECTOR_TYPES(unsigned long long, ulonglong)
CUDASIM_VECTOR_TYPES(float, float)
CUDASIM_VECTOR_TYPES(double, double)
#undef CUDASIM_VECTOR_TYPES
#undef CUDASIM_VECTOR_COPY

/// Grid and block extents. Unspecified dimensions are 1, as in CUDA.
struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return uint3(x, y, z); }
};

// ---- error codes ------------------------------------------------------------------------
/// The subset of cudaError_t the course meets. Values are those of the CUDA toolkit.
enum cudaError {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInitializationError = 3,
  cudaErrorCudartUnloading = 4,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidPitchValue = 12,
  cudaErrorInvalidSymbol = 13,
  cudaErrorInvalidDevicePointer = 17,
  cudaErrorInvalidTexture = 18,
  cudaErrorInvalidChannelDescriptor = 20,
  cudaErrorInvalidMemcpyDirection = 21,
  cudaErrorInvalidFilterSetting = 26,
  cudaErrorInvalidNormSetting = 27,
  cudaErrorInvalidDeviceFunction = 98,
  cudaErrorNoDevice = 100,
  cudaErrorInvalidDevice = 101,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorNotReady = 600,
  cudaErrorIllegalAddress = 700,
  cudaErrorLaunchOutOfResources = 701,
  cudaErrorLaunchTimeout = 702,
  cudaErrorAssert = 710,
  cudaErrorUnsupportedLimit = 215,
  cudaErrorIllegalInstruction = 715,
  cudaErrorMisalignedAddress = 716,
  cudaErrorPeerAccessAlreadyEnabled = 704,
  cudaErrorPeerAccessNotEnabled = 705,
  cudaErrorLaunchFailure = 719,
  cudaErrorCooperativeLaunchTooLarge = 720,
  cudaErrorNotPermitted = 800,
  cudaErrorNotSupported = 801,
  cudaErrorStreamCaptureUnsupported = 900,
  cudaErrorStreamCaptureInvalidated = 901,
  cudaErrorStreamCaptureMerge = 902,
  cudaErrorStreamCaptureUnmatched = 903,
  cudaErrorStreamCaptureIsolation = 905,
  cudaErrorCapturedEvent = 907,
  cudaErrorGraphExecUpdateFailure = 910,
  cudaErrorIllegalState = 401,
  cudaErrorUnknown = 999,
};
typedef enum cudaError cudaError_t;

/// Per-device limits (cudaDeviceSetLimit, cudaDeviceGetLimit).
enum cudaLimit {
  cudaLimitStackSize = 0,
  cudaLimitPrintfFifoSize = 1,
  cudaLimitMallocHeapSize = 2,
  cudaLimitDevRuntimeSyncDepth = 3,
  cudaLimitDevRuntimePendingLaunchCount = 4,
  cudaLimitMaxL2FetchGranularity = 5,
  cudaLimitPersistingL2CacheSize = 6,
};

/// L2 access policy windows (cudaStreamSetAttribute): kept and read back, not simulated (the
/// modelled GPU has no persisting L2: cudaDevAttrMaxPersistingL2CacheSize reads 0).
enum cudaAccessProperty {
  cudaAccessPropertyNormal = 0,
  cudaAccessPropertyStreaming = 1,
  cudaAccessPropertyPersisting = 2,
};
struct cudaAccessPolicyWindow {
  void* base_ptr;
  size_t num_bytes;
  float hitRatio;
  cudaAccessProperty hitProp;
  cudaAccessProperty missProp;
};
enum cudaSynchronizationPolicy {
  cudaSyncPolicyAuto = 1,
  cudaSyncPolicySpin = 2,
  cudaSyncPolicyYield = 3,
  cudaSyncPolicyBlockingSync = 4,
};
/// Launch, stream and graph-node attributes (values as in the CUDA toolkit; the simulator
/// accepts those of streams: the access policy window, the synchronization policy, the priority).
enum cudaLaunchAttributeID {
  cudaLaunchAttributeIgnore = 0,
  cudaLaunchAttributeAccessPolicyWindow = 1,
  cudaLaunchAttributeCooperative = 2,
  cudaLaunchAttributeSynchronizationPolicy = 3,
  cudaLaunchAttributeClusterDimension = 4,
  cudaLaunchAttributeClusterSchedulingPolicyPreference = 5,
  cudaLaunchAttributeProgrammaticStreamSerialization = 6,
  cudaLaunchAttributeProgrammaticEvent = 7,
  cudaLaunchAttributePriority = 8,
};
union cudaLaunchAttributeValue {
  char pad[64];
  cudaAccessPolicyWindow accessPolicyWindow;
  int cooperative;
  cudaSynchronizationPolicy syncPolicy;
  struct {
    unsigned int x, y, z;
  } clusterDim;
  int programmaticStreamSerializationAllowed;
  int priority;
};
#define cudaStreamAttrID cudaLaunchAttributeID
#define cudaStreamAttrValue cudaLaunchAttributeValue
#define cudaStreamAttributeAccessPolicyWindow cudaLaunchAttributeAccessPolicyWindow
#define cudaStreamAttributeSynchronizationPolicy cudaLaunchAttributeSynchronizationPolicy
#define cudaStreamAttributePriority cudaLaunchAttributePriority

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
};

/// Device attributes for cudaDeviceGetAttribute (values as in the CUDA toolkit).
enum cudaDeviceAttr {
  cudaDevAttrMaxThreadsPerBlock = 1,
  cudaDevAttrMaxBlockDimX = 2,
  cudaDevAttrMaxBlockDimY = 3,
  cudaDevAttrMaxBlockDimZ = 4,
  cudaDevAttrMaxGridDimX = 5,
  cudaDevAttrMaxGridDimY = 6,
  cudaDevAttrMaxGridDimZ = 7,
  cudaDevAttrMaxSharedMemoryPerBlock = 8,
  cudaDevAttrTotalConstantMemory = 9,
  cudaDevAttrWarpSize = 10,
  cudaDevAttrMaxRegistersPerBlock = 12,
  cudaDevAttrClockRate = 13,
  cudaDevAttrGpuOverlap = 15,
  cudaDevAttrMultiProcessorCount = 16,
  cudaDevAttrIntegrated = 18,
  cudaDevAttrCanMapHostMemory = 19,
  cudaDevAttrComputeMode = 20,
  cudaDevAttrConcurrentKernels = 31,
  cudaDevAttrMemoryClockRate = 36,
  cudaDevAttrGlobalMemoryBusWidth = 37,
  cudaDevAttrL2CacheSize = 38,
  cudaDevAttrMaxThreadsPerMultiProcessor = 39,
  cudaDevAttrAsyncEngineCount = 40,
  cudaDevAttrUnifiedAddressing = 41,
  cudaDevAttrComputeCapabilityMajor = 75,
  cudaDevAttrComputeCapabilityMinor = 76,
  cudaDevAttrMaxSharedMemoryPerMultiprocessor = 81,
  cudaDevAttrManagedMemory = 83,
  cudaDevAttrConcurrentManagedAccess = 89,
  cudaDevAttrCooperativeLaunch = 95,
  cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
  cudaDevAttrMemoryPoolsSupported = 115,
  cudaDevAttrMaxPitch = 11,
  cudaDevAttrTextureAlignment = 14,
  cudaDevAttrKernelExecTimeout = 17,
  cudaDevAttrMaxTexture1DWidth = 21,
  cudaDevAttrSurfaceAlignment = 30,
  cudaDevAttrEccEnabled = 32,
  cudaDevAttrPciBusId = 33,
  cudaDevAttrPciDeviceId = 34,
  cudaDevAttrTccDriver = 35,
  cudaDevAttrPciDomainId = 50,
  cudaDevAttrStreamPrioritiesSupported = 78,
  cudaDevAttrGlobalL1CacheSupported = 79,
  cudaDevAttrLocalL1CacheSupported = 80,
  cudaDevAttrMaxRegistersPerMultiprocessor = 82,
  cudaDevAttrIsMultiGpuBoard = 84,
  cudaDevAttrMultiGpuBoardGroupID = 85,
  cudaDevAttrHostNativeAtomicSupported = 86,
  cudaDevAttrSingleToDoublePrecisionPerfRatio = 87,
  cudaDevAttrPageableMemoryAccess = 88,
  cudaDevAttrComputePreemptionSupported = 90,
  cudaDevAttrCanUseHostPointerForRegisteredMem = 91,
  cudaDevAttrDirectManagedMemAccessFromHost = 101,
  cudaDevAttrMaxBlocksPerMultiprocessor = 106,
  cudaDevAttrMaxPersistingL2CacheSize = 108,
  cudaDevAttrMaxAccessPolicyWindowSize = 109,
  cudaDevAttrReservedSharedMemoryPerBlock = 111,
};

/// Compute modes (cudaDevAttrComputeMode): the modelled devices are always in the default
/// mode, shared by any number of host threads and processes.
enum cudaComputeMode {
  cudaComputeModeDefault = 0,
  cudaComputeModeExclusive = 1,
  cudaComputeModeProhibited = 2,
  cudaComputeModeExclusiveProcess = 3,
};

/// The L1/shared-memory split a kernel prefers (cudaFuncSetCacheConfig). A hint on a GPU; the
/// simulator has no L1, so it is accepted and changes nothing.
enum cudaFuncCache {
  cudaFuncCachePreferNone = 0,
  cudaFuncCachePreferShared = 1,
  cudaFuncCachePreferL1 = 2,
  cudaFuncCachePreferEqual = 3,
};

enum cudaFuncAttribute {
  cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
  cudaFuncAttributePreferredSharedMemoryCarveout = 9,
};

/// Values of cudaFuncAttributePreferredSharedMemoryCarveout besides a percentage (accepted; the
/// simulator has no L1 to split).
enum cudaSharedCarveout {
  cudaSharedmemCarveoutDefault = -1,
  cudaSharedmemCarveoutMaxShared = 100,
  cudaSharedmemCarveoutMaxL1 = 0,
};

/// What cudaFuncGetAttributes reports (fields and order as in CUDA 13). The simulator does not
/// compile to a GPU, so register and local memory figures are assumptions (see
/// docs/simulator.md) and static shared memory is not known (0).
struct cudaFuncAttributes {
  size_t sharedSizeBytes;
  size_t constSizeBytes;
  size_t localSizeBytes;
  int maxThreadsPerBlock;
  int numRegs;
  int ptxVersion;
  int binaryVersion;
  int cacheModeCA;
  int maxDynamicSharedSizeBytes;
  int preferredShmemCarveout;
  int clusterDimMustBeSet;
  int requiredClusterWidth;
  int requiredClusterHeight;
  int requiredClusterDepth;
  int clusterSchedulingPolicyPreference;
  int nonPortableClusterSizeAllowed;
  int reserved[16];
};

struct cudaUUID_t { char bytes[16]; };

/// Properties of the modelled device. Field names and order follow CUDA 13's cudaDeviceProp
/// for the fields the course reads; the simulator fills them with an H100-like model whose
/// name says it is a simulator.
struct cudaDeviceProp {
  char name[256];
  cudaUUID_t uuid;
  size_t totalGlobalMem;
  size_t sharedMemPerBlock;
  int regsPerBlock;
  int warpSize;
  size_t memPitch;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  size_t totalConstMem;
  int major;
  int minor;
  size_t textureAlignment;
  int multiProcessorCount;
  int integrated;
  int canMapHostMemory;
  int concurrentKernels;
  int ECCEnabled;
  int pciBusID;
  int pciDeviceID;
  int pciDomainID;
  int asyncEngineCount;
  int unifiedAddressing;
  int memoryBusWidth;
  int l2CacheSize;
  int maxThreadsPerMultiProcessor;
  size_t sharedMemPerMultiprocessor;
  int regsPerMultiprocessor;
  int managedMemory;
  int cooperativeLaunch;
  size_t sharedMemPerBlockOptin;
  int maxBlocksPerMultiProcessor;
  // Texture and surface limits, an H100's.
  int maxTexture1D;
  int maxTexture1DLayered[2];
  int maxTexture2D[2];
  int maxTexture2DLayered[3];
  int maxTexture3D[3];
  int maxTextureCubemap;
  int maxTextureCubemapLayered[2];
  size_t surfaceAlignment;
  int tccDriver;
  int computePreemptionSupported;
  // The L2 persistence of cudaAccessPolicyWindow is not modelled: both read 0.
  int persistingL2CacheMaxSize;
  int accessPolicyMaxWindowSize;
  // Memory access, as the simulator gives it: host and kernels share one memory, but a kernel
  // may not touch pageable host memory (it is reported).
  int pageableMemoryAccess;
  int pageableMemoryAccessUsesHostPageTables;
  int concurrentManagedAccess;
  int directManagedMemAccessFromHost;
  int hostNativeAtomicSupported;
  int canUseHostPointerForRegisteredMem;
  int hostRegisterSupported;
  int streamPrioritiesSupported;
  int globalL1CacheSupported;
  int localL1CacheSupported;
  int isMultiGpuBoard;
  int multiGpuBoardGroupID;
  size_t reservedSharedMemPerBlock;
  // CUDA 12's fields that CUDA 13 removed (cudaDeviceGetAttribute gives them there), which older
  // programs print (CUDA by Example's enum_gpu): the modelled H100's clocks in kHz, copies that
  // overlap kernels, no watchdog, the default compute mode.
  int clockRate;
  int memoryClockRate;
  int deviceOverlap;
  int kernelExecTimeoutEnabled;
  int computeMode;
};

/// What cudaDeviceGetP2PAttribute reports about a pair of devices.
enum cudaDeviceP2PAttr {
  cudaDevP2PAttrPerformanceRank = 1,
  cudaDevP2PAttrAccessSupported = 2,
  cudaDevP2PAttrNativeAtomicSupported = 3,
  cudaDevP2PAttrCudaArrayAccessSupported = 4,
};

enum cudaMemoryType {
  cudaMemoryTypeUnregistered = 0,
  cudaMemoryTypeHost = 1,
  cudaMemoryTypeDevice = 2,
  cudaMemoryTypeManaged = 3,
};

struct cudaPointerAttributes {
  cudaMemoryType type;
  int device;
  void* devicePointer;
  void* hostPointer;
};

// ---- pitched (2-D and 3-D) memory -------------------------------------------------------------
/// The size of a 3-D region: `width` in bytes (for linear memory), `height` rows, `depth` slices.
struct cudaExtent {
  size_t width;
  size_t height;
  size_t depth;
};
/// A position in a pitched region: `x` in bytes, `y` the row, `z` the slice.
struct cudaPos {
  size_t x;
  size_t y;
  size_t z;
};
/// Linear memory seen as rows of `pitch` bytes (`xsize` of them used, in elements as the caller
/// counts them) and slices of `ysize` rows.
struct cudaPitchedPtr {
  void* ptr;
  size_t pitch;
  size_t xsize;
  size_t ysize;
};
inline cudaExtent make_cudaExtent(size_t width, size_t height, size_t depth) { return {width, height, depth}; }
inline cudaPos make_cudaPos(size_t x, size_t y, size_t z) { return {x, y, z}; }
inline cudaPitchedPtr make_cudaPitchedPtr(void* ptr, size_t pitch, size_t xsize, size_t ysize) {
  return {ptr, pitch, xsize, ysize};
}
// ---- CUDA arrays, textures and surfaces (cudasim/textures.hpp) -----------------------------
/// How a texel's channels are stored: each channel's bits (0: no such channel) and their kind.
enum cudaChannelFormatKind {
  cudaChannelFormatKindSigned = 0,
  cudaChannelFormatKindUnsigned = 1,
  cudaChannelFormatKindFloat = 2,
  cudaChannelFormatKindNone = 3,
};
struct cudaChannelFormatDesc {
  int x;
  int y;
  int z;
  int w;
  cudaChannelFormatKind f;
};
/// A CUDA array: memory in the layout that textures and surfaces read (cudaMallocArray,
/// cudaMalloc3DArray). Its members are the simulator's.
struct cudaArray;
typedef cudaArray* cudaArray_t;
typedef const cudaArray* cudaArray_const_t;
/// Mipmapped arrays are not simulated (a resource that names one is refused).
struct cudaMipmappedArray;
typedef cudaMipmappedArray* cudaMipmappedArray_t;
typedef const cudaMipmappedArray* cudaMipmappedArray_const_t;
/// cudaMallocArray's and cudaMalloc3DArray's flags.
enum : unsigned {
  cudaArrayDefault = 0x00,
  cudaArrayLayered = 0x01,
  cudaArraySurfaceLoadStore = 0x02,
  cudaArrayCubemap = 0x04,
  cudaArrayTextureGather = 0x08,
};
enum cudaResourceType {
  cudaResourceTypeArray = 0x00,
  cudaResourceTypeMipmappedArray = 0x01,
  cudaResourceTypeLinear = 0x02,
  cudaResourceTypePitch2D = 0x03,
};
/// What a texture or surface object reads: an array, or linear memory (1-D or pitched 2-D).
struct cudaResourceDesc {
  cudaResourceType resType;
  union {
    struct {
      cudaArray_t array;
    } array;
    struct {
      cudaMipmappedArray_t mipmap;
    } mipmap;
    struct {
      void* devPtr;
      cudaChannelFormatDesc desc;
      size_t sizeInBytes;
    } linear;
    struct {
      void* devPtr;
      cudaChannelFormatDesc desc;
      size_t width;
      size_t height;
      size_t pitchInBytes;
    } pitch2D;
  } res;
};
/// A view of a resource in another format: not simulated (only null is accepted).
struct cudaResourceViewDesc;
enum cudaTextureAddressMode {
  cudaAddressModeWrap = 0,
  cudaAddressModeClamp = 1,
  cudaAddressModeMirror = 2,
  cudaAddressModeBorder = 3,
};
enum cudaTextureFilterMode {
  cudaFilterModePoint = 0,
  cudaFilterModeLinear = 1,
};
enum cudaTextureReadMode {
  cudaReadModeElementType = 0,
  cudaReadModeNormalizedFloat = 1,
};
/// How a texture object samples its resource.
struct cudaTextureDesc {
  cudaTextureAddressMode addressMode[3];
  cudaTextureFilterMode filterMode;
  cudaTextureReadMode readMode;
  int sRGB;
  float borderColor[4];
  int normalizedCoords;
  unsigned int maxAnisotropy;
  cudaTextureFilterMode mipmapFilterMode;
  float mipmapLevelBias;
  float minMipmapLevelClamp;
  float maxMipmapLevelClamp;
  int disableTrilinearOptimization;
  int seamlessCubemap;
};
typedef unsigned long long cudaTextureObject_t;
typedef unsigned long long cudaSurfaceObject_t;
/// What a surface access outside its array does: fail the launch (trap), or clamp, or read
/// zero and drop the store.
enum cudaSurfaceBoundaryMode {
  cudaBoundaryModeZero = 0,
  cudaBoundaryModeClamp = 1,
  cudaBoundaryModeTrap = 2,
};
/// A 3-D copy (cudaMemcpy3D, cudaMemcpy3DAsync, a graph's memcpy node): `extent` from
/// `srcPtr` (or `srcArray`) at `srcPos` to `dstPtr` (or `dstArray`) at `dstPos`. Where an array
/// takes part, the extent's width and that array's position count elements, not bytes.
struct cudaMemcpy3DParms {
  cudaArray_t srcArray;
  cudaPos srcPos;
  cudaPitchedPtr srcPtr;
  cudaArray_t dstArray;
  cudaPos dstPos;
  cudaPitchedPtr dstPtr;
  cudaExtent extent;
  cudaMemcpyKind kind;
};
/// A graph's memset node: `height` rows of `width` elements of `elementSize` bytes (1, 2 or 4),
/// rows `pitch` bytes apart, each element set to the low `elementSize` bytes of `value`.
struct cudaMemsetParams {
  void* dst;
  size_t pitch;
  unsigned int value;
  unsigned int elementSize;
  size_t width;
  size_t height;
};

// ---- opaque handles -----------------------------------------------------------------------
struct CUgraph_st;
struct CUgraphExec_st;
struct CUgraphNode_st;
typedef CUgraph_st* cudaGraph_t;
typedef CUgraphExec_st* cudaGraphExec_t;
typedef CUgraphNode_st* cudaGraphNode_t;

/// A kernel node of a graph (cudaGraphAddKernelNode): `kernelParams[i]` points to the i-th
/// argument, copied when the node is added. `extra` is not supported (must be null).
struct cudaKernelNodeParams {
  void* func;
  dim3 gridDim;
  dim3 blockDim;
  unsigned int sharedMemBytes;
  void** kernelParams;
  void** extra;
};

/// Why cudaGraphExecUpdate could not update an executable (the simulator compares the
/// graphs' dependencies only: the types of captured work are not known to it).
enum cudaGraphExecUpdateResult {
  cudaGraphExecUpdateSuccess = 0x0,
  cudaGraphExecUpdateError = 0x1,
  cudaGraphExecUpdateErrorTopologyChanged = 0x2,
  cudaGraphExecUpdateErrorNodeTypeChanged = 0x3,
  cudaGraphExecUpdateErrorFunctionChanged = 0x4,
  cudaGraphExecUpdateErrorParametersChanged = 0x5,
  cudaGraphExecUpdateErrorNotSupported = 0x6,
  cudaGraphExecUpdateErrorUnsupportedFunctionChange = 0x7,
  cudaGraphExecUpdateErrorAttributesChanged = 0x8,
};
struct cudaGraphExecUpdateResultInfo {
  cudaGraphExecUpdateResult result;
  cudaGraphNode_t errorNode;
  cudaGraphNode_t errorFromNode;
};

/// What an edge of a graph carries (CUDA 13). Only the default, all zero, is supported.
struct cudaGraphEdgeData {
  unsigned char from_port;
  unsigned char to_port;
  unsigned char type;
  unsigned char reserved[5];
};

/// Graph memory nodes (cudaGraphAddMemAllocNode): where an allocation lives and who may
/// access it. The simulator allocates device memory of the current device and reads only
/// `bytesize` and `poolProps.location` (a device).
enum cudaMemAllocationType {
  cudaMemAllocationTypeInvalid = 0x0,
  cudaMemAllocationTypePinned = 0x1,
  cudaMemAllocationTypeMax = 0x7FFFFFFF,
};
enum cudaMemAllocationHandleType {
  cudaMemHandleTypeNone = 0x0,
  cudaMemHandleTypePosixFileDescriptor = 0x1,
  cudaMemHandleTypeWin32 = 0x2,
  cudaMemHandleTypeWin32Kmt = 0x4,
  cudaMemHandleTypeFabric = 0x8,
};
enum cudaMemLocationType {
  cudaMemLocationTypeInvalid = 0,
  cudaMemLocationTypeDevice = 1,
  cudaMemLocationTypeHost = 2,
  cudaMemLocationTypeHostNuma = 3,
  cudaMemLocationTypeHostNumaCurrent = 4,
};
struct cudaMemLocation {
  cudaMemLocationType type;
  int id;
};
/// Hints about how managed memory is used (cudaMemAdvise).
enum cudaMemoryAdvise {
  cudaMemAdviseSetReadMostly = 1,
  cudaMemAdviseUnsetReadMostly = 2,
  cudaMemAdviseSetPreferredLocation = 3,
  cudaMemAdviseUnsetPreferredLocation = 4,
  cudaMemAdviseSetAccessedBy = 5,
  cudaMemAdviseUnsetAccessedBy = 6,
};
enum cudaMemAccessFlags {
  cudaMemAccessFlagsProtNone = 0,
  cudaMemAccessFlagsProtRead = 1,
  cudaMemAccessFlagsProtReadWrite = 3,
};
struct cudaMemAccessDesc {
  cudaMemLocation location;
  cudaMemAccessFlags flags;
};
struct cudaMemPoolProps {
  cudaMemAllocationType allocType;
  cudaMemAllocationHandleType handleTypes;
  cudaMemLocation location;
  void* win32SecurityAttributes;
  size_t maxSize;
  unsigned short usage;
  unsigned char reserved[54];
};
/// In: poolProps, accessDescs, bytesize; out: dptr, the allocation's address, fixed for the
/// life of the graph (and of the executables made from it).
struct cudaMemAllocNodeParams {
  cudaMemPoolProps poolProps;
  const cudaMemAccessDesc* accessDescs;
  size_t accessDescCount;
  size_t bytesize;
  void* dptr;
};
/// cudaDeviceGetGraphMemAttribute: the graph allocations of a device, in bytes.
enum cudaGraphMemAttributeType {
  cudaGraphMemAttrUsedMemCurrent = 0x0,
  cudaGraphMemAttrUsedMemHigh = 0x1,
  cudaGraphMemAttrReservedMemCurrent = 0x2,
  cudaGraphMemAttrReservedMemHigh = 0x3,
};
enum cudaGraphInstantiateFlags {
  cudaGraphInstantiateFlagAutoFreeOnLaunch = 1,
  cudaGraphInstantiateFlagUpload = 2,
  cudaGraphInstantiateFlagDeviceLaunch = 4,
  cudaGraphInstantiateFlagUseNodePriority = 8,
};

enum cudaStreamCaptureMode {
  cudaStreamCaptureModeGlobal = 0,
  cudaStreamCaptureModeThreadLocal = 1,
  cudaStreamCaptureModeRelaxed = 2,
};
enum cudaStreamCaptureStatus {
  cudaStreamCaptureStatusNone = 0,
  cudaStreamCaptureStatusActive = 1,
  cudaStreamCaptureStatusInvalidated = 2,
};

/// A memory pool (the default one of a device; see cudaDeviceGetDefaultMemPool).
struct CUmemPoolHandle_st {};
typedef CUmemPoolHandle_st* cudaMemPool_t;
enum cudaMemPoolAttr {
  cudaMemPoolReuseFollowEventDependencies = 0x1,
  cudaMemPoolReuseAllowOpportunistic = 0x2,
  cudaMemPoolReuseAllowInternalDependencies = 0x3,
  cudaMemPoolAttrReleaseThreshold = 0x4,
  cudaMemPoolAttrReservedMemCurrent = 0x5,
  cudaMemPoolAttrReservedMemHigh = 0x6,
  cudaMemPoolAttrUsedMemCurrent = 0x7,
  cudaMemPoolAttrUsedMemHigh = 0x8,
};

struct CUstream_st;
struct CUevent_st;
typedef CUstream_st* cudaStream_t;
typedef CUevent_st* cudaEvent_t;

/// The legacy default stream (also what 0 / nullptr means) and the per-thread default stream.
#define cudaStreamLegacy ((cudaStream_t)0x1)
#define cudaStreamPerThread ((cudaStream_t)0x2)

/// A host function queued on a stream with cudaLaunchHostFunc. CUDART_CB is the calling
/// convention macro of the CUDA headers (empty outside Windows).
#define CUDART_CB
typedef void (*cudaHostFn_t)(void* user_data);
/// A callback queued on a stream with cudaStreamAddCallback (the older form of
/// cudaLaunchHostFunc): called with the stream it was queued on and the stream's status.
typedef void (*cudaStreamCallback_t)(cudaStream_t stream, cudaError_t status, void* user_data);

/// A host node of a graph (cudaGraphAddHostNode).
struct cudaHostNodeParams {
  cudaHostFn_t fn;
  void* userData;
};

/// Conditional nodes (CUDA 12.3+): a node that runs its body graphs once (if, switch) or
/// again and again (while) depending on a condition, a value kept per graph behind a handle
/// (cudaGraphConditionalHandleCreate) that kernels set with cudaGraphSetConditional.
typedef unsigned long long cudaGraphConditionalHandle;
enum cudaGraphConditionalHandleFlags {
  cudaGraphCondAssignDefault = 1,  // the condition gets its default value at each launch of the graph
};
enum cudaGraphConditionalNodeType {
  cudaGraphCondTypeIf = 0,      // body 0 when the condition is non-zero, else body 1 (when size is 2)
  cudaGraphCondTypeWhile = 1,   // body 0 as long as the condition is non-zero, tested before each run
  cudaGraphCondTypeSwitch = 2,  // body n when the condition is n; none when it is size or more
};
struct cudaConditionalNodeParams {
  cudaGraphConditionalHandle handle;
  cudaGraphConditionalNodeType type;
  unsigned int size;         // how many body graphs: 1 (while), 1 or 2 (if), 1 or more (switch)
  cudaGraph_t* phGraph_out;  // set by cudaGraphAddNode: the empty body graphs it made, to fill
};

/// What cudaGraphAddNode adds (CUDA 12.2+). The simulator adds kernel, host, empty, child graph,
/// event record, event wait and conditional nodes this way (the other types through their own
/// cudaGraphAdd*Node).
enum cudaGraphNodeType {
  cudaGraphNodeTypeKernel = 0x00,
  cudaGraphNodeTypeMemcpy = 0x01,
  cudaGraphNodeTypeMemset = 0x02,
  cudaGraphNodeTypeHost = 0x03,
  cudaGraphNodeTypeGraph = 0x04,
  cudaGraphNodeTypeEmpty = 0x05,
  cudaGraphNodeTypeWaitEvent = 0x06,
  cudaGraphNodeTypeEventRecord = 0x07,
  cudaGraphNodeTypeExtSemaphoreSignal = 0x08,
  cudaGraphNodeTypeExtSemaphoreWait = 0x09,
  cudaGraphNodeTypeMemAlloc = 0x0a,
  cudaGraphNodeTypeMemFree = 0x0b,
  cudaGraphNodeTypeConditional = 0x0d,
  cudaGraphNodeTypeCount
};
/// The same fields as cudaKernelNodeParams and cudaHostNodeParams.
struct cudaKernelNodeParamsV2 : cudaKernelNodeParams {};
struct cudaHostNodeParamsV2 : cudaHostNodeParams {};
/// A child graph node's graph: copied into the node (Clone), or handed to it (Move: the node then
/// owns the graph, which cannot be destroyed, instantiated or added elsewhere on its own).
enum cudaGraphChildGraphNodeOwnership {
  cudaGraphChildGraphOwnershipClone = 0,
  cudaGraphChildGraphOwnershipMove = 1,
};
struct cudaChildGraphNodeParams {
  cudaGraph_t graph;
  cudaGraphChildGraphNodeOwnership ownership;
};
struct cudaEventRecordNodeParams {
  cudaEvent_t event;
};
struct cudaEventWaitNodeParams {
  cudaEvent_t event;
};
struct cudaGraphNodeParams {
  cudaGraphNodeType type;
  int reserved0[3];
  union {
    long long reserved1[29];
    cudaKernelNodeParamsV2 kernel;
    cudaHostNodeParamsV2 host;
    cudaChildGraphNodeParams graph;
    cudaEventWaitNodeParams eventWait;
    cudaEventRecordNodeParams eventRecord;
    cudaConditionalNodeParams conditional;
  };
  long long reserved2;
};
/// cudaStreamUpdateCaptureDependencies: add to the capture's dependencies, or replace them.
enum cudaStreamUpdateCaptureDependenciesFlags {
  cudaStreamAddCaptureDependencies = 0x0,
  cudaStreamSetCaptureDependencies = 0x1,
};

#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01
#define cudaCpuDeviceId ((int)-1)      // the host, where an API takes a device number
#define cudaInvalidDeviceId ((int)-2)
#define cudaEventDefault 0x00
#define cudaEventBlockingSync 0x01
#define cudaEventDisableTiming 0x02
#define cudaHostAllocDefault 0x00
#define cudaHostAllocPortable 0x01
#define cudaHostAllocMapped 0x02
#define cudaHostAllocWriteCombined 0x04
#define cudaHostRegisterDefault 0x00
#define cudaHostRegisterPortable 0x01
#define cudaHostRegisterMapped 0x02
#define cudaHostRegisterIoMemory 0x04
#define cudaHostRegisterReadOnly 0x08
#define cudaDeviceScheduleAuto 0x00
#define cudaDeviceScheduleSpin 0x01
#define cudaDeviceScheduleYield 0x02
#define cudaDeviceScheduleBlockingSync 0x04
#define cudaDeviceBlockingSync 0x04
#define cudaDeviceScheduleMask 0x07
#define cudaDeviceMapHost 0x08
#define cudaDeviceLmemResizeToMax 0x10
#define cudaDeviceMask 0x1f
#define cudaMemAttachGlobal 0x01
#define cudaMemAttachHost 0x02
#define cudaMemAttachSingle 0x04
