"""The build's list of exercises (``<build>/course_manifest.json``, written by CMake) and
the selectors users type to pick some of them (``00``, ``00-gpu-vs-cpu/vector_add``)."""
import json
import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from .errors import CourseError, FAILURE

MANIFEST_NAME = "course_manifest.json"


@dataclass
class Variant:
    target: str
    executable: str


@dataclass
class Exercise:
    lesson: str            # "00-gpu-vs-cpu"
    lesson_number: str     # "00"
    order: str             # "01"
    name: str              # "vector_add"
    file: str              # "01_vector_add.cu"
    test_source: str = ""
    variants: Dict[str, Variant] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """"00-gpu-vs-cpu/vector_add": how reports and the state file name an exercise."""
        return self.lesson + "/" + self.name

    def variant(self, name: str) -> Variant:
        if name not in self.variants:
            raise CourseError("the build has no %s variant of %s" % (name, self.key), FAILURE)
        return self.variants[name]


@dataclass
class Manifest:
    backend: str
    source_dir: str
    submission_dir: str
    exercises: List[Exercise]
    path: str = ""

    def lessons(self) -> List[str]:
        seen: List[str] = []
        for ex in self.exercises:
            if ex.lesson not in seen:
                seen.append(ex.lesson)
        return seen

    def lesson_exercises(self, lesson: str) -> List[Exercise]:
        return [ex for ex in self.exercises if ex.lesson == lesson]

    def exercise(self, lesson: str, name: str) -> Exercise:
        for ex in self.exercises:
            if ex.lesson == lesson and ex.name == name:
                return ex
        raise CourseError("the build in %s has no exercise %s/%s" % (os.path.dirname(self.path), lesson, name),
                          FAILURE)


def parse_manifest(data: dict, path: str = "") -> Manifest:
    try:
        exercises = []
        for item in data["exercises"]:
            variants = {name: Variant(target=v["target"], executable=v["executable"])
                        for name, v in item.get("variants", {}).items()}
            exercises.append(Exercise(lesson=item["lesson"], lesson_number=str(item["lesson_number"]),
                                      order=str(item.get("order", "")), name=item["name"],
                                      file=item["file"], test_source=item.get("test_source", ""),
                                      variants=variants))
        exercises.sort(key=lambda e: (e.lesson_number, e.lesson, e.order, e.name))
        return Manifest(backend=data.get("backend", ""), source_dir=data.get("source_dir", ""),
                        submission_dir=data.get("submission_dir", ""), exercises=exercises, path=path)
    except (KeyError, TypeError, AttributeError) as exc:
        raise CourseError("%s is not a valid course manifest (missing %s); reconfigure with "
                          "'rm -rf %s' and try again" % (path or "manifest", exc, os.path.dirname(path) or "build"),
                          FAILURE)


def load_build_json(build_dir: str, name: str) -> Tuple[object, str]:
    """Reads one of the JSON files CMake writes into a build folder; returns (data, path)."""
    path = os.path.join(build_dir, name)
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f), path
    except FileNotFoundError:
        raise CourseError("the build in %s has no %s (did CMake configure it?)" % (build_dir, name), FAILURE)
    except ValueError as exc:
        raise CourseError("%s is not valid JSON: %s" % (path, exc), FAILURE)


def load_manifest(build_dir: str) -> Manifest:
    data, path = load_build_json(build_dir, MANIFEST_NAME)
    return parse_manifest(data, path)


def match_lesson(manifest: Manifest, text: str) -> Optional[str]:
    """The lesson folder that ``text`` names: "00", "0", "00-gpu-vs-cpu" (None if none)."""
    text = text.strip().strip("/")
    for lesson in manifest.lessons():
        number = manifest.lesson_exercises(lesson)[0].lesson_number
        if text in (lesson, number):
            return lesson
        if text.isdigit() and number.isdigit() and int(text) == int(number):
            return lesson
    return None


def resolve_lesson(manifest: Manifest, text: str) -> str:
    lesson = match_lesson(manifest, text)
    if lesson is None:
        raise CourseError("unknown lesson '%s'; the lessons are: %s" % (text, ", ".join(manifest.lessons()) or "(none)"))
    return lesson


def select_exercises(manifest: Manifest, selector: Optional[str]) -> List[Exercise]:
    """Exercises named by LESSON[/EXERCISE]; all of them when ``selector`` is empty.

    EXERCISE may be the name (vector_add), the order (01) or the file (01_vector_add.cu)."""
    if not selector:
        return list(manifest.exercises)
    lesson_text, _, exercise_text = selector.strip().strip("/").partition("/")
    lesson = resolve_lesson(manifest, lesson_text)
    exercises = manifest.lesson_exercises(lesson)
    if not exercise_text:
        return exercises
    for ex in exercises:
        stem = os.path.splitext(ex.file)[0]
        if exercise_text in (ex.name, ex.order, ex.file, stem):
            return [ex]
    raise CourseError("lesson %s has no exercise '%s'; its exercises are: %s"
                      % (lesson, exercise_text, ", ".join(ex.name for ex in exercises)))
