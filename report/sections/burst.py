"""The burst study (burst.jsonl): bursts of new connections, each asking for
CPU-bound work once; what it costs a burst when one worker takes most of it
(completion time, first connect to last answer) and each request's latency,
by worker count, against bare and each balancer's knob-off arm."""

import json
import math
import statistics
from dataclasses import dataclass
from pathlib import Path

from acceptlab.results_io import InputError, RowError
from report.common import (Failed, Meta, Study, cell_text, failed_notes, get, get_counter, get_failure, get_int,
                           get_split, get_str, ms_text, ordered, plural, row_reader)


@dataclass(frozen=True)
class Burst:
    """One burst: K connections opened at once, each asking once."""
    line: int
    arm: str
    workers: int
    k: int
    burst: int
    completion_ms: float   # None: nothing was answered
    latencies_ms: tuple    # one per answered connection, connect to complete answer
    split: str             # requests per worker, largest first
    unanswered: int

    @property
    def key(self) -> tuple:
        return (self.arm, self.workers, self.k)


def parse_burst_row(obj: dict, line: int):
    arm = get_str(obj, "arm")
    workers = get_int(obj, "workers", 1)
    if "error" in obj:
        error, _ = get_failure(obj)
        return Failed(line, (arm, workers), error)
    k = get_int(obj, "connections", 1)
    lat = get(obj, "latency_us")
    if not isinstance(lat, list) or len(lat) != k or not all(
            v is None or (isinstance(v, int) and not isinstance(v, bool) and v >= 0) for v in lat):
        raise RowError(f'"latency_us" must be an array of {k} integers >= 0 or null (one per connection)')
    done = get(obj, "completion_us")
    answered = [v for v in lat if v is not None]
    if done is None:
        if answered:
            raise RowError('"completion_us" is null but connections were answered')
    elif isinstance(done, bool) or not isinstance(done, int) or done < max(answered, default=0):
        raise RowError(f'"completion_us" must be an integer >= every latency, got {json.dumps(done)}')
    get_counter(obj, "counts")
    return Burst(line, arm, workers, k, get_int(obj, "burst", 1), None if done is None else done / 1000,
                 tuple(v / 1000 for v in answered), get_split(obj, "split"), get_int(obj, "unanswered", 0))


def check_burst_rows(path: Path, rows: list) -> None:
    seen = {}
    for r in rows:
        if isinstance(r, Burst):
            key = r.key + (r.burst,)
            if key in seen:
                raise InputError(path, r.line, f"burst {r.burst} of {r.arm} at {plural(r.workers, 'worker')}, "
                                 f"K {r.k} is already on line {seen[key]}")
            seen[key] = r.line


def nearest_rank(values: list, p: float):
    values = sorted(values)
    return values[max(0, math.ceil(p / 100 * len(values)) - 1)] if values else None


@dataclass(frozen=True)
class Cell:
    completion: float  # median over the bursts, ms (None: none answered)
    p50: float
    p99: float
    bursts: int
    unanswered: int
    splits: str


def cell_of(mine: list) -> Cell:
    done = [b.completion_ms for b in mine if b.completion_ms is not None]
    lat = [v for b in mine for v in b.latencies_ms]
    return Cell(statistics.median(done) if done else None, nearest_rank(lat, 50), nearest_rank(lat, 99),
                len(mine), sum(b.unanswered for b in mine),
                " ".join(b.split + ("!" if b.unanswered else "") for b in sorted(mine, key=lambda b: b.burst)))


def ms(value) -> str:
    return "-" if value is None else ms_text(value)


def busiest_share(mine: list) -> float:
    """The median over the bursts of the busiest worker's share of the burst."""
    shares = [int(b.split.split("/")[0]) / b.k for b in mine]
    return statistics.median(shares)


def vs(cell: Cell, other: Cell, name: str) -> str:
    if other is None or other.completion is None or cell.completion is None or other.completion == 0:
        return f"{name} not measured"
    return f"{cell.completion / other.completion:.2f}x {name}'s completion time"


