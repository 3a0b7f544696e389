"""The balancing study (balancing.jsonl): which worker gets each new connection,
per variant and shape, one row per round, at each worker count the run
measured: the run's worker count (meta's "workers") in the main table, every
other count (rows whose "workers" differ: the arms users serve with, back-to-back
on one server) in a table of its own. Its rows (Round, FailedStep) are also
the peers study's rounds (sections/peers.py) and what figures.py and
quicklook.py draw the busiest worker's share from (at the run's worker count,
base_rows)."""

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from acceptlab import balance
from acceptlab.results_io import InputError, RowError
from report.common import (SEED_000, Meta, Shape, Study, cell_text, get, get_arm, get_counter, get_failure, get_int,
                           get_split, get_str, number, ordered, plural, row_reader)

# The probe's error counters, in the order the report lists them; any other
# counter a newer probe adds follows, alphabetically.
ERROR_ORDER = ("refused", "connect_timeout", "reset", "eof", "timeout", "bad_response", "send", "other")


@dataclass(frozen=True)
class Round:
    """One measured round of one variant and shape."""
    line: int
    variant: str
    shape: str
    round: int
    connections: int
    answered: int
    split: str
    ratio: Optional[float]  # None: a worker got none (infinite)
    starved: int
    errors: tuple  # (name, count) with count > 0, in ERROR_ORDER then by name
    requests_split: Optional[str] = None
    switched: Optional[int] = None
    mode: str = "process"  # the server's mode: "process" or "threads"
    step_handoffs: Optional[int] = None  # handoff arms: connections moved over the step's rounds
    workers: Optional[int] = None  # the server's worker count (balancing rows; None in the peers')
    counts: tuple = ()  # (worker, connections) as the row lists them
    how: str = "fresh"  # "fresh": a fresh server per shape; "back-to-back": the shapes on one server

    @property
    def within(self) -> bool:
        return balance.ratio_within_2to1(self.ratio)

    @property
    def troubled(self) -> bool:
        """Errors counted or connections left unanswered: the cell gets a `!`."""
        return bool(self.errors) or self.answered < self.connections


@dataclass(frozen=True)
class FailedStep:
    """A variant x shape step that produced no counts (server never ready, probe died...)."""
    line: int
    variant: str
    shape: str
    round: Optional[int]
    error: str
    workers: Optional[int] = None  # the step's worker count when the row says it


@dataclass(frozen=True)
class NotApplicable:
    """A shape that does not apply to a variant (the arms table's
    not_applicable: blocking's keepalive), recorded in place of its rounds."""
    line: int
    variant: str
    shape: str
    reason: str
    workers: Optional[int] = None
    round: Optional[int] = None


