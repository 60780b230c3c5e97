// The interpreter behind inline PTX (cudasim/inline_ptx.hpp): parses an asm statement's PTX once
// per template and OS thread, then runs it for the calling kernel thread on the statement's
// operands. The subset is what hand-written PTX in public CUDA code uses: moves and special
// registers, integer and floating-point arithmetic, bit manipulation, comparisons and
// predicates, conversions, SIMD byte differences (vabsdiff4), loads and stores, fences, warp
// votes and shuffles, and the block barrier. Everything else fails the launch with a message.
#include <algorithm>
#include <atomic>
#include <bit>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cudasim/device_functions.hpp"
#include "cudasim/execution.hpp"
#include "cudasim/inline_ptx.hpp"
#include "cudasim/narrow_float.hpp"
#include "internal.hpp"

namespace cudasim::ptx::detail {
namespace {

using cudasim::detail::KernelFault;

[[noreturn]] void refuse(const std::string& why) {
  throw KernelFault{cudaErrorIllegalInstruction,
                    "inline PTX: " + why + " (the simulator interprets a subset of PTX: docs/simulator.md, "
                    "\"Inline PTX\")"};
}

// ---- parsing -------------------------------------------------------------------------------------

/// A type suffix: b, u, s, f or p(red), and its width in bits.
struct Type {
  char kind = 0;
  int bits = 0;
  bool valid() const { return kind != 0; }
  bool is_float() const { return kind == 'f'; }
  bool is_signed() const { return kind == 's'; }
};

Type type_of(std::string_view m) {
  if (m == "pred") return {'p', 1};
  if (m.size() < 2 || (m[0] != 'b' && m[0] != 'u' && m[0] != 's' && m[0] != 'f')) return {};
  int bits = 0;
  for (char c : m.substr(1)) {
    if (c < '0' || c > '9') return {};
    bits = bits * 10 + (c - '0');
  }
  if (bits != 8 && bits != 16 && bits != 32 && bits != 64) return {};
  if (m[0] == 'f' && bits == 8) return {};
  return {m[0], bits};
}

/// One instruction: `@p op.mod.mod a, b, c;`.
struct Instruction {
  std::string text;  // as written, for messages
  std::string guard;
  bool guard_negated = false;
  std::string op;
  std::vector<std::string> modifiers;
  std::vector<Type> types;  // the modifiers that are types, in order
  std::vector<std::string> args;
  bool has(std::string_view m) const { return std::find(modifiers.begin(), modifiers.end(), m) != modifiers.end(); }
};

/// A register declared with `.reg`: its name and type.
struct Declaration {
  std::string name;
  Type type;
};

struct Program {
  std::string source;
  std::vector<Instruction> instructions;
  std::vector<Declaration> registers;
};

std::string trim(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

/// The asm template as PTX: operand references kept as %N, "%%" as "%", comments removed.
std::string template_text(const char* ptx) {
  std::string out;
  for (const char* p = ptx; *p != '\0'; ++p) {
    if (p[0] == '%' && p[1] == '%') {
      out += '%';
      ++p;
    } else if (p[0] == '/' && p[1] == '/') {
      while (p[1] != '\0' && p[1] != '\n') ++p;
    } else if (p[0] == '/' && p[1] == '*') {
      p += 2;
      while (p[0] != '\0' && !(p[0] == '*' && p[1] == '/')) ++p;
      if (p[0] == '\0') break;
      ++p;
    } else {
      out += *p;
    }
  }
  return out;
}

/// Splits at top-level commas (not inside [] or {}).
std::vector<std::string> split_arguments(std::string_view s) {
  std::vector<std::string> args;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    const char c = i < s.size() ? s[i] : ',';
    if (c == '[' || c == '{') ++depth;
    if (c == ']' || c == '}') --depth;
    if (c == ',' && depth == 0) {
      std::string arg = trim(s.substr(start, i - start));
      if (!arg.empty() || i < s.size()) args.push_back(std::move(arg));
      start = i + 1;
    }
  }
  return args;
}

/// `.reg .u32 a, b<4>;`: the registers it declares.
void declare(std::string_view text, Program& program) {
  std::string rest = trim(text.substr(4));  // after ".reg"
  if (rest.empty() || rest[0] != '.') refuse("a .reg declaration without a type: `" + std::string(text) + "`");
  std::size_t space = rest.find_first_of(" \t\n");
  if (space == std::string::npos) refuse("a .reg declaration without a name: `" + std::string(text) + "`");
  std::string type_name = rest.substr(1, space - 1);
  std::string names = rest.substr(space);
  if (type_name.rfind("v2", 0) == 0 || type_name.rfind("v4", 0) == 0)
    refuse("vector registers are not interpreted: `" + std::string(text) + "`");
  const Type type = type_of(type_name);
  if (!type.valid()) refuse("a register type ." + type_name + " is not interpreted");
  for (const std::string& name : split_arguments(names)) {
    const std::size_t angle = name.find('<');
    if (angle == std::string::npos) {
      program.registers.push_back({name, type});
      continue;
    }
    const int count = std::atoi(name.c_str() + angle + 1);
    if (count <= 0 || count > 4096) refuse("a register array `" + name + "`");
    for (int i = 0; i < count; ++i) program.registers.push_back({name.substr(0, angle) + std::to_string(i), type});
  }
}

Instruction parse_instruction(std::string_view text) {
  Instruction in;
  in.text = trim(text);
  std::string_view s = in.text;
  if (!s.empty() && s[0] == '@') {
    const std::size_t end = s.find_first_of(" \t\n");
    if (end == std::string_view::npos) refuse("a guard without an instruction: `" + in.text + "`");
    std::string_view g = s.substr(1, end - 1);
    if (!g.empty() && g[0] == '!') {
      in.guard_negated = true;
      g.remove_prefix(1);
    }
    in.guard = std::string(g);
    s = std::string_view(in.text).substr(end);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s[0]))) s.remove_prefix(1);
  }
  const std::size_t end = s.find_first_of(" \t\n");
  const std::string_view opcode = s.substr(0, end);
  std::size_t dot = opcode.find('.');
  in.op = std::string(opcode.substr(0, dot));
  while (dot != std::string_view::npos) {
    const std::size_t next = opcode.find('.', dot + 1);
    std::string m(opcode.substr(dot + 1, next == std::string_view::npos ? std::string_view::npos : next - dot - 1));
    // Cache qualifiers such as .L1::no_allocate and .L2::128B carry "::" inside a modifier.
    if (next != std::string_view::npos && opcode.substr(dot + 1).find("::") != std::string_view::npos &&
        opcode.find("::", dot) < next) {
      const std::size_t after = opcode.find('.', opcode.find("::", dot) + 2);
      m = std::string(opcode.substr(dot + 1, after == std::string_view::npos ? std::string_view::npos
                                                                              : after - dot - 1));
      dot = after;
    } else {
      dot = next;
    }
    if (const Type t = type_of(m); t.valid()) in.types.push_back(t);
    in.modifiers.push_back(std::move(m));
  }
  if (end != std::string_view::npos) in.args = split_arguments(s.substr(end));
  return in;
}

