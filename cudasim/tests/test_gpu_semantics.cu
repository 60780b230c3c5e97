// Where the simulator behaves like a GPU so that a bug a GPU would show is not hidden: fresh
// memory is not zero, each device has its own default stream, and a kernel may touch another
// device's memory only with peer access enabled. Mapped (zero-copy) host memory is reached by
// a kernel through the address cudaHostGetDevicePointer gives.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <future>
#include <string>
#include <vector>

namespace {

#ifdef CUDASIM
/// What CUDASIM_FRESH_MEMORY asks for (the suite runs once with the default, once with zero).
bool fresh_memory_is_zero() {
  const char* env = std::getenv("CUDASIM_FRESH_MEMORY");
  return env != nullptr && std::strcmp(env, "zero") == 0;
}

/// Checks that the first `bytes` of a fresh buffer (copied to `host`) hold the documented
/// pattern: every 32-bit word 0x7fffffff (a NaN as float, INT_MAX as int), or zero.
void expect_fresh(const std::vector<std::uint32_t>& words) {
  const std::uint32_t expected = fresh_memory_is_zero() ? 0u : 0x7fffffffu;
  for (std::size_t i = 0; i < words.size(); ++i) ASSERT_EQ(words[i], expected) << "word " << i;
}

TEST(FreshMemory, CudaMallocIsNotZeroButAPatternFloatsReadAsNaN) {
  const int n = 1000;
  float* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, n * sizeof(float)), cudaSuccess);
  std::vector<std::uint32_t> words(n);
  ASSERT_EQ(cudaMemcpy(words.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  expect_fresh(words);
  std::vector<float> floats(n);
  ASSERT_EQ(cudaMemcpy(floats.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  if (!fresh_memory_is_zero()) EXPECT_TRUE(std::isnan(floats[0]));
  std::vector<int> ints(n);
  ASSERT_EQ(cudaMemcpy(ints.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  if (!fresh_memory_is_zero()) EXPECT_EQ(ints[n - 1], 2147483647);
  std::vector<double> doubles(n / 2);
  ASSERT_EQ(cudaMemcpy(doubles.data(), d, n / 2 * sizeof(double), cudaMemcpyDeviceToHost), cudaSuccess);
  if (!fresh_memory_is_zero()) EXPECT_TRUE(std::isnan(doubles[3]));
  ASSERT_EQ(cudaFree(d), cudaSuccess);
}

TEST(FreshMemory, AReusedAllocationIsFilledAgain) {
  for (int round = 0; round < 3; ++round) {
    int* d = nullptr;
    ASSERT_EQ(cudaMalloc(&d, 4096 * sizeof(int)), cudaSuccess);
    std::vector<std::uint32_t> words(4096);
    ASSERT_EQ(cudaMemcpy(words.data(), d, words.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    expect_fresh(words);
    ASSERT_EQ(cudaMemset(d, 0, 4096 * sizeof(int)), cudaSuccess);
    ASSERT_EQ(cudaFree(d), cudaSuccess);
  }
}

__global__ void read_first(const unsigned* in, unsigned* out) { *out = *in; }

TEST(FreshMemory, ManagedMemoryIsNotZeroEither) {
  unsigned* managed = nullptr;
  unsigned* out = nullptr;
  ASSERT_EQ(cudaMallocManaged(&managed, 64 * sizeof(unsigned)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&out, sizeof(unsigned)), cudaSuccess);
  read_first<<<1, 1>>>(managed, out);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<std::uint32_t> words(1);
  ASSERT_EQ(cudaMemcpy(words.data(), out, 4, cudaMemcpyDeviceToHost), cudaSuccess);
  expect_fresh(words);
  ASSERT_EQ(cudaFree(managed), cudaSuccess);
  ASSERT_EQ(cudaFree(out), cudaSuccess);
}

TEST(ManagedMemory, AttachingToAStreamIsCheckedAndKeepsTheDataReachable) {
  // NVIDIA's UnifiedMemoryStreams attaches each task's buffers to its stream, or to the host.
  unsigned* managed = nullptr;
  unsigned* out = nullptr;
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaMallocManaged(&managed, 64 * sizeof(unsigned)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&out, sizeof(unsigned)), cudaSuccess);
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  ASSERT_EQ(cudaStreamAttachMemAsync(stream, managed, 0, cudaMemAttachHost), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  managed[0] = 42;  // the host may use memory attached to it
  ASSERT_EQ(cudaStreamAttachMemAsync(stream, managed), cudaSuccess);  // cudaMemAttachSingle
  read_first<<<1, 1, 0, stream>>>(managed, out);
  unsigned got = 0;
  ASSERT_EQ(cudaMemcpyAsync(&got, out, sizeof got, cudaMemcpyDeviceToHost, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(got, 42u);
  // Prefetches and advice (CUDA 13's forms, NVIDIA's UnifiedMemoryPerf) are accepted for
  // managed memory and a real place, and change nothing the program can see.
  const cudaMemLocation device{cudaMemLocationTypeDevice, 0}, host{cudaMemLocationTypeHost, 0};
  EXPECT_EQ(cudaMemAdvise(managed, 64 * sizeof(unsigned), cudaMemAdviseSetPreferredLocation, device), cudaSuccess);
  EXPECT_EQ(cudaMemAdvise(managed, 64 * sizeof(unsigned), cudaMemAdviseSetReadMostly, device), cudaSuccess);
  EXPECT_EQ(cudaMemPrefetchAsync(managed, 64 * sizeof(unsigned), device, 0, stream), cudaSuccess);
  EXPECT_EQ(cudaMemPrefetchAsync(managed, 64 * sizeof(unsigned), host, 0, stream), cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(managed[0], 42u);
  EXPECT_EQ(cudaMemPrefetchAsync(managed, 65 * sizeof(unsigned), device, 0, stream), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemPrefetchAsync(out, sizeof(unsigned), device, 0, stream), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemPrefetchAsync(managed, 4, cudaMemLocation{cudaMemLocationTypeDevice, 99}, 0, stream),
            cudaErrorInvalidValue);
#ifdef CUDASIM
  // The CUDA 12 forms, with a device number (nvcc 13 refuses them; the simulator keeps them for
  // programs written for CUDA 12, such as OLCF's unified-memory exercise).
  EXPECT_EQ(cudaMemAdvise(managed, 64 * sizeof(unsigned), cudaMemAdviseSetPreferredLocation, 0), cudaSuccess);
  EXPECT_EQ(cudaMemPrefetchAsync(managed, 64 * sizeof(unsigned), 0, stream), cudaSuccess);
  EXPECT_EQ(cudaMemPrefetchAsync(managed, 64 * sizeof(unsigned), cudaCpuDeviceId), cudaSuccess);
  EXPECT_EQ(cudaMemPrefetchAsync(managed, 64 * sizeof(unsigned), 99, stream), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemPrefetchAsync(out, sizeof(unsigned), 0, stream), cudaErrorInvalidValue);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(managed[0], 42u);
#endif
  // A length other than 0 or the whole allocation, bad flags, memory that is not managed.
  EXPECT_EQ(cudaStreamAttachMemAsync(stream, managed, 8, cudaMemAttachSingle), cudaErrorInvalidValue);
  EXPECT_EQ(cudaStreamAttachMemAsync(stream, managed, 0, 0x10), cudaErrorInvalidValue);
  EXPECT_EQ(cudaStreamAttachMemAsync(stream, out, 0, cudaMemAttachSingle), cudaErrorInvalidValue);
  cudaGetLastError();
  ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
  ASSERT_EQ(cudaFree(managed), cudaSuccess);
  ASSERT_EQ(cudaFree(out), cudaSuccess);
}

TEST(FreshMemory, PinnedHostMemoryIsNotZeroEither) {
  const std::size_t n = 3 * 4096;  // more than a page, so that the pattern covers every page
  std::uint32_t* pinned = nullptr;
  ASSERT_EQ(cudaMallocHost(&pinned, n * sizeof(std::uint32_t)), cudaSuccess);
  expect_fresh(std::vector<std::uint32_t>(pinned, pinned + n));
  ASSERT_EQ(cudaFreeHost(pinned), cudaSuccess);
}
#endif  // CUDASIM

/// Several devices: each has its own default stream, and device-wide calls act on one device.
class Devices : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(cudaGetDeviceCount(&devices_), cudaSuccess);
    if (devices_ < 2) GTEST_SKIP() << "needs two devices";
  }
  void TearDown() override { EXPECT_EQ(cudaSetDevice(0), cudaSuccess); }
  int devices_ = 0;
};

/// Spins until the host sets *flag (page-locked, mapped memory the kernel reads directly).
__global__ void wait_for_host(const volatile int* flag) {
  while (*flag == 0) {
  }
}

/// Keeps device 0's default stream busy with a kernel until the host releases it, runs `on_1`
/// on device 1 in another host thread meanwhile, and returns whether it finished before the
/// release (within seconds) instead of waiting for device 0.
template <class Work>
bool finishes_while_device_0_is_busy(Work on_1) {
  int* flag = nullptr;
  if (cudaHostAlloc(&flag, sizeof(int), cudaHostAllocMapped) != cudaSuccess) return false;
  *flag = 0;
  cudaSetDevice(0);
  wait_for_host<<<1, 1>>>(flag);
  auto result = std::async(std::launch::async, [&] {
    cudaSetDevice(1);
    return on_1();
  });
  const bool finished = result.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  *flag = 1;  // release device 0 whatever happened
  cudaSetDevice(0);
  const bool device_0_ok = cudaDeviceSynchronize() == cudaSuccess;
  const bool on_1_ok = result.get();
  cudaFreeHost(flag);
  return finished && device_0_ok && on_1_ok;
}

TEST_F(Devices, CudaDeviceSynchronizeWaitsForTheCurrentDeviceOnly) {
  EXPECT_TRUE(finishes_while_device_0_is_busy([] { return cudaDeviceSynchronize() == cudaSuccess; }));
}

TEST_F(Devices, EachDeviceHasItsOwnDefaultStream) {
  EXPECT_TRUE(finishes_while_device_0_is_busy([] {
    int* d = nullptr;
    int value = 42, back = 0;
    bool ok = cudaMalloc(&d, sizeof(int)) == cudaSuccess;
    // cudaMemcpy and cudaStreamSynchronize(0) use device 1's legacy default stream.
    ok = ok && cudaMemcpy(d, &value, sizeof(int), cudaMemcpyHostToDevice) == cudaSuccess;
    ok = ok && cudaStreamSynchronize(0) == cudaSuccess;
    ok = ok && cudaMemcpy(&back, d, sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess;
    ok = ok && cudaFree(d) == cudaSuccess;
    return ok && back == 42;
  }));
}

TEST_F(Devices, CudaDeviceResetFreesTheCurrentDevicesMemoryOnly) {
  int* on0 = nullptr;
  int* on1 = nullptr;
  const int value = 7;
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&on0, sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(on0, &value, sizeof(int), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&on1, sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaDeviceReset(), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  int back = 0;
  ASSERT_EQ(cudaMemcpy(&back, on0, sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(back, 7);
#ifdef CUDASIM
  // Device 1's buffer is gone: copying from it is refused.
  EXPECT_EQ(cudaMemcpy(&back, on1, sizeof(int), cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
  (void)cudaGetLastError();
#endif
  ASSERT_EQ(cudaFree(on0), cudaSuccess);
}

TEST_F(Devices, PointerAttributesNameTheDeviceAnAllocationBelongsTo) {
  int *on0 = nullptr, *on1 = nullptr;
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&on1, sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&on0, sizeof(int)), cudaSuccess);
  cudaPointerAttributes attributes{};
  ASSERT_EQ(cudaPointerGetAttributes(&attributes, on1), cudaSuccess);  // asked from device 0
  EXPECT_EQ(attributes.type, cudaMemoryTypeDevice);
  EXPECT_EQ(attributes.device, 1);
  ASSERT_EQ(cudaPointerGetAttributes(&attributes, on0), cudaSuccess);
  EXPECT_EQ(attributes.device, 0);
  ASSERT_EQ(cudaFree(on0), cudaSuccess);
  ASSERT_EQ(cudaFree(on1), cudaSuccess);
}

__global__ void store_value(int* out, int value) { *out = value; }

TEST_F(Devices, APeerCopyWaitsForTheSourceDevicesEarlierWork) {
  int* flag = nullptr;
  int *on0 = nullptr, *on1 = nullptr;
  ASSERT_EQ(cudaHostAlloc(&flag, sizeof(int), cudaHostAllocMapped), cudaSuccess);
  *flag = 0;
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&on0, sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&on1, sizeof(int)), cudaSuccess);
  wait_for_host<<<1, 1>>>(flag);  // device 1's default stream: held until released
  store_value<<<1, 1>>>(on1, 42);
  // From device 0, the peer copy must come after device 1's kernels, so it waits.
  auto copy = std::async(std::launch::async, [&] {
    cudaSetDevice(0);
    return cudaMemcpyPeer(on0, 0, on1, 1, sizeof(int));
  });
  const bool waited = copy.wait_for(std::chrono::milliseconds(300)) == std::future_status::timeout;
  *flag = 1;
  EXPECT_EQ(copy.get(), cudaSuccess);
  EXPECT_TRUE(waited) << "the copy did not wait for device 1's kernels";
  int back = 0;
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(&back, on0, sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(back, 42);
  ASSERT_EQ(cudaFree(on0), cudaSuccess);
  ASSERT_EQ(cudaFree(on1), cudaSuccess);
  ASSERT_EQ(cudaFreeHost(flag), cudaSuccess);
}

/// Adds every element of `in` to `out` (one thread per element).
__global__ void add_into(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] += in[i];
}

TEST_F(Devices, PeerAccessCanBeEnabledOnceAndDisabledOnce) {
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(cudaDeviceEnablePeerAccess(1, 0), cudaSuccess);
  EXPECT_EQ(cudaDeviceEnablePeerAccess(1, 0), cudaErrorPeerAccessAlreadyEnabled);
  EXPECT_EQ(cudaGetLastError(), cudaErrorPeerAccessAlreadyEnabled);
  ASSERT_EQ(cudaDeviceDisablePeerAccess(1), cudaSuccess);
  EXPECT_EQ(cudaDeviceDisablePeerAccess(1), cudaErrorPeerAccessNotEnabled);
  EXPECT_EQ(cudaGetLastError(), cudaErrorPeerAccessNotEnabled);
}

TEST_F(Devices, AKernelReadsAnotherDevicesMemoryWithPeerAccessEnabled) {
  const int n = 1000;
  std::vector<float> ones(n, 1.0f), twos(n, 2.0f), back(n);
  float *on0 = nullptr, *on1 = nullptr;
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&on1, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(on1, twos.data(), n * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&on0, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(on0, ones.data(), n * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaDeviceEnablePeerAccess(1, 0), cudaSuccess);
#ifdef CUDASIM
  cudasim::reset_stats();
#endif
  add_into<<<(n + 127) / 128, 128>>>(on1, on0, n);  // reads device 1's buffer from device 0
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(back.data(), on0, n * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(back[0], 3.0f);
  EXPECT_EQ(back[n - 1], 3.0f);
#ifdef CUDASIM
  // The reads crossed the link from device 1 to device 0: n floats, counted like a peer copy.
  std::uint64_t from_1_to_0 = 0, other = 0;
  for (const cudasim::LinkTraffic& t : cudasim::link_stats())
    (t.source == 1 && t.destination == 0 ? from_1_to_0 : other) += t.bytes;
  EXPECT_EQ(from_1_to_0, n * sizeof(float));
  EXPECT_EQ(other, 0u);
#endif
  ASSERT_EQ(cudaDeviceDisablePeerAccess(1), cudaSuccess);
  ASSERT_EQ(cudaFree(on0), cudaSuccess);
  ASSERT_EQ(cudaFree(on1), cudaSuccess);
}

#ifdef CUDASIM
TEST_F(Devices, AKernelTouchingAnotherDevicesMemoryWithoutPeerAccessFails) {
  if (!cudasim::stats_available()) GTEST_SKIP() << "needs the instrumentation";
  const int n = 256;
  float *on0 = nullptr, *on1 = nullptr;
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);  // device 0 has no peer access to device 1 here
  ASSERT_EQ(cudaMalloc(&on1, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemset(on1, 0, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&on0, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemset(on0, 0, n * sizeof(float)), cudaSuccess);
  testing::internal::CaptureStderr();
  add_into<<<1, 128>>>(on1, on0, n);  // one block, so that thread (0,0,0) faults first
  const cudaError_t synced = cudaDeviceSynchronize();
  const std::string report = testing::internal::GetCapturedStderr();
  EXPECT_EQ(synced, cudaErrorIllegalAddress) << report;
  for (const char* needle : {"add_into", "block (0,0,0), thread (0,0,0)", "memory of device 1",
                             "no peer access", "cudaDeviceEnablePeerAccess(1, 0)"})
    EXPECT_NE(report.find(needle), std::string::npos) << "expected \"" << needle << "\" in:\n" << report;
  EXPECT_EQ(cudaDeviceReset(), cudaSuccess);  // clears the sticky error (and device 0's memory)
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  EXPECT_EQ(cudaFree(on1), cudaSuccess);
}
#endif  // CUDASIM

/// `access` for `device` in `pool` (cudaMemPoolGetAccess).
cudaMemAccessFlags pool_access_of(cudaMemPool_t pool, int device) {
  cudaMemLocation where{cudaMemLocationTypeDevice, device};
  cudaMemAccessFlags flags = cudaMemAccessFlagsProtRead;  // neither answer
  EXPECT_EQ(cudaMemPoolGetAccess(&flags, pool, &where), cudaSuccess);
  return flags;
}

cudaError_t set_pool_access(cudaMemPool_t pool, int device, cudaMemAccessFlags flags) {
  cudaMemAccessDesc grant{};
  grant.location = {cudaMemLocationTypeDevice, device};
  grant.flags = flags;
  return cudaMemPoolSetAccess(pool, &grant, 1);
}

TEST_F(Devices, AKernelReadsAnotherDevicesPoolMemoryOnceThePoolGrantsAccess) {
  const int n = 1000;
  std::vector<float> ones(n, 1.0f), twos(n, 2.0f), back(n);
  cudaMemPool_t pool1 = nullptr;
  ASSERT_EQ(cudaDeviceGetDefaultMemPool(&pool1, 1), cudaSuccess);
  EXPECT_EQ(pool_access_of(pool1, 1), cudaMemAccessFlagsProtReadWrite);  // its own device
  EXPECT_EQ(pool_access_of(pool1, 0), cudaMemAccessFlagsProtNone);
  ASSERT_EQ(set_pool_access(pool1, 0, cudaMemAccessFlagsProtReadWrite), cudaSuccess);
  EXPECT_EQ(pool_access_of(pool1, 0), cudaMemAccessFlagsProtReadWrite);

  float *on0 = nullptr, *on1 = nullptr;
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  ASSERT_EQ(cudaMallocAsync(&on1, n * sizeof(float), nullptr), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(on1, twos.data(), n * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);  // no cudaDeviceEnablePeerAccess: the pool's grant is enough
  ASSERT_EQ(cudaMalloc(&on0, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(on0, ones.data(), n * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  add_into<<<(n + 127) / 128, 128>>>(on1, on0, n);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(back.data(), on0, n * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(back[0], 3.0f);
  EXPECT_EQ(back[n - 1], 3.0f);

  ASSERT_EQ(set_pool_access(pool1, 0, cudaMemAccessFlagsProtNone), cudaSuccess);  // taken back
  EXPECT_EQ(pool_access_of(pool1, 0), cudaMemAccessFlagsProtNone);
  ASSERT_EQ(cudaFree(on0), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  ASSERT_EQ(cudaFreeAsync(on1, nullptr), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

#ifdef CUDASIM
TEST_F(Devices, APoolRefusesAccessItWasNotAskedFor) {
  cudaMemPool_t pool1 = nullptr;
  ASSERT_EQ(cudaDeviceGetDefaultMemPool(&pool1, 1), cudaSuccess);
  EXPECT_EQ(set_pool_access(pool1, 0, cudaMemAccessFlagsProtRead), cudaErrorInvalidValue);  // not offered
  EXPECT_EQ(set_pool_access(pool1, 1, cudaMemAccessFlagsProtNone), cudaErrorInvalidDevice);  // its own device
  EXPECT_EQ(set_pool_access(pool1, 7, cudaMemAccessFlagsProtReadWrite), cudaErrorInvalidDevice);
  EXPECT_EQ(pool_access_of(pool1, 0), cudaMemAccessFlagsProtNone);
  cudaGetLastError();
}

TEST_F(Devices, PeerAccessDoesNotReachAnotherDevicesPoolMemory) {
  if (!cudasim::stats_available()) GTEST_SKIP() << "needs the instrumentation";
  const int n = 256;
  float *on0 = nullptr, *on1 = nullptr;
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  ASSERT_EQ(cudaMallocAsync(&on1, n * sizeof(float), nullptr), cudaSuccess);
  ASSERT_EQ(cudaMemset(on1, 0, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&on0, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemset(on0, 0, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaDeviceEnablePeerAccess(1, 0), cudaSuccess);  // what reaches cudaMalloc's memory only
  testing::internal::CaptureStderr();
  add_into<<<1, 128>>>(on1, on0, n);
  const cudaError_t synced = cudaDeviceSynchronize();
  const std::string report = testing::internal::GetCapturedStderr();
  EXPECT_EQ(synced, cudaErrorIllegalAddress) << report;
  for (const char* needle : {"add_into", "memory of device 1", "memory pool", "cudaMemPoolSetAccess"})
    EXPECT_NE(report.find(needle), std::string::npos) << "expected \"" << needle << "\" in:\n" << report;
  EXPECT_EQ(cudaDeviceReset(), cudaSuccess);  // clears the sticky error (and device 0's memory)
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  EXPECT_EQ(cudaFreeAsync(on1, nullptr), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}
#endif  // CUDASIM

__global__ void double_each(int* values, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) values[i] *= 2;
}

TEST(MappedHostMemory, AKernelWritesRegisteredHostMemoryThroughItsDevicePointer) {
  ASSERT_EQ(cudaSetDeviceFlags(cudaDeviceMapHost), cudaSuccess);
  unsigned flags = 0;
  ASSERT_EQ(cudaGetDeviceFlags(&flags), cudaSuccess);
  EXPECT_NE(flags & cudaDeviceMapHost, 0u);
  const int n = 100;
  // Page-aligned, as cudaHostRegister wants it on older systems.
  int* host = static_cast<int*>(std::aligned_alloc(4096, 4096));
  ASSERT_NE(host, nullptr);
  for (int i = 0; i < n; ++i) host[i] = i;
  ASSERT_EQ(cudaHostRegister(host, 4096, cudaHostRegisterMapped), cudaSuccess);
  int* on_device = nullptr;
  ASSERT_EQ(cudaHostGetDevicePointer(&on_device, host, 0), cudaSuccess);
  double_each<<<1, 128>>>(on_device, n);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (int i = 0; i < n; ++i) ASSERT_EQ(host[i], 2 * i) << "at " << i;
  ASSERT_EQ(cudaHostUnregister(host), cudaSuccess);
  std::free(host);
}

#ifdef CUDASIM  // a GPU's answer for pageable memory is not documented
TEST(MappedHostMemory, PageableMemoryHasNoDevicePointer) {
  int pageable = 0;
  int* on_device = nullptr;
  EXPECT_EQ(cudaHostGetDevicePointer(&on_device, &pageable, 0), cudaErrorInvalidValue);
  EXPECT_EQ(cudaSetDeviceFlags(0x100), cudaErrorInvalidValue);
  (void)cudaGetLastError();
}
#endif

}  // namespace
