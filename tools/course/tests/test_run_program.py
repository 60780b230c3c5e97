"""./course run: argument split, compile commands from the recipe, the cache key."""
import os
import tempfile
import unittest

import support  # noqa: F401
from course.run_program import (cache_key, compile_commands, depfile_inputs, inputs_unchanged, record_inputs,
                                runtime_targets, split_program_args)

SIM_RECIPE = {"backend": "sim", "rewrite_tool": "/b/cudasim/cudasim_rewrite", "compiler": "/usr/bin/clang++",
              "flags": ["-std=c++20", "-O2"], "cu_flags": ["-include", "cuda_runtime.h"],
              "include_dirs": ["/src/cudasim/include", "/src/lessons/common"],
              "rewrite_include_dirs": ["/src/lessons/common"],
              "link": ["/b/cudasim/libcudasim.a", "/usr/lib/libopenblas.so", "-pthread"]}
CUDA_RECIPE = {"backend": "cuda", "rewrite_tool": None, "compiler": "/usr/local/cuda/bin/nvcc",
               "flags": ["-O2", "-arch=sm_90"], "include_dirs": ["/src/lessons/common"], "link": ["-lcublas"]}


class ProgramArguments(unittest.TestCase):
    def test_split(self):
        self.assertEqual(split_program_args(["1", "--stats", "2"]), (["1", "2"], True, False))
        self.assertEqual(split_program_args(["--check", "1"]), (["1"], False, True))
        self.assertEqual(split_program_args(["--", "--stats"]), (["--stats"], False, False))
        self.assertEqual(split_program_args([]), ([], False, False))


class Recipes(unittest.TestCase):
    def test_sim_rewrites_then_compiles_with_iquote(self):
        rewrite, compile_ = compile_commands("/home/me/prog.cu", SIM_RECIPE, "/cache/w", "/cache/w/prog")
        # The rewrite looks for project headers where the compiler does (never in the
        # simulator's own include folder) and writes a depfile.
        self.assertEqual(rewrite, ["/b/cudasim/cudasim_rewrite", "-iquote", "/home/me", "-I/src/lessons/common",
                                   "--depfile", "/cache/w/rewritten.d", "/home/me/prog.cu", "/cache/w/prog.sim.cpp"])
        self.assertEqual(compile_[0], "/usr/bin/clang++")
        self.assertIn("-I/src/cudasim/include", compile_)
        self.assertEqual(compile_[compile_.index("-iquote") + 1], "/home/me")
        self.assertLess(compile_.index("/cache/w/prog.sim.cpp"), compile_.index("/b/cudasim/libcudasim.a"))
        self.assertEqual(compile_[-2:], ["-o", "/cache/w/prog"])

    def test_a_cu_file_sees_the_runtime_header_without_including_it_as_with_nvcc(self):
        _, compile_cu = compile_commands("/home/me/prog.cu", SIM_RECIPE, "/cache/w", "/cache/w/prog")
        self.assertEqual(compile_cu[compile_cu.index("-include") + 1], "cuda_runtime.h")
        _, compile_cpp = compile_commands("/home/me/prog.cpp", SIM_RECIPE, "/cache/w", "/cache/w/prog")
        self.assertNotIn("-include", compile_cpp)

    def test_cuda_compiles_in_one_step(self):
        (only,) = compile_commands("/home/me/prog.cu", CUDA_RECIPE, "/cache/w", "/cache/w/prog")
        self.assertEqual(only[0], "/usr/local/cuda/bin/nvcc")
        self.assertIn("/home/me/prog.cu", only)
        self.assertIn("-lcublas", only)

    def test_runtime_targets_from_file_names(self):
        recipe = dict(SIM_RECIPE, _build_dir="/b")
        self.assertEqual(runtime_targets(recipe), ["cudasim_rewrite", "cudasim"])
        self.assertEqual(runtime_targets(dict(recipe, targets=["x"])), ["x"])

    def test_cache_key_follows_the_source(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "p.cu")
            with open(path, "w") as f:
                f.write("int main() { return 0; }\n")
            first = cache_key(path, CUDA_RECIPE)
            self.assertEqual(first, cache_key(path, CUDA_RECIPE))
            self.assertNotEqual(first, cache_key(path, dict(CUDA_RECIPE, flags=["-O0"])))
            with open(path, "w") as f:
                f.write("int main() { return 1; }\n")
            self.assertNotEqual(first, cache_key(path, CUDA_RECIPE))



class RewriteInputs(unittest.TestCase):
    def test_depfile_inputs(self):
        text = "/w/p.sim.cpp: \\\n  /src/p.cu \\\n  /src/a\\ b.cuh /src/c\\#d.h \\\r\n  /src/$$e.h\n"
        self.assertEqual(depfile_inputs(text), ["/src/p.cu", "/src/a b.cuh", "/src/c#d.h", "/src/$e.h"])
        self.assertEqual(depfile_inputs(""), [])

    def test_a_changed_header_outdates_the_cached_binary(self):
        with tempfile.TemporaryDirectory() as tmp:
            header = os.path.join(tmp, "k.cuh")
            with open(header, "w") as f:
                f.write("// v1\n")
            with open(os.path.join(tmp, "rewritten.d"), "w") as f:
                f.write("%s: \\\n  %s\n" % (os.path.join(tmp, "p.sim.cpp"), header))
            self.assertTrue(inputs_unchanged(tmp))  # nothing recorded yet
            record_inputs(tmp)
            self.assertTrue(inputs_unchanged(tmp))
            with open(header, "w") as f:
                f.write("// version 2\n")
            self.assertFalse(inputs_unchanged(tmp))


if __name__ == "__main__":
    unittest.main()