def parse_balancing_row(obj: dict, line: int, with_workers: bool = True):
    """A round (Round), a step that failed (FailedStep), or a shape that does
    not apply (NotApplicable). with_workers: the row must say its worker
    count (balancing rows do; the peers' rounds are read without it)."""
    variant = get_arm(obj)
    shape = get_str(obj, "shape")
    if "not_applicable" in obj:
        return NotApplicable(line, variant, shape, " ".join(get_str(obj, "not_applicable").split()),
                             get_int(obj, "workers", 1) if with_workers and "workers" in obj else None)
    if "error" in obj:
        error, rnd = get_failure(obj)
        return FailedStep(line, variant, shape, rnd, error,
                          get_int(obj, "workers", 1) if with_workers and "workers" in obj else None)

    rnd = get_int(obj, "round", 1)
    workers = get_int(obj, "workers", 1) if with_workers else None
    connections = get_int(obj, "connections", 1)
    answered = get_int(obj, "answered", 0)
    counts = tuple(get_counter(obj, "counts").items())
    split = get_split(obj, "split")
    ratio = get(obj, "ratio")
    if ratio is not None and (isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or ratio < 1):
        raise RowError(f'"ratio" must be a number >= 1 or null, got {json.dumps(ratio)}')
    starved = get_int(obj, "starved", 0)
    if (ratio is None) != (starved > 0):
        raise RowError(f'"ratio" {json.dumps(ratio)} and "starved" {starved} disagree '
                       '(ratio is null exactly when a worker got none)')
    errors = get_counter(obj, "errors")
    listed = [(k, errors[k]) for k in ERROR_ORDER if errors.get(k)]
    listed += sorted((k, n) for k, n in errors.items() if k not in ERROR_ORDER and n)
    requests_split = None
    if "requests_split" in obj:
        requests_split = get_split(obj, "requests_split")
    switched = None
    if "switched" in obj:
        switched = get_int(obj, "switched", 0)
    mode = get_str(obj, "mode") if "mode" in obj else "process"
    if mode not in ("process", "threads"):
        raise RowError(f'"mode" must be "process" or "threads", got {json.dumps(mode)}')
    step_handoffs = get_int(obj, "step_handoffs", 0) if "step_handoffs" in obj else None
    how = get_str(obj, "how") if "how" in obj else "fresh"
    if how not in ("fresh", "back-to-back"):
        raise RowError(f'"how" must be "fresh" or "back-to-back", got {json.dumps(how)}')
    return Round(line, variant, shape, rnd, connections, answered, split,
                 None if ratio is None else float(ratio), starved, tuple(listed),
                 requests_split, switched, mode, step_handoffs, workers, counts, how)


def check_balancing(path: Path, rows: list) -> None:
    """One row per (variant, workers, shape, round): a repeated round is a corrupt file, not data."""
    seen = {}
    for row in rows:
        if isinstance(row, Round):
            key = (row.variant, row.workers, row.shape, row.round)
            if key in seen:
                raise InputError(path, row.line, f"round {row.round} of {row.variant} {row.shape} "
                                 f"is already on line {seen[key]}")
            seen[key] = row.line


def is_base(meta: Meta, row) -> bool:
    """A row at the run's worker count (or one that does not say its count)."""
    return row.workers in (None, meta.workers)


def base_rows(meta: Optional[Meta], rows: list) -> list:
    """The rows at the run's worker count: the main table's, the figure's and
    the peers' comparison's (every row when there is no meta)."""
    return [r for r in rows if meta is None or is_base(meta, r)]


def shape_columns(meta: Meta, rows: list) -> list:
    """Shape labels in meta's order; shapes only the rows know follow, alphabetically."""
    by_name = {s.name: s for s in meta.shapes}
    present = {r.shape for r in rows}
    columns = []
    for name in ordered(tuple(by_name), present | set(by_name)):
        if name in by_name:
            columns.append((name, by_name[name].label()))
        else:
            sizes = {r.connections for r in rows if r.shape == name and isinstance(r, Round)}
            columns.append((name, f"{name} {sizes.pop()}" if len(sizes) == 1 else name))
    return columns


def sort_steps(steps: list) -> list:
    """Measured rounds in round order, then failed steps (by round if known) in file order."""
    return sorted(steps, key=lambda r: (not isinstance(r, Round), r.round or 0, r.line))


def not_applicable_notes(rows: list) -> list:
    """The lines under a table that say why its "not applicable" cells are
    so, once per variant and shape."""
    seen = {}
    for r in rows:
        if isinstance(r, NotApplicable):
            seen.setdefault((r.variant, r.shape), r.reason)
    if not seen:
        return []
    return (["\"not applicable\": a shape the variant was not run in, and why (the arms table's not_applicable):", ""]
            + [f"- {v}, {shape}: {reason}." for (v, shape), reason in seen.items()] + [""])


def error_note(r: Round) -> str:
    parts = []
    if r.answered < r.connections:
        parts.append(f"{r.answered} of {r.connections} connections answered")
    if r.errors:
        parts.append("errors: " + ", ".join(f"{name} {n}" for name, n in r.errors))
    else:
        parts.append("no error counted")
    return "; ".join(parts)


