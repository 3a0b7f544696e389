#!/usr/bin/python3
"""report.py: turn one measured run under results/linux/ into report/linux.md.

`make report` only re-derives: this reads the run's meta.json and its JSON Lines
files and writes markdown tables, nothing else. The output is a pure function of
the run's files (no generation time, stable ordering), so regenerating from the
same run gives byte-identical output, and a golden test can pin it.

Each study is one entry in STUDIES: a file name, a row parser that rejects a
corrupt row with a message, and a renderer from parsed rows to a markdown
section. Adding placement.jsonl or cost.jsonl later means adding one parser, one
renderer and one Study line.

Any problem with the inputs is reported as ONE line, `report: FILE:LINE: what`,
and exit status 1; usage errors exit 2. Standard library only.
"""

import argparse
import json
import math
import re
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))
import figures  # noqa: E402  (report/figures.py: the SVG figures)
# The readers and errors report.py shares with figures.py (report/results_io.py).
from results_io import (InputError, RowError, decode_utf8, json_kind, parse_json, read_bytes,  # noqa: E402
                        read_jsonl, shown, write_atomic)

REPO = Path(__file__).resolve().parent.parent
DEFAULT_RESULTS = REPO / "results" / "linux"
DEFAULT_OUT = REPO / "report" / "linux.md"

WITHIN = 2.0  # the gate's bar: a round is balanced when max/min <= 2
SPLIT_RE = re.compile(r"^[0-9]+(/[0-9]+)*$")
RUN_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
# The probe's error counters, in the order the report lists them; any other
# counter a newer probe adds follows, alphabetically.
ERROR_ORDER = ("refused", "connect_timeout", "reset", "eof", "timeout", "bad_response", "send", "other")

SEED_000 = "shared/seeds/000_7431855f3c489ed2.txt"


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


# ---------------------------------------------------------------- field checks


def is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def get(obj: dict, key: str, where: tuple = ()):
    if key not in obj:
        raise RowError(f'missing required key "{key}"', where)
    return obj[key]


def get_str(obj: dict, key: str, where: tuple = ()) -> str:
    value = get(obj, key, where)
    if not isinstance(value, str) or not value.strip():
        raise RowError(f'"{key}" must be a non-empty string, got {json_kind(value)}', where + (key,))
    return value


def get_bool(obj: dict, key: str, where: tuple = ()) -> bool:
    value = get(obj, key, where)
    if not isinstance(value, bool):
        raise RowError(f'"{key}" must be true or false, got {json.dumps(value)}', where + (key,))
    return value


def get_int(obj: dict, key: str, minimum: int = 0, where: tuple = ()) -> int:
    value = get(obj, key, where)
    if not is_int(value) or value < minimum:
        raise RowError(f'"{key}" must be an integer >= {minimum}, got {json.dumps(value)}', where + (key,))
    return value


def get_counter(obj: dict, key: str) -> dict:
    """An object of name -> non-negative integer (counts per worker, error counters)."""
    value = get(obj, key)
    if not isinstance(value, dict):
        raise RowError(f'"{key}" must be an object, got {json_kind(value)}')
    for name, n in value.items():
        if not is_int(n) or n < 0:
            raise RowError(f'"{key}" entry "{name}" must be an integer >= 0, got {json.dumps(n)}')
    return value


def get_split(obj: dict, key: str) -> str:
    value = get(obj, key)
    if not isinstance(value, str) or not SPLIT_RE.match(value):
        raise RowError(f'"{key}" must be counts separated by "/" like "31/1", got {json.dumps(value)}')
    return value


# ---------------------------------------------------------------- meta.json


@dataclass(frozen=True)
class Shape:
    name: str
    connections: int
    gap_ms: Optional[float] = None
    requests: Optional[int] = None

    def label(self) -> str:
        """`burst 32`, `ramp 32 (10 ms)`, `keepalive 32 x 4`."""
        text = f"{self.name} {self.connections}"
        if self.requests is not None:
            text += f" x {self.requests}"
        if self.gap_ms is not None:
            text += f" ({number(self.gap_ms)} ms)"
        return text


@dataclass(frozen=True)
class Meta:
    stamp: str
    date: str
    git_commit: str
    git_dirty: bool
    kernel: str
    cpu_model: str
    cpus: int
    workers: int
    rounds: int
    shapes: tuple
    variants: tuple
    tools: tuple  # (name, version) sorted by name
    cost: Optional["BenchParams"] = None    # parameters.cost: how wrk ran (cost study)
    payoff: Optional["BenchParams"] = None  # parameters.payoff
    peers: Optional["PeersParams"] = None   # parameters.peers: how the peers study ran


