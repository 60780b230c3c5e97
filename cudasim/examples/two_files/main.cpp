// The host half of the two-file example: plain C++ that calls the CUDA runtime and the
// launcher defined in kernels.cu (nvcc compiles this file with the host compiler). Prints
// "scaled 1000 floats by SCALE: OK" when every element came back multiplied.
#include <cstdio>
#include <vector>

#include "scale.h"

#define CHECK(call)                                                                        \
    do {                                                                                   \
        cudaError_t status_ = (call);                                                      \
        if (status_ != cudaSuccess) {                                                      \
            std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(status_));  \
            return 1;                                                                      \
        }                                                                                  \
    } while (0)

int main() {
    const int n = 1000;  // not a multiple of the block size: the bounds guard matters
    std::vector<float> host(n);
    for (int i = 0; i < n; ++i) host[i] = static_cast<float>(i);
    float* device = nullptr;
    CHECK(cudaMalloc(&device, n * sizeof(float)));
    CHECK(cudaMemcpy(device, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(launch_scale(device, n));
    CHECK(cudaMemcpy(host.data(), device, n * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(cudaFree(device));
    int wrong = 0;
    for (int i = 0; i < n; ++i) wrong += host[i] != static_cast<float>(i) * SCALE;
    std::printf("scaled %d floats by %d: %s\n", n, SCALE, wrong == 0 ? "OK" : "WRONG");
    return wrong == 0 ? 0 : 1;
}
