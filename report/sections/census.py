"""The census (census.jsonl): real servers, unchanged, diagnosed by port
(bin/acceptlab-diagnose, attributed by the kernel), each shape's rounds
split one by one, cross-checked against each server's own record (its
access log's worker pid) or sock_diag's owner of each held connection, and
set beside our variant with the same mechanism."""

import json
import math
from dataclasses import dataclass
from typing import Optional

from acceptlab.results_io import RowError, json_kind
from report.common import Meta, Study, cell_text, get, get_int, get_str, plural, row_reader
from report.sections.balancing import Round
from report.sections.diagnosis import fields_of, mechanism_text

SHAPES = ("burst", "ramp", "keepalive")


@dataclass(frozen=True)
class Shape:
    """One configuration x workers x shape: the diagnosis's mechanism and rounds."""
    line: int
    server: str
    software: str
    version: Optional[str]
    setting: str
    workers: int
    shape: str
    found: tuple                  # FIELDS' values
    splits: tuple                 # each round's split ("-" when none)
    within: int                   # rounds within 2:1 over two workers or more
    crosscheck: Optional[tuple]   # (source, equal, diagnosed, truth) or None (no log)
    traced: bool
    wait_detail: Optional[str] = None
    one_worker: int = 0           # rounds whose split is over one worker (one process served them all)


@dataclass(frozen=True)
class NotApplicable:
    line: int
    server: str
    workers: int
    shape: str
    reason: str


@dataclass(frozen=True)
class Held:
    """The held burst: who owns each held connection beside the diagnosis."""
    line: int
    server: str
    workers: int
    source: str
    equal: bool
    diagnosed: tuple
    truth: tuple
    by_split: bool
    per_process_only: bool


@dataclass(frozen=True)
class Missing:
    """A configuration not measured: "unavailable" (with the reason) or an error."""
    line: int
    server: str
    workers: Optional[int]
    kind: str
    reason: str


def counter(obj: dict, key: str, where: tuple = ()) -> tuple:
    value = get(obj, key, where)
    if not isinstance(value, dict) or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0
                                              for v in value.values()):
        raise RowError(f'"{key}" must be an object of counts, got {json_kind(value)}', where + (key,))
    return tuple(sorted((str(k), v) for k, v in value.items() if v))


def crosscheck_of(obj: dict) -> tuple:
    c = get(obj, "crosscheck")
    if not isinstance(c, dict):
        raise RowError(f'"crosscheck" must be an object, got {json_kind(c)}')
    diagnosed, truth = counter(c, "diagnosed", ("crosscheck",)), counter(c, "truth", ("crosscheck",))
    by_split = c.get("compared_by") == "split"
    equal = (sorted(n for _, n in diagnosed) == sorted(n for _, n in truth)) if by_split else diagnosed == truth
    if get(c, "equal", ("crosscheck",)) is not equal:
        raise RowError('"crosscheck.equal" disagrees with its "diagnosed" and "truth"')
    return get_str(c, "source", ("crosscheck",)), equal, diagnosed, truth, by_split, c.get("per_process_only") is True


def parse_census_row(obj: dict, line: int):
    server = get_str(obj, "server")
    kind = obj.get("kind")
    workers = obj.get("workers")
    if kind == "unavailable":
        return Missing(line, server, workers, "unavailable", get_str(obj, "reason"))
    if kind == "error":
        return Missing(line, server, workers, "error", get_str(obj, "error"))
    workers = get_int(obj, "workers", 1)
    if kind == "shape":
        shape = get_str(obj, "shape")
        if "not_applicable" in obj:
            return NotApplicable(line, server, workers, shape, get_str(obj, "not_applicable"))
        rounds = get(obj, "rounds")
        if not isinstance(rounds, list):
            raise RowError(f'"rounds" must be a list, got {json_kind(rounds)}')
        splits = tuple((r.get("split") or "-") if isinstance(r, dict) else "-" for r in rounds)
        within = sum(1 for r in rounds if isinstance(r, dict) and r.get("within_2to1") is True)
        if get_int(obj, "within", 0) != within:
            raise RowError('"within" disagrees with its rounds')
        # A split over one worker (one process serving every connection:
        # Caddy, Varnish) is within 2:1 by the diagnosis's arithmetic, but
        # no spreading: counted apart.
        one = sum(1 for sp in splits if sp != "-" and "/" not in sp)
        within = sum(1 for r, sp in zip(rounds, splits)
                     if isinstance(r, dict) and r.get("within_2to1") is True and "/" in sp)
        check = None
        if "crosscheck" in obj:
            source, equal, diagnosed, truth, _, _ = crosscheck_of(obj)
            check = (source, equal, diagnosed, truth)
        version = obj.get("version")
        detail = obj.get("wait_detail")
        return Shape(line, server, get_str(obj, "software"), version if isinstance(version, str) else None,
                     get_str(obj, "setting"), workers, shape, fields_of(obj), splits, within, check,
                     obj.get("traced") is True, detail if isinstance(detail, str) else None, one)
    if kind == "held":
        source, equal, diagnosed, truth, by_split, per_process = crosscheck_of(obj)
        return Held(line, server, workers, source, equal, diagnosed, truth, by_split, per_process)
    raise RowError(f'"kind" must be shape, held, unavailable or error, got {json.dumps(kind)}')


