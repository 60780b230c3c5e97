"""The autograder: build one submission in its own folder, run each exercise's tests in
their own process with limits, and score them from the rubric."""
import contextlib
import dataclasses
import fcntl
import hashlib
import os
import re
import secrets
import shutil
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Set, Tuple

from . import ui
from .backend import Toolchain
from .build import BUILD_OUTPUT_BOUND, CPU_LIMIT, FILE_SIZE_LIMIT, TIME_LIMIT, BuildDir, BuildOutcome, \
    build_limits_from_env, course_code_failure, limit_hit, read_cache, readable_build_output, worker_of
from .errors import CourseError, FAILURE
from .exercise_run import COMPILE_ERROR, ERROR, NOT_SUBMITTED, PASSED, run_exercise_tests
from .manifest import Exercise, load_build_json, resolve_lesson
from .graded_run import PERF_FILTER, run_graded_tests, run_signed
from .sandbox import sandbox_warnings
from .perf import PerfOutcome, judge
from .process import run_contained
from .regions import RegionError, graded_text
from .rubric import load_rubric, score
from .time_budget import OUT_OF_TIME, TimeBudget
from .untrusted import SYSTEM_HEADER_ROOTS, ObjectBaseline, aggregate_casts_in, assembly_in, backend_names_added, \
    check_object, \
    compiler_include_dirs, compiler_messages_for_student, defined_symbols, dependencies_outside, dependencies_under, object_files, parse_gtest_list, preprocess_command, \
    overlong_lines_in, own_code, program_output_for_student, reserved_namespaces_in, rewrite_inputs, section_names, solution_includes, \
    trusted_definitions, uncounted_memory_in, undefined_symbols, unseen_code_in

LESSON_DIR = re.compile(r"^\d\d-[A-Za-z0-9_.-]+$")
FEEDBACK_CAP = 48 * 1024


@dataclass
class ExerciseGrade:
    lesson: str
    name: str
    file: str
    max_score: float
    score: float = 0.0
    status: str = NOT_SUBMITTED
    tests_passed: int = 0
    tests_total: Optional[int] = None
    note: str = ""
    feedback: str = ""             # compiler errors, failure messages, the end of a crash's output
    failures: List[Dict[str, str]] = field(default_factory=list)
    performance: str = ""
    performance_max: float = 0.0      # the rubric's performance points
    performance_score: float = 0.0
    performance_graded: bool = False   # False: left out of the maximum ("not graded ...")
    performance_suspicious: bool = False
    performance_ratio: Optional[float] = None   # submission / reference (time or counted figure)
    criterion: str = "none"

    @property
    def total_score(self) -> float:
        return round(self.score + (self.performance_score if self.performance_graded else 0.0), 2)

    @property
    def total_max(self) -> float:
        return round(self.max_score + (self.performance_max if self.performance_graded else 0.0), 2)

    @property
    def key(self) -> str:
        return self.lesson + "/" + self.name

    def to_dict(self) -> dict:
        return {"lesson": self.lesson, "exercise": self.name, "file": self.file, "status": self.status,
                "tests_passed": self.tests_passed, "tests_total": self.tests_total,
                "score": self.total_score, "max_score": self.total_max,
                "correctness_score": self.score, "correctness_max": self.max_score,
                "performance_score": self.performance_score if self.performance_graded else None,
                "performance_max": self.performance_max if self.performance_graded else None,
                "performance_criterion": self.criterion, "performance_suspicious": self.performance_suspicious,
                "performance_ratio": self.performance_ratio,
                "note": self.note, "performance": self.performance, "failures": self.failures,
                "feedback": self.feedback}


@dataclass
class GradeReport:
    backend: str
    submission: str
    lesson: Optional[str]
    exercises: List[ExerciseGrade]
    execution_time: float = 0.0
    seed: Optional[int] = None      # the tests' random inputs; grade again with it to replay
    warnings: List[str] = field(default_factory=list)
    ignored_files: List[str] = field(default_factory=list)

    @property
    def score(self) -> float:
        return round(sum(e.total_score for e in self.exercises), 2)

    @property
    def max_score(self) -> float:
        return round(sum(e.total_max for e in self.exercises), 2)

    @property
    def performance(self) -> str:
        graded = [e for e in self.exercises if e.performance_graded]
        wanted = [e for e in self.exercises if e.performance_max > 0 and e.criterion != "none"]
        if not wanted:
            return "not part of the rubric for these exercises"
        if not graded:
            return "not graded on %s yet" % self.backend
        return "graded against the reference for %s" % ", ".join(e.name for e in graded)

    def to_dict(self) -> dict:
        return {"backend": self.backend, "submission": self.submission, "lesson": self.lesson,
                "score": self.score, "max_score": self.max_score,
                "execution_time": round(self.execution_time, 1), "seed": self.seed, "performance": self.performance,
                "warnings": self.warnings, "ignored_files": self.ignored_files,
                "exercises": [e.to_dict() for e in self.exercises]}


def _cap(text: str, limit: int = FEEDBACK_CAP) -> str:
    """Compiler output keeps its beginning (the first error is the one to fix)."""
    if len(text) <= limit:
        return text
    return text[:limit] + "\n[... %d more characters cut ...]" % (len(text) - limit)


def known_exercise_files(root: str) -> Dict[str, Set[str]]:
    """lesson folder -> .cu file names the course defines (from exercises/ and solutions/).

    Only used to lay out the private copy before CMake runs; which exercises exist is then
    taken from the build's manifest."""
    known: Dict[str, Set[str]] = {}
    for top in ("exercises", "solutions"):
        base = os.path.join(root, top)
        if not os.path.isdir(base):
            continue
        for lesson in os.listdir(base):
            folder = os.path.join(base, lesson)
            if LESSON_DIR.match(lesson) and os.path.isdir(folder):
                names = {n for n in os.listdir(folder) if n.endswith(".cu")}
                known.setdefault(lesson, set()).update(names)
    return known


def staging_folder(build_path: str) -> str:
    """The folder a submission is copied into before it is built: beside ``build_path``,
    private to this user (0700)."""
    folder = build_path.rstrip(os.sep) + ".submission"
    os.makedirs(folder, mode=0o700, exist_ok=True)
    os.chmod(folder, 0o700)
    return folder


