/// @file curand_kernel.h
/// @brief The simulator's cuRAND device API: per-thread generators that kernels (and host code)
/// keep in a state struct, header-only as on a GPU.
///
/// Two generators, with the sequences NVIDIA's library gives:
/// - XORWOW (`curandState_t`, `curandStateXORWOW_t`), cuRAND's default: Marsaglia's xorshift
///   over five 32-bit words plus a Weyl counter. Subsequences are 2^67 draws apart; skipping
///   ahead multiplies the 160-bit xorshift state by powers of the step's matrix over GF(2). The
///   simulator computes those powers (A^(2^k), k = 0..130) once, on first use, instead of
///   shipping a precalculated table.
/// - Philox4_32_10 (`curandStatePhilox4_32_10_t`): the counter-based generator of Salmon et
///   al. (Random123, SC'11), ten rounds over a 128-bit counter and a 64-bit key (the seed);
///   subsequence s starts at counter s * 2^64 blocks of four draws.
///
/// Raw 32-bit draws and the uniform conversions are bit-exact with cuRAND. Normal draws use
/// Box-Muller on two draws as cuRAND does (the second value is kept for the next call), with
/// the host's logf/sinf/cosf: they equal what NVIDIA's header computes on the host, while a
/// GPU's fast __sincosf differs in the last bits (about 1e-6). curand_poisson is distributed
/// right but only matches cuRAND's values for lambda < 64 (docs/simulator.md).
///
/// MRG32k3a, MTGP32 and the Sobol generators are not simulated: their state types exist so
/// that a program using them stops at its first curand_* call with a message naming them.
#pragma once

#include <cuda_runtime.h>
#include <curand.h>

#include <cmath>
#include <cstdint>

