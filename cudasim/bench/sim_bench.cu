// sim_bench: what the simulator costs, measured on this machine. Not a test: it prints
// figures; docs/benchmarks.md records them with the date and the command.
//
//   cmake --build build/sim --target cudasim_bench && build/sim/cudasim/bench/cudasim_bench
//
// It measures
//   - one fiber context switch (two fibers ping-ponging, the scheduler not involved);
//   - one __syncthreads of a 1024-thread block, and per thread at that barrier, with the kernel
//     fissioned (loops over the threads, the default) and as one coroutine per thread;
//   - one thread of a kernel without barriers, against the same loop in plain C++;
//   - a 4M-element vector add and a 16x16-tiled 256^3 matmul (two barriers per tile step)
//     against plain single-threaded C++ loops doing the same arithmetic; the matmul also as one
//     coroutine per thread, and written by hand as the loops over threads that fission makes.
// Each figure is the median of several repeats, after three warm-up runs: on the virtual machines
// this was measured on, the first passes over freshly allocated memory are up to twice as slow
// for plain C++ as for the simulator (the host backs the pages lazily), which is not what is
// being measured.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <thread>
#include <vector>

#include "../src/fiber.hpp"

namespace {

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// Median wall time of `body` in milliseconds over `repeats` runs after three warm-up runs.
double median_ms(int repeats, const std::function<void()>& body) {
  for (int i = 0; i < 3; ++i) body();
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    const double start = now_ms();
    body();
    times.push_back(now_ms() - start);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// ---- raw context switch ----------------------------------------------------------------------
using cudasim::detail::FiberContext;
using cudasim::detail::FiberStack;

FiberContext main_context, ping_context;
long switches_left = 0;

void ping(void*) {
  for (;;) {
    --switches_left;
    cudasim::detail::switch_context(ping_context, main_context);
  }
}

double switch_ns() {
  FiberStack stack(64 * 1024);
  cudasim::detail::make_context(ping_context, stack, &ping, nullptr);
  const long round_trips = 2'000'000;
  const double ms = median_ms(5, [&] {
    switches_left = round_trips;
    while (switches_left > 0) cudasim::detail::switch_context(main_context, ping_context);
  });
  return ms * 1e6 / (2.0 * round_trips);  // two switches per round trip
}

// ---- kernels ------------------------------------------------------------------------------------
__global__ void barrier_loop(int iterations, int* sink) {
  int local = 0;
  for (int i = 0; i < iterations; ++i) {
    local += i;
    __syncthreads();
  }
  if (threadIdx.x == 0) *sink = local;
}

__global__ void write_index(int* out) { out[blockIdx.x * blockDim.x + threadIdx.x] = threadIdx.x; }

__global__ void vector_add(const float* a, const float* b, float* c, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

constexpr int kTile = 16;
__global__ void tiled_matmul(const float* A, const float* B, float* C, int n) {
  __shared__ float a_tile[kTile][kTile];
  __shared__ float b_tile[kTile][kTile];
  const int row = blockIdx.y * kTile + threadIdx.y;
  const int col = blockIdx.x * kTile + threadIdx.x;
  float acc = 0.0f;
  for (int k0 = 0; k0 < n; k0 += kTile) {
    a_tile[threadIdx.y][threadIdx.x] = A[row * n + k0 + threadIdx.x];
    b_tile[threadIdx.y][threadIdx.x] = B[(k0 + threadIdx.y) * n + col];
    __syncthreads();
    for (int k = 0; k < kTile; ++k) acc += a_tile[threadIdx.y][k] * b_tile[k][threadIdx.x];
    __syncthreads();
  }
  C[row * n + col] = acc;
}

// Plain C++ counterparts, kept out of line so the compiler cannot fold them away.
__attribute__((noinline)) void plain_write_index(int* out, int blocks, int threads) {
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < threads; ++t) out[b * threads + t] = t;
}
__attribute__((noinline)) void plain_vector_add(const float* a, const float* b, float* c, int n) {
  for (int i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
__attribute__((noinline)) void plain_matmul(const float* A, const float* B, float* C, int n) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) C[i * n + j] = 0.0f;
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k) {
      const float a = A[i * n + k];
      for (int j = 0; j < n; ++j) C[i * n + j] += a * B[k * n + j];
    }
}

// The tiled matmul as a compiler that turns CUDA into CPU code would emit it (loop fission): per
// block, one loop over the block's 16x16 threads per stretch between barriers, with each
// thread's accumulator in an array. What the simulator's fissioned kernel should come close to.
__attribute__((noinline)) void plain_fissioned_tiled_matmul(const float* A, const float* B, float* C, int n) {
  float a_tile[kTile][kTile], b_tile[kTile][kTile], acc[kTile][kTile];
  for (int by = 0; by < n / kTile; ++by)
    for (int bx = 0; bx < n / kTile; ++bx) {
      for (int ty = 0; ty < kTile; ++ty)
        for (int tx = 0; tx < kTile; ++tx) acc[ty][tx] = 0.0f;
      for (int k0 = 0; k0 < n; k0 += kTile) {
        for (int ty = 0; ty < kTile; ++ty)
          for (int tx = 0; tx < kTile; ++tx) {
            a_tile[ty][tx] = A[(by * kTile + ty) * n + k0 + tx];
            b_tile[ty][tx] = B[(k0 + ty) * n + bx * kTile + tx];
          }
        for (int ty = 0; ty < kTile; ++ty)
          for (int tx = 0; tx < kTile; ++tx)
            for (int k = 0; k < kTile; ++k) acc[ty][tx] += a_tile[ty][k] * b_tile[k][tx];
      }
      for (int ty = 0; ty < kTile; ++ty)
        for (int tx = 0; tx < kTile; ++tx) C[(by * kTile + ty) * n + bx * kTile + tx] = acc[ty][tx];
    }
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s failed: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

}  // namespace

int main() {
  std::printf("cudasim benchmark: %u hardware threads\n\n", std::thread::hardware_concurrency());

  const double switch_cost = switch_ns();
  std::printf("%-58s %10.1f ns\n", "context switch (fiber to fiber)", switch_cost);

  int* sink;
  check(cudaMalloc(&sink, sizeof(int)), "cudaMalloc");
  const int barrier_iterations = 200;
  const double barrier_ms = median_ms(5, [&] {
    barrier_loop<<<1, 1024>>>(barrier_iterations, sink);
    check(cudaDeviceSynchronize(), "barrier_loop");
  });
  cudasim::set_loop_fission(false);
  const double coroutine_barrier_ms = median_ms(5, [&] {
    barrier_loop<<<1, 1024>>>(barrier_iterations, sink);
    check(cudaDeviceSynchronize(), "barrier_loop");
  });
  cudasim::set_loop_fission(true);
  const double per_barrier_us = barrier_ms * 1e3 / barrier_iterations;
  const double coroutine_per_barrier_us = coroutine_barrier_ms * 1e3 / barrier_iterations;
  std::printf("%-58s %10.2f us\n", "__syncthreads of a 1024-thread block", per_barrier_us);
  std::printf("%-58s %10.1f ns\n", "  per thread and barrier", per_barrier_us * 1e3 / 1024);
  std::printf("%-58s %10.1f ns\n", "  per thread and barrier, coroutine per thread",
              coroutine_per_barrier_us * 1e3 / 1024);

  const int blocks = 16384, threads = 256;
  int* out;
  check(cudaMalloc(&out, sizeof(int) * blocks * threads), "cudaMalloc");
  const double kernel_ms = median_ms(7, [&] {
    write_index<<<blocks, threads>>>(out);
    check(cudaDeviceSynchronize(), "write_index");
  });
  std::vector<int> host_out(static_cast<size_t>(blocks) * threads);
  const double plain_ms = median_ms(7, [&] { plain_write_index(host_out.data(), blocks, threads); });
  std::printf("%-58s %10.2f ns\n", "thread of a barrier-free kernel (4M threads, all workers)",
              kernel_ms * 1e6 / (double(blocks) * threads));
  std::printf("%-58s %10.2f ns\n", "  the same loop in plain C++ (one thread), per element",
              plain_ms * 1e6 / (double(blocks) * threads));
  std::printf("%-58s %10.2f x\n", "  simulator / plain C++", kernel_ms / plain_ms);

  // 4M-element vector add.
  const int n = 1 << 22;
  float *a, *b, *c;
  check(cudaMalloc(&a, sizeof(float) * n), "cudaMalloc");
  check(cudaMalloc(&b, sizeof(float) * n), "cudaMalloc");
  check(cudaMalloc(&c, sizeof(float) * n), "cudaMalloc");
  std::vector<float> ha(n, 1.0f), hb(n, 2.0f), hc(n);
  check(cudaMemcpy(a, ha.data(), sizeof(float) * n, cudaMemcpyHostToDevice), "cudaMemcpy");
  check(cudaMemcpy(b, hb.data(), sizeof(float) * n, cudaMemcpyHostToDevice), "cudaMemcpy");
  const double add_ms = median_ms(7, [&] {
    vector_add<<<(n + 255) / 256, 256>>>(a, b, c, n);
    check(cudaDeviceSynchronize(), "vector_add");
  });
  const double plain_add_ms = median_ms(7, [&] { plain_vector_add(ha.data(), hb.data(), hc.data(), n); });
  std::printf("\n%-58s %10.2f ms\n", "vector add, 4M elements, simulator", add_ms);
  std::printf("%-58s %10.2f ms\n", "vector add, 4M elements, plain C++ loop", plain_add_ms);

  // 256^3 matmul, 16x16 tiles.
  const int m = 256;
  float *A, *B, *C;
  check(cudaMalloc(&A, sizeof(float) * m * m), "cudaMalloc");
  check(cudaMalloc(&B, sizeof(float) * m * m), "cudaMalloc");
  check(cudaMalloc(&C, sizeof(float) * m * m), "cudaMalloc");
  std::vector<float> hA(m * m, 0.5f), hB(m * m, 0.25f), hC(m * m);
  check(cudaMemcpy(A, hA.data(), sizeof(float) * m * m, cudaMemcpyHostToDevice), "cudaMemcpy");
  check(cudaMemcpy(B, hB.data(), sizeof(float) * m * m, cudaMemcpyHostToDevice), "cudaMemcpy");
  const double mm_ms = median_ms(5, [&] {
    tiled_matmul<<<dim3(m / kTile, m / kTile), dim3(kTile, kTile)>>>(A, B, C, m);
    check(cudaDeviceSynchronize(), "tiled_matmul");
  });
  const double plain_mm_ms = median_ms(5, [&] { plain_matmul(hA.data(), hB.data(), hC.data(), m); });
  const double fissioned_mm_ms =
      median_ms(5, [&] { plain_fissioned_tiled_matmul(hA.data(), hB.data(), hC.data(), m); });
  cudasim::set_loop_fission(false);
  const double coroutine_mm_ms = median_ms(5, [&] {
    tiled_matmul<<<dim3(m / kTile, m / kTile), dim3(kTile, kTile)>>>(A, B, C, m);
    check(cudaDeviceSynchronize(), "tiled_matmul");
  });
  cudasim::set_loop_fission(true);
  std::printf("%-58s %10.2f ms\n", "tiled matmul 256^3 (16x16 tiles), simulator", mm_ms);
  std::printf("%-58s %10.2f ms\n", "  the same, coroutine per thread (CUDASIM_FISSION=0)", coroutine_mm_ms);
  std::printf("%-58s %10.2f ms\n", "  the same as loops over threads in plain C++, one core", fissioned_mm_ms);
  std::printf("%-58s %10.2f ms\n", "matmul 256^3, plain C++ loop (i-k-j order)", plain_mm_ms);
  std::printf("\nFor comparison, on the reference 2-core machine: ROCm HIP-CPU 7 ms (vector add) and "
              "47 ms (matmul); plain C++ 1.7 ms and 3.4 ms.\n");
  return 0;
}
