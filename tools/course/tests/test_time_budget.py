"""The grading's time budget: what each step may take (on a clock the test moves)."""
import unittest

import support  # noqa: F401  (sets up the import path)
from course.errors import CourseError
from course.time_budget import MIN_STEP_S, RESERVE_PER_EXERCISE_S, TimeBudget, budget_argument


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


class TimeBudgetTest(unittest.TestCase):
    def test_without_a_budget_every_step_gets_its_own_limit(self):
        budget = TimeBudget(None)
        self.assertEqual(budget.allow(120.0, 50), 120.0)
        self.assertEqual(budget.remaining(), float("inf"))

    def test_a_step_keeps_the_reserve_of_the_exercises_after_it(self):
        clock = Clock()
        budget = TimeBudget(100.0, clock)
        self.assertEqual(budget.allow(120.0, 3), 100.0 - 3 * RESERVE_PER_EXERCISE_S)
        self.assertEqual(budget.allow(20.0, 3), 20.0)          # its own limit when that is less
        clock.now += 60.0
        self.assertEqual(budget.allow(120.0, 1), 40.0 - RESERVE_PER_EXERCISE_S)
        self.assertEqual(budget.allow(120.0, 0), 40.0)          # the last step gets what is left

    def test_a_step_with_too_little_time_is_not_started(self):
        clock = Clock()
        budget = TimeBudget(50.0, clock)
        clock.now += 50.0 - 2 * RESERVE_PER_EXERCISE_S - MIN_STEP_S / 2
        self.assertEqual(budget.allow(120.0, 2), 0.0)
        self.assertGreater(budget.allow(120.0, 1), 0.0)         # with fewer after it, it runs
        clock.now += 3600.0
        self.assertEqual(budget.allow(120.0, 0), 0.0)
        self.assertEqual(budget.remaining(), 0.0)
        self.assertIn("time budget of 50 s", budget.spent())

    def test_the_argument_is_a_positive_finite_number_of_seconds(self):
        self.assertIsNone(budget_argument(None))
        self.assertEqual(budget_argument("540"), 540.0)
        for bad in ("", "abc", "0", "-5", "inf", "nan"):
            with self.assertRaises(CourseError, msg=bad):
                budget_argument(bad)


if __name__ == "__main__":
    unittest.main()