namespace cudasim::curand_detail {

// The conversions of cuRAND (curand_uniform.h documents them): a 32-bit draw x becomes
// x * 2^-32 + 2^-33, in (0, 1]; a 53-bit draw z becomes z * 2^-53 + 2^-54.
inline constexpr float kFloatUnit = 0x1p-32f;
inline constexpr double kDoubleUnit32 = 0x1p-32;
inline constexpr double kDoubleUnit53 = 0x1p-53;
// 2*pi / 2^32 as cuRAND rounds it to float: the angle of Box-Muller from one draw.
inline constexpr float kFloatAngleUnit = static_cast<float>(6.283185307179586476925286766559 / 4294967296.0);
inline constexpr double kPi = 3.141592653589793238462643383279502884;

/// Which transformed value the state keeps for the next call (cuRAND's Box-Muller makes two).
enum CachedValue : int { kNothingCached = 0, kCachedNormal = 1, kCachedLogNormal = 2 };

__host__ __device__ __forceinline__ float uniform_from_bits(unsigned int x) {
  return static_cast<float>(x) * kFloatUnit + kFloatUnit / 2.0f;
}

/// A uniform double in (0, 1] with 53 random bits from two draws (the low 21 bits of the
/// result mix both draws, as cuRAND's "hq" conversion does).
__host__ __device__ __forceinline__ double uniform_double_from_two(unsigned int x, unsigned int y) {
  const unsigned long long bits = static_cast<unsigned long long>(x) ^ (static_cast<unsigned long long>(y) << 21);
  return static_cast<double>(bits) * kDoubleUnit53 + kDoubleUnit53 / 2.0;
}

/// Two independent standard normals from two draws: the radius from the first, the angle from
/// the second. Product and sum are rounded separately (no fused multiply-add), as NVIDIA's
/// host code is, so that the result does not depend on the machine.
__host__ __device__ inline float2 box_muller(unsigned int x, unsigned int y) {
#pragma clang fp contract(off)
  const float u = static_cast<float>(x) * kFloatUnit + kFloatUnit / 2.0f;
  const float angle = static_cast<float>(y) * kFloatAngleUnit + kFloatAngleUnit / 2.0f;
  const float radius = ::sqrtf(-2.0f * ::logf(u));
  return make_float2(::sinf(angle) * radius, ::cosf(angle) * radius);
}

/// The double version: 53 bits each for the radius and for the angle (in half turns).
__host__ __device__ inline double2 box_muller_double(unsigned int x0, unsigned int x1, unsigned int y0,
                                                     unsigned int y1) {
#pragma clang fp contract(off)
  const double u = uniform_double_from_two(x0, x1);
  const unsigned long long angle_bits = static_cast<unsigned long long>(y0) ^ (static_cast<unsigned long long>(y1) << 21);
  const double half_turns = static_cast<double>(angle_bits) * (2.0 * kDoubleUnit53) + kDoubleUnit53;
  const double radius = ::sqrt(-2.0 * ::log(u));
  return make_double2(::sin(half_turns * kPi) * radius, ::cos(half_turns * kPi) * radius);
}

// ---- XORWOW skip-ahead: powers of the step matrix over GF(2) ----------------------------------

inline constexpr int kXorwowWords = 5;
inline constexpr int kXorwowBits = 32 * kXorwowWords;
/// Jumps of 2^k draws for k < 131: an offset (< 2^64) and a subsequence (2^67 draws each, fewer
/// than 2^64 of them) together need powers up to 2^130.
inline constexpr int kXorwowJumps = 131;
inline constexpr int kXorwowSubsequenceLog2 = 67;

/// The xorshift words of an XORWOW state (its Weyl counter moves separately).
struct XorwowWords {
  unsigned int w[kXorwowWords];
};

/// One XORWOW step of the xorshift words alone: linear over GF(2) in the 160 state bits.
__host__ __device__ __forceinline__ unsigned int xorshift_step(unsigned int w[kXorwowWords]) {
  const unsigned int t = w[0] ^ (w[0] >> 2);
  w[0] = w[1];
  w[1] = w[2];
  w[2] = w[3];
  w[3] = w[4];
  w[4] = (w[4] ^ (w[4] << 4)) ^ (t ^ (t << 1));
  return w[4];
}

/// A 160x160 matrix over GF(2), stored as the images of the 160 unit vectors: applying it is
/// the XOR of the images of the set bits.
struct XorwowMatrix {
  XorwowWords image[kXorwowBits];
};

__attribute__((no_sanitize("coverage"))) inline XorwowWords apply(const XorwowMatrix& m, const XorwowWords& v) {
  XorwowWords out{};
  for (int bit = 0; bit < kXorwowBits; ++bit) {
    if (((v.w[bit / 32] >> (bit % 32)) & 1u) == 0) continue;
    for (int i = 0; i < kXorwowWords; ++i) out.w[i] ^= m.image[bit].w[i];
  }
  return out;
}

/// The jump matrices, A^(2^k) for the one-step matrix A.
struct XorwowJumpTable {
  XorwowMatrix power[kXorwowJumps];
};

/// Fills the table: A from stepping each unit vector once, then each power the square of the
/// one before (the square's image of e_j is the matrix applied to its own image of e_j).
/// Uncounted and out of line: the first kernel thread that skips ahead builds it, and its
/// 400 KiB of writes are the simulator's work, not the kernel's.
__attribute__((no_sanitize("coverage"), noinline)) inline bool build_xorwow_jumps(XorwowJumpTable& table) {
  for (int bit = 0; bit < kXorwowBits; ++bit) {
    XorwowWords unit{};
    unit.w[bit / 32] = 1u << (bit % 32);
    xorshift_step(unit.w);
    table.power[0].image[bit] = unit;
  }
  for (int k = 1; k < kXorwowJumps; ++k)
    for (int bit = 0; bit < kXorwowBits; ++bit)
      table.power[k].image[bit] = apply(table.power[k - 1], table.power[k - 1].image[bit]);
  return true;
}

/// The table, built once per program; C++ makes the first call's initialisation thread-safe
/// (the build never yields to another kernel thread, so fibers sharing a worker cannot wait on
/// one another). Static storage: a 420 KB table would not fit a kernel thread's stack.
inline const XorwowJumpTable& xorwow_jumps() {
  static XorwowJumpTable table;
  static const bool built = build_xorwow_jumps(table);
  (void)built;
  return table;
}

/// The words after 2^first_power * n draws: one jump per set bit of n.
__attribute__((no_sanitize("coverage"), noinline)) inline XorwowWords jump_xorwow(XorwowWords v, unsigned long long n,
                                                                                int first_power) {
  const XorwowJumpTable& table = xorwow_jumps();
  for (int k = 0; n != 0; ++k, n >>= 1)
    if (n & 1u) v = apply(table.power[first_power + k], v);
  return v;
}

// ---- Philox4x32-10 -------------------------------------------------------------------------

// The round multipliers and the key increments (the golden ratio and sqrt(3) - 1 in 32-bit
// fixed point) of Random123's Philox4x32.
inline constexpr unsigned int kPhiloxMultiplier0 = 0xD2511F53u;
inline constexpr unsigned int kPhiloxMultiplier1 = 0xCD9E8D57u;
inline constexpr unsigned int kPhiloxKeyStep0 = 0x9E3779B9u;
inline constexpr unsigned int kPhiloxKeyStep1 = 0xBB67AE85u;
inline constexpr int kPhiloxRounds = 10;

/// Ten Philox rounds: four draws from a counter and a key.
__host__ __device__ __forceinline__ uint4 philox_block(uint4 counter, uint2 key) {
  for (int round = 0; round < kPhiloxRounds; ++round) {
    if (round > 0) {
      key.x += kPhiloxKeyStep0;
      key.y += kPhiloxKeyStep1;
    }
    const unsigned long long product0 = static_cast<unsigned long long>(kPhiloxMultiplier0) * counter.x;
    const unsigned long long product1 = static_cast<unsigned long long>(kPhiloxMultiplier1) * counter.z;
    counter = make_uint4(static_cast<unsigned int>(product1 >> 32) ^ counter.y ^ key.x, static_cast<unsigned int>(product1),
                         static_cast<unsigned int>(product0 >> 32) ^ counter.w ^ key.y, static_cast<unsigned int>(product0));
  }
  return counter;
}

/// counter += n blocks, as one 128-bit number.
__host__ __device__ __forceinline__ void advance_counter(uint4& counter, unsigned long long n) {
  const unsigned long long low = (static_cast<unsigned long long>(counter.y) << 32 | counter.x) + n;
  const bool carry = low < n;
  counter.x = static_cast<unsigned int>(low);
  counter.y = static_cast<unsigned int>(low >> 32);
  if (carry && ++counter.z == 0) ++counter.w;
}

/// The upper 64 bits of the counter += n: n subsequences of 2^64 blocks each.
__host__ __device__ __forceinline__ void advance_counter_subsequences(uint4& counter, unsigned long long n) {
  const unsigned long long high = (static_cast<unsigned long long>(counter.w) << 32 | counter.z) + n;
  counter.z = static_cast<unsigned int>(high);
  counter.w = static_cast<unsigned int>(high >> 32);
}

template <class T>
inline constexpr bool kUnsupportedState = false;

}  // namespace cudasim::curand_detail

