"""figures.py: draw one measured run under results/linux/ as SVG figures.

    /usr/bin/python3 -m report.figures --run-dir results/linux/STAMP --out report/figures

Like report.py this only re-derives: it reads the run's meta.json, its JSON Lines
files and (for the payoff CDFs) wrk's raw output, and writes the figures below.
meta.json and the rows are read by the report's own readers (report/common.py's
read_meta, each section's row reader under report/sections/), so the figures
accept exactly the rows the report does; a run without meta.json is drawn in
the rows' own order.

    balancing_shares.svg   balancing.jsonl   busiest worker's share, per arm and round
    balancing_workers.svg  balancing.jsonl   the same at the run's other worker counts, a panel per count
    placement_heatmap.svg  placement.jsonl   median busiest share per placement x arm
    cost_bars.svg          cost.jsonl        median req/s per arm and worker count
    payoff_latency.svg     payoff.jsonl      latency CDFs (raw/payoff-*.wrk.txt, else p50/p99), a panel
                                             per connection count and worker count
    burst_completion.svg   burst.jsonl       median completion time per arm, K and worker count

A figure whose input file is absent (or holds no measured row) is not drawn, and
a stale copy of it in the output directory is removed, so the directory always
shows exactly this run.

The SVGs are a pure function of the run's files: matplotlib's own default style
(not the user's matplotlibrc), no pyplot (plain Figure objects, the Agg backend
selected, SVG written by matplotlib's SVG backend) with a fixed hash salt for
element ids, glyphs drawn as paths in DejaVu Sans (no viewer fonts), no date
or creator in the metadata, fixed sizes (a function of how many rows there are)
and fixed dpi, and every order taken from meta.json or from the files, never
from a dict's or set's iteration. Drawing the same run twice gives the same
bytes (tests/test_figures.py checks it, and pins golden copies).

Any problem with an input is ONE line, `figures: FILE:LINE: what`, exit 1;
usage errors exit 2. matplotlib is imported only when drawing.
"""

import sys

if __name__ == "__main__" and not __package__:  # run by path: the packages it imports are not found
    sys.stderr.write("figures.py: run it as a module from the repository's top: "
                     "/usr/bin/python3 -m report.figures\n")
    sys.exit(2)

import argparse
import io
import re
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from acceptlab import balance, results_io, wrk_output
from report import common  # (report/common.py: the meta.json reader report.py uses too)
from report.common import Meta
# The rows are read by the report's sections, the same readers report.py uses.
from report.sections.balancing import Round, base_rows, is_base, read_balancing
from report.sections.burst import Burst, read_burst
from report.sections.cost import read_cost
from report.sections.payoff import read_payoff
from report.sections.placement import FailedRun, PlacementRun, StopWinner, at_two, read_placement
from report.sections.wrk import WrkRun
REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "report" / "figures"

BALANCING = "balancing_shares.svg"
BALANCING_WORKERS = "balancing_workers.svg"
PLACEMENT = "placement_heatmap.svg"
COST = "cost_bars.svg"
PAYOFF = "payoff_latency.svg"
BURST = "burst_completion.svg"
FIGURES = (BALANCING, BALANCING_WORKERS, PLACEMENT, COST, PAYOFF, BURST)

DPI = 100
HASH_SALT = "acceptlab"
FONT = "DejaVu Sans"
SVG_METADATA = {"Date": None, "Creator": None}
PNG_METADATA = {"Software": None}  # no generator string; matplotlib writes no time into a PNG

SHAPE_ORDER = ("oneshot", "burst", "ramp", "keepalive")
SHAPE_STYLE = {  # marker, colour
    "oneshot": ("D", "#9467bd"),
    "burst": ("o", "#1f77b4"),
    "ramp": ("^", "#ff7f0e"),
    "keepalive": ("s", "#2ca02c"),
}
EXTRA_STYLES = (("v", "#d62728"), ("P", "#8c564b"), ("X", "#e377c2"), ("<", "#7f7f7f"), (">", "#bcbd22"))
CELL_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
MODE_TITLES = {"keepalive": "Keep-alive", "close": "Connection: close"}
WORKER_COLOURS = ("#9ecae1", "#3182bd", "#08519c", "#6baed6", "#c6dbef")
PLACEMENT_SKIPPED_SHAPES = {"stop_winner"}


# ---------------------------------------------------------------- errors


class FiguresError(Exception):
    """Anything that stops the figures; render() is the one line to print."""

    def render(self) -> str:
        return f"figures: {self}"


class InputError(results_io.InputError, FiguresError):
    """A problem with one input file (results_io's, named as the figures')."""

    program = "figures"


shown = results_io.shown


