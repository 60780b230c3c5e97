"""``./course run FILE.cu [MORE.cu/.cpp] [-I DIR] [-D NAME[=V]] [ARGS...]``: compile one
complete CUDA program (one or several source files) for the active backend (recipe:
``<build>/course_run.json``) and run it, passing its output and exit status through.
Binaries are cached under ``<build>/run-cache/``."""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from typing import List, NamedTuple, Optional

from . import ui
from .errors import CourseError, FAILURE
from .manifest import load_build_json
from .session import Session

RECIPE_NAME = "course_run.json"
GPU_TOOLS = ("--stats and --check are simulator features; on a GPU use Nsight Compute (ncu) for "
             "traffic and compute-sanitizer for memory and race checks, or run with --backend sim")
MODEL_TOOLS = ("--model-time, --wall-time, --gpu and --timeline are simulator features (a GPU's own clock needs no model); "
               "on a GPU use Nsight Systems (nsys) for a timeline, or run with --backend sim")
_LOCAL_SOURCES = (".h", ".hpp", ".cuh", ".cu", ".inl", ".inc", ".cpp")
SOURCE_SUFFIXES = (".cu", ".cpp", ".cc", ".cxx", ".c")
_MAX_FILES_PER_INCLUDE_DIR = 5000   # a -I of a huge folder must not make every run slow


# The CUDA libraries every program is linked with, on both backends: the -l options that an
# nvcc command line for a program names are accepted, and change nothing.
LINKED_ALWAYS = ("-lcudart", "-lcublas", "-lcublasLt", "-lcurand")

# OpenMP in the host code, as nvcc users ask for it: -fopenmp, or the host compiler's option
# through nvcc (-Xcompiler -fopenmp, -Xcompiler=-fopenmp, --compiler-options -fopenmp). Each
# becomes the one build option OPENMP; -lgomp and -lomp (the runtimes) are then implied.
OPENMP = "-fopenmp"
_HOST_COMPILER_OPTIONS = ("-Xcompiler", "--compiler-options")
_OPENMP_RUNTIMES = ("-lgomp", "-lomp")


