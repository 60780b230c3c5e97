"""Defences against a submission that tries to cheat the grader (design.md section 4).

- signed results: a fresh key per run, handed to the test program through a pipe that the
  grader's listener (autograder/harness/course_grader_listener.cpp) reads and closes before
  the submission's own code runs; the result file must carry HMAC-SHA256(key, body);
- object checks on the submission's compiled object, an allow-list (symbol_policy.py): what it
  imports, what it defines, which sections it carries, no raw system calls;
- include checks: a submission may not include anything from ``solutions/`` (a clear message
  from the source text, and the compiler's dependency record as the authority).
"""
import functools
import hashlib
import hmac
import os
import re
import secrets
import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from typing import Dict, Iterable, Iterator, List, NamedTuple, Optional, Sequence, Set, Tuple

from .symbol_policy import Definition, ObjectFacts, object_violations

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
    # What the judge saw of its worker (autograder/remote/): "Suite.name" -> "crashed SIGSEGV",
    # "exited 0" or "protocol", for the tests whose worker failed.
    worker_failures: Dict[str, str] = field(default_factory=dict)


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
        elif len(parts) >= 3 and parts[0] == "worker":
            out.worker_failures.setdefault(parts[1], " ".join(parts[2:]))
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


# ---- object checks (the rules: tools/course/symbol_policy.py) --------------------------------
def _tool_lines(argv: List[str], stdin: Optional[str] = None) -> List[str]:
    """stdout lines of a binutils tool; [] when it is missing."""
    if not shutil.which(argv[0]):
        return []
    proc = subprocess.run(argv, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          universal_newlines=True, errors="replace")
    return proc.stdout.splitlines()


def demangle(names: List[str]) -> List[str]:
    """``c++filt`` over ``names`` in one call (names unchanged when it is missing)."""
    if not names or not shutil.which("c++filt"):
        return list(names)
    shown = _tool_lines(["c++filt"], "\n".join(names) + "\n")
    return shown if len(shown) == len(names) else list(names)


def undefined_symbols(obj: str) -> List[Tuple[str, str]]:
    """(mangled, demangled) for each symbol the object imports (``nm -u``)."""
    names = []
    for line in _tool_lines(["nm", "-u", obj]):
        parts = line.strip().split(None, 1)
        if len(parts) == 2 and parts[0] in ("U", "w", "v"):
            names.append(parts[1].split("@")[0])
    return list(zip(names, demangle(names)))


def defined_symbols(path: str, dynamic: bool = False) -> List[Definition]:
    """The external definitions of an object, executable or (``dynamic``) shared library."""
    argv = ["nm", "-g", "--defined-only"] + (["-D"] if dynamic else []) + [path]
    found = []
    for line in _tool_lines(argv):
        parts = line.split()
        if len(parts) == 3 and len(parts[1]) == 1:
            found.append(Definition(parts[2].split("@")[0], parts[1]))
    for d, shown in zip(found, demangle([d.name for d in found])):
        d.shown = shown
    return found


def section_names(obj: str) -> List[str]:
    """Section names with their sizes, "name:size" (``readelf -S -W``)."""
    names = []
    for line in _tool_lines(["readelf", "-S", "-W", obj]):
        m = re.match(r"^\s*\[\s*\d+\]\s+(\S*)\s+\S+\s+[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)", line)
        if m and not line.strip().startswith("[ 0]"):      # the null section has no name
            names.append("%s:%d" % (m.group(1), int(m.group(2), 16)))
    return names


_SYSCALL_INSN = re.compile(r"\s(syscall|sysenter|int\s+\$0x80)\b")


def system_call_instructions(obj: str) -> List[str]:
    """Raw system-call instructions in the object's code (inline assembly)."""
    hits = []
    for line in _tool_lines(["objdump", "-d", "--no-show-raw-insn", obj]):
        m = _SYSCALL_INSN.search(line)
        if m:
            hits.append(m.group(1))
    return sorted(set(hits))


def object_facts(obj: str) -> ObjectFacts:
    return ObjectFacts(imports=undefined_symbols(obj), definitions=defined_symbols(obj),
                       sections=section_names(obj), system_calls=system_call_instructions(obj))


