"""The file the grader builds: the submission's regions in the file as it was handed out."""
import glob
import os
import unittest

import support
from course.regions import RegionError, graded_text, grading_notes, parse, region_problems

HANDED_OUT = """#include "vector_add.hpp"

__global__ void vector_add_kernel(const float* a, const float* b, float* c, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  // BEGIN YOUR CODE
  // TODO(student): c[i] = a[i] + b[i] for i < n (about 1 line)
  // END YOUR CODE
}

void launch_vector_add(const float* a, const float* b, float* c, int n) {
  if (n == 0) return;
  // BEGIN YOUR CODE
  const int blocks = 0;
  // END YOUR CODE
  vector_add_kernel<<<blocks, 256>>>(a, b, c, n);
}
"""


def solved(first="  if (i < n) c[i] = a[i] + b[i];\n", second="  const int blocks = (n + 255) / 256;\n",
           around=lambda text: text):
    """HANDED_OUT with its two regions filled in, and `around` applied to the code outside them."""
    parts = HANDED_OUT.split("  // TODO(student): c[i] = a[i] + b[i] for i < n (about 1 line)\n")
    text = parts[0] + first + parts[1]
    text = text.replace("  const int blocks = 0;\n", second)
    return around(text)


class ParsingTheRegions(unittest.TestCase):
    def test_regions_and_the_code_around_them(self):
        f = parse(solved())
        self.assertEqual([r.text for r in f.regions],
                         ["  if (i < n) c[i] = a[i] + b[i];\n", "  const int blocks = (n + 255) / 256;\n"])
        self.assertEqual([r.first_line for r in f.regions], [6, 13])
        self.assertEqual([r.end_line for r in f.regions], [7, 14])
        self.assertEqual(len(f.given), 3)
        self.assertTrue(f.given[0].endswith("// BEGIN YOUR CODE\n"))
        self.assertTrue(f.given[1].startswith("  // END YOUR CODE\n"))

    def test_markers_out_of_order_are_refused(self):
        with self.assertRaisesRegex(RegionError, "line 2: END YOUR CODE without a BEGIN"):
            parse("int x;\n// END YOUR CODE\n")
        with self.assertRaisesRegex(RegionError, "line 1: BEGIN YOUR CODE without an END"):
            parse("// BEGIN YOUR CODE\nint x;\n")
        with self.assertRaisesRegex(RegionError, "a second BEGIN YOUR CODE before the END of the one at line 1"):
            parse("// BEGIN YOUR CODE\n// BEGIN YOUR CODE\n// END YOUR CODE\n")

    def test_a_marker_is_a_whole_line(self):
        # Text that mentions a marker inside code or a longer comment is not one.
        f = parse('  const char* s = "// BEGIN YOUR CODE";\n  // BEGIN YOUR CODE here\n')
        self.assertEqual(f.regions, [])


class ARegionStandsOnItsOwn(unittest.TestCase):
    def ok(self, text):
        why, _ = region_problems(text)
        self.assertIsNone(why, text)

    def refused(self, text, because):
        why, _ = region_problems(text)
        self.assertIsNotNone(why, text)
        self.assertIn(because, why)

    def test_ordinary_code_does(self):
        self.ok("  for (int i = 0; i < n; ++i) { c[i] = a[i] + b[i]; }\n")
        self.ok("  const char* s = \"}{ /* not a comment\";  // a comment with } and /*\n")
        self.ok("  const char c = '}';  const int big = 1'000'000;  double e = 1e-3;\n")
        self.ok("  auto raw = R\"x(a ) \" } {)x\";\n")
        self.ok("  /* a comment\n     over lines } */ int k = 0;\n")
        self.ok("#pragma unroll\n  for (int k = 0; k < 4; ++k) s += x[k];\n")
        self.ok("#if 1\n  int v = 0;\n#else\n  int v = 1;\n#endif\n")

    def test_what_would_swallow_the_given_code_after_it_does_not(self):
        self.refused("  x = 1; /* the rest\n", "opens a /* comment")
        self.refused("  s = \"open\n", "opens a string literal")
        self.refused("  auto r = R\"(open\n", "opens a raw string")
        self.refused("#if 0\n  x = 1;\n", "opens a #if")
        self.refused("#endif\n", "closes a #if")
        self.refused("  if (false) {\n", "opens a '{'")
        self.refused("  return; } void escaped() {\n", "closes a '}' that it did not open")
        self.refused("  f(a];\n", "closes a ']' that it did not open")
        # A continued last line would swallow the #undef the grader puts after a macro.
        self.refused("#define cudaStreamSynchronize(s) cudaSuccess \\\n", "ends with a backslash")
        self.refused("  x = 1; \\ \n", "ends with a backslash")
        # A pragma that reaches past the region; #pragma unroll is what kernels use.
        self.refused("#pragma clang attribute push (__attribute__((weak)), apply_to = function)\n",
                     "only #pragma unroll may appear")
        self.refused("#pragma STDC FP_CONTRACT ON\n", "#pragma STDC")
        # Digraphs: the compiler reads %: as #, <% %> as { }, <: :> as [ ]. Found by a red-team
        # run: `%:if 0` in one region and `%:endif` in the next swallowed the given launcher.
        self.refused("  c[i] = a[i] + b[i];\n%:if 0\n", "the digraph %:")
        self.refused("  %>\n  void escaped() <%\n", "the digraph %>")
        self.refused("  int v<:4:> = {};\n", "the digraph <:")
        self.ok("  std::vector<::std::size_t> sizes; int m = a % b; bool t = x ? y :z;\n")

    def test_macros_it_defines_are_named(self):
        why, defined = region_problems("#define SQUARE(x) ((x) * (x))\n#define N 4\n  y = SQUARE(N);\n")
        self.assertIsNone(why)
        self.assertEqual(defined, ["SQUARE", "N"])


