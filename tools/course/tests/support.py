"""Shared helpers for the command line's own tests (no build, no simulator needed).

Run them from the repository root with: python3 -m unittest discover -s tools/course/tests"""
import json
import os
import subprocess
import sys

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
PACKAGE_DIR = os.path.dirname(TESTS_DIR)              # tools/course
TOOLS_DIR = os.path.dirname(PACKAGE_DIR)              # tools
REPO_ROOT = os.path.dirname(TOOLS_DIR)
DATA_DIR = os.path.join(TESTS_DIR, "data")

if TOOLS_DIR not in sys.path:
    sys.path.insert(0, TOOLS_DIR)


def processes_naming(token: str) -> list:
    """Processes, other than this one, whose command line holds ``token`` (left behind by a run)."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != os.getpid():
            try:
                with open("/proc/%s/cmdline" % name, "rb") as f:
                    if token.encode() in f.read():
                        found.append(int(name))
            except OSError:
                pass
    return found


def data_path(name: str) -> str:
    return os.path.join(DATA_DIR, name)


def run_cli(*args: str, env: dict = None, cwd: str = None) -> subprocess.CompletedProcess:
    """``python3 tools/course ARGS`` as a user would run it."""
    full_env = dict(os.environ)
    full_env.pop("COURSE_BACKEND", None)
    if env:
        full_env.update(env)
    return subprocess.run([sys.executable, PACKAGE_DIR] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, env=full_env,
                          cwd=cwd or REPO_ROOT, timeout=60)


def fake_manifest_data(build_dir: str = "/tmp/fake-build", backend: str = "sim") -> dict:
    """A manifest shaped like the one CMake writes: two lessons, three exercises."""
    def variants(lesson, name, number):
        return {v: {"target": "%s_%s_%s" % (v, number, name),
                    "executable": "%s/exercises/%s/%s/%s_test" % (build_dir, v, lesson, name)}
                for v in ("submission", "solution")}
    exercises = [
        ("00-gpu-vs-cpu", "00", "02", "saxpy"),       # listed out of order on purpose
        ("00-gpu-vs-cpu", "00", "01", "vector_add"),
        ("01-serial-dependency", "01", "01", "rnn_step"),
    ]
    return {
        "backend": backend,
        "source_dir": "/src",
        "submission_dir": "/src/exercises",
        "exercises": [{"lesson": l, "lesson_number": n, "order": o, "name": name, "file": "%s_%s.cu" % (o, name),
                       "test_source": "/src/autograder/tests/%s/test_%s.cpp" % (l, name),
                       "variants": variants(l, name, n)} for l, n, o, name in exercises],
    }


def write_json(path: str, data) -> str:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f)
    return path
