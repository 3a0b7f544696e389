"""report.py: turn one measured run under results/linux/ into report/linux.md.

`make report` only re-derives: this reads the run's meta.json and its JSON Lines
files and writes markdown tables, nothing else. The output is a pure function of
the run's files (no generation time, stable ordering), so regenerating from the
same run gives byte-identical output, and a golden test can pin it.

This file is the driver: the command line, which run, the order of the
sections, writing the file. Each study is a module under report/sections/
owning its row format, its one row reader (figures.py reads rows through the
same readers) and its section; report/common.py holds the meta.json reader and
the helpers several sections share. STUDIES below lists the studies in the
report's order: a new study is one module and one line there.

Any problem with the inputs is reported as ONE line, `report: FILE:LINE: what`,
and exit status 1; usage errors exit 2. Standard library only (the figures
need matplotlib).
"""

import sys

if __name__ == "__main__" and not __package__:  # run by path: the packages it imports are not found
    sys.stderr.write("report.py: run it as a module from the repository's top: "
                     "/usr/bin/python3 -m report.report\n")
    sys.exit(2)

import argparse
import re
from pathlib import Path

from acceptlab.results_io import InputError
from acceptlab.results_io import decode_utf8, read_bytes, shown, write_atomic
from report import advice, figures  # (report/advice.py: the diagnosis's advice; figures.py: the SVG figures)
from report.common import Meta, plural, read_meta
from report.sections import (balancing, burst, census, cost, diagnosis, faults, latency, models, payoff, peers, perturbation,
                             placement, profile, reload, respawn, throughput, timeline, trace)

REPO = Path(__file__).resolve().parent.parent
DEFAULT_RESULTS = REPO / "results" / "linux"
DEFAULT_OUT = REPO / "report" / "linux.md"

RUN_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")

# The report's sections, in order. A study whose file the run lacks is left
# out (or says it was not measured, where its Study has `absent`).
STUDIES = (
    balancing.STUDY,
    perturbation.STUDY,
    trace.TRACE,
    peers.STUDY,
    diagnosis.STUDY,
    census.STUDY,
    timeline.STUDY,
    placement.STUDY,
    models.STUDY,
    respawn.STUDY,
    reload.STUDY,
    latency.MUTEX_DELAY,
    latency.SLOWVIEW,
    faults.STUDY,
    cost.STUDY,
    throughput.STUDY,
    payoff.STUDY,
    burst.STUDY,
    trace.TRACE_OVERHEAD,
    profile.STUDY,
)


# ---------------------------------------------------------------- reading files


def read_canonical(results_dir: Path) -> str:
    """The run name CANONICAL holds: one non-empty line naming a directory beside it."""
    path = results_dir / "CANONICAL"
    text = decode_utf8(path, read_bytes(path))
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        raise InputError(path, 1, "empty: expected one line naming a run directory")
    for extra, line in enumerate(lines[1:], start=2):
        if line.strip():
            raise InputError(path, extra, "expected one line naming a run directory, found more")
    name = lines[0].strip()
    if not RUN_NAME_RE.match(name):
        raise InputError(path, 1, f"{name!r} is not a run directory name")
    if not (results_dir / name).is_dir():
        raise InputError(path, 1, f"names run {name!r}, but {shown(results_dir / name)} does not exist")
    return name


def code(text: str) -> str:
    text = " ".join(text.split())
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def render_header(meta: Meta, studies: list) -> list:
    commit = code(meta.git_commit) + (" (dirty tree)" if meta.git_dirty else "")
    shapes = ", ".join(s.label() for s in meta.shapes)
    tools = ", ".join(f"{name} {' '.join(v.split())}" for name, v in meta.tools) or "none recorded"
    files = ", ".join(code(s.filename) for s in studies)
    return [
        "# acceptlab: Linux report",
        "",
        f"Built by `report/report.py` from one measured run's `meta.json` and {files}; "
        "it re-derives and never measures, so the same run gives the same file.",
        "",
        f"- Run: {code(meta.stamp)}, measured {meta.date}",
        f"- Commit: {commit}",
        f"- Kernel: {code(meta.kernel)}",
        f"- CPU: {' '.join(meta.cpu_model.split())} x {meta.cpus}",
        f"- Parameters: {plural(meta.workers, 'worker')}, {plural(meta.rounds, 'round')} per shape; "
        f"shapes {shapes}; arms {', '.join(meta.variants)}",
        f"- Tools: {tools}",
        "",
    ]


