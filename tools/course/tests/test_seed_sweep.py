"""``./course selftest --seeds N`` (seed_sweep.py): a test program run under a seed, what failed
read from GoogleTest's summary, and the arguments it refuses."""
import os
import stat
import subprocess
import tempfile
import unittest

import support  # noqa: F401  (puts tools/ on the path)
from course import seed_sweep

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

# A stand-in for a test program whose drawn shape misses a bound at odd seeds.
PROGRAM = """#!/bin/sh
echo "[ COURSE   ] seed: $COURSE_SEED"
if [ $((COURSE_SEED % 2)) -eq 1 ]; then
  echo "[  FAILED  ] WmmaMatmul.LoadsEachElementOncePerBlockTile (114 ms)"
  echo "[  FAILED  ] WmmaMatmul.Other (1 ms)"
  echo " 2 FAILED TESTS"
  exit 1
fi
if [ "$COURSE_SEED" = 4 ]; then exit 3; fi
echo "[  PASSED  ] 5 tests."
"""


class SeedSweep(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.program = os.path.join(self.tmp, "wmma_matmul_test")
        with open(self.program, "w") as f:
            f.write(PROGRAM)
        os.chmod(self.program, stat.S_IRWXU)

    def tearDown(self):
        import shutil
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_a_passing_seed(self):
        self.assertEqual(seed_sweep.run_once(self.program, 2), (True, [], ""))

    def test_a_failing_seed_names_its_tests(self):
        self.assertEqual(seed_sweep.run_once(self.program, 3),
                         (False, ["WmmaMatmul.LoadsEachElementOncePerBlockTile", "WmmaMatmul.Other"], ""))

    def test_a_crash_without_a_summary_gives_the_exit_status(self):
        self.assertEqual(seed_sweep.run_once(self.program, 4), (False, [], "exit status 3"))

    def test_only_goes_with_seeds(self):
        proc = subprocess.run([os.path.join(ROOT, "course"), "selftest", "--only", "03"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("--only goes with --seeds", proc.stdout)


if __name__ == "__main__":
    unittest.main()
