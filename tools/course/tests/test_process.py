"""The runner for untrusted test programs: time limit, signals, output cap."""
import sys
import tempfile
import unittest

import support  # noqa: F401  (sets up the import path)
from course.process import run_limited


class Limits(unittest.TestCase):
    def run_python(self, code, **kwargs):
        with tempfile.TemporaryDirectory() as cwd:
            return run_limited([sys.executable, "-c", code], cwd=cwd, **kwargs)

    def test_normal_exit_code_and_output(self):
        result = self.run_python("import sys; print('hi'); sys.exit(3)")
        self.assertEqual(result.returncode, 3)
        self.assertEqual(result.output, "hi\n")
        self.assertIsNone(result.describe_abnormal_end())

    def test_timeout_kills_the_program(self):
        result = self.run_python("import time\nwhile True: time.sleep(0.05)", timeout=0.5)
        self.assertTrue(result.timed_out)
        self.assertLess(result.seconds, 10)
        self.assertIn("timed out", result.describe_abnormal_end())

    def test_crash_is_named_by_its_signal(self):
        result = self.run_python("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)")
        self.assertEqual(result.signal_name, "SIGSEGV")
        self.assertEqual(result.describe_abnormal_end(), "crashed (SIGSEGV)")

    def test_output_keeps_only_the_end(self):
        result = self.run_python("import sys\nfor i in range(20000): print('line %06d' % i)", output_cap=4096)
        self.assertTrue(result.output_truncated)
        self.assertIn("line 019999", result.output)
        self.assertNotIn("line 000000", result.output)
        self.assertLess(len(result.output), 4096 + 200)

    def test_memory_limit(self):
        result = self.run_python("x = bytearray(512 << 20)\nprint('allocated')", memory_bytes=128 << 20)
        self.assertNotEqual(result.returncode, 0)
        self.assertNotIn("allocated", result.output)


if __name__ == "__main__":
    unittest.main()
