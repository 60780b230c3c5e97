// device_query: what is this GPU? Prints the figures lesson 00 talks about and what they mean.
//
// Run:   ./course run lessons/00-gpu-vs-cpu/device_query.cu
//
// On the simulator the "device" is a model of a data-centre GPU that the CPU imitates; its
// name says so. The figures are the model's, not your CPU's.

#include <cuda_runtime.h>

#include <cstdio>
#include <exception>

#include "cuda_check.hpp"

namespace {

/// One attribute of device 0, or 0 when the backend does not report it.
int attribute(cudaDeviceAttr attr, int device) {
  int value = 0;
  if (cudaDeviceGetAttribute(&value, attr, device) != cudaSuccess) {
    cudaGetLastError();  // not fatal for a report: clear it and print 0
    return 0;
  }
  return value;
}

double gib(double bytes) { return bytes / (1024.0 * 1024.0 * 1024.0); }
double kib(double bytes) { return bytes / 1024.0; }

}  // namespace

int run() {
  int device_count = 0;
  CUDA_CHECK(cudaGetDeviceCount(&device_count));
  std::printf("CUDA devices: %d\n", device_count);

  for (int device = 0; device < device_count; ++device) {
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    // CUDA 13 removed cudaDeviceProp::clockRate (and memoryClockRate); attributes remain.
    const int clock_khz = attribute(cudaDevAttrClockRate, device);
    const int memory_clock_khz = attribute(cudaDevAttrMemoryClockRate, device);
    const int bus_width_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, device);
    const int cores_per_sm_guess = prop.major >= 8 ? 128 : 64;  // FP32 lanes per SM (Ampere+)

    std::printf("\nDevice %d: %s (compute capability %d.%d)\n", device, prop.name, prop.major,
                prop.minor);
    std::printf("  streaming multiprocessors (SMs) : %d\n", prop.multiProcessorCount);
    std::printf("  max threads per block           : %d\n", prop.maxThreadsPerBlock);
    std::printf("  max resident threads per SM     : %d\n", prop.maxThreadsPerMultiProcessor);
    std::printf("  warp size                       : %d\n", prop.warpSize);
    std::printf("  SM clock                        : %.2f GHz\n", clock_khz / 1e6);
    std::printf("  global memory                   : %.1f GiB\n", gib(double(prop.totalGlobalMem)));
    std::printf("  shared memory per block         : %.0f KiB\n", kib(double(prop.sharedMemPerBlock)));
    std::printf("  L2 cache                        : %.0f MiB\n", prop.l2CacheSize / (1024.0 * 1024.0));
    if (memory_clock_khz > 0 && bus_width_bits > 0) {
      // Double data rate: two transfers per clock, bus_width_bits / 8 bytes each.
      const double peak_bytes_per_s = 2.0 * memory_clock_khz * 1e3 * bus_width_bits / 8.0;
      std::printf("  peak memory bandwidth (theory)  : %.0f GB/s (%d-bit bus at %.2f GHz)\n",
                  peak_bytes_per_s / 1e9, bus_width_bits, memory_clock_khz / 1e6);
    }

    // What the figures mean, with this device's own numbers.
    const long long resident = 1LL * prop.multiProcessorCount * prop.maxThreadsPerMultiProcessor;
    std::printf("\n  What this means:\n");
    std::printf("  - The GPU is %d SMs. Each runs threads in warps of %d that execute one\n"
                "    instruction together (SIMT); up to %d threads live on one SM at once, so\n"
                "    %lld threads can be resident on the whole chip, and with ~%d FP32 lanes\n"
                "    per SM about %d additions can start in each clock.\n",
                prop.multiProcessorCount, prop.warpSize, prop.maxThreadsPerMultiProcessor,
                resident, cores_per_sm_guess, prop.multiProcessorCount * cores_per_sm_guess);
    std::printf("  - A block (at most %d threads) runs on one SM and shares its %.0f KiB of\n"
                "    shared memory; blocks of one launch are independent of each other.\n",
                prop.maxThreadsPerBlock, kib(double(prop.sharedMemPerBlock)));
    std::printf("  - The clock (%.2f GHz) is lower than a desktop CPU's: the GPU wins by width,\n"
                "    not by speed per thread.\n",
                clock_khz / 1e6);
    std::printf("  - The %.0f GiB of global memory sit on the card, next to the chip. Data in\n"
                "    host RAM must cross PCIe first (~55-64 GB/s on gen5 x16), far slower than\n"
                "    the card's own memory.\n",
                gib(double(prop.totalGlobalMem)));
  }
#ifdef CUDASIM
  std::printf("\n(simulator: these figures describe the modelled GPU; kernels run on your CPU)\n");
#endif
  return 0;
}

int main() {
  try {
    return run();
  } catch (const std::exception& error) {  // CUDA_CHECK throws course::CudaError
    std::fprintf(stderr, "device_query: %s\n", error.what());
    return 1;
  }
}
