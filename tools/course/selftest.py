"""``./course selftest``: the project's own suite.

1. a pristine copy of exercises/ (from git HEAD when committed, so a student's edits do not
   change what is checked);
2. configure and build ``build/selftest-<backend>`` with the skeleton checks on;
3. ctest (the simulator's tests, every solution's tests, the skeleton checks, ...);
4. the grader end to end: untouched skeletons score 0, the solutions score full points.
"""
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
from typing import List, Optional, Tuple

from . import ui
from .backend import Toolchain
from .build import BuildDir, cpu_count
from .grade import grade_submission
from .process import memory_limit_from_env, timeout_from_env
from .reports import format_grade_table
from .session import Session


def pristine_exercises(root: str, dest: str) -> str:
    """Put an untouched copy of exercises/ at ``dest``; say where it came from."""
    tmp = dest + ".new"
    shutil.rmtree(tmp, ignore_errors=True)
    source = "exercises/ as it is (not a git checkout with exercises/ committed)"
    committed = False
    try:
        listing = subprocess.run(["git", "-C", root, "ls-tree", "-r", "--name-only", "HEAD", "exercises"],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, universal_newlines=True)
        committed = listing.returncode == 0 and bool(listing.stdout.strip())
    except OSError:
        pass
    if committed:
        archive = subprocess.run(["git", "-C", root, "archive", "--format=tar", "HEAD", "exercises"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if archive.returncode == 0:
            os.makedirs(tmp)
            with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
                members = [m for m in tar.getmembers() if not (m.name.startswith("/") or ".." in m.name.split("/"))]
                tar.extractall(tmp, members=members)
            source = "git HEAD"
        else:
            committed = False
    if not committed:
        os.makedirs(tmp)
        src = os.path.join(root, "exercises")
        if os.path.isdir(src):
            shutil.copytree(src, os.path.join(tmp, "exercises"))
    shutil.rmtree(dest, ignore_errors=True)
    os.replace(os.path.join(tmp, "exercises"), dest) if os.path.isdir(os.path.join(tmp, "exercises")) \
        else os.makedirs(dest)
    shutil.rmtree(tmp, ignore_errors=True)
    return source


def parse_ctest_summary(text: str) -> Optional[Tuple[int, int, List[str]]]:
    """(passed, failed, failed names) from ctest's own summary: "NN% tests passed, F tests
    failed out of T" and the "The following tests FAILED:" list. Like ctest, a test that
    could not run (its program was not built) counts as failed."""
    match = re.search(r"(\d+)% tests passed, (\d+) tests? failed out of (\d+)", text)
    if not match:
        return None
    failed, total = int(match.group(2)), int(match.group(3))
    names = re.findall(r"^\s*\d+ - (.+?) \((?:Failed|Not Run|Timeout|SEGFAULT|Subprocess aborted|"
                       r"Exception|[^)]*)\)\s*$", text.split("The following tests FAILED:", 1)[-1]
                       if "The following tests FAILED:" in text else "", re.M)
    return total - failed, failed, names


def selftest_build(root: str, toolchain: Toolchain) -> Tuple[BuildDir, str, str]:
    """``build/selftest-<backend>``: every solution's tests, and the untouched skeletons'
    registered as "must fail every test". Returns the folder, the pristine skeletons' path
    and where they came from (this also refreshes the pristine copy)."""
    build = BuildDir(root, os.path.join(root, "build", "selftest-" + toolchain.backend), toolchain)
    os.makedirs(build.path, exist_ok=True)
    pristine = os.path.join(build.path, "pristine-exercises")
    origin = pristine_exercises(root, pristine)
    build.definitions = {"COURSE_EXPECT_SKELETONS": "ON", "COURSE_SUBMISSION_DIR": pristine}
    return build, pristine, origin


def ctest_command(toolchain: Toolchain, build_path: str, output_on_failure: bool = True,
                  exclude: str = "") -> List[str]:
    """ctest next to the cmake in use, all cores, and no tests at all is an error; ``exclude``
    (a ctest -E pattern) leaves the tests it matches out."""
    ctest_bin = os.path.join(os.path.dirname(toolchain.cmake), "ctest")
    cmd = [ctest_bin if os.path.exists(ctest_bin) else "ctest", "--test-dir", build_path, "-j%d" % cpu_count(),
           "--no-tests=error"]
    if output_on_failure:
        cmd.append("--output-on-failure")
    if exclude:
        cmd += ["-E", exclude]
    return cmd


def run_selftest(session: Session, slow: bool = False) -> int:
    started = time.monotonic()
    root = session.root
    if not os.path.isdir(os.path.join(root, "solutions")):
        from .errors import CourseError
        raise CourseError("selftest checks the reference solutions, which this copy of the course does not have "
                          "(a student edition); use ./course test and ./course grade here")
    passed = failed = 0

    ui.section("selftest on the %s backend" % session.backend)
    build, pristine, origin = selftest_build(root, session.toolchain)
    print("pristine exercises: %s (from %s)" % (build.display_path() + "/pristine-exercises", origin), flush=True)

    # 1. configure and build everything
    build.configure()
    step = time.monotonic()
    ui.progress("building everything in %s ..." % build.display_path(), end="")
    outcome = build.build()
    if outcome.ok:
        ui.progress(" ok (%s)" % _duration(time.monotonic() - step))
    else:
        ui.progress(" FAILED")
        print(outcome.output.rstrip(), flush=True)
        print("step build: FAILED", flush=True)
        failed += 1

    # 2. ctest
    ui.section("ctest")
    # After a failed build most tests fail for want of a program: their names are enough.
    exclude = os.environ.get("COURSE_SELFTEST_EXCLUDE", "").strip()
    cmd = ctest_command(session.toolchain, build.path, output_on_failure=outcome.ok, exclude=exclude)
    if exclude:  # a lighter run (CI's second compiler): said, never silent
        print("ctest: leaving out the tests matching %r (COURSE_SELFTEST_EXCLUDE)" % exclude, flush=True)
    step = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                            errors="replace")
    lines = []
    for line in proc.stdout:
        print(line, end="", flush=True)
        lines.append(line)
    proc.wait()
    counts = parse_ctest_summary("".join(lines))
    if counts is None:
        print("step ctest: FAILED (ctest exited with %d and reported no results)" % proc.returncode)
        failed += 1
    else:
        ok, bad, names = counts
        passed += ok
        failed += bad
        print("step ctest: %d passed, %d failed (%s)%s" % (ok, bad, _duration(time.monotonic() - step),
                                                            "; failed: " + ", ".join(names) if names else ""))
        if proc.returncode != 0 and bad == 0:
            print("step ctest: FAILED (ctest exited with %d)" % proc.returncode)
            failed += 1

    # 3. the grader, end to end, through the same code as ./course grade
    ui.section("grader")
    timeout = timeout_from_env()
    memory = memory_limit_from_env()
    checks = (("untouched skeletons score 0", pristine, False),
              ("solutions score full points", os.path.join(root, "solutions"), True))
    if os.environ.get("COURSE_SELFTEST_SKIP_SKELETON_GRADE") == "1":
        # A lighter run (CI's second compiler): that skeletons fail their tests does not depend
        # on the compiler, while the solutions' full marks hold its counters to the reference's.
        print("grader: leaving out the grading of the untouched skeletons (COURSE_SELFTEST_SKIP_SKELETON_GRADE)",
              flush=True)
        checks = checks[1:]
    lessons = os.environ.get("COURSE_SELFTEST_GRADE_LESSONS", "").strip() or None
    if lessons:
        # Lighter still (CI's second compiler, when its time is short): the reference build still
        # compiles every lesson's grader programs with this compiler; only these lessons are graded.
        print("grader: grading lessons %s only (COURSE_SELFTEST_GRADE_LESSONS)" % lessons, flush=True)
    # One build folder for both, as grade-all's workers share one between students: the
    # simulator and the 27 judges are built once; only the submissions' own files differ.
    grade_dir = os.path.join(root, "build", "grade-" + session.backend, "selftest-grade")
    for label, submission, expect_full in checks:
        step = time.monotonic()
        try:
            report = grade_submission(root, session.toolchain, submission, lessons, timeout=timeout,
                                      memory_bytes=memory, build_dir=grade_dir)
        except Exception as exc:  # a check that cannot run is a failed check, not a traceback
            print("check %s: FAILED (%s)" % (label, getattr(exc, "message", exc)), flush=True)
            failed += 1
            continue
        if expect_full:
            good = report.max_score > 0 and report.score == report.max_score and \
                all(g.status == "passed" for g in report.exercises)
        else:
            good = report.score == 0 and all(g.status != "passed" for g in report.exercises) and \
                len(report.exercises) > 0
        got = "%s/%s" % (ui.format_points(report.score), ui.format_points(report.max_score))
        if good:
            passed += 1
            print("check %s: ok (%s, %d exercises, %s)" % (label, got, len(report.exercises),
                                                            _duration(time.monotonic() - step)), flush=True)
        else:
            failed += 1
            print("check %s: FAILED (got %s)" % (label, got))
            print(format_grade_table(report, details=True), flush=True)

    if slow:
        ok = run_slow_checks(root)
        passed += ok is True
        failed += ok is False

    print("")
    print("selftest took %s (%s backend)" % (_duration(time.monotonic() - started), session.backend))
    print("selftest: %d passed, %d failed" % (passed, failed), flush=True)
    return 0 if failed == 0 else 1


def run_slow_checks(root: str) -> Optional[bool]:
    """``--slow``: a class graded through a real (one-node, local) Slurm, its gradebook checked
    against grade-all's. True passed, False failed, None could not run here (said why)."""
    ui.section("grader on a local Slurm")
    step = time.monotonic()
    proc = subprocess.run([sys.executable, os.path.join(root, "autograder", "slurm", "local_slurm.py"),
                           "--record"], cwd=root)
    if proc.returncode == 77:
        print("check local Slurm: skipped (said above why)", flush=True)
        return None
    print("check local Slurm: %s (%s)" % ("ok" if proc.returncode == 0 else "FAILED",
                                         _duration(time.monotonic() - step)), flush=True)
    return proc.returncode == 0


def _duration(seconds: float) -> str:
    if seconds < 60:
        return "%.1f s" % seconds
    return "%dm%02ds" % (seconds // 60, seconds % 60)
