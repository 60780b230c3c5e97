// Tests for exercise 02/01 roofline_model (contract: lessons/02-roofline/roofline_model.hpp).
// Run: ./course test 02/roofline_model
//
// The expected values are worked out by hand in the comments (datasheet numbers from the
// table in the contract), so a failure shows which step of the arithmetic went wrong.

#include "roofline_model.hpp"

#include <cuda_runtime.h>

#include "course_test.hpp"
#include "cuda_check.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace ct = course::test;
using roofline::Bound;
using roofline::Precision;

namespace {

const roofline::Machine& machine(const char* name) {
  const roofline::Machine* m = roofline::find_machine(name);
  if (m == nullptr) throw std::logic_error(std::string("test bug: no machine ") + name);
  return *m;
}

const char* bound_name(Bound b) {
  switch (b) {
    case Bound::compute: return "compute";
    case Bound::memory: return "memory";
    default: return "unknown";
  }
}

/// |actual - expected| <= rel * |expected|, with a message naming what was computed.
::testing::AssertionResult close_to(double expected, double actual, double rel,
                                    const std::string& what) {
  if (std::isfinite(actual) && std::fabs(actual - expected) <= rel * std::fabs(expected))
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << what << ": expected " << expected << ", got " << actual << " (relative tolerance "
         << rel << ")";
}

}  // namespace

TEST(RooflineModel, RidgePointsMatchHandComputedValues) {
  struct Case { const char* machine; Precision precision; double ridge; };
  // ridge = peak / bandwidth, e.g. H100 bf16: 989.4e12 / 3.35e12 = 295.3 FLOP/B.
  const Case cases[] = {
      {"H100", Precision::bf16, 295.34},   {"H200", Precision::bf16, 206.13},
      {"A100", Precision::bf16, 153.02},   {"T4", Precision::bf16, 203.13},
      {"TPUv5e", Precision::bf16, 240.54}, {"TPUv6e", Precision::bf16, 559.76},
      {"H100", Precision::fp32, 19.970},   {"H200", Precision::fp32, 13.938},
      {"A100", Precision::fp32, 9.5635},   {"T4", Precision::fp32, 25.313},
  };
  for (const Case& c : cases) {
    EXPECT_TRUE(close_to(c.ridge, roofline::ridge_point(machine(c.machine), c.precision), 1e-3,
                         std::string("ridge_point(") + c.machine +
                             (c.precision == Precision::fp32 ? ", fp32)" : ", bf16)")));
  }
}

TEST(RooflineModel, RidgePointsAgreeWithTheSeedsRulesOfThumb) {
  // "TPU v5e: batch > 240 tokens", "GPU: batch > ~300 tokens", and the H200's more
  // generous memory moves its ridge down to ~206.
  EXPECT_TRUE(close_to(240.0, roofline::ridge_point(machine("TPUv5e"), Precision::bf16), 0.01,
                       "TPU v5e ridge"));
  EXPECT_TRUE(close_to(300.0, roofline::ridge_point(machine("H100"), Precision::bf16), 0.02,
                       "H100 ridge"));
  EXPECT_TRUE(close_to(206.0, roofline::ridge_point(machine("h200"), Precision::bf16), 0.01,
                       "H200 ridge"));
}

TEST(RooflineModel, RidgePointNeedsAPublishedPeak) {
  // TPUs publish no FP32 rate (0 in the table): there is no ridge to compute.
  EXPECT_THROW(roofline::ridge_point(machine("TPUv5e"), Precision::fp32), std::invalid_argument);
  EXPECT_THROW(roofline::attainable_flops(machine("TPUv6e"), Precision::fp32, 1.0),
               std::invalid_argument);
}

TEST(ArithmeticIntensity, OfTheSeedsDotProductAndMatmul) {
  // Dot product, n = 4096, bf16: 2*4096 = 8192 FLOPs; (2*4096 + 1) * 2 = 16386 bytes.
  const auto dot = roofline::dot_product_workload(4096, 2);
  EXPECT_TRUE(close_to(8192.0, dot.flops, 1e-12, "dot product FLOPs"));
  EXPECT_TRUE(close_to(16386.0, dot.bytes, 1e-12, "dot product bytes"));
  EXPECT_TRUE(close_to(8192.0 / 16386.0, roofline::arithmetic_intensity(dot.flops, dot.bytes),
                       1e-12, "dot product intensity (~0.5)"));
  // Matmul, 4096^3, bf16: 2*4096^3 = 137,438,953,472 FLOPs; 3 * 4096^2 * 2 = 100,663,296 B.
  const auto mm = roofline::matmul_workload(4096, 4096, 4096, 2);
  EXPECT_TRUE(close_to(137438953472.0, mm.flops, 1e-12, "matmul FLOPs"));
  EXPECT_TRUE(close_to(100663296.0, mm.bytes, 1e-12, "matmul bytes"));
  EXPECT_TRUE(close_to(4096.0 / 3.0, roofline::arithmetic_intensity(mm.flops, mm.bytes), 1e-12,
                       "matmul intensity (~1365)"));
  // A rectangular one, fp32: m=128, n=256, k=64: 2*128*256*64 = 4,194,304 FLOPs;
  // (128*64 + 64*256 + 128*256) * 4 = 229,376 bytes.
  const auto rect = roofline::matmul_workload(128, 256, 64, 4);
  EXPECT_TRUE(close_to(4194304.0, rect.flops, 1e-12, "128x256x64 matmul FLOPs"));
  EXPECT_TRUE(close_to(229376.0, rect.bytes, 1e-12, "128x256x64 matmul bytes"));
}

