"""Command-line interface of ``./course`` (design.md section 6; a stable interface)."""
import argparse
import os
import re
import sys
from typing import List, Optional

from .backend import BACKEND_CHOICES
from .errors import CourseError, USAGE_ERROR

COMMANDS = ("run", "profile", "test", "hint", "next", "grade", "grade-all", "selftest", "list", "roofline",
            "gpu-report", "seal-reference", "export-student")
DESCRIPTION = """\
The course's command line: builds what it needs on first use, then

  run FILE.cu [MORE.cu/.cpp] [-I DIR] [-D NAME[=V]] [ARGS]
                           compile one complete CUDA program and run it
                           (--stats: memory traffic per kernel; --check: memcheck, racecheck)
  profile FILE.cu [...]    per-kernel traffic, intensity and roofline times on named GPUs
  test [LESSON[/EXERCISE]] build and run the tests of your exercises (exercises/), then say what is next
  hint [NN/NAME]           tiered hints for one exercise (default: the next): a nudge first, the approach last
                           (--level K, --reset)
  next                     the next unfinished exercise: its file and its lesson section
  grade                    the autograder (default submission: exercises/)
  grade-all DIR            grade every submission folder in DIR: gradebook.csv and reports
  seal-reference           build the grader's reference and drop its source text (an image without solutions/)
  export-student DIR       the student edition: the course without solutions/ and hidden hints
  selftest                 the project's own test suite (--seeds N: the solutions' tests under N seeds)
  list                     lessons and exercises with your pass/fail state
  roofline                 lesson 02's kernels on a roofline: a table and a plot (PNG, SVG)
  gpu-report               on a GPU machine: build, ctest, grade, every experiment, one report

Backends: cuda (nvcc and an NVIDIA GPU) or sim (a CPU simulator, any machine);
auto picks cuda when both nvcc and a GPU are found. Environment: COURSE_BACKEND,
COURSE_TEST_TIMEOUT (seconds per test program, default 120)."""


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        if self.prog.endswith(" run") and "required" in message and "FILE.cu" in message:
            message = "run needs the FILE.cu to compile, e.g. ./course run lessons/00-gpu-vs-cpu/hello_threads.cu"
        sys.stderr.write("course: error: %s (see ./course %s--help)\n"
                         % (message, self._command_prefix()))
        sys.exit(USAGE_ERROR)

    def _command_prefix(self) -> str:
        parts = self.prog.split()
        return (" ".join(parts[1:]) + " ") if len(parts) > 1 else ""


def _backend_option(parser: argparse.ArgumentParser, default) -> None:
    parser.add_argument("--backend", choices=BACKEND_CHOICES, default=default,
                        help="cuda, sim or auto (default: $COURSE_BACKEND or auto)")


def _build_options(parser: argparse.ArgumentParser) -> None:
    """-I and -D for run and profile; after FILE.cu they are read by split_build_args."""
    parser.add_argument("-I", metavar="DIR", dest="include_before", action="append", default=[],
                        help="an include folder, for every source file")
    parser.add_argument("-D", metavar="NAME[=VALUE]", dest="define_before", action="append", default=[],
                        help="a macro, for every source file")


