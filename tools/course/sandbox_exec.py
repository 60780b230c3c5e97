"""The wrapper between the grader and an untrusted test program (standard library only).

    python3 -I -S sandbox_exec.py --status-fd N [--namespaced] [--hide DIR] [--show DIR]
                                  [--write DIR] [--rlimit NAME=LIMIT|NAME=SOFT,HARD] [--probe] -- PROGRAM ARG...

It starts PROGRAM as its child, waits for it, and writes "ready" (set up), then "exit N"
or "signal N" (how the program ended), or "error MESSAGE" (set-up failed) to the status fd, so that the grader learns how the program ended even though the grader's own
child is this wrapper (or util-linux's unshare around it). The program never sees the
status fd.

With --namespaced it runs as PID 1 of a fresh PID namespace inside fresh user, mount, net
and IPC namespaces (set up by unshare). It then hides each --hide folder under an empty
tmpfs, brings back each --show folder read-only and each --write folder writable, and makes
the rest of the file system read-only. When it exits, the kernel kills everything left in
the PID namespace, however the program detached.

Without --namespaced it is a child subreaper: orphans of the program are re-parented to it,
and it kills all of them when the program ends or when the grader sends SIGTERM."""
import ctypes
import glob
import os
import signal
import sys
import time

STATUS_FAILED_SETUP = 125
STATUS_STOPPED = 124          # ended by the grader's SIGTERM (its time limit)

try:
    _libc = ctypes.CDLL(None, use_errno=True)
except OSError:  # no C library to call: only the unsandboxed mode works
    _libc = None

MS_NOSUID, MS_NODEV, MS_NOEXEC = 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC = 32, 4096, 16384
MS_RDONLY, MS_NOATIME, MS_NODIRATIME, MS_RELATIME = 1, 1024, 2048, 1 << 21
AT_FDCWD, AT_RECURSIVE = -100, 0x8000
MOUNT_ATTR_RDONLY = 0x1
SYS_MOUNT_SETATTR = 442      # the same number on every architecture (added in Linux 5.12)
PR_SET_CHILD_SUBREAPER = 36
CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000

# Devices a test program may use (the GPU's when there is one); /dev is otherwise empty,
# since a program that is root outside (a root grader) could open the disks through it.
DEVICES = ["null", "zero", "full", "random", "urandom"]
DEVICE_GLOBS = ["/dev/nvidia*", "/dev/dri"]
# Kernel settings under /proc that root outside could change; /proc itself stays writable
# because the wrapper writes the nested namespace's uid_map there.
PROC_READ_ONLY = ["/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs"]

RLIMITS = {"cpu": "RLIMIT_CPU", "data": "RLIMIT_DATA", "fsize": "RLIMIT_FSIZE", "nofile": "RLIMIT_NOFILE",
           "nproc": "RLIMIT_NPROC", "core": "RLIMIT_CORE"}


class SetupError(Exception):
    pass


class MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]


def parse(argv):
    opts = {"status_fd": None, "namespaced": False, "probe": False, "hide": [], "show": [], "write": [],
            "rlimit": []}
    i = 0
    while i < len(argv) and argv[i] != "--":
        name = argv[i][2:].replace("-", "_")
        if name in ("namespaced", "probe"):
            opts[name] = True
            i += 1
            continue
        if name not in opts or i + 1 >= len(argv):
            raise SetupError("bad wrapper argument %r" % argv[i])
        value = argv[i + 1]
        if name == "status_fd":
            opts[name] = int(value)
        else:
            opts[name].append(value)
        i += 2
    opts["program"] = argv[i + 1:]
    return opts


def _check(result, what):
    if result != 0:
        err = ctypes.get_errno()
        raise SetupError("%s: %s" % (what, os.strerror(err)))


def _mount(source, target, fstype, flags, data=None):
    _check(_libc.mount(source and source.encode(), target.encode(), fstype and fstype.encode(),
                       ctypes.c_ulong(flags), data and data.encode()), "mount %s" % target)


def _set_readonly(path, readonly, recursive):
    attr = MountAttr(MOUNT_ATTR_RDONLY if readonly else 0, 0 if readonly else MOUNT_ATTR_RDONLY, 0, 0)
    flags = AT_RECURSIVE if recursive else 0
    result = _libc.syscall(ctypes.c_long(SYS_MOUNT_SETATTR), ctypes.c_int(AT_FDCWD), path.encode(),
                           ctypes.c_uint(flags), ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)))
    _check(result, "mount_setattr %s" % path)