def number(value) -> str:
    """10 -> "10", 2.5 -> "2.5": integral floats print without a fraction."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def parse_meta_obj(obj, run_name: str) -> Meta:
    if not isinstance(obj, dict):
        raise RowError(f"expected a JSON object, got {json_kind(obj)}")
    stamp = get_str(obj, "stamp")
    if stamp != run_name:
        raise RowError(f'"stamp" is {json.dumps(stamp)} but the run directory is {json.dumps(run_name)}', ("stamp",))
    date = get_str(obj, "date")
    if not re.match(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}", date):
        raise RowError(f'"date" must be an ISO-8601 date and time, got {json.dumps(date)}', ("date",))
    commit = get_str(obj, "git_commit")
    dirty = get(obj, "git_dirty")
    if not isinstance(dirty, bool):
        raise RowError(f'"git_dirty" must be true or false, got {json_kind(dirty)}', ("git_dirty",))
    kernel = get_str(obj, "kernel")
    cpu_model = get_str(obj, "cpu_model")
    cpus = get_int(obj, "cpus", 1)
    platform = get_str(obj, "platform")
    if platform != "linux":
        raise RowError(f'"platform" must be "linux" for the Linux report, got {json.dumps(platform)}', ("platform",))

    params = get(obj, "parameters")
    if not isinstance(params, dict):
        raise RowError(f'"parameters" must be an object, got {json_kind(params)}', ("parameters",))
    where = ("parameters",)
    workers = get_int(params, "workers", 1, where)
    rounds = get_int(params, "rounds", 1, where)
    raw_shapes = get(params, "shapes", where)
    if not isinstance(raw_shapes, list) or not raw_shapes:
        raise RowError('"shapes" must be a non-empty array', where + ("shapes",))
    shapes = []
    for i, s in enumerate(raw_shapes):
        at = where + ("shapes", i)
        if not isinstance(s, dict):
            raise RowError(f'"shapes"[{i}] must be an object, got {json_kind(s)}', at)
        name = get_str(s, "name", at)
        if any(name == seen.name for seen in shapes):
            raise RowError(f'"shapes"[{i}]: shape "{name}" is listed twice', at)
        connections = get_int(s, "connections", 1, at)
        gap = s.get("gap_ms")
        if gap is not None and (isinstance(gap, bool) or not isinstance(gap, (int, float)) or gap < 0):
            raise RowError(f'"shapes"[{i}] "gap_ms" must be a number >= 0, got {json.dumps(gap)}', at + ("gap_ms",))
        requests = None
        if "requests" in s:
            requests = get_int(s, "requests", 1, at)
        shapes.append(Shape(name, connections, gap, requests))
    raw_variants = get(params, "variants", where)
    if (not isinstance(raw_variants, list) or not raw_variants
            or not all(isinstance(v, str) and v.strip() for v in raw_variants)):
        raise RowError('"variants" must be a non-empty array of names', where + ("variants",))
    if len(set(raw_variants)) != len(raw_variants):
        raise RowError('"variants" lists a name twice', where + ("variants",))

    raw_tools = get(obj, "tools")
    if not isinstance(raw_tools, dict):
        raise RowError(f'"tools" must be an object, got {json_kind(raw_tools)}', ("tools",))
    for name, version in raw_tools.items():
        if not isinstance(version, str):
            raise RowError(f'"tools" entry "{name}" must be a version string, got {json_kind(version)}', ("tools", name))
    tools = tuple(sorted(raw_tools.items()))

    return Meta(stamp, date, commit, dirty, kernel, cpu_model, cpus, workers, rounds,
                tuple(shapes), tuple(raw_variants), tools,
                parse_bench_params(params, "cost", where), parse_bench_params(params, "payoff", where),
                parse_peers_params(params, where))


def locate(text: str, key_path: tuple) -> int:
    """The line of the innermost key in key_path that can be found, or 1.

    json does not keep positions, so this searches for each "key" in turn after
    the previous one; good enough to point a reader at the right line."""
    pos, line_pos = 0, 0
    for key in key_path:
        if not isinstance(key, str):
            continue
        hit = re.compile(r'"' + re.escape(key) + r'"\s*:').search(text, pos)
        if not hit:
            break
        pos = line_pos = hit.start()
    return text.count("\n", 0, line_pos) + 1


def read_meta(run_dir: Path) -> Meta:
    path = run_dir / "meta.json"
    text = decode_utf8(path, read_bytes(path))
    try:
        obj = parse_json(text)
    except json.JSONDecodeError as e:
        raise InputError(path, e.lineno, f"invalid JSON: {e.msg}") from None
    except ValueError as e:
        raise InputError(path, 1, f"invalid JSON: {e}") from None
    try:
        return parse_meta_obj(obj, run_dir.name)
    except RowError as e:
        raise InputError(path, locate(text, e.key_path), e.message) from None


# ---------------------------------------------------------------- the balancing study


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

    @property
    def within(self) -> bool:
        return self.ratio is not None and self.ratio <= WITHIN

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


def parse_balancing_row(obj: dict, line: int):
    variant = get_str(obj, "variant")
    shape = get_str(obj, "shape")
    if "error" in obj:
        error = obj["error"]
        if not isinstance(error, str):
            raise RowError(f'"error" must be a string, got {json_kind(error)}')
        rnd = obj.get("round")
        if rnd is not None and (not is_int(rnd) or rnd < 1):
            raise RowError(f'"round" must be an integer >= 1 or null, got {json.dumps(rnd)}')
        return FailedStep(line, variant, shape, rnd, error)

    rnd = get_int(obj, "round", 1)
    connections = get_int(obj, "connections", 1)
    answered = get_int(obj, "answered", 0)
    get_counter(obj, "counts")
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
    return Round(line, variant, shape, rnd, connections, answered, split,
                 None if ratio is None else float(ratio), starved, tuple(listed),
                 requests_split, switched, mode, step_handoffs)


def check_balancing(path: Path, rows: list) -> None:
    """One row per (variant, shape, round): a repeated round is a corrupt file, not data."""
    seen = {}
    for row in rows:
        if isinstance(row, Round):
            key = (row.variant, row.shape, row.round)
            if key in seen:
                raise InputError(path, row.line, f"round {row.round} of {row.variant} {row.shape} "
                                 f"is already on line {seen[key]}")
            seen[key] = row.line


def ordered(listed: tuple, present: set) -> list:
    """The names in the order meta.json lists them, then any others alphabetically."""
    return [n for n in listed if n in present] + sorted(present - set(listed))


def plural(n: int, word: str, words: Optional[str] = None) -> str:
    return f"{n} {word if n == 1 else (words or word + 's')}"


def cell_text(text: str) -> str:
    """One line, safe inside a markdown table cell."""
    return " ".join(text.split()).replace("|", "\\|")


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
    return sorted(steps, key=lambda r: (isinstance(r, FailedStep), r.round or 0, r.line))


def error_note(r: Round) -> str:
    parts = []
    if r.answered < r.connections:
        parts.append(f"{r.answered} of {r.connections} connections answered")
    if r.errors:
        parts.append("errors: " + ", ".join(f"{name} {n}" for name, n in r.errors))
    else:
        parts.append("no error counted")
    return "; ".join(parts)


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


def render_balancing(meta: Meta, rows: list) -> list:
    out = ["## Balancing", ""]
    shapes_said = "; ".join(describe_shape(s) for s in meta.shapes)
    out.append(
        f"What was measured: which worker gets each new connection. Each variant ran with "
        f"{plural(meta.workers, 'worker')} (processes, or threads of one process where the mode column "
        f"says threads: `/pid` then answers the thread's id), one server per variant and shape. In each round the probe "
        f"opens the round's connections and, once all are open, asks `/pid` on each and counts "
        f"connections per worker: {shapes_said}. Each cell holds one split per round, in round order "
        f"({plural(meta.rounds, 'round')} per shape planned): the per-worker counts, largest share "
        f"first, a worker that got none shown as 0. \"within 2:1\" counts a variant's measured rounds "
        f"whose max/min ratio is at most 2; a failed step is not a round.")
    out.append("")
    if not rows:
        out += ["No rounds were recorded in this run.", ""]
        return out

    variants = ordered(meta.variants, {r.variant for r in rows})
    columns = shape_columns(meta, rows)
    steps = {}
    for r in rows:
        steps.setdefault((r.variant, r.shape), []).append(r)

    out.append("| variant | mode | " + " | ".join(label for _, label in columns) + " | within 2:1 |")
    out.append("|---|---|" + "---|" * len(columns) + "---|")
    notes = []
    for v in variants:
        cells = []
        for shape, _ in columns:
            parts = []
            for r in sort_steps(steps.get((v, shape), [])):
                if isinstance(r, FailedStep):
                    parts.append("failed: " + cell_text(r.error))
                elif r.troubled:
                    parts.append(r.split + "!")
                    notes.append(f"- {v}, {shape}, round {r.round}: {error_note(r)}.")
                else:
                    parts.append(r.split)
            cells.append(" ".join(parts) if parts else "not run")
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

    out.append("**What this shows.** Per variant, from the rounds above: how many fell outside 2:1, "
               "how many left a worker with no connection, the worst and best round (by max/min), "
               "and for shapes that send several requests per connection the request splits.")
    out.append("")
    shape_rank = {name: i for i, (name, _) in enumerate(columns)}
    for v in variants:
        mine = sorted((r for r in rows if r.variant == v),
                      key=lambda r: (shape_rank[r.shape], isinstance(r, FailedStep), r.round or 0, r.line))
        out.append(f"- {variant_summary(v, mine)}")
    measured = [r for r in rows if isinstance(r, Round)]
    failed = [r for r in rows if isinstance(r, FailedStep)]
    overall = (f"All variants: {sum(r.within for r in measured)} of {plural(len(measured), 'round')} "
               f"within 2:1, {sum(r.starved > 0 for r in measured)} left a worker with no connection")
    if failed:
        overall += f", {plural(len(failed), 'step')} failed"
    out += ["", overall + ".", ""]
    return out + render_reference()


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
    return f"{variant}: " + " ".join(parts)


# ---------------------------------------------------------------- reference rows


# Figures quoted from the seed design note, never merged with ours. The splits
# are kept exactly as the note writes them (13/19 is its order, not ours).
REFERENCE_ROWS = (
    ("bare race, accept sharing off (the knob-off arm), Linux", "burst 32",
     "21/11 and 32/0", f'`{SEED_000}` ("Accept sharing"), section "After"'),
    ("bare race, accept sharing off (the knob-off arm), Linux", "ramp 32",
     "27/5, 23/9", f'`{SEED_000}` ("Accept sharing"), section "After"'),
    ("per-worker SO_REUSEPORT listeners, the note's two-listener model, Linux", "burst 32",
     "13/19, 13/19, 21/11", f'`{SEED_000}` ("Accept sharing"), section "The three candidates, and the measurement that chose"'),
)


def render_reference() -> list:
    out = ["### Reference rows (not measured here)", ""]
    out.append(f'Quoted from the seed design note `{SEED_000}` ("Accept sharing"), for comparison '
               "with the table above, all with two workers. These are that note's figures, from its "
               "own server and machines, not results of this run, and nothing above is computed "
               "from them. Splits are written as the note writes them.")
    out.append("")
    out.append("| what | shape | rounds | source |")
    out.append("|---|---|---|---|")
    for what, shape, splits, source in REFERENCE_ROWS:
        out.append(f"| {what} | {shape} | {splits} | {source} |")
    out.append("")
    return out


# ---------------------------------------------------------------- respawn, mutex delay, slow view


@dataclass(frozen=True)
class Failed:
    """A step of a study that produced no measurement, with its reason."""
    line: int
    key: tuple
    error: str


def get_number(obj: dict, key: str, nullable: bool = False):
    value = get(obj, key)
    if value is None and nullable:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or value < 0:
        raise RowError(f'"{key}" must be a number >= 0{" or null" if nullable else ""}, got {json.dumps(value)}')
    return value


def get_latency(obj: dict, key: str) -> dict:
    value = get(obj, key)
    if not isinstance(value, dict) or not all(is_int(value.get(p)) for p in ("p50", "p99")):
        raise RowError(f'"{key}" must be an object with integer "p50" and "p99"')
    return value


@dataclass(frozen=True)
class RespawnTrial:
    line: int
    variant: str
    migrate: bool
    trial: int
    connections: int
    answered: int
    reset: int
    timeout: int
    rebind_ms: Optional[float]


def parse_respawn_row(obj: dict, line: int):
    variant = get_str(obj, "variant")
    migrate = get_bool(obj, "migrate")
    if "error" in obj:
        trial = obj.get("trial")
        return Failed(line, (variant, migrate), (f"trial {trial}: " if is_int(trial) else "") + str(obj["error"]))
    return RespawnTrial(line, variant, migrate, get_int(obj, "trial", 1), get_int(obj, "connections", 1),
                        get_int(obj, "answered"), get_int(obj, "reset"), get_int(obj, "timeout"),
                        get_number(obj, "rebind_ms", nullable=True))


def failed_notes(failed: list, label) -> list:
    """One line per failed step, then a blank line (nothing if none failed)."""
    notes = [f"- {label(f.key)}: failed: {cell_text(f.error)}" for f in failed]
    return notes + [""] if notes else []


def render_respawn(meta: Meta, rows: list) -> list:
    trials = [r for r in rows if isinstance(r, RespawnTrial)]
    failed = [r for r in rows if isinstance(r, Failed)]
    arms = []
    for r in rows:
        key = (r.variant, r.migrate) if isinstance(r, RespawnTrial) else r.key
        if key not in arms:
            arms.append(key)

    def label(key):
        return key[0] + (" + migrate" if key[1] else "")

    out = ["## Respawn: what clients see while a worker is replaced", "",
           "Each trial runs in a network namespace of its own: 2 workers, worker 1 SIGSTOPped, "
           "a burst of connections connected and asking, then worker 1 SIGKILLed and the supervisor "
           "respawns it. A connection queued at the dead worker's own listener is reset (the probe "
           "reads a reset or EOF); \"+ migrate\" sets net.ipv4.tcp_migrate_req=1 in the namespace "
           "(`--reuseport-migrate`). Rebind: from the reap to the replacement serving, as the "
           "supervisor logs it. One cell entry per trial.", "",
           "| variant | reset / connections | answered | rebind ms |", "|---|---|---|---|"]
    for key in arms:
        mine = sorted((t for t in trials if (t.variant, t.migrate) == key), key=lambda t: t.trial)
        if not mine:
            continue
        out.append("| %s | %s | %s | %s |" % (
            label(key), " ".join(f"{t.reset}/{t.connections}" for t in mine),
            " ".join(str(t.answered) for t in mine),
            " ".join("-" if t.rebind_ms is None else f"{t.rebind_ms:.2f}" for t in mine)))
    out.append("")
    lines = []
    for key in arms:
        mine = [t for t in trials if (t.variant, t.migrate) == key]
        if mine:
            reset = sum(t.reset for t in mine)
            total = sum(t.connections for t in mine)
            lost = sum(t.connections - t.answered - t.reset for t in mine)
            lines.append(f"- {label(key)}: {reset} of {total} connections reset over "
                         f"{plural(len(mine), 'trial')}" + (f"; {lost} neither answered nor reset" if lost else "")
                         + ".")
    out += ["**What this shows.**", ""] + lines + (failed_notes(failed, label) or [""])
    return out


@dataclass(frozen=True)
class LatencyRound:
    line: int
    variant: str
    setting: object  # the delay in ms (mutex_delay) or the slow view's ms (slowview)
    round: int
    split: str
    answered: int
    connections: int
    first_byte: dict


def latency_row_parser(setting_key: str):
    def parse(obj: dict, line: int):
        variant = get_str(obj, "variant")
        if "error" in obj:
            return Failed(line, (variant, obj.get(setting_key)), str(obj["error"]))
        return LatencyRound(line, variant, get_int(obj, setting_key), get_int(obj, "round", 1),
                            get_split(obj, "split"), get_int(obj, "answered"), get_int(obj, "connections", 1),
                            get_latency(obj, "first_byte_us"))
    return parse


def latency_table(rows: list, label, head: str) -> list:
    measured = [r for r in rows if isinstance(r, LatencyRound)]
    keys = []
    for r in rows:
        key = (r.variant, r.setting) if isinstance(r, LatencyRound) else r.key
        if key not in keys:
            keys.append(key)
    out = [f"| {head} | rounds (split) | first byte p50 us | first byte p99 us |", "|---|---|---|---|"]
    for key in keys:
        mine = sorted((r for r in measured if (r.variant, r.setting) == key), key=lambda r: r.round)
        if mine:
            out.append("| %s | %s | %s | %s |" % (
                label(key), " ".join(r.split + ("!" if r.answered < r.connections else "") for r in mine),
                " ".join(str(r.first_byte["p50"]) for r in mine),
                " ".join(str(r.first_byte["p99"]) for r in mine)))
    return out + [""] + failed_notes([r for r in rows if isinstance(r, Failed)], label)



def worst_p99(rows: list, key) -> Optional[int]:
    mine = [r.first_byte["p99"] for r in rows if isinstance(r, LatencyRound) and (r.variant, r.setting) == key]
    return max(mine) if mine else None


def render_mutex_delay(meta: Meta, rows: list) -> list:
    out = ["## The accept mutex's delay", "",
           "nginx's accept_mutex (`mutex`): a worker that does not hold the token leaves the listener "
           "out of its epoll and waits at most accept_mutex_delay before trying again. A burst of 32 "
           "with 2 workers at three delays: the split, and the probe's first-byte latency (from "
           "sending the request to the first byte of the answer) per round.", ""]
    out += latency_table(rows, lambda key: f"mutex, delay {key[1]} ms", "arm")
    worst = [(key, worst_p99(rows, key)) for key in sorted({(r.variant, r.setting) for r in rows
                                                            if isinstance(r, LatencyRound)},
                                                           key=lambda k: -k[1])]
    if worst:
        out += ["**What this shows.** Worst first-byte p99 per delay: "
                + ", ".join(f"{k[1]} ms: {p} us" for k, p in worst) + ".", ""]
    return out


def render_slowview(meta: Meta, rows: list) -> list:
    settings = sorted({r.setting for r in rows if isinstance(r, LatencyRound)})
    ms = settings[0] if len(settings) == 1 else "N"
    out = ["## A slow inline view and the accept path", "",
           f"One client keeps a worker inside `/sleep?ms={ms}` (a slow view run inline) on a keep-alive "
           "connection while bursts arrive: an accept path that leaves new connections with the "
           "busy worker makes them wait for the view. Split and first-byte latency per round.", ""]
    out += latency_table(rows, lambda key: key[0], "arm")
    worst = [(r, worst_p99(rows, (r, s))) for r, s in dict.fromkeys(
        (x.variant, x.setting) for x in rows if isinstance(x, LatencyRound))]
    if worst:
        out += ["**What this shows.** Worst first-byte p99: "
                + ", ".join(f"{v}: {p} us" for v, p in worst) + ".", ""]
    return out


# ---------------------------------------------------------------- cost and payoff (wrk)


@dataclass(frozen=True)
class BenchParams:
    """How wrk was run for the cost or the payoff study (meta.json parameters.cost/.payoff)."""
    path: str
    threads: int
    connections: tuple  # cost: one count; payoff: one per column
    duration_s: float
    timeout_s: Optional[float]
    rounds: int
    close_gap_s: Optional[float] = None
    sysctls: tuple = ()  # (name, value), sorted by name
    anchors: tuple = ()  # cost: (arm, Anchor), in meta's order: servers not ours run as arms


def meta_number(obj: dict, key: str, where: tuple, minimum: float = 0, optional: bool = False):
    if optional and obj.get(key) is None:
        return None
    value = get(obj, key, where)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or value < minimum:
        raise RowError(f'"{key}" must be a number >= {number(minimum)}, got {json.dumps(value)}', where + (key,))
    return value


def parse_bench_params(params: dict, key: str, where: tuple) -> Optional[BenchParams]:
    if key not in params:
        return None
    obj = params[key]
    at = where + (key,)
    if not isinstance(obj, dict):
        raise RowError(f'"{key}" must be an object, got {json_kind(obj)}', at)
    conns = get(obj, "connections", at)
    conns = [conns] if is_int(conns) else conns
    if not isinstance(conns, list) or not conns or not all(is_int(c) and c >= 1 for c in conns):
        raise RowError('"connections" must be an integer >= 1 or a non-empty array of them', at + ("connections",))
    sysctls = obj.get("sysctls", {})
    if not isinstance(sysctls, dict) or not all(v is None or is_int(v) or isinstance(v, str)
                                                 for v in sysctls.values()):
        raise RowError('"sysctls" must be an object of name -> value', at + ("sysctls",))
    anchors = obj.get("anchor") or {}
    if not isinstance(anchors, dict):
        raise RowError(f'"anchor" must be an object of arm -> how it ran, got {json_kind(anchors)}', at + ("anchor",))
    parsed = []
    for arm, how in anchors.items():
        if not isinstance(how, dict):
            raise RowError(f'"anchor" entry "{arm}" must be an object, got {json_kind(how)}', at + ("anchor", arm))
        parsed.append((arm, Anchor(*(get_str(how, k, at + ("anchor", arm))
                                     for k in ("peer", "software", "access_log", "answer")))))
    return BenchParams(get_str(obj, "path", at), get_int(obj, "threads", 1, at), tuple(conns),
                       meta_number(obj, "duration_s", at, 1), meta_number(obj, "timeout_s", at, 0, True),
                       get_int(obj, "rounds", 1, at), meta_number(obj, "close_gap_s", at, 0, True),
                       tuple(sorted(sysctls.items())), tuple(parsed))


@dataclass(frozen=True)
class Anchor:
    """A server not ours that the cost study ran as an arm (meta.json parameters.cost.anchor)."""
    peer: str        # its configuration in probes/peers/peers.py
    software: str    # e.g. nginx/1.22.1
    access_log: str  # "off": it logs no request, as our server does not
    answer: str      # what it answers, as its configuration says


# wrk's error counters, in the order the report lists them (others follow, alphabetically).
WRK_ERROR_ORDER = ("connect", "read", "write", "timeout", "non_2xx_3xx")
COST_MODES = (("keepalive", "Keep-alive"), ("close", "Connection: close"))


@dataclass(frozen=True)
class WrkRun:
    """One wrk run: cost (setting = mode) or payoff (setting = connections)."""
    line: int
    arm: str
    workers: int
    setting: object
    round: int
    rps: float
    p50: float
    p99: float
    errors: tuple  # (name, count) with count > 0
    ratio: Optional[float] = None  # cost: req/s over bare's, same workers, mode, round
    time_wait_after: Optional[int] = None
    tw_sides: Optional[tuple] = None  # (server side, client side) on the run's server port
    served: Optional[str] = None  # connections served per worker, largest first: "33/0"
    ratio_to_knob_off: Optional[float] = None  # cost, fdpass: req/s over its knob-off arm's
    handoffs_per_s: Optional[float] = None  # fdpass, handoff: connections passed to a sibling per second
    ratio_to_process: Optional[float] = None  # cost, threads arms: req/s over the process arm's
    peer: Optional[str] = None  # cost, an anchor arm: the peer configuration it ran (a server not ours)
    software: Optional[str] = None  # and its software

    @property
    def key(self) -> tuple:
        return (self.arm, self.workers, self.setting)


def get_int_or_null(obj: dict, key: str) -> Optional[int]:
    value = obj.get(key)
    if value is not None and (not is_int(value) or value < 0):
        raise RowError(f'"{key}" must be an integer >= 0 or null, got {json.dumps(value)}')
    return value


def get_latency_ms(obj: dict, key: str) -> tuple:
    value = get(obj, key)
    if not isinstance(value, dict) or not all(
            not isinstance(value.get(p), bool) and isinstance(value.get(p), (int, float)) and value[p] >= 0
            for p in ("p50", "p99")):
        raise RowError(f'"{key}" must be an object with numbers >= 0 "p50" and "p99"')
    return value["p50"], value["p99"]


def wrk_row_parser(setting_key: str):
    """cost rows carry "mode", payoff rows "connections"; the rest is shared."""
    def parse(obj: dict, line: int):
        arm = get_str(obj, "arm")
        workers = get_int(obj, "workers", 1)
        if setting_key == "mode":
            setting = get_str(obj, "mode")
            if setting not in dict(COST_MODES):
                raise RowError(f'"mode" must be "keepalive" or "close", got {json.dumps(setting)}')
        else:
            setting = get_int(obj, setting_key, 1)
        if "error" in obj:
            error = obj["error"]
            if not isinstance(error, str):
                raise RowError(f'"error" must be a string, got {json_kind(error)}')
            rnd = obj.get("round")
            if rnd is not None and (not is_int(rnd) or rnd < 1):
                raise RowError(f'"round" must be an integer >= 1 or null, got {json.dumps(rnd)}')
            return Failed(line, (arm, workers, setting, rnd), error)
        rnd = get_int(obj, "round", 1)
        rps = get_number(obj, "requests_per_s")
        p50, p99 = get_latency_ms(obj, "latency_ms")
        errors = get_counter(obj, "errors")
        listed = [(k, errors[k]) for k in WRK_ERROR_ORDER if errors.get(k)]
        listed += sorted((k, n) for k, n in errors.items() if k not in WRK_ERROR_ORDER and n)
        get_number(obj, "duration_s")
        served = None if obj.get("served_split") is None else get_split(obj, "served_split")
        handoffs = get_number(obj, "handoffs_per_s", nullable=True) if "handoffs_per_s" in obj else None
        if setting_key != "mode":
            return WrkRun(line, arm, workers, setting, rnd, rps, p50, p99, tuple(listed), served=served,
                          handoffs_per_s=handoffs)
        ratio = get_number(obj, "ratio_to_bare", nullable=True)
        sides = obj.get("time_wait_sides")
        if sides is not None:
            if not isinstance(sides, dict) or not all(is_int(sides.get(k)) and sides[k] >= 0
                                                      for k in ("server", "client")):
                raise RowError('"time_wait_sides" must be null or an object with integers >= 0 '
                               '"server" and "client"')
            sides = (sides["server"], sides["client"])
        knob_off = get_number(obj, "ratio_to_knob_off", nullable=True) if "ratio_to_knob_off" in obj else None
        to_process = get_number(obj, "ratio_to_process", nullable=True) if "ratio_to_process" in obj else None
        peer = get_str(obj, "peer") if obj.get("peer") is not None else None
        software = get_str(obj, "software") if obj.get("software") is not None else None
        return WrkRun(line, arm, workers, setting, rnd, rps, p50, p99, tuple(listed),
                      ratio, get_int_or_null(obj, "time_wait_after"), sides, served, knob_off, handoffs,
                      to_process, peer, software)
    return parse


def check_wrk_rows(what: str, with_ratio: bool):
    """One measured row per (arm, workers, mode or connections, round); in cost,
    ratio_to_bare must be req/s over the bare row's at the same workers, mode and
    round (null exactly when no bare row was measured there)."""
    def check(path: Path, rows: list) -> None:
        seen = {}
        for r in rows:
            if isinstance(r, WrkRun):
                key = r.key + (r.round,)
                if key in seen:
                    raise InputError(path, r.line, f"round {r.round} of {r.arm} at {plural(r.workers, 'worker')}, "
                                     f"{what(r.setting)} is already on line {seen[key].line}")
                seen[key] = r
        if not with_ratio:
            return
        for r in rows:
            if not isinstance(r, WrkRun):
                continue
            bare = seen.get(("bare", r.workers, r.setting, r.round))
            where = f"{plural(r.workers, 'worker')}, {what(r.setting)}, round {r.round}"
            if bare is None or bare.rps == 0:
                if r.ratio is not None:
                    raise InputError(path, r.line, f'"ratio_to_bare" is {number(r.ratio)} but no bare row '
                                     f"with req/s > 0 was measured at {where}")
            elif r.ratio is None or abs(r.ratio - r.rps / bare.rps) > 0.0006:
                raise InputError(path, r.line, f'"ratio_to_bare" {json.dumps(r.ratio)} disagrees with '
                                 f"{number(r.rps)} req/s over bare's {number(bare.rps)} (line {bare.line}) "
                                 f"= {r.rps / bare.rps:.4f}")
    return check


def ms_text(value: float) -> str:
    """Latency in ms: 0.273, 5.84, 32.0, 118 (3 decimals under 1 ms, then fewer)."""
    for bound, digits in ((1, 3), (10, 2), (100, 1)):
        if value < bound:
            return f"{value:.{digits}f}"
    return f"{value:.0f}"


def wrk_notes(runs: list, label) -> list:
    notes = [f"- {label(r.key)}, round {r.round}: " + ", ".join(f"{name} {n}" for name, n in r.errors) + "."
             for r in sorted(runs, key=lambda r: r.line) if r.errors]
    if not notes:
        return []
    return ["`!` marks a run in which wrk counted errors (socket errors connect/read/write/timeout, "
            "or responses that were not 2xx/3xx):", ""] + notes + [""]


def wrk_failed(rows: list, label) -> list:
    failed = [Failed(f.line, f.key[:3], (f"round {f.key[3]}: " if f.key[3] else "") + f.error)
              for f in rows if isinstance(f, Failed)]
    return failed_notes(failed, label)


def wrk_cmd(p: BenchParams, connections: int, extra: str = "") -> str:
    timeout = f" --timeout {number(p.timeout_s)}s" if p.timeout_s is not None else ""
    return f"`wrk -t{p.threads} -c{connections} -d{number(p.duration_s)}s --latency{timeout}{extra}`"


def rotation_text(rounds: int, cell: str, per: str) -> str:
    """How the runs were alternated, for the opening sentence."""
    if rounds == 1:
        return f"arms were alternated: one round, running every {cell} once {per}"
    return (f"arms were alternated: each of the {rounds} rounds ran every {cell} once {per}, in an order "
            f"rotated by 1/{rounds} of the list from one round to the next, so drift over the run hits "
            "every arm alike")


def sysctl_value(p: BenchParams, name: str):
    return dict(p.sysctls).get(name)


def ports_text(p: BenchParams) -> str:
    rng = sysctl_value(p, "net.ipv4.ip_local_port_range")
    reuse = sysctl_value(p, "net.ipv4.tcp_tw_reuse")
    parts = []
    if isinstance(rng, str) and re.match(r"^\d+ \d+$", rng):
        lo, hi = map(int, rng.split())
        parts.append(f"the client's ephemeral ports were {lo}-{hi} ({hi - lo + 1} ports, "
                     "`net.ipv4.ip_local_port_range`)")
    if reuse is not None:
        meaning = {0: "off", 1: "on", 2: "on for loopback only"}.get(reuse, "")
        parts.append(f"`net.ipv4.tcp_tw_reuse` was {reuse}" + (f" ({meaning}: a connect may reuse a port "
                                                                "whose socket is in TIME_WAIT)" if meaning else ""))
    if not parts:
        return "the port range and tcp_tw_reuse were not recorded"
    return " and ".join(parts)


def render_cost(meta: Meta, rows: list) -> list:
    runs = [r for r in rows if isinstance(r, WrkRun)]
    p = meta.cost
    out = ["## Cost", ""]
    if p is None:
        out += ["meta.json does not record how wrk was run for this study; the figures are the rows' own.", ""]
    else:
        conns = p.connections[0]
        gap = (f" After every `Connection: close` run the campaign paused {number(p.close_gap_s)} s "
               "before the next run." if p.close_gap_s is not None else "")
        out += [f"What was measured: requests per second when answering costs next to nothing (`GET {p.path}`, "
                "the hello endpoint), so what the accept path costs shows. Each run starts a fresh server and "
                f"runs {wrk_cmd(p, conns)} against it on 127.0.0.1, in two modes: keep-alive (wrk opens its "
                f"{conns} connections once, so only the first {conns} requests need an accept) and "
                f"`-H \"Connection: close\"` (every request a new connection, so every request is an accept). "
                f"Every arm ran at each worker count in the table; "
                f"{rotation_text(p.rounds, 'arm x workers', 'per mode')}.{gap} "
                f"Ports: {ports_text(p)}; how many sockets were left in TIME_WAIT, and on which side, is "
                "measured after every run (`ss -tanH state time-wait`) and summed up under the "
                "Connection: close table. Each cell holds one entry per round, in round order: req/s, "
                "and in brackets the ratio to bare's req/s at the same workers, mode and round "
                "(`-` when bare has none there).", ""]
    anchors = dict(p.anchors) if p else {}
    anchor_arms = set(anchors) | {r.arm for r in runs if r.peer}
    anchor_rows = [r for r in rows if r.key[0] in anchor_arms]
    rows = [r for r in rows if r.key[0] not in anchor_arms]
    runs = [r for r in runs if r.arm not in anchor_arms]
    if not rows:
        return out + ["No runs were recorded in this run.", ""] + render_anchor(anchors, anchor_rows, runs)
    arms = ordered(meta.variants, {r.key[0] for r in rows})
    workers = sorted({r.key[1] for r in rows})
    label = lambda key: f"{key[0]}, {plural(key[1], 'worker')}, {dict(COST_MODES)[key[2]]}"  # noqa: E731
    for mode, title in COST_MODES:
        mine = [r for r in rows if r.key[2] == mode]
        if not mine:
            continue
        out += [f"### {title}", "",
                "| arm | " + " | ".join(plural(w, "worker") for w in workers) + " |",
                "|---|" + "---|" * len(workers)]
        for arm in arms:
            cells = []
            for w in workers:
                entries = sorted((r for r in mine if r.key[:2] == (arm, w)),
                                 key=lambda r: (r.round if isinstance(r, WrkRun) else (r.key[3] or 0), r.line))
                parts = []
                for r in entries:
                    if isinstance(r, Failed):
                        parts.append("failed")
                    else:
                        ratio = "-" if r.ratio is None else f"{r.ratio:.2f}"
                        parts.append(f"{r.rps:.0f} ({ratio})" + ("!" if r.errors else ""))
                cells.append(" ".join(parts) or "not run")
            out.append(f"| {cell_text(arm)} | " + " | ".join(cells) + " |")
        out.append("")
        measured = [r for r in runs if r.setting == mode]
        out += wrk_notes(measured, label) + wrk_failed(mine, label)
        lines = []
        for arm in arms:
            per = []
            for w in workers:
                if not [r for r in measured if r.key[:2] == (arm, w)]:
                    continue  # not run at this worker count
                ratios = [r.ratio for r in measured if r.key[:2] == (arm, w) and r.ratio is not None]
                if arm == "bare":
                    rps = [r.rps for r in measured if r.key[:2] == (arm, w)]
                    spread = f": {min(rps):.0f} to {max(rps):.0f}" if len(rps) > 1 else ""
                    if rps:
                        per.append(f"median {statistics.median(rps):.0f} req/s at {plural(w, 'worker')} "
                                   f"({plural(len(rps), 'round')}{spread})")
                elif ratios:
                    per.append(f"{statistics.median(ratios):.2f} at {plural(w, 'worker')} "
                               f"({plural(len(ratios), 'round')})")
                else:
                    per.append(f"no ratio at {plural(w, 'worker')}")
            if arm == "bare":
                lines.append(f"- bare (the reference): " + ("; ".join(per) if per else "no run measured") + ".")
            else:
                lines.append(f"- {arm}: median ratio to bare " + ", ".join(per) + "."
                             + knob_off_text(measured, arm, workers) + process_text(measured, arm, workers))
        out += ["**What this shows.** Per arm, the median over the rounds of its ratio to bare "
                "(above 1: more requests per second than bare in the same round); bare's own spread over "
                "the rounds is the run-to-run noise a ratio has to beat:", ""] + lines + [""]
        if mode == "close":
            out += time_wait_summary(p, measured)
    return out + render_anchor(anchors, anchor_rows, runs)


# Our arms set beside the anchor, in this order; the goal is on the first.
ANCHOR_COMPARED = ("bare", "fdpass")
ANCHOR_GOAL_WORKERS = 2


def render_anchor(anchors: dict, rows: list, ours: list) -> list:
    """The cost anchor: wrk against a server not ours (nginx), run as an arm in
    the same rounds, beside bare and fdpass, with the ratios per round."""
    runs = [r for r in rows if isinstance(r, WrkRun)]
    arms = list(anchors) + sorted({r.key[0] for r in rows} - set(anchors))
    if not arms:
        return ["### Anchor: nginx", "", "Not measured in this run: its cost study ran no server but ours (the "
                "campaign's cost study runs nginx as the arm `nginx`).", ""]
    out = []
    for arm in arms:
        mine = [r for r in runs if r.arm == arm]
        how = anchors.get(arm)
        peer = how.peer if how else next((r.peer for r in mine if r.peer), "?")
        software = how.software if how else next((r.software for r in mine if r.software), "?")
        log = (f"`access_log {how.access_log}`" if how else "its access log as configured")
        answer = f"`{how.answer}`" if how else "its configured answer"
        out += [f"### Anchor: {arm}", "",
                f"What was measured: the same wrk runs against {arm} ({software}: the peers' `{peer}` "
                "configuration from `probes/peers/peers.py`, the worker count of the cell, "
                f"{log}), started fresh for each run on a free port and stopped after it, and alternated with "
                "the arms above in the same rounds. Per request, nginx parses it, matches `location /` and "
                f"answers {answer} (headers Server, Date, Content-Type, Content-Length and Connection, the "
                "worker's pid as the body) and logs nothing; our server parses it and answers `GET /` with its "
                "fixed hello (headers Content-Type, Content-Length, X-Worker and Connection) and keeps no log "
                "either. Each cell: req/s per round, in round order; a ratio is ours over "
                f"{arm}'s in the same round and mode (`-` where either is missing).", ""]
        failed = [r for r in rows if isinstance(r, Failed) and r.key[0] == arm]
        for w in sorted({r.key[1] for r in rows if r.key[0] == arm}):
            out += anchor_table(arm, w, [r for r in mine if r.workers == w],
                                [r for r in ours if r.workers == w and r.arm in ANCHOR_COMPARED],
                                {(f.key[2], f.key[3]) for f in failed if f.key[1] == w})
        label = lambda key: f"{key[0]}, {plural(key[1], 'worker')}, {dict(COST_MODES)[key[2]]}"  # noqa: E731
        out += wrk_notes(mine, label) + wrk_failed(failed, label)
        out += anchor_findings(arm, mine, [r for r in ours if r.arm in ANCHOR_COMPARED])
    return out


def anchor_ratios(anchor: list, ours: list, arm: str, mode: str) -> list:
    """[(round, ours / anchor)] for the rounds both measured in this mode."""
    base = {r.round: r.rps for r in anchor if r.setting == mode}
    return [(r.round, r.rps / base[r.round]) for r in sorted(ours, key=lambda r: r.round)
            if r.arm == arm and r.setting == mode and base.get(r.round)]


def anchor_table(arm: str, workers: int, anchor: list, ours: list, failed: set) -> list:
    """failed: (mode, round) of the anchor's runs that failed."""
    rounds = sorted({r.round for r in anchor + ours} | {n for _, n in failed if n})
    out = [f"| at {plural(workers, 'worker')} | " + " | ".join(f"{t} (round {', '.join(map(str, rounds))})"
                                                               for _, t in COST_MODES) + " |",
           "|---|" + "---|" * len(COST_MODES)]
    for name, mine in [(arm, anchor)] + [(a, [r for r in ours if r.arm == a]) for a in ANCHOR_COMPARED]:
        cells = []
        for mode, _ in COST_MODES:
            by_round = {r.round: r for r in mine if r.setting == mode}
            cells.append(" ".join(f"{by_round[n].rps:.0f}" + ("!" if by_round[n].errors else "") if n in by_round
                                  else "failed" if name == arm and (mode, n) in failed else "-" for n in rounds))
        out.append(f"| {cell_text(name)} | " + " | ".join(cells) + " |")
    for a in ANCHOR_COMPARED:
        cells = []
        for mode, _ in COST_MODES:
            ratio = dict(anchor_ratios(anchor, ours, a, mode))
            cells.append(" ".join(f"{ratio[n]:.2f}" if n in ratio else "-" for n in rounds))
        out.append(f"| {a} / {cell_text(arm)} | " + " | ".join(cells) + " |")
    return out + [""]


