"""A GPU grade completed by the simulator (gpu_checks.py): the merge of the two grades, when it
runs, and the one-line warning where the simulator cannot be built. The same with a real planted
submission graded on the simulator: autograder/submissions/test_grader_submissions.py."""
import os
import unittest
from unittest import mock

import support  # noqa: F401  (puts tools/ on the path)
from course import gpu_checks
from course.backend import Toolchain
from course.errors import CourseError
from course.exercise_run import PASSED
from course.grade import ExerciseGrade, GradeReport

CUDA = Toolchain(backend="cuda", cmake="/usr/bin/cmake", cmake_version=(3, 28, 3), generator="Ninja",
                 nvcc="/usr/local/cuda/bin/nvcc", has_gpu=True)
SIM = Toolchain(backend="sim", cmake="/usr/bin/cmake", cmake_version=(3, 28, 3), generator="Ninja", cxx="/usr/bin/clang++")


def exercise(name, status, score, passed, total, perf_score=0.0, performance="", feedback="", failures=()):
    return ExerciseGrade(lesson="01-serial-dependency", name=name, file="01-serial-dependency/%s.cu" % name,
                         max_score=20.0, score=score, status=status, tests_passed=passed, tests_total=total,
                         performance_max=5.0, performance_score=perf_score, performance_graded=True,
                         performance=performance, criterion="time", feedback=feedback, failures=list(failures))


def gpu_grade():
    """A GPU's grade: linear_scan and attention pass every test, rnn_step fails one."""
    return GradeReport(backend="cuda", submission="/s", lesson=None, seed=42, exercises=[
        exercise("linear_scan", PASSED, 20.0, 4, 4, 5.0, "0.804 ms vs reference 0.679 ms: 1.18x"),
        exercise("attention", PASSED, 20.0, 7, 7, 5.0, "1.00x"),
        exercise("rnn_step", "failed", 15.0, 3, 4, 0.0, "not measured", feedback="gpu says no")])


def sim_grade():
    """The simulator's grade of the same submission (correctness only): linear_scan fails the
    how-test, rnn_step fails more of its tests than on the GPU."""
    failure = {"test": "LinearScan.SpanGrowsWithTheLogOfTheTile", "message": "one thread made 260 accesses"}
    return GradeReport(backend="sim", submission="/s", lesson=None, seed=42, exercises=[
        exercise("linear_scan", "failed", 16.0, 4, 5, feedback="span 260", failures=[failure]),
        exercise("attention", PASSED, 20.0, 9, 9),
        exercise("rnn_step", "failed", 10.0, 3, 6, feedback="sim says no")])


