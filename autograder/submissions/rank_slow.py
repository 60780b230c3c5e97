"""Does the simulator's performance model rank a slow solution below the reference, as a GPU does?

Issue 15 asks that, where a GPU is available, the model's predicted times be set against measured
ones: the model does not have to match a GPU's times, but its ranking of a slow and a fast
solution must. The slow solutions are planted submissions (planted.py) that get the right
numbers the slow way: one lane per softmax row, tile loads down the columns, a serial block
scan, an atomic per thread, ... Each is graded like a student's, and its performance is measured
even where a test of how the work is done fails (``measure_failing``: reported, never scored),
against the reference, on the backend asked for:

    # on the simulator (modelled times; CUDASIM_GPU picks the GPU modelled, default H100)
    CUDASIM_GPU=H200 python3 autograder/submissions/rank_slow.py --out build/rank-sim.json
    # on a machine with an NVIDIA GPU (measured times): ./course gpu-report --steps ranking
    python3 autograder/submissions/rank_slow.py --backend cuda --out build/rank-cuda.json

Each row is a case and one of its exercises: the submission's time over the reference's (the
grader's ``performance_ratio``; above 1 is slower). The rows are written to ``--out`` after every
case, so a run stopped at ``--deadline`` keeps what it measured.
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, HERE)

import planted  # noqa: E402
from course.grade import Reference, course_snapshot, grade_submission  # noqa: E402
from course.session import open_session  # noqa: E402

# (planted case, the exercises of it to rank), most telling first: a lease that runs out of time
# has ranked one slow solution of as many exercises as it could. Slow solutions whose time on a
# GPU's problem size would be minutes (one thread walking 2^26 elements, one thread per
# recurrent sequence over 4,096 steps) are left out: the lease could not afford them.
CASES = [
    ("atomic_per_thread_dot_product", ["dot_product"]),
    ("tiled_matmul_tile_loads_down_columns", ["tiled_matmul"]),
    ("one_lane_walks_each_softmax_row", ["attention"]),
    ("linear_scan_serial_block_scan", ["linear_scan"]),
    ("fused_through_memory", ["fusion"]),
    ("blocks_that_do_not_combine_and_tiles_not_in_registers", ["register_tiled_matmul", "dot_product"]),
    ("wmma_one_warp_of_four_works", ["wmma_matmul"]),
    ("rnn_persistent_state_in_global_memory", ["rnn_persistent"]),
    ("ring_allreduce_star_at_the_performance_shape", ["ring_allreduce"]),
    ("closed_form_peak_flops", ["peak_flops"]),
    ("closed_form_tunable_intensity", ["tunable_intensity"]),
    ("dot_product_one_shared_accumulator", ["dot_product"]),
    ("attention_chunked_softmax_rows", ["attention"]),
    ("a_tile_walked_through_shuffles", ["linear_scan"]),
    ("fusion_quarter_threads_except_at_the_checked_sizes", ["fusion"]),
]


def rank_case(session, reference, snapshot, build_dir: str, tmp: str, name: str, exercises, timeout: float,
              seed: int) -> list:
    folder = planted.make_case(ROOT, name, tmp)
    try:
        report = grade_submission(ROOT, session.toolchain, folder, planted.lesson_of(name), timeout=timeout,
                                  memory_bytes=4 << 30, build_dir=build_dir, reference=reference, snapshot=snapshot,
                                  quiet=True, seed=seed, only_files=planted.graded_files(name), measure_failing=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    by_name = {g.name: g for g in report.exercises}
    rows = []
    for exercise in exercises:
        g = by_name.get(exercise)
        rows.append({"case": name, "exercise": exercise, "status": g.status if g else "not graded",
                     "tests": "%s/%s" % (g.tests_passed, g.tests_total) if g else "",
                     "ratio": g.performance_ratio if g else None, "performance": g.performance if g else ""})
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", default=os.environ.get("COURSE_BACKEND", "sim"), choices=("sim", "cuda"))
    parser.add_argument("--out", required=True, help="the JSON file of rows, rewritten after every case")
    parser.add_argument("--cases", help="comma-separated case names (default: every case, in order)")
    parser.add_argument("--deadline", type=float, default=0, help="seconds: start no case after this")
    parser.add_argument("--timeout", type=float, default=120, help="seconds per test program run")
    parser.add_argument("--seed", type=int, default=20261127, help="the tests' inputs (the same for every case)")
    args = parser.parse_args(argv)
    known = dict(CASES)
    chosen = args.cases.split(",") if args.cases else [c for c, _ in CASES]
    unknown = [c for c in chosen if c not in known]
    if unknown:
        parser.error("unknown case(s) %s; the cases are %s" % (", ".join(unknown), ", ".join(known)))
    os.environ.setdefault("COURSE_QUIET", "1")
    os.environ["COURSE_BACKEND"] = args.backend   # planted.reference_build names the backend's folder
    started = time.monotonic()
    session = open_session(args.backend)
    reference = Reference(ROOT, session.toolchain)
    snapshot = course_snapshot(ROOT, session.toolchain.backend)
    build_dir = os.path.join(ROOT, "build", "grade-" + args.backend, "rank-slow")
    tmp = tempfile.mkdtemp(prefix="course-rank-")
    result = {"backend": args.backend, "gpu": os.environ.get("CUDASIM_GPU", "H100") if args.backend == "sim" else
              "measured", "seed": args.seed, "rows": [], "skipped": []}

    def save() -> None:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=2)
    try:
        for name in chosen:
            if args.deadline and time.monotonic() - started > args.deadline:
                result["skipped"].append(name)
                continue
            clock = time.monotonic()
            rows = rank_case(session, reference, snapshot, build_dir, tmp, name, known[name], args.timeout, args.seed)
            for row in rows:
                row["seconds"] = round(time.monotonic() - clock, 1)
                ratio = "%.2fx" % row["ratio"] if row["ratio"] is not None else "no ratio"
                print("%-55s %-22s %-10s %s  (%s)" % (name, row["exercise"], ratio, row["status"], row["performance"]),
                      flush=True)
            result["rows"] += rows
            save()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    save()   # the cases left out at the deadline, or no case at all
    if result["skipped"]:
        print("rank_slow: out of time before: " + ", ".join(result["skipped"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