def steps_cell(name: str, shape: str, steps: list, notes: list) -> str:
    """One table cell: the steps' splits in round order (`!`, and a line added to
    notes, for a round with errors or unanswered connections; "failed: why" for
    a failed step), or "not run"."""
    parts = []
    for r in sort_steps(steps):
        if isinstance(r, NotApplicable):
            parts.append("not applicable")
        elif isinstance(r, FailedStep):
            parts.append("failed: " + cell_text(r.error))
        elif r.troubled:
            parts.append(r.split + "!")
            notes.append(f"- {name}, {shape}, round {r.round}: {error_note(r)}.")
        else:
            parts.append(r.split)
    return " ".join(parts) if parts else "not run"


def describe_shape(shape: Shape) -> str:
    """How the probe drives a shape, for the section's opening sentence."""
    if shape.name == "burst":
        how = f"opens {shape.connections} at once"
    elif shape.name == "ramp":
        gap = f", {number(shape.gap_ms)} ms apart" if shape.gap_ms is not None else ""
        how = f"opens {shape.connections} one at a time{gap}, holding all open"
    elif shape.name == "keepalive":
        reqs = f"{shape.requests} requests" if shape.requests is not None else "several requests"
        how = (f"opens {shape.connections}, holds them and asks {reqs} on each, also counting "
               "requests per worker and connections answered by two workers")
    else:
        how = f"opens {shape.connections}"
    return f"{shape.name} {how}"


def render_balancing(meta: Meta, all_rows: list) -> list:
    rows = base_rows(meta, all_rows)
    wide = [r for r in all_rows if not is_base(meta, r)]
    out = ["## Balancing", ""]
    shapes_said = "; ".join(describe_shape(s) for s in meta.shapes)
    out.append(
        f"What was measured: which worker gets each new connection. Each arm ran with "
        f"{plural(meta.workers, 'worker')} (processes, or threads of one process where the mode column "
        f"says threads: `/pid` then answers the thread's id), one server per arm and shape. In each round the probe "
        f"opens the round's connections and, once all are open, asks `/pid` on each and counts "
        f"connections per worker: {shapes_said}. Each cell holds one split per round, in round order "
        f"({plural(meta.rounds, 'round')} per shape planned): the per-worker counts, largest share "
        f"first, a worker that got none shown as 0. \"within 2:1\" counts an arm's measured rounds "
        f"whose max/min ratio is at most 2; a failed step is not a round.")
    out.append("")
    if not rows:
        out += [f"No rounds at {plural(meta.workers, 'worker')} were recorded in this run." if wide else
                "No rounds were recorded in this run.", ""]
        return out + render_by_workers(meta, wide)

    variants = ordered(meta.variants, {r.variant for r in rows})
    columns = shape_columns(meta, rows)
    steps = {}
    for r in rows:
        steps.setdefault((r.variant, r.shape), []).append(r)

    out.append("| arm | mode | " + " | ".join(label for _, label in columns) + " | within 2:1 |")
    out.append("|---|---|" + "---|" * len(columns) + "---|")
    notes = []
    for v in variants:
        cells = [steps_cell(v, shape, steps.get((v, shape), []), notes) for shape, _ in columns]
        measured = [r for r in rows if r.variant == v and isinstance(r, Round)]
        within = sum(r.within for r in measured)
        cells.append(f"{within}/{len(measured)}")
        mode = measured[0].mode if measured else "?"
        out.append(f"| {cell_text(v)} | {mode} | " + " | ".join(cells) + " |")
    out.append("")
    if notes:
        out.append("`!` marks a round with errors or unanswered connections:")
        out.append("")
        out += notes
        out.append("")
    out += not_applicable_notes(rows)

    out.append("**What this shows.** Per arm, from the rounds above: how many fell outside 2:1, "
               "how many left a worker with no connection, the worst and best round (by max/min), "
               "and for shapes that send several requests per connection the request splits.")
    out.append("")
    shape_rank = {name: i for i, (name, _) in enumerate(columns)}
    for v in variants:
        mine = sorted((r for r in rows if r.variant == v),
                      key=lambda r: (shape_rank[r.shape], not isinstance(r, Round), r.round or 0, r.line))
        out.append(f"- {variant_summary(v, mine)}")
    measured = [r for r in rows if isinstance(r, Round)]
    failed = [r for r in rows if isinstance(r, FailedStep)]
    overall = (f"All arms: {sum(r.within for r in measured)} of {plural(len(measured), 'round')} "
               f"within 2:1, {sum(r.starved > 0 for r in measured)} left a worker with no connection")
    if failed:
        overall += f", {plural(len(failed), 'step')} failed"
    out += ["", overall + ".", ""]
    return out + render_reference(measured) + render_by_workers(meta, wide)


