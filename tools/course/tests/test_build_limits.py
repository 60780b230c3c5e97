"""The limits on building a submission: the deadline, the rlimits, what a hit reads as."""
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
from types import SimpleNamespace
from unittest import mock

import support  # noqa: F401  (sets up the import path)
from course.build import BUILD_TIMEOUT_VARIABLE, DEFAULT_BUILD_TIMEOUT_S, FILE_SIZE_LIMIT, TIME_LIMIT, \
    BuildLimits, BuildOutcome, build_limits_from_env, compiler_temporaries, limit_hit, oversized_files
from course.errors import CourseError
from course.grade import build_limit_note, oversized_outputs, preprocessed_source
from course.process import run_contained


def _alive(pid):
    """Whether ``pid`` runs (a zombie, not reaped yet by whoever inherited it, counts as dead)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class Settings(unittest.TestCase):
    def test_default_and_environment(self):
        with mock.patch.dict(os.environ, {BUILD_TIMEOUT_VARIABLE: ""}):
            self.assertEqual(build_limits_from_env().timeout, DEFAULT_BUILD_TIMEOUT_S)
        with mock.patch.dict(os.environ, {BUILD_TIMEOUT_VARIABLE: "45"}):
            self.assertEqual(build_limits_from_env().timeout, 45.0)
        with mock.patch.dict(os.environ, {BUILD_TIMEOUT_VARIABLE: "0"}):
            self.assertEqual(build_limits_from_env().timeout, DEFAULT_BUILD_TIMEOUT_S)
        with mock.patch.dict(os.environ, {BUILD_TIMEOUT_VARIABLE: "soon"}):
            with self.assertRaises(CourseError):
                build_limits_from_env()

    def test_rlimit_specs(self):
        specs = BuildLimits(timeout=100, file_size=1 << 20, memory_bytes=2 << 30).rlimit_specs()
        self.assertIn("fsize=%d" % (1 << 20), specs)
        self.assertIn("data=%d" % (2 << 30), specs)
        self.assertIn("cpu=110,115", specs)
        self.assertIn("core=0", specs)
        self.assertFalse([s for s in BuildLimits(memory_bytes=None).rlimit_specs() if s.startswith("data=")])

    def test_which_limit_ended_a_build(self):
        self.assertEqual(limit_hit(True, False, ""), TIME_LIMIT)
        self.assertEqual(limit_hit(False, False, "/bin/sh: line 1: 42 File size limit exceeded"), FILE_SIZE_LIMIT)
        self.assertEqual(limit_hit(False, False, "error: expected ';'"), "")
        self.assertEqual(limit_hit(False, True, "File size limit exceeded"), "")   # a message in a build that worked

    def test_notes_name_the_limit(self):
        note, feedback = build_limit_note(BuildOutcome(False, "", TIME_LIMIT), 30, 256 << 20)
        self.assertTrue(note.startswith("the build took longer than 30 s"), note)
        self.assertIn("constexpr", feedback)
        note, _ = build_limit_note(BuildOutcome(False, "", FILE_SIZE_LIMIT), 30, 256 << 20)
        self.assertTrue(note.startswith("the build wrote a file larger than 256 MiB"), note)
        self.assertIsNone(build_limit_note(BuildOutcome(False, "error"), 30, 256 << 20))


class OutputSizes(unittest.TestCase):
    def test_oversized_outputs_are_named_and_removed(self):
        with tempfile.TemporaryDirectory() as folder:
            big, small = os.path.join(folder, "big.o"), os.path.join(folder, "small.o")
            with open(big, "wb") as f:
                f.truncate(3 << 20)
            with open(small, "wb") as f:
                f.write(b"x")
            self.assertEqual(oversized_files(folder, 1 << 20), [big])
            note, feedback = oversized_outputs([small, big, os.path.join(folder, "missing")], 1 << 20)
            self.assertIn("larger than 1 MiB", note)
            self.assertIn("big.o (3 MiB)", feedback)
            self.assertFalse(os.path.exists(big))
            self.assertTrue(os.path.exists(small))
            self.assertIsNone(oversized_outputs([small], 1 << 20))

    def test_temporaries_of_killed_compilers(self):
        with tempfile.TemporaryDirectory() as folder:
            names = ["01_vector_add.cu.cpp-0aa5cfeb.o.tmp", "01_vector_add.cu.cpp.o", "notes.tmp"]
            for name in names:
                open(os.path.join(folder, name), "w").close()
            self.assertEqual(compiler_temporaries(folder), [os.path.join(folder, names[0])])


@unittest.skipUnless(shutil.which("ninja") and shutil.which("clang++"), "needs ninja and clang++")
class Preprocessing(unittest.TestCase):
    """The grader reads the submission's preprocessed source: made under the build's limits,
    since a few lines of macros expand into more than the compiler minds."""
    SOURCE = "#define A(x) x x x x x x x x x x\nvoid f() { A(A(A(A(A(A(;)))))) }\n"   # 10^6 statements

    def preprocess(self, limits):
        with tempfile.TemporaryDirectory() as folder:
            with open(os.path.join(folder, "bomb.cpp"), "w") as f:
                f.write(self.SOURCE)
            with open(os.path.join(folder, "build.ninja"), "w") as f:
                f.write("rule cc\n  command = clang++ -c $in -o $out\nbuild bomb.o: cc bomb.cpp\n")
            subprocess.run(["ninja", "-C", folder], stdout=subprocess.DEVNULL, check=True)
            build = SimpleNamespace(path=folder, toolchain=SimpleNamespace(generator="Ninja"), limits=limits)
            text = preprocessed_source(build, os.path.join(folder, "bomb.o"))
            self.assertFalse([n for n in os.listdir(folder) if n.endswith(".i")], "the preprocessed file is left")
            return text

    def test_within_the_limits(self):
        text = self.preprocess(BuildLimits(timeout=60, file_size=8 << 20))
        self.assertEqual(text.count(";"), 10 ** 6)

    def test_larger_than_the_file_size_limit(self):
        self.assertIsNone(self.preprocess(BuildLimits(timeout=60, file_size=1 << 20)))


class Contained(unittest.TestCase):
    def test_file_size_limit_applies_to_every_process(self):
        with tempfile.TemporaryDirectory() as cwd:
            result = run_contained(["sh", "-c", "sh -c 'head -c 3000000 /dev/zero > out'"], cwd=cwd, timeout=30,
                                   rlimits=BuildLimits(file_size=1 << 20).rlimit_specs())
            self.assertNotEqual(result.returncode, 0)
            self.assertEqual(limit_hit(result.timed_out, False, result.output), FILE_SIZE_LIMIT, result.output)
            self.assertLessEqual(os.path.getsize(os.path.join(cwd, "out")), 1 << 20)

    def test_deadline_kills_descendants_in_process_groups_of_their_own(self):
        # As ninja does: each command in a new process group, which a kill of the build's own
        # process group would miss.
        code = ("import subprocess, sys, time\n"
                "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'], start_new_session=True)\n"
                "open('child.pid', 'w').write(str(p.pid))\n"
                "time.sleep(300)\n")
        with tempfile.TemporaryDirectory() as cwd:
            started = time.monotonic()
            result = run_contained([sys.executable, "-c", code], cwd=cwd, timeout=2,
                                   rlimits=BuildLimits(timeout=2).rlimit_specs())
            self.assertTrue(result.timed_out)
            self.assertLess(time.monotonic() - started, 30)
            with open(os.path.join(cwd, "child.pid")) as f:
                child = int(f.read())
            for _ in range(100):
                if not _alive(child):
                    break
                time.sleep(0.05)
            self.assertFalse(_alive(child), "the build's grandchild outlived the deadline")

    def test_normal_run_passes_its_exit_code(self):
        with tempfile.TemporaryDirectory() as cwd:
            result = run_contained(["sh", "-c", "echo built; exit 0"], cwd=cwd, timeout=30,
                                   rlimits=BuildLimits().rlimit_specs())
            self.assertEqual(result.returncode, 0)
            self.assertEqual(result.output, "built\n")


if __name__ == "__main__":
    unittest.main()
