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

# A stand-in for a test program whose drawn shape misses a bound at odd seeds: it writes its
# results where GoogleTest's --gtest_output=json:FILE says, as the real ones do.
PROGRAM = """#!/usr/bin/env python3
import json, os, sys
seed = int(os.environ["COURSE_SEED"])
if seed == 4:
    sys.exit(3)                               # a crash before any results
path = [a for a in sys.argv if a.startswith("--gtest_output=json:")][0].split(":", 1)[1]
fail = [{"failure": "Expected: (traffic.shared_bytes) <= (padded_macs)"}] if seed % 2 else []
cases = [{"name": "LoadsEachElementOncePerBlockTile", "result": "COMPLETED", "failures": fail},
         {"name": "Other", "result": "COMPLETED", "failures": fail},
         {"name": "MatchesCpu", "result": "COMPLETED", "failures": []}]
with open(path, "w") as f:
    json.dump({"testsuites": [{"name": "WmmaMatmul", "testsuite": cases}]}, f)
sys.exit(1 if fail else 0)
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

    def test_a_crash_without_results_says_so(self):
        ok, names, other = seed_sweep.run_once(self.program, 4)
        self.assertEqual((ok, names), (False, []))
        self.assertIn("wrote no results file (exit code 3)", other)

    def test_only_goes_with_seeds(self):
        proc = subprocess.run([os.path.join(ROOT, "course"), "selftest", "--only", "03"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("--only goes with --seeds", proc.stdout)


if __name__ == "__main__":
    unittest.main()
