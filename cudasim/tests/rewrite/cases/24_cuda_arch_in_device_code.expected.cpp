#line 1 "@INPUT@"
// __CUDA_ARCH__ in preprocessor lines: the device pass's value inside __global__ functions and
// __device__-only ones (and blocks inside them), and in version tests at namespace scope;
// untouched in host code, in __host__ __device__ functions and in namespace-scope `defined` tests.
#if CUDASIM_DEVICE_ARCH >= 700
__device__ int newer_gpus_only() { return 7; }
#elif (CUDASIM_DEVICE_ARCH > 500)
__device__ int newer_gpus_only() { return 5; }
#endif
#ifdef __CUDA_ARCH__
#define DEVICE_PASS 1
#endif
#if !defined(__CUDA_ARCH__) || defined __CUDA_ARCH__
#include <cstdio>
#endif

__global__ void kernel(int* out) {
#if CUDASIM_DEVICE_ARCH >= 700
    out[0] = 1;
#endif
    if (out) {
#ifdef CUDASIM_DEVICE_ARCH
        out[1] = 2;
#endif
    }
} CUDASIM_KNOWN_KERNEL(kernel, (int* out))

__device__ int device_only() {
#if defined(CUDASIM_DEVICE_ARCH) && CUDASIM_DEVICE_ARCH >= 800
    return 8;
#else
    return 0;
#endif
}

__host__ __device__ int both() {
#ifndef __CUDA_ARCH__
    return 1;
#else
    return 2;
#endif
}

int host_function() {
#ifdef __CUDA_ARCH__
    return -1;
#endif
    return 0;
}

struct Holder {
    __device__ int member() {
#if CUDASIM_DEVICE_ARCH >= 900
        return 9;
#endif
        return 0;
    }
};
