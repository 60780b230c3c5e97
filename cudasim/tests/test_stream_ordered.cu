// Stream-ordered runtime calls: cudaMallocAsync / cudaFreeAsync (the buffer is usable by work
// queued after the allocation on its stream, and is freed in stream order), cudaLaunchHostFunc
// and cudaStreamAddCallback (the host function runs after the work queued before it), cudaMallocPitch, and
// cudaMemcpy2D / cudaMemcpy2DAsync with their pitch rules, 3-D copies (cudaMalloc3D,
// cudaMemcpy3D, cudaMemcpy3DAsync) and pitched memsets. Delays come from clock64() spins,
// so the checks hold on a GPU too. Valid CUDA: the same file runs on a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "clock_spin.cuh"

namespace {

#define ASSERT_CUDA(expr) ASSERT_EQ((expr), cudaSuccess)

__global__ void slow_fill(int* data, int n, int value, long long cycles) {
  if (threadIdx.x == 0 && blockIdx.x == 0) spin(cycles);
  __syncthreads();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = value;
}

__global__ void add_one(int* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += 1;
}

TEST(StreamOrderedMemory, MallocAsyncBufferIsUsableByLaterWorkOnItsStream) {
  const int n = 1000;  // not a multiple of the block size
  cudaStream_t s;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int* d = nullptr;
  ASSERT_CUDA(cudaMallocAsync(reinterpret_cast<void**>(&d), n * sizeof(int), s));
  ASSERT_NE(d, nullptr);
  slow_fill<<<(n + 255) / 256, 256, 0, s>>>(d, n, 41, kSlow);
  add_one<<<(n + 255) / 256, 256, 0, s>>>(d, n);
  std::vector<int> h(n, 0);
  ASSERT_CUDA(cudaMemcpyAsync(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost, s));
  ASSERT_CUDA(cudaFreeAsync(d, s));
  ASSERT_CUDA(cudaStreamSynchronize(s));
  for (int i = 0; i < n; ++i) ASSERT_EQ(h[i], 42) << "at " << i;
  ASSERT_CUDA(cudaStreamDestroy(s));
}

TEST(StreamOrderedMemory, FreeAsyncWaitsForEarlierWorkOnTheStream) {
  // The free is queued behind a slow kernel that still writes the buffer: freeing it at once
  // would make the kernel write freed memory (a fault on the simulator, corruption on a GPU).
  const int n = 300;
  cudaStream_t s;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int* d = nullptr;
  ASSERT_CUDA(cudaMallocAsync(&d, n * sizeof(int), s));  // the template overload
  slow_fill<<<(n + 127) / 128, 128, 0, s>>>(d, n, 7, kSlow);
  ASSERT_CUDA(cudaFreeAsync(d, s));
  ASSERT_CUDA(cudaStreamSynchronize(s));
  ASSERT_CUDA(cudaGetLastError());
  ASSERT_CUDA(cudaStreamDestroy(s));
}

#ifdef CUDASIM  // a GPU's answers to these misuses are not all documented
// The default pool keeps its attributes and counts what stream-ordered allocations hold.
TEST(StreamOrderedMemory, TheDefaultPoolKeepsItsAttributesAndCountsWhatAllocationsHold) {
  int device = 0;
  ASSERT_CUDA(cudaGetDevice(&device));
  cudaMemPool_t pool;
  ASSERT_CUDA(cudaDeviceGetDefaultMemPool(&pool, device));
  unsigned long long threshold = 64ull << 20, back = 0;
  ASSERT_CUDA(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  ASSERT_CUDA(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &back));
  EXPECT_EQ(back, threshold);
  cudaStream_t s;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  unsigned long long before = 0, during = 0, after = 0, high = 0;
  ASSERT_CUDA(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &before));
  const size_t bytes = 3u << 20;
  void* p = nullptr;
  ASSERT_CUDA(cudaMallocFromPoolAsync(&p, bytes, pool, s));
  ASSERT_CUDA(cudaMemsetAsync(p, 0, bytes, s));
  ASSERT_CUDA(cudaStreamSynchronize(s));
  ASSERT_CUDA(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &during));
  EXPECT_GE(during, before + bytes);
  ASSERT_CUDA(cudaFreeAsync(p, s));
  ASSERT_CUDA(cudaStreamSynchronize(s));
  ASSERT_CUDA(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &after));
  ASSERT_CUDA(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &high));
  EXPECT_EQ(after, before);
  EXPECT_GE(high, during);
  unsigned long long zero = 0;
  ASSERT_CUDA(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero));  // resets the mark
  ASSERT_CUDA(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &high));
  EXPECT_EQ(high, after);
  ASSERT_CUDA(cudaMemPoolTrimTo(pool, 0));