def split_build_args(args: List[str]) -> (List[str], List[str], List[str]):
    """The words after FILE.cu that belong to the build: more source files (.cu, .cpp, .cc,
    .cxx, .c), -I DIR, -IDIR, -D NAME[=V], -DNAME[=V], OpenMP (see OPENMP) and the -l options
    of LINKED_ALWAYS, up to the program's first argument or ``--``. Returns (sources, options,
    rest): options as -I<absolute folder>, -D<macro> and OPENMP; rest (the program's arguments) keeps ``--stats``/``--check`` met among the sources and the
    ``--`` for split_program_args."""
    sources: List[str] = []
    options: List[str] = []
    ours: List[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("--stats", "--check"):
            ours.append(arg)
        elif arg in ("-I", "-D"):
            if i + 1 >= len(args) or args[i + 1] == "--":
                raise CourseError("%s needs a value (-I DIR, -D NAME[=VALUE])" % arg)
            options.append(_build_option(arg, args[i + 1]))
            i += 1
        elif arg.startswith(("-I", "-D")):
            options.append(_build_option(arg[:2], arg[2:]))
        elif arg in LINKED_ALWAYS or arg in _OPENMP_RUNTIMES:
            pass  # nvcc's -lcublas, -lcurand, ...: both backends link these already
        elif arg == OPENMP or arg.split("=", 1)[0] in _HOST_COMPILER_OPTIONS:
            if arg in _HOST_COMPILER_OPTIONS:
                i += 1
                arg += "=" + (args[i] if i < len(args) else "")
            _require_openmp(arg)
            if OPENMP not in options:
                options.append(OPENMP)
        elif arg.endswith(SOURCE_SUFFIXES) and not arg.startswith("-"):
            sources.append(arg)
        else:
            break
        i += 1
    return sources, options, ours + args[i:]


def _require_openmp(arg: str) -> None:
    """Refuses a host-compiler option other than -fopenmp (the simulator's host compiler is
    clang, not nvcc's: other options would not mean the same)."""
    if arg == OPENMP or arg.split("=", 1)[1] == OPENMP:
        return
    raise CourseError("%s: only -Xcompiler -fopenmp is supported (OpenMP in the host code); "
                      "other host compiler options are not" % arg)


def _build_option(option: str, value: str) -> str:
    if option == "-I":
        return "-I" + os.path.abspath(value)       # the same folder from any current directory
    if not value or value.startswith("="):
        raise CourseError("-D needs a macro name: -D NAME or -D NAME=VALUE (got -D%s)" % value)
    return "-D" + value


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


def _newest_mtime(folder: str) -> int:
    newest, seen = 0, 0
    for dirpath, _, files in os.walk(folder):
        for name in files:
            seen += 1
            try:
                newest = max(newest, os.stat(os.path.join(dirpath, name)).st_mtime_ns)
            except OSError:
                pass
        if seen > _MAX_FILES_PER_INCLUDE_DIR:
            break
    return newest


def cache_key(sources: List[str], recipe: dict, options: List[str] = ()) -> str:
    """Every source's name and content + the build options + recipe + the tools' and
    libraries' mtimes + the newest file in each include folder + each source's neighbouring
    headers (its quoted #includes) decide whether a cached binary is current (the depfiles,
    record_inputs, add every header a compile read)."""
    if isinstance(sources, str):
        sources = [sources]
    h = hashlib.sha256()
    for source in sources:
        h.update(("%s\0" % source).encode("utf-8", "surrogateescape"))
        with open(source, "rb") as f:
            h.update(hashlib.sha256(f.read()).digest())
    h.update(json.dumps([recipe, list(options)], sort_keys=True).encode("utf-8"))
    for item in [recipe.get("rewrite_tool") or "", recipe.get("compiler") or ""] + list(recipe.get("link", [])):
        if os.path.isabs(item):
            h.update(("%s=%s;" % (item, _mtime(item))).encode("utf-8"))
    folders = list(recipe.get("include_dirs", [])) + [o[2:] for o in options if o.startswith("-I")]
    for inc in folders:
        h.update(("%s=%d;" % (inc, _newest_mtime(inc))).encode("utf-8", "surrogateescape"))
    for folder in sorted(set(os.path.dirname(source) for source in sources)):
        for name in sorted(os.listdir(folder)):
            path = os.path.join(folder, name)
            if name.endswith(_LOCAL_SOURCES) and path not in sources and os.path.isfile(path):
                h.update(("%s=%s;" % (path, _mtime(path))).encode("utf-8", "surrogateescape"))
    return h.hexdigest()[:24]


INPUTS_NAME = "inputs.txt"


def _object_names(sources: List[str]) -> List[str]:
    """One short, distinct name per source for its files in the work folder (k.cu, k-2.cu)."""
    names, used = [], set()
    for source in sources:
        stem = os.path.splitext(os.path.basename(source))[0]
        name, n = stem, 1
        while name in used:
            n += 1
            name = "%s-%d" % (stem, n)
        used.add(name)
        names.append(name)
    return names


def compile_commands(sources: List[str], recipe: dict, workdir: str, exe: str, options: List[str] = (),
                     instrumented: bool = False) -> List[List[str]]:
    """The commands that turn ``sources`` into ``exe``. On the simulator: per .cu file a rewrite
    (which also rewrites the project headers the file includes with quotes, next to it, in the
    recipe's ``rewrite_include_dirs`` or in the -I folders of ``options``, and lists every
    header it read in ``workdir``/NAME.rewrite.d) and a compile with ``cu_flags`` (and the
    instrumentation when ``instrumented``); per .cpp file a plain C++ compile against the
    simulator's headers, per .c file a C compile; each compile writes a depfile NAME.o.d; then
    one link. With nvcc (no rewrite tool): one command that gets every file."""
    if isinstance(sources, str):
        sources = [sources]
    options = list(options)
    includes = ["-I" + d for d in recipe.get("include_dirs", [])]
    flags = list(recipe.get("flags", []))
    link = list(recipe.get("link", []))
    rewrite = recipe.get("rewrite_tool")
    if not rewrite:
        return [[recipe["compiler"]] + flags + includes + _for_nvcc(options) + list(sources) + link + ["-o", exe]]
    cu_flags = list(recipe.get("cu_flags", []))     # what nvcc does for every .cu file
    if instrumented:
        cu_flags += list(recipe.get("instrument_flags", []))
    header_options = ["-I" + d for d in recipe.get("rewrite_include_dirs", [])]
    header_options += [o for o in options if o.startswith("-I")]
    commands, objects = [], []
    for source, name in zip(sources, _object_names(sources)):
        folder = os.path.dirname(source)
        obj = os.path.join(workdir, name + ".o")
        compile_input, language = source, []
        extra = []
        if source.endswith(".cu"):
            compile_input = os.path.join(workdir, name + ".sim.cpp")
            commands.append([rewrite, "-iquote", folder] + header_options +
                            ["--depfile", os.path.join(workdir, name + ".rewrite.d"), source, compile_input])
            extra = cu_flags
        elif source.endswith(".c"):
            language = ["-x", "c"]                   # C stays C, as with nvcc
        file_flags = [f for f in flags if not (language and f.startswith("-std="))]
        commands.append([recipe["compiler"]] + file_flags + extra + includes + options +
                        ["-iquote", folder, "-MMD", "-MF", obj + ".d"] + language + ["-c", compile_input, "-o", obj])
        objects.append(obj)
    commands.append([recipe["compiler"]] + flags + objects + link + [o for o in options if o == OPENMP] +
                    ["-o", exe])
    return commands


def lacks_openmp_runtime(compiler_output: str) -> bool:
    """Whether a compile or link failed for want of the OpenMP runtime (omp.h, libomp or
    libgomp), not for an error in the program."""
    return ("'omp.h' file not found" in compiler_output or "omp.h: No such file" in compiler_output
            or any("find -l" + lib in compiler_output or "library -l" + lib in compiler_output
                   for lib in ("omp", "gomp")))


def needs_openmp_flag(compiler_output: str) -> bool:
    """Whether a link failed because the program calls OpenMP's runtime (omp_get_num_threads,
    ...) without -fopenmp, which nvcc needs too (as -Xcompiler -fopenmp)."""
    return re.search(r"undefined reference to [`']omp_\w+", compiler_output) is not None


def openmp_package(compiler: str) -> str:
    """The Debian package with the OpenMP runtime for ``compiler``: clang++-22's is
    libomp-22-dev, the distribution's default clang++'s libomp-dev; nvcc's host compiler,
    g++, has it already (libgomp), so this is asked only of clang."""
    name = os.path.basename(compiler)
    version = name.rpartition("-")[2] if "-" in name else ""
    return "libomp-%s-dev" % version if version.isdigit() else "libomp-dev"


def _for_nvcc(options: List[str]) -> List[str]:
    """The build options as nvcc takes them: OpenMP goes to its host compiler (g++), whose
    runtime nvcc's link does not add by itself."""
    return [word for o in options for word in (["-Xcompiler=" + OPENMP, "-lgomp"] if o == OPENMP else [o])]


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
    """Remembers the size and time of every file the rewrites and compiles read (from their
    depfiles, ``*.d`` in ``cache_dir``), so that a cached binary is rebuilt when a header
    outside the program's folder changes. Files inside ``cache_dir`` itself (rewritten copies)
    are left out: the folder is renamed once the build succeeds."""
    try:
        names = sorted(n for n in os.listdir(cache_dir) if n.endswith(".d"))
    except OSError:
        return
    if not names:
        return
    inputs = []
    for name in names:
        try:
            with open(os.path.join(cache_dir, name), encoding="utf-8", errors="surrogateescape") as f:
                inputs += depfile_inputs(f.read())
        except OSError:
            continue
    inside = os.path.join(os.path.abspath(cache_dir), "")
    inputs = [p for p in dict.fromkeys(inputs) if not os.path.abspath(p).startswith(inside)]
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


def compile_program(session: Session, files: List[str], options: List[str] = (),
                    instrumented: bool = False) -> str:
    """Compiles the program made of ``files`` (cached) with the build ``options`` (-I, -D)
    and returns the executable's path. ``instrumented`` adds the simulator's memory
    instrumentation (traffic counters, memcheck) to the .cu files."""
    if isinstance(files, str):
        files = [files]
    sources = []
    for file in files:
        source = os.path.abspath(file)
        if not os.path.isfile(source):
            raise CourseError("no such file: %s" % file)
        if not source.endswith(SOURCE_SUFFIXES):
            raise CourseError("%s is not a CUDA or C++ source file (expected FILE.cu, or .cpp, .cc, .cxx, .c)"
                              % file)
        sources.append(source)
    for option in options:
        if option.startswith("-I") and not os.path.isdir(option[2:]):
            raise CourseError("-I %s: no such folder" % option[2:])
    build = session.build_dir()
    with build.lock():                  # configure and build the runtime as one step
        build.configure()
        recipe = load_recipe(build.path)
        _ensure_tools_built(build, recipe)
    key = cache_key(sources, dict(recipe, _instrumented=instrumented), options)
    cache_dir = os.path.join(build.path, "run-cache", key)
    exe = os.path.join(cache_dir, os.path.splitext(os.path.basename(sources[0]))[0])
    if not os.path.isfile(exe) or not inputs_unchanged(cache_dir):
        work = cache_dir + ".tmp-%d" % os.getpid()
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        tmp_exe = os.path.join(work, os.path.basename(exe))
        what = " ".join(files)
        ui.progress("compiling %s (%s backend%s) ..." % (what, session.backend, ", instrumented" if instrumented else ""))
        for cmd in compile_commands(sources, recipe, work, tmp_exe, options, instrumented):
            proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  universal_newlines=True, errors="replace")
            if proc.returncode != 0:
                sys.stderr.write(proc.stdout)
                shutil.rmtree(work, ignore_errors=True)
                if OPENMP in options and recipe.get("rewrite_tool") and lacks_openmp_runtime(proc.stdout):
                    raise CourseError("OpenMP (-fopenmp) needs clang's OpenMP runtime: sudo apt-get install %s"
                                      % openmp_package(cmd[0]), FAILURE)
                if OPENMP not in options and needs_openmp_flag(proc.stdout):
                    raise CourseError("%s calls OpenMP's runtime: build it with -Xcompiler -fopenmp, as nvcc "
                                      "needs too (./course run %s -Xcompiler -fopenmp)" % (what, what), FAILURE)
                raise CourseError("%s does not compile (see the messages above)" % what, FAILURE)
            elif proc.stdout.strip():
                sys.stderr.write(proc.stdout)    # warnings are worth seeing
        record_inputs(work)
        shutil.rmtree(cache_dir, ignore_errors=True)
        os.replace(work, cache_dir)
    return exe


