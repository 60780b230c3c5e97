"""The autograder: build one submission in its own folder, run each exercise's tests in
their own process with limits, and score them from the rubric."""
import hashlib
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set

from . import ui
from .backend import Toolchain
from .build import BuildDir, course_code_failure, readable_build_output
from .errors import CourseError, FAILURE
from .exercise_run import COMPILE_ERROR, ERROR, NOT_SUBMITTED, PASSED, run_exercise_tests
from .manifest import Exercise, resolve_lesson
from .rubric import load_rubric, score

LESSON_DIR = re.compile(r"^\d\d-[A-Za-z0-9_.-]+$")
FEEDBACK_CAP = 48 * 1024


@dataclass
class ExerciseGrade:
    lesson: str
    name: str
    file: str
    max_score: float
    score: float = 0.0
    status: str = NOT_SUBMITTED
    tests_passed: int = 0
    tests_total: Optional[int] = None
    note: str = ""
    feedback: str = ""             # compiler errors, failure messages, the end of a crash's output
    failures: List[Dict[str, str]] = field(default_factory=list)
    performance: str = ""

    @property
    def key(self) -> str:
        return self.lesson + "/" + self.name

    def to_dict(self) -> dict:
        return {"lesson": self.lesson, "exercise": self.name, "file": self.file, "status": self.status,
                "tests_passed": self.tests_passed, "tests_total": self.tests_total,
                "score": self.score, "max_score": self.max_score, "note": self.note,
                "performance": self.performance, "failures": self.failures, "feedback": self.feedback}


@dataclass
class GradeReport:
    backend: str
    submission: str
    lesson: Optional[str]
    exercises: List[ExerciseGrade]
    execution_time: float = 0.0
    warnings: List[str] = field(default_factory=list)
    ignored_files: List[str] = field(default_factory=list)

    @property
    def score(self) -> float:
        return round(sum(e.score for e in self.exercises), 2)

    @property
    def max_score(self) -> float:
        return round(sum(e.max_score for e in self.exercises), 2)

    @property
    def performance(self) -> str:
        return "not graded on %s yet" % self.backend

    def to_dict(self) -> dict:
        return {"backend": self.backend, "submission": self.submission, "lesson": self.lesson,
                "score": self.score, "max_score": self.max_score,
                "execution_time": round(self.execution_time, 1), "performance": self.performance,
                "warnings": self.warnings, "ignored_files": self.ignored_files,
                "exercises": [e.to_dict() for e in self.exercises]}


def _cap(text: str, limit: int = FEEDBACK_CAP) -> str:
    """Compiler output keeps its beginning (the first error is the one to fix)."""
    if len(text) <= limit:
        return text
    return text[:limit] + "\n[... %d more characters cut ...]" % (len(text) - limit)


def known_exercise_files(root: str) -> Dict[str, Set[str]]:
    """lesson folder -> .cu file names the course defines (from exercises/ and solutions/).

    Only used to lay out the private copy before CMake runs; which exercises exist is then
    taken from the build's manifest."""
    known: Dict[str, Set[str]] = {}
    for top in ("exercises", "solutions"):
        base = os.path.join(root, top)
        if not os.path.isdir(base):
            continue
        for lesson in os.listdir(base):
            folder = os.path.join(base, lesson)
            if LESSON_DIR.match(lesson) and os.path.isdir(folder):
                names = {n for n in os.listdir(folder) if n.endswith(".cu")}
                known.setdefault(lesson, set()).update(names)
    return known


def copy_submission(submission: str, known: Dict[str, Set[str]], dest: str) -> (Set[str], List[str]):
    """Copy the submission's known ``NN-x/*.cu`` files into ``dest`` (files only: a symbolic
    link is not followed). Returns the "lesson/file" keys copied and the submission's other
    .cu files. A file the submission lacks is simply absent: CMake then defines no target
    for it, and the grader scores it as not submitted."""
    submitted: Set[str] = set()
    for lesson, names in known.items():
        os.makedirs(os.path.join(dest, lesson), exist_ok=True)
        for name in names:
            src = os.path.join(submission, lesson, name)
            target = os.path.join(dest, lesson, name)
            if os.path.isfile(src) and not os.path.islink(src):
                shutil.copyfile(src, target)
                submitted.add(lesson + "/" + name)
    ignored = []
    for dirpath, _, filenames in os.walk(submission):
        for name in filenames:
            if name.endswith(".cu"):
                rel = os.path.relpath(os.path.join(dirpath, name), submission).replace(os.sep, "/")
                if rel not in submitted:
                    ignored.append(rel)
    return submitted, sorted(ignored)


def grade_build_dir(root: str, backend: str, submission: str) -> str:
    digest = hashlib.sha256(os.path.realpath(submission).encode("utf-8")).hexdigest()[:16]
    return os.path.join(root, "build", "grade-" + backend, digest)


