"""The perturbation study (perturbation.jsonl): the balancing arms and
their knob-off arms round after round under one perturbation after another
(fresh server, back-to-back, CPU hogs, SYN flood, tracer, a stopped worker),
and the load counters sampled while each round's connections were held and
after each probe run (counter_samples; older runs: one after-run sample per
probe run, repeated on its rounds)."""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from acceptlab.results_io import InputError, RowError
from report.common import (Meta, Study, cell_text, get_arm, get_bool, get_counter, get_int, get_opt_int, get_split,
                           get_str, is_int, ordered, plural, row_reader)


# The campaign's perturbations, in its order, with the table's column heads.
PERTURBATION_COLUMNS = (("fresh", "fresh server"), ("back-to-back", "back-to-back"), ("hogs", "CPU hogs"),
                        ("synflood", "SYN flood"), ("tracer", "tracer attached"), ("stopped", "worker stopped"))


@dataclass(frozen=True)
class CounterSample:
    at: str                # "held": the round's connections held open; "after": the probe run over
    held: Optional[int]    # the server's ESTABLISHED connections per the kernel (None: not recorded)
    error: int             # the largest |counted - truth| over workers (threads mode: the totals')
    syn: Optional[int]     # steered SYNs still counted, apart from the load


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
    samples: tuple  # CounterSample, taken in this round (each sample on one row)
    legacy: bool    # samples from the older fields: one after-run sample repeated on each round of its run
    run: Optional[int]
    tracer: tuple  # (won, wakeups) per worker index, when the tracer was attached
    note: str


@dataclass(frozen=True)
class PerturbedNotApplicable:
    """A run of a perturbation whose shape does not apply to the variant (the
    arms table's not_applicable: blocking's keepalive), not run."""
    line: int
    variant: str
    workers: int
    perturbation: str
    shape: str
    reason: str


@dataclass(frozen=True)
class PerturbedFailed:
    line: int
    variant: str
    workers: Optional[int]
    error: str


def parse_perturbation_row(obj: dict, line: int):
    variant = get_arm(obj)
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
    if "not_applicable" in obj:
        return PerturbedNotApplicable(line, variant, workers, perturbation, get_str(obj, "shape"),
                                      " ".join(get_str(obj, "not_applicable").split()))
    counts = get_counter(obj, "counts")
    if len(counts) > workers:
        raise RowError(f'"counts" names {len(counts)} workers, more than "workers" {workers}')
    samples, legacy = parse_counter_samples(obj)
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
                          get_bool(obj, "within_target"), get_bool(obj, "target_held"), accounting, samples, legacy,
                          get_int(obj, "run", 1) if "run" in obj else None, tracer,
                          " ".join(str(obj.get("note", "")).split()))


def parse_counter_samples(obj: dict) -> tuple:
    """(samples, legacy): counter_samples as they are; or, in a run from
    before them, the one after-run sample its fields describe (held from
    truth less the asking connection, where truth is per worker)."""
    if "counter_samples" in obj:
        listed = obj["counter_samples"]
        if not isinstance(listed, list) or not all(isinstance(x, dict) for x in listed):
            raise RowError('"counter_samples" must be a list of objects')
        out = []
        for x in listed:
            at = get_str(x, "at", ("counter_samples",))
            if at not in ("held", "after"):
                raise RowError(f'"at" must be "held" or "after", got {json.dumps(at)}', ("counter_samples", "at"))
            out.append(CounterSample(at, get_int(x, "held", 0, ("counter_samples",)),
                                     get_int(x, "error", 0, ("counter_samples",)),
                                     get_opt_int(x, "syn", ("counter_samples",))))
        return tuple(out), False
    error = get_opt_int(obj, "counter_error")
    if error is None:
        return (), False
    # held from the recorded truth (per worker: it includes the asking
    # connection), or in threads mode from the counted total when it was
    # exact (error 0: counted = held + the asking one); otherwise unknown.
    truth, counted = obj.get("truth"), obj.get("counted")
    if isinstance(truth, list) and truth and all(is_int(t) for t in truth):
        held = sum(truth) - 1
    elif error == 0 and isinstance(counted, list) and counted and all(is_int(c) for c in counted):
        held = sum(counted) - 1
    else:
        held = None
    return (CounterSample("after", held, error, get_opt_int(obj, "syn_window")),), True


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


