"""``./course selftest --seeds N``: every reference solution's tests under N seeds.

Many tests draw their inputs and shapes from the run's seed (COURSE_SEED), so that a
submission cannot recognise them; a bound that the reference meets at most shapes but not all
then fails one run in twenty, in CI or in a student's grade. One seed per CI run finds that
late (wmma_matmul's shared-memory bound, 2026-11-28: 2.5% of the shapes drawn). This runs each
solution's test program of build/selftest-<backend> with N seeds in a row, from a base seed
printed first (COURSE_SEED sets it), and names each failure with the line that replays it.
"""
import os
import time
from typing import List, Optional, Tuple

from . import ui
from .errors import CourseError
from .exercise_run import PASSED, run_exercise_tests
from .grade import fresh_seed
from .manifest import select_exercises
from .selftest import selftest_build
from .session import Session

# Per program and seed: the slowest solution's tests take a few seconds on the simulator.
PROGRAM_TIMEOUT_S = 300


def run_once(executable: str, seed: int) -> Tuple[bool, List[str], str]:
    """One run of a test program with COURSE_SEED=seed, as ./course test runs it (results from
    its JSON file): (passed, the failed tests, what else went wrong)."""
    run = run_exercise_tests(executable, timeout=PROGRAM_TIMEOUT_S, memory_bytes=None,
                             env=dict(os.environ, COURSE_SEED=str(seed)))
    if run.status == PASSED:
        return True, [], ""
    names = [case.full_name for case in run.results.failed_cases] if run.counts_results else []
    return False, names, "" if names else run.reason


def run_seed_sweep(session: Session, seeds: int, selector: Optional[str] = None) -> int:
    if seeds < 1:
        raise CourseError("--seeds must be at least 1")
    root = session.root
    if not os.path.isdir(os.path.join(root, "solutions")):
        raise CourseError("the seed sweep runs the reference solutions' tests, which this copy of the course "
                          "does not have (a student edition)")
    started = time.monotonic()
    build, _, _ = selftest_build(root, session.toolchain)
    build.configure()
    exercises = [ex for ex in select_exercises(build.manifest(), selector) if "solution" in ex.variants]
    if not exercises:
        raise CourseError("no reference solution matches '%s'" % selector)
    ui.progress("building the tests of %d solution(s) in %s ..." % (len(exercises), build.display_path()), end="")
    outcome = build.build([ex.variants["solution"].target for ex in exercises])
    if not outcome.ok:
        ui.progress(" FAILED")
        print(outcome.output.rstrip())
        return 1
    ui.progress(" ok")
    base = fresh_seed()
    run_seeds = [(base + i) % 2 ** 64 for i in range(seeds)]   # COURSE_SEED is below 2^64
    print("seed sweep: %d program(s) x %d seeds, from COURSE_SEED=%d up"
          % (len(exercises), seeds, base), flush=True)
    failures = []
    for ex in exercises:
        executable = os.path.relpath(ex.variants["solution"].executable, root)
        bad = 0
        for seed in run_seeds:
            ok, names, other = run_once(os.path.join(root, executable), seed)
            if not ok:
                bad += 1
                failures.append("FAILED %s with COURSE_SEED=%d: %s\n  replay: COURSE_SEED=%d %s%s"
                                % (executable, seed, ", ".join(names) or other, seed, executable,
                                   " --gtest_filter=" + ":".join(names) if names else ""))
        print("  %-45s %s" % (ex.lesson + "/" + ex.name, "%d of %d seeds FAILED" % (bad, seeds) if bad else "ok"),
              flush=True)
    for line in failures:
        print(line)
    print("seed sweep: %d of %d runs failed (%.0f s)" % (len(failures), len(exercises) * seeds,
                                                        time.monotonic() - started), flush=True)
    return 1 if failures else 0
