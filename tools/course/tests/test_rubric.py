"""Rubric files and the score formula."""
import unittest

import support
from course.errors import CourseError
from course.rubric import DEFAULT_POINTS, load_rubric, parse_rubric, score


class RubricParsing(unittest.TestCase):
    def test_points_per_section(self):
        rubric = parse_rubric("# comment\n[vector_add]\npoints = 10\n[saxpy]\npoints = 7.5 ; inline\n", "00-x", "r.ini")
        self.assertEqual(rubric.points_for("vector_add"), 10)
        self.assertEqual(rubric.points_for("saxpy"), 7.5)
        self.assertEqual(rubric.points_for("unknown"), DEFAULT_POINTS)
        self.assertEqual(len(rubric.warnings(["vector_add", "saxpy", "unknown"])), 1)

    def test_default_section(self):
        rubric = parse_rubric("[DEFAULT]\npoints = 4\n[a]\npoints = 2\n", "00-x", "r.ini")
        self.assertEqual(rubric.points_for("a"), 2)
        self.assertEqual(rubric.points_for("b"), 4)
        self.assertEqual(rubric.warnings(["a", "b"]), [])

    def test_bad_values_are_clear_errors(self):
        for text in ("[a]\npoints = ten\n", "[a]\npoints = -1\n", "[a]\npoints = nan\n", "[a]\nweight = 3\n",
                     "points = 3\n", "[a]\npoints = 1\n[a]\npoints = 2\n", "[a]\npoints = 1\nallowed_libraries = curl\n"):
            with self.assertRaises(CourseError, msg=text) as ctx:
                parse_rubric(text, "00-x", "r.ini")
            self.assertIn("r.ini", ctx.exception.message)
            self.assertEqual(len(ctx.exception.message.splitlines()), 1)

    def test_facilities(self):
        rubric = parse_rubric("[a]\npoints = 1\nallowed_libraries = threads, files\n[b]\npoints = 1\n", "00-x", "r.ini")
        self.assertEqual(rubric.allowed_libraries("a"), ["threads", "files"])
        self.assertEqual(rubric.allowed_libraries("b"), [])

    def test_lesson_00_rubric_in_the_repository(self):
        rubric = load_rubric(support.REPO_ROOT, "00-gpu-vs-cpu")
        self.assertTrue(rubric.exists)
        self.assertEqual(rubric.points, {"vector_add": 10, "saxpy": 10, "rgb_to_gray": 10, "error_checking": 10})

    def test_missing_rubric_file_defaults_and_warns(self):
        rubric = load_rubric(support.REPO_ROOT, "99-no-such-lesson")
        self.assertFalse(rubric.exists)
        self.assertEqual(rubric.points_for("x"), DEFAULT_POINTS)
        self.assertEqual(len(rubric.warnings(["x"])), 1)


class ScoreFormula(unittest.TestCase):
    def test_points_times_fraction_passed(self):
        self.assertEqual(score(10, 3, 3), 10)
        self.assertEqual(score(10, 2, 3), 6.67)
        self.assertEqual(score(10, 0, 3), 0)

    def test_no_tests_no_points(self):
        self.assertEqual(score(10, 0, 0), 0)
        self.assertEqual(score(10, 5, 0), 0)


if __name__ == "__main__":
    unittest.main()
