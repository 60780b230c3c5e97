"""./course gpu-report without a GPU: the report writer fed with made-up step results, the
no-GPU and no-nvcc lines and exit statuses, the step bookkeeping, and its argument checks."""
import contextlib
import io
import json
import os
import shutil
import tempfile
import time
import unittest
from unittest import mock

import support
from course import gpu_report as gr
from course.backend import Toolchain
from course.errors import CourseError

MACHINE = {"date": "2026-11-22T10:00:00+00:00",
           "gpus": [{"name": "NVIDIA H200", "driver_version": "570.86.15", "memory_total": "143771 MiB",
                     "compute_capability": "9.0"}],
           "nvidia_smi_list": ["GPU 0: NVIDIA H200 (UUID: GPU-1)"], "nvcc_version": "Cuda compilation tools, "
           "release 13.0, V13.0.48", "cmake_version": "cmake version 3.28.3", "generator": "Ninja",
           "commit": "0123abcd", "uncommitted_changes": False, "googletest": "built from /src/googletest",
           "host": "gpu-1", "cpu_count": 16, "python": "3.11.7"}
TOOLCHAIN = Toolchain(backend="cuda", cmake="/usr/bin/cmake", cmake_version=(3, 28, 3), generator="Ninja",
                      nvcc="/usr/local/cuda/bin/nvcc", has_gpu=False)


def grade_run(score, ratio):
    return {"score": score, "max_score": 20, "full_marks": score == 20, "exercises": {
        "00-gpu-vs-cpu/vector_add": {"status": "passed" if score == 20 else "failed", "score": score,
                                     "max_score": 20, "performance_ratio": ratio}}}


def fake_steps():
    runs = [grade_run(20, 1.01), grade_run(20, 0.98), grade_run(20, 1.04)]
    return [
        gr.StepResult("build", gr.OK, "2026-11-22T10:00:05+00:00", 250.0,
                      commands=["cmake --build build/selftest-cuda --parallel 16"],
                      figures={"cuda_architectures": "native", "build_steps_run": 312},
                      summary="built for native in 250 s (312 build steps)"),
        gr.StepResult("ctest", gr.FAILED, "2026-11-22T10:05:00+00:00", 130.0,
                      commands=["ctest --test-dir build/selftest-cuda -j16 --no-tests=error --output-on-failure"],
                      figures={"passed": 74, "failed": 1, "failed_tests": ["cudasim/faults"],
                               "tests": [{"name": "cudasim/faults", "status": "Failed", "seconds": 1.5},
                                         {"name": "cudasim/atomics", "status": "Passed", "seconds": 0.5}]},
                      summary="74 passed, 1 failed: cudasim/faults", output="The following tests FAILED:\n"),
        gr.StepResult("grade", gr.OK, "2026-11-22T10:08:00+00:00", 300.0,
                      commands=["./course --backend cuda grade --submission solutions --format json"] * 3,
                      figures={"runs": runs, "full_marks_every_time": True,
                               "ratios": {"00-gpu-vs-cpu/vector_add": {"ratios": [1.01, 0.98, 1.04], "median": 1.01,
                                                                       "min": 0.98, "max": 1.04, "spread": 0.06}}},
                      summary="3 runs: 20/20, 20/20, 20/20 (full marks every time)"),
        gr.StepResult("tokens_per_second", gr.OK, "2026-11-22T10:14:00+00:00", 20.0,
                      commands=["./course --backend cuda run lessons/01-serial-dependency/tokens_per_second.cu "
                                "--out build/gpu-report/tokens_per_second"],
                      figures={"rows": [{"tokens": 256, "graph_over_launches": 1.9}]},
                      summary="CUDA graph vs a launch per step: 1.90x tokens/s",
                      output="  tokens | table with ``` inside\n", files=["tokens_per_second/tokens_per_second.svg"]),
    ]