def copy_submission(submission: str, known: Dict[str, Set[str]], dest: str,
                    transform: Optional[Callable[[str, bytes], bytes]] = None) -> (Set[str], List[str]):
    """Make ``dest`` hold exactly the submission's known ``NN-x/*.cu`` files (files only: a
    symbolic link is not followed), by content: a file whose bytes are already there is left
    alone (its time too), any other file in ``dest`` is removed. ``transform(key, bytes)``, when
    given, makes what is written of each file (GivenCode). Returns the "lesson/file" keys copied
    and the submission's other .cu files. A file the submission lacks is simply absent: CMake
    then defines no target for it, and the grader scores it as not submitted."""
    submitted: Set[str] = set()
    for entry in os.listdir(dest) if os.path.isdir(dest) else []:
        if entry not in known:
            _remove(os.path.join(dest, entry))
    for lesson, names in known.items():
        folder = os.path.join(dest, lesson)
        if os.path.islink(folder) or (os.path.exists(folder) and not os.path.isdir(folder)):
            _remove(folder)
        os.makedirs(folder, exist_ok=True)
        for entry in os.listdir(folder):
            if entry not in names:
                _remove(os.path.join(folder, entry))
        for name in names:
            src = os.path.join(submission, lesson, name)
            target = os.path.join(folder, name)
            if os.path.isfile(src) and not os.path.islink(src):
                if transform is None:
                    if not _same_content(src, target):
                        _remove(target)
                        shutil.copyfile(src, target)
                else:
                    with open(src, "rb") as f:
                        data = transform(lesson + "/" + name, f.read())
                    if _read_bytes(target) != data:
                        _remove(target)
                        with open(target, "wb") as f:
                            f.write(data)
                submitted.add(lesson + "/" + name)
            else:
                _remove(target)
    ignored = []
    for dirpath, _, filenames in os.walk(submission):
        for name in filenames:
            if name.endswith(".cu"):
                rel = os.path.relpath(os.path.join(dirpath, name), submission).replace(os.sep, "/")
                if rel not in submitted:
                    ignored.append(rel)
    return submitted, sorted(ignored)


class GivenCode:
    """Makes each submitted file into the file the grader builds: its BEGIN/END YOUR CODE
    regions put into the file as it was handed out (regions.py), so that the code around them
    (a given kernel, a baseline the tests compare with) is the course's, whatever the
    submission changed there. Collects, per "lesson/file", why a file's regions cannot be
    graded (``problems``) and where changes outside them were left out (``ignored``)."""

    def __init__(self, handed_out: Optional[str]):
        self.handed_out = handed_out
        self.problems: Dict[str, str] = {}
        self.ignored: Dict[str, List[int]] = {}
        self.backend_names: Dict[str, List[str]] = {}   # untrusted.backend_names_added, per file

    def __call__(self, key: str, data: bytes) -> bytes:
        original = os.path.join(self.handed_out, key) if self.handed_out else None
        if original is None or not os.path.isfile(original):
            return data
        with open(original, "rb") as f:
            handed_out = f.read().decode("utf-8", "surrogateescape")
        try:
            graded = graded_text(data.decode("utf-8", "surrogateescape"), handed_out)
        except RegionError as exc:
            self.problems[key] = str(exc)
            return data
        if graded.ignored:
            self.ignored[key] = graded.ignored
        added = backend_names_added(graded.text, handed_out)
        if added:
            self.backend_names[key] = added
        return graded.text.encode("utf-8", "surrogateescape")


def handed_out_folder(root: str, submission: str) -> Optional[str]:
    """Where the files as handed out are: the course's exercises/, unless that is the
    submission itself (a student grading their own work), then solutions/, whose code around
    the regions is the same (the course checks that); None where neither can serve (the student
    edition grading its own exercises/)."""
    exercises = os.path.join(root, "exercises")
    if os.path.isdir(exercises) and os.path.realpath(exercises) != os.path.realpath(submission):
        return exercises
    solutions = os.path.join(root, "solutions")
    return solutions if os.path.isdir(solutions) else None


def _read_bytes(path: str) -> Optional[bytes]:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def grade_build_dir(root: str, backend: str, submission: str) -> str:
    digest = hashlib.sha256(os.path.realpath(submission).encode("utf-8")).hexdigest()[:16]
    return os.path.join(root, "build", "grade-" + backend, "sub-" + digest)


def grade_slot_dir(root: str, backend: str, slot: str) -> str:
    """A build folder kept for the submissions graded one after another in one slot (./course
    grade --build-slot): like grade-all's workers, it compiles only what changed."""
    return os.path.join(root, "build", "grade-" + backend, "slot-" + slot)


def fresh_seed() -> int:
    """A seed for one grading run: COURSE_SEED when set (a whole number), else a random one."""
    value = os.environ.get("COURSE_SEED", "").strip()
    if value:
        if not value.isdigit() or int(value) >= 2 ** 64:
            raise CourseError("COURSE_SEED must be a whole number below 2^64, not '%s'" % value)
        return int(value)
    return secrets.randbelow(2 ** 63)


def lesson_arguments(lesson: Optional[str]) -> List[str]:
    """--lesson 00 or --lesson 00,03 (a Gradescope assignment of several lessons): the parts."""
    if not lesson:
        return []
    return [part.strip().strip("/") for part in lesson.split(",") if part.strip().strip("/")]


def validate_lesson_argument(root: str, lesson: Optional[str]) -> None:
    """Reject an unknown --lesson before anything is built (the manifest checks it again)."""
    if not lesson:
        return
    folders = sorted(d for d in os.listdir(os.path.join(root, "lessons"))
                     if LESSON_DIR.match(d)) if os.path.isdir(os.path.join(root, "lessons")) else []
    parts = lesson_arguments(lesson)
    if not parts:
        raise CourseError("--lesson '%s' names no lesson; the lessons are: %s" % (lesson, ", ".join(folders)))
    for text in parts:
        if not any(text == folder or text == folder[:2] or (text.isdigit() and int(text) == int(folder[:2]))
                   for folder in folders):
            raise CourseError("unknown lesson '%s'; the lessons are: %s" % (text, ", ".join(folders) or "(none)"))


SNAPSHOT_PARTS = ("CMakeLists.txt", "CMakePresets.json", "cmake", "cudasim", "lessons", "autograder/tests",
                  "autograder/harness", "autograder/cmake", "autograder/perf", "autograder/remote")
