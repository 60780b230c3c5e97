"""Run a grader-built test program (with the signed-results listener) and score it.

Scores come only from the HMAC-signed result file (tools/course/untrusted.py), counted
against the list of tests of the *reference* build; GoogleTest's own JSON file is read for
the failure messages shown to the student, never for the score."""
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from .exercise_run import ERROR, FAILED, PASSED, TIMED_OUT, _signal_hint
from .gtest_results import GTestResults, ResultsError, gtest_output_flag, load_gtest_json
from .process import ProcessResult, run_sandboxed
from .untrusted import ForgedResults, GraderSecret, SignedResults, count_expected, open_secret_channel, \
    read_signed_results

PERF_FILTER = "CoursePerf.*"
# Checks on in every correctness run on the simulator (ignored on a GPU), as strict as
# ./course run --check: a race on shared memory (byte-granular), a thread order shuffled at
# every barrier (seeded from the grading run's seed, so a re-grade replays it), and a
# __syncthreads that part of a block never reaches: undefined behaviour that running the
# threads in order would otherwise let pass.
GRADED_CHECKS = {"CUDASIM_CHECK": "race,shuffle,barrier"}


@dataclass
class GradedRun:
    status: str
    reason: str
    passed: int = 0
    total: Optional[int] = None
    scored: bool = False                    # passed/total may be scored
    messages: Optional[GTestResults] = None  # for feedback only
    process: Optional[ProcessResult] = None
    signed: Optional[SignedResults] = None
    missing: List[str] = field(default_factory=list)


def _child_env(extra: Dict[str, str], fd: int) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COURSE_GRADER")}
    env.pop("COURSE_PERF", None)
    env.update(extra)
    env["COURSE_GRADER_FD"] = str(fd)
    return env


def run_signed(executable: str, *, timeout: float, memory_bytes: Optional[int], gtest_filter: str,
               env: Optional[Dict[str, str]] = None, want_messages: bool = True) -> GradedRun:
    """One run of ``executable`` under the signed-results protocol."""
    if not os.path.isfile(executable):
        return GradedRun(ERROR, "the test program %s was not built" % executable)
    workdir = tempfile.mkdtemp(prefix="course-graded-")
    # The result file lives in a second private folder that the program is not told about
    # except through the secret channel (its working folder is `workdir`).
    hidden = tempfile.mkdtemp(prefix="course-sig-")
    try:
        secret = GraderSecret.fresh(os.path.join(hidden, os.urandom(8).hex() + ".result"))
        fd = open_secret_channel(secret)
        argv = [executable, "--gtest_filter=" + gtest_filter, "--gtest_color=no"]
        json_path = os.path.join(workdir, "gtest-results.json")
        if want_messages:
            argv.append(gtest_output_flag(json_path))
        try:
            # The program may write only its working folder and the result file's folder.
            proc = run_sandboxed(argv, cwd=workdir, timeout=timeout, memory_bytes=memory_bytes,
                                 env=_child_env(env or {}, fd), pass_fds=(fd,), writable=[hidden])
        finally:
            os.close(fd)
        run = GradedRun(ERROR, "", process=proc)
        if want_messages:
            try:
                run.messages = load_gtest_json(json_path)
            except ResultsError:
                run.messages = None
        if proc.timed_out:
            run.status = TIMED_OUT
            run.reason = ("the tests did not finish within %s s (an endless loop, or a deadlock at a barrier?)"
                          % _secs(proc.timeout))
            return run
        if proc.signal_name:
            run.status = "crashed (%s)" % proc.signal_name
            run.reason = "the test program was killed by %s%s" % (proc.signal_name, _signal_hint(proc.signal_name))
            return run
        try:
            run.signed = read_signed_results(secret.result_path, secret.key)
        except ForgedResults as exc:
            run.reason = "%s (exit code %s); whatever the program printed does not count" % (exc, proc.returncode)
            return run
        if proc.returncode not in (0, 1):
            run.reason = "the test program ended with exit code %s" % proc.returncode
            return run
        return run
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        shutil.rmtree(hidden, ignore_errors=True)


def run_graded_tests(executable: str, expected: List[str], *, timeout: float,
                     memory_bytes: Optional[int], seed: Optional[int] = None) -> GradedRun:
    """The correctness run: every test except the performance cases, its random inputs drawn
    from ``seed`` (the grading run's, recorded in the report) when given."""
    env = dict(GRADED_CHECKS)
    if seed is not None:
        env["COURSE_SEED"] = str(seed)
        env["CUDASIM_SHUFFLE_SEED"] = str(seed % (1 << 32))
    run = run_signed(executable, timeout=timeout, memory_bytes=memory_bytes, gtest_filter="-" + PERF_FILTER,
                     env=env)
    if run.signed is None or run.status != ERROR or run.reason:
        return run
    passed, total, missing = count_expected(run.signed, expected)
    run.passed, run.total, run.missing, run.scored = passed, total, missing, True
    if total == 0:
        run.status, run.reason = FAILED, "no tests ran"
    elif passed == total:
        run.status = PASSED
    else:
        run.status = FAILED
        run.reason = "%d of %d tests failed" % (total - passed, total)
        if missing:
            run.reason += " (%d did not run)" % len(missing)
    _report_worker_failures(run)
    return run


def _report_worker_failures(run: GradedRun) -> None:
    """A split program's judge outlives the submission's process: the tests it was running
    failed, and the status says how the process ended (the first test's failure names it)."""
    failures = run.signed.worker_failures if run.signed else {}
    if not failures or run.status == PASSED:
        return
    first_test, how = next(iter(failures.items()))
    if how.startswith("crashed "):
        sig = how.split()[1]
        run.status = "crashed (%s)" % sig
        what = "was killed by %s%s" % (sig, _signal_hint(sig))
    elif how.startswith("exited "):
        run.status = ERROR
        what = "exited (code %s) in the middle of a call" % how.split()[1]
    else:
        run.status = ERROR
        what = "broke the judge's protocol"
    run.reason = "the submission's process %s, in %d test%s (first: %s); %s" % (
        what, len(failures), "" if len(failures) == 1 else "s", first_test, run.reason)


def _secs(value: float) -> str:
    return str(int(value)) if value == int(value) else "%.1f" % value
