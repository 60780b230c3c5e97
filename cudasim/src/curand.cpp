// The cuRAND host API (curand.h): generators that fill memory with the sequences NVIDIA's
// library gives, computed on the CPU with the device API's generators (curand_kernel.h).
//
// Where each value comes from (cuRAND's default ordering, read off libcurand's host generator):
// a generator's offset is a position (set by curandSetGeneratorOffset, advanced by every call),
// and positions are dealt out round-robin to a fixed number of device-API states, each seeded
// curand_init(seed, thread, 0):
// - XORWOW: 4096 states; position u is round u / 4096 of state u % 4096. A position is one
//   output (32-bit value, float, double) or one pair of normal outputs.
// - Philox4_32_10: 65536 states; positions in groups of four, group g is round g / 65536 of
//   state g % 65536. Every position is one output.
// A state takes what each of its positions needs in turn: XORWOW one draw (32-bit value,
// float), two (double, normal float pair) or four (normal double pair); Philox one block of four
// draws per group (two for doubles). Where a state starts differs:
// - XORWOW's states live from call to call: each goes on where it stopped. After a seed or an
//   offset is set they start afresh, each at the round of its first position (so many draws
//   skipped).
// - Philox's are made anew for every call, each at the round of its first position in the call
//   (so many blocks skipped).
// So values depend on the calls before as well as on the position: after calls that take more
// than one draw per position, the same position gives other values; as in cuRAND.
//
// Device generators queue their work on their stream like a kernel and charge the modelled
// timeline a library call that writes the output once; host generators fill host memory before
// returning.
#include <curand.h>
#include <curand_kernel.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "internal.hpp"

namespace cudasim::detail {
/// A XORWOW generator's 4096 states, started on first use.
struct XorwowStates {
  bool started = false;
  std::vector<curandStateXORWOW_t> states;
};
}  // namespace cudasim::detail

struct curandGenerator_st {
  curandRngType_t type = CURAND_RNG_PSEUDO_XORWOW;
  bool writes_host_memory = false;
  cudaStream_t stream = nullptr;
  unsigned long long seed = 0;
  unsigned long long offset = 0;
  /// XORWOW: the states since the last seed or offset was set (none before the first call),
  /// shared with the work queued on the stream, which advances them.
  std::shared_ptr<cudasim::detail::XorwowStates> xorwow_states;
};