class Merge(unittest.TestCase):
    def setUp(self):
        self.gpu = gpu_grade()
        gpu_checks.merge(self.gpu, sim_grade())
        self.by_name = {g.name: g for g in self.gpu.exercises}

    def test_a_how_test_failed_on_the_simulator_fails_the_exercise_and_takes_its_performance_points(self):
        g = self.by_name["linear_scan"]
        self.assertEqual((g.status, g.score, g.tests_passed, g.tests_total), ("failed", 16.0, 4, 5))
        self.assertEqual(g.performance_score, 0.0)
        self.assertTrue(g.performance_graded)          # still in the maximum: 25 points possible
        self.assertEqual(g.total_max, 25.0)
        self.assertEqual(g.total_score, 16.0)
        self.assertIn("a test failed on the simulator", g.performance)
        self.assertIn("1.18x", g.performance)          # the GPU's figure stays in the feedback
        self.assertEqual(g.failures[0]["test"], "simulator: LinearScan.SpanGrowsWithTheLogOfTheTile")
        self.assertIn(gpu_checks.FEEDBACK_HEADER + "\nspan 260", g.feedback)
        self.assertIn("on the simulator: 4 of 5 tests passed", g.note)

    def test_an_exercise_that_passes_on_both_keeps_its_gpu_grade(self):
        g = self.by_name["attention"]
        self.assertEqual((g.status, g.score, g.performance_score, g.tests_total), (PASSED, 20.0, 5.0, 7))
        self.assertEqual(g.feedback, "")

    def test_failed_on_both_keeps_the_lower_score_and_the_gpus_status(self):
        g = self.by_name["rnn_step"]
        self.assertEqual((g.status, g.score, g.tests_passed, g.tests_total), ("failed", 10.0, 3, 4))
        self.assertTrue(g.feedback.startswith("gpu says no\n\n" + gpu_checks.FEEDBACK_HEADER))

    def test_the_report_says_what_ran_and_what_failed(self):
        self.assertEqual(self.gpu.warnings, ["the tests of how the work is done ran on the simulator (seed 42): "
                                             "2 exercise(s) failed there: 01-serial-dependency/linear_scan, "
                                             "01-serial-dependency/rnn_step"])
        self.assertEqual(self.gpu.score, 20.0 + 5.0 + 16.0 + 10.0)

    def test_nothing_failed_on_the_simulator(self):
        gpu = gpu_grade()
        passing = GradeReport(backend="sim", submission="/s", lesson=None, seed=42,
                              exercises=[exercise("linear_scan", PASSED, 20.0, 5, 5)])
        gpu_checks.merge(gpu, passing)
        self.assertEqual(gpu.score, gpu_grade().score)
        self.assertEqual(gpu.warnings[-1], "the tests of how the work is done ran on the simulator (seed 42): every "
                                           "exercise passed there too")


class WhenItRuns(unittest.TestCase):
    def test_cuda_only_and_the_switch(self):
        with mock.patch.dict(os.environ, {}, clear=False):
            os.environ.pop(gpu_checks.SWITCH_VARIABLE, None)
            self.assertTrue(gpu_checks.wanted(CUDA))
            self.assertFalse(gpu_checks.wanted(SIM))
        with mock.patch.dict(os.environ, {gpu_checks.SWITCH_VARIABLE: "0"}):
            self.assertFalse(gpu_checks.wanted(CUDA))

    def test_without_the_simulator_one_warning_and_the_gpu_grade_as_it_was(self):
        report = gpu_grade()
        missing = CourseError("missing: clang++ (package clang)")
        with mock.patch.object(gpu_checks, "check_prerequisites", side_effect=missing), \
                mock.patch.object(gpu_checks, "grade_submission") as graded:
            gpu_checks.complete_on_simulator(report, support.REPO_ROOT, "/s", None, timeout=10, memory_bytes=None)
        graded.assert_not_called()
        self.assertEqual(report.score, gpu_grade().score)
        self.assertEqual(len(report.warnings), 1)
        self.assertIn("did not run (they need the simulator: missing: clang++ (package clang))", report.warnings[0])
        self.assertIn("checks only the numbers and the GPU's time", report.warnings[0])

    def test_the_simulator_grades_the_same_exercises_with_the_same_seed_and_no_performance(self):
        report = gpu_grade()
        with mock.patch.object(gpu_checks, "check_prerequisites", return_value=SIM), \
                mock.patch.object(gpu_checks, "grade_submission", return_value=sim_grade()) as graded:
            gpu_checks.complete_on_simulator(report, support.REPO_ROOT, "/s", "01", timeout=10, memory_bytes=None,
                                             build_dir="/b")
        args, kwargs = graded.call_args
        self.assertEqual(args[1:4], (SIM, "/s", "01"))
        self.assertEqual((kwargs["seed"], kwargs["performance"], kwargs["build_dir"]), (42, False, "/b"))
        self.assertEqual(kwargs["only_files"], ["01-serial-dependency/attention.cu", "01-serial-dependency/linear_scan.cu",
                                                "01-serial-dependency/rnn_step.cu"])
        self.assertEqual(report.score, 20.0 + 5.0 + 16.0 + 10.0)


if __name__ == "__main__":
    unittest.main()
