"""Gradescope's flow as an instructor sets it up: run_autograder on a student's upload, for an
assignment of one lesson (make_zip.sh --lesson 00), written to results.json.

Run:  python3 -m unittest discover -s autograder/submissions -p 'test_*.py'"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import shards  # noqa: E402

RUN_AUTOGRADER = os.path.join(ROOT, "autograder", "gradescope", "run_autograder")
LESSON = "00-gpu-vs-cpu"
# Gradescope's documented fields (https://gradescope-autograders.readthedocs.io/en/latest/specs/)
TOP_FIELDS = {"score": (int, float), "execution_time": (int, float), "output": str, "visibility": str,
              "tests": list}
TEST_FIELDS = {"name": str, "score": (int, float), "max_score": (int, float), "status": str, "output": str,
               "visibility": str}


class GradescopeAssignment(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # Its tests share one staging folder (the second upload reuses the first's build): the
        # whole class runs in one of run_planted.py's processes.
        if not shards.claim(cls.__qualname__):
            raise unittest.SkipTest(shards.SKIP_REASON)
        cls.tmp = tempfile.mkdtemp(prefix="course-gradescope-")
        # One staging folder for the class, as in the image: the second upload reuses the build.
        cls.staging = os.path.join(cls.tmp, "staged")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def upload(self, base: str, name: str, extra: str = "") -> dict:
        """A flat upload of lesson 00's files from ``base``, graded as the lesson-00 assignment."""
        upload = os.path.join(self.tmp, name)
        os.makedirs(upload)
        for f in os.listdir(os.path.join(ROOT, base, LESSON)):
            if f.endswith(".cu"):
                shutil.copy(os.path.join(ROOT, base, LESSON, f), upload)
        if extra:
            with open(os.path.join(upload, extra), "w") as f:
                f.write("// a file no exercise is named like\n")
        results = os.path.join(self.tmp, name + "-results")
        env = dict(os.environ, COURSE_GRADESCOPE_SOURCE=ROOT, COURSE_GRADESCOPE_SUBMISSION=upload,
                   COURSE_GRADESCOPE_RESULTS=results, COURSE_GRADESCOPE_STAGING=self.staging,
                   COURSE_GRADESCOPE_LESSONS="00", COURSE_QUIET="1")
        subprocess.run(["bash", RUN_AUTOGRADER], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=1800, check=True)
        with open(os.path.join(results, "results.json"), encoding="utf-8") as f:
            return json.load(f)

    def check_format(self, result: dict) -> None:
        for key, kinds in TOP_FIELDS.items():
            self.assertIsInstance(result.get(key), kinds, key)
        for test in result["tests"]:
            for key, kinds in TEST_FIELDS.items():
                self.assertIsInstance(test.get(key), kinds, (test.get("name"), key))
            self.assertIn(test["status"], ("passed", "failed"))
            self.assertIn(test["visibility"], ("visible", "hidden", "after_due_date", "after_published"))

    def test_1_a_complete_lesson_gets_exactly_the_lessons_points(self):
        result = self.upload("solutions", "complete", extra="01_vectr_add.cu")
        self.check_format(result)
        self.assertEqual(sorted(t["name"] for t in result["tests"]),
                         sorted(LESSON + "/" + n for n in ("vector_add", "saxpy", "rgb_to_gray", "error_checking")))
        self.assertEqual(result["score"], sum(t["max_score"] for t in result["tests"]))
        self.assertEqual(result["score"], 45)
        self.assertIn("01_vectr_add.cu", result["output"])       # the misnamed file is named

    def test_2_untouched_skeletons_score_zero(self):
        result = self.upload("exercises", "skeletons")
        self.check_format(result)
        self.assertEqual(len(result["tests"]), 4)
        self.assertEqual(result["score"], 0)


if __name__ == "__main__":
    unittest.main()
