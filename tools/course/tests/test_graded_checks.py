"""Graded correctness runs turn on the simulator's partial-barrier check."""
import unittest
from unittest import mock

import support  # noqa: F401
from course import graded_run


class GradedChecks(unittest.TestCase):
    def test_correctness_run_sets_the_barrier_check(self):
        seen = {}

        def fake_run_signed(executable, **kwargs):
            seen.update(kwargs)
            return graded_run.GradedRun(graded_run.ERROR, "stopped here")

        with mock.patch.object(graded_run, "run_signed", fake_run_signed):
            graded_run.run_graded_tests("/nowhere/test", [], timeout=1, memory_bytes=None)
        self.assertIn("barrier", seen["env"]["CUDASIM_CHECK"].split(","))
        self.assertEqual(seen["gtest_filter"], "-" + graded_run.PERF_FILTER)

    def test_the_child_gets_the_check_in_its_environment(self):
        env = graded_run._child_env(graded_run.GRADED_CHECKS, 7)
        self.assertEqual(env["CUDASIM_CHECK"], "barrier")
        self.assertEqual(env["COURSE_GRADER_FD"], "7")


if __name__ == "__main__":
    unittest.main()