// ---- State types ------------------------------------------------------------------------------

struct curandStateXORWOW {
  unsigned int weyl;                        ///< the Weyl counter added to every draw
  unsigned int words[5];                    ///< the xorshift state
  int cached_kind;                          ///< curand_detail::CachedValue of cached_float
  int cached_double_kind;                   ///< the same for cached_double
  float cached_float;                       ///< Box-Muller's second float value
  double cached_double;                     ///< Box-Muller's second double value
};
typedef struct curandStateXORWOW curandStateXORWOW_t;
typedef struct curandStateXORWOW curandState;
typedef struct curandStateXORWOW curandState_t;

struct curandStatePhilox4_32_10 {
  uint4 counter;                            ///< the block being read
  uint4 block;                              ///< philox_block(counter, key)
  uint2 key;                                ///< the seed
  unsigned int lane;                        ///< the next draw is block's lane-th word (0..3)
  int cached_kind;
  int cached_double_kind;
  float cached_float;
  double cached_double;
};
typedef struct curandStatePhilox4_32_10 curandStatePhilox4_32_10_t;

// Generators the simulator does not provide: complete types (so that declarations and
// cudaMalloc(n * sizeof(...)) compile), and every curand_* call on them stops the compile.
struct curandStateMRG32k3a { unsigned int not_simulated[12]; };
typedef struct curandStateMRG32k3a curandStateMRG32k3a_t;
struct curandStateMtgp32 { unsigned int not_simulated[16]; };
typedef struct curandStateMtgp32 curandStateMtgp32_t;
struct curandStateSobol32 { unsigned int not_simulated[36]; };
typedef struct curandStateSobol32 curandStateSobol32_t;
struct curandStateScrambledSobol32 { unsigned int not_simulated[36]; };
typedef struct curandStateScrambledSobol32 curandStateScrambledSobol32_t;
struct curandStateSobol64 { unsigned long long not_simulated[68]; };
typedef struct curandStateSobol64 curandStateSobol64_t;
struct curandStateScrambledSobol64 { unsigned long long not_simulated[68]; };
typedef struct curandStateScrambledSobol64 curandStateScrambledSobol64_t;

