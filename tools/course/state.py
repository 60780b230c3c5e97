"""The student's own state.

- the results of the last ``./course test``, per exercise, for ``./course list`` and
  ``./course next`` (``build/<backend>/course_state.json``);
- the hint levels the student has seen, per exercise, for ``./course hint``
  (``build/hints_seen.json``: hints do not depend on the backend)."""
import json
import os
import time
from typing import Dict

STATE_NAME = "course_state.json"
HINTS_SEEN_NAME = "hints_seen.json"


def _read_json(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _write_json(path: str, data: dict) -> None:
    """Atomically: an interrupted write leaves the old file, never half a file."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)


def load_state(build_dir: str) -> Dict[str, dict]:
    exercises = _read_json(os.path.join(build_dir, STATE_NAME)).get("exercises", {})
    return exercises if isinstance(exercises, dict) else {}


def record_results(build_dir: str, backend: str, results: Dict[str, dict]) -> None:
    """Merge ``results`` (exercise key -> {status, passed, total}) into the state file."""
    state = load_state(build_dir)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    for key, value in results.items():
        state[key] = dict(value, time=stamp)
    _write_json(os.path.join(build_dir, STATE_NAME), {"backend": backend, "exercises": state})


def hints_seen_path(root: str) -> str:
    return os.path.join(root, "build", HINTS_SEEN_NAME)


def load_hints_seen(root: str) -> Dict[str, int]:
    """Exercise key ("00-gpu-vs-cpu/vector_add") -> the highest hint level shown."""
    seen = _read_json(hints_seen_path(root)).get("seen", {})
    if not isinstance(seen, dict):
        return {}
    return {k: v for k, v in seen.items() if isinstance(v, int) and v > 0}


def record_hint_seen(root: str, key: str, level: int) -> None:
    """Remember that ``level`` was shown (0 forgets the exercise: ``hint --reset``)."""
    seen = load_hints_seen(root)
    if level <= 0:
        seen.pop(key, None)
    else:
        seen[key] = max(level, seen.get(key, 0))
    _write_json(hints_seen_path(root), {"seen": seen})
