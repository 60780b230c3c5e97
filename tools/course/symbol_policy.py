"""What a submission's compiled object may import, define and carry (design.md section 4).

An allow-list, not a deny-list: every symbol the object imports must match a pattern of a
group below (or of a facility the exercise's rubric grants, such as cuBLAS or files); it may
define nothing in the harness's, GoogleTest's or the simulator's namespaces and nothing that the
trusted side of the program (the test program, the simulator, the C and C++ libraries) already
defines; and it may carry only the sections an ordinary translation unit has, plus the start-up
sections the reference solution's object has (the toolchain's own, e.g. sanitizer coverage's
constructor). Each rule answers with a message that names the symbol or the section.

Names are matched demangled (``nm -C``) for imports and mangled for definitions, whose namespace
is read from the Itanium mangling so that a return type in a demangled name cannot mislead it."""
import os
import re
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

# ---- imports ---------------------------------------------------------------------------------
# Groups every exercise may use. Each pattern must match the whole demangled name.
ALWAYS_ALLOWED: Dict[str, List[str]] = {
    # Not cudaMallocManaged: see FACILITIES["managed_memory"].
    "the CUDA runtime": [r"cuda(?!MallocManaged)[A-Z]\w*(\(.*\))?", r"__cuda\w*", r"(threadIdx|blockIdx|blockDim|gridDim|warpSize)",
                         r"__nv\w*", r"__fatbinwrap\w*", r"fatbinData"],
    "the simulator's device interface": [r"cudasim::detail::.*", r"cudasim::dynamic_shared_memory\(.*\)"],
    "the simulator's instrumentation": [r"__sanitizer_cov_\w+", r"__(start|stop)___sancov_\w+"],
    "the linker": [r"_GLOBAL_OFFSET_TABLE_", r"__dso_handle"],
    "the C++ runtime": [r"operator (new|delete)(\[\])?\(.*\)", r"__cxa_\w+", r"__gxx_personality_v0", r"_Unwind_\w+",
                        r"__dso_handle", r"__stack_chk_fail", r"__libc_single_threaded", r"__clang_call_terminate",
                        r"(typeinfo|typeinfo name|vtable|VTT|construction vtable) for __cxxabiv1::.*",
                        r"__cxxabiv1::.*", r"__tls_get_addr"],
    "C memory, strings and formatting": [
        r"mem(cpy|move|set|cmp|chr)", r"bcmp", r"str(len|nlen|cmp|ncmp|chr|rchr|str|cpy|ncpy|cat|ncat|tol|toul|toll"
        r"|toull|tof|tod|told|error|dup|spn|cspn|pbrk|coll|xfrm)", r"ato[ifl]+", r"(v?s?n?printf|puts|putchar)",
        r"(fprintf|vfprintf|fputs|fputc|putc|fflush|fwrite)", r"(stdout|stderr)", r"__(isoc99|isoc23)_v?s?scanf",
        r"v?sscanf", r"(to|is)(lower|upper|alpha|digit|alnum|space|punct|xdigit|print|graph|cntrl|blank)",
        r"__ctype_\w+", r"__errno_location", r"abort", r"(malloc|calloc|realloc|free|aligned_alloc|posix_memalign)",
        r"(qsort|bsearch)", r"l?l?abs", r"l?l?div", r"__assert_fail", r"rand|srand|rand_r"],
    "the math library": [r"(a?(sin|cos|tan)h?|atan2|exp(2|10|m1)?|log(2|10|1p|b)?|ilogb|pow|sqrt|rsqrt|cbrt|fma|f?abs"
                         r"|floor|ceil|round|l?l?round|trunc|rint|l?l?rint|nearbyint|fmod|remainder|remquo|hypot"
                         r"|erfc?|tgamma|lgamma|fmin|fmax|fdim|copysign|ldexp|scalbl?n|frexp|modf|nextafter|nan"
                         r"|sincos|exp10|j[01n]|y[01n])[fl]?(_finite)?", r"__(fpclassify|isinf|isnan|finite|signbit)[fl]?",
                         r"__(sqrt|exp|log|pow|sin|cos)[fl]?_finite"],
    "clocks": [r"clock(_gettime)?", r"gettimeofday", r"time"],
}