def _as_figures_input(call, *args):
    """call(*args); an error from the readers report.py uses too (results_io.py,
    common.py, sections/) is raised again as the figures' own, so it reads
    `figures: FILE:LINE: what`."""
    try:
        return call(*args)
    except InputError:
        raise
    except results_io.InputError as e:
        raise InputError(e.path, e.line, e.message, e.reason, e.strerror) from None


# ---------------------------------------------------------------- reading


def read_text(path: Path) -> str:
    return _as_figures_input(results_io.read_text, path)


def read_rows(path: Path, read: Callable[[Path], list]) -> list:
    """The rows of a study's file through its report section's reader (read:
    e.g. sections.balancing.read_balancing), a problem named as the figures'."""
    return _as_figures_input(read, path)


def read_meta(run_dir: Path) -> Optional[Meta]:
    """The run's meta.json through the report's reader (without its check that
    "stamp" names the directory: a copy of a run draws under any name, nor its
    need of the arms' facts: no figure reads them), or None when the run has
    no meta.json: the figures then take every order from the rows."""
    if not (run_dir / "meta.json").exists():
        return None
    return _as_figures_input(common.read_meta, run_dir, False, False)


def busiest_share(counts: tuple) -> Optional[float]:
    """The busiest worker's share of the answered connections: 1/N is even, 1.0 all
    to one. None when nothing was answered. counts: a row's (worker, connections).
    The denominator is the answered connections (the sum of counts), not the ones
    attempted, so that for 2 workers share <= 2/3 is exactly the gate's max/min <= 2."""
    values = [n for _, n in counts]
    total = sum(values)
    return None if total == 0 else max(values) / total


def within_limit(workers: int) -> float:
    """The largest busiest-worker share any split within 2:1 can have: the busiest
    worker at twice the others', 2/(N+1) (2/3 for two workers)."""
    return balance.busiest_share_within_2to1(workers)


def first_seen(values) -> list:
    """Distinct values in order of first appearance."""
    seen, out = set(), []
    for v in values:
        if v not in seen:
            seen.add(v)
            out.append(v)
    return out


def ordered(preferred: list, present: list) -> list:
    """preferred's entries that are present, then the rest of present in its own order."""
    have = set(present)
    head = [p for p in first_seen(preferred) if p in have]
    return head + [p for p in present if p not in set(head)]



PERCENTILE_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)%\s+(\S+)\s*$")


def read_wrk_distribution(path: Path) -> Optional[tuple]:
    """((fraction, ms), ...) from wrk --latency's "Latency Distribution" block, or
    None when the file has no such block (wrk failed; the row's p50/p99 stand in)."""
    lines = read_text(path).split("\n")
    start = next((i for i, line in enumerate(lines) if line.strip() == "Latency Distribution"), None)
    if start is None:
        return None
    points = []
    for i in range(start + 1, len(lines)):
        line = lines[i]
        if not re.match(r"^\s*[0-9.]+%", line):
            break
        m = PERCENTILE_RE.match(line)
        try:
            value = wrk_output.ms(m.group(2), digits=None) if m else None
        except ValueError:
            value = None
        if value is None:
            raise InputError(path, i + 1, f"cannot read a latency percentile from {line.strip()!r}")
        fraction = float(m.group(1)) / 100
        if not 0 < fraction < 1:
            raise InputError(path, i + 1, f"percentile {m.group(1)}% is not between 0 and 100")
        points.append((fraction, value))
    if not points:
        raise InputError(path, start + 1, "no percentile lines after \"Latency Distribution\"")
    return tuple(points)


# ---------------------------------------------------------------- gathering


def gid(*parts) -> str:
    """An SVG element id from names: letters, digits, '.', '-' and '_' only."""
    return "__".join(re.sub(r"[^A-Za-z0-9._-]", "_", str(p)) for p in parts)


def median(values):
    return statistics.median(sorted(values))


@dataclass
class BalancingData:
    variants: list  # [(variant, workers)]
    shapes: list
    rounds: dict  # (variant, shape) -> [share] by round


def gather_balancing(meta: Optional[Meta], rows: list) -> Optional[BalancingData]:
    """rows: sections.balancing's (Round, FailedStep), at the run's worker
    count (base_rows: the other counts have tables of their own)."""
    rows = base_rows(meta, rows)
    measured = [r for r in rows if isinstance(r, Round)]
    named = [r.variant for r in rows]
    if not measured:
        return None
    variants = ordered(list(meta.variants) if meta else [], first_seen(named))
    shapes = ordered(([s.name for s in meta.shapes] if meta else []) + list(SHAPE_ORDER),
                     first_seen(r.shape for r in measured))
    rounds = {}
    for r in sorted(measured, key=lambda r: (r.variant, r.shape, r.round)):
        share = busiest_share(r.counts)
        if share is not None:
            rounds.setdefault((r.variant, r.shape), []).append(share)
    workers = []
    for v in variants:
        ns = sorted(r.workers for r in measured if r.variant == v)
        # the most common worker count (smallest on a tie); 2 when the variant has no round
        workers.append((v, max(sorted(set(ns)), key=ns.count) if ns else 2))
    return BalancingData(workers, shapes, rounds)


