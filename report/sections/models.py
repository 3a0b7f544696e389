"""The models (models.jsonl, written by models/skew.py campaign): what each
model predicts against what was measured, whether each check could have
failed with the rounds it had, the race model's split shapes against the
measured ones, and the race model's sweep over bigger machines with each
cell's sampling interval."""

from dataclasses import dataclass
from typing import Optional

from acceptlab import balance
from acceptlab.results_io import RowError
from models.spread import clopper_pearson, consistent_outcomes, ranks_outside  # (models/spread.py)
from report.common import Failed, Meta, Study, cell_text, get_int, get_number, get_str, is_int, plural, row_reader


@dataclass(frozen=True)
class ModelRow:
    line: int
    model: str
    case: str
    workers: int
    connections: int
    cpus: Optional[int]
    shape: str
    method: str
    predicted: Optional[float]
    measured: Optional[float]
    rounds: int
    ci95: Optional[tuple]
    consistent: Optional[bool]
    source: str
    latency_source: Optional[str] = None
    measured_splits: tuple = ()  # the balancing rounds a row was checked against, when it says them
    predicted_split: Optional[str] = None  # a rule's predicted split
    outside_rounds: Optional[int] = None
    rule_checked: Optional[int] = None  # exclusive-wakeup: connections the rule was checked on
    rule_matched: Optional[int] = None
    measured_after: tuple = ()  # per measured round, what ran just before it on the same server
    predicted_rounds: Optional[int] = None
    predicted_splits: tuple = ()  # ((split, simulated rounds), ...), the commonest first
    envelope: Optional[dict] = None  # race rows: the simulated shape (median, low, high per rank; coverage)
    shape_outside: tuple = ()  # per measured round: outside the simulated shape
    shape_consistent: Optional[bool] = None
    per_worker: Optional[bool] = None
    latency_workers: Optional[int] = None
    latency_samples: Optional[int] = None
    accept_us: Optional[float] = None
    arrival_us: Optional[float] = None
    client_cpu: Optional[bool] = None
    seed: Optional[int] = None


KINDS = {  # an optional key's type: (test, what the error says it must be)
    "int": (lambda v: is_int(v) and v >= 0, "an integer >= 0"),
    "number": (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0, "a number >= 0"),
    "bool": (lambda v: isinstance(v, bool), "true or false"),
}


def optional(obj: dict, key: str, kind: str):
    """An optional key of a kind (KINDS), or None when null or absent."""
    value = obj.get(key)
    if value is None:
        return None
    test, words = KINDS[kind]
    if not test(value):
        raise RowError(f'"{key}" must be {words} or null')
    return value


def string_list(obj: dict, key: str, nullable_items: bool = False) -> tuple:
    value = obj.get(key) or []
    if not isinstance(value, list) or not all(isinstance(x, str) or (nullable_items and x is None) for x in value):
        raise RowError(f'"{key}" must be an array of strings')
    return tuple(value)


def parse_envelope(obj: dict, workers: int) -> Optional[dict]:
    env = obj.get("predicted_shape")
    if env is None:
        return None
    if not isinstance(env, dict):
        raise RowError('"predicted_shape" must be an object or null')
    for key in ("median", "low", "high"):
        v = env.get(key)
        if not (isinstance(v, list) and len(v) == workers and all(is_int(x) and x >= 0 for x in v)):
            raise RowError(f'"predicted_shape" "{key}" must be {workers} counts')
    for key in ("coverage", "level"):
        v = env.get(key)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1:
            raise RowError(f'"predicted_shape" "{key}" must be a share in 0..1')
    if not is_int(env.get("rounds")) or env["rounds"] < 1:
        raise RowError('"predicted_shape" "rounds" must be an integer >= 1')
    return env


