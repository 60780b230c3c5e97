"""Planted submissions for the grader's own tests, generated from solutions/ and exercises/
at test time (so they never drift from the real files).

Each case: a base folder (solutions or exercises), and for some files a list of
(old, new) text replacements, each of which must match exactly once; and the expected
outcome per exercise: "full" (every point), "zero", or "partial" (some but not all), and
optionally "performance": "zero" (no performance points). A case is graded on lesson 00
unless it names its "lesson".
Exercises not named in ``expect`` must keep the base's outcome ("full" for solutions,
"zero" for skeletons); only the exercises of the files a case changes are graded, unless it is in
WHOLE_LESSON. A case may set environment variables for its grading in "env" (a
short build deadline, so that a case about the deadline ends quickly), a time budget for the
whole grading in "time_budget", and a shorter time limit per test program than the suite's in
"timeout" (a case that hangs on purpose, so that the suite does not wait the full limit).

    python3 autograder/submissions/planted.py DEST   # writes DEST/<case>/00-gpu-vs-cpu/*.cu
"""
import os
import shutil
import sys
import textwrap

VA = "00-gpu-vs-cpu/01_vector_add.cu"
SX = "00-gpu-vs-cpu/02_saxpy.cu"
RG = "00-gpu-vs-cpu/03_rgb_to_gray.cu"
EC = "00-gpu-vs-cpu/04_error_checking.cu"
PF = "02-roofline/03_peak_flops.cu"
TI = "02-roofline/04_tunable_intensity.cu"
FU = "02-roofline/05_fusion.cu"
DP = "03-matmul-reuse/01_dot_product.cu"
NM = "03-matmul-reuse/02_naive_matmul.cu"
TM = "03-matmul-reuse/03_tiled_matmul.cu"
RP = "01-serial-dependency/03_rnn_persistent.cu"
AT = "01-serial-dependency/04_attention.cu"
LS = "01-serial-dependency/05_linear_scan.cu"
DPS = "05-parallelism-nvlink/03_data_parallel_step.cu"
RA = "05-parallelism-nvlink/02_ring_allreduce.cu"
PP = "05-parallelism-nvlink/05_pipeline_schedule.cu"
PB = "05-parallelism-nvlink/01_peer_bandwidth.cu"
TP = "05-parallelism-nvlink/04_tensor_parallel_mlp.cu"
PC = "04-data-loading/01_pinned_copy.cu"
OV = "04-data-loading/03_overlap.cu"
PR = "04-data-loading/02_prefetch_ring.cu"
# The reference solution seen from a submission's file: the planted submission includes it.
# (Kept out of the #include line itself so that checks for such includes in this repository
# do not flag the test that plants one on purpose.)
SOLUTION_FILE_FROM_SUBMISSION = "../../" + "solutions/00-gpu-vs-cpu/01_vector_add.cu"
GOOD_BODY = "    c[i] = a[i] + b[i];\n"
INC_VA = "#include \"vector_add.hpp\"\n"
PLACEHOLDER_VA = "  const int blocks = 0;  // placeholder: a 0-block grid is rejected at launch\n"
# The fused kernel's loop run by a quarter of the threads, each walking 4 neighbouring elements
# (a quarter of each sector used); the outer loop's closing brace is the base file's.
FU_QUARTER_THREADS = ("  const long long tid = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;\n"
                      "  if (tid % 4 != 0) return;\n"
                      "  for (long long base = tid; base < n; base += stride) {\n"
                      "    for (long long i = base; i < base + 4 && i < n; ++i) {\n"
                      "      float v = x[i];\n"
                      "      const float r_i = reads_r ? r[i] : 0.0f;\n"
                      "      for (int s = 0; s < chain.count; ++s) v = apply_step(chain.steps[s], v, r_i);\n"
                      "      y[i] = v;\n"
                      "    }\n")