def validate_lesson_argument(root: str, lesson: Optional[str]) -> None:
    """Reject an unknown --lesson before anything is built (the manifest checks it again)."""
    if not lesson:
        return
    folders = sorted(d for d in os.listdir(os.path.join(root, "lessons"))
                     if LESSON_DIR.match(d)) if os.path.isdir(os.path.join(root, "lessons")) else []
    text = lesson.strip().strip("/")
    for folder in folders:
        number = folder[:2]
        if text == folder or text == number or (text.isdigit() and int(text) == int(number)):
            return
    raise CourseError("unknown lesson '%s'; the lessons are: %s" % (lesson, ", ".join(folders) or "(none)"))


def grade_submission(root: str, toolchain: Toolchain, submission: str, lesson: Optional[str] = None, *,
                     timeout: float, memory_bytes: Optional[int]) -> GradeReport:
    """Grade the submission folder ``submission`` (laid out like exercises/)."""
    started = time.monotonic()
    if not os.path.isdir(submission):
        raise CourseError("submission folder '%s' does not exist" % submission)
    validate_lesson_argument(root, lesson)
    known = known_exercise_files(root)
    private = tempfile.mkdtemp(prefix="course-submission-")   # mode 0700: private to this user
    try:
        copy_dir = os.path.join(private, "submission")
        submitted, ignored = copy_submission(submission, known, copy_dir)
        build = BuildDir(root, grade_build_dir(root, toolchain.backend, submission), toolchain,
                         {"COURSE_SUBMISSION_DIR": copy_dir, "COURSE_WITH_SOLUTIONS": "OFF"})
        build.configure()
        manifest = build.manifest()
        exercises: List[Exercise] = manifest.exercises
        selected_lesson = None
        if lesson:
            selected_lesson = resolve_lesson(manifest, lesson)
            exercises = manifest.lesson_exercises(selected_lesson)
        report = GradeReport(backend=toolchain.backend, submission=os.path.abspath(submission),
                             lesson=selected_lesson, exercises=[],
                             ignored_files=[f for f in ignored if not _is_known(f, known)])
        rubrics = {}
        for lesson_name in dict.fromkeys(ex.lesson for ex in exercises):
            rubrics[lesson_name] = load_rubric(root, lesson_name)
            report.warnings += rubrics[lesson_name].warnings([e.name for e in manifest.lesson_exercises(lesson_name)])
        for w in report.warnings:
            ui.warn(w)

        grades = {ex.key: ExerciseGrade(lesson=ex.lesson, name=ex.name, file=ex.lesson + "/" + ex.file,
                                        max_score=rubrics[ex.lesson].points_for(ex.name),
                                        performance="not graded on %s yet" % toolchain.backend)
                  for ex in exercises}
        to_build = [ex for ex in exercises if ex.lesson + "/" + ex.file in submitted]
        for ex in exercises:
            if ex not in to_build:
                grades[ex.key].note = "file %s/%s not found in the submission" % (ex.lesson, ex.file)
        targets = {ex.variant("submission").target: ex for ex in to_build}
        outcomes = build.build_each(list(targets), {t: ex.key for t, ex in targets.items()})
        for target, ex in targets.items():
            grade = grades[ex.key]
            outcome = outcomes[target]
            if not outcome.ok:
                broken = course_code_failure(outcome.output, ex.file, ex.variant("submission").executable)
                if broken:
                    ui.progress(outcome.output.rstrip())
                    raise CourseError("grading stopped: the course's own code failed to build (%s), not the "
                                      "submission; fix the course and grade again" % broken, FAILURE)
                grade.status = COMPILE_ERROR
                grade.note = "does not compile; the compiler's messages follow"
                grade.feedback = _cap(readable_build_output(outcome.output).replace(copy_dir + os.sep, "submission/"))
                continue
            ui.progress("running %s ..." % ex.key, end="")
            run = run_exercise_tests(ex.variant("submission").executable, timeout=timeout,
                                     memory_bytes=memory_bytes)
            ui.progress(" " + run.status)
            grade.status = run.status
            grade.note = run.reason
            if run.counts_results:
                grade.tests_passed = run.passed
                grade.tests_total = run.total
                grade.score = score(grade.max_score, run.passed, run.total or 0)
                grade.failures = [{"test": c.full_name, "message": "\n".join(c.failures)}
                                  for c in run.results.failed_cases]
                grade.feedback = run.results.failure_report()
            else:
                grade.tests_passed = run.passed
                grade.tests_total = run.total
                grade.score = 0.0
                output = run.process.output if run.process else ""
                grade.feedback = run.reason + ("\n\nThe end of the test program's output:\n" + output[-8192:]
                                               if output.strip() else "")
            if grade.status == ERROR and not grade.note:
                grade.note = "no usable test results"
        report.exercises = [grades[ex.key] for ex in exercises]
        report.execution_time = time.monotonic() - started
        return report
    finally:
        shutil.rmtree(private, ignore_errors=True)


def _is_known(rel: str, known: Dict[str, Set[str]]) -> bool:
    lesson, _, name = rel.partition("/")
    return name in known.get(lesson, set())


def is_passing(grade: ExerciseGrade) -> bool:
    return grade.status == PASSED
