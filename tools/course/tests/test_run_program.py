"""./course run: argument split, compile commands from the recipe, the cache key."""
import os
import tempfile
import unittest

import support  # noqa: F401
from course.run_program import (cache_key, compile_commands, depfile_inputs, inputs_unchanged, lacks_openmp_runtime,
                                needs_openmp_flag, openmp_package, record_inputs, runtime_targets,
                                split_program_args, INPUTS_NAME)

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
    def test_sim_rewrites_compiles_then_links(self):
        rewrite, compile_, link = compile_commands(["/home/me/prog.cu"], SIM_RECIPE, "/cache/w", "/cache/w/prog")
        # The rewrite looks for project headers where the compiler does (never in the
        # simulator's own include folder) and writes a depfile.
        self.assertEqual(rewrite, ["/b/cudasim/cudasim_rewrite", "-iquote", "/home/me", "-I/src/lessons/common",
                                   "--depfile", "/cache/w/prog.rewrite.d", "/home/me/prog.cu",
                                   "/cache/w/prog.sim.cpp"])
        self.assertEqual(compile_[0], "/usr/bin/clang++")
        self.assertIn("-I/src/cudasim/include", compile_)
        self.assertEqual(compile_[compile_.index("-iquote") + 1], "/home/me")
        self.assertEqual(compile_[compile_.index("-c") + 1], "/cache/w/prog.sim.cpp")
        self.assertEqual(compile_[compile_.index("-MF") + 1], "/cache/w/prog.o.d")   # every header it read
        self.assertEqual(link[0], "/usr/bin/clang++")
        self.assertLess(link.index("/cache/w/prog.o"), link.index("/b/cudasim/libcudasim.a"))
        self.assertEqual(link[-2:], ["-o", "/cache/w/prog"])

    def test_a_cu_file_sees_the_runtime_header_without_including_it_as_with_nvcc(self):
        _, compile_cu, _ = compile_commands(["/home/me/prog.cu"], SIM_RECIPE, "/cache/w", "/cache/w/prog")
        self.assertEqual(compile_cu[compile_cu.index("-include") + 1], "cuda_runtime.h")

    def test_sim_several_files_cu_rewritten_cpp_compiled_as_it_is(self):
        options = ["-I/home/me/include", "-DSCALE=3"]
        commands = compile_commands(["/home/me/main.cpp", "/home/me/gpu/kernels.cu", "/home/me/util.c"],
                                    SIM_RECIPE, "/cache/w", "/cache/w/main", options)
        self.assertEqual(len(commands), 5)   # main.cpp; rewrite + compile kernels.cu; util.c; link
        main_cpp, rewrite, kernels, util_c, link = commands
        self.assertEqual(main_cpp[main_cpp.index("-c") + 1], "/home/me/main.cpp")
        self.assertNotIn("-include", main_cpp)     # plain C++ with the simulator's headers
        self.assertIn("-I/src/cudasim/include", main_cpp)
        self.assertEqual(rewrite[0], "/b/cudasim/cudasim_rewrite")
        self.assertIn("-I/home/me/include", rewrite)   # project headers there are rewritten too
        self.assertEqual(rewrite[rewrite.index("-iquote") + 1], "/home/me/gpu")
        self.assertEqual(rewrite[rewrite.index("--depfile") + 1], "/cache/w/kernels.rewrite.d")
        self.assertEqual(kernels[kernels.index("-c") + 1], "/cache/w/kernels.sim.cpp")
        self.assertEqual(kernels[kernels.index("-include") + 1], "cuda_runtime.h")
        self.assertEqual(kernels[kernels.index("-iquote") + 1], "/home/me/gpu")
        self.assertEqual(util_c[util_c.index("-x") + 1], "c")    # C stays C, as nvcc does
        self.assertFalse([f for f in util_c if f.startswith("-std=c++")])
        for compile_ in (main_cpp, kernels, util_c):
            self.assertIn("-I/home/me/include", compile_)
            self.assertIn("-DSCALE=3", compile_)
            self.assertLess(compile_.index("-I/src/cudasim/include"), compile_.index("-I/home/me/include"))
        objects = [f for f in link if f.endswith(".o")]
        self.assertEqual(objects, ["/cache/w/main.o", "/cache/w/kernels.o", "/cache/w/util.o"])
        self.assertEqual(link[-2:], ["-o", "/cache/w/main"])

    def test_sources_with_one_name_in_two_folders_do_not_collide(self):
        commands = compile_commands(["/a/k.cu", "/b/k.cu"], SIM_RECIPE, "/w", "/w/k")
        outputs = [c[c.index("-o") + 1] for c in commands if "-c" in c]
        self.assertEqual(len(set(outputs)), 2, outputs)

    def test_instrumentation_goes_to_cu_files_only(self):
        recipe = dict(SIM_RECIPE, instrument_flags=["-fsanitize-coverage=trace-loads"])
        main_cpp, _, kernels, _ = compile_commands(["/m/main.cpp", "/m/k.cu"], recipe, "/w", "/w/main",
                                                   instrumented=True)
        self.assertIn("-fsanitize-coverage=trace-loads", kernels)
        self.assertNotIn("-fsanitize-coverage=trace-loads", main_cpp)

    def test_cuda_compiles_in_one_step(self):
        (only,) = compile_commands(["/home/me/prog.cu"], CUDA_RECIPE, "/cache/w", "/cache/w/prog")
        self.assertEqual(only[0], "/usr/local/cuda/bin/nvcc")
        self.assertIn("/home/me/prog.cu", only)
        self.assertIn("-lcublas", only)

    def test_cuda_gives_nvcc_every_file_and_option(self):
        (only,) = compile_commands(["/m/main.cpp", "/m/k.cu"], CUDA_RECIPE, "/w", "/w/main",
                                   ["-I/m/include", "-DSCALE=3"])
        self.assertLess(only.index("/m/main.cpp"), only.index("/m/k.cu"))
        self.assertLess(only.index("-I/m/include"), only.index("/m/main.cpp"))
        self.assertIn("-DSCALE=3", only)
        self.assertEqual(only[-2:], ["-o", "/w/main"])

    def test_openmp_reaches_every_compile_and_the_link_on_the_simulator(self):
        commands = compile_commands(["/m/main.cpp", "/m/k.cu"], SIM_RECIPE, "/w", "/w/main", ["-fopenmp"])
        main_cpp, rewrite, kernels, link = commands
        for command in (main_cpp, kernels, link):
            self.assertIn("-fopenmp", command)
        self.assertNotIn("-fopenmp", rewrite)

    def test_openmp_goes_to_nvccs_host_compiler_with_its_runtime(self):
        (only,) = compile_commands(["/m/omp.cu"], CUDA_RECIPE, "/w", "/w/omp", ["-fopenmp"])
        self.assertIn("-Xcompiler=-fopenmp", only)
        self.assertIn("-lgomp", only)
        self.assertNotIn("-fopenmp", only)

    def test_a_missing_openmp_runtime_is_told_from_an_error_in_the_program(self):
        self.assertTrue(lacks_openmp_runtime("omp.cu:1:10: fatal error: 'omp.h' file not found\n"))
        self.assertTrue(lacks_openmp_runtime("/usr/bin/ld: cannot find -lomp: No such file or directory\n"))
        self.assertFalse(lacks_openmp_runtime("omp.cu:7:3: error: use of undeclared identifier 'omp_get_wtime2'\n"))
        self.assertEqual(openmp_package("/usr/bin/clang++"), "libomp-dev")
        self.assertEqual(openmp_package("/usr/bin/clang++-22"), "libomp-22-dev")

    def test_a_program_calling_openmp_without_the_flag_is_told_to_add_it(self):
        self.assertTrue(needs_openmp_flag("/usr/bin/ld: main.o: in function `main':\n"
                                          "main.cpp:(.text+0x3c): undefined reference to `omp_set_num_threads'\n"))
        self.assertFalse(needs_openmp_flag("main.cpp:(.text+0x3c): undefined reference to `compute_step'\n"))
        self.assertFalse(needs_openmp_flag("omp.cu:7:3: error: use of undeclared identifier 'omp_get_wtime2'\n"))

    def test_runtime_targets_from_file_names(self):
        recipe = dict(SIM_RECIPE, _build_dir="/b")
        self.assertEqual(runtime_targets(recipe), ["cudasim_rewrite", "cudasim"])
        self.assertEqual(runtime_targets(dict(recipe, targets=["x"])), ["x"])

    def test_cache_key_follows_the_source(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "p.cu")
            with open(path, "w") as f:
                f.write("int main() { return 0; }\n")
            first = cache_key([path], CUDA_RECIPE)
            self.assertEqual(first, cache_key([path], CUDA_RECIPE))
            self.assertNotEqual(first, cache_key([path], dict(CUDA_RECIPE, flags=["-O0"])))
            with open(path, "w") as f:
                f.write("int main() { return 1; }\n")
            self.assertNotEqual(first, cache_key([path], CUDA_RECIPE))

    def test_cache_key_covers_every_source_option_and_include_folder(self):
        with tempfile.TemporaryDirectory() as tmp:
            main, kernels = os.path.join(tmp, "main.cpp"), os.path.join(tmp, "src", "kernels.cu")
            include = os.path.join(tmp, "include")
            os.makedirs(os.path.dirname(kernels))
            os.makedirs(include)
            header = os.path.join(include, "scale.h")
            for path in (main, kernels, header):
                with open(path, "w") as f:
                    f.write("// v1\n")
            options = ["-I" + include, "-DSCALE=2"]
            first = cache_key([main, kernels], SIM_RECIPE, options)
            self.assertEqual(first, cache_key([main, kernels], SIM_RECIPE, list(options)))
            self.assertNotEqual(first, cache_key([main], SIM_RECIPE, options))
            self.assertNotEqual(first, cache_key([kernels, main], SIM_RECIPE, options))
            self.assertNotEqual(first, cache_key([main, kernels], SIM_RECIPE, ["-I" + include, "-DSCALE=3"]))
            with open(kernels, "w") as f:
                f.write("// version 2\n")
            second = cache_key([main, kernels], SIM_RECIPE, options)
            self.assertNotEqual(first, second)
            with open(header, "w") as f:
                f.write("// version 2 of the header\n")
            os.utime(header, ns=(os.stat(header).st_atime_ns, os.stat(header).st_mtime_ns + 10 ** 9))
            self.assertNotEqual(second, cache_key([main, kernels], SIM_RECIPE, options))