# tensor_parallel_forward's shards gathered through the host and the whole MLP computed on rank 0.
TP_HOST_GATHER = ("  const int I = shape.inputs, H = shape.hidden, O = shape.outputs;\n"
                  "  std::vector<float> W1(static_cast<std::size_t>(H) * I), B1(H), W2(static_cast<std::size_t>(O) * H);\n"
                  "  for (int r = 0; r < n; ++r) {\n"
                  "    const course::Part p = course::part_of(H, n, r);\n"
                  "    const std::size_t hs = p.size();\n"
                  "    const std::vector<float> a = w1.download(r), bb = b1.download(r), c = w2.download(r);\n"
                  "    for (std::size_t k = 0; k < hs * I; ++k) W1[p.begin * I + k] = a[k];\n"
                  "    for (std::size_t k = 0; k < hs; ++k) B1[p.begin + k] = bb[k];\n"
                  "    for (int o = 0; o < O; ++o)\n"
                  "      for (std::size_t j = 0; j < hs; ++j) W2[static_cast<std::size_t>(o) * H + p.begin + j] = c[o * hs + j];\n"
                  "  }\n"
                  "  course::SymmetricBuffer<float> fw1(group, W1.size()), fb1(group, B1.size()), fw2(group, W2.size()), fh(group, static_cast<std::size_t>(batch) * H);\n"
                  "  fw1.upload(0, W1);\n"
                  "  fb1.upload(0, B1);\n"
                  "  fw2.upload(0, W2);\n"
                  "  linear(group, 0, x.on(0), fw1.on(0), fb1.on(0), fh.on(0), batch, I, H, true);\n"
                  "  linear(group, 0, fh.on(0), fw2.on(0), nullptr, y.on(0), batch, H, O, false);\n"
                  "  for (int r = 1; r < n; ++r) {\n"
                  "    course::DeviceGuard guard(group.device(r));\n"
                  "    CUDA_CHECK(cudaMemsetAsync(y.on(r), 0, out_floats * sizeof(float), group.stream(r)));\n"
                  "  }\n"
                  "  chain_allreduce(group, y, out_floats, scratch);\n"
                  "  for (int r = 0; r < n; ++r) add_bias(group, r, y.on(r), b2.on(r), batch, O);\n"
                  "  group.synchronize();\n")

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
    # A crash in one test only (n == 1): the judge outlives the submission's process, so the
    # crash costs that test and the others still count; the status still says it crashed.
    "segfault_in_one_test": {"base": "solutions",
                             "patch": {VA: [("  if (n == 0) return;\n",
                                             "  if (n == 0) return;\n  if (n == 1) *(volatile int*)nullptr = 1;\n")]},
                             "expect": {"vector_add": "partial"}, "status": {"vector_add": "crashed"},
                             "performance": {"vector_add": "zero"}},
    # Writes a reply of its own into the judge's channel (the worker's descriptor 3, reached
    # through stdout's descriptor number, which names nothing the allow-list refuses): it cannot
    # know the nonce of the request, so the judge refuses the reply and fails the tests.
    "write_into_the_judges_channel": {
        "base": "solutions",
        "patch": {VA: [(INC_VA, INC_VA + "#include <cstdio>\n"),
                       ("  if (n == 0) return;\n",
                        "  if (n == 0) return;\n  stdout->_fileno = 3;\n"
                        "  static const unsigned char reply[24] = {0};\n"
                        "  std::fwrite(reply, 1, sizeof reply, stdout);\n  std::fflush(stdout);\n")]},
        "expect": {"vector_add": "zero"}, "status": {"vector_add": "error"}},
    "infinite_loop": {"base": "solutions", "timeout": 10,
                      "patch": {VA: [("  if (n == 0) return;\n",
                                      "  if (n == 0) return;\n  for (volatile int spin = 0;; spin = spin + 0) {}\n")]},
                      "expect": {"vector_add": "zero"}, "status": {"vector_add": "timed out"}},
    "nan_output": {"base": "solutions", "patch": {VA: [(GOOD_BODY, "    c[i] = __int_as_float(0x7fc00000);\n")]},
                   "expect": {"vector_add": "zero"}},
    "zeros_output": {"base": "solutions", "patch": {VA: [(GOOD_BODY, "    c[i] = 0.0f;\n")]},
                     "expect": {"vector_add": "zero"}},
    # prints a complete fake GoogleTest success from the launcher (printed output counts for nothing)
    "fake_passed": {"base": "exercises",
                    "patch": {VA: [(INC_VA, INC_VA + "#include <cstdio>\n"),
                                   (PLACEHOLDER_VA, PLACEHOLDER_VA +
                                    "  std::printf(\"[==========] 4 tests from 1 test suite ran.\\n"
                                    "[  PASSED  ] 4 tests.\\n\");\n  std::fflush(stdout);\n")]},
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
    # The sum computed by the launcher's host code on the cudaMalloc buffers, no kernel at all:
    # a segmentation fault on a GPU, so on the simulator too.
    "computed_on_the_host": {"base": "exercises",
                             "patch": {VA: [(PLACEHOLDER_VA, "  for (int i = 0; i < n; ++i) c[i] = a[i] + b[i];\n  return;\n"
                                             + PLACEHOLDER_VA)]},
                             "expect": {"vector_add": "zero"}, "status": {"vector_add": "crashed"}},
    # ---- attacks on the grader itself (issue 14): each is refused before the program runs ----
    # GoogleTest's own fake reporter swallows every failed assertion of the tests.
    "fake_test_reporter": {"base": "exercises",
                           "patch": {VA: [(INC_VA, INC_VA + "#include <gtest/gtest-spi.h>\n"),
                                          (PLACEHOLDER_VA, PLACEHOLDER_VA +
                                           "  static ::testing::TestPartResultArray swallowed;\n"
                                           "  static ::testing::ScopedFakeTestPartResultReporter fake(\n"
                                           "      ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ALL_THREADS, "
                                           "&swallowed);\n")]},
                           "expect": {"vector_add": "zero"}, "status": {"vector_add": "forbidden call"}},
    # A constructor in a section that sorts before the listener's, to run first: from inside a
    # function, as a static local placed in that section.
    "early_constructor_section": {"base": "exercises",
                                  "patch": {VA: [(INC_VA, INC_VA + "#include <cstdio>\n"),
                                                 (PLACEHOLDER_VA, PLACEHOLDER_VA +
                                                  "  __attribute__((section(\".init_array.a.50\"), used)) "
                                                  "static void (*early_ptr)() = +[] { std::printf(\"first\\n\"); };\n")]},
                                  "expect": {"vector_add": "zero"}, "status": {"vector_add": "forbidden call"}},
    # A definition in the harness's namespace, made by assembly inside a function (a region cannot
    # reach namespace scope, so no C++ definition can).
    "harness_override": {"base": "exercises",
                         "patch": {VA: [(PLACEHOLDER_VA, PLACEHOLDER_VA +
                                         "  __asm__(\".pushsection .text\\n.globl _ZN6course4test6detail8acceptedEv\\n"
                                         "_ZN6course4test6detail8acceptedEv:\\nret\\n.popsection\");\n")]},
                         "expect": {"vector_add": "zero"}, "status": {"vector_add": "forbidden call"}},
    # The reference build's rewritten copy of the solution, by its absolute path, with the rest of
    # the file in #if 0: the #if is outside the regions, so the given code stays and clashes with
    # the included copy; the compiler's messages about the copy are not shown.
    "include_reference_build": {"base": "exercises",
                                "patch": {VA: [(INC_VA, '#include "{REFERENCE_BUILD}/lessons/00-gpu-vs-cpu/'
                                                'cudasim_rewritten/submission_00_vector_add/01_vector_add.cu.cpp"\n'
                                                '#if 0\n'), ("  CUDA_CHECK_LAUNCH();\n}\n",
                                                              "  CUDA_CHECK_LAUNCH();\n}\n#endif\n")]},
                                "expect": {"vector_add": "zero"}, "status": {"vector_add": "compile error"}},
    # The same file included with a clash, so that the compiler quotes its lines in an error.
    "quote_the_reference_in_an_error": {
        "base": "exercises",
        "patch": {VA: [(INC_VA, INC_VA + '#include "{REFERENCE_BUILD}/lessons/00-gpu-vs-cpu/'
                                'cudasim_rewritten/submission_00_vector_add/01_vector_add.cu.cpp"\n')]},
        "expect": {"vector_add": "zero"}, "status": {"vector_add": "compile error"}},
    # Kill the grader; escape the kill with a raw fork and a new session; read the answers.
    "kill_the_grader": {"base": "exercises",
                        "patch": {VA: [(INC_VA, INC_VA + "#include <signal.h>\n#include <unistd.h>\n"),
                                       (PLACEHOLDER_VA, PLACEHOLDER_VA + "  kill(getppid(), SIGKILL);\n")]},
                        "expect": {"vector_add": "zero"}, "status": {"vector_add": "forbidden call"}},
    "fork_and_setsid": {"base": "exercises",
                        "patch": {VA: [(INC_VA, INC_VA + "#include <sys/syscall.h>\n#include <unistd.h>\n"),
                                       (PLACEHOLDER_VA, PLACEHOLDER_VA +
                                        "  if (syscall(SYS_fork) == 0) { setsid(); for (;;) pause(); }\n")]},
                        "expect": {"vector_add": "zero"}, "status": {"vector_add": "forbidden call"}},
    "read_the_solutions": {"base": "exercises",
                           "patch": {VA: [(INC_VA, INC_VA + "#include <cstdio>\n"),
                                          (PLACEHOLDER_VA, PLACEHOLDER_VA +
                                           "  if (FILE* f = std::fopen(\"../../solutions/00-gpu-vs-cpu/01_vector_add.cu\", "
                                           "\"r\")) { char b[256]; while (std::fgets(b, sizeof b, f)) "
                                           "std::printf(\"%s\", b); std::fclose(f); }\n")]},
                           "expect": {"vector_add": "zero"}, "status": {"vector_add": "forbidden call"}},
    # A system call from inline assembly (no library symbol to see): getppid, then kill.
    "inline_asm_syscall": {"base": "exercises",
                           "patch": {VA: [(PLACEHOLDER_VA, PLACEHOLDER_VA +
                                           "  { long r; __asm__ volatile(\"syscall\" : \"=a\"(r) : \"a\"(110L) : "
                                           "\"rcx\", \"r11\", \"memory\"); (void)r; }\n")]},
                           "expect": {"vector_add": "zero"}, "status": {"vector_add": "forbidden call"}},
    # A file pulled into the object at assembly time (.incbin), the keyword built by token
    # pasting so that no plain text search of the source finds it.
    # Found by a red-team run (2026-11-26). Digraphs: `%:if 0` ends the kernel's region and
    # `%:endif` in the launcher's swallows the given code between them (the region rules read
    # only #, {, }, [ and ]); each region must now spell them plainly.
    "digraphs_swallow_the_given_code": {
        "base": "solutions",
        "patch": {VA: [("  // END YOUR CODE\n}\n", "%:if 0\n  // END YOUR CODE\n}\n"),
                       ("  // BEGIN YOUR CODE\n  // TODO(student): return early",
                        "  // BEGIN YOUR CODE\n%:endif\n  // TODO(student): return early")]},
        "expect": {"vector_add": "zero"}, "status": {"vector_add": "regions changed"}},
    # The simulator's own counters, reached through its sources: forbidden both as an include
    # outside the public headers and as an import the public headers never make.
    "include_the_simulators_internals": {
        "base": "solutions",
        "patch": {VA: [(INC_VA, INC_VA + "#include <cudasim/../../src/internal.hpp>\n"),
                       ("  if (n == 0) return;\n", "  if (n == 0) return;\n  cudasim::detail::clear_sticky_error();\n")]},
        "expect": {"vector_add": "zero"}, "status": {"vector_add": "forbidden call"}},
    # Adds without a counted load or store: the compiler's atomic builtin, and memcpy reached
    # through its address from the launcher (the rewrite counts memcpy only in device code).
    "add_by_a_compiler_atomic": {
        "base": "solutions",
        "patch": {VA: [(GOOD_BODY, "    float sum = a[i] + b[i];\n    __atomic_store_n(reinterpret_cast<unsigned*>(c + i), "
                                   "__float_as_uint(sum), __ATOMIC_RELAXED);\n")]},
        "expect": {"vector_add": "zero"}, "status": {"vector_add": "forbidden call"}},
    "copy_through_a_pointer_to_memcpy": {
        "base": "solutions",
        "patch": {VA: [("  if (n == 0) return;\n",
                        "  if (n == 0) return;\n  void* (*volatile copy)(void*, const void*, std::size_t) = memcpy;\n"
                        "  (void)copy;\n")]},
        "expect": {"vector_add": "zero"}, "status": {"vector_add": "forbidden call"}},
    # Builtins that move memory as moves no hook sees: the fortified memcpy (and memcpy_inline)
    # copied 64 bytes a call with nothing counted and nothing checked (2026-11-28).
    "memory_moved_by_a_builtin_the_counters_do_not_see": {
        "base": "solutions",
        "patch": {VA: [(GOOD_BODY,
                        "    const float sum[1] = {a[i] + b[i]};\n"
                        "    __builtin___memcpy_chk(c + i, sum, sizeof sum, sizeof sum);\n")]},
        "expect": {"vector_add": "zero"}, "status": {"vector_add": "forbidden call"}},
    # Placement new builds an object in device memory without a cast: a 64-byte std::array stored
    # so was not counted (2026-11-28); here each thread places its sum through one.
    "placement_new_stores_past_the_counters": {
        "base": "solutions",
        "patch": {VA: [(INC_VA, INC_VA + "#include <array>\n#include <new>\n"),
                       (GOOD_BODY, "    new (c + i) std::array<float, 1>{{a[i] + b[i]}};\n")]},
        "expect": {"vector_add": "zero"}, "status": {"vector_add": "forbidden call"}},
    # SSE2's masked store (on by default on x86-64) writes through an instruction no hook sees.
    "masked_store_through_a_cpu_intrinsic": {
        "base": "solutions",
        "patch": {VA: [(INC_VA, INC_VA + "#include <emmintrin.h>\n"),
                       (GOOD_BODY,
                        "    _mm_maskmoveu_si128(_mm_castps_si128(_mm_set_ss(a[i] + b[i])),\n"
                        "                        _mm_setr_epi8(-128, -128, -128, -128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),\n"
                        "                        reinterpret_cast<char*>(c + i));\n")]},
        "expect": {"vector_add": "zero"}, "status": {"vector_add": "forbidden call"}},
    # A whole struct read through a cast pointer: the compiler copies up to 128 bytes inline,
    # past the counters (a red-team serial scan hid its tile walk so, 25/25).
    "copy_whole_structs_through_a_cast": {
        "base": "solutions",
        "patch": {VA: [(GOOD_BODY, "    struct One { float v[1]; };\n"
                                   "    *reinterpret_cast<One*>(c + i) = One{{a[i] + b[i]}};\n")]},
        "expect": {"vector_add": "zero"}, "status": {"vector_add": "forbidden call"}},
    # From a third red-team run (2026-11-26): code the counters never see. One thread does the
    # whole array in a helper with the instrumentation switched off (saxpy 10/10 so) ...
    "one_thread_in_an_uninstrumented_helper": {
        "base": "solutions",
        "patch": {SX: [("    y[i] = alpha * x[i] + y[i];\n  }\n",
                        "    (void)i;\n  }\n"
                        "  struct Serial {\n"
                        "    __attribute__((noinline, no_sanitize(\"coverage\"))) static void run(int n, float a, "
                        "const float* x, float* y) {\n"
                        "      for (int j = 0; j < n; ++j) y[j] = a * x[j] + y[j];\n"
                        "    }\n"
                        "  };\n"
                        "  if (blockIdx.x == 0 && threadIdx.x == 0) Serial::run(n, alpha, x, y);\n")]},
        "expect": {"saxpy": "zero"}, "status": {"saxpy": "forbidden call"}},
    # ... and a standard algorithm kept out of line through a pointer (the ignorelist leaves its
    # instantiation uncounted: a serial dot product scored 15/15 so).
    "standard_algorithm_through_a_pointer": {
        "base": "solutions",
        "patch": {VA: [(INC_VA, INC_VA + "#include <algorithm>\n#include <functional>\n"),
                       (GOOD_BODY, "    float* (*volatile add)(const float*, const float*, const float*, float*, "
                                   "std::plus<float>) = std::transform<const float*, const float*, float*, "
                                   "std::plus<float>>;\n"
                                   "    if (i == 0) add(a, a + n, b, c, std::plus<float>());\n")]},
        "expect": {"vector_add": "zero"}, "status": {"vector_add": "forbidden call"}},
    # A standard algorithm called directly but kept out of line by a statement attribute (clang
    # 15 and later honour it; clang 14 ignores it): its loads and stores would go uncounted.
    "standard_algorithm_kept_out_of_line": {
        "base": "solutions",
        "patch": {VA: [(INC_VA, INC_VA + "#include <algorithm>\n#include <functional>\n"),
                       (GOOD_BODY, "    if (i == 0) {\n"
                                   "      [[clang::noinline]] std::transform(a, a + n, b, c, std::plus<float>());\n"
                                   "    }\n")]},
        "expect": {"vector_add": "zero"}, "status": {"vector_add": "forbidden call"}},
    # Inline PTX in a kernel, which the simulator would now run: still inline assembly.
    "inline_ptx_in_the_kernel": {
        "base": "solutions",
        "patch": {VA: [(GOOD_BODY, '    asm("add.f32 %0, %1, %2;" : "=f"(c[i]) : "f"(a[i]), "f"(b[i]));\n')]},
        "expect": {"vector_add": "zero"}, "status": {"vector_add": "forbidden call"}},
    "incbin_through_a_macro": {"base": "exercises",
                               "patch": {VA: [(PLACEHOLDER_VA, PLACEHOLDER_VA + "#define GLUE(a, b) a##b\n"
                                               "  GLUE(__as, m__)(\".pushsection .rodata\\n.incbin \\\"/etc/hostname\\\"\\n"
                                               ".popsection\");\n")]},
                               "expect": {"vector_add": "zero"}, "status": {"vector_add": "forbidden call"}},
    # A function of namespace std with a body of the submission's choosing (the linker keeps
    # one copy of a weak definition, possibly this one, for the program too), made by assembly.
    "reopen_namespace_std": {"base": "exercises",
                             "patch": {VA: [(PLACEHOLDER_VA, PLACEHOLDER_VA +
                                             "  __asm__(\".pushsection .text\\n.weak _ZSt10all_finitePKfi\\n"
                                             "_ZSt10all_finitePKfi:\\nmov $1, %eax\\nret\\n.popsection\");\n")]},
                             "expect": {"vector_add": "zero"}, "status": {"vector_add": "forbidden call"}},
    # The simulator's counting hook replaced (by assembly): every load and store uncounted.
    "replace_counting_hook": {"base": "solutions",
                              "patch": {VA: [("  if (n == 0) return;\n", "  if (n == 0) return;\n"
                                              "  __asm__(\".pushsection .text\\n.globl __sanitizer_cov_load4\\n"
                                              "__sanitizer_cov_load4:\\nret\\n.globl __sanitizer_cov_store4\\n"
                                              "__sanitizer_cov_store4:\\nret\\n.popsection\");\n")]},
                              "expect": {"vector_add": "zero"}, "status": {"vector_add": "forbidden call"}},
    # Behaving differently when the grader measures performance.
    "read_the_environment": {"base": "solutions",
                             "patch": {VA: [(INC_VA, INC_VA + "#include <cstdlib>\n"),
                                            ("  if (n == 0) return;\n",
                                             "  if (n == 0) return;\n  if (std::getenv(\"COURSE_PERF\")) return;\n")]},
                             "expect": {"vector_add": "zero"}, "status": {"vector_add": "forbidden call"}},
    # Code run before main by a global object's constructor, written outside the regions: the
    # grader builds the regions into the file as handed out, so it is simply not there.
    "global_constructor": {"base": "solutions",
                           "patch": {VA: [(INC_VA, INC_VA + "#include <cstdio>\n"
                                           "static int announced = std::printf(\"loaded\\n\");\n")]},
                           "expect": {}},
    "forbidden_library": {"base": "solutions",
                          "patch": {VA: [("#include \"vector_add.hpp\"\n",
                                          "#include \"vector_add.hpp\"\n#include <cublas_v2.h>\n"),
                                         ("  if (n == 0) return;\n",
                                          "  if (n == 0) return;\n  { cublasHandle_t h; cublasCreate(&h); cublasDestroy(h); }\n")]},
                          "expect": {"vector_add": "zero"}, "status": {"vector_add": "forbidden call"}},
    # ---- wrong approaches: the right numbers the way the lesson says not to (issue 15) ------------
    # one thread walks the whole array: correct, but the GPU is idle
    "one_thread_vector_add": {"base": "solutions",
                              "patch": {VA: [("  if (i < n) {\n    c[i] = a[i] + b[i];\n  }\n",
                                              "  if (i == 0)\n    for (long long j = 0; j < n; ++j) c[j] = a[j] + b[j];\n")]},
                              "expect": {"vector_add": "partial"}, "performance": {"vector_add": "zero"}},
    # each thread takes a contiguous chunk: correct, but a warp's accesses are 32 chunks apart
    "chunked_saxpy": {"base": "solutions",
                      "patch": {SX: [("  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;\n"
                                      "       i += stride) {\n",
                                      "  const long long chunk = (n + stride - 1) / stride;\n"
                                      "  const long long first = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) * chunk;\n"
                                      "  for (long long i = first; i < n && i < first + chunk; ++i) {\n")]},
                      "expect": {"saxpy": "partial"}},
    # the closed form a^T v + b (1 - a^T) / (1 - a) instead of the chain of FMAs
    "closed_form_peak_flops": {
        "base": "solutions", "lesson": "02-roofline",
        "patch": {PF: [("#pragma unroll 4\n  for (int t = 0; t < iterations; ++t) {\n#pragma unroll\n"
                        "    for (int j = 0; j < kFmaChains; ++j) v[j] = fmaf(v[j], a, b);\n  }\n",
                        "  const float at = powf(a, static_cast<float>(iterations));\n"
                        "  for (int j = 0; j < kFmaChains; ++j)\n"
                        "    v[j] = at * v[j] + (a == 1.0f ? b * iterations : b * (1.0f - at) / (1.0f - a));\n")]},
        "expect": {"peak_flops": "partial"}},
    "closed_form_tunable_intensity": {
        "base": "solutions", "lesson": "02-roofline",
        "patch": {TI: [("#pragma unroll 8\n    for (int j = 0; j < k; ++j) v = fmaf(v, a, b);\n",
                        "    const float ak = powf(a, static_cast<float>(k));\n"
                        "    v = ak * v + (a == 1.0f ? b * k : b * (1.0f - ak) / (1.0f - a));\n")]},
        "expect": {"tunable_intensity": "partial"}},
    # one kernel, but every step goes through memory: y is stored and loaded again at each step
    "fused_through_memory": {
        "base": "solutions", "lesson": "02-roofline",
        "patch": {FU: [("    for (int s = 0; s < chain.count; ++s) v = apply_step(chain.steps[s], v, r_i);\n",
                        "    y[i] = v;\n"
                        "    for (int s = 0; s < chain.count; ++s) {\n"
                        "      y[i] = apply_step(chain.steps[s], y[i], reads_r ? r[i] : 0.0f);\n"
                        "    }\n"
                        "    v = y[i];\n")]},
        "expect": {"fusion": "partial"}, "performance": {"fusion": "zero"}},
    # every thread adds its partial sum into the result with its own atomic
    "atomic_per_thread_dot_product": {
        "base": "solutions", "lesson": "03-matmul-reuse",
        "patch": {DP: [("  partial[tid] = sum;\n  __syncthreads();\n",
                        "  atomicAdd(result, sum);\n  return;\n  partial[tid] = sum;\n  __syncthreads();\n")]},
        "expect": {"dot_product": "partial"}, "performance": {"dot_product": "zero"}},
    # the right streams, events and slots, but a wait for each step before the next batch: the
    # weights are right and nothing overlaps (judged on the simulator's modelled timeline)
    "serialised_overlap": {
        "base": "solutions", "lesson": "04-data-loading",
        "patch": {OV: [("    CUDA_CHECK(cudaEventRecord(p.consumed[s], p.compute_stream));\n    // END YOUR CODE\n",
                        "    CUDA_CHECK(cudaEventRecord(p.consumed[s], p.compute_stream));\n"
                        "    CUDA_CHECK(cudaStreamSynchronize(p.compute_stream));\n    // END YOUR CODE\n")]},
        "expect": {"overlap": "partial"}},
    # the step reads the pinned host slot directly (zero-copy) and a token copy keeps the copy
    # count: right weights, and the link's time hidden from the model
    "zero_copy_overlap": {
        "base": "solutions", "lesson": "04-data-loading",
        "patch": {OV: [("    if (b >= depth) CUDA_CHECK(cudaEventSynchronize(p.copied[s]));\n",
                        "    if (b >= depth) CUDA_CHECK(cudaEventSynchronize(p.consumed[s]));\n"),
                       ("    CUDA_CHECK(cudaMemcpyAsync(p.device[s], p.host[s], bytes, cudaMemcpyHostToDevice, p.copy_stream));\n",
                        "    CUDA_CHECK(cudaMemcpyAsync(p.device[s], p.host[s], 4, cudaMemcpyHostToDevice, p.copy_stream));\n"),
                       ("    launch_train_step(d_weights, p.device[s], config.rows, config.features, config.repeats, p.compute_stream);\n",
                        "    launch_train_step(d_weights, p.host[s], config.rows, config.features, config.repeats, p.compute_stream);\n")]},
        "expect": {"overlap": "partial"}},
    # Finds GoogleTest's UnitTest::AddTestPartResult in its own program's symbol table and turns
    # its first instruction into a return, through /proc/self/mem: every failure vanishes. It
    # names nothing the allow-list refuses (the ring may read files), from inside next(). In one
    # process with the tests (1ba4b45) the skeleton with this scored 25/25; the worker has no
    # GoogleTest to patch.
    "patch_the_judge_through_proc_self_mem": {
        "base": "exercises", "lesson": "04-data-loading",
        "patch": {PR: [("#include \"prefetch_ring.hpp\"\n",
                        "#include \"prefetch_ring.hpp\"\n#include <elf.h>\n#include <cstdio>\n#include <cstring>\n"),
                       ("  // TODO(student): the next batch in order, once it is Ready; rethrow its read error; false when\n",
                        "  // TODO(student): the next batch in order, once it is Ready; rethrow its read error; false when\n"
                        "  {  // an attack, not a ring\n"
                        "    std::FILE* exe = std::fopen(\"/proc/self/exe\", \"rb\");\n"
                        "    Elf64_Ehdr eh{};\n"
                        "    std::vector<Elf64_Shdr> sections;\n"
                        "    if (exe && std::fread(&eh, sizeof eh, 1, exe) == 1) {\n"
                        "      sections.resize(eh.e_shnum);\n"
                        "      std::fseek(exe, static_cast<long>(eh.e_shoff), SEEK_SET);\n"
                        "      if (std::fread(sections.data(), sizeof(Elf64_Shdr), sections.size(), exe) != sections.size()) sections.clear();\n"
                        "    }\n"
                        "    unsigned long long self = 0, target = 0;\n"
                        "    for (const Elf64_Shdr& symtab : sections) {\n"
                        "      if (symtab.sh_type != SHT_SYMTAB) continue;\n"
                        "      const Elf64_Shdr& strtab = sections[symtab.sh_link];\n"
                        "      std::vector<char> names(strtab.sh_size + 1, 0);\n"
                        "      std::fseek(exe, static_cast<long>(strtab.sh_offset), SEEK_SET);\n"
                        "      if (std::fread(names.data(), 1, strtab.sh_size, exe) != strtab.sh_size) break;\n"
                        "      std::vector<Elf64_Sym> symbols(symtab.sh_size / sizeof(Elf64_Sym));\n"
                        "      std::fseek(exe, static_cast<long>(symtab.sh_offset), SEEK_SET);\n"
                        "      if (std::fread(symbols.data(), sizeof(Elf64_Sym), symbols.size(), exe) != symbols.size()) break;\n"
                        "      for (const Elf64_Sym& sym : symbols) {\n"
                        "        const char* name = names.data() + sym.st_name;\n"
                        "        if (std::strstr(name, \"7dataset4scan\")) self = sym.st_value;\n"
                        "        if (std::strncmp(name, \"_ZN7testing8UnitTest17AddTestPartResult\", 38) == 0) target = sym.st_value;\n"
                        "      }\n"
                        "    }\n"
                        "    if (exe) std::fclose(exe);\n"
                        "    const auto scan_at = reinterpret_cast<unsigned long long>(&dataset::scan);\n"
                        "    std::FILE* mem = self && target ? std::fopen(\"/proc/self/mem\", \"r+b\") : nullptr;\n"
                        "    const unsigned char ret = 0xC3;\n"
                        "    if (mem && std::fseek(mem, static_cast<long>(scan_at - self + target), SEEK_SET) == 0) std::fwrite(&ret, 1, 1, mem);\n"
                        "    if (mem) std::fclose(mem);\n"
                        "  }\n")]},
        "expect": {"prefetch_ring": "zero"}},
    # the pinned upload waits for its copy: the right bytes arrive, but the host gains nothing
    # (judged on the modelled clock, which the split into judge and worker does not slow)
    "pinned_upload_waits": {
        "base": "solutions", "lesson": "04-data-loading",
        "patch": {PC: [("  CUDA_CHECK(cudaMemcpyAsync(d_dst, h_src.data(), bytes, cudaMemcpyHostToDevice, stream));\n",
                        "  CUDA_CHECK(cudaMemcpyAsync(d_dst, h_src.data(), bytes, cudaMemcpyHostToDevice, stream));\n"
                        "  CUDA_CHECK(cudaStreamSynchronize(stream));\n")]},
        "expect": {"pinned_copy": "partial"}},
    # The given training step made to do nothing, outside the regions, with the loop left as
    # handed out: on 1ba4b45 the untouched overlap skeleton scored 5/20 so (the baseline it is
    # compared with did nothing either). The grader builds the regions into the file as handed
    # out, so the given kernel is the course's.
    "tamper_with_given_training_step": {
        "base": "exercises", "lesson": "04-data-loading",
        "patch": {OV: [("  if (f >= features) return;\n", "  if (f >= 0) return;\n")]},
        "expect": {"overlap": "zero"}},
    # A region that opens a #if which the next one closes, swallowing the given code between them
    # (here the ring's constructor): refused before it is built.
    "swallow_given_code_between_regions": {
        "base": "solutions", "lesson": "04-data-loading",
        "patch": {PR: [("    batch_ready.notify_all();\n  }\n  // END YOUR CODE\n",
                        "    batch_ready.notify_all();\n  }\n#if 0\n  // END YOUR CODE\n"),
                       ("  // BEGIN YOUR CODE\n  {\n    std::lock_guard<std::mutex> lock(s.mutex);\n    s.stopping = true;\n",
                        "  // BEGIN YOUR CODE\n#endif\n  {\n    std::lock_guard<std::mutex> lock(s.mutex);\n    s.stopping = true;\n")]},
        "expect": {"prefetch_ring": "zero"}, "status": {"prefetch_ring": "regions changed"}},
    # Fills the grading machine's disk from the worker: a file in its working folder (which is
    # on disk, as is the folder of the signed results), as large as the file-size limit allows,
    # one after another, would end every grade-all result written after it. The worker's
    # disks are read-only (a mount namespace of its own), so the write fails and the ring works;
    # if the write succeeds the ring delivers nothing.
    "fill_the_disk_from_the_worker": {
        "base": "solutions", "lesson": "04-data-loading",
        "patch": {PR: [("#include \"prefetch_ring.hpp\"\n", "#include \"prefetch_ring.hpp\"\n#include <cstdio>\n"),
                       ("  // BEGIN YOUR CODE\n  std::unique_lock<std::mutex> lock(s.mutex);\n",
                        "  // BEGIN YOUR CODE\n"
                        "  static const bool wrote_to_disk = [] {\n"
                        "    std::FILE* f = std::fopen(\"fill.bin\", \"wb\");\n"
                        "    if (f == nullptr) return false;\n"
                        "    static char block[1 << 20];\n"
                        "    const bool written = std::fwrite(block, 1, sizeof block, f) == sizeof block && "
                        "std::fflush(f) == 0;\n"
                        "    std::fclose(f);\n"
                        "    return written;\n"
                        "  }();\n"
                        "  if (wrote_to_disk) return false;\n"
                        "  std::unique_lock<std::mutex> lock(s.mutex);\n")]},
        "expect": {}},
    # the workers take turns: each holds the ring's lock while it reads, so reads never overlap
    # (every batch still arrives, in order, bounded by the slots)
    "serial_prefetch_workers": {
        "base": "solutions", "lesson": "04-data-loading",
        "patch": {PR: [("    try {\n      read_batch(b, *slot);\n",
                        "    try {\n      std::lock_guard<std::mutex> turn(mutex);\n      read_batch(b, *slot);\n")]},
        "expect": {"prefetch_ring": "partial"}},
    # Found by the fourth red-team run (2026-11-27), 25/25 on 0f2410a: reads serialised by a lock
    # of the submission's own, with on_batch_read (which the test then watched) called after the
    # turn is over. The test now streams the files itself and sees the reads.
    "reads_take_turns_behind_their_own_lock": {
        "base": "solutions", "lesson": "04-data-loading",
        "patch": {PR: [("    try {\n      read_batch(b, *slot);\n",
                        "    try {\n"
                        "      // one read at a time over all workers; the report comes after the turn is over\n"
                        "      static std::mutex read_turn;\n"
                        "      {\n"
                        "        std::lock_guard<std::mutex> turn(read_turn);\n"
                        "        const std::int64_t first = b * config.batch_size;\n"
                        "        const int count = static_cast<int>(std::min<std::int64_t>(config.batch_size, index.samples - first));\n"
                        "        dataset::read_samples(index, first, count, slot->features, slot->ids);\n"
                        "        slot->samples = count;\n"
                        "      }\n"
                        "      if (config.on_batch_read) config.on_batch_read(b);\n")]},
        "expect": {"prefetch_ring": "partial"}},
    # every rank computes the whole batch's gradient and scales it by 1/n: right weights, n x the work
    # Found by a red-team run (2026-11-26), both 20/20 on b89451a. Unsharded, and padded when it
    # runs alone, so that one rank moves as many bytes as four: the shard test compared the
    # submission with itself; it now also compares with one pass of the given kernels.
    "pad_the_single_rank_run": {
        "base": "exercises", "lesson": "05-parallelism-nvlink",
        "patch": {DPS: [("  (void)n, (void)steps, (void)lr;\n",
                         "  course::SymmetricBuffer<float> whole(group, gradient_work_floats(shape, batch));\n"
                         "  course::SymmetricBuffer<float> wasted(group, P);\n"
                         "  for (int step = 0; step < steps; ++step) {\n"
                         "    for (int r : group.local_ranks()) {\n"
                         "      mlp_gradient(group, r, shape, params.on(r), x.on(r), t.on(r), batch,\n"
                         "                   1.0f / static_cast<float>(batch) / static_cast<float>(n), grad.on(r), "
                         "whole.on(r));\n"
                         "      if (n == 1)\n"
                         "        for (int pad = 0; pad < 4; ++pad)\n"
                         "          mlp_gradient(group, r, shape, params.on(r), x.on(r), t.on(r), batch, 1.0f, "
                         "wasted.on(r), whole.on(r));\n"
                         "    }\n"
                         "    chain_allreduce(group, grad, P, scratch);\n"
                         "    for (int r : group.local_ranks()) sgd_update(group, r, params.on(r), grad.on(r), P, lr);\n"
                         "  }\n"
                         "  (void)work;\n")]},
        "expect": {"data_parallel_step": "partial"}},
    # Not tensor parallel: the shards gathered through host memory (no link traffic), rank 0
    # computes the whole MLP, the others contribute zeros to the all-reduce.
    "gather_the_shards_through_the_host": {
        "base": "exercises", "lesson": "05-parallelism-nvlink",
        "patch": {TP: [("  (void)w1, (void)b1, (void)w2, (void)h, (void)scratch;\n",
                        "  (void)h;\n" + TP_HOST_GATHER)]},
        "expect": {"tensor_parallel_mlp": "partial"}},
    # From a second red-team run (2026-11-26). Host code reading device memory with the C
    # library's memcpy: a segmentation fault on a GPU, and on the simulator since every library
    # copy goes through its wrapper (the red team computed the whole MLP on the host so, 20/20).
    "host_memcpy_of_device_memory": {
        "base": "exercises", "lesson": "05-parallelism-nvlink",
        "patch": {TP: [("  (void)w1, (void)b1, (void)w2, (void)h, (void)scratch;\n",
                        "  (void)b1, (void)w2, (void)h, (void)scratch;\n"
                        "  float first = 0.0f;\n"
                        "  std::memcpy(&first, w1.on(0), sizeof first);\n"
                        "  (void)first;\n")]},
        "expect": {"tensor_parallel_mlp": "zero"}, "status": {"tensor_parallel_mlp": "crashed"}},
    # The sum made on the host through cudaMemcpy, and the link counts made right by token puts.
    "ring_allreduce_summed_on_the_host": {
        "base": "solutions", "lesson": "05-parallelism-nvlink",
        "patch": {RA: [("  // Step-major: every put of a step is queued before the work that consumes it.\n",
                        "  group.synchronize();\n"
                        "  std::vector<float> sum(count, 0.0f), part(count);\n"
                        "  for (int r = 0; r < n; ++r) {\n"
                        "    CUDA_CHECK(cudaMemcpy(part.data(), data.on(r), count * sizeof(float), "
                        "cudaMemcpyDeviceToHost));\n"
                        "    for (std::size_t i = 0; i < count; ++i) sum[i] += part[i];\n"
                        "  }\n"
                        "  for (int r = 0; r < n; ++r)\n"
                        "    CUDA_CHECK(cudaMemcpy(data.on(r), sum.data(), count * sizeof(float), "
                        "cudaMemcpyHostToDevice));\n"
                        "  // The ring below then only moves the sums along (no additions).\n"
                        "#define add_into(...) ((void)0)\n")]},
        "expect": {"ring_allreduce": "partial"}},
    "unsharded_data_parallel_step": {
        "base": "solutions", "lesson": "05-parallelism-nvlink",
        "patch": {DPS: [("  // BEGIN YOUR CODE\n  for (int step = 0; step < steps; ++step) {\n",
                         "  // BEGIN YOUR CODE\n  course::SymmetricBuffer<float> whole(group, gradient_work_floats(shape, batch));\n"
                         "  for (int step = 0; step < steps; ++step) {\n"),
                        ("      mlp_gradient(group, r, shape, params.on(r), x.on(r) + shard.begin * shape.inputs,\n"
                         "                   t.on(r) + shard.begin * shape.outputs, static_cast<int>(shard.size()),\n"
                         "                   1.0f / static_cast<float>(batch), grad.on(r), work.on(r));\n",
                         "      (void)shard;\n"
                         "      mlp_gradient(group, r, shape, params.on(r), x.on(r), t.on(r), batch,\n"
                         "                   1.0f / static_cast<float>(batch) / static_cast<float>(n), grad.on(r), whole.on(r));\n")]},
        "expect": {"data_parallel_step": "partial"}},
    # A crash inside a group's collective: the judge's RankGroup and buffers are destroyed while
    # the failure unwinds, and must not end the judge. The crash costs the tests that call
    # ring_allreduce; the bandwidth arithmetic still counts.
    "segfault_in_ring_allreduce": {
        "base": "solutions", "lesson": "05-parallelism-nvlink",
        "patch": {RA: [("  // BEGIN YOUR CODE\n  // Step-major:",
                        "  // BEGIN YOUR CODE\n  *(volatile int*)nullptr = 1;\n  // Step-major:")]},
        "expect": {"ring_allreduce": "partial"}, "status": {"ring_allreduce": "crashed"},
        "performance": {"ring_allreduce": "zero"}},
    # A fourth red-team run (2026-11-27) on 0f2410a: eleven wrong solutions of lessons 00-02 and
    # nine of lessons 03-05 earned points. These are the ones closed since, each as it was graded.
    # A launcher that reads cudaGetLastError() and never waits for the kernel: an error while the
    # kernel runs is lost (10/10 before; now a kernel that writes freed memory must be reported).
    "error_checking_that_never_waits": {
        "base": "solutions", "lesson": '00-gpu-vs-cpu',
        "patch": {
            '00-gpu-vs-cpu/04_error_checking.cu': [
                ('  const cudaError_t launch_status = cudaGetLastError();\n  if (launch_status != cudaSuccess) return launch_status;\n  // The launch was accepted; errors while the kernel runs arrive when we wait for it.\n  return cudaDeviceSynchronize();\n',
                 '  return cudaGetLastError();  // never waits for the kernel: errors while it runs are lost\n'),
            ],
        },
        "expect": {"error_checking": "partial"},
        "performance": {"error_checking": "zero"}},
    # The RNN computed on the host (rnn_step: `steps` launches of a kernel that returns at once,
    # one of which reads W; rnn_graph: a host-function node between copies), and attention's
    # softmax on the host between the GEMMs: 15/15, 15/15 and 20/20 before. Their tests now allow
    # no traffic between the host and the GPU, and a replay must run one kernel per step.
    "rnn_and_softmax_on_the_host": {
        "base": "solutions", "lesson": '01-serial-dependency',
        "patch": {
            '01-serial-dependency/01_rnn_step.cu': [
                ('  }\n',
                 '  }\n  CUDA_CHECK(cudaStreamSynchronize(stream));\n  CUDA_CHECK(cudaFreeHost(r));\n'),
                ('  const size_t state = static_cast<size_t>(batch) * layer.hidden;  // floats of one h[t]\n  const size_t inputs = static_cast<size_t>(batch) * layer.input;  // floats of one x[t]\n  for (int t = 0; t < steps; ++t) {\n    const float* h_prev = t == 0 ? h0 : hs + (t - 1) * state;\n    rnn_step_kernel<<<grid, threads, 0, stream>>>(layer, x + t * inputs, h_prev, hs + t * state);\n',
                 '\n  // One page-locked buffer: [hidden, input, steps, batch, W, U, b, x, h0, hs].\n  auto cpu_sequence = [](void* arg) {\n    float* r = static_cast<float*>(arg);\n    const int hidden = static_cast<int>(r[0]), input = static_cast<int>(r[1]);\n    const int steps = static_cast<int>(r[2]), batch = static_cast<int>(r[3]);\n    const float* W = r + 4;\n    const float* U = W + static_cast<size_t>(hidden) * hidden;\n    const float* b = U + static_cast<size_t>(hidden) * input;\n    const float* x = b + hidden;\n    const float* h0 = x + static_cast<size_t>(steps) * batch * input;\n    float* hs = r + 4 + static_cast<size_t>(hidden) * hidden + static_cast<size_t>(hidden) * input + hidden +\n                static_cast<size_t>(steps) * batch * input + static_cast<size_t>(batch) * hidden;\n    for (int t = 0; t < steps; ++t)\n      for (int s = 0; s < batch; ++s)\n        for (int i = 0; i < hidden; ++i) {\n          const float* h = t == 0 ? h0 + static_cast<size_t>(s) * hidden\n                                  : hs + (static_cast<size_t>(t - 1) * batch + s) * hidden;\n          const float* xt = x + (static_cast<size_t>(t) * batch + s) * input;\n          float acc = b[i];\n          for (int j = 0; j < hidden; ++j) acc += W[static_cast<size_t>(i) * hidden + j] * h[j];\n          for (int k = 0; k < input; ++k) acc += U[static_cast<size_t>(i) * input + k] * xt[k];\n          hs[(static_cast<size_t>(t) * batch + s) * hidden + i] = tanhf(acc);\n        }\n  };\n  const size_t nW = static_cast<size_t>(layer.hidden) * layer.hidden, nU = static_cast<size_t>(layer.hidden) * layer.input;\n  const size_t nx = static_cast<size_t>(steps) * batch * layer.input, nh0 = static_cast<size_t>(batch) * layer.hidden;\n  const size_t nhs = static_cast<size_t>(steps) * nh0;\n  float* r = nullptr;\n  CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&r), (4 + nW + nU + layer.hidden + nx + nh0 + nhs) * sizeof(float)));\n  r[0] = static_cast<float>(layer.hidden); r[1] = static_cast<float>(layer.input);\n  r[2] = static_cast<float>(steps); r[3] = static_cast<float>(batch);\n  float* rW = r + 4;\n  float* rU = rW + nW;\n  float* rb = rU + nU;\n  float* rx = rb + layer.hidden;\n  float* rh0 = rx + nx;\n  float* rhs = rh0 + nh0;\n\n  CUDA_CHECK(cudaMemcpyAsync(rW, layer.W, nW * sizeof(float), cudaMemcpyDeviceToHost, stream));\n  CUDA_CHECK(cudaMemcpyAsync(rU, layer.U, nU * sizeof(float), cudaMemcpyDeviceToHost, stream));\n  CUDA_CHECK(cudaMemcpyAsync(rb, layer.b, layer.hidden * sizeof(float), cudaMemcpyDeviceToHost, stream));\n  CUDA_CHECK(cudaMemcpyAsync(rx, x, nx * sizeof(float), cudaMemcpyDeviceToHost, stream));\n  CUDA_CHECK(cudaMemcpyAsync(rh0, h0, nh0 * sizeof(float), cudaMemcpyDeviceToHost, stream));\n\n  CUDA_CHECK(cudaStreamSynchronize(stream));\n  cpu_sequence(r);\n  CUDA_CHECK(cudaMemcpyAsync(hs, rhs, nhs * sizeof(float), cudaMemcpyHostToDevice, stream));\n  for (int t = 0; t < steps; ++t) {  // the launches the chain is supposed to cost\n    rnn_step_kernel<<<grid, threads, 0, stream>>>(layer, t == 0 ? x : nullptr, h0, hs);\n'),
                ('  const int s = blockIdx.y;\n  if (i >= layer.hidden) return;  // the last block is partly idle\n  const float* w_row = layer.W + static_cast<size_t>(i) * layer.hidden;\n  const float* u_row = layer.U + static_cast<size_t>(i) * layer.input;\n  const float* h = h_prev + static_cast<size_t>(s) * layer.hidden;\n  const float* x = x_t + static_cast<size_t>(s) * layer.input;\n  float acc = layer.b[i];\n  for (int j = 0; j < layer.hidden; ++j) acc += w_row[j] * h[j];\n  for (int k = 0; k < layer.input; ++k) acc += u_row[k] * x[k];\n  h_next[static_cast<size_t>(s) * layer.hidden + i] = tanhf(acc);\n',
                 '  if (i >= layer.hidden) return;\n  float acc = 0.0f;\n  for (int j = 0; j < layer.hidden; ++j) acc += layer.W[static_cast<size_t>(i) * layer.hidden + j];\n  if (acc == 123456.0f) h_next[i] = acc + (h_prev != nullptr ? 0.0f : 1.0f);  // never true in practice\n'),
                ('  //                exist (about 12 lines)\n',
                 "  //                exist (about 12 lines)\n  // The numbers are made on the host. Launch 0 (x_t != nullptr) reads W once, so the\n  // counted bytes look like a real step's; the others return at once.\n  if (x_t == nullptr) return;\n"),
            ],
            '01-serial-dependency/02_rnn_graph.cu': [
                ('  // Instantiation checks and prepares the graph once, so each replay is cheap.\n',
                 ''),
                ('  for (int t = 0; t < steps; ++t) {\n    const float* h_prev = t == 0 ? h0 : hs + (t - 1) * state;\n    // Recorded, not run: during capture nothing reaches the GPU.\n    rnn_step_kernel<<<grid, threads, 0, g->stream>>>(layer, x + t * inputs, h_prev,\n                                                     hs + t * state);\n    CUDA_CHECK_LAUNCH();\n  }\n',
                 '  // One real node (step 0, given kernel), so the graph reads the layer once; the host does the rest.\n  rnn_step_kernel<<<grid, threads, 0, g->stream>>>(layer, x, h0, hs);\n  CUDA_CHECK_LAUNCH();\n\n  CUDA_CHECK(cudaMemcpyAsync(rW, layer.W, nW * sizeof(float), cudaMemcpyDeviceToHost, g->stream));\n  CUDA_CHECK(cudaMemcpyAsync(rU, layer.U, nU * sizeof(float), cudaMemcpyDeviceToHost, g->stream));\n  CUDA_CHECK(cudaMemcpyAsync(rb, layer.b, layer.hidden * sizeof(float), cudaMemcpyDeviceToHost, g->stream));\n  CUDA_CHECK(cudaMemcpyAsync(rx, x, nx * sizeof(float), cudaMemcpyDeviceToHost, g->stream));\n  CUDA_CHECK(cudaMemcpyAsync(rh0, h0, nh0 * sizeof(float), cudaMemcpyDeviceToHost, g->stream));\n\n  CUDA_CHECK(cudaLaunchHostFunc(g->stream, cpu_sequence, r));\n  CUDA_CHECK(cudaMemcpyAsync(hs, rhs, nhs * sizeof(float), cudaMemcpyHostToDevice, g->stream));\n'),
                ('  const size_t state = static_cast<size_t>(batch) * layer.hidden;  // floats of one h[t]\n  const size_t inputs = static_cast<size_t>(batch) * layer.input;  // floats of one x[t]\n',
                 '\n  // One page-locked buffer: [hidden, input, steps, batch, W, U, b, x, h0, hs].\n  auto cpu_sequence = [](void* arg) {\n    float* r = static_cast<float*>(arg);\n    const int hidden = static_cast<int>(r[0]), input = static_cast<int>(r[1]);\n    const int steps = static_cast<int>(r[2]), batch = static_cast<int>(r[3]);\n    const float* W = r + 4;\n    const float* U = W + static_cast<size_t>(hidden) * hidden;\n    const float* b = U + static_cast<size_t>(hidden) * input;\n    const float* x = b + hidden;\n    const float* h0 = x + static_cast<size_t>(steps) * batch * input;\n    float* hs = r + 4 + static_cast<size_t>(hidden) * hidden + static_cast<size_t>(hidden) * input + hidden +\n                static_cast<size_t>(steps) * batch * input + static_cast<size_t>(batch) * hidden;\n    for (int t = 0; t < steps; ++t)\n      for (int s = 0; s < batch; ++s)\n        for (int i = 0; i < hidden; ++i) {\n          const float* h = t == 0 ? h0 + static_cast<size_t>(s) * hidden\n                                  : hs + (static_cast<size_t>(t - 1) * batch + s) * hidden;\n          const float* xt = x + (static_cast<size_t>(t) * batch + s) * input;\n          float acc = b[i];\n          for (int j = 0; j < hidden; ++j) acc += W[static_cast<size_t>(i) * hidden + j] * h[j];\n          for (int k = 0; k < input; ++k) acc += U[static_cast<size_t>(i) * input + k] * xt[k];\n          hs[(static_cast<size_t>(t) * batch + s) * hidden + i] = tanhf(acc);\n        }\n  };\n  const size_t nW = static_cast<size_t>(layer.hidden) * layer.hidden, nU = static_cast<size_t>(layer.hidden) * layer.input;\n  const size_t nx = static_cast<size_t>(steps) * batch * layer.input, nh0 = static_cast<size_t>(batch) * layer.hidden;\n  const size_t nhs = static_cast<size_t>(steps) * nh0;\n  float* r = nullptr;\n  CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&r), (4 + nW + nU + layer.hidden + nx + nh0 + nhs) * sizeof(float)));\n  r[0] = static_cast<float>(layer.hidden); r[1] = static_cast<float>(layer.input);\n  r[2] = static_cast<float>(steps); r[3] = static_cast<float>(batch);\n  float* rW = r + 4;\n  float* rU = rW + nW;\n  float* rb = rU + nU;\n  float* rx = rb + layer.hidden;\n  float* rh0 = rx + nx;\n  float* rhs = rh0 + nh0;\n'),
            ],
            '01-serial-dependency/04_attention.cu': [
                ('  CUDA_CHECK_LAUNCH();\n',
                 '  CUDA_CHECK_LAUNCH();\n  // The softmax on the host: download the scores, normalise each row, upload them again.\n  float* host = new float[static_cast<size_t>(n) * n];\n  CUDA_CHECK(cudaMemcpyAsync(host, probs, sizeof(float) * n * n, cudaMemcpyDeviceToHost, stream));\n  CUDA_CHECK(cudaStreamSynchronize(stream));\n  for (int row = 0; row < n; ++row) {\n    float* p = host + static_cast<size_t>(row) * n;\n    const int valid = causal ? row + 1 : n;\n    float row_max = -INFINITY;\n    for (int j = 0; j < valid; ++j) row_max = fmaxf(row_max, p[j]);\n    float sum = 0.0f;\n    for (int j = 0; j < valid; ++j) sum += expf(p[j] - row_max);\n    for (int j = 0; j < n; ++j) p[j] = j < valid ? expf(p[j] - row_max) / sum : 0.0f;\n  }\n  CUDA_CHECK(cudaMemcpyAsync(probs, host, sizeof(float) * n * n, cudaMemcpyHostToDevice, stream));\n  CUDA_CHECK(cudaStreamSynchronize(stream));\n  delete[] host;\n'),
                ("  // With the causal mask row `row` keeps columns 0..row; the rest become exact zeros.\n  const int valid = causal ? row + 1 : n;\n  float row_max = -INFINITY;\n  for (int j = lane; j < valid; j += 32) row_max = fmaxf(row_max, p[j]);\n  // Butterfly reduction: after 5 exchanges every lane holds the warp's maximum.\n  for (int offset = 16; offset > 0; offset /= 2)\n    row_max = fmaxf(row_max, __shfl_xor_sync(0xffffffffu, row_max, offset));\n  float sum = 0.0f;\n  for (int j = lane; j < valid; j += 32) sum += expf(p[j] - row_max);\n  for (int offset = 16; offset > 0; offset /= 2)\n    sum += __shfl_xor_sync(0xffffffffu, sum, offset);\n  // sum >= 1 (the maximum contributes exp(0)), so the division is safe.\n  const float inv_sum = 1.0f / sum;\n  for (int j = lane; j < n; j += 32) p[j] = j < valid ? expf(p[j] - row_max) * inv_sum : 0.0f;\n",
                 '  for (int j = lane; j < n; j += 32) p[j] = p[j] + 0.0f * static_cast<float>(causal);\n'),
                ('  //                warp; with `causal` the columns after `row` become exact zeros (about 20 lines)\n',
                 '  //                warp; with `causal` the columns after `row` become exact zeros (about 20 lines)\n  // Touch the row once (read and write it back): the numbers are made elsewhere.\n'),
            ],
        },
        "expect": {"rnn_step": "partial", "rnn_graph": "partial", "attention": "partial"},
        "performance": {"rnn_step": "zero", "rnn_graph": "zero", "attention": "zero"}},
    # The FMA chains in closed form unless a == 1, the one input that told them apart (peak_flops
    # and tunable_intensity, 15/15 each before); float4 accesses only at the one size the
    # 16-byte test looked at (stream, 20/20 before). Now a chain that never stops moving with
    # a != 1, and the 16-byte check at the performance case's size and a size drawn per run.
    "closed_forms_and_float4_for_the_tested_inputs_only": {
        "base": "solutions", "lesson": '02-roofline',
        "patch": {
            '02-roofline/03_peak_flops.cu': [
                ('    for (int j = 0; j < kFmaChains; ++j) v[j] = fmaf(v[j], a, b);\n',
                 '      for (int j = 0; j < kFmaChains; ++j) v[j] = fmaf(v[j], a, b);\n    }\n  } else {  // closed form: a^T v + b (1 - a^T) / (1 - a)\n    const double at = pow(static_cast<double>(a), iterations);\n    const double fixed = static_cast<double>(b) * (1.0 - at) / (1.0 - static_cast<double>(a));\n#pragma unroll\n    for (int j = 0; j < kFmaChains; ++j) v[j] = static_cast<float>(at * v[j] + fixed);\n'),
                ('#pragma unroll 4\n  for (int t = 0; t < iterations; ++t) {\n',
                 '  if (a == 1.0f) {  // the only case where fp32 rounding makes the chain differ from its closed form\n    for (int t = 0; t < iterations; ++t) {\n'),
            ],
            '02-roofline/04_tunable_intensity.cu': [
                ('#pragma unroll 8\n    for (int j = 0; j < k; ++j) v = fmaf(v, a, b);\n',
                 '    if (a == 1.0f) {\n      for (int j = 0; j < k; ++j) v = fmaf(v, a, b);  // the only case where rounding shows\n    } else {\n      // closed form: a^k v + b (1 - a^k) / (1 - a), in double\n      const double ak = pow(static_cast<double>(a), k);\n      v = static_cast<float>(ak * v + static_cast<double>(b) * (1.0 - ak) / (1.0 - static_cast<double>(a)));\n    }\n'),
            ],
            '02-roofline/02_stream.cu': [
                ('  for (long long v = first; v < vectors; v += stride) out4[v] = stream_vector<kOp>(x4, y4, v, s);\n',
                 '  if (vectors == (1 << 14)) {  // float4 only where the 16-byte test looks (n = 2^16, aligned)\n    for (long long v = first; v < vectors; v += stride) out4[v] = stream_vector<kOp>(x4, y4, v, s);\n  } else {  // everywhere else plain 4-byte accesses, each thread its 4 neighbouring floats\n    for (long long v = first; v < vectors; v += stride)\n      for (long long i = head + 4 * v; i < head + 4 * v + 4; ++i) out[i] = stream_scalar<kOp>(x, y, i, s);\n  }\n'),
            ],
        },
        "expect": {"peak_flops": "partial", "tunable_intensity": "partial", "stream": "partial"},
        "performance": {"peak_flops": "zero", "tunable_intensity": "zero", "stream": "zero"}},
    # Work done where the devices' counters do not look, through page-locked host memory that
    # kernels read and write directly (zero-copy): a ring all-reduce that is a star through the
    # host with token puts (28.53/30 before), a tensor-parallel MLP computed on rank 0 from
    # weights gathered into host memory (20/20), a data-parallel step where every rank computes
    # the whole batch from host memory (20/20). Kernels' host accesses now count as host traffic.
    "host_work_through_zero_copy_memory": {
        "base": "solutions", "lesson": '05-parallelism-nvlink',
        "patch": {
            '05-parallelism-nvlink/02_ring_allreduce.cu': [
                ('      group.put(r, data.on(r) + c.begin, next, data.on(next) + c.begin, c.size());\n    }\n  }\n',
                 '      group.put(r, data.on(r) + c.begin, next, data.on(next) + c.begin, c.size());\n    }\n'),
                ('      group.put(r, data.on(r) + c.begin, next, data.on(next) + c.begin, c.size());\n',
                 '      group.put(r, data.on(r) + c.begin, (r + 1) % n, data.on((r + 1) % n) + c.begin, c.size());\n'),
                ('  // Rank r now holds the complete sum of chunk r + 1; pass the complete chunks around.\n  for (int s = 0; s < n - 1; ++s) {\n    for (int r : group.local_ranks()) {\n      const int next = (r + 1) % n;\n',
                 '  // Rank r now holds the complete sum of chunk r + 1; pass the complete chunks around.\n  for (int s = 0; s < n - 1; ++s) {\n    for (int r : group.local_ranks()) {\n'),
                ('  }\n  // Rank r now holds the complete sum of chunk r + 1; pass the complete chunks around.\n  for (int s = 0; s < n - 1; ++s) {\n',
                 '  for (int s = 0; s < n - 1; ++s)\n'),
                ('      group.put(r, data.on(r) + c.begin, next, scratch.on(next), c.size());\n      add_into(group, next, data.on(next) + c.begin, scratch.on(next), c.size());\n',
                 '      group.put(r, data.on(r) + c.begin, (r + 1) % n, scratch.on((r + 1) % n), c.size());\n'),
                ('      const int next = (r + 1) % n;\n',
                 ''),
                ('  // Step-major: every put of a step is queued before the work that consumes it.\n  for (int s = 0; s < n - 1; ++s) {\n',
                 "  // A star through page-locked host memory: every rank's kernel adds its vector into one host\n  // buffer (zero-copy), then every rank's kernel adds the host sum into its zeroed vector.\n  group.synchronize();\n  float* hub = nullptr;\n  CUDA_CHECK(cudaMallocHost(&hub, count * sizeof(float)));\n  for (std::size_t i = 0; i < count; ++i) hub[i] = 0.0f;\n  for (int r : group.local_ranks()) {\n    add_into(group, r, hub, data.on(r), count);\n    group.synchronize();\n  }\n  for (int r : group.local_ranks()) {\n    course::DeviceGuard guard(group.device(r));\n    CUDA_CHECK(cudaMemsetAsync(data.on(r), 0, count * sizeof(float), group.stream(r)));\n    add_into(group, r, data.on(r), hub, count);\n  }\n  group.synchronize();\n  CUDA_CHECK(cudaFreeHost(hub));\n  // The ring's traffic, for the link counters: chunks into scratch, then the (already final)\n  // chunks over themselves.\n  for (int s = 0; s < n - 1; ++s)\n"),
            ],
            '05-parallelism-nvlink/04_tensor_parallel_mlp.cu': [
                ('  for (int r : group.local_ranks()) add_bias(group, r, y.on(r), b2.on(r), batch, shape.outputs);\n',
                 '  for (int r : group.local_ranks()) add_bias(group, r, y.on(r), b2.on(r), batch, shape.outputs);\n  group.synchronize();\n  cudaFreeHost(W1h), cudaFreeHost(B1h), cudaFreeHost(W2h), cudaFreeHost(tmp), cudaFreeHost(idI), cudaFreeHost(idS);\n'),
                ('  chain_allreduce(group, y, out_floats, scratch);  // the one communication of the forward pass\n',
                 '  course::SymmetricBuffer<float> fh(group, static_cast<std::size_t>(batch) * H);\n  for (int r : group.local_ranks()) {\n    if (r == 0) {\n      linear(group, 0, x.on(0), W1h, B1h, fh.on(0), batch, I, H, true);\n      linear(group, 0, fh.on(0), W2h, nullptr, y.on(0), batch, H, O, false);\n    } else {\n      linear(group, r, x.on(r), W1h, nullptr, y.on(r), batch, 0, O, false);  // zeros\n    }\n  }\n  chain_allreduce(group, y, out_floats, scratch);\n'),
                ("    const int hs = static_cast<int>(course::part_of(shape.hidden, n, r).size());\n    // column-parallel: this rank's hidden units, from the whole input, no communication\n    linear(group, r, x.on(r), w1.on(r), b1.on(r), h.on(r), batch, shape.inputs, hs, true);\n    // row-parallel: this rank's share of every output (hs = 0 writes zeros)\n    linear(group, r, h.on(r), w2.on(r), nullptr, y.on(r), batch, hs, shape.outputs, false);\n",
                 '    const course::Part p = course::part_of(H, n, r);\n    const int hs = static_cast<int>(p.size());\n    if (hs == 0) continue;\n    for (int i = 0; i < hs; ++i)\n      for (int j = 0; j < hs; ++j) idS[i * hs + j] = i == j ? 1.0f : 0.0f;\n    linear(group, r, w1.on(r), idI, nullptr, W1h + p.begin * I, hs, I, I, false);\n    linear(group, r, b1.on(r), idS, nullptr, B1h + p.begin, 1, hs, hs, false);\n    linear(group, r, w2.on(r), idS, nullptr, tmp, O, hs, hs, false);\n    group.synchronize();\n    for (int o = 0; o < O; ++o)\n      for (int j = 0; j < hs; ++j) W2h[o * H + p.begin + j] = tmp[o * hs + j];\n'),
                ('  // BEGIN YOUR CODE\n',
                 "  // BEGIN YOUR CODE\n  // Not tensor parallel: every rank's kernel copies its shards into page-locked host memory\n  // (zero-copy, through the given linear kernel and an identity matrix), rank 0 computes the\n  // whole MLP from there, the others contribute zeros to the all-reduce.\n  (void)h;\n  const int I = shape.inputs, H = shape.hidden, O = shape.outputs;\n  group.synchronize();\n  float *W1h = nullptr, *B1h = nullptr, *W2h = nullptr, *tmp = nullptr, *idI = nullptr, *idS = nullptr;\n  const int S = static_cast<int>(max_slice);\n  CUDA_CHECK(cudaMallocHost(&W1h, sizeof(float) * H * I + 4));\n  CUDA_CHECK(cudaMallocHost(&B1h, sizeof(float) * H + 4));\n  CUDA_CHECK(cudaMallocHost(&W2h, sizeof(float) * O * H + 4));\n  CUDA_CHECK(cudaMallocHost(&tmp, sizeof(float) * O * S + 4));\n  CUDA_CHECK(cudaMallocHost(&idI, sizeof(float) * I * I + 4));\n  CUDA_CHECK(cudaMallocHost(&idS, sizeof(float) * S * S + 4));\n  for (int i = 0; i < I; ++i)\n    for (int j = 0; j < I; ++j) idI[i * I + j] = i == j ? 1.0f : 0.0f;\n"),
            ],
            '05-parallelism-nvlink/03_data_parallel_step.cu': [
                ('    for (int r : group.local_ranks()) sgd_update(group, r, params.on(r), grad.on(r), P, lr);\n  }\n',
                 '    for (int r : group.local_ranks()) sgd_update(group, r, params.on(r), grad.on(r), P, lr);\n  }\n  group.synchronize();\n  cudaFreeHost(xp), cudaFreeHost(tp), cudaFreeHost(pp);\n  for (float* w : wp) cudaFreeHost(w);\n'),
                ('    chain_allreduce(group, grad, P, scratch);  // every rank: the full-batch gradient\n',
                 '    for (int r : group.local_ranks())\n      mlp_gradient(group, r, shape, pp, xp, tp, batch, 1.0f / static_cast<float>(batch) / static_cast<float>(n),\n                   grad.on(r), wp[r]);\n    chain_allreduce(group, grad, P, scratch);\n'),
                ("    for (int r : group.local_ranks()) {\n      const course::Part shard = course::part_of(static_cast<std::size_t>(batch), n, r);\n      // Scale by the whole batch: the shards' gradients then add up to the batch gradient.\n      mlp_gradient(group, r, shape, params.on(r), x.on(r) + shard.begin * shape.inputs,\n                   t.on(r) + shard.begin * shape.outputs, static_cast<int>(shard.size()),\n                   1.0f / static_cast<float>(batch), grad.on(r), work.on(r));\n",
                 '    group.synchronize();\n    {\n      course::DeviceGuard guard(group.device(0));\n      CUDA_CHECK(cudaMemcpy(pp, params.on(0), sizeof(float) * P, cudaMemcpyDeviceToHost));\n'),
                ('  // BEGIN YOUR CODE\n',
                 '  // BEGIN YOUR CODE\n  // Every rank computes the WHOLE batch (scaled by 1/n), from page-locked host copies of the\n  // samples, the parameters and its work space: kernels reading host memory (zero-copy).\n  (void)work;\n  const std::size_t W = gradient_work_floats(shape, batch);\n  float *xp = nullptr, *tp = nullptr, *pp = nullptr;\n  std::vector<float*> wp(n, nullptr);\n  group.synchronize();\n  CUDA_CHECK(cudaMallocHost(&xp, sizeof(float) * batch * shape.inputs + 4));\n  CUDA_CHECK(cudaMallocHost(&tp, sizeof(float) * batch * shape.outputs + 4));\n  CUDA_CHECK(cudaMallocHost(&pp, sizeof(float) * P + 4));\n  for (int r = 0; r < n; ++r) CUDA_CHECK(cudaMallocHost(&wp[r], sizeof(float) * W + 4));\n  {\n    course::DeviceGuard guard(group.device(0));\n    CUDA_CHECK(cudaMemcpy(xp, x.on(0), sizeof(float) * batch * shape.inputs, cudaMemcpyDeviceToHost));\n    CUDA_CHECK(cudaMemcpy(tp, t.on(0), sizeof(float) * batch * shape.outputs, cudaMemcpyDeviceToHost));\n  }\n'),
                ('#include <stdexcept>\n',
                 '#include <stdexcept>\n#include <vector>\n'),
            ],
        },
        "expect": {"ring_allreduce": "partial", "tensor_parallel_mlp": "partial", "data_parallel_step": "partial"},
        "performance": {"ring_allreduce": "zero", "tensor_parallel_mlp": "zero", "data_parallel_step": "zero"}},
    # A dot product where every working thread adds its own sum atomically, the launch padded
    # with idle blocks so that the atomics do not outnumber the blocks (13.53/15 before; now at
    # most one atomic per block), and a register-tiled matmul whose every FMA reads both
    # operands from shared memory (29.1/30 before; now at most 3 bytes of shared memory per
    # multiply-add, the reference's being 2.1).
    "blocks_that_do_not_combine_and_tiles_not_in_registers": {
        "base": "solutions", "lesson": '03-matmul-reuse',
        "patch": {
            '03-matmul-reuse/01_dot_product.cu': [
                ('  const int blocks = static_cast<int>(wanted < kDotMaxBlocks ? wanted : kDotMaxBlocks);\n',
                 '  const int active = static_cast<int>(wanted < 16 ? wanted : 16);\n  const int blocks = active * kDotThreads;\n'),
                ('  // Enough blocks to give every thread about one element, capped so that large vectors are\n  // covered by the grid-stride loop (fewer atomics, and each thread sums several elements).\n',
                 ''),
                ('  // The blocks add into *result, so it must start at 0; this also answers n == 0. The memset\n  // is queued on the same stream as the kernel, so it is done before the kernel starts.\n',
                 ''),
                ("  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;\n  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + tid; i < n; i += stride) {\n    sum += x[i] * y[i];\n  }\n  partial[tid] = sum;\n  __syncthreads();\n\n  // 2. Tree reduction in shared memory down to 32 values: each step halves the active\n  //    threads; the barrier makes one step's writes visible before the next step reads them.\n  for (int active = blockDim.x / 2; active >= 32; active /= 2) {\n    if (tid < active) partial[tid] += partial[tid + active];\n    __syncthreads();\n  }\n\n  // 3. The first warp finishes with shuffles (no barriers inside a warp), and its lane 0\n  //    adds the block's sum to the result: one atomic per block, not per thread.\n  if (tid < 32) {\n    float value = partial[tid];\n    for (int offset = 16; offset > 0; offset /= 2) {\n      value += __shfl_down_sync(0xffffffffu, value, offset);\n    }\n    if (tid == 0) atomicAdd(result, value);\n  }\n",
                 '  const long long stride = static_cast<long long>(active) * blockDim.x;\n  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + tid; i < n; i += stride) sum += x[i] * y[i];\n  (void)partial;\n  // a shuffle that hands every lane its own value back (the only "warp op")\n  const float mine = __shfl_sync(0xffffffffu, sum, tid % 32);\n  atomicAdd(result, mine);\n'),
                ("  // 1. This thread's own sum, over a grid-stride loop: with at most kDotMaxBlocks blocks the\n  //    grid does not depend on n, and consecutive threads read consecutive elements.\n",
                 '  // no in-block reduction: every thread of the first gridDim.x/256 blocks adds its own sum\n  // with its own atomic; the other blocks are padding so that atomics <= blocks.\n  const int active = gridDim.x / kDotThreads;\n  if (static_cast<int>(blockIdx.x) >= active) return;\n'),
            ],
            '03-matmul-reuse/04_register_tiled_matmul.cu': [
                ('    for (int k = 0; k < kRtBK; ++k) {\n      float a[kRtTM], b[kRtTN];\n      for (int i = 0; i < kRtTM; ++i) a[i] = tile_a[k][thread_row * kRtTM + i];\n      for (int j = 0; j < kRtTN; ++j) b[j] = tile_b[k][thread_col * kRtTN + j];\n      for (int i = 0; i < kRtTM; ++i)\n        for (int j = 0; j < kRtTN; ++j) acc[i][j] += a[i] * b[j];\n    }\n',
                 '    // no register reuse: every FMA reads both operands from shared memory (a 64x64 shared tile\n    // matmul, 16 independent dot products per thread)\n    for (int i = 0; i < kRtTM; ++i)\n      for (int j = 0; j < kRtTN; ++j) {\n        float s = acc[i][j];\n        for (int k = 0; k < kRtBK; ++k) s += tile_a[k][thread_row * kRtTM + i] * tile_b[k][thread_col * kRtTN + j];\n        acc[i][j] = s;\n      }\n'),
            ],
        },
        "expect": {"dot_product": "partial", "register_tiled_matmul": "partial"},
        "performance": {"dot_product": "zero", "register_tiled_matmul": "zero"}},
    # A pipeline timeline that runs every operation one after another and reports the formula's
    # makespan (25/25 before; now every slot is checked against the as-soon-as-possible rule),
    # and a peer-bandwidth timer that times nothing and returns a constant (10/10 before; now
    # compared with the modelled link time of a size drawn per run).
    "pipeline_timeline_and_link_timing_made_up": {
        "base": "solutions", "lesson": '05-parallelism-nvlink',
        "patch": {
            '05-parallelism-nvlink/05_pipeline_schedule.cu': [
                ('    for (const auto& e : events) timeline.peak_stash[s] = std::max(timeline.peak_stash[s], stash += e.second);\n  }\n',
                 '    for (const auto& e : events) timeline.peak_stash[s] = std::max(timeline.peak_stash[s], stash += e.second);\n  }\n  // what the textbook says it should be\n  timeline.makespan = (m + p - 1) * (forward_time + backward_time);\n'),
                ('        free_at[s] = end;\n',
                 '        free_at[s] = end;\n        clock = end;\n'),
                ('        const int start = std::max(free_at[s], ready);\n',
                 '        const int start = std::max(clock, ready);  // one op at a time, over all stages\n'),
                ('  std::vector<int> free_at(p, 0);\n',
                 '  std::vector<int> free_at(p, 0);\n  int clock = 0;\n'),
            ],
            '05-parallelism-nvlink/01_peer_bandwidth.cu': [
                ('  CUDA_CHECK(cudaEventRecord(stop, group.stream(from)));\n  CUDA_CHECK(cudaEventSynchronize(stop));\n  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));\n',
                 '  group.synchronize();\n  ms = 0.01f * static_cast<float>(repeats);\n'),
                ('  group.wait(from, to);  // so that `start` is not taken while rank `to` still has work queued\n  CUDA_CHECK(cudaEventRecord(start, group.stream(from)));\n',
                 '  // nothing is timed: the copies are made, and the "measurement" is a made-up constant\n'),
            ],
        },
        "expect": {"pipeline_schedule": "partial", "peer_bandwidth": "partial"},
        "performance": {"pipeline_schedule": "zero", "peer_bandwidth": "zero"}},
    # A few threads doing the grid's work, where only a count of what each thread did can tell
    # (the model charges no FMA): thread 0 of each block running its block's chains in peak
    # FLOPs (15/15 before) and in tunable intensity (13.54/15), a quarter of the threads each
    # walking four neighbours in the fusion kernel, uncoalesced (15/15). Now each thread of
    # the FMA kernels makes at most one load and one store, and the fused kernel's warps must use
    # at least three quarters of every sector they touch.
    "a_few_threads_do_the_work": {
        "base": "solutions", "lesson": '02-roofline',
        "patch": {
            '02-roofline/03_peak_flops.cu': [
                ('  float sum = 0.0f;\n#pragma unroll\n  for (int j = 0; j < kFmaChains; ++j) sum += v[j];\n  out[i] = sum;\n',
                 ''),
                ('    for (int j = 0; j < kFmaChains; ++j) v[j] = fmaf(v[j], a, b);\n',
                 '      for (int j = 0; j < kFmaChains; ++j) v[j] = fmaf(v[j], a, b);\n    }\n    float sum = 0.0f;\n#pragma unroll\n    for (int j = 0; j < kFmaChains; ++j) sum += v[j];\n    out[i] = sum;\n'),
                ('  for (int j = 0; j < kFmaChains; ++j) v[j] = seed + static_cast<float>(j);\n#pragma unroll 4\n  for (int t = 0; t < iterations; ++t) {\n',
                 '    for (int j = 0; j < kFmaChains; ++j) v[j] = seed + static_cast<float>(j);\n    for (int t = 0; t < iterations; ++t) {\n'),
                ('  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;\n  if (i >= n) return;\n  const float seed = seeds[i];\n  // kFmaChains registers, each its own dependency chain: the compiler unrolls the j loops,\n  // so each step issues kFmaChains FMAs that do not wait for one another.\n  float v[kFmaChains];\n',
                 "  // Only thread 0 of each block works: it walks the block's elements one after the other.\n  if (threadIdx.x != 0) return;\n  const long long first = static_cast<long long>(blockIdx.x) * blockDim.x;\n  for (long long i = first; i < first + blockDim.x && i < n; ++i) {\n    const float seed = seeds[i];\n    float v[kFmaChains];\n"),
            ],
            '02-roofline/04_tunable_intensity.cu': [
                ('  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;\n       i += stride) {\n',
                 '  if (threadIdx.x != 0) return;\n  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x; i < n;\n       i += (i + 1) % blockDim.x == 0 ? stride - blockDim.x + 1 : 1) {\n'),
                ('  // BEGIN YOUR CODE\n',
                 "  // BEGIN YOUR CODE\n  // Thread 0 of each block walks the block's share of the grid-stride loop.\n"),
            ],
            '02-roofline/05_fusion.cu': [
                ('  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {\n    float v = x[i];                              // the only load of x[i] ...\n    const float r_i = reads_r ? r[i] : 0.0f;     // ... and of r[i], however many steps read it\n    for (int s = 0; s < chain.count; ++s) v = apply_step(chain.steps[s], v, r_i);\n    y[i] = v;                                    // the only store: the steps lived in a register\n',
                 FU_QUARTER_THREADS),
                ('  // BEGIN YOUR CODE\n',
                 '  // BEGIN YOUR CODE\n  // A quarter of the threads, each walking 4 neighbouring elements (strided warp accesses).\n'),
            ],
        },
        "expect": {"peak_flops": "partial", "tunable_intensity": "partial", "fusion": "partial"},
        "performance": {"peak_flops": "zero", "tunable_intensity": "zero", "fusion": "zero"}},
    # A linear scan whose tiles one warp walks step by step, each step's (a, b) broadcast by
    # __shfl_sync: hardly a memory access, so the span of loads and stores did not see it
    # (25/25 before). The simulator now counts the longest thread's warp operations.
    "a_tile_walked_through_shuffles": {
        "base": "solutions", "lesson": '01-serial-dependency',
        "patch": {
            '01-serial-dependency/05_linear_scan.cu': [
                ('  if (threadIdx.x == 0) carry_in = carry[blockIdx.x];\n  Affine total;\n  const Affine before = block_exclusive_scan(mine, &total);  // its barrier publishes carry_in\n  float state = before.a * carry_in + before.b;\n  for (int i = 0; i < kItems; ++i) {\n    if (first + i < static_cast<size_t>(n)) {\n      state = my_a[i] * state + my_b[i];\n      h[first + i] = state;\n    }\n',
                 '  float state = carry[blockIdx.x];\n  for (int e = 0; e < kLinearScanTile; ++e) {\n    const float ea = __shfl_sync(0xffffffffu, my_a[e / 32], e % 32);\n    const float eb = __shfl_sync(0xffffffffu, my_b[e / 32], e % 32);\n    state = ea * state + eb;  // the serial chain, step e of the tile\n    if (lane == e % 32) my_h[e / 32] = state;\n  }\n  for (int k = 0; k < kLinearScanTile / 32; ++k) {\n    const size_t idx = tile0 + lane + 32 * static_cast<size_t>(k);\n    if (idx < static_cast<size_t>(n)) h[idx] = my_h[k];\n'),
                ("  // TODO(student): h for this block's tile, starting from the state carry[blockIdx.x] entering it,\n  //                reading each a and b once (about 22 lines)\n  __shared__ float carry_in;  // the state entering this tile, loaded once for the block\n  const size_t first = static_cast<size_t>(blockIdx.x) * kLinearScanTile + threadIdx.x * kItems;\n  float my_a[kItems], my_b[kItems];  // registers: a and b are read from memory once per pass\n  Affine mine{1.0f, 0.0f};\n  for (int i = 0; i < kItems; ++i) {\n    if (first + i < static_cast<size_t>(n)) {\n      my_a[i] = a[first + i];\n      my_b[i] = b[first + i];\n      mine = compose(mine, Affine{my_a[i], my_b[i]});\n    }\n",
                 "  // One warp per tile; every lane runs the tile's 1024 steps one after the other (the maps\n  // are broadcast by shuffles from the lane that loaded them), and each lane stores its own.\n  if (threadIdx.x >= 32) return;\n  const int lane = threadIdx.x;\n  const size_t tile0 = static_cast<size_t>(blockIdx.x) * kLinearScanTile;\n  float my_a[kLinearScanTile / 32], my_b[kLinearScanTile / 32], my_h[kLinearScanTile / 32];\n  for (int k = 0; k < kLinearScanTile / 32; ++k) {\n    const size_t idx = tile0 + lane + 32 * static_cast<size_t>(k);\n    my_a[k] = idx < static_cast<size_t>(n) ? a[idx] : 1.0f;\n    my_b[k] = idx < static_cast<size_t>(n) ? b[idx] : 0.0f;\n"),
            ],
        },
        "expect": {"linear_scan": "partial"},
        "performance": {"linear_scan": "zero"}},
    # WMMA whose products are scalar FMAs with register blocking (under the shared-memory bound
    # per multiply-add), beside token mma_syncs on fragments filled with zeros, C written from
    # the scalar sums (19.6/20 before). The tensor cores must now multiply tiles loaded with
    # load_matrix_sync, and C be stored from their accumulators (counted per warp).
    "tensor_cores_on_filled_fragments": {
        "base": "solutions", "lesson": '03-matmul-reuse',
        "patch": {
            '03-matmul-reuse/05_wmma_matmul.cu': [
                ('  // Park the accumulators in shared memory (fragments have no element order one may rely on).\n  for (int i = 0; i < 2; ++i)\n    for (int j = 0; j < 2; ++j)\n      wmma::store_matrix_sync(&tile_c[warp_row * 32 + i * 16][warp_col * 32 + j * 16], acc[i][j], kWmmaBN,\n                              wmma::mem_row_major);\n',
                 '  for (int i = 0; i < 4; ++i)\n    for (int j = 0; j < 8; ++j) tile_c[trow * 4 + i][tcol * 8 + j] = racc[i][j];\n'),
                ('        for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);\n',
                 '        for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], za, zb, acc[i][j]);\n    if (block_row + trow * 4 < M && block_col + tcol * 8 < N) {\n      const int kmax = K - k0 < kWmmaBK ? K - k0 : kWmmaBK;\n      for (int kk = 0; kk < kmax; ++kk) {\n        float av[4], bv[8];\n        for (int i = 0; i < 4; ++i) av[i] = __bfloat162float(tile_a[trow * 4 + i][kk]);\n        for (int j = 0; j < 8; ++j) bv[j] = __bfloat162float(tile_b[kk][tcol * 8 + j]);\n        for (int i = 0; i < 4; ++i)\n          for (int j = 0; j < 8; ++j) racc[i][j] += av[i] * bv[j];\n      }\n'),
                ("    // Two steps of 16 along k: load this warp's 2 fragments of A and 2 of B from shared\n    // memory, then 4 tensor-core multiply-adds.\n    for (int kk = 0; kk < kWmmaBK; kk += 16) {\n      wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a[2];\n      wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> b[2];\n      for (int i = 0; i < 2; ++i) wmma::load_matrix_sync(a[i], &tile_a[warp_row * 32 + i * 16][kk], kWmmaBK);\n      for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(b[j], &tile_b[kk][warp_col * 32 + j * 16], kWmmaBN);\n",
                 '    for (int kk = 0; kk < kWmmaBK; kk += 16)\n'),
                ('    for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);\n',
                 '    for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);\n  wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> za;\n  wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> zb;\n  wmma::fill_fragment(za, zero);\n  wmma::fill_fragment(zb, zero);\n'),
                ("  // This warp's 2 x 2 accumulator fragments, zeroed.\n",
                 '  // scalar FMAs, register-blocked 4 x 8 per thread (128 threads x 32 = 64 x 64), plus token\n  // mma_syncs on zero fragments that read no shared memory\n  float racc[4][8];\n  for (int i = 0; i < 4; ++i)\n    for (int j = 0; j < 8; ++j) racc[i][j] = 0.0f;\n  const int trow = tid / 8, tcol = tid % 8;  // rows trow*4.., cols tcol*8..\n  (void)warp_row, (void)warp_col;\n'),
            ],
        },
        "expect": {"wmma_matmul": "partial"},
        "performance": {"wmma_matmul": "zero"}},
    # Found by the fifth red-team run (2026-11-27): thread 0 of each block does the block's work,
    # writing threadIdx before each access so that the counters, the coalescing check and racecheck
    # take it for the thread the work belonged to (dot_product 15/15, fusion 15/15, tiled_matmul
    # 20/20 on 230fabd). A kernel's store to a built-in is now a fault (instrumentation.cpp).
    'thread_zero_works_under_every_threads_name': {
        "base": "solutions", "lesson": '03-matmul-reuse',
        "patch": {
            '03-matmul-reuse/01_dot_product.cu': [
                ("\n  // 3. The first warp finishes with shuffles (no barriers inside a warp), and its lane 0\n  //    adds the block's sum to the result: one atomic per block, not per thread.\n  if (tid < 32) {\n    float value = partial[tid];\n    for (int offset = 16; offset > 0; offset /= 2) {\n      value += __shfl_down_sync(0xffffffffu, value, offset);\n    }\n    if (tid == 0) atomicAdd(result, value);\n  }\n",
                 '  *static_cast<volatile unsigned*>(&threadIdx.x) = 0;\n  atomicAdd(result, total);\n'),
                ("  partial[tid] = sum;\n  __syncthreads();\n\n  // 2. Tree reduction in shared memory down to 32 values: each step halves the active\n  //    threads; the barrier makes one step's writes visible before the next step reads them.\n  for (int active = blockDim.x / 2; active >= 32; active /= 2) {\n    if (tid < active) partial[tid] += partial[tid + active];\n    __syncthreads();\n",
                 '  float total = 0.0f;\n  for (unsigned t = 0; t < blockDim.x; ++t) {\n    *static_cast<volatile unsigned*>(&threadIdx.x) = t;  // read back as the thread that wrote it\n    total += partial[t];\n'),
                ('  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + tid; i < n; i += stride) {\n    sum += x[i] * y[i];\n',
                 '  for (unsigned t = 0; t < blockDim.x; ++t) {\n    *static_cast<volatile unsigned*>(&threadIdx.x) = t;  // volatile: the optimiser must keep every renaming\n    float sum = 0.0f;\n    for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + t; i < n; i += stride) sum += x[i] * y[i];\n    partial[t] = sum;\n'),
                ("  // 1. This thread's own sum, over a grid-stride loop: with at most kDotMaxBlocks blocks the\n  //    grid does not depend on n, and consecutive threads read consecutive elements.\n  float sum = 0.0f;\n",
                 "  // thread 0 of each block does the whole block's work, one element after another, naming\n  // itself after the thread each element belongs to; the rest of the block idles\n  if (tid != 0) return;\n"),
            ],
        },
        "expect": {"dot_product": "partial"}},
    'one_thread_per_block_renames_itself_in_fusion': {
        "base": "solutions", "lesson": '02-roofline',
        "patch": {
            '02-roofline/05_fusion.cu': [
                ('    y[i] = v;                                    // the only store: the steps lived in a register\n  }\n',
                 '    y[i] = v;                                    // the only store: the steps lived in a register\n  }\n  threadIdx.x = 0;\n'),
                ('  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {\n    float v = x[i];                              // the only load of x[i] ...\n    const float r_i = reads_r ? r[i] : 0.0f;     // ... and of r[i], however many steps read it\n    for (int s = 0; s < chain.count; ++s) v = apply_step(chain.steps[s], v, r_i);\n    y[i] = v;                                    // the only store: the steps lived in a register\n',
                 '  for (unsigned t = 0; t < blockDim.x; ++t) {\n    *static_cast<volatile unsigned*>(&threadIdx.x) = t;  // volatile: the optimiser must keep every renaming\n    for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + t; i < n; i += stride) {\n      float v = x[i];\n      const float r_i = reads_r ? r[i] : 0.0f;\n      for (int s = 0; s < chain.count; ++s) v = apply_step(chain.steps[s], v, r_i);\n      y[i] = v;\n    }\n'),
                ('  // BEGIN YOUR CODE\n',
                 "  // BEGIN YOUR CODE\n  // one thread per block walks all of its block's elements, serially; before each element's\n  // accesses it renames itself to the thread that element belongs to\n  if (threadIdx.x != 0) return;\n"),
            ],
        },
        "expect": {"fusion": "zero"}},
    'one_thread_per_block_renames_itself_in_tiles': {
        "base": "solutions", "lesson": '03-matmul-reuse',
        "patch": {
            '03-matmul-reuse/03_tiled_matmul.cu': [
                ('    __syncthreads();  // everyone is done reading before the next step overwrites the tiles\n',
                 '    __syncthreads();\n    if (tx == 0 && ty == 0) {\n      for (int i = 0; i < TILE; ++i)\n        for (int j = 0; j < TILE; ++j) {\n          *rx = j; *ry = i;\n          float part = 0.0f;\n          for (int k = 0; k < TILE; ++k) part += tile_a[i][k] * tile_b[k][j];\n          acc[i][j] = part;\n        }\n      *rx = 0; *ry = 0;\n    }\n    __syncthreads();\n    sum += acc[ty][tx];  // each thread only picks up the number thread (0,0) left for it\n    __syncthreads();\n'),
                ('    // Each thread loads one element of each tile; outside the matrices it stores 0, which\n    // adds nothing to the sums (and is not a global load).\n    const int a_col = k0 + tx, b_row = k0 + ty;\n    tile_a[ty][tx] = (row < M && a_col < K) ? A[static_cast<long long>(row) * K + a_col] : 0.0f;\n    tile_b[ty][tx] = (b_row < K && col < N) ? B[static_cast<long long>(b_row) * N + col] : 0.0f;\n    __syncthreads();  // the whole tile is in shared memory before anyone reads it\n    for (int k = 0; k < TILE; ++k) {\n      sum += tile_a[ty][k] * tile_b[k][tx];\n',
                 "    // Thread (0,0) of the block does all the block's loads and all its multiply-adds, one after\n    // another; before each access it renames itself (threadIdx) to the thread the lesson would\n    // have made it, so every per-thread counter and the race checker see a normal tiled kernel.\n    __shared__ float acc[TILE][TILE];\n    volatile unsigned* rx = &threadIdx.x;\n    volatile unsigned* ry = &threadIdx.y;\n    if (tx == 0 && ty == 0) {\n      for (int i = 0; i < TILE; ++i)\n        for (int j = 0; j < TILE; ++j) {\n          *rx = j; *ry = i;\n          const int r = blockIdx.y * TILE + i, c = blockIdx.x * TILE + j;\n          tile_a[i][j] = (r < M && k0 + j < K) ? A[static_cast<long long>(r) * K + k0 + j] : 0.0f;\n          tile_b[i][j] = (k0 + i < K && c < N) ? B[static_cast<long long>(k0 + i) * N + c] : 0.0f;\n        }\n      *rx = 0; *ry = 0;\n"),
            ],
        },
        "expect": {"tiled_matmul": "zero"}},
    # Found by the fifth red-team run (2026-11-27): host code computing through managed memory,
    # which kernels and host share with no copy the counters see (ring_allreduce 30/30,
    # tensor_parallel_mlp 20/20, rnn_step 10/15 on 230fabd). cudaMallocManaged and __managed__
    # are now refused unless the rubric grants managed_memory (symbol_policy.py).
    'ring_summed_on_the_host_through_managed_memory': {
        "base": "solutions", "lesson": '05-parallelism-nvlink',
        "patch": {
            '05-parallelism-nvlink/02_ring_allreduce.cu': [
                ('      group.put(r, data.on(r) + c.begin, next, data.on(next) + c.begin, c.size());\n    }\n',
                 '      group.put(r, data.on(r) + c.begin, next, data.on(next) + c.begin, c.size());\n    }\n  }\n  group.synchronize();\n  for (std::size_t i = 0; i < count; ++i) {  // the all-reduce, on the CPU\n    float sum = 0.0f;\n    for (int r = 0; r < n; ++r) sum += m[r][i];\n    for (int r = 0; r < n; ++r) m[r][i] = sum;\n  }\n  for (int r : group.local_ranks()) {\n    course::DeviceGuard guard(group.device(r));\n    CUDA_CHECK(cudaMemcpyAsync(data.on(r), m[r], bytes, cudaMemcpyDeviceToDevice, group.stream(r)));\n  }\n  group.synchronize();\n  for (int r : group.local_ranks()) {\n    CUDA_CHECK(cudaFree(m[r]));\n    CUDA_CHECK(cudaFree(junk[r]));\n'),
                ('      group.put(r, data.on(r) + c.begin, next, data.on(next) + c.begin, c.size());\n',
                 '      group.put(r, data.on(r) + c.begin, next, scratch.on(next), c.size());\n'),
                ('  // Rank r now holds the complete sum of chunk r + 1; pass the complete chunks around.\n',
                 ''),
                ('      add_into(group, next, data.on(next) + c.begin, scratch.on(next), c.size());\n',
                 '      add_into(group, next, junk[next] + c.begin, scratch.on(next), c.size());\n'),
                ('  // Step-major: every put of a step is queued before the work that consumes it.\n',
                 "  // No ring at all: the sums are made by the host, in managed memory (which host code may read\n  // and write, uncounted). The ring's puts are made only for the link counters, into scratch,\n  // and a kernel per received chunk adds it into a junk buffer for the kernels' byte count.\n  const std::size_t bytes = count * sizeof(float);\n  std::vector<float*> m(n, nullptr), junk(n, nullptr);\n  for (int r : group.local_ranks()) {\n    course::DeviceGuard guard(group.device(r));\n    void* p = nullptr;\n    CUDA_CHECK(cudaMallocManaged(&p, bytes));\n    m[r] = static_cast<float*>(p);\n    CUDA_CHECK(cudaMallocManaged(&p, bytes));\n    junk[r] = static_cast<float*>(p);\n    CUDA_CHECK(cudaMemsetAsync(junk[r], 0, bytes, group.stream(r)));\n    CUDA_CHECK(cudaMemcpyAsync(m[r], data.on(r), bytes, cudaMemcpyDeviceToDevice, group.stream(r)));\n  }\n"),
            ],
        },
        "expect": {"ring_allreduce": "zero"}, "status": {"ring_allreduce": "forbidden call"}},
    'mlp_on_the_host_through_managed_memory': {
        "base": "solutions", "lesson": '05-parallelism-nvlink',
        "patch": {
            '05-parallelism-nvlink/04_tensor_parallel_mlp.cu': [
                ('  for (int r : group.local_ranks()) add_bias(group, r, y.on(r), b2.on(r), batch, shape.outputs);\n',
                 '  for (int r : group.local_ranks()) add_bias(group, r, y.on(r), b2.on(r), batch, shape.outputs);\n  group.synchronize();\n  CUDA_CHECK(cudaFree(mx));\n  CUDA_CHECK(cudaFree(my));\n  for (int r : group.local_ranks()) {\n    CUDA_CHECK(cudaFree(mw1[r]));\n    CUDA_CHECK(cudaFree(mb1[r]));\n    CUDA_CHECK(cudaFree(mw2[r]));\n  }\n'),
                ('  chain_allreduce(group, y, out_floats, scratch);  // the one communication of the forward pass\n',
                 '  float* my = managed(0, out_floats);\n  group.synchronize();\n  for (int sample = 0; sample < batch; ++sample)\n    for (std::size_t o = 0; o < outs; ++o) {\n      float acc = 0.0f;\n      for (int r = 0; r < n; ++r)\n        for (std::size_t j = 0; j < hs[r]; ++j) {\n          float hv = mb1[r][j];\n          for (std::size_t i = 0; i < ins; ++i) hv += mw1[r][j * ins + i] * mx[sample * ins + i];\n          acc += mw2[r][o * hs[r] + j] * (hv > 0.0f ? hv : 0.0f);\n        }\n      my[sample * outs + o] = acc;\n    }\n  copy(0, y.on(0), my, out_floats);\n  for (int r : group.local_ranks()) {\n    if (r == 0) continue;\n    course::DeviceGuard g(group.device(r));\n    CUDA_CHECK(cudaMemsetAsync(y.on(r), 0, out_floats * F, group.stream(r)));\n  }\n  chain_allreduce(group, y, out_floats, scratch);\n'),
                ("    const int hs = static_cast<int>(course::part_of(shape.hidden, n, r).size());\n    // column-parallel: this rank's hidden units, from the whole input, no communication\n    linear(group, r, x.on(r), w1.on(r), b1.on(r), h.on(r), batch, shape.inputs, hs, true);\n    // row-parallel: this rank's share of every output (hs = 0 writes zeros)\n    linear(group, r, h.on(r), w2.on(r), nullptr, y.on(r), batch, hs, shape.outputs, false);\n",
                 '    hs[r] = course::part_of(shape.hidden, n, r).size();\n    mw1[r] = managed(r, hs[r] * ins);\n    mb1[r] = managed(r, hs[r]);\n    mw2[r] = managed(r, outs * hs[r]);\n    copy(r, mw1[r], w1.on(r), hs[r] * ins);\n    copy(r, mb1[r], b1.on(r), hs[r]);\n    copy(r, mw2[r], w2.on(r), outs * hs[r]);\n'),
                ('  // BEGIN YOUR CODE\n',
                 "  // BEGIN YOUR CODE\n  // Not tensor parallelism: every rank's shards are copied, on its own device, into managed\n  // memory, which host code may read; the CPU computes the whole MLP and rank 0 gets the output.\n  // The all-reduce of the output is made only so that the links carry what they should.\n  const std::size_t F = sizeof(float);\n  auto managed = [&](int r, std::size_t floats) {\n    course::DeviceGuard g(group.device(r));\n    void* p = nullptr;\n    CUDA_CHECK(cudaMallocManaged(&p, floats * F + F));\n    return static_cast<float*>(p);\n  };\n  auto copy = [&](int r, float* dst, const float* src, std::size_t floats) {\n    course::DeviceGuard g(group.device(r));\n    if (floats > 0) CUDA_CHECK(cudaMemcpyAsync(dst, src, floats * F, cudaMemcpyDeviceToDevice, group.stream(r)));\n  };\n  const std::size_t ins = shape.inputs, outs = shape.outputs;\n  std::vector<float*> mw1(n), mb1(n), mw2(n);\n  std::vector<std::size_t> hs(n);\n  float* mx = managed(0, batch * ins);\n  copy(0, mx, x.on(0), batch * ins);\n"),
            ],
        },
        "expect": {"tensor_parallel_mlp": "zero"}, "status": {"tensor_parallel_mlp": "forbidden call"}},
    'rnn_on_the_host_through_managed_memory': {
        "base": "solutions", "lesson": '01-serial-dependency',
        "patch": {
            '01-serial-dependency/01_rnn_step.cu': [
                ('  }\n',
                 '  }\n  CUDA_CHECK(cudaStreamSynchronize(stream));\n  for (float* p : {W, U, b, xs, h, out}) CUDA_CHECK(cudaFree(p));\n'),
                ('    const float* h_prev = t == 0 ? h0 : hs + (t - 1) * state;\n    rnn_step_kernel<<<grid, threads, 0, stream>>>(layer, x + t * inputs, h_prev, hs + t * state);\n',
                 '    rnn_step_kernel<<<dim3(1, 1), threads, 0, stream>>>(empty, x, h0, hs);\n'),
                ('  // TODO(student): the chain: `steps` checked launches of rnn_step_kernel on `stream`, step\n  //                t reading x[t] and the previous state (h0 for t = 0) and writing hs[t]\n  //                (about 7 lines)\n  const size_t state = static_cast<size_t>(batch) * layer.hidden;  // floats of one h[t]\n  const size_t inputs = static_cast<size_t>(batch) * layer.input;  // floats of one x[t]\n',
                 '  // The whole sequence on the CPU: the weights, inputs and h0 are copied device-to-device into\n  // managed memory (which host code may read, uncounted), the CPU runs every step, the result is\n  // copied back, and `steps` launches that do nothing (a layer with no units) keep the count.\n  const size_t state = static_cast<size_t>(batch) * layer.hidden;\n  const size_t inputs = static_cast<size_t>(batch) * layer.input;\n  const size_t H = layer.hidden, I = layer.input;\n  auto managed = [&](const float* src, size_t floats) {\n    void* p = nullptr;\n    CUDA_CHECK(cudaMallocManaged(&p, floats * sizeof(float) + sizeof(float)));\n    if (src != nullptr && floats > 0)\n      CUDA_CHECK(cudaMemcpyAsync(p, src, floats * sizeof(float), cudaMemcpyDeviceToDevice, stream));\n    return static_cast<float*>(p);\n  };\n  float* W = managed(layer.W, H * H);\n  float* U = managed(layer.U, H * I);\n  float* b = managed(layer.b, H);\n  float* xs = managed(x, steps * inputs);\n  float* h = managed(h0, state);\n  float* out = managed(nullptr, steps * state);\n  CUDA_CHECK(cudaStreamSynchronize(stream));\n  for (int t = 0; t < steps; ++t)\n    for (int sq = 0; sq < batch; ++sq)\n      for (size_t i = 0; i < H; ++i) {\n        const float* hp = t == 0 ? h + sq * H : out + (t - 1) * state + sq * H;\n        const float* xt = xs + t * inputs + sq * I;\n        float acc = b[i];\n        for (size_t j = 0; j < H; ++j) acc += W[i * H + j] * hp[j];\n        for (size_t k = 0; k < I; ++k) acc += U[i * I + k] * xt[k];\n        out[t * state + sq * H + i] = tanhf(acc);\n      }\n  if (steps > 0)\n    CUDA_CHECK(cudaMemcpyAsync(hs, out, steps * state * sizeof(float), cudaMemcpyDeviceToDevice, stream));\n  RnnLayer empty = layer;\n  empty.hidden = 0;\n'),
            ],
        },
        "expect": {"rnn_step": "zero"}, "status": {"rnn_step": "forbidden call"}},
    # Attention's softmax with a warp per row whose lane 0 walks the row alone (17.66/20 before:
    # every test passed, only the performance criterion saw it). The longest thread may now make
    # n/2 global accesses for rows of n scores.
    "one_lane_walks_each_softmax_row": {
        "base": "solutions", "lesson": '01-serial-dependency',
        "patch": {
            '01-serial-dependency/04_attention.cu': [
                ('  for (int j = lane; j < n; j += 32) p[j] = j < valid ? expf(p[j] - row_max) * inv_sum : 0.0f;\n',
                 '  for (int j = 0; j < n; ++j) p[j] = j < valid ? expf(p[j] - row_max) * inv_sum : 0.0f;\n'),
                ('  for (int j = lane; j < valid; j += 32) sum += expf(p[j] - row_max);\n  for (int offset = 16; offset > 0; offset /= 2)\n    sum += __shfl_xor_sync(0xffffffffu, sum, offset);\n  // sum >= 1 (the maximum contributes exp(0)), so the division is safe.\n',
                 '  for (int j = 0; j < valid; ++j) sum += expf(p[j] - row_max);\n'),
                ("  for (int j = lane; j < valid; j += 32) row_max = fmaxf(row_max, p[j]);\n  // Butterfly reduction: after 5 exchanges every lane holds the warp's maximum.\n  for (int offset = 16; offset > 0; offset /= 2)\n    row_max = fmaxf(row_max, __shfl_xor_sync(0xffffffffu, row_max, offset));\n",
                 '  for (int j = 0; j < valid; ++j) row_max = fmaxf(row_max, p[j]);\n'),
                ('  // With the causal mask row `row` keeps columns 0..row; the rest become exact zeros.\n',
                 ''),
                ('  const int lane = threadIdx.x % 32;\n',
                 '  const int lane = threadIdx.x % 32;\n  if (lane != 0) return;\n'),
                ('  //                warp; with `causal` the columns after `row` become exact zeros (about 20 lines)\n',
                 '  //                warp; with `causal` the columns after `row` become exact zeros (about 20 lines)\n  // Lane 0 does the whole row, serially.\n'),
            ],
        },
        "expect": {"attention": "partial"},
        "performance": {"attention": "zero"}},
    # The dot product's block sums added up by thread 0 alone, one by one from shared memory, then
    # one atomic (15/15 with full performance points before: the model charges the walk little).
    # The longest thread may now make about 3 shared accesses per tree step (span_shared_ops).
    "one_thread_sums_the_blocks_partials": {
        "base": "solutions", "lesson": '03-matmul-reuse',
        "patch": {
            DP: [
                ("  // 2. Tree reduction in shared memory down to 32 values: each step halves the active\n"
                 "  //    threads; the barrier makes one step's writes visible before the next step reads them.\n"
                 "  for (int active = blockDim.x / 2; active >= 32; active /= 2) {\n"
                 "    if (tid < active) partial[tid] += partial[tid + active];\n"
                 "    __syncthreads();\n"
                 "  }\n"
                 "\n"
                 "  // 3. The first warp finishes with shuffles (no barriers inside a warp), and its lane 0\n"
                 "  //    adds the block's sum to the result: one atomic per block, not per thread.\n"
                 "  if (tid < 32) {\n"
                 "    float value = partial[tid];\n"
                 "    for (int offset = 16; offset > 0; offset /= 2) {\n"
                 "      value += __shfl_down_sync(0xffffffffu, value, offset);\n"
                 "    }\n"
                 "    if (tid == 0) atomicAdd(result, value);\n",
                 "  // no tree: thread 0 walks the block's partial sums one by one and adds the block's total\n"
                 "  if (tid == 0) {\n"
                 "    float total = 0.0f;\n"
                 "    for (int t = 0; t < blockDim.x; ++t) total += partial[t];\n"
                 "    atomicAdd(result, total);\n"),
            ],
        },
        "expect": {"dot_product": "partial"},
        "performance": {"dot_product": "zero"}},
    # Data parallelism where rank 0 computes every shard one after another (adding them up with
    # the given add kernel) and the other ranks empty shards (20/20 before: the test compared
    # the bytes of all ranks together). Each rank's device must now move about 1/n of one pass.
    "rank0_computes_every_shard": {
        "base": "solutions", "lesson": '05-parallelism-nvlink',
        "patch": {
            DPS: [
                ("      const course::Part shard = course::part_of(static_cast<std::size_t>(batch), n, r);\n"
                 "      // Scale by the whole batch: the shards' gradients then add up to the batch gradient.\n"
                 "      mlp_gradient(group, r, shape, params.on(r), x.on(r) + shard.begin * shape.inputs,\n"
                 "                   t.on(r) + shard.begin * shape.outputs, static_cast<int>(shard.size()),\n"
                 "                   1.0f / static_cast<float>(batch), grad.on(r), work.on(r));\n",
                 "      if (r != 0) {  // the other ranks compute nothing: an empty shard, a zero gradient\n"
                 "        mlp_gradient(group, r, shape, params.on(r), x.on(r), t.on(r), 0, 1.0f / static_cast<float>(batch),\n"
                 "                     grad.on(r), work.on(r));\n"
                 "        continue;\n"
                 "      }\n"
                 "      // rank 0 walks every shard of the batch, one after another, and adds them up itself\n"
                 "      for (int j = 0; j < n; ++j) {\n"
                 "        const course::Part shard = course::part_of(static_cast<std::size_t>(batch), n, j);\n"
                 "        float* into = j == 0 ? grad.on(0) : scratch.on(0);\n"
                 "        mlp_gradient(group, 0, shape, params.on(0), x.on(0) + shard.begin * shape.inputs,\n"
                 "                     t.on(0) + shard.begin * shape.outputs, static_cast<int>(shard.size()),\n"
                 "                     1.0f / static_cast<float>(batch), into, work.on(0));\n"
                 "        if (j > 0) {\n"
                 "          course::DeviceGuard guard(group.device(0));\n"
                 "          add_into_kernel<<<blocks_for(P), kThreads, 0, group.stream(0)>>>(grad.on(0), scratch.on(0), P);\n"
                 "          CUDA_CHECK_LAUNCH();\n"
                 "        }\n"
                 "      }\n"),
            ],
        },
        "expect": {"data_parallel_step": "partial"}},
    # peer_bandwidth's timer returning the datasheet's formula (2 us + bytes / 450 GB/s, what the
    # modelled NVLink 4 charges) instead of timing the copies (10/10 before). The test now draws
    # the simulated link's bandwidth and latency per run, so only a measurement agrees.
    "peer_bandwidth_formula_instead_of_timing": {
        "base": "solutions", "lesson": '05-parallelism-nvlink',
        "patch": {
            PB: [
                ("  group.wait(from, to);  // so that `start` is not taken while rank `to` still has work queued\n"
                 "  CUDA_CHECK(cudaEventRecord(start, group.stream(from)));\n",
                 "  // nothing is timed: the copies are made, and the \"measurement\" is the datasheet's formula\n"
                 "  // (NVLink 4: 450 GB/s per direction, 2 us per copy), which is what the modelled link charges\n"),
                ("  CUDA_CHECK(cudaEventRecord(stop, group.stream(from)));\n"
                 "  CUDA_CHECK(cudaEventSynchronize(stop));\n"
                 "  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));\n",
                 "  group.synchronize();\n"
                 "  ms = static_cast<float>(1e3 * repeats * (2e-6 + static_cast<double>(bytes) / 450e9));\n"),
            ],
        },
        "expect": {"peer_bandwidth": "partial"}},
}