def anchor_findings(arm: str, anchor: list, ours: list) -> list:
    """The goal (bare at least matches the anchor on keep-alive at 2 workers),
    judged from the medians of the per-round ratios, and the other ratios."""
    goal_arm = ANCHOR_COMPARED[0]
    w = ANCHOR_GOAL_WORKERS
    at_w = [r for r in anchor if r.workers == w]
    ours_w = [r for r in ours if r.workers == w]
    ratios = [x for _, x in anchor_ratios(at_w, ours_w, goal_arm, "keepalive")]
    goal = (f"The goal, our harness at least matching {arm} on keep-alive with {w} workers ({goal_arm}'s req/s "
            f"at or above {arm}'s): ")
    if not ratios:
        goal += f"not judged: no round measured both {goal_arm} and {arm} on keep-alive at {w} workers."
    else:
        med = statistics.median(ratios)
        above = sum(x >= 1 for x in ratios)
        goal += (f"{'met' if med >= 1 else 'not met'} as measured: {goal_arm} / {arm} median {med:.2f} over "
                 f"{plural(len(ratios), 'round')} ({', '.join(f'{x:.2f}' for x in ratios)}), "
                 f"{above} of {len(ratios)} at or above 1.")
    others = []
    for a in ANCHOR_COMPARED:
        for mode, words in (("keepalive", "keep-alive"), ("close", "`Connection: close`")):
            if a == goal_arm and mode == "keepalive":
                continue
            got = [x for _, x in anchor_ratios(at_w, ours_w, a, mode)]
            if got:
                others.append(f"{a} / {arm} on {words}: median {statistics.median(got):.2f} "
                              f"over {plural(len(got), 'round')}")
    text = goal + (" Also at " + f"{w} workers: " + "; ".join(others) + "." if others else "")
    return ["**What this shows.** " + text, ""]


