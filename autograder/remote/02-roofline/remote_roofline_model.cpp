// The contract of roofline_model, as the judge and the worker exchange it (../course_remote.hpp).
#include "roofline_model.hpp"

#include "course_remote.hpp"

#include <deque>

namespace course {
namespace remote {

/// A Machine holds two strings by pointer, which mean nothing in the other process. One of
/// kMachines crosses as its index (each side has the same table), any other as its fields.
template <>
struct Marshal<roofline::Machine> {
  static void put(Writer& out, const roofline::Machine& machine) {
    for (std::size_t i = 0; i < roofline::kMachineCount; ++i) {
      if (&machine == &roofline::kMachines[i]) {
        out.put<std::int64_t>(static_cast<std::int64_t>(i));
        return;
      }
    }
    out.put<std::int64_t>(-1);
    out.put_string(machine.name ? machine.name : "");
    out.put_string(machine.description ? machine.description : "");
    out.put(machine.fp32_flops);
    out.put(machine.bf16_flops);
    out.put(machine.memory_bytes_per_s);
  }
  static roofline::Machine get(Reader& in) { return *get_pointer(in); }

  /// The machine read back, as a pointer that stays valid for the whole program: into
  /// kMachines, or to a copy kept here with its strings.
  static const roofline::Machine* get_pointer(Reader& in) {
    const auto index = in.get<std::int64_t>();
    if (index >= 0) {
      if (static_cast<std::uint64_t>(index) >= roofline::kMachineCount) throw ProtocolError("no such machine");
      return &roofline::kMachines[index];
    }
    static std::deque<std::string> strings;
    static std::deque<roofline::Machine> copies;
    strings.push_back(in.get_string());
    const char* name = strings.back().c_str();
    strings.push_back(in.get_string());
    const char* description = strings.back().c_str();
    const double fp32 = in.get<double>(), bf16 = in.get<double>(), memory = in.get<double>();
    copies.push_back(roofline::Machine{name, description, fp32, bf16, memory});
    return &copies.back();
  }
};

/// find_machine's result: null, or a machine as above.
template <>
struct Marshal<const roofline::Machine*> {
  static void put(Writer& out, const roofline::Machine* machine) {
    out.put<std::uint8_t>(machine != nullptr);
    if (machine != nullptr) Marshal<roofline::Machine>::put(out, *machine);
  }
  static const roofline::Machine* get(Reader& in) {
    if (in.get<std::uint8_t>() == 0) return nullptr;
    return Marshal<roofline::Machine>::get_pointer(in);
  }
};

}  // namespace remote
}  // namespace course

using roofline::Machine;
using roofline::Precision;
using roofline::Prediction;
using roofline::Workload;

namespace roofline {
COURSE_REMOTE_FUNCTION(const Machine*, find_machine, (const std::string& name), (name))
COURSE_REMOTE_FUNCTION(double, peak_flops, (const Machine& machine, Precision precision), (machine, precision))
COURSE_REMOTE_FUNCTION(double, arithmetic_intensity, (double flops, double bytes), (flops, bytes))
COURSE_REMOTE_FUNCTION(double, ridge_point, (const Machine& machine, Precision precision), (machine, precision))
COURSE_REMOTE_FUNCTION(double, attainable_flops, (const Machine& machine, Precision precision, double intensity),
                       (machine, precision, intensity))
COURSE_REMOTE_FUNCTION(Prediction, predict, (const Workload& work, const Machine& machine, Precision precision),
                       (work, machine, precision))
COURSE_REMOTE_FUNCTION(Workload, dot_product_workload, (double n, double element_bytes), (n, element_bytes))
COURSE_REMOTE_FUNCTION(Workload, matmul_workload, (double m, double n, double k, double element_bytes),
                       (m, n, k, element_bytes))
}  // namespace roofline
