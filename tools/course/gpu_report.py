"""``./course gpu-report``: everything the course can check on a machine with an NVIDIA GPU,
written down as one Markdown report and one JSON file with every figure.

    ./course gpu-report [--out DIR] [--gtest-source DIR] [--repeats N] [--steps LIST] [--time-limit S]
                        [--lesson NN]

Steps, in order (``--steps`` picks some; ``experiments`` names the last five, ``all`` every one):

  build        configure and build ``build/selftest-cuda`` for the GPU found (``native``): the
               simulator's own suite compiled as CUDA, every exercise from ``solutions/`` and
               from the untouched skeletons, the grader's tests
  ctest        that folder's whole ctest suite (solutions pass, skeletons fail every test)
  grade        ``./course --backend cuda grade --submission solutions`` N times: the references
               against themselves must score full marks every time; the spread of the ratios
  skeletons    the grader on the untouched skeletons: 0 expected
  ranking      slow solutions (planted submissions: right numbers, the slow way) timed against the
               references (autograder/submissions/rank_slow.py): set beside the simulator's modelled
               ratios, does the model rank them as the GPU does?
  roofline, tokens_per_second, batch_sweep, loader_benchmark, parallelism_experiment
               the lessons' experiments (``./course roofline``, ``./course run lessons/...``)

Every command of a step runs under a time limit (``--time-limit``, default 540 s: the lent GPU
machine allows 10 minutes per command). A step that fails or runs out of time is recorded and
the next one still runs. Each step's result is kept in ``OUT/steps/<step>.json`` and the report
is rewritten after every step from all the step results in OUT, so a long run can be split into
one command per step and nothing measured is lost. Full logs: ``OUT/logs/<step>.log``.

Exit status: 0 every step run passed its check; 1 a step failed (the report is written all the
same); 2 bad arguments, no nvcc or a missing prerequisite (one line); 3 no NVIDIA GPU: the cuda
backend was built for sm_90 to show that it compiles and nothing else ran (one line).
"""
import datetime
import json
import os
import platform
import re
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Callable, Dict, List, Optional, Sequence

from . import gpu_figures as figs
from . import ui
from .backend import Toolchain, check_prerequisites, find_gtest, find_nvcc, gpu_names, gtest_source
from .build import STAMP_NAME, failed_outputs, read_cache, readable_build_output
from .errors import CourseError, FAILURE, USAGE_ERROR
from .selftest import ctest_command, parse_ctest_summary, pristine_exercises, selftest_build

EXIT_NO_GPU = 3
DEFAULT_TIME_LIMIT = 540.0
DEFAULT_REPEATS = 3
OUTPUT_TAIL = 12000             # characters of a step's output kept in report.json (full log in logs/)
EXPERIMENTS = ("roofline", "tokens_per_second", "batch_sweep", "loader_benchmark", "parallelism_experiment")
STEPS = ("build", "ctest", "grade", "skeletons", "ranking") + EXPERIMENTS
STEP_GROUPS = {"all": STEPS, "experiments": EXPERIMENTS}
OK, FAILED, TIMED_OUT = "ok", "failed", "timed out"
INCOMPLETE = "incomplete"      # a step of several commands, saved after each: resumed by the next run

# The lessons' experiment programs (run with ./course run) and where each writes its files:
# a folder (--out DIR) or a file prefix (--out DIR/NAME: NAME.dat, NAME.svg, NAME.png).
PROGRAMS = {
    "tokens_per_second": ("lessons/01-serial-dependency/tokens_per_second.cu", False),
    "batch_sweep": ("lessons/03-matmul-reuse/batch_sweep.cu", True),
    "loader_benchmark": ("lessons/04-data-loading/loader_benchmark.cu", False),
    "parallelism_experiment": ("lessons/05-parallelism-nvlink/parallelism_experiment.cu", True),
}


def utc_now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


# ------------------------------------------------------------------------------------------
# results

