"""Errors the command line reports as one line and an exit status."""

USAGE_ERROR = 2   # bad arguments, missing prerequisites: nothing was done
FAILURE = 1       # the command ran but something failed (a test, a build, a check)


class CourseError(Exception):
    """An error shown to the user as ``course: error: <message>`` with ``exit_code``."""

    def __init__(self, message: str, exit_code: int = USAGE_ERROR):
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
