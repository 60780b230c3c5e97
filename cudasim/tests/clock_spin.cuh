// A delay inside a kernel for the stream-ordering tests: a late write that a missing
// dependency would miss. clock64() counts nanoseconds on the simulator, cycles on a GPU.
#pragma once

namespace {

// About 20 ms on the simulator, ~10 ms on a GPU.
constexpr long long kSlow = 20 * 1000 * 1000;

__device__ void spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

}  // namespace
