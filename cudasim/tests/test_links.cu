// Several devices and the links between them and the host: peer copies reach the other
// device's memory, and on the simulator they are counted per pair and take the modelled time.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <vector>

namespace {

class Links : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(cudaGetDeviceCount(&devices_), cudaSuccess);
    if (devices_ < 2) GTEST_SKIP() << "needs two devices";
  }
  void TearDown() override { EXPECT_EQ(cudaSetDevice(0), cudaSuccess); }
  int devices_ = 0;
};

TEST_F(Links, APeerCopyMovesTheBytesToTheOtherDevice) {
  const int n = 1000;
  std::vector<float> host(n);
  for (int i = 0; i < n; ++i) host[i] = 0.5f * static_cast<float>(i);
  float *on0 = nullptr, *on1 = nullptr;
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&on0, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(on0, host.data(), n * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&on1, n * sizeof(float)), cudaSuccess);
  int can = 0;
  ASSERT_EQ(cudaDeviceCanAccessPeer(&can, 1, 0), cudaSuccess);
  EXPECT_EQ(can, 1);
#ifdef CUDASIM
  cudasim::reset_stats();
#endif
  ASSERT_EQ(cudaMemcpyPeer(on1, 1, on0, 0, n * sizeof(float)), cudaSuccess);
  std::vector<float> back(n, -1.0f);
  ASSERT_EQ(cudaMemcpy(back.data(), on1, n * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(back, host);
#ifdef CUDASIM
  const std::vector<cudasim::LinkTraffic> traffic = cudasim::link_stats();
  ASSERT_EQ(traffic.size(), 1u);
  EXPECT_EQ(traffic[0].source, 0);
  EXPECT_EQ(traffic[0].destination, 1);
  EXPECT_EQ(traffic[0].bytes, n * sizeof(float));
#endif
  EXPECT_EQ(cudaFree(on1), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  EXPECT_EQ(cudaFree(on0), cudaSuccess);
}

TEST_F(Links, ACopyBetweenTwoDevicesThroughPlainCudaMemcpyCrossesTheLinkToo) {
#ifdef CUDASIM
  float *on0 = nullptr, *on2 = nullptr;
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&on0, 4096), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(devices_ - 1), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&on2, 4096), cudaSuccess);
  cudasim::reset_stats();
  ASSERT_EQ(cudaMemcpy(on0, on2, 4096, cudaMemcpyDefault), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(on2, on2 + 512, 2048, cudaMemcpyDeviceToDevice), cudaSuccess);  // same device
  const std::vector<cudasim::LinkTraffic> traffic = cudasim::link_stats();
  ASSERT_EQ(traffic.size(), 1u);
  EXPECT_EQ(traffic[0].source, devices_ - 1);
  EXPECT_EQ(traffic[0].destination, 0);
  EXPECT_EQ(traffic[0].bytes, 4096u);
#else
  GTEST_SKIP() << "link counters come from the simulator";
#endif
}

TEST_F(Links, APeerCopyBetweenWrongDevicesIsRefused) {
  float* on0 = nullptr;
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&on0, 64), cudaSuccess);
  EXPECT_EQ(cudaMemcpyPeer(on0, devices_, on0, 0, 64), cudaErrorInvalidDevice);
  (void)cudaGetLastError();
  EXPECT_EQ(cudaSetDevice(devices_), cudaErrorInvalidDevice);
  (void)cudaGetLastError();
  EXPECT_EQ(cudaFree(on0), cudaSuccess);
}

#ifdef CUDASIM
/// Wall time of one copy, in seconds.
double seconds_for(void* dst, const void* src, size_t bytes) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault), cudaSuccess);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(HostLink, PinnedAndPageableCopiesTakeAtLeastTheModelledTime) {
  ASSERT_TRUE(cudasim::set_host_link("pcie4"));
  const cudasim::LinkModel pcie4 = cudasim::host_link();
  EXPECT_EQ(pcie4.name, "pcie4");
  EXPECT_GT(pcie4.pinned_bytes_per_second, pcie4.pageable_bytes_per_second);
  const size_t bytes = size_t{16} << 20;
  void* device = nullptr;
  void* pinned = nullptr;
  ASSERT_EQ(cudaMalloc(&device, bytes), cudaSuccess);
  ASSERT_EQ(cudaMallocHost(&pinned, bytes), cudaSuccess);
  std::vector<char> pageable(bytes, 1);
  std::memset(pinned, 1, bytes);
  // Lower bounds only: the model guarantees at least this much; a loaded machine adds more.
  cudasim::reset_stats();
  EXPECT_GE(seconds_for(device, pinned, bytes), bytes / pcie4.pinned_bytes_per_second);
  EXPECT_GE(seconds_for(device, pageable.data(), bytes), bytes / pcie4.pageable_bytes_per_second);
  EXPECT_EQ(cudasim::transfer_stats().pinned_host_bytes, bytes);
  EXPECT_EQ(cudasim::transfer_stats().pageable_host_bytes, bytes);
  EXPECT_FALSE(cudasim::set_host_link("pcie9"));
  EXPECT_TRUE(cudasim::set_peer_link("pcie5"));
  EXPECT_EQ(cudasim::peer_link().name, "pcie5");
  // A link of one's own figures (a test draws one); nonsense figures leave the link as it was.
  cudasim::LinkModel own{"drawn", 100e9, 0, 7e-6};
  EXPECT_TRUE(cudasim::set_peer_link(own));
  EXPECT_EQ(cudasim::peer_link().name, "drawn");
  EXPECT_EQ(cudasim::peer_link().pinned_bytes_per_second, 100e9);
  EXPECT_EQ(cudasim::peer_link().latency_seconds, 7e-6);
  EXPECT_FALSE(cudasim::set_peer_link(cudasim::LinkModel{"bad", 0, 0, 1e-6}));
  EXPECT_FALSE(cudasim::set_peer_link(cudasim::LinkModel{"bad", 1e9, 0, -1}));
  EXPECT_EQ(cudasim::peer_link().name, "drawn");
  EXPECT_TRUE(cudasim::set_peer_link("nvlink4"));
  EXPECT_EQ(cudaFreeHost(pinned), cudaSuccess);
  EXPECT_EQ(cudaFree(device), cudaSuccess);
}
#endif

}  // namespace