def gather_balancing_workers(meta: Optional[Meta], rows: list) -> Optional[list]:
    """[(workers, BalancingData)] for each worker count other than the run's
    (ascending), or None when the run has rows at its own count alone (or no
    meta to say which count is its own)."""
    if meta is None:
        return None
    wide = [r for r in rows if not is_base(meta, r)]
    counts = sorted({r.workers for r in wide if isinstance(r, Round)})
    out = []
    for n in counts:
        mine = [r for r in wide if r.workers == n]
        data = gather_balancing(None, mine)
        variants = ordered(list(meta.variants), first_seen(r.variant for r in mine))
        shapes = ordered([s.name for s in meta.shapes] + list(SHAPE_ORDER), first_seen(r.shape for r in mine))
        out.append((n, BalancingData([(v, n) for v in variants], shapes, data.rounds)))
    return out or None


@dataclass
class PlacementData:
    shapes: list
    placements: list  # [(placement, label)]
    variants: list
    cells: dict  # (shape, placement, variant) -> (median share or None, both, rounds, runs)
    failed: set  # (shape, placement, variant) with a failed run
    min_share: float


def gather_placement(rows: list) -> Optional[PlacementData]:
    """rows: sections.placement's (PlacementRun, StopWinner, FailedRun); the
    stop-winner assertion is not drawn."""
    everything = [r for r in at_two(rows) if not isinstance(r, StopWinner) and r.shape not in PLACEMENT_SKIPPED_SHAPES]
    runs = [r for r in everything if isinstance(r, PlacementRun)]
    if not runs:
        return None
    placements = first_seen(r.placement for r in everything)
    labels = {}
    for r in runs:
        if r.label and r.placement not in labels:
            labels[r.placement] = r.label
    variants = first_seen(r.variant for r in everything)
    shapes = ordered(list(SHAPE_ORDER), first_seen(r.shape for r in everything
                                                   if r.shape is not None
                                                   and r.shape not in PLACEMENT_SKIPPED_SHAPES))
    cells = {}
    for s in shapes:
        for p in placements:
            for v in variants:
                mine = sorted((r for r in runs if (r.shape, r.placement, r.variant) == (s, p, v)),
                              key=lambda r: r.run)
                if not mine:
                    continue
                shares = [x for x in (busiest_share(r.counts) for r in mine) if x is not None]
                cells[(s, p, v)] = (median(shares) if shares else None,
                                    sum(r.both_rounds for r in mine), sum(r.rounds for r in mine), len(mine))
    failed = {(r.shape, r.placement, r.variant) for r in everything if isinstance(r, FailedRun)}
    shares = [c[0] for c in cells.values() if c[0] is not None]
    return PlacementData(shapes, [(p, labels.get(p, "")) for p in placements], variants, cells, failed,
                         min(0.5, min(shares)) if shares else 0.5)


@dataclass
class CostData:
    modes: list
    arms: list
    workers: list
    bars: dict  # (mode, arm, workers) -> (median, min, max, n)


def gather_cost(meta: Optional[Meta], rows: list) -> Optional[CostData]:
    """rows: sections.cost's (WrkRun, Failed); a failed run is not drawn."""
    runs = [r for r in rows if isinstance(r, WrkRun)]
    if not runs:
        return None
    p = meta.cost if meta else None
    modes = ordered(list(p.modes if p else ()) + list(MODE_TITLES), first_seen(r.setting for r in runs))
    arms = ordered(list(p.arms if p else ()), first_seen(r.arm for r in runs))
    workers = sorted(set(r.workers for r in runs))
    bars = {}
    for m in modes:
        for a in arms:
            for w in workers:
                vals = sorted(r.rps for r in runs if (r.setting, r.arm, r.workers) == (m, a, w))
                if vals:
                    bars[(m, a, w)] = (median(vals), vals[0], vals[-1], len(vals))
    return CostData(modes, arms, workers, bars)


@dataclass
class PayoffData:
    panels: list  # [(connections, workers)]: each panel also draws the baseline (1 worker)
    cells: list  # [(arm, workers)]
    curves: dict  # (connections, arm, workers) -> (((fraction, ms), ...), from_raw: bool, rounds)


