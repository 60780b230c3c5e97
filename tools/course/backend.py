"""Which backend to use (cuda or sim) and whether the tools it needs are installed."""
import glob
import functools
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from typing import List, Optional, Tuple

from .errors import CourseError

BACKENDS = ("cuda", "sim")
BACKEND_CHOICES = ("cuda", "sim", "auto")
MIN_CMAKE = (3, 22)
# The oldest clang the simulator is built and tested with (CI runs the selftest with it and
# with the newest versioned clang Debian offers). GCC cannot stand in: the simulator's memory
# counters and checks are clang's sanitizer-coverage hooks.
MIN_CLANG = 14
DEBIAN_PACKAGES = "cmake ninja-build clang libgtest-dev libopenblas-dev"
APT_COMMAND = "sudo apt-get install -y " + DEBIAN_PACKAGES


@functools.lru_cache(maxsize=None)
def find_nvcc() -> Optional[str]:
    """nvcc from PATH, else from the usual CUDA Toolkit locations."""
    found = shutil.which("nvcc")
    if found:
        return found
    candidates = []
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            candidates.append(os.path.join(os.environ[var], "bin", "nvcc"))
    candidates.append("/usr/local/cuda/bin/nvcc")
    for path in candidates:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


@functools.lru_cache(maxsize=None)
def gpu_names() -> Tuple[str, ...]:
    """The GPUs ``nvidia-smi -L`` lists (empty when there is no driver or no GPU)."""
    smi = shutil.which("nvidia-smi") or ("/usr/bin/nvidia-smi" if os.path.exists("/usr/bin/nvidia-smi") else None)
    if not smi:
        return ()
    try:
        out = subprocess.run([smi, "-L"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             universal_newlines=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return ()
    return tuple(line.strip() for line in out.splitlines() if line.startswith("GPU "))


def gpu_compute_capability() -> Optional[str]:
    """"90" for an H100/H200 etc., from nvidia-smi; None when it cannot tell."""
    smi = shutil.which("nvidia-smi") or "/usr/bin/nvidia-smi"
    try:
        out = subprocess.run([smi, "--query-gpu=compute_cap", "--format=csv,noheader"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             universal_newlines=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.match(r"\s*(\d+)\.(\d+)", out)
    return match.group(1) + match.group(2) if match else None


def resolve_backend(requested: Optional[str]) -> str:
    """--backend, else $COURSE_BACKEND, else auto; auto is cuda when nvcc and a GPU exist."""
    choice = requested or os.environ.get("COURSE_BACKEND") or "auto"
    choice = choice.strip().lower()
    if choice not in BACKEND_CHOICES:
        raise CourseError("unknown backend '%s' (from %s); choose cuda, sim or auto"
                          % (choice, "--backend" if requested else "COURSE_BACKEND"))
    if choice == "auto":
        return "cuda" if find_nvcc() and gpu_names() else "sim"
    return choice


@dataclass
class Toolchain:
    """The tools found for one backend; what configure and build use."""
    backend: str
    cmake: str
    cmake_version: Tuple[int, ...]
    generator: str                 # "Ninja" or "Unix Makefiles"
    cxx: Optional[str] = None      # clang++ (sim)
    cxx_version: str = ""          # "clang 19.1.7" (sim)
    nvcc: Optional[str] = None     # (cuda)
    has_gpu: bool = False


def program_version(program: str, prefix: str) -> Optional[Tuple[int, ...]]:
    """(major, minor[, patch]) after ``prefix`` in what ``program --version`` prints; None when
    it cannot run or prints no such version."""
    try:
        out = subprocess.run([program, "--version"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             universal_newlines=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(prefix + r"(\d+)\.(\d+)(?:\.(\d+))?", out)
    if not match:
        return None
    return tuple(int(g) for g in match.groups() if g is not None)


def cmake_version(cmake: str) -> Optional[Tuple[int, ...]]:
    return program_version(cmake, r"version\s+")


def clang_version(cxx: str) -> Optional[Tuple[int, ...]]:
    """The version of ``cxx`` when it is clang, else None."""
    return program_version(cxx, r"clang version ")


def find_clang() -> Optional[str]:
    """``clang++`` on PATH, else the newest versioned ``clang++-N`` there (Debian's clang-N
    packages install only those)."""
    found = shutil.which("clang++")
    if found:
        return found
    versioned = []
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        for path in glob.glob(os.path.join(folder or ".", "clang++-[0-9]*")):
            match = re.search(r"clang\+\+-(\d+)$", path)
            if match and os.access(path, os.X_OK):
                versioned.append((int(match.group(1)), path))
    return max(versioned)[1] if versioned else None


def check_clang(cxx: str) -> str:
    """"clang 19.1.7" for a clang++ the simulator supports; otherwise one line that says why
    not and what to install."""
    version = clang_version(cxx)
    install = "install clang %d or newer (sudo apt-get install clang) and put its clang++ first on PATH" % MIN_CLANG
    if version is None:
        raise CourseError("%s is not clang: the simulator needs clang++ (its memory counters are clang's "
                          "sanitizer-coverage hooks); %s" % (cxx, install))
    if version[0] < MIN_CLANG:
        raise CourseError("%s is clang %s; the simulator needs clang %d or newer: %s"
                          % (cxx, ".".join(map(str, version)), MIN_CLANG, install))
    return "clang " + ".".join(map(str, version))


GTEST_SOURCE_VARIABLE = "COURSE_GTEST_SOURCE"


def gtest_source() -> Optional[str]:
    """The GoogleTest source folder named by $COURSE_GTEST_SOURCE (built with the course by
    CMake instead of an installed GoogleTest), as an absolute path; None when unset. A folder
    that is not GoogleTest's sources is an error, named before CMake would fail on it."""
    value = os.environ.get(GTEST_SOURCE_VARIABLE, "").strip()
    if not value:
        return None
    path = os.path.abspath(os.path.expanduser(value))
    headers = [os.path.join(path, "googletest", "include", "gtest", "gtest.h"),   # /usr/src/googletest
               os.path.join(path, "include", "gtest", "gtest.h")]                 # its googletest/ folder
    if not os.path.isfile(os.path.join(path, "CMakeLists.txt")) or not any(map(os.path.isfile, headers)):
        raise CourseError("%s=%s is not GoogleTest's source folder (a CMakeLists.txt and gtest/gtest.h, "
                          "e.g. /usr/src/googletest from Debian's googletest package)" % (GTEST_SOURCE_VARIABLE, value))
    return path


def find_gtest(root: str) -> Optional[str]:
    """GoogleTest's source folder ($COURSE_GTEST_SOURCE), or GoogleTest as a header
    (libgtest-dev) or as a CMake package (GTestConfig.cmake)."""
    source = gtest_source()
    if source:
        return os.path.join(source, "CMakeLists.txt")
    for inc in ("/usr/include", "/usr/local/include"):
        if os.path.isfile(os.path.join(inc, "gtest", "gtest.h")):
            return os.path.join(inc, "gtest", "gtest.h")
    prefixes = []
    for var in ("GTest_DIR", "GTEST_ROOT", "GTest_ROOT", "CMAKE_PREFIX_PATH"):
        prefixes += [p for p in os.environ.get(var, "").split(os.pathsep) if p]
    prefixes += [os.path.join(root, ".gtest-carry"), "/usr", "/usr/local", "/opt/googletest"]
    for prefix in prefixes:
        if os.path.isfile(os.path.join(prefix, "include", "gtest", "gtest.h")):
            return os.path.join(prefix, "include", "gtest", "gtest.h")
        patterns = [os.path.join(prefix, "GTestConfig.cmake"),
                    os.path.join(prefix, "lib*", "cmake", "GTest", "GTestConfig.cmake"),
                    os.path.join(prefix, "lib", "*", "cmake", "GTest", "GTestConfig.cmake"),
                    os.path.join(prefix, "*", "lib*", "cmake", "GTest", "GTestConfig.cmake")]
        for pattern in patterns:
            hits = glob.glob(pattern)
            if hits:
                return hits[0]
    return None


def find_cblas() -> Optional[str]:
    """cblas.h from libopenblas-dev (Debian puts it under a multiarch folder)."""
    patterns = ["/usr/include/cblas.h", "/usr/include/*/cblas.h", "/usr/include/openblas/cblas.h",
                "/usr/include/*/openblas*/cblas.h", "/usr/local/include/cblas.h",
                "/usr/local/include/openblas/cblas.h", "/opt/OpenBLAS/include/cblas.h"]
    for pattern in patterns:
        hits = sorted(glob.glob(pattern))
        if hits:
            return hits[0]
    return None


def check_prerequisites(backend: str, root: str) -> Toolchain:
    """Find everything ``backend`` needs, or raise one error that names all missing pieces
    and the Debian packages that provide them."""
    missing: List[str] = []
    cmake = shutil.which("cmake")
    version: Tuple[int, ...] = ()
    if not cmake:
        missing.append("cmake (package cmake)")
    else:
        version = cmake_version(cmake) or ()
        if version and version[:2] < MIN_CMAKE:
            missing.append("cmake >= %d.%d (found %s)" % (MIN_CMAKE + (".".join(map(str, version)),)))
    if shutil.which("ninja"):
        generator = "Ninja"
    elif shutil.which("make"):
        generator = "Unix Makefiles"
    else:
        generator = ""
        missing.append("ninja (package ninja-build)")
    if not find_gtest(root):
        missing.append("GoogleTest (package libgtest-dev, or its sources: %s=DIR)" % GTEST_SOURCE_VARIABLE)
    cxx = nvcc = None
    cxx_version = ""
    if backend == "sim":
        cxx = find_clang()
        if not cxx:
            missing.append("clang++ (package clang)")
        if not find_cblas():
            missing.append("OpenBLAS's cblas.h (package libopenblas-dev)")
    else:
        nvcc = find_nvcc()
        if not nvcc:
            missing.append("nvcc (the NVIDIA CUDA Toolkit, https://developer.nvidia.com/cuda-downloads)")
    if missing:
        raise CourseError("missing for the %s backend: %s. On Debian/Ubuntu install them with: %s"
                          % (backend, "; ".join(missing), APT_COMMAND))
    if cxx:
        cxx_version = check_clang(cxx)
    return Toolchain(backend=backend, cmake=cmake or "cmake", cmake_version=version,
                     generator=generator, cxx=cxx, cxx_version=cxx_version, nvcc=nvcc,
                     has_gpu=bool(backend == "cuda" and gpu_names()))