# Facilities an exercise gets only when its rubric names them (``allowed_libraries = ...``).
FACILITIES: Dict[str, List[str]] = {
    # Memory that host code and kernels both read and write, with no copy between them: the
    # simulator counts the kernels' accesses but cannot see the host's, so a submission could
    # compute on the host through it and no host-device byte count would show it (a red-team
    # run did, for ring_allreduce, tensor_parallel_mlp and rnn_step). No exercise needs it.
    # __managed__ variables are refused by their section (cudasim_managed, see
    # cudasim/include/cudasim/device_functions.hpp).
    "managed_memory": [r"cudaMallocManaged(\(.*\))?"],
    # nvcuda::wmma (<mma.h>), seen through the simulator's hooks that every fragment load, store
    # and mma_sync instantiates. On the simulator each lane holds a fragment's whole tile and a
    # tile moves as one access of lane 0 (lanes 1-31 read it uncounted), so outside the exercise
    # that teaches tensor cores a fragment is a way round the counters: a red-team run loaded a
    # block's 256 scan maps as two accumulator tiles and walked them serially in lane 0's
    # registers, a serial block scan at two shared accesses (linear_scan, full marks).
    "tensor_cores": [r"cudasim::detail::(count_mma|count_fragment_transfer|begin_warp_tile_access"
                     r"|end_warp_tile_access)\(.*\)"],
    "cublas": [r"cublas(?!Lt)\w*(\(.*\))?"],
    "cublaslt": [r"cublasLt\w*(\(.*\))?"],
    "cudnn": [r"cudnn\w*(\(.*\))?"],
    "cufft": [r"cufft\w*(\(.*\))?"],
    "curand": [r"curand\w*(\(.*\))?"],
    "cusparse": [r"cusparse\w*(\(.*\))?"],
    "cusolver": [r"cusolver\w*(\(.*\))?"],
    "nccl": [r"nccl\w*(\(.*\))?"],
    "blas": [r"cblas_\w+", r"[sdcz](gemm|gemv|axpy|dot|scal|copy|nrm2|asum)_?", r"openblas\w*"],
    # Header-only: seen as imports and as the instantiations the object defines.
    "thrust": [r"thrust::.*", r".* thrust::.*"],
    "cub": [r"cub::.*", r".* cub::.*"],
    "threads": [r"std::(thread|this_thread|condition_variable|mutex|recursive_mutex|timed_mutex|shared_mutex"
                r"|__future_base|future_category|promise|async|jthread|stop_token|counting_semaphore"
                r"|_V2::condition_variable_any|__atomic_futex|__sp_mut|_Sp_locker).*",
                r"(typeinfo|typeinfo name|vtable) for std::(thread|__future_base).*",
                r"pthread_\w+", r"sched_yield", r"nanosleep", r"usleep", r"sleep", r"__gthread\w*"],
    "files": [r"f(open|open64|read|close|seek|seeko|seeko64|tell|tello|tello64|eof|error|gets|getc|scanf|stat|stat64|"
              r"fileno)", r"getc", r"rewind", r"(open|open64|read|pread|pread64|close|lseek|lseek64|stat|stat64|"
              r"access)", r"__(x|f)?stat(64)?", r"__isoc99_fscanf",
              r"std::(basic_(i|o)?fstream|basic_filebuf|__basic_file|filesystem)\b.*",
              r"(typeinfo|typeinfo name|vtable|VTT|construction vtable) for std::(basic_(i|o)?fstream|basic_filebuf).*",
              r".* std::filesystem::.*"],
}

