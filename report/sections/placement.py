"""The placement study (placement.jsonl): which worker wins under each CPU
placement of the workers and the probe, and the stop-winner assertion. Its
rows are also what figures.py's placement heat map is drawn from.

Which worker won is said by the CPU it was pinned to: rows say each counted
worker's CPUs ("worker_cpus", from the server's ready line); rows from before
they did get them from that ready line, kept under the run's raw/, and where
neither is there the report says it does not know. The note's reference rows
are compared on what each claim is about (which worker, by its CPU; toward
even or not), and where this run differs, the timeline the run traced under
that placement (timeline.jsonl) is quoted, never a fixed reason."""

import dataclasses
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from acceptlab import balance
from acceptlab.results_io import RowError
from report.common import (Meta, Study, and_list, cell_text, get, get_arm, get_bool, get_counter, get_int,
                           get_opt_int, get_split, get_str, ordered, plural, row_reader)
from report.sections.timeline import TimelineConn, story


SEED_002 = "shared/seeds/002_31b119a6e806d5e9.txt"
OF = 80  # the note's oneshot run: 10 rounds of 8 connections


def middle_words(n: int) -> str:
    """What middle() takes of n runs, truthfully."""
    if n == 1:
        return "its one run"
    if n == 2:
        return "the larger of its 2 runs"
    return f"the median of its {n} runs" if n % 2 else f"the upper of the middle two of its {n} runs"