def key_of(r) -> tuple:
    return r.server, r.workers


def crosscheck_cell(shapes: list, held: Optional[Held]) -> str:
    parts = []
    logged = [s for s in shapes if s.crosscheck]
    if logged:
        parts.append(f"{logged[0].crosscheck[0]}: {sum(s.crosscheck[1] for s in logged)} of "
                     f"{plural(len(logged), 'shape')} equal")
    if held:
        what = "equal" if held.equal else "DIFFERS"
        if held.per_process_only:
            what += " (one process: threads not told apart)"
        parts.append(f"held burst, {held.source}: {what}")
    return "; ".join(parts) or "-"


def within_cell(mine: list) -> str:
    """'5 of 9', and how many rounds were over one worker, if any."""
    one = sum(s.one_worker for s in mine)
    text = f"{sum(s.within for s in mine)} of {sum(len(s.splits) for s in mine)}"
    return text + (f" ({one} over one worker: one process served them all)" if one else "")


def ours_within(balancing: Optional[list], variant: Optional[str], workers: int) -> str:
    if balancing is None:
        return "no balancing study in this run"
    if not variant:
        return "-"
    mine = [r for r in balancing if isinstance(r, Round) and r.variant == variant and r.workers == workers
            and r.shape in SHAPES]
    if not mine:
        return f"{variant} not measured at {plural(workers, 'worker')} in this run"
    return f"{sum(r.within for r in mine)} of {len(mine)}"


def render_census(meta: Meta, rows: list, others: dict) -> list:
    shapes = [r for r in rows if isinstance(r, Shape)]
    na = [r for r in rows if isinstance(r, NotApplicable)]
    held = {key_of(r): r for r in rows if isinstance(r, Held)}
    missing = [r for r in rows if isinstance(r, Missing)]
    keys = list(dict.fromkeys(key_of(r) for r in shapes))
    c = meta.census
    out = ["## Real servers", ""]
    out.append(
        "Servers nobody here wrote, from Debian's packages, each started unchanged in a temp dir on a free "
        "loopback port and stopped by process group, and diagnosed by port with `bin/acceptlab-diagnose` "
        f"(`docs/diagnose.md`): each shape ({', '.join(c.shapes if c else SHAPES)}) run by the diagnosis "
        f"itself, {plural(c.rounds if c else 3, 'round')} of {c.per_worker if c else 16} connections per "
        "worker, each round's split attributed by the kernel (the thread that first read each connection's "
        "bytes; the process, for a process that serves from a pool of threads), never by asking the server. "
        "The cross-check: where the server keeps a record of which worker served (an access log with the "
        "worker's pid), its connections per pid over the same rounds; for a server that keeps none, one more "
        "burst, held open once answered under a passive diagnosis, with sock_diag's owner of each held "
        "connection (HAProxy: its thread-number answers, as a split; php-fpm, which speaks FastCGI and whose "
        "shapes send nothing: FastCGI requests and its access log). A round whose split is over one worker "
        "(one process served every connection, its threads one pool) is not counted within 2:1.")
    out.append("")
    if keys:
        out += ["| server | version | setting | workers | mechanism found | closest variant | "
                + " | ".join(SHAPES) + " | within 2:1 | cross-check |",
                "|---|---|---|---|---|---|" + "---|" * len(SHAPES) + "---|---|"]
        for k in keys:
            mine = [s for s in shapes if key_of(s) == k]
            first = mine[0]
            cells = []
            for shape in SHAPES:
                s = next((x for x in mine if x.shape == shape), None)
                n = next((x for x in na if key_of(x) == k and x.shape == shape), None)
                cells.append(" ".join(s.splits) if s else "n/a" if n else "-")
            out.append(f"| {cell_text(first.server)} | {cell_text(first.version or '-')} | "
                       f"{cell_text(first.setting)} | {first.workers} | {cell_text(mechanism_text(first.found))} | "
                       f"{first.found[5] or '-'} | " + " | ".join(cells) + f" | {within_cell(mine)} | "
                       f"{cell_text(crosscheck_cell(mine, held.get(k)))} |")
        out.append("")
        out += beside_ours(keys, shapes, others.get("balancing"))
        out += findings(keys, shapes, dict(c.documented) if c else {})
        out += crosscheck_notes(shapes, list(held.values()))
    else:
        out += ["No server was measured in this run.", ""]
    if missing:
        out += ["Not measured:", ""]
        for m in missing:
            label = m.server + (f", {plural(m.workers, 'worker')}" if m.workers else "")
            out.append(f"- {label}: {m.kind}: {cell_text(m.reason)}")
        out.append("")
    return out