class ReportWriter(unittest.TestCase):
    def test_markdown_names_the_machine_every_step_and_its_commands(self):
        text = gr.render_markdown(MACHINE, fake_steps())
        self.assertTrue(text.startswith("# GPU report: NVIDIA H200\n"))
        for fragment in ("570.86.15", "143771 MiB", "release 13.0, V13.0.48", "cmake version 3.28.3", "`0123abcd`",
                         "2026-11-22T10:00:00+00:00", "built from /src/googletest",
                         "| ctest | **failed** | 2m10s | 74 passed, 1 failed: cudasim/faults |",
                         "| cudasim/faults | Failed | 1.50 |",
                         "./course --backend cuda grade --submission solutions --format json",
                         "| 00-gpu-vs-cpu/vector_add | 20/20 passed | 20/20 passed | 20/20 passed | "
                         "1.010, 0.980, 1.040 | 0.060 |",
                         "`tokens_per_second/tokens_per_second.svg`"):
            self.assertIn(fragment, text)
        # Steps never recorded are listed as such, and the experiment's output is fenced whole.
        self.assertIn("| skeletons | not run | | | |", text)
        self.assertIn("````\n  tokens | table with ``` inside\n````", text)

    def test_a_step_from_another_commit_is_pointed_out(self):
        steps = fake_steps()
        steps[0].commit = "fedcba98"
        self.assertIn("another commit or on another GPU than the one above: build", gr.render_markdown(MACHINE, steps))

    def test_json_holds_every_figure(self):
        out = tempfile.mkdtemp(prefix="gpu-report-test-")
        self.addCleanup(shutil.rmtree, out, ignore_errors=True)
        written = gr.write_report(out, MACHINE, fake_steps())
        self.assertEqual(sorted(os.path.basename(p) for p in written), ["report.json", "report.md"])
        with open(os.path.join(out, "report.json"), encoding="utf-8") as f:
            data = json.load(f)
        self.assertEqual(data["machine"]["gpus"][0]["driver_version"], "570.86.15")
        self.assertEqual([s["name"] for s in data["steps"]], ["build", "ctest", "grade", "tokens_per_second"])
        self.assertEqual(data["steps"][2]["figures"]["ratios"]["00-gpu-vs-cpu/vector_add"]["spread"], 0.06)
        self.assertEqual(data["steps"][1]["figures"]["failed_tests"], ["cudasim/faults"])
        self.assertIn("skeletons", data["not_recorded"])

    def test_step_results_survive_a_round_trip(self):
        out = tempfile.mkdtemp(prefix="gpu-report-test-")
        self.addCleanup(shutil.rmtree, out, ignore_errors=True)
        for step in reversed(fake_steps()):
            gr.save_step(out, step)
        loaded = gr.load_steps(out)
        self.assertEqual([s.name for s in loaded], ["build", "ctest", "grade", "tokens_per_second"])
        self.assertEqual(loaded[2].figures, fake_steps()[2].figures)


