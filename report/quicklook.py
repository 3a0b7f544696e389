"""quicklook.py: a first look at a run in the terminal, drawn by gnuplot.

    /usr/bin/python3 -m report.quicklook --run-dir results/linux/STAMP

`make measure` ends with it. Two text plots (gnuplot's `set terminal dumb 100 30`):

  balancing  the busiest worker's median share of a round's connections per
             variant (over every shape and round; 1/N even, 1.0 all to one),
             with the 2:1 line; variants are numbered on the x axis (a dumb
             terminal cannot rotate labels) and listed after the plot
  cost       median req/s per arm at 2 workers, keep-alive (K) and close (C),
             arms numbered and listed the same way

It reads the run's files with the report's readers, through figures.py's
read_meta and read_rows (no matplotlib needed). It is a convenience, never a
gate: without gnuplot it prints one line saying so, a missing or corrupt input
skips that plot with a line saying why (a corrupt meta.json: the order is the
rows' own), and the exit status is 0 unless the arguments are bad (2). The
report and the SVG figures are what to read; this is the glance at the end of
a campaign.
"""

import sys

if __name__ == "__main__" and not __package__:  # run by path: the packages it imports are not found
    sys.stderr.write("quicklook.py: run it as a module from the repository's top: "
                     "/usr/bin/python3 -m report.quicklook\n")
    sys.exit(2)

import argparse
import shutil
import statistics
import subprocess
from pathlib import Path

from report import figures  # (report/figures.py, beside this file)
from report.sections.balancing import read_balancing  # (the report's row readers)
from report.sections.cost import read_cost
WIDTH, HEIGHT = 100, 30
NO_GNUPLOT = "quicklook: gnuplot not found; skipping the terminal plots (apt-get install gnuplot-nox)"


