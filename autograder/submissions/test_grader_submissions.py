"""The grader against real submissions with planted defects (autograder/submissions/planted.py).

Builds and grades every case on the simulator through the same code as ./course grade, one
shared build folder for all cases (only the exercise files change between them); most cases
have only the exercises of the files they change graded (planted.WHOLE_LESSON: those graded whole).
Run:  python3 autograder/submissions/run_planted.py   (the cases shared between processes)
      python3 -m unittest discover -s autograder/submissions -p 'test_*.py'   (one process)
      (or: ctest -L grader, or ./course selftest)"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, HERE)

import planted  # noqa: E402
import shards  # noqa: E402
from course.build import BUILD_OUTPUT_BOUND, compiler_temporaries, oversized_files  # noqa: E402
from course import gpu_checks  # noqa: E402
from course.exercise_run import PASSED  # noqa: E402
from course.grade import ExerciseGrade, GradeReport, Reference, course_snapshot, grade_submission  # noqa: E402
from course.rubric import load_rubric  # noqa: E402
from course.session import open_session  # noqa: E402
from course.tests.support import processes_naming  # noqa: E402

# A test program's time limit (./course grade's default is 120 s). Alone on this 2-core machine
# the slowest planted program that ends (a_tile_walked_through_shuffles: 1024 serial steps of
# shuffles a tile) runs in 7 s, but CI runs the suite's two processes beside ctest's other tests,
# and there it once passed 15 s and was stopped, with every test lost (2026-11-28). Cases that
# hang on purpose set a shorter "timeout" of their own, so that waiting for them stays cheap.
TIMEOUT = float(os.environ.get("COURSE_GRADER_TEST_TIMEOUT", "60"))


class PlantedSubmissions(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.environ.setdefault("COURSE_QUIET", "1")
        cls.session = open_session(os.environ.get("COURSE_BACKEND", "sim"))
        cls.tmp = tempfile.mkdtemp(prefix="course-planted-")
        cls.reference = Reference(ROOT, cls.session.toolchain)
        cls.snapshot = course_snapshot(ROOT, cls.session.toolchain.backend)
        # One build folder per process of run_planted.py (each rebuilds only the files a case changes).
        shard = shards.shard()
        cls.build_dir = os.path.join(ROOT, "build", "grade-" + cls.session.toolchain.backend,
                                     "selftest-planted" + ("-" + shard if shard else ""))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        if not shards.claim(self.id()):
            self.skipTest(shards.SKIP_REASON)

    def grade(self, name):
        folder = planted.make_case(ROOT, name, self.tmp)
        timeout = min(TIMEOUT, planted.CASES[name].get("timeout", TIMEOUT))
        with mock.patch.dict(os.environ, planted.CASES[name].get("env", {})):
            return grade_submission(ROOT, self.session.toolchain, folder, planted.lesson_of(name), timeout=timeout,
                                    memory_bytes=2 << 30, build_dir=self.build_dir, reference=self.reference,
                                    snapshot=self.snapshot, quiet=True, only_files=planted.graded_files(name),
                                    time_budget=planted.CASES[name].get("time_budget"))

    def check(self, name):
        report = self.grade(name)
        by_name = {g.name: g for g in report.exercises}
        self.assertTrue(by_name, "no exercises graded")
        budget = planted.CASES[name].get("time_budget")
        if budget:   # within it, but for the checks between its steps (a few seconds)
            self.assertLess(report.execution_time, budget + 8, "%s: graded in %.1f s" % (name, report.execution_time))
        files = planted.graded_files(name)
        if files is not None:   # graded in part: exactly the exercises of the changed files
            self.assertEqual(sorted(g.file for g in report.exercises), files)
        for ex, g in by_name.items():
            want = planted.expected(name, ex)
            where = "%s/%s: status %s, %s/%s, note %r, feedback %r" % (name, ex, g.status, g.total_score,
                                                                      g.total_max, g.note, g.feedback[:300])
            if want == "full":
                self.assertEqual(g.total_score, g.total_max, where)
                self.assertGreater(g.total_max, 0, where)
            elif want == "zero":
                self.assertEqual(g.total_score, 0.0, where)
            elif want == "partial":
                self.assertGreater(g.total_score, 0.0, where)
                self.assertLess(g.total_score, g.total_max, where)
            if planted.CASES[name].get("performance", {}).get(ex) == "zero":
                self.assertEqual(g.performance_score, 0.0, where)
            status = planted.CASES[name].get("status", {}).get(ex)
            if status:
                self.assertTrue(g.status.startswith(status), where)
        return report

    def complete_a_gpu_grade(self, name):
        """Case ``name``'s linear_scan as an H200 graded it (every test passed, its time within
        1.2x: full marks), completed by the simulator's grade (gpu_checks.py)."""
        lesson = planted.LS.split("/")[0]
        points = load_rubric(ROOT, lesson).points_for("linear_scan")
        on_gpu = ExerciseGrade(lesson=lesson, name="linear_scan", file=planted.LS, max_score=points, score=points,
                               status=PASSED, tests_passed=4, tests_total=4, performance_max=5.0,
                               performance_score=5.0, performance_graded=True, criterion="time",
                               performance="0.804 ms vs reference 0.679 ms: 1.18x, 100% of the performance points")
        report = GradeReport(backend="cuda", submission=name, lesson=lesson, exercises=[on_gpu], seed=20261127)
        # A folder of its own: the planted case's own test may have made one of this name.
        folder = planted.make_case(ROOT, name, tempfile.mkdtemp(dir=self.tmp))
        gpu_checks.complete_on_simulator(report, ROOT, folder, lesson, timeout=TIMEOUT, memory_bytes=2 << 30,
                                         build_dir=self.build_dir, quiet=True)
        return report

    def test_a_gpu_grade_of_a_slow_solution_is_taken_back_by_the_simulator(self):
        # On an H200 (docs/gpu-results.md, 2026-11-27) the serial block scan passed every test,
        # the how-test skipped there, and timed at 1.18x the reference: full marks.
        report = self.complete_a_gpu_grade("linear_scan_serial_block_scan")
        g = report.exercises[0]
        self.assertNotEqual(g.status, PASSED, g.note)
        self.assertEqual(g.performance_score, 0.0)
        self.assertLess(g.total_score, g.total_max)
        self.assertIn(gpu_checks.FEEDBACK_HEADER, g.feedback)
        self.assertIn("1 exercise(s) failed there: 01-serial-dependency/linear_scan", report.warnings[-1])

    def test_a_gpu_grade_of_the_solution_is_kept(self):
        report = self.complete_a_gpu_grade("solutions")
        g = report.exercises[0]
        self.assertEqual((g.status, g.total_score, g.total_max), (PASSED, g.max_score + 5.0, g.max_score + 5.0), g.note)
        self.assertEqual(report.warnings[-1], "the tests of how the work is done ran on the simulator (seed 20261127): "
                                              "every exercise passed there too")


