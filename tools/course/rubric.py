"""Points per exercise: ``autograder/rubric/<lesson>.ini``, one section per exercise.

    [vector_add]
    points = 10                   # correctness: points x tests passed / tests run
    performance_points = 5        # optional; against the reference solution (tools/course/perf.py)
    criterion_sim = modelled_time # modelled_time | global_bytes | launches | none (on the simulator)
    criterion_cuda = time         # time | none                       (what counts on a GPU)
    allowed_libraries = cublas    # optional; libraries and facilities (threads, files) the exercise may use

A ``[DEFAULT]`` section's ``points`` applies to exercises without their own section; an
exercise with neither gets DEFAULT_POINTS and a warning."""
import configparser
import math
import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from .errors import CourseError

DEFAULT_POINTS = 10.0


@dataclass
class Rubric:
    lesson: str
    path: str
    points: Dict[str, float] = field(default_factory=dict)
    default: Optional[float] = None
    exists: bool = True
    performance: Dict[str, float] = field(default_factory=dict)
    criteria: Dict[str, Dict[str, str]] = field(default_factory=dict)     # exercise -> backend -> criterion
    libraries: Dict[str, List[str]] = field(default_factory=dict)
    default_performance: float = 0.0
    default_criteria: Dict[str, str] = field(default_factory=dict)
    default_libraries: List[str] = field(default_factory=list)

    def performance_points_for(self, exercise: str) -> float:
        return self.performance.get(exercise, self.default_performance)

    def criterion_for(self, exercise: str, backend: str) -> str:
        return self.criteria.get(exercise, {}).get(backend, self.default_criteria.get(backend, "none"))

    def allowed_libraries(self, exercise: str) -> List[str]:
        return self.libraries.get(exercise, self.default_libraries)

    def points_for(self, exercise: str) -> float:
        if exercise in self.points:
            return self.points[exercise]
        return self.default if self.default is not None else DEFAULT_POINTS

    def warnings(self, exercises: List[str]) -> List[str]:
        out = []
        if not self.exists:
            out.append("no rubric file %s; every exercise of %s is worth %s points"
                       % (self.path, self.lesson, _fmt(self.points_for(""))))
            return out
        for name in exercises:
            if name not in self.points and self.default is None:
                out.append("%s has no [%s] section; it is worth %s points" % (self.path, name, _fmt(DEFAULT_POINTS)))
        for name in self.points:
            if name not in exercises:
                out.append("%s has a section [%s] for an exercise that lesson %s does not have"
                           % (self.path, name, self.lesson))
        return out


def _fmt(x: float) -> str:
    return str(int(x)) if x == int(x) else str(x)


def _parse_points(value: str, where: str) -> float:
    try:
        points = float(value)
    except ValueError:
        raise CourseError("%s: points = '%s' is not a number" % (where, value))
    if math.isnan(points) or math.isinf(points) or points < 0:
        raise CourseError("%s: points must be a number >= 0, not '%s'" % (where, value))
    return points


CRITERIA = {"sim": ("modelled_time", "global_bytes", "launches", "none"), "cuda": ("time", "none")}
KEYS = {"points", "performance_points", "criterion_sim", "criterion_cuda", "allowed_libraries"}


def _parse_libraries(value: str, where: str) -> List[str]:
    from .symbol_policy import FACILITIES
    items = [v.strip().lower() for v in value.replace(",", " ").split()]
    libs = [v for v in items if v and v != "none"]
    unknown = [v for v in libs if v not in FACILITIES]
    if unknown:
        raise CourseError("%s: allowed_libraries names %s; known: %s" % (where, ", ".join(unknown),
                                                                       ", ".join(sorted(FACILITIES))))
    return libs


def _parse_extras(rubric: "Rubric", name: Optional[str], options: Dict[str, str], where: str) -> None:
    unknown = sorted(set(options) - KEYS)
    if unknown:
        raise CourseError("%s: unknown key%s %s (known: %s)" % (where, "s" if len(unknown) > 1 else "",
                                                               ", ".join(unknown), ", ".join(sorted(KEYS))))
    if "performance_points" in options:
        value = _parse_points(options["performance_points"], where)
        if name is None:
            rubric.default_performance = value
        else:
            rubric.performance[name] = value
    for backend in ("sim", "cuda"):
        key = "criterion_" + backend
        if key in options:
            value = options[key].strip().lower()
            if value not in CRITERIA[backend]:
                raise CourseError("%s: %s = '%s'; choose one of %s" % (where, key, value, ", ".join(CRITERIA[backend])))
            if name is None:
                rubric.default_criteria[backend] = value
            else:
                rubric.criteria.setdefault(name, {})[backend] = value
    if "allowed_libraries" in options:
        libs = _parse_libraries(options["allowed_libraries"], where)
        if name is None:
            rubric.default_libraries = libs
        else:
            rubric.libraries[name] = libs


def parse_rubric(text: str, lesson: str, path: str) -> Rubric:
    parser = configparser.ConfigParser(interpolation=None, inline_comment_prefixes=("#", ";"))
    try:
        parser.read_string(text, source=path)
    except configparser.Error as exc:
        raise CourseError("%s is not a valid rubric: %s" % (path, str(exc).splitlines()[0]))
    rubric = Rubric(lesson=lesson, path=path)
    if "points" in parser.defaults():
        rubric.default = _parse_points(parser.defaults()["points"], path + " [DEFAULT]")
    _parse_extras(rubric, None, dict(parser.defaults()), path + " [DEFAULT]")
    for section in parser.sections():
        if not parser.has_option(section, "points"):
            raise CourseError("%s: section [%s] has no 'points = N' line" % (path, section))
        rubric.points[section] = _parse_points(parser.get(section, "points"), "%s [%s]" % (path, section))
        _parse_extras(rubric, section, dict(parser.items(section)), "%s [%s]" % (path, section))
    return rubric


def load_rubric(root: str, lesson: str) -> Rubric:
    path = os.path.join(root, "autograder", "rubric", lesson + ".ini")
    display = os.path.relpath(path, root)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        return Rubric(lesson=lesson, path=display, exists=False)
    return parse_rubric(text, lesson, display)


def score(points: float, passed: int, total: int) -> float:
    """points x passed/total, rounded to hundredths; no tests means no points."""
    if total <= 0 or passed <= 0:
        return 0.0
    return round(points * min(passed, total) / total, 2)