def shared_libraries(executable: str) -> List[str]:
    """The shared libraries ``executable`` loads (``ldd``), as paths."""
    libs = []
    for line in _tool_lines(["ldd", executable]):
        m = re.search(r"(/\S+\.so[.\d]*)\s*\(0x", line)
        if m and os.path.isfile(m.group(1)):
            libs.append(m.group(1))
    return libs


def trusted_definitions(reference_executable: str) -> Set[str]:
    """Names the trusted part of a test program defines: the reference test program itself (the
    tests, the harness, GoogleTest, the simulator) and the shared libraries it loads."""
    names = {d.name for d in defined_symbols(reference_executable)}
    for lib in shared_libraries(reference_executable):
        if lib not in _LIBRARY_DEFINITIONS:
            _LIBRARY_DEFINITIONS[lib] = frozenset(d.name for d in defined_symbols(lib, dynamic=True))
        names.update(_LIBRARY_DEFINITIONS[lib])
    return names


_LIBRARY_DEFINITIONS: Dict[str, frozenset] = {}   # shared library -> its definitions (the same for every exercise)


@dataclass
class ObjectBaseline:
    """What the reference solution's object of the same exercise, built by the same toolchain,
    tells the rules: its start-up sections, its own definitions, and the trusted names."""
    sections: List[str] = field(default_factory=list)
    own: Set[str] = field(default_factory=set)
    trusted: Set[str] = field(default_factory=set)
    imports: Set[str] = field(default_factory=set)     # the compiler's own glue among them


def check_object(obj: str, facilities: Iterable[str], baseline: ObjectBaseline) -> Optional[str]:
    """A message for the student when the object breaks a rule, else None."""
    facilities = list(facilities)
    broken = object_violations(object_facts(obj), facilities, trusted=baseline.trusted, own=baseline.own,
                               baseline_sections=baseline.sections, toolchain_imports=baseline.imports)
    if not broken:
        return None
    shown = "; ".join("%s: %s" % (what, why) for what, why in broken[:6])
    more = " (and %d more)" % (len(broken) - 6) if len(broken) > 6 else ""
    return ("forbidden code: the exercise's object uses what an exercise may not: %s%s. This exercise may use the "
            "CUDA runtime, the C and C++ standard libraries and the math library%s (autograder/rubric); it may not "
            "define anything of the grader, the simulator or a library, nor add start-up code."
            % (shown, more, ", and " + ", ".join(facilities) if facilities else ""))


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
# Within one line (`\s*` across lines made a run of blank lines quadratic: a seventh red-team run's
# 300,000 of them took two minutes before any build), after joining continued lines.
_INCLUDE_LINE = re.compile(r'^[ \t]*#[ \t]*(?:include|import|embed)\b[ \t]*(.*)$', re.M)


def solution_includes(source_text: str) -> List[str]:
    """Include lines that name solutions/ (or that hide the name behind a macro)."""
    hits = []
    for m in _INCLUDE_LINE.finditer(re.sub(r"\\\r?\n", "", source_text)):
        target = m.group(1).strip()
        if "solution" in target.lower():
            hits.append(m.group(0).strip())
    return hits


def dependency_paths_of(dep_text: str) -> List[str]:
    """Paths in ``ninja -t deps`` output or in a list of paths, one per line."""
    paths = []
    for line in dep_text.splitlines():
        path = line.strip()
        if not path or path.endswith(")") or ":" in path.split(os.sep)[0]:
            continue
        paths.append(path)
    return paths


def dependencies_under(dep_text: str, forbidden_root: str) -> List[str]:
    """Paths in ``ninja -t deps`` output that lie under ``forbidden_root``."""
    root = os.path.realpath(forbidden_root) + os.sep
    return [p for p in dependency_paths_of(dep_text) if os.path.realpath(p).startswith(root)]


# Where a compiler's own and the system's headers live. The course's folders are judged
# separately: inside the repository only the grader's snapshot and the submission's own build
# folder count, even when the repository itself sits under one of these.
SYSTEM_HEADER_ROOTS = ("/usr/include", "/usr/lib", "/usr/local/include", "/usr/local/cuda", "/usr/local/lib",
                       "/usr/share", "/opt/nvidia", "/opt/cuda")


