"""Bad arguments: one clear line on stderr and exit status 2, before anything is built."""
import os
import tempfile
import unittest

import support


class BadArgumentsAreOneLineAndExitTwo(unittest.TestCase):
    def assertOneLineUsageError(self, result, *fragments):
        self.assertEqual(result.returncode, 2, result.stderr)
        lines = result.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, "expected one line, got:\n" + result.stderr)
        self.assertTrue(lines[0].startswith("course: error: "), lines[0])
        self.assertNotIn("Traceback", result.stderr)
        for fragment in fragments:
            self.assertIn(fragment, lines[0])
        self.assertEqual(result.stdout, "")

    def test_no_command(self):
        self.assertOneLineUsageError(support.run_cli(), "no command")

    def test_unknown_command(self):
        self.assertOneLineUsageError(support.run_cli("compile"), "compile")

    def test_unknown_format(self):
        self.assertOneLineUsageError(support.run_cli("grade", "--format", "xml"), "--format", "xml")

    def test_unknown_backend_option(self):
        self.assertOneLineUsageError(support.run_cli("--backend", "gpu", "list"), "gpu")

    def test_unknown_backend_option_after_the_command(self):
        self.assertOneLineUsageError(support.run_cli("selftest", "--backend", "tpu"), "tpu")

    def test_unknown_backend_in_environment(self):
        self.assertOneLineUsageError(support.run_cli("list", env={"COURSE_BACKEND": "metal"}),
                                     "metal", "COURSE_BACKEND")

    def test_missing_submission_folder(self):
        missing = os.path.join(tempfile.gettempdir(), "no-such-submission-folder-xyz")
        self.assertOneLineUsageError(support.run_cli("grade", "--submission", missing), "does not exist")

    def test_build_slot_must_be_a_plain_name(self):
        for bad in ("../elsewhere", "a/b", "", "-x" * 40):
            self.assertOneLineUsageError(support.run_cli("grade", "--build-slot=" + bad), "--build-slot")

    def test_unknown_lesson(self):
        self.assertOneLineUsageError(support.run_cli("grade", "--lesson", "42"), "unknown lesson", "42")

    def test_run_without_a_file(self):
        self.assertOneLineUsageError(support.run_cli("run"), "FILE.cu")

    def test_run_with_an_unknown_gpu(self):
        with tempfile.NamedTemporaryFile(suffix=".cu") as program:
            self.assertOneLineUsageError(support.run_cli("run", "--gpu", "X100", program.name), "--gpu X100",
                                         "H100")

    def test_run_with_a_missing_file(self):
        self.assertOneLineUsageError(support.run_cli("run", "no_such_program.cu"), "no such file")

    def test_unknown_option(self):
        self.assertOneLineUsageError(support.run_cli("test", "--verbose-please"), "--verbose-please")

    def test_help_exits_zero(self):
        result = support.run_cli("--help")
        self.assertEqual(result.returncode, 0)
        for command in ("run", "test", "grade", "selftest", "list"):
            self.assertIn(command, result.stdout)


class RunArgumentsGoToTheProgram(unittest.TestCase):
    def test_arguments_after_the_file_are_the_programs(self):
        from course.cli import parse_args
        args = parse_args(["run", "prog.cu", "-n", "5", "--backend", "x"])
        self.assertEqual(args.file, "prog.cu")
        self.assertEqual(args.args, ["-n", "5", "--backend", "x"])
        self.assertFalse(args.stats)

    def test_stats_is_ours_before_and_after_the_file(self):
        from course.cli import parse_args
        self.assertTrue(parse_args(["run", "--stats", "prog.cu"]).stats)
        args = parse_args(["run", "prog.cu", "7", "--stats"])
        self.assertTrue(args.stats)
        self.assertEqual(args.args, ["7"])

    def test_double_dash_passes_everything_through(self):
        from course.cli import parse_args
        args = parse_args(["--backend", "sim", "run", "prog.cu", "--", "--stats", "--help"])
        self.assertEqual(args.args, ["--stats", "--help"])
        self.assertFalse(args.stats)
        self.assertEqual(args.backend, "sim")

    def test_backend_option_before_the_file(self):
        from course.cli import parse_args
        args = parse_args(["run", "--backend", "cuda", "prog.cu", "a"])
        self.assertEqual((args.backend, args.file, args.args), ("cuda", "prog.cu", ["a"]))