#define CUDASIM_CURAND_NOT_SIMULATED                                                                  \
  "cudasim: only the XORWOW (curandState_t) and Philox4_32_10 generators of cuRAND's device API are " \
  "simulated; MRG32k3a, MTGP32 and Sobol are not (docs/simulator.md)"

template <class State>
void curand_init(unsigned long long, unsigned long long, unsigned long long, State*) {
  static_assert(cudasim::curand_detail::kUnsupportedState<State>, CUDASIM_CURAND_NOT_SIMULATED);
}
template <class State>
unsigned int curand(State*) {
  static_assert(cudasim::curand_detail::kUnsupportedState<State>, CUDASIM_CURAND_NOT_SIMULATED);
  return 0;
}
template <class State>
float curand_uniform(State*) {
  static_assert(cudasim::curand_detail::kUnsupportedState<State>, CUDASIM_CURAND_NOT_SIMULATED);
  return 0;
}
template <class State>
float curand_normal(State*) {
  static_assert(cudasim::curand_detail::kUnsupportedState<State>, CUDASIM_CURAND_NOT_SIMULATED);
  return 0;
}

// ---- XORWOW -------------------------------------------------------------------------------------

/// Skips n draws: the xorshift words jump by matrices, the Weyl counter by n steps.
__host__ __device__ inline void skipahead(unsigned long long n, curandStateXORWOW_t* state) {
  cudasim::curand_detail::XorwowWords words;
  for (int i = 0; i < 5; ++i) words.w[i] = state->words[i];
  words = cudasim::curand_detail::jump_xorwow(words, n, 0);
  for (int i = 0; i < 5; ++i) state->words[i] = words.w[i];
  state->weyl += 362437u * static_cast<unsigned int>(n);
}

/// Skips n subsequences of 2^67 draws (the Weyl counter comes back to where it was: 2^67
/// steps of it are a multiple of 2^32).
__host__ __device__ inline void skipahead_sequence(unsigned long long n, curandStateXORWOW_t* state) {
  cudasim::curand_detail::XorwowWords words;
  for (int i = 0; i < 5; ++i) words.w[i] = state->words[i];
  words = cudasim::curand_detail::jump_xorwow(words, n, cudasim::curand_detail::kXorwowSubsequenceLog2);
  for (int i = 0; i < 5; ++i) state->words[i] = words.w[i];
}

namespace cudasim::curand_detail {
/// Stores a freshly seeded state field by field. A copy of the whole struct may become a
/// memory-copy intrinsic that the simulator's memory counters and memcheck do not see; these
/// are stores of each field, counted and checked as a GPU's would be.
__host__ __device__ inline void store_state(curandStateXORWOW_t* to, const curandStateXORWOW_t& from) {
  to->weyl = from.weyl;
  for (int i = 0; i < 5; ++i) to->words[i] = from.words[i];
  to->cached_kind = from.cached_kind;
  to->cached_double_kind = from.cached_double_kind;
  to->cached_float = from.cached_float;
  to->cached_double = from.cached_double;
}
__host__ __device__ inline void store_state(curandStatePhilox4_32_10_t* to, const curandStatePhilox4_32_10_t& from) {
  to->counter.x = from.counter.x, to->counter.y = from.counter.y;
  to->counter.z = from.counter.z, to->counter.w = from.counter.w;
  to->block.x = from.block.x, to->block.y = from.block.y, to->block.z = from.block.z, to->block.w = from.block.w;
  to->key.x = from.key.x, to->key.y = from.key.y;
  to->lane = from.lane;
  to->cached_kind = from.cached_kind;
  to->cached_double_kind = from.cached_double_kind;
  to->cached_float = from.cached_float;
  to->cached_double = from.cached_double;
}
}  // namespace cudasim::curand_detail