def knob_off_text(runs: list, arm: str, workers: list) -> str:
    """For an arm measured beside its knob-off arm (fdpass): the median ratio
    to it per worker count, and the hand-offs per second while it ran."""
    per = []
    for w in workers:
        mine = [r for r in runs if r.key[:2] == (arm, w)]
        ratios = [r.ratio_to_knob_off for r in mine if r.ratio_to_knob_off is not None]
        rates = [r.handoffs_per_s for r in mine if r.handoffs_per_s is not None]
        if ratios:
            per.append(f"{statistics.median(ratios):.2f} of its knob-off arm at {plural(w, 'worker')}"
                       + (f" ({statistics.median(rates):.0f} hand-offs/s)" if rates else
                          " (mechanism off: no hand-offs)"))
    return (" Same binary, mechanism on vs off, median: " + "; ".join(per) + ".") if per else ""


def process_text(runs: list, arm: str, workers: list) -> str:
    """For a threads-mode arm measured beside the same variant in process
    mode: the median ratio to it per worker count."""
    per = []
    for w in workers:
        ratios = [r.ratio_to_process for r in runs if r.key[:2] == (arm, w) and r.ratio_to_process is not None]
        if ratios:
            per.append(f"{statistics.median(ratios):.2f} at {plural(w, 'worker')}")
    return (" Threads over the process arm, same round, median: " + "; ".join(per) + ".") if per else ""


def time_wait_summary(p: Optional[BenchParams], runs: list) -> list:
    counts = [r.time_wait_after for r in runs if r.time_wait_after is not None]
    sides = [r.tw_sides for r in runs if r.tw_sides is not None]
    if not counts:
        return []
    text = (f"TIME_WAIT after the Connection: close runs: {min(counts)} to {max(counts)} sockets on the "
            "machine (earlier runs' included: a socket stays in TIME_WAIT 60 s, longer than the pause).")
    if sides:
        server, client = sum(s[0] for s in sides), sum(s[1] for s in sides)
        text += (f" On the run's own server port, summed over the runs: {server} on the server's side, "
                 f"{client} on the client's side")
        reuse = sysctl_value(p, "net.ipv4.tcp_tw_reuse") if p else None
        reusable = (", which tcp_tw_reuse lets a loopback connect reuse" if reuse in (1, 2)
                    else "" if reuse is None else f", which tcp_tw_reuse={reuse} does not let a connect reuse")
        if server > client:
            live = "live connections" if p is None else f"{p.connections[0]} live connections"
            text += (": the server closes first after answering a `Connection: close` request, so TIME_WAIT "
                     f"sits on the server's port and does not hold wrk's ephemeral ports; those hold the {live} "
                     f"and the few client-side TIME_WAIT sockets{reusable}.")
        else:
            text += f": wrk closes first, so TIME_WAIT sits on its ephemeral ports{reusable}."
    cap = sysctl_value(p, "net.ipv4.tcp_max_tw_buckets") if p else None
    if is_int(cap) and max(counts) >= cap * 0.95:
        text += (f" The count came within 5% of `net.ipv4.tcp_max_tw_buckets` ({cap}): past it the kernel "
                 "closes sockets without TIME_WAIT (counted as TCPTimeWaitOverflow in /proc/net/netstat).")
    return [text, ""]


def render_payoff(meta: Meta, rows: list) -> list:
    runs = [r for r in rows if isinstance(r, WrkRun)]
    p = meta.payoff
    conns = sorted({r.key[2] for r in rows} | set(p.connections if p else ()))
    out = ["## Payoff: a CPU-bound app", ""]
    if p is None:
        out += ["meta.json does not record how wrk was run for this study; the figures are the rows' own.", ""]
    else:
        cmds = " and ".join(wrk_cmd(p, c) for c in p.connections)
        out += [f"What was measured: what a second worker buys when every request costs CPU. Each run starts a "
                f"fresh server and runs {cmds} (keep-alive) against `GET {p.path}` on 127.0.0.1 "
                "(`/work?us=N` spins N µs of CPU in the worker for each request): bare at 1 worker, the "
                "baseline, and every arm at 2 workers; "
                f"{rotation_text(p.rounds, 'arm x workers', 'per connection count')}. Each figure is the median over the rounds "
                "measured: req/s, and wrk's p50 and p99 latency in ms. wrk's threads share the machine's "
                f"{plural(meta.cpus, 'CPU')} with the workers."
                + (" Connections served per worker (accepted, or handed to it) come from the server's "
                   "worker_exit lines (wrk opens one connection more than `-c` says)."
                   if any(r.served for r in runs) else ""), ""]
    if not rows:
        return out + ["No runs were recorded in this run.", ""]
    cells = []
    for r in sorted(rows, key=lambda r: (r.key[1] != 1 or r.key[0] != "bare", r.key[1])):
        if r.key[:2] not in cells:
            cells.append(r.key[:2])
    rank = {a: i for i, a in enumerate(ordered(meta.variants, {c[0] for c in cells}))}
    cells.sort(key=lambda c: (c != ("bare", 1), c[1], rank[c[0]]))
    head = "| arm | workers | " + " | ".join(f"c{c} req/s | c{c} p50 ms | c{c} p99 ms" for c in conns) + " |"
    out += [head, "|---|---|" + "---|---|---|" * len(conns)]
    medians = {}
    for cell in cells:
        parts = []
        for c in conns:
            mine = [r for r in runs if r.key == cell + (c,)]
            if not mine:
                parts += ["-", "-", "-"]
                continue
            m = tuple(statistics.median(getattr(r, f) for r in mine) for f in ("rps", "p50", "p99"))
            medians[cell + (c,)] = m + (len(mine),)
            parts += [f"{m[0]:.0f}" + ("!" if any(r.errors for r in mine) else ""), ms_text(m[1]), ms_text(m[2])]
        out.append(f"| {cell_text(cell[0])} | {cell[1]} | " + " | ".join(parts) + " |")
    out.append("")
    label = lambda key: f"{key[0]}, {plural(key[1], 'worker')}, {key[2]} connections"  # noqa: E731
    out += wrk_notes(runs, label) + wrk_failed(rows, label)
    lines = []
    for cell in cells:
        if cell == ("bare", 1):
            continue
        per = []
        for c in conns:
            got, base = medians.get(cell + (c,)), medians.get(("bare", 1, c))
            if got is None:
                per.append(f"not measured with {c} connections")
            elif base is None or base[0] == 0:
                per.append(f"{got[0]:.0f} req/s with {c} connections (no baseline)")
            else:
                per.append(f"{got[0] / base[0]:.2f}x the baseline's req/s with {c} connections, "
                           f"p99 {ms_text(got[2])} ms against {ms_text(base[2])} ms")
        splits = []
        for c in conns:
            mine = sorted((r for r in runs if r.key == cell + (c,) and r.served), key=lambda r: r.round)
            if mine:
                splits.append(f"c{c} " + " ".join(r.served for r in mine))
        if splits:
            per.append("connections served per worker, by round: " + ", ".join(splits))
        lines.append(f"- {cell[0]} at {plural(cell[1], 'worker')}: " + "; ".join(per) + ".")
    if lines:
        counts = sorted({m[3] for m in medians.values()})
        rounds = " or ".join(str(n) for n in counts)
        out += [f"**What this shows.** Against the baseline (bare at 1 worker), from the medians above "
                f"({rounds} {'round' if counts == [1] else 'rounds'} each):", ""] + lines + [""]
    return out


