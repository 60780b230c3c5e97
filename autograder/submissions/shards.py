"""Sharing the planted-submission suite between processes (run_planted.py starts them).

Every process walks the whole suite in the same order and runs a test only if it is the first
to claim it: an exclusive create of a file named after the test in a folder all of them share.
A process that finishes a long case early simply claims the next ones, so the processes end
within about one case of each other, whatever the cases cost. Without a claims folder (the
suite run directly with unittest) every test is this process's.
"""
import os
from typing import Optional

CLAIMS_ENV = "COURSE_PLANTED_CLAIMS"   # the folder the claims are made in
SHARD_ENV = "COURSE_PLANTED_SHARD"     # this process's number, for its own build folder


def claim(test_name: str) -> bool:
    """Whether this process runs ``test_name``: True for the first process to ask."""
    folder = os.environ.get(CLAIMS_ENV)
    if not folder:
        return True
    try:
        fd = os.open(os.path.join(folder, test_name), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w") as f:
        f.write(os.environ.get(SHARD_ENV, "") + "\n")
    return True


def shard() -> Optional[str]:
    """This process's number among run_planted.py's processes; None when run alone."""
    value = os.environ.get(SHARD_ENV, "").strip()
    return value if value.isdigit() else None


SKIP_REASON = "run by another of run_planted.py's processes"
