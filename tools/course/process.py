"""Run an untrusted test program: its own process group, a time limit, a memory limit and
an output cap, with its output optionally echoed as it arrives. Graded runs go through
run_sandboxed (namespaces where available, see sandbox.py)."""
import codecs
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import List, Mapping, Optional, Sequence, TextIO

try:
    import resource
except ImportError:  # not on POSIX; limits are then skipped
    resource = None  # type: ignore

DEFAULT_TIMEOUT_S = 120.0
DEFAULT_MEMORY_BYTES = 4 << 30        # RLIMIT_DATA, not RLIMIT_AS: the simulator reserves address space
DEFAULT_OUTPUT_CAP = 64 * 1024         # keep the last 64 KiB of a program's output
STOP_GRACE_S = 2.0                     # for the unsandboxed wrapper to end the program's tree


def timeout_from_env(default: float = DEFAULT_TIMEOUT_S) -> float:
    value = os.environ.get("COURSE_TEST_TIMEOUT")
    if not value:
        return default
    try:
        seconds = float(value)
    except ValueError:
        from .errors import CourseError
        raise CourseError("COURSE_TEST_TIMEOUT must be a number of seconds, not '%s'" % value)
    return seconds if seconds > 0 else default


def memory_limit_from_env(default: int = DEFAULT_MEMORY_BYTES) -> Optional[int]:
    """COURSE_MEMORY_LIMIT_MB overrides the memory limit; 0 turns it off."""
    value = os.environ.get("COURSE_MEMORY_LIMIT_MB")
    if not value:
        return default
    try:
        mb = int(value)
    except ValueError:
        from .errors import CourseError
        raise CourseError("COURSE_MEMORY_LIMIT_MB must be a whole number of MiB, not '%s'" % value)
    return mb << 20 if mb > 0 else None


@dataclass
class ProcessResult:
    returncode: Optional[int]
    timed_out: bool
    output: str               # the last ``output_cap`` bytes, decoded
    output_truncated: bool
    seconds: float
    timeout: float

    @property
    def signal_name(self) -> Optional[str]:
        """"SIGSEGV" when the program died from a signal (and was not killed for time)."""
        if self.timed_out or self.returncode is None or self.returncode >= 0:
            return None
        try:
            return signal.Signals(-self.returncode).name
        except ValueError:
            return "signal %d" % -self.returncode

    def describe_abnormal_end(self) -> Optional[str]:
        """None for a normal exit (any exit code), else a short reason."""
        if self.timed_out:
            return "timed out after %s s" % _seconds(self.timeout)
        if self.signal_name:
            return "crashed (%s)" % self.signal_name
        return None


def _seconds(value: float) -> str:
    return str(int(value)) if value == int(value) else "%.1f" % value


def _limit_child(memory_bytes: Optional[int]):
    def apply() -> None:
        if resource is None:
            return
        if memory_bytes:
            resource.setrlimit(resource.RLIMIT_DATA, (memory_bytes, memory_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))   # no core dumps from crashing student code
    return apply


def run_limited(argv: List[str], *, cwd: str, timeout: float = DEFAULT_TIMEOUT_S,
                memory_bytes: Optional[int] = None, output_cap: int = DEFAULT_OUTPUT_CAP,
                env: Optional[Mapping[str, str]] = None, echo: Optional[TextIO] = None,
                pass_fds: Sequence[int] = ()) -> ProcessResult:
    """Run ``argv`` with stdout and stderr merged; kill its whole process group on timeout.
    (``./course test``: the student's own program on the student's own machine.)"""
    start = time.monotonic()
    proc = subprocess.Popen(argv, cwd=cwd, env=dict(env) if env is not None else None,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True, preexec_fn=_limit_child(memory_bytes), pass_fds=tuple(pass_fds))
    return _supervise(proc, start, timeout=timeout, output_cap=output_cap, echo=echo,
                      stop=lambda: _kill_group(proc))


def run_sandboxed(argv: List[str], *, cwd: str, timeout: float = DEFAULT_TIMEOUT_S,
                  memory_bytes: Optional[int] = None, output_cap: int = DEFAULT_OUTPUT_CAP,
                  env: Optional[Mapping[str, str]] = None, pass_fds: Sequence[int] = (),
                  writable: Sequence[str] = ()) -> ProcessResult:
    """Run an untrusted program like run_limited, inside the sandbox where the machine allows
    it (tools/course/sandbox.py): its working folder ``cwd`` and the ``writable`` folders are
    the only places it can write. Exit codes, signals and time-outs read as run_limited's."""
    from . import sandbox
    found = sandbox.support()
    plan = sandbox.plan_for(argv[0], [cwd] + list(writable))
    rlimits = sandbox.rlimit_specs(timeout=timeout, memory_bytes=memory_bytes, namespaced=found.namespaced)
    return _run_in_wrapper(argv, cwd=cwd, timeout=timeout, output_cap=output_cap, env=env, pass_fds=pass_fds,
                           unshare_argv=found.unshare_argv, plan=plan, rlimits=rlimits,
                           what="the sandbox for test programs")