def gather_payoff(meta: Optional[Meta], run_dir: Path, rows: list) -> Optional[PayoffData]:
    """rows: sections.payoff's (WrkRun, Failed); a failed run is not drawn."""
    runs = []
    for r in (r for r in rows if isinstance(r, WrkRun)):
        raw = run_dir / "raw" / f"payoff-{r.arm}-w{r.workers}-c{r.setting}-r{r.round}.wrk.txt"
        safe = re.fullmatch(r"[A-Za-z0-9._-]+", r.arm) is not None  # an arm name, never a path
        points = read_wrk_distribution(raw) if safe and raw.is_file() else None
        if points is not None:
            runs.append((r, points, True))
        else:
            runs.append((r, ((0.5, r.p50), (0.99, r.p99)), False))
    if not runs:
        return None
    connections = sorted(set(r.setting for r, _, _ in runs))
    cells = ordered(list(meta.payoff.cells if meta and meta.payoff else ()),
                    first_seen((r.arm, r.workers) for r, _, _ in runs))
    curves = {}
    for c in connections:
        for arm, w in cells:
            mine = sorted(((r, p, raw) for r, p, raw in runs if (r.setting, r.arm, r.workers) == (c, arm, w)),
                          key=lambda t: t[0].round)
            if not mine:
                continue
            by_fraction = {}
            for _, points, _ in mine:
                for f, ms in points:
                    by_fraction.setdefault(f, []).append(ms)
            curve = tuple((f, median(by_fraction[f])) for f in sorted(by_fraction))
            curves[(c, arm, w)] = (curve, all(raw for _, _, raw in mine), len(mine))
    counts = sorted(set(w for _, w in cells if w != 1)) or [1]
    return PayoffData([(c, w) for c in connections for w in counts], cells, curves)


@dataclass
class BurstData:
    workers: list  # worker counts, one panel each
    arms: list
    bars: dict  # (workers, arm, per_worker) -> (median completion ms, min, max, bursts)
    per_worker: list  # K / workers


def gather_burst(meta: Optional[Meta], rows: list) -> Optional[BurstData]:
    """rows: sections.burst's (Burst, Failed); a failed step or an unanswered burst is not drawn."""
    bursts = [b for b in rows if isinstance(b, Burst) and b.completion_ms is not None]
    if not bursts:
        return None
    arms = first_seen(b.arm for b in bursts)
    workers = sorted(set(b.workers for b in bursts))
    per = sorted(set(b.k // b.workers for b in bursts))
    bars = {}
    for w in workers:
        for a in arms:
            for m in per:
                vals = sorted(b.completion_ms for b in bursts if (b.workers, b.arm, b.k) == (w, a, m * w))
                if vals:
                    bars[(w, a, m)] = (median(vals), vals[0], vals[-1], len(vals))
    return BurstData(workers, arms, bars, per)


# ---------------------------------------------------------------- drawing


def style_for(shapes: list) -> dict:
    out, extra = {}, 0
    for s in shapes:
        if s in SHAPE_STYLE:
            out[s] = SHAPE_STYLE[s]
        else:
            out[s] = EXTRA_STYLES[extra % len(EXTRA_STYLES)]
            extra += 1
    return out


def new_figure(width: float, height: float):
    from matplotlib.figure import Figure
    return Figure(figsize=(round(width, 2), round(height, 2)), dpi=DPI, layout="constrained")


def draw_balancing(data: BalancingData):
    n = len(data.variants)
    fig = new_figure(7.5, 1.6 + 0.34 * n)
    ax = fig.add_subplot()
    styles = balancing_axes(ax, data, "")
    fig.suptitle("Balancing: the busiest worker's share in each round", fontsize=10)
    balancing_legend(ax, data, styles)
    return fig


def balancing_legend(ax, data: BalancingData, styles: dict):
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = [Line2D([], [], linestyle="none", marker=styles[s][0], markerfacecolor="none",
                      markeredgecolor=styles[s][1], markeredgewidth=1.1, label=s) for s in data.shapes]
    handles.append(Patch(facecolor="#d9f0d3", label="within 2:1 (max/min <= 2)"))
    ax.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 1.04), ncol=len(handles),
              frameon=False, fontsize=8, borderaxespad=0)


def draw_balancing_workers(data: list):
    """A panel per worker count, each as balancing_shares.svg draws the run's own."""
    n = max(len(d.variants) for _, d in data)
    fig = new_figure(max(7.5, 1.6 + 3.4 * len(data)), 2.0 + 0.34 * n)
    axes = fig.subplots(1, len(data), squeeze=False)[0]
    shapes = first_seen(s for _, d in data for s in d.shapes)
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    styles = style_for(shapes)
    for k, (ax, (workers, d)) in enumerate(zip(axes, data)):
        balancing_axes(ax, d, f"{workers} workers", styles, key=(f"w{workers}",),
                       xlabel="busiest worker's share (1/N even, 1 all to one)")
        if k and [v for v, _ in d.variants] == [v for v, _ in data[0][1].variants]:
            ax.tick_params(axis="y", labelleft=False)  # the same rows as the first panel's
    fig.suptitle("Balancing at more workers: the busiest worker's share in each round (back-to-back)\n\n",
                 fontsize=10)
    handles = [Line2D([], [], linestyle="none", marker=styles[s][0], markerfacecolor="none",
                      markeredgecolor=styles[s][1], markeredgewidth=1.1, label=s) for s in shapes]
    handles.append(Patch(facecolor="#d9f0d3", label="within 2:1 (max/min <= 2)"))
    # The legend sits in the suptitle's second (blank) line, outside the layout.
    legend = fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.955), ncol=len(handles),
                        frameon=False, fontsize=8, borderaxespad=0)
    legend.set_in_layout(False)
    return fig