def variant_summary(variant: str, rows: list) -> str:
    """One plain sentence group for a variant, computed from its rows in table order."""
    measured = [r for r in rows if isinstance(r, Round)]
    failed = [r for r in rows if isinstance(r, FailedStep)]
    parts = []
    if measured:
        outside = sum(not r.within for r in measured)
        starved = sum(r.starved > 0 for r in measured)
        parts.append(f"{outside} of {plural(len(measured), 'round')} outside 2:1; "
                     f"{starved or 'none'} left a worker with no connection.")
        rank = lambda r: math.inf if r.ratio is None else r.ratio  # noqa: E731
        worst = max(measured, key=rank)  # max/min keep the first of equals: table order
        best = min(measured, key=rank)
        if len(measured) == 1:
            parts.append(f"Its one round: {worst.shape} round {worst.round}, {worst.split}.")
        elif worst.ratio is None and best.ratio is None:
            parts.append(f"Every round left a worker with none (first: {worst.shape} round {worst.round}, "
                         f"{worst.split}).")
        elif rank(worst) == rank(best):
            parts.append(f"Every round had the same max/min (first: {worst.shape} round {worst.round}, "
                         f"{worst.split}).")
        else:
            parts.append(f"Worst: {worst.shape} round {worst.round}, {worst.split}; "
                         f"best: {best.shape} round {best.round}, {best.split}.")
        for shape in dict.fromkeys(r.shape for r in measured if r.requests_split is not None):
            ka = [r for r in measured if r.shape == shape and r.requests_split is not None]
            text = f"Requests per worker in {shape}: " + " ".join(r.requests_split for r in ka)
            with_switch = [r for r in ka if r.switched is not None]
            if with_switch:
                switched = sum(r.switched for r in with_switch)
                text += (f"; {plural(switched, 'connection')} answered by two workers"
                         if switched else "; no connection answered by two workers")
            parts.append(text + ".")
        moved = {}
        for r in measured:
            if r.step_handoffs is not None:
                moved.setdefault(r.shape, [r.step_handoffs, 0])[1] += r.connections
        if moved:
            parts.append("Connections handed to another thread: " + ", ".join(
                f"{shape} {n} of {total}" for shape, (n, total) in moved.items()) + ".")
        troubled = sum(r.troubled for r in measured)
        if troubled:
            parts.append(f"{plural(troubled, 'round')} with errors or unanswered connections (`!`).")
    else:
        parts.append("no round measured.")
    for f in failed:
        parts.append(f"{f.shape} failed: {' '.join(f.error.split())}.")
    skipped = list(dict.fromkeys(r.shape for r in rows if isinstance(r, NotApplicable)))
    if skipped:
        parts.append(f"{', '.join(skipped)} not applicable.")
    return f"{variant}: " + " ".join(parts)


# ---------------------------------------------------------------- other worker counts


