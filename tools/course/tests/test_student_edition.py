"""./course export-student: the student edition has no solutions/ and no hidden hint levels,
refuses a bad destination, and works as a course of its own (list, next, hint). The slow
check (COURSE_SLOW_TESTS=1) builds the edition's lesson 00 and checks that the untouched
skeletons fail every test and that ./course grade degrades to correctness only."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from support import REPO_ROOT, run_cli

from course.hints import load_hints
from course.learner import course_exercises
from course.student_edition import check_destination, course_files, export_student
from course.errors import CourseError

SLOW = os.environ.get("COURSE_SLOW_TESTS") == "1"


def run_course(root: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("COURSE_BACKEND", None)
    return subprocess.run([sys.executable, os.path.join(root, "tools", "course")] + list(args), cwd=root,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, env=env,
                          timeout=timeout)


def tool_missing() -> str:
    """Why the edition's own ./course cannot configure here ('' when it can)."""
    if not shutil.which("cmake"):
        return "cmake is not installed"
    if not (shutil.which("clang++") or any(shutil.which("clang++-%d" % v) for v in range(14, 30))):
        return "clang++ is not installed"
    return ""


class StudentEdition(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.parent = tempfile.mkdtemp(prefix="course-student-edition-")
        cls.edition = os.path.join(cls.parent, "class-repo")
        proc = run_cli("export-student", cls.edition)
        cls.export_output = proc.stdout + proc.stderr
        cls.export_status = proc.returncode

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.parent, ignore_errors=True)

    def test_the_export_succeeds_and_says_what_it_left_out(self):
        self.assertEqual(self.export_status, 0, self.export_output)
        self.assertIn("without solutions/", self.export_output)

    def test_no_solutions_no_answers_and_no_planted_submissions(self):
        self.assertFalse(os.path.exists(os.path.join(self.edition, "solutions")))
        self.assertFalse(os.path.exists(os.path.join(self.edition, "autograder", "submissions")))
        self.assertTrue(os.path.isdir(os.path.join(self.edition, "autograder", "tests")))
        for dirpath, _, filenames in os.walk(self.edition):
            self.assertNotIn("answers.md", filenames, dirpath)

    def test_no_hidden_hint_levels_and_every_visible_one_kept(self):
        for ex in course_exercises(REPO_ROOT):
            full, student = load_hints(REPO_ROOT, ex), load_hints(self.edition, ex)
            self.assertIsNotNone(student, ex.key)
            self.assertFalse(any(level.hidden for level in student.levels), ex.key)
            self.assertEqual(student.visible(), full.visible(), ex.key)
        with open(os.path.join(self.edition, "lessons", "00-gpu-vs-cpu", "hints", "vector_add.md")) as f:
            self.assertNotIn("(hidden)", f.read())

    def test_exercises_lessons_and_tests_are_the_courses_own(self):
        files, _ = course_files(REPO_ROOT)
        for rel in files:
            if rel.startswith(("exercises/", "autograder/tests/")) or rel.endswith("questions.md"):
                with open(os.path.join(REPO_ROOT, rel), "rb") as a, open(os.path.join(self.edition, rel), "rb") as b:
                    self.assertEqual(a.read(), b.read(), rel)
        self.assertTrue(os.access(os.path.join(self.edition, "course"), os.X_OK))

    def test_the_editions_hint_and_next_work(self):
        proc = run_course(self.edition, "hint", "00/vector_add")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("hint 1 of 3", proc.stdout)
        self.assertTrue(os.path.isfile(os.path.join(self.edition, "build", "hints_seen.json")))
        proc = run_course(self.edition, "--backend", "sim", "next")
        self.assertIn("next: 00-gpu-vs-cpu/vector_add", proc.stdout)

    def test_the_editions_list_works(self):
        missing = tool_missing()
        if missing:
            self.skipTest(missing)
        proc = run_course(self.edition, "--backend", "sim", "list")
        self.assertEqual(proc.returncode, 0, proc.stderr[-2000:])
        self.assertIn("exercises/00-gpu-vs-cpu/01_vector_add.cu", proc.stdout)
        self.assertIn("not run", proc.stdout)

    @unittest.skipUnless(SLOW, "slow (builds lesson 00 in the edition): COURSE_SLOW_TESTS=1")
    def test_the_editions_skeletons_build_and_fail_and_grade_is_correctness_only(self):
        missing = tool_missing()
        if missing:
            self.skipTest(missing)
        proc = run_course(self.edition, "--backend", "sim", "test", "00", timeout=1800)
        self.assertEqual(proc.returncode, 1, proc.stdout[-3000:] + proc.stderr[-3000:])
        for ex in course_exercises(REPO_ROOT)[:4]:
            self.assertRegex(proc.stdout, r"%s\s+0/\d+\s+failed" % ex.key)
        self.assertIn("next: 00-gpu-vs-cpu/vector_add", proc.stdout)
        proc = run_course(self.edition, "--backend", "sim", "grade", "--lesson", "00", timeout=1800)
        self.assertEqual(proc.returncode, 0, proc.stdout[-3000:] + proc.stderr[-3000:])
        self.assertIn("performance grading needs the instructor's copy", proc.stderr)


