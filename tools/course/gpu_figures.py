"""Figures read from what the GPU report's steps print: ctest's per-test lines, the grader's
JSON, and the tables of the lessons' experiment programs.

Each parser takes the text a program printed (and the data file it wrote, where it writes
one) and returns plain dicts and lists for report.json. A parser that finds nothing returns
an empty result: the report keeps the raw output in any case, so a changed table costs the
parsed figures, never the measurement."""
import re
import shlex
import statistics
from typing import Dict, List, Optional

# A number as printf writes it with %g, %f or %e, including nan and inf.
NUM = r"[-+]?(?:nan|inf|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)"


def number(text: str):
    """float(text), or the text itself when it is not a number."""
    try:
        return float(text)
    except ValueError:
        return text


# ------------------------------------------------------------------------------------------
# ctest

_CTEST_LINE = re.compile(r"^\s*\d+/\d+ Test\s+#\d+: (\S+)\s+\.*\s*(?:\*\*\*)?(\S.*?)\s+(" + NUM + r") sec\s*$", re.M)


def parse_ctest_tests(text: str) -> List[dict]:
    """One entry per finished test: its name, ctest's verdict ("Passed", "Failed",
    "Timeout", "Not Run", "Exception: ...") and its seconds."""
    return [{"name": m.group(1), "status": m.group(2).strip(), "seconds": float(m.group(3))}
            for m in _CTEST_LINE.finditer(text)]


# ------------------------------------------------------------------------------------------
# the grader (./course grade --format json)

def grade_figures(report: dict) -> dict:
    """Score, maximum and per exercise the score, the tests and the performance ratio."""
    exercises = {}
    for e in report.get("exercises", []):
        exercises[e["lesson"] + "/" + e["exercise"]] = {
            "status": e.get("status"), "score": e.get("score"), "max_score": e.get("max_score"),
            "tests_passed": e.get("tests_passed"), "tests_total": e.get("tests_total"),
            "performance_score": e.get("performance_score"), "performance_max": e.get("performance_max"),
            "performance_ratio": e.get("performance_ratio"), "performance": e.get("performance", "")}
    return {"score": report.get("score"), "max_score": report.get("max_score"),
            "execution_time": report.get("execution_time"), "performance": report.get("performance"),
            "full_marks": full_marks(report), "scored_zero": scored_zero(report), "exercises": exercises}


def full_marks(report: dict) -> bool:
    exercises = report.get("exercises", [])
    return bool(exercises) and (report.get("max_score") or 0) > 0 and \
        report.get("score") == report.get("max_score") and all(e.get("status") == "passed" for e in exercises)


def scored_zero(report: dict) -> bool:
    exercises = report.get("exercises", [])
    return bool(exercises) and report.get("score") == 0 and all(e.get("status") != "passed" for e in exercises)


def ratio_spread(runs: List[dict]) -> Dict[str, dict]:
    """Per exercise with a performance ratio in some run (the figures of ``grade_figures``):
    the ratios of every run in order, their median, smallest, largest and spread."""
    keys: List[str] = []
    for run in runs:
        keys += [k for k, e in run.get("exercises", {}).items() if e.get("performance_ratio") is not None
                 and k not in keys]
    spread = {}
    for key in keys:
        values = [run.get("exercises", {}).get(key, {}).get("performance_ratio") for run in runs]
        known = [v for v in values if v is not None]
        spread[key] = {"ratios": values, "median": statistics.median(known), "min": min(known), "max": max(known),
                       "spread": max(known) - min(known)}
    return spread


# ------------------------------------------------------------------------------------------
# data files the experiments write (PREFIX.dat: "# column names" then rows)

def parse_dat(text: str) -> dict:
    """Columns named by the last comment line before the first row, rows as dicts (numbers
    as floats, quoted labels as text); earlier comment lines are kept as notes."""
    comments: List[str] = []
    columns: List[str] = []
    rows: List[dict] = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line.startswith("#"):
            if not rows:
                comments.append(line.lstrip("#").strip())
            continue
        if not columns:
            columns = comments.pop().split() if comments else []
        try:
            values = shlex.split(line)
        except ValueError:
            values = line.split()
        names = columns + ["column_%d" % (i + 1) for i in range(len(columns), len(values))]
        rows.append({name: number(value) for name, value in zip(names, values)})
    return {"notes": comments, "columns": columns, "rows": rows}


