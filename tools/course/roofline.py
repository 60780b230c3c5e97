"""``./course roofline [--gpu H100|H200|A100|T4] [--out DIR]``: lesson 02's kernels on a
roofline, as a table and as a plot (PNG and SVG).

It builds ``lessons/02-roofline/roofline_demo.cu`` twice, with your exercises
(``roofline_demo``) and with the reference solutions (``roofline_demo_reference``), runs
them, and reads the JSON they print: per kernel its FLOPs, its bytes, its time and whether
its output was right.

- On a GPU the times are real (CUDA events). The machine is measured as well: a
  device-to-device ``cudaMemcpy`` gives the memory roof, the reference FMA-chain kernel the
  compute roof; the datasheet roof of ``--gpu`` (default: the GPU found) is drawn next to it.
- On the simulator CPU times mean nothing, but bytes are counted exactly. Each kernel is
  placed on the roofline of ``--gpu`` (default H200) at its time on the simulator's modelled
  clock for that GPU (cudasim/gpu_model.hpp: launch overhead plus the longest of the counted
  bytes over the bandwidth, the declared FLOPs over the peak, and the longest thread's path),
  next to what the roofline formula alone predicts: ``max(FLOPs / peak, bytes / bandwidth)``.

The plot is drawn by gnuplot when it is installed (Debian: ``gnuplot-nox``), as PNG and
SVG; without gnuplot the SVG is written by this module and the PNG is skipped with a note.
"""
import json
import math
import os
import shutil
import subprocess
import tempfile
from typing import Dict, List, Optional, Sequence, Tuple

from . import ui
from .errors import CourseError, FAILURE, USAGE_ERROR

GPU_CHOICES = ("H100", "H200", "A100", "T4")
DEFAULT_SIM_GPU = "H200"
DEMO_DIR = os.path.join("demos", "02-roofline")
STUDENT, REFERENCE = "roofline_demo", "roofline_demo_reference"
DEMO_TIMEOUT = 600
NO_GNUPLOT = ("no PNG: gnuplot is not installed (Debian/Ubuntu: sudo apt-get install gnuplot-nox); "
              "the SVG was written without it")

# Plot range: intensity (FLOP/byte) and FLOP/s, both logarithmic.
X_RANGE = (1.0 / 32.0, 8192.0)
Y_RANGE = (1e10, 3e15)

# FP32 lanes per SM by compute capability (major, minor): the FP32 peak a GPU's own figures
# give is SMs x lanes x 2 FLOP (one FMA) x clock.
_FP32_LANES = {(7, 0): 64, (7, 5): 64, (8, 0): 64, (8, 6): 128, (8, 7): 128, (8, 9): 128,
               (9, 0): 128, (10, 0): 128, (12, 0): 128}


# ------------------------------------------------------------------------------------------
# the model (the same arithmetic as exercise 02/01, on the table the demo prints)

def ridge(peak: float, bandwidth: float) -> float:
    return peak / bandwidth


def predicted_seconds(flops: float, nbytes: float, peak: float, bandwidth: float) -> float:
    return max(flops / peak, nbytes / bandwidth)


def attainable(intensity: float, peak: float, bandwidth: float) -> float:
    return min(peak, intensity * bandwidth)


def find_machine(machines: Sequence[dict], name: str) -> Optional[dict]:
    for m in machines:
        if m["name"].lower() == name.lower():
            return m
    return None


def gpu_from_device_name(device: str) -> Optional[str]:
    """H100/H200/A100/T4 from a CUDA device name such as 'NVIDIA H200' (None if unknown)."""
    text = device.upper()
    for name in ("H200", "H100", "A100", "T4"):
        if name in text.replace("-", " ").split() or name in text:
            return name
    return None


def fp32_peak_from_device(report: dict) -> Optional[float]:
    """SMs x FP32 lanes per SM x 2 x clock, from the figures the device reports."""
    try:
        major, minor = (int(v) for v in str(report.get("compute_capability", "")).split("."))
    except ValueError:
        return None
    lanes = _FP32_LANES.get((major, minor))
    if not lanes or not report.get("sm_count") or not report.get("clock_khz"):
        return None
    return float(report["sm_count"]) * lanes * 2.0 * float(report["clock_khz"]) * 1e3


# ------------------------------------------------------------------------------------------
# points

