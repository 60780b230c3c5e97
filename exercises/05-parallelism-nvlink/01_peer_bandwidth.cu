// Exercise 05/01: peer_bandwidth, device-to-device copies between every pair of ranks and the
// bandwidth of each link, printed as a topology matrix.
//
// What it teaches: GPUs in one server talk over links of very different speed. Two H100/H200
// joined by NVLink 4 move ~450 GB/s each way (~396 GB/s measured per pair on H200s); through
// PCIe gen5 x16 a copy gets ~55 GB/s, gen4 x16 ~25 GB/s; a copy inside one GPU's HBM runs at
// over 1.5 TB/s (it reads and writes HBM, 4.3 TB/s of traffic). The matrix makes the
// machine's topology visible: which pairs are NVLinked (all of them behind an NVSwitch),
// which go through the CPU.
//
// Run its tests:   ./course test 05/peer_bandwidth
//
// Napkin math: 64 MiB over NVLink 4 at 450 GB/s takes 0.15 ms, over PCIe gen4 x16 at
// 32 GB/s 2.1 ms. Copies smaller than ~1 MB measure the latency (~5-10 µs per copy), not
// the bandwidth: time many copies of a large buffer.

#include "cuda_check.hpp"
#include "peer_bandwidth.hpp"

double time_peer_copy(course::RankGroup& group, int from, int to, const void* src, void* dst,
                      std::size_t bytes, int repeats) {
  if (repeats < 1) throw std::invalid_argument("time_peer_copy: repeats must be >= 1");
  course::DeviceGuard guard(group.device(from));  // events belong to the sender's device
  cudaEvent_t start = nullptr, stop = nullptr;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  float ms = 0.0f;
  // BEGIN YOUR CODE
  // TODO(student): time `repeats` copies of `bytes` from rank `from` to rank `to` with `start` and
  //                `stop` on rank `from`'s stream, after the work queued on `to`; the elapsed time
  //                into `ms` (about 8 lines)
  (void)to, (void)src, (void)dst, (void)bytes;
  // END YOUR CODE
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  return 1e-3 * static_cast<double>(ms) / repeats;
}

BandwidthMatrix measure_peer_bandwidth(course::RankGroup& group, std::size_t bytes, int repeats) {
  const int n = group.size();
  BandwidthMatrix matrix;
  matrix.ranks = n;
  matrix.gb_per_s.assign(static_cast<std::size_t>(n) * n, 0.0);
  course::SymmetricBuffer<char> src(group, bytes), dst(group, bytes);
  // BEGIN YOUR CODE
  // TODO(student): for every ordered pair (from, to), diagonal included, time copies from
  //                src.on(from) to dst.on(to) and store bytes / seconds / 1e9 in
  //                matrix.gb_per_s[from * n + to] (about 6 lines)
  (void)repeats;
  // END YOUR CODE
  return matrix;
}
