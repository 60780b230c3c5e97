// The simulator's tests' device buffer: device memory freed at the end of its scope. Valid CUDA:
// the tests that use it run on a GPU too.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

namespace {

/// `count` elements of T in device memory, or a device copy of a host vector.
template <class T>
class DeviceBuffer {
 public:
  /// Zeroed: fresh cudaMalloc memory is not (the simulator fills it with a pattern, as a GPU
  /// leaves whatever was there).
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    allocate();
    EXPECT_EQ(cudaMemset(data_, 0, sizeof(T) * count_), cudaSuccess);
  }
  explicit DeviceBuffer(const std::vector<T>& host) : count_(host.size()) {
    allocate();
    upload(host);
  }
  ~DeviceBuffer() { cudaFree(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* get() const { return data_; }
  std::size_t size() const { return count_; }

  void upload(const std::vector<T>& host) {
    ASSERT_LE(host.size(), count_);
    EXPECT_EQ(cudaMemcpy(data_, host.data(), sizeof(T) * host.size(), cudaMemcpyHostToDevice), cudaSuccess);
  }
  /// Waits for the device (a failed launch fails the test here), then copies the buffer back.
  std::vector<T> download() const {
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<T> host(count_);
    EXPECT_EQ(cudaMemcpy(host.data(), data_, sizeof(T) * count_, cudaMemcpyDeviceToHost), cudaSuccess);
    return host;
  }

 private:
  void allocate() { EXPECT_EQ(cudaMalloc(&data_, sizeof(T) * count_), cudaSuccess); }

  T* data_ = nullptr;
  std::size_t count_;
};

}  // namespace