def run_contained(argv: List[str], *, cwd: str, timeout: float, rlimits: Sequence[str],
                  output_cap: int = DEFAULT_OUTPUT_CAP, env: Optional[Mapping[str, str]] = None) -> ProcessResult:
    """Run a trusted tool over untrusted input (the build of a submission: CMake, ninja, the
    compilers) under the sandbox's wrapper without namespaces: ``rlimits`` (sandbox_exec.py's
    NAME=SOFT,HARD specs) on every process it starts, and at ``timeout`` the wrapper, a child
    subreaper, kills every descendant. (A kill of the process group is not enough: ninja
    starts each command in a process group of its own, so its compilers would outlive it.)"""
    from . import sandbox
    return _run_in_wrapper(argv, cwd=cwd, timeout=timeout, output_cap=output_cap, env=env, pass_fds=(),
                           unshare_argv=None, plan=sandbox.Plan(), rlimits=rlimits, what="the build's wrapper")


def _run_in_wrapper(argv: List[str], *, cwd: str, timeout: float, output_cap: int, env: Optional[Mapping[str, str]],
                    pass_fds: Sequence[int], unshare_argv: Optional[List[str]], plan, rlimits: Sequence[str],
                    what: str) -> ProcessResult:
    """``argv`` under tools/course/sandbox_exec.py (inside ``unshare_argv`` when given), which
    reports how the program ended on a status pipe."""
    from . import sandbox
    namespaced = unshare_argv is not None
    status_read, status_write = os.pipe()
    try:
        wrapper = sandbox.wrapper_argv(hide=plan.hide, show=plan.show, write=plan.write, status_fd=status_write,
                                       rlimits=rlimits, namespaced=namespaced)
        start = time.monotonic()
        proc = subprocess.Popen((unshare_argv or []) + wrapper + list(argv), cwd=cwd,
                                env=dict(env) if env is not None else None, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
                                pass_fds=tuple(pass_fds) + (status_write,))
        os.close(status_write)
        status_write = -1
        stop = (lambda: _kill_group(proc)) if namespaced else (lambda: _stop_wrapper(proc))
        result = _supervise(proc, start, timeout=timeout, output_cap=output_cap, echo=None, stop=stop)
        return _with_program_status(result, _read_all(status_read), what)
    finally:
        os.close(status_read)
        if status_write >= 0:
            os.close(status_write)


def _with_program_status(result: ProcessResult, status: List[str],
                         what: str = "the sandbox for test programs") -> ProcessResult:
    """The wrapper's report of how the program ended replaces the wrapper's own exit code.
    Without one the wrapper itself died (killed by the program, or for time): its code stays,
    so a program that kills its parent reads as crashed (SIGKILL). A wrapper that never got
    ready is the grader's failure, not the student's."""
    from .errors import CourseError
    for line in status:
        if line.startswith("error "):
            raise CourseError("%s did not start: %s" % (what, line[6:]))
    if "ready" not in status and not result.timed_out:
        last = result.output.strip().splitlines()[-1:] or ["no message"]
        raise CourseError("%s did not start (exit code %s): %s" % (what, result.returncode, last[0]))
    for line in status:
        word, _, number = line.partition(" ")
        if word in ("exit", "signal") and number.isdigit():
            result.returncode = int(number) if word == "exit" else -int(number)
    return result


def _read_all(fd: int) -> List[str]:
    """The wrapper's lines; it has exited, so only what is already in the pipe is read."""
    os.set_blocking(fd, False)
    data = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except BlockingIOError:
            break
        if not chunk:
            break
        data += chunk
    return data.decode("utf-8", errors="replace").splitlines()


def _stop_wrapper(proc: subprocess.Popen) -> None:
    """Without namespaces: the wrapper (a subreaper) ends the program's whole tree on SIGTERM,
    detached processes included; the group kill follows in case the wrapper was stopped."""
    if proc.poll() is None:
        try:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=STOP_GRACE_S)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
    _kill_group(proc)


def _supervise(proc: subprocess.Popen, start: float, *, timeout: float, output_cap: int, echo: Optional[TextIO],
               stop) -> ProcessResult:
    """Collect the output's tail, enforce the time limit, and always ``stop()`` at the end."""
    tail = bytearray()
    truncated = [False]

    def reader() -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        fd = proc.stdout.fileno()
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            tail.extend(chunk)
            if len(tail) > output_cap:
                del tail[:len(tail) - output_cap]
                truncated[0] = True
            if echo is not None:
                echo.write(decoder.decode(chunk))
                echo.flush()
        if echo is not None:
            echo.write(decoder.decode(b"", final=True))
            echo.flush()

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    timed_out = False
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
    except BaseException:
        stop()
        raise
    # Also ends anything the program left running in the background.
    stop()
    proc.wait()
    thread.join(timeout=5)
    proc.stdout.close()
    text = bytes(tail).decode("utf-8", errors="replace")
    if truncated[0]:
        text = "[... earlier output cut; the last %d KiB follow ...]\n" % (output_cap // 1024) + text
    return ProcessResult(returncode=proc.returncode, timed_out=timed_out, output=text,
                         output_truncated=truncated[0], seconds=time.monotonic() - start, timeout=timeout)


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
