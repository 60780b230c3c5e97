"""Backend choice and the prerequisite message."""
import os
import sys
import shutil
import tempfile
import unittest
from unittest import mock

import support
from course import backend
from course.build import STAMP_NAME, BuildDir
from course.errors import CourseError
from course.manifest import MANIFEST_NAME


class BackendChoice(unittest.TestCase):
    def test_explicit_choice_wins_over_the_environment(self):
        with mock.patch.dict(os.environ, {"COURSE_BACKEND": "cuda"}):
            self.assertEqual(backend.resolve_backend("sim"), "sim")
            self.assertEqual(backend.resolve_backend(None), "cuda")

    def test_auto_needs_both_nvcc_and_a_gpu(self):
        with mock.patch.dict(os.environ, {}, clear=False):
            os.environ.pop("COURSE_BACKEND", None)
            with mock.patch.object(backend, "find_nvcc", return_value="/usr/local/cuda/bin/nvcc"), \
                    mock.patch.object(backend, "gpu_names", return_value=()):
                self.assertEqual(backend.resolve_backend("auto"), "sim")
            with mock.patch.object(backend, "find_nvcc", return_value=None), \
                    mock.patch.object(backend, "gpu_names", return_value=("GPU 0: NVIDIA H200",)):
                self.assertEqual(backend.resolve_backend("auto"), "sim")
            with mock.patch.object(backend, "find_nvcc", return_value="/usr/bin/nvcc"), \
                    mock.patch.object(backend, "gpu_names", return_value=("GPU 0: NVIDIA H200",)):
                self.assertEqual(backend.resolve_backend(None), "cuda")


