"""``./course run FILE.cu [ARGS...]``: compile one complete CUDA program for the active
backend (recipe: ``<build>/course_run.json``) and run it, passing its output and exit status
through. Binaries are cached under ``<build>/run-cache/``."""
import hashlib
import json
import os
import shutil
import subprocess
import sys
from typing import List

from . import ui
from .errors import CourseError, FAILURE
from .manifest import load_build_json
from .session import Session

RECIPE_NAME = "course_run.json"
GPU_TOOLS = ("--stats and --check are simulator features; on a GPU use Nsight Compute (ncu) for "
             "traffic and compute-sanitizer for memory and race checks, or run with --backend sim")
_LOCAL_SOURCES = (".h", ".hpp", ".cuh", ".cu", ".inl", ".inc", ".cpp")


def split_program_args(args: List[str]) -> (List[str], bool, bool):
    """Take ``--stats`` and ``--check`` out of the arguments after FILE.cu (``--`` ends the
    scan: what follows it goes to the program unchanged)."""
    program_args: List[str] = []
    stats = check = False
    for i, arg in enumerate(args):
        if arg == "--":
            program_args += args[i + 1:]
            break
        if arg == "--stats":
            stats = True
        elif arg == "--check":
            check = True
        else:
            program_args.append(arg)
    return program_args, stats, check


def load_recipe(build_dir: str) -> dict:
    recipe, path = load_build_json(build_dir, RECIPE_NAME)
    if not isinstance(recipe, dict) or not recipe.get("compiler"):
        raise CourseError("%s has no compiler" % path, FAILURE)
    return recipe


def _mtime(path: str) -> str:
    try:
        st = os.stat(path)
        return "%d:%d" % (st.st_mtime_ns, st.st_size)
    except OSError:
        return "-"


def cache_key(source: str, recipe: dict) -> str:
    """Source content + recipe + the tools' and libraries' mtimes + the program's
    neighbouring headers (its quoted #includes) decide whether a cached binary is current."""
    h = hashlib.sha256()
    with open(source, "rb") as f:
        h.update(f.read())
    h.update(json.dumps(recipe, sort_keys=True).encode("utf-8"))
    for item in [recipe.get("rewrite_tool") or "", recipe.get("compiler") or ""] + list(recipe.get("link", [])):
        if os.path.isabs(item):
            h.update(("%s=%s;" % (item, _mtime(item))).encode("utf-8"))
    for inc in recipe.get("include_dirs", []):
        newest = 0
        for dirpath, _, files in os.walk(inc):
            for name in files:
                try:
                    newest = max(newest, os.stat(os.path.join(dirpath, name)).st_mtime_ns)
                except OSError:
                    pass
        h.update(("%s=%d;" % (inc, newest)).encode("utf-8"))
    folder = os.path.dirname(source)
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if name.endswith(_LOCAL_SOURCES) and path != source and os.path.isfile(path):
            h.update(("%s=%s;" % (name, _mtime(path))).encode("utf-8"))
    return h.hexdigest()[:24]


DEPFILE_NAME = "rewritten.d"
INPUTS_NAME = "inputs.txt"


def compile_commands(source: str, recipe: dict, workdir: str, exe: str) -> List[List[str]]:
    """The commands that turn ``source`` into ``exe``: [rewrite,] compile. The rewrite also
    rewrites the project headers the program includes with quotes (next to it, or in the
    recipe's ``rewrite_include_dirs``), as the build does, and lists every header it read in
    ``workdir``/rewritten.d."""
    includes = ["-I" + d for d in recipe.get("include_dirs", [])]
    flags = list(recipe.get("flags", []))
    link = list(recipe.get("link", []))
    folder = os.path.dirname(source)
    rewrite = recipe.get("rewrite_tool")
    if rewrite:
        rewritten = os.path.join(workdir, os.path.splitext(os.path.basename(source))[0] + ".sim.cpp")
        if source.endswith(".cu"):
            flags += recipe.get("cu_flags", [])  # what nvcc does for every .cu file
        header_options = ["-I" + d for d in recipe.get("rewrite_include_dirs", [])]
        return [[rewrite, "-iquote", folder] + header_options +
                ["--depfile", os.path.join(workdir, DEPFILE_NAME), source, rewritten],
                [recipe["compiler"]] + flags + includes + ["-iquote", folder, rewritten] + link + ["-o", exe]]
    return [[recipe["compiler"]] + flags + includes + [source] + link + ["-o", exe]]


def depfile_inputs(text: str) -> List[str]:
    """The files a Make-style depfile (``target: input...``) names as inputs: backslash-newline
    continues a line, ``\\ `` and ``\\#`` are a space and a '#' in a name, ``$$`` a '$'."""
    text = text.replace("\\\r\n", " ").replace("\\\n", " ")
    names, current, i = [], "", 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text) and text[i + 1] in " #":
            current += text[i + 1]
            i += 2
            continue
        if c == "$" and text.startswith("$$", i):
            current += "$"
            i += 2
            continue
        if c.isspace():
            if current:
                names.append(current)
            current = ""
        else:
            current += c
        i += 1
    if current:
        names.append(current)
    for index, name in enumerate(names):  # drop the target, up to its colon
        if name.endswith(":"):
            return names[index + 1:]
    return []


