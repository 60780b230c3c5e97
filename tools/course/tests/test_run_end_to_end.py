"""./course run of a real two-file program (cudasim/examples/two_files) from another current
directory, on the simulator. Skipped until the simulator is built (build/sim, which the first
./course run builds): this test compiles and runs, it never configures or builds the runtime."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import support

COURSE = os.path.join(support.REPO_ROOT, "course")
EXAMPLE = os.path.join(support.REPO_ROOT, "cudasim", "examples", "two_files")
RECIPE = os.path.join(support.REPO_ROOT, "build", "sim", "course_run.json")


def simulator_built() -> bool:
    try:
        with open(RECIPE, encoding="utf-8") as f:
            recipe = json.load(f)
    except (OSError, ValueError):
        return False
    tools = [recipe.get("rewrite_tool") or ""] + list(recipe.get("link", []))
    return all(os.path.exists(p) for p in tools if os.path.isabs(p))


@unittest.skipUnless(simulator_built(), "the simulator is not built (build/sim); ./course run builds it")
class RunATwoFileProgram(unittest.TestCase):
    def run_course(self, cwd, *args):
        env = dict(os.environ)
        env.pop("COURSE_BACKEND", None)
        return subprocess.run([COURSE, "--backend", "sim", "run"] + list(args), cwd=cwd, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=300)

    def test_sources_include_folder_and_macro_from_another_directory(self):
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copytree(EXAMPLE, os.path.join(tmp, "project"))
            elsewhere = os.path.join(tmp, "elsewhere")
            os.makedirs(elsewhere)
            files = ["../project/main.cpp", "../project/kernels.cu", "-I", "../project/include"]
            result = self.run_course(elsewhere, *files, "-D", "SCALE=3")
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertEqual(result.stdout, "scaled 1000 floats by 3: OK\n")
            result = self.run_course(elsewhere, *(files + ["-DSCALE=4"]))
            self.assertEqual(result.stdout, "scaled 1000 floats by 4: OK\n", result.stderr)
            # A changed header in the -I folder rebuilds the program.
            header = os.path.join(tmp, "project", "include", "scale.h")
            with open(header, encoding="utf-8") as f:
                text = f.read()
            with open(header, "w", encoding="utf-8") as f:
                f.write(text.replace("#define SCALE 2", "#define SCALE 5"))
            result = self.run_course(elsewhere, *files)
            self.assertEqual(result.stdout, "scaled 1000 floats by 5: OK\n", result.stderr)

    def test_loops_the_optimiser_makes_library_calls_run_as_device_code(self):
        program = os.path.join(support.REPO_ROOT, "cudasim", "tests", "run_programs", "zero_fill_loop.cu")
        result = self.run_course(tempfile.gettempdir(), program)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout, "rows zeroed and copied: OK\n", result.stderr)

    def test_openmp_host_threads_each_use_their_own_device(self):
        program = os.path.join(support.REPO_ROOT, "cudasim", "tests", "run_programs", "openmp_device_per_thread.cu")
        result = self.run_course(tempfile.gettempdir(), program, "-Xcompiler", "-fopenmp")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout, "2 OpenMP threads filled their parts on devices 0 and 1: OK\n", result.stderr)

    def test_a_race_report_names_the_lines_of_the_programs_own_file(self):
        # Binutils' addr2line named the rewritten race_after_a_barrier.sim.cpp for these two
        # lines, in the coroutine that a kernel with barriers becomes under --check.
        program = os.path.join(support.REPO_ROOT, "cudasim", "tests", "run_programs", "race_after_a_barrier.cu")
        with open(program, encoding="utf-8") as f:
            lines = f.read().splitlines()
        read_line = next(i + 1 for i, text in enumerate(lines) if "// READ_LINE" in text)
        write_line = next(i + 1 for i, text in enumerate(lines) if "// WRITE_LINE" in text)
        result = self.run_course(tempfile.gettempdir(), "--check", program)
        self.assertIn("race on shared memory", result.stderr)
        # Which of the two is reported first depends on the shuffled thread order.
        for line in (read_line, write_line):
            self.assertIn("at %s:%d" % (program, line), result.stderr)
        self.assertNotIn(".sim.cpp", result.stderr)

    def test_without_the_include_folder_the_compiler_names_the_header(self):
        result = self.run_course(tempfile.gettempdir(), os.path.join(EXAMPLE, "main.cpp"),
                                 os.path.join(EXAMPLE, "kernels.cu"))
        self.assertEqual(result.returncode, 1)
        self.assertIn("scale.h", result.stderr)


def toolkit_on_the_default_path() -> bool:
    return any(os.path.isfile(os.path.join(d, "cufft.h")) for d in ("/usr/local/include", "/usr/include"))


@unittest.skipUnless(simulator_built() and toolkit_on_the_default_path(),
                     "needs the simulator built and a CUDA Toolkit's cufft.h on the default include path")
class ToolkitHeadersTheSimulatorLacks(unittest.TestCase):
    def test_cufft_is_named_not_taken_from_the_toolkit(self):
        program = os.path.join(support.REPO_ROOT, "cudasim", "tests", "toolkit_headers", "uses_cufft.cu")
        result = subprocess.run([COURSE, "--backend", "sim", "run", program], cwd=tempfile.gettempdir(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                                timeout=300)
        self.assertEqual(result.returncode, 1)
        self.assertIn("cudasim: <cufft.h> is part of the CUDA Toolkit but not of the simulator", result.stderr)
        self.assertNotIn("redefinition", result.stderr)


if __name__ == "__main__":
    unittest.main()
