"""The planted-submission suite shared between processes (autograder/submissions/run_planted.py,
shards.py): each test runs in exactly one process, whichever claims it first, and a process
reports the time of its own tests only. The suite itself runs this way in ctest."""
import io
import os
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

import support  # noqa: F401  (puts tools/ on the path)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SUBMISSIONS = os.path.join(ROOT, "autograder", "submissions")
sys.path.insert(0, SUBMISSIONS)

import run_planted  # noqa: E402
import shards  # noqa: E402


class Claims(unittest.TestCase):
    def test_without_a_claims_folder_every_test_is_this_processs(self):
        with mock.patch.dict(os.environ, {}, clear=False):
            os.environ.pop(shards.CLAIMS_ENV, None)
            self.assertTrue(shards.claim("a.b.test_x"))
            self.assertTrue(shards.claim("a.b.test_x"))

    def test_the_first_claim_wins_and_names_its_process(self):
        with tempfile.TemporaryDirectory() as claims:
            with mock.patch.dict(os.environ, {shards.CLAIMS_ENV: claims, shards.SHARD_ENV: "1"}):
                self.assertTrue(shards.claim("a.b.test_x"))
                self.assertEqual(shards.shard(), "1")
            with mock.patch.dict(os.environ, {shards.CLAIMS_ENV: claims, shards.SHARD_ENV: "0"}):
                self.assertFalse(shards.claim("a.b.test_x"))
                self.assertTrue(shards.claim("a.b.test_y"))
            with open(os.path.join(claims, "a.b.test_x")) as f:
                self.assertEqual(f.read().strip(), "1")

    def test_a_shard_number_must_be_a_number(self):
        with mock.patch.dict(os.environ, {shards.SHARD_ENV: "../x"}):
            self.assertIsNone(shards.shard())


def two_claiming_tests():
    """A TestCase of two tests that claim themselves as the planted cases do (made here, so
    that discovery does not run it as a test of its own)."""
    class Two(unittest.TestCase):
        def setUp(self):
            if not shards.claim(self.id()):
                self.skipTest(shards.SKIP_REASON)

        def test_a(self):
            pass

        def test_b(self):
            pass
    return Two


class TimedResults(unittest.TestCase):
    two = two_claiming_tests()

    def run_in_process(self, claims, n):
        stream = io.StringIO()
        with mock.patch.dict(os.environ, {shards.CLAIMS_ENV: claims, shards.SHARD_ENV: str(n)}):
            suite = unittest.defaultTestLoader.loadTestsFromTestCase(self.two)
            return unittest.TextTestRunner(stream=stream, resultclass=run_planted.TimedResult).run(suite)

    def test_two_processes_run_each_test_once_and_time_only_their_own(self):
        with tempfile.TemporaryDirectory() as claims:
            os.close(os.open(os.path.join(claims, self.two("test_a").id()), os.O_CREAT | os.O_WRONLY))  # "process 0"
            result = self.run_in_process(claims, 1)
            self.assertEqual([name.rsplit(".", 1)[1] for _, name in result.durations], ["test_b"])
            self.assertEqual(len(result.skipped), 1)
            self.assertTrue(result.wasSuccessful())
            again = self.run_in_process(claims, 2)
            self.assertEqual(again.durations, [])
            self.assertEqual(len(again.skipped), 2)

    def test_a_failure_is_found_again_in_its_process_log_with_its_message(self):
        class Failing(unittest.TestCase):
            def test_scored(self):
                self.assertEqual(0.0, 16.0, "linear_scan: status timed out, 0.0/25.0")

            def test_fine(self):
                pass
        suite = unittest.defaultTestLoader.loadTestsFromTestCase(Failing)
        result = unittest.TextTestRunner(stream=io.StringIO(), resultclass=run_planted.TimedResult).run(suite)
        printed = io.StringIO()
        with mock.patch("sys.stdout", printed):
            run_planted.report_failures(result)
        log = "test_scored ... FAIL\nshard 0: ran 2 tests\n" + printed.getvalue() + "OK\n"
        blocks = run_planted.failures_in(log)
        self.assertEqual(len(blocks), 1)
        self.assertTrue(blocks[0].startswith(run_planted.FAILURE_MARK + " "))
        self.assertIn(Failing("test_scored").id(), blocks[0])
        self.assertIn("linear_scan: status timed out, 0.0/25.0", blocks[0])
        self.assertNotIn("OK", blocks[0])
        self.assertEqual(run_planted.failures_in("test_fine ... ok\n"), [])

    def test_the_runner_refuses_no_processes(self):
        proc = subprocess.run([sys.executable, os.path.join(SUBMISSIONS, "run_planted.py"), "--processes", "0"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--processes must be at least 1", proc.stderr)


if __name__ == "__main__":
    unittest.main()