FORBIDDEN_INCLUDE = "forbidden include"
FORBIDDEN_CALL = "forbidden call"
REGIONS_CHANGED = "regions changed"
BUILD_LIMIT = "build limit"


def _read_text(path: str) -> Optional[str]:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError:
        return None


def _remove(path: str) -> None:
    if os.path.islink(path) or os.path.isfile(path):
        os.remove(path)
    elif os.path.isdir(path):
        shutil.rmtree(path)


def _same_content(source: str, target: str) -> bool:
    """Whether ``target`` is a plain file with the bytes of ``source`` (compared by content: a
    size and a time are easy to fake)."""
    try:
        if os.path.islink(target) or os.path.getsize(source) != os.path.getsize(target):
            return False
        # Read every time: filecmp's cache trusts a (size, time) pair seen before.
        with open(source, "rb") as a, open(target, "rb") as b:
            while True:
                chunk = a.read(1 << 16)
                if chunk != b.read(1 << 16):
                    return False
                if not chunk:
                    return True
    except OSError:
        return False


def sync_tree(src: str, dst: str, parts=SNAPSHOT_PARTS) -> None:
    """Mirror ``parts`` of ``src`` into ``dst``: files whose content differs copied (read-only;
    what did not change is left alone, so the build does not redo it), vanished ones removed.
    The grader builds submissions from this copy of the course, which has no solutions/ to
    reach; it is compared by content at every grading run, so a submission that wrote into it
    poisons nothing that is graded later."""
    wanted = set()
    for part in parts:
        source = os.path.join(src, part)
        if os.path.isfile(source):
            items = [(source, os.path.join(dst, part))]
        else:
            items = []
            for dirpath, dirnames, filenames in os.walk(source):
                dirnames[:] = [d for d in dirnames if d not in ("__pycache__", "build") and not d.startswith(".")]
                for name in filenames:
                    full = os.path.join(dirpath, name)
                    items.append((full, os.path.join(dst, os.path.relpath(full, src))))
        for source_file, target in items:
            wanted.add(target)
            if _same_content(source_file, target):
                continue
            os.makedirs(os.path.dirname(target), exist_ok=True)
            if os.path.lexists(target):
                os.remove(target)        # a link planted in the snapshot is replaced, not followed
            # A fresh modification time: a restored file must be newer than anything built from
            # the copy it replaces, or the build would keep objects made from a poisoned copy.
            shutil.copyfile(source_file, target)
            os.chmod(target, 0o444 if not os.access(source_file, os.X_OK) else 0o555)
    for dirpath, _, filenames in os.walk(dst):
        for name in filenames:
            full = os.path.join(dirpath, name)
            if full not in wanted:
                os.remove(full)


@contextlib.contextmanager
def shared_grading_lock(root: str, backend: str) -> Iterator[None]:
    """Held while the parts that every submission shares (the course snapshot, the reference
    build) are synced or built: one grading at a time, whether it runs in another grade-all
    worker or in another process (a Slurm array's tasks on one checkout). An flock on its own
    open of the file, so threads of one process exclude each other too."""
    folder = os.path.join(root, "build", "grade-" + backend)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "shared.lock"), "a") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def course_snapshot(root: str, backend: str) -> str:
    """The course snapshot submissions are built from, made equal to the repository again (one
    grading at a time: the sync restores a file that a program may have written)."""
    snapshot = os.path.join(root, "build", "grade-" + backend, "course-src")
    with shared_grading_lock(root, backend):
        sync_tree(root, snapshot)
    return snapshot


