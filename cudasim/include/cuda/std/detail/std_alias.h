/// @file std_alias.h
/// @brief libcu++'s `cuda::std` on the simulator: the host's standard library, which serves host
/// and device code alike here. Each `<cuda/std/X>` header includes `<X>` and this, so that
/// `cuda::std::is_same_v`, `cuda::std::numeric_limits` and the rest name the `std` ones. (A
/// specialisation written for `cuda::std` itself is not supported.)
#pragma once

namespace cuda {
namespace std {
using namespace ::std;
}  // namespace std
}  // namespace cuda
