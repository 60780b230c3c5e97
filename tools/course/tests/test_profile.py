"""The profile view's arithmetic and table, from a statistics file like the simulator writes."""
import unittest

from course.errors import CourseError
from course.profile import parse_gpu_list, predicted_seconds, render_table

STATS = {
    "instrumented": True,
    "kernels": [
        {"name": "copy", "launches": 2, "blocks": 8, "threads": 1024, "global_load_bytes": 4000,
         "global_store_bytes": 4000, "shared_load_bytes": 0, "shared_store_bytes": 0, "atomics": 0,
         "host_access_bytes": 0, "flops": 0},
        {"name": "tiled_matmul<16>", "launches": 1, "blocks": 16, "threads": 4096,
         "global_load_bytes": 2 * 64 ** 3 * 4 // 16, "global_store_bytes": 64 * 64 * 4,
         "shared_load_bytes": 64 ** 3 * 8, "shared_store_bytes": 64 * 64 * 4 * 8, "atomics": 0,
         "host_access_bytes": 0, "flops": 2 * 64 ** 3},
    ],
    "copies": {"host_to_device_bytes": 4000, "device_to_host_bytes": 4000, "device_to_device_bytes": 0},
}


class ProfileTest(unittest.TestCase):
    def test_memory_bound_kernels_take_bytes_over_bandwidth(self):
        self.assertAlmostEqual(predicted_seconds(0, 4.8e12, "H200"), 1.0)
        self.assertAlmostEqual(predicted_seconds(0, 3.35e12, "H100"), 1.0)

    def test_compute_bound_kernels_take_flops_over_peak(self):
        self.assertAlmostEqual(predicted_seconds(67e12, 1.0, "H100"), 1.0)

    def test_gpu_list_is_checked(self):
        self.assertEqual(parse_gpu_list("h100,T4"), ["H100", "T4"])
        self.assertEqual(parse_gpu_list(None), ["H100", "H200", "A100", "T4"])
        with self.assertRaises(CourseError):
            parse_gpu_list("V100")

    def test_table_shows_bytes_intensity_and_times(self):
        table = render_table(STATS, ["H200"])
        self.assertIn("copy", table)
        self.assertIn("8.00 KB", table)          # 4000 loaded + 4000 stored
        matmul_line = [l for l in table.splitlines() if l.startswith("tiled_matmul<16>")][0]
        intensity = 2 * 64 ** 3 / (2 * 64 ** 3 * 4 / 16 + 64 * 64 * 4)
        self.assertIn("%.2f" % intensity, matmul_line)

    def test_table_shows_the_modelled_time_coalescing_and_span(self):
        copy = dict(STATS["kernels"][0], global_requests=64, global_sectors=256, span_global_ops=2,
                    span_shared_ops=0, modelled_ns=5600.0, modelled_bound="launch overhead", modelled_gpu="H100")
        table = render_table(dict(STATS, kernels=[copy]), ["H100"])
        self.assertIn("modelled H100", table.splitlines()[0])
        line = [l for l in table.splitlines() if l.startswith("copy")][0]
        self.assertIn("4.0", line)              # 256 sectors / 64 requests
        self.assertIn("2/0", line)
        self.assertIn("5.6 us", line)
        self.assertIn("launch overhead", line)
        # Older statistics files (no modelled figures) still render.
        self.assertIn("-", render_table(STATS, ["H100"]).splitlines()[2])

    def test_no_kernels_says_so(self):
        self.assertEqual(render_table({"kernels": []}, ["H100"]), "no kernel was launched")


if __name__ == "__main__":
    unittest.main()