def render_burst(meta: Meta, rows: list) -> list:
    bursts = [r for r in rows if isinstance(r, Burst)]
    p = meta.burst
    out = ["## Payoff where arrival matters: bursts of new connections", ""]
    if p is None:
        out += ["meta.json does not record how the burst study ran; the figures are the rows' own.", ""]
    else:
        ks = " and ".join(f"{m} x N" for m in p.per_worker)
        out += [f"What was measured: what it costs when one worker takes most of a burst of new connections "
                f"and every request costs CPU. Each burst opens K connections to 127.0.0.1 at once "
                f"(`acceptlab-probe --shape burst --latencies`), each asking `GET {p.path}` once "
                f"({p.work_us} µs of the worker's CPU per request); K = {ks} at N = "
                f"{', '.join(map(str, p.workers))} workers; {plural(p.bursts, 'burst')} per K on one fresh "
                f"server per arm and N, each begun {p.gap_ms:g} ms after the previous one was answered, so "
                "each starts on an idle server. Completion: the burst's first connect to its last answer "
                "(median over the bursts); p50 and p99: over every request of those bursts, connect to "
                "complete answer; served per worker: the requests each worker answered, largest first, "
                f"burst by burst (`!`: a burst with a connection unanswered). The machine has "
                f"{plural(meta.cpus, 'CPU')}, so a burst needs at least K x {p.work_us} µs / "
                f"min(N, {meta.cpus}) of time (the CPU floor column); the probe shares those CPUs."]
        for arm, a in p.anchors:
            out[-1] += (f" The arm {arm} is {a.software} run from the peers' {a.peer} configuration "
                        f"(access log {a.access_log}): {a.answer}.")
        out.append("")
    if not rows:
        return out + ["No bursts were recorded in this run.", ""]
    cells = {}
    for b in bursts:
        cells.setdefault(b.key, []).append(b)
    stats = {key: cell_of(mine) for key, mine in cells.items()}
    # The arms' facts are the run's own (meta.json "arms"): each balancer's
    # knob-off arm (fdpass -> fdpass-off), the arms that run another arm's
    # mechanism (their distance is the noise between two runs of one
    # mechanism), the burst study's order.
    facts = meta.arm_facts
    knob_off, same_mechanism = facts.knob_off_of(), facts.same_mechanism_pairs()
    listed = tuple(meta.variants) + tuple(a for a, _ in (p.anchors if p else ()))
    arm_order = ordered(facts.in_study("burst") + [a for a in listed if a not in facts.names()],
                        {b.arm for b in bursts} | {f.key[0] for f in rows if isinstance(f, Failed)})
    rank = {a: i for i, a in enumerate(arm_order)}
    work_us = p.work_us if p else None
    noise = max((r for spread in same_mechanism_spreads(stats, same_mechanism).values() for r in spread),
                default=None)
    for n in sorted({b.workers for b in bursts}):
        out += [f"### {plural(n, 'worker')}", "",
                "| arm | K | completion ms (median) | CPU floor ms | p50 ms | p99 ms | served per worker, by burst |",
                "|---|---|---|---|---|---|---|"]
        keys = sorted((k for k in stats if k[1] == n), key=lambda k: (rank.get(k[0], len(rank)), k[2]))
        for key in keys:
            c = stats[key]
            floor = ms(key[2] * work_us / min(n, meta.cpus) / 1000) if work_us is not None else "-"
            out.append(f"| {cell_text(key[0])} | {key[2]} | {ms(c.completion)} | {floor} | {ms(c.p50)} | "
                       f"{ms(c.p99)} | {c.splits} |")
        out.append("")
        lines = []
        for k in sorted({key[2] for key in keys}):
            bare = stats.get(("bare", n, k))
            per = []
            if bare is not None:
                per.append(f"bare {ms(bare.completion)} ms (p99 {ms(bare.p99)} ms; its busiest worker took "
                           f"{busiest_share(cells[('bare', n, k)]):.0%} of a burst, median, against "
                           f"{1 / n:.0%} for an even split)")
            for key in (kk for kk in keys if kk[2] == k and kk[0] != "bare"):
                c = stats[key]
                text = f"{key[0]} {ms(c.completion)} ms, {vs(c, bare, 'bare')}"
                off = knob_off.get(key[0])
                if off:
                    text += ", " + vs(c, stats.get((off, n, k)), off)
                per.append(text + f" (p99 {ms(c.p99)} ms)")
            lead = lead_text({kk[0]: stats[kk].completion for kk in keys
                              if kk[2] == k and stats[kk].completion is not None}, noise)
            if lead:
                per.append(lead)
            lines.append(f"- K = {k}: " + "; ".join(per) + ".")
        if lines:
            out += [f"**What this shows at {plural(n, 'worker')}** (completion time, median over the bursts):",
                    ""] + lines + [""]
    out += summary_table(stats, rank, knob_off, same_mechanism)
    failed = [f for f in rows if isinstance(f, Failed)]
    out += failed_notes(failed, lambda key: f"{key[0]} at {plural(key[1], 'worker')}")
    return out