def balancing_axes(ax, data: BalancingData, title: str, styles: Optional[dict] = None, key: tuple = (),
                   xlabel: str = "busiest worker's share of the answered connections (1/N = even, 1.0 = all to one)"
                   ) -> dict:
    """One panel of busiest-worker shares, a row per variant (key: what makes
    its element ids unique in a figure of several panels); returns the
    shapes' styles."""
    from matplotlib.patches import Rectangle

    n = len(data.variants)
    styles = styles or style_for(data.shapes)
    lowest = min(1 / w for _, w in data.variants)
    slots = len(data.shapes)
    for i, (variant, workers) in enumerate(data.variants):
        ax.add_patch(Rectangle((1 / workers, i - 0.5), within_limit(workers) - 1 / workers, 1,
                               facecolor="#d9f0d3", edgecolor="none", zorder=0))
        if i:
            ax.axhline(i - 0.5, color="#e0e0e0", linewidth=0.6, zorder=1)
        any_round = False
        for j, shape in enumerate(data.shapes):
            shares = data.rounds.get((variant, shape), [])
            if not shares:
                continue
            any_round = True
            centre = i + (j - (slots - 1) / 2) * (0.8 / slots)
            spread = 0.8 / slots * 0.6
            ys = [centre + ((k - (len(shares) - 1) / 2) * spread / max(len(shares) - 1, 1)
                            if len(shares) > 1 else 0) for k in range(len(shares))]
            marker, colour = styles[shape]
            ax.plot(shares, ys, linestyle="none", marker=marker, markersize=5, markerfacecolor="none",
                    markeredgecolor=colour, markeredgewidth=1.1, zorder=3, gid=gid("share", *key, variant, shape))
        if not any_round:
            ax.text((lowest + 1) / 2, i, "no measured round", ha="center", va="center", fontsize=8,
                    color="#666666", style="italic", gid=gid("empty", *key, variant))
    ax.set_ylim(n - 0.5, -0.5)
    ax.set_xlim(lowest - 0.02, 1.02)
    ax.set_yticks(range(n), labels=[v for v, _ in data.variants])
    ax.tick_params(axis="y", length=0)
    ax.set_xlabel(xlabel)
    if title:
        ax.set_title(title, fontsize=9, loc="left")
    return styles


def draw_placement(data: PlacementData):
    from matplotlib.colors import Normalize

    cols, rows, panels = len(data.variants), len(data.placements), len(data.shapes)
    fig = new_figure(max(6.0, 1.6 + panels * (0.9 * cols + 0.4) + 1.0),
                     2.2 + 0.5 * rows + 0.18 * rows)
    axes = fig.subplots(1, panels, sharey=True, squeeze=False)[0]
    norm = Normalize(vmin=data.min_share, vmax=1.0)
    cmap = "YlOrRd"
    image = None
    for ax, shape in zip(axes, data.shapes):
        grid = [[float("nan")] * cols for _ in range(rows)]
        for r, (p, _) in enumerate(data.placements):
            for c, v in enumerate(data.variants):
                cell = data.cells.get((shape, p, v))
                if cell is not None and cell[0] is not None:
                    grid[r][c] = cell[0]
        image = ax.imshow(grid, cmap=cmap, norm=norm, aspect="auto", interpolation="nearest")
        image.cmap.set_bad("#eeeeee")
        for r, (p, _) in enumerate(data.placements):
            for c, v in enumerate(data.variants):
                cell = data.cells.get((shape, p, v))
                if cell is None:
                    text, dark = "failed" if (shape, p, v) in data.failed else "-", False
                elif cell[0] is None:
                    text, dark = f"none\n{cell[1]}/{cell[2]}", False
                else:
                    text, dark = f"{cell[0]:.2f}\n{cell[1]}/{cell[2]}", norm(cell[0]) > 0.6
                ax.text(c, r, text, ha="center", va="center", fontsize=7,
                        color="white" if dark else "black", gid=gid("cell", shape, p, v))
        ax.set_xticks(range(cols), labels=data.variants, rotation=30, ha="right", rotation_mode="anchor")
        ax.set_yticks(range(rows), labels=[p for p, _ in data.placements])
        ax.tick_params(length=0)
        ax.set_title(f"{shape}", fontsize=10)
    bar = fig.colorbar(image, ax=list(axes), shrink=0.9, pad=0.02)
    ticks = sorted({data.min_share, within_limit(2), 0.75, 1.0})
    bar.set_ticks(ticks, labels=[("2:1 " if abs(t - within_limit(2)) < 1e-9 else "") + f"{t:.2f}" for t in ticks])
    bar.set_label("median busiest-worker share over runs", fontsize=8)
    fig.suptitle("Placement: busiest worker's share (cell: median; k/n rounds both workers answered)",
                 fontsize=10)
    legend = [f"{p}: {label}" for p, label in data.placements if label]
    if legend:
        fig.supxlabel("\n".join(legend), x=0.01, ha="left", fontsize=7)
    return fig


