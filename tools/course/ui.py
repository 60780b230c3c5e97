"""Small helpers for what the command line prints.

Progress goes to stderr so that stdout carries only a command's real output (the JSON of
``grade --format json``, the program's output under ``run``).
"""
import sys
from typing import List, Sequence


def progress(message: str, end: str = "\n") -> None:
    """One progress line (or the start of one, with ``end=""``) on stderr."""
    sys.stderr.write(message + end)
    sys.stderr.flush()


def warn(message: str) -> None:
    progress("course: warning: " + message)


def section(title: str) -> None:
    """A header (on stdout) that separates one step's output from the next."""
    print("\n== " + title + " ==", flush=True)


def format_table(header: Sequence[str], rows: List[Sequence[str]], footer: Sequence[str] = ()) -> str:
    """A plain-text table with columns padded to their widest cell (no box drawing: it
    survives copy/paste into e-mails and Gradescope)."""
    all_rows = [list(header)] + [list(r) for r in rows] + ([list(footer)] if footer else [])
    widths = [max(len(str(r[i])) for r in all_rows) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(str(c).ljust(w) for c, w in zip(cells, widths)).rstrip()

    rule = "  ".join("-" * w for w in widths)
    out = [line(header), rule] + [line(r) for r in rows]
    if footer:
        out += [rule, line(footer)]
    return "\n".join(out)


def format_points(value: float) -> str:
    """10 -> "10", 6.666 -> "6.67"."""
    rounded = round(value, 2)
    if rounded == int(rounded):
        return str(int(rounded))
    return ("%.2f" % rounded).rstrip("0").rstrip(".")