def numbered(names: list, notes: dict = None) -> list:
    """'  1 bare   2 bare-threads ...' wrapped to the plot's width."""
    notes = notes or {}
    items = [f"{i:>2} {name}{notes.get(name, '')}" for i, name in enumerate(names, start=1)]
    column = max(len(s) for s in items) + 3
    per_line = max(1, WIDTH // column)
    lines = []
    for start in range(0, len(items), per_line):
        lines.append("".join(s.ljust(column) for s in items[start:start + per_line]).rstrip())
    return lines


def gnuplot(script: str):
    """Runs gnuplot on script (data inline as datablocks); the plot's text, or None
    after printing why it failed."""
    try:
        proc = subprocess.run(["gnuplot"], input=script, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        print(f"quicklook: gnuplot failed: {e}")
        return None
    if proc.returncode != 0:
        first = next((line for line in proc.stderr.splitlines() if line.strip()), "no message")
        print(f"quicklook: gnuplot exited {proc.returncode}: {first.strip()}")
        return None
    lines = [line.rstrip() for line in proc.stdout.replace("\f", "").split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def datablock(name: str, rows: list) -> str:
    return f"${name} << EOD\n" + "".join(" ".join(f"{v:.6g}" if isinstance(v, float) else str(v)
                                                  for v in row) + "\n" for row in rows) + "EOD\n"


def read(run_dir: Path, name: str, reader, what: str):
    """The rows of run_dir/name (reader: its study's row reader), or None after
    saying why the plot is skipped."""
    path = run_dir / name
    if not path.is_file():
        print(f"quicklook: no {name} in {figures.shown(run_dir)}; skipping the {what} plot")
        return None
    try:
        return figures.read_rows(path, reader)
    except figures.FiguresError as e:
        print(f"{e.render().replace('figures:', 'quicklook:', 1)}; skipping the {what} plot")
        return None


def balancing_plot(run_dir: Path, meta) -> list:
    rows = read(run_dir, "balancing.jsonl", read_balancing, "balancing")
    if rows is None:
        return []
    data = figures.gather_balancing(meta, rows)
    if data is None:
        return ["quicklook: balancing.jsonl has no measured round; skipping the balancing plot"]
    names = [v for v, _ in data.variants]
    points, notes = [], {}
    for i, (variant, workers) in enumerate(data.variants, start=1):
        shares = sorted(s for shape in data.shapes for s in data.rounds.get((variant, shape), []))
        if shares:
            points.append((i, statistics.median(shares)))
        else:
            notes[variant] = " (no round)"
    workers = sorted({w for _, w in data.variants})
    limit = figures.within_limit(workers[0]) if len(workers) == 1 else figures.within_limit(2)
    low = min(1 / w for w in workers)
    script = (f"set terminal dumb {WIDTH} {HEIGHT}\n"
              "set title \"balancing: the busiest worker's median share per variant (1/N even, 1.0 all to one)\"\n"
              f"set xrange [0:{len(names) + 1}]\nset yrange [{low - 0.05:.3f}:1.05]\n"
              "set xtics 1 nomirror\nset ytics nomirror\nunset key\n"
              + datablock("shares", points)
              + "plot $shares using 1:2 with impulses title \"median share\", "
                "$shares using 1:2 with points pt \"o\" notitle, "
                f"{limit:.6f} with lines dt 2 title \"2:1 (max/min = 2)\"\n")
    text = gnuplot(script)
    if text is None:
        return []
    key = f"o: median over all shapes and rounds; flat line: 2:1 (share {limit:.3f}); variants:"
    return [text, key] + numbered(names, notes)


def cost_plot(run_dir: Path, meta) -> list:
    rows = read(run_dir, "cost.jsonl", read_cost, "cost")
    if rows is None:
        return []
    data = figures.gather_cost(meta, rows)
    modes = [m for m in ("keepalive", "close") if data is not None and m in data.modes]
    arms = [] if data is None else [a for a in data.arms if any((m, a, 2) in data.bars for m in modes)]
    if not arms:
        return ["quicklook: cost.jsonl has no measured 2-worker run; skipping the cost plot"]
    blocks, plots = "", []
    for mode, offset, mark, title in (("keepalive", -0.15, "K", "keep-alive"), ("close", 0.15, "C", "close")):
        points = [(i + offset, data.bars[(mode, a, 2)][0] / 1000) for i, a in enumerate(arms, start=1)
                  if (mode, a, 2) in data.bars]
        if not points:
            continue
        blocks += datablock(mode, points)
        plots.append(f"${mode} using 1:2 with impulses notitle, "
                     f"${mode} using 1:2 with points pt \"{mark}\" title \"{title} ({mark})\"")
    top = max(data.bars[(m, a, 2)][0] for m in modes for a in arms if (m, a, 2) in data.bars) / 1000
    script = (f"set terminal dumb {WIDTH} {HEIGHT}\n"
              "set title \"cost: median requests/s per arm at 2 workers (thousands)\"\n"
              f"set xrange [0:{len(arms) + 1}]\nset yrange [0:{top * 1.15:.3f}]\n"
              "set xtics 1 nomirror\nset ytics nomirror\nset format y \"%gk\"\nunset key\n"
              + blocks + "plot " + ", ".join(plots) + "\n")
    text = gnuplot(script)
    if text is None:
        return []
    return [text, "K: keep-alive, C: Connection: close (median over rounds); arms by number:"] + numbered(arms)


class Parser(argparse.ArgumentParser):
    def error(self, message):
        sys.stderr.write(f"quicklook: {message} (see --help)\n")
        sys.exit(2)


def main(argv=None) -> int:
    parser = Parser(
        prog="quicklook.py",
        description="Print quick-look text plots of one run (balancing shares, cost req/s) with "
                    "gnuplot's dumb terminal. Skips what it cannot draw, with a line saying why.",
        epilog="Exit status: 0 (also when gnuplot or an input is missing), 2 bad usage. "
               "Example: /usr/bin/python3 -m report.quicklook --run-dir results/linux/20261129T104026Z",
    )
    parser.add_argument("--run-dir", type=figures.run_dir_arg, required=True, metavar="DIR",
                        help="the run directory (results/linux/STAMP)")
    args = parser.parse_args(argv)
    if shutil.which("gnuplot") is None:
        print(NO_GNUPLOT)
        return 0
    try:
        meta = figures.read_meta(args.run_dir)
    except figures.FiguresError as e:
        print(f"{e.render().replace('figures:', 'quicklook:', 1)}; variants in file order")
        meta = None
    for plot in (balancing_plot, cost_plot):
        lines = plot(args.run_dir, meta)
        if lines:
            print("\n".join(lines))
            print()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # `... | head`: the reader has seen enough
        sys.stdout = None
        sys.exit(0)