class Machine(unittest.TestCase):
    def test_gpu_driver_memory_nvcc_cmake_and_commit(self):
        answers = {
            "nvidia-smi": "NVIDIA H200, 570.86.15, 143771 MiB, 9.0\n",
            "/usr/local/cuda/bin/nvcc": "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 13.0, "
                                        "V13.0.48\nBuild cuda_13.0.r13.0/compiler.36260728_0",
            "/usr/bin/cmake": "cmake version 3.28.3\n\nCMake suite maintained by Kitware",
            "rev-parse": "0123abcd", "status": " M README.md"}

        def capture(argv):
            return answers.get(argv[0]) or next((v for k, v in answers.items() if k in argv), None)
        # gpu-lease.sh names the commit of a copy without .git (COURSE_SOURCE_COMMIT): not here
        # (its first GPU run failed this test for that reason).
        environ = {k: v for k, v in os.environ.items() if k != "COURSE_SOURCE_COMMIT"}
        with mock.patch.object(gr, "_capture", side_effect=capture), mock.patch.dict(os.environ, environ, clear=True), \
                mock.patch.object(gr, "gpu_names", return_value=("GPU 0: NVIDIA H200 (UUID: GPU-1)",)):
            machine = gr.describe_machine(support.REPO_ROOT, "/usr/local/cuda/bin/nvcc", TOOLCHAIN)
        self.assertEqual(machine["gpus"], [{"name": "NVIDIA H200", "driver_version": "570.86.15",
                                            "memory_total": "143771 MiB", "compute_capability": "9.0"}])
        self.assertEqual(machine["nvcc_version"], "Cuda compilation tools, release 13.0, V13.0.48")
        self.assertEqual(machine["cmake_version"], "cmake version 3.28.3")
        self.assertEqual((machine["commit"], machine["uncommitted_changes"]), ("0123abcd", True))
        self.assertRegex(machine["date"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$")
        self.assertEqual(gr.gpu_label(machine), "NVIDIA H200")


class StepNames(unittest.TestCase):
    def test_groups_and_order(self):
        self.assertEqual(gr.parse_steps(None), list(gr.STEPS))
        self.assertEqual(gr.parse_steps("ctest,build"), ["build", "ctest"])
        self.assertEqual(gr.parse_steps("experiments"), list(gr.EXPERIMENTS))

    def test_unknown_step_is_a_usage_error(self):
        with self.assertRaises(CourseError) as ctx:
            gr.parse_steps("build,benchmarks")
        self.assertEqual(ctx.exception.exit_code, 2)
        self.assertIn("benchmarks", ctx.exception.message)


class Commands(unittest.TestCase):
    def test_time_limit_kills_the_whole_group_and_keeps_the_output(self):
        started = time.monotonic()
        run = gr.run_command(["sh", "-c", "echo before; sleep 30 & sleep 30"], support.REPO_ROOT, 1.0)
        self.assertLess(time.monotonic() - started, 20)
        self.assertTrue(run.timed_out)
        self.assertFalse(run.ok)
        self.assertEqual(run.stdout, "before\n")
        self.assertIn("time limit", run.failure())

    def test_commands_are_shown_from_the_repository_root(self):
        root = support.REPO_ROOT
        self.assertEqual(gr.show_command([os.path.join(root, "course"), "run", os.path.join(root, "lessons", "a b.cu")],
                                         root), "./course run 'lessons/a b.cu'")


class WithoutAGpu(unittest.TestCase):
    def setUp(self):
        self.out = tempfile.mkdtemp(prefix="gpu-report-test-")
        self.addCleanup(shutil.rmtree, self.out, ignore_errors=True)

    def run_report(self, build_result=None, nvcc="/usr/local/cuda/bin/nvcc"):
        stderr = io.StringIO()
        build = mock.Mock(return_value=build_result)
        with mock.patch.object(gr, "find_nvcc", return_value=nvcc), \
                mock.patch.object(gr, "check_prerequisites", return_value=TOOLCHAIN), \
                mock.patch.object(gr, "gpu_names", return_value=()), \
                mock.patch.object(gr, "step_build", build), \
                mock.patch.object(gr.ui, "progress"), \
                contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            status = gr.run_gpu_report(support.REPO_ROOT, self.out)
        return status, stderr.getvalue(), build

    def test_builds_for_sm90_then_one_line_and_status_3(self):
        built = gr.StepResult("build", gr.OK, "now", 200.0, figures={"cuda_architectures": "90"})
        status, stderr, build = self.run_report(built)
        self.assertEqual(status, gr.EXIT_NO_GPU)
        self.assertEqual(status, 3)
        self.assertEqual(stderr, "gpu-report: no NVIDIA GPU found (nvidia-smi lists none): built the cuda backend "
                                 "for sm_90, ran nothing\n")
        build.assert_called_once()
        self.assertFalse(os.path.exists(os.path.join(self.out, "report.md")))

    def test_a_build_failure_is_shown_and_is_status_1(self):
        broken = gr.StepResult("build", gr.FAILED, "now", 20.0, summary="build exit status 1; 1 failed outputs",
                               output="error: no such header\n")
        status, stderr, _ = self.run_report(broken)
        self.assertEqual(status, 1)
        self.assertTrue(stderr.startswith("error: no such header\n"))
        self.assertIn("does not build for sm_90", stderr.splitlines()[-1])

    def test_without_nvcc_one_line_and_status_2(self):
        status, stderr, build = self.run_report(nvcc=None)
        self.assertEqual(status, 2)
        self.assertEqual(len(stderr.splitlines()), 1)
        self.assertTrue(stderr.startswith("gpu-report: nvcc not found"))
        build.assert_not_called()


class WithAGpu(unittest.TestCase):
    """The steps themselves are replaced: what is checked is the bookkeeping around them."""

    def setUp(self):
        self.out = tempfile.mkdtemp(prefix="gpu-report-test-")
        self.addCleanup(shutil.rmtree, self.out, ignore_errors=True)

    def run_report(self, steps, functions):
        with mock.patch.object(gr, "find_nvcc", return_value="/usr/local/cuda/bin/nvcc"), \
                mock.patch.object(gr, "check_prerequisites", return_value=TOOLCHAIN), \
                mock.patch.object(gr, "gpu_names", return_value=("GPU 0: NVIDIA H200",)), \
                mock.patch.object(gr, "describe_machine", return_value=dict(MACHINE)), \
                mock.patch.dict(gr.STEP_FUNCTIONS, functions), mock.patch.object(gr.ui, "progress"), \
                contextlib.redirect_stdout(io.StringIO()):
            return gr.run_gpu_report(support.REPO_ROOT, self.out, steps)

    def test_a_failing_step_does_not_stop_the_others_and_earlier_results_are_kept(self):
        def ok(name):
            return lambda ctx: gr.StepResult(name, gr.OK, "now", 1.0, summary=name + " fine")

        def cannot_start(ctx):
            raise CourseError("build/selftest-cuda is missing")
        status = self.run_report(["build"], {"build": ok("build")})
        self.assertEqual(status, 0)
        status = self.run_report(["ctest", "roofline"], {"ctest": cannot_start, "roofline": ok("roofline")})
        self.assertEqual(status, 1)
        with open(os.path.join(self.out, "report.json"), encoding="utf-8") as f:
            data = json.load(f)
        self.assertEqual([(s["name"], s["status"]) for s in data["steps"]],
                         [("build", "ok"), ("ctest", "failed"), ("roofline", "ok")])
        self.assertEqual(data["steps"][1]["summary"], "build/selftest-cuda is missing")
        self.assertEqual(data["steps"][0]["gpu"], "NVIDIA H200")
        with open(os.path.join(self.out, "report.md"), encoding="utf-8") as f:
            self.assertIn("| roofline | ok |", f.read())


class GradeRuns(unittest.TestCase):
    """Saved after each run; an incomplete step at the same commit and GPU is resumed."""

    def setUp(self):
        self.out = tempfile.mkdtemp(prefix="gpu-report-test-")
        self.addCleanup(shutil.rmtree, self.out, ignore_errors=True)
        self.saved = []
        self.ctx = gr.Context(support.REPO_ROOT, self.out, TOOLCHAIN, repeats=3, commit="0123abcd", gpu="NVIDIA H200",
                              checkpoint=lambda result: self.saved.append((result.status, len(result.figures["runs"]))))

    def grade(self, previous=None):
        if previous:
            gr.save_step(self.out, previous)
        report = {"score": 20, "max_score": 20, "exercises": [
            {"lesson": "00-gpu-vs-cpu", "exercise": "vector_add", "status": "passed", "score": 20, "max_score": 20,
             "performance_ratio": 1.0}]}
        with mock.patch.object(gr, "_grade_once", return_value=report) as once:
            result = gr.step_grade(self.ctx)
        return result, once.call_count

    def test_three_runs_each_saved(self):
        result, calls = self.grade()
        self.assertEqual(calls, 3)
        self.assertEqual(self.saved, [(gr.INCOMPLETE, 1), (gr.INCOMPLETE, 2), (gr.OK, 3)])
        self.assertTrue(result.figures["full_marks_every_time"])
        self.assertEqual(result.figures["ratios"]["00-gpu-vs-cpu/vector_add"]["ratios"], [1.0, 1.0, 1.0])

    def test_an_incomplete_step_is_resumed(self):
        previous = gr.StepResult("grade", gr.INCOMPLETE, "earlier", 100.0, commands=["first"],
                                 figures={"runs": [grade_run(20, 0.9)]}, commit="0123abcd", gpu="NVIDIA H200")
        result, calls = self.grade(previous)
        self.assertEqual(calls, 2)
        self.assertEqual((result.started, result.commands), ("earlier", ["first"]))
        self.assertEqual(result.figures["ratios"]["00-gpu-vs-cpu/vector_add"]["ratios"], [0.9, 1.0, 1.0])

    def test_a_finished_step_with_fewer_runs_gets_the_rest(self):
        previous = gr.StepResult("grade", gr.OK, "earlier", 100.0, figures={"runs": [grade_run(20, 0.9)]},
                                 commit="0123abcd", gpu="NVIDIA H200")
        result, calls = self.grade(previous)
        self.assertEqual(calls, 2)
        self.assertEqual(result.figures["ratios"]["00-gpu-vs-cpu/vector_add"]["ratios"], [0.9, 1.0, 1.0])

    def test_a_finished_step_with_enough_runs_starts_again(self):
        previous = gr.StepResult("grade", gr.OK, "earlier", 100.0,
                                 figures={"runs": [grade_run(20, 0.9)] * 3}, commit="0123abcd", gpu="NVIDIA H200")
        self.assertEqual(self.grade(previous)[1], 3)

    def test_an_incomplete_step_at_another_commit_starts_again(self):
        previous = gr.StepResult("grade", gr.INCOMPLETE, "earlier", 100.0, figures={"runs": [grade_run(20, 0.9)]},
                                 commit="fedcba98", gpu="NVIDIA H200")
        self.assertEqual(self.grade(previous)[1], 3)


    def test_an_incomplete_step_of_other_lessons_starts_again(self):
        previous = gr.StepResult("grade", gr.INCOMPLETE, "earlier", 100.0, figures={"runs": [grade_run(20, 0.9)]},
                                 commit="0123abcd", gpu="NVIDIA H200")
        self.ctx.lessons = "00,03"
        result, calls = self.grade(previous)
        self.assertEqual(calls, 3)
        self.assertEqual(result.figures["lessons"], "00,03")
        self.assertTrue(result.summary.startswith("lessons 00,03: 3 of 3 runs"), result.summary)

    def test_the_lessons_reach_the_grader(self):
        self.ctx.lessons = "00,03"
        ran = []

        def fake_run(argv, root, time_limit):
            ran.append(list(argv))
            return gr.CommandRun(" ".join(argv), 0, False, '{"score": 1, "max_score": 1, "exercises": []}', "", 1.0)
        with mock.patch.object(gr, "run_command", side_effect=fake_run):
            gr._grade_once(self.ctx, "solutions", "solutions-run-1", gr.StepResult("grade", gr.INCOMPLETE, "now", 0.0))
        self.assertEqual(ran[0][-2:], ["--lesson", "00,03"])


class Ranking(unittest.TestCase):
    """The slow solutions' step: rank_slow.py's rows become the step's figures and summary."""

    def setUp(self):
        self.out = tempfile.mkdtemp(prefix="gpu-report-test-")
        self.addCleanup(shutil.rmtree, self.out, ignore_errors=True)
        self.ctx = gr.Context(support.REPO_ROOT, self.out, TOOLCHAIN, time_limit=300)

    def rank(self, rows, skipped=(), returncode=0):
        ran = []

        def fake_run(argv, root, time_limit):
            ran.append(list(argv))
            if rows is not None:
                with open(argv[argv.index("--out") + 1], "w") as f:
                    json.dump({"backend": "cuda", "rows": rows, "skipped": list(skipped)}, f)
            return gr.CommandRun(" ".join(argv), returncode, False, "table", "", 12.0)
        with mock.patch.object(gr, "run_command", side_effect=fake_run):
            return gr.step_ranking(self.ctx), ran[0]

    def test_rows_and_summary(self):
        rows = [{"case": "a", "exercise": "attention", "ratio": 3.5}, {"case": "b", "exercise": "peak_flops",
                                                                      "ratio": 0.7},
                {"case": "c", "exercise": "fusion", "ratio": None}]
        result, argv = self.rank(rows, skipped=["d"])
        self.assertEqual(result.status, gr.OK)
        self.assertEqual(result.figures["rows"], rows)
        self.assertEqual(result.summary, "2 slow solutions timed: 1 slower than the reference, 1 not; 1 without a "
                                         "ratio; out of time before 1")
        self.assertEqual(argv[argv.index("--backend") + 1], "cuda")
        self.assertEqual(argv[argv.index("--deadline") + 1], "210")   # 90 s of the limit kept for the last case

    def test_no_rows_is_a_failed_step(self):
        result, _ = self.rank(None, returncode=1)
        self.assertEqual(result.status, gr.FAILED)
        self.assertIn("no rows", result.summary)


class Arguments(unittest.TestCase):
    """Checked before anything is built: one line, exit status 2."""

    def assertUsageError(self, result, fragment):
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
        self.assertIn(fragment, result.stderr)

    def test_unknown_step(self):
        self.assertUsageError(support.run_cli("gpu-report", "--steps", "build,bench"), "bench")

    def test_repeats_below_one(self):
        self.assertUsageError(support.run_cli("gpu-report", "--repeats", "0"), "--repeats")

    def test_gtest_source_that_is_not_googletest(self):
        empty = tempfile.mkdtemp(prefix="not-googletest-")
        self.addCleanup(shutil.rmtree, empty, ignore_errors=True)
        self.assertUsageError(support.run_cli("gpu-report", "--gtest-source", empty), "--gtest-source")

    def test_the_simulator_backend(self):
        self.assertUsageError(support.run_cli("--backend", "sim", "gpu-report"), "cuda backend")


if __name__ == "__main__":
    unittest.main()