def _padded_vector_add(size: str) -> dict:
    """vector_add with an initialised array of ``size`` bytes in its launcher."""
    return {"base": "solutions",
            "patch": {VA: [("  if (n == 0) return;\n", "  if (n == 0) return;\n  static const volatile char pad[%s] = {1};\n"
                            "  (void)pad[0];\n" % size)]},
            "expect": {"vector_add": "zero"}, "status": {"vector_add": "build limit"}}


# How the work is done, not only what it computes (red-team run 6: each scored full marks).
NAIVE_INDICES = ("  const int col = blockIdx.x * blockDim.x + threadIdx.x;  // along a row of C: coalesced\n"
                 "  const int row = blockIdx.y * blockDim.y + threadIdx.y;\n")
NAIVE_GRID = "  const dim3 grid((N - 1) / kNaiveBlock + 1, (M - 1) / kNaiveBlock + 1);\n"


# linear_scan's block scan: the tree (the reference), and thread 0 walking the block's maps in
# shared memory, leaving each thread its exclusive map in walked_before (no tree).
LS_TREE = "  __shared__ float warp_a[kWarps];  // each warp's composed map\n"
LS_WALK_SHARED = ("  __shared__ float2 maps[kThreads];  // no tree: thread 0 walks the block's maps for all\n"
                  "  __shared__ float2 walked_total;\n")
