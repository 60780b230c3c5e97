"""Configure and build one CMake build folder, quietly unless something fails."""
import contextlib
import fcntl
import os
import re
import shutil
import subprocess
import threading
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

from . import ui
from .backend import GTEST_SOURCE_VARIABLE, Toolchain, gpu_compute_capability, gtest_source
from .errors import CourseError, FAILURE
from .manifest import MANIFEST_NAME, Manifest, load_manifest
from .process import run_contained

# Folders never searched for CMake inputs when deciding whether a build is stale.
STAMP_NAME = "course_configured.stamp"
_SKIP_DIRS = {".git", "build", "__pycache__", ".cache"}
LOCK_NAME = ".course.lock"

# Locks this process holds, per (folder, thread), with how deeply each is nested.
_held_locks: Dict[tuple, list] = {}
_held_locks_guard = threading.Lock()


@contextlib.contextmanager
def folder_lock(folder: str):
    """Holds the build folder for one ``./course`` at a time.

    Two CMake runs in one folder overwrite each other's generated files (two ``./course run``
    started together after a CMake file changed: one failed in FindDoxygen's
    ``configure_file``), and two ninja runs race on the same outputs. The lock is an ``flock``
    on a file in the folder, so it dies with its process; it is re-entrant within one thread,
    and another thread of the same process waits as another process does."""
    os.makedirs(folder, exist_ok=True)
    key = (os.path.realpath(folder), threading.get_ident())
    with _held_locks_guard:
        held = _held_locks.get(key)
        if held:
            held[1] += 1
    if held:
        try:
            yield
        finally:
            with _held_locks_guard:
                held[1] -= 1
        return
    fd = os.open(os.path.join(folder, LOCK_NAME), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            ui.progress("waiting for another ./course that is building in %s ..." % folder)
            fcntl.flock(fd, fcntl.LOCK_EX)
        with _held_locks_guard:
            _held_locks[key] = [fd, 1]
        try:
            yield
        finally:
            with _held_locks_guard:
                del _held_locks[key]
    finally:
        os.close(fd)          # closing the descriptor releases the flock


def cpu_count() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def read_cache(build_dir: str) -> Dict[str, str]:
    """The entries of ``CMakeCache.txt`` as NAME -> value (empty when not configured)."""
    entries: Dict[str, str] = {}
    try:
        with open(os.path.join(build_dir, "CMakeCache.txt"), encoding="utf-8", errors="replace") as f:
            for line in f:
                line = line.rstrip("\n")
                if not line or line[0] in "#/" or "=" not in line:
                    continue
                key, value = line.split("=", 1)
                entries[key.split(":", 1)[0]] = value
    except FileNotFoundError:
        pass
    return entries


# Folders whose files CMake tests for by existence (a contract's remote_<name>.cpp splits the
# grader's program into judge and worker, a perf_<name>.cpp adds a performance case): a file
# added there or removed changes the folder's time, and must reconfigure.
_EXISTENCE_TESTED_DIRS = (os.path.join("autograder", "remote"), os.path.join("autograder", "perf"))


def newest_cmake_input(root: str) -> float:
    """The newest modification time among the files that shape the CMake configuration, and
    the folders whose files it tests for."""
    newest = 0.0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in _SKIP_DIRS and not d.startswith(".")]
        if os.path.relpath(dirpath, root).startswith(_EXISTENCE_TESTED_DIRS):
            try:
                newest = max(newest, os.path.getmtime(dirpath))
            except OSError:
                pass
        for name in filenames:
            if name in ("CMakeLists.txt", "CMakePresets.json") or name.endswith(".cmake"):
                try:
                    newest = max(newest, os.path.getmtime(os.path.join(dirpath, name)))
                except OSError:
                    pass
    return newest


_NINJA_NOISE = re.compile(r"^(\[\d+/\d+\] |ninja: (build stopped|no work to do)|ninja: Entering directory)")


def readable_build_output(text: str) -> str:
    """Compiler messages without ninja's progress lines and the long command line that
    follows each "FAILED:" (nothing the compiler said is dropped)."""
    out = []
    skip_command = False
    for line in text.splitlines():
        if skip_command:
            skip_command = False
            continue
        if line.startswith("FAILED: "):
            skip_command = True
            continue
        if _NINJA_NOISE.match(line):
            continue
        out.append(line)
    return "\n".join(out).strip("\n") + "\n"


def failed_outputs(text: str) -> list:
    """The outputs ninja names in its "FAILED: <output>" lines (empty with make)."""
    return [line[len("FAILED: "):].strip() for line in text.splitlines() if line.startswith("FAILED: ")]