def build_parser() -> OneLineParser:
    parser = OneLineParser(prog="course", description=DESCRIPTION,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    _backend_option(parser, None)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)

    run = sub.add_parser("run", help="compile one CUDA program and run it",
                         description="Compile FILE.cu (a complete program with main) for the active backend "
                                     "and run it with ARGS. Its output and exit status pass through. "
                                     "Right after FILE.cu come the build's words, up to the program's first "
                                     "argument: more source files (.cu, .cpp, .cc, .cxx, .c), -I DIR (an "
                                     "include folder), -D NAME[=VALUE] (a macro) and -Xcompiler -fopenmp (OpenMP in the host "
                                     "code; also -fopenmp), for both backends, e.g. "
                                     "./course run main.cpp kernels.cu -I include -D N=4 100. "
                                     "Put -- before ARGS to pass such words, or --stats, to the program itself.")
    _backend_option(run, argparse.SUPPRESS)
    run.add_argument("--stats", action="store_true", help="print memory-traffic statistics (simulator)")
    run.add_argument("--check", action="store_true",
                     help="memcheck, racecheck, a shuffled thread order and partial barriers (simulator)")
    run.add_argument("--model-time", action="store_true",
                     help="cudaEventElapsedTime gives the simulator's modelled GPU time (simulator)")
    run.add_argument("--wall-time", action="store_true",
                     help="CPU time for an experiment that uses the modelled clock by default (simulator)")
    run.add_argument("--gpu", metavar="NAME", help="the GPU the simulator models: H100 (default), H200, A100, T4")
    run.add_argument("--timeline", metavar="OUT.json",
                     help="write the modelled timeline as a Chrome trace (Perfetto, chrome://tracing) (simulator)")
    run.add_argument("file", metavar="FILE.cu")
    # More sources, -I, -D and the program's ARGS are split off before argparse runs (see
    # _split_run_arguments, run_program.split_build_args); these entries only document them.
    run.add_argument("more", nargs="*", metavar="MORE.cu/.cpp", help="more source files of the program")
    _build_options(run)
    run.add_argument("args", nargs="*", metavar="ARGS", help="arguments for the program")

    profile = sub.add_parser("profile", help="memory traffic and roofline times per kernel (simulator)",
                             description="Build FILE.cu with the simulator's memory counters, run it with "
                                         "ARGS, and print per kernel its launches, global and shared bytes, "
                                         "atomics, declared FLOPs, arithmetic intensity, the time the "
                                         "roofline model predicts on named GPUs, and the simulator's "
                                         "modelled time with coalescing and the longest thread's accesses.")
    _backend_option(profile, argparse.SUPPRESS)
    profile.add_argument("--gpu", metavar="NAMES", help="comma-separated: H100,H200,A100,T4 (default: all)")
    _build_options(profile)
    profile.add_argument("file", metavar="FILE.cu")
    profile.add_argument("more", nargs="*", metavar="MORE.cu/.cpp [-I DIR] [-D NAME[=V]]",
                         help="more source files and build options, as for run")
    profile.add_argument("args", nargs="*", metavar="ARGS", help="arguments for the program")

    test = sub.add_parser("test", help="build and run the tests of your exercises",
                          description="Build your exercises (exercises/) and run their tests. LESSON is 00 "
                                      "or 00-gpu-vs-cpu; EXERCISE is a name such as vector_add.")
    _backend_option(test, argparse.SUPPRESS)
    test.add_argument("selector", nargs="?", metavar="LESSON[/EXERCISE]")

    hint = sub.add_parser("hint", help="tiered hints for one exercise",
                          description="Show the next hint for one exercise: the first call a nudge, each "
                                      "further call the next level, the last level the approach (never the "
                                      "code). The hints are lessons/NN-x/hints/<exercise>.md; what you have "
                                      "seen is kept in build/hints_seen.json.")
    _backend_option(hint, argparse.SUPPRESS)
    hint.add_argument("selector", nargs="?", metavar="NN/NAME",
                      help="the exercise, e.g. 00/vector_add (default: the one ./course next names)")
    hint.add_argument("--level", metavar="K", type=int, help="show level K (1 is the first)")
    hint.add_argument("--reset", action="store_true", help="forget the levels seen: the next call shows level 1")
    hint.add_argument("--show-hidden", action="store_true", help=argparse.SUPPRESS)   # instructors' preview

    nxt = sub.add_parser("next", help="the next unfinished exercise and where its lesson explains it",
                         description="Print the first exercise, in the course's order, that has not passed "
                                     "in your last ./course test: the file to edit, the lesson section to "
                                     "read, the commands to test it and to get a hint.")
    _backend_option(nxt, argparse.SUPPRESS)

    export = sub.add_parser("export-student", help="write the student edition of the course",
                            description="Write a copy of the course for students to DIR: the files git tracks "
                                        "(every file, outside a git checkout), without solutions/ and without "
                                        "hint levels marked hidden. DIR must be new or empty, and outside the "
                                        "course. Its tests and ./course grade work on correctness; grading "
                                        "performance needs the instructor's copy.")
    export.add_argument("directory", metavar="DIR")

    grade = sub.add_parser("grade", help="the autograder",
                           description="Grade a submission (a folder laid out like exercises/).")
    _backend_option(grade, argparse.SUPPRESS)
    grade.add_argument("--submission", metavar="DIR", help="the folder to grade (default: exercises/)")
    grade.add_argument("--lesson", metavar="NN", help="grade these lessons only: 00, 00-gpu-vs-cpu, or 00,03")
    grade.add_argument("--format", default="table", choices=("table", "json", "junit", "gradescope"),
                       help="table (default), json (stdout), junit (stdout) or gradescope (results.json)")
    grade.add_argument("--out", metavar="DIR",
                       help="also write results.json (Gradescope's format) here; gradescope's default is .")
    grade.add_argument("--seed", metavar="N", help="the tests' random inputs (default: fresh, shown in the report); "
                                                   "the same seed gives the same score")
    grade.add_argument("--build-slot", metavar="NAME",
                       help="build the submission in build/grade-<backend>/slot-NAME and keep that folder, so "
                            "that the next submission graded in the same slot compiles only its own files "
                            "(default: a folder per submission path; autograder/slurm/grade_array.sbatch "
                            "gives each task slot of a node one)")
    grade.add_argument("--time-budget", metavar="SECONDS",
                       help="finish within SECONDS (Gradescope ends a run at 10 minutes): each build and test "
                            "program gets its own limit or less, keeping time for the exercises still to come; "
                            "an exercise with too little time left is reported as not graded (default: no budget)")

    grade_all = sub.add_parser("grade-all", help="grade a whole class",
                               description="Grade every submission folder in DIR (one folder per student, each "
                                           "laid out like exercises/), several at a time; writes OUT/gradebook.csv "
                                           "and OUT/<student>/results.json, report.json, report.txt.")
    _backend_option(grade_all, argparse.SUPPRESS)
    grade_all.add_argument("directory", metavar="DIR")
    grade_all.add_argument("--lesson", metavar="NN", help="grade these lessons only (00, or 00,03)")
    grade_all.add_argument("--out", metavar="DIR", default="grades", help="where to write (default: ./grades)")
    grade_all.add_argument("--jobs", metavar="N", type=int, default=0,
                           help="submissions graded at once (default: half the CPU cores)")
    grade_all.add_argument("--seed", metavar="N", help="the tests' random inputs, the same for every student "
                                                       "(default: fresh, in each report)")
    grade_all.add_argument("--time-budget", metavar="SECONDS",
                           help="finish each submission within SECONDS, as grade --time-budget (default: no budget)")
    grade_all.add_argument("--resume", action="store_true",
                           help="keep the reports an interrupted run already wrote in OUT (same seed and lessons) "
                                "and grade only the others")

    seal = sub.add_parser("seal-reference", help="build the grader's reference, then keep only its programs",
                          description="Build the reference solutions for grading, remove the simulator's "
                                      "rewritten copies of their sources from that build, and mark it sealed: "
                                      "grading then works in a copy of the course without solutions/ (remove "
                                      "that folder yourself afterwards, as autograder/gradescope/setup.sh does).")
    _backend_option(seal, argparse.SUPPRESS)

    selftest = sub.add_parser("selftest", help="the project's own test suite")
    _backend_option(selftest, argparse.SUPPRESS)
    selftest.add_argument("--slow", action="store_true",
                          help="also the checks that take many minutes and need root: a class graded through a "
                               "one-node Slurm on this machine (autograder/slurm/local_slurm.py)")
    selftest.add_argument("--seeds", metavar="N", type=int,
                          help="instead of the suite: every reference solution's tests with N seeds in a row "
                               "(from COURSE_SEED, or a fresh one), each failure named with the line that replays "
                               "it; for a test that draws its inputs or shapes from the seed")
    selftest.add_argument("--only", metavar="LESSON[/EXERCISE]",
                          help="with --seeds: only these solutions' tests")

    lst = sub.add_parser("list", help="lessons and exercises with your pass/fail state")
    _backend_option(lst, argparse.SUPPRESS)

    roof = sub.add_parser("roofline", help="lesson 02's kernels on a roofline (table, PNG, SVG)",
                          description="Build lesson 02's demo with your exercises and the reference, "
                                      "measure (GPU) or count (simulator) its kernels and draw them on "
                                      "the roofline of --gpu.")
    _backend_option(roof, argparse.SUPPRESS)
    roof.add_argument("--gpu", metavar="NAME", help="H100, H200, A100 or T4 (default: the GPU found; "
                                                    "H200 on the simulator)")
    roof.add_argument("--out", metavar="DIR", help="where roofline.png/.svg/.json go (default: build/roofline)")

    report = sub.add_parser("gpu-report", help="everything the course checks on a GPU, as one report",
                            description="On a machine with an NVIDIA GPU and nvcc: build the cuda backend for the "
                                        "GPU, run the whole ctest suite, grade solutions/ (--repeats times) and the "
                                        "untouched skeletons, run each lesson's experiment, and write report.md and "
                                        "report.json. Without a GPU it only builds the cuda backend for sm_90 and "
                                        "exits with status 3. Steps: build, ctest, grade, skeletons, ranking, roofline, "
                                        "tokens_per_second, batch_sweep, loader_benchmark, parallelism_experiment.")
    report.add_argument("--out", metavar="DIR", help="where the report goes (default: build/gpu-report)")
    report.add_argument("--gtest-source", metavar="DIR",
                        help="build GoogleTest from these sources (e.g. a copy of /usr/src/googletest) where it "
                             "is not installed; the same as COURSE_GTEST_SOURCE=DIR")
    report.add_argument("--repeats", metavar="N", type=int, default=3,
                        help="how many times solutions/ is graded (default 3)")
    report.add_argument("--steps", metavar="LIST",
                        help="comma-separated steps to run (default: all; 'experiments' names the five "
                             "experiments); results of earlier runs in --out are kept")
    report.add_argument("--time-limit", metavar="SECONDS", type=float, default=540.0,
                        help="time limit of each command a step runs (default 540)")
    report.add_argument("--lesson", metavar="NN", help="the grade and skeletons steps grade these lessons only "
                                                       "(00, or 00,03)")
    return parser


