"""grade-all: one submission's failure, whatever it is, costs only its own row."""
import csv
import os
import shutil
import tempfile
import unittest
from types import SimpleNamespace
from unittest import mock

import support  # noqa: F401  (sets up the import path)
from course import grade_all, sandbox


class _Report(SimpleNamespace):
    def to_dict(self):
        return {"score": self.score, "max_score": self.max_score, "seed": self.seed, "lesson": None,
                "exercises": [{"lesson": "01", "exercise": "scan", "score": 2.0, "status": "passed"}]}


GRADED = []
BUDGETS = []


def _fake_grade(root, toolchain, folder, lesson, **kwargs):
    name = os.path.basename(folder)
    GRADED.append(name)
    BUDGETS.append(kwargs.get("time_budget"))
    if name == "bob":
        raise RuntimeError("a submission broke the grader")
    exercise = SimpleNamespace(key="01/scan", total_score=2.0, status="passed")
    return _Report(score=2.0, max_score=2.0, exercises=[exercise], seed=kwargs.get("seed"))


class OneRowPerFailure(unittest.TestCase):
    def setUp(self):
        self.top = tempfile.mkdtemp(prefix="course-grade-all-")
        self.addCleanup(shutil.rmtree, self.top, True)
        self.submissions = os.path.join(self.top, "submissions")
        for student in ("alice", "bob", "carol"):
            os.makedirs(os.path.join(self.submissions, student))
        self.out = os.path.join(self.top, "out")
        hidden_before = list(sandbox._extra_hidden)
        self.addCleanup(lambda: sandbox._extra_hidden.__setitem__(slice(None), hidden_before))

    def grade_all(self, jobs, **kwargs):
        with mock.patch.object(grade_all, "grade_submission", _fake_grade), \
                mock.patch.object(grade_all, "Reference"), \
                mock.patch.object(grade_all, "course_snapshot", return_value="snapshot"), \
                mock.patch.object(grade_all, "validate_lesson_argument"), \
                mock.patch("course.reports.gradescope_json", return_value={}), \
                mock.patch("course.reports.format_grade_table", return_value=""), \
                mock.patch("sys.stdout"), mock.patch("sys.stderr"):
            grade_all.grade_all(self.top, SimpleNamespace(backend="sim"), self.submissions, self.out, None,
                                jobs=jobs, timeout=10, memory_bytes=None, **kwargs)

    def test_an_unexpected_exception_costs_one_row(self):
        self.grade_all(jobs=2)
        with open(os.path.join(self.out, "gradebook.csv"), encoding="utf-8") as f:
            rows = {r["student"]: r for r in csv.DictReader(f)}
        self.assertEqual(sorted(rows), ["alice", "bob", "carol"])
        self.assertEqual(rows["alice"]["score"], "2.0")
        self.assertEqual(rows["carol"]["score"], "2.0")
        self.assertEqual(rows["bob"]["score"], "0")
        self.assertIn("RuntimeError", rows["bob"]["error"])

    def test_each_submission_is_graded_within_the_time_budget(self):
        del BUDGETS[:]
        self.grade_all(jobs=2, time_budget=90.0)
        self.assertEqual(BUDGETS, [90.0, 90.0, 90.0])

    def test_resume_grades_only_what_an_interrupted_run_left(self):
        self.grade_all(jobs=1, seed=7)
        os.remove(os.path.join(self.out, "gradebook.csv"))     # as if it stopped before the end
        del GRADED[:]
        self.grade_all(jobs=1, resume=True)                     # the seed comes from the reports
        self.assertEqual(GRADED, ["bob"])                       # bob's grading had failed: no report
        with open(os.path.join(self.out, "gradebook.csv"), encoding="utf-8") as f:
            rows = {r["student"]: r for r in csv.DictReader(f)}
        self.assertEqual((rows["alice"]["score"], rows["carol"]["score"]), ("2.0", "2.0"))
        self.assertEqual(rows["alice"]["01/scan"], "2.0")
        del GRADED[:]
        self.grade_all(jobs=1, resume=True, seed=8)             # another seed: every report is stale
        self.assertEqual(sorted(GRADED), ["alice", "bob", "carol"])

    def test_running_record_is_replaced_by_the_gradebook(self):
        self.grade_all(jobs=1)
        self.assertFalse(os.path.exists(os.path.join(self.out, grade_all.PARTIAL_GRADEBOOK)))

    def test_running_record_has_one_line_per_finished_student(self):
        path = os.path.join(self.top, "partial.csv")
        grade_all.append_partial_row(path, grade_all.report_row("alice", None, "=boom"))
        grade_all.append_partial_row(path, {"student": "bob", "score": 3.0, "max_score": 4.0, "error": ""})
        with open(path, encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        self.assertEqual([r["student"] for r in rows], ["alice", "bob"])
        self.assertEqual(rows[0]["error"], "'=boom")
        self.assertEqual(rows[1]["score"], "3.0")

    def test_submissions_and_reports_are_hidden_from_test_programs(self):
        self.grade_all(jobs=1)
        self.assertIn(os.path.abspath(self.submissions), sandbox._extra_hidden)
        self.assertIn(os.path.abspath(self.out), sandbox._extra_hidden)


if __name__ == "__main__":
    unittest.main()