def place_kernels(report: dict, machine: dict, on_gpu: bool, who: str) -> List[dict]:
    """One point per kernel with FLOPs > 0: intensity, FLOP/s (measured on a GPU, on the
    modelled clock on the simulator), predicted time, bound (the roofline's on a GPU, the
    modelled clock's dominant term on the simulator)."""
    peak, bw = machine["fp32_flops"], machine["memory_bytes_per_s"]
    points = []
    for k in report.get("kernels", []):
        flops, nbytes = float(k["flops"]), float(k["bytes"])
        p = dict(k, who=who)
        p["intensity"] = flops / nbytes if nbytes > 0 else math.inf
        p["predicted_seconds"] = predicted_seconds(flops, nbytes, peak, bw)
        p["bound"] = "compute" if flops / peak >= nbytes / bw and (flops or nbytes) else "memory"
        if on_gpu:
            secs = float(k["seconds"])
            p["flops_per_second"] = flops / secs if secs > 0 else 0.0
            p["bytes_per_second"] = nbytes / secs if secs > 0 else 0.0
        else:
            # An older demo without the modelled clock: the roofline formula's time.
            secs = float(k.get("modelled_seconds", p["predicted_seconds"]))
            p["bound"] = k.get("modelled_bound", p["bound"])
            p["flops_per_second"] = flops / secs if secs > 0 else 0.0
            p["bytes_per_second"] = nbytes / secs if secs > 0 else 0.0
        p["plotted"] = flops > 0 and nbytes > 0 and k.get("correct", False)
        points.append(p)
    return points


def measured_roof(reference: Optional[dict], student: Optional[dict]) -> Optional[dict]:
    """On a GPU: the memory roof from cudaMemcpy (or the best STREAM kernel, if faster) and
    the compute roof from the fastest FMA kernel (chains, or the tunable one at large k)."""
    source = reference or student
    if source is None or source.get("backend") != "cuda":
        return None
    bw = float(source.get("memcpy_bytes_per_s") or 0.0)
    peak = 0.0
    for k in source.get("kernels", []):
        secs = float(k["seconds"])
        if secs <= 0 or not k.get("correct"):
            continue
        if k["family"] == "stream":
            bw = max(bw, float(k["bytes"]) / secs)
        if k["family"] in ("peak", "tunable"):  # whichever compute-heavy kernel got closest
            peak = max(peak, float(k["flops"]) / secs)
    if bw <= 0 or peak <= 0:
        return None
    return {"name": "measured", "fp32_flops": peak, "memory_bytes_per_s": bw}


# ------------------------------------------------------------------------------------------
# formatting

def si(value: float, unit: str) -> str:
    if value == 0:
        return "0 " + unit
    if math.isinf(value):
        return "inf " + unit
    for factor, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return "%.3g %s%s" % (value / factor, prefix, unit)
    return "%.3g %s" % (value, unit)


def seconds_text(s: float) -> str:
    if s <= 0:
        return "0"
    if s < 1e-6:
        return "%.3g ns" % (s * 1e9)
    if s < 1e-3:
        return "%.3g us" % (s * 1e6)
    if s < 1:
        return "%.3g ms" % (s * 1e3)
    return "%.3g s" % s


def intensity_text(x: float) -> str:
    return "inf" if math.isinf(x) else ("%.3g" % x)


def roof_summary(machine: dict) -> str:
    peak, bw = machine["fp32_flops"], machine["memory_bytes_per_s"]
    text = "FP32 %s, memory %s, ridge %.3g FLOP/B" % (si(peak, "FLOP/s"), si(bw, "B/s"), ridge(peak, bw))
    if machine.get("bf16_flops"):
        text += " (bf16 %s, ridge %.3g)" % (si(machine["bf16_flops"], "FLOP/s"),
                                           ridge(machine["bf16_flops"], bw))
    return text


def table(points: List[dict], reference: Dict[str, dict], on_gpu: bool) -> str:
    rows = []
    for p in points:
        ref = reference.get(p["name"])
        if not p.get("correct"):
            # Figures of a kernel that computed the wrong thing (or nothing) mean nothing.
            rows.append([p["name"], si(p["flops"], ""), si(p["bytes"], "B")] + ["-"] * 6
                        + ["-", "NO"])
            continue
        if on_gpu:
            vs = ("%.2fx" % (float(p["seconds"]) / float(ref["seconds"]))
                  if ref and float(ref["seconds"]) > 0 else "-")
            rows.append([p["name"], si(p["flops"], ""), si(p["bytes"], "B"), intensity_text(p["intensity"]),
                         seconds_text(float(p["seconds"])), si(p["bytes_per_second"], "B/s"),
                         si(p["flops_per_second"], "FLOP/s"), seconds_text(p["predicted_seconds"]), vs,
                         "yes" if p.get("correct") else "NO"])
        else:
            vs = ("%.2fx" % (float(p["bytes"]) / float(ref["bytes"]))
                  if ref and float(ref["bytes"]) > 0 else "-")
            rows.append([p["name"], si(p["flops"], ""), si(p["bytes"], "B"), p.get("bytes_source", ""),
                         intensity_text(p["intensity"]), seconds_text(p["predicted_seconds"]),
                         seconds_text(float(p.get("modelled_seconds", p["predicted_seconds"]))),
                         si(p["flops_per_second"], "FLOP/s"), p["bound"], vs,
                         "yes" if p.get("correct") else "NO"])
    if on_gpu:
        header = ["kernel", "FLOPs", "bytes", "FLOP/B", "time", "bandwidth", "FLOP/s", "model time",
                  "vs reference", "correct"]
    else:
        header = ["kernel", "FLOPs", "bytes", "counted by", "FLOP/B", "roofline time", "modelled time",
                  "FLOP/s", "bound", "bytes vs ref", "correct"]
    return ui.format_table(header, rows)


