"""./course hint and ./course next: hint files, levels that advance, hidden levels, the next
unfinished exercise from a state (no build, no simulator needed)."""
import contextlib
import io
import json
import os
import re
import shutil
import tempfile
import unittest

from support import REPO_ROOT, run_cli

from course.errors import CourseError
from course.hints import load_hints, parse_hints, show_hint, strip_hidden
from course.learner import course_exercises, describe_next, next_line, next_unfinished, show_next
from course.state import load_hints_seen

HINTS = """# Hints: 00/vector_add

Lesson section: 2. The model

## Level 1

a nudge

## Level 2

the next step

## Level 3

the approach

## Level 4 (hidden)

instructors only
"""

README = """# Lesson 00

## 1. Intro

```
## not a heading (inside a code block)
```

## 2. The model

text

## 5. Exercises

| 1 | `vector_add` | `exercises/00-gpu-vs-cpu/01_vector_add.cu` |
| 2 | `saxpy` | `exercises/00-gpu-vs-cpu/02_saxpy.cu` |
"""


def fake_course(root: str) -> None:
    """Two lessons, three exercises, hints for vector_add only."""
    lessons = {"00-gpu-vs-cpu": ["course_add_exercise(ORDER 02 NAME saxpy)",
                                 "# course_add_exercise(ORDER 09 NAME commented_out)",
                                 "course_add_exercise(ORDER 01 NAME vector_add)"],
               "01-serial-dependency": ["course_add_exercise(ORDER 01 NAME rnn_step LIBRARIES cublas)"]}
    for lesson, lines in lessons.items():
        os.makedirs(os.path.join(root, "lessons", lesson, "hints"))
        with open(os.path.join(root, "lessons", lesson, "CMakeLists.txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
        with open(os.path.join(root, "lessons", lesson, "README.md"), "w") as f:
            f.write(README)
    with open(os.path.join(root, "lessons", "00-gpu-vs-cpu", "hints", "vector_add.md"), "w") as f:
        f.write(HINTS)


def call(function, *args, **kwargs) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        function(*args, **kwargs)
    return out.getvalue()


class HintFiles(unittest.TestCase):
    def test_levels_sections_and_hidden_levels_are_read(self):
        hints = parse_hints(HINTS)
        self.assertEqual(hints.section, "2. The model")
        self.assertEqual([(lv.number, lv.hidden) for lv in hints.levels],
                         [(1, False), (2, False), (3, False), (4, True)])
        self.assertEqual([lv.text for lv in hints.visible()], ["a nudge", "the next step", "the approach"])

    def test_strip_hidden_removes_only_the_hidden_levels(self):
        stripped = strip_hidden(HINTS)
        self.assertNotIn("instructors only", stripped)
        self.assertNotIn("(hidden)", stripped)
        self.assertEqual(parse_hints(stripped).visible(), parse_hints(HINTS).visible())

    def test_levels_out_of_order_are_an_error(self):
        with self.assertRaises(CourseError):
            parse_hints("## Level 1\na\n## Level 3\nb\n")

    def test_every_exercise_of_the_course_has_three_visible_levels_and_a_lesson_section(self):
        exercises = course_exercises(REPO_ROOT)
        self.assertGreaterEqual(len(exercises), 26)
        for ex in exercises:
            hints = load_hints(REPO_ROOT, ex)
            self.assertIsNotNone(hints, "no hints for " + ex.key)
            self.assertGreaterEqual(len(hints.visible()), 3, ex.key)
            _, where = describe_next(REPO_ROOT, ex)
            self.assertIn("§ " + hints.section, where, ex.key)
            for level in hints.levels:
                # The approach, never the code: no statement, launch or declaration lines.
                for line in level.text.splitlines():
                    self.assertFalse(re.search(r"<<<|\b(for|if|while)\s*\(|CUDA_CHECK\(|__syncthreads\(\)|"
                                               r"\w\[[^\]]*\]\s*[-+*/]?=[^=]", line),
                                     "%s hint %d reads like code: %s" % (ex.key, level.number, line))


class FakeCourseTest(unittest.TestCase):
    """Each test in a fresh fake course (its own build/ state)."""

    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="course-learner-")
        self.addCleanup(shutil.rmtree, self.root, True)
        fake_course(self.root)


class HintCommand(FakeCourseTest):

    def test_each_call_shows_the_next_level_and_the_last_one_stays(self):
        shown = [call(show_hint, self.root, "00/vector_add") for _ in range(4)]
        self.assertIn("hint 1 of 3", shown[0])
        self.assertIn("a nudge", shown[0])
        self.assertIn("again for hint 2 of 3", shown[0])
        self.assertIn("the next step", shown[1])
        self.assertIn("the approach", shown[2])
        self.assertIn("last hint", shown[2])
        self.assertIn("hint 3 of 3", shown[3])
        self.assertFalse(any("instructors only" in text for text in shown))
        self.assertEqual(load_hints_seen(self.root), {"00-gpu-vs-cpu/vector_add": 3})

    def test_reset_starts_again_and_level_picks_one(self):
        call(show_hint, self.root, "00/vector_add")
        call(show_hint, self.root, "00/vector_add")
        self.assertIn("start again", call(show_hint, self.root, "00/vector_add", reset=True))
        self.assertIn("a nudge", call(show_hint, self.root, "00/vector_add"))
        self.assertIn("the approach", call(show_hint, self.root, "00/01_vector_add.cu", level=3))
        with self.assertRaises(CourseError):
            show_hint(self.root, "00/vector_add", level=4)     # hidden levels do not count

    def test_the_instructors_preview_shows_hidden_levels(self):
        text = call(show_hint, self.root, "00/vector_add", level=4, show_hidden=True)
        self.assertIn("instructors only", text)

    def test_an_exercise_without_hints_and_a_lesson_without_exercise(self):
        self.assertIn("no hints", call(show_hint, self.root, "00/saxpy"))
        with self.assertRaises(CourseError):
            show_hint(self.root, "00")
        with self.assertRaises(CourseError):
            show_hint(self.root, "00/nope")

    def test_cli_errors_are_one_line_and_exit_2(self):
        for args in (["hint", "00"], ["hint", "00/no_such_exercise"], ["hint", "00/vector_add", "--level", "0"]):
            proc = run_cli(*args)
            self.assertEqual(proc.returncode, 2, args)
            self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)