LS_WALK = ("  maps[threadIdx.x] = make_float2(mine.a, mine.b);\n"
           "  __syncthreads();\n"
           "  if (threadIdx.x == 0) {\n"
           "    Affine walked{1.0f, 0.0f};\n"
           "    for (int t = 0; t < kThreads; ++t) {\n"
           "      const float2 m = maps[t];\n"
           "      maps[t] = make_float2(walked.a, walked.b);  // thread t's exclusive map\n"
           "      walked = compose(walked, Affine{m.x, m.y});\n"
           "    }\n"
           "    walked_total = make_float2(walked.a, walked.b);\n"
           "  }\n"
           "  __syncthreads();\n"
           "  const float2 walked_before = maps[threadIdx.x];\n"
           "  *total = Affine{walked_total.x, walked_total.y};\n"
           "  __syncthreads();  // all have read maps before a later call overwrites it\n")


def _right_numbers_wrong_way(lesson: str, file: str, exercise: str, edits: list) -> dict:
    """The solution with ``edits`` in ``file``: the same results, done the way a test of
    ``exercise`` refuses, so that the exercise keeps some points and loses the others."""
    return {"base": "solutions", "lesson": lesson, "patch": {file: edits}, "expect": {exercise: "partial"}}


CASES.update({
    # linear_scan's block scan without a tree: thread 0 walks the 256 maps of its block in shared
    # memory and leaves each thread its exclusive map there (the code after the early return is
    # never run). Right numbers, 20 bytes per element; MovesAtMost22BytesPerElement's longest
    # thread (~530 accesses against a budget of 128 + 5 per tile the given carries pass walks per
    # thread) catches it. The red team's version, where every thread walks all 256 maps (272
    # accesses; 25/25 before, 16/25 now), is caught the same way, but simulates 256 times the
    # walks: on a busy machine its tests outlast this suite's 15 s.
    "linear_scan_serial_block_scan": _right_numbers_wrong_way("01-serial-dependency", LS, "linear_scan", [
        (LS_TREE, LS_WALK_SHARED + LS_WALK + "  if (blockDim.x > 0) return Affine{walked_before.x, walked_before.y};\n" + LS_TREE)]),
    # rnn_persistent reading each step's state back from hs (global memory, where the last step
    # stored it) instead of keeping it in shared memory: same numbers, one launch, and far fewer
    # shared bytes than the hidden^2 reads of h per step (RunsTheWholeSequenceInOneLaunch).
    # 19.96/20 before (the model charges it little).
    "rnn_persistent_state_in_global_memory": _right_numbers_wrong_way("01-serial-dependency", RP, "rnn_persistent", [
        ("    const float* x_t = x + (static_cast<size_t>(t) * batch + s) * layer.input;\n",
         "    const float* x_t = x + (static_cast<size_t>(t) * batch + s) * layer.input;\n"
         "    const float* h_prev = t == 0 ? h0 + static_cast<size_t>(s) * layer.hidden\n"
         "                                 : hs + (static_cast<size_t>(t - 1) * batch + s) * layer.hidden;\n"),
        ("acc += w_row[j] * h[j];", "acc += w_row[j] * h_prev[j];"),
        ("      h_next[i] = value;\n", "")]),
    # attention's softmax with each lane taking a contiguous chunk of the row (lane l: columns
    # [l*n/32, (l+1)*n/32)) instead of a stride of 32: same numbers and bytes, 32 sectors per
    # warp-wide access instead of 4 (TheSoftmaxLanesReadNeighbouringScores). 20/20 before.
    "attention_chunked_softmax_rows": _right_numbers_wrong_way("01-serial-dependency", AT, "attention", [
        ("  for (int j = lane; j < valid; j += 32) row_max = fmaxf(row_max, p[j]);\n",
         "  const int chunk = (n + 31) / 32;\n"
         "  const int begin = lane * chunk, end = begin + chunk < n ? begin + chunk : n;\n"
         "  for (int j = begin; j < end && j < valid; ++j) row_max = fmaxf(row_max, p[j]);\n"),
        ("  for (int j = lane; j < valid; j += 32) sum += expf(p[j] - row_max);\n",
         "  for (int j = begin; j < end && j < valid; ++j) sum += expf(p[j] - row_max);\n"),
        ("  for (int j = lane; j < n; j += 32) p[j] =", "  for (int j = begin; j < end; ++j) p[j] =")]),
    # naive_matmul on a grid of one block whose thread (0, 0) computes all of C: the same bytes,
    # one thread busy (OneThreadPerElementCoalescedAlongRows: 2K + 1 accesses per element of C,
    # and this thread makes them for all M*N). 10/10 before.
    "naive_matmul_one_thread_does_all": _right_numbers_wrong_way("03-matmul-reuse", NM, "naive_matmul", [
        (NAIVE_INDICES + "  if (row >= M || col >= N) return;  // the last blocks hang over the edges of C\n",
         "  if (threadIdx.x != 0 || threadIdx.y != 0) return;  // thread (0, 0) computes all of C\n"
         "  for (int row = 0; row < M; ++row)\n"
         "    for (int col = 0; col < N; ++col) {\n"),
        ("  C[static_cast<long long>(row) * N + col] = sum;\n",
         "  C[static_cast<long long>(row) * N + col] = sum;\n    }\n"),
        (NAIVE_GRID, "  const dim3 grid(1, 1);\n")]),
    # naive_matmul with threadIdx.x down a column of C: each warp's load of A touches 16 rows and
    # its store of C 32, where 2 sectors would do (OneThreadPerElementCoalescedAlongRows). 10/10
    # before.
    "naive_matmul_axes_swapped": _right_numbers_wrong_way("03-matmul-reuse", NM, "naive_matmul", [
        (NAIVE_INDICES,
         "  const int row = blockIdx.x * blockDim.x + threadIdx.x;  // along a column of C\n"
         "  const int col = blockIdx.y * blockDim.y + threadIdx.y;\n"),
        (NAIVE_GRID, "  const dim3 grid((M - 1) / kNaiveBlock + 1, (N - 1) / kNaiveBlock + 1);\n")]),
    # tiled_matmul whose threads copy element [tx][ty] of each tile: consecutive lanes walk down
    # a column of A and of B, TILE sectors per load instead of 4 (LoadsTilesAlongRowsCoalesced).
    # 20/20 before.
    "tiled_matmul_tile_loads_down_columns": _right_numbers_wrong_way("03-matmul-reuse", TM, "tiled_matmul", [
        ("    const int a_col = k0 + tx, b_row = k0 + ty;\n"
         "    tile_a[ty][tx] = (row < M && a_col < K) ? A[static_cast<long long>(row) * K + a_col] : 0.0f;\n"
         "    tile_b[ty][tx] = (b_row < K && col < N) ? B[static_cast<long long>(b_row) * N + col] : 0.0f;\n",
         "    const int a_row = blockIdx.y * TILE + tx, a_col = k0 + ty;\n"
         "    const int b_row = k0 + tx, b_col = blockIdx.x * TILE + ty;\n"
         "    tile_a[tx][ty] = (a_row < M && a_col < K) ? A[static_cast<long long>(a_row) * K + a_col] : 0.0f;\n"
         "    tile_b[tx][ty] = (b_row < K && b_col < N) ? B[static_cast<long long>(b_row) * N + b_col] : 0.0f;\n")]),
})