def summary_table(stats: dict, rank: dict, knob_off: dict, same_mechanism: tuple) -> list:
    """Every arm's completion time over bare's at each worker count and K (and
    over its knob-off arm's, in parentheses): under 1 is a faster burst."""
    columns = sorted({key[1:] for key in stats})
    arms_here = sorted({key[0] for key in stats if key[0] != "bare"}, key=lambda a: rank.get(a, len(rank)))
    if not arms_here or not any(("bare",) + c in stats for c in columns):
        return []

    def ratio(a, b):
        if a is None or b is None or a.completion is None or not b.completion:
            return None
        return a.completion / b.completion

    out = ["### Against bare and the knob-off arm", "",
           "Each arm's median completion time over bare's at the same worker count and K (under 1: the burst "
           "finished sooner), and over its knob-off arm's in parentheses:", "",
           "| arm | " + " | ".join(f"{n} workers, K {k}" for n, k in columns) + " |",
           "|---|" + "---|" * len(columns)]
    for arm in arms_here:
        cells = []
        for c in columns:
            r = ratio(stats.get((arm,) + c), stats.get(("bare",) + c))
            off = knob_off.get(arm)
            r_off = ratio(stats.get((arm,) + c), stats.get((off,) + c)) if off else None
            cells.append(("-" if r is None else f"{r:.2f}") + ("" if r_off is None else f" ({r_off:.2f})"))
        out.append(f"| {cell_text(arm)} | " + " | ".join(cells) + " |")
    out.append("")
    for (twin, of), spread in same_mechanism_spreads(stats, same_mechanism).items():
        if spread:
            out += [f"{twin} runs {of}'s mechanism, so their distance is this run's noise between two "
                    f"measurements of one mechanism: their completion times differ by up to {max(spread):.2f}x "
                    f"(median over the cells {statistics.median(spread):.2f}x); ratios in the table closer to 1 "
                    "than that are not resolved by this run.", ""]
    return out


def same_mechanism_spreads(stats: dict, same_mechanism: tuple) -> dict:
    """(twin, of) -> the distance (>= 1) between the two arms' median
    completion times in every cell both measured: two measurements of one
    mechanism (same_mechanism: the run's (twin, of) pairs), so the run's
    noise between arms."""
    out = {}
    for twin, of in same_mechanism:
        spread = []
        for key, c in stats.items():
            other = stats.get((of,) + key[1:])
            if key[0] == twin and other and c.completion and other.completion:
                spread.append(max(c.completion / other.completion, other.completion / c.completion))
        out[(twin, of)] = spread
    return out


def lead_text(completion: dict, noise) -> str:
    """Which arm finished its bursts soonest (arm -> median completion), said
    only when its lead over every other arm is beyond this run's noise (the
    largest distance between two arms of one mechanism): 'fastest: X';
    otherwise the arms within that distance of the soonest are a tie."""
    if len(completion) < 2:
        return ""
    ranked = sorted(completion, key=lambda a: (completion[a], a))
    best = completion[ranked[0]]
    if noise is None:
        return (f"soonest median: {ranked[0]}, a lead not resolved (no two arms of one mechanism were measured "
                "to bound this run's noise)")
    tied = [a for a in ranked if completion[a] <= best * noise]
    if len(tied) == 1:
        return (f"fastest: {ranked[0]} (the next, {ranked[1]}, took {completion[ranked[1]] / best:.2f}x as long, "
                f"beyond this run's noise of {noise:.2f}x)")
    return f"tied within this run's noise ({noise:.2f}x): {', '.join(tied)}"


def render_burst_absent(meta: Meta) -> list:
    return ["## Payoff where arrival matters: bursts of new connections", "",
            "The burst study was not run in this run (it has no burst.jsonl).", ""]


read_burst = row_reader(parse_burst_row, check_burst_rows)
STUDY = Study("burst", "burst.jsonl", read_burst, render_burst, is_round=lambda row: isinstance(row, Burst),
              absent=render_burst_absent)