namespace cudasim::detail {
namespace {

constexpr unsigned kXorwowStates = 4096;
constexpr unsigned long long kPhiloxStates = 65536;

std::mutex generators_mutex;
std::set<const curandGenerator_st*> live_generators;

bool is_live(curandGenerator_t generator) {
  std::lock_guard<std::mutex> lock(generators_mutex);
  return generator != nullptr && live_generators.count(generator) != 0;
}

const char* type_name(curandRngType_t type) {
  switch (type) {
    case CURAND_RNG_TEST: return "CURAND_RNG_TEST";
    case CURAND_RNG_PSEUDO_MRG32K3A: return "CURAND_RNG_PSEUDO_MRG32K3A";
    case CURAND_RNG_PSEUDO_MTGP32: return "CURAND_RNG_PSEUDO_MTGP32";
    case CURAND_RNG_PSEUDO_MT19937: return "CURAND_RNG_PSEUDO_MT19937";
    case CURAND_RNG_QUASI_DEFAULT: return "CURAND_RNG_QUASI_DEFAULT";
    case CURAND_RNG_QUASI_SOBOL32: return "CURAND_RNG_QUASI_SOBOL32";
    case CURAND_RNG_QUASI_SCRAMBLED_SOBOL32: return "CURAND_RNG_QUASI_SCRAMBLED_SOBOL32";
    case CURAND_RNG_QUASI_SOBOL64: return "CURAND_RNG_QUASI_SOBOL64";
    case CURAND_RNG_QUASI_SCRAMBLED_SOBOL64: return "CURAND_RNG_QUASI_SCRAMBLED_SOBOL64";
    default: return "an unknown curandRngType_t";
  }
}

curandStatus_t create(curandGenerator_t* generator, curandRngType_t type, bool host, const char* api) {
  if (generator == nullptr) return CURAND_STATUS_OUT_OF_RANGE;
  if (type == CURAND_RNG_PSEUDO_DEFAULT) type = CURAND_RNG_PSEUDO_XORWOW;
  if (type != CURAND_RNG_PSEUDO_XORWOW && type != CURAND_RNG_PSEUDO_PHILOX4_32_10) {
    report("%s: %s is not simulated: the simulator's cuRAND has CURAND_RNG_PSEUDO_XORWOW (the default) and "
           "CURAND_RNG_PSEUDO_PHILOX4_32_10 (CURAND_STATUS_TYPE_ERROR)",
           api, type_name(type));
    return CURAND_STATUS_TYPE_ERROR;
  }
  auto* made = new curandGenerator_st;
  made->type = type;
  made->writes_host_memory = host;
  {
    std::lock_guard<std::mutex> lock(generators_mutex);
    live_generators.insert(made);
  }
  *generator = made;
  return CURAND_STATUS_SUCCESS;
}

// ---- Where each output comes from --------------------------------------------------------------

/// What a request asks for.
enum class Kind { Bits, Uniform, UniformDouble, Normal, NormalDouble, LogNormal, LogNormalDouble };

bool is_double(Kind kind) {
  return kind == Kind::UniformDouble || kind == Kind::NormalDouble || kind == Kind::LogNormalDouble;
}
bool is_normal(Kind kind) { return kind != Kind::Bits && kind != Kind::Uniform && kind != Kind::UniformDouble; }

/// A request: where its outputs go and how normals are shifted and scaled.
struct Request {
  Kind kind;
  void* output;
  std::size_t count;  // outputs
  double mean = 0.0, stddev = 1.0;
};

/// Stores value number `index` of the request, transformed as its kind says.
void store(const Request& r, std::size_t index, double value) {
  switch (r.kind) {
    case Kind::Bits: static_cast<unsigned int*>(r.output)[index] = static_cast<unsigned int>(value); return;
    case Kind::Uniform: static_cast<float*>(r.output)[index] = static_cast<float>(value); return;
    case Kind::UniformDouble: static_cast<double*>(r.output)[index] = value; return;
    case Kind::Normal:
      static_cast<float*>(r.output)[index] = static_cast<float>(value) * static_cast<float>(r.stddev) + static_cast<float>(r.mean);
      return;
    case Kind::NormalDouble: static_cast<double*>(r.output)[index] = value * r.stddev + r.mean; return;
    case Kind::LogNormal:
      static_cast<float*>(r.output)[index] =
          ::expf(static_cast<float>(value) * static_cast<float>(r.stddev) + static_cast<float>(r.mean));
      return;
    case Kind::LogNormalDouble: static_cast<double*>(r.output)[index] = ::exp(value * r.stddev + r.mean); return;
  }
}

/// Outputs of one XORWOW position from the state at its first draw: one value, or a normal pair.
unsigned xorwow_position(const Request& r, curandStateXORWOW_t& state, double values[2]) {
  using namespace cudasim::curand_detail;
  switch (r.kind) {
    case Kind::Bits: values[0] = curand(&state); return 1;
    case Kind::Uniform: values[0] = curand_uniform(&state); return 1;
    case Kind::UniformDouble: values[0] = curand_uniform_double(&state); return 1;
    case Kind::Normal:
    case Kind::LogNormal: {
      const float2 pair = curand_normal2(&state);
      values[0] = pair.x;
      values[1] = pair.y;
      return 2;
    }
    default: {
      const double2 pair = curand_normal2_double(&state);
      values[0] = pair.x;
      values[1] = pair.y;
      return 2;
    }
  }
}

/// Fresh XORWOW states for a generator whose next position is `position`: state t on its
/// subsequence t, skipped to the round of its first position from there on.
void start_xorwow_states(XorwowStates& s, unsigned long long seed, unsigned long long position) {
  s.states.resize(kXorwowStates);
  for (unsigned t = 0; t < kXorwowStates; ++t) {
    const unsigned long long first_position = position + (t + kXorwowStates - position % kXorwowStates) % kXorwowStates;
    curand_init(seed, t, first_position / kXorwowStates, &s.states[t]);
  }
  s.started = true;
}

/// XORWOW: state by state, each drawn from for its positions (4096 apart) where it stopped.
void fill_xorwow(const Request& r, unsigned long long first_position, unsigned long long seed, XorwowStates& s) {
  if (!s.started) start_xorwow_states(s, seed, first_position);
  const std::size_t outputs_per_position = is_normal(r.kind) ? 2 : 1;
  const std::size_t positions = r.count / outputs_per_position;
  for (std::size_t k = 0; k < std::min<std::size_t>(positions, kXorwowStates); ++k) {
    curandStateXORWOW_t& state = s.states[(first_position + k) % kXorwowStates];
    for (std::size_t at = k; at < positions; at += kXorwowStates) {
      double values[2];
      const unsigned produced = xorwow_position(r, state, values);
      for (unsigned i = 0; i < produced; ++i) store(r, at * outputs_per_position + i, values[i]);
    }
  }
}

/// Philox: the four values of group `group` of a request whose first group is `first_group`,
/// from its state's block(s) of draws.
void philox_group(Kind kind, uint2 key, unsigned long long first_group, unsigned long long group, double values[4]) {
  using namespace cudasim::curand_detail;
  const unsigned long long state = group % kPhiloxStates;
  const unsigned long long round = group / kPhiloxStates;
  const unsigned long long states_first_group = first_group + (state - first_group % kPhiloxStates) % kPhiloxStates;
  const unsigned long long first_round = states_first_group / kPhiloxStates;
  const unsigned long long blocks_per_group = is_double(kind) ? 2 : 1;
  uint4 counter = make_uint4(0, 0, static_cast<unsigned int>(state), static_cast<unsigned int>(state >> 32));
  advance_counter(counter, first_round + (round - first_round) * blocks_per_group);
  const uint4 first = philox_block(counter, key);
  advance_counter(counter, 1);
  const uint4 second = blocks_per_group == 2 ? philox_block(counter, key) : make_uint4(0, 0, 0, 0);
  switch (kind) {
    case Kind::Bits: values[0] = first.x, values[1] = first.y, values[2] = first.z, values[3] = first.w; return;
    case Kind::Uniform:
      values[0] = uniform_from_bits(first.x), values[1] = uniform_from_bits(first.y);
      values[2] = uniform_from_bits(first.z), values[3] = uniform_from_bits(first.w);
      return;
    case Kind::UniformDouble:
      values[0] = uniform_double_from_two(first.x, first.y), values[1] = uniform_double_from_two(first.z, first.w);
      values[2] = uniform_double_from_two(second.x, second.y), values[3] = uniform_double_from_two(second.z, second.w);
      return;
    case Kind::Normal:
    case Kind::LogNormal: {
      const float2 a = box_muller(first.x, first.y), b = box_muller(first.z, first.w);
      values[0] = a.x, values[1] = a.y, values[2] = b.x, values[3] = b.y;
      return;
    }
    default: {
      const double2 a = box_muller_double(first.x, first.y, first.z, first.w);
      const double2 b = box_muller_double(second.x, second.y, second.z, second.w);
      values[0] = a.x, values[1] = a.y, values[2] = b.x, values[3] = b.y;
      return;
    }
  }
}

void fill_philox(const Request& r, unsigned long long first_position, unsigned long long seed) {
  const uint2 key = make_uint2(static_cast<unsigned int>(seed), static_cast<unsigned int>(seed >> 32));
  std::size_t index = 0;
  while (index < r.count) {
    const unsigned long long position = first_position + index;
    double values[4];
    philox_group(r.kind, key, first_position / 4, position / 4, values);
    for (unsigned lane = static_cast<unsigned>(position % 4); lane < 4 && index < r.count; ++lane, ++index)
      store(r, index, values[lane]);
  }
}

/// The positions a request takes from the stream.
unsigned long long positions_taken(curandRngType_t type, const Request& r) {
  return type == CURAND_RNG_PSEUDO_XORWOW && is_normal(r.kind) ? r.count / 2 : r.count;
}

std::size_t output_bytes(const Request& r) { return r.count * (r.kind == Kind::Bits || !is_double(r.kind) ? 4 : 8); }

/// The generator's XORWOW states, to be started by the first work that uses them.
std::shared_ptr<XorwowStates> xorwow_states(curandGenerator_st& g) {
  if (!g.xorwow_states) g.xorwow_states = std::make_shared<XorwowStates>();
  return g.xorwow_states;
}

curandStatus_t generate(const char* api, curandGenerator_t generator, Request request) {
  if (!is_live(generator)) return CURAND_STATUS_NOT_INITIALIZED;
  if (request.count == 0) return CURAND_STATUS_SUCCESS;
  if (request.output == nullptr) {
    report("%s: the output is a null pointer (CURAND_STATUS_OUT_OF_RANGE)", api);
    return CURAND_STATUS_OUT_OF_RANGE;
  }
  if (is_normal(request.kind) && request.count % 2 != 0) {
    report("%s: normal values come in pairs; %zu is odd (CURAND_STATUS_LENGTH_NOT_MULTIPLE)", api, request.count);
    return CURAND_STATUS_LENGTH_NOT_MULTIPLE;
  }
  curandGenerator_st& g = *generator;
  const unsigned long long first_position = g.offset;
  g.offset += positions_taken(g.type, request);
  std::function<void()> fill;
  if (g.type == CURAND_RNG_PSEUDO_XORWOW) {
    fill = [request, first_position, seed = g.seed, states = xorwow_states(g)] {
      fill_xorwow(request, first_position, seed, *states);
    };
  } else {
    fill = [request, first_position, seed = g.seed] { fill_philox(request, first_position, seed); };
  }
  if (g.writes_host_memory) {
    fill();
    return CURAND_STATUS_SUCCESS;
  }
  if (sticky_error() != cudaSuccess) return CURAND_STATUS_PREEXISTING_FAILURE;
  const char* last_byte = static_cast<const char*>(request.output) + output_bytes(request) - 1;
  if (!kernel_accessible(request.output) || !kernel_accessible(last_byte)) {
    report("%s: the output (%p) is not device memory: a generator from curandCreateGenerator writes from the GPU "
           "(use cudaMalloc, or curandCreateGeneratorHost for host memory) (CURAND_STATUS_LAUNCH_FAILURE)",
           api, request.output);
    return CURAND_STATUS_LAUNCH_FAILURE;
  }
  const std::uint64_t bytes = output_bytes(request);
  const cudaError_t queued = enqueue(g.stream, [api, bytes, fill = std::move(fill)] {
    fill();
    charge_operation("library", api, model_library_call(0, bytes, false, replaying_graph(), modelled_gpu()).total_ns);
  });
  if (queued != cudaSuccess) {
    report("%s: the generator's stream is not a valid stream (destroyed?)", api);
    return CURAND_STATUS_LAUNCH_FAILURE;
  }
  return CURAND_STATUS_SUCCESS;
}

}  // namespace
}  // namespace cudasim::detail