/// cuRAND's seeding: the seed's halves are salted and multiplied into Marsaglia's published
/// starting words (seed 0 gives his sequence's scrambling), then the state skips to the
/// subsequence and the offset. Built in a local and stored once, as a GPU would.
__host__ __device__ inline void curand_init(unsigned long long seed, unsigned long long subsequence,
                                            unsigned long long offset, curandStateXORWOW_t* state) {
  const unsigned int low = static_cast<unsigned int>(seed) ^ 0xaad26b49u;
  const unsigned int high = static_cast<unsigned int>(seed >> 32) ^ 0xf7dcefddu;
  const unsigned int mixed_low = 1099087573u * low;
  const unsigned int mixed_high = 2591861531u * high;
  curandStateXORWOW_t fresh{};
  fresh.weyl = 6615241u + mixed_high + mixed_low;
  fresh.words[0] = 123456789u + mixed_low;
  fresh.words[1] = 362436069u ^ mixed_low;
  fresh.words[2] = 521288629u + mixed_high;
  fresh.words[3] = 88675123u ^ mixed_high;
  fresh.words[4] = 5783321u + mixed_low;
  skipahead_sequence(subsequence, &fresh);
  skipahead(offset, &fresh);
  cudasim::curand_detail::store_state(state, fresh);
}

__host__ __device__ __forceinline__ unsigned int curand(curandStateXORWOW_t* state) {
  const unsigned int words = cudasim::curand_detail::xorshift_step(state->words);
  state->weyl += 362437u;
  return words + state->weyl;
}

// ---- Philox4_32_10 ------------------------------------------------------------------------------

__host__ __device__ inline void skipahead(unsigned long long n, curandStatePhilox4_32_10_t* state) {
  unsigned long long blocks = n / 4;
  state->lane += static_cast<unsigned int>(n % 4);
  if (state->lane >= 4) {
    state->lane -= 4;
    ++blocks;
  }
  cudasim::curand_detail::advance_counter(state->counter, blocks);
  state->block = cudasim::curand_detail::philox_block(state->counter, state->key);
}

/// Skips n subsequences of 2^66 draws (2^64 blocks).
__host__ __device__ inline void skipahead_sequence(unsigned long long n, curandStatePhilox4_32_10_t* state) {
  cudasim::curand_detail::advance_counter_subsequences(state->counter, n);
  state->block = cudasim::curand_detail::philox_block(state->counter, state->key);
}

/// The key is the seed; the counter starts at the subsequence's first block.
__host__ __device__ inline void curand_init(unsigned long long seed, unsigned long long subsequence,
                                            unsigned long long offset, curandStatePhilox4_32_10_t* state) {
  curandStatePhilox4_32_10_t fresh{};
  fresh.key = make_uint2(static_cast<unsigned int>(seed), static_cast<unsigned int>(seed >> 32));
  skipahead_sequence(subsequence, &fresh);
  skipahead(offset, &fresh);
  cudasim::curand_detail::store_state(state, fresh);
}

namespace cudasim::curand_detail {
__host__ __device__ __forceinline__ unsigned int lane_of(const uint4& block, unsigned int lane) {
  return lane == 0 ? block.x : lane == 1 ? block.y : lane == 2 ? block.z : block.w;
}
/// Moves to the next block of four draws.
__host__ __device__ __forceinline__ void next_block(curandStatePhilox4_32_10_t* state) {
  advance_counter(state->counter, 1);
  state->block = philox_block(state->counter, state->key);
}
}  // namespace cudasim::curand_detail

__host__ __device__ __forceinline__ unsigned int curand(curandStatePhilox4_32_10_t* state) {
  const unsigned int draw = cudasim::curand_detail::lane_of(state->block, state->lane);
  if (++state->lane == 4) {
    state->lane = 0;
    cudasim::curand_detail::next_block(state);
  }
  return draw;
}

/// The next four draws (from the current lane on, into the next block when the lane is not 0).
__host__ __device__ inline uint4 curand4(curandStatePhilox4_32_10_t* state) {
  const uint4 current = state->block;
  const unsigned int lane = state->lane;
  cudasim::curand_detail::next_block(state);
  unsigned int draws[4];
  for (unsigned int i = 0; i < 4; ++i) {
    const unsigned int at = lane + i;
    draws[i] = at < 4 ? cudasim::curand_detail::lane_of(current, at) : cudasim::curand_detail::lane_of(state->block, at - 4);
  }
  return make_uint4(draws[0], draws[1], draws[2], draws[3]);
}

// ---- Distributions ------------------------------------------------------------------------------

