"""Scores from GoogleTest's JSON files: all passed, some failed, skipped, empty or corrupt."""
import unittest

import support
from course.exercise_run import ERROR, FAILED, PASSED, TIMED_OUT, classify
from course.gtest_results import ResultsError, load_gtest_json
from course.process import ProcessResult
from course.rubric import score


def finished(returncode=0, timed_out=False):
    return ProcessResult(returncode=returncode, timed_out=timed_out, output="[ RUN ] ...\n",
                         output_truncated=False, seconds=0.1, timeout=120)


class ReadingResults(unittest.TestCase):
    def test_all_passed(self):
        results = load_gtest_json(support.data_path("all_passed.json"))
        self.assertEqual((results.passed, results.total), (3, 3))
        self.assertEqual(score(10, results.passed, results.total), 10)
        self.assertEqual(results.failure_report(), "")

    def test_some_failed(self):
        results = load_gtest_json(support.data_path("some_failed.json"))
        self.assertEqual((results.passed, results.total), (2, 4))
        self.assertEqual(score(10, results.passed, results.total), 5)
        names = [c.full_name for c in results.failed_cases]
        self.assertEqual(names, ["Saxpy.MatchesCpuOnAwkwardSizes", "Saxpy.LeavesYUntouchedWhenNIsZero"])
        report = results.failure_report()
        self.assertIn("expected 1.5, actual nan", report)
        self.assertIn("second failure in the same test", report)
        self.assertNotIn("UsesAGridStrideLoop", report)

    def test_skipped_and_disabled_tests_do_not_count(self):
        results = load_gtest_json(support.data_path("skipped_and_disabled.json"))
        self.assertEqual((results.passed, results.total, results.skipped), (2, 2, 1))

    def test_empty_file(self):
        with self.assertRaises(ResultsError) as ctx:
            load_gtest_json(support.data_path("empty.json"))
        self.assertIn("empty", str(ctx.exception))

    def test_corrupt_file(self):
        with self.assertRaises(ResultsError) as ctx:
            load_gtest_json(support.data_path("corrupt.json"))
        self.assertIn("not valid JSON", str(ctx.exception))

    def test_missing_file(self):
        with self.assertRaises(ResultsError) as ctx:
            load_gtest_json(support.data_path("no-such-file.json"))
        self.assertIn("no results file", str(ctx.exception))


class ClassifyingARun(unittest.TestCase):
    def test_passed(self):
        run = classify(finished(0), support.data_path("all_passed.json"))
        self.assertEqual((run.status, run.passed, run.total), (PASSED, 3, 3))
        self.assertTrue(run.counts_results)

    def test_failed(self):
        run = classify(finished(1), support.data_path("some_failed.json"))
        self.assertEqual((run.status, run.passed, run.total), (FAILED, 2, 4))
        self.assertIn("2 of 4", run.reason)

    def test_empty_or_corrupt_results_score_zero_with_a_reason(self):
        for name in ("empty.json", "corrupt.json", "no-such-file.json"):
            run = classify(finished(0), support.data_path(name))
            self.assertEqual(run.status, ERROR, name)
            self.assertFalse(run.counts_results)
            self.assertEqual(run.passed, 0)
            self.assertTrue(run.reason)

    def test_no_tests_is_a_failure(self):
        run = classify(finished(0), support.data_path("no_tests.json"))
        self.assertEqual(run.status, FAILED)
        self.assertEqual(score(10, run.passed, run.total), 0)

    def test_crash_scores_zero_even_with_a_results_file(self):
        run = classify(finished(-11), support.data_path("all_passed.json"))
        self.assertEqual(run.status, "crashed (SIGSEGV)")
        self.assertFalse(run.counts_results)
        self.assertIn("SIGSEGV", run.reason)

    def test_timeout_scores_zero(self):
        run = classify(finished(-9, timed_out=True), support.data_path("all_passed.json"))
        self.assertEqual(run.status, TIMED_OUT)
        self.assertFalse(run.counts_results)
        self.assertIn("120 s", run.reason)

    def test_odd_exit_code_is_an_error(self):
        run = classify(finished(3), support.data_path("all_passed.json"))
        self.assertEqual(run.status, ERROR)
        self.assertIn("exit code 3", run.reason)


if __name__ == "__main__":
    unittest.main()