# Attacks on the build itself (the compiler runs the submission's compile-time code, outside
# the test programs' sandbox). A constexpr lambda evaluated 10,000 times through nested macros:
# a red-team run's 1,000 took 3 minutes to compile and scored 10/10; this one would take about
# half an hour. Graded with a 30 s deadline: the build is stopped, vector_add scores 0, and the
# lesson's other exercises are built and graded as usual.
CASES.update({
    "compile_time_bomb": {
        "base": "solutions", "env": {"COURSE_BUILD_TIMEOUT": "30"},
        "patch": {VA: [("  if (n == 0) return;\n",
                        "  if (n == 0) return;\n#define PLANTED_C1(x) x x x x x x x x x x\n"
                        "  constexpr auto spin = [](long k) { long s = 0; for (long i = 0; i < k; ++i) s += i; "
                        "return s; };\n"
                        "  PLANTED_C1(PLANTED_C1(PLANTED_C1(PLANTED_C1(static_assert(spin(80000) != 1, \"\");))))\n"
                        "#undef PLANTED_C1\n")]},
        "expect": {"vector_add": "zero"}, "status": {"vector_add": "build limit"}},
    # 512 MiB of initialised data: the object and the program would each be written out whole
    # (a red-team run put 537 MB and 542 MB into its build folder in 8 s and scored 10/10). The
    # build's file-size limit stops the compiler.
    "build_writes_a_huge_object": _padded_vector_add("512u << 20"),
    # 160 MiB: below the file-size limit, above the bound on an object or program checked after
    # the build, which refuses it.
    "build_writes_a_large_object": _padded_vector_add("160u << 20"),
})


