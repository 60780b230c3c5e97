"""Graded correctness runs are as strict as ./course run --check, seeded by the grading run."""
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
            graded_run.run_graded_tests("/nowhere/test", [], timeout=1, memory_bytes=None, seed=(1 << 40) + 5)
        self.assertEqual(set(seen["env"]["CUDASIM_CHECK"].split(",")), {"race", "shuffle", "barrier"})
        self.assertEqual(seen["env"]["COURSE_SEED"], str((1 << 40) + 5))
        self.assertEqual(seen["env"]["CUDASIM_SHUFFLE_SEED"], "5")      # the simulator's seed is 32-bit
        self.assertEqual(seen["gtest_filter"], "-" + graded_run.PERF_FILTER)

    def test_the_child_gets_the_check_in_its_environment(self):
        env = graded_run._child_env(graded_run.GRADED_CHECKS, 7)
        self.assertEqual(env["CUDASIM_CHECK"], "race,shuffle,barrier")
        self.assertEqual(env["COURSE_GRADER_FD"], "7")


if __name__ == "__main__":
    unittest.main()
