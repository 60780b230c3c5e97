"""A sealed reference build: graded without solutions/, no source text of the solutions left."""
import os
import shutil
import tempfile
import unittest
from unittest import mock

import support
from course.backend import Toolchain
from course.build import BuildDir
from course.errors import CourseError
from course.grade import Reference
from course.manifest import MANIFEST_NAME


def toolchain(version: str = "clang 14.0.6") -> Toolchain:
    return Toolchain(backend="sim", cmake="cmake", cmake_version=(3, 25, 1), generator="Ninja",
                     cxx="/usr/bin/clang++", cxx_version=version)


class SealedReference(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp()
        os.makedirs(os.path.join(self.root, "solutions"))
        self.build = os.path.join(self.root, "build", "grade-sim", "reference")
        os.makedirs(self.build)
        support.write_json(os.path.join(self.build, MANIFEST_NAME), support.fake_manifest_data(self.build))
        # what the simulator's build leaves: rewritten sources, and objects under CMakeFiles
        self.rewritten = os.path.join(self.build, "lessons", "00-gpu-vs-cpu", "cudasim_rewritten",
                                      "submission_00_vector_add")
        self.objects = os.path.join(self.build, "lessons", "00-gpu-vs-cpu", "CMakeFiles",
                                    "submission_00_vector_add.dir", "cudasim_rewritten", "submission_00_vector_add")
        for folder, name in ((self.rewritten, "01_vector_add.cu.cpp"), (self.objects, "01_vector_add.cu.cpp.o")):
            os.makedirs(folder)
            with open(os.path.join(folder, name), "w") as f:
                f.write("c[i] = a[i] + b[i];\n")

    def tearDown(self):
        shutil.rmtree(self.root, ignore_errors=True)

    def sealed(self) -> Reference:
        ref = Reference(self.root, toolchain())
        with mock.patch.object(BuildDir, "configure"), \
                mock.patch.object(BuildDir, "build", return_value=mock.Mock(ok=True, output="")):
            ref.seal()
        return ref

    def test_sealing_removes_the_rewritten_sources_and_keeps_the_objects(self):
        self.sealed()
        self.assertFalse(os.path.exists(self.rewritten))
        self.assertTrue(os.path.exists(os.path.join(self.objects, "01_vector_add.cu.cpp.o")))
        self.assertTrue(os.path.exists(os.path.join(self.build, Reference.SEAL_NAME)))

    def test_a_sealed_reference_is_used_without_solutions_and_never_rebuilt(self):
        self.sealed()
        shutil.rmtree(os.path.join(self.root, "solutions"))
        ref = Reference(self.root, toolchain())
        with mock.patch.object(BuildDir, "configure", side_effect=AssertionError("configured")), \
                mock.patch.object(BuildDir, "build", side_effect=AssertionError("built")):
            ref.prepare()
        self.assertTrue(ref.ready)
        self.assertEqual([e.name for e in ref.manifest.exercises], ["vector_add", "saxpy", "rnn_step"])

    def test_another_compiler_is_refused(self):
        self.sealed()
        with self.assertRaises(CourseError) as ctx:
            Reference(self.root, toolchain("clang 19.1.7")).prepare()
        self.assertIn("sealed", ctx.exception.message)

    def test_no_solutions_and_no_seal_is_a_clear_error(self):
        shutil.rmtree(os.path.join(self.root, "solutions"))
        with self.assertRaises(CourseError) as ctx:
            Reference(self.root, toolchain()).prepare()
        self.assertIn("seal-reference", ctx.exception.message)


if __name__ == "__main__":
    unittest.main()
