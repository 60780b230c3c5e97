#!/usr/bin/env python3
"""The planted-submission suite (test_grader_submissions.py, test_gradescope_flow.py) in
several processes at once: what ctest's grader/planted-submissions runs.

Grading a planted case is mostly one compiler or one test program at a time, so one process
leaves part of the machine idle: on CI's 2 cores the suite took 22 minutes in one (2026-11-27),
about 16 in two (180% CPU, 2026-11-28). Here
the reference build, which every case shares, is made first, in this process; then N processes
walk the suite and each runs the tests it claims first (shards.py), each in a build folder of
its own. Each prints its ten slowest tests, so that the suite's cost stays visible.

    python3 autograder/submissions/run_planted.py [--processes N] [-k PATTERN ...]

-k selects tests as unittest's own -k does. Exit status 0 only if every process passed.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, HERE)

import shards  # noqa: E402

# The Gradescope flow copies and builds the whole course for itself (minutes): started first,
# so that it is not the one test left running at the end.
MODULES = ("test_gradescope_flow", "test_grader_submissions")


class TimedResult(unittest.TextTestResult):
    """unittest's verbose result, and how long each test this process ran took."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.durations = []
        self._started = {}
        self._elsewhere = set()

    def startTest(self, test):
        self._started[test.id()] = time.monotonic()
        super().startTest(test)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        if reason == shards.SKIP_REASON:   # another process's test: not this one's cost
            self._elsewhere.add(test.id())

    def stopTest(self, test):
        super().stopTest(test)
        began = self._started.pop(test.id(), None)
        if began is not None and test.id() not in self._elsewhere:
            self.durations.append((time.monotonic() - began, test.id()))


def run_shard(patterns) -> int:
    """One process: the whole suite, in MODULES' order, of which it runs what it claims."""
    loader = unittest.TestLoader()
    if patterns:
        loader.testNamePatterns = ["*%s*" % p if "*" not in p else p for p in patterns]
    suite = unittest.TestSuite(loader.loadTestsFromName(name) for name in MODULES)
    runner = unittest.TextTestRunner(stream=sys.stdout, verbosity=2, resultclass=TimedResult)
    result = runner.run(suite)
    own = sorted(result.durations, reverse=True)
    print("shard %s: ran %d tests in %.0f s; slowest:" % (shards.shard(), len(own), sum(d for d, _ in own)))
    for seconds, name in own[:10]:
        print("  %6.1f s  %s" % (seconds, name))
    report_failures(result)
    sys.stdout.flush()
    return 0 if result.wasSuccessful() else 1


# Each failure a process reports is printed again at the end of the whole run, after every
# process's log, so that the end of the output (all that a CI page may keep) says what failed.
FAILURE_MARK = "run_planted failure:"
FAILURE_LINES = 12


def last_lines(text: str, count: int = FAILURE_LINES) -> str:
    """The last ``count`` lines of a traceback (the assertion and its message), indented."""
    return "\n".join("    " + line for line in text.rstrip().splitlines()[-count:])


def report_failures(result: unittest.TestResult) -> None:
    """Prints each failed or erring test of ``result`` as failures_in finds it again."""
    for test, trace in result.failures + result.errors:
        print("%s %s\n%s" % (FAILURE_MARK, test.id(), last_lines(trace)))


def failures_in(log: str) -> list:
    """The failure blocks (FAILURE_MARK's line and the indented lines after it) of a process's log."""
    blocks, current = [], None
    for line in log.splitlines():
        if line.startswith(FAILURE_MARK):
            current = [line]
            blocks.append(current)
        elif current is not None and line.startswith("    "):
            current.append(line)
        else:
            current = None
    return ["\n".join(block) for block in blocks]


def prepare_shared_parts() -> None:
    """The reference build and the course snapshot, made once before the processes start (they
    would otherwise wait on each other's lock for it)."""
    os.environ.setdefault("COURSE_QUIET", "1")
    from course.grade import Reference, course_snapshot
    from course.session import open_session
    session = open_session(os.environ.get("COURSE_BACKEND", "sim"))
    Reference(ROOT, session.toolchain).prepare()
    course_snapshot(ROOT, session.toolchain.backend)


def default_processes() -> int:
    return max(1, min(2, os.cpu_count() or 1))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", type=int, default=default_processes(),
                        help="how many processes share the suite (default: %(default)s)")
    parser.add_argument("-k", dest="patterns", action="append", default=[],
                        help="only the tests whose names contain this (repeatable)")
    parser.add_argument("--shard", help=argparse.SUPPRESS)   # a process started by this script
    args = parser.parse_args(argv)
    if args.shard is not None:
        return run_shard(args.patterns)
    if args.processes < 1:
        parser.error("--processes must be at least 1")

    started = time.monotonic()
    prepare_shared_parts()
    print("run_planted: reference build ready (%.0f s); %d processes" % (time.monotonic() - started, args.processes),
          flush=True)
    failed, reports = [], []
    with tempfile.TemporaryDirectory(prefix="course-planted-claims-") as claims:
        logs, procs = [], []
        for n in range(args.processes):
            log = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")
            env = dict(os.environ, **{shards.CLAIMS_ENV: claims, shards.SHARD_ENV: str(n)})
            cmd = [sys.executable, os.path.abspath(__file__), "--shard", str(n)]
            for pattern in args.patterns:
                cmd += ["-k", pattern]
            procs.append(subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT))
            logs.append(log)
        for n, (proc, log) in enumerate(zip(procs, logs)):
            code = proc.wait()
            log.seek(0)
            text = log.read()
            log.close()
            print("==== process %d of %d (exit %d) ====" % (n, args.processes, code))
            print(text, flush=True)
            reports += failures_in(text)
            if code != 0:
                failed.append(n)
        claimed = len(os.listdir(claims))
    for report in reports:
        print(report)
    print("run_planted: %d tests claimed by %d processes in %.0f s; %s"
          % (claimed, args.processes, time.monotonic() - started,
             "every process passed" if not failed else "FAILED in process(es) %s" % ", ".join(map(str, failed))))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
