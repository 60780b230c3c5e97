// Exercise 05/02: ring_allreduce, the sum of a vector over all ranks by reduce-scatter and
// all-gather around a ring, for any rank count and any length.
//
// What it teaches: the collective behind data-parallel training. Every rank sends
// 2(n-1)/n·S bytes whatever n is, every link works all the time, and so the time is about
// 2(n-1)/n·S / link bandwidth: nccl-tests call S/t the algorithm bandwidth and
// algbw·2(n-1)/n the bus bandwidth, the number to compare with the link (≈ 400 GB/s per
// direction for NVLink 4 on H100/H200, ≈ 25 GB/s for PCIe gen4 x16).
//
// Run its tests:   ./course test 05/ring_allreduce
//
// Napkin math: the gradients of a 1.5 B-parameter model in fp32 are 6 GB; on 8 GPUs the
// ring sends 2·7/8·6 = 10.5 GB out of each GPU: ~26 ms over NVLink 4, ~0.4 s over PCIe
// gen4. The add kernel reads 2 and writes 1 float per element received: 12 bytes per 4
// bytes of link traffic, far below HBM's speed, so the links set the pace.

#include "cuda_check.hpp"
#include "ring_allreduce.hpp"

#include <stdexcept>

namespace {

constexpr int kThreads = 256;

/// dst[i] += src[i] for i < n. 12 bytes of HBM traffic per element.
__global__ void add_into_kernel(float* dst, const float* src, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    dst[i] += src[i];
}

/// Queues dst += src (n floats, both on rank r's device) on rank r's stream.
[[maybe_unused]] void add_into(course::RankGroup& group, int r, float* dst, const float* src, std::size_t n) {
  if (n == 0) return;
  course::DeviceGuard guard(group.device(r));
  const std::size_t blocks = std::min<std::size_t>((n + kThreads - 1) / kThreads, 1024);
  add_into_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, group.stream(r)>>>(dst, src, n);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void ring_allreduce(course::RankGroup& group, course::SymmetricBuffer<float>& data,
                    std::size_t count, course::SymmetricBuffer<float>& scratch) {
  const int n = group.size();
  if (n == 1 || count == 0) return;
  if (data.size() < count || scratch.size() < ring_allreduce_scratch_floats(count, n))
    throw std::invalid_argument("ring_allreduce: data or scratch too small");
  // chunk c of the vector is [course::part_of(count, n, c).begin, .end)
  auto chunk = [&](int c) { return course::part_of(count, n, ((c % n) + n) % n); };
  // BEGIN YOUR CODE
  // TODO(student): the ring: n - 1 reduce-scatter steps, then n - 1 all-gather steps; in each step
  //                every rank sends one chunk to rank (r + 1) % n only, through scratch and
  //                add_into (about 16 lines)
  (void)chunk;
  // END YOUR CODE
}

AllReduceBandwidth allreduce_bandwidth(double bytes, int ranks, double seconds) {
  // BEGIN YOUR CODE
  // TODO(student): algbw and busbw as nccl-tests define them (see the header) (about 3 lines)
  (void)bytes, (void)ranks, (void)seconds;
  return AllReduceBandwidth{0.0, 0.0};
  // END YOUR CODE
}
