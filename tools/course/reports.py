"""Writers for a grade: a terminal table, JSON, Gradescope's results.json, JUnit XML."""
import json
import os
import xml.etree.ElementTree as ET
from typing import List

from .grade import ExerciseGrade, GradeReport
from .ui import format_points, format_table

FORMATS = ("table", "json", "junit", "gradescope")
GRADESCOPE_OUTPUT_CAP = 16 * 1024   # per test: Gradescope shows it inline, keep it readable


def _tests_cell(g: ExerciseGrade) -> str:
    return "-" if g.tests_total is None else "%d/%d" % (g.tests_passed, g.tests_total)


def _note_cell(g: ExerciseGrade, width: int = 60) -> str:
    """A short note for the table; the full reason is in the details and in JSON."""
    if g.status in ("passed", "failed"):
        note = g.note or g.status
    else:
        note = g.status
    note = note.splitlines()[0] if note else ""
    return note if len(note) <= width else note[:width - 3] + "..."


def _perf_cell(g: ExerciseGrade) -> str:
    if g.performance_max <= 0 or g.criterion == "none":
        return "-"
    if not g.performance_graded:
        return "not graded"
    return "%s/%s%s" % (format_points(g.performance_score), format_points(g.performance_max),
                        " (flagged)" if g.performance_suspicious else "")


def format_grade_table(report: GradeReport, details: bool = True) -> str:
    rows = [[g.key, _tests_cell(g), _perf_cell(g), "%s/%s" % (format_points(g.total_score), format_points(g.total_max)),
             _note_cell(g)] for g in report.exercises]
    footer = ["total", "", "", "%s/%s" % (format_points(report.score), format_points(report.max_score)), ""]
    out = [format_table(["exercise", "tests", "perf", "score", "note"], rows, footer)]
    out.append("performance: %s" % report.performance)
    if report.seed is not None:
        out.append("seed: %d (grade again with --seed %d for the same inputs)" % (report.seed, report.seed))
    if report.ignored_files:
        out.append("ignored (not an exercise of the course): %s" % ", ".join(report.ignored_files))
    if details:
        for g in report.exercises:
            body = g.feedback if g.status != "passed" else ""
            if not body and g.status not in ("passed", "failed") and g.note:
                body = g.note
            if body:
                out.append("")
                out.append("--- %s: %s ---" % (g.key, g.status))
                out.append(_first_lines(body, 60))
        for g in report.exercises:
            if g.performance_max > 0 and g.criterion != "none":
                out.append("")
                out.append("--- %s: performance (%s) ---" % (g.key, g.criterion))
                out.append(g.performance)
    return "\n".join(out)


def _first_lines(text: str, count: int) -> str:
    lines = text.rstrip().splitlines()
    if len(lines) <= count:
        return "\n".join(lines)
    return "\n".join(lines[:count] + ["[... %d more lines; --format json shows everything ...]" % (len(lines) - count)])


def grade_json(report: GradeReport) -> dict:
    return report.to_dict()


def _test_output(g: ExerciseGrade) -> str:
    """What Gradescope shows under one exercise: the outcome, then why."""
    head = g.status
    if g.tests_total is not None:
        head += " (%d/%d tests passed)" % (g.tests_passed, g.tests_total)
    lines = [head, "performance: %s" % g.performance]
    body = g.feedback if g.feedback and g.status != "passed" else (g.note if g.note != g.status else "")
    if body:
        lines += ["", body]
    text = "\n".join(lines)
    if len(text) > GRADESCOPE_OUTPUT_CAP:
        text = text[:GRADESCOPE_OUTPUT_CAP] + "\n[... cut ...]"
    return text


def gradescope_json(report: GradeReport) -> dict:
    """Gradescope's autograder results format (top-level score, execution_time, output,
    visibility, and one entry per exercise in tests)."""
    tests = []
    for g in report.exercises:
        tests.append({
            "name": g.key,
            "score": g.total_score,
            "max_score": g.total_max,
            "status": "passed" if g.status == "passed" else "failed",
            "output": _test_output(g),
            "visibility": "visible",
        })
    summary = ["Graded on the %s backend: %s of %s points." % (report.backend, format_points(report.score),
                                                               format_points(report.max_score)),
               "Performance: %s." % report.performance]
    if report.seed is not None:
        summary.append("Seed of the tests' inputs: %d." % report.seed)
    if report.ignored_files:
        summary.append("Ignored files: %s" % ", ".join(report.ignored_files))
    return {
        "score": report.score,
        "execution_time": int(round(report.execution_time)),
        "output": "\n".join(summary),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
    }


def junit_xml(report: GradeReport) -> str:
    """One <testsuite> per lesson, one <testcase> per exercise (CI systems read this)."""
    suites = ET.Element("testsuites", name="course grade", tests=str(len(report.exercises)),
                        time="%.1f" % report.execution_time)
    by_lesson: dict = {}
    for g in report.exercises:
        by_lesson.setdefault(g.lesson, []).append(g)
    total_failures = 0
    for lesson, grades in by_lesson.items():
        failures = sum(1 for g in grades if g.status != "passed")
        total_failures += failures
        suite = ET.SubElement(suites, "testsuite", name=lesson, tests=str(len(grades)), failures=str(failures))
        for g in grades:
            case = ET.SubElement(suite, "testcase", classname=lesson, name=g.name)
            ET.SubElement(case, "properties")
            props = case.find("properties")
            for key, value in (("score", format_points(g.total_score)), ("max_score", format_points(g.total_max)),
                               ("tests", _tests_cell(g)), ("performance", g.performance)):
                ET.SubElement(props, "property", name=key, value=value)
            if g.status != "passed":
                failure = ET.SubElement(case, "failure", message=_note_cell(g) or g.status, type=g.status)
                failure.text = g.feedback
    suites.set("failures", str(total_failures))
    if hasattr(ET, "indent"):
        ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def write_results_json(report: GradeReport, out_dir: str) -> str:
    """results.json in Gradescope's format (what --out and --format gradescope write)."""
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "results.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(gradescope_json(report), f, indent=2)
        f.write("\n")
    return path


def write_junit(report: GradeReport, out_dir: str) -> str:
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "junit.xml")
    with open(path, "w", encoding="utf-8") as f:
        f.write(junit_xml(report))
    return path


def render(report: GradeReport, fmt: str, out_dir: str = None) -> (str, List[str]):
    """The text for stdout and the files written, for ``--format fmt [--out out_dir]``."""
    written: List[str] = []
    if fmt == "gradescope":
        written.append(write_results_json(report, out_dir or os.getcwd()))
        return "", written
    if out_dir:
        written.append(write_results_json(report, out_dir))
    if fmt == "json":
        return json.dumps(grade_json(report), indent=2), written
    if fmt == "junit":
        if out_dir:
            written.append(write_junit(report, out_dir))
        return junit_xml(report), written
    return format_grade_table(report), written
