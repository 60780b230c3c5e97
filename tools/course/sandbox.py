"""Where graded test programs run: Linux namespaces when the machine allows them.

The grader starts ``unshare`` (util-linux) with fresh user, PID, mount, network and IPC
namespaces, and inside them tools/course/sandbox_exec.py, which hides the course's folders,
makes the file system read-only except the run's own folders, and starts the program. Where
namespaces are not available (no unshare, or user namespaces refused as in many Docker
containers), the same wrapper runs without them: resource limits and a child subreaper
only. ``degraded_reason()`` says, in one line, what protection is then missing."""
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from typing import List, Optional, Sequence

WRAPPER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sandbox_exec.py")
COURSE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FILE_SIZE_LIMIT = 256 << 20
OPEN_FILES_LIMIT = 256
PROCESS_LIMIT = max(1024, 4 * (os.cpu_count() or 1))   # threads count too: the simulator runs one per core
PROBE_TIMEOUT_S = 20

NAMESPACE_FLAGS = ["--pid", "--fork", "--mount-proc", "--net", "--ipc", "--mount"]
USER_NAMESPACE_FLAGS = ["--user", "--map-root-user"]


@dataclass
class Support:
    unshare_argv: Optional[List[str]]    # None: run without namespaces
    missing: Optional[str] = None        # what is unavailable, for the report

    @property
    def namespaced(self) -> bool:
        return self.unshare_argv is not None


_support: Optional[Support] = None
_support_lock = threading.Lock()
_extra_hidden: List[str] = []


def support() -> Support:
    """Probed once per process: whether the namespaced wrapper actually starts here."""
    global _support
    with _support_lock:
        if _support is None:
            _support = _probe()
        return _support


def set_support_for_tests(value: Optional[Support]) -> None:
    """Force a probe result (tests of the degraded path); None probes again."""
    global _support
    with _support_lock:
        _support = value


def degraded_reason() -> Optional[str]:
    """One line for the grading report when the sandbox is not fully available, else None."""
    found = support()
    if found.namespaced:
        return None
    return ("test programs run without the sandbox (%s): only resource limits apply; a program can "
            "read what the grader can read and write where the grader can write, and a program that "
            "kills its wrapper and detaches can outlive its run" % found.missing)


def sandbox_warnings() -> List[str]:
    """For a grading report's warnings: the degradation, if any, as its one line."""
    reason = degraded_reason()
    return [reason] if reason else []


def hide_also(path: str) -> None:
    """Another folder graded programs must not see (grade-all: the other submissions, its output)."""
    path = os.path.abspath(path)
    if path not in _extra_hidden:
        _extra_hidden.append(path)


def _unshare_candidates(unshare: str) -> List[List[str]]:
    """With a user namespace first; root may also manage without one (a privileged container)."""
    help_text = _unshare_help(unshare)
    base = list(NAMESPACE_FLAGS)
    if "--kill-child" in help_text:
        base.append("--kill-child")   # unshare's death (the grader's kill) takes the namespace with it
    candidates = [[unshare] + USER_NAMESPACE_FLAGS + base]
    if os.geteuid() == 0:
        candidates.append([unshare] + base)
    return candidates