class RewriteInputs(unittest.TestCase):
    def test_depfile_inputs(self):
        text = "/w/p.sim.cpp: \\\n  /src/p.cu \\\n  /src/a\\ b.cuh /src/c\\#d.h \\\r\n  /src/$$e.h\n"
        self.assertEqual(depfile_inputs(text), ["/src/p.cu", "/src/a b.cuh", "/src/c#d.h", "/src/$e.h"])
        self.assertEqual(depfile_inputs(""), [])

    @staticmethod
    def header_and_work_folder(tmp, depfiles):
        """A header (tmp/k.cuh) outside a work folder (tmp/work) holding ``depfiles``
        (name -> text, where {work} and {header} stand for those paths)."""
        header = os.path.join(tmp, "k.cuh")
        with open(header, "w") as f:
            f.write("// v1\n")
        work = os.path.join(tmp, "work")
        os.makedirs(work)
        for name, text in depfiles.items():
            with open(os.path.join(work, name), "w") as f:
                f.write(text.format(work=work, header=header))
        return header, work

    def test_a_changed_header_outdates_the_cached_binary(self):
        with tempfile.TemporaryDirectory() as tmp:
            header, work = self.header_and_work_folder(tmp, {"p.rewrite.d": "{work}/p.sim.cpp: \\\n  {header}\n"})
            self.assertTrue(inputs_unchanged(work))  # nothing recorded yet
            record_inputs(work)
            self.assertTrue(inputs_unchanged(work))
            with open(header, "w") as f:
                f.write("// version 2\n")
            self.assertFalse(inputs_unchanged(work))

    def test_every_depfile_counts_and_files_in_the_work_folder_do_not(self):
        with tempfile.TemporaryDirectory() as tmp:
            header, work = self.header_and_work_folder(tmp, {
                "main.o.d": "{work}/main.o: /src/main.cpp {header}\n",
                "k.o.d": "{work}/k.o: {work}/k.sim.cpp\n"})    # renamed away with the folder
            record_inputs(work)
            with open(os.path.join(work, INPUTS_NAME)) as f:
                recorded = [line.split(" ", 1)[1] for line in f.read().splitlines()]
            self.assertEqual(sorted(recorded), sorted(["/src/main.cpp", header]))

if __name__ == "__main__":
    unittest.main()