def _split_run_arguments(argv: List[str]) -> (List[str], List[str]):
    """For ``run``: the part argparse parses (up to and including FILE.cu) and the program's
    arguments after it, taken verbatim (argparse would treat them as its own options)."""
    i = 0
    while i < len(argv):                      # global options before the command
        if argv[i] == "--backend":
            i += 2
        elif argv[i].startswith("-"):
            i += 1
        else:
            break
    if i >= len(argv) or argv[i] not in ("run", "profile"):
        return argv, []
    i += 1
    while i < len(argv):                      # run's own options before FILE.cu
        if argv[i] in ("--backend", "--gpu", "--timeline", "-I", "-D"):
            i += 2
        elif argv[i] == "--":
            # "run -- FILE.cu ARGS": FILE.cu is the next word
            return argv[:i] + argv[i + 1:i + 2], argv[i + 2:]
        elif argv[i].startswith("-"):
            i += 1
        else:
            return argv[:i + 1], argv[i + 1:]
    return argv, []


def parse_args(argv: List[str]) -> argparse.Namespace:
    parser = build_parser()
    head, program_args = _split_run_arguments(list(argv))
    args = parser.parse_args(head)
    if not args.command:
        parser.error("no command given; choose one of " + ", ".join(COMMANDS))
    if args.command in ("run", "profile"):
        from .run_program import split_build_args, split_program_args
        before = []
        for value in args.include_before:
            before += ["-I", value]
        for value in args.define_before:
            before += ["-D", value]
        try:
            _, options_before, _ = split_build_args(before)
            more_sources, options_after, program_args = split_build_args(program_args)
        except CourseError as exc:
            parser.error(exc.message)
        args.build_options = options_before + options_after
        args.sources = [args.file] + more_sources
    if args.command == "run":
        args.args, stats_after, check_after = split_program_args(program_args)
        args.stats = args.stats or stats_after
        args.check = args.check or check_after
    if args.command == "profile":
        args.args = program_args[1:] if program_args[:1] == ["--"] else program_args
    return args


