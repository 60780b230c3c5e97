"""Run one exercise's GoogleTest binary and classify what happened (shared by test and grade)."""
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from typing import Mapping, Optional, TextIO

from .gtest_results import GTestResults, ResultsError, gtest_output_flag, load_gtest_json
from .process import DEFAULT_OUTPUT_CAP, ProcessResult, run_limited

PASSED = "passed"
FAILED = "failed"
COMPILE_ERROR = "compile error"
NOT_SUBMITTED = "not submitted"
TIMED_OUT = "timed out"
ERROR = "error"          # ran to the end but left no usable results


@dataclass
class ExerciseRun:
    status: str                       # one of the constants above, or "crashed (SIGSEGV)"
    reason: str                       # a sentence for the student; "" when passed
    results: Optional[GTestResults]   # None when no usable results
    process: Optional[ProcessResult]

    @property
    def passed(self) -> int:
        return self.results.passed if self.results else 0

    @property
    def total(self) -> Optional[int]:
        return self.results.total if self.results else None

    @property
    def counts_results(self) -> bool:
        """Whether the tests' results may be scored (not after a crash or a timeout)."""
        return self.results is not None and self.status in (PASSED, FAILED)


def run_exercise_tests(executable: str, *, timeout: float, memory_bytes: Optional[int],
                       echo: Optional[TextIO] = None, color: bool = False,
                       output_cap: int = DEFAULT_OUTPUT_CAP,
                       env: Optional[Mapping[str, str]] = None) -> ExerciseRun:
    """Run the binary in a fresh private folder (with ``env``, else this process's environment);
    results come from its JSON file only."""
    if not os.path.isfile(executable):
        return ExerciseRun(ERROR, "the test program %s was not built" % executable, None, None)
    workdir = tempfile.mkdtemp(prefix="course-run-")
    try:
        results_path = os.path.join(workdir, "gtest-results.json")
        argv = [executable, gtest_output_flag(results_path), "--gtest_color=" + ("yes" if color else "no")]
        proc = run_limited(argv, cwd=workdir, timeout=timeout, memory_bytes=memory_bytes,
                           output_cap=output_cap, env=env, echo=echo)
        return classify(proc, results_path)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def classify(proc: ProcessResult, results_path: str) -> ExerciseRun:
    if proc.timed_out:
        return ExerciseRun(TIMED_OUT, "the tests did not finish within %s s (an endless loop, or a deadlock "
                           "at a barrier?)" % _secs(proc.timeout), None, proc)
    if proc.signal_name:
        return ExerciseRun("crashed (%s)" % proc.signal_name,
                           "the test program was killed by %s%s" % (proc.signal_name, _signal_hint(proc.signal_name)),
                           None, proc)
    try:
        results = load_gtest_json(results_path)
    except ResultsError as exc:
        return ExerciseRun(ERROR, "%s (exit code %s)" % (exc, proc.returncode), None, proc)
    if proc.returncode not in (0, 1):
        return ExerciseRun(ERROR, "the test program ended with exit code %s" % proc.returncode, None, proc)
    if results.total == 0:
        return ExerciseRun(FAILED, "no tests ran", results, proc)
    if results.passed == results.total:
        note = "" if not results.skipped else "%d skipped" % results.skipped
        return ExerciseRun(PASSED, note, results, proc)
    failed = results.total - results.passed
    return ExerciseRun(FAILED, "%d of %d tests failed" % (failed, results.total), results, proc)


def _secs(value: float) -> str:
    return str(int(value)) if value == int(value) else "%.1f" % value


def _signal_hint(name: str) -> str:
    hints = {
        "SIGSEGV": ": an invalid memory access (an index past the end of an array, or a host pointer used "
                   "in a kernel?)",
        "SIGBUS": ": an invalid memory access",
        "SIGABRT": ": the program aborted (a failed assertion, an uncaught exception, or memory exhausted)",
        "SIGFPE": ": an arithmetic error such as an integer division by zero",
        "SIGKILL": ": killed from outside (out of memory?)",
        "SIGXCPU": ": it used more CPU time than the grader allows",
        "SIGXFSZ": ": it wrote a file larger than the grader allows",
    }
    return hints.get(name, "")


def stdout_is_terminal() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False