def worker_of(executable: str) -> str:
    """The worker beside a split test program (``vector_add_test`` -> ``vector_add_worker``):
    the executable that holds the submission when the judge is separate (autograder/remote/)."""
    base = executable[:-len("_test")] if executable.endswith("_test") else executable
    return base + "_worker"


def course_code_failure(text: str, exercise_file: str, executable: str) -> str:
    """The first failed build step that is not the exercise's own (compiling or rewriting its
    .cu file, or linking its test program): a break in the course's code (simulator, tests),
    which must not be charged to the student. "" when every failure is the exercise's."""
    # The exercise's own links: its test program and, in the grader's split programs
    # (autograder/remote/), the worker that holds the submission.
    own_links = {os.path.basename(executable), os.path.basename(worker_of(executable))}
    for output in failed_outputs(text):
        outputs = output.split()
        if any(exercise_file in o for o in outputs):
            continue
        if any(os.path.basename(o) in own_links for o in outputs):
            continue
        return output
    return ""


def environment_definitions() -> Dict[str, str]:
    """Cache variables set from the environment for every build folder: GoogleTest's source
    folder (``$COURSE_GTEST_SOURCE``) where GoogleTest is not installed."""
    source = gtest_source()
    return {GTEST_SOURCE_VARIABLE: source} if source else {}


# The limits on building a submission (grade, grade-all): the compilers run over code nobody
# has checked, and a compile-time computation or a huge initialised array costs the grader
# (and, in grade-all, every student after) time and disk. Measured on 2 loaded cores (docs/
# instructor-guide.md, "The build's limits"): a submission's exercise compiles in at most 11 s,
# a whole lesson in a fresh folder (the simulator and the judges too) in 165 s; the largest
# object, library or program is 8.2 MB.
DEFAULT_BUILD_TIMEOUT_S = 300.0
BUILD_FILE_SIZE_LIMIT = 256 << 20       # RLIMIT_FSIZE of every process of the build
BUILD_OUTPUT_BOUND = 128 << 20          # an object or program above it is refused after the build
BUILD_MEMORY_BYTES = 4 << 30            # RLIMIT_DATA of each compiler and linker
BUILD_OUTPUT_CAP = 4 << 20              # the compiler's messages kept (the tail)
BUILD_TIMEOUT_VARIABLE = "COURSE_BUILD_TIMEOUT"

# What the shell or the compiler driver says when a command died of RLIMIT_FSIZE or RLIMIT_CPU
# (SIGXFSZ, EFBIG; SIGXCPU).
_FILE_SIZE_MESSAGES = ("File size limit exceeded", "File too large")
_CPU_MESSAGES = ("CPU time limit exceeded",)

TIME_LIMIT = "time"
FILE_SIZE_LIMIT = "file size"
CPU_LIMIT = "cpu time"


@dataclass
class BuildLimits:
    """The limits of one ``cmake --build`` of untrusted code: a wall-clock deadline for the
    whole build (every process of it is killed then), and rlimits on each process it starts."""
    timeout: float = DEFAULT_BUILD_TIMEOUT_S
    file_size: int = BUILD_FILE_SIZE_LIMIT
    memory_bytes: Optional[int] = BUILD_MEMORY_BYTES

    def rlimit_specs(self) -> List[str]:
        # One compiler cannot use more CPU than the deadline's wall-clock time; the limit ends
        # a process that somehow outlived the build. Soft below hard: SIGXCPU, named in the output.
        cpu = int(self.timeout) + 10
        specs = ["cpu=%d,%d" % (cpu, cpu + 5), "fsize=%d" % self.file_size, "core=0"]
        if self.memory_bytes:
            specs.append("data=%d" % self.memory_bytes)
        return specs


def build_limits_from_env() -> BuildLimits:
    """The grader's limits; ``$COURSE_BUILD_TIMEOUT`` (seconds) sets the deadline on slow machines."""
    value = os.environ.get(BUILD_TIMEOUT_VARIABLE)
    if not value:
        return BuildLimits()
    try:
        seconds = float(value)
    except ValueError:
        raise CourseError("%s must be a number of seconds, not '%s'" % (BUILD_TIMEOUT_VARIABLE, value))
    return BuildLimits(timeout=seconds if seconds > 0 else DEFAULT_BUILD_TIMEOUT_S)


class BuildOutcome:
    def __init__(self, ok: bool, output: str, limit: str = ""):
        self.ok = ok
        self.output = output
        self.limit = limit          # TIME_LIMIT, FILE_SIZE_LIMIT or CPU_LIMIT when one ended the build


