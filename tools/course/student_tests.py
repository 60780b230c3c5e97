"""``./course test [LESSON[/EXERCISE]]``: build the student's exercises and run their tests."""
import os
import sys
from typing import List

from . import ui
from .build import course_code_failure, readable_build_output
from .errors import FAILURE
from .exercise_run import COMPILE_ERROR, PASSED, run_exercise_tests, stdout_is_terminal
from .manifest import Exercise, select_exercises
from .grade import handed_out_folder
from .process import memory_limit_from_env, timeout_from_env
from .regions import grading_notes
from .session import Session
from .state import load_state, record_results


def run_tests(session: Session, selector: str = None) -> int:
    build = session.build_dir()
    build.configure()
    manifest = build.manifest()
    exercises: List[Exercise] = select_exercises(manifest, selector)
    timeout = timeout_from_env()
    memory = memory_limit_from_env()

    submission_dir = manifest.submission_dir or os.path.join(session.root, "exercises")
    missing = {ex.key for ex in exercises if not os.path.isfile(os.path.join(submission_dir, ex.lesson, ex.file))}
    targets = {ex.variant("submission").target: ex for ex in exercises if ex.key not in missing}
    warn_about_regions(session.root, submission_dir, [ex for ex in exercises if ex.key not in missing])
    outcomes = build.build_each(list(targets), {t: ex.key for t, ex in targets.items()})
    for ex in exercises:
        if ex.key in missing:
            print("course: %s: the file %s is missing (restore it with: git checkout -- %s)"
                  % (ex.key, os.path.join(submission_dir, ex.lesson, ex.file),
                     os.path.relpath(os.path.join(submission_dir, ex.lesson, ex.file), session.root)))

    rows = []
    state = {}
    all_passed = True
    for target, ex in targets.items():
        outcome = outcomes[target]
        print("\n== %s  (%s/%s) ==" % (ex.key, ex.lesson, ex.file), flush=True)
        if not outcome.ok:
            sys.stdout.write(readable_build_output(outcome.output))
            sys.stdout.flush()
            broken = course_code_failure(outcome.output, ex.file, ex.variant("submission").executable)
            status, tests = ("course build error" if broken else COMPILE_ERROR), "-"
            if broken:
                print("course: this error is in the course's own code (%s), not in your file" % broken)
            state[ex.key] = {"status": status}
        else:
            sys.stdout.flush()
            run = run_exercise_tests(ex.variant("submission").executable, timeout=timeout,
                                     memory_bytes=memory, echo=sys.stdout, color=stdout_is_terminal())
            status = run.status
            if run.status != PASSED and run.reason:
                print("course: %s: %s" % (ex.key, run.reason))
            tests = "-" if run.total is None else "%d/%d" % (run.passed, run.total)
            state[ex.key] = {"status": status, "passed": run.passed, "total": run.total}
        all_passed = all_passed and status == PASSED
        rows.append([ex.key, tests, status])

    for ex in exercises:
        if ex.key in missing:
            rows.append([ex.key, "-", "file missing"])
            state[ex.key] = {"status": "file missing"}
            all_passed = False
    order = [ex.key for ex in exercises]
    rows.sort(key=lambda row: order.index(row[0]))
    record_results(build.path, session.backend, state)
    print("")
    print(ui.format_table(["exercise", "tests", "status"], rows))
    passed = sum(1 for r in rows if r[2] == PASSED)
    print("%d of %d exercises passed (%s backend)" % (passed, len(rows), session.backend))
    from .learner import next_line
    print(next_line(session.root, session.backend, load_state(build.path), prefer=order))
    return 0 if all_passed else FAILURE


def warn_about_regions(root: str, submission_dir: str, exercises: List[Exercise]) -> None:
    """Says, before the tests run, where a file's regions would be graded other than as they run
    here (regions.py): the grader builds them into the file as it was handed out."""
    handed_out = handed_out_folder(root, submission_dir)
    for ex in exercises:
        with open(os.path.join(submission_dir, ex.lesson, ex.file), encoding="utf-8", errors="replace") as f:
            submitted = f.read()
        original = None
        if handed_out and os.path.isfile(os.path.join(handed_out, ex.lesson, ex.file)):
            with open(os.path.join(handed_out, ex.lesson, ex.file), encoding="utf-8", errors="replace") as f:
                original = f.read()
        for note in grading_notes(submitted, original):
            ui.warn("%s/%s: %s" % (ex.lesson, ex.file, note))