# ---------------------------------------------------------------- faults


@dataclass(frozen=True)
class FaultCase:
    line: int
    case: str
    expected: str
    observed: str
    held: Optional[bool]  # None: the test was skipped (observed says why)


def parse_fault_row(obj: dict, line: int):
    if "error" in obj:
        return Failed(line, ("faults",), str(obj["error"]))
    held = None if obj.get("held", False) is None else get_bool(obj, "held")
    observed = get_str(obj, "observed") if held is not None else "skipped: " + get_str(obj, "skipped")
    return FaultCase(line, get_str(obj, "case"), get_str(obj, "expected"), observed, held)


def render_faults(meta: Meta, rows: list) -> list:
    cases = [r for r in rows if isinstance(r, FaultCase)]
    emfile = any(c.case.startswith("out of descriptors") for c in cases)
    out = ["## Faults: accept sharing's corrections" + (", and running out of descriptors" if emfile else ""), "",
           "Each case is one of the fault tests, run by the campaign: accept sharing's in "
           "`tests/test_fdpass.py` (the situation that found a correction and what the correction "
           "guarantees)" + (" and running out of descriptors in `tests/test_emfile.py` (RLIMIT_NOFILE "
                            "lowered until accept() fails with EMFILE, per variant)" if emfile else "")
           + ". Observed is what this run saw (written by the test before it asserts); \"held\" is the "
           "test's verdict.", "",
           "| case | expected | observed | held |", "|---|---|---|---|"]
    for c in cases:
        verdict = "skipped" if c.held is None else "yes" if c.held else "**no**"
        out.append(f"| {cell_text(c.case)} | {cell_text(c.expected)} | {cell_text(c.observed)} | {verdict} |")
    out.append("")
    out += failed_notes([r for r in rows if isinstance(r, Failed)], lambda key: "fault cases")
    if cases:
        ran = [c for c in cases if c.held is not None]
        broken = [c.case for c in ran if not c.held]
        skipped = len(cases) - len(ran)
        out += ["**What this shows.** " + (f"{len(ran)} of {len(ran)} invariants held" if not broken else
                f"{len(ran) - len(broken)} of {len(ran)} held; broken: " + "; ".join(broken))
                + (f" ({skipped} skipped)" if skipped else "") + ". Every fault test writes its row whatever "
                "its outcome (tests/faults.py), so a case that failed is a row here, not a gap.", ""]
    out += ["Reference rows (not measured here), quoted from the seed design note "
            f'`{SEED_000}` ("Accept sharing"), its own server and machines:', "",
            "| case | the note's figure | source |", "|---|---|---|"]
    out += [f"| {case} | {figure} | `{SEED_000}`, {where} |" for case, figure, where in FAULT_REFERENCE_ROWS]
    out.append("")
    return out


FAULT_REFERENCE_ROWS = (
    ("1 worker 1 held 3 s", "before the correction: 16 of a burst of 32 went to it, each answered 3.0 s late",
     'correction of 2026-09-30 under "The pick"'),
    ("4 queued to a dead worker", "before: all 16 still open 1 s later; after: all 16 read a close within 3 ms",
     'correction of 2026-09-30, "a worker that dies"'),
    ("6 socket churn (macOS)", "before: 179 of 1600 requests lost; after: none (Linux not measured there)",
     'correction of 2026-09-29, "the kernel\'s collector"'),
)


# ---------------------------------------------------------------- studies and the report


# ---------------------------------------------------------------- trace


@dataclass(frozen=True)
class TraceWorker:
    index: Optional[int]
    tid: int
    wakeups: int
    won: int
    lost: int
    wasted: int
    accept_cpu: tuple  # ((cpu, count), ...)
    hist: tuple  # ((log2 slot, count), ...)


@dataclass(frozen=True)
class TraceStep:
    """bin/acceptlab-trace beside one balancing step (all its rounds)."""
    line: int
    variant: str
    shape: str
    mode: str
    connections: int
    workers: tuple
    tracer_won: tuple  # per ready worker index: (index, won)
    probe: tuple  # per ready worker index: (index, connections)
    equal: bool
    expect_equal: bool


def cpu_counts(obj: dict, key: str) -> tuple:
    value = get(obj, key)
    if not isinstance(value, dict) or not all(k.isdigit() and is_int(v) and v >= 0 for k, v in value.items()):
        raise RowError(f'"{key}" must be an object of CPU (or slot) numbers to integer counts')
    return tuple(sorted((int(k), v) for k, v in value.items()))


def parse_trace_row(obj: dict, line: int):
    variant = get_str(obj, "variant")
    shape = get_str(obj, "shape")
    mode = get_str(obj, "mode")
    connections = get_int(obj, "connections", 0)
    raw = get(obj, "workers")
    if not isinstance(raw, list):
        raise RowError(f'"workers" must be a list, got {json_kind(raw)}')
    workers = []
    for i, w in enumerate(raw):
        if not isinstance(w, dict):
            raise RowError(f'"workers"[{i}] must be an object')
        index = w.get("index")
        if index is not None and not is_int(index):
            raise RowError(f'"workers"[{i}] "index" must be an integer or null')
        workers.append(TraceWorker(index, get_int(w, "tid", 1, ("workers", i)),
                                   get_int(w, "wakeups", 0, ("workers", i)), get_int(w, "won", 0, ("workers", i)),
                                   get_int(w, "lost", 0, ("workers", i)), get_int(w, "wasted", 0, ("workers", i)),
                                   cpu_counts(w, "accept_cpu"), cpu_counts(w, "wake_to_accept_us_log2")))
    check = get(obj, "cross_check")
    if not isinstance(check, dict):
        raise RowError('"cross_check" must be an object')
    won = cpu_counts(check, "tracer_won")
    probe = cpu_counts(check, "probe_connections")
    equal = get_bool(check, "equal", ("cross_check",))
    expect = get_bool(check, "expect_equal", ("cross_check",))
    if equal != (won == probe):
        raise RowError('"cross_check" "equal" disagrees with its own counts')
    return TraceStep(line, variant, shape, mode, connections, tuple(workers), won, probe, equal, expect)


def median_bucket(hist: dict) -> str:
    total = sum(hist.values())
    if not total:
        return "-"
    seen = 0
    for slot in sorted(hist):
        seen += hist[slot]
        if seen * 2 >= total:
            lo = 0 if slot == 0 else 2 ** slot
            return f"{lo}-{2 ** (slot + 1)} µs"
    return "-"


def render_trace(meta: Meta, rows: list) -> list:
    out = ["## Why each worker won (trace)", ""]
    out.append(
        "What was measured: `bin/acceptlab-trace` (eBPF: the syscalls' tracepoints for accept and "
        "epoll_wait, tp_btf for sched_waking and inet_sock_set_state) ran beside every balancing step, "
        "attached to the server's process group after its ready line and stopped after the probe, so "
        "each row covers that variant's rounds of all three shapes. Wakeups count a worker woken while "
        "blocked in epoll_wait or accept; won and lost are accept() calls that returned a connection "
        "or EAGAIN; a wasted wakeup is one after which the worker lost an accept and won none before "
        "it waited again; wake to accept is the median bucket (log2 µs) of the time from the wakeup "
        "to the worker entering accept(); accept CPU is where the won accepts ran, per CPU. Won per "
        "worker is the tracer's count beside the probe's connections per worker: they must be equal "
        "wherever the acceptor serves the connection (the cross-check); for fdpass, handoff and the "
        "shared epoll the acceptor is not always the owner, so both are shown.")
    out.append("")
    if not rows:
        return out + ["No trace was recorded in this run.", ""]
    variants = ordered(meta.variants, {r.variant for r in rows})
    out.append("| variant | mode | wakeups | won | lost | wasted wakeups | wake to accept (median) | "
               "accept CPU | won per worker (tracer / probe) | cross-check |")
    out.append("|---|---|---|---|---|---|---|---|---|---|")
    disagree = []
    for v in variants:
        mine = [r for r in rows if r.variant == v]
        workers = [w for r in mine for w in r.workers]
        wakeups = sum(w.wakeups for w in workers)
        won = sum(w.won for w in workers)
        lost = sum(w.lost for w in workers)
        wasted = sum(w.wasted for w in workers)
        hist, cpus = {}, {}
        for w in workers:
            for slot, n in w.hist:
                hist[slot] = hist.get(slot, 0) + n
            for cpu, n in w.accept_cpu:
                cpus[cpu] = cpus.get(cpu, 0) + n
        tracer, probe = {}, {}
        for r in mine:
            for i, n in r.tracer_won:
                tracer[i] = tracer.get(i, 0) + n
            for i, n in r.probe:
                probe[i] = probe.get(i, 0) + n
        per = " ".join(f"{tracer.get(i, 0)}/{probe.get(i, 0)}" for i in sorted(set(tracer) | set(probe)))
        agree = sum(r.equal for r in mine)
        expect = all(r.expect_equal for r in mine)
        check = (f"{agree} of {plural(len(mine), 'step')} equal" if expect
                 else f"acceptor is not the owner ({agree} of {len(mine)} equal)")
        for r in mine:
            if r.expect_equal and not r.equal:
                disagree.append(f"- {v}, {r.shape}: tracer won "
                                + " ".join(f"{i}:{n}" for i, n in r.tracer_won) + ", probe "
                                + " ".join(f"{i}:{n}" for i, n in r.probe) + ".")
        share = f"{wasted} ({wasted / wakeups:.0%})" if wakeups else "0"
        cpu_text = " ".join(f"{c}:{n}" for c, n in sorted(cpus.items())) or "-"
        out.append(f"| {cell_text(v)} | {mine[0].mode} | {wakeups} | {won} | {lost} | {share} | "
                   f"{median_bucket(hist)} | {cpu_text} | {per} | {check} |")
    out.append("")
    if disagree:
        out += ["Steps where the tracer and the probe disagree although the acceptor serves:", ""]
        out += disagree + [""]
    steps = [r for r in rows if r.expect_equal]
    out.append(f"**What this shows.** The cross-check held in {sum(r.equal for r in steps)} of "
               f"{plural(len(steps), 'step')} where the acceptor serves the connection. "
               + trace_findings(rows, variants))
    out.append("")
    return out


def trace_findings(rows: list, variants: list) -> str:
    """Comparisons computed from the rows: who wastes wakeups, and how much."""
    parts = []
    by = {}
    for v in variants:
        ws = [w for r in rows if r.variant == v for w in r.workers]
        wakeups = sum(w.wakeups for w in ws)
        if wakeups:
            by[v] = (sum(w.wasted for w in ws) / wakeups, sum(w.lost for w in ws))
    if by:
        most = max(by, key=lambda v: by[v][0])
        least = min(by, key=lambda v: by[v][0])
        parts.append(f"The largest share of wasted wakeups: {most} ({by[most][0]:.0%}, {by[most][1]} accepts "
                     f"lost to EAGAIN); the smallest: {least} ({by[least][0]:.0%}).")
    return " ".join(parts)


# ---------------------------------------------------------------- peers


@dataclass(frozen=True)
class PeerShape:
    """A shape of the peers study; runs: oneshot's probe rounds per measured round."""
    name: str
    connections: int
    gap_ms: Optional[float] = None
    requests: Optional[int] = None
    runs: Optional[int] = None

    def label(self) -> str:
        """`burst 32`, `ramp 32 (10 ms)`, `keepalive 32 x 4`, `oneshot 10 x 8`."""
        if self.runs is not None:
            return f"{self.name} {self.runs} x {self.connections}"
        return Shape(self.name, self.connections, self.gap_ms, self.requests).label()


@dataclass(frozen=True)
class PeersParams:
    """How the peers study ran (meta.json parameters.peers)."""
    names: tuple
    rounds: int
    workers: int
    shapes: tuple  # PeerShape
    trace: bool


def parse_peers_params(params: dict, where: tuple) -> Optional[PeersParams]:
    if "peers" not in params:
        return None
    obj = params["peers"]
    at = where + ("peers",)
    if not isinstance(obj, dict):
        raise RowError(f'"peers" must be an object, got {json_kind(obj)}', at)
    names = get(obj, "peers", at)
    if not isinstance(names, list) or not all(isinstance(n, str) and n.strip() for n in names):
        raise RowError('"peers" must be an array of names', at + ("peers",))
    raw = get(obj, "shapes", at)
    if not isinstance(raw, list) or not raw:
        raise RowError('"shapes" must be a non-empty array', at + ("shapes",))
    shapes = []
    for i, s in enumerate(raw):
        sat = at + ("shapes", i)
        if not isinstance(s, dict):
            raise RowError(f'"shapes"[{i}] must be an object, got {json_kind(s)}', sat)
        shapes.append(PeerShape(get_str(s, "name", sat), get_int(s, "connections", 1, sat),
                                meta_number(s, "gap_ms", sat, 0, True),
                                get_int(s, "requests", 1, sat) if "requests" in s else None,
                                get_int(s, "rounds", 1, sat) if "rounds" in s else None))
    return PeersParams(tuple(names), get_int(obj, "rounds", 1, at), get_int(obj, "workers", 1, at),
                       tuple(shapes), get_bool(obj, "trace", at))


@dataclass(frozen=True)
class PeerRound:
    """A measured round of a peer (step: a Round, variant = the peer's name) or a
    shape that failed (a FailedStep)."""
    line: int
    peer: str
    software: Optional[str]
    step: object