# ------------------------------------------------------------------------------------------
# the plot

_STYLE = {  # family -> (gnuplot point type filled, hollow, svg shape, colour)
    "stream": (5, 4, "square", "#1b9e77"),
    "tunable": (7, 6, "circle", "#d95f02"),
    "peak": (9, 8, "triangle", "#7570b3"),
}


# Where a point's name goes: (x offset, y offset) in characters/lines, and the alignment.
# Chosen so the names of neighbouring points do not collide.
_LABEL_PLACES = {"triad": (-1.0, 1.0, "right"), "fma chains": (0.0, 1.6, "center")}
_LABELLED_TUNABLE = ("fma k=1", "fma k=64", "fma k=1024")


def label_place(point: dict) -> Optional[Tuple[float, float, str]]:
    """(dx, dy, align) for a point's name, or None when it is not labelled (most of the
    tunable sweep: the first, the one at the ridge and the last are enough)."""
    if point["family"] == "tunable" and point["name"] not in _LABELLED_TUNABLE:
        return None
    return _LABEL_PLACES.get(point["name"], (1.0, -1.0, "left"))


def roof_polyline(peak: float, bw: float) -> List[Tuple[float, float]]:
    x0, x1 = X_RANGE
    r = ridge(peak, bw)
    pts = [(x0, x0 * bw)]
    if x0 < r < x1:
        pts.append((r, peak))
    pts.append((x1, attainable(x1, peak, bw)))
    return pts


def plot_title(machine: dict, on_gpu: bool, device: str) -> str:
    if on_gpu:
        return "Roofline: lesson 02 kernels measured on %s (datasheet roof: %s)" % (device, machine["name"])
    return "Roofline: lesson 02 kernels on an %s, modelled from the simulator's counts" % machine["name"]


