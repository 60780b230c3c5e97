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

    def test_unknown_lesson(self):
        self.assertOneLineUsageError(support.run_cli("grade", "--lesson", "42"), "unknown lesson", "42")

    def test_run_without_a_file(self):
        self.assertOneLineUsageError(support.run_cli("run"), "FILE.cu")

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


if __name__ == "__main__":
    unittest.main()