@dataclass(frozen=True)
class PeerLogCheck:
    """nginx's access log after one shape: requests per worker pid, beside the probe's."""
    line: int
    peer: str
    shape: str
    logged: tuple  # ((pid, requests), ...) by pid
    probe: tuple
    equal: bool


@dataclass(frozen=True)
class PeerTask:
    """One task the tracer saw accept or wake: a worker, or another process of the peer."""
    pid: int
    tid: int
    wakeups: int
    won: int
    lost: int
    wasted: int


@dataclass(frozen=True)
class PeerTrace:
    """acceptlab-trace --port beside one peer, across all its shapes."""
    line: int
    peer: str
    mode: str
    workers: tuple  # the peer's worker ids as the probe counts them: pids, or thread numbers
    tasks: tuple  # PeerTask, as the tracer lists them
    probe: tuple  # ((worker id, connections), ...) over every shape
    equal: Optional[bool]  # accepts won per pid = the probe's connections (None: threads, not comparable)
    error: Optional[str] = None


@dataclass(frozen=True)
class PeerMissing:
    """A peer that was not measured: "unavailable" (the software is missing or
    rejects the configuration) or "error" (it did not start)."""
    line: int
    peer: str
    kind: str
    software: Optional[str]
    reason: str


PEER_KINDS = ("round", "trace", "logcheck", "unavailable", "error")


def counts_tuple(obj: dict, key: str) -> tuple:
    return tuple(sorted(get_counter(obj, key).items()))


def parse_peers_row(obj: dict, line: int):
    kind = get_str(obj, "kind")
    if kind not in PEER_KINDS:
        raise RowError(f'"kind" must be one of {", ".join(PEER_KINDS)}, got {json.dumps(kind)}')
    peer = get_str(obj, "peer")
    software = obj.get("software")
    if software is not None and not isinstance(software, str):
        raise RowError(f'"software" must be a string or null, got {json_kind(software)}')
    if kind == "round":
        return PeerRound(line, peer, software, parse_balancing_row(dict(obj, variant=peer), line))
    if kind in ("unavailable", "error"):
        return PeerMissing(line, peer, kind, software, get_str(obj, "reason" if kind == "unavailable" else "error"))
    if kind == "logcheck":
        logged, probe = counts_tuple(obj, "log_counts"), counts_tuple(obj, "probe_counts")
        equal = get_bool(obj, "equal")
        if equal != (logged == probe):
            raise RowError('"equal" disagrees with "log_counts" and "probe_counts"')
        return PeerLogCheck(line, peer, get_str(obj, "shape"), logged, probe, equal)
    mode = get_str(obj, "mode")
    workers = get(obj, "workers")
    if not isinstance(workers, list) or not all(is_int(w) and w >= 0 for w in workers):
        raise RowError('"workers" must be an array of integer ids')
    if "error" in obj:
        return PeerTrace(line, peer, mode, tuple(workers), (), (), None, get_str(obj, "error"))
    trace = get(obj, "trace")
    tasks_raw = trace.get("workers") if isinstance(trace, dict) else None
    if not isinstance(tasks_raw, list):
        raise RowError('"trace" must be an object with a "workers" array')
    tasks = []
    for i, t in enumerate(tasks_raw):
        if not isinstance(t, dict):
            raise RowError(f'"trace" "workers"[{i}] must be an object')
        tasks.append(PeerTask(*(get_int(t, k, 0, ("trace", "workers", i))
                                for k in ("pid", "tid", "wakeups", "won", "lost", "wasted"))))
    counts = get_counter(obj, "probe_counts")
    equal = get(obj, "won_equals_probe")
    if equal is not None and not isinstance(equal, bool):
        raise RowError(f'"won_equals_probe" must be true, false or null, got {json.dumps(equal)}')
    if equal is not None:
        won = {str(t.pid): t.won for t in tasks if t.won}
        if equal != (won == {k: n for k, n in counts.items() if n}):
            raise RowError('"won_equals_probe" disagrees with the tracer\'s and the probe\'s counts')
    probe = tuple((str(w), counts.get(str(w), 0)) for w in workers)
    probe += tuple(sorted((k, n) for k, n in counts.items() if k not in {str(w) for w in workers}))
    return PeerTrace(line, peer, mode, tuple(workers), tuple(tasks), probe, equal)


def check_peers(path: Path, rows: list) -> None:
    """One round row per (peer, shape, round)."""
    seen = {}
    for row in rows:
        if isinstance(row, PeerRound) and isinstance(row.step, Round):
            key = (row.peer, row.step.shape, row.step.round)
            if key in seen:
                raise InputError(path, row.line, f"round {row.step.round} of {row.peer} {row.step.shape} "
                                 f"is already on line {seen[key]}")
            seen[key] = row.line


# Each peer configuration's mechanism, the variant of ours built on the same
# one (the balancing table's row to compare it with), and where they differ.
PEER_MECHANISMS = {
    "nginx-default": ("accept_mutex off: the listener in every worker's epoll with EPOLLEXCLUSIVE, one "
                      "accept per event, re-added every few accepts (nginx >= 1.21.6)", "exclusive-reorder", None),
    "nginx-accept-mutex": ("accept_mutex on: only the worker holding the shared token has the listener in its "
                           "epoll", "mutex", None),
    "nginx-reuseport": ("`listen ... reuseport`: a listener per worker, the kernel's 4-tuple hash picks",
                        "reuseport", None),
    "nginx-multi-accept": ("EPOLLEXCLUSIVE as the default, accepting until EAGAIN on each event", "exclusive",
                           "ours is edge-triggered and has no reorder"),
    "haproxy-mq-on": ("threads; the thread that accepts spreads each connection to a less loaded thread's "
                      "queue (multi-queue)", "fdpass-threads",
                      "HAProxy queues the connection to the other thread, fdpass passes it over a socket pair"),
    "haproxy-mq-fair": ("threads; the thread that accepts spreads connections to the threads' queues in turn "
                        "(HAProxy 2.7+)", "fdpass-threads", "fdpass picks the least loaded, not the next in turn"),
    "haproxy-mq-off": ("threads; each thread accepts for itself from the shared listener (the race)",
                       "bare-threads", None),
    "node-rr": ("the primary accepts every connection and hands it to the workers in turn", "fdpass",
                "Node's acceptor is a primary that serves nothing and hands on in turn; fdpass's is a worker "
                "that hands to the least loaded"),
    "node-none": ("every worker accepts from the shared listener (the race)", "bare", None),
}


def render_peers_absent(meta: Meta) -> list:
    return ["## Peers", "",
            "Not measured in this run: it has no `peers.jsonl`. The campaign's `peers` study (or `make peers` "
            "on its own) measures nginx, HAProxy and a Node.js cluster with the same probe.", ""]


def peer_columns(p: Optional[PeersParams], rounds: list) -> list:
    """(shape name, label): meta's shapes in order, then any other the rows have."""
    columns = [(s.name, s.label()) for s in p.shapes] if p else []
    known = {name for name, _ in columns}
    for r in rounds:
        if r.shape not in known:
            known.add(r.shape)
            sizes = {x.connections for x in rounds if x.shape == r.shape and isinstance(x, Round)}
            columns.append((r.shape, f"{r.shape} {sizes.pop()}" if len(sizes) == 1 else r.shape))
    return columns


def within_text(rounds: list) -> str:
    """'5 of 9 (worst 32/0)' over measured rounds."""
    if not rounds:
        return "no round"
    worst = max(rounds, key=lambda r: math.inf if r.ratio is None else r.ratio)
    return f"{sum(r.within for r in rounds)} of {len(rounds)} (worst {worst.split})"


def render_peers(meta: Meta, rows: list, others: dict) -> list:
    p = meta.peers
    rounds = [r.step for r in rows if isinstance(r, PeerRound)]
    out = ["## Peers", ""]
    shapes_said = ("; ".join(s.label() for s in p.shapes) if p else
                   "; ".join(dict.fromkeys(r.shape for r in rounds)) or "none recorded")
    workers = f"{plural(p.workers, 'worker')} each" if p else "their own worker counts"
    out.append(
        "What was measured: servers nobody here wrote, started by `probes/peers/peers.py` on 127.0.0.1 and "
        f"a free port with {workers} (nginx worker processes and Node.js cluster workers answer `/pid` "
        "with their pid; HAProxy's threads with their thread number, mode threads), and measured by the "
        f"same probe as the balancing table: {shapes_said}. A round of oneshot is one probe run of its "
        "rounds of sequential connections, counted together. Each peer was started once for all its "
        "shapes. Each cell holds one split per round, in round order"
        + (f" ({plural(p.rounds, 'round')} per shape planned)" if p else "")
        + ": the per-worker counts, largest share first, a worker that got none shown as 0. \"within 2:1\" "
        "counts the peer's measured rounds whose max/min ratio is at most 2.")
    out.append("")
    missing = [r for r in rows if isinstance(r, PeerMissing)]
    present = {r.peer for r in rows if isinstance(r, PeerRound)}
    names = ordered(p.names if p else tuple(dict.fromkeys(r.peer for r in rows)), present)
    software = {}
    for r in rows:
        if getattr(r, "software", None):
            software.setdefault(r.peer, r.software)
    notes = []
    if names:
        columns = peer_columns(p, rounds)
        out.append("| peer | software | mode | " + " | ".join(label for _, label in columns) + " | within 2:1 |")
        out.append("|---|---|---|" + "---|" * len(columns) + "---|")
        for name in names:
            mine = [r for r in rounds if r.variant == name]
            cells = []
            for shape, _ in columns:
                parts = []
                for r in sort_steps([r for r in mine if r.shape == shape]):
                    if isinstance(r, FailedStep):
                        parts.append("failed: " + cell_text(r.error))
                    elif r.troubled:
                        parts.append(r.split + "!")
                        notes.append(f"- {name}, {shape}, round {r.round}: {error_note(r)}.")
                    else:
                        parts.append(r.split)
                cells.append(" ".join(parts) if parts else "not run")
            measured = [r for r in mine if isinstance(r, Round)]
            mode = measured[0].mode if measured else "?"
            cells.append(f"{sum(r.within for r in measured)}/{len(measured)}")
            out.append(f"| {cell_text(name)} | {cell_text(software.get(name, '?'))} | {mode} | "
                       + " | ".join(cells) + " |")
        out.append("")
        if notes:
            out += ["`!` marks a round with errors or unanswered connections:", ""] + notes + [""]
        rank = {name: i for i, (name, _) in enumerate(columns)}
        out += ["**What this shows.** Per peer, from the rounds above: how many fell outside 2:1, how many "
                "left a worker with no connection, the worst and best round (by max/min), and in keepalive "
                "the request splits.", ""]
        for name in names:
            mine = sorted((r for r in rounds if r.variant == name),
                          key=lambda r: (rank[r.shape], isinstance(r, FailedStep), r.round or 0, r.line))
            out.append(f"- {variant_summary(name, mine)}")
        out.append("")
    else:
        out += ["No peer was measured in this run.", ""]
    if missing:
        out += ["Not measured:", ""]
        for m in missing:
            what = "unavailable" if m.kind == "unavailable" else "failed"
            soft = f" ({m.software})" if m.software else ""
            out.append(f"- {m.peer}{soft}: {what}: {cell_text(m.reason)}")
        out.append("")
    if names:
        out += peers_comparison(meta, names, rounds, others.get("balancing"))
    out += peers_logchecks([r for r in rows if isinstance(r, PeerLogCheck)])
    out += peers_traces(p, [r for r in rows if isinstance(r, PeerTrace)], names)
    return out


def peers_comparison(meta: Meta, names: list, rounds: list, balancing: Optional[list]) -> list:
    ours = [r for r in balancing or [] if isinstance(r, Round)]
    shared = [s for s in ordered(tuple(s.name for s in meta.shapes), {r.shape for r in ours})
              if any(isinstance(r, Round) and r.shape == s for r in rounds)]
    out = ["### Our variants for comparison", ""]
    if balancing is None:
        return out + ["The balancing study was not measured in this run, so there are no rows of ours to set "
                      "beside the peers.", ""]
    out += ["Each peer configuration's mechanism, the variant of ours built on the same one, and both "
            f"rows' rounds within 2:1 over the shapes both measured ({', '.join(shared) or 'none'}); our "
            "variant's rounds are its row in the balancing table above (this run, same probe, same "
            "shapes).", "",
            "| peer | its mechanism | our variant | peer within 2:1 | ours within 2:1 |",
            "|---|---|---|---|---|"]
    differ = []
    for name in names:
        mechanism, variant, difference = PEER_MECHANISMS.get(name, ("-", None, None))
        if difference:
            differ.append(f"- {name} and {variant}: {difference}.")
        theirs = [r for r in rounds if isinstance(r, Round) and r.variant == name and r.shape in shared]
        mine = [r for r in ours if r.variant == variant and r.shape in shared]
        if variant is None:
            ours_text = "-"
        elif mine:
            ours_text = within_text(mine)
        else:
            ours_text = "not in this run's balancing table"
        out.append(f"| {cell_text(name)} | {cell_text(mechanism)} | {variant or '-'} | {within_text(theirs)} | "
                   f"{ours_text} |")
    out.append("")
    if differ:
        out += ["Where a peer and our variant differ:", ""] + differ + [""]
    return out