class Reference:
    """The reference solutions built by the grader (with the signed-results listener and the
    performance cases) in their own build folder, from the real source tree: the test lists
    that define what a submission must pass, and the figures its performance is compared to."""

    def __init__(self, root: str, toolchain: Toolchain):
        self.build = BuildDir(root, os.path.join(root, "build", "grade-" + toolchain.backend, "reference"), toolchain,
                              {"COURSE_SUBMISSION_DIR": os.path.join(root, "solutions"),
                               "COURSE_WITH_SOLUTIONS": "OFF", "COURSE_GRADER": "ON"})
        self.backend = toolchain.backend
        self._tests: Dict[str, List[str]] = {}
        self._applicable: Dict[str, List[str]] = {}
        self._baselines: Dict[str, ObjectBaseline] = {}
        self.ready = False

    SEAL_NAME = "course_reference_sealed"
    correctness_only = False

    def seal_path(self) -> str:
        return os.path.join(self.build.path, self.SEAL_NAME)

    def prepare(self) -> None:
        if self.ready:
            return
        if os.path.exists(self.seal_path()):
            self._open_sealed()
            return
        if not os.path.isdir(os.path.join(self.build.root, "solutions")):
            raise CourseError("this copy of the course has no solutions/ and no sealed reference build (%s); "
                              "build one where the solutions are: ./course seal-reference"
                              % self.build.display_path(), FAILURE)
        with shared_grading_lock(self.build.root, self.backend):
            self.build.configure()
            self.manifest = self.build.manifest()
            ui.progress("building the reference solutions for grading ...", end="")
            outcome = self.build.build([ex.variant("submission").target for ex in self.manifest.exercises
                                        if "submission" in ex.variants])
        if not outcome.ok:
            ui.progress(" failed")
            ui.progress(outcome.output.rstrip()[-4000:])
            raise CourseError("grading stopped: the reference solutions do not build with the grader's "
                              "additions; fix the course and grade again", FAILURE)
        ui.progress(" ok")
        self.ready = True

    def _open_sealed(self) -> None:
        """A reference sealed by seal(): used as built, never configured or built again (its
        sources are gone), and only with the compiler it was built by."""
        with open(self.seal_path(), encoding="utf-8", errors="replace") as f:
            sealed_with = f.read().strip()
        if sealed_with != self.build.compiler_line():
            raise CourseError("the sealed reference build was made with %s, but this machine has %s; seal it "
                              "again with this compiler" % (sealed_with, self.build.compiler_line()), FAILURE)
        self.manifest = self.build.manifest()
        self.ready = True

    def seal(self) -> List[str]:
        """Build the reference, then remove the solutions' source text from its build folder
        (the rewritten copies the simulator compiled) and mark it sealed: graded runs then use
        its programs and objects as they are. Returns the removed folders. The instructor
        removes solutions/ itself afterwards (autograder/gradescope/setup.sh does)."""
        self.prepare()
        removed = []
        for dirpath, dirnames, _ in os.walk(self.build.path):
            if os.path.basename(dirpath) == "CMakeFiles" or dirpath.endswith(".dir"):
                dirnames[:] = []         # the objects' folders: kept (the object rules read them)
                continue
            for name in list(dirnames):
                if name == "cudasim_rewritten":
                    shutil.rmtree(os.path.join(dirpath, name))
                    removed.append(os.path.join(dirpath, name))
                    dirnames.remove(name)
        with open(self.seal_path(), "w", encoding="utf-8") as f:
            f.write(self.build.compiler_line() + "\n")
        return removed

    def executable(self, ex: Exercise) -> str:
        return self.manifest.exercise(ex.lesson, ex.name).variant("submission").executable

    def tests(self, ex: Exercise) -> List[str]:
        if ex.key not in self._tests:
            import subprocess
            proc = subprocess.run([self.executable(ex), "--gtest_list_tests"], stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, universal_newlines=True, errors="replace", timeout=60)
            self._tests[ex.key] = parse_gtest_list(proc.stdout)
        return self._tests[ex.key]

    def object_baseline(self, ex: Exercise) -> ObjectBaseline:
        """What the reference's own object and test program tell the object rules (cached)."""
        if ex.key not in self._baselines:
            ref = self.manifest.exercise(ex.lesson, ex.name).variant("submission").target
            found = object_files(self.build.path, ref, ex.file)
            baseline = ObjectBaseline()
            if found:
                baseline.sections = section_names(found[0])
                baseline.own = {d.name for obj in found for d in defined_symbols(obj)}
                baseline.imports = {mangled for obj in found for mangled, _ in undefined_symbols(obj)}
            # Everything the programs define besides the submission: the test program and, where
            # the grader splits it (autograder/remote/), the worker that links the submission with
            # the simulator (its counting hooks, its allocator) as well as the judge.
            baseline.trusted = set()
            for program in (self.executable(ex), worker_of(self.executable(ex))):
                if os.path.isfile(program):
                    baseline.trusted |= trusted_definitions(program)
            self._baselines[ex.key] = baseline
        return self._baselines[ex.key]

    def correctness_tests(self, ex: Exercise) -> List[str]:
        return [t for t in self.tests(ex) if not t.startswith("CoursePerf.")]

    def applicable_tests(self, ex: Exercise, timeout: float, memory_bytes: Optional[int]) -> List[str]:
        """The correctness tests that apply on this backend: those the reference solution does
        not skip. Some checks exist on one backend only (the simulator's exact byte counts, a
        tensor-core test on an older GPU); a submission is not marked down for them, while a
        test the reference runs and the submission skips still counts as failed. The
        reference runs once per grading session (cached)."""
        if ex.key not in self._applicable:
            tests = self.correctness_tests(ex)
            run = run_signed(self.executable(ex), timeout=timeout, memory_bytes=memory_bytes,
                             gtest_filter="-" + PERF_FILTER, want_messages=False)
            skipped = {name for name, status in (run.signed.tests.items() if run.signed else [])
                       if status == "skipped"}
            self._applicable[ex.key] = [t for t in tests if t not in skipped]
        return self._applicable[ex.key]

    def has_perf_case(self, ex: Exercise) -> bool:
        return any(t.startswith("CoursePerf.") for t in self.tests(ex))


class CorrectnessOnlyReference(Reference):
    """A copy of the course without solutions/ and without a sealed reference (a student
    edition): the submission's own test program supplies the test list, there is no object
    baseline to judge its object by, and performance, a comparison with the reference, is not
    graded. Advisory only: the instructor grades with the reference. (Listing the tests runs
    the student's own program outside the sandbox, as ./course test does on the same machine.)"""
    correctness_only = True
    WARNING = ("this copy of the course has no reference solutions (a student edition): grading correctness "
               "only; performance grading needs the instructor's copy")

    def prepare(self) -> None:
        self.ready = True

    def executable(self, ex: Exercise) -> str:
        return ex.variant("submission").executable

    def object_baseline(self, ex: Exercise) -> Optional[ObjectBaseline]:
        return None

    def has_perf_case(self, ex: Exercise) -> bool:
        return False


def reference_for(root: str, toolchain: Toolchain) -> Reference:
    """The reference solutions (built from solutions/, or sealed); without either, correctness only."""
    reference = Reference(root, toolchain)
    if os.path.exists(reference.seal_path()) or os.path.isdir(os.path.join(root, "solutions")):
        return reference
    return CorrectnessOnlyReference(root, toolchain)


def _perf_run(executable: str, name: str, timeout: float, memory_bytes: Optional[int]) -> Tuple[Optional[dict], str]:
    """The figures of the performance case ``name`` (None when it left none), and why not: the
    case records none when its measured run's output is wrong, and says so as a failure."""
    run = run_signed(executable, timeout=timeout, memory_bytes=memory_bytes, gtest_filter=PERF_FILTER,
                     env={"COURSE_PERF": "1"})
    figures = None if run.signed is None or run.status != ERROR or run.reason else run.signed.perf.get(name)
    if figures is not None:
        return figures, ""
    why = run.reason or (run.messages.failure_report() if run.messages and run.messages.failed_cases else "")
    return None, why


def _perf_figures(executable: str, name: str, timeout: float, memory_bytes: Optional[int]) -> Optional[dict]:
    return _perf_run(executable, name, timeout, memory_bytes)[0]


def measure_performance(reference: Reference, ex: Exercise, student_exe: str, criterion: str, *,
                        timeout: float, memory_bytes: Optional[int]) -> PerfOutcome:
    """Student and reference alternately: 1 round on the simulator (the counts are exact),
    3 on a GPU (each run is itself a median over many repeats)."""
    rounds = 1 if reference.backend == "sim" else 3
    mine, theirs = [], []
    for _ in range(rounds):
        figures, why = _perf_run(student_exe, ex.name, timeout, memory_bytes)
        if figures is None:
            return PerfOutcome(True, 0.0, summary="the performance run failed or left no signed figures" +
                               (":\n" + _cap(why) if why else ""))
        mine.append(figures)
        ref = _perf_figures(reference.executable(ex), ex.name, timeout, memory_bytes)
        if ref is not None:
            theirs.append(ref)
    return judge(criterion, reference.backend, mine, theirs)