std::unique_ptr<Program> parse(const char* ptx) {
  auto program = std::make_unique<Program>();
  program->source = ptx;
  const std::string text = template_text(ptx);
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    const char c = i < text.size() ? text[i] : ';';
    if (c != ';' && c != '{' && c != '}') continue;
    const std::string statement = trim(std::string_view(text).substr(start, i - start));
    // Braces open and close a block only between statements; inside one they hold a vector.
    if (c != ';' && !statement.empty()) continue;
    start = i + 1;
    if (statement.empty()) continue;
    if (statement.rfind(".reg", 0) == 0) {
      declare(statement, *program);
    } else if (statement[0] == '.') {
      refuse("the directive `" + statement + "` is not interpreted");
    } else if (statement.back() == ':') {
      refuse("labels and branches are not interpreted: `" + statement + "`");
    } else {
      program->instructions.push_back(parse_instruction(statement));
    }
  }
  return program;
}

/// The parsed program of `ptx`, kept per template address and OS thread (a template whose text
/// changed at the same address is parsed again).
const Program& program_of(const char* ptx) {
  thread_local std::unordered_map<const char*, std::unique_ptr<Program>> cache;
  std::unique_ptr<Program>& kept = cache[ptx];
  if (!kept || kept->source != ptx) kept = parse(ptx);
  return *kept;
}

// ---- running ---------------------------------------------------------------------------------------

std::uint64_t mask_of(int bits) { return bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1; }

/// `raw` as a value of `t`: its low bits, sign-extended for signed types.
std::uint64_t normalise(std::uint64_t raw, Type t) {
  const std::uint64_t v = raw & mask_of(t.bits);
  if (t.is_signed() && t.bits < 64 && ((v >> (t.bits - 1)) & 1)) return v | ~mask_of(t.bits);
  return v;
}

float as_f32(std::uint64_t bits) { return std::bit_cast<float>(static_cast<std::uint32_t>(bits)); }
double as_f64(std::uint64_t bits) { return std::bit_cast<double>(bits); }
std::uint64_t f32_bits(float v) { return std::bit_cast<std::uint32_t>(v); }
std::uint64_t f64_bits(double v) { return std::bit_cast<std::uint64_t>(v); }

/// A float value of type `t` (f16, f32 or f64) as a double.
double float_value(std::uint64_t bits, Type t) {
  if (t.bits == 16) return cudasim::detail::narrow_to_float<cudasim::detail::Binary16>(static_cast<std::uint16_t>(bits));
  if (t.bits == 32) return as_f32(bits);
  return as_f64(bits);
}
/// `v` as the bits of float type `t`, rounded to nearest.
std::uint64_t float_bits(double v, Type t) {
  if (t.bits == 16) return cudasim::detail::double_to_narrow<cudasim::detail::Binary16>(v);
  if (t.bits == 32) return f32_bits(static_cast<float>(v));
  return f64_bits(v);
}

class Machine {
 public:
  Machine(const Program& program, Statement& statement, const void* pc)
      : program_(program), statement_(statement), pc_(pc) {
    for (unsigned i = 0; i < statement.count; ++i) values_[i] = statement.operands[i].bits;
    for (const Declaration& d : program.registers) registers_[d.name] = 0;
  }

  void run() {
    for (const Instruction& in : program_.instructions) {
      current_ = &in;
      if (!in.guard.empty() && (read_register(in.guard) != 0) == in.guard_negated) continue;
      step(in);
    }
    for (unsigned i = 0; i < statement_.outputs; ++i) {
      Operand& o = statement_.operands[i];
      if (o.address == nullptr) fail("output %" + std::to_string(i) + " is not an lvalue that can be written");
      // The compiler stores an output after the asm: into memory where the lvalue is memory.
      cudasim::detail::count_device_access(o.address, o.bytes, true, pc_);
      cudasim::detail::raw_memcpy(o.address, &values_[i], o.bytes);
    }
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    refuse(current_ != nullptr ? "`" + current_->text + "`: " + why : why);
  }

  // -- operands --
  std::uint64_t& operand_slot(std::string_view name) {
    // %N: the statement's operand N.
    if (name.size() >= 2 && name[0] == '%' && std::isdigit(static_cast<unsigned char>(name[1]))) {
      const unsigned n = static_cast<unsigned>(std::atoi(std::string(name.substr(1)).c_str()));
      if (n >= statement_.count) fail("%" + std::to_string(n) + " names no operand of the asm statement");
      return values_[n];
    }
    const auto found = registers_.find(std::string(name));
    if (found == registers_.end()) fail("`" + std::string(name) + "` is not a declared register or an operand");
    return found->second;
  }
  std::uint64_t read_register(std::string_view name) { return operand_slot(name); }

