"""Grades a class through a real Slurm on this machine and checks the gradebook.

    python3 autograder/slurm/local_slurm.py [--lesson 00] [--seed N] [--keep]

1. brings up a one-node Slurm from Debian's slurm-wlm and munge packages, on this machine only:
   munged, slurmctld and slurmd in a private folder, with their own key, ports and
   configuration (nothing under /etc is touched; the daemons are stopped at the end);
2. makes a class of 20 lesson submissions from the solutions and the untouched skeletons (every
   mix of the lesson's first four files, one that does not compile, one with nothing in it);
3. grades it with autograder/slurm/grade_array.sbatch as a job array on the simulator, two
   tasks at a time, and collects the gradebook with autograder/slurm/gradebook.py;
4. grades the same class with ./course grade-all and the same seed, and checks that the two
   gradebooks agree, row by row and column by column.

Exit status: 0 when they agree, 1 when they do not or a step failed, 77 when this machine
cannot run it (no slurm-wlm or munge: `apt-get install slurm-wlm munge`; slurmd needs root).
`./course selftest --slow` runs it with --record, which keeps the run in
autograder/slurm/last_local_run.json; the CTest grader/slurm-run-recorded fails when one of the
Slurm files changed after the run recorded there (--check-record)."""
import argparse
import csv
import datetime
import hashlib
import json
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional, Sequence

ROOT = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SKIPPED = 77
DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("munge", "sbatch", "sinfo", "scancel")


RECORD = os.path.join(ROOT, "autograder", "slurm", "last_local_run.json")
# The files whose change needs a new recorded run: the array script, the collector, this check.
CHECKED_FILES = ("grade_array.sbatch", "gradebook.py", "local_slurm.py")
LOG: List[str] = []


def log(message: str) -> None:
    line = "[local-slurm %s] %s" % (time.strftime("%H:%M:%S"), message)
    LOG.append(line)
    print(line, flush=True)


def checked_files_digest() -> Dict[str, str]:
    digests = {}
    for name in CHECKED_FILES:
        with open(os.path.join(ROOT, "autograder", "slurm", name), "rb") as f:
            digests[name] = hashlib.sha256(f.read()).hexdigest()
    return digests


def write_record(argv: List[str], figures: Dict[str, object]) -> None:
    """The run, kept in the repository: when, how, where, what it found, and the files it
    checked (CHECKED_FILES' digests), which check_record() compares with the files as they are."""
    slurm_version = subprocess.run([program("slurmctld"), "-V"], stdout=subprocess.PIPE,
                                   universal_newlines=True).stdout
    record = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": " ".join(["python3", "autograder/slurm/local_slurm.py"] + argv),
        "machine": "%s, %d cores, Linux %s, %s" % (platform.node() or "?", os.cpu_count() or 0, platform.release(),
                                                   slurm_version.strip()),
        "files": checked_files_digest(),
        "log": LOG,
    }
    record.update(figures)
    with open(RECORD, "w", encoding="utf-8") as f:
        json.dump(record, f, indent=2)
        f.write("\n")
    log("recorded in " + os.path.relpath(RECORD, ROOT))


def check_record() -> int:
    """0 when the last recorded run checked the Slurm files as they are now; 1, saying what to
    run, when one of them changed since (or there is no record)."""
    try:
        with open(RECORD, encoding="utf-8") as f:
            record = json.load(f)
    except (OSError, ValueError):
        record = {}
    changed = [name for name, digest in checked_files_digest().items() if record.get("files", {}).get(name) != digest]
    if changed or not record.get("agree"):
        print("autograder/slurm changed since its last recorded local Slurm run (%s): run, as root on a machine with "
              "slurm-wlm and munge, `./course selftest --slow` or `python3 autograder/slurm/local_slurm.py --record`, "
              "and commit %s" % (", ".join(changed) or "no passing record", os.path.relpath(RECORD, ROOT)))
        return 1
    print("the Slurm files are those of the local Slurm run of %s (%s)" % (record["date"], record["command"]))
    return 0


def missing_prerequisites() -> Optional[str]:
    """Why this machine cannot run the check, or None."""
    absent = [p for p in DAEMONS + CLIENTS if shutil.which(p) is None and not os.path.exists("/usr/sbin/" + p)]
    if absent:
        return "not installed: %s (apt-get install slurm-wlm munge)" % ", ".join(absent)
    if os.geteuid() != 0:
        return "slurmd starts jobs as their user, which needs root; run this as root"
    return None


def program(name: str) -> str:
    return shutil.which(name) or os.path.join("/usr/sbin", name)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def memory_mb() -> int:
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) // 1024
    return 4096