def preprocessed_source(build: BuildDir, obj: str) -> Optional[str]:
    """The preprocessed source ``obj`` was compiled from ("" when it cannot be had, None when
    making it hit the build's limits)."""
    import subprocess
    ninja = shutil.which("ninja")
    if not ninja or build.toolchain.generator != "Ninja":
        return ""
    commands = subprocess.run([ninja, "-C", build.path, "-t", "commands", os.path.relpath(obj, build.path)],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, universal_newlines=True,
                              errors="replace").stdout.strip().splitlines()
    argv = preprocess_command(commands[-1]) if commands else None
    if not argv:
        return ""
    if build.limits is None:
        return subprocess.run(argv, cwd=build.path, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              universal_newlines=True, errors="replace").stdout
    # Under the build's limits, into a file: macros can expand a few lines into gigabytes that
    # the compiler gets through within the deadline (10^7 empty statements: 2 s, 20 MB).
    out = obj + ".preprocessed.i"
    try:
        run = run_contained(argv[:-1] + [out], cwd=build.path, timeout=build.limits.timeout,
                            rlimits=build.limits.rlimit_specs())
        if limit_hit(run.timed_out, run.returncode == 0 and not run.timed_out, run.output):
            return None
        with open(out, encoding="utf-8", errors="replace") as f:
            return f.read()
    except FileNotFoundError:
        return ""
    finally:
        if os.path.exists(out):
            os.remove(out)


def refused_before_build(key: str, given: GivenCode, copy_dir: str) -> Optional[Tuple[str, str, str]]:
    """(status, note, feedback) when the file ``key`` (lesson/file) as graded is refused before
    it is built: its regions cannot be graded, they tell the simulator from a GPU, or the file
    includes a reference solution; None when it may be built."""
    problem = given.problems.get(key)
    if problem:
        return (REGIONS_CHANGED, "its BEGIN/END YOUR CODE regions cannot be graded; scored 0",
                "%s. The grader takes the code between each BEGIN YOUR CODE and END YOUR CODE of your file and puts "
                "it into the file as it was handed out; everything else is the exercise's." % problem)
    backend_names = given.backend_names.get(key)
    if backend_names:
        return (FORBIDDEN_CALL, "forbidden code (tells the simulator from a GPU); scored 0",
                "Your code names %s: it could do one thing on the simulator and another on a GPU. An exercise is the "
                "same code wherever it runs (a grade on a GPU is checked by the same code's tests on the simulator); "
                "take out the checks of which compiler or backend builds it." % ", ".join(backend_names))
    with open(os.path.join(copy_dir, key), encoding="utf-8", errors="replace") as f:
        hits = solution_includes(f.read())
    if hits:
        return (FORBIDDEN_INCLUDE, "includes a reference solution; scored 0",
                "A submission may not include files from solutions/: %s. Write the exercise yourself." % "; ".join(hits))
    return None


def source_rule(build: BuildDir, obj: str, own: str, facilities: Sequence[str] = ()) -> Optional[str]:
    """A message when the submission's own code (after macro expansion) has inline assembly,
    moves memory past the simulator's counters, or reopens a namespace that is not its own;
    None when it does none of these."""
    text = preprocessed_source(build, obj)
    if text is None:
        return ("forbidden code: the file's preprocessed source, which the grader reads, is larger than %s or "
                "took longer than %g s to make; expand fewer macros" % (_mib(build.limits.file_size),
                                                                        build.limits.timeout))
    own_lines = own_code(text, [own])
    overlong = overlong_lines_in(own_lines)
    if overlong:
        return "forbidden code: %s; write the exercise as ordinary lines of code" % overlong[0]
    asm = assembly_in(own_lines)
    if asm:
        return "forbidden code: inline assembly (%s); an exercise is written in CUDA C++" % "; ".join(asm[:3])
    uncounted = (uncounted_memory_in(own_lines, "threads" in facilities) + aggregate_casts_in(own_lines) +
                 unseen_code_in(own_lines))
    if uncounted:
        return ("forbidden code: %s. The simulator grades how the work was done from every load and store "
                "a kernel makes, so these must be ones it sees: use CUDA's atomics (atomicAdd, atomicCAS, ...), "
                "call memcpy, memmove, memset and the standard algorithms directly, read and write memory as "
                "scalars or CUDA vector types (float4, ...), and leave the instrumentation on (no no_sanitize)"
                % "; ".join(uncounted[:3]))
    reserved = reserved_namespaces_in(own_lines)
    if reserved:
        return ("forbidden code: the exercise's file opens %s; an exercise defines its own functions, not the "
                "standard library's, GoogleTest's, the course's or the simulator's" % ", ".join(sorted(set(reserved))))
    return None


def forbidden_dependency(inputs: str, root: str, allowed: List[str],
                         system_roots: Sequence[str] = SYSTEM_HEADER_ROOTS) -> Optional[Tuple[str, str]]:
    """(note, feedback) when the files a build read (``inputs``, one path per line or a
    depfile) include a reference solution or anything outside ``allowed`` and the system's
    headers (``system_roots``); None when they do not."""
    reached = dependencies_under(inputs, os.path.join(root, "solutions"))
    if reached:
        return ("includes a reference solution; scored 0",
                "A submission may not include files from solutions/; the compiler read: %s" % ", ".join(reached[:5]))
    outside = dependencies_outside(inputs, allowed, root, system_roots)
    if outside:
        return ("includes files from outside the course; scored 0",
                "A submission compiles against the course's headers and the system's only; the compiler read: %s"
                % ", ".join(outside[:5]))
    return None


def exercise_include_roots(snapshot: str) -> List[str]:
    """The folders of the course snapshot an exercise's file may read: the simulator's public
    headers and the lessons' (its own lesson's and lessons/common). Not the simulator's sources
    (cudasim/src/internal.hpp declares the runtime's counters), the grader, or the tests."""
    return [os.path.join(snapshot, "cudasim", "include"), os.path.join(snapshot, "lessons")]


