"""The placement study (placement.jsonl): which worker wins under each CPU
placement of the workers and the probe, and the stop-winner assertion. Its
rows are also what figures.py's placement heat map is drawn from."""

import json
from dataclasses import dataclass
from typing import Optional

from common import (Meta, RowError, Study, cell_text, get, get_bool, get_counter, get_int, get_split, get_str, ordered,
                    plural, row_reader)


SEED_002 = "shared/seeds/002_31b119a6e806d5e9.txt"
OF = 80  # the note's oneshot run: 10 rounds of 8 connections


def _busiest(runs, variant, placement):
    """The busiest worker's connections in each oneshot run of variant at
    placement, scaled to the note's 80 per run."""
    return [round(int(r.split.split("/")[0]) * OF / (r.rounds * 8)) for r in runs
            if (r.variant, r.placement, r.shape) == (variant, placement, "oneshot")]


def _verdict(ok, measured):
    return ("agrees: " if ok else "**disagrees**: ") + measured


def _range_check(variant, placement, lo, hi):
    def check(runs, stops):
        got = _busiest(runs, variant, placement)
        if not got:
            return None
        return _verdict(all(lo <= n <= hi for n in got),
                        f"{variant} {' and '.join(map(str, got))} of {OF} to one worker")
    return check


def _every_placement(variant, lo, hi):
    def check(runs, stops):
        got = [n for p in dict.fromkeys(r.placement for r in runs) for n in _busiest(runs, variant, p)]
        if not got:
            return None
        span = f"{min(got)}" if min(got) == max(got) else f"{min(got)} to {max(got)}"
        return _verdict(all(lo <= n <= hi for n in got),
                        f"{variant} {span} of {OF} to the busiest worker over {len(got)} runs in every placement")
    return check