def beside_ours(keys: list, shapes: list, balancing: Optional[list]) -> list:
    out = ["### Beside our variants", "",
           "Each server's rows beside the arm of ours built on the mechanism the diagnosis found (its closest "
           "variant): rounds within 2:1 over the same shapes at the same worker count, ours from this run's "
           "balancing table.", "",
           "| server | workers | closest variant | server within 2:1 | ours within 2:1 |", "|---|---|---|---|---|"]
    for k in keys:
        mine = [s for s in shapes if key_of(s) == k]
        variant = mine[0].found[5]
        out.append(f"| {cell_text(k[0])} | {k[1]} | {variant or '-'} | {within_cell(mine)} | "
                   f"{cell_text(ours_within(balancing, variant, k[1]))} |")
    return out + [""]


def findings(keys: list, shapes: list, documented: dict) -> list:
    """Per software: how it spreads at each worker count, and where it has
    several settings, which kept the most rounds within 2:1, and whether a
    setting changed anything the diagnosis sees of how the port is shared
    (beside what the software's own help says the setting does)."""
    out = ["### Findings per server", ""]
    by_software = {}
    for k in keys:
        mine = [s for s in shapes if key_of(s) == k]
        by_software.setdefault(mine[0].software, []).append(mine)
    for software, groups in by_software.items():
        parts = []
        for mine in groups:
            first = mine[0]
            worst = max((sp for s in mine for sp in s.splits if "/" in sp), key=split_ratio, default=None)
            parts.append(f"{first.server} at {plural(first.workers, 'worker')}: {mechanism_text(first.found)} "
                         f"(closest variant {first.found[5] or 'none'}), rounds within 2:1: {within_cell(mine)}"
                         + (f", the most uneven {worst}" if worst else ""))
        line = f"- **{software}**: " + "; ".join(parts) + "."
        settings = {}
        for mine in groups:
            settings.setdefault(mine[0].workers, []).append(
                (sum(s.within for s in mine), sum(len(s.splits) for s in mine), mine[0]))
        for workers, options in settings.items():
            if len(options) < 2:
                continue
            options.sort(key=lambda o: (-o[0] / max(o[1], 1), o[2].line))
            best, rest = options[0], options[1:]
            line += f" At {plural(workers, 'worker')}, " + "; ".join(setting_against(best, o) for o in rest) + "."
            line += same_mechanism(options, documented)
        out.append(line)
    return out + [""]


# A difference between two settings' rounds within 2:1 is called one only
# when a difference at least as large would come by chance below this, were
# the two alike (the diagnosis's own line for a skew beyond chance, 1 %).
BEYOND_CHANCE = 0.01


def fisher_two_sided(a: int, n: int, b: int, m: int) -> float:
    """The exact chance (Fisher's test, two-sided) that two settings that
    keep rounds within 2:1 alike show counts at least as far apart as a of
    n and b of m: over the tables with the same margins, the sum of those no
    likelier than the one seen."""
    total, within = n + m, a + b

    def p(x):
        return math.comb(within, x) * math.comb(total - within, n - x) / math.comb(total, n)

    seen = p(a)
    return min(1.0, sum(p(x) for x in range(max(0, within - m), min(within, n) + 1)
                        if p(x) <= seen * (1 + 1e-9)))