def verdict_cell(name: str, shape: str, steps: list, notes: list) -> str:
    """steps_cell's splits, each measured round followed by its 2:1 verdict
    ("ok" within, "out" outside)."""
    parts = []
    for r in sort_steps(steps):
        if isinstance(r, NotApplicable):
            parts.append("not applicable")
            continue
        if isinstance(r, FailedStep):
            parts.append("failed: " + cell_text(r.error))
            continue
        mark = "!" if r.troubled else ""
        if r.troubled:
            notes.append(f"- {name}, {shape}, round {r.round}: {error_note(r)}.")
        parts.append(f"{r.split}{mark} {'ok' if r.within else 'out'}")
    return " ".join(parts) if parts else "not run"


def wide_columns(meta: Meta, rows: list) -> list:
    """(shape, label) at one worker count: meta's shapes' order, the
    connections from the rows (16 per worker), keepalive's requests from meta."""
    requests = {s.name: s.requests for s in meta.shapes}
    out = []
    for name in ordered(tuple(s.name for s in meta.shapes), {r.shape for r in rows}):
        sizes = sorted({r.connections for r in rows if r.shape == name and isinstance(r, Round)})
        size = "/".join(map(str, sizes))
        if name == "keepalive" and requests.get(name) and sizes:
            out.append((name, f"keepalive {size} x {requests[name]}"))
        else:
            out.append((name, f"{name} {size}".strip()))
    return out


def held_text(names: list) -> str:
    return ", ".join(names) if names else "none"


def render_by_workers(meta: Meta, rows: list) -> list:
    """The tables at the worker counts other than the run's: one per count,
    each round's split with its 2:1 verdict, and which arms held."""
    if not rows:
        return []
    counts = sorted({r.workers for r in rows})
    out = ["### Balancing at more workers", "",
           f"The same probe at {' and '.join(map(str, counts))} workers, 16 connections per worker in every shape "
           f"(the table above has {meta.workers}). The arms users serve with ran here: each on ONE server per "
           "worker count, taking the shapes one after another with no pause between rounds (back-to-back, as a "
           "server that never rests; a heading that says fresh had a fresh server per shape); the ramp's "
           "connections are spaced so a ramp round lasts as long as at the table above. Each round's split "
           "(largest first, a worker with none as 0) is followed by its verdict: ok within 2:1 (max/min <= 2), "
           "out outside it.", ""]
    held_everywhere = None
    for n in counts:
        mine = [r for r in rows if r.workers == n]
        measured = [r for r in mine if isinstance(r, Round)]
        hows = sorted({r.how for r in measured}) or ["back-to-back"]
        columns = wide_columns(meta, mine)
        variants = ordered(meta.variants, {r.variant for r in mine})
        steps = {}
        for r in mine:
            steps.setdefault((r.variant, r.shape), []).append(r)
        out += [f"#### {n} workers ({', '.join(hows)})", "",
                "| arm | mode | " + " | ".join(label for _, label in columns) + " | within 2:1 |",
                "|---|---|" + "---|" * len(columns) + "---|"]
        notes, held, missed = [], [], []
        for v in variants:
            cells = [verdict_cell(v, shape, steps.get((v, shape), []), notes) for shape, _ in columns]
            rounds = [r for r in measured if r.variant == v]
            within = sum(r.within for r in rounds)
            cells.append(f"{within}/{len(rounds)}")
            out.append(f"| {cell_text(v)} | {rounds[0].mode if rounds else '?'} | " + " | ".join(cells) + " |")
            if rounds and within == len(rounds) and not any(isinstance(r, FailedStep) for r in mine
                                                            if r.variant == v):
                held.append(v)
            elif rounds:
                rank = lambda r: math.inf if r.ratio is None else r.ratio  # noqa: E731
                worst = max(rounds, key=rank)
                starved = sum(r.starved > 0 for r in rounds)
                missed.append(f"{v} ({len(rounds) - within} of {plural(len(rounds), 'round')} out; worst "
                              f"{worst.shape} round {worst.round}, {worst.split}"
                              + (f"; {starved} left a worker with none" if starved else "") + ")")
        out.append("")
        if notes:
            out += ["`!` marks a round with errors or unanswered connections:", ""] + notes + [""]
        out += not_applicable_notes(mine)
        failed = sorted({r.variant for r in mine if isinstance(r, FailedStep)})
        text = (f"**What this shows at {n} workers.** Every round within 2:1: {held_text(held)}. "
                f"Outside 2:1 in some round: {held_text(missed)}.")
        if failed:
            text += f" A step failed for: {', '.join(failed)}."
        out += [text, ""]
        held_everywhere = set(held) if held_everywhere is None else held_everywhere & set(held)
    if len(counts) > 1:
        ran = ordered(meta.variants, {r.variant for r in rows})
        out += [f"Across {', '.join(map(str, counts[:-1]))} and {counts[-1]} workers, every round within 2:1 at "
                "every count: "
                f"{held_text([v for v in ran if v in (held_everywhere or set())])}.", ""]
    return out