def compiler_include_dirs(compiler: str) -> List[str]:
    """The folders ``compiler`` searches for ``#include <...>``, as it lists them with ``-v``: its
    own headers and the system's. A toolchain installed outside /usr keeps its headers
    elsewhere (the lent GPU machines' GCC, nvcc's host compiler, lives in /opt/gcc). Folders in
    the temporary directory are left out: nothing a compiler ships lives there, and a submission
    could write there."""
    return list(_compiler_include_dirs(os.path.realpath(compiler)))


@functools.lru_cache(maxsize=None)
def _compiler_include_dirs(compiler: str) -> Tuple[str, ...]:
    try:
        proc = subprocess.run([compiler, "-x", "c++", "-E", "-v", "-"], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, universal_newlines=True,
                              errors="replace", timeout=60)
    except (OSError, subprocess.SubprocessError):
        return ()
    lines = proc.stderr.splitlines()
    try:
        first = lines.index("#include <...> search starts here:") + 1
        last = lines.index("End of search list.", first)
    except ValueError:
        return ()
    temporary = os.path.realpath(tempfile.gettempdir())
    folders = []
    for line in lines[first:last]:
        folder = os.path.realpath(line.strip().replace(" (framework directory)", ""))
        if folder != os.sep and not _under(folder, [temporary]):
            folders.append(folder)
    return tuple(folders)


def _under(path: str, roots: Iterable[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip(os.sep) + os.sep) for r in roots)


def dependencies_outside(dep_text: str, allowed: Iterable[str], repository: str,
                         system_roots: Iterable[str] = SYSTEM_HEADER_ROOTS) -> List[str]:
    """Paths the compiler read that are neither under ``allowed`` (the course snapshot, the
    submission's private copy and its build folder) nor system headers outside the repository:
    another student's files, the reference build, a temporary folder, a home folder."""
    allowed = [os.path.realpath(a) for a in allowed]
    repository = os.path.realpath(repository)
    system_roots = [os.path.realpath(r) for r in system_roots]
    hits = []
    for path in dependency_paths_of(dep_text):
        real = os.path.realpath(path)
        if _under(real, allowed):
            continue
        if _under(real, system_roots) and not _under(real, [repository]):
            continue
        hits.append(path)
    return hits


# ---- what the student sees of the compiler -----------------------------------------------
_DIAGNOSTIC = re.compile(r"^(?:In file included from |\s+from )?(/[^:]+|[^/\s:][^:]*):\d+(?::\d+)?[:,]")
HIDDEN_DIAGNOSTIC = "[a message about a file outside the submission and the course's headers is not shown]"


def compiler_messages_for_student(text: str, allowed: Iterable[str], repository: str,
                                  system_roots: Iterable[str] = SYSTEM_HEADER_ROOTS) -> str:
    """The compiler's output without what it said about files outside ``allowed`` (the
    submission, the course snapshot) and the system headers: a diagnostic there quotes that
    file's lines, which could be a reference solution or another student's work."""
    allowed = list(allowed)
    out: List[str] = []
    showing = True
    for line in text.splitlines():
        m = _DIAGNOSTIC.match(line)
        if m:
            path = m.group(1)
            showing = not os.path.isabs(path) or not dependencies_outside(path, allowed, repository, system_roots)
            if not showing and (not out or out[-1] != HIDDEN_DIAGNOSTIC):
                out.append(HIDDEN_DIAGNOSTIC)
        if showing:
            out.append(line)
        elif re.match(r"^\d+ (error|warning)s? generated", line):
            out.append(line)
            showing = True
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def program_output_for_student(output: str, limit: int = 8192) -> str:
    """What a crashed or hung test program printed that the student may see: the simulator's
    reports ("cudasim: ..." and their indented continuation lines) and the C++ runtime's
    "terminate called ..." lines, capped. Anything else is text the submission chose to print."""
    kept: List[str] = []
    keeping = False
    for line in output.splitlines():
        if line.startswith("cudasim: ") or line.startswith("terminate called") or line.startswith("  what():"):
            keeping = True
        elif not (keeping and line[:1] in (" ", "\t")):
            keeping = False
        if keeping:
            kept.append(line)
    text = "\n".join(kept)
    if len(text) > limit:
        text = text[:limit] + "\n[... cut ...]"
    return text