def peers_logchecks(checks: list) -> list:
    if not checks:
        return []
    out = ["### nginx's access log against the probe", "",
           "nginx logs `$pid` with every request. After each shape the log's requests per worker pid were "
           "counted and set beside the probe's (its requests per worker in keepalive, one per connection "
           "otherwise): the log is the ground truth the probe's counts must equal.", "",
           "| peer | shapes where the log equals the probe | requests logged |", "|---|---|---|"]
    peers = list(dict.fromkeys(c.peer for c in checks))
    differ = []
    for name in peers:
        mine = [c for c in checks if c.peer == name]
        logged = sum(n for c in mine for _, n in c.logged)
        out.append(f"| {cell_text(name)} | {sum(c.equal for c in mine)} of {len(mine)} | {logged} |")
        for c in mine:
            if not c.equal:
                differ.append(f"- {name}, {c.shape}: log " + (" ".join(f"{k}:{n}" for k, n in c.logged) or "none")
                              + ", probe " + (" ".join(f"{k}:{n}" for k, n in c.probe) or "none") + ".")
    out.append("")
    equal = sum(c.equal for c in checks)
    out.append(f"**What this shows.** The access log equals the probe in {equal} of "
               f"{plural(len(checks), 'shape')}" + (":" if differ else "."))
    out.append("")
    if differ:
        out += differ + [""]
    return out


def task_label(t: PeerTask, trace: PeerTrace) -> str:
    """w0, w1 for a worker process (by the peer's worker order); tid N for a
    thread (HAProxy answers thread numbers, which the tracer cannot map); pid N
    for a process that is not a worker (Node's primary)."""
    if trace.mode == "threads":
        return f"tid {t.tid}"
    if t.pid in trace.workers:
        return f"w{trace.workers.index(t.pid)}"
    return f"pid {t.pid}"


def peers_traces(p: Optional[PeersParams], traces: list, names: list) -> list:
    out = ["### Why each worker won (trace)", ""]
    if not traces:
        why = " (acceptlab-trace needs root)" if p is not None and not p.trace else ""
        return out + [f"No trace was recorded for the peers in this run{why}.", ""]
    out += ["`bin/acceptlab-trace --port` ran beside each peer once, across all its shapes, counting for every "
            "task of the peer that waited or accepted: wakeups while blocked in epoll_wait or accept, accepts "
            "won, and accepts lost to EAGAIN; beside them the probe's connections per worker over the same "
            "shapes. w0, w1 are the peer's workers in order; a process that is not a worker is named by its "
            "pid, a thread by its tid (HAProxy answers its thread number, which the tracer's tids do not "
            "name, so there the two are not compared).", "",
            "| peer | mode | wakeups | accepts won | lost (EAGAIN) | probe connections | accepts won = probe |",
            "|---|---|---|---|---|---|---|"]
    order = {n: i for i, n in enumerate(names)}
    for t in sorted(traces, key=lambda t: (order.get(t.peer, len(order)), t.line)):
        if t.error is not None:
            out.append(f"| {cell_text(t.peer)} | {t.mode} | tracer failed: {cell_text(t.error)} | | | | |")
            continue
        tasks = list(t.tasks)
        if t.mode == "process":  # every worker shown, 0 when the tracer saw nothing of it
            seen = {x.pid for x in tasks}
            tasks += [PeerTask(w, w, 0, 0, 0, 0) for w in t.workers if w not in seen]
            tasks.sort(key=lambda x: (x.pid not in t.workers,
                                      t.workers.index(x.pid) if x.pid in t.workers else x.pid, x.tid))

        def per(field):
            return ", ".join(f"{task_label(x, t)} {getattr(x, field)}" for x in tasks) or "-"
        probe_label = (lambda k: f"thread {k}") if t.mode == "threads" else (
            lambda k: f"w{t.workers.index(int(k))}" if k.isdigit() and int(k) in t.workers else f"pid {k}")
        probe = ", ".join(f"{probe_label(k)} {n}" for k, n in t.probe) or "-"
        if t.equal is None:
            check = "not compared (thread numbers)"
        elif t.equal:
            check = "equal"
        else:
            others = [x for x in tasks if x.won and x.pid not in t.workers]
            check = "differ" + (": " + ", ".join(f"pid {x.pid} accepted {x.won} and is not a worker"
                                                 for x in others) if others else "")
        out.append(f"| {cell_text(t.peer)} | {t.mode} | {per('wakeups')} | {per('won')} | {per('lost')} | "
                   f"{probe} | {check} |")
    out.append("")
    compared = [t for t in traces if t.equal is not None]
    out.append(f"**What this shows.** Accepts won per worker equal the probe's connections for "
               f"{sum(t.equal for t in compared)} of {plural(len(compared), 'peer')} where both name pids; "
               "where they differ the table says who accepted.")
    out.append("")
    return out


# ---------------------------------------------------------------- placement

SEED_002 = "shared/seeds/002_31b119a6e806d5e9.txt"
PLACEMENT_REFERENCE = (
    ("bare race, nothing pinned (15 runs)", "63–77 of 80 to one worker"),
    ("bare race, workers on CPUs 0 and 1, probe on CPU 1", "80/0 in four runs of five, the fifth 79/1 "
     "(all to the worker on CPU 0)"),
    ("bare race, probe on a CPU of its own (CPU 2)", "70–76 of 80 to one worker"),
    ("bare race, everything on one CPU", "alternates, 45/35"),
    ("bare race, a CPU hog beside either worker", "moves the split toward even"),
    ("EPOLLEXCLUSIVE (the note's Python model)", "80/0 in every placement"),
    ("per-worker SO_REUSEPORT", "40/40 to 46/34 in every placement"),
    ("the winner SIGSTOPped", "the other answers 80 of 80; SIGCONT, SIGTERM: exit 0, no crash or respawn"),
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


def parse_placement_row(obj: dict, line: int):
    placement = get_str(obj, "placement")
    variant = get_str(obj, "variant")
    if "error" in obj:
        return Failed(line, (placement, variant), str(obj["error"]))
    label = get_str(obj, "label")
    shape = get_str(obj, "shape")
    if shape == "stop_winner":
        held = get_bool(obj, "held")
        return StopWinner(line, placement, label, variant, held, obj.get("before"), obj.get("other_answered"),
                          obj.get("of"), obj.get("exit"), get_int(obj, "crash_or_respawn", 0), obj.get("why"))
    ratio = get(obj, "ratio")
    if ratio is not None and (isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or ratio < 1):
        raise RowError(f'"ratio" must be a number >= 1 or null, got {json.dumps(ratio)}')
    return PlacementRun(line, placement, label, variant, shape, get_int(obj, "run", 1), get_int(obj, "rounds", 1),
                        get_split(obj, "split"), None if ratio is None else float(ratio), get_int(obj, "starved", 0),
                        get_int(obj, "both_answered_rounds", 0))


def render_placement(meta: Meta, rows: list) -> list:
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
        return out + ["No placement run was recorded.", ""]
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
                    failed = [r for r in rows if isinstance(r, Failed) and r.key == (p, v)]
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
            "not results of this run.", "", "| what | figures | source |", "|---|---|---|"]
    for what, figures in PLACEMENT_REFERENCE:
        out.append(f"| {what} | {figures} | `{SEED_002}` |")
    out.append("")
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


# ---------------------------------------------------------------- models


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
    return ModelRow(line, get_str(obj, "model"), get_str(obj, "case"), get_int(obj, "workers", 1),
                    get_int(obj, "connections", 0), cpus, get_str(obj, "shape"), get_str(obj, "method"),
                    predicted, measured, get_int(obj, "measured_rounds", 0), tuple(ci) if ci else None,
                    consistent, obj.get("source") or "-", obj.get("latency_source"))


def pct(x: Optional[float]) -> str:
    return "-" if x is None else f"{x:.0%}" if x >= 0.1 or x == 0 else f"{x:.1%}"


def render_models(meta: Meta, rows: list) -> list:
    out = ["## Models: predicted against measured", ""]
    out.append(
        "What was measured and predicted (`models/`, see its README for the assumptions): "
        "`reuseport-model` opens bursts to N bare SO_REUSEPORT listeners (no workers, no HTTP, in a network "
        "namespace of its own) and counts where each landed, against the exact chance that a uniform hash "
        "spread falls outside 2:1; `exclusive-model` records which of N EPOLLEXCLUSIVE waiters the kernel "
        "wakes for each connection, against the rule read from fs/eventpoll.c (the first-registered idle "
        "waiter wins); the race model simulates the bare accept race from the wake-to-accept latencies the "
        "tracer measured and predicts how often a 2-worker round falls outside 2:1, checked against this "
        "run's balancing rows. \"Outside\" is the share of rounds (repetitions) outside 2:1; the interval "
        "is the measured share's 95% (Clopper-Pearson); consistent means the prediction lies inside it "
        "(for a rule: the rule held for every connection).")
    out.append("")
    measured = [r for r in rows if isinstance(r, ModelRow) and r.measured is not None]
    sweep = [r for r in rows if isinstance(r, ModelRow) and r.model == "race-sweep"]
    if measured:
        out += ["| model | case | N x K | method | predicted outside | measured outside (rounds) | 95% interval | "
                "consistent | measured by |", "|---|---|---|---|---|---|---|---|---|"]
        for r in measured:
            ci = f"{pct(r.ci95[0])}–{pct(r.ci95[1])}" if r.ci95 else "-"
            cons = "-" if r.consistent is None else "yes" if r.consistent else "NO"
            out.append(f"| {r.model} | {cell_text(r.case)} | {r.workers} x {r.connections} | {r.method} | "
                       f"{pct(r.predicted)} | {pct(r.measured)} ({r.rounds}) | {ci} | {cons} | "
                       f"{cell_text(r.source)} |")
        out.append("")
    if sweep:
        ns = sorted({r.workers for r in sweep})
        cs = sorted({r.cpus for r in sweep if r.cpus is not None})
        grid = {(r.workers, r.cpus): r.predicted for r in sweep}
        out += ["### The race model on machines bigger than this one (predicted only)", "",
                "Share of burst rounds (K = 16 connections per worker) outside 2:1 for N workers on C CPUs, "
                f"simulated from the wake-to-accept latencies of `{cell_text(sweep[0].latency_source or 'unknown')}`; "
                "not checked on a machine with more CPUs than this run's.",
                "", "| N workers | " + " | ".join(f"C = {c}" for c in cs) + " |", "|---|" + "---|" * len(cs)]
        for n in ns:
            out.append(f"| {n} | " + " | ".join(pct(grid.get((n, c))) for c in cs) + " |")
        out.append("")
    failed = [r for r in rows if isinstance(r, Failed)]
    checked = [r for r in measured if r.consistent is not None]
    bad = [r for r in checked if not r.consistent]
    text = (f"**What this shows.** {sum(r.consistent for r in checked)} of {plural(len(checked), 'prediction')} "
            "checked against a measurement here were consistent with it")
    text += (": " + "; ".join(f"{r.model} {r.case} predicted {pct(r.predicted)}, measured {pct(r.measured)}"
                                for r in bad) + " were not." if bad else ".")
    if failed:
        text += f" {plural(len(failed), 'model step')} failed: " + "; ".join(cell_text(f.error) for f in failed) + "."
    out += [text, ""]
    return out


# ---------------------------------------------------------------- timelines


@dataclass(frozen=True)
class TimelineConn:
    line: int
    variant: str
    n: int
    t_us: float
    est_cpu: int
    client: str
    woken: tuple  # ((index or None, waker cpu, ran cpu or None, preempted), ...)
    client_preempted: bool
    winner: Optional[int]  # worker index
    winner_cpu: Optional[int]
    accept_after_us: Optional[float]
    eagain: tuple  # worker indexes


def parse_timeline_row(obj: dict, line: int):
    variant = get_str(obj, "variant")
    conn = get(obj, "conn")
    if not isinstance(conn, dict):
        raise RowError('"conn" must be an object')
    woken = []
    for i, w in enumerate(conn.get("woken") or []):
        if not isinstance(w, dict):
            raise RowError(f'"conn" "woken"[{i}] must be an object')
        woken.append((w.get("index"), get_int(w, "waker_cpu", 0, ("conn", "woken", i)), w.get("ran_cpu"),
                      bool(w.get("preempted"))))
    winner = conn.get("winner_index")
    return TimelineConn(line, variant, get_int(conn, "n", 1, ("conn",)), get_number(conn, "t_us"),
                        get_int(conn, "est_cpu", 0, ("conn",)), get_str(conn, "client", ("conn",)),
                        tuple(woken), bool(conn.get("client_preempted")), winner, conn.get("winner_cpu"),
                        conn.get("accept_after_us"), tuple(conn.get("eagain_index") or ()))


