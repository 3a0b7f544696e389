"""The perturbation study (perturbation.jsonl): the balancing variants and
their knob-off arms round after round under one perturbation after another
(fresh server, back-to-back, CPU hogs, SYN flood, tracer, a stopped worker)."""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from common import (InputError, Meta, RowError, Study, cell_text, get, get_bool, get_counter, get_int, get_split,
                    get_str, is_int, ordered, row_reader)


# The campaign's perturbations, in its order, with the table's column heads.
PERTURBATION_COLUMNS = (("fresh", "fresh server"), ("back-to-back", "back-to-back"), ("hogs", "CPU hogs"),
                        ("synflood", "SYN flood"), ("tracer", "tracer attached"), ("stopped", "worker stopped"))


@dataclass(frozen=True)
class PerturbedRound:
    line: int
    variant: str
    workers: int
    mode: str
    perturbation: str
    shape: str
    round: int
    connections: int
    answered: int
    split: str
    within_target: bool
    target_held: bool
    accounting: Optional[str]
    counter_error: Optional[int]
    syn_window: Optional[int]
    tracer: tuple  # (won, wakeups) per worker index, when the tracer was attached
    note: str


@dataclass(frozen=True)
class PerturbedFailed:
    line: int
    variant: str
    workers: Optional[int]
    error: str


def parse_perturbation_row(obj: dict, line: int):
    variant = get_str(obj, "variant")
    if "error" in obj:
        workers = obj.get("workers")
        if workers is not None and (not is_int(workers) or workers < 1):
            raise RowError(f'"workers" must be an integer >= 1 or null, got {json.dumps(workers)}')
        return PerturbedFailed(line, variant, workers, " ".join(get_str(obj, "error").split()))
    workers = get_int(obj, "workers", 1)
    perturbation = get_str(obj, "perturbation")
    if perturbation not in dict(PERTURBATION_COLUMNS):
        raise RowError(f'"perturbation" must be one of {", ".join(dict(PERTURBATION_COLUMNS))}, '
                       f'got {json.dumps(perturbation)}')
    counts = get_counter(obj, "counts")
    if len(counts) > workers:
        raise RowError(f'"counts" names {len(counts)} workers, more than "workers" {workers}')
    error = get(obj, "counter_error") if "counter_error" in obj else None
    if error is not None and (not is_int(error) or error < 0):
        raise RowError(f'"counter_error" must be an integer >= 0 or null, got {json.dumps(error)}')
    syn = get_int(obj, "syn_window", 0) if obj.get("syn_window") is not None else None
    tracer = ()
    if obj.get("tracer") is not None:
        if not isinstance(obj["tracer"], list) or not all(isinstance(t, dict) for t in obj["tracer"]):
            raise RowError('"tracer" must be a list of objects')
        tracer = tuple((get_int(t, "won", 0, ("tracer",)), get_int(t, "wakeups", 0, ("tracer",)))
                       for t in obj["tracer"])
    accounting = get_str(obj, "accounting") if obj.get("accounting") is not None else None
    return PerturbedRound(line, variant, workers, get_str(obj, "mode") if "mode" in obj else "process",
                          perturbation, get_str(obj, "shape"), get_int(obj, "round", 1),
                          get_int(obj, "connections", 1), get_int(obj, "answered", 0), get_split(obj, "split"),
                          get_bool(obj, "within_target"), get_bool(obj, "target_held"), accounting, error, syn,
                          tracer, " ".join(str(obj.get("note", "")).split()))


def check_perturbation(path: Path, rows: list) -> None:
    seen = {}
    for row in rows:
        if isinstance(row, PerturbedRound):
            key = (row.variant, row.workers, row.perturbation, row.round)
            if key in seen:
                raise InputError(path, row.line, f"round {row.round} of {row.variant} x{row.workers} "
                                 f"{row.perturbation} is already on line {seen[key]}")
            seen[key] = row.line


def compact_split(split: str) -> str:
    """A split whose workers all got the same, as "16x8"; others as they are."""
    parts = split.split("/")
    return f"{parts[0]}x{len(parts)}" if len(parts) > 2 and len(set(parts)) == 1 else split


def tracer_text(r: PerturbedRound) -> str:
    if not r.tracer:
        return "no tracer attached"
    return "tracer: accepts won " + "/".join(str(w) for w, _ in r.tracer) + \
        ", wakeups " + "/".join(str(k) for _, k in r.tracer) + " (worker 0 first)"