def slurm_conf(work: str, node: str, cpus: int, real_memory_mb: int, ports: Sequence[int]) -> str:
    """One controller and one node, both this machine, no accounting, no cgroups (containers
    rarely allow them): the smallest Slurm that schedules an array the way a cluster does."""
    return "\n".join([
        "ClusterName=course-local",
        "SlurmctldHost=%s(127.0.0.1)" % node,
        "SlurmctldPort=%d" % ports[0],
        "SlurmdPort=%d" % ports[1],
        "SlurmUser=root",
        "SlurmdUser=root",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        "AuthInfo=socket=%s" % os.path.join(work, "munge", "munge.sock"),
        "StateSaveLocation=%s" % os.path.join(work, "state"),
        "SlurmdSpoolDir=%s" % os.path.join(work, "spool"),
        "SlurmctldPidFile=%s" % os.path.join(work, "slurmctld.pid"),
        "SlurmdPidFile=%s" % os.path.join(work, "slurmd.pid"),
        "SlurmctldLogFile=%s" % os.path.join(work, "slurmctld.log"),
        "SlurmdLogFile=%s" % os.path.join(work, "slurmd.log"),
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/none",
        "SchedulerType=sched/backfill",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core",
        "MpiDefault=none",
        "ReturnToService=2",
        "NodeName=%s NodeAddr=127.0.0.1 CPUs=%d RealMemory=%d State=UNKNOWN" % (node, cpus, real_memory_mb),
        "PartitionName=course Nodes=%s Default=YES MaxTime=INFINITE State=UP" % node,
        "",
    ])


class LocalSlurm:
    """munged, slurmctld and slurmd of one node, in ``work``; stop() ends them."""

    def __init__(self, work: str):
        self.work = work
        self.conf = os.path.join(work, "slurm.conf")
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        self.controller_started = False

    def start(self) -> None:
        munge_dir = os.path.join(self.work, "munge")
        os.makedirs(munge_dir)
        os.chmod(munge_dir, 0o711)          # munged: clients of any user must reach its socket
        for sub in ("state", "spool"):
            os.makedirs(os.path.join(self.work, sub))
        key = os.path.join(self.work, "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        subprocess.run([program("munged"), "--key-file=" + key, "--socket=" + os.path.join(munge_dir, "munge.sock"),
                        "--pid-file=" + os.path.join(munge_dir, "munged.pid"),
                        "--log-file=" + os.path.join(munge_dir, "munged.log"),
                        "--seed-file=" + os.path.join(munge_dir, "seed")], check=True)
        node = socket.gethostname().split(".")[0]
        with open(self.conf, "w") as f:
            f.write(slurm_conf(self.work, node, os.cpu_count() or 1, max(1024, memory_mb() - 512),
                               (free_port(), free_port())))
        subprocess.run([program("slurmctld"), "-f", self.conf], check=True, env=self.env)
        self.controller_started = True
        subprocess.run([program("slurmd"), "-f", self.conf], check=True, env=self.env)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            state = subprocess.run(["sinfo", "-h", "-o", "%t"], env=self.env, stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, universal_newlines=True).stdout.strip()
            if state == "idle":
                return
            time.sleep(1)
        raise RuntimeError("the local Slurm node did not become idle within 60 s (logs in %s)" % self.work)

    def stop(self) -> None:
        if self.controller_started:      # without a controller, scancel would wait for one
            subprocess.run(["scancel", "--user", "root"], env=self.env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=60)
        for pid_file in ("slurmd.pid", "slurmctld.pid", os.path.join("munge", "munged.pid")):
            path = os.path.join(self.work, pid_file)
            try:
                with open(path) as f:
                    os.kill(int(f.read().strip()), signal.SIGTERM)
            except (OSError, ValueError):
                pass
        time.sleep(1)


def make_class(lesson_dir: str, dest: str) -> List[str]:
    """20 submissions of one lesson: every mix of solution and skeleton for its first four
    files (16), two full solutions under other names, one that does not compile, and an
    empty one. Returns the folders."""
    files = sorted(n for n in os.listdir(os.path.join(ROOT, "solutions", lesson_dir)) if n.endswith(".cu"))[:4]
    folders = []

    def student(name: str, pick) -> None:
        folder = os.path.join(dest, name)
        os.makedirs(os.path.join(folder, lesson_dir))
        for i, f in enumerate(files):
            source = pick(i, f)
            if source == "broken":
                with open(os.path.join(folder, lesson_dir, f), "w") as out:
                    out.write("this is not C++ {\n")
            elif source:
                shutil.copyfile(os.path.join(ROOT, source, lesson_dir, f), os.path.join(folder, lesson_dir, f))
        folders.append(folder)

    for mask in range(1 << len(files)):
        student("mix-%02d" % mask, lambda i, f, m=mask: "solutions" if m >> i & 1 else "exercises")
    student("full-a", lambda i, f: "solutions")
    student("full-b", lambda i, f: "solutions")
    student("broken", lambda i, f: "broken" if i == 0 else "solutions")
    student("empty", lambda i, f: None)
    return folders


