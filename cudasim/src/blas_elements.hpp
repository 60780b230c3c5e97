// The matrix elements the cuBLAS and cuBLASLt subsets read and write (float, half and bf16), as
// floats: one definition for both libraries (cublas.cpp), so that they size and round them alike.
#pragma once

#include <cublas_v2.h>

#include <cstddef>

namespace cudasim::detail {

/// Bytes of one element: 2 for CUDA_R_16F and CUDA_R_16BF, 4 for CUDA_R_32F.
std::size_t element_bytes(cudaDataType type);
/// Element `at` of the array at `base`, widened exactly to float.
float load_element(const void* base, cudaDataType type, std::size_t at);
/// Stores `v` as element `at` of the array at `base`, rounded to nearest even where the type is
/// narrower than float, as cuBLAS does.
void store_element(void* base, cudaDataType type, std::size_t at, float v);

}  // namespace cudasim::detail