def _mount_flags(target):
    """The per-mount flags of ``target`` that a remount must repeat (the kernel locks them)."""
    known = {"nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC, "noatime": MS_NOATIME,
             "nodiratime": MS_NODIRATIME, "relatime": MS_RELATIME}
    flags = 0
    for fields in _mounts():
        if fields[4] == target:
            flags = 0
            for option in fields[5].split(","):
                flags |= known.get(option, 0)
    return flags


def _mounts():
    with open("/proc/self/mountinfo") as f:
        return [[_unescape(x) for x in line.split()] for line in f]


def _unescape(text):
    return text.encode().decode("unicode_escape") if "\\" in text else text


def _remount_all_readonly(writable):
    """The pre-5.12 way: remount each mount on its own; best effort on mounts we may not touch."""
    for target in sorted({fields[4] for fields in _mounts()}):
        if target in writable:
            continue
        try:
            _mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | _mount_flags(target))
        except SetupError:
            pass


def make_readonly_except(writable):
    """Every mount read-only, then the ``writable`` ones writable again. A writable path that
    is not a mount point of its own (a folder inside another hidden one, e.g. a repository
    inside the hidden temporary folder) shares its mount's setting and is left alone."""
    try:
        _set_readonly("/", True, recursive=True)
    except SetupError:
        _remount_all_readonly(writable)
        return
    mount_points = {fields[4] for fields in _mounts()}
    for path in writable:
        if path in mount_points:
            _set_readonly(path, False, recursive=False)


def _bind(fd, target):
    _mount("/proc/self/fd/%d" % fd, target, None, MS_BIND | MS_REC)
    os.close(fd)


def set_up_dev():
    """A fresh /dev with only DEVICES (and the GPU's), a private /dev/shm and the usual links."""
    paths = ["/dev/" + name for name in DEVICES] + sorted(p for g in DEVICE_GLOBS for p in glob.glob(g))
    nodes = [(path, os.open(path, os.O_PATH)) for path in paths if os.path.exists(path)]
    _mount("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=1m")
    for path, fd in nodes:
        if os.path.isdir("/proc/self/fd/%d" % fd):
            os.makedirs(path, exist_ok=True)
        else:
            open(path, "w").close()
        _bind(fd, path)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2")):
        os.symlink(target, "/dev/" + name)
    os.mkdir("/dev/shm")
    _mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=64m")


def protect_proc():
    for path in PROC_READ_ONLY:
        if os.path.exists(path):
            _mount(path, path, None, MS_BIND | MS_REC)
            _mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | _mount_flags(path))


def set_up_mounts(hide, show, write):
    """Hide, bring back, then make everything else read-only (in this mount namespace only)."""
    if _libc is None:
        raise SetupError("no C library to call mount()")
    # Folders to bring back are opened first: once their parent is hidden they are only
    # reachable through these descriptors.
    keep = [(path, os.open(path, os.O_PATH | os.O_DIRECTORY), writable)
            for path, writable in [(p, False) for p in show] + [(p, True) for p in write] if os.path.isdir(path)]
    hidden = []
    # A folder inside another hidden one (a repository in the temporary folder) is hidden with
    # it; mounting over it first would leave a shadowed mount behind the outer one.
    hide = [p for p in hide if not any(p != q and p.startswith(q.rstrip("/") + "/") for q in hide)]
    for path in hide:
        if os.path.isdir(path):   # checked now: a folder inside one hidden before is gone
            _mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=64m")
            hidden.append(path)
    for path, fd, _ in keep:
        os.makedirs(path, exist_ok=True)
        _bind(fd, path)
    set_up_dev()
    protect_proc()
    # The emptied folders stay writable (private, in memory, gone with the namespace); so do
    # the --write folders, /dev/shm and /proc itself (its kernel settings were made read-only
    # above). Everything else, the build folders included, becomes read-only.
    make_readonly_except(hidden + [path for path, _, writable in keep if writable] + ["/dev/shm", "/proc"])


def lock_mounts():
    """Move into a nested user and mount namespace. The kernel then locks every mount made
    above: the program, root in the nested namespace, cannot unmount a hiding tmpfs, make a
    read-only mount writable again, or ptrace the wrapper and look through its descriptors."""
    uid, gid = os.geteuid(), os.getegid()   # read first: unmapped until the maps are written
    _check(_libc.unshare(ctypes.c_int(CLONE_NEWUSER | CLONE_NEWNS)), "unshare")
    for name, text in (("setgroups", "deny"), ("uid_map", "0 %d 1" % uid), ("gid_map", "0 %d 1" % gid)):
        with open("/proc/self/" + name, "w") as f:
            f.write(text)