@dataclass
class StepResult:
    name: str
    status: str                         # ok, failed, timed out, incomplete
    started: str                        # UTC, ISO 8601
    seconds: float
    commands: List[str] = field(default_factory=list)   # exactly as run, from the repository root
    figures: dict = field(default_factory=dict)
    summary: str = ""                   # one line for the report's table
    output: str = ""                    # the program's output (experiments) or its end (others)
    files: List[str] = field(default_factory=list)      # what the step wrote besides its log
    commit: Optional[str] = None
    gpu: Optional[str] = None

    @staticmethod
    def from_dict(data: dict) -> "StepResult":
        known = StepResult.__dataclass_fields__
        return StepResult(**{k: v for k, v in data.items() if k in known})


def parse_steps(text: Optional[str]) -> List[str]:
    """``build,ctest`` -> the steps in the report's order; one-line error for an unknown name."""
    if not text:
        return list(STEPS)
    wanted = set()
    for word in (w.strip() for w in text.split(",")):
        if not word:
            continue
        if word in STEP_GROUPS:
            wanted.update(STEP_GROUPS[word])
        elif word in STEPS:
            wanted.add(word)
        else:
            raise CourseError("--steps: unknown step '%s'; the steps are %s (or: %s)"
                              % (word, ", ".join(STEPS), ", ".join(STEP_GROUPS)), USAGE_ERROR)
    if not wanted:
        raise CourseError("--steps: name at least one step", USAGE_ERROR)
    return [s for s in STEPS if s in wanted]


# ------------------------------------------------------------------------------------------
# commands

@dataclass
class CommandRun:
    command: str
    returncode: Optional[int]
    timed_out: bool
    stdout: str
    stderr: str
    seconds: float

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    def failure(self) -> str:
        if self.timed_out:
            return "stopped at the time limit after %.0f s" % self.seconds
        return "exit status %s" % self.returncode


def show_command(argv: Sequence[str], root: str) -> str:
    """The command as typed from the repository root (paths under it made relative)."""
    prefix = root.rstrip(os.sep) + os.sep
    words = []
    for arg in argv:
        if arg.startswith(prefix):
            arg = arg[len(prefix):]
            if arg == "course":
                arg = "./course"
        words.append(shlex.quote(arg))
    return " ".join(words)