class Prerequisites(unittest.TestCase):
    def test_one_message_names_every_missing_package(self):
        with mock.patch("shutil.which", return_value=None), \
                mock.patch.object(backend, "find_gtest", return_value=None), \
                mock.patch.object(backend, "find_cblas", return_value=None):
            with self.assertRaises(CourseError) as ctx:
                backend.check_prerequisites("sim", support.REPO_ROOT)
        message = ctx.exception.message
        self.assertEqual(ctx.exception.exit_code, 2)
        self.assertEqual(len(message.splitlines()), 1)
        for package in ("cmake", "ninja-build", "clang", "libgtest-dev", "libopenblas-dev"):
            self.assertIn(package, message)
        self.assertIn("apt-get install", message)

    def test_old_cmake_is_reported(self):
        with mock.patch("shutil.which", side_effect=lambda name: "/usr/bin/" + name), \
                mock.patch.object(backend, "cmake_version", return_value=(3, 18, 4)), \
                mock.patch.object(backend, "find_gtest", return_value="/usr/include/gtest/gtest.h"), \
                mock.patch.object(backend, "find_cblas", return_value="/usr/include/cblas.h"):
            with self.assertRaises(CourseError) as ctx:
                backend.check_prerequisites("sim", support.REPO_ROOT)
        self.assertIn("3.22", ctx.exception.message)

    def test_make_replaces_a_missing_ninja(self):
        def which(name):
            return None if name == "ninja" else "/usr/bin/" + name
        with mock.patch("shutil.which", side_effect=which), \
                mock.patch.object(backend, "cmake_version", return_value=(3, 25, 1)), \
                mock.patch.object(backend, "clang_version", return_value=(14, 0, 6)), \
                mock.patch.object(backend, "find_gtest", return_value="/usr/include/gtest/gtest.h"), \
                mock.patch.object(backend, "find_cblas", return_value="/usr/include/cblas.h"):
            toolchain = backend.check_prerequisites("sim", support.REPO_ROOT)
        self.assertEqual(toolchain.generator, "Unix Makefiles")

    def test_an_old_clang_is_refused_with_one_line_that_names_what_to_install(self):
        with mock.patch("shutil.which", side_effect=lambda name: "/usr/bin/" + name), \
                mock.patch.object(backend, "cmake_version", return_value=(3, 25, 1)), \
                mock.patch.object(backend, "clang_version", return_value=(13, 0, 1)), \
                mock.patch.object(backend, "find_gtest", return_value="/usr/include/gtest/gtest.h"), \
                mock.patch.object(backend, "find_cblas", return_value="/usr/include/cblas.h"):
            with self.assertRaises(CourseError) as ctx:
                backend.check_prerequisites("sim", support.REPO_ROOT)
        message = ctx.exception.message
        self.assertEqual(len(message.splitlines()), 1)
        self.assertIn("clang 13.0.1", message)
        self.assertIn("clang 14 or newer", message)
        self.assertIn("apt-get install clang", message)

    def test_a_clang_plus_plus_that_is_not_clang_is_refused(self):
        with mock.patch("shutil.which", side_effect=lambda name: "/usr/bin/" + name), \
                mock.patch.object(backend, "cmake_version", return_value=(3, 25, 1)), \
                mock.patch.object(backend, "clang_version", return_value=None), \
                mock.patch.object(backend, "find_gtest", return_value="/usr/include/gtest/gtest.h"), \
                mock.patch.object(backend, "find_cblas", return_value="/usr/include/cblas.h"):
            with self.assertRaises(CourseError) as ctx:
                backend.check_prerequisites("sim", support.REPO_ROOT)
        self.assertIn("/usr/bin/clang++ is not clang", ctx.exception.message)

    def test_the_toolchain_names_its_clang(self):
        with mock.patch("shutil.which", side_effect=lambda name: "/usr/bin/" + name), \
                mock.patch.object(backend, "cmake_version", return_value=(3, 25, 1)), \
                mock.patch.object(backend, "clang_version", return_value=(22, 1, 0)), \
                mock.patch.object(backend, "find_gtest", return_value="/usr/include/gtest/gtest.h"), \
                mock.patch.object(backend, "find_cblas", return_value="/usr/include/cblas.h"):
            toolchain = backend.check_prerequisites("sim", support.REPO_ROOT)
        self.assertEqual(toolchain.cxx_version, "clang 22.1.0")

    def test_the_newest_versioned_clang_stands_in_for_a_missing_clang_plus_plus(self):
        with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
            for folder, version in ((a, 15), (b, 19), (b, 9)):
                path = os.path.join(folder, "clang++-%d" % version)
                with open(path, "w") as f:
                    f.write("#!/bin/sh\n")
                os.chmod(path, 0o755)
            with mock.patch.dict(os.environ, {"PATH": a + os.pathsep + b}):
                self.assertEqual(backend.find_clang(), os.path.join(b, "clang++-19"))

    def test_the_version_is_read_from_clang_itself(self):
        version = backend.clang_version(sys.executable)  # a program that is not clang
        self.assertIsNone(version)

    def test_cuda_needs_nvcc(self):
        with mock.patch("shutil.which", side_effect=lambda name: "/usr/bin/" + name if name != "nvcc" else None), \
                mock.patch.object(backend, "cmake_version", return_value=(3, 25, 1)), \
                mock.patch.object(backend, "find_gtest", return_value="/usr/include/gtest/gtest.h"), \
                mock.patch.object(backend, "find_nvcc", return_value=None):
            with self.assertRaises(CourseError) as ctx:
                backend.check_prerequisites("cuda", support.REPO_ROOT)
        self.assertIn("nvcc", ctx.exception.message)