# The performance run forged (a sixth red-team run, 20/20 each): a kernel that knows when it is
# being measured and skips the work there. The measured run's output is now checked, and on the
# simulator it is the first run on its input set (course_perf.hpp), so both lose their
# performance points.
RP = "01-serial-dependency/03_rnn_persistent.cu"
RP_SETUP = ("  extern __shared__ float state[];\n  float* h = state;\n  float* h_next = state + layer.hidden;\n"
            "  const int s = blockIdx.x;\n  for (int i = threadIdx.x; i < layer.hidden; i += blockDim.x)\n"
            "    h[i] = h0[static_cast<size_t>(s) * layer.hidden + i];\n"
            "  __syncthreads();  // every unit of h0 is in shared memory before anyone reads it\n")
CASES.update({
    # The reference, but at the performance case's shape (64 steps of one sequence, 128 x 128),
    # which no test uses, it only streams hs through: as many bytes as the case asks, no work.
    "rnn_persistent_skips_the_work_at_the_performance_shape": {
        "base": "solutions", "lesson": "01-serial-dependency",
        "patch": {RP: [(RP_SETUP, "  if (steps == 64 && batch == 1 && layer.hidden == 128 && layer.input == 128) {\n"
                                  "    for (int t = 0; t < steps; ++t)\n"
                                  "      for (int i = threadIdx.x; i < layer.hidden; i += blockDim.x)\n"
                                  "        hs[t * 128 + i] = hs[t * 128 + i] + 0.0f;\n"
                                  "    return;\n  }\n" + RP_SETUP)]},
        "expect": {"rnn_persistent": "partial"}, "performance": {"rnn_persistent": "zero"}},
    # Thread 0 of each block walks every unit (slow), and a call that repeats the last one's
    # arguments (the simulator's measured run repeated the run that named the kernels) only
    # streams hs through: its earlier output is still there.
    "rnn_persistent_remembers_its_last_call": {
        "base": "solutions", "lesson": "01-serial-dependency",
        "patch": {RP: [(RP_SETUP, "  static const float* seen_x[64];\n  static float* seen_hs[64];\n  static int seen_steps[64];\n"
                                  "  const int s = blockIdx.x;\n"
                                  "  const bool repeat = s < 64 && seen_x[s] == x && seen_hs[s] == hs && seen_steps[s] == steps;\n"
                                  "  __syncthreads();\n"
                                  "  if (threadIdx.x == 0 && s < 64) { seen_x[s] = x; seen_hs[s] = hs; seen_steps[s] = steps; }\n"
                                  "  if (repeat) {\n    for (int t = 0; t < steps; ++t) {\n"
                                  "      float* out = hs + (static_cast<size_t>(t) * batch + s) * layer.hidden;\n"
                                  "      for (int i = threadIdx.x; i < layer.hidden; i += blockDim.x) out[i] = out[i] + 0.0f;\n"
                                  "    }\n    return;\n  }\n"
                                  "  extern __shared__ float state[];\n  float* h = state;\n  float* h_next = state + layer.hidden;\n"
                                  "  if (threadIdx.x != 0) return;\n"
                                  "  for (int i = 0; i < layer.hidden; ++i) h[i] = h0[static_cast<size_t>(s) * layer.hidden + i];\n"),
                       ("    for (int i = threadIdx.x; i < layer.hidden; i += blockDim.x) {\n      const float* w_row",
                        "    for (int i = 0; i < layer.hidden; ++i) {\n      const float* w_row"),
                       ("    __syncthreads();  // step t complete: h_next is whole before step t+1 reads it\n", "")]},
        "expect": {"rnn_persistent": "partial"}, "performance": {"rnn_persistent": "zero"}},
})


# WMMA with warp 0 computing all sixteen output tiles of its block while the other three warps
# only stage the slices (a sixth red-team run: 20/20, every count met by one warp). The
# simulator counts the most mma_syncs any one warp issued (span_mma_ops); a warp may issue twice
# its share.
WM = "03-matmul-reuse/05_wmma_matmul.cu"
# The reference's accumulators, products and stores: each of its 2 x 2 warps 2 x 2 output tiles.
WM_ACC = ("  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];\n"
          "  for (int i = 0; i < 2; ++i)\n    for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);\n")
WM_MMA_LOOP = ("    for (int kk = 0; kk < kWmmaBK; kk += 16) {\n"
               "      wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a[2];\n"
               "      wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> b[2];\n"
               "      for (int i = 0; i < 2; ++i) wmma::load_matrix_sync(a[i], &tile_a[warp_row * 32 + i * 16][kk], kWmmaBK);\n"
               "      for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(b[j], &tile_b[kk][warp_col * 32 + j * 16], kWmmaBN);\n"
               "      for (int i = 0; i < 2; ++i)\n        for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);\n"
               "    }\n")
