/// @file curand.h
/// @brief The simulator's cuRAND host API: generators that fill device memory with random
/// numbers, computed on the CPU (cudasim/src/curand.cpp, library cudasim_curand; link with
/// -lcurand on a GPU).
///
/// Semantics follow the cuRAND documentation:
/// - curandCreateGenerator's generators write device memory (cudaMalloc, managed or pinned
///   host memory), asynchronously on the generator's stream (curandSetStream), in order with
///   kernels and copies there; curandCreateGeneratorHost's write host memory before returning;
/// - the pseudo-random generators XORWOW (also CURAND_RNG_PSEUDO_DEFAULT) and PHILOX4_32_10
///   give cuRAND's own sequences: the seed (default 0) and the offset (default 0) choose where
///   output starts, and each call continues where the last one stopped;
/// - other generator types (MRG32k3a, MTGP32, MT19937, the Sobol generators) are refused with
///   CURAND_STATUS_TYPE_ERROR and a message, as are the calls this subset lacks;
/// - normal and log-normal requests must be of an even count (CURAND_STATUS_LENGTH_NOT_MULTIPLE).
///
/// Enumerator values are those of the CUDA toolkit, so printed codes match a GPU's.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#define CURAND_VER_MAJOR 10
#define CURAND_VER_MINOR 4
#define CURAND_VER_PATCH 0
#define CURAND_VER_BUILD 0
#define CURAND_VERSION (CURAND_VER_MAJOR * 1000 + CURAND_VER_MINOR * 100 + CURAND_VER_PATCH)

#ifndef CURANDAPI
#define CURANDAPI
#endif

enum curandStatus {
  CURAND_STATUS_SUCCESS = 0,
  CURAND_STATUS_VERSION_MISMATCH = 100,
  CURAND_STATUS_NOT_INITIALIZED = 101,          ///< null or destroyed generator
  CURAND_STATUS_ALLOCATION_FAILED = 102,
  CURAND_STATUS_TYPE_ERROR = 103,               ///< a generator type (or a call for it) not simulated
  CURAND_STATUS_OUT_OF_RANGE = 104,             ///< a null output pointer, a bad argument
  CURAND_STATUS_LENGTH_NOT_MULTIPLE = 105,      ///< an odd count of normal values
  CURAND_STATUS_DOUBLE_PRECISION_REQUIRED = 106,
  CURAND_STATUS_LAUNCH_FAILURE = 201,           ///< the output is not memory the device can write
  CURAND_STATUS_PREEXISTING_FAILURE = 202,      ///< an earlier kernel fault
  CURAND_STATUS_INITIALIZATION_FAILED = 203,
  CURAND_STATUS_ARCH_MISMATCH = 204,
  CURAND_STATUS_INTERNAL_ERROR = 999
};
typedef enum curandStatus curandStatus_t;

enum curandRngType {
  CURAND_RNG_TEST = 0,
  CURAND_RNG_PSEUDO_DEFAULT = 100,
  CURAND_RNG_PSEUDO_XORWOW = 101,
  CURAND_RNG_PSEUDO_MRG32K3A = 121,
  CURAND_RNG_PSEUDO_MTGP32 = 141,
  CURAND_RNG_PSEUDO_MT19937 = 142,
  CURAND_RNG_PSEUDO_PHILOX4_32_10 = 161,
  CURAND_RNG_QUASI_DEFAULT = 200,
  CURAND_RNG_QUASI_SOBOL32 = 201,
  CURAND_RNG_QUASI_SCRAMBLED_SOBOL32 = 202,
  CURAND_RNG_QUASI_SOBOL64 = 203,
  CURAND_RNG_QUASI_SCRAMBLED_SOBOL64 = 204
};
typedef enum curandRngType curandRngType_t;

enum curandOrdering {
  CURAND_ORDERING_PSEUDO_BEST = 100,
  CURAND_ORDERING_PSEUDO_DEFAULT = 101,
  CURAND_ORDERING_PSEUDO_SEEDED = 102,
  CURAND_ORDERING_PSEUDO_LEGACY = 103,
  CURAND_ORDERING_PSEUDO_DYNAMIC = 104,
  CURAND_ORDERING_QUASI_DEFAULT = 201
};
typedef enum curandOrdering curandOrdering_t;

typedef struct curandGenerator_st* curandGenerator_t;

/// A generator writing device memory, on the default stream until curandSetStream.
curandStatus_t CURANDAPI curandCreateGenerator(curandGenerator_t* generator, curandRngType_t rng_type);
/// A generator writing host memory, synchronously.
curandStatus_t CURANDAPI curandCreateGeneratorHost(curandGenerator_t* generator, curandRngType_t rng_type);
curandStatus_t CURANDAPI curandDestroyGenerator(curandGenerator_t generator);
curandStatus_t CURANDAPI curandGetVersion(int* version);
curandStatus_t CURANDAPI curandSetStream(curandGenerator_t generator, cudaStream_t stream);
curandStatus_t CURANDAPI curandSetPseudoRandomGeneratorSeed(curandGenerator_t generator, unsigned long long seed);
curandStatus_t CURANDAPI curandSetGeneratorOffset(curandGenerator_t generator, unsigned long long offset);
/// Only the orderings that give cuRAND's default sequence (PSEUDO_DEFAULT, PSEUDO_BEST,
/// PSEUDO_LEGACY, which are the same for XORWOW and Philox) are accepted.
curandStatus_t CURANDAPI curandSetGeneratorOrdering(curandGenerator_t generator, curandOrdering_t order);
/// Seeds the generator's states now instead of on the first generate call (nothing else).
curandStatus_t CURANDAPI curandGenerateSeeds(curandGenerator_t generator);

curandStatus_t CURANDAPI curandGenerate(curandGenerator_t generator, unsigned int* output_ptr, size_t num);
curandStatus_t CURANDAPI curandGenerateUniform(curandGenerator_t generator, float* output_ptr, size_t num);
curandStatus_t CURANDAPI curandGenerateUniformDouble(curandGenerator_t generator, double* output_ptr, size_t num);
curandStatus_t CURANDAPI curandGenerateNormal(curandGenerator_t generator, float* output_ptr, size_t n, float mean,
                                              float stddev);
curandStatus_t CURANDAPI curandGenerateNormalDouble(curandGenerator_t generator, double* output_ptr, size_t n,
                                                    double mean, double stddev);
curandStatus_t CURANDAPI curandGenerateLogNormal(curandGenerator_t generator, float* output_ptr, size_t n, float mean,
                                                 float stddev);
curandStatus_t CURANDAPI curandGenerateLogNormalDouble(curandGenerator_t generator, double* output_ptr, size_t n,
                                                       double mean, double stddev);