# ---- inline assembly ---------------------------------------------------------------------
_LINE_MARKER = re.compile(r'^#\s*(?:line\s+)?\d+\s+"((?:[^"\\]|\\.)*)"')
_LITERAL = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'')
# The simulator's rewrite turns inline PTX in device code into calls of its PTX interpreter
# (cudasim/inline_ptx.hpp): inline assembly all the same.
_ASM = re.compile(r"\b(asm|__asm|__asm__)\b|\bcudasim\s*::\s*ptx\s*::")


# Names by which code can tell the simulator's build from a GPU's: the simulator's own macros and
# headers, nvcc's and the device compiler's macros, the host compiler's, the runtime's version. A
# grade on a GPU is completed by the same submission's grade on the simulator (gpu_checks.py),
# which holds only if the code is the same code on both: a submission that did the lesson's work
# under `#ifdef CUDASIM` and the slow thing elsewhere would pass the simulator's tests of how the
# work is done and be timed doing something else.
_BACKEND_NAMES = re.compile(r"\b(CUDASIM\w*|cudasim\w*|__CUDACC\w*|__NVCC__|__CUDA_ARCH\w*|__clang\w*|"
                            r"__NVCOMPILER\w*|CUDART_VERSION|__CUDART_API\w*|__CUDA_API_VER\w*)\b")


def backend_names_added(graded: str, handed_out: str) -> List[str]:
    """What the graded file (the student's regions in the handed-out file) names that tells
    the simulator's build from a GPU's, beyond what the handed-out file itself names: one
    entry per name, with how many times it was added."""
    def counts(text: str) -> Dict[str, int]:
        found: Dict[str, int] = {}
        # An #include's path is the include checks' business (a reference build's
        # cudasim_rewritten/ copy, say), not a test of the backend.
        for m in _BACKEND_NAMES.finditer(_INCLUDE_LINE.sub("", text)):
            found[m.group(1)] = found.get(m.group(1), 0) + 1
        return found
    before, after = counts(handed_out), counts(graded)
    return ["%s (%d time%s)" % (name, n - before.get(name, 0), "" if n - before.get(name, 0) == 1 else "s")
            for name, n in sorted(after.items()) if n > before.get(name, 0)]


# The longest line of a submission's own code (after macro expansion) that the checks below read:
# they scan each line with regular expressions, some of which take time that grows with the
# square of a line's length, so longer lines are refused (overlong_lines_in) rather than read.
MAX_OWN_LINE = 8192


class OwnLine(NamedTuple):
    """A line of the submission's own code after macro expansion (see own_code)."""
    file: str    # the base name of the file it comes from
    line: str    # as the preprocessor wrote it
    code: str    # with string and character literals blanked; "" for a line over MAX_OWN_LINE


def own_code(preprocessed: str, own_files: Iterable[str]) -> List[OwnLine]:
    """The lines of ``preprocessed`` (a compiler's -E output) that come from ``own_files`` (the
    submission's folder): the submission's code after macro expansion. Made once per object and
    read by each check below. A line longer than MAX_OWN_LINE keeps no code to read
    (overlong_lines_in refuses it)."""
    own = [os.path.realpath(f) for f in own_files]
    current, is_own = "", False
    verdicts: Dict[str, bool] = {}       # a marker names the same few files again and again
    lines = []
    for line in preprocessed.splitlines():
        m = _LINE_MARKER.match(line)
        if m:
            current = m.group(1)
            if current not in verdicts:
                verdicts[current] = _under(os.path.realpath(current), own)
            is_own = verdicts[current]
            continue
        if is_own:
            code = _LITERAL.sub('""', line) if len(line) <= MAX_OWN_LINE else ""
            lines.append(OwnLine(os.path.basename(current), line, code))
    return lines


def overlong_lines_in(own: Sequence[OwnLine]) -> List[str]:
    """Lines of the submission's own code, after macro expansion, longer than MAX_OWN_LINE."""
    return ["a line of %d characters (%s: %s...); the grader reads lines of at most %d"
            % (len(line), name, line.strip()[:60], MAX_OWN_LINE)
            for name, line, _ in own if len(line) > MAX_OWN_LINE]


