"""``./course hint NN/NAME``: tiered hints, one level per call.

Hints are data next to the lesson, one Markdown file per exercise:
``lessons/NN-x/hints/<exercise name>.md``::

    # Hints: vector_add
    Lesson section: 2. The programming model      (optional: what ./course next points to)

    ## Level 1
    a nudge: what to think about
    ## Level 2
    the next step
    ## Level 3
    the approach, never the code
    ## Level 4 (hidden)
    for instructors only: never shown by ./course hint, left out of the student edition

The first call shows level 1, each further call the next level; ``--level K`` shows level K,
``--reset`` starts again. What a student has seen is kept in build/hints_seen.json."""
import os
import re
from dataclasses import dataclass, field
from typing import List, Optional

from .errors import CourseError
from .manifest import Exercise, select_exercises
from .state import load_hints_seen, record_hint_seen

HINTS_DIR = "hints"
_LEVEL = re.compile(r"^##\s+Level\s+(\d+)\s*(\(hidden\))?\s*$", re.I)
_SECTION = re.compile(r"^Lesson section:\s*(.+?)\s*$", re.I)


@dataclass
class HintLevel:
    number: int
    hidden: bool
    text: str


@dataclass
class Hints:
    levels: List[HintLevel] = field(default_factory=list)
    section: str = ""          # the lesson README's section title (a prefix is enough)

    def visible(self) -> List[HintLevel]:
        return [lv for lv in self.levels if not lv.hidden]


def parse_hints(text: str, path: str = "hints") -> Hints:
    hints = Hints()
    current: Optional[HintLevel] = None
    body: List[str] = []
    for line in text.splitlines():
        match = _LEVEL.match(line)
        if match:
            if current:
                current.text = "\n".join(body).strip()
                hints.levels.append(current)
            current, body = HintLevel(int(match.group(1)), bool(match.group(2)), ""), []
        elif current is not None:
            body.append(line)
        else:
            section = _SECTION.match(line)
            if section:
                hints.section = section.group(1)
    if current:
        current.text = "\n".join(body).strip()
        hints.levels.append(current)
    numbers = [lv.number for lv in hints.levels]
    if numbers != list(range(1, len(numbers) + 1)):
        raise CourseError("%s: hint levels must be numbered 1, 2, 3, ... in order (found %s)"
                          % (path, ", ".join(map(str, numbers)) or "none"))
    return hints


def has_hidden(text: str) -> bool:
    matches = (_LEVEL.match(line) for line in text.splitlines())
    return any(m is not None and m.group(2) for m in matches)


def strip_hidden(text: str) -> str:
    """The hints file without its hidden levels (for the student edition); the rest verbatim."""
    out, keep = [], True
    for line in text.splitlines(keepends=True):
        match = _LEVEL.match(line.rstrip("\r\n"))
        if match:
            keep = not match.group(2)
        if keep:
            out.append(line)
    return "".join(out).rstrip("\n") + "\n"


def hints_path(root: str, ex: Exercise) -> str:
    return os.path.join(root, "lessons", ex.lesson, HINTS_DIR, ex.name + ".md")


def load_hints(root: str, ex: Exercise) -> Optional[Hints]:
    path = hints_path(root, ex)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return None
    return parse_hints(text, os.path.relpath(path, root))


def resolve_exercise(root: str, selector: str) -> Exercise:
    from .learner import course_manifest
    manifest = course_manifest(root)
    if "/" not in selector.strip().strip("/"):
        names = ", ".join("%s/%s" % (ex.lesson_number, ex.name)
                          for ex in select_exercises(manifest, selector))
        raise CourseError("name one exercise, e.g. ./course hint %s" % (names.split(", ")[0] if names else "00/vector_add"))
    return select_exercises(manifest, selector)[0]


def show_hint(root: str, selector: Optional[str], level: Optional[int] = None, reset: bool = False,
              show_hidden: bool = False, backend: Optional[str] = None) -> int:
    """Without ``selector``: the exercise ``./course next`` names on ``backend``."""
    if selector:
        ex = resolve_exercise(root, selector)
    else:
        from .learner import next_exercise
        ex = next_exercise(root, backend or "sim")
        if ex is None:
            print("every exercise passes; name one for its hints, e.g. ./course hint 00/vector_add")
            return 0
    short = "%s/%s" % (ex.lesson_number, ex.name)
    if reset:
        record_hint_seen(root, ex.key, 0)
        if level is None:
            print("hints for %s start again at level 1 (./course hint %s)" % (ex.key, short))
            return 0
    hints = load_hints(root, ex)
    levels = (hints.levels if show_hidden else hints.visible()) if hints else []
    if not levels:
        print("no hints for %s yet; read its lesson (lessons/%s/README.md) and the contract's /// comments"
              % (ex.key, ex.lesson))
        return 0
    seen = load_hints_seen(root).get(ex.key, 0)
    if level is None:
        index = min(seen + 1, len(levels))
    elif 1 <= level <= len(levels):
        index = level
    else:
        raise CourseError("%s has hint levels 1 to %d, not %d" % (ex.key, len(levels), level))
    shown = levels[index - 1]
    record_hint_seen(root, ex.key, index)
    print("hint %d of %d for %s (%s)%s\n" % (index, len(levels), ex.key, os.path.join("exercises", ex.lesson, ex.file),
                                             "  [hidden: instructors only]" if shown.hidden else ""))
    print(shown.text + "\n")
    if index < len(levels):
        print("run ./course hint %s again for hint %d of %d" % (short, index + 1, len(levels)))
    else:
        print("that was the last hint: it gives the approach, the code is yours to write "
              "(./course hint %s --reset starts again)" % short)
    return 0