using namespace cudasim::detail;

curandStatus_t curandCreateGenerator(curandGenerator_t* generator, curandRngType_t rng_type) {
  return create(generator, rng_type, false, "curandCreateGenerator");
}

curandStatus_t curandCreateGeneratorHost(curandGenerator_t* generator, curandRngType_t rng_type) {
  return create(generator, rng_type, true, "curandCreateGeneratorHost");
}

curandStatus_t curandDestroyGenerator(curandGenerator_t generator) {
  {
    std::lock_guard<std::mutex> lock(generators_mutex);
    if (generator == nullptr || live_generators.erase(generator) == 0) return CURAND_STATUS_NOT_INITIALIZED;
  }
  delete generator;  // queued work holds what it needs (its states, its output pointer)
  return CURAND_STATUS_SUCCESS;
}

curandStatus_t curandGetVersion(int* version) {
  if (version == nullptr) return CURAND_STATUS_OUT_OF_RANGE;
  *version = CURAND_VERSION;
  return CURAND_STATUS_SUCCESS;
}

curandStatus_t curandSetStream(curandGenerator_t generator, cudaStream_t stream) {
  if (!is_live(generator)) return CURAND_STATUS_NOT_INITIALIZED;
  generator->stream = stream;
  return CURAND_STATUS_SUCCESS;
}