class Destination(unittest.TestCase):
    def test_a_folder_that_is_not_empty_or_inside_the_course_is_refused(self):
        with tempfile.TemporaryDirectory() as parent:
            open(os.path.join(parent, "something"), "w").close()
            with self.assertRaises(CourseError):
                check_destination(REPO_ROOT, parent)
        for inside in (REPO_ROOT, os.path.join(REPO_ROOT, "build", "student")):
            with self.assertRaises(CourseError):
                check_destination(REPO_ROOT, inside)
        proc = run_cli("export-student", os.path.join(REPO_ROOT, "lessons", "student"))
        self.assertEqual(proc.returncode, 2)
        self.assertIn("inside the course", proc.stderr)
        self.assertFalse(os.path.exists(os.path.join(REPO_ROOT, "lessons", "student")))

    def test_an_empty_folder_is_accepted(self):
        with tempfile.TemporaryDirectory() as parent:
            self.assertEqual(check_destination(REPO_ROOT, parent), os.path.realpath(parent))


class NotAGitCheckout(unittest.TestCase):
    def test_a_plain_tree_is_walked_without_its_build_folder(self):
        with tempfile.TemporaryDirectory() as parent:
            course = os.path.join(parent, "course-copy")
            for rel, text in (("course", "#!/bin/sh\n"), ("exercises/00-x/01_a.cu", "// skeleton\n"),
                              ("solutions/00-x/01_a.cu", "// answer\n"), ("build/sim/junk", "x"),
                              ("lessons/00-x/hints/a.md", "## Level 1\nnudge\n## Level 2 (hidden)\nsecret\n")):
                path = os.path.join(course, rel)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as f:
                    f.write(text)
            files, origin = course_files(course)
            self.assertIn("not a git checkout", origin)
            self.assertNotIn("build/sim/junk", files)
            dest = os.path.join(parent, "edition")
            with open(os.devnull, "w") as null:
                saved, sys.stdout = sys.stdout, null
                try:
                    self.assertEqual(export_student(course, dest), 0)
                finally:
                    sys.stdout = saved
            self.assertTrue(os.path.isfile(os.path.join(dest, "exercises", "00-x", "01_a.cu")))
            self.assertFalse(os.path.exists(os.path.join(dest, "solutions")))
            self.assertFalse(os.path.exists(os.path.join(dest, "build")))
            with open(os.path.join(dest, "lessons", "00-x", "hints", "a.md")) as f:
                self.assertEqual(f.read(), "## Level 1\nnudge\n")


if __name__ == "__main__":
    unittest.main()