# Names an exercise may never import whatever its rubric says: loading code, starting or
# signalling processes, raw system calls, the environment (a way to tell a graded run apart).
NEVER = [r"dl(open|mopen|sym|vsym|info|error|close)", r"(v)?fork", r"clone3?", r"exec\w*", r"posix_spawnp?",
         r"system", r"popen", r"ptrace", r"process_vm_(read|write)v", r"syscall", r"kill", r"raise", r"setsid",
         r"getppid", r"(secure_)?getenv", r"(set|un|put)env", r"environ", r"__environ", r"prctl", r"mprotect",
         r"mmap(64)?", r"signal", r"sigaction", r"atexit", r"at_quick_exit", r"_?exit", r"_Exit", r"quick_exit",
         r"std::(exit|quick_exit|_Exit|getenv|system)\(.*\)"]

_COMPILED: Dict[str, List["re.Pattern[str]"]] = {}


def _patterns(group: Dict[str, List[str]], name: str) -> List["re.Pattern[str]"]:
    key = "%d:%s" % (id(group), name)
    if key not in _COMPILED:
        _COMPILED[key] = [re.compile(p) for p in group[name]]
    return _COMPILED[key]


def _matches(patterns: Iterable["re.Pattern[str]"], name: str) -> bool:
    return any(p.fullmatch(name) for p in patterns)


_NEVER = [re.compile(p) for p in NEVER]
# The standard library (namespace std, its abbreviations in the mangling, and __gnu_cxx) is
# allowed as a whole, except what a facility gates (std::thread needs "threads").
_STANDARD_LIBRARY = {"St", "9__gnu_cxx"}


# glibc's fortified forms (``__fread_chk`` for ``fread``), which a compiler that defines
# _FORTIFY_SOURCE by default calls instead (the GCC in /opt/gcc behind nvcc on the lent H200
# machines did): each is judged as the function it checks.
_FORTIFIED = re.compile(r"^__(\w+?)_chk$")


def import_verdict(mangled: str, shown: str, facilities: Sequence[str],
                   toolchain_imports: Iterable[str] = ()) -> Optional[str]:
    """None when the object may import the symbol ``mangled`` (``shown``: demangled); else
    why not, for the student. ``toolchain_imports``: what the reference solution's object of
    the same exercise imports, built by the same compiler: the compiler's own glue (nvcc's
    fat-binary registration calls ``atexit``) is not the submission's doing."""
    name = _FORTIFIED.sub(r"\1", shown.strip())
    if _matches(_NEVER, name):
        return None if mangled in set(toolchain_imports) else "never allowed in an exercise"
    for lib in facilities:
        if lib in FACILITIES and _matches(_patterns(FACILITIES, lib), name):
            return None
    for lib in FACILITIES:
        if _matches(_patterns(FACILITIES, lib), name):
            return "needs %s, which this exercise may not use" % _facility_name(lib)
    ns = mangled_namespace(mangled)
    if ns in _STANDARD_LIBRARY:
        return None
    if ns in _RESERVED_ALWAYS and ns != "10__cxxabiv1":     # the C++ runtime's type info may be imported
        return "part of %s, which belongs to the grader" % _RESERVED_ALWAYS[ns]
    if ns in ("7cudasim", "6course") and not (
            _matches(_patterns(ALWAYS_ALLOWED, "the simulator's device interface"), name) and
            _declared_in_public_headers(name)):
        return "part of the course's harness or simulator, not of what an exercise may call"
    for group in ALWAYS_ALLOWED:
        if _matches(_patterns(ALWAYS_ALLOWED, group), name):
            return None
    return "not on the list of what an exercise may call"


# The simulator's headers (cudasim/include) call into cudasim::detail from inline code that a
# submission's object instantiates; its other functions (cudasim/src/internal.hpp: the link and
# launch counters, the sticky error) are the runtime's own, and an object that reaches them
# (through `#include <cudasim/../../src/internal.hpp>`, say) could rewrite what it is graded on.
_SIMULATOR_INCLUDE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "cudasim", "include")
_PUBLIC_WORDS: Optional[Set[str]] = None
_DETAIL_NAME = re.compile(r"^cudasim::detail::(\w+)")


