"""A grade on a GPU completed by the simulator: the tests of how the work is done run there.

Those tests count what only the simulator counts (32-byte sectors per access, atomics per
block, the longest thread's accesses, shared-memory bytes, mma_sync operations), so on the cuda
backend they skip themselves, and a GPU grade checked only the numbers and the measured time.
Measured on an H200 (docs/gpu-results.md, 2026-11-27), eleven slow solutions that each fail
such a test on the simulator passed every test on the GPU, and several of them timed within
1.2x of the reference there: full marks for a serial block scan, a register-tiled matmul
without registers, a star in place of a ring all-reduce.

So ``./course --backend cuda grade`` and ``grade-all`` grade the same submission a second time
on the simulator, for correctness only and with the same seed, and an exercise keeps its GPU
points only as far as the simulator agrees: its correctness score is the lower of the two, a
test that fails on the simulator fails the exercise, and its performance points (timed on the
GPU) are given only when both passed. Where the simulator cannot be built (no clang, no
OpenBLAS), the report says in one warning that the how-tests did not run; the GPU grade is kept
as it is. ``COURSE_GPU_SIMULATOR_CHECKS=0`` turns the second grading off (the GPU lease's
timing runs of the references against themselves, say).
"""
import os
from typing import Optional, Tuple

from .backend import Toolchain, check_prerequisites
from .errors import CourseError
from .exercise_run import PASSED
from .grade import GradeReport, ExerciseGrade, grade_submission

SWITCH_VARIABLE = "COURSE_GPU_SIMULATOR_CHECKS"
FEEDBACK_HEADER = "On the simulator, where the tests of how the work is done run:"


def wanted(toolchain: Toolchain) -> bool:
    """Whether a grade on ``toolchain`` is to be completed on the simulator."""
    return toolchain.backend == "cuda" and os.environ.get(SWITCH_VARIABLE, "1").strip() != "0"


def simulator_toolchain(root: str) -> Tuple[Optional[Toolchain], str]:
    """The simulator's toolchain, or None and why not (one line naming what is missing)."""
    try:
        return check_prerequisites("sim", root), ""
    except CourseError as exc:
        return None, exc.message


def complete_on_simulator(report: GradeReport, root: str, submission: str, lesson: Optional[str], *,
                          timeout: float, memory_bytes: Optional[int], build_dir: Optional[str] = None,
                          quiet: bool = False, time_budget: Optional[float] = None) -> GradeReport:
    """Grade ``submission`` on the simulator (correctness only, ``report``'s seed) and merge
    that into ``report``, the GPU's grade of it. ``build_dir``: the simulator's build folder
    (grade-all gives each worker its own)."""
    sim, why_not = simulator_toolchain(root)
    if sim is None:
        report.warnings.append("the tests of how the work is done did not run (they need the simulator: %s): "
                               "this grade checks only the numbers and the GPU's time" % why_not)
        return report
    checked = grade_submission(root, sim, submission, lesson, timeout=timeout, memory_bytes=memory_bytes,
                               build_dir=build_dir, quiet=quiet, seed=report.seed, time_budget=time_budget,
                               only_files=sorted(g.file for g in report.exercises), performance=False)
    merge(report, checked)
    return report


def merge(gpu: GradeReport, sim: GradeReport) -> None:
    """Fold the simulator's grade into the GPU's, exercise by exercise (see the module's text)."""
    on_sim = {g.key: g for g in sim.exercises}
    failed = []
    for g in gpu.exercises:
        s = on_sim.get(g.key)
        if s is None or s.status == PASSED:
            continue
        failed.append(g.key)
        _fold(g, s)
    gpu.warnings.append("the tests of how the work is done ran on the simulator (seed %s): %s" % (
        sim.seed, "%d exercise(s) failed there: %s" % (len(failed), ", ".join(failed)) if failed
        else "every exercise passed there too"))


def _fold(g: ExerciseGrade, s: ExerciseGrade) -> None:
    """Exercise ``g`` (GPU) failed on the simulator as ``s`` says."""
    g.score = min(g.score, s.score)
    if g.status == PASSED:
        g.status = s.status
        g.tests_passed, g.tests_total = s.tests_passed, s.tests_total
    why = s.note or "%s of %s tests passed" % (s.tests_passed, s.tests_total)
    g.note = (g.note + "; " if g.note else "") + "on the simulator: " + why
    g.failures = g.failures + [dict(f, test="simulator: " + f.get("test", "")) for f in s.failures]
    g.feedback = (g.feedback + "\n\n" if g.feedback else "") + FEEDBACK_HEADER + "\n" + s.feedback
    if g.performance_max > 0 and g.performance_graded and g.performance_score > 0:
        g.performance = "not scored: a test failed on the simulator (timed on the GPU: %s)" % g.performance
        g.performance_score = 0.0