def render_timeline(meta: Meta, rows: list) -> list:
    out = ["## Timelines (why a placement skews)", ""]
    out.append("What was measured: for a few variants, one oneshot round of 8 connections (each closed "
               "before the next opens) with `acceptlab-trace --timeline`: per connection, the CPU it became "
               "ESTABLISHED on and the task running there (on loopback, the client's connect), which workers "
               "were woken (by index) from which CPU and on which CPU each ran next (`*`: it preempted a task "
               "that was still runnable there), who won the accept on which CPU and how long after "
               "ESTABLISHED, and who got EAGAIN.")
    out.append("")
    if not rows:
        return out + ["No timeline was recorded in this run.", ""]
    for v in ordered(meta.variants, {r.variant for r in rows}):
        mine = sorted((r for r in rows if r.variant == v), key=lambda r: r.n)
        out += [f"### {v}", "", "| conn | ESTABLISHED on | woken (index: waker CPU -> ran on) | won by (CPU, after) | EAGAIN | client preempted |",
                "|---|---|---|---|---|---|"]
        for r in mine:
            woke = ", ".join(f"{'?' if i is None else i}: {wc} -> {'-' if rc is None else rc}{'*' if p else ''}"
                             for i, wc, rc, p in r.woken) or "none"
            won = ("not accepted while traced" if r.winner is None and r.winner_cpu is None else
                   f"{'?' if r.winner is None else r.winner} (CPU {r.winner_cpu}, "
                   f"{ms_text(r.accept_after_us / 1000) + ' ms' if r.accept_after_us is not None else '?'})")
            eagain = ", ".join("?" if i is None else str(i) for i in r.eagain) or "-"
            out.append(f"| {r.n} | CPU {r.est_cpu} ({cell_text(r.client)}) | {woke} | {won} | {eagain} | "
                       f"{'yes' if r.client_preempted else 'no'} |")
        winners = [r.winner for r in mine if r.winner is not None]
        same = sum(1 for r in mine if r.winner is not None and r.winner_cpu == r.est_cpu)
        indexes = set(winners) | set(range(meta.workers))  # a worker that won none shows as 0
        split = "/".join(str(n) for n in sorted((winners.count(i) for i in indexes), reverse=True))
        out += ["", f"{v}: {len(winners)} of {plural(len(mine), 'connection')} accepted while traced, split "
                f"{split or '-'} by worker; {same} accepted on the CPU the connection was established on; "
                f"{sum(r.client_preempted for r in mine)} with the client preempted by a worker.", ""]
    return out


# ---------------------------------------------------------------- tracer overhead


@dataclass(frozen=True)
class OverheadRun:
    line: int
    traced: bool
    mode: str
    round: int
    rps: float
    ratio: Optional[float]


def parse_overhead_row(obj: dict, line: int):
    traced = get_bool(obj, "traced")
    mode = get_str(obj, "mode")
    if "error" in obj:
        return Failed(line, (traced, mode, obj.get("round")), str(obj["error"]))
    ratio = get_number(obj, "ratio_traced", nullable=True) if "ratio_traced" in obj else None
    return OverheadRun(line, traced, mode, get_int(obj, "round", 1), get_number(obj, "requests_per_s"), ratio)


def render_trace_overhead(meta: Meta, rows: list) -> list:
    out = ["## The tracer's overhead", ""]
    out.append("What was measured: wrk (as in the cost study, `GET /` with 64 connections) against bare at 2 "
               "workers, once with `acceptlab-trace --pgid` attached and once without, alternated within "
               "each round, keep-alive and Connection: close. Each cell: req/s untraced, traced, and the "
               "ratio traced/untraced (target: at least 0.97).")
    out.append("")
    runs = [r for r in rows if isinstance(r, OverheadRun)]
    if not runs:
        return out + ["No run was recorded.", ""]
    out += ["| mode | " + " | ".join(f"round {n}" for n in sorted({r.round for r in runs})) + " | median ratio |",
            "|---|" + "---|" * (len({r.round for r in runs}) + 1)]
    lines = []
    for mode, title in COST_MODES:
        cells, ratios = [], []
        for n in sorted({r.round for r in runs}):
            off = next((r for r in runs if r.mode == mode and r.round == n and not r.traced), None)
            on = next((r for r in runs if r.mode == mode and r.round == n and r.traced), None)
            if off and on and on.ratio is not None:
                ratios.append(on.ratio)
                cells.append(f"{off.rps:.0f} / {on.rps:.0f} ({on.ratio:.2f})")
            else:
                cells.append("incomplete")
        med = statistics.median(ratios) if ratios else None
        out.append(f"| {title} | " + " | ".join(cells) + f" | {'-' if med is None else f'{med:.2f}'} |")
        if med is not None:
            lines.append(f"{title}: median ratio {med:.2f} over {plural(len(ratios), 'round')} "
                         f"({'meets' if med >= 0.97 else 'misses'} the 0.97 target)")
    failed = [r for r in rows if isinstance(r, Failed)]
    out += ["", "**What this shows.** " + ("; ".join(lines) + "." if lines else "No complete round.")
            + (f" {plural(len(failed), 'run')} failed." if failed else ""), ""]
    return out


# ---------------------------------------------------------------- reload


# What the reload must do, by arm: the shared listener never closes, and
# fdpass's leaver forwards what reaches it, so these must lose nothing;
# reuseport's old listener closes with its worker (reported, not held).
RELOAD_MUST_LOSE_NONE = {"bare", "exclusive", "exclusive-reorder", "lt", "lt-yield", "mutex", "mutex-strict",
                         "fdpass"}
RELOAD_LOADS = (("keepalive", "keep-alive"), ("close", "Connection: close"))


@dataclass(frozen=True)
class ReloadTrial:
    line: int
    variant: str
    migrate: bool
    spawn: bool
    reloads: int
    replaced: int
    reload_ms: tuple
    requests: dict   # load -> requests wrk completed
    errors: dict     # load -> {kind: count}

    @property
    def failed(self) -> int:
        return sum(sum(e.values()) for e in self.errors.values())


def parse_reload_row(obj: dict, line: int):
    variant = get_str(obj, "variant")
    migrate, spawn = get_bool(obj, "migrate"), get_bool(obj, "spawn")
    if "error" in obj:
        return Failed(line, (variant, migrate, spawn), str(obj["error"]))
    ms = get(obj, "reload_ms")
    if not isinstance(ms, list) or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0
                                          for v in ms):
        raise RowError('"reload_ms" must be a list of numbers >= 0')
    requests, errors = {}, {}
    for load, _ in RELOAD_LOADS:
        part = get(obj, load)
        if not isinstance(part, dict):
            raise RowError(f'"{load}" must be an object, got {json_kind(part)}')
        requests[load] = get_int(part, "requests", where=(load,))
        errors[load] = _reload_errors(part, load)
    row = ReloadTrial(line, variant, migrate, spawn, get_int(obj, "reloads"), get_int(obj, "replaced"),
                      tuple(ms), requests, errors)
    if get_int(obj, "failed") != row.failed:
        raise RowError(f'"failed" is {obj["failed"]}, but the errors add up to {row.failed}')
    return row


def _reload_errors(part: dict, load: str) -> dict:
    value = get(part, "errors", (load,))
    if not isinstance(value, dict) or not all(is_int(n) and n >= 0 for n in value.values()):
        raise RowError(f'"{load}.errors" must be an object of integers >= 0')
    return dict(value)


def reload_label(key) -> str:
    variant, migrate, spawn = key
    return variant + (" + migrate" if migrate else "") + (" (spawned workers)" if spawn else "")


def render_reload(meta: Meta, rows: list) -> list:
    trials = [r for r in rows if isinstance(r, ReloadTrial)]
    failed = [r for r in rows if isinstance(r, Failed)]
    out = ["## Reload: what clients see while every worker is replaced", "",
           "Each trial runs in a network namespace of its own with 2 workers: wrk keep-alive and wrk "
           "`Connection: close` ask `/pid` at once while the server gets SIGHUP several times. A reload "
           "replaces every worker one at a time: the new one serves before the old one stops taking "
           "connections; the old one answers each open connection's next request with `Connection: close` "
           "and exits when none is left. Failed: wrk's connect, read, write and timeout errors plus non-2xx "
           "answers. \"+ migrate\" sets net.ipv4.tcp_migrate_req=1 in the namespace (`--reuseport-migrate`); "
           "spawned workers are fork+exec of the server (`--spawn-workers`), so a reload starts new code.", "",
           "| variant | reloads | workers replaced | keep-alive requests | close requests | failed | "
           "errors | reload ms | must lose none |",
           "|---|---|---|---|---|---|---|---|---|"]
    for t in trials:
        kinds = ", ".join(f"{load} {kind} {n}" for load, _ in RELOAD_LOADS
                          for kind, n in sorted(t.errors[load].items()) if n) or "none"
        must = t.variant in RELOAD_MUST_LOSE_NONE
        out.append("| %s | %d | %d | %d | %d | %d | %s | %s | %s |" % (
            reload_label((t.variant, t.migrate, t.spawn)), t.reloads, t.replaced, t.requests["keepalive"],
            t.requests["close"], t.failed, kinds, " ".join(f"{v:.1f}" for v in t.reload_ms) or "-",
            ("yes: " + ("held" if t.failed == 0 else "**NOT HELD**")) if must else "no (reported)"))
    out.append("")
    lines = []
    held = [t for t in trials if t.variant in RELOAD_MUST_LOSE_NONE]
    if held:
        bad = [t for t in held if t.failed]
        lines.append(f"- Shared listener and fdpass: {len(held) - len(bad)} of {plural(len(held), 'trial')} "
                     "lost no request" + (": " + ", ".join(f"{reload_label((t.variant, t.migrate, t.spawn))} "
                                                          f"lost {t.failed}" for t in bad) if bad else "") + ".")
    for t in trials:
        if t.variant not in RELOAD_MUST_LOSE_NONE:
            lines.append(f"- {reload_label((t.variant, t.migrate, t.spawn))}: {t.failed} failed of "
                         f"{t.requests['keepalive'] + t.requests['close']} requests over "
                         f"{plural(t.reloads, 'reload')}.")
    out += ["**What this shows.**", ""] + lines + (failed_notes(failed, reload_label) or [""])
    return out


def render_reload_absent(meta: Meta) -> list:
    return ["## Reload", "", "Not measured in this run: it has no `reload.jsonl` (the campaign's `reload` "
            "study writes it).", ""]


# ---------------------------------------------------------------- perturbation

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


@dataclass(frozen=True)
class Study:
    """One results file and the section made from it."""
    name: str
    filename: str
    required: bool
    parse_row: Callable[[dict, int], object]
    render: Callable[[Meta, list], list]
    check: Callable[[Path, list], None] = lambda path, rows: None
    is_round: Callable[[object], bool] = lambda row: True  # what the success line counts
    absent: Optional[Callable[[Meta], list]] = None  # the section when the run has no such file
    reads: tuple = ()  # studies (earlier in STUDIES) whose rows render() also gets, as a dict


STUDIES = (
    Study("balancing", "balancing.jsonl", False, parse_balancing_row, render_balancing,
          check_balancing, lambda row: isinstance(row, Round)),
    Study("perturbation", "perturbation.jsonl", False, parse_perturbation_row, render_perturbation,
          check_perturbation, lambda row: isinstance(row, PerturbedRound), absent=render_perturbation_absent),
    Study("trace", "trace.jsonl", False, parse_trace_row, render_trace, is_round=lambda row: False),
    Study("peers", "peers.jsonl", False, parse_peers_row, render_peers, check_peers,
          is_round=lambda row: False, absent=render_peers_absent, reads=("balancing",)),
    Study("timeline", "timeline.jsonl", False, parse_timeline_row, render_timeline, is_round=lambda row: False),
    Study("placement", "placement.jsonl", False, parse_placement_row, render_placement,
          is_round=lambda row: isinstance(row, PlacementRun)),
    Study("models", "models.jsonl", False, parse_model_row, render_models, is_round=lambda row: False),
    Study("respawn", "respawn.jsonl", False, parse_respawn_row, render_respawn,
          is_round=lambda row: isinstance(row, RespawnTrial)),
    Study("reload", "reload.jsonl", False, parse_reload_row, render_reload,
          is_round=lambda row: isinstance(row, ReloadTrial), absent=render_reload_absent),
    Study("mutex_delay", "mutex_delay.jsonl", False, latency_row_parser("delay_ms"), render_mutex_delay,
          is_round=lambda row: isinstance(row, LatencyRound)),
    Study("slowview", "slowview.jsonl", False, latency_row_parser("sleep_ms"), render_slowview,
          is_round=lambda row: isinstance(row, LatencyRound)),
    Study("faults", "faults.jsonl", False, parse_fault_row, render_faults,
          is_round=lambda row: isinstance(row, FaultCase)),
    Study("cost", "cost.jsonl", False, wrk_row_parser("mode"), render_cost,
          check_wrk_rows(lambda mode: dict(COST_MODES)[mode], True), lambda row: isinstance(row, WrkRun)),
    Study("payoff", "payoff.jsonl", False, wrk_row_parser("connections"), render_payoff,
          check_wrk_rows(lambda c: f"{c} connections", False), lambda row: isinstance(row, WrkRun)),
    Study("trace_overhead", "trace_overhead.jsonl", False, parse_overhead_row, render_trace_overhead,
          is_round=lambda row: False),
)


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
        f"shapes {shapes}; variants {', '.join(meta.variants)}",
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
        if not study.required and not path.exists():
            if study.absent:
                sections += study.absent(meta)
            continue
        rows = read_jsonl(path, study.parse_row)
        study.check(path, rows)
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
    "balancing_shares.svg": "Balancing: the busiest worker's share of each round, per variant and shape; "
                            "the band is within 2:1",
    "placement_heatmap.svg": "Placement: the busiest worker's median share per placement and variant, with "
                             "the rounds in which both workers answered",
    "cost_bars.svg": "Cost: median req/s per arm and worker count (bars: min to max over the rounds)",
    "payoff_latency.svg": "Payoff: latency distribution (wrk's percentiles) per arm, at each connection count",
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
               "FILE:LINE), 2 bad usage. Example: /usr/bin/python3 report/report.py "
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
    except InputError as e:
        sys.stderr.write(e.render() + "\n")
        return 1
    except figures.FiguresError as e:
        sys.stderr.write(e.render() + "\n")
        return 1
    print(f"report: wrote {shown(args.out)} from run {run} ({plural(rounds, 'round')})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