def kilo(value, _pos=None) -> str:
    if value >= 1000:
        return f"{value / 1000:g}k"
    return f"{value:g}"


def draw_cost(data: CostData):
    from matplotlib.patches import Patch
    from matplotlib.ticker import FuncFormatter

    arms, workers = data.arms, data.workers
    fig = new_figure(max(6.4, 1.5 + 0.85 * len(arms)), 2.0 + 2.6 * len(data.modes))
    axes = fig.subplots(len(data.modes), 1, squeeze=False)[:, 0]
    width = 0.8 / len(workers)
    colours = {w: WORKER_COLOURS[k % len(WORKER_COLOURS)] for k, w in enumerate(workers)}
    for ax, mode in zip(axes, data.modes):
        for k, w in enumerate(workers):
            for i, arm in enumerate(arms):
                bar = data.bars.get((mode, arm, w))
                if bar is None:
                    continue
                med, lo, hi, _ = bar
                x = i + (k - (len(workers) - 1) / 2) * width
                ax.bar([x], [med], width=width * 0.92, color=colours[w], edgecolor="#333333", linewidth=0.5,
                       yerr=[[med - lo], [hi - med]], capsize=2.5, error_kw={"elinewidth": 0.8},
                       gid=gid("cost", mode, arm, f"w{w}"))
        ax.set_xticks(range(len(arms)), labels=arms, rotation=25, ha="right", rotation_mode="anchor")
        ax.set_xlim(-0.6, len(arms) - 0.4)
        ax.yaxis.set_major_formatter(FuncFormatter(kilo))
        ax.set_ylabel("requests/s")
        ax.set_title(MODE_TITLES.get(mode, mode), fontsize=10)
        ax.grid(axis="y", color="#e0e0e0", linewidth=0.6)
        ax.set_axisbelow(True)
    handles = [Patch(facecolor=colours[w], edgecolor="#333333", linewidth=0.5,
                     label=f"{w} worker" + ("" if w == 1 else "s")) for w in workers]
    axes[0].legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 1.12), ncol=len(handles),
                   frameon=False, fontsize=8, borderaxespad=0)
    fig.suptitle("Cost: req/s per arm (bar: median over rounds; whisker: min..max)", fontsize=10)
    return fig


def draw_payoff(data: PayoffData):
    from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullLocator

    panels = len(data.panels)
    fig = new_figure(max(6.4, 2.8 + 3.6 * panels), 4.4)
    axes = fig.subplots(1, panels, sharey=True, squeeze=False)[0]
    arms = first_seen(arm for arm, _ in data.cells)
    colours = {arm: CELL_COLOURS[k % len(CELL_COLOURS)] for k, arm in enumerate(arms)}
    fractions = sorted({f for curve, _, _ in data.curves.values() for f, _ in curve})
    all_ms = [ms for curve, _, _ in data.curves.values() for _, ms in curve if ms > 0]
    lo, hi = (min(all_ms), max(all_ms)) if all_ms else (0.1, 10.0)
    first = {}  # connections -> its first panel: the baseline's curve there keeps the plain id
    for panel in data.panels:
        first.setdefault(panel[0], panel)
    for ax, (conns, workers) in zip(axes, data.panels):
        for arm, w in data.cells:
            entry = data.curves.get((conns, arm, w))
            if entry is None or w not in (1, workers):
                continue
            curve, from_raw, n = entry
            points = [(f, ms) for f, ms in curve if ms > 0]
            label = arm + (", 1 worker (baseline)" if w == 1 else "") + ("" if from_raw else " (p50/p99 only)")
            ax.plot([ms for _, ms in points], [f for f, _ in points], marker="o" if w != 1 else "s",
                    markersize=3.5, linewidth=1.2, linestyle="-" if from_raw else "--",
                    color="#000000" if w == 1 else colours[arm],
                    label=label, gid=gid("cdf", f"c{conns}", arm, f"w{w}",
                                         *(["in", f"w{workers}"] if w == 1 and (conns, workers) != first[conns]
                                           else [])))
        ax.set_xscale("log")
        ax.set_xlim(lo / 1.3, hi * 1.3)
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}"))
        ax.xaxis.set_minor_locator(LogLocator(base=10, subs=tuple(float(k) for k in range(1, 10))))
        ax.xaxis.set_minor_formatter(FuncFormatter(lambda v, _p: ""))
        ax.set_yscale("logit")
        ax.set_ylim(0.4, 0.995)
        ax.yaxis.set_major_locator(FixedLocator(fractions or [0.5, 0.99]))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"p{v * 100:g}"))
        ax.yaxis.set_minor_locator(NullLocator())
        ax.grid(color="#e0e0e0", linewidth=0.6)
        ax.set_xlabel("latency (ms, log scale)")
        ax.set_title(f"{conns} connections, {workers} worker{'' if workers == 1 else 's'}", fontsize=10)
    axes[0].set_ylabel("fraction of requests at or below (median over rounds)")
    handles, labels = [], []
    for ax in axes:  # one legend for every panel, beside the last, in the cells' order
        for h, label in zip(*ax.get_legend_handles_labels()):
            if label not in labels:
                handles.append(h)
                labels.append(label)
    axes[-1].legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=7,
                    frameon=False, borderaxespad=0)
    fig.suptitle("Payoff: request latency CDF per arm (wrk --latency percentiles)", fontsize=10)
    return fig


