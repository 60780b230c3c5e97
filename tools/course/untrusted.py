"""Defences against a submission that tries to cheat the grader (design.md section 4).

- signed results: a fresh key per run, handed to the test program through a pipe that the
  grader's listener (autograder/harness/course_grader_listener.cpp) reads and closes before
  the submission's own code runs; the result file must carry HMAC-SHA256(key, body);
- object checks on the submission's compiled object: forbidden library calls (from the
  undefined symbols, ``nm``), and constructors that would run before the listener's
  (prioritised ``.init_array.N``/``.ctors.N`` or ``.preinit_array`` sections);
- include checks: a submission may not include anything from ``solutions/`` (a clear message
  from the source text, and the compiler's dependency record as the authority).
"""
import hashlib
import hmac
import os
import re
import secrets
import shutil
import subprocess
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Tuple

RESULT_MAGIC = "course-grader-result 1"


# ---- signed results ------------------------------------------------------------------------
@dataclass
class GraderSecret:
    key: bytes
    result_path: str

    @classmethod
    def fresh(cls, result_path: str) -> "GraderSecret":
        return cls(secrets.token_bytes(32), result_path)

    def payload(self) -> bytes:
        return (self.key.hex() + "\n" + self.result_path + "\n").encode("utf-8")


def open_secret_channel(secret: GraderSecret) -> int:
    """A pipe holding the secret; returns the read end (to pass to the child, then close)."""
    read_fd, write_fd = os.pipe()
    try:
        os.write(write_fd, secret.payload())     # < 512 bytes: never blocks on a pipe
    finally:
        os.close(write_fd)
    return read_fd


def sign(key: bytes, body: str) -> str:
    return hmac.new(key, body.encode("utf-8"), hashlib.sha256).hexdigest()


@dataclass
class SignedResults:
    tests: Dict[str, str] = field(default_factory=dict)     # "Suite.name" -> passed|failed|skipped
    perf: Dict[str, Dict[str, str]] = field(default_factory=dict)


class ForgedResults(Exception):
    """The result file is missing, malformed or its signature does not verify."""


def parse_signed_results(text: str, key: bytes) -> SignedResults:
    marker = text.rfind("hmac ")
    if marker < 0 or (marker > 0 and text[marker - 1] != "\n"):
        raise ForgedResults("the result file has no signature")
    body, signature = text[:marker], text[marker + len("hmac "):].strip()
    if not hmac.compare_digest(sign(key, body), signature):
        raise ForgedResults("the result file's signature does not verify (written by something other than "
                            "the grader's listener)")
    lines = body.splitlines()
    if not lines or lines[0] != RESULT_MAGIC or lines[-1] != "end":
        raise ForgedResults("the result file is incomplete")
    out = SignedResults()
    for line in lines[1:-1]:
        parts = line.split()
        if len(parts) == 3 and parts[0] == "test" and parts[2] in ("passed", "failed", "skipped"):
            out.tests[parts[1]] = parts[2]
        elif len(parts) >= 2 and parts[0] == "perf":
            out.perf[parts[1]] = dict(p.split("=", 1) for p in parts[2:] if "=" in p)
        else:
            raise ForgedResults("the result file has an unexpected line: %r" % line[:80])
    return out


def read_signed_results(path: str, key: bytes) -> SignedResults:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read(1 << 20)
    except FileNotFoundError:
        raise ForgedResults("the test program ended without writing its signed results (it exited early, "
                            "e.g. exit() called from the exercise, or the tests never finished)")
    except OSError as exc:
        raise ForgedResults("the signed results could not be read: %s" % exc)
    return parse_signed_results(text, key)


def count_expected(results: SignedResults, expected: Iterable[str]) -> Tuple[int, int, List[str]]:
    """(passed, total, missing): only the tests the reference build lists count, so a
    submission that filters or skips tests gains nothing."""
    expected = list(expected)
    passed = sum(1 for name in expected if results.tests.get(name) == "passed")
    missing = [name for name in expected if name not in results.tests]
    return passed, len(expected), missing


def parse_gtest_list(text: str) -> List[str]:
    """Test names from ``--gtest_list_tests`` output ("Suite." lines, then indented names)."""
    names, suite = [], None
    for line in text.splitlines():
        if not line.strip() or line.startswith("[") or line.startswith("Running main"):
            continue
        if not line.startswith(" "):
            suite = line.split("#")[0].strip()
        elif suite:
            names.append(suite + line.split("#")[0].strip())
    return names


# ---- object checks -------------------------------------------------------------------------
# Symbols that say "this object calls library X". Matched against demangled undefined symbols.
LIBRARY_SYMBOLS: Dict[str, List[str]] = {
    "cublas": [r"^cublas", r"^cublasLt"],
    "cudnn": [r"^cudnn"],
    "cufft": [r"^cufft"],
    "curand": [r"^curand"],
    "cusparse": [r"^cusparse"],
    "cusolver": [r"^cusolver"],
    "nccl": [r"^nccl"],
    "blas": [r"^cblas_", r"^[sdcz](gemm|gemv|axpy|dot|scal|copy|nrm2|asum)_?$", r"^openblas"],
    "thrust": [r"^thrust::"],
    "cub": [r"^cub::"],
}
# Never allowed in an exercise: loading code at run time (a way around the checks above),
# starting programs, tampering with other processes.
ALWAYS_FORBIDDEN = [r"^dlopen$", r"^dlmopen$", r"^dlsym$", r"^dlvsym$", r"^fork$", r"^vfork$", r"^clone3?$",
                    r"^execv", r"^execl", r"^execve$", r"^posix_spawnp?$", r"^system$", r"^popen$",
                    r"^ptrace$", r"^process_vm_(read|write)v$"]