def render_perturbation(meta: Meta, rows: list) -> list:
    measured = [r for r in rows if isinstance(r, PerturbedRound)]
    failed = [r for r in rows if isinstance(r, PerturbedFailed)]
    per = sorted({r.connections // r.workers for r in measured})
    per_text = " or ".join(str(p) for p in per) if per else "16"
    out = ["## Balance under perturbation", "",
           "The balancing variants and their knob-off arms on one server each per worker count, their rounds "
           "following one another with no pause, under one perturbation after another: the first burst of the "
           "fresh server (sent the moment it says ready); back-to-back rounds (bursts, a ramp, keep-alive, a burst: "
           "the shapes mixed); two CPU hogs running (`stress-ng --cpu 2`); 200 SYNs from a raw socket right "
           "before each round (the kernel answers their SYN-ACKs with RST: no connection is ever made); the "
           "tracer (`bin/acceptlab-trace`) attached; worker 1 SIGSTOPped for the first 300 ms of a round (tracer "
           f"attached; process mode only). Rounds hold {per_text} connections per worker. The target, for "
           "fdpass, reuseport-bpf and handoff: every round within 17/15 at 2 workers, max - min at most 2 above; "
           "the knob-off arms are measured beside them, not held to it. Splits are largest share first, one per "
           "round; 16x8 means 8 workers with 16 each.", "",
           "Counter error: after each probe run, the largest difference between a worker's load as `GET /variant` "
           "shows it and the truth, its ESTABLISHED connections from sock_diag (`ss`) plus the asking one (in "
           "threads mode, the difference of the totals); \"-\" for an arm that keeps no counters. SYNs: those "
           "still counted in their window (reuseport-bpf counts a SYN it steers until its connection is "
           "established, or for under 1 s), reported apart.", ""]
    if not rows:
        return out + ["No rounds were recorded in this run.", ""]
    variants = ordered(meta.variants, {r.variant for r in rows})
    keys = sorted({(r.variant, r.workers) for r in measured}, key=lambda k: (k[1], variants.index(k[0])))
    out.append("| variant | workers | accounting | " + " | ".join(h for _, h in PERTURBATION_COLUMNS)
               + " | within target | counter error | SYNs |")
    out.append("|---|---|---|" + "---|" * len(PERTURBATION_COLUMNS) + "---|---|---|")
    for v, n in keys:
        mine = [r for r in measured if (r.variant, r.workers) == (v, n)]
        cells = []
        for name, _ in PERTURBATION_COLUMNS:
            got = sorted((r for r in mine if r.perturbation == name), key=lambda r: r.round)
            cells.append(" ".join(compact_split(r.split) + ("!" if r.answered < r.connections else "")
                                  for r in got) or "-")
        errors = [r.counter_error for r in mine if r.counter_error is not None]
        syns = [r.syn_window for r in mine if r.syn_window is not None]
        accounting = next((r.accounting for r in mine if r.accounting), "-")
        out.append(f"| {cell_text(v)} | {n} | {accounting} | " + " | ".join(cells)
                   + f" | {sum(r.within_target for r in mine)}/{len(mine)} | "
                   + (str(max(errors)) if errors else "-") + " | " + (str(max(syns)) if syns else "-") + " |")
    out.append("")
    if any(r.answered < r.connections for r in measured):
        out += ["`!` marks a round with connections left unanswered.", ""]
    out += ["**What this shows.**", ""]
    held = [r for r in measured if r.target_held]
    if held:
        by_n = {}
        for r in held:
            by_n.setdefault(r.workers, []).append(r)
        out.append("- The balancing variants: " + "; ".join(
            f"{n} workers {sum(r.within_target for r in rs)} of {len(rs)}" for n, rs in sorted(by_n.items()))
            + " rounds within the target.")
        errors = [r.counter_error for r in held if r.counter_error is not None]
        if errors:
            out.append(f"- Their counters after each run: the largest error {max(errors)} "
                       f"({sum(e == 0 for e in errors)} of {len(errors)} rounds' samples exact).")
        for r in (r for r in held if not r.within_target):
            out.append(f"- Outside the target: {r.variant} x{r.workers}, {r.perturbation} round {r.round} "
                       f"({r.shape}): {r.split}; {tracer_text(r)}.")
    off = [r for r in measured if not r.target_held]
    for v in ordered(meta.variants, {r.variant for r in off}):
        mine = [r for r in off if r.variant == v]
        worst = max(mine, key=lambda r: (r.split.count("/") and
                                         (int(r.split.split("/")[0]) - int(r.split.split("/")[-1]))))
        out.append(f"- {v} (knob-off, reported): {sum(r.within_target for r in mine)} of {len(mine)} rounds "
                   f"within the target; widest {worst.split} ({worst.perturbation}, {worst.workers} workers).")
    for r in (r for r in off if r.perturbation == "stopped"):
        out.append(f"- {r.variant} x{r.workers} with worker 1 stopped: {r.split}; {tracer_text(r)}.")
    for f in failed:
        out.append(f"- {f.variant}" + (f" x{f.workers}" if f.workers else "") + f" failed: {f.error}.")
    return out + [""]


def render_perturbation_absent(meta: Meta) -> list:
    return ["## Balance under perturbation", "", "Not measured in this run: it has no `perturbation.jsonl` "
            "(the campaign's `perturbation` study writes it).", ""]


read_perturbation = row_reader(parse_perturbation_row, check_perturbation)
STUDY = Study("perturbation", "perturbation.jsonl", read_perturbation, render_perturbation,
              is_round=lambda row: isinstance(row, PerturbedRound), absent=render_perturbation_absent)
