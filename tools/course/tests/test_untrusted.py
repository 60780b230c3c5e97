import os
import stat
import tempfile
import time
import unittest

from course.symbol_policy import Definition, import_verdict, definition_verdict, mangled_namespace, section_verdicts
from course.untrusted import (ForgedResults, GraderSecret, aggregate_casts_in, assembly_in, backend_names_added,
                              uncounted_memory_in,
                              unseen_code_in, compiler_include_dirs, compiler_messages_for_student, count_expected,
                              dependencies_outside, dependencies_under, parse_gtest_list, parse_signed_results,
                              overlong_lines_in, own_code, preprocess_command, program_output_for_student,
                              reserved_namespaces_in, sign, solution_includes)

KEY = bytes(range(32))
BODY = ("course-grader-result 1\ntest VectorAdd.Works passed\ntest VectorAdd.Guards failed\n"
        "perf vector_add backend=sim counted=1 global_bytes=100\nend\n")


class SignedResultsTest(unittest.TestCase):
    def test_known_hmac_vector(self):
        # RFC 4231 test case 2
        self.assertEqual(sign(b"Jefe", "what do ya want for nothing?"),
                         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")

    def test_a_signed_file_verifies_and_parses(self):
        r = parse_signed_results(BODY + "hmac " + sign(KEY, BODY) + "\n", KEY)
        self.assertEqual(r.tests, {"VectorAdd.Works": "passed", "VectorAdd.Guards": "failed"})
        self.assertEqual(r.perf["vector_add"]["global_bytes"], "100")

    def test_a_changed_body_is_rejected(self):
        forged = BODY.replace("failed", "passed")
        with self.assertRaises(ForgedResults):
            parse_signed_results(forged + "hmac " + sign(KEY, BODY) + "\n", KEY)

    def test_another_key_is_rejected(self):
        with self.assertRaises(ForgedResults):
            parse_signed_results(BODY + "hmac " + sign(b"x" * 32, BODY) + "\n", KEY)

    def test_unsigned_and_truncated_files_are_rejected(self):
        for text in ("", BODY, "[  PASSED  ] 4 tests.\n", BODY.replace("end\n", "") + "hmac " +
                     sign(KEY, BODY.replace("end\n", ""))):
            with self.assertRaises(ForgedResults):
                parse_signed_results(text, KEY)

    def test_the_judges_record_of_a_failed_worker_is_read(self):
        body = BODY.replace("end\n", "worker VectorAdd.Guards crashed SIGSEGV\nworker VectorAdd.Works exited 0\nend\n")
        r = parse_signed_results(body + "hmac " + sign(KEY, body) + "\n", KEY)
        self.assertEqual(r.worker_failures, {"VectorAdd.Guards": "crashed SIGSEGV", "VectorAdd.Works": "exited 0"})

    def test_a_failed_worker_sets_the_status_and_costs_its_tests(self):
        from course.graded_run import ERROR, GradedRun, _report_worker_failures
        body = BODY.replace("end\n", "worker VectorAdd.Guards crashed SIGSEGV\nend\n")
        run = GradedRun(status="failed", reason="1 of 2 tests failed", passed=1, total=2, scored=True,
                        signed=parse_signed_results(body + "hmac " + sign(KEY, body) + "\n", KEY))
        _report_worker_failures(run)
        self.assertEqual(run.status, "crashed (SIGSEGV)")
        self.assertIn("killed by SIGSEGV", run.reason)
        self.assertIn("VectorAdd.Guards", run.reason)
        self.assertEqual((run.passed, run.total), (1, 2))
        body = BODY.replace("end\n", "worker VectorAdd.Guards exited 0\nend\n")
        run = GradedRun(status="failed", reason="1 of 2 tests failed", passed=1, total=2, scored=True,
                        signed=parse_signed_results(body + "hmac " + sign(KEY, body) + "\n", KEY))
        _report_worker_failures(run)
        self.assertEqual(run.status, ERROR)
        self.assertIn("exited (code 0)", run.reason)

    def test_only_expected_tests_count(self):
        r = parse_signed_results(BODY + "hmac " + sign(KEY, BODY) + "\n", KEY)
        self.assertEqual(count_expected(r, ["VectorAdd.Works", "VectorAdd.Guards", "VectorAdd.Filtered"]),
                         (1, 3, ["VectorAdd.Filtered"]))

    def test_secret_payload(self):
        s = GraderSecret(KEY, "/tmp/x.result")
        self.assertEqual(s.payload().decode().splitlines(), [KEY.hex(), "/tmp/x.result"])


class BackendNamesTest(unittest.TestCase):
    """A submission's regions may not tell the simulator's build from a GPU's (gpu_checks.py)."""
    HANDED_OUT = "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800\n#error old GPU\n#endif\n// BEGIN YOUR CODE\n"

    def test_what_the_handed_out_file_names_is_not_counted(self):
        self.assertEqual(backend_names_added(self.HANDED_OUT + "c[i] = a[i];\n", self.HANDED_OUT), [])

    def test_each_way_to_tell_them_apart_is_named(self):
        cases = {"#ifdef CUDASIM\n": "CUDASIM", "#if CUDASIM_CHECK\n": "CUDASIM_CHECK",
                 "#if __has_include(<cudasim/stats.hpp>)\n": "cudasim", "#ifdef __CUDACC__\n": "__CUDACC__",
                 "#if __CUDACC_VER_MAJOR__ > 12\n": "__CUDACC_VER_MAJOR__", "#ifdef __NVCC__\n": "__NVCC__",
                 "#if __CUDA_ARCH__ >= 900\n": "__CUDA_ARCH__", "#define ON_SIM defined(__clang__)\n": "__clang__",
                 "if (CUDART_VERSION > 13000) slow();\n": "CUDART_VERSION", "#ifdef __NVCOMPILER\n": "__NVCOMPILER"}
        for code, name in cases.items():
            self.assertEqual(backend_names_added(self.HANDED_OUT + code, self.HANDED_OUT), [name + " (1 time)"], code)

    def test_one_more_than_handed_out_counts(self):
        added = self.HANDED_OUT + "#if __CUDA_ARCH__ >= 800\n#endif\n#if __CUDA_ARCH__\n#endif\n"
        self.assertEqual(backend_names_added(added, self.HANDED_OUT), ["__CUDA_ARCH__ (2 times)"])

    def test_an_include_path_is_left_to_the_include_checks(self):
        self.assertEqual(backend_names_added('#include "build/x/cudasim_rewritten/y.cu"\n#include <cudasim/stats.hpp>\n',
                                             ""), [])

    def test_names_that_only_contain_one_are_not_counted(self):
        self.assertEqual(backend_names_added("int my_CUDASIM = 0; int xcudasim;\n", ""), [])


class ImportAllowListTest(unittest.TestCase):
    def allowed(self, mangled, shown=None, facilities=()):
        return import_verdict(mangled, shown or mangled, list(facilities)) is None

    def test_what_every_exercise_may_import(self):
        for mangled, shown in [("_Z10cudaMallocPPvmPKcj", "cudaMalloc(void**, unsigned long, char const*, unsigned int)"),
                               ("threadIdx", None), ("memcpy", None), ("sqrtf", None), ("printf", None),
                               ("_Znwm", "operator new(unsigned long)"), ("__cxa_throw", None),
                               ("_ZSt20__throw_length_errorPKc", "std::__throw_length_error(char const*)"),
                               ("_ZTVN10__cxxabiv117__class_type_infoE", "vtable for __cxxabiv1::__class_type_info"),
                               ("_ZN7cudasim6detail13block_barrierENS0_11BarrierKindEiPKcj",
                                "cudasim::detail::block_barrier(cudasim::detail::BarrierKind, int, char const*, "
                                "unsigned int)"), ("__sanitizer_cov_load4", None)]:
            self.assertTrue(self.allowed(mangled, shown), mangled)

    def test_libraries_and_facilities_need_the_rubric(self):
        self.assertFalse(self.allowed("cublasSgemm_v2"))
        self.assertTrue(self.allowed("cublasSgemm_v2", facilities=["cublas"]))
        thread = ("_ZNSt6thread4joinEv", "std::thread::join()")
        self.assertIn("threads", import_verdict(*thread, []))
        self.assertTrue(self.allowed(*thread, facilities=["threads"]))
        self.assertFalse(self.allowed("fopen"))
        self.assertTrue(self.allowed("fopen", facilities=["files"]))
        managed = ("_Z17cudaMallocManagedPPvmj", "cudaMallocManaged(void**, unsigned long, unsigned int)")
        self.assertFalse(self.allowed(*managed))
        self.assertTrue(self.allowed(*managed, facilities=["managed_memory"]))
        self.assertTrue(self.allowed("_Z10cudaMallocPPvmPKcj", "cudaMalloc(void**, unsigned long, char const*, "
                                     "unsigned int)"))
        # wmma (the simulator's hooks that its fragments instantiate): the exercise on tensor cores only
        tile = ("_ZN7cudasim6detail22begin_warp_tile_accessEv", "cudasim::detail::begin_warp_tile_access()")
        self.assertIn("tensor cores", import_verdict(*tile, []))
        self.assertTrue(self.allowed(*tile, facilities=["tensor_cores"]))

    def test_fortified_forms_are_judged_as_the_functions_they_check(self):
        # A GCC that fortifies by default calls __fread_chk for fread (the lent H200's did).
        self.assertTrue(self.allowed("__fread_chk", facilities=["files"]))
        self.assertIn("file access", import_verdict("__fread_chk", "__fread_chk", []))
        self.assertTrue(self.allowed("__memcpy_chk"))
        self.assertIsNotNone(import_verdict("__system_chk", "__system_chk", ["files"]))

    def test_the_compilers_own_glue_is_not_the_submissions(self):
        # nvcc's fat-binary registration calls atexit: allowed when the reference's object
        # (same exercise, same compiler) imports it too, refused otherwise.
        self.assertIsNotNone(import_verdict("atexit", "atexit", []))
        self.assertIsNone(import_verdict("atexit", "atexit", [], toolchain_imports={"atexit"}))
        self.assertTrue(self.allowed("_GLOBAL_OFFSET_TABLE_"))

    def test_what_no_exercise_may_import(self):
        for name in ("dlopen", "dlsym", "fork", "syscall", "kill", "setsid", "getppid", "getenv", "execve", "system",
                     "ptrace", "exit", "_exit", "atexit", "mprotect", "open_memstream_unknown_symbol"):
            self.assertFalse(self.allowed(name, facilities=["cublas", "threads", "files"]), name)
        # GoogleTest's fake reporter and the harness's helpers, the simulator's counters
        self.assertIn("grader", import_verdict(
            "_ZN7testing32ScopedFakeTestPartResultReporterC1EPNS_19TestPartResultArrayE",
            "testing::ScopedFakeTestPartResultReporter::ScopedFakeTestPartResultReporter("
            "testing::TestPartResultArray*)", []))
        self.assertFalse(self.allowed("_ZN7cudasim11reset_statsEv", "cudasim::reset_stats()"))
        # cudasim::detail as the public headers call it, not the runtime's own functions that only
        # cudasim/src/internal.hpp declares (a red-team run rewrote lesson 05's link counters so).
        self.assertFalse(self.allowed("_ZN7cudasim6detail16reset_link_statsEv", "cudasim::detail::reset_link_stats()"))
        self.assertFalse(self.allowed("_ZN7cudasim6detail17count_peer_accessEiim",
                                      "cudasim::detail::count_peer_access(int, int, unsigned long)"))
        self.assertFalse(self.allowed("_ZN7cudasim6detail19count_device_accessEPKvjbS2_",
                                      "cudasim::detail::count_device_access(void const*, unsigned int, bool, "
                                      "void const*)"))
        self.assertFalse(self.allowed("_ZN6course4test6detail7compareIfEEbv", "bool course::test::detail::compare<float>()"))


class DefinitionRulesTest(unittest.TestCase):
    TRUSTED = {"malloc", "_Znwm", "main", "__sanitizer_cov_load4", "launch_vector_add"}
    OWN = {"launch_vector_add"}

    def verdict(self, name, kind):
        return definition_verdict(Definition(name, kind), self.TRUSTED, self.OWN)

    def test_namespaces_read_from_the_mangling(self):
        self.assertEqual(mangled_namespace("_ZN7testing8internal3fooEv"), "7testing")
        self.assertEqual(mangled_namespace("_ZNKSt6vectorIiSaIiEE4sizeEv"), "St")
        self.assertEqual(mangled_namespace("_ZTVN6course4test3FooE"), "6course4test")
        self.assertEqual(mangled_namespace("_ZNSs4sizeEv"), "St")
        self.assertIsNone(mangled_namespace("_Z17launch_vector_addPKfS0_Pfi"))
        self.assertIsNone(mangled_namespace("malloc"))

    def test_the_grader_namespaces_are_closed(self):
        self.assertIsNotNone(self.verdict("_ZN6course4test6detail7compareIfEEbv", "W"))
        self.assertIsNotNone(self.verdict("_ZN7testing8internal3fooEv", "T"))

    def test_library_namespaces_take_only_header_instantiations(self):
        self.assertIsNone(self.verdict("_ZNKSt6vectorIiSaIiEE4sizeEv", "W"))
        self.assertIsNotNone(self.verdict("_ZNKSt6vectorIdSaIdEE4sizeEv", "T"))
        self.assertIsNone(self.verdict("_ZN7cudasim6detail14KernelInstanceD2Ev", "W"))
        self.assertIsNotNone(self.verdict("_ZN7cudasim11reset_statsEv", "T"))

    def test_no_replacement_for_what_the_program_defines(self):
        for name in ("malloc", "_Znwm", "main", "__sanitizer_cov_load4"):
            self.assertIsNotNone(self.verdict(name, "T"), name)
            self.assertIsNotNone(self.verdict(name, "W"), name)
        self.assertIsNone(self.verdict("launch_vector_add", "T"))
        self.assertIsNone(self.verdict("my_helper", "T"))
        self.assertIn("IFUNC", self.verdict("my_helper", "i"))


class SectionRulesTest(unittest.TestCase):
    BASE = [".text:16", ".init_array.2:8", ".rela.init_array.2:24"]

    def test_start_up_sections_beyond_the_reference_are_flagged(self):
        self.assertEqual(section_verdicts([".init_array.2:8", ".rela.init_array.2:24", ".text.foo:4"], self.BASE), [])
        for extra in (".init_array:8", ".init_array.a.50:8", ".ctors.65000:8", ".preinit_array:8", ".fini_array:8"):
            found = section_verdicts([".init_array.2:8", extra], self.BASE)
            self.assertEqual(len(found), 1, extra)
            self.assertTrue(found[0].startswith(extra.split(":")[0]), found)
        self.assertEqual(len(section_verdicts([".init_array.2:16"], self.BASE)), 1)

    def test_only_ordinary_sections(self):
        self.assertEqual(section_verdicts([".rodata.str1.1:9", "__sancov_cntrs:4", ".linker-options:0",
                                           ".nvFatBinSegment:24", ".rela.nvFatBinSegment:48", ".nv_fatbin:4096",
                                           ".rela.text.foo:24"], []), [])
        self.assertEqual(len(section_verdicts([".my_blob:4096", ".linker-options:12"], [])), 2)
        self.assertIn("__managed__", section_verdicts(["cudasim_managed:64"], [])[0])


class ObjectChecksTest(unittest.TestCase):
    def test_solution_includes(self):
        self.assertEqual(solution_includes('#include "vector_add.hpp"\n'), [])
        self.assertEqual(len(solution_includes('  #  include "../../solutions/00-x/01_a.cu"\n')), 1)
        self.assertEqual(len(solution_includes('# \\\n include "../../solutions/00-x/01_a.cu"\n')), 1)  # continued

    def test_the_text_checks_take_time_in_proportion_to_the_text(self):
        # A seventh red-team run: 300,000 blank lines made the include check take two minutes, and
        # a 245 KB line of '[' the attribute check (each rescanned from every position). Now both
        # are one pass: well under a second here; the bound is far above that, far below minutes.
        started = time.monotonic()
        self.assertEqual(solution_includes("\n" * 300000 + '#include "../solutions/00/a.cu"\n'),
                         ['#include "../solutions/00/a.cu"'])
        line = "  const char* s = R\"x(" + "[" * 245000 + ")x\";\n"
        pp = '# 1 "/tmp/sub/02/01_a.cu"\n' + "[[" * 100000 + "\n" + '__attribute__((section("x"))) int a;\n'
        self.assertEqual(len(unseen_code_in(own_code(pp, ["/tmp/sub"]))), 1)           # the attribute after them, found
        self.assertEqual(len(overlong_lines_in(own_code('# 1 "/tmp/sub/02/01_a.cu"\n' + line, ["/tmp/sub"]))), 1)
        self.assertLess(time.monotonic() - started, 20.0)

    def test_attribute_blocks_end_at_their_first_closer(self):
        pp = ('# 1 "/tmp/sub/00/01_a.cu"\n'
              'x [[clang::noinline]] y = f([a[1]]); __declspec(naked) void g(); [[unclosed\n')
        found = unseen_code_in(own_code(pp, ["/tmp/sub"]))
        self.assertEqual(len(found), 2, found)
        self.assertIn("noinline", found[0])
        self.assertIn("naked", found[1])

    def test_dependencies_under(self):
        deps = "obj.o: #deps 2, deps mtime 1 (VALID)\n    /r/solutions/00/a.cu\n    /r/lessons/a.hpp\n"
        self.assertEqual(dependencies_under(deps, "/r/solutions"), ["/r/solutions/00/a.cu"])

    def test_dependencies_outside_the_snapshot_and_the_system(self):
        deps = ("obj.o: #deps 6, deps mtime 1 (VALID)\n    /r/build/grade-sim/course-src/lessons/a.hpp\n"
                "    /usr/include/stdio.h\n    /tmp/sub-1/00/01_a.cu\n    /r/build/grade-sim/reference/x/a.cu.cpp\n"
                "    /tmp/sub-2/00/01_a.cu\n    /home/bob/00/01_a.cu\n")
        self.assertEqual(dependencies_outside(deps, ["/r/build/grade-sim/course-src", "/tmp/sub-1"], "/r"),
                         ["/r/build/grade-sim/reference/x/a.cu.cpp", "/tmp/sub-2/00/01_a.cu", "/home/bob/00/01_a.cu"])
        # a repository under a system folder: only the snapshot counts inside it
        self.assertEqual(dependencies_outside("/usr/local/course/solutions/a.cu\n/usr/local/course/snap/b.h\n",
                                              ["/usr/local/course/snap"], "/usr/local/course"),
                         ["/usr/local/course/solutions/a.cu"])

    def test_a_compilers_own_header_folders_are_system_headers(self):
        # A GCC installed in /opt (the lent GPU machines' nvcc host compiler) lists its folders
        # with -v; folders in the temporary directory are never taken.
        folder = tempfile.mkdtemp()
        self.addCleanup(lambda: os.system("rm -rf " + folder))
        compiler = os.path.join(folder, "g++")
        with open(compiler, "w") as f:
            f.write("#!/bin/sh\ncat >&2 <<'EOF'\nignoring nonexistent directory \"/x\"\n"
                    "#include \"...\" search starts here:\n#include <...> search starts here:\n"
                    " /opt/gcc/lib/gcc/x86_64-linux-gnu/13/include\n /opt/gcc/include/c++/13\n"
                    " %s/include\n /usr/include\nEnd of search list.\nEOF\n" % tempfile.gettempdir())
        os.chmod(compiler, stat.S_IRWXU)
        self.assertEqual(compiler_include_dirs(compiler),
                         ["/opt/gcc/lib/gcc/x86_64-linux-gnu/13/include", "/opt/gcc/include/c++/13", "/usr/include"])
        deps = "/opt/gcc/lib/gcc/x86_64-linux-gnu/13/include/stddef.h\n/opt/other/evil.h\n"
        self.assertEqual(dependencies_outside(deps, [], "/r"), ["/opt/gcc/lib/gcc/x86_64-linux-gnu/13/include/stddef.h",
                                                                "/opt/other/evil.h"])
        self.assertEqual(dependencies_outside(deps, [], "/r", ["/usr/include"] + compiler_include_dirs(compiler)),
                         ["/opt/other/evil.h"])
        self.assertEqual(compiler_include_dirs(os.path.join(folder, "no-such-compiler")), [])

    def test_inline_assembly_in_the_submissions_own_lines(self):
        pp = ('# 1 "/tmp/sub/00/01_a.cu"\nconst char* s = "asm";\n# 5 "/usr/include/stdio.h" 3\n'
              'extern int printf(const char*, ...) __asm__("printf");\n# 9 "/tmp/sub/00/01_a.cu" 2\n'
              '__asm__(".incbin \\"/r/solutions/a.cu\\"");\n')
        found = assembly_in(own_code(pp, ["/tmp/sub"]))
        self.assertEqual(len(found), 1)
        self.assertIn(".incbin", found[0])
        self.assertEqual(assembly_in(own_code(pp.replace("__asm__(", "f("), ["/tmp/sub"])), [])

    def test_memory_moved_past_the_counters_in_the_submissions_own_lines(self):
        head = ('# 1 "/usr/include/c++/12/atomic" 3\nstruct atomic { void f() { __atomic_fetch_add(p, 1, 0); } };\n'
                '# 4 "/tmp/sub/03/01_dot.cu"\n')
        for code, threads, found in [
                ("  __atomic_compare_exchange_n(w, &seen, now, false, 0, 0);\n", True, 1),
                ("  __sync_fetch_and_add(p, 1);\n", False, 1),
                ("  std::atomic_ref<float>(*r).fetch_add(s);\n", False, 1),
                ("  std::atomic<bool> done{false};\n", True, 0),      # reader threads may use atomics
                ("  void* (*volatile cp)(void*, const void*, std::size_t) = memcpy;\n", False, 1),
                ("  auto cp = &memmove;\n", False, 1),
                ("  memcpy(a, b, n);  std::memset(a, 0, n);\n", False, 0),
                ("  atomicAdd(result, sum);  const char* s = \"__atomic_x memcpy\";\n", False, 0)]:
            self.assertEqual(len(uncounted_memory_in(own_code(head + code, ["/tmp/sub"]), threads)), found, code)

    def test_builtins_off_the_list_and_cpu_vector_intrinsics_in_the_submissions_own_lines(self):
        # The headers' own builtins (in an inline function of <emmintrin.h>) are not the submission's.
        head = ('# 1 "/usr/lib/llvm-14/lib/clang/14.0.6/include/emmintrin.h" 3\n'
                'static void f() { __builtin_ia32_maskmovdqu(d, n, p); }\n# 4 "/tmp/sub/00/01_vector_add.cu"\n')
        for code, found in [
                ("    __builtin_memcpy_inline(c + i, a + i, 64);\n", 1),
                ("    __builtin___memcpy_chk(c + i, s, sizeof s, sizeof s);\n", 1),
                ("    __builtin_masked_store(mask, v, p);\n", 1),
                ("    __builtin_ia32_maskmovdqu(d, n, p);\n", 1),
                ("    _mm_maskmoveu_si128(v, m, reinterpret_cast<char*>(c + i));\n", 1),
                ("    const __m128 s = x;\n", 1),
                ("    vst1q_f32(c + i, v);\n", 1),
                # what the standard headers' macros (INFINITY, offsetof, __glibc_unlikely) expand to
                ("    float m = (__builtin_inff ()); if (__builtin_expect(x, 0)) y = __builtin_offsetof(S, f);\n", 0),
                ("    __builtin_memcpy(&u, &f, 4); int k = __builtin_popcount(m) + __builtin_clzll(w);\n", 0),
                ("    float mm_x = vst + _mm; int v_f32 = 1;\n", 0),
                # placement new: a whole object copied in place, past the counters
                ("    new (c + i) std::array<float, 16>(tile);\n", 1),
                ("    auto* t = ::new(static_cast<void*>(c)) Tile;\n", 1),
                # the rewrite's device-heap new, and operator new called by name, are not placement
                ("    float* p = new (::cudasim::detail::device_heap) float[4];\n", 0),
                ("    void* raw = ::operator new(64); Tile* t = new Tile;\n", 0)]:
            self.assertEqual(len(uncounted_memory_in(own_code(head + code, ["/tmp/sub"]), False)), found, code)

    def test_whole_structs_and_arrays_through_casts_in_the_submissions_own_lines(self):
        head = '# 1 "/usr/include/c++/12/array" 3\nauto p = reinterpret_cast<const Tp*>(q);\n# 4 "/tmp/sub/01/02_scan.cu"\n'
        for code, found in [
                ("*reinterpret_cast<Chunk*>(la + d) = *reinterpret_cast<const Chunk*>(a + d);\n", 2),
                ("auto& r = reinterpret_cast<std::array<float, 32>&>(a[0]);\n", 1),
                ("auto p = (Chunk*)a;\n", 1),
                ("auto p = reinterpret_cast<const float(*)[32]>(a);\n", 1),
                ("auto p = (float(*)[32])a;\n", 1),
                ("union Pun { const float* f; const Chunk* c; };\n", 1),
                # the casts the course's own solutions make
                ("const float4 v = *reinterpret_cast<const float4*>(x + i);\n", 0),
                ("cudaMalloc(reinterpret_cast<void**>(&d), n); auto* w = reinterpret_cast<std::int64_t*>(&b);\n", 0),
                ("char* c = static_cast<char*>(p); float* f = (float*)v; int y = (a * b) + (c);\n", 0),
                ("auto f = reinterpret_cast<void (*)(int)>(g); auto h = reinterpret_cast<const __half2*>(p);\n", 0)]:
            self.assertEqual(len(aggregate_casts_in(own_code(head + code, ["/tmp/sub"]))), found, code)

    def test_code_the_counters_cannot_see_in_the_submissions_own_lines(self):
        head = '# 1 "/usr/include/c++/12/numeric" 3\nauto p = std::inner_product<T*>;\n# 4 "/tmp/sub/03/01_dot.cu"\n'
        for code, found in [
                ('__attribute__((noinline, no_sanitize("coverage"))) static void add() {}\n', 1),
                ('[[clang::no_sanitize("coverage")]] void f();\n', 1),
                ('_Pragma("clang attribute push")\n', 1),
                ("float (*volatile dot)(const float*, const float*, const float*, float) = "
                 "std::inner_product<const float*, const float*, float>;\n", 1),
                ("auto f = &std::transform<const float*, float*, Op>;\n", 1),
                ("float (*volatile dot)(const float*, const float*, const float*, float) =\n"
                 "    std::inner_product<const float*, const float*, float>;\n", 1),
                ("nvcuda::wmma::detail::copy_in_uncounted<half, 16, 16>(d, s, 16, false);\n", 1),
                ("::cudasim::detail::begin_warp_tile_access(); s += x[i];\n", 1),
                # a call kept out of line by a statement attribute (clang 15 and later)
                ("[[clang::noinline]] r = std::inner_product(a, a + n, b, 0.0f);\n", 1),
                ("[[msvc::noinline]] r = std::accumulate(a, a + n, 0.0f);\n", 1),
                ("[[ gnu :: __noinline__ ]] void helper();\n", 1),
                # what honest code writes
                ("__attribute__((noinline)) __device__ float helper(const float* p) { return *p; }\n", 0),
                ("inline __attribute__((always_inline)) float f(); __attribute__((aligned(16))) float t[4];\n", 0),
                ("std::sort(v.begin(), v.end()); auto m = std::max(a, b); x = std::min<int>(a, b);\n", 0),
                ("flag.load(std::memory_order_acquire); std::size_t n = sizeof(std::size_t);\n", 0),
                ("std::ifstream f(p, std::ios::binary); const int k = c ? std::max(a, b) : d;\n", 0)]:
            self.assertEqual(len(unseen_code_in(own_code(head + code, ["/tmp/sub"]))), found, code)

    def test_reserved_namespaces_in_the_submissions_own_lines(self):
        head = '# 1 "/usr/include/c++/12/sstream" 3\nnamespace std { template <> class x<int>; }\n# 4 "/tmp/sub/01_a.cu"\n'
        for code, found in [("namespace std {\ntemplate <class C> class basic_ostringstream {};\n}\n", 1),
                            ("namespace  ::course { namespace test { } }\n", 1),
                            ("template <>\ninline bool testing::internal::f<int>() { return true; }\n", 1),
                            ("namespace mine { template <> int f<int>(); }\nusing namespace std;\n", 0),
                            ("const char* s = \"namespace std {\";\nstd::vector<int> v;\n", 0),
                            ("template <> int mine::std_like<int>::f() { return 0; }\n", 0)]:
            self.assertEqual(len(reserved_namespaces_in(own_code(head + code, ["/tmp/sub"]))), found, code)

    def test_preprocess_command(self):
        self.assertEqual(preprocess_command("/usr/bin/clang++ -I/x -O2 -fsanitize-coverage=a -MD -MT o.o -MF o.d "
                                            "-o o.o -c /b/x.cu.cpp"),
                         ["/usr/bin/clang++", "-I/x", "-O2", "/b/x.cu.cpp", "-E", "-o", "-"])
        self.assertIsNone(preprocess_command("/usr/bin/ld -o a.out a.o"))

    def test_compiler_messages_about_other_files_are_hidden(self):
        text = ("/tmp/s/00/01_a.cu:3:6: error: redefinition of 'f'\nvoid f() {\n     ^\n"
                "/r/solutions/00/01_a.cu:8:6: note: previous definition is here\nvoid f() { c[i] = a[i] + b[i]; }\n"
                "1 error generated.\n")
        shown = compiler_messages_for_student(text, ["/tmp/s"], "/r")
        self.assertIn("redefinition", shown)
        self.assertNotIn("a[i] + b[i]", shown)
        self.assertIn("1 error generated.", shown)

    def test_only_the_simulators_reports_of_a_crash_are_shown(self):
        out = "my secret text\ncudasim: out-of-bounds read in kernel 'k'\n  block (0,0,0)\nmore text\n"
        self.assertEqual(program_output_for_student(out),
                         "cudasim: out-of-bounds read in kernel 'k'\n  block (0,0,0)")

    def test_gtest_list(self):
        text = "Running main()\nVectorAdd.\n  Works\n  Guards  # GetParam() = 1\nCoursePerf.\n  VectorAdd\n"
        self.assertEqual(parse_gtest_list(text), ["VectorAdd.Works", "VectorAdd.Guards", "CoursePerf.VectorAdd"])


if __name__ == "__main__":
    unittest.main()
