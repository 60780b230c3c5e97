/// @file inline_ptx.hpp
/// @brief Inline PTX in device code, run by an interpreter of the instructions that public CUDA
/// code writes by hand.
///
/// nvcc hands `asm("...PTX..." : outputs : inputs : clobbers)` to the PTX assembler; a CPU cannot
/// run that text. In device-only functions the rewrite turns such a statement into a call of
/// `::cudasim::ptx::run`, keeping its parts in place:
///
///     asm volatile("vabsdiff4.u32.u32.u32.add %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
///     ::cudasim::ptx::run("vabsdiff4.u32.u32.u32.add %0, %1, %2, %3;" , ::cudasim::ptx::colon,
///         ::cudasim::ptx::operand("=r", (d)) , ::cudasim::ptx::colon, ::cudasim::ptx::operand("r", (a)), ...);
///
/// A named operand (`[out] "=r"(y)`) becomes `::cudasim::ptx::operand(::cudasim::ptx::Name{"out"},
/// "=r",(y))`, a compile error, as nvcc refuses it.
///
/// `run` reads the PTX when the thread reaches it (once per template and OS thread; the parse is
/// kept), executes it on the operands' values and writes the outputs back, as the asm statement
/// does. Memory instructions are counted and checked as the thread's own accesses; warp votes and
/// shuffles, and `bar.sync 0`, are the simulator's own warp and block barriers. An instruction
/// outside the interpreted subset (docs/simulator.md, "Inline PTX") fails the launch with a
/// message that names it: it never computes a wrong result silently.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace cudasim::ptx {

/// One operand of an asm statement: its constraint ("=r", "+l", "f", "n", ...), its value when
/// the statement starts, and where an output goes.
struct Operand {
  const char* constraint;
  void* address;       ///< the C++ object an output is written to; null for an rvalue
  std::uint64_t bits;  ///< the value's bytes, zero-extended
  unsigned bytes;      ///< sizeof the value
};

/// Captures `value` for constraint `constraint`: an lvalue is kept by address (so an output can
/// be written), any value by its bytes.
template <class T>
Operand operand(const char* constraint, T&& value) {
  using V = std::remove_cv_t<std::remove_reference_t<T>>;
  static_assert(std::is_trivially_copyable_v<V> && sizeof(V) <= 8,
                "an inline PTX operand is a scalar of at most 8 bytes (a register)");
  Operand o{constraint, nullptr, 0, static_cast<unsigned>(sizeof(V))};
  std::memcpy(&o.bits, static_cast<const void*>(&value), sizeof(V));
  if constexpr (std::is_lvalue_reference_v<T> && !std::is_const_v<std::remove_reference_t<T>>)
    o.address = static_cast<void*>(&value);
  return o;
}

/// The `[name]` of a named operand, which nvcc refuses in PTX ("symbolic operand reference not
/// supported"): said at compile time, at the student's line, rather than left to the host
/// assembler's error about an unknown x86 instruction.
struct Name {
  const char* text;
};
template <class T>
Operand operand(Name, const char*, T&&) {
  static_assert(sizeof(T) == 0,
                "cudasim: inline PTX: named operands ([name] \"r\"(x), %[name]) are refused by nvcc (\"symbolic operand "
                "reference not supported\"): number the operands (%0, %1, ...)");
  return {};
}

/// Stands for each ':' of the asm statement, which separates outputs, inputs and clobbers.
struct Colon {};
inline constexpr Colon colon{};

namespace detail {
/// An asm statement's operands, gathered in order: outputs (%0 ...) then inputs.
struct Statement {
  static constexpr unsigned kMaxOperands = 30;  // as GCC's and nvcc's limit
  Operand operands[kMaxOperands];
  unsigned count = 0;
  unsigned outputs = 0;
  int section = 0;  // 1: outputs, 2: inputs, 3: clobbers
  bool memory_clobber = false;
  bool too_many = false;
};
inline void add(Statement& s, Colon) { ++s.section; }
inline void add(Statement& s, const Operand& o) {
  if (s.count == Statement::kMaxOperands) {
    s.too_many = true;
    return;
  }
  s.operands[s.count++] = o;
  if (s.section <= 1) ++s.outputs;
}
inline void add(Statement& s, const char* clobber) {
  if (clobber != nullptr && std::strcmp(clobber, "memory") == 0) s.memory_clobber = true;
}

/// Runs `ptx` for the calling kernel thread (inline_ptx.cpp).
void execute(const char* ptx, Statement& statement);
}  // namespace detail

/// What an `asm` statement in device code becomes (see the file's comment).
template <class... Parts>
inline __attribute__((always_inline)) void run(const char* ptx, Parts&&... parts) {
  detail::Statement statement;
  (detail::add(statement, parts), ...);
  detail::execute(ptx, statement);
}

}  // namespace cudasim::ptx