def assembly_in(own: Sequence[OwnLine]) -> List[str]:
    """``asm`` statements in the submission's own code, after macro expansion (a keyword put
    together by token pasting counts too): how an object would issue a raw system call or
    pull a file in with ``.incbin`` without naming any symbol."""
    return ["%s: %s" % (name, line.strip()[:120]) for name, line, code in own
            if _ASM.search(code)]


# Memory a kernel would move past the simulator's counters (and memcheck), which the lessons'
# checks of how the work was done rely on: the compiler's atomic builtins and the standard
# library's atomics (one lock-prefixed instruction each, not a counted load or store), and the
# memory functions reached through their address (the rewrite counts their calls in device
# code; a pointer to the C library's memcpy handed to a kernel would not be).
_UNCOUNTED = [
    (re.compile(r"\b__(?:atomic|sync|c11_atomic)_\w+"), "a compiler atomic builtin", True),
    (re.compile(r"\b(?:std|cuda)\s*::\s*(?:std\s*::\s*)?atomic(?:_ref|_flag)?\b"), "a standard library atomic", False),
    (re.compile(r"\b(?:memcpy|memmove|memset|mempcpy|memccpy|bcopy|bzero|wmemcpy|wmemmove|wmemset)\b(?!\s*\()"),
     "the address of a memory function", True),
]


# Pointer (and reference) casts may name scalars and the CUDA vector types only: a struct or
# array read through a cast pointer (`*reinterpret_cast<const Chunk*>(a)`) is copied as a whole,
# which the compiler does without a load or store the counters see (a 128-byte struct is eight
# 16-byte moves, and no hook). A red-team run hid a serial scan's walk over its tile so.
_SCALAR_POINTEE = re.compile(
    r"^(?:(?:const|volatile|unsigned|signed)\s+)*"
    r"(?:void|bool|char|wchar_t|char8_t|char16_t|char32_t|short|int|long|long\s+long|long\s+int|short\s+int|"
    r"float|double|long\s+double|unsigned|signed|"
    r"(?:std::)?(?:u?int(?:8|16|32|64|ptr|max)_t|size_t|ptrdiff_t|intptr_t|uintptr_t|byte|max_align_t)|"
    r"__half2?|half2?|__nv_bfloat162?|nv_bfloat162?|"
    r"(?:u?char|u?short|u?int|u?long|u?longlong|float|double)[1-4](?:_16a|_32a)?)"
    r"(?:\s+(?:const|volatile))*(?:\s*\*(?:\s*(?:const|volatile))*)*$")
_NAMED_CAST = re.compile(r"\b(?:reinterpret_cast|static_cast|const_cast)\s*<")
_C_STYLE_POINTER_CAST = re.compile(
    r"\(\s*((?:(?:const|volatile|struct|class|union)\s+)*[A-Za-z_][\w:]*(?:\s*<[^()<>;]*>)?"
    r"(?:\s+(?:const|volatile))*)\s*(\*+|&+)\s*\)\s*[\w(&*]")
_POINTER_TO_ARRAY = re.compile(r"\(\s*\*\s*\)\s*\[")
_C_STYLE_ARRAY_POINTER_CAST = re.compile(r"\(\s*[\w:\s]+\(\s*\*\s*\)\s*\[[^\]]*\]\s*\)")


def _angle_argument(code: str, start: int) -> Optional[str]:
    """The text between the '<' at ``start`` and its matching '>'."""
    depth = 0
    for i in range(start, len(code)):
        if code[i] == "<":
            depth += 1
        elif code[i] == ">":
            depth -= 1
            if depth == 0:
                return code[start + 1:i]
        elif code[i] in ";{}":
            return None
    return None


def _aggregate_pointee(target: str) -> Optional[str]:
    """The pointee of a pointer or reference type ``target`` when it is not a scalar or a CUDA
    vector type (None for those, and for a type that is neither pointer nor reference)."""
    t = " ".join(target.split())
    if _POINTER_TO_ARRAY.search(t):
        return t
    if not (t.endswith("*") or t.endswith("&") or re.search(r"[*&]\s*(const|volatile)\s*$", t)):
        return None
    pointee = re.sub(r"(?:\s*(?:const|volatile))*\s*[*&]+(?:\s*(?:const|volatile))*\s*$", "", t, count=1).strip()
    if "(" in pointee:        # a function pointer: no data moves through it
        return None
    return None if _SCALAR_POINTEE.match(pointee) else pointee


