"""The check that holds lesson 02's claims on the simulator's modelled roofline points
(course.roofline.modelled_disagreements), on reports shaped like roofline_demo's."""
import unittest

import support  # noqa: F401  (puts tools/ on sys.path)
from course import roofline

H200 = {"name": "H200", "fp32_flops": 66.9e12, "memory_bytes_per_s": 4.8e12}


def kernel(name, family, parameter, flops, nbytes, seconds, bound):
    return {"name": name, "family": family, "parameter": parameter, "flops": flops, "bytes": nbytes,
            "modelled_seconds": seconds, "modelled_bound": bound, "correct": True}


def lesson_like_report(chains_seconds=19e-6, tunable_bounds=None):
    """A report whose points sit where lesson 02 says, on an H200 (n = 2^22)."""
    n, bw, peak = 2.0 ** 22, H200["memory_bytes_per_s"], H200["fp32_flops"]
    kernels = [kernel("copy", "stream", 0, 0, 8 * n, 8 * n / bw + 2.5e-6, "memory"),
               kernel("scale", "stream", 0, n, 8 * n, 8 * n / bw + 2.5e-6, "memory"),
               kernel("add", "stream", 0, n, 12 * n, 12 * n / bw + 2.5e-6, "memory"),
               kernel("triad", "stream", 0, 2 * n, 12 * n, 12 * n / bw + 2.5e-6, "memory")]
    for k in (1, 4, 16, 64, 256, 1024):
        flops = 2.0 * k * n
        seconds = max(flops / peak, 8 * n / bw) + 2.5e-6
        bound = (tunable_bounds or {}).get(k, "compute" if flops / peak > 8 * n / bw else "memory")
        kernels.append(kernel("fma k=%d" % k, "tunable", k, flops, 8 * n, seconds, bound))
    kernels.append(kernel("fma chains", "peak", 256, 1.107e9, 2.16e6, chains_seconds, "compute"))
    return {"kernels": kernels}


class ModelledDisagreements(unittest.TestCase):
    def test_a_report_as_the_lesson_describes_it_agrees(self):
        self.assertEqual(roofline.modelled_disagreements(lesson_like_report(), H200), [])

    def test_fma_chains_far_from_the_peak_disagree(self):
        problems = roofline.modelled_disagreements(lesson_like_report(chains_seconds=40e-6), H200)
        self.assertEqual(len(problems), 1)
        self.assertIn("fma chains", problems[0])

    def test_a_point_above_the_roof_disagrees(self):
        report = lesson_like_report()
        report["kernels"][3]["modelled_seconds"] = 1e-6  # triad faster than its bytes allow
        problems = roofline.modelled_disagreements(report, H200)
        self.assertTrue(any("triad" in p and "beats the roofline" in p for p in problems), problems)

    def test_a_compute_bound_point_below_the_ridge_disagrees(self):
        problems = roofline.modelled_disagreements(lesson_like_report(tunable_bounds={1: "compute"}), H200)
        self.assertTrue(any(p.startswith("fma k=1:") and "expected memory-bound" in p for p in problems), problems)

    def test_a_report_without_modelled_times_is_refused(self):
        report = lesson_like_report()
        for k in report["kernels"]:
            del k["modelled_seconds"]
        self.assertEqual(len(roofline.modelled_disagreements(report, H200)), 1)


if __name__ == "__main__":
    unittest.main()