def limit_hit(timed_out: bool, ok: bool, output: str) -> str:
    """Which of the build's limits ended it ("" when none did)."""
    if timed_out:
        return TIME_LIMIT
    if ok:
        return ""
    if any(m in output for m in _FILE_SIZE_MESSAGES):
        return FILE_SIZE_LIMIT
    if any(m in output for m in _CPU_MESSAGES):
        return CPU_LIMIT
    return ""


# The temporary file clang writes an object into before renaming it (``x.cu.cpp-0aa5cfeb.o.tmp``),
# left behind when the compiler is killed.
_COMPILER_TEMPORARY = re.compile(r"-[0-9a-f]{8}\.[A-Za-z]+\.tmp$")


def compiler_temporaries(folder: str) -> List[str]:
    """The temporary files under ``folder`` that killed compilers left."""
    return sorted(os.path.join(dirpath, name) for dirpath, _, filenames in os.walk(folder)
                  for name in filenames if _COMPILER_TEMPORARY.search(name))


def oversized_files(folder: str, bound: int) -> List[str]:
    """The files under ``folder`` larger than ``bound`` bytes."""
    found = []
    for dirpath, _, filenames in os.walk(folder):
        for name in filenames:
            path = os.path.join(dirpath, name)
            try:
                if os.lstat(path).st_size > bound:
                    found.append(path)
            except OSError:
                pass
    return sorted(found)


