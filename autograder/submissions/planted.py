"""Planted submissions for the grader's own tests, generated from solutions/ and exercises/
at test time (so they never drift from the real files).

Each case: a base folder (solutions or exercises), and for some files a list of
(old, new) text replacements, each of which must match exactly once; and the expected
outcome per exercise: "full" (every point), "zero", or "partial" (some but not all).
Exercises not named in ``expect`` must keep the base's outcome ("full" for solutions,
"zero" for skeletons).

    python3 autograder/submissions/planted.py DEST   # writes DEST/<case>/00-gpu-vs-cpu/*.cu
"""
import os
import shutil
import sys

VA = "00-gpu-vs-cpu/01_vector_add.cu"
SX = "00-gpu-vs-cpu/02_saxpy.cu"
# The reference solution seen from a submission's file: the planted submission includes it.
# (Kept out of the #include line itself so that checks for such includes in this repository
# do not flag the test that plants one on purpose.)
SOLUTION_FILE_FROM_SUBMISSION = "../../" + "solutions/00-gpu-vs-cpu/01_vector_add.cu"
GOOD_BODY = "    c[i] = a[i] + b[i];\n"

CASES = {
    "solutions": {"base": "solutions", "patch": {}, "expect": {}},
    "skeletons": {"base": "exercises", "patch": {}, "expect": {}},
    # one exercise wrong: only vector_add loses points (c = a - b on every element)
    "wrong_one": {"base": "solutions", "patch": {VA: [(GOOD_BODY, "    c[i] = a[i] - b[i];\n")]},
                  "expect": {"vector_add": "zero"}},
    "compile_error": {"base": "solutions", "patch": {VA: [(GOOD_BODY, "    c[i] = a[i] + b[i]  // missing ;\n")]},
                      "expect": {"vector_add": "zero"}, "status": {"vector_add": "compile error"}},
    "segfault": {"base": "solutions",
                 "patch": {VA: [("  if (n == 0) return;\n", "  if (n == 0) return;\n  *(volatile int*)nullptr = 1;\n")]},
                 "expect": {"vector_add": "zero"}, "status": {"vector_add": "crashed"}},
    "infinite_loop": {"base": "solutions",
                      "patch": {VA: [("  if (n == 0) return;\n",
                                      "  if (n == 0) return;\n  for (volatile int spin = 0;; spin = spin + 0) {}\n")]},
                      "expect": {"vector_add": "zero"}, "status": {"vector_add": "timed out"}},
    "nan_output": {"base": "solutions", "patch": {VA: [(GOOD_BODY, "    c[i] = __int_as_float(0x7fc00000);\n")]},
                   "expect": {"vector_add": "zero"}},
    "zeros_output": {"base": "solutions", "patch": {VA: [(GOOD_BODY, "    c[i] = 0.0f;\n")]},
                     "expect": {"vector_add": "zero"}},
    # prints a complete fake GoogleTest success and ends the program before the real tests
    "fake_passed": {"base": "exercises",
                    "patch": {VA: [("#include \"vector_add.hpp\"\n",
                                    "#include \"vector_add.hpp\"\n#include <cstdio>\n#include <cstdlib>\n"
                                    "static int fake = [] {\n"
                                    "  std::printf(\"[==========] 4 tests from 1 test suite ran.\\n"
                                    "[  PASSED  ] 4 tests.\\n\");\n"
                                    "  std::exit(0);\n  return 0;\n}();\n")]},
                    "expect": {"vector_add": "zero"}},
    "exit0_in_launcher": {"base": "solutions",
                          "patch": {VA: [("#include \"vector_add.hpp\"\n", "#include \"vector_add.hpp\"\n#include <cstdlib>\n"),
                                         ("  if (n == 0) return;\n", "  if (n == 0) return;\n  std::exit(0);\n")]},
                          "expect": {"vector_add": "zero"}},
    "include_solution": {"base": "exercises",
                         "patch": {VA: [("#include \"vector_add.hpp\"\n",
                                         '#include "%s"\n#if 0\n' % SOLUTION_FILE_FROM_SUBMISSION),
                                        ("// launcher\n", "// launcher\n#endif\n")]},
                         "expect": {"vector_add": "zero"}, "status": {"vector_add": "forbidden include"}},
    # The solution reached through another file of the submission: saxpy's file includes it by
    # a relative path, and vector_add's file includes saxpy's. The grader's private copy of the
    # course has no solutions/ to reach, so vector_add's build fails (the rewrite follows project
    # headers into rewritten copies, and were one a solution, the rewrite's depfile would name it
    # for the forbidden-include check); saxpy's own include line is refused as such.
    "include_solution_through_another_file": {
        "base": "exercises",
        "patch": {SX: [("#include \"saxpy.hpp\"\n", '#include "saxpy.hpp"\n#include "%s"\n' % SOLUTION_FILE_FROM_SUBMISSION)],
                  VA: [("#include \"vector_add.hpp\"\n", '#include "02_saxpy.cu"\n#if 0\n'),
                       ("// launcher\n", "// launcher\n#endif\n")]},
        "expect": {"vector_add": "zero", "saxpy": "zero"},
        "status": {"saxpy": "forbidden include"}},
    "forbidden_library": {"base": "solutions",
                          "patch": {VA: [("#include \"vector_add.hpp\"\n",
                                          "#include \"vector_add.hpp\"\n#include <cublas_v2.h>\n"),
                                         ("  if (n == 0) return;\n",
                                          "  if (n == 0) return;\n  { cublasHandle_t h; cublasCreate(&h); cublasDestroy(h); }\n")]},
                          "expect": {"vector_add": "zero"}, "status": {"vector_add": "forbidden call"}},
}


def make_case(root: str, name: str, dest: str) -> str:
    case = CASES[name]
    out = os.path.join(dest, name)
    shutil.copytree(os.path.join(root, case["base"]), out)
    for rel, edits in case["patch"].items():
        path = os.path.join(out, rel)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for old, new in edits:
            if text.count(old) != 1:
                raise ValueError("planted case %s: %r occurs %d times in %s (the base file changed; update "
                                 "autograder/submissions/planted.py)" % (name, old, text.count(old), rel))
            text = text.replace(old, new)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    return out


def expected(name: str, exercise: str) -> str:
    case = CASES[name]
    default = "full" if case["base"] == "solutions" else "zero"
    return case["expect"].get(exercise, default)


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    course_root = os.path.dirname(os.path.dirname(here))
    for case_name in CASES:
        print(make_case(course_root, case_name, sys.argv[1]))