def run_command(argv: Sequence[str], root: str, time_limit: float) -> CommandRun:
    """Run ``argv`` from the repository root in its own process group; at the time limit the
    whole group is killed and what it printed so far is kept."""
    started = time.monotonic()
    proc = subprocess.Popen(list(argv), cwd=root, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, universal_newlines=True, errors="replace",
                            start_new_session=True)
    timed_out = False
    try:
        out, err = proc.communicate(timeout=time_limit)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc)
        out, err = proc.communicate()
    except BaseException:
        _kill_group(proc)
        raise
    _kill_group(proc)    # anything it left running in the background
    return CommandRun(show_command(argv, root), proc.returncode, timed_out, out or "", err or "",
                      time.monotonic() - started)


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _capture(argv: Sequence[str]) -> Optional[str]:
    try:
        proc = subprocess.run(list(argv), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              universal_newlines=True, errors="replace", timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def tail(text: str, limit: int = OUTPUT_TAIL) -> str:
    if len(text) <= limit:
        return text
    return "[... %d characters before these cut; the full log is in logs/ ...]\n" % (len(text) - limit) + text[-limit:]


# ------------------------------------------------------------------------------------------
# the machine

def describe_machine(root: str, nvcc: str, toolchain: Toolchain) -> dict:
    """GPU, driver, memory, nvcc, cmake, the commit and the date."""
    gpus = []
    smi = ""
    for fields in ("name,driver_version,memory.total,compute_cap", "name,driver_version,memory.total"):
        smi = _capture(["nvidia-smi", "--query-gpu=" + fields, "--format=csv,noheader"]) or ""
        if smi:    # an older driver knows no compute_cap
            break
    for line in smi.splitlines():
        cells = [c.strip() for c in line.split(",")]
        if len(cells) >= 3:
            gpus.append({"name": cells[0], "driver_version": cells[1], "memory_total": cells[2],
                         "compute_capability": cells[3] if len(cells) > 3 else None})
    nvcc_text = _capture([nvcc, "--version"]) or ""
    release = [line for line in nvcc_text.splitlines() if "release" in line]
    cmake_text = _capture([toolchain.cmake, "--version"]) or ""
    # A copy sent to a lent GPU machine may carry no .git, or a stale one (the one sent on
    # 2026-11-27 named the session's first commit): the sender names the commit it sent
    # (tools/gpu-lease.sh), and that wins.
    commit = os.environ.get("COURSE_SOURCE_COMMIT") or _capture(["git", "-C", root, "rev-parse", "HEAD"])
    dirty = None if os.environ.get("COURSE_SOURCE_COMMIT") or not commit else \
        _capture(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"])
    source = gtest_source()
    return {
        "date": utc_now(),
        "gpus": gpus,
        "nvidia_smi_list": list(gpu_names()),
        "nvcc": nvcc,
        "nvcc_version": release[0].strip() if release else (nvcc_text.splitlines() or [None])[-1],
        "cmake_version": (cmake_text.splitlines() or [None])[0],
        "generator": toolchain.generator,
        "commit": commit,
        "uncommitted_changes": bool(dirty) if dirty is not None else None,
        "googletest": ("built from " + source) if source else ("installed: " + (find_gtest(root) or "?")),
        "host": platform.node(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
    }


def gpu_label(machine: dict) -> str:
    gpus = machine.get("gpus") or []
    if not gpus:
        return ", ".join(machine.get("nvidia_smi_list") or []) or "no GPU"
    names = [g["name"] for g in gpus]
    if len(set(names)) > 1:
        return ", ".join(names)
    return names[0] if len(names) == 1 else "%d x %s" % (len(names), names[0])


# ------------------------------------------------------------------------------------------
# the steps

@dataclass
class Context:
    root: str
    out_dir: str
    toolchain: Toolchain
    repeats: int = DEFAULT_REPEATS
    time_limit: float = DEFAULT_TIME_LIMIT
    commit: Optional[str] = None
    gpu: Optional[str] = None
    lessons: Optional[str] = None   # --lesson: the grade and skeletons steps grade these lessons only
    # Records a step's result so far (a step of several commands calls it after each).
    checkpoint: Callable[[StepResult], None] = lambda result: None

    def course(self, *args: str) -> List[str]:
        return [os.path.join(self.root, "course"), "--backend", "cuda"] + list(args)

    def path(self, *parts: str) -> str:
        return os.path.join(self.out_dir, *parts)


def step_build(ctx: Context) -> StepResult:
    """Configure and build build/selftest-cuda: everything ctest runs."""
    started = utc_now()
    clock = time.monotonic()
    build, _, origin = selftest_build(ctx.root, ctx.toolchain)
    result = StepResult("build", FAILED, started, 0.0)
    reason = build.configure_reason()
    try:
        build.configure()
    except CourseError as exc:
        result.summary = "CMake could not configure %s" % build.display_path()
        result.output = exc.message
        result.seconds = time.monotonic() - clock
        return result
    stamp = os.path.join(build.path, STAMP_NAME)
    if os.path.exists(stamp):
        with open(stamp, encoding="utf-8") as f:
            configure = show_command(shlex.split(f.read().strip()), ctx.root)
        result.commands.append(configure + ("  # configured so by an earlier run, not run again" if reason is None else ""))
    run = run_command(build.build_command(), ctx.root, ctx.time_limit)
    result.commands.append(run.command)
    result.seconds = time.monotonic() - clock
    text = run.stdout + run.stderr
    steps = re.findall(r"^\[(\d+)/(\d+)\]", text, re.M)
    cache = read_cache(build.path)
    result.figures = {"build_dir": build.display_path(), "cuda_architectures": cache.get("CMAKE_CUDA_ARCHITECTURES"),
                      "skeletons_from": origin, "build_steps_run": int(steps[-1][1]) if steps else 0,
                      "failed_outputs": failed_outputs(text), "seconds": round(run.seconds, 1)}
    _write_log(ctx, "build", text)
    if run.ok:
        result.status = OK
        result.summary = "built for %s in %.0f s (%d build steps)" % (
            _arch_text(result.figures["cuda_architectures"]), run.seconds, result.figures["build_steps_run"])
        result.output = tail("\n".join(text.splitlines()[-20:]))
    else:
        result.status = TIMED_OUT if run.timed_out else FAILED
        result.summary = "build %s; %d failed outputs" % (run.failure(), len(result.figures["failed_outputs"]))
        result.output = tail(readable_build_output(text))
    return result


def _arch_text(arch: Optional[str]) -> str:
    return "sm_" + arch if arch and arch.isdigit() else (arch or "?")


def step_ctest(ctx: Context) -> StepResult:
    build_path = os.path.join(ctx.root, "build", "selftest-cuda")
    result = StepResult("ctest", FAILED, utc_now(), 0.0)
    if not os.path.exists(os.path.join(build_path, "CTestTestfile.cmake")):
        result.summary = "build/selftest-cuda is not configured: run the build step first"
        return result
    run = run_command(ctest_command(ctx.toolchain, build_path), ctx.root, ctx.time_limit)
    result.commands.append(run.command)
    result.seconds = run.seconds
    text = run.stdout + run.stderr
    _write_log(ctx, "ctest", text)
    tests = figs.parse_ctest_tests(text)
    counts = parse_ctest_summary(text)
    result.figures = {"tests": tests}
    if counts:
        passed, failed, names = counts
        result.figures.update({"passed": passed, "failed": failed, "failed_tests": names})
        result.summary = "%d passed, %d failed%s" % (passed, failed, (": " + ", ".join(names)) if names else "")
    else:
        finished = [t for t in tests if t["status"] == "Passed"]
        result.summary = "no ctest summary (%s); %d tests passed before that" % (run.failure(), len(finished))
    total = re.search(r"Total Test time \(real\) =\s*(" + figs.NUM + ") sec", text)
    if total:
        result.figures["total_seconds"] = float(total.group(1))
    result.status = OK if run.ok and counts and counts[1] == 0 else TIMED_OUT if run.timed_out else FAILED
    result.output = tail(text)
    return result


def _grade_once(ctx: Context, submission: str, label: str, result: StepResult) -> Optional[dict]:
    """One ./course grade --format json; its report (also kept in OUT/grade/), or None."""
    only = ["--lesson", ctx.lessons] if ctx.lessons else []
    run = run_command(ctx.course("grade", "--submission", submission, "--format", "json", *only), ctx.root,
                      ctx.time_limit)
    result.commands.append(run.command)
    _write_log(ctx, result.name, "$ %s\n%s\n%s" % (run.command, run.stderr, run.stdout), append=True)
    report = None
    if run.ok:
        try:
            report = json.loads(run.stdout[run.stdout.find("{"):])
        except ValueError:
            report = None
    if report is None:
        result.output += "%s: %s, no grade report\n%s\n" % (label, run.failure(), tail(run.stderr, 4000))
        return None
    os.makedirs(ctx.path("grade"), exist_ok=True)
    path = ctx.path("grade", label + ".json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(report, f, indent=2)
    result.files.append(os.path.relpath(path, ctx.out_dir))
    return report


def step_grade(ctx: Context) -> StepResult:
    """The reference solutions graded against themselves, ``repeats`` times. Saved after each
    run; a step left incomplete (the machine's own limit ended the command) at this commit and
    on this GPU is resumed where it stopped."""
    result = resumable(ctx.out_dir, "grade", ctx.commit, ctx.gpu, fewer_runs_than=ctx.repeats)
    if result is None or result.figures.get("lessons") != ctx.lessons:   # other lessons: start over
        result = StepResult("grade", INCOMPLETE, utc_now(), 0.0)
    runs = list(result.figures.get("runs", []))
    while len(runs) < ctx.repeats:
        clock = time.monotonic()
        report = _grade_once(ctx, os.path.join(ctx.root, "solutions"), "solutions-run-%d" % (len(runs) + 1), result)
        runs.append(figs.grade_figures(report) if report else None)
        result.seconds += time.monotonic() - clock
        summarize_grade_runs(result, runs, ctx.repeats)
        result.figures["lessons"] = ctx.lessons
        if ctx.lessons:
            result.summary = "lessons %s: %s" % (ctx.lessons, result.summary)
        ctx.checkpoint(result)
    return result


def summarize_grade_runs(result: StepResult, runs: List[Optional[dict]], repeats: int) -> None:
    done = [r for r in runs if r]
    spread = figs.ratio_spread(done)
    every_time = len(done) == len(runs) and all(r["full_marks"] for r in done)
    result.figures = {"runs": runs, "full_marks_every_time": every_time, "ratios": spread}
    scores = ", ".join("%s/%s" % (ui.format_points(r["score"]), ui.format_points(r["max_score"])) if r else "no report"
                       for r in runs)
    result.summary = "%d of %d runs: %s (%s)" % (len(runs), repeats, scores, "full marks every time" if every_time
                                                 else "NOT full marks every time")
    if spread:
        widest = max(spread, key=lambda k: spread[k]["spread"])
        result.summary += "; ratios %.2f to %.2f, widest spread %.2f (%s)" % (
            min(s["min"] for s in spread.values()), max(s["max"] for s in spread.values()),
            spread[widest]["spread"], widest)
    else:
        result.summary += "; no performance ratios"
    result.status = INCOMPLETE if len(runs) < repeats else OK if every_time else FAILED


def resumable(out_dir: str, name: str, commit: Optional[str], gpu: Optional[str],
              fewer_runs_than: int = 0) -> Optional[StepResult]:
    """The step's saved result when it was recorded at this commit on this GPU and is
    incomplete, or (``fewer_runs_than``) finished with fewer runs than now asked for: a
    ``--repeats 3`` after a ``--repeats 1`` adds two runs instead of starting over."""
    for saved in load_steps(out_dir):
        if saved.name != name or saved.commit != commit or saved.gpu != gpu:
            continue
        if saved.status == INCOMPLETE or len(saved.figures.get("runs", [])) < fewer_runs_than:
            return saved
    return None


def step_skeletons(ctx: Context) -> StepResult:
    """The untouched skeletons (git HEAD's exercises/) graded: 0 expected."""
    clock = time.monotonic()
    result = StepResult("skeletons", FAILED, utc_now(), 0.0)
    pristine = ctx.path("pristine-exercises")
    origin = pristine_exercises(ctx.root, pristine)
    report = _grade_once(ctx, pristine, "skeletons", result)
    result.seconds = time.monotonic() - clock
    if report is None:
        result.summary = "no grade report"
        return result
    grade = figs.grade_figures(report)
    grade["skeletons_from"] = origin
    result.figures = grade
    result.summary = "%s/%s%s" % (ui.format_points(grade["score"]), ui.format_points(grade["max_score"]),
                                  " (0 as expected)" if grade["scored_zero"] else ": NOT 0")
    result.status = OK if grade["scored_zero"] else FAILED
    return result


def step_ranking(ctx: Context) -> StepResult:
    """Slow solutions timed against the references (autograder/submissions/rank_slow.py), run
    as an experiment whose figures are the rows the script saved (after every case)."""
    out = ctx.path("ranking", "ranking.json")
    # Start no case in the last 90 s of the limit: a case is a build, its tests and 3 timed rounds.
    argv = [sys.executable, os.path.join(ctx.root, "autograder", "submissions", "rank_slow.py"), "--backend", "cuda",
            "--out", out, "--deadline", "%.0f" % max(30.0, ctx.time_limit - 90)]

    def saved_rows(text: str, folder: str) -> dict:
        saved = _read(out)
        return json.loads(saved) if saved is not None else {}
    result = _experiment(ctx, "ranking", argv, saved_rows, _ranking_headline)
    if not result.figures.get("rows"):
        result.status = FAILED
        result.summary += ", no rows"
    return result


def _ranking_headline(ranked: dict) -> str:
    rows = [r for r in ranked["rows"] if r.get("ratio") is not None]
    slower = sum(1 for r in rows if r["ratio"] > 1.0)
    return "%d slow solutions timed: %d slower than the reference, %d not; %d without a ratio%s" % (
        len(rows), slower, len(rows) - slower, len(ranked["rows"]) - len(rows),
        "; out of time before %d" % len(ranked["skipped"]) if ranked.get("skipped") else "")


def _read(path: str) -> Optional[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def _experiment(ctx: Context, name: str, argv: List[str], parse: Callable[[str, str], dict],
                headline: Callable[[dict], str]) -> StepResult:
    """Run one experiment; keep its output whole, and the figures parsed from it."""
    folder = ctx.path(name)
    os.makedirs(folder, exist_ok=True)
    result = StepResult(name, FAILED, utc_now(), 0.0)
    run = run_command(argv, ctx.root, ctx.time_limit)
    result.commands.append(run.command)
    result.seconds = run.seconds
    _write_log(ctx, name, "$ %s\n%s\n--- stderr ---\n%s" % (run.command, run.stdout, run.stderr))
    result.output = tail(run.stdout, 4 * OUTPUT_TAIL)
    if not run.ok:
        result.output += "\n--- stderr (end) ---\n" + tail(run.stderr, 4000)
    try:
        result.figures = parse(run.stdout, folder)
    except (ValueError, KeyError, TypeError) as exc:   # a changed table: the raw output stays
        result.figures = {"parse_error": str(exc)}
    result.files = sorted(os.path.relpath(os.path.join(folder, n), ctx.out_dir) for n in os.listdir(folder))
    line = headline(result.figures) if result.figures and "parse_error" not in result.figures else ""
    result.status = OK if run.ok else TIMED_OUT if run.timed_out else FAILED
    result.summary = line or ("ran (figures: see its output)" if run.ok else run.failure())
    if not run.ok and line:
        result.summary = run.failure() + "; " + line
    return result


def step_roofline(ctx: Context) -> StepResult:
    def parse(text: str, folder: str) -> dict:
        data = _read(os.path.join(folder, "roofline.json"))
        return figs.parse_roofline(text, json.loads(data) if data else None)
    return _experiment(ctx, "roofline", ctx.course("roofline", "--out", ctx.path("roofline")), parse,
                       figs.roofline_headline)


def _program_step(name: str, parse_text: Callable, headline: Callable[[dict], str]) -> Callable[[Context], StepResult]:
    source, prefix = PROGRAMS[name]

    def step(ctx: Context) -> StepResult:
        out = ctx.path(name, name) if prefix else ctx.path(name)

        def parse(text: str, folder: str) -> dict:
            if prefix:
                return parse_text(text, _read(os.path.join(folder, name + ".dat")))
            return parse_text(text)
        return _experiment(ctx, name, ctx.course("run", source, "--out", out), parse, headline)
    return step


STEP_FUNCTIONS: Dict[str, Callable[[Context], StepResult]] = {
    "build": step_build,
    "ctest": step_ctest,
    "grade": step_grade,
    "skeletons": step_skeletons,
    "ranking": step_ranking,
    "roofline": step_roofline,
    "tokens_per_second": _program_step("tokens_per_second", figs.parse_tokens_per_second, figs.tokens_headline),
    "batch_sweep": _program_step("batch_sweep", figs.parse_batch_sweep, figs.batch_sweep_headline),
    "loader_benchmark": _program_step("loader_benchmark", figs.parse_loader_benchmark, figs.loader_headline),
    "parallelism_experiment": _program_step("parallelism_experiment", figs.parse_parallelism_experiment,
                                            figs.parallelism_headline),
}


def _write_log(ctx: Context, name: str, text: str, append: bool = False) -> None:
    os.makedirs(ctx.path("logs"), exist_ok=True)
    with open(ctx.path("logs", name + ".log"), "a" if append else "w", encoding="utf-8") as f:
        f.write(text)


# ------------------------------------------------------------------------------------------
# the report

def save_step(out_dir: str, result: StepResult) -> str:
    os.makedirs(os.path.join(out_dir, "steps"), exist_ok=True)
    path = os.path.join(out_dir, "steps", result.name + ".json")
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(asdict(result), f, indent=2, default=str)
    os.replace(path + ".tmp", path)
    return path


def load_steps(out_dir: str) -> List[StepResult]:
    """Every step result recorded in ``out_dir``, in the report's order."""
    results = []
    for name in STEPS:
        data = _read(os.path.join(out_dir, "steps", name + ".json"))
        if data:
            try:
                results.append(StepResult.from_dict(json.loads(data)))
            except (ValueError, TypeError):
                continue
    return results


def report_dict(machine: dict, steps: List[StepResult]) -> dict:
    return {"report": "./course gpu-report", "written": utc_now(), "machine": machine,
            "steps": [asdict(s) for s in steps],
            "not_recorded": [name for name in STEPS if name not in {s.name for s in steps}]}


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _fence(text: str) -> str:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return "%s\n%s\n%s" % (ticks, text.rstrip("\n"), ticks)


def _duration(seconds: float) -> str:
    return "%.0f s" % seconds if seconds < 60 else "%dm%02ds" % (seconds // 60, seconds % 60)


def render_markdown(machine: dict, steps: List[StepResult]) -> str:
    gpu = gpu_label(machine)
    lines = ["# GPU report: %s" % gpu, "",
             "Written by `./course gpu-report` on %s (UTC). Every figure below was produced by the commands "
             "listed with it, on the machine described here; report.json next to this file holds them all."
             % machine.get("date", "?"), "", "## Machine", "", "| | |", "|---|---|"]
    for g in machine.get("gpus") or []:
        lines.append("| GPU | %s (driver %s, %s, compute capability %s) |" % (
            _cell(g["name"]), _cell(g["driver_version"]), _cell(g["memory_total"]), _cell(g.get("compute_capability"))))
    for key, label in (("nvidia_smi_list", "nvidia-smi -L"), ("nvcc_version", "nvcc"), ("cmake_version", "cmake"),
                       ("generator", "generator"), ("googletest", "GoogleTest"), ("host", "host"),
                       ("cpu_count", "CPU cores"), ("python", "python3")):
        value = machine.get(key)
        if isinstance(value, list):
            value = "; ".join(value) or "none"
        lines.append("| %s | %s |" % (label, _cell(value if value is not None else "unknown")))
    commit = machine.get("commit")
    changes = " with uncommitted changes" if machine.get("uncommitted_changes") else ""
    lines.append("| commit | %s |" % ("`%s`%s" % (commit, changes) if commit else "unknown (not a git checkout)"))
    lines.append("| date (UTC) | %s |" % machine.get("date", "?"))
    lines += ["", "## Summary", "", "| step | status | time | result | recorded (UTC) |", "|---|---|---|---|---|"]
    recorded = {s.name: s for s in steps}
    for name in STEPS:
        s = recorded.get(name)
        if s is None:
            lines.append("| %s | not run | | | |" % name)
            continue
        status = s.status if s.status == OK else "**%s**" % s.status
        lines.append("| %s | %s | %s | %s | %s |" % (s.name, status, _duration(s.seconds), _cell(s.summary), s.started))
    others = [s.name for s in steps if (s.commit and commit and s.commit != commit) or (s.gpu and s.gpu != gpu)]
    if others:
        lines += ["", "Recorded at another commit or on another GPU than the one above: %s." % ", ".join(others)]
    for s in steps:
        lines += ["", "## %s" % s.name, "", "%s in %s, started %s: %s" % (s.status, _duration(s.seconds), s.started,
                                                                       s.summary), ""]
        if s.commands:
            lines += ["Commands (from the repository root):", "", _fence("\n".join(s.commands)), ""]
        lines += _step_details(s)
        if s.files:
            lines += ["Files: %s" % ", ".join("`%s`" % f for f in s.files), ""]
        if s.output.strip():
            lines += ["Output%s:" % ("" if s.name in EXPERIMENTS else " (end)"), "", _fence(s.output), ""]
    return "\n".join(lines).rstrip() + "\n"


def _step_details(s: StepResult) -> List[str]:
    """Tables for the figures that read better as a table than in the raw output."""
    f = s.figures
    out: List[str] = []
    if s.name == "ctest" and f.get("tests"):
        failed = [t for t in f["tests"] if t["status"] != "Passed"]
        if failed:
            out += ["| failed test | verdict | seconds |", "|---|---|---|"]
            out += ["| %s | %s | %.2f |" % (_cell(t["name"]), _cell(t["status"]), t["seconds"]) for t in failed]
            out.append("")
        slowest = sorted(f["tests"], key=lambda t: -t["seconds"])[:10]
        out += ["Slowest tests: " + ", ".join("%s %.1f s" % (t["name"], t["seconds"]) for t in slowest), ""]
    if s.name in ("grade", "skeletons"):
        runs = f.get("runs") if s.name == "grade" else [f] if f.get("exercises") else []
        if runs:
            out += _grade_table(runs, f.get("ratios", {}))
    return out


def _grade_table(runs: List[Optional[dict]], ratios: dict) -> List[str]:
    keys: List[str] = []
    for r in runs:
        keys += [k for k in (r or {}).get("exercises", {}) if k not in keys]
    header = ["exercise"] + ["run %d" % (i + 1) for i in range(len(runs))] + ["perf ratios", "spread"]
    rows = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for key in keys:
        cells = [key]
        for r in runs:
            e = (r or {}).get("exercises", {}).get(key)
            cells.append("%s/%s %s" % (ui.format_points(e["score"]), ui.format_points(e["max_score"]), e["status"])
                         if e else "-")
        spread = ratios.get(key)
        cells.append(", ".join("%.3f" % v if v is not None else "-" for v in spread["ratios"]) if spread else "")
        cells.append("%.3f" % spread["spread"] if spread else "")
        rows.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return rows + [""]


def write_report(out_dir: str, machine: dict, steps: List[StepResult]) -> List[str]:
    """report.md and report.json in ``out_dir`` (written whole, then moved into place)."""
    os.makedirs(out_dir, exist_ok=True)
    written = []
    for name, text in (("report.json", json.dumps(report_dict(machine, steps), indent=2, default=str) + "\n"),
                       ("report.md", render_markdown(machine, steps))):
        path = os.path.join(out_dir, name)
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(path + ".tmp", path)
        written.append(path)
    return written


# ------------------------------------------------------------------------------------------
# the command

def no_gpu_line(arch: Optional[str]) -> str:
    return ("gpu-report: no NVIDIA GPU found (nvidia-smi lists none): built the cuda backend for %s, ran nothing"
            % _arch_text(arch or "90"))


def run_gpu_report(root: str, out_dir: Optional[str] = None, steps: Optional[List[str]] = None,
                   repeats: int = DEFAULT_REPEATS, time_limit: float = DEFAULT_TIME_LIMIT,
                   lessons: Optional[str] = None) -> int:
    nvcc = find_nvcc()
    if not nvcc:
        sys.stderr.write("gpu-report: nvcc not found (PATH, $CUDA_HOME/bin, /usr/local/cuda/bin): install the "
                         "CUDA Toolkit; nothing was built\n")
        return USAGE_ERROR
    toolchain = check_prerequisites("cuda", root)     # GoogleTest, cmake, ninja: one line if missing
    out_dir = os.path.abspath(out_dir or os.path.join(root, "build", "gpu-report"))
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise CourseError("--out %s exists and is not a folder" % out_dir)
    ctx = Context(root, out_dir, toolchain, repeats, time_limit, lessons=lessons)

    if not gpu_names():
        # Nothing can run, but the build can still be proved: the same build as on a GPU, for sm_90.
        ui.progress("gpu-report: no GPU; building the cuda backend for sm_90 in build/selftest-cuda ...")
        result = step_build(ctx)
        if result.status != OK:
            sys.stderr.write(result.output.rstrip() + "\n")
            sys.stderr.write("gpu-report: no NVIDIA GPU found (nvidia-smi lists none), and the cuda backend does not "
                             "build for sm_90 (%s; output above)\n" % result.summary)
            return FAILURE
        sys.stderr.write(no_gpu_line(result.figures.get("cuda_architectures")) + "\n")
        return EXIT_NO_GPU

    machine = describe_machine(root, nvcc, toolchain)
    ctx.commit, ctx.gpu = machine.get("commit"), gpu_label(machine)

    def record(result: StepResult) -> None:
        result.commit, result.gpu = ctx.commit, ctx.gpu
        save_step(out_dir, result)
        write_report(out_dir, machine, load_steps(out_dir))
    ctx.checkpoint = record
    selected = steps or list(STEPS)
    failed = []
    for number, name in enumerate(selected, 1):
        ui.progress("gpu-report: [%d/%d] %s ..." % (number, len(selected), name))
        try:
            result = STEP_FUNCTIONS[name](ctx)
        except CourseError as exc:    # a step that cannot start is a failed step, not the end of the report
            result = StepResult(name, FAILED, utc_now(), 0.0, summary=exc.message)
        record(result)
        ui.progress("gpu-report: %s %s: %s" % (name, result.status, result.summary))
        if result.status != OK:
            failed.append(name)
    written = write_report(out_dir, machine, load_steps(out_dir))
    print("gpu-report: %d of %d steps ok%s" % (len(selected) - len(failed), len(selected),
                                               "; failed: " + ", ".join(failed) if failed else ""))
    for path in written:
        print("wrote " + os.path.relpath(path, root) if path.startswith(root + os.sep) else "wrote " + path)
    return FAILURE if failed else 0