def build_report(results_dir: Path, run: str) -> tuple:
    """Returns (markdown text, rounds counted). Raises InputError."""
    run_dir = results_dir / run
    if not run_dir.is_dir():
        raise InputError(run_dir, None, f"run {run!r} not found: no such directory")
    meta = read_meta(run_dir)
    sections, present, rounds, parsed = [], [], 0, {}
    for study in STUDIES:
        path = run_dir / study.filename
        if not path.exists():
            if study.absent:
                sections += study.absent(meta)
            continue
        rows = study.read(path)
        rounds += sum(study.is_round(r) for r in rows)
        present.append(study)
        parsed[study.name] = rows
        if study.reads:
            sections += study.render(meta, rows, {name: parsed.get(name) for name in study.reads})
        else:
            sections += study.render(meta, rows)
    if not present:
        raise InputError(run_dir, None, "no study results in the run (expected one of "
                         + ", ".join(s.filename for s in STUDIES) + ")")
    lines = render_header(meta, present) + sections
    while lines and lines[-1] == "":
        lines.pop()
    return "\n".join(lines) + "\n", rounds



# ---------------------------------------------------------------- command line


class Parser(argparse.ArgumentParser):
    def error(self, message):
        # One line naming the bad argument, not argparse's usage block.
        sys.stderr.write(f"report: {message} (see --help)\n")
        sys.exit(2)


def run_name(value: str) -> str:
    if not RUN_NAME_RE.match(value):
        raise argparse.ArgumentTypeError(f"{value!r} is not a run directory name")
    return value


FIGURE_CAPTIONS = {
    "balancing_shares.svg": "Balancing: the busiest worker's share of each round, per arm and shape; "
                            "the band is within 2:1",
    "balancing_workers.svg": "Balancing at more workers: the busiest worker's share of each round, a panel per "
                             "worker count; the band is within 2:1",
    "placement_heatmap.svg": "Placement: the busiest worker's median share per placement and arm, with "
                             "the rounds in which both workers answered",
    "cost_bars.svg": "Cost: median req/s per arm and worker count (bars: min to max over the rounds)",
    "payoff_latency.svg": "Payoff: latency distribution (wrk's percentiles) per arm, at each connection count "
                          "and worker count, beside the baseline",
    "burst_completion.svg": "Bursts: median completion time per arm, K and worker count (whiskers: min to max "
                            "over the bursts)",
}


def render_figures(drawn: list) -> str:
    """The Figures section: one image link per figure drawn (report/figures/)."""
    if not drawn:
        return ""
    lines = ["", "## Figures", "",
             "Drawn by `report/figures.py` from the same run (matplotlib: PNG, and SVG beside each; fixed fonts, "
             "no timestamps)."]
    for path in drawn:
        caption = FIGURE_CAPTIONS.get(path.name, path.stem)
        png = path.with_suffix(".png").name
        lines += ["", f"![{caption}](figures/{png})", "", f"*{caption}.* ([SVG](figures/{path.name}))"]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = Parser(
        prog="report.py",
        description="Write report/linux.md from one measured run under results/linux/. "
                    "Re-derives only: it reads meta.json and the run's JSON Lines files.",
        epilog="Exit status: 0 written, 1 an input is missing or corrupt (one line names "
               "FILE:LINE), 2 bad usage. Example: /usr/bin/python3 -m report.report "
               "--run 20261129T081500Z --out /tmp/linux.md",
    )
    parser.add_argument("--results-dir", type=Path, default=DEFAULT_RESULTS, metavar="DIR",
                        help="directory holding CANONICAL and the run directories "
                             "(default: results/linux in the repository)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, metavar="FILE",
                        help="markdown file to write (default: report/linux.md in the repository)")
    parser.add_argument("--run", type=run_name, metavar="STAMP",
                        help="run directory to report (default: the one DIR/CANONICAL names)")
    args = parser.parse_args(argv)
    try:
        run = args.run or read_canonical(args.results_dir)
        text, rounds = build_report(args.results_dir, run)
        # The figures sit beside the markdown they are linked from.
        drawn = figures.make_figures(args.results_dir / run, args.out.parent / "figures")
        text += render_figures(drawn)
        write_atomic(args.out, text.encode("utf-8"))
        # What the diagnosis advises, from the same run, beside the report
        # (report/advice.tsv; report/advice.py).
        advice_out = args.out.parent / "advice.tsv"
        write_atomic(advice_out, advice.build(args.results_dir, run).encode("utf-8"))
    except InputError as e:
        sys.stderr.write(e.render() + "\n")
        return 1
    except figures.FiguresError as e:
        sys.stderr.write(e.render() + "\n")
        return 1
    print(f"report: wrote {shown(args.out)} and {shown(advice_out)} from run {run} ({plural(rounds, 'round')})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