def _unshare_help(unshare: str) -> str:
    try:
        return subprocess.run([unshare, "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              timeout=PROBE_TIMEOUT_S).stdout.decode("utf-8", "replace")
    except (OSError, subprocess.SubprocessError):
        return ""


def _probe() -> Support:
    if not sys.platform.startswith("linux"):
        return Support(None, "not Linux")
    unshare = shutil.which("unshare")
    if unshare is None:
        return Support(None, "util-linux's unshare is not installed")
    error = "unshare failed"
    for prefix in _unshare_candidates(unshare):
        ok, message = _try_wrapper(prefix)
        if ok:
            return Support(prefix)
        error = message or error
    return Support(None, "namespaces are not permitted here: %s" % error)


def _try_wrapper(prefix: List[str]) -> (bool, str):
    """Run the wrapper's whole set-up (mounts included) on a throwaway folder."""
    scratch = tempfile.mkdtemp(prefix="course-probe-")
    try:
        argv = prefix + wrapper_argv(hide=[scratch], show=[], write=[], probe=True)
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              timeout=PROBE_TIMEOUT_S, cwd="/")
        lines = done.stdout.decode("utf-8", "replace").strip().splitlines()
        return done.returncode == 0, (lines[-1] if lines else "exit code %d" % done.returncode)
    except (OSError, subprocess.SubprocessError) as exc:
        return False, str(exc)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def wrapper_argv(*, hide: Sequence[str], show: Sequence[str], write: Sequence[str], status_fd: Optional[int] = None,
                 rlimits: Sequence[str] = (), namespaced: bool = True, probe: bool = False) -> List[str]:
    # -I: the program's environment (PYTHONPATH, ...) must not change the wrapper; -S: faster start.
    argv = [sys.executable, "-I", "-S", WRAPPER]
    if status_fd is not None:
        argv += ["--status-fd", str(status_fd)]
    if namespaced:
        argv.append("--namespaced")
    if probe:
        argv.append("--probe")
    for option, paths in (("--hide", hide), ("--show", show), ("--write", write)):
        for path in paths:
            argv += [option, path]
    for spec in rlimits:
        argv += ["--rlimit", spec]
    return argv + ["--"]


@dataclass
class Plan:
    """What one run sees: hidden folders, read-only and writable folders brought back."""
    hide: List[str] = field(default_factory=list)
    show: List[str] = field(default_factory=list)
    write: List[str] = field(default_factory=list)


# The top-level folders a program needs: the system's programs, libraries and settings, and
# the kernel's file systems. Every other one (/home, /root, /opt, /srv, /mnt, /var, a /work
# with checkouts in it) is hidden: another copy of the course on the machine, with its
# solutions/, is as readable as the one being graded (a red-team run read one from a sibling
# git worktree, and printed it into its feedback).
SYSTEM_TOP_LEVEL = {"bin", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "run", "sbin", "sys", "usr"}
# Toolkits installed beside the system that programs load from (the cuda backend's).
SHOWN_TOOLKITS = ("/opt/cuda", "/opt/nvidia")


def other_top_level_folders() -> List[str]:
    """The folders of / outside SYSTEM_TOP_LEVEL (symbolic links are left alone: they lead
    into the system's folders on a merged-/usr system)."""
    try:
        entries = os.listdir("/")
    except OSError:
        return []
    return sorted("/" + e for e in entries
                  if e not in SYSTEM_TOP_LEVEL and not os.path.islink("/" + e) and os.path.isdir("/" + e))


def plan_for(executable: str, writable: Sequence[str]) -> Plan:
    """Hide the course (its solutions/, the reference build, the course snapshot, the other
    submissions' build folders), the temporary folder (other runs' files), /dev/shm, every
    top-level folder outside the system's (other copies of the course, home folders) and what
    was registered with hide_also; bring back the executable's build tree read-only, toolkits
    under /opt, and the run's own folders writable."""
    hide = [COURSE_ROOT, tempfile.gettempdir(), "/dev/shm"] + other_top_level_folders() + _extra_hidden
    # The wrapper is Python: its standard library must stay readable wherever it is installed
    # (pyenv puts it in a home folder), for the modules it imports after hiding.
    python = [p for p in {sys.base_prefix, sys.exec_prefix, sys.prefix}
              if p and os.path.isdir(p) and p.strip("/").split("/")[0] not in SYSTEM_TOP_LEVEL]
    show = [build_tree_of(executable)] + [t for t in SHOWN_TOOLKITS if os.path.isdir(t)] + sorted(python)
    return Plan(hide=[os.path.realpath(p) for p in hide],
                show=[os.path.realpath(p) for p in show],
                write=[os.path.realpath(p) for p in writable])


def build_tree_of(executable: str) -> str:
    """``<root>/build/grade-sim/worker-0`` for an executable built there (the test programs
    link the simulator statically and load only system libraries), else its own folder."""
    path = os.path.realpath(executable)
    parts = path.split(os.sep)
    for i in range(len(parts) - 3, 0, -1):
        if parts[i] == "build" and parts[i + 1].startswith("grade-") and i + 3 < len(parts):
            return os.sep.join(parts[:i + 3])
    return os.path.dirname(path)


def rlimit_specs(*, timeout: float, memory_bytes: Optional[int], namespaced: bool) -> List[str]:
    """The program's limits. RLIMIT_AS stays off (the simulator reserves address space)."""
    # CPU time counts every thread, so the wall-clock limit times the cores bounds a run
    # that behaves; it mainly ends a process that somehow outlived its run.
    cpu = int(timeout * max(1, os.cpu_count() or 1)) + 10
    # Soft below hard: the program gets SIGXCPU (named in its feedback), not a bare SIGKILL.
    specs = ["cpu=%d,%d" % (cpu, cpu + 5), "fsize=%d" % FILE_SIZE_LIMIT, "nofile=%d" % OPEN_FILES_LIMIT, "core=0"]
    if memory_bytes:
        specs.append("data=%d" % memory_bytes)
    if namespaced:
        # Counted per user *in the new user namespace*, so other work of the grader's user
        # does not count. The kernel does not enforce it for root (uid 0 outside).
        specs.append("nproc=%d" % PROCESS_LIMIT)
    return specs