#ifdef CUDASIM  // a GPU rounds what a pool holds up to its own granularity
  EXPECT_EQ(during, before + bytes);
#endif
  ASSERT_CUDA(cudaStreamDestroy(s));
}

TEST(StreamOrderedMemory, FreeAsyncOfAPointerThatIsNotAnAllocationIsAnError) {
  int on_host = 0;
  EXPECT_EQ(cudaFreeAsync(&on_host, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMallocAsync(nullptr, 16, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
}

TEST(StreamOrderedMemory, FreeAsyncTwiceIsAnError) {
  int* d = nullptr;
  ASSERT_CUDA(cudaMallocAsync(&d, 64, nullptr));
  ASSERT_CUDA(cudaFreeAsync(d, nullptr));
  // The first free may not have run yet: the second is refused all the same.
  EXPECT_EQ(cudaFreeAsync(d, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  ASSERT_CUDA(cudaDeviceSynchronize());
}
#endif

struct HostRecord {
  const int* device_value;  // read back by the host function
  std::atomic<int> calls{0};
  int seen = -1;
};

void CUDART_CB note_call(void* user_data) {
  auto* record = static_cast<HostRecord*>(user_data);
  record->calls.fetch_add(1);
}

void CUDART_CB append_order(void* user_data) {
  auto* order = static_cast<std::vector<int>*>(user_data);
  order->push_back(static_cast<int>(order->size()));
}

/// A non-blocking stream on which a slow kernel writes a value that is then copied to pinned
/// host memory: host work queued after it must see the value.
struct SlowValueOnAStream {
  cudaStream_t s = nullptr;
  int* d = nullptr;
  int* pinned = nullptr;

  /// Queues the kernel and the copy of `value`.
  void queue(int value) {
    ASSERT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    ASSERT_CUDA(cudaMalloc(&d, sizeof(int)));
    ASSERT_CUDA(cudaMallocHost(&pinned, sizeof(int)));
    *pinned = 0;
    slow_fill<<<1, 32, 0, s>>>(d, 1, value, kSlow);
    ASSERT_CUDA(cudaMemcpyAsync(pinned, d, sizeof(int), cudaMemcpyDeviceToHost, s));
  }
  ~SlowValueOnAStream() {
    EXPECT_EQ(cudaFreeHost(pinned), cudaSuccess);
    EXPECT_EQ(cudaFree(d), cudaSuccess);
    EXPECT_EQ(cudaStreamDestroy(s), cudaSuccess);
  }
};

TEST(HostFunctions, RunAfterTheWorkQueuedBeforeThem) {
  SlowValueOnAStream work;
  work.queue(5);
  const cudaStream_t s = work.s;
  HostRecord record;
  record.device_value = work.pinned;
  // The host function reads the copy's result: it must run after the copy.
  ASSERT_CUDA(cudaLaunchHostFunc(
      s,
      [](void* user_data) {
        auto* r = static_cast<HostRecord*>(user_data);
        r->seen = *r->device_value;
        r->calls.fetch_add(1);
      },
      &record));
  ASSERT_CUDA(cudaLaunchHostFunc(s, note_call, &record));
  ASSERT_CUDA(cudaStreamSynchronize(s));
  EXPECT_EQ(record.calls.load(), 2);
  EXPECT_EQ(record.seen, 5);
}

TEST(HostFunctions, RunInTheOrderTheyWereQueued) {
  cudaStream_t s;
  ASSERT_CUDA(cudaStreamCreate(&s));
  std::vector<int> order;
  for (int i = 0; i < 5; ++i) ASSERT_CUDA(cudaLaunchHostFunc(s, append_order, &order));
  ASSERT_CUDA(cudaStreamSynchronize(s));
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
  ASSERT_CUDA(cudaStreamDestroy(s));
}

/// What a stream callback saw: the stream and status it was given, and the order of calls.
struct CallbackRecord {
  std::vector<int> order;
  std::vector<cudaStream_t> streams;
  std::vector<cudaError_t> statuses;
  const int* device_value = nullptr;
  int seen = -1;
};

void CUDART_CB record_callback(cudaStream_t stream, cudaError_t status, void* user_data) {
  auto* record = static_cast<CallbackRecord*>(user_data);
  if (record->device_value != nullptr && record->order.empty()) record->seen = *record->device_value;
  record->order.push_back(static_cast<int>(record->order.size()));
  record->streams.push_back(stream);
  record->statuses.push_back(status);
}

TEST(StreamCallbacks, RunAfterTheWorkQueuedBeforeThemWithTheirStreamAndStatus) {
  SlowValueOnAStream work;
  work.queue(7);
  const cudaStream_t s = work.s;
  CallbackRecord record;
  record.device_value = work.pinned;
  // The first callback reads the copy's result: it must run after the copy.
  for (int i = 0; i < 3; ++i) ASSERT_CUDA(cudaStreamAddCallback(s, record_callback, &record, 0));
  ASSERT_CUDA(cudaStreamSynchronize(s));
  EXPECT_EQ(record.seen, 7);
  EXPECT_EQ(record.order, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(record.streams, (std::vector<cudaStream_t>{s, s, s}));
  EXPECT_EQ(record.statuses, (std::vector<cudaError_t>{cudaSuccess, cudaSuccess, cudaSuccess}));
}

TEST(StreamCallbacks, MixWithHostFunctionsInStreamOrderOnTheDefaultStream) {
  std::vector<int> order;
  CallbackRecord record;
  ASSERT_CUDA(cudaLaunchHostFunc(0, append_order, &order));
  ASSERT_CUDA(cudaStreamAddCallback(0, record_callback, &record, 0));
  ASSERT_CUDA(cudaLaunchHostFunc(0, append_order, &order));
  ASSERT_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(order, (std::vector<int>{0, 1}));
  ASSERT_EQ(record.order.size(), 1u);
  EXPECT_EQ(record.streams[0], cudaStream_t{0});
}

TEST(StreamCallbacks, NullCallbackOrNonZeroFlagsAreErrors) {
  CallbackRecord record;
  EXPECT_EQ(cudaStreamAddCallback(0, nullptr, &record, 0), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaStreamAddCallback(0, record_callback, &record, 1), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  ASSERT_CUDA(cudaDeviceSynchronize());
  EXPECT_TRUE(record.order.empty());
}

#ifdef CUDASIM
// The toolkit documents cudaStreamAddCallback as not supported under stream capture.
TEST(StreamCallbacks, AreRefusedWhileTheStreamCaptures) {
  cudaStream_t s;
  ASSERT_CUDA(cudaStreamCreate(&s));
  ASSERT_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  CallbackRecord record;
  EXPECT_EQ(cudaStreamAddCallback(s, record_callback, &record, 0), cudaErrorStreamCaptureUnsupported);
  cudaGraph_t graph;
  ASSERT_CUDA(cudaStreamEndCapture(s, &graph));
  ASSERT_CUDA(cudaGraphDestroy(graph));
  cudaGetLastError();
  ASSERT_CUDA(cudaStreamDestroy(s));
  EXPECT_TRUE(record.order.empty());
}
#endif

TEST(HostFunctions, NullFunctionIsAnError) {
  EXPECT_EQ(cudaLaunchHostFunc(nullptr, nullptr, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
}

__global__ void mark_pitched(float* base, size_t pitch, int width, int height) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < width && y < height) {
    float* row = reinterpret_cast<float*>(reinterpret_cast<char*>(base) + y * pitch);
    row[x] = row[x] * 2.0f + 1.0f;
  }
}

TEST(PitchedMemory, MallocPitchGivesAnAlignedPitchAtLeastTheWidth) {
  for (size_t width : {size_t{1}, size_t{127}, size_t{128}, size_t{129}, size_t{513}}) {
    float* d = nullptr;
    size_t pitch = 0;
    ASSERT_CUDA(cudaMallocPitch(&d, &pitch, width * sizeof(float), 7));
    EXPECT_GE(pitch, width * sizeof(float));
    EXPECT_EQ(pitch % 256, 0u) << "pitch " << pitch;  // CUDA aligns rows for coalescing
    EXPECT_EQ(reinterpret_cast<uintptr_t>(d) % 256, 0u);
    ASSERT_CUDA(cudaFree(d));
  }
  size_t pitch = 0;
  void* p = nullptr;
  EXPECT_EQ(cudaMallocPitch(&p, nullptr, 16, 16), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMallocPitch(nullptr, &pitch, 16, 16), cudaErrorInvalidValue);
  cudaGetLastError();
}

TEST(PitchedMemory, Memcpy2DRoundTripsThroughAPitchedBuffer) {
  const int width = 129, height = 7;  // rows not a multiple of anything
  std::vector<float> h(width * height), back(width * height, -1.0f);
  for (int i = 0; i < width * height; ++i) h[i] = static_cast<float>(i % 97) - 3.5f;
  float* d = nullptr;
  size_t pitch = 0;
  ASSERT_CUDA(cudaMallocPitch(&d, &pitch, width * sizeof(float), height));
  ASSERT_CUDA(cudaMemcpy2D(d, pitch, h.data(), width * sizeof(float), width * sizeof(float), height,
                           cudaMemcpyHostToDevice));
  dim3 block(32, 4);
  dim3 grid((width + block.x - 1) / block.x, (height + block.y - 1) / block.y);
  mark_pitched<<<grid, block>>>(d, pitch, width, height);
  ASSERT_CUDA(cudaGetLastError());
  ASSERT_CUDA(cudaMemcpy2D(back.data(), width * sizeof(float), d, pitch, width * sizeof(float), height,
                           cudaMemcpyDeviceToHost));
  for (int i = 0; i < width * height; ++i) ASSERT_EQ(back[i], h[i] * 2.0f + 1.0f) << "at " << i;
  ASSERT_CUDA(cudaFree(d));
}

TEST(PitchedMemory, Memcpy2DCopiesOnlyTheWidthOfEachRow) {
  // A 3x4 window out of a 5-wide host matrix into a 6-wide one: the bytes between rows stay.
  std::vector<int> src(5 * 4), dst(6 * 4, -1);
  for (int i = 0; i < 20; ++i) src[i] = i;
  ASSERT_CUDA(cudaMemcpy2D(dst.data(), 6 * sizeof(int), src.data(), 5 * sizeof(int), 3 * sizeof(int), 4,
                           cudaMemcpyHostToHost));
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 6; ++c) ASSERT_EQ(dst[r * 6 + c], c < 3 ? r * 5 + c : -1) << r << "," << c;
}

TEST(PitchedMemory, Memcpy2DAsyncRunsInOrderOnItsStream) {
  const int width = 65, height = 5;
  cudaStream_t s;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int* d = nullptr;
  size_t pitch = 0;
  ASSERT_CUDA(cudaMallocPitch(&d, &pitch, width * sizeof(int), height));
  int* h = nullptr;
  ASSERT_CUDA(cudaMallocHost(&h, width * height * sizeof(int)));
  for (int i = 0; i < width * height; ++i) h[i] = -1;
  // Fill each row with 9 after a delay, then copy back: the copy must see the whole fill.
  slow_fill<<<(static_cast<int>(pitch * height / sizeof(int)) + 255) / 256, 256, 0, s>>>(
      d, static_cast<int>(pitch * height / sizeof(int)), 9, kSlow);
  ASSERT_CUDA(cudaMemcpy2DAsync(h, width * sizeof(int), d, pitch, width * sizeof(int), height,
                                cudaMemcpyDeviceToHost, s));
  ASSERT_CUDA(cudaStreamSynchronize(s));
  for (int i = 0; i < width * height; ++i) ASSERT_EQ(h[i], 9) << "at " << i;
  ASSERT_CUDA(cudaFreeHost(h));
  ASSERT_CUDA(cudaFree(d));
  ASSERT_CUDA(cudaStreamDestroy(s));
}

TEST(PitchedMemory, WidthLargerThanAPitchIsAnError) {
  std::vector<char> a(64), b(64);
  EXPECT_EQ(cudaMemcpy2D(a.data(), 8, b.data(), 16, 12, 2, cudaMemcpyHostToHost), cudaErrorInvalidPitchValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidPitchValue);
  EXPECT_EQ(cudaMemcpy2D(a.data(), 16, b.data(), 8, 12, 2, cudaMemcpyHostToHost), cudaErrorInvalidPitchValue);
  EXPECT_EQ(cudaMemcpy2DAsync(a.data(), 8, b.data(), 16, 12, 2, cudaMemcpyHostToHost, nullptr),
            cudaErrorInvalidPitchValue);
  cudaGetLastError();
}

// A box of 3 x 2 x 3 ints (x, y, z) from a 7 x 5 x 4 host volume at (1, 2, 1) into a device
// volume at (2, 1, 0), then the whole device volume back: the box lands where it should and
// nothing around it changes.
TEST(PitchedMemory, Memcpy3DCopiesABoxBetweenPitchedVolumes) {
  const int nx = 7, ny = 5, nz = 4;
  std::vector<int> host(nx * ny * nz);
  for (int i = 0; i < nx * ny * nz; ++i) host[i] = i;
  cudaPitchedPtr volume;
  const cudaExtent whole = make_cudaExtent(nx * sizeof(int), ny, nz);
  ASSERT_CUDA(cudaMalloc3D(&volume, whole));
  ASSERT_GE(volume.pitch, nx * sizeof(int));
  ASSERT_CUDA(cudaMemset3D(volume, 0xff, whole));  // every int -1

  cudaMemcpy3DParms in = {};
  in.srcPtr = make_cudaPitchedPtr(host.data(), nx * sizeof(int), nx, ny);
  in.srcPos = make_cudaPos(1 * sizeof(int), 2, 1);
  in.dstPtr = volume;
  in.dstPos = make_cudaPos(2 * sizeof(int), 1, 0);
  in.extent = make_cudaExtent(3 * sizeof(int), 2, 3);
  in.kind = cudaMemcpyHostToDevice;
  ASSERT_CUDA(cudaMemcpy3D(&in));

  std::vector<int> back(nx * ny * nz, 0);
  cudaMemcpy3DParms out = {};
  out.srcPtr = volume;
  out.dstPtr = make_cudaPitchedPtr(back.data(), nx * sizeof(int), nx, ny);
  out.extent = whole;
  out.kind = cudaMemcpyDeviceToHost;
  ASSERT_CUDA(cudaMemcpy3D(&out));
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x) {
        const bool in_box = x >= 2 && x < 5 && y >= 1 && y < 3 && z < 3;
        const int expected = in_box ? host[((z + 1) * ny + (y - 1 + 2)) * nx + (x - 2 + 1)] : -1;
        ASSERT_EQ(back[(z * ny + y) * nx + x], expected) << x << "," << y << "," << z;
      }
  ASSERT_CUDA(cudaFree(volume.ptr));
}

TEST(PitchedMemory, Memcpy3DAsyncRunsInOrderOnItsStream) {
  const int nx = 33, ny = 3, nz = 2;
  cudaStream_t s;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaPitchedPtr volume;
  ASSERT_CUDA(cudaMalloc3D(&volume, make_cudaExtent(nx * sizeof(int), ny, nz)));
  int* h = nullptr;
  ASSERT_CUDA(cudaMallocHost(&h, nx * ny * nz * sizeof(int)));
  for (int i = 0; i < nx * ny * nz; ++i) h[i] = -1;
  const int words = static_cast<int>(volume.pitch * ny * nz / sizeof(int));
  slow_fill<<<(words + 255) / 256, 256, 0, s>>>(static_cast<int*>(volume.ptr), words, 7, kSlow);
  cudaMemcpy3DParms p = {};
  p.srcPtr = volume;
  p.dstPtr = make_cudaPitchedPtr(h, nx * sizeof(int), nx, ny);
  p.extent = make_cudaExtent(nx * sizeof(int), ny, nz);
  p.kind = cudaMemcpyDeviceToHost;
  ASSERT_CUDA(cudaMemcpy3DAsync(&p, s));
  ASSERT_CUDA(cudaStreamSynchronize(s));
  for (int i = 0; i < nx * ny * nz; ++i) ASSERT_EQ(h[i], 7) << "at " << i;
  ASSERT_CUDA(cudaFreeHost(h));
  ASSERT_CUDA(cudaFree(volume.ptr));
  ASSERT_CUDA(cudaStreamDestroy(s));
}

TEST(PitchedMemory, Memset2DSetsOnlyTheWidthOfEachRow) {
  char* d = nullptr;
  size_t pitch = 0;
  ASSERT_CUDA(cudaMallocPitch(&d, &pitch, 10, 3));
  ASSERT_CUDA(cudaMemset(d, 0, pitch * 3));
  ASSERT_CUDA(cudaMemset2D(d, pitch, 0x5a, 6, 3));
  std::vector<char> back(pitch * 3);
  ASSERT_CUDA(cudaMemcpy(back.data(), d, pitch * 3, cudaMemcpyDeviceToHost));
  for (size_t r = 0; r < 3; ++r)
    for (size_t c = 0; c < pitch; ++c) ASSERT_EQ(back[r * pitch + c], c < 6 ? 0x5a : 0) << r << "," << c;
  ASSERT_CUDA(cudaFree(d));
}

TEST(PitchedMemory, Memcpy3DWithRowsBeyondAPitchOrASliceIsAnError) {
  std::vector<char> a(4096), b(4096);
  cudaMemcpy3DParms p = {};
  p.srcPtr = make_cudaPitchedPtr(a.data(), 16, 16, 4);
  p.dstPtr = make_cudaPitchedPtr(b.data(), 16, 16, 4);
  p.kind = cudaMemcpyHostToHost;
  p.extent = make_cudaExtent(12, 2, 2);
  p.srcPos = make_cudaPos(8, 0, 0);  // bytes 8 to 20 of a 16-byte row
  // Invalid value, where the 2-D copies say invalid pitch (CUDA 13 on an H200, 2026-11-27).
  EXPECT_EQ(cudaMemcpy3D(&p), cudaErrorInvalidValue);
  p.srcPos = make_cudaPos(0, 3, 0);  // rows 3 and 4 of 4-row slices, in a copy of two slices
  EXPECT_EQ(cudaMemcpy3D(&p), cudaErrorInvalidValue);
  cudaGetLastError();
}

#ifdef CUDASIM  // the simulator checks copies against the allocation's size
TEST(PitchedMemory, Memcpy3DPastTheEndOfAnAllocationIsAnError) {
  cudaPitchedPtr volume;
  ASSERT_CUDA(cudaMalloc3D(&volume, make_cudaExtent(64, 4, 2)));
  std::vector<char> h(64 * 4 * 3);
  cudaMemcpy3DParms p = {};
  p.srcPtr = make_cudaPitchedPtr(h.data(), 64, 64, 4);
  p.dstPtr = volume;
  p.extent = make_cudaExtent(64, 4, 3);  // three slices into a two-slice volume
  p.kind = cudaMemcpyHostToDevice;
  EXPECT_EQ(cudaMemcpy3D(&p), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemset3D(volume, 0, make_cudaExtent(64, 4, 3)), cudaErrorInvalidValue);
  cudaGetLastError();
  ASSERT_CUDA(cudaFree(volume.ptr));
}

#ifdef CUDASIM
// Copies with real CUDA arrays are test_textures.cu's; a pointer that is not one is refused (on
// a GPU it is undefined).
TEST(PitchedMemory, A3DCopyToWhatIsNotACudaArrayIsRefused) {
  cudaMemcpy3DParms p = {};
  int word = 0;
  p.srcPtr = make_cudaPitchedPtr(&word, 4, 1, 1);
  p.dstArray = reinterpret_cast<cudaArray_t>(&word);
  p.extent = make_cudaExtent(1, 1, 1);
  p.kind = cudaMemcpyHostToDevice;
  EXPECT_EQ(cudaMemcpy3D(&p), cudaErrorInvalidResourceHandle);
  cudaGetLastError();
}
#endif

TEST(PitchedMemory, Memcpy2DPastTheEndOfAnAllocationIsAnError) {
  int* d = nullptr;
  size_t pitch = 0;
  ASSERT_CUDA(cudaMallocPitch(&d, &pitch, 16 * sizeof(int), 4));
  std::vector<int> h(16 * 8);
  // Eight rows into a four-row allocation.
  EXPECT_EQ(cudaMemcpy2D(d, pitch, h.data(), 16 * sizeof(int), 16 * sizeof(int), 8, cudaMemcpyHostToDevice),
            cudaErrorInvalidValue);
  cudaGetLastError();
  ASSERT_CUDA(cudaFree(d));
}
#endif

}  // namespace