def aggregate_casts_in(own: Sequence[OwnLine]) -> List[str]:
    """Pointer and reference casts in the submission's own code to anything but scalars and the
    CUDA vector types, and unions: the ways to copy a struct or array of device memory as a
    whole (see _SCALAR_POINTEE)."""
    found = []
    for name, line, code in own:
        for m in _NAMED_CAST.finditer(code):
            target = _angle_argument(code, m.end() - 1)
            pointee = _aggregate_pointee(target) if target is not None else None
            if pointee:
                found.append("a cast to a pointer or reference to %s (%s: %s)" % (pointee, name, line.strip()[:100]))
        for m in _C_STYLE_POINTER_CAST.finditer(code):
            pointee = _aggregate_pointee(m.group(1) + m.group(2))
            if pointee:
                found.append("a cast to a pointer or reference to %s (%s: %s)" % (pointee, name, line.strip()[:100]))
        if _C_STYLE_ARRAY_POINTER_CAST.search(code):
            found.append("a cast to a pointer to an array (%s: %s)" % (name, line.strip()[:100]))
        if re.search(r"\bunion\b", code):
            found.append("a union (%s: %s)" % (name, line.strip()[:100]))
    return found


# Code the counters cannot see, made from a region (a third red-team round): an attribute that
# switches the instrumentation off (no_sanitize("coverage") on a helper, or a clang attribute
# pushed over the given code by _Pragma), a standard algorithm named as a value (called through a
# pointer it stays out of line, where the ignorelist leaves it uncounted), and the simulator's
# own uncounted helpers (nvcuda::wmma::detail).
_ATTRIBUTE_OPENERS = re.compile(r"__attribute__\s*\(\(|\[\[|__declspec\s*\(")
_FORBIDDEN_ATTRIBUTES = re.compile(
    r"\b_*(no_sanitize\w*|disable_sanitizer_instrumentation|naked|ifunc|alias|weakref|section|constructor|"
    r"destructor|init_priority|retain|used|target|target_clones|no_instrument_function|"
    r"patchable_function_entry)_*\b")
# In [[...]] a noinline also applies to a statement (clang 15 and later: `[[clang::noinline]]
# r = std::inner_product(...);`), which keeps the standard library's code it calls out of line,
# uncounted; a helper of one's own may still be __attribute__((noinline)).
_NOINLINE = re.compile(r"\b_*noinline_*\b")
_PRAGMA_OPERATOR = re.compile(r"\b(_Pragma|__pragma)\b")
_STD_ALGORITHMS = (
    "for_each|for_each_n|transform|accumulate|reduce|inner_product|transform_reduce|partial_sum|inclusive_scan|"
    "exclusive_scan|transform_inclusive_scan|transform_exclusive_scan|adjacent_difference|copy|copy_n|copy_if|"
    "copy_backward|move|move_backward|fill|fill_n|generate|generate_n|sort|stable_sort|partial_sort|"
    "partial_sort_copy|nth_element|min_element|max_element|minmax_element|find|find_if|find_if_not|count|count_if|"
    "equal|mismatch|search|replace|replace_if|replace_copy|reverse|reverse_copy|rotate|rotate_copy|unique|remove|"
    "remove_if|merge|inplace_merge|partition|stable_partition|iota|swap_ranges|lexicographical_compare|max|min|"
    "minmax|clamp|invoke|apply|all_of|any_of|none_of|adjacent_find|lower_bound|upper_bound|binary_search|"
    "equal_range|make_heap|push_heap|pop_heap|sort_heap|uninitialized_copy|uninitialized_fill|"
    "uninitialized_copy_n|uninitialized_fill_n|destroy|destroy_n")
_STD_ALGORITHM_AS_VALUE = re.compile(
    r"(?:^|[=(,&{?:]|\breturn)\s*(?:::\s*)?std\s*::\s*(?:ranges\s*::\s*)?(" + _STD_ALGORITHMS + r")\b"
    r"\s*(?:<[^;(){}]*>)?\s*(?=[;,)}\]:?]|$)")