TEST(ArithmeticIntensity, HandlesZeroAndRejectsNonsense) {
  EXPECT_EQ(roofline::arithmetic_intensity(0.0, 800.0), 0.0) << "a pure copy does no FLOPs";
  EXPECT_EQ(roofline::arithmetic_intensity(0.0, 0.0), 0.0) << "nothing at all";
  EXPECT_EQ(roofline::arithmetic_intensity(10.0, 0.0), std::numeric_limits<double>::infinity())
      << "FLOPs on data already on chip";
  EXPECT_THROW(roofline::arithmetic_intensity(-1.0, 8.0), std::invalid_argument);
  EXPECT_THROW(roofline::arithmetic_intensity(1.0, -8.0), std::invalid_argument);
  EXPECT_THROW(roofline::arithmetic_intensity(std::nan(""), 8.0), std::invalid_argument);
}

TEST(Predict, DotProductOnH100IsMemoryBound) {
  const auto p = roofline::predict(roofline::dot_product_workload(4096, 2), machine("H100"),
                                   Precision::bf16);
  // memory: 16386 B / 3.35e12 B/s = 4.8913e-9 s; compute: 8192 / 989.4e12 = 8.280e-12 s.
  EXPECT_TRUE(close_to(4.8913e-9, p.memory_seconds, 1e-4, "memory_seconds"));
  EXPECT_TRUE(close_to(8.2798e-12, p.compute_seconds, 1e-4, "compute_seconds"));
  EXPECT_TRUE(close_to(4.8913e-9, p.seconds, 1e-4, "seconds"));
  EXPECT_TRUE(close_to(0.49994, p.intensity, 1e-4, "intensity"));
  // It reaches 8192 / 4.8913e-9 = 1.675e12 FLOP/s: 0.17% of the bf16 peak.
  EXPECT_TRUE(close_to(1.6748e12, p.flops_per_second, 1e-3, "flops_per_second"));
  EXPECT_EQ(p.bound, Bound::memory) << "got " << bound_name(p.bound);
}

TEST(Predict, LargeMatmulOnH100IsComputeBound) {
  const auto p = roofline::predict(roofline::matmul_workload(4096, 4096, 4096, 2),
                                   machine("H100"), Precision::bf16);
  // compute: 1.37439e11 / 989.4e12 = 1.38911e-4 s; memory: 1.00663e8 / 3.35e12 = 3.0049e-5 s.
  EXPECT_TRUE(close_to(1.38911e-4, p.compute_seconds, 1e-4, "compute_seconds"));
  EXPECT_TRUE(close_to(3.00487e-5, p.memory_seconds, 1e-4, "memory_seconds"));
  EXPECT_TRUE(close_to(1.38911e-4, p.seconds, 1e-4, "seconds"));
  EXPECT_TRUE(close_to(989.4e12, p.flops_per_second, 1e-9, "flops_per_second (the peak)"));
  EXPECT_EQ(p.bound, Bound::compute) << "got " << bound_name(p.bound);
}

TEST(Predict, TheH200MovesTheRidgeAKernelCrosses) {
  // Intensity 250 FLOP/B lies between the H200's ridge (206) and the H100's (295): the
  // same kernel is memory-bound on an H100 and compute-bound on an H200, whose compute is
  // the same but whose memory is 4.8 / 3.35 = 1.43x faster.
  const roofline::Workload work{250.0e9, 1.0e9};
  const auto h100 = roofline::predict(work, machine("H100"), Precision::bf16);
  const auto h200 = roofline::predict(work, machine("H200"), Precision::bf16);
  EXPECT_EQ(h100.bound, Bound::memory) << "H100: got " << bound_name(h100.bound);
  EXPECT_EQ(h200.bound, Bound::compute) << "H200: got " << bound_name(h200.bound);
  // H100: 1e9 / 3.35e12 = 2.9851e-4 s. H200: 250e9 / 989.4e12 = 2.5268e-4 s.
  EXPECT_TRUE(close_to(2.98507e-4, h100.seconds, 1e-4, "H100 seconds"));
  EXPECT_TRUE(close_to(2.52678e-4, h200.seconds, 1e-4, "H200 seconds"));
}

