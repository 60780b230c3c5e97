"""``./course grade-all DIR``: grade every submission folder in DIR, several at a time.

Each worker owns one build folder (``build/grade-<backend>/worker-K``) and grades its share
of the submissions one after another in it, so the simulator and the tests are compiled once
per worker, not once per student. Writes ``OUT/gradebook.csv`` (one row per student, one
column per exercise) and ``OUT/<student>/results.json`` (Gradescope's format) plus
``OUT/<student>/report.txt`` (the terminal table with the feedback). While it runs,
``OUT/gradebook.partial.csv`` gets each student's total as they finish."""
import csv
import io
import json
import os
import queue
import sys
import threading
import time
from typing import Dict, List, Optional

from . import gpu_checks, ui
from .build import cpu_count
from .errors import CourseError
from .grade import GradeReport, Reference, course_snapshot, fresh_seed, grade_submission, lesson_arguments, \
    validate_lesson_argument
from .sandbox import hide_also, sandbox_warnings


def submission_folders(directory: str) -> List[str]:
    """The student folders of DIR (sorted; hidden folders skipped)."""
    if not os.path.isdir(directory):
        raise CourseError("submissions folder '%s' does not exist" % directory)
    names = sorted(n for n in os.listdir(directory)
                   if not n.startswith(".") and os.path.isdir(os.path.join(directory, n)))
    if not names:
        raise CourseError("no submission folders in '%s' (expected one folder per student)" % directory)
    return names


def gradebook_csv(rows: List[Dict[str, object]], exercise_keys: List[str]) -> str:
    """One row per student: total, maximum, each exercise's score and status, errors."""
    out = io.StringIO()
    fields = ["student", "score", "max_score"] + exercise_keys + [k + " status" for k in exercise_keys] + ["error"]
    writer = csv.DictWriter(out, fieldnames=fields, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: _csv_safe(v) for k, v in row.items()})
    return out.getvalue()


def _csv_safe(value: object) -> object:
    """Spreadsheets run cells that start with = + - @ as formulas; student-chosen text must not."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


PARTIAL_GRADEBOOK = "gradebook.partial.csv"
PARTIAL_FIELDS = ["student", "score", "max_score", "error"]


def append_partial_row(path: str, row: Dict[str, object]) -> None:
    """grade-all's running record, one line as each student finishes, so that a run that is
    interrupted keeps the totals of those already graded (the exercise columns are known
    only at the end, in gradebook.csv)."""
    new = not os.path.exists(path)
    with open(path, "a", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=PARTIAL_FIELDS, lineterminator="\n", extrasaction="ignore")
        if new:
            writer.writeheader()
        writer.writerow({k: _csv_safe(row.get(k, "")) for k in PARTIAL_FIELDS})


def report_row(student: str, report: Optional[GradeReport], error: str = "") -> Dict[str, object]:
    row: Dict[str, object] = {"student": student, "error": error}
    if report is None:
        row.update(score=0, max_score="")
        return row
    row.update(score=report.score, max_score=report.max_score)
    for g in report.exercises:
        row[g.key] = g.total_score
        row[g.key + " status"] = g.status
    return row


def finished_report(student_out: str, seed: int, lesson: Optional[str]) -> Optional[dict]:
    """The report an earlier, interrupted run of grade-all wrote for this student, when it was
    graded with the same seed and lessons (so resuming gives the same gradebook)."""
    try:
        with open(os.path.join(student_out, "report.json"), encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("seed") != seed or not isinstance(data.get("exercises"), list):
        return None
    if _lesson_numbers(data.get("lesson")) != _lesson_numbers(lesson):
        return None
    return data


def _lesson_numbers(text: Optional[str]) -> set:
    """{0, 3} for "00,3" or "00-gpu-vs-cpu,03-matmul-reuse"; an empty set for every lesson."""
    numbers = set()
    for part in lesson_arguments(text):
        digits = "".join(c for c in part[:2] if c.isdigit()) or part
        if digits.isdigit():
            numbers.add(int(digits))
    return numbers


def exercise_keys(data: dict) -> List[str]:
    """The gradebook columns ("lesson/exercise") of a report.json's exercises, in its order."""
    return ["%s/%s" % (e.get("lesson"), e.get("exercise")) for e in data["exercises"]]


def row_from_report(student: str, data: dict) -> Dict[str, object]:
    """A gradebook row from a report.json (grade-all's own, or a Slurm array task's)."""
    row: Dict[str, object] = {"student": student, "error": "", "score": data.get("score", 0),
                              "max_score": data.get("max_score", "")}
    for key, e in zip(exercise_keys(data), data["exercises"]):
        row[key] = e.get("score", 0)
        row[key + " status"] = e.get("status", "")
    return row


def seed_of_earlier_run(out_dir: str) -> Optional[int]:
    """The seed of the reports already in OUT (an interrupted run's), if they agree on one."""
    seeds = set()
    for name in os.listdir(out_dir) if os.path.isdir(out_dir) else []:
        try:
            with open(os.path.join(out_dir, name, "report.json"), encoding="utf-8") as f:
                seeds.add(json.load(f).get("seed"))
        except (OSError, ValueError, AttributeError):
            continue
    seeds.discard(None)
    return seeds.pop() if len(seeds) == 1 else None