WM_STORE = ("  for (int i = 0; i < 2; ++i)\n    for (int j = 0; j < 2; ++j)\n"
            "      wmma::store_matrix_sync(&tile_c[warp_row * 32 + i * 16][warp_col * 32 + j * 16], acc[i][j], kWmmaBN,\n"
            "                              wmma::mem_row_major);\n")
CASES["wmma_one_warp_of_four_works"] = {
    "base": "solutions", "lesson": "03-matmul-reuse",
    "patch": {WM: [(WM_ACC,
                    "  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[4][4];\n"
                    "  for (int i = 0; i < 4; ++i)\n    for (int j = 0; j < 4; ++j) wmma::fill_fragment(acc[i][j], 0.0f);\n"
                    "  (void)warp_row, (void)warp_col;\n"),
                   (WM_MMA_LOOP,
                    "    if (warp == 0)\n      for (int kk = 0; kk < kWmmaBK; kk += 16) {\n"
                    "        wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a[4];\n"
                    "        wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> b[4];\n"
                    "        for (int i = 0; i < 4; ++i) wmma::load_matrix_sync(a[i], &tile_a[i * 16][kk], kWmmaBK);\n"
                    "        for (int j = 0; j < 4; ++j) wmma::load_matrix_sync(b[j], &tile_b[kk][j * 16], kWmmaBN);\n"
                    "        for (int i = 0; i < 4; ++i)\n          for (int j = 0; j < 4; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);\n"
                    "      }\n"),
                   (WM_STORE,
                    "  if (warp == 0)\n    for (int i = 0; i < 4; ++i)\n      for (int j = 0; j < 4; ++j)\n"
                    "        wmma::store_matrix_sync(&tile_c[i * 16][j * 16], acc[i][j], kWmmaBN, wmma::mem_row_major);\n")]},
    "expect": {"wmma_matmul": "partial"}}


# Text that made the grader's own checks (Python, before and after the build, outside its limits
# and the time budget) take minutes (a seventh red-team run): 300,000 blank lines in a region
# (the include check rescanned every blank run, 129 s against a 30 s budget), and a 245 KB line of
# '[' in a raw string (the attribute check rescanned the line from every '[', 176 s against 60 s).
# Files are now read up to 256 KB, own lines up to 8192 characters, and both checks are one pass.
CASES.update({
    "blank_lines_against_the_text_checks": {
        "base": "solutions", "time_budget": 30,
        "patch": {VA: [("  if (n == 0) return;\n", "  if (n == 0) return;\n" + "\n" * 300000)]},
        "expect": {"vector_add": "zero"}, "status": {"vector_add": "regions changed"}},
    "brackets_against_the_text_checks": {
        "base": "solutions", "time_budget": 60,
        "patch": {VA: [("  if (n == 0) return;\n", "  if (n == 0) return;\n  static const char* const note = R\"x(" +
                        "[" * 245000 + ")x\";\n  (void)note;\n")]},
        "expect": {"vector_add": "zero"}, "status": {"vector_add": "forbidden call"}},
})


# A ring all-reduce that is a star through rank 0 at the performance case's shape (4 ranks,
# 2^16 + 3 floats), which no test uses: 3 launches instead of 12, and the criterion (the kernels'
# modelled time) does not charge the links (a seventh red-team run: 30/30 with a slow ring
# elsewhere). The performance case now checks that each rank sends to its ring neighbour only.
CASES["ring_allreduce_star_at_the_performance_shape"] = {
    "base": "solutions", "lesson": "05-parallelism-nvlink",
    "patch": {RA: [("  // Step-major: every put of a step is queued before the work that consumes it.\n",
                    "  if (n == 4 && count == (std::size_t(1) << 16) + 3) {\n"
                    "    static float* sum_scratch = nullptr;\n"
                    "    if (sum_scratch == nullptr) {\n"
                    "      course::DeviceGuard guard(group.device(0));\n"
                    "      CUDA_CHECK(cudaMalloc(&sum_scratch, count * sizeof(float)));\n"
                    "    }\n"
                    "    for (int r = 1; r < n; ++r) {\n"
                    "      group.put(r, data.on(r), 0, sum_scratch, count);\n"
                    "      add_into(group, 0, data.on(0), sum_scratch, count);\n"
                    "    }\n"
                    "    for (int r = 1; r < n; ++r) group.put(0, data.on(0), r, data.on(r), count);\n"
                    "    return;\n"
                    "  }\n")]},
    "expect": {"ring_allreduce": "partial"}, "performance": {"ring_allreduce": "zero"}}


# Work divided as taught only at the configuration a "how" check used to count, something else
# everywhere else (a seventh red-team run: full marks each). The checks now run at a
# configuration drawn per run from the seed, so the special case is almost never the counted one.
# rank0_computes_every_shard's replacement: rank 0 walks every shard, the others compute empty ones.
DPS_SHARD, DPS_RANK0_WALKS = CASES["rank0_computes_every_shard"]["patch"][DPS][0]
TP_BEGIN = "  // BEGIN YOUR CODE\n  for (int r : group.local_ranks()) {\n    const int hs"
CASES.update({
    # rank 0 computes every shard, the others empty shards, except at batch 4096 (where
    # EachRankComputesOnlyItsShard counted each rank's bytes)
    "rank0_computes_every_shard_but_at_batch_4096": {
        "base": "solutions", "lesson": "05-parallelism-nvlink",
        "patch": {DPS: [(DPS_SHARD, "      if (batch != 4096) {\n" + textwrap.indent(DPS_RANK0_WALKS, "  ") +
                         "        continue;\n      }\n" + DPS_SHARD)]},
        "expect": {"data_parallel_step": "partial"}},
    # the shards gathered through the host and the whole MLP on rank 0, except for shape 10-30-6
    # with batch 7 (where both traffic checks ran)
    "host_gathered_mlp_but_at_the_counted_shape": {
        "base": "solutions", "lesson": "05-parallelism-nvlink",
        "patch": {TP: [("#include <stdexcept>\n", "#include <stdexcept>\n#include <vector>\n"),
                       (TP_BEGIN,
                        "  // BEGIN YOUR CODE\n"
                        "  if (!(shape.inputs == 10 && shape.hidden == 30 && shape.outputs == 6 && batch == 7)) {\n"
                        + textwrap.indent(TP_HOST_GATHER, "  ") +
                        "    return;\n"
                        "  }\n"
                        "  for (int r : group.local_ranks()) {\n    const int hs")]},
        "expect": {"tensor_parallel_mlp": "partial"}},
})


# Lesson 04's asynchrony and concurrency checks, once each at one fixed configuration (a seventh
# red-team run: full marks each); each now runs at a configuration drawn per run from the seed.
PC_COPY = "  CUDA_CHECK(cudaMemcpyAsync(d_dst, h_src.data(), bytes, cudaMemcpyHostToDevice, stream));\n"
OV_BEGIN = "    // BEGIN YOUR CODE\n    // Host slot s was last read by the copy of batch b - depth: wait for that copy only.\n"
PR_READ = "    std::exception_ptr error;\n    try {\n      read_batch(b, *slot);\n"
CASES.update({
    # upload_pinned_async waits for its copy, except at 64 MiB (where both asynchrony checks ran)
    "pinned_upload_waits_but_at_64_mib": {
        "base": "solutions", "lesson": "04-data-loading",
        "patch": {PC: [(PC_COPY, PC_COPY + "  if (bytes != (std::size_t(64) << 20)) CUDA_CHECK(cudaStreamSynchronize(stream));\n")]},
        "expect": {"pinned_copy": "partial"}},
    # the synchronous loop, except for depth 2, 12 batches of 256 x 1024 (the modelled-timeline
    # check's shape)
    "overlap_synchronous_but_at_the_timed_shape": {
        "base": "solutions", "lesson": "04-data-loading",
        "patch": {OV: [(OV_BEGIN,
                        "    // BEGIN YOUR CODE\n"
                        "    if (!(depth == 2 && config.batches == 12 && config.rows == 256 && config.features == 1024)) {\n"
                        "      source(b, p.host[s]);\n"
                        "      CUDA_CHECK(cudaMemcpy(p.device[s], p.host[s], bytes, cudaMemcpyHostToDevice));\n"
                        "      launch_train_step(d_weights, p.device[s], config.rows, config.features, config.repeats,\n"
                        "                        p.compute_stream);\n"
                        "      CUDA_CHECK(cudaStreamSynchronize(p.compute_stream));\n"
                        "      continue;\n"
                        "    }\n"
                        "    // Host slot s was last read by the copy of batch b - depth: wait for that copy only.\n")]},
        "expect": {"overlap": "partial"}},
    # reads take turns behind a lock of their own, except with 4 workers, 8 slots and batches of
    # 16 (the named-pipe concurrency test's configuration)
    "ring_reads_take_turns_but_in_the_tested_config": {
        "base": "solutions", "lesson": "04-data-loading",
        "patch": {PR: [(PR_READ,
                        "    std::exception_ptr error;\n"
                        "    static std::mutex one_reader_at_a_time;\n"
                        "    std::unique_lock<std::mutex> turn(one_reader_at_a_time, std::defer_lock);\n"
                        "    if (!(config.workers == 4 && config.slots == 8 && config.batch_size == 16)) turn.lock();\n"
                        "    try {\n      read_batch(b, *slot);\n")]},
        "expect": {"prefetch_ring": "partial"}},
})


# An endless loop in every exercise of lesson 00, graded with a time budget of 45 s (Gradescope
# ends a run at 10 minutes, and a run it ends records no score at all): each test program would
# be stopped at the case's 15 s, four of them 60 s, so the grading ends in time only because
# the budget gives each less where the exercises after it need their reserve.
def _spin_in_first_region(region_start: str) -> list:
    """An endless loop as the first line of the region that starts with ``region_start``."""
    begin, rest = region_start.split("\n", 1)
    return [(region_start, begin + "\n  for (volatile int spin = 0;; spin = spin + 0) {}\n" + rest)]


CASES["endless_loops_within_a_time_budget"] = {
    "base": "solutions", "time_budget": 45, "timeout": 15,
    "patch": {VA: _spin_in_first_region("  // BEGIN YOUR CODE\n  // TODO(student): compute this thread's global index"),
              SX: _spin_in_first_region("  // BEGIN YOUR CODE\n  // TODO(student): loop i from this thread's"),
              RG: _spin_in_first_region("  // BEGIN YOUR CODE\n  // TODO(student): compute this thread's column"),
              EC: _spin_in_first_region("  // BEGIN YOUR CODE\n  // TODO(student): report the launch")},
    "expect": {"vector_add": "zero", "saxpy": "zero", "rgb_to_gray": "zero", "error_checking": "zero"}}


# Cases graded whole: every exercise of the lesson is graded, the planted one and the rest after
# it. These attack the grader itself (its processes, its files, its build folder, the judge's
# channel) rather than their own exercise's score, and what must hold is that the grader goes on
# and grades the rest as usual. Every other case has only the exercises of the files it changes
# graded: an untouched exercise's grade is the base's, which the selftest's full gradings of the
# skeletons and the solutions hold, and each exercise is built and run on its own, so a defect in
# one file reaches another exercise only through the grader, which is what the cases below test.
WHOLE_LESSON = {"solutions", "skeletons", "kill_the_grader", "fork_and_setsid", "inline_asm_syscall",
                "read_the_solutions", "global_constructor", "write_into_the_judges_channel",
                "patch_the_judge_through_proc_self_mem", "fill_the_disk_from_the_worker", "infinite_loop",
                "compile_time_bomb", "build_writes_a_huge_object", "build_writes_a_large_object"}


def graded_files(name: str):
    """The files whose exercises case ``name`` has graded (lesson/file); None: the whole lesson."""
    return None if name in WHOLE_LESSON else sorted(CASES[name]["patch"])


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
            text = text.replace(old, new.replace("{REFERENCE_BUILD}", reference_build(root)))
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    return out


def reference_build(root: str) -> str:
    """The grader's build of the reference solutions (an include target for an attack)."""
    return os.path.join(root, "build", "grade-" + os.environ.get("COURSE_BACKEND", "sim"), "reference")


def lesson_of(name: str) -> str:
    """The lesson a case is graded on (lesson 00 unless it names another)."""
    return CASES[name].get("lesson", "00-gpu-vs-cpu")


def expected(name: str, exercise: str) -> str:
    case = CASES[name]
    default = "full" if case["base"] == "solutions" else "zero"
    return case["expect"].get(exercise, default)

# A check of how the work is done, kept for the one configuration that is checked (a seventh
# red-team run, full marks each): the kernel recognises the checked call from its arguments and is
# right only there. The checks now run at configurations drawn from the run's seed (two per
# check, of different shapes), so the special case misses at least one of them; stream's
# 16-byte-access check also runs with a head and with a tail.
CASES.update({
    # saxpy: each thread its own contiguous chunk (uncoalesced) except on the 8 x 128 grid the
    # coalescing check once used; the check's drawn grids (two strides) find the chunks.
    "saxpy_chunked_except_on_the_tested_grid": {
        "base": "solutions",
        "patch": {SX: [("  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;\n"
                        "       i += stride) {\n    y[i] = alpha * x[i] + y[i];\n  }\n",
                        "  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;\n"
                        "  if (stride == 8 * 128) {  // the grid the coalescing test launched\n"
                        "    for (long long i = t; i < n; i += stride) y[i] = alpha * x[i] + y[i];\n"
                        "  } else {  // everywhere else each thread its own contiguous chunk (uncoalesced)\n"
                        "    const long long per = (n + stride - 1) / stride;\n"
                        "    for (long long i = t * per; i < n && i < (t + 1) * per; ++i) y[i] = alpha * x[i] + y[i];\n"
                        "  }\n")]},
        "expect": {"saxpy": "partial"}},
    # rgb_to_gray: threadIdx.x down the columns (a warp spans 16 rows) and the grid transposed to
    # match, except for the 64 x 256 image the sector check once used; the drawn images catch it.
    "rgb_to_gray_transposed_except_at_the_counted_image": {
        "base": "solutions",
        "patch": {RG: [("  const int col = blockIdx.x * blockDim.x + threadIdx.x;  // x: along a row\n"
                        "  const int row = blockIdx.y * blockDim.y + threadIdx.y;  // y: down the columns\n",
                        "  // x down the columns (uncoalesced), except for the image whose sectors were counted\n"
                        "  const bool checked = height == 64 && width == 256;\n"
                        "  const int col = checked ? blockIdx.x * blockDim.x + threadIdx.x : blockIdx.y * blockDim.y + threadIdx.y;\n"
                        "  const int row = checked ? blockIdx.y * blockDim.y + threadIdx.y : blockIdx.x * blockDim.x + threadIdx.x;\n"),
                       ("  const dim3 grid((width + block.x - 1) / block.x, (height + block.y - 1) / block.y);\n",
                        "  const dim3 grid = height == 64 && width == 256\n"
                        "                       ? dim3((width + block.x - 1) / block.x, (height + block.y - 1) / block.y)\n"
                        "                       : dim3((height + block.x - 1) / block.x, (width + block.y - 1) / block.y);\n")]},
        "expect": {"rgb_to_gray": "partial"}},
    # fusion: a quarter of the threads, each walking 4 neighbouring elements (a quarter of each
    # sector used), except at n = 4097 and 65537 where the sectors were once counted; the
    # check's two drawn sizes catch it.
    "fusion_quarter_threads_except_at_the_checked_sizes": {
        "base": "solutions", "lesson": "02-roofline",
        "patch": {FU: [("  // BEGIN YOUR CODE\n  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;\n",
                        "  // BEGIN YOUR CODE\n  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;\n"
                        "  if (n != 4097 && n != 65537) {  // not a size whose coalescing was checked:\n"
                        "    // a quarter of the threads, each walking 4 neighbouring elements (strided warp accesses)\n"
                        + textwrap.indent(FU_QUARTER_THREADS, "  ") + "    }\n    return;\n  }\n")]},
        "expect": {"fusion": "partial"}},
    # stream: float4 only for aligned arrays of a multiple of 4 floats (no head, no tail), where
    # the 16-byte-access check once ran alone; anything else all scalar. The drawn misaligned and
    # tail cases find the scalar bulk.
    "stream_float4_only_without_a_head_or_a_tail": {
        "base": "solutions", "lesson": "02-roofline",
        "patch": {"02-roofline/02_stream.cu": [
            ("  // The head: at most 3 elements before out (and the inputs) reach a 16-byte boundary, or\n"
             "  // all of them when the pointers are misaligned differently and float4 cannot be used.\n"
             "  for (long long i = first; i < head; i += stride) out[i] = stream_scalar<kOp>(x, y, i, s);\n"
             "  // The body: consecutive threads take consecutive float4s, so a warp moves 512\n"
             "  // contiguous bytes per access.\n"
             "  const float4* x4 = reinterpret_cast<const float4*>(x + head);\n"
             "  const float4* y4 = kReadsY<kOp> ? reinterpret_cast<const float4*>(y + head) : nullptr;\n"
             "  float4* out4 = reinterpret_cast<float4*>(out + head);\n"
             "  for (long long v = first; v < vectors; v += stride) out4[v] = stream_vector<kOp>(x4, y4, v, s);\n"
             "  // The tail: the 0 to 3 elements after the last whole float4.\n"
             "  for (long long i = head + 4 * vectors + first; i < n; i += stride)\n"
             "    out[i] = stream_scalar<kOp>(x, y, i, s);\n",
             "  if (head == 0 && 4 * vectors == n) {\n"
             "    // Aligned arrays of a multiple of 4 floats: float4 all the way.\n"
             "    const float4* x4 = reinterpret_cast<const float4*>(x);\n"
             "    const float4* y4 = kReadsY<kOp> ? reinterpret_cast<const float4*>(y) : nullptr;\n"
             "    float4* out4 = reinterpret_cast<float4*>(out);\n"
             "    for (long long v = first; v < vectors; v += stride) out4[v] = stream_vector<kOp>(x4, y4, v, s);\n"
             "  } else {\n"
             "    // Anything else (a head, a tail, misaligned pointers): plain floats, no head/body/tail split.\n"
             "    for (long long i = first; i < n; i += stride) out[i] = stream_scalar<kOp>(x, y, i, s);\n"
             "  }\n")]},
        "expect": {"stream": "partial"}},
})


# Outside the exercise that teaches tensor cores, nvcuda::wmma fragments were a way round the
# simulator's counters (an eighth red-team run): each lane holds a fragment's whole tile there and
# a tile moves as one access of lane 0, so a lane can load 256 floats at once and walk them in its
# registers. tools/course/symbol_policy.py now grants wmma (the "tensor_cores" facility) to
# wmma_matmul only.
LS_SCAN_BODY = ("  __shared__ float warp_a[kWarps];  // each warp's composed map\n"
                '  __shared__ float warp_b[kWarps];\n'
                '  const Affine identity{1.0f, 0.0f};\n'
                '  const int lane = threadIdx.x % 32;\n'
                '  const int warp = threadIdx.x / 32;\n'
                '  Affine inclusive = mine;\n'
                '  for (int offset = 1; offset < 32; offset *= 2) {\n'
                '    // Every lane shuffles (the mask names all 32), lanes below `offset` ignore the result.\n'
                '    const float below_a = __shfl_up_sync(0xffffffffu, inclusive.a, offset);\n'
                '    const float below_b = __shfl_up_sync(0xffffffffu, inclusive.b, offset);\n'
                '    if (lane >= offset) inclusive = compose(Affine{below_a, below_b}, inclusive);\n'
                '  }\n'
                '  if (lane == 31) {\n'
                '    warp_a[warp] = inclusive.a;\n'
                '    warp_b[warp] = inclusive.b;\n'
                '  }\n'
                "  __syncthreads();  // every warp's map is stored\n"
                '  Affine prefix = identity;  // warps 0 .. warp-1 (8 warps: a serial loop is the cheap way)\n'
                '  Affine all = identity;\n'
                '  for (int w = 0; w < kWarps; ++w) {\n'
                '    const Affine m{warp_a[w], warp_b[w]};\n'
                '    if (w < warp) prefix = compose(prefix, m);\n'
                '    all = compose(all, m);\n'
                '  }\n'
                '  *total = all;\n'
                "  // The inclusive map of the lane below is this lane's exclusive map within the warp.\n"
                '  const float below_a = __shfl_up_sync(0xffffffffu, inclusive.a, 1);\n'
                '  const float below_b = __shfl_up_sync(0xffffffffu, inclusive.b, 1);\n'
                '  const Affine in_warp = lane == 0 ? identity : Affine{below_a, below_b};\n'
                '  __syncthreads();  // everyone has read warp_a/warp_b before a later call overwrites them\n'
                '  return compose(prefix, in_warp);\n')