def dispatch(args: argparse.Namespace) -> int:
    from .session import ROOT, open_session
    if args.command == "gpu-report":
        return _gpu_report(args, ROOT)
    if args.command == "grade":
        # Argument checks that need no build come first: a typo costs no configure.
        from .grade import validate_lesson_argument
        submission = args.submission or os.path.join(ROOT, "exercises")
        if not os.path.isdir(submission):
            raise CourseError("submission folder '%s' does not exist" % submission)
        validate_lesson_argument(ROOT, args.lesson)
        if args.out and os.path.exists(args.out) and not os.path.isdir(args.out):
            raise CourseError("--out %s exists and is not a folder" % args.out)
        _check_build_slot(args.build_slot)
        args.seed = _seed_argument(args.seed)
        from .time_budget import budget_argument
        args.time_budget = budget_argument(args.time_budget)
    if args.command == "grade-all":
        from .grade import validate_lesson_argument
        if not os.path.isdir(args.directory):
            raise CourseError("submissions folder '%s' does not exist" % args.directory)
        validate_lesson_argument(ROOT, args.lesson)
        if args.jobs < 0:
            raise CourseError("--jobs must be >= 1")
        from .time_budget import budget_argument
        args.time_budget = budget_argument(args.time_budget)
        args.seed = _seed_argument(args.seed)
    if args.command in ("roofline", "run"):
        from .roofline import validate_gpu_argument
        args.gpu = validate_gpu_argument(args.gpu)
    if args.command in ("run", "profile"):
        for file in args.sources:
            if not os.path.isfile(file):
                raise CourseError("no such file: %s" % file)
        for option in args.build_options:
            if option.startswith("-I") and not os.path.isdir(option[2:]):
                raise CourseError("-I %s: no such folder" % option[2:])
    if args.command == "profile":
        from .profile import parse_gpu_list
        parse_gpu_list(args.gpu)

    if args.command == "hint":
        from .hints import show_hint
        if args.level is not None and args.level < 1:
            raise CourseError("--level must be 1 or more")
        from .backend import resolve_backend
        backend = None if args.selector else resolve_backend(args.backend)   # no exercise: the next one
        return show_hint(ROOT, args.selector, args.level, args.reset, args.show_hidden, backend=backend)
    if args.command == "next":
        from .backend import resolve_backend
        from .learner import show_next
        return show_next(ROOT, resolve_backend(args.backend))
    if args.command == "export-student":
        from .student_edition import export_student
        return export_student(ROOT, args.directory)

    session = open_session(args.backend)
    if args.command == "run":
        from .run_program import run_program
        from .run_program import ModelledClock
        clock = ModelledClock(args.model_time, args.gpu, args.timeline, args.wall_time)
        return run_program(session, args.sources, args.args, args.stats, args.check, args.build_options, clock)
    if args.command == "profile":
        from .profile import profile_program
        return profile_program(session, args.sources, args.args, args.gpu, args.build_options)
    if args.command == "test":
        from .student_tests import run_tests
        return run_tests(session, args.selector)
    if args.command == "list":
        from .listing import list_exercises
        return list_exercises(session)
    if args.command == "roofline":
        from .roofline import run_roofline
        return run_roofline(session, args.gpu, args.out)
    if args.command == "selftest":
        if args.seeds is not None:
            from .seed_sweep import run_seed_sweep
            return run_seed_sweep(session, args.seeds, args.only)
        if args.only:
            raise CourseError("--only goes with --seeds")
        from .selftest import run_selftest
        return run_selftest(session, slow=args.slow)
    if args.command == "seal-reference":
        from .grade import Reference
        removed = Reference(session.root, session.toolchain).seal()
        print("sealed the reference build in build/grade-%s/reference (%d folders of rewritten sources removed); "
              "the grader no longer needs solutions/" % (session.toolchain.backend, len(removed)))
        return 0
    if args.command == "grade":
        from .grade import grade_slot_dir, grade_submission
        from .process import memory_limit_from_env, timeout_from_env
        from .reports import render
        build_dir = grade_slot_dir(session.root, session.backend, args.build_slot) if args.build_slot else None
        report = grade_submission(session.root, session.toolchain, submission, args.lesson,
                                  timeout=timeout_from_env(), memory_bytes=memory_limit_from_env(), seed=args.seed,
                                  build_dir=build_dir, time_budget=args.time_budget)
        from . import gpu_checks
        if gpu_checks.wanted(session.toolchain):   # the how-tests, which a GPU skips, on the simulator
            gpu_checks.complete_on_simulator(
                report, session.root, submission, args.lesson, timeout=timeout_from_env(),
                memory_bytes=memory_limit_from_env(), time_budget=args.time_budget,
                build_dir=grade_slot_dir(session.root, "sim", args.build_slot) if args.build_slot else None)
        text, written = render(report, args.format, args.out)
        if text:
            print(text)
        for path in written:
            sys.stderr.write("wrote %s\n" % path)
        return 0
    if args.command == "grade-all":
        from .grade_all import default_jobs, grade_all
        from .process import memory_limit_from_env, timeout_from_env
        return grade_all(session.root, session.toolchain, args.directory, args.out, args.lesson,
                         jobs=args.jobs or default_jobs(), timeout=timeout_from_env(),
                         memory_bytes=memory_limit_from_env(), seed=args.seed, resume=args.resume,
                         time_budget=args.time_budget)
    raise CourseError("unknown command " + args.command)