def write_svg(path: str, machine: dict, measured: Optional[dict], points: List[dict], title: str) -> None:
    """The plot as SVG, written by hand (used when gnuplot is not installed)."""
    width, height = 1000, 650
    left, right, top, bottom = 90, 200, 50, 70
    pw, ph = width - left - right, height - top - bottom
    lx0, lx1 = math.log10(X_RANGE[0]), math.log10(X_RANGE[1])
    ly0, ly1 = math.log10(Y_RANGE[0]), math.log10(Y_RANGE[1])

    def px(x: float) -> float:
        return left + (math.log10(x) - lx0) / (lx1 - lx0) * pw

    def py(y: float) -> float:
        return top + ph - (math.log10(max(y, Y_RANGE[0])) - ly0) / (ly1 - ly0) * ph

    def esc(text: str) -> str:
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")

    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
           'font-family="Helvetica, Arial, sans-serif" font-size="13">' % (width, height, width, height),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="28" font-size="16" font-weight="bold">%s</text>' % (left, esc(title))]
    # grid and ticks
    for e in range(int(math.ceil(lx0)), int(math.floor(lx1)) + 1):
        x = px(10.0 ** e)
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#e0e0e0"/>' % (x, top, x, top + ph))
        label = ("%g" % (10.0 ** e))
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % (x, top + ph + 18, label))
    for e in range(int(math.ceil(ly0)), int(math.floor(ly1)) + 1):
        y = py(10.0 ** e)
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e0e0e0"/>' % (left, y, left + pw, y))
        out.append('<text x="%d" y="%.1f" text-anchor="end">1e%d</text>' % (left - 6, y + 4, e))
    out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="black"/>' % (left, top, pw, ph))
    out.append('<text x="%.1f" y="%d" text-anchor="middle">arithmetic intensity (FLOP/byte)</text>'
               % (left + pw / 2, height - 20))
    out.append('<text transform="translate(24,%.1f) rotate(-90)" text-anchor="middle">FLOP/s</text>'
               % (top + ph / 2))

    def polyline(pts, colour, dash="", w=2.5):
        coords = " ".join("%.1f,%.1f" % (px(x), py(y)) for x, y in pts)
        out.append('<polyline points="%s" fill="none" stroke="%s" stroke-width="%.1f"%s/>'
                   % (coords, colour, w, ' stroke-dasharray="%s"' % dash if dash else ""))

    bw = machine["memory_bytes_per_s"]
    if machine.get("bf16_flops"):
        polyline(roof_polyline(machine["bf16_flops"], bw), "#999999", "8,5", 1.8)
    polyline(roof_polyline(machine["fp32_flops"], bw), "#1f3b73")
    r = ridge(machine["fp32_flops"], bw)
    out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%d" stroke="#1f3b73" stroke-dasharray="2,4"/>'
               % (px(r), py(machine["fp32_flops"]), px(r), top + ph))
    out.append('<text x="%.1f" y="%d" fill="#1f3b73">ridge %.3g</text>' % (px(r) + 4, top + ph - 8, r))
    out.append('<text x="%.1f" y="%.1f" fill="#1f3b73" font-size="11">FP32 peak %s</text>'
               % (px(r * 1.5), py(machine["fp32_flops"]) - 12, esc(si(machine["fp32_flops"], "FLOP/s"))))
    # The memory roof rises one decade of FLOP/s per decade of intensity.
    angle = -math.degrees(math.atan2(ph / (ly1 - ly0), pw / (lx1 - lx0)))
    out.append('<text transform="translate(%.1f,%.1f) rotate(%.1f)" fill="#1f3b73" font-size="11">memory %s</text>'
               % (px(0.3), py(0.3 * bw * 2.3), angle, esc(si(bw, "B/s"))))
    if measured:
        polyline(roof_polyline(measured["fp32_flops"], measured["memory_bytes_per_s"]), "#e7298a", "3,3", 2)

    # points: reference hollow (drawn first, larger), student filled on top
    for p in sorted(points, key=lambda q: q["who"] != "reference"):
        if not p["plotted"]:
            continue
        fam = _STYLE.get(p["family"], _STYLE["tunable"])
        x, y = px(p["intensity"]), py(p["flops_per_second"])
        hollow = p["who"] == "reference"
        size = 8 if hollow else 5
        fill = "none" if hollow else fam[3]
        stroke = 'stroke="%s" stroke-width="%s"' % (fam[3], "1.8" if hollow else "1")
        if fam[2] == "square":
            out.append('<rect x="%.1f" y="%.1f" width="%d" height="%d" fill="%s" %s/>'
                       % (x - size, y - size, 2 * size, 2 * size, fill, stroke))
        elif fam[2] == "triangle":
            out.append('<polygon points="%.1f,%.1f %.1f,%.1f %.1f,%.1f" fill="%s" %s/>'
                       % (x, y - size * 1.2, x - size, y + size * 0.8, x + size, y + size * 0.8, fill, stroke))
        else:
            out.append('<circle cx="%.1f" cy="%.1f" r="%d" fill="%s" %s/>' % (x, y, size, fill, stroke))
        place = None if hollow else label_place(p)
        if place:
            dx, dy, align = place
            anchor = {"left": "start", "right": "end"}.get(align, "middle")
            out.append('<text x="%.1f" y="%.1f" font-size="11" fill="#333" text-anchor="%s">%s</text>'
                       % (x + 8 * dx, y - 14 * dy + 4, anchor, esc(p["name"])))

    # legend
    lx, ly = left + pw + 15, top + 10
    entries = [("line", "#1f3b73", "", "%s FP32 roof" % machine["name"])]
    if machine.get("bf16_flops"):
        entries.append(("line", "#999999", "8,5", "%s bf16 tensor roof" % machine["name"]))
    if measured:
        entries.append(("line", "#e7298a", "3,3", "measured roof"))
    entries += [("square", _STYLE["stream"][3], "", "STREAM"), ("circle", _STYLE["tunable"][3], "", "k FMAs/element"),
                ("triangle", _STYLE["peak"][3], "", "FMA chains"),
                ("hollow", "#555555", "", "reference solution"), ("filled", "#555555", "", "your kernels")]
    for i, (kind, colour, dash, label) in enumerate(entries):
        y = ly + 22 * i
        if kind == "line":
            out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2.5"%s/>'
                       % (lx, y, lx + 28, y, colour, ' stroke-dasharray="%s"' % dash if dash else ""))
        elif kind == "hollow":
            out.append('<circle cx="%d" cy="%d" r="7" fill="none" stroke="%s" stroke-width="1.8"/>' % (lx + 14, y, colour))
        else:
            shape = {"square": "rect", "triangle": "polygon"}.get(kind, "circle")
            if shape == "rect":
                out.append('<rect x="%d" y="%d" width="10" height="10" fill="%s"/>' % (lx + 9, y - 5, colour))
            elif shape == "polygon":
                out.append('<polygon points="%d,%d %d,%d %d,%d" fill="%s"/>'
                           % (lx + 14, y - 6, lx + 8, y + 5, lx + 20, y + 5, colour))
            else:
                out.append('<circle cx="%d" cy="%d" r="5" fill="%s"/>' % (lx + 14, y, colour))
        out.append('<text x="%d" y="%d">%s</text>' % (lx + 36, y + 4, esc(label)))
    out.append("</svg>")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")