def draw_burst(data: BurstData):
    from matplotlib.patches import Patch

    arms, per = data.arms, data.per_worker
    fig = new_figure(max(6.4, 1.5 + 0.7 * len(arms) * len(data.workers)), 4.2)
    axes = fig.subplots(1, len(data.workers), squeeze=False)[0]
    width = 0.8 / len(per)
    colours = {m: WORKER_COLOURS[k % len(WORKER_COLOURS)] for k, m in enumerate(per)}
    for ax, w in zip(axes, data.workers):
        for k, m in enumerate(per):
            for i, arm in enumerate(arms):
                bar = data.bars.get((w, arm, m))
                if bar is None:
                    continue
                med, lo, hi, _ = bar
                x = i + (k - (len(per) - 1) / 2) * width
                ax.bar([x], [med], width=width * 0.92, color=colours[m], edgecolor="#333333", linewidth=0.5,
                       yerr=[[med - lo], [hi - med]], capsize=2.5, error_kw={"elinewidth": 0.8},
                       gid=gid("burst", f"w{w}", arm, f"k{m * w}"))
        ax.set_xticks(range(len(arms)), labels=arms, rotation=35, ha="right", rotation_mode="anchor")
        ax.set_xlim(-0.6, len(arms) - 0.4)
        ax.set_title(f"{w} worker{'' if w == 1 else 's'}", fontsize=10)
        ax.grid(axis="y", color="#e0e0e0", linewidth=0.6)
        ax.set_axisbelow(True)
    axes[0].set_ylabel("burst completion, ms")
    handles = [Patch(facecolor=colours[m], edgecolor="#333333", linewidth=0.5, label=f"K = {m} x workers")
               for m in per]
    axes[0].legend(handles=handles, loc="upper left", ncol=1, frameon=False, fontsize=8)
    fig.suptitle("Bursts: completion time per arm (bar: median over the bursts; whisker: min..max)", fontsize=10)
    return fig


# ---------------------------------------------------------------- output


RC = {
    "svg.hashsalt": HASH_SALT,
    "svg.fonttype": "path",
    "font.family": "sans-serif",
    "font.sans-serif": [FONT],
    "font.size": 9,
    "figure.dpi": DPI,
    "savefig.dpi": DPI,
    "savefig.format": "svg",
    "savefig.bbox": None,
    "axes.formatter.use_locale": False,
    "axes.unicode_minus": False,
    "path.simplify": True,
}


def render(draw, data) -> tuple:
    """Draws under matplotlib's defaults plus RC (the user's matplotlibrc and any
    style in force are ignored) and returns (the SVG's bytes, the PNG's bytes)."""
    try:
        import matplotlib
    except ImportError:
        raise FiguresError("matplotlib is not installed (apt-get install python3-matplotlib)") from None
    except Exception as e:  # e.g. a matplotlibrc asking for a locale this machine lacks
        raise FiguresError(f"cannot load matplotlib: {type(e).__name__}: {e}") from None
    matplotlib.use("Agg")  # no pyplot is used; this only keeps any GUI backend out
    with matplotlib.rc_context():
        matplotlib.rcdefaults()
        matplotlib.rcParams.update(RC)
        fig = draw(data)
        svg, png = io.BytesIO(), io.BytesIO()
        fig.savefig(svg, format="svg", dpi=DPI, metadata=SVG_METADATA)
        fig.savefig(png, format="png", dpi=DPI, metadata=PNG_METADATA)
    return svg.getvalue(), png.getvalue()