def _defined_symbols(executable):
    out = subprocess.run(["nm", "-C", "--defined-only", executable], stdout=subprocess.PIPE,
                         universal_newlines=True, check=True).stdout
    return {line.split(" ", 2)[2] for line in out.splitlines() if line.count(" ") >= 2}


# The simulator's functions that the judge defines itself, each a request to the worker
# (autograder/remote/judge_cudasim.cpp): ranks.hpp's link counters, and what lesson 04's tests
# read of the copies, the link and the modelled clock. The judge may also hold the inline
# members of the plain structures they return, and the forwarders' own local statics.
JUDGE_FORWARDERS = {"reset_stats", "link_stats", "host_link", "set_host_link", "peer_link", "set_peer_link",
                    "transfer_stats", "kernel_stats",
                    "timeline", "reset_timeline", "set_host_clock", "set_model_time", "host_time_ns",
                    "spend_host_time", "modelled_gpu"}
FORWARDED_STRUCTURES = {"TimelineSpan", "KernelStats", "LinkModel", "LinkTraffic", "TransferStats", "GpuSpec"}


def is_judge_forwarder(symbol):
    """Whether ``symbol`` (demangled) is one of the judge's forwarders or belongs to one."""
    match = re.match(r"cudasim::(\w+)(\(|::)", symbol)
    return bool(match) and (match.group(1) in JUDGE_FORWARDERS
                            or (match.group(1) in FORWARDED_STRUCTURES and match.group(2) == "::"))