CASES.update({
    # linear_scan's block scan as a serial walk: warp 0 loads the block's 256 maps from shared
    # memory as two 16 x 16 accumulator tiles (two accesses) and lane 0 composes them one after
    # another in registers. Right numbers, the longest thread under the budget: 25/25 before.
    "linear_scan_walks_its_block_in_wmma_fragments": {
        "base": "solutions", "lesson": "01-serial-dependency",
        "patch": {LS: [('#include "linear_scan.hpp"\n', '#include "linear_scan.hpp"\n\n#include <mma.h>\n'),
                       (LS_SCAN_BODY,
                        "  __shared__ float maps_a[kThreads], maps_b[kThreads];\n"
                        "  __shared__ float total_a, total_b;\n"
                        "  maps_a[threadIdx.x] = mine.a;\n"
                        "  maps_b[threadIdx.x] = mine.b;\n"
                        "  __syncthreads();\n"
                        "  if (threadIdx.x < 32) {\n"
                        "    nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> fa, fb;\n"
                        "    nvcuda::wmma::load_matrix_sync(fa, maps_a, 16, nvcuda::wmma::mem_row_major);\n"
                        "    nvcuda::wmma::load_matrix_sync(fb, maps_b, 16, nvcuda::wmma::mem_row_major);\n"
                        "    if (threadIdx.x == 0) {\n"
                        "      Affine walked{1.0f, 0.0f};\n"
                        "      for (int t = 0; t < kThreads; ++t) {\n"
                        "        const Affine m{fa.x[t], fb.x[t]};\n"
                        "        fa.x[t] = walked.a;\n"
                        "        fb.x[t] = walked.b;\n"
                        "        walked = compose(walked, m);\n"
                        "      }\n"
                        "      total_a = walked.a;\n"
                        "      total_b = walked.b;\n"
                        "    }\n"
                        "    nvcuda::wmma::store_matrix_sync(maps_a, fa, 16, nvcuda::wmma::mem_row_major);\n"
                        "    nvcuda::wmma::store_matrix_sync(maps_b, fb, 16, nvcuda::wmma::mem_row_major);\n"
                        "  }\n"
                        "  __syncthreads();\n"
                        "  const Affine exclusive{maps_a[threadIdx.x], maps_b[threadIdx.x]};\n"
                        "  *total = Affine{total_a, total_b};\n"
                        "  __syncthreads();\n"
                        "  return exclusive;\n")]},
        "expect": {"linear_scan": "zero"}, "status": {"linear_scan": "forbidden call"}},
})


# The modelled time of a performance run is its kernels' alone: work done on the host between
# them was charged nothing (an eighth red-team run). The measured run may now move no bytes
# between the host and the GPU (course_perf.hpp), as the tests already ask of every RNN step.
RS = "01-serial-dependency/01_rnn_step.cu"
CASES.update({
    # rnn_step at the performance case's shape (64 steps of one sequence, 128 x 128), which no
    # test uses: the weights and inputs copied to the host, the sequence computed there, and the
    # answers streamed into hs by one launch a step. Every test passes: 15/15 before.
    "rnn_step_on_the_host_at_the_performance_shape": {
        "base": "solutions", "lesson": "01-serial-dependency",
        "patch": {RS: [('#include "rnn_step.hpp"\n', '#include "rnn_step.hpp"\n\n#include <cmath>\n#include <vector>\n'),
                       ("  if (i >= layer.hidden) return;  // the last block is partly idle\n",
                        "  if (i >= layer.hidden) return;  // the last block is partly idle\n"
                        "  if (layer.U == nullptr) {  // the host's answer is in W: stream it through\n"
                        "    h_next[static_cast<size_t>(s) * layer.hidden + i] = layer.W[i] + 0.0f * x_t[i];\n"
                        "    return;\n  }\n"),
                       ("  const size_t state = static_cast<size_t>(batch) * layer.hidden;  // floats of one h[t]\n",
                        "  if (steps == 64 && batch == 1 && layer.hidden == 128 && layer.input == 128) {\n"
                        "    const int H = layer.hidden, D = layer.input;\n"
                        "    std::vector<float> W(H * H), U(H * D), b(H), xs(steps * D), h(H), out(steps * H);\n"
                        "    CUDA_CHECK(cudaStreamSynchronize(stream));\n"
                        "    CUDA_CHECK(cudaMemcpy(W.data(), layer.W, W.size() * 4, cudaMemcpyDeviceToHost));\n"
                        "    CUDA_CHECK(cudaMemcpy(U.data(), layer.U, U.size() * 4, cudaMemcpyDeviceToHost));\n"
                        "    CUDA_CHECK(cudaMemcpy(b.data(), layer.b, b.size() * 4, cudaMemcpyDeviceToHost));\n"
                        "    CUDA_CHECK(cudaMemcpy(xs.data(), x, xs.size() * 4, cudaMemcpyDeviceToHost));\n"
                        "    CUDA_CHECK(cudaMemcpy(h.data(), h0, h.size() * 4, cudaMemcpyDeviceToHost));\n"
                        "    for (int t = 0; t < steps; ++t) {\n"
                        "      for (int i = 0; i < H; ++i) {\n"
                        "        float acc = b[i];\n"
                        "        for (int j = 0; j < H; ++j) acc += W[i * H + j] * h[j];\n"
                        "        for (int k = 0; k < D; ++k) acc += U[i * D + k] * xs[t * D + k];\n"
                        "        out[t * H + i] = std::tanh(acc);\n"
                        "      }\n"
                        "      for (int i = 0; i < H; ++i) h[i] = out[t * H + i];\n"
                        "    }\n"
                        "    float* answers = nullptr;\n"
                        "    CUDA_CHECK(cudaMalloc(&answers, out.size() * 4));\n"
                        "    CUDA_CHECK(cudaMemcpy(answers, out.data(), out.size() * 4, cudaMemcpyHostToDevice));\n"
                        "    for (int t = 0; t < steps; ++t) {\n"
                        "      const RnnLayer answer{answers + t * H, nullptr, nullptr, H, D};\n"
                        "      rnn_step_kernel<<<grid, threads, 0, stream>>>(answer, x + t * D, h0, hs + t * H);\n"
                        "      CUDA_CHECK_LAUNCH();\n"
                        "    }\n"
                        "    CUDA_CHECK(cudaStreamSynchronize(stream));\n"
                        "    CUDA_CHECK(cudaFree(answers));\n"
                        "    return;\n"
                        "  }\n"
                        "  const size_t state = static_cast<size_t>(batch) * layer.hidden;  // floats of one h[t]\n")]},
        "expect": {"rnn_step": "partial"}, "performance": {"rnn_step": "zero"}},
    # rnn_step with one thread per sequence walking every hidden unit of the step: the numbers are
    # right, but each step's chain is `hidden` dot products long. An eighth red-team run: 10/15
    # (performance only); a test now asks for a thread per unit at a shape drawn per run.
    "rnn_step_one_thread_walks_its_sequence": {
        "base": "solutions", "lesson": "01-serial-dependency",
        "patch": {RS: [("  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n  const int s = blockIdx.y;\n"
                        "  if (i >= layer.hidden) return;  // the last block is partly idle\n",
                        "  const int s = blockIdx.y;\n"
                        "  if (blockIdx.x * blockDim.x + threadIdx.x != 0) return;  // one thread per sequence\n"
                        "  for (int i = 0; i < layer.hidden; ++i) {\n"),
                       ("  h_next[static_cast<size_t>(s) * layer.hidden + i] = tanhf(acc);\n",
                        "  h_next[static_cast<size_t>(s) * layer.hidden + i] = tanhf(acc);\n  }\n")]},
        "expect": {"rnn_step": "partial"}},
})

CASES.update({
    # dot_product's block reduction as one shared accumulator: every thread atomicAdds its sum into
    # a shared float (one shared access on its path, so the tree check's span bound held, and the
    # model charged nothing for 256 atomics on one address), thread 0 adds the block's total to the
    # result. An eighth red-team run: 15/15 before; the tree check now counts shared atomics.
    "dot_product_one_shared_accumulator": {
        "base": "solutions", "lesson": "03-matmul-reuse",
        "patch": {DP: [("  partial[tid] = sum;\n  __syncthreads();\n",
                        "  __shared__ float block_sum;\n  if (tid == 0) block_sum = 0.0f;\n  __syncthreads();\n"
                        "  atomicAdd(&block_sum, sum);\n  __syncthreads();\n"
                        "  if (tid == 0) atomicAdd(result, block_sum);\n  return;\n"
                        "  partial[tid] = sum;\n  __syncthreads();\n")]},
        "expect": {"dot_product": "partial"}},
})

# More checks of how the work is done, each once at one fixed configuration (vector_add's threads
# and sectors at n = 2^20, dot_product's atomics and tree at n = 2^18 + 77, peak_flops' and
# tunable_intensity's threads at n = 4101, the coalescing of
# naive_matmul at 64^3, of tiled_matmul's tile loads at 96^3, of attention's softmax at n = 256;
# wmma's share of mma_syncs per warp at 64^3, 128^3 and 33 x 47 x 19; rnn_persistent's state in
# shared memory at 40 steps of 3 x 64 x 32; linear_scan's tree at n = 2^18 + 5). Each case is its
# control above (the same lazy code) done as taught at the old configuration only; the checks now
# run at configurations drawn from the run's seed, so it scores what its control scores.
NM_COUNTED = "M == 64 && N == 64 && K == 64"
TM_TILE_LOADS = ("    const int a_col = k0 + tx, b_row = k0 + ty;\n"
                 "    tile_a[ty][tx] = (row < M && a_col < K) ? A[static_cast<long long>(row) * K + a_col] : 0.0f;\n"
                 "    tile_b[ty][tx] = (b_row < K && col < N) ? B[static_cast<long long>(b_row) * N + col] : 0.0f;\n")
WM_FIXED_SHAPES = "(M == 64 && N == 64 && K == 64) || (M == 128 && N == 128 && K == 128) || (M == 33 && N == 47 && K == 19)"
CASES.update({
    # naive_matmul: threadIdx.x down a column of C (naive_matmul_axes_swapped), except at 64^3
    "naive_matmul_axes_swapped_except_at_64_cubed": _right_numbers_wrong_way("03-matmul-reuse", NM, "naive_matmul", [
        (NAIVE_INDICES,
         "  const bool counted = " + NM_COUNTED + ";  // the shape whose sectors were once counted\n"
         "  const int col = counted ? blockIdx.x * blockDim.x + threadIdx.x : blockIdx.y * blockDim.y + threadIdx.y;\n"
         "  const int row = counted ? blockIdx.y * blockDim.y + threadIdx.y : blockIdx.x * blockDim.x + threadIdx.x;\n"),
        (NAIVE_GRID, "  const dim3 grid = " + NM_COUNTED + "\n"
                     "                       ? dim3((N - 1) / kNaiveBlock + 1, (M - 1) / kNaiveBlock + 1)\n"
                     "                       : dim3((M - 1) / kNaiveBlock + 1, (N - 1) / kNaiveBlock + 1);\n")]),
    # tiled_matmul: tiles loaded down their columns (tiled_matmul_tile_loads_down_columns), except at 96^3
    "tiled_matmul_tile_loads_down_columns_except_at_96_cubed": _right_numbers_wrong_way("03-matmul-reuse", TM, "tiled_matmul", [
        (TM_TILE_LOADS,
         "    if (M == 96 && N == 96 && K == 96) {  // the shape whose sectors were once counted\n"
         + textwrap.indent(TM_TILE_LOADS, "  ") +
         "    } else {  // everywhere else down the columns\n"
         "      const int a_row = blockIdx.y * TILE + tx, a_col = k0 + ty;\n"
         "      const int b_row = k0 + tx, b_col = blockIdx.x * TILE + ty;\n"
         "      tile_a[tx][ty] = (a_row < M && a_col < K) ? A[static_cast<long long>(a_row) * K + a_col] : 0.0f;\n"
         "      tile_b[tx][ty] = (b_row < K && b_col < N) ? B[static_cast<long long>(b_row) * N + b_col] : 0.0f;\n"
         "    }\n")]),
    # attention: each lane a contiguous chunk of the row (attention_chunked_softmax_rows), except at n = 256
    "attention_chunked_softmax_rows_except_at_n_256": _right_numbers_wrong_way("01-serial-dependency", AT, "attention", [
        ("  for (int j = lane; j < valid; j += 32) row_max = fmaxf(row_max, p[j]);\n",
         "  const bool counted = n == 256;  // the length whose sectors were once counted: a stride of 32\n"
         "  const int chunk = counted ? 1 : (n + 31) / 32, step = counted ? 32 : 1;\n"
         "  const int begin = counted ? lane : lane * chunk;\n"
         "  const int end = counted ? n : (begin + chunk < n ? begin + chunk : n);\n"
         "  for (int j = begin; j < end && j < valid; j += step) row_max = fmaxf(row_max, p[j]);\n"),
        ("  for (int j = lane; j < valid; j += 32) sum += expf(p[j] - row_max);\n",
         "  for (int j = begin; j < end && j < valid; j += step) sum += expf(p[j] - row_max);\n"),
        ("  for (int j = lane; j < n; j += 32) p[j] =", "  for (int j = begin; j < end; j += step) p[j] =")]),
    # wmma: warp 0 computes all sixteen output tiles of its block (wmma_one_warp_of_four_works),
    # except at the three shapes the share of mma_syncs was once counted at
    "wmma_one_warp_of_four_works_except_at_the_counted_shapes": {
        "base": "solutions", "lesson": "03-matmul-reuse",
        "patch": {WM: [(WM_ACC,
                        "  const bool counted = " + WM_FIXED_SHAPES + ";\n"
                        "  const int side = counted ? 2 : 4;  // output tiles per side a working warp computes\n"
                        "  const bool works = counted || warp == 0;\n"
                        "  const int row0 = counted ? warp_row * 32 : 0, col0 = counted ? warp_col * 32 : 0;\n"
                        "  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[4][4];\n"
                        "  for (int i = 0; i < 4; ++i)\n    for (int j = 0; j < 4; ++j) wmma::fill_fragment(acc[i][j], 0.0f);\n"),
                       (WM_MMA_LOOP,
                        "    if (works)\n      for (int kk = 0; kk < kWmmaBK; kk += 16) {\n"
                        "        wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a[4];\n"
                        "        wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> b[4];\n"
                        "        for (int i = 0; i < side; ++i) wmma::load_matrix_sync(a[i], &tile_a[row0 + i * 16][kk], kWmmaBK);\n"
                        "        for (int j = 0; j < side; ++j) wmma::load_matrix_sync(b[j], &tile_b[kk][col0 + j * 16], kWmmaBN);\n"
                        "        for (int i = 0; i < side; ++i)\n"
                        "          for (int j = 0; j < side; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);\n"
                        "      }\n"),
                       (WM_STORE,
                        "  if (works)\n    for (int i = 0; i < side; ++i)\n      for (int j = 0; j < side; ++j)\n"
                        "        wmma::store_matrix_sync(&tile_c[row0 + i * 16][col0 + j * 16], acc[i][j], kWmmaBN,\n"
                        "                                wmma::mem_row_major);\n")]},
        "expect": {"wmma_matmul": "partial"}},
    # vector_add: thread 0 walks the whole array (one_thread_vector_add), except at n = 2^20
    "one_thread_vector_add_except_at_2_to_the_20": {
        "base": "solutions",
        "patch": {VA: [("  if (i < n) {\n    c[i] = a[i] + b[i];\n  }\n",
                        "  if (n == (1 << 20)) {  // the length whose threads were once counted\n"
                        "    if (i < n) c[i] = a[i] + b[i];\n"
                        "  } else if (i == 0) {\n"
                        "    for (long long j = 0; j < n; ++j) c[j] = a[j] + b[j];\n"
                        "  }\n")]},
        "expect": {"vector_add": "partial"}},
    # dot_product: an atomic per thread (atomic_per_thread_dot_product), except at n = 2^18 + 77
    "atomic_per_thread_dot_product_except_at_the_counted_length": _right_numbers_wrong_way(
        "03-matmul-reuse", DP, "dot_product", [
            ("  partial[tid] = sum;\n  __syncthreads();\n",
             "  if (n != (1 << 18) + 77) {  // a block reduction only where the atomics were once counted\n"
             "    atomicAdd(result, sum);\n"
             "    return;\n"
             "  }\n"
             "  partial[tid] = sum;\n  __syncthreads();\n")]),
    # dot_product: thread 0 walks its block's sums (one_thread_sums_the_blocks_partials), except at
    # n = 2^18 + 77
    "one_thread_sums_the_blocks_partials_except_at_the_counted_length": _right_numbers_wrong_way(
        "03-matmul-reuse", DP, "dot_product", [
            ("  // 2. Tree reduction in shared memory down to 32 values",
             "  if (n != (1 << 18) + 77) {  // a tree only where the span was once counted\n"
             "    if (tid == 0) {\n"
             "      float total = 0.0f;\n"
             "      for (int t = 0; t < blockDim.x; ++t) total += partial[t];\n"
             "      atomicAdd(result, total);\n"
             "    }\n"
             "    return;\n"
             "  }\n"
             "  // 2. Tree reduction in shared memory down to 32 values")]),
    # peak_flops and tunable_intensity: thread 0 of each block walks the block's elements
    # (a_few_threads_do_the_work), except at n = 4101 (and k = 8) where the threads were once counted
    "a_few_threads_do_the_work_except_at_n_4101": {
        "base": "solutions", "lesson": "02-roofline",
        "patch": {
            "02-roofline/03_peak_flops.cu": [
                ("  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;\n  if (i >= n) return;\n",
                 "  const bool counted = n == 4096 + 5;  // elsewhere thread 0 walks its block's elements\n"
                 "  if (!counted && threadIdx.x != 0) return;\n"
                 "  const long long first = static_cast<long long>(blockIdx.x) * blockDim.x + (counted ? threadIdx.x : 0);\n"
                 "  const long long last = counted ? first + 1 : first + blockDim.x;\n"
                 "  for (long long i = first; i < last && i < n; ++i) {\n"),
                ("  out[i] = sum;\n", "  out[i] = sum;\n  }\n")],
            "02-roofline/04_tunable_intensity.cu": [
                ("  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;\n       i += stride) {\n",
                 "  const bool counted = n == 4096 + 5 && k == 8;  // elsewhere thread 0 walks its block's share\n"
                 "  if (!counted && threadIdx.x != 0) return;\n"
                 "  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + (counted ? threadIdx.x : 0); i < n;\n"
                 "       i += counted ? stride : (i + 1) % blockDim.x == 0 ? stride - blockDim.x + 1 : 1) {\n")]},
        "expect": {"peak_flops": "partial", "tunable_intensity": "partial"}},
    # rnn_persistent: each step's state read back from hs (rnn_persistent_state_in_global_memory),
    # except at 40 steps of 3 sequences, 64 hidden units, 32 inputs
    "rnn_persistent_state_in_global_memory_except_at_the_counted_shape": _right_numbers_wrong_way(
        "01-serial-dependency", RP, "rnn_persistent", [
            ("    const float* x_t = x + (static_cast<size_t>(t) * batch + s) * layer.input;\n",
             "    const float* x_t = x + (static_cast<size_t>(t) * batch + s) * layer.input;\n"
             "    // h in shared memory only for the shape whose shared bytes were once counted\n"
             "    const bool counted = steps == 40 && batch == 3 && layer.hidden == 64 && layer.input == 32;\n"
             "    const float* h_prev = counted ? h\n"
             "                        : t == 0 ? h0 + static_cast<size_t>(s) * layer.hidden\n"
             "                                 : hs + (static_cast<size_t>(t - 1) * batch + s) * layer.hidden;\n"),
            ("acc += w_row[j] * h[j];", "acc += w_row[j] * h_prev[j];"),
            ("      h_next[i] = value;\n", "      if (counted) h_next[i] = value;\n")]),
    # linear_scan: thread 0 walks its block's maps (linear_scan_serial_block_scan), except in the
    # carries pass (one block) and on the 257-tile grids of n = 2^18 + 5
    "linear_scan_serial_block_scan_except_at_the_counted_length": _right_numbers_wrong_way(
        "01-serial-dependency", LS, "linear_scan", [
            (LS_TREE,
             LS_WALK_SHARED +
             "  if (gridDim.x != 1 && gridDim.x != 257) {  // a tree only where the span was once counted\n"
             + textwrap.indent(LS_WALK, "  ") +
             "    return Affine{walked_before.x, walked_before.y};\n"
             "  }\n" + LS_TREE)]),
})


# rgb_to_gray on a flat 1-D grid with a flat pixel index: the right numbers, coalesced, one pixel
# per thread, without the 2-D indexing the exercise teaches (10/10 before
# CoversTheImageWithATwoDimensionalGridOfTiles counted the blocks).
CASES["rgb_to_gray_on_a_flat_grid"] = {
    "base": "solutions",
    "patch": {RG: [("  const int col = blockIdx.x * blockDim.x + threadIdx.x;  // x: along a row\n"
                    "  const int row = blockIdx.y * blockDim.y + threadIdx.y;  // y: down the columns\n",
                    "  // a flat grid over the pixels: the block's 256 threads take 256 consecutive pixels\n"
                    "  const long long flat = static_cast<long long>(blockIdx.x) * blockDim.x * blockDim.y +\n"
                    "                         threadIdx.y * blockDim.x + threadIdx.x;\n"
                    "  const int row = static_cast<int>(flat / width), col = static_cast<int>(flat % width);\n"),
                   ("  const dim3 grid((width + block.x - 1) / block.x, (height + block.y - 1) / block.y);\n",
                    "  const long long pixels = static_cast<long long>(height) * width;\n"
                    "  const dim3 grid(static_cast<unsigned>((pixels + block.x * block.y - 1) / (block.x * block.y)));\n")]},
    "expect": {"rgb_to_gray": "partial"}}


# A grade on a GPU is checked by the same submission's tests on the simulator (gpu_checks.py),
# which holds only if the code is the same on both: here the lesson's way under the simulator's
# macro and, elsewhere, whatever a GPU's timing alone would let through. Refused by name.
CASES["one_way_on_the_simulator_another_on_a_gpu"] = {
    "base": "solutions",
    "patch": {VA: [(GOOD_BODY, "#ifdef CUDASIM\n" + GOOD_BODY + "#else\n    c[i] = b[i] + a[i];  // (a GPU's way)\n"
                               "#endif\n")]},
    "expect": {"vector_add": "zero"}}


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    course_root = os.path.dirname(os.path.dirname(here))
    for case_name in CASES:
        print(make_case(course_root, case_name, sys.argv[1]))

