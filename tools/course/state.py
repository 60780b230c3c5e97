"""The student's results from the last ``./course test``, per exercise, for ``./course list``
(``build/<backend>/course_state.json``)."""
import json
import os
import time
from typing import Dict

STATE_NAME = "course_state.json"


def load_state(build_dir: str) -> Dict[str, dict]:
    try:
        with open(os.path.join(build_dir, STATE_NAME), encoding="utf-8") as f:
            data = json.load(f)
        exercises = data.get("exercises", {})
        return exercises if isinstance(exercises, dict) else {}
    except (OSError, ValueError, AttributeError):
        return {}


def record_results(build_dir: str, backend: str, results: Dict[str, dict]) -> None:
    """Merge ``results`` (exercise key -> {status, passed, total}) into the state file."""
    state = load_state(build_dir)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    for key, value in results.items():
        state[key] = dict(value, time=stamp)
    os.makedirs(build_dir, exist_ok=True)
    path = os.path.join(build_dir, STATE_NAME)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump({"backend": backend, "exercises": state}, f, indent=2, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)