def shapes_text(rounds: list) -> str:
    """The shapes of one server's rounds of a perturbation, in order: "burst x3, ramp, keepalive, burst"."""
    runs = []
    for r in sorted(rounds, key=lambda r: r.round):
        if runs and runs[-1][0] == r.shape:
            runs[-1][1] += 1
        else:
            runs.append([r.shape, 1])
    return ", ".join(shape + (f" x{n}" if n > 1 else "") for shape, n in runs)


def perturbation_text(name: str, measured: list) -> str:
    """What a perturbation did, from its rows: the shapes, and the note the study recorded."""
    mine = [r for r in measured if r.perturbation == name]
    if not mine:
        return ""
    first = min(((r.workers, r.variant) for r in mine))
    shapes = shapes_text([r for r in mine if (r.workers, r.variant) == first])
    note = next((r.note for r in mine if r.note), "")
    # (without a note, with the note the study recorded)
    what, noted = {"fresh": ("the first round of the fresh server, sent the moment it says ready", "{}"),
                   "back-to-back": ("more rounds, the shapes mixed", "{}"),
                   "hogs": ("CPU hogs running", "{}"),
                   "synflood": ("SYNs from a raw socket", "{}, from a raw socket"),
                   "tracer": ("the tracer (`bin/acceptlab-trace`) attached", "{}"),
                   "stopped": ("a worker SIGSTOPped, the tracer attached", "{}, the tracer attached")}[name]
    return f"- {dict(PERTURBATION_COLUMNS)[name]}: {noted.format(note) if note else what} ({shapes})."


def distinct_samples(rounds: list) -> list:
    """(round, sample) once per sample taken: an older run's after-run
    sample once per probe run, not once per round that repeats it."""
    seen, out = set(), []
    for r in sorted(rounds, key=lambda r: (r.workers, r.variant, r.perturbation, r.round)):
        for sample in r.samples:
            if r.legacy:
                key = (r.variant, r.workers, r.perturbation, r.run if r.run is not None else -r.round)
                if key in seen:
                    continue
                seen.add(key)
            out.append((r, sample))
    return out


def loads_text(samples: list) -> str:
    """The held loads of samples: "at 32 connections", or "at 2 distinct
    loads: 32 connections (15 samples), 64 (16)"; those not recorded said so."""
    by = {}
    for s in samples:
        by[s.held] = by.get(s.held, 0) + 1
    known = sorted(h for h in by if h is not None)
    if len(known) == 1:
        text = f"at {plural(known[0], 'connection')}"
    elif known:
        text = f"at {len(known)} distinct loads: " + ", ".join(
            (plural(h, "connection") if i == 0 else str(h)) + f" ({plural(by[h], 'sample') if i == 0 else by[h]})"
            for i, h in enumerate(known))
    else:
        text = "at a load not recorded"
    if known and None in by:
        text += f" (the load of {by[None]} not recorded)"
    return text


def error_text(samples: list) -> str:
    errors = [s.error for s in samples]
    return f"largest error {max(errors)} ({sum(e == 0 for e in errors)} of {len(errors)} exact)"


def samples_text(pairs: list) -> str:
    """One worker count's (or every one's) samples: how many, at what held load, how exact."""
    held = [(r, s) for r, s in pairs if s.at == "held"]
    after = [s for _, s in pairs if s.at == "after"]
    parts = []
    if held:
        full = sum(s.held == r.connections for r, s in held)
        parts.append(f"{plural(len(held), 'sample')} held {loads_text([s for _, s in held])}, {full} of "
                     f"{len(held)} at their round's full connection count, {error_text([s for _, s in held])}")
    if after:
        parts.append(f"{plural(len(after), 'sample')} after the run {loads_text(after)}, {error_text(after)}")
    return "; ".join(parts)