# ------------------------------------------------------------------------------------------
# lesson 01: tokens_per_second

TOKENS_SERIES = ("lstm_launches", "lstm_graph", "transformer")
_TOKENS_ROW = re.compile(r"^\s*(\d+) \|\s*(%s)\s+(\d+) \|\s*(%s)\s+(\d+) \|\s*(%s)\s+(\d+) \|\s*(%s)x\s*$"
                         % (NUM, NUM, NUM, NUM), re.M)


def parse_tokens_per_second(text: str) -> dict:
    """Per sequence length: tokens/s and launches (graph nodes) of the LSTM with a launch per
    step, the LSTM replayed as a CUDA graph and the Transformer layer."""
    rows = []
    for m in _TOKENS_ROW.finditer(text):
        row = {"tokens": int(m.group(1))}
        for i, series in enumerate(TOKENS_SERIES):
            row[series + "_tokens_per_s"] = float(m.group(2 + 2 * i))
            row[series + "_launches"] = int(m.group(3 + 2 * i))
        row["transformer_over_lstm"] = float(m.group(8))
        if row["lstm_launches_tokens_per_s"] > 0:
            row["graph_over_launches"] = row["lstm_graph_tokens_per_s"] / row["lstm_launches_tokens_per_s"]
        rows.append(row)
    figures: dict = {"rows": rows}
    gpu = re.search(r"^GPU: (.+?), forward passes", text, re.M)
    if gpu:
        figures["device"] = gpu.group(1)
    return figures if rows else {}


def tokens_headline(figures: dict) -> str:
    speedups = [r["graph_over_launches"] for r in figures.get("rows", []) if "graph_over_launches" in r]
    if not speedups:
        return ""
    last = figures["rows"][-1]
    return "CUDA graph vs a launch per step: %s tokens/s; Transformer / LSTM at %d tokens: %.1fx" % (
        _range(speedups, "%.2fx"), last["tokens"], last["transformer_over_lstm"])


# ------------------------------------------------------------------------------------------
# lesson 03: batch_sweep

_RIDGE = re.compile(r"^(\S+) \(datasheet\): (%s) TFLOP/s dense bf16, (%s) TB/s -> ridge point (%s) FLOP/B"
                    % (NUM, NUM, NUM), re.M)
_PREDICTED_CROSSOVER = re.compile(r"reaches it at B = (%s)" % NUM)
_MEASURED_CROSSOVER = re.compile(r"^measured: W read at (%s) TB/s \(B = 1\), best (%s) TFLOP/s -> measured crossover "
                                 r"B ~ (%s) \(predicted (%s)\)" % (NUM, NUM, NUM, NUM), re.M)


def parse_batch_sweep(text: str, dat: Optional[str]) -> dict:
    figures: dict = {}
    m = _RIDGE.search(text)
    if m:
        figures["datasheet"] = {"gpu": m.group(1), "bf16_tflops": float(m.group(2)), "tb_per_s": float(m.group(3)),
                                "ridge_flop_per_byte": float(m.group(4))}
    m = _PREDICTED_CROSSOVER.search(text)
    if m:
        figures["predicted_crossover_batch"] = float(m.group(1))
    m = _MEASURED_CROSSOVER.search(text)
    if m:
        figures["measured"] = {"weights_read_tb_per_s": float(m.group(1)), "best_tflops": float(m.group(2)),
                               "crossover_batch": float(m.group(3))}
    if dat:
        figures["table"] = parse_dat(dat)
    return figures


def batch_sweep_headline(figures: dict) -> str:
    measured = figures.get("measured")
    if not measured:
        predicted = figures.get("predicted_crossover_batch")
        return "predicted crossover B = %.0f; nothing measured" % predicted if predicted is not None else ""
    return "measured crossover B ~ %.0f (predicted %.0f); W read at %.2f TB/s; best %.0f TFLOP/s bf16" % (
        measured["crossover_batch"], figures.get("predicted_crossover_batch", float("nan")),
        measured["weights_read_tb_per_s"], measured["best_tflops"])


# ------------------------------------------------------------------------------------------
# lesson 04: loader_benchmark