__host__ __device__ __forceinline__ float curand_uniform(curandStateXORWOW_t* state) {
  return cudasim::curand_detail::uniform_from_bits(curand(state));
}
__host__ __device__ __forceinline__ float curand_uniform(curandStatePhilox4_32_10_t* state) {
  return cudasim::curand_detail::uniform_from_bits(curand(state));
}
__host__ __device__ inline float4 curand_uniform4(curandStatePhilox4_32_10_t* state) {
  const uint4 x = curand4(state);
  using cudasim::curand_detail::uniform_from_bits;
  return make_float4(uniform_from_bits(x.x), uniform_from_bits(x.y), uniform_from_bits(x.z), uniform_from_bits(x.w));
}

/// XORWOW's doubles take two draws (53 random bits).
__host__ __device__ inline double curand_uniform_double(curandStateXORWOW_t* state) {
  const unsigned int x = curand(state);
  const unsigned int y = curand(state);
  return cudasim::curand_detail::uniform_double_from_two(x, y);
}
/// Philox's single doubles take one draw (32 random bits, x * 2^-32 + 2^-32), as cuRAND's do.
__host__ __device__ inline double curand_uniform_double(curandStatePhilox4_32_10_t* state) {
  return static_cast<double>(curand(state)) * cudasim::curand_detail::kDoubleUnit32 + cudasim::curand_detail::kDoubleUnit32;
}
__host__ __device__ inline double2 curand_uniform2_double(curandStatePhilox4_32_10_t* state) {
  const uint4 x = curand4(state);
  using cudasim::curand_detail::uniform_double_from_two;
  return make_double2(uniform_double_from_two(x.x, x.y), uniform_double_from_two(x.z, x.w));
}

namespace cudasim::curand_detail {
template <class State>
__host__ __device__ inline float2 normal_pair(State* state) {
  const unsigned int x = curand(state);
  const unsigned int y = curand(state);
  return box_muller(x, y);
}
}  // namespace cudasim::curand_detail

namespace cudasim::curand_detail {
/// One value of a Box-Muller pair, the other kept in the state for the next call of the same
/// kind (a call of the other kind, normal after log-normal, starts a new pair, as in cuRAND).
template <class State, class Transform>
__host__ __device__ inline float paired_normal(State* state, CachedValue kind, Transform transform) {
  if (state->cached_kind == kind) {
    state->cached_kind = kNothingCached;
    return state->cached_float;
  }
  const float2 pair = normal_pair(state);
  state->cached_float = transform(pair.y);
  state->cached_kind = kind;
  return transform(pair.x);
}
template <class State, class Transform>
__host__ __device__ inline double paired_normal_double(State* state, CachedValue kind, Transform transform) {
  if (state->cached_double_kind == kind) {
    state->cached_double_kind = kNothingCached;
    return state->cached_double;
  }
  const unsigned int x0 = curand(state);
  const unsigned int x1 = curand(state);
  const unsigned int y0 = curand(state);
  const unsigned int y1 = curand(state);
  const double2 pair = box_muller_double(x0, x1, y0, y1);
  state->cached_double = transform(pair.y);
  state->cached_double_kind = kind;
  return transform(pair.x);
}
struct Unchanged {
  __host__ __device__ float operator()(float z) const { return z; }
  __host__ __device__ double operator()(double z) const { return z; }
};
struct LogNormal {
  double mean, stddev;
  __host__ __device__ float operator()(float z) const {
    return ::expf(static_cast<float>(mean) + static_cast<float>(stddev) * z);
  }
  __host__ __device__ double operator()(double z) const { return ::exp(mean + stddev * z); }
};
}  // namespace cudasim::curand_detail

__host__ __device__ inline float curand_normal(curandStateXORWOW_t* state) {
  using namespace cudasim::curand_detail;
  return paired_normal(state, kCachedNormal, Unchanged{});
}
__host__ __device__ inline float curand_normal(curandStatePhilox4_32_10_t* state) {
  using namespace cudasim::curand_detail;
  return paired_normal(state, kCachedNormal, Unchanged{});
}
__host__ __device__ inline double curand_normal_double(curandStateXORWOW_t* state) {
  using namespace cudasim::curand_detail;
  return paired_normal_double(state, kCachedNormal, Unchanged{});
}
__host__ __device__ inline double curand_normal_double(curandStatePhilox4_32_10_t* state) {
  using namespace cudasim::curand_detail;
  return paired_normal_double(state, kCachedNormal, Unchanged{});
}

