"""autograder/slurm's gradebook collector and the local-Slurm check's pieces that need no Slurm:
a task that left no report still gets its row, and the comparison names every difference."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import support

SLURM_DIR = os.path.join(support.REPO_ROOT, "autograder", "slurm")
sys.path.insert(0, SLURM_DIR)
import local_slurm  # noqa: E402


def write_report(out: str, student: str, score: float, exercises) -> None:
    os.makedirs(os.path.join(out, student))
    with open(os.path.join(out, student, "report.json"), "w") as f:
        json.dump({"score": score, "max_score": 45, "exercises": [
            {"lesson": "00-gpu-vs-cpu", "exercise": name, "score": s, "status": status}
            for name, s, status in exercises]}, f)


class GradebookFromArrayTasks(unittest.TestCase):
    def gradebook(self, *args):
        proc = subprocess.run([sys.executable, os.path.join(SLURM_DIR, "gradebook.py")] + list(args),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return proc.stdout.splitlines()

    def test_every_listed_student_gets_a_row_even_without_a_report(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "grades")
            write_report(out, "ada", 45, [("vector_add", 15, "passed")])
            os.makedirs(os.path.join(out, "bob"))           # its task died before writing
            with open(os.path.join(out, "bob", "report.json"), "w") as f:
                f.write("{ half a report")
            listing = os.path.join(tmp, "list.txt")
            with open(listing, "w") as f:
                f.write("/class/ada/\n/class/bob/\n/class/cy/\n")      # cy: no folder at all
            lines = self.gradebook(out, listing)
            self.assertEqual(lines[0].split(",")[:4], ["student", "score", "max_score", "00-gpu-vs-cpu/vector_add"])
            self.assertEqual([line.split(",")[0] for line in lines[1:]], ["ada", "bob", "cy"])
            self.assertTrue(lines[1].startswith("ada,45,45,15,passed,"), lines[1])
            self.assertIn("no valid report.json", lines[2])
            self.assertIn("did not finish", lines[3])

    def test_without_a_list_the_folders_in_out_are_the_class(self):
        with tempfile.TemporaryDirectory() as out:
            write_report(out, "b", 0, [("saxpy", 0, "failed")])
            write_report(out, "a", 15, [("saxpy", 15, "passed")])
            self.assertEqual([line.split(",")[0] for line in self.gradebook(out)[1:]], ["a", "b"])

    def test_usage(self):
        proc = subprocess.run([sys.executable, os.path.join(SLURM_DIR, "gradebook.py")], stderr=subprocess.PIPE,
                              universal_newlines=True)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("usage", proc.stderr)


class LocalSlurmCheckPieces(unittest.TestCase):
    def test_the_comparison_names_each_difference(self):
        slurm = {"a": {"student": "a", "score": "45"}, "b": {"student": "b", "score": "0"}}
        local = {"a": {"student": "a", "score": "30"}, "c": {"student": "c", "score": "0"}}
        problems = local_slurm.compare_gradebooks(slurm, local)
        self.assertEqual(problems, ["a, score: Slurm '45', grade-all '30'", "b: only in the Slurm gradebook",
                                    "c: only in the grade-all gradebook"])
        self.assertEqual(local_slurm.compare_gradebooks(slurm, dict(slurm)), [])

    def test_the_class_has_twenty_distinct_submissions(self):
        with tempfile.TemporaryDirectory() as tmp:
            folders = local_slurm.make_class("00-gpu-vs-cpu", tmp)
            self.assertEqual(len(folders), 20)
            lesson = "00-gpu-vs-cpu"
            mixed = os.path.join(tmp, "mix-05", lesson)
            names = sorted(os.listdir(os.path.join(support.REPO_ROOT, "solutions", lesson)))
            cu = [n for n in names if n.endswith(".cu")][:4]
            for i, name in enumerate(cu):
                source = "solutions" if 5 >> i & 1 else "exercises"
                with open(os.path.join(mixed, name)) as got, \
                        open(os.path.join(support.REPO_ROOT, source, lesson, name)) as want:
                    self.assertEqual(got.read(), want.read(), name)
            self.assertEqual(os.listdir(os.path.join(tmp, "empty", lesson)), [])

    def test_a_change_to_the_slurm_files_needs_a_new_recorded_run(self):
        saved = local_slurm.RECORD
        with tempfile.TemporaryDirectory() as tmp:
            local_slurm.RECORD = os.path.join(tmp, "record.json")
            try:
                self.assertEqual(local_slurm.check_record(), 1)                  # no record at all
                record = {"date": "d", "command": "c", "agree": True, "files": local_slurm.checked_files_digest()}
                with open(local_slurm.RECORD, "w") as f:
                    json.dump(record, f)
                self.assertEqual(local_slurm.check_record(), 0)
                record["files"]["gradebook.py"] = "0" * 64                       # gradebook.py changed since
                with open(local_slurm.RECORD, "w") as f:
                    json.dump(record, f)
                self.assertEqual(local_slurm.check_record(), 1)
            finally:
                local_slurm.RECORD = saved

    def test_the_configuration_stays_on_this_machine(self):
        conf = local_slurm.slurm_conf("/w", "node1", 2, 4096, (7001, 7002))
        self.assertIn("SlurmctldHost=node1(127.0.0.1)", conf)
        self.assertIn("NodeName=node1 NodeAddr=127.0.0.1 CPUs=2 RealMemory=4096", conf)
        self.assertIn("AuthInfo=socket=/w/munge/munge.sock", conf)
        self.assertIn("SlurmctldPort=7001", conf)


if __name__ == "__main__":
    unittest.main()