def _declared_in_public_headers(shown: str) -> bool:
    """Whether a cudasim::detail name the object imports is one the simulator's public headers
    name (every word of cudasim/include counts, a superset of what they declare)."""
    global _PUBLIC_WORDS
    match = _DETAIL_NAME.match(shown)
    if not match:
        return True  # cudasim::dynamic_shared_memory and the like, matched by their own pattern
    if _PUBLIC_WORDS is None:
        words: Set[str] = set()
        for folder, _, files in os.walk(_SIMULATOR_INCLUDE):
            for file in files:
                with open(os.path.join(folder, file), encoding="utf-8", errors="replace") as f:
                    words.update(re.findall(r"[A-Za-z_]\w*", f.read()))
        _PUBLIC_WORDS = words
    return match.group(1) in _PUBLIC_WORDS


def _facility_name(lib: str) -> str:
    return {"threads": "threads", "files": "file access", "blas": "a CPU BLAS",
            "tensor_cores": "tensor cores (nvcuda::wmma)"}.get(lib, "the library " + lib)


# ---- definitions -----------------------------------------------------------------------------
# Namespaces (as they open an Itanium-mangled nested name) where a submission may define nothing.
_RESERVED_ALWAYS = {"7testing": "testing", "6course4test": "course::test", "6course4perf": "course::perf",
                    "10__cxxabiv1": "__cxxabiv1"}
# Namespaces where only weak definitions (inline functions, template instantiations from the
# headers) are the toolchain's; a strong one is the submission replacing the library's code.
_RESERVED_STRONG = {"St": "std", "7cudasim": "cudasim", "9__gnu_cxx": "__gnu_cxx", "6course": "course"}
_SPECIAL = re.compile(r"^_Z(TV|TI|TS|TT|GV|TH|TW|Th[n]?\d+_|Tv[n]?\d+_[n]?\d+_|Tc\w+?_)")
_QUALIFIERS = re.compile(r"^[rVKRO]*")
# std::allocator, std::basic_string, std::string, std::istream, std::ostream, std::iostream
_STD_ABBREVIATIONS = {"Sa", "Sb", "Ss", "Si", "So", "Sd"}


def mangled_namespace(symbol: str) -> Optional[str]:
    """The outermost namespace of an Itanium-mangled name, e.g. "7testing" or "St"; None for an
    unmangled (C) name or a name in the global namespace."""
    if not symbol.startswith("_Z"):
        return None
    rest = _SPECIAL.sub("_Z", symbol)[2:]
    if rest.startswith("N"):
        rest = _QUALIFIERS.sub("", rest[1:])
    if rest.startswith("St") or rest[:2] in _STD_ABBREVIATIONS:
        return "St"
    for prefix in list(_RESERVED_ALWAYS) + list(_RESERVED_STRONG) + list(_HEADER_LIBRARIES):
        if rest.startswith(prefix):
            return prefix
    return None


@dataclass
class Definition:
    name: str       # mangled
    kind: str       # nm's letter: T D B R (strong), W V u (weak or unique), i (indirect function)
    shown: str = ""  # demangled, for messages

    @property
    def weak(self) -> bool:
        return self.kind in ("W", "w", "V", "v", "u")


# Header-only libraries, recognised by the namespace of what the object instantiates.
_HEADER_LIBRARIES = {"6thrust": "thrust", "3cub": "cub"}


def definition_verdict(d: Definition, trusted: Set[str], own: Set[str], facilities: Sequence[str] = ()) -> Optional[str]:
    """None when the object may define ``d``; else why not. ``trusted``: names the rest of the
    program defines (test program, simulator, system libraries); ``own``: names the reference
    solution's object defines (the exercise's contract, its kernels)."""
    if d.kind == "i":
        return "an indirect function (IFUNC), which the grader does not allow"
    ns = mangled_namespace(d.name)
    if ns in _RESERVED_ALWAYS:
        return "a definition in namespace %s, which belongs to the grader" % _RESERVED_ALWAYS[ns]
    if ns in _HEADER_LIBRARIES and _HEADER_LIBRARIES[ns] not in facilities:
        return "needs %s, which this exercise may not use" % _facility_name(_HEADER_LIBRARIES[ns])
    if ns in _RESERVED_STRONG:
        if not d.weak:
            return "a replacement for code of namespace %s" % _RESERVED_STRONG[ns]
        return None          # an inline function or template instantiation from a header
    if d.name in trusted and d.name not in own:
        return "a replacement for %s, which the test program or a library already defines" % (d.shown or d.name)
    return None