def counter_findings(measured: list) -> list:
    """The bullets on the load counters: per worker count and in all, how
    many distinct samples at what held load and how exact; every sample
    that was not exact, named; what the SYN flood's held samples show."""
    pairs = distinct_samples(measured)
    if not pairs:
        return []
    arms = sorted({r.variant for r, _ in pairs})
    by_n = {}
    for r, s in pairs:
        by_n.setdefault(r.workers, []).append((r, s))
    out = [f"- Load counters ({', '.join(arms)}), each distinct sample once:"]
    out += [f"  - {n} workers: {samples_text(ps)}." for n, ps in sorted(by_n.items())]
    if len(by_n) > 1:
        out.append(f"  - In all: {samples_text(pairs)}.")
    if not any(s.at == "held" for _, s in pairs):
        out.append("- No sample was taken while a round's connections were held: this run's samples show "
                   + ("the counters back at the truth after each probe run" if not any(s.error for _, s in pairs)
                      else "the counters after each probe run only") + ", not whether they track the load.")
    wrong = [(r, s) for r, s in pairs if s.error]
    for r, s in wrong[:8]:
        out.append(f"- Counter error {s.error}: {r.variant} x{r.workers}, {r.perturbation} round {r.round} "
                   f"({r.shape}), {'held' if s.at == 'held' else 'after the run'} "
                   + ("at " + plural(s.held, "connection") if s.held is not None else "at a load not recorded") + ".")
    if len(wrong) > 8:
        out.append(f"- {len(wrong) - 8} more samples with a counter error.")
    flood = [(r, s) for r, s in pairs if r.perturbation == "synflood" and s.at == "held"]
    if flood:
        over = [(r, s) for r, s in flood if s.held != r.connections]
        if not over:
            out.append(f"- SYN flood: in each of its {plural(len(flood), 'held sample')} (the arms with counters) the "
                       "server had exactly the round's connections ESTABLISHED: none of the flood's SYNs had become "
                       "a connection.")
        else:
            out.append(f"- SYN flood: {len(over)} of {len(flood)} held samples found other than the round's "
                       "connections ESTABLISHED: " + ", ".join(
                           f"{r.variant} x{r.workers} round {r.round} {s.held} of {r.connections}" for r, s in over[:4])
                       + ".")
    return out


