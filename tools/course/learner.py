"""The learner's path: which exercise comes next, and where its lesson explains it.

The list of exercises comes from the lessons' own CMakeLists.txt (``course_add_exercise(ORDER
01 NAME vector_add)``), the same source the build's manifest is written from, so ``./course
next`` and ``./course hint`` need no build and no compiler."""
import os
import re
from typing import Dict, List, Optional, Tuple

from .manifest import Exercise, Manifest
from .state import load_state

_ADD_EXERCISE = re.compile(r"course_add_exercise\s*\(\s*([^)]*)\)", re.S)
PASSED = "passed"


def course_exercises(root: str) -> List[Exercise]:
    """Every exercise of the course in order, read from lessons/NN-x/CMakeLists.txt."""
    lessons_dir = os.path.join(root, "lessons")
    found = []
    for lesson in sorted(os.listdir(lessons_dir)) if os.path.isdir(lessons_dir) else []:
        path = os.path.join(lessons_dir, lesson, "CMakeLists.txt")
        if not re.match(r"^\d\d-", lesson) or not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            text = re.sub(r"#[^\n]*", "", f.read())
        for match in _ADD_EXERCISE.finditer(text):
            words = match.group(1).split()
            fields = dict(zip(words, words[1:]))
            if "ORDER" in fields and "NAME" in fields:
                found.append(Exercise(lesson=lesson, lesson_number=lesson[:2], order=fields["ORDER"],
                                      name=fields["NAME"], file="%s_%s.cu" % (fields["ORDER"], fields["NAME"])))
    found.sort(key=lambda e: (e.lesson_number, e.lesson, e.order, e.name))
    return found


def course_manifest(root: str) -> Manifest:
    """A manifest without a build (no variants): enough for selectors such as ``00/saxpy``."""
    return Manifest(backend="", source_dir=root, submission_dir=os.path.join(root, "exercises"),
                    exercises=course_exercises(root))


def next_unfinished(exercises: List[Exercise], state: Dict[str, dict],
                    prefer: Optional[List[str]] = None) -> Optional[Exercise]:
    """The first exercise of ``prefer`` (keys, e.g. the ones just tested) that has not passed,
    else the first of the course in order; None when every one has passed."""
    for key in prefer or []:
        for ex in exercises:
            if ex.key == key and (state.get(key) or {}).get("status") != PASSED:
                return ex
    for ex in exercises:
        if (state.get(ex.key) or {}).get("status") != PASSED:
            return ex
    return None


def readme_headings(readme: str) -> List[Tuple[int, int, str]]:
    """(line number, level, title) of every Markdown heading outside code blocks."""
    out = []
    fenced = False
    try:
        with open(readme, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return out
    for number, line in enumerate(lines, 1):
        if line.startswith("```"):
            fenced = not fenced
            continue
        match = re.match(r"^(#{1,6})\s+(.*?)\s*$", line)
        if match and not fenced:
            out.append((number, len(match.group(1)), match.group(2)))
    return out


def lesson_section(root: str, ex: Exercise, wanted: str = "") -> Tuple[str, str, int]:
    """(README path relative to root, section title, line) where the lesson explains ``ex``.

    ``wanted``: a title named by the exercise's hints file ("Lesson section: ..."), matched by
    its beginning; else the section around the first line that names the exercise's file."""
    rel = os.path.join("lessons", ex.lesson, "README.md")
    readme = os.path.join(root, rel)
    headings = readme_headings(readme)
    if wanted:
        for number, _, title in headings:
            if title.lower().startswith(wanted.lower()):
                return rel, title, number
    try:
        with open(readme, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return rel, "", 0
    for number, line in enumerate(lines, 1):
        if ex.file in line or ("`%s`" % ex.name) in line:
            above = [h for h in headings if h[0] <= number and h[1] >= 2]
            if above:
                return rel, above[-1][2], above[-1][0]
            break
    return rel, "", 0


def exercise_path(root: str, ex: Exercise) -> str:
    return os.path.join("exercises", ex.lesson, ex.file)


def describe_next(root: str, ex: Exercise) -> Tuple[str, str]:
    """(the file to edit, "README § section (line N)") for one exercise."""
    from .errors import CourseError
    from .hints import load_hints
    try:
        hints = load_hints(root, ex)
    except CourseError:          # a malformed hints file must not hide what is next
        hints = None
    rel, title, line = lesson_section(root, ex, hints.section if hints else "")
    where = "%s § %s (line %d)" % (rel, title, line) if title else rel
    return exercise_path(root, ex), where


def next_line(root: str, backend: str, state: Dict[str, dict], prefer: Optional[List[str]] = None) -> str:
    """One line for the end of ``./course test``: what to do next."""
    exercises = course_exercises(root)
    ex = next_unfinished(exercises, state, prefer)
    if ex is None:
        return "next: every exercise passes on the %s backend; see your grade with ./course grade" % backend
    path, where = describe_next(root, ex)
    return "next: %s (%s); read %s; stuck? ./course hint %s/%s" % (ex.key, path, where, ex.lesson_number, ex.name)


def next_exercise(root: str, backend: str) -> Optional[Exercise]:
    """The first exercise not passed in the last ``./course test`` on ``backend``."""
    return next_unfinished(course_exercises(root), load_state(os.path.join(root, "build", backend)))


def show_next(root: str, backend: str) -> int:
    """``./course next``: the next unfinished exercise, its file and its lesson section."""
    state = load_state(os.path.join(root, "build", backend))
    ex = next_unfinished(course_exercises(root), state)
    if ex is None:
        print("every exercise passes on the %s backend (state from the last ./course test); "
              "see your grade with ./course grade" % backend)
        return 0
    path, where = describe_next(root, ex)
    entry = state.get(ex.key) or {}
    status = entry.get("status", "not run")
    if entry.get("total") is not None:
        status += " (%s/%s tests)" % (entry.get("passed", 0), entry["total"])
    print("next: %s  [%s on the %s backend]" % (ex.key, status, backend))
    print("  edit   %s" % path)
    print("  read   %s" % where)
    print("  test   ./course test %s/%s" % (ex.lesson_number, ex.name))
    print("  hints  ./course hint %s/%s" % (ex.lesson_number, ex.name))
    return 0
