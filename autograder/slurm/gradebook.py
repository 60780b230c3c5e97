"""Collects OUT/<student>/report.json files (from grade_array.sbatch) into a CSV gradebook on
stdout, in the same format as ./course grade-all's gradebook.csv.

    python3 autograder/slurm/gradebook.py OUT [LIST]

With LIST (the array's list of submission folders), every student listed gets a row: one whose
task left no report (it failed, was cancelled or ran out of time) gets 0 and says so, instead
of silently missing from the gradebook."""
import json
import os
import sys
from typing import Dict, List, Optional

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from course.grade_all import exercise_keys, gradebook_csv, row_from_report  # noqa: E402


def students_of(out_dir: str, listing: Optional[str]) -> List[str]:
    """The listed submissions' folder names, in the list's order; else the folders in OUT."""
    if listing is None:
        return sorted(n for n in os.listdir(out_dir) if os.path.isdir(os.path.join(out_dir, n)))
    with open(listing, encoding="utf-8") as f:
        return [os.path.basename(line.strip().rstrip("/")) for line in f if line.strip()]


def row_for(out_dir: str, student: str, keys: List[str]) -> Dict[str, object]:
    """One gradebook row from the student's report.json; new exercise columns go into keys."""
    path = os.path.join(out_dir, student, "report.json")
    if not os.path.isfile(path):
        return {"student": student, "score": 0, "max_score": "",
                "error": "no report: its array task did not finish (see its slurm-*.out)"}
    try:
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
        if "score" not in report or "max_score" not in report:
            raise KeyError("score")
        row = row_from_report(student, report)
        keys.extend(k for k in exercise_keys(report) if k not in keys)
        return row
    except (ValueError, KeyError, TypeError, AttributeError):
        return {"student": student, "score": 0, "max_score": "", "error": "no valid report.json"}


def main(argv: List[str]) -> int:
    if not argv or len(argv) > 2:
        sys.stderr.write("usage: gradebook.py OUT [LIST]\n")
        return 2
    out_dir, listing = argv[0], (argv[1] if len(argv) > 1 else None)
    keys: List[str] = []
    rows = [row_for(out_dir, student, keys) for student in students_of(out_dir, listing)]
    sys.stdout.write(gradebook_csv(rows, keys))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