def grade_all(root: str, toolchain, directory: str, out_dir: str, lesson: Optional[str], *, jobs: int,
              timeout: float, memory_bytes: Optional[int], seed: Optional[int] = None, resume: bool = False,
              time_budget: Optional[float] = None) -> int:
    from .reports import format_grade_table, gradescope_json
    validate_lesson_argument(root, lesson)
    students = submission_folders(directory)
    if seed is None and resume:
        seed = seed_of_earlier_run(out_dir)
    seed = fresh_seed() if seed is None else seed      # one for the class: every student gets the same inputs
    os.makedirs(out_dir, exist_ok=True)
    # No test program may read the other submissions or the reports written so far.
    hide_also(directory)
    hide_also(out_dir)
    for warning in sandbox_warnings():
        ui.warn(warning)                     # once here; each report.json also records it
    reference = Reference(root, toolchain)
    reference.prepare()                      # once, before the workers start
    snapshot = course_snapshot(root, toolchain.backend)
    jobs = max(1, min(jobs, len(students)))
    work: "queue.Queue[str]" = queue.Queue()
    for s in students:
        work.put(s)
    results: Dict[str, Dict[str, object]] = {}
    partial = os.path.join(out_dir, PARTIAL_GRADEBOOK)
    if os.path.exists(partial) and not resume:
        os.remove(partial)
    keys: List[str] = []
    lock = threading.Lock()
    started = time.monotonic()
    done = [0]
    graded_here = [0]
    sys.stderr.write("grading %d submissions with seed %d (if interrupted: grade-all ... --resume)\n"
                     % (len(students), seed))

    def progress_line() -> None:
        elapsed = time.monotonic() - started
        width = 30
        filled = int(width * done[0] / len(students))
        left = len(students) - done[0]
        # At the pace of the submissions graded in this run (the workers' parallelism included).
        eta = ", about %.0f s left" % (left * elapsed / graded_here[0]) if graded_here[0] and left else ""
        sys.stderr.write("\r[%s%s] %d/%d graded, %.0f s%s   " % ("#" * filled, "." * (width - filled), done[0],
                                                                 len(students), elapsed, eta))
        sys.stderr.flush()

    def worker(slot: int) -> None:
        build_dir = os.path.join(root, "build", "grade-" + toolchain.backend, "worker-%d" % slot)
        while True:
            try:
                student = work.get_nowait()
            except queue.Empty:
                return
            folder = os.path.join(directory, student)
            student_out = os.path.join(out_dir, _safe_name(student))
            os.makedirs(student_out, exist_ok=True)
            earlier = finished_report(student_out, seed, lesson) if resume else None
            if earlier is not None:
                with lock:
                    results[student] = row_from_report(student, earlier)
                    keys.extend(k for k in exercise_keys(earlier) if k not in keys)
                    done[0] += 1
                    progress_line()
                continue
            try:
                report = grade_submission(root, toolchain, folder, lesson, timeout=timeout, memory_bytes=memory_bytes,
                                          build_dir=build_dir, reference=reference, snapshot=snapshot, quiet=True,
                                          seed=seed, time_budget=time_budget)
                if gpu_checks.wanted(toolchain):   # the how-tests, which a GPU skips, on the simulator
                    gpu_checks.complete_on_simulator(
                        report, root, folder, lesson, timeout=timeout, memory_bytes=memory_bytes, quiet=True,
                        build_dir=os.path.join(root, "build", "grade-sim", "worker-%d" % slot), time_budget=time_budget)
                with open(os.path.join(student_out, "results.json"), "w", encoding="utf-8") as f:
                    json.dump(gradescope_json(report), f, indent=2)
                with open(os.path.join(student_out, "report.json"), "w", encoding="utf-8") as f:
                    json.dump(report.to_dict(), f, indent=2)
                with open(os.path.join(student_out, "report.txt"), "w", encoding="utf-8") as f:
                    f.write(format_grade_table(report, details=True) + "\n")
                row = report_row(student, report)
                with lock:
                    for g in report.exercises:
                        if g.key not in keys:
                            keys.append(g.key)
            except CourseError as exc:
                # The course's own failure (not the student's): recorded, the others go on.
                row = report_row(student, None, exc.message)
            except Exception as exc:  # noqa: BLE001 - one submission must cost its own row only
                row = report_row(student, None, "internal error while grading: %s: %s" % (type(exc).__name__, exc))
            with lock:
                results[student] = row
                append_partial_row(partial, row)
                done[0] += 1
                graded_here[0] += 1
                progress_line()

    with _quiet_progress():
        threads = [threading.Thread(target=worker, args=(k,), daemon=True) for k in range(jobs)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    sys.stderr.write("\n")
    rows = [results.get(s) or report_row(s, None, "not graded (its worker stopped)") for s in students]
    path = os.path.join(out_dir, "gradebook.csv")
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(gradebook_csv(rows, keys))
    os.remove(partial)                       # the complete gradebook replaces it
    failed = [r["student"] for r in rows if r.get("error")]
    print("graded %d submissions in %.1f s with %d workers (seed %d); gradebook: %s"
          % (len(students), time.monotonic() - started, jobs, seed, path))
    if failed:
        print("not graded because of errors in the course itself: %s" % ", ".join(map(str, failed)))
    return 0


def _safe_name(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_.@" else "_" for c in name) or "_"


class _quiet_progress:
    """Workers' configure/build lines would interleave; keep only the progress bar."""

    def __enter__(self):
        from . import ui
        self._orig = ui.progress
        ui.progress = lambda message, end="\n": None
        return self

    def __exit__(self, *exc):
        from . import ui
        ui.progress = self._orig
        return False


def default_jobs() -> int:
    return max(1, cpu_count() // 2)
