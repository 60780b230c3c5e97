import unittest

from course.untrusted import (ForgedResults, GraderSecret, count_expected, dependencies_under, forbidden_calls,
                              parse_gtest_list, parse_signed_results, sign, solution_includes, startup_tricks)

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

    def test_only_expected_tests_count(self):
        r = parse_signed_results(BODY + "hmac " + sign(KEY, BODY) + "\n", KEY)
        self.assertEqual(count_expected(r, ["VectorAdd.Works", "VectorAdd.Guards", "VectorAdd.Filtered"]),
                         (1, 3, ["VectorAdd.Filtered"]))

    def test_secret_payload(self):
        s = GraderSecret(KEY, "/tmp/x.result")
        self.assertEqual(s.payload().decode().splitlines(), [KEY.hex(), "/tmp/x.result"])


class ObjectChecksTest(unittest.TestCase):
    def test_cublas_is_forbidden_unless_allowed(self):
        syms = ["cudaMalloc", "cublasCreate_v2", "course::CudaError::CudaError()"]
        self.assertEqual(forbidden_calls(syms, []), [("cublasCreate_v2", "cublas")])
        self.assertEqual(forbidden_calls(syms, ["cublas"]), [])

    def test_dynamic_loading_is_never_allowed(self):
        self.assertEqual(forbidden_calls(["dlopen", "dlsym"], ["cublas"]),
                         [("dlopen", "never allowed"), ("dlsym", "never allowed")])

    def test_startup_sections_beyond_the_reference_are_flagged(self):
        base = [".init_array.2:8", ".text:100"]
        self.assertEqual(startup_tricks([".init_array.2:8", ".init_array:8"], base), [])
        self.assertEqual(startup_tricks([".init_array.2:16"], base), [".init_array.2"])
        self.assertEqual(startup_tricks([".init_array.101:8", ".preinit_array:8"], base),
                         [".init_array.101", ".preinit_array"])

    def test_solution_includes(self):
        self.assertEqual(solution_includes('#include "vector_add.hpp"\n'), [])
        self.assertEqual(len(solution_includes('  #  include "../../solutions/00-x/01_a.cu"\n')), 1)

    def test_dependencies_under(self):
        deps = "obj.o: #deps 2, deps mtime 1 (VALID)\n    /r/solutions/00/a.cu\n    /r/lessons/a.hpp\n"
        self.assertEqual(dependencies_under(deps, "/r/solutions"), ["/r/solutions/00/a.cu"])

    def test_gtest_list(self):
        text = "Running main()\nVectorAdd.\n  Works\n  Guards  # GetParam() = 1\nCoursePerf.\n  VectorAdd\n"
        self.assertEqual(parse_gtest_list(text), ["VectorAdd.Works", "VectorAdd.Guards", "CoursePerf.VectorAdd"])


if __name__ == "__main__":
    unittest.main()