def gnuplot_script(machine: dict, measured: Optional[dict], points: List[dict], title: str, data_dir: str,
                   terminal: str, output: str) -> str:
    """A gnuplot script for one terminal ('pngcairo' or 'svg'); data files go to data_dir."""
    def write(name: str, rows: List[Sequence[float]]) -> str:
        path = os.path.join(data_dir, name)
        with open(path, "w", encoding="utf-8") as f:
            for r in rows:
                f.write(" ".join(str(v) for v in r) + "\n")
        return path

    bw = machine["memory_bytes_per_s"]
    fp32 = write("roof_fp32.dat", roof_polyline(machine["fp32_flops"], bw))
    plots = ["'%s' using 1:2 with lines lw 3 lc rgb '#1f3b73' title '%s FP32 roof'" % (fp32, machine["name"])]
    if machine.get("bf16_flops"):
        bf16 = write("roof_bf16.dat", roof_polyline(machine["bf16_flops"], bw))
        plots.append("'%s' using 1:2 with lines lw 2 dt 2 lc rgb '#999999' title '%s bf16 tensor roof'"
                     % (bf16, machine["name"]))
    if measured:
        mr = write("roof_measured.dat", roof_polyline(measured["fp32_flops"], measured["memory_bytes_per_s"]))
        plots.append("'%s' using 1:2 with lines lw 2 dt 3 lc rgb '#e7298a' title 'measured roof'" % mr)
    titles = {"stream": "STREAM", "tunable": "k FMAs/element", "peak": "FMA chains"}
    labels: List[str] = []
    for who in ("reference", "student"):
        for fam, (filled, hollow, _, colour) in _STYLE.items():
            rows = [(p["intensity"], p["flops_per_second"], '"%s"' % p["name"]) for p in points
                    if p["plotted"] and p["who"] == who and p["family"] == fam]
            if not rows:
                continue
            path = write("points_%s_%s.dat" % (who, fam), rows)
            if who == "reference":
                plots.append("'%s' using 1:2 with points pt %d ps 2.2 lw 2 lc rgb '%s' title '%s (reference)'"
                             % (path, hollow, colour, titles[fam]))
            else:
                plots.append("'%s' using 1:2 with points pt %d ps 1.3 lc rgb '%s' title '%s (yours)'"
                             % (path, filled, colour, titles[fam]))
                for p in points:
                    place = label_place(p) if p["plotted"] and p["who"] == who and p["family"] == fam else None
                    if place:
                        labels.append("set label '%s' at %r,%r offset %g,%g %s font ',10' front"
                                      % (p["name"], p["intensity"], p["flops_per_second"], 1.2 * place[0],
                                         place[1], place[2]))
    r = ridge(machine["fp32_flops"], bw)
    term = ("set terminal pngcairo size 1100,700 font 'Sans,11'" if terminal == "pngcairo"
            else "set terminal svg size 1100,700 font 'Sans,11' dynamic background rgb 'white'")
    lines = [
        term,
        "set output '%s'" % output,
        "set title \"%s\"" % title.replace('"', "'"),
        "set logscale xy",
        "set xrange [%g:%g]" % X_RANGE,
        "set yrange [%g:%g]" % Y_RANGE,
        "set xlabel 'arithmetic intensity (FLOP/byte)'",
        "set ylabel 'FLOP/s'",
        "set format y '10^{%L}'",
        "set grid xtics ytics lc rgb '#dddddd'",
        "set key outside right top box",
        "set arrow from %g,%g to %g,%g nohead dt 3 lc rgb '#1f3b73'" % (r, Y_RANGE[0], r, machine["fp32_flops"]),
        "set label 'ridge %.3g FLOP/B' at %g,%g offset 0.5,0 tc rgb '#1f3b73' font ',10'" % (r, r, Y_RANGE[0] * 3),
        "set label 'memory %s' at %g,%g rotate by 36 tc rgb '#1f3b73' font ',10'"
        % (si(bw, "B/s"), 0.3, 0.3 * bw * 2.3),
        "set label 'FP32 peak %s' at %g,%g tc rgb '#1f3b73' font ',10'"
        % (si(machine["fp32_flops"], "FLOP/s"), r * 1.5, machine["fp32_flops"] * 1.35),
    ] + labels + [
        "plot " + ", \\\n     ".join(plots),
    ]
    return "\n".join(lines) + "\n"


def draw(out_dir: str, machine: dict, measured: Optional[dict], points: List[dict], title: str,
         gnuplot: Optional[str]) -> Tuple[List[str], List[str]]:
    """Writes roofline.png and roofline.svg; returns (written paths, notes)."""
    png, svg = os.path.join(out_dir, "roofline.png"), os.path.join(out_dir, "roofline.svg")
    written, notes = [], []
    if gnuplot:
        with tempfile.TemporaryDirectory(prefix="course-roofline-") as tmp:
            for terminal, path in (("pngcairo", png), ("svg", svg)):
                script = os.path.join(tmp, terminal + ".gp")
                with open(script, "w", encoding="utf-8") as f:
                    f.write(gnuplot_script(machine, measured, points, title, tmp, terminal, path))
                proc = subprocess.run([gnuplot, script], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      universal_newlines=True, errors="replace")
                if proc.returncode == 0 and os.path.isfile(path):
                    written.append(path)
                else:
                    notes.append("gnuplot could not draw %s: %s" % (os.path.basename(path),
                                                                    proc.stdout.strip().splitlines()[-1:]))
    if svg not in written:
        write_svg(svg, machine, measured, points, title)
        written.append(svg)
    if png not in written:
        notes.append(NO_GNUPLOT if not gnuplot else "no PNG (see above); the SVG was written without gnuplot")
    return written, notes


# ------------------------------------------------------------------------------------------
# GPU checks (the lesson's benchmark targets)

def gpu_checks(student_or_ref: dict, measured: Optional[dict], machine: dict) -> List[str]:
    lines = []
    kernels = {k["name"]: k for k in student_or_ref.get("kernels", [])}
    memcpy_bw = float(student_or_ref.get("memcpy_bytes_per_s") or 0)
    triad = kernels.get("triad")
    if triad and memcpy_bw > 0 and float(triad["seconds"]) > 0:
        frac = float(triad["bytes"]) / float(triad["seconds"]) / memcpy_bw
        lines.append("triad bandwidth = %.0f%% of cudaMemcpy's %s (target >= 85%%)" % (100 * frac, si(memcpy_bw, "B/s")))
    peak_dev = fp32_peak_from_device(student_or_ref)
    chains = kernels.get("fma chains")
    if chains and peak_dev and float(chains["seconds"]) > 0:
        rate = float(chains["flops"]) / float(chains["seconds"])
        lines.append("FMA chains = %s = %.0f%% of the FP32 peak from SMs x lanes x 2 x clock, %s (target >= 90%%)"
                     % (si(rate, "FLOP/s"), 100 * rate / peak_dev, si(peak_dev, "FLOP/s")))
    if measured:
        rm = ridge(measured["fp32_flops"], measured["memory_bytes_per_s"])
        rt = ridge(machine["fp32_flops"], machine["memory_bytes_per_s"])
        lines.append("measured FP32 ridge %.3g FLOP/B vs the model's %.3g for %s: %+.0f%% (target within 15%%)"
                     % (rm, rt, machine["name"], 100 * (rm / rt - 1)))
    return lines


# ------------------------------------------------------------------------------------------
# the simulator's modelled points against the lesson (a test holds them: experiment/02/roofline_demo)

def modelled_disagreements(report: dict, machine: dict) -> List[str]:
    """What, in a simulator demo's modelled times for `machine`, contradicts lesson 02; [] when
    nothing does. The lesson says: no kernel beats the roofline; STREAM kernels are
    memory-bound and near the memory roof; the tunable kernel is memory-bound below the ridge,
    compute-bound above it, and its FLOP/s never fall as k grows; the FMA chains come near the
    FP32 peak."""
    problems: List[str] = []
    peak, bw = machine["fp32_flops"], machine["memory_bytes_per_s"]
    ridge_point = ridge(peak, bw)
    points = [p for p in place_kernels(report, machine, False, "reference") if p.get("correct")]
    if any("modelled_seconds" not in p for p in points):
        return ["the demo reported no modelled times (built without the simulator's counters?)"]
    by_name = {p["name"]: p for p in points}
    for p in points:
        if float(p["modelled_seconds"]) < p["predicted_seconds"] * (1 - 1e-9):
            problems.append("%s: modelled %s beats the roofline's %s" % (
                p["name"], seconds_text(float(p["modelled_seconds"])), seconds_text(p["predicted_seconds"])))
    for name in ("copy", "scale", "add", "triad"):
        p = by_name.get(name)
        if p is None:
            problems.append("%s: missing or wrong" % name)
            continue
        if p["bound"] != "memory":
            problems.append("%s: a STREAM kernel modelled as %s-bound, not memory-bound" % (name, p["bound"]))
        if p["predicted_seconds"] < 0.6 * float(p["modelled_seconds"]):
            problems.append("%s: modelled at %.0f%% of the memory roof (expected >= 60%%)"
                            % (name, 100 * p["predicted_seconds"] / float(p["modelled_seconds"])))
    tunable = sorted((p for p in points if p["family"] == "tunable"), key=lambda p: p["parameter"])
    for p in tunable:
        expected = "memory" if p["intensity"] < ridge_point / 2 else "compute" if p["intensity"] > 2 * ridge_point else None
        if expected and p["bound"] != expected:
            problems.append("%s: intensity %.3g FLOP/B (ridge %.3g) modelled as %s-bound, expected %s-bound"
                            % (p["name"], p["intensity"], ridge_point, p["bound"], expected))
    for before, after in zip(tunable, tunable[1:]):
        if after["flops_per_second"] < before["flops_per_second"] * (1 - 1e-9):
            problems.append("%s: %s, fewer than %s at %s" % (after["name"], si(after["flops_per_second"], "FLOP/s"),
                                                             si(before["flops_per_second"], "FLOP/s"), before["name"]))
    chains = by_name.get("fma chains")
    if chains is None or chains["flops_per_second"] < 0.8 * peak:
        problems.append("fma chains: %s, expected >= 80%% of the FP32 peak %s" % (
            si(chains["flops_per_second"], "FLOP/s") if chains else "missing or wrong", si(peak, "FLOP/s")))
    return problems


# ------------------------------------------------------------------------------------------
# the command

def _run_demo(path: str, modelled_gpu: str) -> dict:
    """Runs a demo and reads its JSON; on the simulator its modelled clock is `modelled_gpu`'s."""
    env = dict(os.environ, CUDASIM_GPU=modelled_gpu)
    try:
        proc = subprocess.run([path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                              errors="replace", timeout=DEMO_TIMEOUT, env=env)
    except subprocess.TimeoutExpired:
        raise CourseError("%s did not finish within %d s" % (os.path.basename(path), DEMO_TIMEOUT), FAILURE)
    if proc.returncode != 0:
        raise CourseError("%s failed (exit status %d): %s" % (os.path.basename(path), proc.returncode,
                                                               (proc.stderr.strip() or proc.stdout.strip())[-600:]),
                          FAILURE)
    try:
        return json.loads(proc.stdout)
    except ValueError as exc:
        raise CourseError("%s printed no valid JSON (%s)" % (os.path.basename(path), exc), FAILURE)


def validate_gpu_argument(gpu: Optional[str]) -> Optional[str]:
    if gpu is None:
        return None
    for name in GPU_CHOICES:
        if name.lower() == gpu.lower():
            return name
    raise CourseError("--gpu %s: choose one of %s" % (gpu, ", ".join(GPU_CHOICES)), USAGE_ERROR)


def run_roofline(session, gpu: Optional[str], out_dir: Optional[str]) -> int:
    gpu = validate_gpu_argument(gpu)
    out_dir = os.path.abspath(out_dir or os.path.join(session.root, "build", "roofline"))
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise CourseError("--out %s exists and is not a folder" % out_dir)
    build = session.build_dir()
    build.configure()
    demo_dir = os.path.join(build.path, DEMO_DIR)

    reports: Dict[str, dict] = {}
    for target in (REFERENCE, STUDENT):
        ui.progress("building %s ..." % target, end="")
        outcome = build.build([target])
        if not outcome.ok:
            ui.progress(" FAILED")
            if target == STUDENT:
                from .build import readable_build_output
                ui.progress(readable_build_output(outcome.output).rstrip()[-3000:])
                ui.warn("your lesson 02 exercises do not build; showing the reference kernels only")
                continue
            ui.warn("the reference demo does not build (are solutions/ present?); showing yours only")
            continue
        ui.progress(" ok")
        ui.progress("running %s ..." % target)
        reports[target] = _run_demo(os.path.join(demo_dir, target), gpu or DEFAULT_SIM_GPU)
    if not reports:
        raise CourseError("neither the reference nor your roofline demo could be built", FAILURE)

    any_report = reports.get(STUDENT) or reports[REFERENCE]
    on_gpu = any_report.get("backend") == "cuda"
    machines = any_report["machines"]
    chosen = gpu or (gpu_from_device_name(any_report.get("device", "")) if on_gpu else None) or \
        ("H100" if on_gpu else DEFAULT_SIM_GPU)
    machine = find_machine(machines, chosen)
    if machine is None:
        raise CourseError("no machine %s in the table of lessons/02-roofline/roofline_model.hpp" % chosen, FAILURE)
    measured = measured_roof(reports.get(REFERENCE), reports.get(STUDENT)) if on_gpu else None

    points: List[dict] = []
    reference_by_name: Dict[str, dict] = {}
    if REFERENCE in reports:
        ref_points = place_kernels(reports[REFERENCE], machine, on_gpu, "reference")
        points += ref_points
        reference_by_name = {p["name"]: p for p in ref_points}
    student_points = place_kernels(reports[STUDENT], machine, on_gpu, "student") if STUDENT in reports else []
    points += student_points

    print("Roofline of %s (datasheet): %s" % (machine["description"], roof_summary(machine)))
    if on_gpu:
        print("Measured on %s: %d SMs at %.0f MHz" % (any_report.get("device"), any_report.get("sm_count", 0),
                                                      any_report.get("clock_khz", 0) / 1e3))
        if measured:
            print("Measured roof: %s" % roof_summary(dict(measured, bf16_flops=0)))
    else:
        counted = any_report.get("counters")
        print("Simulator: bytes %s; times are modelled on an %s, not measurements."
              % ("counted exactly by cudasim" if counted else "NOT counted (no counters in this build): "
                 "taken from each kernel's definition", machine["name"]))
        if counted:
            print("The modelled time adds to the roofline time the launch overhead (2.5 us a launch) and the "
                  "longest thread's path: short kernels sit below the roof, as they do on a GPU.")
    shown = student_points or [p for p in points if p["who"] == "reference"]
    print()
    print(("your kernels:" if student_points else "reference kernels (yours did not build):"))
    print(table(shown, reference_by_name if student_points else {}, on_gpu))
    wrong = [p["name"] for p in student_points if not p.get("correct")]
    if wrong:
        print("\nnot on the plot, their output was wrong (unfinished?): " + ", ".join(wrong))
    print("copy does no FLOPs: it has no point on a FLOP/s roofline (see its bandwidth above).")
    if on_gpu:
        for line in gpu_checks(reports.get(REFERENCE) or any_report, measured, machine):
            print("check: " + line)

    os.makedirs(out_dir, exist_ok=True)
    title = plot_title(machine, on_gpu, any_report.get("device", ""))
    written, notes = draw(out_dir, machine, measured, points, title, shutil.which("gnuplot"))
    data_path = os.path.join(out_dir, "roofline.json")
    with open(data_path, "w", encoding="utf-8") as f:
        json.dump({"machine": machine, "measured_roof": measured, "backend": any_report.get("backend"),
                   "device": any_report.get("device"), "points": points,
                   "reports": reports}, f, indent=2, default=str)
    written.append(data_path)
    print()
    for note in notes:
        print("note: " + note)
    for path in written:
        rel = os.path.relpath(path)
        print("wrote " + (path if rel.startswith("..") else rel))
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python3 -m course.roofline --check DEMO [--gpu NAME]``: runs a simulator build of the
    demo and exits non-zero, listing why, when its modelled points contradict the lesson."""
    import argparse
    parser = argparse.ArgumentParser(prog="python3 -m course.roofline")
    parser.add_argument("--check", required=True, metavar="DEMO", help="a roofline_demo built for the simulator")
    parser.add_argument("--gpu", default=DEFAULT_SIM_GPU, choices=GPU_CHOICES)
    args = parser.parse_args(argv)
    report = _run_demo(args.check, args.gpu)
    machine = find_machine(report["machines"], args.gpu)
    if machine is None:
        print("no machine %s in the demo's table" % args.gpu)
        return 1
    points = [p for p in place_kernels(report, machine, False, "reference")]
    print(table(points, {p["name"]: p for p in points}, False))
    problems = modelled_disagreements(report, machine)
    for line in problems:
        print("disagrees with lesson 02: " + line)
    print("modelled on %s: %s" % (args.gpu, "agrees with lesson 02" if not problems else "%d disagreements" % len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