  std::uint64_t special_register(std::string_view name) {
    const std::uint64_t linear = threadIdx.x + static_cast<std::uint64_t>(blockDim.x) *
                                                   (threadIdx.y + static_cast<std::uint64_t>(blockDim.y) * threadIdx.z);
    const unsigned lane = static_cast<unsigned>(linear % 32);
    const auto component = [&](const uint3& v, std::string_view n) -> std::uint64_t {
      return n == "x" ? v.x : n == "y" ? v.y : v.z;
    };
    const auto dim_component = [&](const dim3& v, std::string_view n) -> std::uint64_t {
      return n == "x" ? v.x : n == "y" ? v.y : v.z;
    };
    const std::size_t dot = name.find('.');
    const std::string_view base = name.substr(0, dot);
    const std::string_view axis = dot == std::string_view::npos ? "x" : name.substr(dot + 1);
    if (base == "%laneid") return lane;
    if (base == "%warpid") return linear / 32;
    if (base == "%nwarpid") return 64;
    if (base == "%smid") return (blockIdx.x + static_cast<std::uint64_t>(gridDim.x) * blockIdx.y) % 132;
    if (base == "%nsmid") return 132;
    if (base == "%tid") return component(threadIdx, axis);
    if (base == "%ntid") return dim_component(blockDim, axis);
    if (base == "%ctaid") return component(blockIdx, axis);
    if (base == "%nctaid") return dim_component(gridDim, axis);
    if (base == "%clock") return static_cast<std::uint32_t>(clock64());
    if (base == "%clock64") return static_cast<std::uint64_t>(clock64());
    if (base == "%globaltimer")
      return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                            std::chrono::system_clock::now().time_since_epoch())
                                            .count());
    if (base == "%lanemask_eq") return std::uint32_t{1} << lane;
    if (base == "%lanemask_lt") return (std::uint32_t{1} << lane) - 1;
    if (base == "%lanemask_le") return static_cast<std::uint32_t>((std::uint64_t{2} << lane) - 1);
    if (base == "%lanemask_gt") return ~static_cast<std::uint32_t>((std::uint64_t{2} << lane) - 1);
    if (base == "%lanemask_ge") return ~((std::uint32_t{1} << lane) - 1);
    fail("the special register " + std::string(name) + " is not interpreted");
  }

  static bool is_special(std::string_view name) {
    static const char* const kSpecial[] = {"%laneid", "%warpid", "%nwarpid", "%smid", "%nsmid", "%tid", "%ntid",
                                           "%ctaid", "%nctaid", "%clock", "%clock64", "%globaltimer", "%lanemask_eq",
                                           "%lanemask_lt", "%lanemask_le", "%lanemask_gt", "%lanemask_ge"};
    const std::string_view base = name.substr(0, name.find('.'));
    for (const char* s : kSpecial)
      if (base == s) return true;
    return name.rfind("%envreg", 0) == 0 || name.rfind("%pm", 0) == 0;
  }

  /// The raw bits of source operand `arg` (register, operand, immediate, special register).
  std::uint64_t raw(std::string_view arg, Type t) {
    if (arg.empty()) fail("an empty operand");
    if (arg[0] == '!') return raw(arg.substr(1), t) == 0 ? 1 : 0;
    if (arg == "WARP_SZ") return 32;
    if (arg[0] == '%' && !std::isdigit(static_cast<unsigned char>(arg[1])) && is_special(arg))
      return special_register(arg);
    if (std::isdigit(static_cast<unsigned char>(arg[0])) || arg[0] == '-' || arg[0] == '+') return immediate(arg, t);
    return operand_slot(arg);
  }

  std::uint64_t immediate(std::string_view arg, Type t) {
    const std::string s(arg);
    if (s.size() == 10 && (s.rfind("0f", 0) == 0 || s.rfind("0F", 0) == 0)) {
      const std::uint64_t bits = std::strtoull(s.c_str() + 2, nullptr, 16);
      return t.is_float() && t.bits == 64 ? f64_bits(as_f32(bits)) : bits;
    }
    if (s.size() == 18 && (s.rfind("0d", 0) == 0 || s.rfind("0D", 0) == 0)) {
      const std::uint64_t bits = std::strtoull(s.c_str() + 2, nullptr, 16);
      return t.is_float() && t.bits == 32 ? f32_bits(static_cast<float>(as_f64(bits))) : bits;
    }
    const bool decimal_float = s.find_first_of(".eE") != std::string::npos && s.rfind("0x", 0) != 0;
    if (t.is_float() || decimal_float) {
      const double v = std::strtod(s.c_str(), nullptr);
      return t.is_float() ? float_bits(v, t) : static_cast<std::uint64_t>(static_cast<long long>(v));
    }
    char* end = nullptr;
    const bool negative = s[0] == '-';
    std::uint64_t v = std::strtoull(s.c_str() + (negative || s[0] == '+' ? 1 : 0), &end, 0);
    if (end != nullptr && (*end == 'U' || *end == 'u')) ++end;
    if (end == nullptr || *end != '\0') fail("`" + s + "` is not a number");
    return negative ? ~v + 1 : v;
  }

  std::uint64_t get(std::string_view arg, Type t) { return normalise(raw(arg, t), t); }
  double getf(std::string_view arg, Type t) { return float_value(raw(arg, t), t); }
  void set(std::string_view dst, std::uint64_t bits, Type t) {
    if (dst == "_") return;
    if (dst.empty() || dst[0] == '!') fail("`" + std::string(dst) + "` cannot be written");
    operand_slot(dst) = bits & mask_of(t.bits);
  }
  void setf(std::string_view dst, double v, Type t) { set(dst, float_bits(v, t), t); }

  const std::string& arg(const Instruction& in, std::size_t i) const {
    if (i >= in.args.size()) fail("expects more operands");
    return in.args[i];
  }
  Type type(const Instruction& in, std::size_t i = 0) const {
    if (i >= in.types.size()) fail("has no type suffix the interpreter reads");
    return in.types[i];
  }

  // -- memory --
  /// The address of `[base]`, `[base+offset]` or `[base-offset]`.
  char* address(std::string_view operand, Type address_type) {
    if (operand.size() < 2 || operand.front() != '[' || operand.back() != ']') fail("expects a [address] operand");
    std::string inner = trim(operand.substr(1, operand.size() - 2));
    long long offset = 0;
    const std::size_t plus = inner.find_first_of("+-", 1);
    if (plus != std::string::npos) {
      std::string off = trim(std::string_view(inner).substr(plus + 1));
      offset = static_cast<long long>(immediate(off, {'s', 64}));
      if (inner[plus] == '-') offset = -offset;
      inner = trim(std::string_view(inner).substr(0, plus));
    }
    const std::uint64_t base = raw(inner, address_type);
    return reinterpret_cast<char*>(static_cast<std::uintptr_t>(base + static_cast<std::uint64_t>(offset)));
  }

  void check_state_space(const Instruction& in, std::string_view dst_or_addr) {
    if (in.has("shared") || in.has("shared::cta") || in.has("shared::cluster") || in.has("local") ||
        in.has("const") || in.has("param")) {
      // A shared-window (32-bit) address is what cvta.to.shared makes; the simulator's shared
      // memory has only generic addresses.
      const std::string inner = trim(dst_or_addr.substr(1, dst_or_addr.size() - 2));
      std::string base = inner.substr(0, inner.find_first_of("+-", 1));
      base = trim(base);
      if (base.size() >= 2 && base[0] == '%' && std::isdigit(static_cast<unsigned char>(base[1]))) {
        const unsigned n = static_cast<unsigned>(std::atoi(base.c_str() + 1));
        if (n < statement_.count && statement_.operands[n].bytes < 8)
          fail("a 32-bit shared-window address (from cvta.to.shared or __cvta_generic_to_shared) is not simulated: "
               "pass the generic pointer with an \"l\" operand");
      }
      if (!in.has("shared") && !in.has("shared::cta"))
        fail("loads and stores of the ." + std::string(in.has("local") ? "local" : in.has("const") ? "const" : "param") +
             " space are not interpreted");
    }
  }

  void load_store(const Instruction& in, bool store) {
    const Type t = type(in);
    int vector = 1;
    if (in.has("v2")) vector = 2;
    if (in.has("v4")) vector = 4;
    const std::string& value_arg = store ? arg(in, 1) : arg(in, 0);
    const std::string& address_arg = store ? arg(in, 0) : arg(in, 1);
    check_state_space(in, address_arg);
    char* at = address(address_arg, {'u', 64});
    std::vector<std::string> values;
    if (vector == 1) {
      values.push_back(value_arg);
    } else {
      if (value_arg.size() < 2 || value_arg.front() != '{') fail("a vector access needs {a, b, ...}");
      values = split_arguments(std::string_view(value_arg).substr(1, value_arg.size() - 2));
      if (static_cast<int>(values.size()) != vector) fail("the vector has the wrong number of elements");
    }
    const unsigned bytes = static_cast<unsigned>(t.bits / 8);
    const bool ordered = in.has("acquire") || in.has("release") || in.has("relaxed") || in.has("volatile");
    for (int i = 0; i < vector; ++i) {
      char* element = at + static_cast<std::size_t>(i) * bytes;
      cudasim::detail::count_device_access(element, bytes, store, pc_);
      if (store) {
        const std::uint64_t v = raw(values[i], t);
        if (ordered) {
          std::atomic_thread_fence(std::memory_order_seq_cst);
        }
        cudasim::detail::raw_memcpy(element, &v, bytes);
      } else {
        std::uint64_t v = 0;
        cudasim::detail::raw_memcpy(&v, element, bytes);
        if (ordered) std::atomic_thread_fence(std::memory_order_seq_cst);
        // A narrow load into a wider register extends by the load's type.
        set(values[i], normalise(v, t), {t.kind, 64});
      }
    }
  }

  // -- arithmetic --
  void integer_binary(const Instruction& in, const std::string& op, Type t) {
    const std::uint64_t a = get(arg(in, 1), t), b = get(arg(in, 2), t);
    const bool s = t.is_signed();
    const auto sa = static_cast<long long>(a), sb = static_cast<long long>(b);
    std::uint64_t r = 0;
    if (op == "add" || op == "sub") {
      r = op == "add" ? a + b : a - b;
      if (in.has("sat") && s) {
        const __int128 wide = op == "add" ? static_cast<__int128>(sa) + sb : static_cast<__int128>(sa) - sb;
        const __int128 hi = static_cast<__int128>(mask_of(t.bits - 1)), lo = -hi - 1;
        r = static_cast<std::uint64_t>(static_cast<long long>(std::clamp(wide, lo, hi)));
      }
    } else if (op == "mul") {
      if (in.has("hi")) {
        if (t.bits == 64)
          r = s ? static_cast<std::uint64_t>((static_cast<__int128>(sa) * sb) >> 64)
                : static_cast<std::uint64_t>((static_cast<unsigned __int128>(a) * b) >> 64);
        else
          r = s ? static_cast<std::uint64_t>((sa * sb) >> t.bits) : (a * b) >> t.bits;
      } else if (in.has("wide")) {
        r = s ? static_cast<std::uint64_t>(sa * sb) : a * b;
        set(arg(in, 0), r, {t.kind, 2 * t.bits});
        return;
      } else {
        r = a * b;
      }
    } else if (op == "div" || op == "rem") {
      if (b == 0) {
        r = op == "div" ? mask_of(t.bits) : a;  // as the hardware leaves it: unspecified, not a trap
      } else if (s) {
        r = static_cast<std::uint64_t>(op == "div" ? sa / sb : sa % sb);
      } else {
        r = op == "div" ? a / b : a % b;
      }
    } else if (op == "min") {
      r = s ? static_cast<std::uint64_t>(std::min(sa, sb)) : std::min(a, b);
    } else if (op == "max") {
      r = s ? static_cast<std::uint64_t>(std::max(sa, sb)) : std::max(a, b);
    } else if (op == "and") {
      r = a & b;
    } else if (op == "or") {
      r = a | b;
    } else if (op == "xor") {
      r = a ^ b;
    } else {
      fail("the integer operation " + op + " is not interpreted");
    }
    set(arg(in, 0), r, t);
  }

  void float_binary(const Instruction& in, const std::string& op, Type t) {
    const double a = getf(arg(in, 1), t), b = getf(arg(in, 2), t);
    double r = 0.0;
    if (t.bits == 32) {  // computed in single precision, as the hardware rounds each operation
      const float fa = static_cast<float>(a), fb = static_cast<float>(b);
      if (op == "add") r = fa + fb;
      else if (op == "sub") r = fa - fb;
      else if (op == "mul") r = fa * fb;
      else if (op == "div") r = fa / fb;
      else if (op == "min") r = std::fmin(fa, fb);
      else if (op == "max") r = std::fmax(fa, fb);
      else fail("the float operation " + op + " is not interpreted");
    } else {
      if (op == "add") r = a + b;
      else if (op == "sub") r = a - b;
      else if (op == "mul") r = a * b;
      else if (op == "div") r = a / b;
      else if (op == "min") r = std::fmin(a, b);
      else if (op == "max") r = std::fmax(a, b);
      else fail("the float operation " + op + " is not interpreted");
    }
    if (in.has("sat")) r = std::clamp(r, 0.0, 1.0);
    setf(arg(in, 0), r, t);
  }

  void multiply_add(const Instruction& in, Type t) {
    if (t.is_float()) {
      const double a = getf(arg(in, 1), t), b = getf(arg(in, 2), t), c = getf(arg(in, 3), t);
      double r = t.bits == 32 ? std::fma(static_cast<float>(a), static_cast<float>(b), static_cast<float>(c))
                              : std::fma(a, b, c);
      if (in.has("sat")) r = std::clamp(r, 0.0, 1.0);
      setf(arg(in, 0), r, t);
      return;
    }
    const std::uint64_t a = get(arg(in, 1), t), b = get(arg(in, 2), t);
    const bool s = t.is_signed();
    if (in.has("wide")) {
      const Type wide{t.kind, 2 * t.bits};
      const std::uint64_t c = get(arg(in, 3), wide);
      set(arg(in, 0), (s ? static_cast<std::uint64_t>(static_cast<long long>(a) * static_cast<long long>(b)) : a * b) + c,
          wide);
      return;
    }
    const std::uint64_t c = get(arg(in, 3), t);
    std::uint64_t product;
    if (in.has("hi")) {
      product = t.bits == 64 ? (s ? static_cast<std::uint64_t>((static_cast<__int128>(static_cast<long long>(a)) *
                                                                 static_cast<long long>(b)) >> 64)
                                  : static_cast<std::uint64_t>((static_cast<unsigned __int128>(a) * b) >> 64))
                             : (s ? static_cast<std::uint64_t>((static_cast<long long>(a) * static_cast<long long>(b)) >>
                                                               t.bits)
                                  : (a * b) >> t.bits);
    } else {
      product = a * b;
    }
    set(arg(in, 0), product + c, t);
  }

  void unary(const Instruction& in, const std::string& op, Type t) {
    if (t.is_float()) {
      const double a = getf(arg(in, 1), t);
      const bool single = t.bits == 32;
      const float fa = static_cast<float>(a);
      double r;
      if (op == "abs") r = std::fabs(a);
      else if (op == "neg") r = -a;
      else if (op == "sqrt") r = single ? std::sqrt(fa) : std::sqrt(a);
      else if (op == "rsqrt") r = single ? 1.0f / std::sqrt(fa) : 1.0 / std::sqrt(a);
      else if (op == "rcp") r = single ? 1.0f / fa : 1.0 / a;
      else if (op == "ex2") r = single ? std::exp2(fa) : std::exp2(a);
      else if (op == "lg2") r = single ? std::log2(fa) : std::log2(a);
      else if (op == "sin") r = single ? std::sin(fa) : std::sin(a);
      else if (op == "cos") r = single ? std::cos(fa) : std::cos(a);
      else if (op == "tanh") r = single ? std::tanh(fa) : std::tanh(a);
      else fail("the float operation " + op + " is not interpreted");
      if (in.has("sat")) r = std::clamp(r, 0.0, 1.0);
      setf(arg(in, 0), r, t);
      return;
    }
    const std::uint64_t a = get(arg(in, 1), t);
    const std::uint64_t m = mask_of(t.bits);
    std::uint64_t r;
    if (op == "abs") r = static_cast<long long>(a) < 0 ? ~a + 1 : a;
    else if (op == "neg") r = ~a + 1;
    else if (op == "not") r = t.kind == 'p' ? (a == 0) : ~a;
    else if (op == "cnot") r = a == 0 ? 1 : 0;
    else if (op == "popc") r = static_cast<std::uint64_t>(std::popcount(a & m));
    else if (op == "clz") r = static_cast<std::uint64_t>(std::countl_zero(a & m) - (64 - t.bits));
    else if (op == "brev") {
      r = 0;
      for (int i = 0; i < t.bits; ++i)
        if ((a >> i) & 1) r |= std::uint64_t{1} << (t.bits - 1 - i);
    } else if (op == "bfind") {
      // The position of the most significant bit that differs from the sign (signed) or is set.
      std::uint64_t v = a & m;
      if (t.is_signed() && ((v >> (t.bits - 1)) & 1)) v = ~v & m;
      r = v == 0 ? 0xffffffffu : static_cast<std::uint64_t>(63 - std::countl_zero(v));
      if (v != 0 && in.has("shiftamt")) r = static_cast<std::uint64_t>(t.bits - 1) - r;
      set(arg(in, 0), r, {'u', 32});
      return;
    } else fail("the operation " + op + " is not interpreted");
    // popc and clz write a u32 whatever the source's width.
    set(arg(in, 0), r, op == "popc" || op == "clz" ? Type{'u', 32} : t);
  }

  void shift(const Instruction& in, const std::string& op, Type t) {
    const std::uint64_t a = get(arg(in, 1), t);
    const std::uint64_t n = get(arg(in, 2), {'u', 32});
    std::uint64_t r;
    if (op == "shl") r = n >= static_cast<std::uint64_t>(t.bits) ? 0 : a << n;
    else if (t.is_signed())
      r = static_cast<std::uint64_t>(static_cast<long long>(a) >> std::min<std::uint64_t>(n, 63));
    else r = n >= static_cast<std::uint64_t>(t.bits) ? 0 : a >> n;
    set(arg(in, 0), r, t);
  }

  /// shf.l/shf.r.wrap/clamp.b32 d, a, b, c: the 64-bit b:a shifted by c, 32 bits of it.
  void funnel_shift(const Instruction& in) {
    const std::uint64_t a = get(arg(in, 1), {'u', 32}), b = get(arg(in, 2), {'u', 32});
    std::uint64_t n = get(arg(in, 3), {'u', 32});
    n = in.has("clamp") ? std::min<std::uint64_t>(n, 32) : n & 31;
    const std::uint64_t joined = (b << 32) | a;
    const std::uint64_t r = in.has("l") ? (joined << n) >> 32 : joined >> n;
    set(arg(in, 0), r, {'u', 32});
  }

  void bit_field(const Instruction& in, const std::string& op, Type t) {
    if (op == "bfe") {
      const std::uint64_t a = get(arg(in, 1), t);
      const std::uint64_t pos = get(arg(in, 2), {'u', 32}) & 0xff, len = get(arg(in, 3), {'u', 32}) & 0xff;
      std::uint64_t r = 0;
      const int bits = t.bits;
      for (std::uint64_t i = 0; i < len && i < static_cast<std::uint64_t>(bits); ++i) {
        const std::uint64_t src = std::min<std::uint64_t>(pos + i, bits - 1);
        const std::uint64_t bit = pos + i < static_cast<std::uint64_t>(bits) ? (a >> src) & 1
                                                                              : (t.is_signed() ? (a >> (bits - 1)) & 1 : 0);
        r |= bit << i;
      }
      if (t.is_signed() && len > 0 && len < static_cast<std::uint64_t>(bits)) {
        const std::uint64_t top = (r >> (len - 1)) & 1;
        if (top) r |= ~mask_of(static_cast<int>(len));
      }
      set(arg(in, 0), r, t);
    } else {  // bfi d, a, b, pos, len: a's low len bits into b at pos
      const std::uint64_t a = get(arg(in, 1), t), b = get(arg(in, 2), t);
      const std::uint64_t pos = get(arg(in, 3), {'u', 32}) & 0xff, len = get(arg(in, 4), {'u', 32}) & 0xff;
      std::uint64_t r = b;
      for (std::uint64_t i = 0; i < len && pos + i < static_cast<std::uint64_t>(t.bits); ++i) {
        const std::uint64_t bit = (a >> i) & 1;
        r = (r & ~(std::uint64_t{1} << (pos + i))) | (bit << (pos + i));
      }
      set(arg(in, 0), r, t);
    }
  }

  /// prmt.b32 d, a, b, c: each byte of d picked from the eight bytes of b:a by a nibble of c.
  void permute(const Instruction& in) {
    if (in.modifiers.size() > 1) fail("prmt's modes (f4e, b4e, rc8, ...) are not interpreted");
    const std::uint64_t a = get(arg(in, 1), {'u', 32}), b = get(arg(in, 2), {'u', 32});
    const std::uint64_t c = get(arg(in, 3), {'u', 32});
    const std::uint64_t bytes = (b << 32) | a;
    std::uint64_t r = 0;
    for (int i = 0; i < 4; ++i) {
      const unsigned selector = (c >> (4 * i)) & 0xf;
      std::uint64_t byte = (bytes >> (8 * (selector & 7))) & 0xff;
      if (selector & 8) byte = (byte & 0x80) ? 0xff : 0;  // replicate the sign bit
      r |= byte << (8 * i);
    }
    set(arg(in, 0), r, {'u', 32});
  }

  /// lop3.b32 d, a, b, c, lut: any function of three inputs, given by its truth table.
  void lop3(const Instruction& in) {
    const std::uint64_t a = get(arg(in, 1), {'u', 32}), b = get(arg(in, 2), {'u', 32});
    const std::uint64_t c = get(arg(in, 3), {'u', 32});
    const std::uint64_t lut = get(arg(in, 4), {'u', 32}) & 0xff;
    std::uint64_t r = 0;
    for (int i = 0; i < 32; ++i) {
      const unsigned index = (((a >> i) & 1) << 2) | (((b >> i) & 1) << 1) | ((c >> i) & 1);
      r |= ((lut >> index) & 1) << i;
    }
    set(arg(in, 0), r, {'u', 32});
  }

  bool compare(const std::string& cmp, Type t, std::string_view x, std::string_view y) {
    if (t.is_float()) {
      const double a = getf(x, t), b = getf(y, t);
      const bool unordered = std::isnan(a) || std::isnan(b);
      if (cmp == "num") return !unordered;
      if (cmp == "nan") return unordered;
      const bool u = cmp.size() == 3 && cmp.back() == 'u';
      const std::string base = u ? cmp.substr(0, 2) : cmp;
      if (unordered) return u;
      if (base == "eq") return a == b;
      if (base == "ne") return a != b;
      if (base == "lt") return a < b;
      if (base == "le") return a <= b;
      if (base == "gt") return a > b;
      if (base == "ge") return a >= b;
      fail("the comparison " + cmp + " is not interpreted");
    }
    const std::uint64_t a = get(x, t), b = get(y, t);
    const bool s = t.is_signed();
    const auto sa = static_cast<long long>(a), sb = static_cast<long long>(b);
    if (cmp == "eq") return a == b;
    if (cmp == "ne") return a != b;
    if (cmp == "lt") return s ? sa < sb : a < b;
    if (cmp == "le") return s ? sa <= sb : a <= b;
    if (cmp == "gt") return s ? sa > sb : a > b;
    if (cmp == "ge") return s ? sa >= sb : a >= b;
    if (cmp == "lo") return a < b;
    if (cmp == "ls") return a <= b;
    if (cmp == "hi") return a > b;
    if (cmp == "hs") return a >= b;
    fail("the comparison " + cmp + " is not interpreted");
  }

  /// setp.cmp{.bool}.type p[|q], a, b[, {!}c].
  void set_predicate(const Instruction& in) {
    if (in.modifiers.empty()) fail("setp needs a comparison");
    const Type t = type(in);
    bool r = compare(in.modifiers[0], t, arg(in, 1), arg(in, 2));
    std::string combine;
    for (const char* b : {"and", "or", "xor"})
      if (in.has(b)) combine = b;
    bool q = !r;
    if (!combine.empty()) {
      const bool c = raw(arg(in, 3), {'p', 1}) != 0;
      const auto apply = [&](bool v) { return combine == "and" ? v && c : combine == "or" ? v || c : v != c; };
      q = apply(!r);
      r = apply(r);
    }
    const std::string& dst = arg(in, 0);
    const std::size_t bar = dst.find('|');
    set(trim(dst.substr(0, bar)), r ? 1 : 0, {'p', 1});
    if (bar != std::string::npos) set(trim(std::string_view(dst).substr(bar + 1)), q ? 1 : 0, {'p', 1});
  }

  void convert(const Instruction& in) {
    if (in.types.size() < 2) fail("cvt needs a destination and a source type");
    const Type d = in.types[0], s = in.types[1];
    std::string rounding;
    for (const char* m : {"rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi"})
      if (in.has(m)) rounding = m;
    const bool saturate = in.has("sat");
    if (s.is_float()) {
      double v = getf(arg(in, 1), s);
      const char mode = rounding.empty() ? (d.is_float() ? 'n' : 'z') : rounding[1];
      if (!d.is_float() || rounding.size() == 3) {
        v = mode == 'n' ? std::nearbyint(v) : mode == 'z' ? std::trunc(v) : mode == 'm' ? std::floor(v) : std::ceil(v);
      }
      if (d.is_float()) {
        if (saturate) v = std::clamp(v, 0.0, 1.0);
        if (d.bits == 32 && s.bits == 64 && mode != 'n') fail("cvt to f32 rounding other than to nearest");
        setf(arg(in, 0), v, d);
        return;
      }
      // Float to integer: NaN gives 0, out-of-range values saturate (as PTX defines).
      const double lo = d.is_signed() ? -std::ldexp(1.0, d.bits - 1) : 0.0;
      const double hi = d.is_signed() ? std::ldexp(1.0, d.bits - 1) - 1 : std::ldexp(1.0, d.bits) - 1;
      std::uint64_t r;
      if (std::isnan(v)) r = 0;
      else if (v <= lo) r = d.is_signed() ? static_cast<std::uint64_t>(static_cast<long long>(lo)) : 0;
      else if (v >= hi) r = d.is_signed() ? static_cast<std::uint64_t>(static_cast<long long>(hi)) : mask_of(d.bits);
      else r = d.is_signed() ? static_cast<std::uint64_t>(static_cast<long long>(v)) : static_cast<std::uint64_t>(v);
      set(arg(in, 0), r, d);
      return;
    }
    const std::uint64_t v = get(arg(in, 1), s);
    if (d.is_float()) {
      const double f = s.is_signed() ? static_cast<double>(static_cast<long long>(v)) : static_cast<double>(v);
      if (s.bits == 64 && d.bits == 64 && std::fabs(f) > 9007199254740992.0)
        fail("cvt of a 64-bit integer beyond 2^53 to f64");
      setf(arg(in, 0), d.bits == 32 ? static_cast<double>(static_cast<float>(f)) : f, d);
      return;
    }
    std::uint64_t r = v;
    if (saturate) {
      const long long sv = static_cast<long long>(v);
      if (d.is_signed()) {
        const long long hi = static_cast<long long>(mask_of(d.bits - 1)), lo = -hi - 1;
        r = static_cast<std::uint64_t>(s.is_signed() ? std::clamp(sv, lo, hi)
                                                     : static_cast<long long>(std::min<std::uint64_t>(v, hi)));
      } else {
        r = s.is_signed() && sv < 0 ? 0 : std::min(v, mask_of(d.bits));
      }
    }
    set(arg(in, 0), normalise(r, d), {d.kind, 64});
  }

  /// vabsdiff4 d, a, b, c: |a - b| of each of the four bytes, summed with c (.add) or kept per byte.
  void byte_differences(const Instruction& in) {
    if (in.types.size() < 3) fail("vabsdiff4 needs its three types");
    const bool signed_a = in.types[1].is_signed(), signed_b = in.types[2].is_signed();
    const std::uint64_t a = get(arg(in, 1), {'u', 32}), b = get(arg(in, 2), {'u', 32});
    const std::uint64_t c = get(arg(in, 3), {'u', 32});
    const auto lane = [](std::uint64_t v, int i, bool s) -> long long {
      const unsigned byte = (v >> (8 * i)) & 0xff;
      return s ? static_cast<signed char>(byte) : static_cast<long long>(byte);
    };
    std::uint64_t r = 0, sum = 0;
    for (int i = 0; i < 4; ++i) {
      const long long diff = std::llabs(lane(a, i, signed_a) - lane(b, i, signed_b));
      sum += static_cast<std::uint64_t>(diff);
      r |= (static_cast<std::uint64_t>(diff) & 0xff) << (8 * i);
    }
    if (in.has("add")) r = sum + c;
    else if (in.has("min") || in.has("max")) fail("vabsdiff4's .min and .max are not interpreted");
    set(arg(in, 0), r, {'u', 32});
  }

  // -- warps and blocks --
  void shuffle(const Instruction& in) {
    if (!in.has("sync")) fail("shfl without .sync (removed in sm_70)");
    const std::string& dst = arg(in, 0);
    if (dst.find('|') != std::string::npos) fail("shfl's predicate output is not interpreted");
    using cudasim::detail::WarpOp;
    WarpOp op;
    if (in.has("up")) op = WarpOp::ShflUp;
    else if (in.has("down")) op = WarpOp::ShflDown;
    else if (in.has("bfly")) op = WarpOp::ShflXor;
    else if (in.has("idx")) op = WarpOp::ShflIndex;
    else fail("shfl needs a mode (up, down, bfly, idx)");
    const std::uint64_t value = get(arg(in, 1), {'u', 32});
    const int lane = static_cast<int>(get(arg(in, 2), {'u', 32}));
    const std::uint64_t c = get(arg(in, 3), {'u', 32});
    const unsigned mask = static_cast<unsigned>(get(arg(in, 4), {'u', 32}));
    const int width = 32 - static_cast<int>((c >> 8) & 0x1f);
    const std::uint64_t r = cudasim::detail::warp_collective(op, mask, value, lane, width, "inline PTX", 0);
    set(dst, r, {'u', 32});
  }

  void vote(const Instruction& in) {
    if (!in.has("sync")) fail("vote without .sync (removed in sm_70)");
    using cudasim::detail::WarpOp;
    const bool predicate = raw(arg(in, 1), {'p', 1}) != 0;
    const unsigned mask = static_cast<unsigned>(get(arg(in, 2), {'u', 32}));
    if (in.has("ballot")) {
      set(arg(in, 0), cudasim::detail::warp_collective(WarpOp::Ballot, mask, predicate, 0, 32, "inline PTX", 0),
          {'u', 32});
    } else if (in.has("all") || in.has("any") || in.has("uni")) {
      const WarpOp op = in.has("any") ? WarpOp::Any : WarpOp::All;
      bool r = cudasim::detail::warp_collective(op, mask, predicate, 0, 32, "inline PTX", 0) != 0;
      if (in.has("uni"))
        r = r || cudasim::detail::warp_collective(WarpOp::All, mask, !predicate, 0, 32, "inline PTX", 0) != 0;
      set(arg(in, 0), r ? 1 : 0, {'p', 1});
    } else {
      fail("vote needs a mode (all, any, uni, ballot)");
    }
  }

  void barrier(const Instruction& in) {
    if (in.args.size() != 1 || get(arg(in, 0), {'u', 32}) != 0)
      fail("only the whole block's barrier 0 is interpreted (bar.sync 0, as __syncthreads)");
    cudasim::detail::block_barrier(cudasim::detail::BarrierKind::Plain, 0, "inline PTX", 0);
  }

  void step(const Instruction& in) {
    const std::string& op = in.op;
    if (op == "mov") {
      const Type t = type(in);
      const std::string& src = arg(in, 1);
      const std::string& dst = arg(in, 0);
      if (!src.empty() && src[0] == '{') {  // pack: {lo, ..., hi}
        const auto parts = split_arguments(std::string_view(src).substr(1, src.size() - 2));
        const int each = t.bits / static_cast<int>(parts.size());
        std::uint64_t r = 0;
        for (std::size_t i = 0; i < parts.size(); ++i) r |= get(parts[i], {'b', each}) << (each * i);
        set(dst, r, t);
      } else if (!dst.empty() && dst[0] == '{') {  // unpack
        const auto parts = split_arguments(std::string_view(dst).substr(1, dst.size() - 2));
        const int each = t.bits / static_cast<int>(parts.size());
        const std::uint64_t v = get(src, t);
        for (std::size_t i = 0; i < parts.size(); ++i) set(parts[i], v >> (each * i), {'b', each});
      } else {
        set(dst, get(src, t), t);
      }
    } else if (op == "add" || op == "sub" || op == "mul" || op == "div" || op == "rem" || op == "min" ||
               op == "max" || op == "and" || op == "or" || op == "xor") {
      const Type t = type(in);
      if (t.is_float()) float_binary(in, op, t);
      else if (t.kind == 'p') {
        const bool a = raw(arg(in, 1), t) != 0, b = raw(arg(in, 2), t) != 0;
        set(arg(in, 0), op == "and" ? a && b : op == "or" ? a || b : a != b, t);
      } else integer_binary(in, op, t);
    } else if (op == "mad" || op == "fma") {
      multiply_add(in, type(in));
    } else if (op == "abs" || op == "neg" || op == "not" || op == "cnot" || op == "popc" || op == "clz" ||
               op == "brev" || op == "bfind" || op == "sqrt" || op == "rsqrt" || op == "rcp" || op == "ex2" ||
               op == "lg2" || op == "sin" || op == "cos" || op == "tanh") {
      unary(in, op, type(in));
    } else if (op == "shl" || op == "shr") {
      shift(in, op, type(in));
    } else if (op == "shf") {
      funnel_shift(in);
    } else if (op == "bfe" || op == "bfi") {
      bit_field(in, op, type(in));
    } else if (op == "prmt") {
      permute(in);
    } else if (op == "lop3") {
      lop3(in);
    } else if (op == "setp") {
      set_predicate(in);
    } else if (op == "selp") {
      const Type t = type(in);
      set(arg(in, 0), raw(arg(in, 3), {'p', 1}) != 0 ? raw(arg(in, 1), t) : raw(arg(in, 2), t), t);
    } else if (op == "cvt") {
      convert(in);
    } else if (op == "cvta") {
      // Generic and global addresses are the same on the simulator; a shared-window address is not.
      if (in.has("shared")) fail("shared-window addresses (cvta.to.shared) are not simulated");
      set(arg(in, 0), get(arg(in, 1), {'u', 64}), {'u', 64});
    } else if (op == "vabsdiff4") {
      byte_differences(in);
    } else if (op == "ld" || op == "ldu") {
      load_store(in, false);
    } else if (op == "st") {
      load_store(in, true);
    } else if (op == "membar" || op == "fence") {
      std::atomic_thread_fence(std::memory_order_seq_cst);
    } else if (op == "prefetch" || op == "prefetchu") {
      // A hint: nothing to do on the simulator.
    } else if (op == "shfl") {
      shuffle(in);
    } else if (op == "vote") {
      vote(in);
    } else if (op == "bar" || op == "barrier") {
      barrier(in);
    } else if (op == "nanosleep") {
      __nanosleep(static_cast<unsigned>(get(arg(in, 0), {'u', 32})));
    } else if (op == "trap") {
      throw cudasim::detail::KernelTrap{"trap; in inline PTX"};
    } else {
      fail("the instruction " + op + " is not interpreted");
    }
  }

  const Program& program_;
  Statement& statement_;
  const void* pc_;
  const Instruction* current_ = nullptr;
  std::uint64_t values_[Statement::kMaxOperands] = {};
  std::map<std::string, std::uint64_t, std::less<>> registers_;
};

}  // namespace

void execute(const char* ptx, Statement& statement) {
  const void* pc = __builtin_return_address(0);
  if (statement.too_many) refuse("more than 30 operands in one asm statement");
  Machine(program_of(ptx), statement, pc).run();
}

}  // namespace cudasim::ptx::detail
