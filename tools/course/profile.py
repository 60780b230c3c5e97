"""``./course profile FILE.cu [ARGS] [--gpu NAMES]``: the simulator as a profiler.

Builds the program with the simulator's memory instrumentation, runs it, and prints per kernel
what a GPU profiler would report about memory traffic (launches, global and shared bytes,
atomics), the FLOPs the program declared with ``cudasim::declare_flops``, the arithmetic
intensity, and the time the roofline model predicts on named GPUs:
``max(FLOPs / peak FP32 rate, global bytes / memory bandwidth)``. The counts are exact; the
predictions are a lower bound that a well-written kernel approaches.
"""
import json
import os
import subprocess
import sys
import tempfile
from typing import Dict, List, Optional

from .errors import CourseError, FAILURE, USAGE_ERROR

# Published figures (datasheets): memory bandwidth in bytes/s, dense FP32 (non-tensor) FLOP/s.
# H100 and H200 are the SXM parts; the H200 has the H100's compute and faster, larger HBM3e.
GPUS: Dict[str, Dict[str, float]] = {
    "H100": {"bandwidth": 3.35e12, "fp32": 67e12},
    "H200": {"bandwidth": 4.8e12, "fp32": 67e12},
    "A100": {"bandwidth": 2.039e12, "fp32": 19.5e12},
    "T4": {"bandwidth": 320e9, "fp32": 8.1e12},
}
DEFAULT_GPUS = ("H100", "H200", "A100", "T4")


def parse_gpu_list(text: Optional[str]) -> List[str]:
    if not text:
        return list(DEFAULT_GPUS)
    names = []
    for part in text.split(","):
        name = part.strip().upper()
        if name not in GPUS:
            raise CourseError("unknown GPU '%s' for --gpu; choose from %s" % (part.strip(), ", ".join(GPUS)),
                              USAGE_ERROR)
        names.append(name)
    return names


def predicted_seconds(flops: float, global_bytes: float, gpu: str) -> float:
    spec = GPUS[gpu]
    return max(flops / spec["fp32"], global_bytes / spec["bandwidth"])


def format_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return ("%.0f %s" if unit == "B" else "%.2f %s") % (n, unit)
        n /= 1000.0
    return "%g B" % n


def format_seconds(s: float) -> str:
    if s <= 0:
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if s >= scale or unit == "ns":
            return "%.3g %s" % (s / scale, unit)
    return "%g s" % s


def _modelled_cells(k: dict) -> List[str]:
    """Coalescing, span and the modelled time of one kernel's JSON entry ("-" where absent)."""
    if "modelled_ns" not in k:
        return ["-"] * 4
    requests = k.get("global_requests", 0)
    return ["%.1f" % (k.get("global_sectors", 0) / requests) if requests else "-",
            "%d/%d" % (k.get("span_global_ops", 0), k.get("span_shared_ops", 0)),
            format_seconds(k["modelled_ns"] * 1e-9), k.get("modelled_bound", "-")]


def render_table(stats: dict, gpus: List[str]) -> str:
    """The per-kernel table, from the JSON the simulator writes at exit."""
    kernels = stats.get("kernels", [])
    if not kernels:
        return "no kernel was launched"
    modelled_gpu = kernels[0].get("modelled_gpu", "H100")
    headers = ["kernel", "launches", "global", "shared", "atomics", "FLOPs", "FLOP/B"] + \
              ["%s time" % g for g in gpus] + ["sect/req", "span g/s", "modelled %s" % modelled_gpu, "bound"]
    rows = []
    for k in kernels:
        global_bytes = k["global_load_bytes"] + k["global_store_bytes"]
        shared_bytes = k["shared_load_bytes"] + k["shared_store_bytes"]
        flops = k.get("flops", 0)
        intensity = "%.2f" % (flops / global_bytes) if flops and global_bytes else "-"
        rows.append([k["name"], str(k["launches"]), format_bytes(global_bytes), format_bytes(shared_bytes),
                     str(k["atomics"]), "%.3g" % flops if flops else "-", intensity] +
                    [format_seconds(predicted_seconds(flops, global_bytes, g)) for g in gpus] +
                    _modelled_cells(k))
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(widths[i]) if i == 0 else h.rjust(widths[i]) for i, h in enumerate(headers))]
    for r in rows:
        lines.append("  ".join(c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(r)))
    copies = stats.get("copies", {})
    lines.append("")
    lines.append("copies: host->device %s, device->host %s, device->device %s" % (
        format_bytes(copies.get("host_to_device_bytes", 0)), format_bytes(copies.get("device_to_host_bytes", 0)),
        format_bytes(copies.get("device_to_device_bytes", 0))))
    lines.append("times: the roofline model's lower bound, max(FLOPs / FP32 peak, global bytes / bandwidth); "
                 "FLOPs only where the program declares them (cudasim::declare_flops)")
    lines.append("modelled: launch overhead + max(memory, compute, span, atomics) from the counters, with occupancy "
                 "(docs/simulator.md, 'The modelled GPU clock'); sect/req: 32-byte sectors per warp-wide access "
                 "(4 = coalesced floats); span: the longest thread's global/shared accesses")
    return "\n".join(lines)


def profile_program(session, files: List[str], args: List[str], gpu_text: Optional[str],
                    options: List[str] = ()) -> int:
    from .run_program import compile_program
    gpus = parse_gpu_list(gpu_text)
    if session.backend != "sim":
        raise CourseError("profile uses the simulator's counters; on a GPU use Nsight Compute "
                          "(ncu) instead, or run with --backend sim", USAGE_ERROR)
    exe = compile_program(session, files, options, instrumented=True)
    file = files[0] if isinstance(files, list) else files
    with tempfile.TemporaryDirectory(prefix="course-profile-") as tmp:
        json_path = os.path.join(tmp, "stats.json")
        env = dict(os.environ, CUDASIM_STATS_JSON=json_path)
        sys.stdout.flush()
        status = subprocess.call([exe] + list(args), env=env)
        try:
            with open(json_path, encoding="utf-8") as f:
                stats = json.load(f)
        except (OSError, ValueError):
            raise CourseError("%s ended (status %d) without writing its statistics" % (file, status), FAILURE)
    print()
    print(render_table(stats, gpus))
    return status