def render_perturbation(meta: Meta, rows: list) -> list:
    measured = [r for r in rows if isinstance(r, PerturbedRound)]
    failed = [r for r in rows if isinstance(r, PerturbedFailed)]
    skipped = [r for r in rows if isinstance(r, PerturbedNotApplicable)]
    per = sorted({r.connections // r.workers for r in measured})
    per_text = " or ".join(str(p) for p in per) if per else "16"
    claiming = sorted({r.variant for r in measured if r.target_held})
    done = [perturbation_text(name, measured) for name, _ in PERTURBATION_COLUMNS]
    out = ["## Balance under perturbation", "",
           "The balancing arms and their knob-off arms on one server each per worker count, their rounds "
           "following one another with no pause, under one perturbation after another, each as its rows record "
           "it (the shapes of its rounds in order):", ""] + [t for t in done if t] + [
           "", f"Rounds hold {per_text} connections per worker. The target"
           + (f", for {', '.join(claiming)}" if claiming else "")
           + ": every round within 17/15 at 2 workers, max - min at most 2 above; the knob-off arms are measured "
           "beside them, not held to it. Splits are largest share first, one per round; 16x8 means 8 workers "
           "with 16 each.", ""]
    if any(s.at == "held" for r in measured for s in r.samples):
        out += ["Load counters: in every round the probe holds its connections once each has been answered and "
                "is still open (keep-alive: after the first request on each); there, and again after each probe "
                "run, each worker's load as `GET /variant` shows it is set beside the truth, its ESTABLISHED "
                "connections from sock_diag (`ss`) plus the asking one (in threads mode, the totals). A sample's "
                "held load is the server's ESTABLISHED connections then, the asking one not among them. Counter "
                "error: the largest difference over workers, held / after (the largest of each); \"-\" for an "
                "arm that keeps no counters. SYNs: the most steered SYNs a sample found still counted (`GET "
                "/variant`'s `syn`), left out of the load.", ""]
    else:
        out += ["Load counters: after each probe run only, each worker's load as `GET /variant` shows it beside "
                "the truth, its ESTABLISHED connections from sock_diag (`ss`) plus the asking one (in threads "
                "mode, the totals). Counter error: the largest difference over workers, held / after (this run "
                "has no held samples); \"-\" for an arm that keeps no counters. SYNs: the most steered SYNs a "
                "sample found still counted (`GET /variant`'s `syn`), left out of the load.", ""]
    if not rows:
        return out + ["No rounds were recorded in this run.", ""]
    variants = ordered(meta.variants, {r.variant for r in rows})
    keys = sorted({(r.variant, r.workers) for r in measured}, key=lambda k: (k[1], variants.index(k[0])))
    out.append("| arm | workers | accounting | " + " | ".join(h for _, h in PERTURBATION_COLUMNS)
               + " | within target | counter error (held / after) | SYNs |")
    out.append("|---|---|---|" + "---|" * len(PERTURBATION_COLUMNS) + "---|---|---|")
    for v, n in keys:
        mine = [r for r in measured if (r.variant, r.workers) == (v, n)]
        cells = []
        for name, _ in PERTURBATION_COLUMNS:
            got = sorted((r for r in mine if r.perturbation == name), key=lambda r: r.round)
            not_run = list(dict.fromkeys(r.shape for r in skipped
                                         if (r.variant, r.workers, r.perturbation) == (v, n, name)))
            cells.append(" ".join([compact_split(r.split) + ("!" if r.answered < r.connections else "")
                                   for r in got] + [f"({shape} n/a)" for shape in not_run]) or "-")
        samples = [s for _, s in distinct_samples(mine)]
        errors = {at: [s.error for s in samples if s.at == at] for at in ("held", "after")}
        syns = [s.syn for s in samples if s.syn is not None]
        accounting = next((r.accounting for r in mine if r.accounting), "-")
        error_cell = ("-" if not samples else
                      " / ".join(str(max(errors[at])) if errors[at] else "-" for at in ("held", "after")))
        out.append(f"| {cell_text(v)} | {n} | {accounting} | " + " | ".join(cells)
                   + f" | {sum(r.within_target for r in mine)}/{len(mine)} | {error_cell} | "
                   + (str(max(syns)) if syns else "-") + " |")
    out.append("")
    if any(r.answered < r.connections for r in measured):
        out += ["`!` marks a round with connections left unanswered.", ""]
    reasons = {}
    for r in skipped:
        reasons.setdefault((r.variant, r.shape), r.reason)
    if reasons:
        out += ["\"(SHAPE n/a)\": a run of that shape the variant was not given, as it does not apply "
                "(the arms table's not_applicable):", ""]
        out += [f"- {v}, {shape}: {reason}." for (v, shape), reason in reasons.items()] + [""]
    out += ["**What this shows.**", ""]
    held = [r for r in measured if r.target_held]
    if held:
        by_n = {}
        for r in held:
            by_n.setdefault(r.workers, []).append(r)
        out.append("- The balancing arms: " + "; ".join(
            f"{n} workers {sum(r.within_target for r in rs)} of {len(rs)}" for n, rs in sorted(by_n.items()))
            + " rounds within the target.")
    out += counter_findings(measured)
    for r in (r for r in held if not r.within_target):
        out.append(f"- Outside the target: {r.variant} x{r.workers}, {r.perturbation} round {r.round} "
                   f"({r.shape}): {r.split}; {tracer_text(r)}.")
    off = [r for r in measured if not r.target_held]
    for v in ordered(meta.variants, {r.variant for r in off}):
        mine = [r for r in off if r.variant == v]
        worst = max(mine, key=lambda r: (r.split.count("/") and
                                         (int(r.split.split("/")[0]) - int(r.split.split("/")[-1]))))
        knob_offs = set(meta.arm_facts.knob_off_of().values()) if meta.arm_facts else set()
        what = "knob-off" if v in knob_offs else "claims no balance"
        out.append(f"- {v} ({what}, reported): {sum(r.within_target for r in mine)} of {len(mine)} rounds "
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
