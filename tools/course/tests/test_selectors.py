"""LESSON[/EXERCISE] selectors, resolved against a manifest shaped like CMake's."""
import os
import tempfile
import unittest

import support
from course.errors import CourseError
from course.manifest import load_manifest, parse_manifest, resolve_lesson, select_exercises


class Selectors(unittest.TestCase):
    def setUp(self):
        self.manifest = parse_manifest(support.fake_manifest_data(), "fake/course_manifest.json")

    def names(self, selector):
        return [ex.key for ex in select_exercises(self.manifest, selector)]

    def test_everything_in_course_order(self):
        self.assertEqual(self.names(None), ["00-gpu-vs-cpu/vector_add", "00-gpu-vs-cpu/saxpy",
                                            "01-serial-dependency/rnn_step"])

    def test_lesson_by_number_or_folder(self):
        expected = ["00-gpu-vs-cpu/vector_add", "00-gpu-vs-cpu/saxpy"]
        for selector in ("00", "0", "00-gpu-vs-cpu", "00-gpu-vs-cpu/"):
            self.assertEqual(self.names(selector), expected, selector)

    def test_exercise_by_name_order_or_file(self):
        for selector in ("00/saxpy", "00-gpu-vs-cpu/saxpy", "0/02", "00/02_saxpy.cu", "00/02_saxpy"):
            self.assertEqual(self.names(selector), ["00-gpu-vs-cpu/saxpy"], selector)

    def test_unknown_lesson_is_a_usage_error(self):
        with self.assertRaises(CourseError) as ctx:
            select_exercises(self.manifest, "07")
        self.assertEqual(ctx.exception.exit_code, 2)
        self.assertIn("00-gpu-vs-cpu", ctx.exception.message)   # the message lists the lessons

    def test_unknown_exercise_is_a_usage_error(self):
        with self.assertRaises(CourseError) as ctx:
            select_exercises(self.manifest, "00/matmul")
        self.assertEqual(ctx.exception.exit_code, 2)
        self.assertIn("vector_add", ctx.exception.message)

    def test_resolve_lesson(self):
        self.assertEqual(resolve_lesson(self.manifest, "1"), "01-serial-dependency")

    def test_variants(self):
        ex = select_exercises(self.manifest, "00/vector_add")[0]
        self.assertEqual(ex.variant("submission").target, "submission_00_vector_add")
        self.assertTrue(ex.variant("solution").executable.endswith("/solution/00-gpu-vs-cpu/vector_add_test"))


class ManifestFiles(unittest.TestCase):
    def test_load_from_a_build_folder(self):
        with tempfile.TemporaryDirectory() as build:
            support.write_json(os.path.join(build, "course_manifest.json"), support.fake_manifest_data(build))
            manifest = load_manifest(build)
            self.assertEqual(manifest.backend, "sim")
            self.assertEqual(manifest.lessons(), ["00-gpu-vs-cpu", "01-serial-dependency"])

    def test_missing_manifest(self):
        with tempfile.TemporaryDirectory() as build:
            with self.assertRaises(CourseError) as ctx:
                load_manifest(build)
            self.assertEqual(ctx.exception.exit_code, 1)

    def test_malformed_manifest(self):
        with tempfile.TemporaryDirectory() as build:
            support.write_json(os.path.join(build, "course_manifest.json"), {"exercises": [{"lesson": "00-x"}]})
            with self.assertRaises(CourseError):
                load_manifest(build)


if __name__ == "__main__":
    unittest.main()