def parse_model_row(obj: dict, line: int):
    if "error" in obj:
        return Failed(line, (obj.get("model"),), str(obj["error"]))
    predicted = get_number(obj, "predicted_outside", nullable=True)
    measured = get_number(obj, "measured_outside", nullable=True)
    ci = obj.get("ci95")
    if ci is not None and not (isinstance(ci, list) and len(ci) == 2
                               and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in ci)):
        raise RowError('"ci95" must be null or [low, high]')
    consistent = obj.get("consistent")
    if consistent is not None and not isinstance(consistent, bool):
        raise RowError('"consistent" must be true, false or null')
    cpus = obj.get("cpus")
    if cpus is not None and not is_int(cpus):
        raise RowError('"cpus" must be an integer or null')
    rule = obj.get("predicted_split")
    if rule is not None and not isinstance(rule, str):
        raise RowError('"predicted_split" must be a split or null')
    splits = string_list(obj, "measured_splits")
    after = string_list(obj, "measured_after", nullable_items=True)
    if after and len(after) != len(splits):
        raise RowError('"measured_after" must name one entry per measured split')
    commonest = obj.get("predicted_splits") or {}
    if not isinstance(commonest, dict) or not all(is_int(n) and n >= 0 for n in commonest.values()):
        raise RowError('"predicted_splits" must be an object of split -> simulated rounds')
    workers = get_int(obj, "workers", 1)
    shape_outside = obj.get("shape_outside") or []
    if not isinstance(shape_outside, list) or not all(isinstance(x, bool) for x in shape_outside) or (
            shape_outside and len(shape_outside) != len(splits)):
        raise RowError('"shape_outside" must be true or false per measured split')
    return ModelRow(
        line, get_str(obj, "model"), get_str(obj, "case"), workers, get_int(obj, "connections", 0), cpus,
        get_str(obj, "shape"), get_str(obj, "method"), predicted, measured, get_int(obj, "measured_rounds", 0),
        tuple(ci) if ci else None, consistent, obj.get("source") or "-", obj.get("latency_source"), splits, rule,
        optional(obj, "outside_rounds", "int"), optional(obj, "rule_checked", "int"),
        optional(obj, "rule_matched", "int"), after, optional(obj, "predicted_rounds", "int"),
        tuple(commonest.items()), parse_envelope(obj, workers), tuple(shape_outside),
        optional(obj, "shape_consistent", "bool"), optional(obj, "per_worker", "bool"),
        optional(obj, "latency_workers", "int"), optional(obj, "latency_samples", "int"),
        optional(obj, "accept_us", "number"), optional(obj, "arrival_us", "number"),
        optional(obj, "client_cpu", "bool"), optional(obj, "seed", "int"))


# ---------------------------------------------------------------- formatting

def pct(x: Optional[float]) -> str:
    return "-" if x is None else f"{x:.0%}" if x >= 0.1 or x == 0 else f"{x:.1%}"


def span(lo: float, hi: float) -> str:
    return f"{pct(lo)}–{pct(hi)}"


def ranges_text(low: list, high: list) -> str:
    return " / ".join(str(lo) if lo == hi else f"{lo}–{hi}" for lo, hi in zip(low, high))


def rank_name(i: int) -> str:
    return "the busiest worker" if i == 0 else f"rank {i + 1}"


def source_arm(r: ModelRow) -> Optional[str]:
    """The arm whose balancing rounds a row was measured on: its source's
    "balancing.jsonl arm X" ("variant X" as models/skew.py wrote it before
    the rows said arm), None for any other source."""
    if not r.source.startswith("balancing.jsonl"):
        return None
    word = next((w for w in ("arm ", "variant ") if w in r.source), None)
    return r.source.split(word, 1)[-1] if word else r.source


def shape_case(r: ModelRow) -> str:
    return r.case if r.case.startswith(r.shape) else r.shape


def check_name(r: ModelRow) -> str:
    """A check as the findings name it: the arm, shape and worker count for
    a check against balancing rounds, else the model and its case."""
    arm = source_arm(r)
    if arm:
        return f"{arm} {shape_case(r)} at {r.workers} workers"
    if r.model == "reuseport-burst":
        return f"reuseport-model bursts of {r.connections} to {r.workers} listeners"
    if r.model == "exclusive-wakeup":
        return f"exclusive-model {r.case} with {r.workers} processes"
    return f"{r.model} {r.case} at {r.workers} workers"