curandStatus_t curandSetPseudoRandomGeneratorSeed(curandGenerator_t generator, unsigned long long seed) {
  if (!is_live(generator)) return CURAND_STATUS_NOT_INITIALIZED;
  generator->seed = seed;
  generator->xorwow_states.reset();  // the position stays, as in cuRAND
  return CURAND_STATUS_SUCCESS;
}

curandStatus_t curandSetGeneratorOffset(curandGenerator_t generator, unsigned long long offset) {
  if (!is_live(generator)) return CURAND_STATUS_NOT_INITIALIZED;
  generator->offset = offset;
  generator->xorwow_states.reset();
  return CURAND_STATUS_SUCCESS;
}

curandStatus_t curandSetGeneratorOrdering(curandGenerator_t generator, curandOrdering_t order) {
  if (!is_live(generator)) return CURAND_STATUS_NOT_INITIALIZED;
  if (order == CURAND_ORDERING_PSEUDO_DEFAULT || order == CURAND_ORDERING_PSEUDO_BEST ||
      order == CURAND_ORDERING_PSEUDO_LEGACY)
    return CURAND_STATUS_SUCCESS;
  report("curandSetGeneratorOrdering: only CURAND_ORDERING_PSEUDO_DEFAULT, _BEST and _LEGACY (one and the same "
         "sequence) are simulated (CURAND_STATUS_OUT_OF_RANGE)");
  return CURAND_STATUS_OUT_OF_RANGE;
}

