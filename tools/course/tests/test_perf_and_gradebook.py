import unittest

from course.grade_all import gradebook_csv
from course.perf import credit, judge


class CreditCurveTest(unittest.TestCase):
    def test_shape(self):
        self.assertEqual(credit(0.5), 1.0)
        self.assertEqual(credit(1.2), 1.0)
        self.assertAlmostEqual(credit(5.6), 0.5, places=3)
        self.assertEqual(credit(10.0), 0.0)
        self.assertEqual(credit(50.0), 0.0)
        self.assertEqual(credit(float("nan")), 0.0)

    def test_sim_not_counted_is_not_graded(self):
        run = {"counted": "0", "global_bytes": "0", "bytes": "12"}
        out = judge("global_bytes", "sim", [run], [run])
        self.assertFalse(out.graded)
        self.assertIn("not graded on sim yet", out.summary)

    def test_sim_bytes_ratio(self):
        ref = {"counted": "1", "global_bytes": "1200", "bytes": "1200"}
        mine = dict(ref, global_bytes="2400")
        out = judge("global_bytes", "sim", [mine], [ref])
        self.assertTrue(out.graded)
        self.assertAlmostEqual(out.ratio, 2.0)
        self.assertAlmostEqual(out.fraction, credit(2.0))

    def test_sim_fewer_bytes_than_needed_is_flagged(self):
        ref = {"counted": "1", "global_bytes": "1200", "bytes": "1200"}
        out = judge("global_bytes", "sim", [dict(ref, global_bytes="12")], [ref])
        self.assertTrue(out.suspicious)
        self.assertEqual(out.fraction, 0.0)

    def test_sim_modelled_time_ratio_names_the_dominant_term(self):
        ref = {"counted": "1", "global_bytes": "1200", "bytes": "1200", "modelled_ns": "4000",
               "launch_ns": "2500", "memory_ns": "1500", "compute_ns": "0", "span_ns": "96", "atomic_ns": "0",
               "gpu": "H100"}
        same = judge("modelled_time", "sim", [ref], [ref])
        self.assertEqual((same.ratio, same.fraction), (1.0, 1.0))
        self.assertIn("launch-bound: 2.50 us of 4.00 us modelled on H100", same.summary)
        # One thread walking the array: the same bytes, but a span 2000 times longer.
        slow = dict(ref, modelled_ns="6002500", span_ns="6000000")
        out = judge("modelled_time", "sim", [slow], [ref])
        self.assertEqual(out.fraction, 0.0)
        self.assertIn("span-bound (the longest thread): 6000.0 us of 6002.5 us", out.summary)

    def test_sim_modelled_time_counts_atomics_as_moved_bytes(self):
        ref = {"counted": "1", "global_bytes": "800", "atomic_bytes": "400", "bytes": "1200",
               "modelled_ns": "3000", "launch_ns": "2500", "memory_ns": "500", "gpu": "H100"}
        self.assertFalse(judge("modelled_time", "sim", [ref], [ref]).suspicious)
        fewer = dict(ref, atomic_bytes="0")
        self.assertTrue(judge("modelled_time", "sim", [fewer], [ref]).suspicious)

    def test_gpu_time_ratio_and_physical_limit(self):
        ref = {"median_ms": "1.0", "bytes": "4e9", "copy_bytes_per_s": "4.3e12"}
        out = judge("time", "cuda", [dict(ref, median_ms="1.1")] * 3, [ref] * 3)
        self.assertEqual(out.fraction, 1.0)
        fast = judge("time", "cuda", [dict(ref, median_ms="0.1")], [ref])   # 40 TB/s: impossible
        self.assertTrue(fast.suspicious)
        self.assertEqual(fast.fraction, 0.0)


class GradebookTest(unittest.TestCase):
    def test_columns_and_formula_injection(self):
        rows = [{"student": "=cmd()", "score": 10, "max_score": 45, "00/a": 10, "00/a status": "passed", "error": ""},
                {"student": "bob", "score": 0, "max_score": "", "error": "course failed"}]
        text = gradebook_csv(rows, ["00/a"])
        lines = text.splitlines()
        self.assertEqual(lines[0], "student,score,max_score,00/a,00/a status,error")
        self.assertTrue(lines[1].startswith("'=cmd()"))
        self.assertEqual(lines[2], "bob,0,,,,course failed")


if __name__ == "__main__":
    unittest.main()
