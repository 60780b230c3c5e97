/// @file pipeline_schedule.hpp
/// @brief Contract of exercise 05/05 `pipeline_schedule`: GPipe and 1F1B schedules of a
/// p-stage pipeline over m micro-batches, their recorded timeline, bubble and activation
/// memory, and a run on the ranks equal to the unsharded model.
///
/// Implemented by `exercises/05-parallelism-nvlink/05_pipeline_schedule.cu`, tested by
/// `autograder/tests/05-parallelism-nvlink/test_pipeline_schedule.cpp`.
///
/// The model: p layers of width w, `y = relu(W_s x + b_s)`, layer s on stage (rank) s; the
/// loss is 1/(2·B) Σ |y - t|² over all B = m·rows samples. A batch is cut into m micro-batches
/// of `rows` samples. F(i) is the forward pass of micro-batch i on a stage, B(i) its backward
/// pass. F(i) on stage s needs F(i) of stage s-1; B(i) on stage s needs B(i) of stage s+1
/// (the last stage: its own F(i)). Between its F(i) and B(i) a stage keeps micro-batch i's
/// activations (its stash).
///
/// - **GPipe** (Huang et al. 2019): every stage runs F(0..m-1), then B(0..m-1).
///   Stage s stashes all m micro-batches at once.
/// - **1F1B** (PipeDream-Flush, Narayanan et al. 2021): stage s runs min(p-1-s, m) forward
///   passes to fill the pipeline (warm-up), then alternates F and B (steady state: one
///   forward, one backward), then runs the remaining backward passes (cool-down).
///   Stage s never stashes more than min(p - s, m) micro-batches.
/// With every F and B taking one time unit, both take 2(m+p-1) units where the ideal is 2m:
/// the bubble is (p-1)/(m+p-1) of the time (or (p-1)/m of the ideal time).
#pragma once

#include <cuda_runtime.h>

#include "ranks.hpp"

#include <vector>

/// Which schedule.
enum class PipeKind { GPipe, OneFOneB };

/// One operation of a stage: the forward or backward pass of one micro-batch.
struct PipeOp {
  bool forward;  ///< true: F(micro), false: B(micro)
  int micro;     ///< micro-batch, 0 <= micro < m
};

/// For every stage s < `stages`, the order in which it runs its 2·`micro` operations (each
/// F(i) and B(i) once), as described above. Backward passes run in micro-batch order.
/// @throws std::invalid_argument for stages < 1 or micro < 1
std::vector<std::vector<PipeOp>> make_schedule(PipeKind kind, int stages, int micro);

/// One operation placed in time.
struct PipeSlot {
  PipeOp op;
  int start;  ///< time unit the operation starts
  int end;    ///< start + its duration
};

/// A schedule run in time: per stage its operations with start and end times, and the
/// figures that make or break a schedule.
struct PipeTimeline {
  std::vector<std::vector<PipeSlot>> stages;  ///< per stage, in the order it runs them
  int makespan = 0;                           ///< end of the last operation (start: 0)
  double bubble = 0.0;                        ///< idle fraction: 1 - busy / (stages · makespan)
  std::vector<int> peak_stash;                ///< per stage, most micro-batches stashed at once
};

/// Records the timeline of `orders` (from `make_schedule`): every operation starts as soon
/// as its stage is free (operations run in the stage's order) and its dependency has ended
/// (F(i) on stage s: F(i) on s-1; B(i) on s: B(i) on s+1, or F(i) on the last stage); F takes
/// `forward_time`, B `backward_time` units. The stash of a stage grows by one at the start of
/// each F and shrinks by one at the end of each B.
/// @throws std::invalid_argument if an order can never finish (a dependency cycle)
PipeTimeline record_timeline(const std::vector<std::vector<PipeOp>>& orders, int forward_time,
                             int backward_time);

/// Runs the forward and backward passes of `micro` micro-batches of `rows` samples through
/// the p-stage model on the ranks (stage s = rank s, p = group.size()), in the order of
/// `timeline` (given). Afterwards:
/// - `y.on(p-1)` holds the last layer's output for all micro·rows samples, row per sample;
/// - `grad.on(s)` holds the gradient of the loss w.r.t. stage s's W_s (w x w) then b_s (w).
/// @param params per rank s: W_s (w x w, row-major) then b_s (w)
/// @param x      on rank 0: micro·rows·w inputs; @param t on rank p-1: the targets
/// @throws course::CudaError on CUDA failures
void run_pipeline(course::RankGroup& group, const PipeTimeline& timeline, int width, int rows,
                  course::SymmetricBuffer<float>& params, course::SymmetricBuffer<float>& x,
                  course::SymmetricBuffer<float>& t, course::SymmetricBuffer<float>& y,
                  course::SymmetricBuffer<float>& grad);