curandStatus_t curandGenerateSeeds(curandGenerator_t generator) {
  if (!is_live(generator)) return CURAND_STATUS_NOT_INITIALIZED;
  if (generator->type == CURAND_RNG_PSEUDO_XORWOW) {
    std::shared_ptr<XorwowStates> states = xorwow_states(*generator);
    if (!states->started) start_xorwow_states(*states, generator->seed, generator->offset);
  }
  return CURAND_STATUS_SUCCESS;
}

curandStatus_t curandGenerate(curandGenerator_t generator, unsigned int* output_ptr, size_t num) {
  return generate("curandGenerate", generator, {Kind::Bits, output_ptr, num});
}

curandStatus_t curandGenerateUniform(curandGenerator_t generator, float* output_ptr, size_t num) {
  return generate("curandGenerateUniform", generator, {Kind::Uniform, output_ptr, num});
}

curandStatus_t curandGenerateUniformDouble(curandGenerator_t generator, double* output_ptr, size_t num) {
  return generate("curandGenerateUniformDouble", generator, {Kind::UniformDouble, output_ptr, num});
}

curandStatus_t curandGenerateNormal(curandGenerator_t generator, float* output_ptr, size_t n, float mean,
                                    float stddev) {
  return generate("curandGenerateNormal", generator, {Kind::Normal, output_ptr, n, mean, stddev});
}

curandStatus_t curandGenerateNormalDouble(curandGenerator_t generator, double* output_ptr, size_t n, double mean,
                                          double stddev) {
  return generate("curandGenerateNormalDouble", generator, {Kind::NormalDouble, output_ptr, n, mean, stddev});
}

curandStatus_t curandGenerateLogNormal(curandGenerator_t generator, float* output_ptr, size_t n, float mean,
                                       float stddev) {
  return generate("curandGenerateLogNormal", generator, {Kind::LogNormal, output_ptr, n, mean, stddev});
}

curandStatus_t curandGenerateLogNormalDouble(curandGenerator_t generator, double* output_ptr, size_t n,
                                             double mean, double stddev) {
  return generate("curandGenerateLogNormalDouble", generator, {Kind::LogNormalDouble, output_ptr, n, mean, stddev});
}
