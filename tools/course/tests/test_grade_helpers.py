"""The grader's preparation: which files of a submission are copied, where it is built."""
import os
import shutil
import subprocess
import tempfile
import unittest

import support
from course.errors import CourseError
from course.grade import copy_submission, grade_build_dir, lesson_arguments, validate_lesson_argument


def touch(path, text="// code\n"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


class CopyingASubmission(unittest.TestCase):
    def test_only_known_files_are_copied(self):
        known = {"00-gpu-vs-cpu": {"01_vector_add.cu", "02_saxpy.cu"}}
        with tempfile.TemporaryDirectory() as tmp:
            sub = os.path.join(tmp, "sub")
            touch(os.path.join(sub, "00-gpu-vs-cpu", "01_vector_add.cu"), "int mine;\n")
            touch(os.path.join(sub, "00-gpu-vs-cpu", "99_extra.cu"))
            touch(os.path.join(sub, "00-gpu-vs-cpu", "notes.txt"))
            secret = os.path.join(tmp, "secret.cu")
            touch(secret)
            os.symlink(secret, os.path.join(sub, "00-gpu-vs-cpu", "02_saxpy.cu"))
            dest = os.path.join(tmp, "copy")
            submitted, others = copy_submission(sub, known, dest)
            self.assertEqual(submitted, {"00-gpu-vs-cpu/01_vector_add.cu"})
            with open(os.path.join(dest, "00-gpu-vs-cpu", "01_vector_add.cu")) as f:
                self.assertEqual(f.read(), "int mine;\n")
            self.assertFalse(os.path.exists(os.path.join(dest, "00-gpu-vs-cpu", "02_saxpy.cu")))
            self.assertFalse(os.path.exists(os.path.join(dest, "00-gpu-vs-cpu", "99_extra.cu")))
            self.assertIn("00-gpu-vs-cpu/99_extra.cu", others)

    def test_a_second_submission_replaces_the_first_by_content(self):
        # The copy is kept between gradings: an unchanged file keeps its time (no rebuild),
        # a changed one is rewritten, and nothing of the previous submission stays behind.
        known = {"00-gpu-vs-cpu": {"01_vector_add.cu", "02_saxpy.cu"}}
        with tempfile.TemporaryDirectory() as tmp:
            dest = os.path.join(tmp, "copy")
            first, second = os.path.join(tmp, "first"), os.path.join(tmp, "second")
            touch(os.path.join(first, "00-gpu-vs-cpu", "01_vector_add.cu"), "int same;\n")
            touch(os.path.join(first, "00-gpu-vs-cpu", "02_saxpy.cu"), "int old;\n")
            touch(os.path.join(second, "00-gpu-vs-cpu", "01_vector_add.cu"), "int same;\n")
            copy_submission(first, known, dest)
            kept = os.path.join(dest, "00-gpu-vs-cpu", "01_vector_add.cu")
            os.utime(kept, (1000, 1000))
            touch(os.path.join(dest, "00-gpu-vs-cpu", "planted.h"), "left behind")
            touch(os.path.join(dest, "elsewhere", "x.cu"), "left behind")
            submitted, _ = copy_submission(second, known, dest)
            self.assertEqual(submitted, {"00-gpu-vs-cpu/01_vector_add.cu"})
            self.assertEqual(os.path.getmtime(kept), 1000)
            self.assertEqual(sorted(os.listdir(dest)), ["00-gpu-vs-cpu"])
            self.assertEqual(os.listdir(os.path.join(dest, "00-gpu-vs-cpu")), ["01_vector_add.cu"])
            touch(os.path.join(second, "00-gpu-vs-cpu", "01_vector_add.cu"), "int diff;\n")
            copy_submission(second, known, dest)
            with open(kept) as f:
                self.assertEqual(f.read(), "int diff;\n")

    def test_build_folder_depends_on_the_submission_path(self):
        a = grade_build_dir("/repo", "sim", "/tmp/a")
        self.assertEqual(a, grade_build_dir("/repo", "sim", "/tmp/a/"))
        self.assertNotEqual(a, grade_build_dir("/repo", "sim", "/tmp/b"))
        self.assertTrue(a.startswith("/repo/build/grade-sim/"))


class LessonArgument(unittest.TestCase):
    def test_known_lesson_forms(self):
        for text in ("00", "0", "00-gpu-vs-cpu", None):
            validate_lesson_argument(support.REPO_ROOT, text)

    def test_unknown_lesson(self):
        for text in ("17", "00,17", ",", "00-gpu-vs-gpu"):
            with self.assertRaises(CourseError, msg=text) as ctx:
                validate_lesson_argument(support.REPO_ROOT, text)
            self.assertEqual(ctx.exception.exit_code, 2)

    def test_several_lessons(self):
        validate_lesson_argument(support.REPO_ROOT, "00,03-matmul-reuse")
        self.assertEqual(lesson_arguments(" 00, 3 ,"), ["00", "3"])


if __name__ == "__main__":
    unittest.main()


class WhoseBuildFailure(unittest.TestCase):
    EXE = "/b/exercises/submission/00-gpu-vs-cpu/vector_add_test"

    def test_the_exercise_file_or_its_link_is_the_students(self):
        from course.build import course_code_failure
        own = ("FAILED: exercises/CMakeFiles/submission_00_vector_add.dir/cudasim_rewritten/"
               "submission_00_vector_add/01_vector_add.cu.cpp.o \nerror\n")
        link = "FAILED: exercises/submission/00-gpu-vs-cpu/vector_add_test \nundefined reference\n"
        self.assertEqual(course_code_failure(own, "01_vector_add.cu", self.EXE), "")
        self.assertEqual(course_code_failure(link, "01_vector_add.cu", self.EXE), "")
        # The grader's split program: the worker's link holds the submission (a clash of its
        # definitions with the simulator's is the submission's); the judge's is the course's.
        worker = "FAILED: exercises/submission/00-gpu-vs-cpu/vector_add_worker \nmultiple definition\n"
        self.assertEqual(course_code_failure(worker, "01_vector_add.cu", self.EXE), "")
        other = "FAILED: exercises/submission/00-gpu-vs-cpu/saxpy_worker \nmultiple definition\n"
        self.assertIn("saxpy_worker", course_code_failure(other, "01_vector_add.cu", self.EXE))

    def test_a_simulator_or_test_file_is_the_courses(self):
        from course.build import course_code_failure
        sim = "[1/9] Building\nFAILED: cudasim/CMakeFiles/cudasim.dir/src/block_scheduler.cpp.o \nerror\n"
        self.assertIn("block_scheduler", course_code_failure(sim, "01_vector_add.cu", self.EXE))
        test = "FAILED: CMakeFiles/submission_00_vector_add.dir/autograder/tests/test_vector_add.cpp.o \n"
        self.assertIn("test_vector_add", course_code_failure(test, "01_vector_add.cu", self.EXE))


class CtestSummary(unittest.TestCase):
    def test_not_run_counts_as_failed(self):
        from course.selftest import parse_ctest_summary
        text = """ 1/3 Test #1: a ....   Passed    0.01 sec
71% tests passed, 2 tests failed out of 7

Total Test time (real) =   0.50 sec

The following tests FAILED:
\t  2 - solution/00-gpu-vs-cpu/saxpy (Not Run)
\t  3 - cudasim/rewrite (Failed)
Errors while running CTest
"""
        self.assertEqual(parse_ctest_summary(text), (5, 2, ["solution/00-gpu-vs-cpu/saxpy", "cudasim/rewrite"]))

    def test_ctest_leaves_out_only_what_it_is_asked_to(self):
        from course.selftest import ctest_command
        from course.backend import Toolchain
        toolchain = Toolchain(backend="sim", cmake="/usr/bin/cmake", cmake_version=(3, 25), generator="Ninja")
        plain = ctest_command(toolchain, "build/x")
        self.assertNotIn("-E", plain)
        lighter = ctest_command(toolchain, "build/x", exclude="^grader/planted-submissions$")
        self.assertEqual(lighter[-2:], ["-E", "^grader/planted-submissions$"])
        self.assertEqual(lighter[:-2], plain)

    def test_all_passed(self):
        from course.selftest import parse_ctest_summary
        self.assertEqual(parse_ctest_summary("100% tests passed, 0 tests failed out of 12\n"), (12, 0, []))
        self.assertIsNone(parse_ctest_summary("No tests were found!!!\n"))


class SnapshotByContent(unittest.TestCase):
    """A program that rewrote a file of the snapshot (same size, old time) poisons nothing."""

    def setUp(self):
        self.src = tempfile.mkdtemp()
        self.dst = tempfile.mkdtemp()
        os.makedirs(os.path.join(self.src, "autograder", "tests"))
        self.test_file = os.path.join(self.src, "autograder", "tests", "test_a.cpp")
        with open(self.test_file, "w") as f:
            f.write("EXPECT_TRUE(all_close(expected, actual));\n")

    def tearDown(self):
        for d in (self.src, self.dst):
            subprocess.run(["chmod", "-R", "u+w", d])
            shutil.rmtree(d, ignore_errors=True)

    def test_a_same_size_same_time_rewrite_is_undone(self):
        from course.grade import sync_tree
        sync_tree(self.src, self.dst, parts=("autograder/tests",))
        copy = os.path.join(self.dst, "autograder", "tests", "test_a.cpp")
        before = os.stat(copy)
        os.chmod(copy, 0o644)
        with open(copy, "w") as f:                      # the poisoned copy: same length, same time
            f.write("EXPECT_TRUE(true || all_close(e, a)) ;\n".ljust(len("EXPECT_TRUE(all_close(expected, actual));")) + "\n")
        self.assertEqual(os.path.getsize(copy), before.st_size)
        os.utime(copy, ns=(before.st_atime_ns, before.st_mtime_ns))
        sync_tree(self.src, self.dst, parts=("autograder/tests",))
        with open(copy) as f:
            self.assertEqual(f.read(), "EXPECT_TRUE(all_close(expected, actual));\n")
        self.assertGreater(os.stat(copy).st_mtime_ns, before.st_mtime_ns)   # newer than what was built from it
        self.assertFalse(os.access(copy, os.W_OK) and os.geteuid() != 0)     # read-only (root ignores modes)

    def test_a_planted_link_is_replaced_not_followed(self):
        from course.grade import sync_tree
        sync_tree(self.src, self.dst, parts=("autograder/tests",))
        copy = os.path.join(self.dst, "autograder", "tests", "test_a.cpp")
        outside = os.path.join(self.src, "outside.txt")      # not a part of the snapshot
        with open(outside, "w") as f:
            f.write("untouched\n")
        os.remove(copy)
        os.symlink(outside, copy)
        sync_tree(self.src, self.dst, parts=("autograder/tests",))
        self.assertFalse(os.path.islink(copy))
        with open(outside) as f:
            self.assertEqual(f.read(), "untouched\n")
