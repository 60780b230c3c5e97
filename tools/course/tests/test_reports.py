"""Report formats: table, JSON, Gradescope's results.json, JUnit XML."""
import json
import os
import tempfile
import unittest
import xml.etree.ElementTree as ET

import support
from course.grade import ExerciseGrade, GradeReport
from course.reports import format_grade_table, gradescope_json, grade_json, junit_xml, render


def sample_report():
    perf = "not graded on sim yet"
    grades = [
        ExerciseGrade("00-gpu-vs-cpu", "vector_add", "00-gpu-vs-cpu/01_vector_add.cu", 10, 10, "passed", 4, 4,
                      performance=perf, performance_max=5, criterion="global_bytes"),
        ExerciseGrade("00-gpu-vs-cpu", "saxpy", "00-gpu-vs-cpu/02_saxpy.cu", 10, 5, "failed", 2, 4,
                      note="2 of 4 tests failed", feedback="Saxpy.Zero FAILED\n    expected 3, actual 0",
                      failures=[{"test": "Saxpy.Zero", "message": "expected 3, actual 0"}], performance=perf),
        ExerciseGrade("00-gpu-vs-cpu", "rgb_to_gray", "00-gpu-vs-cpu/03_rgb_to_gray.cu", 10, 0, "compile error",
                      note="does not compile", feedback="03_rgb_to_gray.cu:7:3: error: expected ';'",
                      performance=perf),
        ExerciseGrade("00-gpu-vs-cpu", "error_checking", "00-gpu-vs-cpu/04_error_checking.cu", 10, 0,
                      "not submitted", note="file not found in the submission", performance=perf),
    ]
    return GradeReport(backend="sim", submission="/tmp/sub", lesson=None, exercises=grades, execution_time=12.4)


class Gradescope(unittest.TestCase):
    def test_documented_fields(self):
        data = gradescope_json(sample_report())
        self.assertEqual(data["score"], 15)
        self.assertIsInstance(data["execution_time"], (int, float))
        self.assertIsInstance(data["output"], str)
        self.assertIn(data["visibility"], ("hidden", "after_due_date", "after_published", "visible"))
        self.assertEqual(len(data["tests"]), 4)
        for test in data["tests"]:
            self.assertEqual(set(test), {"name", "score", "max_score", "status", "output", "visibility"})
            self.assertIn(test["status"], ("passed", "failed"))
            self.assertLessEqual(test["score"], test["max_score"])
            self.assertIsInstance(test["output"], str)
        json.dumps(data)   # serialisable

    def test_failures_and_compiler_messages_reach_the_student(self):
        tests = {t["name"]: t for t in gradescope_json(sample_report())["tests"]}
        self.assertIn("expected 3, actual 0", tests["00-gpu-vs-cpu/saxpy"]["output"])
        self.assertIn("error: expected ';'", tests["00-gpu-vs-cpu/rgb_to_gray"]["output"])
        self.assertIn("not submitted", tests["00-gpu-vs-cpu/error_checking"]["output"])
        self.assertEqual(tests["00-gpu-vs-cpu/vector_add"]["status"], "passed")
        self.assertIn("not graded on sim yet", tests["00-gpu-vs-cpu/vector_add"]["output"])

    def test_gradescope_format_writes_results_json(self):
        with tempfile.TemporaryDirectory() as out:
            text, written = render(sample_report(), "gradescope", out)
            self.assertEqual(text, "")
            self.assertEqual(written, [os.path.join(out, "results.json")])
            with open(written[0]) as f:
                self.assertEqual(json.load(f)["score"], 15)

    def test_out_with_json_also_writes_results_json(self):
        with tempfile.TemporaryDirectory() as out:
            text, written = render(sample_report(), "json", os.path.join(out, "new"))
            self.assertEqual(json.loads(text)["score"], 15)
            self.assertTrue(os.path.exists(os.path.join(out, "new", "results.json")))


class OtherFormats(unittest.TestCase):
    def test_table_has_every_exercise_and_the_total(self):
        table = format_grade_table(sample_report())
        for name in ("vector_add", "saxpy", "rgb_to_gray", "error_checking"):
            self.assertIn("00-gpu-vs-cpu/" + name, table)
        self.assertIn("15/40", table)
        self.assertIn("2/4", table)
        self.assertIn("performance: not graded on sim yet", table)
        self.assertIn("error: expected ';'", table)

    def test_json(self):
        data = grade_json(sample_report())
        self.assertEqual((data["score"], data["max_score"]), (15, 40))
        self.assertEqual([e["status"] for e in data["exercises"]],
                         ["passed", "failed", "compile error", "not submitted"])
        self.assertEqual(data["performance"], "not graded on sim yet")

    def test_junit(self):
        root = ET.fromstring(junit_xml(sample_report()))
        cases = root.findall(".//testcase")
        self.assertEqual(len(cases), 4)
        self.assertEqual(len(root.findall(".//failure")), 3)
        self.assertEqual(root.get("failures"), "3")


if __name__ == "__main__":
    unittest.main()
