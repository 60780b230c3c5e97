// Tests for exercise 05/05 pipeline_schedule (contract: lessons/05-parallelism-nvlink/pipeline_schedule.hpp).
// Run: ./course test 05/pipeline_schedule

#include "pipeline_schedule.hpp"

#include <cuda_runtime.h>

#include "course_test.hpp"
#include "cuda_check.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace ct = course::test;

#ifdef CUDASIM
// Eight virtual devices: pipelines of 2, 3, 4 and 8 stages each get devices of their own.
static const bool kEightSimDevices = (setenv("CUDASIM_DEVICES", "8", 0), true);
#endif

namespace {

const char* name(PipeKind kind) { return kind == PipeKind::GPipe ? "GPipe" : "1F1B"; }

/// "F0 F1 B0 ..." for failure messages.
std::string show(const std::vector<PipeOp>& order) {
  std::string text;
  for (const PipeOp& op : order) text += (op.forward ? "F" : "B") + std::to_string(op.micro) + " ";
  return text;
}

/// The unsharded model in double: outputs of all samples, and the gradient of every layer.
void model_on_cpu(const std::vector<std::vector<float>>& params, const std::vector<float>& x,
                  const std::vector<float>& t, int samples, int w, std::vector<double>& y,
                  std::vector<std::vector<double>>& grads) {
  const int p = static_cast<int>(params.size());
  grads.assign(p, std::vector<double>(std::size_t(w) * w + w, 0.0));
  y.assign(std::size_t(samples) * w, 0.0);
  for (int r = 0; r < samples; ++r) {
    std::vector<std::vector<double>> acts(p + 1, std::vector<double>(w));
    for (int i = 0; i < w; ++i) acts[0][i] = x[r * w + i];
    for (int s = 0; s < p; ++s)
      for (int o = 0; o < w; ++o) {
        double sum = params[s][w * w + o];
        for (int i = 0; i < w; ++i) sum += double(params[s][o * w + i]) * acts[s][i];
        acts[s + 1][o] = sum > 0 ? sum : 0;
      }
    std::vector<double> dy(w);
    for (int o = 0; o < w; ++o) {
      y[r * w + o] = acts[p][o];
      dy[o] = (acts[p][o] - t[r * w + o]) / samples;
    }
    for (int s = p - 1; s >= 0; --s) {
      std::vector<double> dx(w, 0.0);
      for (int o = 0; o < w; ++o) {
        if (acts[s + 1][o] <= 0) continue;
        grads[s][w * w + o] += dy[o];
        for (int i = 0; i < w; ++i) {
          grads[s][o * w + i] += dy[o] * acts[s][i];
          dx[i] += double(params[s][o * w + i]) * dy[o];
        }
      }
      dy = dx;
    }
  }
}

}  // namespace

TEST(PipelineSchedule, EveryStageRunsEachForwardAndBackwardOnceInAValidOrder) {
  for (PipeKind kind : {PipeKind::GPipe, PipeKind::OneFOneB}) {
    for (int p : {1, 2, 3, 4, 8}) {
      for (int m : {1, 2, 3, 4, 7, 8, 13}) {
        const auto orders = make_schedule(kind, p, m);
        ASSERT_EQ(orders.size(), std::size_t(p)) << name(kind) << ": one order per stage";
        for (int s = 0; s < p; ++s) {
          std::vector<int> f_at(m, -1), b_at(m, -1);
          for (std::size_t k = 0; k < orders[s].size(); ++k) {
            const PipeOp op = orders[s][k];
            ASSERT_TRUE(op.micro >= 0 && op.micro < m) << name(kind) << " stage " << s << ": micro-batch " << op.micro;
            (op.forward ? f_at : b_at)[op.micro] = static_cast<int>(k);
          }
          ASSERT_EQ(orders[s].size(), std::size_t(2 * m))
              << name(kind) << ", p = " << p << ", m = " << m << ", stage " << s << ": " << show(orders[s]);
          for (int i = 0; i < m; ++i)
            ASSERT_TRUE(f_at[i] >= 0 && b_at[i] > f_at[i])
                << name(kind) << ", p = " << p << ", m = " << m << ", stage " << s << ": F" << i << " then B" << i
                << " once each: " << show(orders[s]);
        }
      }
    }
  }
}

