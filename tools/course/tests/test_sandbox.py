"""The sandbox for graded test programs: what hostile submissions tried, in both modes.

Each case runs twice: in the namespaced sandbox (skipped where this machine refuses
namespaces) and in the degraded mode (forced), which must still apply the limits, report
how the program ended and end every process it started."""
import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest
import uuid
from unittest import mock

import support
from course import sandbox
from course.errors import CourseError
from course.process import run_sandboxed

SOURCE = support.data_path(os.path.join("sandbox", "hostile.c"))


class _Hostile:
    """Cases shared by both modes; a subclass sets up the mode in setUp."""

    @classmethod
    def setUpClass(cls):
        if shutil.which("cc") is None:
            raise unittest.SkipTest("no C compiler (cc)")
        cls.bin_dir = tempfile.mkdtemp(prefix="course-hostile-")
        cls.exe = os.path.join(cls.bin_dir, "hostile")
        subprocess.run(["cc", "-O1", "-o", cls.exe, SOURCE], check=True)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.bin_dir, ignore_errors=True)

    def setUp(self):
        self.cwd = tempfile.mkdtemp(prefix="course-hostile-run-")
        self.addCleanup(shutil.rmtree, self.cwd, True)
        self.addCleanup(sandbox.set_support_for_tests, None)

    def run_hostile(self, *args, **kwargs):
        kwargs.setdefault("timeout", 10)
        return run_sandboxed([self.exe] + list(args), cwd=self.cwd, **kwargs)

    def scratch(self):
        path = tempfile.mkdtemp(prefix="course-hostile-scratch-")
        self.addCleanup(shutil.rmtree, path, True)
        return path

    def test_exit_code_and_output(self):
        result = self.run_hostile("exit", "3")
        self.assertEqual(result.returncode, 3)
        self.assertFalse(result.timed_out)
        self.assertIsNone(result.describe_abnormal_end())

    def test_death_by_signal_is_named(self):
        self.assertEqual(self.run_hostile("segv").signal_name, "SIGSEGV")
        self.assertEqual(self.run_hostile("abort").signal_name, "SIGABRT")

    def test_detached_background_process_is_dead_when_the_run_returns(self):
        outside = self.scratch()
        marker = os.path.join(outside, "marker")
        token = uuid.uuid4().hex
        result = self.run_hostile("survivor", marker, token, writable=[outside])
        self.assertEqual(result.returncode, 0)
        self.assertIn("started", result.output)
        self.assertEqual(support.processes_naming(token), [])
        time.sleep(3)
        self.assertFalse(os.path.exists(marker), "a detached process outlived its run")

    def test_killing_its_parent_does_not_reach_the_grader(self):
        result = self.run_hostile("killparent")
        # We are still here to check: the grader got a result either way.
        if sandbox.support().namespaced:
            # Its parent is the namespace's init, which such signals do not reach.
            self.assertEqual(result.returncode, 0)
            self.assertIn("survived", result.output)
        else:
            # Its parent is the wrapper: the run reads as crashed.
            self.assertEqual(result.signal_name, "SIGKILL")

    def test_stopping_itself_ends_at_the_time_limit(self):
        result = self.run_hostile("stop", timeout=1.5)
        self.assertTrue(result.timed_out)
        self.assertLess(result.seconds, 8)

    def test_secret_descriptor_still_reaches_the_program(self):
        read_end, write_end = os.pipe()
        try:
            os.write(write_end, b"s3cret")
            os.close(write_end)
            result = self.run_hostile("fd", str(read_end), pass_fds=(read_end,))
        finally:
            os.close(read_end)
        self.assertIn("secret:s3cret", result.output)

    def test_status_pipe_is_not_visible_to_the_program(self):
        # Descriptor 3 is where the status pipe would land if it leaked.
        result = self.run_hostile("fd", "3")
        self.assertIn("secret:(none)", result.output)
        self.assertEqual(result.returncode, 0)

    def test_writable_folder_and_working_folder(self):
        allowed = self.scratch()
        self.assertIn("wrote", self.run_hostile("write", os.path.join(allowed, "f"), writable=[allowed]).output)
        self.assertTrue(os.path.exists(os.path.join(allowed, "f")))
        self.assertIn("wrote", self.run_hostile("write", "local-file").output)

    def test_limits_apply(self):
        limits = dict(line.split("=", 1) for line in
                      self.run_hostile("limits", memory_bytes=512 << 20).output.split())
        self.assertEqual(limits["fsize"], str(sandbox.FILE_SIZE_LIMIT))
        self.assertEqual(limits["nofile"], str(sandbox.OPEN_FILES_LIMIT))
        self.assertEqual(limits["data"], str(512 << 20))
        self.assertEqual(limits["core"], "0")
        self.assertNotEqual(limits["cpu"], "unlimited")


@unittest.skipUnless(sandbox.support().namespaced, "namespaces are not available here: %s"
                     % sandbox.support().missing)
