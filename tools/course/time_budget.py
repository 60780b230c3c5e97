"""The whole grading's time budget (``./course grade --time-budget SECONDS``).

Gradescope ends a submission's run after 10 minutes by default and then records an error, not
a score. Each step of a grading has its own limit (a lesson's build 300 s, twice that when it
fails and each exercise is built alone; a test program 120 s), so a few endless loops or one
compile-time bomb would pass the 10 minutes, and the student's other exercises would be lost
with them. Under a budget, each step gets its own limit or less: it must leave a reserve for
each exercise still to come, so the grading writes its report in time, and a step with too
little time left is not started (its exercise is reported as not graded, and why)."""
import math
import time
from typing import Callable, Optional

from .errors import CourseError

# What each exercise still to come keeps of the budget, for its tests and its performance run: an
# exercise's share of a whole-course grading
# on Gradescope's 0.5 vCPU was about 9 s (250 s for 27 exercises, docs/instructor-guide.md,
# "Within Gradescope's default budget").
RESERVE_PER_EXERCISE_S = 10.0
# A step is not started with less than this: it could not finish anything useful.
MIN_STEP_S = 3.0

OUT_OF_TIME = "out of time"


class TimeBudget:
    """How long each step of a grading may take, so that the whole grading ends by its deadline."""

    def __init__(self, seconds: Optional[float], clock: Callable[[], float] = time.monotonic):
        if seconds is not None and not (seconds > 0 and math.isfinite(seconds)):
            raise CourseError("--time-budget must be a positive number of seconds, not '%s'" % seconds)
        self.seconds = seconds
        self._clock = clock
        self._deadline = None if seconds is None else clock() + seconds

    def remaining(self) -> float:
        return math.inf if self._deadline is None else max(0.0, self._deadline - self._clock())

    def allow(self, limit: float, exercises_after: int) -> float:
        """The time one step may take: its own ``limit``, or less, to keep the reserve of each of
        the ``exercises_after`` exercises whose runs come after this step. 0: do not start it."""
        if self._deadline is None:
            return limit
        allowed = min(limit, self.remaining() - RESERVE_PER_EXERCISE_S * exercises_after)
        return allowed if allowed >= MIN_STEP_S else 0.0

    def spent(self) -> str:
        """Why a step was not started."""
        return "the grading's time budget of %g s ran out before it" % self.seconds


def budget_argument(value: Optional[str]) -> Optional[float]:
    """--time-budget SECONDS: a positive number of seconds (None: no budget)."""
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        raise CourseError("--time-budget must be a number of seconds, not '%s'" % value)
    TimeBudget(seconds)   # checks it
    return seconds
