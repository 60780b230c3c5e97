"""The figures the GPU report reads from ctest, the grader and the lessons' experiments.

The sample outputs are written with the same format strings as the programs' printf calls
(GPU builds, where the measured columns appear), so a change of a table shows up here."""
import unittest

import support  # noqa: F401  (puts tools/ on sys.path)
from course import gpu_figures as figs


def tokens_output() -> str:
    names = ("LSTM, 2 layers (a launch per step)", "LSTM, 2 layers (CUDA graph)", "Transformer encoder layer")
    lines = ["GPU: NVIDIA H200, forward passes timed with CUDA events (median of 5 after a warm-up), batch 1.", "",
             "%8s | %26s | %26s | %26s | %s" % (("tokens",) + names + ("Transformer / LSTM",)),
             "%8s | %13s %12s | %13s %12s | %13s %12s |" % ("", "tokens/s", "launches", "tokens/s", "nodes",
                                                             "tokens/s", "launches")]
    for length, lstm, graph, tr in ((256, 41000.0, 83000.0, 2.1e6), (4096, 40500.0, 81200.0, 1.15e7)):
        lines.append("%8d | %13.3g %12d | %13.3g %12d | %13.3g %12d | %6.1fx"
                     % (length, lstm, 2 * length + 2, graph, 2 * length + 2, tr, 10, tr / lstm))
    return "\n".join(lines) + "\n\nThe LSTM's tokens/s stay flat: ...\n"


def loader_output() -> str:
    out = ["data set: 24 batches of 128 samples x 12288 bytes in 3 files (6 MB) in /tmp/course04-bench-1",
           "host: 16 CPU threads, load average 0.50 0.40 0.30",
           "host to device, 16 copies of %.1f MB: pageable %.1f GB/s, pinned %.1f GB/s (%.2fx)"
           % (6.3, 9.8, 24.6, 2.51)]
    for name, repeats in (("loading-bound", 2), ("compute-bound", 24)):
        out += ["", "== %s: training step = %d passes over the batch ==" % (name, repeats),
                "%-40s %12s %12s %14s" % ("stage, measured alone", "samples/s", "ms/batch", "CPU ms/batch"),
                "%-40s %12.0f %12.2f %14.2f" % ("load (read + preprocess, 4 workers)", 51200, 2.5, 9.1),
                "%-40s %12.0f %12.2f %14.2f" % ("copy (pinned, host to device)", 480000, 0.27, 0.27),
                "", "%-40s %12s %12s %10s" % ("loader", "samples/s", "ms/batch", "GPU idle"),
                "%-40s %12.0f %12.2f %9.0f%%" % ("sync", 9000, 14.2, 93),
                "%-40s %12.0f %12.2f %9.0f%%" % ("+ overlap (4 workers)", 48000, 2.67, 41)]
    out += ["", "== the overlapped pipeline (4 workers) against its slowest stage measured alone, 3 trials ==",
            "%-14s %5s %-26s %10s %10s %8s %9s %14s" % ("configuration", "trial", "slowest stage (alone)", "stage/s",
                                                         "pipeline/s", "% of it", "GPU idle", "CPU ms/batch*")]
    for name in ("loading-bound", "compute-bound"):
        for trial in (1, 2):
            out.append("%-14s %5d %-26s %10.0f %10.0f %7.0f%% %8.0f%% %6.2f / %5.2f"
                       % (name, trial, "load (2.500 ms/batch)", 51200, 48000, 94, 41, 9.4, 2.5))
        out.append("%-14s %5s %-26s %10s %10s %7.0f%% %8.0f%%   (range %.0f-%.0f%%, idle %.0f-%.0f%%)"
                   % (name, "med.", "", "", "", 94, 41, 92, 96, 39, 44))
    out += ["* CPU ms per batch of all stages together ...", "", "timeline: build/04/loader_timeline.svg"]
    return "\n".join(out) + "\n"