def record_inputs(cache_dir: str) -> None:
    """Remembers the size and time of every file the rewrite read (from its depfile), so that
    a cached binary is rebuilt when a header outside the program's folder changes."""
    try:
        with open(os.path.join(cache_dir, DEPFILE_NAME), encoding="utf-8", errors="surrogateescape") as f:
            inputs = depfile_inputs(f.read())
    except OSError:
        return
    with open(os.path.join(cache_dir, INPUTS_NAME), "w", encoding="utf-8", errors="surrogateescape") as f:
        for path in inputs:
            f.write("%s %s\n" % (_mtime(path), path))


def inputs_unchanged(cache_dir: str) -> bool:
    """Whether every file recorded by record_inputs still has its size and time (true when
    nothing was recorded, as for a program compiled by nvcc)."""
    try:
        with open(os.path.join(cache_dir, INPUTS_NAME), encoding="utf-8", errors="surrogateescape") as f:
            lines = f.read().splitlines()
    except OSError:
        return True
    for line in lines:
        stamp, _, path = line.partition(" ")
        if _mtime(path) != stamp:
            return False
    return True


def runtime_targets(recipe: dict) -> List[str]:
    """The build targets behind the recipe's tool and libraries: the recipe's "targets" when
    it lists them, else the names of the files it points at (libcudasim.a -> cudasim)."""
    if recipe.get("targets"):
        return list(recipe["targets"])
    targets = []
    for path in [recipe.get("rewrite_tool")] + list(recipe.get("link", [])):
        if path and os.path.isabs(path) and os.path.dirname(path).startswith(recipe.get("_build_dir", "/")):
            name = os.path.basename(path)
            if name.startswith("lib") and name.endswith((".a", ".so")):
                name = name[3:].rsplit(".", 1)[0]
            targets.append(name)
    return targets


def _ensure_tools_built(build, recipe: dict) -> None:
    """Build (or confirm up to date) what the recipe needs: rewrite tool, runtime libraries."""
    recipe = dict(recipe, _build_dir=build.path)
    targets = runtime_targets(recipe)
    needed = [p for p in [recipe.get("rewrite_tool")] + list(recipe.get("link", []))
              if p and os.path.isabs(p) and p.startswith(build.path)]
    if not targets and all(os.path.exists(p) for p in needed):
        return
    outcome = build.build(targets)
    if not outcome.ok and targets and not all(os.path.exists(p) for p in needed):
        outcome = build.build([])          # guessed target names were wrong: build everything
    if not outcome.ok:
        ui.progress(outcome.output.rstrip())
        raise CourseError("could not build the %s runtime that './course run' needs" % recipe.get("backend", ""),
                          FAILURE)
    if "no work to do" not in outcome.output:
        ui.progress("built the %s runtime for ./course run" % recipe.get("backend", ""))


def compile_program(session: Session, file: str, instrumented: bool = False) -> str:
    """Compiles ``file`` (cached) and returns the executable's path. ``instrumented`` adds the
    simulator's memory instrumentation (traffic counters, memcheck)."""
    source = os.path.abspath(file)
    if not os.path.isfile(source):
        raise CourseError("no such file: %s" % file)
    if not source.endswith((".cu", ".cpp", ".cc", ".cxx")):
        raise CourseError("%s is not a CUDA source file (expected FILE.cu)" % file)
    build = session.build_dir()
    build.configure()
    recipe = load_recipe(build.path)
    _ensure_tools_built(build, recipe)
    if instrumented:
        recipe = dict(recipe, flags=list(recipe.get("flags", [])) + list(recipe.get("instrument_flags", [])))
    key = cache_key(source, recipe)
    cache_dir = os.path.join(build.path, "run-cache", key)
    exe = os.path.join(cache_dir, os.path.splitext(os.path.basename(source))[0])
    if not os.path.isfile(exe) or not inputs_unchanged(cache_dir):
        work = cache_dir + ".tmp-%d" % os.getpid()
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        tmp_exe = os.path.join(work, os.path.basename(exe))
        ui.progress("compiling %s (%s backend%s) ..." % (file, session.backend, ", instrumented" if instrumented else ""))
        for cmd in compile_commands(source, recipe, work, tmp_exe):
            proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  universal_newlines=True, errors="replace")
            if proc.returncode != 0:
                sys.stderr.write(proc.stdout)
                shutil.rmtree(work, ignore_errors=True)
                raise CourseError("%s does not compile (see the messages above)" % file, FAILURE)
            elif proc.stdout.strip():
                sys.stderr.write(proc.stdout)    # warnings are worth seeing
        record_inputs(work)
        shutil.rmtree(cache_dir, ignore_errors=True)
        os.replace(work, cache_dir)
    return exe


def run_program(session: Session, file: str, args: List[str], stats: bool, check: bool = False) -> int:
    """Compiles and runs the program in place of this process. ``stats`` prints the
    simulator's per-kernel traffic table at exit; ``check`` turns on racecheck, a shuffled
    thread order and the partial-barrier check (memcheck is on whenever the program is instrumented)."""
    if (stats or check) and session.backend != "sim":
        raise CourseError(GPU_TOOLS)
    exe = compile_program(session, file, instrumented=stats or check)
    env = dict(os.environ)
    if stats:
        env["CUDASIM_STATS"] = "1"
    if check:
        env["CUDASIM_CHECK"] = "race,shuffle,barrier"
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(exe, [exe] + list(args), env)
    return 0  # not reached