# The lessons' experiments whose figures are the modelled clock's on the simulator: ``run``
# turns --model-time on for them there, unless --wall-time asks for CPU time. Each one prints
# "modelled <GPU>" beside its figures and holds its lesson's formula on that clock (issue 16).
# roofline_demo runs through ./course roofline, which reads its modelled times.
MODELLED_BY_DEFAULT = ("lessons/01-serial-dependency/tokens_per_second.cu",
                       "lessons/02-roofline/fusion_experiment.cu",
                       "lessons/03-matmul-reuse/batch_sweep.cu",
                       "lessons/04-data-loading/loader_benchmark.cu",
                       "lessons/05-parallelism-nvlink/parallelism_experiment.cu")


class ModelledClock(NamedTuple):
    """``run``'s options for the simulator's modelled clock (cudasim/timeline.hpp)."""
    model_time: bool = False        # cudaEventElapsedTime in modelled time
    gpu: Optional[str] = None       # the GPU modelled (CUDASIM_GPU)
    timeline: Optional[str] = None  # where the Chrome trace goes
    wall_time: bool = False         # CPU time even for the experiments modelled by default

    def asked(self) -> bool:
        return self.model_time or self.gpu is not None or self.timeline is not None

    def for_program(self, session: Session, program: str) -> "ModelledClock":
        """The options with the course's default for ``program`` applied: on the simulator the
        experiments in MODELLED_BY_DEFAULT run on the modelled clock unless --wall-time."""
        if self.wall_time and self.model_time:
            raise CourseError("--model-time and --wall-time ask for opposite clocks: choose one")
        if self.wall_time or self.model_time or session.backend != "sim":
            return self
        where = os.path.relpath(os.path.realpath(program), os.path.realpath(session.root))
        if where.replace(os.sep, "/") not in MODELLED_BY_DEFAULT:
            return self
        ui.progress("%s: modelled GPU time by default on the simulator (--wall-time for CPU time)"
                    % os.path.basename(program))
        return self._replace(model_time=True)

    def environment(self) -> dict:
        env = {}
        if self.model_time:
            env["CUDASIM_MODEL_TIME"] = "1"
        if self.gpu:
            env["CUDASIM_GPU"] = self.gpu
        if self.timeline:
            env["CUDASIM_TIMELINE"] = os.path.abspath(self.timeline)
        return env