# ---------------------------------------------------------------- checks

@dataclass(frozen=True)
class Check:
    """One prediction against one measurement, as a share of n trials."""
    row: ModelRow
    counted: str      # what the trials are and what is counted
    predicted: float  # the predicted share
    hits: int         # the trials counted
    trials: int
    low: float        # the measured share's 95% interval (Clopper-Pearson)
    high: float
    held: Optional[tuple]  # the outcomes (hits) whose interval holds the prediction, first..last
    consistent: bool  # the row's verdict

    @property
    def could_fail(self) -> bool:
        return self.held is None or self.held[0] > 0 or self.held[1] < self.trials

    def fails_if(self) -> str:
        """The outcomes of this many trials that would have contradicted the prediction."""
        n = self.trials
        if self.held is None:
            return f"any of {n}"
        first, last = self.held
        parts = []
        if first > 0:
            parts.append("0" if first == 1 else f"≤ {first - 1}")
        if last < n:
            parts.append(str(n) if last + 1 == n else f"≥ {last + 1}")
        return " or ".join(parts) + f" of {n}" if parts else f"no outcome of {n}"


def check_of(r: ModelRow) -> Optional[Check]:
    """The check a row makes, or None when it has nothing to compare."""
    if r.consistent is None or r.predicted is None:
        return None
    if r.model == "exclusive-wakeup" and r.rule_checked is not None and r.rule_matched is not None:
        # The rule names each connection's winner: its prediction is that all match.
        p, x, n, counted = 1.0, r.rule_matched, r.rule_checked, "connections matching the rule"
    else:
        n = r.rounds
        x = r.outside_rounds if r.outside_rounds is not None else round((r.measured or 0) * n)
        p = r.predicted
        counted = ("repetitions" if r.model == "reuseport-burst" else "rounds") + " outside 2:1"
    if n == 0:
        return None
    lo, hi = clopper_pearson(x, n)
    return Check(r, counted, p, x, n, lo, hi, consistent_outcomes(p, n), r.consistent)


def shape_check_of(r: ModelRow) -> Optional[Check]:
    """A race row's shape check: its measured rounds outside the simulated
    shape, against the share of simulated rounds outside it (1 - coverage)."""
    if r.envelope is None or not r.measured_splits or r.shape_consistent is None:
        return None
    n = len(r.measured_splits)
    x = sum(r.shape_outside)
    p = round(1 - r.envelope["coverage"], 4)
    lo, hi = clopper_pearson(x, n)
    return Check(r, "rounds outside the simulated shape", p, x, n, lo, hi, consistent_outcomes(p, n),
                 r.shape_consistent)


def verdict(c: Check) -> str:
    if not c.consistent:
        return "NO"
    return "yes" if c.could_fail else "yes, could not fail"


def rounds_text(r: ModelRow, outside_of) -> str:
    """Each measured round of a failed check: its split, whether it was
    outside, its place among the rounds and what ran before it on its server."""
    parts = []
    for i, split in enumerate(r.measured_splits):
        where = f"round {i + 1}"
        if i < len(r.measured_after):
            after = r.measured_after[i]
            where += f", after {after}" if after else ", the server's first"
        parts.append(f"{split} {'outside' if outside_of(i, split) else 'inside'} ({where})")
    return "; ".join(parts)


def split_outside_2to1(split: str, workers: int) -> bool:
    """A split ("21/11") outside 2:1 over `workers` (one not listed has none)."""
    return not balance.within_2to1([int(x) for x in split.split("/")], workers)


def failure_text(c: Check) -> str:
    r = c.row
    text = f"{check_name(r)}: predicted {pct(c.predicted)} of {c.counted}"
    if r.predicted_split:
        text += f" (the rule's split {r.predicted_split})"
    text += f", measured {c.hits} of {c.trials}"
    if r.measured_splits:
        text += ": " + rounds_text(r, lambda i, s: split_outside_2to1(s, r.workers))
    return text