class Ctest(unittest.TestCase):
    def test_each_finished_test_with_its_verdict_and_time(self):
        text = ("    Start  3: cudasim/atomics\n"
                " 1/75 Test  #3: cudasim/atomics ...........................   Passed    0.52 sec\n"
                " 2/75 Test #12: solution/00-gpu-vs-cpu/saxpy ..............***Failed    1.02 sec\n"
                " 3/75 Test #40: solution/04-data-loading/overlap ..........***Timeout 300.01 sec\n"
                " 4/75 Test #41: cudasim/faults ............................***Exception: SegFault  0.10 sec\n")
        tests = figs.parse_ctest_tests(text)
        self.assertEqual([t["name"] for t in tests], ["cudasim/atomics", "solution/00-gpu-vs-cpu/saxpy",
                                                      "solution/04-data-loading/overlap", "cudasim/faults"])
        self.assertEqual([t["status"] for t in tests], ["Passed", "Failed", "Timeout", "Exception: SegFault"])
        self.assertEqual(tests[2]["seconds"], 300.01)


class Grades(unittest.TestCase):
    @staticmethod
    def report(score, ratio, status="passed"):
        return {"score": score, "max_score": 20, "execution_time": 80.0, "performance": "graded",
                "exercises": [{"lesson": "00-gpu-vs-cpu", "exercise": "vector_add", "status": status, "score": score,
                               "max_score": 20, "tests_passed": 4, "tests_total": 4, "performance_score": 5,
                               "performance_max": 5, "performance_ratio": ratio, "performance": "%.2fx" % ratio}]}

    def test_full_marks_and_the_spread_of_the_ratios(self):
        runs = [figs.grade_figures(self.report(20, r)) for r in (1.02, 0.97, 1.05)]
        self.assertTrue(all(r["full_marks"] for r in runs))
        spread = figs.ratio_spread(runs)["00-gpu-vs-cpu/vector_add"]
        self.assertEqual(spread["ratios"], [1.02, 0.97, 1.05])
        self.assertEqual((spread["min"], spread["median"], spread["max"]), (0.97, 1.02, 1.05))
        self.assertAlmostEqual(spread["spread"], 0.08)

    def test_a_run_without_a_ratio_keeps_its_place(self):
        runs = [figs.grade_figures(self.report(20, 1.0)), figs.grade_figures(self.report(15, 1.0, "failed"))]
        runs[1]["exercises"]["00-gpu-vs-cpu/vector_add"]["performance_ratio"] = None
        self.assertFalse(runs[1]["full_marks"])
        self.assertEqual(figs.ratio_spread(runs)["00-gpu-vs-cpu/vector_add"]["ratios"], [1.0, None])

    def test_skeletons_score_zero(self):
        self.assertTrue(figs.grade_figures(self.report(0, 1.0, "failed"))["scored_zero"])
        self.assertFalse(figs.grade_figures(self.report(0, 1.0, "passed"))["scored_zero"])