_H2D = re.compile(r"^host to device, (\d+) copies of (%s) MB: pageable (%s) GB/s, pinned (%s) GB/s \((%s)x\)"
                  % (NUM, NUM, NUM, NUM), re.M)
_CONFIG = re.compile(r"^== (\S+): training step = (\d+) passes over the batch ==$")
_STAGE_ROW = re.compile(r"^(\S.*?)\s+(%s)\s+(%s)\s+(%s)$" % (NUM, NUM, NUM))
_LOADER_ROW = re.compile(r"^(\S.*?)\s+(%s)\s+(%s)\s+(%s)%%$" % (NUM, NUM, NUM))
_TRIAL_ROW = re.compile(r"^(\S+)\s+(\d+)\s+(\S+) \((%s) ms/batch\)\s+(%s)\s+(%s)\s+(%s)%%\s+(%s)%%\s+(%s)\s*/\s*(%s)$"
                        % (NUM, NUM, NUM, NUM, NUM, NUM, NUM))
_MEDIAN_ROW = re.compile(r"^(\S+)\s+med\.\s+(%s)%%\s+(%s)%%\s+\(range (%s)-(%s)%%, idle (%s)-(%s)%%\)"
                         % (NUM, NUM, NUM, NUM, NUM, NUM))


def parse_loader_benchmark(text: str) -> dict:
    """The pinned-vs-pageable copy rate; per configuration the stages measured alone and each
    loader's samples/s and GPU idle; the overlapped pipeline's trials against its slowest
    stage, and their medians."""
    figures: dict = {"configurations": {}, "pipeline_trials": [], "pipeline_medians": {}}
    m = _H2D.search(text)
    if m:
        figures["host_to_device"] = {"copies": int(m.group(1)), "megabytes": float(m.group(2)),
                                     "pageable_gb_per_s": float(m.group(3)), "pinned_gb_per_s": float(m.group(4)),
                                     "pinned_over_pageable": float(m.group(5))}
    config: Optional[dict] = None
    table = ""
    for line in text.splitlines():
        line = line.rstrip()
        heading = _CONFIG.match(line)
        if heading:
            config = figures["configurations"].setdefault(
                heading.group(1), {"training_step_passes": int(heading.group(2)), "stages": [], "loaders": []})
            table = ""
            continue
        if line.startswith("== "):
            config, table = None, "pipeline"
            continue
        if config is not None and line.startswith("stage, measured alone"):
            table = "stages"
            continue
        if config is not None and line.startswith("loader "):
            table = "loaders"
            continue
        if not line:
            if table in ("stages", "loaders"):
                table = ""
            continue
        if table == "stages" and config is not None:
            m = _STAGE_ROW.match(line)
            if m:
                config["stages"].append({"stage": m.group(1), "samples_per_s": float(m.group(2)),
                                         "ms_per_batch": float(m.group(3)), "cpu_ms_per_batch": float(m.group(4))})
        elif table == "loaders" and config is not None:
            m = _LOADER_ROW.match(line)
            if m:
                config["loaders"].append({"loader": m.group(1), "samples_per_s": float(m.group(2)),
                                          "ms_per_batch": float(m.group(3)), "gpu_idle_percent": float(m.group(4))})
        elif table == "pipeline":
            m = _TRIAL_ROW.match(line)
            if m:
                figures["pipeline_trials"].append({
                    "configuration": m.group(1), "trial": int(m.group(2)), "slowest_stage": m.group(3),
                    "slowest_stage_ms_per_batch": float(m.group(4)), "slowest_stage_samples_per_s": float(m.group(5)),
                    "pipeline_samples_per_s": float(m.group(6)), "percent_of_slowest_stage": float(m.group(7)),
                    "gpu_idle_percent": float(m.group(8)), "stages_cpu_ms_per_batch": float(m.group(9))})
                continue
            m = _MEDIAN_ROW.match(line)
            if m:
                figures["pipeline_medians"][m.group(1)] = {
                    "percent_of_slowest_stage": float(m.group(2)), "gpu_idle_percent": float(m.group(3)),
                    "percent_range": [float(m.group(4)), float(m.group(5))],
                    "gpu_idle_range": [float(m.group(6)), float(m.group(7))]}
    found = figures["configurations"] or figures["pipeline_trials"] or "host_to_device" in figures
    return figures if found else {}