# ---------------------------------------------------------------- the section

def render_models(meta: Meta, rows: list) -> list:
    out = ["## Models: predicted against measured", ""]
    out.append(
        "What was measured and predicted (`models/`, see its README for the assumptions): "
        "`reuseport-model` opens bursts to N bare SO_REUSEPORT listeners (no workers, no HTTP, in a network "
        "namespace of its own) and counts where each landed, against the exact chance that a uniform hash "
        "spread falls outside 2:1; `exclusive-model` records which of N EPOLLEXCLUSIVE waiters the kernel "
        "wakes for each connection, against the rule read from fs/eventpoll.c (the first-registered idle "
        "waiter wins); the race model simulates the bare accept race from the wake-to-accept latencies the "
        "tracer measured and predicts how often a round falls outside 2:1 and the shape of its split, checked "
        "against this run's balancing rows. Each check is a predicted share against a measured count of "
        "trials (rounds outside 2:1, or connections whose winner the rule named); the interval is the measured "
        "share's 95% (Clopper-Pearson), its width in percentage points; consistent means the prediction lies "
        "inside it. \"Fails if\" lists the outcomes of that many trials whose interval would have left the "
        "prediction out: a check with none could not have failed, whatever was measured, and is counted apart.")
    out.append("")
    models = [r for r in rows if isinstance(r, ModelRow)]
    measured = [r for r in models if r.measured is not None]
    sweep = [r for r in models if r.model == "race-sweep"]
    checks = {r.line: check_of(r) for r in measured}
    if measured:
        out += ["| model | case | N x K | counted | predicted (method) | measured | 95% interval | width | fails if | "
                "consistent | measured by |", "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in measured:
            c = checks[r.line]
            if c is None:
                out.append(f"| {r.model} | {cell_text(r.case)} | {r.workers} x {r.connections} | - | "
                           f"{pct(r.predicted)} ({r.method}) | {pct(r.measured)} ({r.rounds}) | - | - | - | - | {cell_text(r.source)} |")
                continue
            out.append(f"| {r.model} | {cell_text(r.case)} | {r.workers} x {r.connections} | {c.counted} | "
                       f"{pct(c.predicted)} ({r.method}) | {c.hits} of {c.trials} | {span(c.low, c.high)} | "
                       f"{(c.high - c.low) * 100:.0f} | {c.fails_if()} | {verdict(c)} | {cell_text(r.source)} |")
        out.append("")
    shapes = shape_section(measured)
    out += shapes[0]
    out += beside_balancing(measured)
    out += sweep_section(sweep, measured)
    out += findings(rows, [c for c in checks.values() if c is not None], shapes[1])
    return out


def shape_section(measured: list) -> tuple:
    """The race model's split shapes beside the measured rounds: (lines, shape checks)."""
    race = [r for r in measured if r.model == "race-bare" and r.measured_splits]
    if not race:
        return [], []
    out = ["### Split shapes: the race model against the measured rounds", ""]
    with_env = [r for r in race if r.envelope is not None]
    if not with_env:
        out += ["This run's race rows carry the commonest simulated splits only, not the simulated shape per rank "
                "(rows written before the models study recorded it), so the shapes are set side by side "
                "without a verdict.", "",
                "| N | arm | case | commonest simulated splits (simulated rounds) | measured rounds |",
                "|---|---|---|---|---|"]
        for r in race:
            top = sorted(r.predicted_splits, key=lambda kv: -kv[1])[:3]
            of = f" of {r.predicted_rounds}" if r.predicted_rounds else ""
            out.append(f"| {r.workers} | {cell_text(source_arm(r) or r.model)} | {cell_text(r.case)} | "
                       + ", ".join(f"{s} ({n}{of})" for s, n in top) + f" | {' '.join(r.measured_splits)} |")
        return out + [""], []
    level = with_env[0].envelope["level"]
    out += [f"Per rank (the busiest worker first), the simulated rounds' median count and the range that holds at "
            f"least {level:.0%} of them at every rank at once (each rank's central range at "
            f"{(1 - level):.0%}/N in the tails, Bonferroni); a measured round is outside the shape when any of its "
            "ranks is. The model's own rounds fall outside it at the rate \"simulated outside\" (counted on the "
            "simulated rounds); the measured rounds outside are checked against that rate as above.", "",
            "| N | arm | case | simulated median split | simulated range per rank | measured rounds | outside the "
            "shape | simulated outside | 95% interval | fails if | consistent |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    checks = []
    for r in with_env:
        env = r.envelope
        c = shape_check_of(r)
        median = "/".join(map(str, env["median"]))
        if c is None:
            out.append(f"| {r.workers} | {cell_text(source_arm(r) or r.model)} | {cell_text(r.case)} | {median} | "
                       f"{ranges_text(env['low'], env['high'])} | {' '.join(r.measured_splits)} | - | - | - | - | - |")
            continue
        checks.append(c)
        out.append(f"| {r.workers} | {cell_text(source_arm(r) or r.model)} | {cell_text(r.case)} | {median} | "
                   f"{ranges_text(env['low'], env['high'])} | {' '.join(r.measured_splits)} | {c.hits} of {c.trials} | "
                   f"{pct(c.predicted)} ({env['rounds']} rounds) | {span(c.low, c.high)} | {c.fails_if()} | "
                   f"{verdict(c)} |")
    out.append("")
    return out, checks


def rank_group(ranks: list) -> str:
    """Ranks (0 = the busiest worker) in words: "the busiest worker", "ranks 2–4",
    "the busiest worker and ranks 3–4"."""
    runs, ranks = [], sorted(ranks)
    for i in ranks:
        if runs and runs[-1][1] == i - 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    words = []
    for lo, hi in runs:
        if lo == 0:
            words.append("the busiest worker")
            lo += 1
            if lo > hi:
                continue
        words.append(f"rank {lo + 1}" if lo == hi else f"ranks {lo + 1}–{hi + 1}")
    text = " and ".join(words)
    return text


def shape_failure_text(c: Check) -> str:
    """Where a race row's measured rounds leave the simulated shape: per round
    outside it, the ranks above and below their simulated ranges."""
    r, env = c.row, c.row.envelope
    parts = []
    for split, outside in zip(r.measured_splits, r.shape_outside):
        if not outside:
            continue
        off = ranks_outside([int(x) for x in split.split("/")], env["low"], env["high"])
        above = [i for i, n, lo, hi in off if n > hi]
        below = [i for i, n, lo, hi in off if n < lo]
        where = [f"{rank_group(g)} {word}" for g, word in ((above, "above"), (below, "below")) if g]
        parts.append(f"{split} ({', '.join(where)})")
    busiest = env["low"][0], env["high"][0]
    return (f"{check_name(r)}: the model's median split {'/'.join(map(str, env['median']))} (the busiest worker "
            f"{busiest[0]}–{busiest[1]} of {r.connections}), measured " + ", ".join(parts))


def beside_balancing(measured: list) -> list:
    """The predictions checked against the balancing rows, a table per worker
    count, each beside the rounds it was checked against; only when the run
    has balancing rows at more than one worker count."""
    mine = [r for r in measured if r.source.startswith("balancing.jsonl")]
    counts = sorted({r.workers for r in mine})
    if len(counts) < 2:
        return []
    race = [r for r in mine if r.model == "race-bare" and r.workers > counts[0]]
    text = ("Each prediction above that was checked against this run's balancing rounds, at the worker count "
            "it was made for (16 connections per worker), beside those rounds' splits.")
    if race:
        cpus = sorted({r.cpus for r in race if r.cpus is not None})
        sources = {r.latency_source for r in race if r.latency_source}
        base = {r.latency_source for r in mine if r.model == "race-bare" and r.workers == counts[0]}
        text += (f" At more than {counts[0]} workers the race model runs on {' or '.join(map(str, cpus))} CPUs "
                 + (f"from the latencies its {counts[0]}-worker checks use." if sources <= base else
                    f"from the latencies of `{cell_text('; '.join(sorted(sources)))}`."))
    out = ["### The models beside the balancing rows, by worker count", "", text, ""]
    for n in counts:
        out += [f"#### {n} workers", "",
                "| arm | case | model | predicted | measured rounds | measured outside | consistent |",
                "|---|---|---|---|---|---|---|"]
        for r in (r for r in mine if r.workers == n):
            predicted = f"{pct(r.predicted)} outside" + (f" (split {r.predicted_split})" if r.predicted_split else "")
            if r.envelope:
                predicted += f" (median {'/'.join(map(str, r.envelope['median']))})"
            cons = "-" if r.consistent is None else "yes" if r.consistent else "NO"
            out.append(f"| {cell_text(source_arm(r))} | {cell_text(shape_case(r))} | {r.model} ({r.method}) | "
                       f"{predicted} | {' '.join(r.measured_splits) or '-'} | {pct(r.measured)} ({r.rounds}) | {cons} |")
        out.append("")
    return out


def latency_input(r: ModelRow) -> str:
    """How a race row drew its latencies, in words."""
    if r.per_worker:
        k = r.latency_workers
        return (f"each worker from one measured worker's own distribution (worker i from measured worker i mod {k})"
                if k else "each worker from one measured worker's own distribution")
    return "every worker from the pooled distribution"


def sweep_section(sweep: list, measured: list) -> list:
    if not sweep:
        return []
    ns = sorted({r.workers for r in sweep})
    cs = sorted({r.cpus for r in sweep if r.cpus is not None})
    cells = {}
    for r in sweep:
        n = r.predicted_rounds or 0
        x = r.outside_rounds if r.outside_rounds is not None else round((r.predicted or 0) * n)
        cells[(r.workers, r.cpus)] = (r, x, n, clopper_pearson(x, n) if n else None)
    first = sweep[0]
    rounds = sorted({c[2] for c in cells.values()})
    seeds = sorted({r.seed for r in sweep if r.seed is not None})
    text = ("Share of burst rounds (K = 16 connections per worker) outside 2:1 for N workers on C CPUs, "
            f"simulated from the wake-to-accept latencies of `{cell_text(first.latency_source or 'unknown')}`"
            + (f" ({plural(first.latency_samples, 'sample')})" if first.latency_samples else "")
            + f", {latency_input(first)}; {' or '.join(map(str, rounds))} simulated rounds per cell"
            + (f" (seed {', '.join(map(str, seeds))})" if seeds else "")
            + ", and in brackets each cell's 95% interval, the simulation's sampling error (Clopper-Pearson over "
            "its rounds). Not checked on a machine with more CPUs than this run's.")
    out = ["### The race model on machines bigger than this one (predicted only)", "", text, "",
           "| N workers | " + " | ".join(f"C = {c}" for c in cs) + " |", "|---|" + "---|" * len(cs)]
    for n in ns:
        row = []
        for c in cs:
            cell = cells.get((n, c))
            if cell is None:
                row.append("-")
            elif cell[3] is None:
                row.append(pct(cell[0].predicted))
            else:
                row.append(f"{pct(cell[0].predicted)} ({span(*cell[3])})")
        out.append(f"| {n} | " + " | ".join(row) + " |")
    out.append("")
    out += sweep_against_checks(cells, measured)
    return out


def sweep_against_checks(cells: dict, measured: list) -> list:
    """The sweep's cells beside the race checks made for the same N workers
    on C CPUs (burst, the client holding no CPU): whether the inputs are the
    same, and whether the check's value lies in the cell's interval."""
    lines = []
    for r in measured:
        if r.model != "race-bare" or r.case != "burst" or r.client_cpu or (r.workers, r.cpus) not in cells:
            continue
        cell, x, n, ci = cells[(r.workers, r.cpus)]
        if ci is None:
            continue
        inside = ci[0] <= r.predicted <= ci[1]
        differ = []
        if bool(cell.per_worker) != bool(r.per_worker):
            differ.append(f"the cell draws {latency_input(cell)}, the check {latency_input(r)}")
        if cell.latency_source != r.latency_source:
            differ.append(f"the cell's latencies are `{cell_text(cell.latency_source or 'unknown')}`, the check's "
                          f"`{cell_text(r.latency_source or 'unknown')}`")
        for key, label in (("accept_us", "accept cost (µs)"), ("arrival_us", "arrival spacing (µs)")):
            a, b = getattr(cell, key), getattr(r, key)
            if a is not None and b is not None and a != b:
                differ.append(f"{label} {a:g} in the cell, {b:g} in the check")
        text = (f"- N = {r.workers}, C = {r.cpus}: the cell {pct(cell.predicted)} ({x} of {n} rounds, "
                f"{span(*ci)}); the {r.workers}-worker burst check above {pct(r.predicted)} "
                f"({r.predicted_rounds or '?'} simulated rounds). ")
        if differ:
            text += "Their inputs differ: " + "; ".join(differ) + ". "
        else:
            text += "The same inputs. "
        text += ("The check's value lies inside the cell's interval." if inside else
                 "The check's value lies outside the cell's interval" +
                 (": the difference is the input, beyond the cell's sampling error." if differ else
                  ", beyond the cell's sampling error with the same inputs."))
        lines.append(text)
    if not lines:
        return []
    return ["The cells that repeat a check above (the same N and C, a burst):", ""] + lines + [""]


def findings(rows: list, checks: list, shape_checks: list) -> list:
    failed = [r for r in rows if isinstance(r, Failed)]
    held = [c for c in checks if c.consistent]
    untestable = [c for c in held if not c.could_fail]
    testable = [c for c in checks if c.could_fail]
    bad = [c for c in checks if not c.consistent]
    text = (f"**What this shows.** {len(held)} of {plural(len(checks), 'check')} against a measurement here were "
            "consistent with it")
    if untestable:
        widths = sorted((c.high - c.low) * 100 for c in untestable)
        trials = sorted({c.trials for c in untestable})
        spread = (f"{widths[0]:.0f}" if f"{widths[0]:.0f}" == f"{widths[-1]:.0f}"
                  else f"{widths[0]:.0f}–{widths[-1]:.0f}")
        text += (f"; {len(untestable)} of those could not have failed: with {' or '.join(map(str, trials))} "
                 f"trials every possible outcome's interval holds the prediction (their intervals are {spread} "
                 f"points wide). Of the {plural(len(testable), 'check')} that could have failed, "
                 f"{len(testable) - len(bad)} held")
    text += "." if not bad else ". Not consistent: " + "; ".join(failure_text(c) for c in bad) + "."
    out = [text, ""]
    if shape_checks:
        sheld = [c for c in shape_checks if c.consistent]
        sbad = [c for c in shape_checks if not c.consistent]
        s_untestable = [c for c in sheld if not c.could_fail]
        text = (f"**Split shapes.** {len(sheld)} of {plural(len(shape_checks), 'race-model check')} were "
                "consistent: their measured rounds left the simulated shape no more often than the model's own "
                "rounds do")
        if s_untestable:
            text += f" ({len(s_untestable)} of those could not have failed)"
        text += "." if not sbad else (". Not consistent (ranks above or below their simulated ranges): "
                                          + "; ".join(shape_failure_text(c) for c in sbad) + ".")
        out += [text, ""]
    if failed:
        out += [f"{plural(len(failed), 'model step')} failed: " + "; ".join(cell_text(f.error) for f in failed) + ".",
                ""]
    return out


read_models = row_reader(parse_model_row)
STUDY = Study("models", "models.jsonl", read_models, render_models, is_round=lambda row: False)