class NextExercise(FakeCourseTest):

    def test_the_exercises_come_from_the_lessons_cmake_files_in_order(self):
        self.assertEqual([ex.key for ex in course_exercises(self.root)],
                         ["00-gpu-vs-cpu/vector_add", "00-gpu-vs-cpu/saxpy", "01-serial-dependency/rnn_step"])

    def test_next_is_the_first_exercise_that_has_not_passed(self):
        exercises = course_exercises(self.root)
        self.assertEqual(next_unfinished(exercises, {}).name, "vector_add")
        state = {"00-gpu-vs-cpu/vector_add": {"status": "passed"},
                 "00-gpu-vs-cpu/saxpy": {"status": "failed"}}
        self.assertEqual(next_unfinished(exercises, state).name, "saxpy")
        state["00-gpu-vs-cpu/saxpy"]["status"] = "passed"
        self.assertEqual(next_unfinished(exercises, state).name, "rnn_step")
        # after ./course test 01, the exercise just tested comes first when it failed
        state = {"01-serial-dependency/rnn_step": {"status": "compile error"}}
        self.assertEqual(next_unfinished(exercises, state, prefer=["01-serial-dependency/rnn_step"]).name,
                         "rnn_step")
        everything = {ex.key: {"status": "passed"} for ex in exercises}
        self.assertIsNone(next_unfinished(exercises, everything))

    def test_the_line_after_test_names_the_file_and_the_section(self):
        line = next_line(self.root, "sim", {"00-gpu-vs-cpu/vector_add": {"status": "passed"}})
        self.assertEqual(len(line.splitlines()), 1)
        self.assertIn("00-gpu-vs-cpu/saxpy", line)
        self.assertIn("exercises/00-gpu-vs-cpu/02_saxpy.cu", line)
        self.assertIn("§ 5. Exercises (line", line)          # no hints file: where the file is named
        line = next_line(self.root, "sim", {})
        self.assertIn("§ 2. The model (line", line)         # the hints file names the section
        everything = {ex.key: {"status": "passed"} for ex in course_exercises(self.root)}
        self.assertIn("every exercise passes", next_line(self.root, "sim", everything))

    def test_show_next_reads_the_state_of_the_backend(self):
        state_dir = os.path.join(self.root, "build", "sim")
        os.makedirs(state_dir)
        with open(os.path.join(state_dir, "course_state.json"), "w") as f:
            json.dump({"backend": "sim", "exercises": {
                "00-gpu-vs-cpu/vector_add": {"status": "passed", "passed": 5, "total": 5},
                "00-gpu-vs-cpu/saxpy": {"status": "failed", "passed": 1, "total": 4}}}, f)
        text = call(show_next, self.root, "sim")
        self.assertIn("next: 00-gpu-vs-cpu/saxpy  [failed (1/4 tests) on the sim backend]", text)
        self.assertIn("./course test 00/saxpy", text)
        self.assertIn("00-gpu-vs-cpu/vector_add", call(show_next, self.root, "cuda"))   # no state there

    def test_hint_without_an_exercise_is_for_the_next_one(self):
        self.assertIn("for 00-gpu-vs-cpu/vector_add", call(show_hint, self.root, None, backend="sim"))
        state_dir = os.path.join(self.root, "build", "sim")
        os.makedirs(state_dir)
        with open(os.path.join(state_dir, "course_state.json"), "w") as f:
            json.dump({"exercises": {ex.key: {"status": "passed"} for ex in course_exercises(self.root)}}, f)
        self.assertIn("every exercise passes", call(show_hint, self.root, None, backend="sim"))

    def test_cli_next_runs_without_a_build(self):
        proc = run_cli("--backend", "sim", "next")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("next:", proc.stdout)


if __name__ == "__main__":
    unittest.main()