_PRIORITY_SECTION = re.compile(r"^\.(init_array|ctors|fini_array|dtors)\.\d+$|^\.preinit_array$")


def undefined_symbols(obj: str) -> List[str]:
    """Demangled undefined symbols of an object file (``nm -u -C``); [] when nm is missing."""
    nm = shutil.which("nm")
    if not nm:
        return []
    proc = subprocess.run([nm, "-u", "-C", obj], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          universal_newlines=True, errors="replace")
    out = []
    for line in proc.stdout.splitlines():
        parts = line.strip().split(None, 1)
        if len(parts) == 2 and parts[0] in ("U", "w", "v"):
            out.append(parts[1].split("@")[0])
    return out


def section_names(obj: str) -> List[str]:
    """Section names with their sizes, "name:size" (``readelf -S -W``)."""
    readelf = shutil.which("readelf")
    if not readelf:
        return []
    proc = subprocess.run([readelf, "-S", "-W", obj], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          universal_newlines=True, errors="replace")
    names = []
    for line in proc.stdout.splitlines():
        m = re.match(r"^\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)", line)
        if m:
            names.append("%s:%d" % (m.group(1), int(m.group(2), 16)))
    return names


def forbidden_calls(symbols: Iterable[str], allowed_libraries: Iterable[str]) -> List[Tuple[str, str]]:
    """(symbol, library or "never allowed") for each forbidden symbol, in order."""
    allowed = {lib.strip().lower() for lib in allowed_libraries}
    found = []
    for sym in symbols:
        name = sym.strip()
        for pattern in ALWAYS_FORBIDDEN:
            if re.search(pattern, name):
                found.append((name, "never allowed"))
                break
        else:
            for lib, patterns in LIBRARY_SYMBOLS.items():
                if lib in allowed:
                    continue
                if any(re.search(p, name) for p in patterns):
                    found.append((name, lib))
                    break
    return found


def startup_tricks(sections: Iterable[str], baseline: Iterable[str] = ()) -> List[str]:
    """Prioritised start-up sections ("name:size") not also in ``baseline`` (the reference
    solution's object from the same compiler and flags: instrumentation such as the
    simulator's sanitizer-coverage constructor is the toolchain's, not the student's)."""
    allowed = list(baseline)
    out = []
    for item in sections:
        name = item.rsplit(":", 1)[0]
        if not _PRIORITY_SECTION.match(name):
            continue
        if item in allowed:
            allowed.remove(item)
            continue
        out.append(name)
    return out


def check_object(obj: str, allowed_libraries: Iterable[str], baseline_sections: Iterable[str] = ()) -> Optional[str]:
    """A message for the student when the object breaks a rule, else None."""
    calls = forbidden_calls(undefined_symbols(obj), allowed_libraries)
    if calls:
        shown = ", ".join("%s (%s)" % (sym, lib if lib == "never allowed" else "library " + lib)
                          for sym, lib in calls[:5])
        allowed = ", ".join(allowed_libraries) or "none"
        return ("forbidden library call: the exercise calls %s; this exercise may call these libraries: %s "
                "(autograder/rubric). Write the code yourself." % (shown, allowed))
    tricks = startup_tricks(section_names(obj), baseline_sections)
    if tricks:
        return ("forbidden start-up code: the exercise has prioritised constructors or pre-init functions "
                "(sections %s), which the grader does not allow" % ", ".join(tricks))
    return None


def object_files(build_dir: str, target: str, exercise_file: str) -> List[str]:
    """The object files compiled from the exercise's .cu file for ``target``."""
    found = []
    for dirpath, _, filenames in os.walk(build_dir):
        if (target + ".dir") not in dirpath:
            continue
        for name in filenames:
            if name.startswith(exercise_file) and name.endswith(".o"):
                found.append(os.path.join(dirpath, name))
    return sorted(found)


def rewrite_inputs(build_dir: str, target: str, exercise_file: str) -> List[str]:
    """The files the simulator's rewrite read for the exercise's .cu file (its depfile): the
    file and the project headers it includes. The compiler reads rewritten copies of those
    headers from the build folder, so its own dependency record does not name the originals."""
    from .run_program import depfile_inputs
    inputs = []
    for dirpath, _, filenames in os.walk(build_dir):
        if os.path.basename(dirpath) != target or os.path.basename(os.path.dirname(dirpath)) != "cudasim_rewritten":
            continue
        if exercise_file + ".cpp.d" in filenames:
            with open(os.path.join(dirpath, exercise_file + ".cpp.d"), encoding="utf-8", errors="replace") as f:
                inputs += depfile_inputs(f.read())
    return inputs


# ---- includes ------------------------------------------------------------------------------
def solution_includes(source_text: str) -> List[str]:
    """Include lines that name solutions/ (or that hide the name behind a macro)."""
    hits = []
    for m in re.finditer(r'^\s*#\s*(?:include|import|embed)\b\s*(.*)$', source_text, re.M):
        target = m.group(1).strip()
        if "solution" in target.lower():
            hits.append(m.group(0).strip())
    return hits


def dependencies_under(dep_text: str, forbidden_root: str) -> List[str]:
    """Paths in ``ninja -t deps`` output that lie under ``forbidden_root``."""
    root = os.path.realpath(forbidden_root) + os.sep
    hits = []
    for line in dep_text.splitlines():
        path = line.strip()
        if not path or path.endswith(")") or ":" in path.split(os.sep)[0]:
            continue
        if os.path.realpath(path).startswith(root):
            hits.append(path)
    return hits