def system_header_roots(build: BuildDir) -> List[str]:
    """Where the system's and the compilers' own headers are, for ``build``: the usual folders
    and every folder its compilers search (the C++ compiler and, for the cuda backend, nvcc's
    host compiler: the one CMake names, else the gcc and g++ on PATH, which nvcc takes)."""
    cache = read_cache(build.path)
    compilers = [cache.get("CMAKE_CXX_COMPILER"), cache.get("CMAKE_CUDA_HOST_COMPILER")]
    if build.toolchain.backend == "cuda":
        compilers += [shutil.which("gcc"), shutil.which("g++")]
    roots = list(SYSTEM_HEADER_ROOTS)
    for compiler in compilers:
        if compiler and os.path.isabs(compiler):
            roots += [d for d in compiler_include_dirs(compiler) if d not in roots]
    return roots


def dependency_paths(build: BuildDir, obj: str) -> str:
    """What the compiler recorded as the object's inputs (``ninja -t deps``); "" without ninja."""
    import subprocess
    ninja = shutil.which("ninja")
    if not ninja or build.toolchain.generator != "Ninja":
        return ""
    proc = subprocess.run([ninja, "-C", build.path, "-t", "deps", os.path.relpath(obj, build.path)],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, universal_newlines=True, errors="replace")
    return proc.stdout