/// Both values of a pair at once (nothing cached).
__host__ __device__ inline float2 curand_normal2(curandStateXORWOW_t* state) {
  return cudasim::curand_detail::normal_pair(state);
}
__host__ __device__ inline float2 curand_normal2(curandStatePhilox4_32_10_t* state) {
  return cudasim::curand_detail::normal_pair(state);
}
__host__ __device__ inline float4 curand_normal4(curandStatePhilox4_32_10_t* state) {
  const uint4 x = curand4(state);
  const float2 first = cudasim::curand_detail::box_muller(x.x, x.y);
  const float2 second = cudasim::curand_detail::box_muller(x.z, x.w);
  return make_float4(first.x, first.y, second.x, second.y);
}
__host__ __device__ inline double2 curand_normal2_double(curandStateXORWOW_t* state) {
  const unsigned int x0 = curand(state);
  const unsigned int x1 = curand(state);
  const unsigned int y0 = curand(state);
  const unsigned int y1 = curand(state);
  return cudasim::curand_detail::box_muller_double(x0, x1, y0, y1);
}
__host__ __device__ inline double2 curand_normal2_double(curandStatePhilox4_32_10_t* state) {
  const uint4 x = curand4(state);
  return cudasim::curand_detail::box_muller_double(x.x, x.y, x.z, x.w);
}

/// exp(mean + stddev * z) for a standard normal z.
__host__ __device__ inline float curand_log_normal(curandStateXORWOW_t* state, float mean, float stddev) {
  using namespace cudasim::curand_detail;
  return paired_normal(state, kCachedLogNormal, LogNormal{mean, stddev});
}
__host__ __device__ inline float curand_log_normal(curandStatePhilox4_32_10_t* state, float mean, float stddev) {
  using namespace cudasim::curand_detail;
  return paired_normal(state, kCachedLogNormal, LogNormal{mean, stddev});
}
__host__ __device__ inline double curand_log_normal_double(curandStateXORWOW_t* state, double mean, double stddev) {
  using namespace cudasim::curand_detail;
  return paired_normal_double(state, kCachedLogNormal, LogNormal{mean, stddev});
}
__host__ __device__ inline double curand_log_normal_double(curandStatePhilox4_32_10_t* state, double mean,
                                                           double stddev) {
  using namespace cudasim::curand_detail;
  return paired_normal_double(state, kCachedLogNormal, LogNormal{mean, stddev});
}

namespace cudasim::curand_detail {
/// Knuth's multiplication method: the number of uniforms whose running product stays above
/// e^-lambda. Exact in distribution; takes lambda + 1 draws on average.
template <class State>
__host__ __device__ inline unsigned int poisson_by_products(State* state, float lambda) {
  unsigned int k = 0;
  float product = ::expf(lambda);
  do {
    ++k;
    product *= curand_uniform(state);
  } while (product > 1.0f);
  return k - 1;
}

/// Poisson(lambda): Knuth's method below 64 (cuRAND's choice there, the same draws); up to
/// 4000 a sum of Poisson variables of mean below 64 each (exact in distribution, not cuRAND's
/// values); above, the normal approximation cuRAND uses there.
template <class State>
__host__ __device__ inline unsigned int poisson(State* state, double lambda) {
  constexpr double kKnuthLimit = 64.0;
  if (lambda < kKnuthLimit) return poisson_by_products(state, static_cast<float>(lambda));
  if (lambda > 4000.0) return static_cast<unsigned int>(::sqrt(lambda) * curand_normal_double(state) + lambda + 0.5);
  const int parts = static_cast<int>(lambda / (kKnuthLimit / 2.0));
  const float part = static_cast<float>(lambda / parts);
  unsigned int sum = 0;
  for (int i = 0; i < parts; ++i) sum += poisson_by_products(state, part);
  return sum;
}
}  // namespace cudasim::curand_detail

__host__ __device__ inline unsigned int curand_poisson(curandStateXORWOW_t* state, double lambda) {
  return cudasim::curand_detail::poisson(state, lambda);
}
__host__ __device__ inline unsigned int curand_poisson(curandStatePhilox4_32_10_t* state, double lambda) {
  return cudasim::curand_detail::poisson(state, lambda);
}