# The hooks <mma.h> calls to count a warp's tile as one access are not for a submission's own code
# either: between begin_warp_tile_access() and end_warp_tile_access() any loop of loads is one
# access on the thread's path (an eighth red-team run). No macro of the simulator expands to them.
_SIMULATOR_HELPERS = re.compile(r"\bwmma\s*::\s*detail\b|\b(begin|end)_warp_tile_access\b|"
                                r"\bcount_(mma|fragment_transfer)\b")


def attribute_blocks(code: str) -> Iterator[Tuple[bool, str]]:
    """(whether it is a [[...]] block, its body) for each `__attribute__((...))`, `[[...]]` and
    `__declspec(...)` of a line, left to right, each ending at the first closer after its opener.
    One pass: a regular expression with a lazy body would scan to the end of the line from every
    opener it cannot close (a line of 245 KB of `[` took minutes, in a seventh red-team run)."""
    last = {closer: code.rfind(closer) for closer in ("))", "]]", ")")}
    pos = 0
    while True:
        m = _ATTRIBUTE_OPENERS.search(code, pos)
        if m is None:
            return
        opener = m.group(0)
        closer = "]]" if opener == "[[" else "))" if opener.startswith("__attribute__") else ")"
        if last[closer] < m.end():
            pos = m.end()          # nothing closes it: no later opener of its kind either
            continue
        end = code.find(closer, m.end())
        yield opener == "[[", code[m.end():end]
        pos = end + len(closer)


def unseen_code_in(own: Sequence[OwnLine]) -> List[str]:
    """Where the submission's own code makes code the simulator's counters do not instrument
    (see _ATTRIBUTE_BLOCKS and the rest above)."""
    found = []
    for name, line, code in own:
        where = "%s: %s" % (name, line.strip()[:100])
        for bracketed, body in attribute_blocks(code):
            bad = _FORBIDDEN_ATTRIBUTES.search(body)
            if bad:
                found.append("the attribute %s (%s)" % (bad.group(1), where))
            elif bracketed and _NOINLINE.search(body):
                found.append("noinline in [[...]], which on a statement keeps the standard library's code out of "
                             "line, where it is not counted (%s)" % where)
        if _PRAGMA_OPERATOR.search(code):
            found.append("a _Pragma operator (%s)" % where)
        for m in _STD_ALGORITHM_AS_VALUE.finditer(code):
            found.append("std::%s named as a value, not called (%s)" % (m.group(1), where))
        if _SIMULATOR_HELPERS.search(code):
            found.append("the simulator's own wmma helpers (%s)" % where)
    return found


def uncounted_memory_in(own: Sequence[OwnLine], threads_allowed: bool) -> List[str]:
    """Where the submission's own code moves memory in a way the simulator does not count (see
    _UNCOUNTED, _ALLOWED_BUILTIN and _CPU_INTRINSIC); the standard library's atomics are allowed
    where the exercise has threads."""
    found = []
    for name, line, code in own:
        where = "%s: %s" % (name, line.strip()[:100])
        for pattern, what, always in _UNCOUNTED:
            if (always or not threads_allowed) and pattern.search(code):
                found.append("%s (%s)" % (what, where))
        for m in _BUILTIN.finditer(code):
            if not _ALLOWED_BUILTIN.fullmatch(m.group(0)):
                found.append("the compiler builtin %s, which is not on the course's list (%s)" % (m.group(0), where))
        m = _CPU_INTRINSIC.search(code)
        if m:
            found.append("the CPU vector intrinsic %s (%s)" % (m.group(0), where))
        if any(not _OPERATOR_BEFORE.search(code, 0, m.start()) for m in _PLACEMENT_NEW.finditer(code)):
            found.append("placement new, which copies a whole object into memory past the counters (%s)" % where)
    return found


# Placement new constructs an object at a given address without a cast: `new (c + i)
# std::array<float, 16>(tile)` stored 64 bytes with nothing counted (a red-team pass,
# 2026-11-28), as a struct copy through a cast pointer does (see _SCALAR_POINTEE). The rewrite's
# own `new (::cudasim::detail::device_heap) T` (a plain `new` in device code) is not one.
_PLACEMENT_NEW = re.compile(r"\bnew\s*\((?!\s*(?:::\s*)?cudasim\s*::\s*detail\s*::\s*device_heap\s*\))")
_OPERATOR_BEFORE = re.compile(r"\boperator\s*$")