def _hog_check(runs, stops):
    """The note: a hog beside either worker moves the split toward even.
    Toward even: every run within 2:1 and the median busiest below nothing
    pinned's."""
    base = sorted(_busiest(runs, "bare", "unpinned"))
    if not base:
        return None
    parts, held = [], []
    for placement, where in (("hog-beside-worker0", "beside worker 0"), ("hog-beside-worker1", "beside worker 1")):
        got = _busiest(runs, "bare", placement)
        if not got:
            continue
        even = all(n <= OF * 2 // 3 for n in got) and sorted(got)[len(got) // 2] < base[len(base) // 2]
        held.append(even)
        parts.append(f"{where} {' and '.join(map(str, got))} of {OF} ({'toward even' if even else 'not toward even'})")
    if not held:
        return None
    text = "; ".join(parts) + f", against {' and '.join(map(str, base))} with nothing pinned"
    if all(held):
        return "agrees: " + text
    return ("**disagrees**: " if not any(held) else "**disagrees in part**: ") + text


def _stop_check(runs, stops):
    if not stops:
        return None
    held = sum(s.held for s in stops)
    return _verdict(held == len(stops), f"held in {held} of {plural(len(stops), 'placement')}")


# The note's rows, each with how this run's rows answer it (None: this run
# has nothing to compare, e.g. a placement this machine cannot make).
PLACEMENT_REFERENCE = (
    ("bare race, nothing pinned (15 runs)", "63–77 of 80 to one worker", _range_check("bare", "unpinned", 63, 77)),
    ("bare race, workers on CPUs 0 and 1, probe on CPU 1", "80/0 in four runs of five, the fifth 79/1 "
     "(all to the worker on CPU 0)", _range_check("bare", "pinned-probe-cpu1", 79, 80)),
    ("bare race, probe on a CPU of its own (CPU 2)", "70–76 of 80 to one worker", None),
    ("bare race, everything on one CPU", "alternates, 45/35", _range_check("bare", "one-cpu", 40, OF * 2 // 3)),
    ("bare race, a CPU hog beside either worker", "moves the split toward even", _hog_check),
    ("EPOLLEXCLUSIVE (the note's Python model)", "80/0 in every placement", _every_placement("exclusive", 80, 80)),
    ("per-worker SO_REUSEPORT", "40/40 to 46/34 in every placement", _every_placement("reuseport", 40, 46)),
    ("the winner SIGSTOPped", "the other answers 80 of 80; SIGCONT, SIGTERM: exit 0, no crash or respawn",
     _stop_check),
)


@dataclass(frozen=True)
class PlacementRun:
    line: int
    placement: str
    label: str
    variant: str
    shape: str
    run: int
    rounds: int
    split: str
    ratio: Optional[float]
    starved: int
    both_rounds: int
    counts: tuple  # (worker, connections) over the run's rounds, as the row lists them
    workers: Optional[int] = None  # the server's worker count, when the row says it (2 before it did)


@dataclass(frozen=True)
class FailedRun:
    """A placement and variant whose step failed; shape: the shape it was in, when the row says."""
    line: int
    placement: str
    variant: str
    shape: Optional[str]
    error: str
    workers: Optional[int] = None


@dataclass(frozen=True)
class StopWinner:
    line: int
    placement: str
    label: str
    variant: str
    held: bool
    before: Optional[str]
    other: Optional[int]
    of: Optional[int]
    exit: Optional[int]
    crash: int
    why: Optional[str]
    workers: Optional[int] = None


def parse_placement_row(obj: dict, line: int):
    placement = get_str(obj, "placement")
    variant = get_str(obj, "variant")
    workers = get_int(obj, "workers", 1) if "workers" in obj else None
    if "error" in obj:
        shape = obj.get("shape")
        return FailedRun(line, placement, variant, shape if isinstance(shape, str) and shape.strip() else None,
                         str(obj["error"]), workers)
    label = get_str(obj, "label")
    shape = get_str(obj, "shape")
    if shape == "stop_winner":
        held = get_bool(obj, "held")
        return StopWinner(line, placement, label, variant, held, obj.get("before"), obj.get("other_answered"),
                          obj.get("of"), obj.get("exit"), get_int(obj, "crash_or_respawn", 0), obj.get("why"),
                          workers)
    ratio = get(obj, "ratio")
    if ratio is not None and (isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or ratio < 1):
        raise RowError(f'"ratio" must be a number >= 1 or null, got {json.dumps(ratio)}')
    run, rounds = get_int(obj, "run", 1), get_int(obj, "rounds", 1)
    split, starved, both = get_split(obj, "split"), get_int(obj, "starved", 0), get_int(obj, "both_answered_rounds", 0)
    if both > rounds:
        raise RowError(f'"both_answered_rounds" is {both}, more than "rounds" ({rounds})')
    return PlacementRun(line, placement, label, variant, shape, run, rounds, split,
                        None if ratio is None else float(ratio), starved, both,
                        tuple(get_counter(obj, "counts").items()), workers)


def at_two(rows: list) -> list:
    """The rows at 2 workers (every row from before rows said their count):
    the main tables', the reference rows' and the figure's."""
    return [r for r in rows if r.workers in (None, 2)]


def render_placement(meta: Meta, all_rows: list) -> list:
    rows = at_two(all_rows)
    wide = [r for r in all_rows if r.workers not in (None, 2)]
    out = ["## Placement: which worker wins is CPU placement", ""]
    runs = [r for r in rows if isinstance(r, PlacementRun)]
    n = max((r.run for r in runs), default=0)
    oneshot = max((r.rounds for r in runs if r.shape == "oneshot"), default=10)
    out.append(
        "What was measured: the scheduling-stickiness note's experiment on this machine. Each placement "
        "pins (or not) the 2 workers and the probe, adds a CPU hog, or moves the probe into a network "
        "namespace of its own that reaches the server over a veth pair (off loopback's wake path). Per "
        f"placement and variant one server; the probe runs {plural(n, 'run')} of each shape with 10 ms between "
        f"rounds: oneshot is the note's probe (a run is {oneshot} rounds of 8 sequential connections, each closed "
        f"before the next: {oneshot * 8} per run), burst 32 and ramp 32 (5 ms apart) are one round per run. Each "
        f"cell holds the runs' splits and, in brackets, in how many rounds both workers answered (of "
        f"{n * oneshot} for oneshot, of {n} otherwise).")
    out.append("")
    if not runs:
        return out + ["No placement run was recorded.", ""] + render_more_workers(meta, wide)
    placements = list(dict.fromkeys(r.placement for r in runs))
    labels = {r.placement: r.label for r in runs}
    variants = ordered(meta.variants, {r.variant for r in runs})
    for shape in dict.fromkeys(r.shape for r in runs):
        out += [f"### {shape}", "", "| placement | " + " | ".join(variants) + " |",
                "|---|" + "---|" * len(variants)]
        for p in placements:
            cells = []
            for v in variants:
                mine = sorted((r for r in runs if (r.placement, r.variant, r.shape) == (p, v, shape)),
                              key=lambda r: r.run)
                if not mine:
                    failed = [r for r in rows if isinstance(r, FailedRun) and (r.placement, r.variant) == (p, v)]
                    cells.append("failed: " + cell_text(failed[0].error) if failed else "not run")
                    continue
                both = sum(r.both_rounds for r in mine)
                total = sum(r.rounds for r in mine)
                cells.append(" ".join(r.split for r in mine) + f" ({both}/{total})")
            out.append(f"| {cell_text(labels[p])} | " + " | ".join(cells) + " |")
        out.append("")
    stops = [r for r in rows if isinstance(r, StopWinner)]
    if stops:
        out += ["### The fairness-free assertion (`--stop-winner`, bare)", "",
                "10 x 8 oneshot rounds, then the probe SIGSTOPs the worker that answered most and runs them "
                "again: the other must answer every connection; then SIGCONT and SIGTERM, and the server must "
                "exit 0 with no worker reaped or respawned before the stop.", "",
                "| placement | before | other worker, winner stopped | exit | reaped or respawned before the stop | held |",
                "|---|---|---|---|---|---|"]
        for s in stops:
            other = f"{s.other} of {s.of}" if s.other is not None else cell_text(s.why or "no result")
            out.append(f"| {cell_text(s.label)} | {s.before or '-'} | {other} | "
                       f"{'-' if s.exit is None else s.exit} | {s.crash} | {'yes' if s.held else 'NO'} |")
        out.append("")
    out.append("**What this shows.** " + placement_findings(runs, stops, placements, labels, variants))
    out.append("")
    out += [f"### Reference rows (not measured here)", "",
            f'Quoted from the seed design note `{SEED_002}` ("Scheduling stickiness"), measured by that note in '
            "a 4-vCPU Linux container with its own server (10 rounds x 8 sequential connections per run); "
            "not results of this run. \"This run\" says whether this run's oneshot rows (scaled to 80 "
            "connections a run) agree with each: within the note's range, or for the hog, every run within "
            "2:1 and the median busiest worker below nothing pinned's; \"-\" where this run has nothing to "
            "compare (this machine has 2 CPUs).", "",
            "| what | figures | this run | source |", "|---|---|---|---|"]
    disagree = []
    for what, figures, check in PLACEMENT_REFERENCE:
        verdict = check(runs, stops) if check else None
        if verdict and verdict.startswith("**disagrees"):
            disagree.append(what)
        out.append(f"| {what} | {figures} | {verdict or '-'} | `{SEED_002}` |")
    out.append("")
    if disagree:
        out.append("**Where this run disagrees with the note.** " + "; ".join(disagree) + ": see \"this run\" "
                   "above. The note's figures come from another machine (4 vCPUs, its own server); where the "
                   "data here differ, the report keeps both and does not adjust either.")
        out.append("")
    return out + render_more_workers(meta, wide)


def render_more_workers(meta: Meta, rows: list) -> list:
    """Placement at more workers than CPUs: a table per worker count
    (placement x variant), each cell the oneshot and burst runs' splits."""
    runs = [r for r in rows if isinstance(r, PlacementRun)]
    failed = [r for r in rows if isinstance(r, FailedRun)]
    if not runs and not failed:
        return []
    out = ["### Where it applies at more workers", "",
           "The pinned placements above are about 2 workers on this machine's 2 CPUs; with more workers than "
           "CPUs what applies is nothing pinned and a CPU hog beside worker 0 (the workers alternating over "
           "CPUs 0 and 1, the hog on CPU 0). One server per placement, variant and worker count; one run of "
           "the note's oneshot (10 rounds of 8 sequential connections) and one burst of 16 connections per "
           "worker. Each cell: the oneshot run's split, then the burst's, each with its 2:1 verdict (ok within "
           "max/min <= 2, out outside; a worker with none is out).", ""]
    variants = ordered(meta.variants, {r.variant for r in rows})
    findings = []
    for n in sorted({r.workers for r in rows}):
        mine = [r for r in runs if r.workers == n]
        placements = list(dict.fromkeys(r.placement for r in rows if r.workers == n))
        labels = {r.placement: r.label for r in mine}
        out += [f"#### {n} workers", "", "| placement | " + " | ".join(variants) + " |",
                "|---|" + "---|" * len(variants)]
        for p in placements:
            cells = []
            for v in variants:
                got = [r for r in mine if (r.placement, r.variant) == (p, v)]
                if not got:
                    bad = [r for r in failed if (r.placement, r.variant, r.workers) == (p, v, n)]
                    cells.append("failed: " + cell_text(bad[0].error) if bad else "not run")
                    continue
                cells.append(" ".join(f"{r.shape} {r.split} {'ok' if r.ratio is not None and r.ratio <= 2 else 'out'}"
                                      for r in got))
            out.append(f"| {cell_text(labels.get(p, p))} | " + " | ".join(cells) + " |")
        out.append("")
        for shape in dict.fromkeys(r.shape for r in mine):
            held = [v for v in variants if any(r.variant == v and r.shape == shape for r in mine)
                    and all(r.ratio is not None and r.ratio <= 2 for r in mine if r.variant == v and r.shape == shape)]
            findings.append(f"at {n} workers, {shape} within 2:1 in every placement: {', '.join(held) or 'none'}")
    text = "; ".join(findings)
    out += ["**What this shows.** " + text[0].upper() + text[1:] + ". Oneshot holds one connection open at a "
            "time, so a least-loaded pick sees every worker at the same load and keeps the connection where it "
            "was accepted (fdpass's ties go to the acceptor): its oneshot splits are who wins the wake-up, not "
            "balance under load, which the bursts show.", ""]
    return out


def placement_findings(runs, stops, placements, labels, variants) -> str:
    parts = []
    for v in variants:
        one = [r for r in runs if r.variant == v and r.shape == "oneshot"]
        if not one:
            continue
        share = {}
        for p in placements:
            mine = [r for r in one if r.placement == p]
            if mine:
                shares = sorted(int(r.split.split("/")[0]) / (r.rounds * 8) for r in mine)
                share[p] = shares[len(shares) // 2]
        if not share:
            continue
        worst = max(share, key=lambda p: share[p])
        within = sum(all(r.ratio is not None and r.ratio <= 2 for r in one if r.placement == p) for p in share)
        parts.append(f"{v}: oneshot runs all within 2:1 in {within} of {len(share)} placements; the most "
                     f"skewed placement is {labels[worst]} (median busiest share {share[worst]:.0%}).")
    if stops:
        held = sum(s.held for s in stops)
        parts.append(f"The stop-winner assertion held in {held} of {plural(len(stops), 'placement')}.")
    return " ".join(parts)


read_placement = row_reader(parse_placement_row)
STUDY = Study("placement", "placement.jsonl", read_placement, render_placement,
              is_round=lambda row: isinstance(row, PlacementRun))
