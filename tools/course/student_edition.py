"""``./course export-student DIR``: the student edition of the course.

A copy of the files git tracks (every file, outside a git checkout), without ``solutions/``
(which also holds the written questions' answers), without the grader's planted submissions
(``autograder/submissions/``: made from solutions/ at test time) and without the hint levels
marked ``(hidden)``. Its ``./course test``, ``list``, ``next`` and ``hint`` work as in the full
course; ``./course grade`` grades correctness only (performance is compared with the
reference solutions, which only the instructor's copy has)."""
import os
import shutil
import subprocess
from typing import List, Tuple

from . import ui
from .errors import CourseError, FAILURE
from .hints import HINTS_DIR, has_hidden, strip_hidden

LEFT_OUT = ("solutions", "autograder/submissions")
# Outside a git checkout: what a build or an editor leaves behind, never course content.
_UNTRACKED = {".git", "build", ".cache", "__pycache__", ".whl", ".gl", ".gtest-carry"}


def course_files(root: str) -> Tuple[List[str], str]:
    """(paths relative to root, where the list came from)."""
    try:
        proc = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached"], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL)
        # Only when root is the top of the checkout (a course copied into another repository
        # is walked instead).
        top = subprocess.run(["git", "-C", root, "rev-parse", "--show-toplevel"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, universal_newlines=True)
        if proc.returncode == 0 and top.returncode == 0 and \
                os.path.realpath(top.stdout.strip()) == os.path.realpath(root):
            names = [n for n in proc.stdout.decode("utf-8", "surrogateescape").split("\0") if n]
            untracked = subprocess.run(["git", "-C", root, "ls-files", "--others", "--exclude-standard"],
                                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, universal_newlines=True)
            left = [n for n in untracked.stdout.splitlines() if n and not is_left_out(n)]
            if left:
                # An instructor who wrote a new hint file and forgot `git add` should hear of it.
                ui.warn("%d files git does not track are not in the edition (git add them first), e.g. %s"
                        % (len(left), ", ".join(left[:3])))
            return [n for n in names if os.path.lexists(os.path.join(root, n))], "the files git tracks"
    except OSError:
        pass
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _UNTRACKED)
        for name in sorted(filenames):
            if not name.endswith((".pyc", ".tmp")):
                found.append(os.path.relpath(os.path.join(dirpath, name), root))
    return found, "every file (not a git checkout)"


def is_left_out(rel: str) -> bool:
    rel = rel.replace(os.sep, "/")
    return any(rel == top or rel.startswith(top + "/") for top in LEFT_OUT)


def is_hints_file(rel: str) -> bool:
    parts = rel.replace(os.sep, "/").split("/")
    return len(parts) == 4 and parts[0] == "lessons" and parts[2] == HINTS_DIR and parts[3].endswith(".md")


def check_destination(root: str, dest: str) -> str:
    target = os.path.realpath(os.path.abspath(dest))
    course = os.path.realpath(root)
    if target == course or target.startswith(course + os.sep):
        raise CourseError("%s is inside the course; export the student edition to a folder outside it" % dest)
    if os.path.exists(target):
        if not os.path.isdir(target):
            raise CourseError("%s exists and is not a folder" % dest)
        if os.listdir(target):
            raise CourseError("%s exists and is not empty; choose a new or empty folder" % dest)
    return target


def export_student(root: str, dest: str) -> int:
    target = check_destination(root, dest)
    files, origin = course_files(root)
    if not any(f == "course" for f in files):
        raise CourseError("%s does not look like the course (no ./course launcher among %s)" % (root, origin), FAILURE)
    os.makedirs(target, exist_ok=True)
    copied = left_out = hidden = 0
    for rel in files:
        if is_left_out(rel):
            left_out += 1
            continue
        src, dst = os.path.join(root, rel), os.path.join(target, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if os.path.islink(src):
            os.symlink(os.readlink(src), dst)
        elif is_hints_file(rel):
            with open(src, encoding="utf-8") as f:
                text = f.read()
            hidden += has_hidden(text)
            with open(dst, "w", encoding="utf-8") as f:
                f.write(strip_hidden(text))
            shutil.copymode(src, dst)
        else:
            shutil.copy2(src, dst)
        copied += 1
    print("wrote the student edition to %s: %d files from %s, without solutions/ and autograder/submissions/ (%d files left out); "
          "hidden hint levels removed from %d hint files" % (dest, copied, origin, left_out, hidden))
    print("its ./course test, list, next and hint work as here; ./course grade grades correctness only. "
          "Publish it as the class repository: cd %s && git init && git add -A && git commit -m 'student edition'"
          % dest)
    return 0