class Namespaced(_Hostile, unittest.TestCase):
    def test_hidden_folder_cannot_be_read(self):
        root = self.scratch()
        os.makedirs(os.path.join(root, "solutions"))
        secret = os.path.join(root, "solutions", "answer.txt")
        with open(secret, "w") as f:
            f.write("the answer")
        sandbox.hide_also(root)
        self.addCleanup(sandbox._extra_hidden.remove, os.path.abspath(root))
        self.assertIn("cannot read", self.run_hostile("read", secret).output)

    def test_course_solutions_are_hidden(self):
        solutions = os.path.join(sandbox.COURSE_ROOT, "solutions")
        files = [os.path.join(d, f) for d, _, names in os.walk(solutions) for f in names]
        if not files:
            self.skipTest("no solutions/ in this checkout")
        self.assertIn("cannot read", self.run_hostile("read", files[0]).output)

    def test_home_and_other_top_level_folders_are_hidden(self):
        # Another copy of the course (a sibling worktree, a home folder's clone) is hidden with
        # every top-level folder that is not the system's.
        home = os.path.realpath(os.path.expanduser("~"))
        top = "/" + home.strip("/").split("/")[0] if home != "/" else "/"
        if top == "/" or top.strip("/") in sandbox.SYSTEM_TOP_LEVEL or not os.access(home, os.W_OK):
            self.skipTest("no writable home folder outside the system's folders")
        folder = tempfile.mkdtemp(prefix="course-hostile-home-", dir=home)
        self.addCleanup(shutil.rmtree, folder, True)
        secret = os.path.join(folder, "solutions.cu")
        with open(secret, "w") as f:
            f.write("the answer")
        self.assertIn(top, sandbox.other_top_level_folders())
        self.assertIn("cannot read", self.run_hostile("read", secret).output)

    def test_cannot_write_outside_its_folders(self):
        outside = self.scratch()
        target = os.path.join(outside, "planted")
        self.assertIn("cannot write", self.run_hostile("write", target).output)
        self.assertFalse(os.path.exists(target))

    def test_writes_into_the_course_do_not_reach_it(self):
        # The course is under an empty in-memory folder: a write lands there and vanishes.
        target = os.path.join(sandbox.COURSE_ROOT, "planted-by-a-test-program")
        self.addCleanup(lambda: os.path.exists(target) and os.remove(target))
        self.run_hostile("write", target)
        self.assertFalse(os.path.exists(target))

    def test_process_limit_in_the_namespace(self):
        limits = dict(line.split("=", 1) for line in self.run_hostile("limits").output.split())
        self.assertEqual(limits["nproc"], str(sandbox.PROCESS_LIMIT))

    def test_no_degradation_reported(self):
        self.assertIsNone(sandbox.degraded_reason())

    def test_a_course_inside_the_temporary_folder(self):
        # A fresh clone in /tmp (as CI makes one): the course folder is hidden with the
        # temporary folder around it, and the program in its build tree still runs.
        with mock.patch.object(sandbox, "COURSE_ROOT", self.bin_dir):
            result = self.run_hostile("exit", "5")
        self.assertEqual(result.returncode, 5, result.output)

    def test_a_program_that_cannot_be_started_is_the_graders_failure(self):
        with self.assertRaises(CourseError):
            run_sandboxed([os.path.join(self.bin_dir, "no-such-program")], cwd=self.cwd, timeout=10)


class Degraded(_Hostile, unittest.TestCase):
    def setUp(self):
        super().setUp()
        sandbox.set_support_for_tests(sandbox.Support(None, "simulated for a test"))

    def test_degradation_is_reported_once_in_one_line(self):
        reason = sandbox.degraded_reason()
        self.assertIn("simulated for a test", reason)
        self.assertNotIn("\n", reason)


class WrapperFailure(unittest.TestCase):
    def tearDown(self):
        sandbox.set_support_for_tests(None)

    def test_a_sandbox_that_does_not_start_is_the_graders_failure(self):
        # As when unshare fails at run time (say, the namespace limit is reached): not a
        # crash of the student's program, which would score 0.
        sandbox.set_support_for_tests(sandbox.Support([shutil.which("false") or "/bin/false"]))
        with tempfile.TemporaryDirectory() as cwd:
            with self.assertRaises(CourseError):
                run_sandboxed([shutil.which("true") or "/bin/true"], cwd=cwd, timeout=10)


class Probe(unittest.TestCase):
    def tearDown(self):
        sandbox.set_support_for_tests(None)

    def test_without_unshare(self):
        with mock.patch.object(sandbox.shutil, "which", return_value=None):
            found = sandbox._probe()
        self.assertFalse(found.namespaced)
        self.assertIn("unshare is not installed", found.missing)

    def test_refused_namespaces(self):
        with mock.patch.object(sandbox, "_try_wrapper", return_value=(False, "Operation not permitted")), \
                mock.patch.object(sandbox.shutil, "which", return_value="/usr/bin/unshare"):
            found = sandbox._probe()
        self.assertFalse(found.namespaced)
        self.assertIn("Operation not permitted", found.missing)


class Plan(unittest.TestCase):
    def test_build_tree_of_a_grader_executable(self):
        exe = "/r/build/grade-sim/worker-0/exercises/submission/01-x/scan_test"
        self.assertEqual(sandbox.build_tree_of(exe), "/r/build/grade-sim/worker-0")

    def test_build_tree_of_another_executable(self):
        self.assertEqual(sandbox.build_tree_of("/opt/x/prog"), "/opt/x")


if __name__ == "__main__":
    unittest.main()