class BuildDir:
    """One build folder: ``build/sim``, ``build/selftest-sim``, ``build/grade-sim/<hash>``."""

    def __init__(self, root: str, path: str, toolchain: Toolchain, definitions: Optional[Dict[str, str]] = None,
                 limits: Optional[BuildLimits] = None):
        self.root = root
        self.path = path
        self.toolchain = toolchain
        self.definitions = dict(definitions or {})
        self.limits = limits        # set for a submission's build (the grader): see BuildLimits

    # -- configure ---------------------------------------------------------------------------
    def backend_definitions(self) -> Dict[str, str]:
        tc = self.toolchain
        defs = {"COURSE_BACKEND": tc.backend}
        if tc.backend == "sim":
            defs["CMAKE_CXX_COMPILER"] = tc.cxx or "clang++"
        else:
            if tc.has_gpu:
                arch = "native" if tc.cmake_version[:2] >= (3, 24) else (gpu_compute_capability() or "90")
            else:
                arch = "90"
            defs["CMAKE_CUDA_ARCHITECTURES"] = arch
            if tc.nvcc:
                defs["CMAKE_CUDA_COMPILER"] = tc.nvcc
        defs.update(environment_definitions())
        defs.update(self.definitions)
        return defs

    def configure_reason(self) -> Optional[str]:
        """Why the folder must be (re)configured, or None when it is up to date."""
        cache = read_cache(self.path)
        if not cache:
            return "first use"
        if cache.get("COURSE_BACKEND") != self.toolchain.backend:
            return "backend changed"
        if self.compiler_changed(cache):
            return "compiler changed"
        manifest = os.path.join(self.path, MANIFEST_NAME)
        if not os.path.exists(manifest):
            return "no manifest"
        for key, value in list(environment_definitions().items()) + list(self.definitions.items()):
            if cache.get(key) != value:
                return key + " changed"
        stamp = os.path.join(self.path, STAMP_NAME)
        if not os.path.exists(stamp):
            return "not configured by ./course"
        if newest_cmake_input(self.root) > os.path.getmtime(stamp):
            return "CMake files changed"
        return None

    def lock(self):
        """``with build.lock():`` keeps other ``./course`` processes out of this folder."""
        return folder_lock(self.path)

    def configure(self, force: bool = False) -> None:
        with self.lock():
            self._configure(force)

    def _configure(self, force: bool) -> None:
        reason = "requested" if force else self.configure_reason()
        if reason is None:
            return
        cache = read_cache(self.path)
        generator = self.toolchain.generator
        if cache:
            old_generator = cache.get("CMAKE_GENERATOR")
            if cache.get("COURSE_BACKEND") != self.toolchain.backend or self.compiler_changed(cache) or \
                    (old_generator and old_generator != generator):
                # Another backend or compiler: CMake keeps compiler checks in the cache, start clean.
                os.remove(os.path.join(self.path, "CMakeCache.txt"))
                shutil.rmtree(os.path.join(self.path, "CMakeFiles"), ignore_errors=True)
        os.makedirs(self.path, exist_ok=True)
        cmd = [self.toolchain.cmake, "-S", self.root, "-B", self.path, "-G", generator]
        cmd += ["-D%s=%s" % kv for kv in self.backend_definitions().items()]
        ui.progress("configuring %s (%s backend%s, %s) ..." % (
            self.display_path(), self.toolchain.backend,
            ", " + self.toolchain.cxx_version if self.toolchain.cxx_version else "", reason), end="")
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                              errors="replace")
        if proc.returncode != 0:
            ui.progress(" failed")
            ui.progress(proc.stdout.rstrip())
            raise CourseError("CMake could not configure %s (command: %s)" % (self.display_path(), " ".join(cmd)),
                              FAILURE)
        # CMake may leave an unchanged manifest untouched, so our own stamp records when.
        with open(os.path.join(self.path, STAMP_NAME), "w", encoding="utf-8") as f:
            f.write(" ".join(cmd) + "\n" + self.compiler_line() + "\n")
        ui.progress(" ok")

    def compiler_changed(self, cache: Dict[str, str]) -> bool:
        """Whether the folder was configured with another simulator compiler: another path, or
        the same path now naming another version (e.g. after update-alternatives). CMake would
        then drop the whole cache, -D definitions included, so configure() starts clean itself."""
        if self.toolchain.backend != "sim":
            return False
        if cache.get("CMAKE_CXX_COMPILER") != self.toolchain.cxx:
            return True
        try:
            with open(os.path.join(self.path, STAMP_NAME), encoding="utf-8", errors="replace") as f:
                return self.compiler_line() not in f.read().splitlines()
        except FileNotFoundError:
            return False

    def compiler_line(self) -> str:
        """How the stamp records the compiler a folder was configured with."""
        return "compiler: %s %s" % (self.toolchain.cxx or self.toolchain.nvcc or "", self.toolchain.cxx_version)

    def manifest(self) -> Manifest:
        return load_manifest(self.path)

    # -- build -------------------------------------------------------------------------------
    def build_command(self, targets: Sequence[str] = (), jobs: Optional[int] = None) -> List[str]:
        cmd = [self.toolchain.cmake, "--build", self.path, "--parallel", str(jobs or cpu_count())]
        if targets:
            cmd += ["--target"] + list(targets)
        return cmd

    def build(self, targets: Sequence[str] = (), jobs: Optional[int] = None, trusted: bool = False) -> BuildOutcome:
        """``cmake --build`` of ``targets`` (everything when empty); output kept, not shown.
        Under ``self.limits`` (unless the targets are ``trusted``: the course's own code) a
        build that hits one fails, with the limit named, and every file it left above the
        size bound is removed, so that the folder stays usable."""
        with self.lock():
            if self.limits is None or trusted:
                proc = subprocess.run(self.build_command(targets, jobs), stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, universal_newlines=True, errors="replace")
                return BuildOutcome(proc.returncode == 0, proc.stdout)
            run = run_contained(self.build_command(targets, jobs), cwd=self.path, timeout=self.limits.timeout,
                                rlimits=self.limits.rlimit_specs(), output_cap=BUILD_OUTPUT_CAP)
            ok = run.returncode == 0 and not run.timed_out
            limit = limit_hit(run.timed_out, ok, run.output)
            if limit:
                for path in oversized_files(self.path, BUILD_OUTPUT_BOUND) + compiler_temporaries(self.path):
                    _remove_file(path)
        return BuildOutcome(ok, run.output, limit)

    def build_each(self, targets: List[str], label: Dict[str, str]) -> Dict[str, BuildOutcome]:
        """Build every target, each on its own so one compile error does not hide the others.

        All targets are tried together first (parallel, and the common case); only when that
        fails is each one built separately to learn which failed and why."""
        if not targets:
            return {}
        ui.progress("building %d target%s in %s ..." % (len(targets), "" if len(targets) == 1 else "s",
                                                         self.display_path()), end="")
        together = self.build(targets)
        if together.ok:
            ui.progress(" ok")
            return {t: BuildOutcome(True, "") for t in targets}
        ui.progress(" some failed; building each on its own")
        outcomes = {}
        for target in targets:
            ui.progress("  building %s ..." % label.get(target, target), end="")
            outcome = self.build([target])
            ui.progress(" ok" if outcome.ok else " STOPPED (%s limit)" % outcome.limit if outcome.limit else " FAILED")
            outcomes[target] = outcome
        return outcomes

    def display_path(self) -> str:
        try:
            rel = os.path.relpath(self.path, self.root)
        except ValueError:
            return self.path
        return self.path if rel.startswith("..") else rel


def _remove_file(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass
