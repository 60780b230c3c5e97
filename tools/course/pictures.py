"""The lessons' pictures of ideas that are spatial or temporal, drawn as SVG by code, so that they
are reproducible and stay right when a lesson changes its numbers.

    cd tools && python3 -m course.pictures [--check]

writes each picture next to the README that shows it; ``--check`` writes nothing and fails when
a committed picture differs from what this code draws (tools/course/tests/test_pictures.py).
The roofline plot of lesson 02 is drawn by ``./course roofline`` from measured points instead."""
import argparse
import json
import os
import sys
from typing import Callable, Dict, List, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

FONT = "font-family=\"DejaVu Sans, Arial, sans-serif\""
INK, MUTED, ACCENT, SECOND, IDLE = "#222222", "#777777", "#1f77b4", "#ff7f0e", "#dddddd"


class Svg:
    """A small SVG writer: rectangles, lines, arrows and text, in user units."""

    def __init__(self, width: int, height: int, title: str):
        self.width, self.height = width, height
        self.items: List[str] = []
        self.title = title

    def rect(self, x: float, y: float, w: float, h: float, fill: str, stroke: str = INK, width: float = 1.0) -> None:
        self.items.append('<rect x="%g" y="%g" width="%g" height="%g" fill="%s" stroke="%s" stroke-width="%g"/>'
                          % (x, y, w, h, fill, stroke, width))

    def line(self, x1: float, y1: float, x2: float, y2: float, colour: str = INK, width: float = 1.0,
             arrow: bool = False) -> None:
        self.items.append('<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="%s" stroke-width="%g"%s/>'
                          % (x1, y1, x2, y2, colour, width, ' marker-end="url(#arrow)"' if arrow else ""))

    def text(self, x: float, y: float, words: str, size: int = 12, colour: str = INK, anchor: str = "start",
             bold: bool = False) -> None:
        escaped = words.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        self.items.append('<text x="%g" y="%g" font-size="%d" fill="%s" text-anchor="%s"%s %s>%s</text>'
                          % (x, y, size, colour, anchor, ' font-weight="bold"' if bold else "", FONT, escaped))

    def render(self) -> str:
        head = ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">\n'
                '<title>%s</title>\n'
                '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
                'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="%s"/></marker></defs>\n'
                '<rect width="100%%" height="100%%" fill="white"/>\n'
                % (self.width, self.height, self.width, self.height, self.title, INK))
        return head + "\n".join(self.items) + "\n</svg>\n"


def grid_blocks_warps() -> str:
    """Lesson 00: n = 300 elements, 128 threads per block, so 3 blocks of 4 warps; element
    i = blockIdx.x * blockDim.x + threadIdx.x, and the last block's threads past n stay idle."""
    n, block, warp = 300, 128, 32
    blocks = (n + block - 1) // block
    unit = 2.2                       # pixels per thread
    left, top, row = 30, 70, 70
    svg = Svg(int(left * 2 + blocks * block * unit + (blocks - 1) * 14), 265,
              "A grid of blocks of warps covering n = 300 elements")
    svg.text(left, 28, "vector_add_kernel<<<%d, %d>>>(a, b, c, n = %d)" % (blocks, block, n), 15, bold=True)
    svg.text(left, 48, "i = blockIdx.x * blockDim.x + threadIdx.x;  if (i < n) c[i] = a[i] + b[i];", 12, MUTED)
    x = left
    for b in range(blocks):
        width = block * unit
        svg.text(x + width / 2, top + 2, "block %d (blockIdx.x = %d)" % (b, b), 12, anchor="middle", bold=True)
        for w in range(block // warp):
            first = b * block + w * warp
            wx = x + w * warp * unit
            busy = max(0, min(warp, n - first))
            if busy:
                svg.rect(wx, top + 12, busy * unit, row, ACCENT if w % 2 == 0 else "#6baed6", INK, 0.6)
            if busy < warp:
                svg.rect(wx + busy * unit, top + 12, (warp - busy) * unit, row, IDLE, INK, 0.6)
            ink = "white" if busy == warp else INK if busy else MUTED
            svg.text(wx + warp * unit / 2, top + 12 + row / 2 - 4, "warp %d" % w, 10, ink, anchor="middle")
            svg.text(wx + warp * unit / 2, top + 12 + row / 2 + 10, "i %d-%d" % (first, first + warp - 1), 9, ink,
                     anchor="middle")
        svg.text(x, top + row + 30, "threadIdx.x 0", 10, MUTED)
        svg.text(x + width, top + row + 30, "%d" % (block - 1), 10, MUTED, anchor="end")
        x += width + 14
    svg.text(left, top + row + 62, "Each block runs on one SM and is split into warps of 32 threads that execute "
             "together.", 12)
    svg.text(left, top + row + 80, "The last block hangs over the end: its threads with i >= n = %d (grey) must "
             "not touch memory." % n, 12)
    idle = blocks * block - n
    svg.text(left, top + row + 98, "%d of %d threads are idle here; neighbouring threads read neighbouring "
             "elements, so each warp's access is coalesced." % (idle, blocks * block), 12)
    return svg.render()


def chain_vs_scan() -> str:
    """Lesson 01: 8 steps as a chain (depth 8) and as a scan of associative combinations (depth
    log2 8 = 3, Hillis-Steele: at level d, element i combines with element i - 2^d)."""
    steps, levels = 8, 3
    svg = Svg(930, 350, "A chain of 8 dependent steps against a scan of depth 3")
    svg.text(20, 28, "Nonlinear recurrence: a chain, depth n", 15, bold=True)
    y = 90
    for t in range(steps + 1):
        x = 40 + t * 44
        svg.rect(x - 15, y - 15, 30, 30, SECOND if t else IDLE, INK, 0.8)
        svg.text(x, y + 4, "h%d" % t, 11, "white" if t else INK, anchor="middle")
        if t:
            svg.line(x - 44 + 15, y, x - 17, y, INK, 1.2, arrow=True)
    svg.text(20, 140, "h[t] = tanh(W h[t-1] + U x[t] + b): step t needs", 12)
    svg.text(20, 157, "step t-1 finished, so 8 steps take 8 launches", 12)
    svg.text(20, 174, "(or 8 grid-wide barriers), one after another.", 12)

    ox = 500
    svg.text(ox, 28, "Linear recurrence: a scan, depth log2 n", 15, bold=True)
    dx, dy, top = 50, 62, 58
    for level in range(levels + 1):
        yy = top + level * dy
        svg.text(ox - 8, yy + 4, "d=%d" % level if level else "in", 10, MUTED, anchor="end")
        for i in range(steps):
            x = ox + 20 + i * dx
            done = i < (1 << level)       # prefixes complete at this level
            svg.rect(x - 14, yy - 12, 28, 24, ACCENT if done else "#c6dbef", INK, 0.6)
            svg.text(x, yy + 4, "%d" % i, 10, "white" if done else INK, anchor="middle")
            if level:
                stride = 1 << (level - 1)
                svg.line(x, yy - dy + 12, x, yy - 14, MUTED, 0.8, arrow=True)
                if i >= stride:
                    svg.line(x - stride * dx, yy - dy + 12, x - 5, yy - 14, ACCENT, 1.0, arrow=True)
    svg.text(ox - 30, top + levels * dy + 40, "f_t(h) = a[t] h + b[t]; two such maps compose into another,", 12)
    svg.text(ox - 30, top + levels * dy + 57, "so level d combines element i with element i - 2^(d-1):", 12)
    svg.text(ox - 30, top + levels * dy + 74, "all 8 prefixes (dark) after 3 levels instead of 8 steps.", 12)
    return svg.render()


def tiling() -> str:
    """Lesson 03: C = A B with T x T tiles. The block that owns one tile of C walks the row of A's
    tiles and the column of B's tiles; at each step one tile of each sits in shared memory and
    every element of it is used T times."""
    tiles, cell = 4, 34                 # 4 x 4 tiles per matrix in the drawing
    size = tiles * cell
    svg = Svg(900, 420, "Shared-memory tiling of a matrix product")
    svg.text(20, 26, "One block computes one T x T tile of C, one k-step at a time", 15, bold=True)
    row, col, step = 1, 2, 1            # the C tile drawn, and the k-step highlighted

    def matrix(x: float, y: float, name: str, owner: Callable[[int, int], str]) -> None:
        for r in range(tiles):
            for c in range(tiles):
                svg.rect(x + c * cell, y + r * cell, cell, cell, owner(r, c), INK, 0.6)
        svg.text(x + size / 2, y - 10, name, 13, anchor="middle", bold=True)

    ax, by, cy = 40, 70, 250            # A left of C, B above C
    bx = ax + size + 50
    matrix(ax, cy, "A (M x K)", lambda r, c: SECOND if (r, c) == (row, step) else "#fdd0a2" if r == row else "white")
    matrix(bx, by, "B (K x N)", lambda r, c: SECOND if (r, c) == (step, col) else "#fdd0a2" if c == col else "white")
    matrix(bx, cy, "C (M x N)", lambda r, c: ACCENT if (r, c) == (row, col) else "white")
    svg.text(bx + size / 2, cy + size + 22, "tile (%d, %d) of C: one block of T x T threads" % (row, col), 11,
             anchor="middle")

    sx, sy = 470, 110
    svg.rect(sx, sy, 190, 90, "#fff5eb", INK, 1.0)
    svg.text(sx + 95, sy + 20, "shared memory (per block)", 12, anchor="middle", bold=True)
    svg.rect(sx + 22, sy + 34, 60, 42, SECOND, INK, 0.6)
    svg.text(sx + 52, sy + 60, "A tile", 11, "white", anchor="middle")
    svg.rect(sx + 108, sy + 34, 60, 42, SECOND, INK, 0.6)
    svg.text(sx + 138, sy + 60, "B tile", 11, "white", anchor="middle")
    svg.line(ax + step * cell + cell / 2, cy + row * cell, sx + 40, sy + 78, SECOND, 1.2, arrow=True)
    svg.line(bx + col * cell + cell, by + step * cell + cell / 2, sx + 120, sy + 34, SECOND, 1.2, arrow=True)
    svg.line(sx + 95, sy + 90, bx + col * cell + cell, cy + row * cell + cell / 2, ACCENT, 1.2, arrow=True)

    lines = [
        "for each k-step (%d here, T columns of A and T rows of B):" % tiles,
        "  1. the block's T x T threads load one A tile and one B tile",
        "     from global memory into shared memory (each thread: 2 loads);",
        "  2. __syncthreads();",
        "  3. each thread does T multiply-adds from shared memory;",
        "  4. __syncthreads() before the tiles are overwritten.",
        "Every element brought from global memory is used T times:",
        "global loads fall from 2 N^3 x 4 bytes to 2 N^3 x 4 / T.",
    ]
    for k, words in enumerate(lines):
        svg.text(sx, 250 + k * 17, words, 12)
    return svg.render()


PIPELINE_DATA = "lessons/05-parallelism-nvlink/pipeline-schedules.json"


def pipeline_schedules() -> str:
    """Lesson 05: GPipe and 1F1B on 4 stages and 8 micro-batches, backward twice as long as
    forward, as the reference's record_timeline() places them. The data is the committed
    pipeline-schedules.json, which the course's tests compare with what the reference records
    (course/pipeline-picture-data), so this code never holds the schedules themselves."""
    with open(os.path.join(ROOT, PIPELINE_DATA), encoding="utf-8") as f:
        data = json.load(f)
    stages, micro = data["stages"], data["micro"]
    unit, row, left = 26, 28, 92
    span = max(s["makespan"] for s in data["schedules"].values())
    panel = 44 + stages * row + 38
    svg = Svg(left + span * unit + 30, 40 + panel * len(data["schedules"]) + 30,
              "GPipe and 1F1B on %d stages and %d micro-batches" % (stages, micro))
    svg.text(20, 26, "%d stages, %d micro-batches; a backward pass (B) takes %d units, a forward pass (F) %d"
             % (stages, micro, data["backward"], data["forward"]), 15, bold=True)
    top = 40
    for name, timeline in data["schedules"].items():
        svg.text(20, top + 24, "%s: %d units, bubble %.1f%%, most micro-batches stashed per stage: %s" % (
            name, timeline["makespan"], 100 * timeline["bubble"],
            ", ".join(str(k) for k in timeline["peak_stash"])), 13, bold=True)
        y0 = top + 36
        for s, slots in enumerate(timeline["stages"]):
            y = y0 + s * row
            svg.text(left - 10, y + row / 2 + 4, "stage %d" % s, 11, MUTED, anchor="end")
            svg.rect(left, y + 2, span * unit, row - 4, "white", IDLE, 0.6)
            for kind, m, start, end in slots:
                forward = kind == "F"
                svg.rect(left + start * unit, y + 2, (end - start) * unit, row - 4, ACCENT if forward else SECOND,
                         "white", 1.0)
                svg.text(left + (start + end) / 2 * unit, y + row / 2 + 4, "%s%d" % (kind, m), 10, "white",
                         anchor="middle")
        axis = y0 + stages * row + 4
        for t in range(0, span + 1, 4):
            svg.line(left + t * unit, axis, left + t * unit, axis + 4, MUTED, 0.8)
            svg.text(left + t * unit, axis + 16, str(t), 9, MUTED, anchor="middle")
        top += panel
    svg.text(20, top + 18, "Same time, same bubble: 1F1B starts each backward pass as soon as it can, so stage s keeps "
             "at most p - s micro-batches' activations instead of all m.", 12)
    return svg.render()


PICTURES: Dict[str, Callable[[], str]] = {
    "lessons/00-gpu-vs-cpu/grid-blocks-warps.svg": grid_blocks_warps,
    "lessons/01-serial-dependency/chain-vs-scan.svg": chain_vs_scan,
    "lessons/03-matmul-reuse/tiling.svg": tiling,
    "lessons/05-parallelism-nvlink/pipeline-schedules.svg": pipeline_schedules,
}


def stale(root: str = ROOT) -> List[Tuple[str, str]]:
    """(path, reason) for each committed picture that differs from what this code draws."""
    out = []
    for relative, draw in PICTURES.items():
        path = os.path.join(root, relative)
        try:
            with open(path, encoding="utf-8") as f:
                if f.read() != draw():
                    out.append((relative, "differs from what tools/course/pictures.py draws"))
        except OSError:
            out.append((relative, "missing"))
    return out


def write_all(root: str = ROOT) -> List[str]:
    written = []
    for relative, draw in PICTURES.items():
        with open(os.path.join(root, relative), "w", encoding="utf-8") as f:
            f.write(draw())
        written.append(relative)
    return written


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(prog="course.pictures", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail when a committed picture is out of date")
    args = parser.parse_args(argv)
    if args.check:
        problems = stale()
        for path, why in problems:
            print("%s: %s (run: python3 -m course.pictures, from tools/)" % (path, why))
        return 1 if problems else 0
    for path in write_all():
        print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
