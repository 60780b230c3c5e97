"""Collects OUT/<student>/report.json files (from grade_array.sbatch) into a CSV gradebook
on stdout, in the same format as ./course grade-all."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from course.grade_all import gradebook_csv  # noqa: E402


def main(out_dir: str) -> None:
    rows, keys = [], []
    for student in sorted(os.listdir(out_dir)):
        path = os.path.join(out_dir, student, "report.json")
        if not os.path.isfile(path):
            continue
        try:
            with open(path, encoding="utf-8") as f:
                report = json.load(f)
        except ValueError:
            rows.append({"student": student, "score": 0, "error": "no valid report.json"})
            continue
        row = {"student": student, "score": report["score"], "max_score": report["max_score"], "error": ""}
        for ex in report["exercises"]:
            key = ex["lesson"] + "/" + ex["exercise"]
            if key not in keys:
                keys.append(key)
            row[key] = ex["score"]
            row[key + " status"] = ex["status"]
        rows.append(row)
    sys.stdout.write(gradebook_csv(rows, keys))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "grades")