# ---------------------------------------------------------------- reference rows


# Figures quoted from the seed design note, never merged with ours. The splits
# are kept exactly as the note writes them (13/19 is its order, not ours).
# The note's rows: what, shape, its rounds, the arm of ours that runs the
# same mechanism, source, and whether the note writes the splits in a fixed
# worker (listener) order, so that which one got the larger share can be
# read from them (False: largest first or unsaid, so it cannot).
REFERENCE_ROWS = (
    ("bare race, accept sharing off (the knob-off arm), Linux", "burst 32",
     "21/11 and 32/0", "fdpass-off", f'`{SEED_000}` ("Accept sharing"), section "After"', False),
    ("bare race, accept sharing off (the knob-off arm), Linux", "ramp 32",
     "27/5, 23/9", "fdpass-off", f'`{SEED_000}` ("Accept sharing"), section "After"', False),
    ("per-worker SO_REUSEPORT listeners, the note's two-listener model, Linux", "burst 32",
     "13/19, 13/19, 21/11", "reuseport",
     f'`{SEED_000}` ("Accept sharing"), section "The three candidates, and the measurement that chose"', True),
)


def note_rounds(text):
    """The note's splits ("21/11 and 32/0", "13/19, 13/19, 21/11") as lists of counts."""
    return [[int(n) for n in part.split("/")] for part in re.split(r",\s*|\s+and\s+", text.strip()) if part]


def _outside(split):
    """A note's split ("21/11") outside 2:1, as Round.within judges ours."""
    ns = [int(n) for n in re.split(r"[/ ]", split) if n]
    return not balance.within_2to1(ns)


def larger_of(counts) -> Optional[object]:
    """Which worker (key) got the larger share of a 2-worker round; None on a tie."""
    top = sorted(counts, key=lambda kv: -kv[1])
    if not top or (len(top) > 1 and top[0][1] == top[1][1]):
        return None
    return top[0][0]


def majority_text(owners: list, unit: str = "worker") -> str:
    """"the larger share went to one worker in every round", "... to one
    worker in 2 rounds and the other in 1", with ties said as ties."""
    ties = owners.count(None)
    decided = [o for o in owners if o is not None]
    by = sorted(((decided.count(o), o) for o in dict.fromkeys(decided)), key=lambda t: -t[0])
    if not decided:
        text = "every round tied"
    elif len(by) == 1:
        text = (f"the larger share went to the same {unit} in every round" if not ties else
                f"the larger share went to the same {unit} in {plural(by[0][0], 'round')}")
    else:
        text = (f"the larger share went to one {unit} in {plural(by[0][0], 'round')} and to "
                + " and ".join(f"another in {n}" for n, _ in by[1:]))
    return text + (f", {ties} tied" if ties and decided else "")


def moves(owners: list) -> Optional[bool]:
    """Whether the larger share changed hands between rounds (None: fewer than 2 decided rounds)."""
    decided = [o for o in owners if o is not None]
    return None if len(decided) < 2 else len(set(decided)) > 1


