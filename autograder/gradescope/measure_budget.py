#!/usr/bin/env python3
"""Rehearses a Gradescope assignment inside Gradescope's default budget, and measures it.

Gradescope's default autograder container has 0.5 vCPU and 768 MB of memory, and a 10-minute
limit per submission. This script does what Gradescope does with the course's zip, on this
machine: it makes the zip (make_zip.sh --lesson ...), unpacks it into a folder laid out like
/autograder, runs setup.sh there once without limits (Gradescope builds the image without
them; the packages are taken as installed), then runs run_autograder on uploads of the
reference solutions and of the untouched skeletons, each inside a control group limited to
the budget. It prints, for each: wall time, CPU time, peak memory, whether the memory limit
was hit, and the score.

    sudo python3 autograder/gradescope/measure_budget.py --lesson 00 [--cpus 0.5] [--memory 768M]

It needs to create control groups: root, or a delegated cgroup v2 subtree. cgroup v2 and v1
(the cpu and memory controllers mounted separately) both work. Run from the repository root.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CGROUP_ROOT = "/sys/fs/cgroup"


def parse_bytes(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper().rstrip("B")
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


class ControlGroup:
    """One budget: a cgroup v2 directory, or a pair of v1 ones (cpu, memory)."""

    def __init__(self, name: str, cpus: float, memory: int):
        self.v2 = os.path.exists(os.path.join(CGROUP_ROOT, "cgroup.controllers"))
        period = 100000
        quota = int(cpus * period)
        if self.v2:
            controllers = open(os.path.join(CGROUP_ROOT, "cgroup.controllers")).read().split()
            if "cpu" not in controllers or "memory" not in controllers:
                raise SystemExit("cgroup v2 here lacks the cpu or memory controller")
            with open(os.path.join(CGROUP_ROOT, "cgroup.subtree_control"), "w") as f:
                f.write("+cpu +memory")
            self.dirs = [os.path.join(CGROUP_ROOT, name)]
            os.makedirs(self.dirs[0], exist_ok=True)
            self._write(self.dirs[0], "cpu.max", "%d %d" % (quota, period))
            self._write(self.dirs[0], "memory.max", str(memory))
            self._write(self.dirs[0], "memory.swap.max", "0", optional=True)
        else:
            cpu = os.path.join(CGROUP_ROOT, "cpu", name)
            mem = os.path.join(CGROUP_ROOT, "memory", name)
            self.dirs = [cpu, mem]
            # cpuacct, where it is a hierarchy of its own (else "cpu,cpuacct" holds both)
            acct = os.path.join(CGROUP_ROOT, "cpuacct", name)
            if os.path.realpath(os.path.dirname(acct)) != os.path.realpath(os.path.dirname(cpu)) and \
                    os.path.isdir(os.path.dirname(acct)):
                self.dirs.append(acct)
            for d in self.dirs:
                os.makedirs(d, exist_ok=True)
            self._write(cpu, "cpu.cfs_period_us", str(period))
            self._write(cpu, "cpu.cfs_quota_us", str(quota))
            self._write(mem, "memory.limit_in_bytes", str(memory))
            self._write(mem, "memory.memsw.limit_in_bytes", str(memory), optional=True)
            self._write(mem, "memory.max_usage_in_bytes", "0", optional=True)

    @staticmethod
    def _write(directory: str, name: str, value: str, optional: bool = False) -> None:
        try:
            with open(os.path.join(directory, name), "w") as f:
                f.write(value)
        except OSError:
            if not optional:
                raise

    @staticmethod
    def _read(directory: str, name: str) -> str:
        try:
            with open(os.path.join(directory, name)) as f:
                return f.read()
        except OSError:
            return ""

    def enter(self) -> None:
        """Moves the calling process (a child, before exec) into the group."""
        for d in self.dirs:
            with open(os.path.join(d, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))

    def cpu_seconds(self) -> float:
        if self.v2:
            for line in self._read(self.dirs[0], "cpu.stat").splitlines():
                if line.startswith("usage_usec"):
                    return int(line.split()[1]) / 1e6
            return 0.0
        text = self._read(self.dirs[-1], "cpuacct.usage") or self._read(self.dirs[0], "cpuacct.usage")
        return int(text) / 1e9 if text.strip() else float("nan")

    def peak_memory(self) -> int:
        if self.v2:
            text = self._read(self.dirs[0], "memory.peak")
        else:
            text = self._read(self.dirs[1], "memory.max_usage_in_bytes")
        return int(text) if text.strip() else -1

    def memory_limit_hits(self) -> str:
        if self.v2:
            events = dict(line.split() for line in self._read(self.dirs[0], "memory.events").splitlines() if line)
            return "max %s, oom_kill %s" % (events.get("max", "?"), events.get("oom_kill", "?"))
        oom = dict(line.split() for line in self._read(self.dirs[1], "memory.oom_control").splitlines() if line)
        return "failcnt %s, oom_kill %s" % (self._read(self.dirs[1], "memory.failcnt").strip() or "?",
                                           oom.get("oom_kill", "?"))

    def remove(self) -> None:
        for d in self.dirs:
            try:
                os.rmdir(d)
            except OSError:
                pass


def make_image(lesson: str, folder: str) -> str:
    """The zip Gradescope gets, unpacked as /autograder would be; returns its source folder."""
    archive = os.path.join(folder, "autograder.zip")
    subprocess.run(["sh", os.path.join(HERE, "make_zip.sh"), "--lesson", lesson, archive], cwd=ROOT, check=True)
    image = os.path.join(folder, "autograder")
    with zipfile.ZipFile(archive) as z:
        z.extractall(image)
    for script in ("setup.sh", "run_autograder", os.path.join("source", "course")):
        os.chmod(os.path.join(image, script), 0o755)
    return image


def upload_of(base: str, lesson: str, folder: str) -> str:
    """A flat upload of one lesson's .cu files from ``base`` (solutions or exercises)."""
    os.makedirs(folder)
    for number in lesson.split(","):
        for name in os.listdir(os.path.join(ROOT, base)):
            if name.startswith(number.strip()[:2] + "-"):
                for f in os.listdir(os.path.join(ROOT, base, name)):
                    if f.endswith(".cu"):
                        shutil.copy(os.path.join(ROOT, base, name, f), folder)
    return folder


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lesson", default="00", help="the assignment's lessons, as make_zip.sh takes them (default 00)")
    ap.add_argument("--cpus", type=float, default=0.5, help="CPUs of the budget (default 0.5)")
    ap.add_argument("--memory", default="768M", help="memory of the budget (default 768M)")
    ap.add_argument("--keep", help="a folder to work in and keep (default: a temporary one, removed)")
    args = ap.parse_args()
    memory = parse_bytes(args.memory)
    work = args.keep or tempfile.mkdtemp(prefix="course-budget-")
    os.makedirs(work, exist_ok=True)
    image = make_image(args.lesson, work)
    source = os.path.join(image, "source")
    env = dict(os.environ, COURSE_GRADESCOPE_SOURCE=source, COURSE_GRADESCOPE_SKIP_PACKAGES="1",
               COURSE_GRADESCOPE_STAGING=os.path.join(work, "staged"), COURSE_QUIET="1")

    print("machine: %d CPUs, %s; budget per submission: %.2g CPU, %s" % (
        os.cpu_count(), " ".join(os.uname()[2:3]), args.cpus, args.memory))
    start = time.monotonic()
    subprocess.run(["bash", os.path.join(image, "setup.sh")], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    print("setup.sh (the image build, no limits): %.0f s" % (time.monotonic() - start))

    print("%-10s %9s %9s %12s %-26s %s" % ("upload", "wall", "CPU", "peak memory", "memory limit", "score"))
    failures = 0
    for base in ("solutions", "exercises"):
        upload = upload_of(base, args.lesson, os.path.join(work, "upload-" + base))
        results = os.path.join(work, "results-" + base)
        group = ControlGroup("course-budget-%d-%s" % (os.getpid(), base), args.cpus, memory)
        try:
            start = time.monotonic()
            proc = subprocess.run(["bash", os.path.join(image, "run_autograder")], preexec_fn=group.enter,
                                  env=dict(env, COURSE_GRADESCOPE_SUBMISSION=upload, COURSE_GRADESCOPE_RESULTS=results),
                                  stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
            wall = time.monotonic() - start
            with open(os.path.join(results, "results.json"), encoding="utf-8") as f:
                result = json.load(f)
            total = sum(t.get("max_score", 0) for t in result.get("tests", []))
            print("%-10s %7.0f s %7.0f s %9.0f MB %-26s %s/%s%s" % (
                base, wall, group.cpu_seconds(), group.peak_memory() / 1e6, group.memory_limit_hits(),
                result.get("score"), total, "" if proc.returncode == 0 else " (exit %d)" % proc.returncode))
            failures += proc.returncode != 0 or not result.get("tests")
        finally:
            group.remove()
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