TEST(Predict, EmptyWorkloadTakesNoTime) {
  const auto p = roofline::predict({0.0, 0.0}, machine("A100"), Precision::fp32);
  EXPECT_EQ(p.seconds, 0.0);
  EXPECT_EQ(p.compute_seconds, 0.0);
  EXPECT_EQ(p.memory_seconds, 0.0);
  EXPECT_EQ(p.flops_per_second, 0.0);
  EXPECT_EQ(p.intensity, 0.0);
  EXPECT_EQ(p.bound, Bound::memory) << "by convention; got " << bound_name(p.bound);
}

TEST(Predict, RejectsNegativeInputsAndMissingPeaks) {
  EXPECT_THROW(roofline::predict({-1.0, 8.0}, machine("H100"), Precision::fp32),
               std::invalid_argument);
  EXPECT_THROW(roofline::predict({1.0, -8.0}, machine("H100"), Precision::fp32),
               std::invalid_argument);
  EXPECT_THROW(roofline::predict({1.0, std::numeric_limits<double>::infinity()}, machine("H100"),
                                 Precision::fp32),
               std::invalid_argument);
  EXPECT_THROW(roofline::predict({1.0e9, 1.0e9}, machine("TPUv5e"), Precision::fp32),
               std::invalid_argument);
}

TEST(Predict, RandomWorkloadsFollowTheRoofOnEveryMachine) {
  // Fresh workloads from 1 kFLOP to 1 PFLOP and 1 kB to 1 TB, on every machine and
  // precision that has a peak; the expectation is the model's definition, in long double.
  // Stops at the first wrong workload (one clear message rather than hundreds).
  ct::Rng rng;
  int checked = 0;
  for (const roofline::Machine& m : roofline::kMachines) {
    for (Precision precision : {Precision::fp32, Precision::bf16}) {
      const double peak = precision == Precision::fp32 ? m.fp32_flops : m.bf16_flops;
      if (peak <= 0.0) continue;
      for (int i = 0; i < 20; ++i) {
        const roofline::Workload w{std::pow(10.0, rng.scalar(3.0, 15.0)),
                                   std::pow(10.0, rng.scalar(3.0, 12.0))};
        const long double tc = (long double)w.flops / peak;
        const long double tm = (long double)w.bytes / m.memory_bytes_per_s;
        const double time = static_cast<double>(std::max(tc, tm));
        const Bound bound = tc >= tm ? Bound::compute : Bound::memory;
        const auto p = roofline::predict(w, m, precision);
        const std::string what = std::string(m.name) + " " +
                                 (precision == Precision::fp32 ? "fp32" : "bf16") +
                                 ", flops = " + std::to_string(w.flops) +
                                 ", bytes = " + std::to_string(w.bytes) + ": ";
        const ::testing::AssertionResult checks[] = {
            close_to(time, p.seconds, 1e-12, what + "seconds"),
            close_to(w.flops / w.bytes, p.intensity, 1e-12, what + "intensity"),
            close_to(w.flops / time, p.flops_per_second, 1e-12, what + "FLOP/s"),
            // The point lies on the roof: attainable(intensity) is the FLOP/s it reaches.
            close_to(w.flops / time, roofline::attainable_flops(m, precision, p.intensity), 1e-9,
                     what + "attainable_flops"),
        };
        bool ok = true;
        for (const auto& c : checks) {
          EXPECT_TRUE(c) << ct::seed_note();
          ok = ok && bool(c);
        }
        EXPECT_EQ(p.bound, bound) << what << "expected " << bound_name(bound) << ", got "
                                  << bound_name(p.bound) << "\n" << ct::seed_note();
        if (!ok || p.bound != bound) return;
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 200);
}

TEST(AttainableFlops, IsTheLowerOfTheTwoRoofs) {
  const auto& h200 = machine("H200");
  // Below the fp32 ridge (13.9): bandwidth x intensity. 0.25 FLOP/B x 4.8e12 B/s = 1.2e12.
  EXPECT_TRUE(close_to(1.2e12, roofline::attainable_flops(h200, Precision::fp32, 0.25), 1e-12,
                       "H200 fp32 at 0.25 FLOP/B"));
  // Above it: the flat roof, 66.9e12.
  EXPECT_TRUE(close_to(66.9e12, roofline::attainable_flops(h200, Precision::fp32, 1000.0), 1e-12,
                       "H200 fp32 at 1000 FLOP/B"));
  EXPECT_EQ(roofline::attainable_flops(h200, Precision::fp32, 0.0), 0.0);
  EXPECT_THROW(roofline::attainable_flops(h200, Precision::fp32, -1.0), std::invalid_argument);
}