class GoogleTestFromSources(unittest.TestCase):
    """COURSE_GTEST_SOURCE=DIR: GoogleTest built with the course where it is not installed."""

    def setUp(self):
        self.source = tempfile.mkdtemp(prefix="googletest-src-")
        self.addCleanup(shutil.rmtree, self.source, ignore_errors=True)
        # Laid out like Debian's /usr/src/googletest.
        os.makedirs(os.path.join(self.source, "googletest", "include", "gtest"))
        for name in ("CMakeLists.txt", os.path.join("googletest", "include", "gtest", "gtest.h")):
            open(os.path.join(self.source, name), "w").close()

    def test_the_source_folder_counts_as_googletest(self):
        with mock.patch.dict(os.environ, {"COURSE_GTEST_SOURCE": self.source}), \
                mock.patch("shutil.which", side_effect=lambda name: "/usr/bin/" + name), \
                mock.patch.object(backend, "cmake_version", return_value=(3, 25, 1)), \
                mock.patch.object(backend, "find_nvcc", return_value="/usr/local/cuda/bin/nvcc"), \
                mock.patch.object(backend, "gpu_names", return_value=()):
            self.assertEqual(backend.find_gtest(support.REPO_ROOT), os.path.join(self.source, "CMakeLists.txt"))
            toolchain = backend.check_prerequisites("cuda", support.REPO_ROOT)
        self.assertEqual(toolchain.backend, "cuda")

    def test_a_folder_without_googletest_is_one_clear_error(self):
        os.remove(os.path.join(self.source, "googletest", "include", "gtest", "gtest.h"))
        with mock.patch.dict(os.environ, {"COURSE_GTEST_SOURCE": self.source}):
            with self.assertRaises(CourseError) as ctx:
                backend.find_gtest(support.REPO_ROOT)
        self.assertIn("COURSE_GTEST_SOURCE=" + self.source, ctx.exception.message)
        self.assertEqual(ctx.exception.exit_code, 2)

    def test_the_missing_package_message_names_the_alternative(self):
        with mock.patch("shutil.which", side_effect=lambda name: "/usr/bin/" + name), \
                mock.patch.object(backend, "cmake_version", return_value=(3, 25, 1)), \
                mock.patch.object(backend, "find_gtest", return_value=None), \
                mock.patch.object(backend, "find_nvcc", return_value="/usr/local/cuda/bin/nvcc"):
            with self.assertRaises(CourseError) as ctx:
                backend.check_prerequisites("cuda", support.REPO_ROOT)
        self.assertIn("COURSE_GTEST_SOURCE=DIR", ctx.exception.message)

    def test_every_build_folder_is_configured_with_it(self):
        toolchain = backend.Toolchain(backend="sim", cmake="cmake", cmake_version=(3, 25, 1), generator="Ninja",
                                      cxx="clang++")
        folder = tempfile.mkdtemp(prefix="course-build-")
        self.addCleanup(shutil.rmtree, folder, ignore_errors=True)
        build = BuildDir(support.REPO_ROOT, folder, toolchain)
        contents = {"CMakeCache.txt": "COURSE_BACKEND:STRING=sim\nCMAKE_CXX_COMPILER:STRING=clang++\n",
                    MANIFEST_NAME: "{}", STAMP_NAME: build.compiler_line() + "\n"}
        for name, text in contents.items():
            with open(os.path.join(folder, name), "w") as f:
                f.write(text)
        with mock.patch.dict(os.environ, {"COURSE_GTEST_SOURCE": self.source}), \
                mock.patch("course.build.newest_cmake_input", return_value=0.0):
            self.assertEqual(build.backend_definitions()["COURSE_GTEST_SOURCE"], self.source)
            self.assertEqual(build.configure_reason(), "COURSE_GTEST_SOURCE changed")
            with open(os.path.join(folder, "CMakeCache.txt"), "a") as f:
                f.write("COURSE_GTEST_SOURCE:PATH=%s\n" % self.source)
            self.assertIsNone(build.configure_reason())
        with mock.patch.dict(os.environ, {}), mock.patch("course.build.newest_cmake_input", return_value=0.0):
            os.environ.pop("COURSE_GTEST_SOURCE", None)
            self.assertNotIn("COURSE_GTEST_SOURCE", build.backend_definitions())


if __name__ == "__main__":
    unittest.main()