def write_atomic(path: Path, data: bytes) -> None:
    _as_figures_input(results_io.write_atomic, path, data)


def plan(run_dir: Path, say: Callable[[str], None] = lambda line: None) -> dict:
    """Reads and checks every input first (nothing is drawn or written when one is
    corrupt): {figure file name: (draw function, data)} for the figures to draw."""
    run_dir = Path(run_dir)
    meta = read_meta(run_dir)
    todo = {}

    def study(name: str, read, gather, draw, figure: str, optional: bool = False):
        """optional: a figure most runs have nothing for (said nothing about)."""
        path = run_dir / name
        if not path.is_file():
            if not optional:
                say(f"figures: no {name} in {shown(run_dir)}; {figure} not drawn")
            return
        data = gather(read_rows(path, read))
        if data is None:
            if not optional:
                say(f"figures: {shown(path)} has no measured row; {figure} not drawn")
            return
        todo[figure] = (draw, data)

    study("balancing.jsonl", read_balancing, lambda rows: gather_balancing(meta, rows), draw_balancing, BALANCING)
    study("balancing.jsonl", read_balancing, lambda rows: gather_balancing_workers(meta, rows),
          draw_balancing_workers, BALANCING_WORKERS, optional=True)  # only a run with rows at more worker counts
    study("placement.jsonl", read_placement, gather_placement, draw_placement, PLACEMENT)
    study("cost.jsonl", read_cost, lambda rows: gather_cost(meta, rows), draw_cost, COST)
    study("payoff.jsonl", read_payoff, lambda rows: gather_payoff(meta, run_dir, rows),
          draw_payoff, PAYOFF)
    study("burst.jsonl", read_burst, lambda rows: gather_burst(meta, rows), draw_burst, BURST)
    return todo


def make_figures(run_dir: Path, out_dir: Path, say: Callable[[str], None] = lambda line: None) -> list:
    """Draws the run in run_dir as SVG files in out_dir (created if missing), each
    with a PNG copy beside it, and returns the SVG paths written, sorted. A figure whose input is absent is skipped
    and any old copy of it in out_dir removed; say(line) hears why. Raises
    FiguresError (InputError: a corrupt input, FILE:LINE) before writing anything."""
    out_dir = Path(out_dir)
    todo = plan(run_dir, say)
    rendered = {name: render(draw, data) for name, (draw, data) in sorted(todo.items())}
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(out_dir, None, f"cannot create: {e.strerror or e}") from None
    written = []
    for name in FIGURES:
        path = out_dir / name
        png = path.with_suffix(".png")  # the raster copy the report links (DESIGN: figures are PNG)
        if name in rendered:
            write_atomic(path, rendered[name][0])
            write_atomic(png, rendered[name][1])
            written.append(path)
        else:
            for stale in (path, png):
                if stale.is_file():
                    try:
                        stale.unlink()
                    except OSError as e:
                        raise InputError(stale, None, f"cannot remove the stale figure: {e.strerror or e}") from None
    return sorted(written)


# ---------------------------------------------------------------- command line


class Parser(argparse.ArgumentParser):
    def error(self, message):
        # One line naming the bad argument, not argparse's usage block.
        sys.stderr.write(f"figures: {message} (see --help)\n")
        sys.exit(2)


def run_dir_arg(value: str) -> Path:
    path = Path(value)
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"{value!r} is not a directory")
    return path


def out_dir_arg(value: str) -> Path:
    path = Path(value)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{value!r} exists and is not a directory")
    return path


def main(argv=None) -> int:
    parser = Parser(
        prog="figures.py",
        description="Draw one measured run as SVG figures: " + ", ".join(FIGURES) + ". "
                    "Re-derives only; a figure whose input file is absent is skipped.",
        epilog="Exit status: 0 drawn, 1 an input is corrupt (one line names FILE:LINE), "
               "2 bad usage. Example: /usr/bin/python3 -m report.figures "
               "--run-dir results/linux/20261129T104026Z --out report/figures",
    )
    parser.add_argument("--run-dir", type=run_dir_arg, required=True, metavar="DIR",
                        help="the run directory (results/linux/STAMP) holding meta.json and the *.jsonl files")
    parser.add_argument("--out", type=out_dir_arg, default=DEFAULT_OUT, metavar="DIR",
                        help="directory to write the SVG files into (default: report/figures in the repository)")
    args = parser.parse_args(argv)
    try:
        written = make_figures(args.run_dir, args.out, say=print)
    except FiguresError as e:
        sys.stderr.write(e.render() + "\n")
        return 1
    names = ", ".join(p.name for p in written) or "nothing"
    print(f"figures: wrote {names} in {shown(args.out)} from {shown(args.run_dir)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
