"""When a build folder must be configured again, and how: a change of compiler starts clean."""
import os
import subprocess
import sys
import tempfile
import time
import unittest
from unittest import mock

import support  # noqa: F401  (puts tools/ on sys.path)
from course.backend import Toolchain
from course.build import STAMP_NAME, BuildDir, folder_lock
from course.manifest import MANIFEST_NAME


def toolchain(cxx: str, version: str) -> Toolchain:
    return Toolchain(backend="sim", cmake="cmake", cmake_version=(3, 25, 1), generator="Ninja",
                     cxx=cxx, cxx_version=version)


class CompilerChanges(unittest.TestCase):
    def setUp(self):
        # The folders below were configured without one; a COURSE_GTEST_SOURCE in the caller's
        # environment (the GPU report sets it) would be a reason of its own to configure.
        environment = mock.patch.dict(os.environ)
        environment.start()
        self.addCleanup(environment.stop)
        os.environ.pop("COURSE_GTEST_SOURCE", None)
        self.root = tempfile.mkdtemp()          # a source tree with no CMake files in it
        self.path = os.path.join(self.root, "build", "sim")
        os.makedirs(self.path)

    def tearDown(self):
        subprocess.run(["rm", "-rf", self.root])

    def configured_with(self, cxx: str, version: str, submission: str = "/sub") -> None:
        """A folder as ./course leaves it after configuring with this compiler."""
        with open(os.path.join(self.path, "CMakeCache.txt"), "w") as f:
            f.write("COURSE_BACKEND:STRING=sim\nCMAKE_CXX_COMPILER:STRING=%s\n"
                    "COURSE_SUBMISSION_DIR:PATH=%s\nCMAKE_GENERATOR:INTERNAL=Ninja\n" % (cxx, submission))
        open(os.path.join(self.path, MANIFEST_NAME), "w").close()
        folder = BuildDir(self.root, self.path, toolchain(cxx, version))
        with open(os.path.join(self.path, STAMP_NAME), "w") as f:
            f.write("cmake ...\n" + folder.compiler_line() + "\n")

    def test_the_same_compiler_needs_no_configure(self):
        self.configured_with("/usr/bin/clang++", "clang 14.0.6")
        folder = BuildDir(self.root, self.path, toolchain("/usr/bin/clang++", "clang 14.0.6"),
                          {"COURSE_SUBMISSION_DIR": "/sub"})
        self.assertIsNone(folder.configure_reason())

    def test_another_clang_on_path_is_a_compiler_change_before_any_other_reason(self):
        self.configured_with("/usr/bin/clang++", "clang 14.0.6")
        folder = BuildDir(self.root, self.path, toolchain("/opt/bin/clang++", "clang 22.1.8"),
                          {"COURSE_SUBMISSION_DIR": "/another"})
        self.assertEqual(folder.configure_reason(), "compiler changed")

    def test_the_same_path_with_another_version_is_a_compiler_change(self):
        self.configured_with("/usr/bin/clang++", "clang 14.0.6")
        folder = BuildDir(self.root, self.path, toolchain("/usr/bin/clang++", "clang 19.1.7"))
        self.assertEqual(folder.configure_reason(), "compiler changed")

    def test_a_compiler_change_starts_from_a_clean_cache_and_keeps_the_definitions(self):
        # CMake itself would drop the whole cache on a new CMAKE_CXX_COMPILER, -D values too,
        # and configure the submission folder's default instead of the one asked for.
        self.configured_with("/usr/bin/clang++", "clang 14.0.6")
        folder = BuildDir(self.root, self.path, toolchain("/opt/bin/clang++", "clang 22.1.8"),
                          {"COURSE_SUBMISSION_DIR": "/another"})
        seen = {}

        def fake_cmake(cmd, **kwargs):
            seen["cache_left"] = os.path.exists(os.path.join(self.path, "CMakeCache.txt"))
            seen["cmd"] = cmd
            return subprocess.CompletedProcess(cmd, 0, stdout="")

        with mock.patch("subprocess.run", side_effect=fake_cmake), mock.patch("course.build.ui.progress"):
            folder.configure()
        self.assertFalse(seen["cache_left"])
        self.assertIn("-DCMAKE_CXX_COMPILER=/opt/bin/clang++", seen["cmd"])
        self.assertIn("-DCOURSE_SUBMISSION_DIR=/another", seen["cmd"])
        with open(os.path.join(self.path, STAMP_NAME)) as f:
            self.assertIn("compiler: /opt/bin/clang++ clang 22.1.8", f.read().splitlines())


if __name__ == "__main__":
    unittest.main()


class OneCourseAtATimePerFolder(unittest.TestCase):
    """Two ./course processes never configure or build one folder at the same time."""

    def setUp(self):
        self.folder = tempfile.mkdtemp()
        self.addCleanup(subprocess.run, ["rm", "-rf", self.folder])

    def hold_in_another_process(self, seconds: float) -> subprocess.Popen:
        """A process that takes the folder's lock, says so on stdout, and keeps it a while."""
        code = ("import sys, time; sys.path.insert(0, %r)\n"
                "from course.build import folder_lock\n"
                "with folder_lock(%r):\n"
                "    print('held', flush=True); time.sleep(%r)\n") % (
            support.TOOLS_DIR, self.folder, seconds)
        holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, universal_newlines=True)
        self.assertEqual(holder.stdout.readline().strip(), "held")
        return holder

    @staticmethod
    def finish(holder: subprocess.Popen) -> int:
        holder.stdout.close()
        return holder.wait()

    def test_waits_for_the_process_that_holds_the_folder(self):
        holder = self.hold_in_another_process(1.0)
        started = time.monotonic()
        with mock.patch("course.ui.progress") as progress, folder_lock(self.folder):
            waited = time.monotonic() - started
        self.finish(holder)
        self.assertGreater(waited, 0.8, "entered while the other process still held the folder")
        self.assertIn("waiting for another ./course", progress.call_args[0][0])

    def test_is_reentrant_within_one_thread_and_released_after(self):
        with folder_lock(self.folder):
            with folder_lock(self.folder):        # configure() inside compile_program's lock
                pass
        holder = self.hold_in_another_process(0.0)   # free again: another process gets it at once
        self.assertEqual(self.finish(holder), 0)

    def test_a_dead_holder_releases_the_folder(self):
        holder = self.hold_in_another_process(60.0)
        holder.kill()
        self.finish(holder)
        with folder_lock(self.folder):
            pass