def grade_submission(root: str, toolchain: Toolchain, submission: str, lesson: Optional[str] = None, *,
                     timeout: float, memory_bytes: Optional[int], build_dir: Optional[str] = None,
                     reference: Optional[Reference] = None, snapshot: Optional[str] = None,
                     quiet: bool = False, seed: Optional[int] = None,
                     only_files: Optional[Sequence[str]] = None, time_budget: Optional[float] = None,
                     measure_failing: bool = False, performance: bool = True) -> GradeReport:
    """Grade the submission folder ``submission`` (laid out like exercises/).

    ``build_dir``, ``reference`` and ``snapshot`` let grade-all share work between submissions.
    ``only_files`` (lesson/file, e.g. 00-gpu-vs-cpu/01_vector_add.cu) grades only those files'
    exercises: the grader's own tests plant a defect in one file of a lesson.
    ``seed`` pins the tests' random inputs (default: a fresh one, recorded in the report), so a
    re-grade with the same seed gives the same score. ``time_budget`` (seconds) bounds the
    submission's builds and runs together (time_budget.py). ``measure_failing`` measures the
    performance of an exercise that fails a test too, reported and never scored: for comparing
    the simulator's model with a GPU on slow solutions (autograder/submissions/rank_slow.py),
    not for grading. ``performance`` False grades correctness only (the tests of how the work is
    done that a GPU grade runs on the simulator: gpu_checks.py)."""
    started = time.monotonic()
    budget = TimeBudget(time_budget)
    seed = fresh_seed() if seed is None else seed
    if not os.path.isdir(submission):
        raise CourseError("submission folder '%s' does not exist" % submission)
    validate_lesson_argument(root, lesson)
    known = known_exercise_files(root)
    reference = reference or reference_for(root, toolchain)
    reference.prepare()
    # Synced before every submission, also in grade-all: what an earlier submission's program
    # wrote into it (where the sandbox could not stop it) is undone before this one is built.
    if snapshot is None or _is_course_snapshot(root, toolchain.backend, snapshot):
        snapshot = course_snapshot(root, toolchain.backend)
    build_path = build_dir or grade_build_dir(root, toolchain.backend, submission)
    # The private copy sits beside its build folder and keeps its path from one grading to the
    # next, synced by content: an unchanged file keeps its time, so CMake is not reconfigured
    # and only the exercises whose files changed are rebuilt (grade-all's slots and the
    # planted-submission suite grade many submissions in one build folder).
    copy_dir = staging_folder(build_path)
    given = GivenCode(handed_out_folder(root, submission))
    submitted, ignored = copy_submission(submission, known, copy_dir, given)
    limits = build_limits_from_env()
    build = BuildDir(snapshot, build_path, toolchain,
                     {"COURSE_SUBMISSION_DIR": copy_dir, "COURSE_WITH_SOLUTIONS": "OFF", "COURSE_GRADER": "ON"},
                     limits=limits)
    # CMake defines a target per file present when it configures: another set of files
    # (a file missing now, or back) needs a fresh configure.
    files_seen = os.path.join(build_path, "course_submitted_files.txt")
    listing = "\n".join(sorted(submitted)) + "\n"
    build.configure(force=_read_text(files_seen) != listing)
    with open(files_seen, "w", encoding="utf-8") as f:
        f.write(listing)
    manifest = build.manifest()
    exercises: List[Exercise] = manifest.exercises
    selected_lesson = None
    if lesson:
        lessons = list(dict.fromkeys(resolve_lesson(manifest, part) for part in lesson_arguments(lesson)))
        selected_lesson = ",".join(lessons)
        exercises = [ex for ex in exercises if ex.lesson in lessons]
    if only_files is not None:
        exercises = [ex for ex in exercises if ex.lesson + "/" + ex.file in only_files]
    report = GradeReport(backend=toolchain.backend, submission=os.path.abspath(submission),
                         lesson=selected_lesson, exercises=[], seed=seed,
                         ignored_files=[f for f in ignored if not _is_known(f, known)])
    rubrics = {}
    for lesson_name in dict.fromkeys(ex.lesson for ex in exercises):
        rubrics[lesson_name] = load_rubric(root, lesson_name)
        report.warnings += rubrics[lesson_name].warnings([e.name for e in manifest.lesson_exercises(lesson_name)])
    report.warnings += sandbox_warnings()
    if given.handed_out is None:
        report.warnings.append("the code around your BEGIN/END YOUR CODE regions is graded as you have it here: "
                               "the graded run puts your regions into the files as they were handed out")
    for key, lines in sorted(given.ignored.items()):
        report.warnings.append("%s: changed outside BEGIN/END YOUR CODE (from line %s): not graded, the grader "
                               "puts your regions into the file as it was handed out"
                               % (key, ", ".join(str(n) for n in lines)))
    if reference.correctness_only:
        report.warnings.append(CorrectnessOnlyReference.WARNING)
    if not quiet:
        for w in report.warnings:
            ui.warn(w)

    grades = {}
    for ex in exercises:
        rubric = rubrics[ex.lesson]
        criterion = rubric.criterion_for(ex.name, toolchain.backend)
        perf_points = 0.0 if reference.correctness_only or not performance else rubric.performance_points_for(ex.name)
        if perf_points > 0 and criterion != "none" and not reference.has_perf_case(ex):
            report.warnings.append("%s: performance_points but no CoursePerf case in autograder/perf/%s/"
                                   "perf_%s.cpp; performance not graded" % (ex.key, ex.lesson, ex.name))
            perf_points = 0.0
        grades[ex.key] = ExerciseGrade(lesson=ex.lesson, name=ex.name, file=ex.lesson + "/" + ex.file,
                                       max_score=rubric.points_for(ex.name), performance_max=perf_points,
                                       criterion=criterion if perf_points > 0 else "none",
                                       performance="not graded (no performance points)" if perf_points <= 0
                                       or criterion == "none" else "")
        if reference.correctness_only and rubric.performance_points_for(ex.name) > 0:
            grades[ex.key].performance = "not graded: needs the instructor's copy of the course"
    to_build = []
    for ex in exercises:
        grade = grades[ex.key]
        if ex.lesson + "/" + ex.file not in submitted:
            grade.note = "file %s/%s not found in the submission" % (ex.lesson, ex.file)
            continue
        refusal = refused_before_build(ex.lesson + "/" + ex.file, given, copy_dir)
        if refusal:
            grade.status, grade.note, grade.feedback = refusal
            continue
        to_build.append(ex)
    targets = {ex.variant("submission").target: ex for ex in to_build}
    # The course's own code first, without the limits: in a fresh folder (a new slot, grade-all's
    # first submission) the simulator and the judges would otherwise count against them.
    prerequisites = trusted_prerequisites(build, snapshot, to_build) if targets else []
    if prerequisites:       # (no targets would build everything)
        ui.progress("building the simulator and the judges in %s ..." % build.display_path(), end="")
        done = build.build(prerequisites, trusted=True)
        ui.progress(" ok" if done.ok else " failed (the exercises' build says why)")
    # One build per lesson, each under the deadline: the whole course's exercises together
    # would need more than a lesson's time on a slow machine (and then twice over: built
    # together, then each on its own).
    outcomes: Dict[str, BuildOutcome] = {}
    build_timeouts: Dict[str, float] = {}
    for lesson_name in dict.fromkeys(ex.lesson for ex in to_build):
        lesson_targets = [t for t, ex in targets.items() if ex.lesson == lesson_name]
        # A lesson's build is tried together, then each exercise alone: twice its deadline at most.
        allowed = budget.allow(2 * limits.timeout, len(to_build)) / 2
        if allowed <= 0:
            continue
        build.limits = dataclasses.replace(limits, timeout=allowed)
        outcomes.update(build.build_each(lesson_targets, {t: ex.key for t, ex in targets.items()}))
        build_timeouts.update((t, allowed) for t in lesson_targets)
    build.limits = limits
    system_roots = system_header_roots(build)
    tests_after = len(targets)
    for target, ex in targets.items():
        grade = grades[ex.key]
        tests_after -= 1
        if target not in outcomes:
            grade.status, grade.note = OUT_OF_TIME, "not graded: " + budget.spent()
            continue
        outcome = outcomes[target]
        objects = object_files(build.path, target, ex.file)
        over_limit = build_limit_note(outcome, build_timeouts[target], limits.file_size) or \
            oversized_outputs(objects + [ex.variant("submission").executable,
                                         worker_of(ex.variant("submission").executable)], BUILD_OUTPUT_BOUND)
        if over_limit:
            grade.status = BUILD_LIMIT
            grade.note, grade.feedback = over_limit
            continue
        rule = None
        baseline = reference.object_baseline(ex)
        forbidden = None
        for obj in objects if baseline is not None else []:
            rule = check_object(obj, rubrics[ex.lesson].allowed_libraries(ex.name), baseline)
            if not rule:
                rule = source_rule(build, obj, copy_dir, rubrics[ex.lesson].allowed_libraries(ex.name))
            if not rule:
                inputs = dependency_paths(build, obj) + "\n" + "\n".join(rewrite_inputs(build.path, target, ex.file))
                forbidden = forbidden_dependency(inputs, root, exercise_include_roots(snapshot) + [copy_dir, build.path],
                                                 system_roots)
            if rule or forbidden:
                break
        if forbidden:
            grade.status = FORBIDDEN_INCLUDE
            grade.note, grade.feedback = forbidden
            continue
        if rule:
            grade.status = FORBIDDEN_CALL
            grade.note = rule.split(":")[0] + "; scored 0"
            grade.feedback = rule
            continue
        if not outcome.ok:
            broken = course_code_failure(outcome.output, ex.file, ex.variant("submission").executable)
            if broken:
                ui.progress(outcome.output.rstrip())
                raise CourseError("grading stopped: the course's own code failed to build (%s), not the "
                                  "submission; fix the course and grade again" % broken, FAILURE)
            grade.status = COMPILE_ERROR
            grade.note = "does not compile; the compiler's messages follow"
            messages = compiler_messages_for_student(readable_build_output(outcome.output),
                                                     [copy_dir, snapshot, build.path], root, system_roots)
            grade.feedback = _cap(messages.replace(copy_dir + os.sep, "submission/"))
            continue
        expected_tests = reference.applicable_tests(ex, timeout, memory_bytes)
        run_timeout = budget.allow(timeout, tests_after)
        if run_timeout <= 0:
            grade.status, grade.note = OUT_OF_TIME, "not graded: " + budget.spent()
            continue
        if not quiet:
            ui.progress("running %s ..." % ex.key, end="")
        run = run_graded_tests(ex.variant("submission").executable, expected_tests,
                               timeout=run_timeout, memory_bytes=memory_bytes, seed=seed)
        if not quiet:
            ui.progress(" " + run.status)
        grade.status = run.status
        grade.note = run.reason
        grade.tests_passed = run.passed
        grade.tests_total = run.total
        if run.scored:
            grade.score = score(grade.max_score, run.passed, run.total or 0)
            if run.messages:
                grade.failures = [{"test": c.full_name, "message": "\n".join(c.failures)}
                                  for c in run.messages.failed_cases]
                grade.feedback = run.messages.failure_report()
            if run.missing:
                grade.feedback += "\nTests that did not run (they count as failed): %s\n" % ", ".join(run.missing)
            reports = program_output_for_student(run.process.output if run.process else "")
            if reports and run.passed < (run.total or 0):
                # A race or an out-of-bounds access fails a test as a launch failure; the
                # simulator's report says which kernel, thread and line.
                grade.feedback += "\nWhat the simulator reported:\n" + reports + "\n"
        else:
            grade.score = 0.0
            shown = program_output_for_student(run.process.output if run.process else "")
            grade.feedback = run.reason + ("\n\nWhat the simulator and the C++ runtime reported:\n" + shown
                                           if shown.strip() else "")
        if grade.status == ERROR and not grade.note:
            grade.note = "no usable test results"
    # Performance, only for exercises with performance points.
    def measured(g: ExerciseGrade) -> bool:   # measure_failing: any exercise that built and ran its tests
        return g.status == PASSED or (measure_failing and bool(g.tests_total))
    perf_steps = sum(1 for ex in exercises if measured(grades[ex.key]) and grades[ex.key].performance_max > 0
                     and grades[ex.key].criterion != "none")
    for ex in exercises:
        grade = grades[ex.key]
        if grade.performance_max <= 0 or grade.criterion == "none":
            continue
        if not measured(grade):
            grade.performance = "not measured: the exercise must pass every test first"
            grade.performance_graded = True
            continue
        perf_steps -= 1
        perf_timeout = budget.allow(2 * timeout, perf_steps) / 2   # the submission's run, then the reference's
        if perf_timeout <= 0:
            grade.performance = "not measured: " + budget.spent()
            grade.performance_graded = True
            continue
        outcome = measure_performance(reference, ex, ex.variant("submission").executable, grade.criterion,
                                      timeout=perf_timeout, memory_bytes=memory_bytes)
        grade.performance = outcome.summary
        grade.performance_graded = outcome.graded
        grade.performance_suspicious = outcome.suspicious
        grade.performance_ratio = outcome.ratio
        if grade.status != PASSED:      # measure_failing: reported, never scored
            grade.performance = "measured, not scored (a test failed): " + outcome.summary
            grade.performance_graded = True
            continue
        if outcome.graded:
            grade.performance_score = round(grade.performance_max * outcome.fraction, 2)
    for g in grades.values():
        if g.performance_max > 0 and g.criterion != "none" and g.status != PASSED and not g.performance_graded:
            # Whether performance counts depends on the backend, not on this student's code.
            g.performance_graded = reference_perf_counted(reference, g, manifest, timeout, memory_bytes)
            if not g.performance_graded:
                g.performance = "not graded on %s yet" % toolchain.backend
    report.exercises = [grades[ex.key] for ex in exercises]
    report.execution_time = time.monotonic() - started
    return report