def run_program(session: Session, files: List[str], args: List[str], stats: bool, check: bool = False,
                options: List[str] = (), clock: ModelledClock = ModelledClock()) -> int:
    """Compiles ``files`` (with the build ``options``) and runs the program in place of this
    process. ``stats`` prints the
    simulator's per-kernel traffic table at exit; ``check`` turns on racecheck, a shuffled
    thread order and the partial-barrier check (memcheck is on whenever the program is instrumented);
    ``clock`` turns on the modelled clock's figures, the GPU it models and its timeline file."""
    if (stats or check) and session.backend != "sim":
        raise CourseError(GPU_TOOLS)
    if (clock.asked() or clock.wall_time) and session.backend != "sim":
        raise CourseError(MODEL_TOOLS)
    clock = clock.for_program(session, files[0])
    if clock.timeline:
        folder = os.path.dirname(os.path.abspath(clock.timeline))
        if not os.path.isdir(folder):
            raise CourseError("--timeline %s: the folder %s does not exist" % (clock.timeline, folder))
    # The modelled clock times a kernel from its counted traffic: it needs the instrumentation.
    exe = compile_program(session, files, options, instrumented=stats or check or clock.asked())
    env = dict(os.environ)
    env.update(clock.environment())
    if stats:
        env["CUDASIM_STATS"] = "1"
    if check:
        env["CUDASIM_CHECK"] = "race,shuffle,barrier"
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(exe, [exe] + list(args), env)
    return 0  # not reached