class Experiments(unittest.TestCase):
    def test_tokens_per_second_rows_and_the_graph_speedup(self):
        f = figs.parse_tokens_per_second(tokens_output())
        self.assertEqual(f["device"], "NVIDIA H200")
        self.assertEqual([r["tokens"] for r in f["rows"]], [256, 4096])
        first = f["rows"][0]
        self.assertEqual(first["lstm_launches_tokens_per_s"], 41000.0)
        self.assertEqual(first["lstm_graph_launches"], 514)
        self.assertEqual(first["transformer_launches"], 10)
        self.assertAlmostEqual(first["graph_over_launches"], 83000 / 41000)
        self.assertIn("CUDA graph vs a launch per step: 2.00x to 2.02x", figs.tokens_headline(f))
        f["rows"][0]["graph_over_launches"] = 2.001    # the same once printed: one figure, not a range
        self.assertIn("CUDA graph vs a launch per step: 2.00x tokens/s", figs.tokens_headline(f))

    def test_batch_sweep_lines_and_data_file(self):
        text = ("H200 (datasheet): 989 TFLOP/s dense bf16, 4.80 TB/s -> ridge point 206 FLOP/B;\n"
                "intensity = B*K*N / (B*K + K*N + B*N) reaches it at B = 219 (about the ridge point itself ...)\n"
                "\nmeasured: W read at 4.12 TB/s (B = 1), best 702 TFLOP/s -> measured crossover B ~ 170 "
                "(predicted 219)\n")
        dat = ("# batch flops bytes intensity predicted_tflops measured_tflops\n"
               "1 3.35544e+07 3.35807e+07 0.999 4.79 4.1\n"
               "256 8.58993e+09 3.78536e+07 227 989 702\n")
        f = figs.parse_batch_sweep(text, dat)
        self.assertEqual(f["datasheet"]["ridge_flop_per_byte"], 206.0)
        self.assertEqual(f["predicted_crossover_batch"], 219.0)
        self.assertEqual(f["measured"], {"weights_read_tb_per_s": 4.12, "best_tflops": 702.0, "crossover_batch": 170.0})
        self.assertEqual(f["table"]["rows"][1]["measured_tflops"], 702.0)
        self.assertIn("measured crossover B ~ 170 (predicted 219)", figs.batch_sweep_headline(f))

    def test_loader_benchmark_tables(self):
        f = figs.parse_loader_benchmark(loader_output())
        self.assertEqual(f["host_to_device"]["pinned_over_pageable"], 2.51)
        loading = f["configurations"]["loading-bound"]
        self.assertEqual(loading["training_step_passes"], 2)
        self.assertEqual([s["stage"] for s in loading["stages"]],
                         ["load (read + preprocess, 4 workers)", "copy (pinned, host to device)"])
        self.assertEqual(loading["loaders"][1], {"loader": "+ overlap (4 workers)", "samples_per_s": 48000.0,
                                                 "ms_per_batch": 2.67, "gpu_idle_percent": 41.0})
        self.assertEqual(len(f["pipeline_trials"]), 4)
        self.assertEqual(f["pipeline_trials"][0]["slowest_stage"], "load")
        self.assertEqual(f["pipeline_medians"]["compute-bound"]["percent_range"], [92.0, 96.0])
        self.assertIn("loading-bound: 94% of its slowest stage", figs.loader_headline(f))

    def test_parallelism_experiment_lines_and_data_file(self):
        text = ("Model: 8 layers relu(W x + b), hidden 512, batch 64, fp32: 2.10 M parameters (8.41 MB), 0.81 GFLOP "
                "per training step\n2 ranks on 1 device(s); pipeline: 8 micro-batches of 8 rows, bubble ...\n"
                "link 0 -> 1, one GPU (device-to-device): measured 1650.2 GB/s, 6.1 us per message\n"
                "\nloss before the step: DP 0.512345, TP 0.512345, PP 0.512345 (the same model, as it must be)\n")
        dat = ("# L=8 H=512 B=64 ranks=2\n# label busiest_bytes predicted_comm_ms measured_comm_ms "
               "predicted_step_ms measured_step_ms\n\"DP same-GPU\" 8413184 0.0112 0.0231 0.05 0.09\n")
        f = figs.parse_parallelism_experiment(text, dat)
        self.assertEqual(f["model"], {"layers": 8, "hidden": 512, "batch": 64})
        self.assertEqual((f["ranks"], f["devices"]), (2, 1))
        self.assertEqual(f["link"]["gb_per_s"], 1650.2)
        self.assertTrue(f["loss"]["agree"])
        self.assertEqual(f["table"]["notes"], ["L=8 H=512 B=64 ranks=2"])
        self.assertEqual(f["table"]["rows"][0]["label"], "DP same-GPU")
        self.assertEqual(f["table"]["rows"][0]["measured_comm_ms"], 0.0231)

    def test_roofline_points_and_checks(self):
        text = "check: triad bandwidth = 91% of cudaMemcpy's 4.1 TB/s (target >= 85%)\nwrote x\n"
        data = {"device": "NVIDIA H200", "backend": "cuda", "machine": {"name": "H200"}, "measured_roof": None,
                "points": [{"who": "reference", "name": "triad", "flops": 1, "bytes": 12, "seconds": 0.001,
                            "correct": True, "intensity": 0.08, "extra": "dropped"}], "reports": {"big": 1}}
        f = figs.parse_roofline(text, data)
        self.assertEqual(f["checks"], ["triad bandwidth = 91% of cudaMemcpy's 4.1 TB/s (target >= 85%)"])
        self.assertEqual(f["points"][0]["name"], "triad")
        self.assertNotIn("extra", f["points"][0])
        self.assertNotIn("reports", f)

    def test_unrecognised_output_gives_no_figures(self):
        self.assertEqual(figs.parse_tokens_per_second("something else\n"), {})
        self.assertEqual(figs.parse_loader_benchmark("something else\n"), {})
        self.assertEqual(figs.parse_roofline("nothing", None), {})


if __name__ == "__main__":
    unittest.main()
