"""``./course list``: the lessons and exercises in order, with the student's last results."""
import os

from .session import Session
from .state import load_state


def list_exercises(session: Session) -> int:
    build = session.build_dir()
    build.configure()
    manifest = build.manifest()
    state = load_state(build.path)
    submission_dir = manifest.submission_dir or os.path.join(session.root, "exercises")
    for lesson in manifest.lessons():
        exercises = manifest.lesson_exercises(lesson)
        print("lesson %s  %s" % (exercises[0].lesson_number, lesson))
        width = max(len(ex.name) for ex in exercises)
        paths = [_display(os.path.join(submission_dir, lesson, ex.file), session.root) for ex in exercises]
        path_width = max(len(p) for p in paths)
        for ex, path in zip(exercises, paths):
            print("  %s  %s  %s  %s" % (ex.order, ex.name.ljust(width), path.ljust(path_width),
                                        _state_text(state.get(ex.key))))
        print("")
    print("state from the last './course test' on the %s backend" % session.backend)
    return 0


def _state_text(entry) -> str:
    if not entry:
        return "not run"
    status = entry.get("status", "not run")
    if entry.get("total") is not None:
        return "%s (%s/%s tests)" % (status, entry.get("passed", 0), entry["total"])
    return status


def _display(path: str, root: str) -> str:
    rel = os.path.relpath(path, root)
    return path if rel.startswith("..") else rel