def assert_judged_outside_the_submission(self, lesson, name, kernel):
    """The program the grader ran is the judge: it holds the tests but none of the submission's
    code (its kernel) and not the simulator; the worker holds both."""
    folder = os.path.join(self.build_dir, "exercises", "submission", lesson)
    judge = _defined_symbols(os.path.join(folder, name + "_test"))
    worker = _defined_symbols(os.path.join(folder, name + "_worker"))
    self.assertTrue(any(kernel in s for s in worker), "the worker lacks the submission's kernel")
    self.assertFalse([s for s in judge if kernel in s], "the judge contains the submission's kernel")
    simulator = [s for s in judge if s.startswith("cudasim::") and not is_judge_forwarder(s)]
    self.assertFalse(simulator, "the judge links the simulator")
    self.assertTrue(any(s.startswith("testing::") for s in judge), "the judge lacks GoogleTest")
    self.assertFalse([s for s in worker if s.startswith("testing::")], "the worker links GoogleTest")


PlantedSubmissions.assert_judged_outside_the_submission = assert_judged_outside_the_submission

# What the note of an exercise whose build hit a limit starts with (the bomb's deadline is the
# case's COURSE_BUILD_TIMEOUT).
BUILD_LIMIT_NOTES = {"compile_time_bomb": "the build took longer than 30 s",
                     "build_writes_a_huge_object": "the build wrote a file larger than 256 MiB",
                     "build_writes_a_large_object": "the build made a file larger than 128 MiB"}


def _make_test(case_name):
    def test(self):
        report = self.check(case_name)
        if case_name == "compile_error":
            g = [g for g in report.exercises if g.name == "vector_add"][0]
            self.assertIn("01_vector_add.cu", g.feedback)   # the compiler's message reaches the student
        if case_name in ("quote_the_reference_in_an_error", "include_reference_build"):
            g = [g for g in report.exercises if g.name == "vector_add"][0]
            self.assertIn("redefinition", g.feedback)          # the student's own error is shown
            self.assertNotIn("c[i] = a[i] + b[i]", g.feedback)  # the reference's lines are not
            self.assertNotIn("solutions/", g.feedback)
        if case_name == "solutions":
            self.assert_judged_outside_the_submission("00-gpu-vs-cpu", "vector_add", "vector_add_kernel")
        if case_name == "unsharded_data_parallel_step":  # lesson 05: groups and buffers cross as views
            self.assert_judged_outside_the_submission("05-parallelism-nvlink", "data_parallel_step",
                                                      "hidden_forward_kernel")
        if case_name == "patch_the_judge_through_proc_self_mem":  # lesson 04: objects and callbacks cross
            self.assert_judged_outside_the_submission("04-data-loading", "prefetch_ring", "worker_loop")
        if case_name in BUILD_LIMIT_NOTES:
            g = [g for g in report.exercises if g.name == "vector_add"][0]
            self.assertIn(BUILD_LIMIT_NOTES[case_name], g.note)
            # The build folder stays usable: nothing above the bound left, no compiler left running.
            self.assertFalse(oversized_files(self.build_dir, BUILD_OUTPUT_BOUND))
            self.assertFalse(compiler_temporaries(self.build_dir))
            self.assertFalse(processes_naming(self.build_dir), "the build's processes outlived it")
        if case_name == "forbidden_library":
            g = [g for g in report.exercises if g.name == "vector_add"][0]
            self.assertIn("cublasCreate", g.feedback)
    test.__name__ = "test_" + case_name
    return test


for _case in planted.CASES:
    setattr(PlantedSubmissions, "test_" + _case, _make_test(_case))


if __name__ == "__main__":
    unittest.main()