# ---- sections --------------------------------------------------------------------------------
_ORDINARY_SECTIONS = re.compile(
    r"^(|\.text(\..*)?|\.data(\..*)?"
    r"|\.bss(\..*)?|\.rodata(\..*)?|\.tbss(\..*)?|\.tdata(\..*)?|\.group|\.symtab|\.strtab|\.shstrtab|\.symtab_shndx"
    r"|\.comment|\.note\.GNU-stack|\.note\.gnu\.property|\.eh_frame|\.gcc_except_table(\..*)?|\.debug_\w+"
    r"|\.llvm_addrsig|__sancov_\w+|\.nv_fatbin|\.nvFatBinSegment|__nv_module_id|__nv_relfatbin|\.nv\.\w+"
    r"|\.stapsdt\.base|\.note\.stapsdt|\.llvm\.linker\.options|\.data\.rel\.ro(\..*)?)$")
_STARTUP_SECTIONS = re.compile(r"^\.(init_array|ctors|fini_array|dtors|preinit_array|init|fini)(\..*)?$")


def section_verdicts(sections: Iterable[str], baseline: Iterable[str]) -> List[str]:
    """Sections ("name:size") that break the rules: start-up or exit code beyond what the
    reference's object has (same name and size), or a section an ordinary object has not."""
    allowed = list(baseline)
    out = []
    for item in sections:
        name = item.rsplit(":", 1)[0]
        if name.startswith(".rela") and _STARTUP_SECTIONS.match(name[len(".rela"):]):
            continue   # the relocations of a start-up section: judged with the section itself
        if _STARTUP_SECTIONS.match(name):
            if item in allowed:
                allowed.remove(item)
            else:
                out.append("%s (start-up or exit code the reference does not have)" % name)
        elif name == "cudasim_managed":
            out.append("%s (a __managed__ variable: managed memory is no part of these exercises)" % name)
        elif name == ".linker-options" and item.endswith(":0"):
            continue   # clang emits it empty; with content it would ask the linker for libraries
        elif not _ORDINARY_SECTIONS.match(re.sub(r"^\.rela?(?=\.)", "", name)):   # a section's relocations
            out.append("%s (not a section an ordinary object has)" % name)
    return out


# ---- the verdict on one object ---------------------------------------------------------------
@dataclass
class ObjectFacts:
    imports: List[Tuple[str, str]] = field(default_factory=list)   # (mangled, demangled)
    definitions: List[Definition] = field(default_factory=list)
    sections: List[str] = field(default_factory=list)         # "name:size"
    system_calls: List[str] = field(default_factory=list)     # disassembled instructions


def object_violations(facts: ObjectFacts, facilities: Sequence[str], *, trusted: Set[str], own: Set[str],
                      baseline_sections: Sequence[str], toolchain_imports: Iterable[str] = ()) -> List[Tuple[str, str]]:
    """(what, why) for every rule the object breaks, imports first."""
    out: List[Tuple[str, str]] = []
    toolchain_imports = set(toolchain_imports)
    for mangled, shown in facts.imports:
        why = import_verdict(mangled, shown, facilities, toolchain_imports)
        if why:
            out.append((shown, why))
    for d in facts.definitions:
        why = definition_verdict(d, trusted, own, facilities)
        if why:
            out.append((d.shown or d.name, why))
    for s in section_verdicts(facts.sections, baseline_sections):
        out.append(("section " + s.split(" (")[0], s.split(" (", 1)[1].rstrip(")")))
    for insn in facts.system_calls:
        out.append((insn, "a raw system call instruction"))
    return out