def reference_compare(note, arm, shape, measured, ordered_note=False) -> tuple:
    """How this run's rounds of arm in shape (2 workers, process mode) answer
    the note's rounds: (cell, what differs or ""). Compared: whether a round
    falls outside 2:1 (in both, or in neither), and where the note writes its
    splits in a fixed listener order, whether the larger share moves between
    workers from round to round or stays with one, as ours does."""
    mine = [r for r in measured if r.variant == arm and r.shape == shape and r.mode == "process"
            and r.workers in (None, 2)]
    if not mine:
        return "-", ""
    theirs = note_rounds(note)
    note_out = sum(_outside("/".join(map(str, ns))) for ns in theirs)
    ours_out = sum(not r.within for r in mine)
    owners = [larger_of(r.counts) for r in mine]
    text = (f"{arm}: {' '.join(r.split for r in mine)} ({ours_out} of {len(mine)} outside 2:1; "
            f"{majority_text(owners)})")
    differs = []
    if (note_out > 0) != (ours_out > 0):
        worst = max(theirs, key=lambda ns: max(ns) / max(min(ns), 1e-9))
        theirs_out = "all within" if not note_out else f"{note_out} of {len(theirs)} outside"
        ours_list = f" ({', '.join(r.split for r in mine if not r.within)})" if ours_out else ""
        differs.append(f"the note's rounds are {theirs_out} 2:1 (its most uneven {'/'.join(map(str, worst))}); "
                       f"here {ours_out} of {len(mine)} outside{ours_list}")
    if ordered_note:
        note_owner = [None if ns[0] == ns[1] else (0 if ns[0] > ns[1] else 1) for ns in theirs]
        note_moves, ours_moves = moves(note_owner), moves(owners)
        if note_moves is not None and ours_moves is not None and note_moves != ours_moves:
            note_way = "moves between listeners" if note_moves else "stays on one listener"
            differs.append(f"in the note the larger share {note_way}; here {majority_text(owners)}")
        elif note_moves is not None and ours_moves is not None:
            text += (f"; the larger share {'moves between workers' if ours_moves else 'stays with one worker'}, "
                     "as in the note")
    else:
        text += "; which worker the note's rounds favour it does not say"
    return ("**disagrees**: " if differs else "agrees: ") + text, "; ".join(differs)


def reference_verdict(note_rounds_text, arm, shape, measured, ordered_note=False):
    """The table cell of reference_compare."""
    return reference_compare(note_rounds_text, arm, shape, measured, ordered_note)[0]


def render_reference(measured=()) -> list:
    out = ["### Reference rows (not measured here)", ""]
    out.append(f'Quoted from the seed design note `{SEED_000}` ("Accept sharing"), for comparison '
               "with the table above, all with two workers. These are that note's figures, from its "
               "own server and machines, not results of this run, and nothing above is computed "
               "from them. Splits are written as the note writes them. \"This run\" gives the rounds "
               "of our arm with the same mechanism and compares what the note's rounds are about: whether a "
               "round falls outside 2:1 (in both, or in neither), and where the note writes its splits in a "
               "fixed listener order, whether the larger share moves between workers from round to round "
               "(our rounds of a shape ran on one server, so a worker keeps its identity across them).")
    out.append("")
    out.append("| what | shape | rounds | this run | source |")
    out.append("|---|---|---|---|---|")
    disagree = []
    for what, shape, splits, arm, source, in_order in REFERENCE_ROWS:
        cell, differs = reference_compare(splits, arm, shape.split()[0], measured, in_order)
        if differs:
            disagree.append(f"- {what}, {shape}: {differs}.")
        out.append(f"| {what} | {shape} | {splits} | {cell} | {source} |")
    out.append("")
    if disagree:
        out += ["**Where this run disagrees with the note.**", ""] + disagree + [""]
    return out


read_balancing = row_reader(parse_balancing_row, check_balancing)
STUDY = Study("balancing", "balancing.jsonl", read_balancing, render_balancing,
              is_round=lambda row: isinstance(row, Round))