class RunTakesTheModelledClocksOptions(unittest.TestCase):
    def test_model_time_gpu_and_timeline_before_the_file(self):
        from course.cli import parse_args
        args = parse_args(["run", "--model-time", "--gpu", "h200", "--timeline", "t.json", "prog.cu", "3"])
        self.assertEqual((args.model_time, args.gpu, args.timeline, args.file, args.args),
                         (True, "h200", "t.json", "prog.cu", ["3"]))

    def test_the_options_become_the_simulators_environment(self):
        from course.run_program import ModelledClock
        self.assertEqual(ModelledClock().environment(), {})
        self.assertFalse(ModelledClock().asked())
        env = ModelledClock(True, "H200", "out/t.json").environment()
        self.assertEqual(env["CUDASIM_MODEL_TIME"], "1")
        self.assertEqual(env["CUDASIM_GPU"], "H200")
        self.assertEqual(env["CUDASIM_TIMELINE"], os.path.abspath("out/t.json"))
        self.assertTrue(ModelledClock(timeline="t.json").asked())


class RunModelsTheLessonsExperimentsByDefault(unittest.TestCase):
    """On the simulator, the experiments in MODELLED_BY_DEFAULT run on the modelled clock unless
    --wall-time; other programs, and the cuda backend, keep what was asked."""

    def setUp(self):
        from course.run_program import ModelledClock
        from course.session import ROOT, Session
        self.Clock = ModelledClock
        self.root = ROOT
        self.sim = Session(root=ROOT, backend="sim", toolchain=None)
        self.cuda = Session(root=ROOT, backend="cuda", toolchain=None)
        self.experiment = os.path.join(ROOT, "lessons", "05-parallelism-nvlink", "parallelism_experiment.cu")

    def test_the_experiment_gets_model_time_on_the_simulator(self):
        clock = self.Clock(gpu="H200").for_program(self.sim, self.experiment)
        self.assertEqual((clock.model_time, clock.gpu), (True, "H200"))

    def test_wall_time_keeps_cpu_time_and_conflicts_with_model_time(self):
        self.assertFalse(self.Clock(wall_time=True).for_program(self.sim, self.experiment).model_time)
        from course.errors import CourseError
        with self.assertRaisesRegex(CourseError, "choose one"):
            self.Clock(model_time=True, wall_time=True).for_program(self.sim, self.experiment)

    def test_other_programs_and_the_cuda_backend_are_left_alone(self):
        other = os.path.join(self.root, "lessons", "00-gpu-vs-cpu", "device_query.cu")
        self.assertFalse(self.Clock().for_program(self.sim, other).model_time)
        self.assertFalse(self.Clock().for_program(self.cuda, self.experiment).model_time)

    def test_every_listed_experiment_exists(self):
        from course.run_program import MODELLED_BY_DEFAULT
        for path in MODELLED_BY_DEFAULT:
            self.assertTrue(os.path.isfile(os.path.join(self.root, path)), path)

    def test_wall_time_is_parsed_before_the_file(self):
        from course.cli import parse_args
        args = parse_args(["run", "--wall-time", "prog.cu", "--wall-time"])
        self.assertEqual((args.wall_time, args.file, args.args), (True, "prog.cu", ["--wall-time"]))