def middle(values: list) -> tuple:
    """(the value a placement's runs are summed up by, middle_words): with 2
    runs the larger of them, with an odd number the median, with an even
    number above 2 the upper of the two middle ones."""
    v = sorted(values)
    return v[len(v) // 2], middle_words(len(v))


def oneshots(runs, variant, placement):
    return [r for r in runs if (r.variant, r.placement, r.shape) == (variant, placement, "oneshot")]


def scaled(r) -> int:
    """The busiest worker's connections in a oneshot run, scaled to the note's 80."""
    return round(int(r.split.split("/")[0]) * OF / (r.rounds * 8))


def _busiest(runs, variant, placement):
    """The busiest worker's connections in each oneshot run of variant at
    placement, scaled to the note's 80 per run."""
    return [scaled(r) for r in oneshots(runs, variant, placement)]


def winner_cpu(r) -> Optional[str]:
    """The CPUs of the worker that answered most in run r, as its ready line
    says them; "tie" when two answered most; None when not recorded."""
    counts = sorted(r.counts, key=lambda kv: -kv[1])
    if len(counts) > 1 and counts[0][1] == counts[1][1]:
        return "tie"
    if not counts or r.cpus is None:
        return None
    return dict(r.cpus).get(counts[0][0])


def probe_cpu_of(r) -> Optional[int]:
    """The probe's CPU in run r: the row's "probe_cpu", or for rows from before
    rows said it, the placement's name (pinned-probe-cpuN)."""
    if r.probe_cpu is not None:
        return r.probe_cpu
    m = re.search(r"probe-cpu(\d+)$", r.placement)
    return int(m.group(1)) if m else None


@dataclass(frozen=True)
class Compared:
    """How this run answers one of the note's claims: verdict "agrees",
    "disagrees", "disagrees in part", "not resolved" (a direction the runs
    do not settle) or "not compared"; text, this run's
    figures for the table; differs, what differs in plain words (for the
    findings); why, the (variant, placement) whose timeline is quoted."""
    verdict: str
    text: str
    differs: str = ""
    why: Optional[tuple] = None

    def cell(self) -> str:
        mark = f"**{self.verdict}**" if self.verdict.startswith("disagrees") else self.verdict
        return f"{mark}: {self.text}"


def _range_check(variant, placement, lo, hi):
    def check(runs, stops):
        got = _busiest(runs, variant, placement)
        if not got:
            return None
        text = f"{variant} {and_list(map(str, got))} of {OF} to one worker"
        if all(lo <= n <= hi for n in got):
            return Compared("agrees", text)
        return Compared("disagrees", text, f"the note has {lo}–{hi} of {OF} to one worker; this run "
                                           f"{and_list(map(str, got))}")
    return check


def _winner_check(variant, placement, lo, hi, note_cpu):
    """The note's winner is the worker pinned to note_cpu, with lo..hi of 80:
    compared on which worker won (by its CPU) before how many it got."""
    def check(runs, stops):
        mine = oneshots(runs, variant, placement)
        if not mine:
            return None
        got = [scaled(r) for r in mine]
        cpus = [winner_cpu(r) for r in mine]
        probe = probe_cpu_of(mine[0])
        beside = lambda c: "" if probe is None or c is None or not c.isdigit() else (  # noqa: E731
            " (beside the probe)" if int(c) == probe else " (away from the probe)")
        if any(c is None for c in cpus):
            who = "which worker won is not recorded (no worker CPUs in the rows, no ready line under raw/)"
        elif len(set(cpus)) == 1:
            who = ("the two workers tied in every run" if cpus[0] == "tie" else
                   f"the worker on CPU {cpus[0]}{beside(cpus[0])} in "
                   + {1: "its one run", 2: "both runs"}.get(len(cpus), "every run"))
        else:
            who = "; ".join(f"run {r.run}: " + ("a tie" if c == "tie" else f"the worker on CPU {c}{beside(c)}")
                            for r, c in zip(mine, cpus))
        text = f"{variant} {and_list(map(str, got))} of {OF} to one worker: {who}"
        count_ok = all(lo <= n <= hi for n in got)
        wrong = [c for c in cpus if c is not None and c != note_cpu]
        differs = []
        if wrong:
            differs.append(f"the note's winner is the worker on CPU {note_cpu}{beside(note_cpu)}; this run's: "
                           f"{who} ({and_list(map(str, got))} of {OF} to the busiest worker)")
        if not count_ok:
            differs.append(f"the note has {lo}–{hi} of {OF} to one worker, this run {and_list(map(str, got))}")
        if differs:
            return Compared("disagrees", text, "; ".join(differs), (variant, placement))
        if any(c is None for c in cpus):
            return Compared("not compared", text)
        return Compared("agrees", text)
    return check


def _beside_probe_check(variant):
    """The note: the worker that shares the client's CPU loses every time.
    Every oneshot run with the workers pinned one to a CPU and the probe on
    one worker's CPU: did that worker answer most?"""
    def check(runs, stops):
        seen = {}  # placement -> [(run, "beside" | "away" | "tie" | None)]
        probes = {}
        for r in (r for r in runs if r.variant == variant and r.shape == "oneshot"):
            probe, cpus = probe_cpu_of(r), list(dict(r.cpus or ()).values())
            if probe is None or not cpus or not all(c.isdigit() for c in cpus) or cpus.count(str(probe)) != 1 \
                    or len(set(cpus)) != len(cpus):
                continue
            c = winner_cpu(r)
            seen.setdefault(r.placement, []).append(
                (r, None if c is None else c if c == "tie" else "beside" if c == str(probe) else "away"))
            probes[r.placement] = probe
        if not seen:
            return None
        parts = []
        for placement, mine in seen.items():
            whom = {w for _, w in mine}
            wins = and_list(str(scaled(r)) for r, _ in mine)
            if whom == {"beside"}:
                who = f"the worker beside it answered most ({wins} of {OF})"
            elif whom == {"away"}:
                who = f"the worker away from it answered most ({wins} of {OF})"
            else:
                who = "; ".join(f"run {r.run}: " + {"beside": f"the worker beside it, {scaled(r)} of {OF}",
                                                     "away": f"the worker away from it, {scaled(r)} of {OF}",
                                                     "tie": "a tie", None: "not recorded"}[w] for r, w in mine)
            parts.append(f"probe on CPU {probes[placement]}: {who}")
        text = f"{variant}: " + "; ".join(parts)
        verdicts = [w for mine in seen.values() for _, w in mine]
        beside = verdicts.count("beside")
        if beside == 0 and None not in verdicts and "tie" not in verdicts:
            return Compared("agrees", text)
        if beside == 0:
            return Compared("not compared", text)
        differs = (f"the note's worker on the client's CPU loses every time; in this run it answered most in "
                   f"{beside} of {plural(len(verdicts), 'run')} with the probe pinned beside one worker ("
                   + "; ".join(parts) + ")")
        return Compared("disagrees" if beside == len(verdicts) else "disagrees in part", text, differs)
    return check


def _every_placement(variant, lo, hi):
    def check(runs, stops):
        got = [n for p in dict.fromkeys(r.placement for r in runs) for n in _busiest(runs, variant, p)]
        if not got:
            return None
        span = f"{min(got)}" if min(got) == max(got) else f"{min(got)} to {max(got)}"
        text = f"{variant} {span} of {OF} to the busiest worker over {len(got)} runs in every placement"
        if all(lo <= n <= hi for n in got):
            return Compared("agrees", text)
        return Compared("disagrees", text, f"the note has {lo}–{hi} of {OF} to the busiest worker in every "
                                           f"placement; this run {span} over {len(got)} runs")
    return check


def _hog_check(runs, stops):
    """The note: a hog beside either worker moves the split toward even. The
    claim is a direction, so it is judged by one: toward even when every run
    beside the hog gave its busiest worker fewer connections than every run
    with nothing pinned did, away (or not moved) when every run gave it as
    many or more, and not resolved when the runs overlap. Whether the runs
    were within 2:1 is said beside it, not part of the claim."""
    base = _busiest(runs, "bare", "unpinned")
    if not base:
        return None
    verdicts, parts = [], []
    for placement, where in (("hog-beside-worker0", "beside worker 0"), ("hog-beside-worker1", "beside worker 1")):
        mine = oneshots(runs, "bare", placement)
        if not mine:
            continue
        got = [scaled(r) for r in mine]
        if max(got) < min(base):
            verdicts.append("toward")
            reason = "toward even: every run's busiest worker below every run with nothing pinned"
        elif min(got) >= max(base):
            verdicts.append("not")
            reason = "not toward even: no run's busiest worker below nothing pinned's"
        else:
            verdicts.append("mixed")
            reason = "not resolved: the runs overlap nothing pinned's"
        outside = sum(n > OF * 2 // 3 for n in got)
        reason += f"; {outside} of {len(got)} runs outside 2:1" if outside else "; every run within 2:1"
        cpus = [winner_cpu(r) for r in mine]
        hog = mine[0].hog_cpu
        side = ""
        if hog is not None and cpus and all(c not in (None, "tie") for c in cpus):
            near = sum(c == str(hog) for c in cpus)
            side = (f"; the larger share to the worker on the hog's CPU in {near} of {len(cpus)} runs")
        parts.append(f"{where} {and_list(map(str, got))} of {OF} ({reason}{side})")
    if not verdicts:
        return None
    text = "; ".join(parts) + f", against {and_list(map(str, base))} with nothing pinned"
    if all(v == "toward" for v in verdicts):
        return Compared("agrees", text)
    if all(v == "mixed" for v in verdicts) or set(verdicts) == {"toward", "mixed"}:
        return Compared("not resolved", text)
    return Compared("disagrees" if "toward" not in verdicts else "disagrees in part", text,
                    "the note's hogs move the split toward even; in this run: " + text)


def _stop_check(runs, stops):
    if not stops:
        return None
    held = sum(s.held for s in stops)
    text = f"held in {held} of {plural(len(stops), 'placement')}"
    if held == len(stops):
        return Compared("agrees", text)
    return Compared("disagrees", text, f"the other worker did not answer all in {len(stops) - held} of "
                                       f"{plural(len(stops), 'placement')}")


# The note's rows, each with how this run's rows answer it (None: this run
# has nothing to compare, e.g. a placement this machine cannot make).
PLACEMENT_REFERENCE = (
    ("bare race, nothing pinned (15 runs)", "63–77 of 80 to one worker", _range_check("bare", "unpinned", 63, 77)),
    ("bare race, workers on CPUs 0 and 1, probe on CPU 1", "80/0 in four runs of five, the fifth 79/1 "
     "(all to the worker on CPU 0)", _winner_check("bare", "pinned-probe-cpu1", 79, 80, "0")),
    ("bare race, the worker sharing the client's (probe's) CPU", "loses every time", _beside_probe_check("bare")),
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
    cpus: Optional[tuple] = None  # (worker, its CPUs as the ready line says them); None: not known
    probe_cpu: Optional[int] = None  # the probe's CPU when pinned and the row says it
    hog_cpu: Optional[int] = None  # the hog's CPU when the row says it


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
    variant = get_arm(obj)
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
    cpus = obj.get("worker_cpus")
    if cpus is not None and (not isinstance(cpus, dict) or not all(isinstance(c, str) for c in cpus.values())):
        raise RowError('"worker_cpus" must be an object of worker -> CPU list like "0" or "0-1", '
                       f'got {json.dumps(cpus)}')
    return PlacementRun(line, placement, label, variant, shape, run, rounds, split,
                        None if ratio is None else float(ratio), starved, both,
                        tuple(get_counter(obj, "counts").items()), workers,
                        None if cpus is None else tuple(cpus.items()), get_opt_int(obj, "probe_cpu"),
                        get_opt_int(obj, "hog_cpu"))


def at_two(rows: list) -> list:
    """The rows at 2 workers (every row from before rows said their count):
    the main tables', the reference rows' and the figure's."""
    return [r for r in rows if r.workers in (None, 2)]


def render_placement(meta: Meta, all_rows: list, others: Optional[dict] = None) -> list:
    """others: {"timeline": its rows or None}, quoted where this run disagrees with the note."""
    timeline = [r for r in ((others or {}).get("timeline") or []) if isinstance(r, TimelineConn)]
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
        f"placement and arm one server; the probe runs {plural(n, 'run')} of each shape with 10 ms between "
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
    out += render_reference(runs, stops, timeline)
    return out + render_more_workers(meta, wide)


def render_reference(runs: list, stops: list, timeline: list) -> list:
    """The note's rows beside this run's answer to each, then what differs
    and what this run's own timeline under a disputed placement shows."""
    out = ["### Reference rows (not measured here)", "",
           f'Quoted from the seed design note `{SEED_002}` ("Scheduling stickiness"), measured by that note in '
           "a 4-vCPU Linux container with its own server (10 rounds x 8 sequential connections per run); "
           "not results of this run. \"This run\" compares this run's oneshot rows (scaled to 80 connections "
           "a run) with what each claim is about: which worker won, by the CPU it was pinned to (the rows' "
           "ready-line CPUs), before how many it got; the note's range of counts; for the hog, the direction: "
           "toward even when every run beside the hog gave its busiest worker fewer connections than every "
           "run with nothing pinned, not toward even when none did, not resolved when they overlap. "
           "\"not compared\" where this "
           "run does not record what the claim is about, \"-\" where it has nothing to compare (this machine "
           "has 2 CPUs).", "",
           "| what | figures | this run | source |", "|---|---|---|---|"]
    disagree = []
    for what, figures, check in PLACEMENT_REFERENCE:
        got = check(runs, stops) if check else None
        if got is not None and got.verdict.startswith("disagrees"):
            disagree.append((what, got))
        out.append(f"| {what} | {figures} | {cell_text(got.cell()) if got else '-'} | `{SEED_002}` |")
    out.append("")
    if not disagree:
        return out
    out += ["**Where this run disagrees with the note.** The note's figures come from another machine (4 vCPUs, "
            "its own server); the report keeps both and adjusts neither.", ""]
    out += [f"- {what}: {got.differs}." for what, got in disagree]
    out.append("")
    for variant, placement in dict.fromkeys(got.why for _, got in disagree if got.why):
        label = next((r.label for r in runs if r.placement == placement), placement)
        mine = [r for r in timeline if (r.variant, r.placement) == (variant, placement)]
        if mine:
            out += [f"What this run's own timeline shows under {label} ({variant}, one oneshot round of "
                    f"{plural(len(mine), 'connection')} traced; the table is under Timelines): {story(mine)}", ""]
        else:
            out += [f"This run has no timeline of {variant} under {label}, so the report gives no reason for "
                    "the difference.", ""]
    return out


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
           "CPUs 0 and 1, the hog on CPU 0). One server per placement, arm and worker count; one run of "
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
                cells.append(" ".join(f"{r.shape} {r.split} {'ok' if balance.ratio_within_2to1(r.ratio) else 'out'}"
                                      for r in got))
            out.append(f"| {cell_text(labels.get(p, p))} | " + " | ".join(cells) + " |")
        out.append("")
        for shape in dict.fromkeys(r.shape for r in mine):
            held = [v for v in variants if any(r.variant == v and r.shape == shape for r in mine)
                    and all(balance.ratio_within_2to1(r.ratio) for r in mine if r.variant == v and r.shape == shape)]
            findings.append(f"at {n} workers, {shape} within 2:1 in every placement: {', '.join(held) or 'none'}")
    text = "; ".join(findings)
    out += ["**What this shows.** " + text[0].upper() + text[1:] + ". Oneshot holds one connection open at a "
            "time and a burst holds all of its connections open at once.", ""]
    return out


def placement_findings(runs, stops, placements, labels, variants) -> str:
    """Per variant: in how many placements every oneshot run was within 2:1,
    and the most skewed placement by the busiest share (as middle() takes a
    placement's runs; placements tied at it named together)."""
    parts = []
    for v in variants:
        one = [r for r in runs if r.variant == v and r.shape == "oneshot"]
        if not one:
            continue
        share = {}
        for p in placements:
            mine = [r for r in one if r.placement == p]
            if mine:
                share[p] = middle([int(r.split.split("/")[0]) / (r.rounds * 8) for r in mine])
        if not share:
            continue
        top = max(value for value, _ in share.values())
        worst = [p for p in share if share[p][0] == top]
        within = sum(all(balance.ratio_within_2to1(r.ratio) for r in one if r.placement == p) for p in share)
        words = set(share[p][1] for p in worst)
        taken = (words.pop() if len(words) == 1 else
                 "each one's middle run: the larger of 2, the median of an odd number, the upper middle one of "
                 "an even number")
        if len(worst) == 1:
            most = f"the most skewed placement is {labels[worst[0]]} (busiest share {top:.0%} in {taken})"
        else:
            most = (f"the most skewed placements are tied at a busiest share of {top:.0%} (in "
                    f"{taken.replace('its', 'each one' + chr(39) + 's')}): "
                    + "; ".join(labels[p] for p in worst))
        parts.append(f"{v}: oneshot runs all within 2:1 in {within} of {len(share)} placements; {most}.")
    if stops:
        held = sum(s.held for s in stops)
        parts.append(f"The stop-winner assertion held in {held} of {plural(len(stops), 'placement')}.")
    return " ".join(parts)


SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def ready_cpus(raw: Path, r) -> Optional[tuple]:
    """A run's workers' CPUs from the server's ready line the placement study
    kept under raw/ (placement-PLACEMENT-VARIANT[-wN].ready), for rows from
    before rows said them; None when it is not there or does not name the
    row's workers."""
    if not (SAFE_NAME.match(r.placement) and SAFE_NAME.match(r.variant)):
        return None
    path = raw / f"placement-{r.placement}-{r.variant}{'' if r.workers in (None, 2) else f'-w{r.workers}'}.ready"
    try:
        ready = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
        ident = "tid" if ready.get("mode") == "threads" else "pid"
        cpus = {str(w[ident]): str(w["cpu"]) for w in ready["workers"]}
    except (OSError, ValueError, IndexError, KeyError, TypeError, AttributeError):
        return None
    if set(cpus) != {who for who, _ in r.counts}:
        return None
    return tuple((who, cpus[who]) for who, _ in r.counts)


_read_rows = row_reader(parse_placement_row)


def read_placement(path: Path) -> list:
    """The study's one reader: the rows, each run that does not say its
    workers' CPUs given them from its ready line under raw/ where kept."""
    return [dataclasses.replace(r, cpus=ready_cpus(path.parent / "raw", r))
            if isinstance(r, PlacementRun) and r.cpus is None else r for r in _read_rows(path)]


STUDY = Study("placement", "placement.jsonl", read_placement, render_placement,
              is_round=lambda row: isinstance(row, PlacementRun), reads=("timeline",))
