"""Performance against the reference: the scoring curve and the figures' interpretation.

The figures come from the signed result files of two kinds of runs of the CoursePerf.*
cases (autograder/harness/course_perf.hpp): the submission's test program and the
reference solution's, built separately so the submission never links the reference. On a
GPU they run alternately, ``rounds`` times each, and each side's figure is the median of its
runs' medians."""
import statistics
from dataclasses import dataclass
from typing import Dict, List, Optional

FULL_AT = 1.2      # ratio (student / reference) at or below which the performance points are full
ZERO_AT = 10.0     # ratio at or above which they are 0; linear in between
# A kernel may beat a plain device-to-device copy somewhat (copy engines and cache effects),
# but not by this much: above it a figure is a suspected measurement error or cheat.
BANDWIDTH_SLACK = 1.25


def credit(ratio: float, full_at: float = FULL_AT, zero_at: float = ZERO_AT) -> float:
    """Fraction of the performance points for a student/reference ratio (lower is better)."""
    if ratio != ratio or ratio < 0:        # NaN or negative: not a measurement
        return 0.0
    if ratio <= full_at:
        return 1.0
    if ratio >= zero_at:
        return 0.0
    return round((zero_at - ratio) / (zero_at - full_at), 4)


@dataclass
class PerfOutcome:
    graded: bool                  # False: no points counted either way ("not graded ...")
    fraction: float = 0.0         # of the performance points
    ratio: Optional[float] = None
    summary: str = ""             # one line for the table and the feedback
    suspicious: bool = False


def _f(d: Dict[str, str], key: str) -> Optional[float]:
    try:
        return float(d[key])
    except (KeyError, ValueError):
        return None


def judge(criterion: str, backend: str, student_runs: List[Dict[str, str]],
          reference_runs: List[Dict[str, str]]) -> PerfOutcome:
    """Compare the figures of one perf case; each run is the key=value dict of one signed line."""
    if not student_runs or not reference_runs:
        return PerfOutcome(False, summary="no performance figures (the performance run failed)")
    if backend == "sim":
        if criterion == "modelled_time":
            return _judge_modelled(student_runs[0], reference_runs[0])
        if criterion not in ("global_bytes", "launches"):
            return PerfOutcome(False, summary="%s is not graded on sim (timings of the simulator say nothing "
                                              "about a GPU)" % criterion)
        s, r = student_runs[0], reference_runs[0]
        if s.get("counted") != "1" or r.get("counted") != "1":
            return PerfOutcome(False, summary="not graded on sim yet (the simulator does not count memory "
                                              "traffic yet)")
        mine, theirs = _f(s, criterion), _f(r, criterion)
        if mine is None or theirs is None or theirs <= 0:
            return PerfOutcome(False, summary="no %s figure from the reference" % criterion)
        needed = _f(s, "bytes") or 0.0
        if criterion == "global_bytes" and needed > 0 and mine < needed * 0.999:
            return PerfOutcome(True, 0.0, mine / theirs, suspicious=True,
                               summary="%s global bytes is less than the %s the exercise must move: flagged as a "
                                       "suspected measurement error, not rewarded" % (_n(mine), _n(needed)))
        ratio = mine / theirs
        frac = credit(ratio)
        return PerfOutcome(True, frac, ratio, summary="%s %s vs reference %s: %.2fx, %d%% of the performance points"
                           % (_n(mine), criterion.replace("_", " "), _n(theirs), ratio, round(100 * frac)))
    # cuda: time
    if criterion != "time":
        return PerfOutcome(False, summary="%s is not graded on cuda (only time is)" % criterion)
    mine = statistics.median([_f(s, "median_ms") or float("nan") for s in student_runs])
    theirs = statistics.median([_f(r, "median_ms") or float("nan") for r in reference_runs])
    if not (mine > 0 and theirs > 0):
        return PerfOutcome(False, summary="no usable timing")
    needed = _f(student_runs[0], "bytes") or 0.0
    copy = statistics.median([_f(s, "copy_bytes_per_s") or 0.0 for s in student_runs + reference_runs])
    achieved = needed / (mine * 1e-3)
    ratio = mine / theirs
    detail = "%.3f ms (%.0f GB/s) vs reference %.3f ms: %.2fx" % (mine, achieved / 1e9, theirs, ratio)
    if copy > 0:
        detail += ", %d%% of the measured copy bandwidth" % round(100 * achieved / copy)
        if achieved > copy * BANDWIDTH_SLACK:
            return PerfOutcome(True, 0.0, ratio, suspicious=True,
                               summary=detail + ": faster than the memory allows for the bytes the exercise "
                                                "needs; flagged as a suspected measurement error or cheat, not rewarded")
    frac = credit(ratio)
    return PerfOutcome(True, frac, ratio, summary=detail + ", %d%% of the performance points" % round(100 * frac))


TERMS = (("launch_ns", "launch-bound"), ("memory_ns", "memory-bound"), ("compute_ns", "compute-bound"),
         ("span_ns", "span-bound (the longest thread)"), ("atomic_ns", "atomic-bound (one address)"))


def describe_modelled(run: Dict[str, str]) -> str:
    """'memory-bound: 4.1 us of 4.3 us modelled on H100': the largest term of a modelled time."""
    total = _f(run, "modelled_ns") or 0.0
    key, bound = max(TERMS, key=lambda kv: _f(run, kv[0]) or 0.0)
    return "%s: %s of %s modelled on %s" % (bound, _us(_f(run, key) or 0.0), _us(total), run.get("gpu", "H100"))


def _judge_modelled(s: Dict[str, str], r: Dict[str, str]) -> PerfOutcome:
    """The ratio of modelled times (cudasim/gpu_model.hpp), student over reference."""
    if s.get("counted") != "1" or r.get("counted") != "1":
        return PerfOutcome(False, summary="not graded on sim (this build's kernels are not instrumented)")
    mine, theirs = _f(s, "modelled_ns"), _f(r, "modelled_ns")
    if mine is None or theirs is None or theirs <= 0:
        return PerfOutcome(False, summary="no modelled time from the reference")
    needed = _f(s, "bytes") or 0.0
    moved = (_f(s, "global_bytes") or 0.0) + (_f(s, "atomic_bytes") or 0.0)
    if needed > 0 and moved < needed * 0.999:
        return PerfOutcome(True, 0.0, mine / theirs, suspicious=True,
                           summary="%s global bytes is less than the %s the exercise must move: flagged as a "
                                   "suspected measurement error, not rewarded" % (_n(moved), _n(needed)))
    ratio = mine / theirs
    frac = credit(ratio)
    return PerfOutcome(True, frac, ratio,
                       summary="%s; reference %s: %.2fx, %d%% of the performance points"
                       % (describe_modelled(s), _us(theirs), ratio, round(100 * frac)))


def _us(ns: float) -> str:
    return ("%.2f us" if ns < 1e4 else "%.1f us" if ns < 1e7 else "%.0f us") % (ns / 1e3)


def _n(x: float) -> str:
    return "{:,}".format(int(round(x)))