def setting_against(best: tuple, other: tuple) -> str:
    """'A kept more rounds within 2:1 than B (9 of 9 against 2 of 9; ...)'
    when the difference is beyond chance, else both counts and 'not
    resolved'."""
    (a, n, x), (b, m, y) = best, other
    chance = fisher_two_sided(a, n, b, m)
    counts = f"{a} of {n} against {b} of {m}"
    if a * m > b * n and chance < BEYOND_CHANCE:
        return (f"{x.setting} kept more rounds within 2:1 than {y.setting} ({counts}; as far apart by chance "
                f"between settings that balance alike: {chance * 100:.3g} %)")
    return (f"{x.setting} and {y.setting}: {counts} rounds within 2:1, not resolved at this run's rounds "
            f"(as far apart by chance: {chance * 100:.3g} %)")


def same_mechanism(options: list, documented: dict) -> str:
    """Settings of one software at one worker count whose diagnosis found the
    same mechanism as its first (default) configuration: said, with what
    the software's help says the setting does and each one's waiters."""
    first = min(options, key=lambda o: o[2].line)[2]
    text = ""
    for _, _, s in sorted(options, key=lambda o: o[2].line)[1:]:
        if s.found != first.found:
            continue
        text += (f" The diagnosis finds {s.server} sharing the port as {first.server} does "
                 f"({mechanism_text(s.found)}, closest variant {s.found[5] or 'none'})")
        if s.server in documented:
            text += f", where its help says {documented[s.server]}"
        if s.wait_detail and first.wait_detail and s.wait_detail != first.wait_detail:
            text += f"; waiters, {first.server}: {s_detail(first)}; {s.server}: {s_detail(s)}"
        text += "."
    return text


def s_detail(s: Shape) -> str:
    return s.wait_detail.split("; ", 1)[1] if "; " in (s.wait_detail or "") else (s.wait_detail or "-")


def split_ratio(split: str) -> float:
    counts = [int(x) for x in split.split("/") if x.isdigit()]
    if not counts or len(counts) < 2:
        return 0.0
    return float("inf") if min(counts) == 0 else max(counts) / min(counts)


def crosscheck_notes(shapes: list, held: list) -> list:
    bad = [f"- {s.server}, {plural(s.workers, 'worker')}, {s.shape}: the diagnosis "
           + (" ".join(f"{k}:{n}" for k, n in s.crosscheck[2]) or "none") + f", {s.crosscheck[0]} "
           + (" ".join(f"{k}:{n}" for k, n in s.crosscheck[3]) or "none") + "."
           for s in shapes if s.crosscheck and not s.crosscheck[1]]
    bad += [f"- {h.server}, {plural(h.workers, 'worker')}, the held burst: the diagnosis "
            + (" ".join(f"{k}:{n}" for k, n in h.diagnosed) or "none") + f", {h.source} "
            + (" ".join(f"{k}:{n}" for k, n in h.truth) or "none") + "."
            for h in held if not h.equal]
    logged = [s for s in shapes if s.crosscheck]
    said = [f"the server's own log equals the diagnosis in {sum(s.crosscheck[1] for s in logged)} of "
            f"{plural(len(logged), 'shape')} of the servers that keep one"] if logged else []
    said += [f"the held burst's record equals it in {sum(h.equal for h in held)} of "
             f"{plural(len(held), 'server')} checked that way"] if held else []
    text = "; ".join(said) or "nothing was cross-checked"
    out = ["**The cross-check.** " + text[:1].upper() + text[1:]
           + (". Where they differ:" if bad else "."), ""]
    return out + (bad + [""] if bad else [])


def census_absent(meta: Meta) -> list:
    return ["## Real servers", "",
            "Not measured in this run: it has no `census.jsonl` (the campaign's `census` study writes it; "
            "`make census` runs it alone).", ""]


read_census = row_reader(parse_census_row)
STUDY = Study("census", "census.jsonl", read_census, render_census,
              is_round=lambda row: isinstance(row, Shape), absent=census_absent, reads=("balancing",))