def loader_headline(figures: dict) -> str:
    parts = ["%s: %.0f%% of its slowest stage, GPU idle %.0f%%" % (name, m["percent_of_slowest_stage"],
                                                                   m["gpu_idle_percent"])
             for name, m in figures.get("pipeline_medians", {}).items()]
    h2d = figures.get("host_to_device")
    if h2d:
        parts.append("pinned %.1f GB/s vs pageable %.1f GB/s" % (h2d["pinned_gb_per_s"], h2d["pageable_gb_per_s"]))
    return ("overlapped pipeline (median) " if figures.get("pipeline_medians") else "") + "; ".join(parts)


# ------------------------------------------------------------------------------------------
# lesson 05: parallelism_experiment

_MODEL = re.compile(r"^Model: (\d+) layers .*?, hidden (\d+), batch (\d+)", re.M)
_RANKS = re.compile(r"^(\d+) ranks on (\d+) device\(s\)", re.M)
_LINK = re.compile(r"^link 0 -> 1, (.+?): measured (%s) GB/s, (%s) us per message" % (NUM, NUM), re.M)
_LOSS = re.compile(r"^loss before the step: DP (%s), TP (%s), PP (%s) \((.+)\)" % (NUM, NUM, NUM), re.M)


def parse_parallelism_experiment(text: str, dat: Optional[str]) -> dict:
    figures: dict = {}
    m = _MODEL.search(text)
    if m:
        figures["model"] = {"layers": int(m.group(1)), "hidden": int(m.group(2)), "batch": int(m.group(3))}
    m = _RANKS.search(text)
    if m:
        figures["ranks"], figures["devices"] = int(m.group(1)), int(m.group(2))
    m = _LINK.search(text)
    if m:
        figures["link"] = {"kind": m.group(1), "gb_per_s": float(m.group(2)), "us_per_message": float(m.group(3))}
    m = _LOSS.search(text)
    if m:
        figures["loss"] = {"dp": float(m.group(1)), "tp": float(m.group(2)), "pp": float(m.group(3)),
                           "agree": m.group(4).startswith("the same model")}
    if dat:
        figures["table"] = parse_dat(dat)
    return figures


def parallelism_headline(figures: dict) -> str:
    parts = []
    link = figures.get("link")
    if link:
        parts.append("link 0 -> 1 (%s): %.1f GB/s, %.1f us per message" % (link["kind"], link["gb_per_s"],
                                                                          link["us_per_message"]))
    if "ranks" in figures:
        parts.append("%d ranks on %d device(s)" % (figures["ranks"], figures["devices"]))
    if "loss" in figures:
        parts.append("DP, TP, PP losses %s" % ("agree" if figures["loss"]["agree"] else "DIFFER"))
    return "; ".join(parts)


# ------------------------------------------------------------------------------------------
# lesson 02: ./course roofline (its roofline.json, and the "check:" lines it prints)

ROOFLINE_POINT_KEYS = ("who", "name", "family", "flops", "bytes", "seconds", "correct", "intensity",
                       "flops_per_second", "bytes_per_second", "predicted_seconds", "bound")


def parse_roofline(text: str, data: Optional[dict]) -> dict:
    figures: dict = {"checks": re.findall(r"^check: (.+)$", text, re.M)}
    if data:
        figures.update({"device": data.get("device"), "backend": data.get("backend"),
                        "datasheet_machine": (data.get("machine") or {}).get("name"),
                        "measured_roof": data.get("measured_roof"),
                        "points": [{k: p.get(k) for k in ROOFLINE_POINT_KEYS if k in p}
                                   for p in data.get("points", [])]})
    return figures if data or figures["checks"] else {}


def roofline_headline(figures: dict) -> str:
    if figures.get("checks"):
        return "; ".join(figures["checks"])
    points = figures.get("points") or []
    return "%d kernels placed on the %s roofline, no GPU checks printed" % (
        len(points), figures.get("datasheet_machine")) if points else ""


def _range(values: List[float], fmt: str) -> str:
    low, high = fmt % min(values), fmt % max(values)
    return low if low == high else low + " to " + high