def probe_lock():
    """Whether lock_mounts works here (checked in a child: it changes the caller for good)."""
    pid = os.fork()
    if pid == 0:
        try:
            lock_mounts()
            os._exit(0)
        except BaseException as exc:  # noqa: B036 - a forked child must not return
            os.write(2, ("sandbox: %s\n" % exc).encode())
            os._exit(1)
    return os.waitpid(pid, 0)[1] == 0


def apply_rlimits(specs):
    import resource
    for spec in specs:
        name, _, value = spec.partition("=")          # NAME=LIMIT or NAME=SOFT,HARD
        soft, _, hard = value.partition(",")
        resource.setrlimit(getattr(resource, RLIMITS[name]), (int(soft), int(hard or soft)))


def start_program(program, status_fd, rlimits, cwd, namespaced):
    """Fork and exec the program; (pid, None), or (None, why) when it could not be started
    (the set-up in the child or the exec failed: the grader's problem, not the program's)."""
    failed_read, failed_write = os.pipe()        # close-on-exec: stays empty when exec works
    pid = os.fork()
    if pid == 0:
        os.close(failed_read)
        try:
            if status_fd is not None:
                os.close(status_fd)
            if namespaced:
                lock_mounts()
            os.chdir(cwd)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            apply_rlimits(rlimits)
            os.execvp(program[0], program)
        except BaseException as exc:  # noqa: B036 - the child must never return into the wrapper
            os.write(failed_write, ("cannot start %s: %s" % (program[0], exc)).encode()[:512])
        os._exit(127)
    os.close(failed_write)
    why = b""
    while True:
        chunk = os.read(failed_read, 512)
        if not chunk:
            break
        why += chunk
    os.close(failed_read)
    if why:
        os.waitpid(pid, 0)
        return None, why.decode(errors="replace")
    return pid, None


def children_of(parent):
    """Processes whose parent is ``parent`` (read from /proc)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        if int(fields[1]) == parent:
            found.append(int(name))
    return found


def kill_descendants():
    """As a subreaper, every orphan of the program becomes our child: kill and reap level by
    level until no child is left (a new child re-parented to us is caught on the next pass)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        for pid in children_of(os.getpid()):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            return
        time.sleep(0.01)


def wait_for(pid):
    """The program's wait status; other children (orphans re-parented to us) are only reaped."""
    while True:
        try:
            done, status = os.waitpid(-1, 0)
        except InterruptedError:
            continue
        if done == pid:
            return status


def report(status_fd, text):
    if status_fd is not None:
        os.write(status_fd, (text + "\n").encode())


def describe(status):
    if os.WIFSIGNALED(status):
        return "signal %d" % os.WTERMSIG(status)
    return "exit %d" % os.WEXITSTATUS(status)


def on_sigterm(signum, frame):
    # The grader's time limit: end the whole tree, then ourselves.
    kill_descendants()
    os._exit(STATUS_STOPPED)


def main(argv):
    try:
        opts = parse(argv)
    except (SetupError, ValueError) as exc:
        sys.stderr.write("sandbox: %s\n" % exc)
        return STATUS_FAILED_SETUP
    status_fd = opts["status_fd"]
    if status_fd is not None:
        os.set_inheritable(status_fd, False)
    cwd = os.getcwd()
    try:
        if opts["namespaced"]:
            # Our own working folder would otherwise be a way, through /proc/1/cwd/.., back
            # into the folders about to be hidden.
            os.chdir("/")
            set_up_mounts(opts["hide"], opts["show"], opts["write"])
        else:
            # As PID 1 of its namespace the wrapper needs no handler (the grader kills the
            # namespace); one there would only let the program end the wrapper.
            signal.signal(signal.SIGTERM, on_sigterm)
            if _libc is not None:
                _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        if opts["probe"]:
            return 0 if not opts["namespaced"] or probe_lock() else STATUS_FAILED_SETUP
        if not opts["program"]:
            raise SetupError("no program to run")
    except (SetupError, OSError) as exc:
        report(status_fd, "error %s" % exc)
        return STATUS_FAILED_SETUP
    # "ready" comes before the program exists: a program that kills the wrapper at once must
    # read as its own doing. A program that could not be started is reported after it, as an
    # error, which the grader reads first.
    report(status_fd, "ready")
    pid, why = start_program(opts["program"], status_fd, opts["rlimit"], cwd, opts["namespaced"])
    if pid is None:
        report(status_fd, "error %s" % why)
        return STATUS_FAILED_SETUP
    status = wait_for(pid)
    report(status_fd, describe(status))
    kill_descendants()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