# The compiler builtins a submission may name, an allow-list: macros of the standard headers
# expand to some (INFINITY, NAN, offsetof, va_start, __glibc_unlikely), and they move no memory.
# Others do without a load or store the counters (or memcheck) see: __builtin_memcpy_inline and
# the fortified __builtin___memcpy_chk copy 64 bytes as moves no hook sees, clang 21's
# __builtin_masked_store writes through an intrinsic (found in a red-team pass, 2026-11-28); and
# every clang adds builtins. __builtin_memcpy, memmove and memset are counted (the rewrite renames
# them in device code).
_BUILTIN = re.compile(r"\b__builtin_\w+")
_ALLOWED_BUILTIN = re.compile(
    r"__builtin_(?:expect|expect_with_probability|assume|assume_aligned|unreachable|trap|constant_p|"
    r"is_constant_evaluated|offsetof|va_start|va_end|va_arg|va_copy|va_list|LINE|FILE|FUNCTION|COLUMN|"
    r"huge_valf?l?|inff?l?|nanf?l?|nansf?l?|isnan|isinf|isinf_sign|isfinite|isnormal|signbit[fl]?|fpclassify|"
    r"isgreater|isgreaterequal|isless|islessequal|islessgreater|isunordered|fabs[fl]?|copysign[fl]?|"
    r"clz(?:l|ll)?|ctz(?:l|ll)?|ffs(?:l|ll)?|popcount(?:l|ll)?|parity(?:l|ll)?|bswap(?:16|32|64)|"
    r"[su]?(?:add|sub|mul)(?:l|ll)?_overflow|abs|labs|llabs|prefetch|memcpy|memmove|memset)")
# CPU vector intrinsics (<immintrin.h>, <arm_neon.h>, <arm_sve.h>): x86's masked stores
# (_mm_maskmoveu_si128, SSE2, on by default on x86-64) write memory through an instruction no
# hook sees. A kernel is written with CUDA's types (float4, ...), which the simulator counts.
_CPU_INTRINSIC = re.compile(
    r"\b(?:_mm(?:256|512)?_\w+|__m(?:64|128|256|512)[a-z]*|v(?:ld|st)[1-4]q?\w*_[supf](?:8|16|32|64)\w*|"
    r"sv(?:ld|st)[1-4]\w*)\b")


_RESERVED_NAMESPACES = r"(?:::\s*)?(std|__gnu_cxx|__cxxabiv1|testing|course|cudasim)\b"
_REOPENED = re.compile(r"\bnamespace\s+" + _RESERVED_NAMESPACES)
_SPECIALIZED = re.compile(r"\btemplate\s*<\s*>[^;{}]*?(?<![\w:])" + _RESERVED_NAMESPACES + r"\s*::")


def reserved_namespaces_in(own: Sequence[OwnLine]) -> List[str]:
    """Where the submission's own code reopens a namespace of the standard library, GoogleTest,
    the harness or the simulator, or specializes one of their templates: the way to give a
    function the test program also uses a body of the submission's choosing (the linker keeps
    one copy of an inline function or template instance, and may keep the submission's)."""
    code = "\n".join(code for _, _, code in own)
    code = re.sub(r"\busing\s+namespace\b", "using", code)      # a using-directive opens nothing
    found = ["namespace " + m.group(1) for m in _REOPENED.finditer(code)]
    found += ["a specialization in namespace " + m.group(1) for m in _SPECIALIZED.finditer(code)]
    return found


def preprocess_command(compile_command: str) -> Optional[List[str]]:
    """The compiler's command for an object, turned into one that writes the preprocessed
    source to stdout; None when it does not look like a compile command."""
    argv = shlex.split(compile_command)
    if "-c" not in argv or "-o" not in argv:
        return None
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg in ("-o", "-MT", "-MF", "-MQ"):
            skip = True
            continue
        if arg in ("-c", "-MD", "-MMD") or arg.startswith("-fsanitize"):
            continue
        out.append(arg)
    return out + ["-E", "-o", "-"]