def read_gradebook(path: str) -> Dict[str, Dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as f:
        return {row["student"]: row for row in csv.DictReader(f)}


def compare_gradebooks(slurm: Dict[str, Dict[str, str]], local: Dict[str, Dict[str, str]]) -> List[str]:
    """Every difference between the two gradebooks (students, columns, cells), as lines."""
    problems = []
    for student in sorted(set(slurm) | set(local)):
        if student not in slurm or student not in local:
            problems.append("%s: only in the %s gradebook" % (student, "Slurm" if student in slurm else "grade-all"))
            continue
        a, b = slurm[student], local[student]
        for column in sorted(set(a) | set(b)):
            if a.get(column, "") != b.get(column, ""):
                problems.append("%s, %s: Slurm %r, grade-all %r" % (student, column, a.get(column), b.get(column)))
    return problems


def run(cmd: List[str], env: Optional[Dict[str, str]] = None, stdout=None) -> float:
    log("$ " + " ".join(cmd))
    started = time.monotonic()
    subprocess.run(cmd, cwd=ROOT, env=env, check=True, stdout=stdout)
    return time.monotonic() - started


def lesson_folder(lesson: str) -> str:
    matches = [n for n in sorted(os.listdir(os.path.join(ROOT, "solutions")))
               if n.split("-")[0] == lesson or n == lesson]
    if len(matches) != 1:
        raise SystemExit("no lesson '%s' in solutions/" % lesson)
    return matches[0]


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lesson", default="00", help="the lesson the class submits (default 00)")
    parser.add_argument("--seed", type=int, default=20261126, help="the grading seed of both gradings")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (logs, grades) and say where")
    parser.add_argument("--record", action="store_true",
                        help="when the gradebooks agree, write the run into autograder/slurm/last_local_run.json")
    parser.add_argument("--check-record", action="store_true",
                        help="only check that the last recorded run checked the Slurm files as they are now")
    args = parser.parse_args(argv)
    if args.check_record:
        return check_record()
    why_not = missing_prerequisites()
    if why_not:
        print("local Slurm check skipped: " + why_not)
        return SKIPPED
    lesson_dir = lesson_folder(args.lesson)
    work = tempfile.mkdtemp(prefix="course-slurm-")
    os.chmod(work, 0o711)                   # traversable, not listable: munged checks the path
    cluster = LocalSlurm(work)
    ok = False
    try:
        log("starting munged, slurmctld and slurmd in " + work)
        cluster.start()
        folders = make_class(lesson_dir, os.path.join(work, "class"))
        listing = os.path.join(work, "submissions.txt")
        with open(listing, "w") as f:
            f.write("".join(folder + "/\n" for folder in folders))
        grades = os.path.join(work, "grades-slurm")
        os.makedirs(grades)
        env = dict(cluster.env, COURSE_BACKEND="sim")
        grade_options = ["--lesson", args.lesson, "--seed", str(args.seed)]
        # Two tasks at a time on a 2-core machine: the slots and the shared build's lock at work.
        slurm_s = run(["sbatch", "--wait", "--array=1-%d" % len(folders), "--cpus-per-task=1",
                       "--output=" + os.path.join(grades, "slurm-%A_%a.out"), "--chdir=" + ROOT,
                       "--export=ALL,COURSE_BACKEND=sim", "autograder/slurm/grade_array.sbatch", listing, grades]
                      + grade_options, env=env)
        slurm_book = os.path.join(grades, "gradebook.csv")
        with open(slurm_book, "w") as out:
            run([sys.executable, "autograder/slurm/gradebook.py", grades, listing], stdout=out)
        local = os.path.join(work, "grades-local")
        local_s = run(["./course", "grade-all", os.path.join(work, "class"), "--out", local] + grade_options,
                      env=env)
        rows = read_gradebook(slurm_book)
        problems = compare_gradebooks(rows, read_gradebook(os.path.join(local, "gradebook.csv")))
        log("graded %d submissions of lesson %s: Slurm array %.0f s, grade-all %.0f s (seed %d)"
            % (len(folders), args.lesson, slurm_s, local_s, args.seed))
        for student in sorted(rows):
            row = rows[student]
            log("  %-8s %s/%s%s" % (student, row["score"], row["max_score"],
                                     "  (" + row["error"] + ")" if row.get("error") else ""))
        if problems:
            log("the gradebooks DISAGREE in %d places:" % len(problems))
            for p in problems:
                log("  " + p)
        else:
            log("the two gradebooks agree: %d rows, %d columns each"
                % (len(rows), len(next(iter(rows.values())))))
        ok = not problems and len(rows) == len(folders)
        if ok and args.record:
            write_record(argv, {"agree": True, "submissions": len(folders), "lesson": args.lesson,
                                "seed": args.seed, "slurm_array_s": round(slurm_s), "grade_all_s": round(local_s)})
    except (subprocess.CalledProcessError, RuntimeError, OSError) as exc:
        log("FAILED: %s" % exc)
    finally:
        cluster.stop()
        if args.keep or not ok:
            log("work folder kept: " + work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