def trusted_prerequisites(build: BuildDir, snapshot: str, exercises: Sequence[Exercise]) -> List[str]:
    """The targets of the course's own code that the exercises' programs need: the simulator
    and its rewrite tool, and the judge of each split program (autograder/remote/)."""
    if build.toolchain.backend != "sim":
        return []
    targets = list(load_build_json(build.path, "course_run.json")[0].get("targets", []))
    for ex in exercises:
        if os.path.exists(os.path.join(snapshot, "autograder", "remote", ex.lesson, "remote_%s.cpp" % ex.name)):
            targets.append(ex.variant("submission").target + "_judge")
    return targets


def _mib(size: int) -> str:
    return "%d MiB" % (size >> 20) if size >= 1 << 20 else "%d bytes" % size


_LIMIT_REASONS = {
    TIME_LIMIT: ("the build took longer than {seconds} s",
                 "Building this exercise took longer than the grader's limit of {seconds} s and was stopped. "
                 "What the compiler works out at compile time (constexpr evaluation, templates, macro "
                 "expansion) counts towards it: keep it small."),
    FILE_SIZE_LIMIT: ("the build wrote a file larger than {size}",
                      "Building this exercise wrote a file larger than the grader's limit of {size} (an object "
                      "or program; a large initialised array is written out whole) and was stopped."),
    CPU_LIMIT: ("the build used more CPU time than {seconds} s",
                "A compiler of this exercise used more CPU time than the grader allows ({seconds} s) and was "
                "stopped."),
}


def build_limit_note(outcome: BuildOutcome, timeout: float, file_size: int) -> Optional[Tuple[str, str]]:
    """(note, feedback) when the build of an exercise was stopped by one of its limits."""
    if not outcome.limit:
        return None
    note, feedback = _LIMIT_REASONS[outcome.limit]
    values = {"seconds": "%g" % timeout, "size": _mib(file_size)}
    return note.format(**values) + ": stopped; scored 0", feedback.format(**values) + "\n"


def oversized_outputs(paths: Sequence[str], bound: int) -> Optional[Tuple[str, str]]:
    """(note, feedback) when an object or program the build made is larger than ``bound``
    (where the build's file-size limit could not apply); such files are removed."""
    big = []
    for path in paths:
        try:
            size = os.path.getsize(path)
        except OSError:
            continue
        if size > bound:
            big.append("%s (%s)" % (os.path.basename(path), _mib(size)))
            _remove(path)
    if not big:
        return None
    return ("the build made a file larger than %s: scored 0" % _mib(bound),
            "Building this exercise made %s, larger than the grader allows (%s): a large initialised array "
            "is written out whole.\n" % (", ".join(big), _mib(bound)))


_COUNTED_CACHE: Dict[str, bool] = {}


def reference_perf_counted(reference: Reference, grade: "ExerciseGrade", manifest, timeout: float,
                           memory_bytes: Optional[int]) -> bool:
    """Whether the reference's own figures are measurable on this backend (cached)."""
    key = reference.build.path + ":" + grade.key
    if key not in _COUNTED_CACHE:
        ex = manifest.exercise(grade.lesson, grade.name)
        figures = _perf_figures(reference.executable(ex), grade.name, timeout, memory_bytes)
        _COUNTED_CACHE[key] = bool(figures) and figures.get("counted") == "1" and \
            (reference.backend == "cuda" or grade.criterion in ("modelled_time", "global_bytes", "launches"))
    return _COUNTED_CACHE[key]


def _is_course_snapshot(root: str, backend: str, path: str) -> bool:
    return os.path.realpath(path) == os.path.realpath(os.path.join(root, "build", "grade-" + backend, "course-src"))


def _is_known(rel: str, known: Dict[str, Set[str]]) -> bool:
    lesson, _, name = rel.partition("/")
    return name in known.get(lesson, set())


def is_passing(grade: ExerciseGrade) -> bool:
    return grade.status == PASSED