TEST(PipelineSchedule, OneFOneBWarmsUpWithPMinusOneMinusSForwards) {
  // p = 4, m = 6, stage 1: two warm-up forwards, then F B F B ..., then the rest of the Bs.
  const auto orders = make_schedule(PipeKind::OneFOneB, 4, 6);
  ASSERT_EQ(orders.size(), 4u);
  EXPECT_EQ(show(orders[1]), "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 B4 B5 ");
  EXPECT_EQ(show(orders[3]), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 ");
  EXPECT_EQ(show(orders[0]), "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5 ");
}

TEST(PipelineSchedule, BubbleIsPMinusOneOverMPlusPMinusOne) {
  // With F and B one unit each both schedules take 2(m+p-1) units instead of 2m.
  for (PipeKind kind : {PipeKind::GPipe, PipeKind::OneFOneB}) {
    for (int p : {2, 3, 4, 8}) {
      for (int m : {1, 3, 4, 8, 13, 32}) {
        const PipeTimeline tl = record_timeline(make_schedule(kind, p, m), 1, 1);
        EXPECT_EQ(tl.makespan, 2 * (m + p - 1)) << name(kind) << ", p = " << p << ", m = " << m;
        EXPECT_NEAR(tl.bubble, double(p - 1) / (m + p - 1), 1e-12)
            << name(kind) << ", p = " << p << ", m = " << m << ": bubble (p-1)/(m+p-1)";
      }
    }
  }
  const PipeTimeline tl = record_timeline(make_schedule(PipeKind::OneFOneB, 4, 8), 1, 2);
  std::printf("[ COURSE   ] 1F1B, p = 4, m = 8, backward twice as long as forward: makespan %d, bubble %.3f "
              "(formula with F=B: %.3f)\n", tl.makespan, tl.bubble, 3.0 / 11.0);
  EXPECT_EQ(tl.makespan, 3 * (8 + 3)) << "(m + p - 1)·(F + B) units";
}

namespace {
/// The rule of record_timeline, applied here step by step: a stage runs its operations in its
/// order, each as soon as the stage is free and its dependency has ended. Per stage, the
/// (start, end) of each operation; empty if the orders deadlock.
std::vector<std::vector<std::pair<int, int>>> as_soon_as_possible(const std::vector<std::vector<PipeOp>>& orders,
                                                                   int forward_time, int backward_time) {
  const int p = static_cast<int>(orders.size());
  int m = 0;
  for (const auto& order : orders) m = std::max(m, static_cast<int>(order.size()) / 2);
  std::vector<std::vector<int>> forward_end(p, std::vector<int>(m, -1)), backward_end(p, std::vector<int>(m, -1));
  std::vector<std::vector<std::pair<int, int>>> placed(p);
  std::vector<int> free_at(p, 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (int s = 0; s < p; ++s) {
      while (placed[s].size() < orders[s].size()) {
        const PipeOp op = orders[s][placed[s].size()];
        const int ready = op.forward ? (s == 0 ? 0 : forward_end[s - 1][op.micro])
                                     : (s == p - 1 ? forward_end[s][op.micro] : backward_end[s + 1][op.micro]);
        if (ready < 0) break;
        const int start = std::max(free_at[s], ready);
        const int end = start + (op.forward ? forward_time : backward_time);
        (op.forward ? forward_end : backward_end)[s][op.micro] = end;
        placed[s].push_back({start, end});
        free_at[s] = end;
        progress = true;
      }
    }
  }
  return placed;
}
}  // namespace

TEST(PipelineSchedule, EveryOperationStartsAsSoonAsItsStageAndItsInputAllow) {
  // The figures come from the timeline, not from the formula: every slot where the rule puts
  // it (stages work at the same time on different micro-batches), the makespan the last end,
  // the bubble the idle share of the stages' time.
  for (PipeKind kind : {PipeKind::GPipe, PipeKind::OneFOneB}) {
    for (auto [p, m, f, b] : std::vector<std::tuple<int, int, int, int>>{{4, 8, 1, 2}, {3, 5, 2, 3}, {2, 1, 1, 1}}) {
      const auto orders = make_schedule(kind, p, m);
      const PipeTimeline tl = record_timeline(orders, f, b);
      const auto expected = as_soon_as_possible(orders, f, b);
      const std::string where = std::string(name(kind)) + ", p = " + std::to_string(p) + ", m = " +
                                std::to_string(m) + ", F = " + std::to_string(f) + ", B = " + std::to_string(b);
      ASSERT_EQ(tl.stages.size(), std::size_t(p)) << where;
      int last_end = 0;
      for (int s = 0; s < p; ++s) {
        ASSERT_EQ(tl.stages[s].size(), expected[s].size()) << where << ", stage " << s;
        for (std::size_t k = 0; k < expected[s].size(); ++k) {
          const PipeSlot& slot = tl.stages[s][k];
          EXPECT_EQ(slot.op.forward, orders[s][k].forward) << where << ", stage " << s << ", slot " << k;
          EXPECT_EQ(slot.op.micro, orders[s][k].micro) << where << ", stage " << s << ", slot " << k;
          EXPECT_EQ(slot.start, expected[s][k].first)
              << where << ", stage " << s << ", slot " << k << ": starts when its stage is free and its input "
              << "has arrived, not later";
          EXPECT_EQ(slot.end, expected[s][k].second) << where << ", stage " << s << ", slot " << k;
          last_end = std::max(last_end, expected[s][k].second);
        }
      }
      EXPECT_EQ(tl.makespan, last_end) << where << ": the makespan is when the last operation ends";
      EXPECT_NEAR(tl.bubble, 1.0 - double(m) * (f + b) / double(last_end), 1e-12)
          << where << ": 1 - busy / (stages x makespan), each stage busy m (F + B)";
    }
  }
}

TEST(PipelineSchedule, OneFOneBStashesAtMostPMinusSMicroBatches) {
  for (int p : {2, 3, 4, 8}) {
    for (int m : {1, 3, 8, 13}) {
      const PipeTimeline gpipe = record_timeline(make_schedule(PipeKind::GPipe, p, m), 1, 1);
      const PipeTimeline ofob = record_timeline(make_schedule(PipeKind::OneFOneB, p, m), 1, 1);
      ASSERT_EQ(gpipe.peak_stash.size(), std::size_t(p));
      ASSERT_EQ(ofob.peak_stash.size(), std::size_t(p));
      for (int s = 0; s < p; ++s) {
        EXPECT_EQ(gpipe.peak_stash[s], m) << "GPipe, p = " << p << ", m = " << m << ", stage " << s
                                          << ": all m micro-batches are stashed before the first backward";
        EXPECT_EQ(ofob.peak_stash[s], std::min(p - s, m)) << "1F1B, p = " << p << ", m = " << m << ", stage " << s;
      }
    }
  }
}

TEST(PipelineSchedule, RecordTimelineRejectsADeadlock) {
  // Stage 0 wants B0 before F0 can have reached stage 1: never possible.
  const std::vector<std::vector<PipeOp>> orders = {{{false, 0}, {true, 0}}, {{true, 0}, {false, 0}}};
  EXPECT_THROW(record_timeline(orders, 1, 1), std::invalid_argument);
}

namespace {

/// Runs `kind` on p ranks over m micro-batches of a fresh model and compares the last stage's
/// outputs and every stage's gradients with the unsharded model. `links`, if given, gets the
/// simulator's link counters of the run alone.
::testing::AssertionResult run_matches_the_unsharded_model(ct::Rng& rng, PipeKind kind, int p, int m,
                                                           course::LinkCounters* links = nullptr,
                                                           bool* distinct_devices = nullptr) {
  const int w = 9, rows = 3;
  course::RankGroup group(p);
  if (distinct_devices != nullptr) *distinct_devices = group.distinct_devices();
  std::vector<std::vector<float>> params;
  course::SymmetricBuffer<float> dparams(group, w * w + w), x(group, std::size_t(m) * rows * w),
      t(group, std::size_t(m) * rows * w), y(group, std::size_t(m) * rows * w), grad(group, w * w + w);
  for (int s = 0; s < p; ++s) {
    params.push_back(rng.uniform(std::size_t(w) * w + w, -0.6f, 0.6f));
    for (int k = w * w; k < w * w + w; ++k) params[s][k] = std::abs(params[s][k]);  // keep units alive
    dparams.upload(s, params[s]);
  }
  const auto hx = rng.uniform(std::size_t(m) * rows * w), ht = rng.uniform(std::size_t(m) * rows * w);
  x.upload(0, hx);
  t.upload(p - 1, ht);
  y.poison();
  grad.poison();
  const PipeTimeline timeline = record_timeline(make_schedule(kind, p, m), 1, 1);
  group.synchronize();
  course::reset_link_counters();
  run_pipeline(group, timeline, w, rows, dparams, x, t, y, grad);
  group.synchronize();
  if (links != nullptr) *links = course::read_link_counters();
  std::vector<double> ey;
  std::vector<std::vector<double>> eg;
  model_on_cpu(params, hx, ht, m * rows, w, ey, eg);
  const std::string where = std::string(name(kind)) + ", p = " + std::to_string(p) + ", m = " + std::to_string(m);
  const auto outputs = ct::all_close_2d(ey, y.download(p - 1), std::size_t(m) * rows, w, 1e-5, 1e-4);
  if (!outputs) return ::testing::AssertionFailure() << where << ": outputs of the last stage (row: sample)\n" << outputs.message();
  for (int s = 0; s < p; ++s) {
    const auto gradients = ct::all_close(eg[s], grad.download(s), 1e-5, 1e-4);
    if (!gradients)
      return ::testing::AssertionFailure() << where << ": gradient of stage " << s << " (W row-major, then b)\n"
                                           << gradients.message();
  }
  return ::testing::AssertionSuccess();
}

}  // namespace

TEST(PipelineSchedule, RunOnTheRanksEqualsTheUnshardedModel) {
  ct::Rng rng;
  for (PipeKind kind : {PipeKind::GPipe, PipeKind::OneFOneB}) {
    for (int p : {2, 3, 4, 8}) {
      for (int m : {1, 5}) ASSERT_TRUE(run_matches_the_unsharded_model(rng, kind, p, m));
    }
  }
}

TEST(PipelineSchedule, OnlyActivationsAndTheirGradientsCrossBetweenNeighbouringStages) {
  // Counted on the simulator, one device per stage: what makes it a pipeline is that each
  // stage keeps its layer and sends only a micro-batch's activations forward to the next stage
  // and their gradients back to the one before: m·rows·w floats each way per boundary, nothing
  // between stages that are not neighbours, and no parameters gathered anywhere.
  ct::Rng rng;
  const int w = 9, rows = 3, m = 5;
  for (PipeKind kind : {PipeKind::GPipe, PipeKind::OneFOneB}) {
    for (int p : {2, 3, 4}) {
      course::LinkCounters links;
      bool distinct = false;
      ASSERT_TRUE(run_matches_the_unsharded_model(rng, kind, p, m, &links, &distinct));
      if (!links.counted) GTEST_SKIP() << links.why_not;
      if (!distinct) GTEST_SKIP() << "needs one device per stage (CUDASIM_DEVICES >= " << p << ")";
      const std::uint64_t boundary = std::uint64_t(m) * rows * w * sizeof(float);
      for (int s = 0; s + 1 < p; ++s) {
        EXPECT_EQ(links.at(s, s + 1), boundary)
            << name(kind) << ", p = " << p << ": bytes from stage " << s << " to stage " << s + 1
            << " (expected the " << m << " micro-batches' activations, " << rows << " x " << w << " floats each)";
        EXPECT_EQ(links.at(s + 1, s), boundary)
            << name(kind) << ", p = " << p << ": bytes from stage " << s + 1 << " back to stage " << s
            << " (expected the gradients of those activations)";
      }
      EXPECT_EQ(links.total(), 2 * std::uint64_t(p - 1) * boundary)
          << name(kind) << ", p = " << p << ": bytes over all links (nothing else crosses)";
    }
  }
}