class RunTakesAProgramsShape(unittest.TestCase):
    """run FILE.cu [MORE.cu/.cpp] [-I DIR] [-D NAME[=V]] [ARGS]: sources and build options right
    after the first file belong to the build, up to the program's first argument or --."""

    def parse(self, *argv):
        from course.cli import parse_args
        return parse_args(list(argv))

    def test_more_sources_and_options_after_the_file(self):
        args = self.parse("run", "main.cpp", "kernels.cu", "-I", "inc", "-DSCALE=3", "-Iother", "-D", "FAST",
                          "util.cc", "7", "x.cu")
        self.assertEqual(args.sources, ["main.cpp", "kernels.cu", "util.cc"])
        self.assertEqual(args.build_options, ["-I" + os.path.abspath("inc"), "-DSCALE=3",
                                              "-I" + os.path.abspath("other"), "-DFAST"])
        self.assertEqual(args.args, ["7", "x.cu"])   # after the first ARG, everything is the program's

    def test_the_cuda_libraries_on_an_nvcc_command_line_are_accepted(self):
        args = self.parse("run", "pi.cu", "-lcurand", "-lcublas", "100", "-lcurand")
        self.assertEqual((args.sources, args.build_options), (["pi.cu"], []))
        self.assertEqual(args.args, ["100", "-lcurand"])   # after the first ARG: the program's

    def test_openmp_as_nvcc_users_ask_for_it_is_one_build_option(self):
        for words in (["-Xcompiler", "-fopenmp"], ["-Xcompiler=-fopenmp"], ["--compiler-options", "-fopenmp"],
                      ["-fopenmp", "-lgomp"], ["-Xcompiler", "-fopenmp", "-fopenmp"]):
            args = self.parse("run", "omp.cu", *words, "4")
            self.assertEqual((args.sources, args.build_options, args.args), (["omp.cu"], ["-fopenmp"], ["4"]), words)

    def test_other_host_compiler_options_are_refused(self):
        with self.assertRaises(SystemExit):
            self.parse("run", "omp.cu", "-Xcompiler", "-O3")

    def test_one_file_keeps_its_old_meaning(self):
        args = self.parse("run", "prog.cu", "-n", "5")
        self.assertEqual((args.sources, args.build_options, args.args), (["prog.cu"], [], ["-n", "5"]))

    def test_double_dash_ends_the_build_part(self):
        args = self.parse("run", "prog.cu", "-DX", "--", "data.cu", "-Iy", "--stats")
        self.assertEqual((args.sources, args.build_options), (["prog.cu"], ["-DX"]))
        self.assertEqual(args.args, ["data.cu", "-Iy", "--stats"])
        self.assertFalse(args.stats)

    def test_stats_among_the_sources_is_ours(self):
        args = self.parse("run", "a.cu", "--stats", "b.cpp", "1")
        self.assertEqual((args.sources, args.args, args.stats), (["a.cu", "b.cpp"], ["1"], True))

    def test_options_before_the_file_count_too(self):
        args = self.parse("run", "-I", "inc", "-DN=2", "prog.cu", "-DM", "5")
        self.assertEqual(args.sources, ["prog.cu"])
        self.assertEqual(args.build_options, ["-I" + os.path.abspath("inc"), "-DN=2", "-DM"])
        self.assertEqual(args.args, ["5"])

    def test_profile_takes_the_same_shape(self):
        args = self.parse("profile", "a.cu", "b.cu", "-DN=4", "--", "-x")
        self.assertEqual((args.sources, args.build_options, args.args), (["a.cu", "b.cu"], ["-DN=4"], ["-x"]))

    def test_an_option_without_its_value_is_a_usage_error(self):
        result = support.run_cli("run", "prog.cu", "-I")
        self.assertEqual(result.returncode, 2)
        self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
        self.assertIn("-I", result.stderr)
        self.assertEqual(support.run_cli("run", "prog.cu", "-D=3").returncode, 2)

    def test_a_missing_second_source_or_folder_is_named(self):
        with tempfile.TemporaryDirectory() as tmp:
            main = os.path.join(tmp, "main.cu")
            open(main, "w").close()
            result = support.run_cli("run", main, "missing_kernels.cu")
            self.assertEqual(result.returncode, 2)
            self.assertIn("missing_kernels.cu", result.stderr)
            result = support.run_cli("run", main, "-I", os.path.join(tmp, "nope"))
            self.assertEqual(result.returncode, 2)
            self.assertIn("nope", result.stderr)
            self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)


if __name__ == "__main__":
    unittest.main()