class TheFileAsGraded(unittest.TestCase):
    def test_unchanged_code_around_the_regions_is_the_submission_byte_for_byte(self):
        text = solved()
        result = graded_text(text, HANDED_OUT)
        self.assertEqual(result.text, text)
        self.assertEqual(result.ignored, [])

    def test_changes_around_the_regions_are_not_graded(self):
        # The given launcher is changed to launch nothing, and the given kernel gains a line.
        tampered = solved(around=lambda t: t.replace("vector_add_kernel<<<blocks, 256>>>(a, b, c, n);",
                                                     "(void)blocks;").replace(
            "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n",
            "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i >= 0) return;\n"))
        result = graded_text(tampered, HANDED_OUT)
        self.assertIn("vector_add_kernel<<<blocks, 256>>>(a, b, c, n);", result.text)
        self.assertNotIn("(void)blocks;", result.text)
        self.assertNotIn("if (i >= 0) return;", result.text)
        self.assertIn("  if (i < n) c[i] = a[i] + b[i];\n", result.text)
        self.assertEqual(result.ignored, [5, 16])  # the first changed line of each part
        # Each region keeps the submission's line numbers, for the compiler's messages.
        self.assertIn("#line 7\n  if (i < n) c[i] = a[i] + b[i];\n#line 8\n  // END YOUR CODE\n", result.text)

    def test_headers_it_adds_are_kept(self):
        # Only an added #include: the submission is built as it is.
        text = solved(around=lambda t: t.replace('#include "vector_add.hpp"\n',
                                                 '#include "vector_add.hpp"\n#include <algorithm>\n'))
        self.assertEqual(graded_text(text, HANDED_OUT), graded_text(text, HANDED_OUT).__class__(text, []))
        # With other changes around the regions, the header still comes along, first.
        tampered = solved(around=lambda t: t.replace('#include "vector_add.hpp"\n',
                                                     '#include "vector_add.hpp"\n#include <cmath>\nint extra;\n'))
        result = graded_text(tampered, HANDED_OUT)
        self.assertTrue(result.text.startswith('#include <cmath>\n#line 1\n#include "vector_add.hpp"\n'), result.text)
        self.assertNotIn("int extra;", result.text)
        self.assertEqual(result.ignored, [3])

    def test_a_macro_of_a_region_ends_with_it(self):
        text = solved(second="#define cudaStreamSynchronize(s) cudaSuccess\n  const int blocks = (n + 255) / 256;\n")
        result = graded_text(text, HANDED_OUT)
        self.assertIn("#undef cudaStreamSynchronize\n#line 15\n  // END YOUR CODE\n", result.text)

    def test_markers_that_do_not_match_the_exercise_are_refused(self):
        merged = solved().replace("  // END YOUR CODE\n}\n\nvoid launch", "}\n\nvoid launch", 1).replace(
            "  if (n == 0) return;\n  // BEGIN YOUR CODE\n", "  if (n == 0) return;\n", 1)
        with self.assertRaisesRegex(RegionError, "1 BEGIN/END YOUR CODE regions where the exercise has 2"):
            graded_text(merged, HANDED_OUT)

    def test_a_region_that_swallows_given_code_is_refused(self):
        text = solved(first="  if (i < n) c[i] = a[i] + b[i];\n#if 0\n", second="#endif\n  const int blocks = 1;\n")
        with self.assertRaisesRegex(RegionError, "the region at line 6 does not stand on its own: it opens a #if"):
            graded_text(text, HANDED_OUT)


class WhatAStudentIsToldBeforeHandingIn(unittest.TestCase):
    def test_nothing_for_a_file_graded_as_it_is(self):
        self.assertEqual(grading_notes(solved(), HANDED_OUT), [])
        self.assertEqual(grading_notes(solved(), None), [])

    def test_the_lines_left_out_and_the_regions_refused(self):
        tampered = solved(around=lambda t: t.replace("(a, b, c, n);\n}", "(a, b, c, n);\n  (void)0;\n}"))
        self.assertEqual(len(grading_notes(tampered, HANDED_OUT)), 1)
        self.assertIn("from line 16", grading_notes(tampered, HANDED_OUT)[0])
        broken = solved(first="  /* unfinished\n")
        for handed_out in (HANDED_OUT, None):  # the student edition has no handed-out file to compare
            notes = grading_notes(broken, handed_out)
            self.assertEqual(len(notes), 1)
            self.assertIn("opens a /* comment", notes[0])
            self.assertIn("would score this exercise 0", notes[0])


class TheCoursesOwnFiles(unittest.TestCase):
    def test_every_solution_is_graded_as_it_is_and_every_skeleton_too(self):
        skeletons = sorted(glob.glob(os.path.join(support.REPO_ROOT, "exercises", "*", "*.cu")))
        self.assertGreater(len(skeletons), 20)
        for skeleton in skeletons:
            solution = skeleton.replace(os.sep + "exercises" + os.sep, os.sep + "solutions" + os.sep)
            with open(skeleton) as f:
                handed_out = f.read()
            with open(solution) as f:
                reference = f.read()
            self.assertEqual(graded_text(reference, handed_out).text, reference, solution)
            self.assertEqual(graded_text(handed_out, handed_out).text, handed_out, skeleton)


if __name__ == "__main__":
    unittest.main()