def _check_build_slot(name: Optional[str]) -> None:
    """--build-slot NAME: a plain name, as it becomes a folder name."""
    if name is not None and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", name):
        raise CourseError("--build-slot must be a name of letters, digits, '.', '_' and '-' (at most 64), not '%s'"
                          % name)


def _seed_argument(value: Optional[str]) -> Optional[int]:
    """--seed N: a whole number below 2^64 (None: the grader draws one, or takes COURSE_SEED)."""
    if value is None:
        return None
    text = value.strip()
    if not text.isdigit() or int(text) >= 2 ** 64:
        raise CourseError("--seed must be a whole number below 2^64, not '%s'" % value)
    return int(text)


def _gpu_report(args: argparse.Namespace, root: str) -> int:
    """Checked here, before anything is built; the command always uses the cuda backend."""
    from .backend import GTEST_SOURCE_VARIABLE, gtest_source
    from .gpu_report import parse_steps, run_gpu_report
    if args.backend not in (None, "cuda", "auto"):
        raise CourseError("gpu-report always uses the cuda backend (not --backend %s)" % args.backend)
    steps = parse_steps(args.steps)
    if args.repeats < 1:
        raise CourseError("--repeats must be >= 1")
    if args.time_limit <= 0:
        raise CourseError("--time-limit must be a positive number of seconds")
    if args.out and os.path.exists(args.out) and not os.path.isdir(args.out):
        raise CourseError("--out %s exists and is not a folder" % args.out)
    if args.gtest_source:
        if not os.path.isdir(args.gtest_source):
            raise CourseError("--gtest-source %s is not a folder" % args.gtest_source)
        os.environ[GTEST_SOURCE_VARIABLE] = os.path.abspath(args.gtest_source)
        try:
            gtest_source()    # not GoogleTest's sources: one line now, not a CMake error later
        except CourseError:
            raise CourseError("--gtest-source %s is not GoogleTest's source folder (a CMakeLists.txt and "
                              "gtest/gtest.h, e.g. a copy of /usr/src/googletest)" % args.gtest_source)
    return run_gpu_report(root, args.out, steps, args.repeats, args.time_limit, args.lesson)


def main(argv: Optional[List[str]] = None) -> int:
    # Line-buffered stdout keeps our lines in order with stderr's progress lines in CI logs.
    try:
        sys.stdout.reconfigure(line_buffering=True)  # type: ignore[attr-defined]
    except (AttributeError, ValueError):
        pass
    try:
        args = parse_args(sys.argv[1:] if argv is None else argv)
        return dispatch(args)
    except CourseError as exc:
        sys.stderr.write("course: error: %s\n" % exc.message)
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("course: interrupted\n")
        return 130
    except BrokenPipeError:
        return 1
