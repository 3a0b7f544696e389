"""common.py: what several of the report's sections share, and the one reader
of a run's meta.json (report.py, figures.py and quicklook.py all read it here).

- the field getters a row reader checks its rows with: each raises RowError
  naming the key (acceptlab/results_io.py adds FILE:LINE);
- meta.json: Meta and its parts (the shapes, how wrk ran the cost and payoff
  studies, how the peers study ran, the facts of each arm the run recorded),
  read by read_meta. The report reads an arm's partners and claims from the
  run's own meta.json ("arms", ArmFacts), never from today's table
  (acceptlab/arms.py), so an old run reads the same after an arm is renamed;
- formatting helpers for markdown cells and numbers (interval_text: a mean
  and its 95 % interval, from acceptlab/stats.py);
- Study: one results file and the section made from it (report.py lists them
  in the report's order), and row_reader, which makes a study's ONE reader
  from its row parser and its whole-file checks.
"""

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from acceptlab.paths import module_cmd
from acceptlab.results_io import (InputError, RowError, arm_key, decode_utf8, json_kind, parse_json, read_bytes,
                                  read_jsonl, shown)
from acceptlab.stats import mean_interval

SPLIT_RE = re.compile(r"^[0-9]+(/[0-9]+)*$")
SEED_000 = "shared/seeds/000_7431855f3c489ed2.txt"


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


def get_arm(obj: dict, where: tuple = ()) -> str:
    """The row's arm: "arm", or "variant" in a row written before the rows
    said arm (acceptlab/results_io.py's arm_key); an error names the key."""
    return get_str(obj, arm_key(obj), where)


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


def get_opt_int(obj: dict, key: str, where: tuple = ()):
    """An integer >= 0, or None when the key is absent or null."""
    value = obj.get(key)
    if value is not None and (not is_int(value) or value < 0):
        raise RowError(f'"{key}" must be an integer >= 0 or null, got {json.dumps(value)}', where + (key,))
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


def get_number(obj: dict, key: str, nullable: bool = False):
    value = get(obj, key)
    if value is None and nullable:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or value < 0:
        raise RowError(f'"{key}" must be a number >= 0{" or null" if nullable else ""}, got {json.dumps(value)}')
    return value


def get_failure(obj: dict) -> tuple:
    """A failed step's "error" (a string) and "round" (an integer >= 1; None when
    null or absent: the step failed before its rounds)."""
    error = obj["error"]
    if not isinstance(error, str):
        raise RowError(f'"error" must be a string, got {json_kind(error)}')
    rnd = obj.get("round")
    if rnd is not None and (not is_int(rnd) or rnd < 1):
        raise RowError(f'"round" must be an integer >= 1 or null, got {json.dumps(rnd)}')
    return error, rnd


# ---------------------------------------------------------------- formatting


def number(value) -> str:
    """10 -> "10", 2.5 -> "2.5": integral floats print without a fraction."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def ordered(listed: tuple, present: set) -> list:
    """The names in the order meta.json lists them, then any others alphabetically."""
    return [n for n in listed if n in present] + sorted(present - set(listed))


def plural(n: int, word: str, words: Optional[str] = None) -> str:
    return f"{n} {word if n == 1 else (words or word + 's')}"


def and_list(items) -> str:
    """"a", "a and b", "a, b and c"."""
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def count_word(n: int) -> str:
    """A small count as a sentence's first word: "Three"; larger ones as digits."""
    return {1: "One", 2: "Two", 3: "Three", 4: "Four", 5: "Five", 6: "Six"}.get(n, str(n))


def cell_text(text: str) -> str:
    """One line, safe inside a markdown table cell."""
    return " ".join(text.split()).replace("|", "\\|")


def ms_text(value: float) -> str:
    """Latency in ms: 0.273, 5.84, 32.0, 118 (3 decimals under 1 ms, then fewer)."""
    for bound, digits in ((1, 3), (10, 2), (100, 1)):
        if value < bound:
            return f"{value:.{digits}f}"
    return f"{value:.0f}"


@dataclass(frozen=True)
class Failed:
    """A step of a study that produced no measurement, with its reason."""
    line: int
    key: tuple
    error: str


def failed_notes(failed: list, label) -> list:
    """One line per failed step, then a blank line (nothing if none failed)."""
    notes = [f"- {label(f.key)}: failed: {cell_text(f.error)}" for f in failed]
    return notes + [""] if notes else []


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
    burst: Optional["BurstParams"] = None   # parameters.burst: how the burst study ran
    arm_facts: Optional["ArmFacts"] = None  # "arms": each arm's facts as the run recorded them
    census: Optional["CensusParams"] = None  # parameters.census: how the census ran
    throughput: Optional["ThroughputParams"] = None  # parameters.throughput: how the throughput study ran


def parse_meta_obj(obj, run_name: Optional[str]) -> Meta:
    """run_name: the run directory's name, which "stamp" must equal (None: not checked)."""
    if not isinstance(obj, dict):
        raise RowError(f"expected a JSON object, got {json_kind(obj)}")
    stamp = get_str(obj, "stamp")
    if run_name is not None and stamp != run_name:
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
    # The arms the run chose: "arms_chosen" (runs before it: "variants").
    chosen = "arms_chosen" if "arms_chosen" in params else "variants"
    raw_variants = get(params, chosen, where)
    if (not isinstance(raw_variants, list) or not raw_variants
            or not all(isinstance(v, str) and v.strip() for v in raw_variants)):
        raise RowError(f'"{chosen}" must be a non-empty array of names', where + (chosen,))
    if len(set(raw_variants)) != len(raw_variants):
        raise RowError(f'"{chosen}" lists a name twice', where + (chosen,))

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
                parse_peers_params(params, where), parse_burst_params(params, where), parse_arm_facts(obj),
                parse_census_params(params, where), parse_throughput_params(params, where))


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


ADD_ARM_FACTS = " ".join(module_cmd("ci.add_arm_facts"))  # what a run measured without the facts needs


def read_meta(run_dir: Path, check_stamp: bool = True, need_arm_facts: bool = True) -> Meta:
    """run_dir/meta.json; check_stamp: its "stamp" must be the directory's name
    (the figures draw a copy of a run under any name, so they do not check);
    need_arm_facts: a run without "arms" is an error that says how to add them
    (the figures read no arm facts, so they do without)."""
    path = run_dir / "meta.json"
    text = decode_utf8(path, read_bytes(path))
    try:
        obj = parse_json(text)
    except json.JSONDecodeError as e:
        raise InputError(path, e.lineno, f"invalid JSON: {e.msg}") from None
    except ValueError as e:
        raise InputError(path, 1, f"invalid JSON: {e}") from None
    try:
        meta = parse_meta_obj(obj, run_dir.name if check_stamp else None)
    except RowError as e:
        raise InputError(path, locate(text, e.key_path), e.message) from None
    if need_arm_facts and meta.arm_facts is None:
        raise InputError(path, None, f"run {meta.stamp} has no arm facts (\"arms\": it was measured before "
                         "meta.json recorded them); add them from the arms table, once, with "
                         f"{ADD_ARM_FACTS} {shown(run_dir)}")
    return meta


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
    # The campaign's order of things, which the figures follow; only a hint,
    # so whatever is not a list of names is taken as no order (()).
    arms: tuple = ()   # cost: the arms
    modes: tuple = ()  # cost: the modes
    cells: tuple = ()  # payoff: (arm, workers)
    # cost: make bench's stopping rule (--bench-within): +-within of the mean
    # for every CPU ratio's 95 % interval, at most max_rounds rounds; None
    # for fixed rounds (and in runs from before the rule was recorded)
    within: Optional[float] = None
    max_rounds: Optional[int] = None
    # cost, trace_overhead: wrk's -d for Connection: close runs when it differs
    # from duration_s (None: the same), and the CPUs the server and wrk were
    # pinned to (None: nothing pinned, or not recorded)
    close_duration_s: Optional[float] = None
    placement: Optional[tuple] = None  # (server CPUs, wrk CPUs)
    # cost, trace_overhead: "alternated" (one block per mode, every server kept
    # for it, ratios against the partner at the same moment) or None (a fresh
    # server per run, ratios within a round); wrk's -c per mode where they
    # differ ((mode, count), ...); the A/A arms ((arm, the arm it measures again), ...)
    method: Optional[str] = None
    connections_by_mode: tuple = ()
    aa: tuple = ()


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
                       tuple(sorted(sysctls.items())), tuple(parsed),
                       str_list(obj.get("arms")), str_list(obj.get("modes")), arm_workers(obj.get("cells")),
                       *stopping_of(obj.get("stopping")), meta_number(obj, "close_duration_s", at, 1, True),
                       placement_of(obj.get("placement"), at + ("placement",)), method_of(obj, at),
                       count_pairs(obj.get("connections_by_mode"), at + ("connections_by_mode",)),
                       name_pairs(obj.get("aa"), at + ("aa",)))


def method_of(obj: dict, at: tuple) -> Optional[str]:
    method = obj.get("method")
    if method not in (None, "alternated", "paired"):
        raise RowError(f'"method" must be "alternated", "paired" or absent, got {json.dumps(method)}',
                       at + ("method",))
    return method


def count_pairs(value, at: tuple) -> tuple:
    """{name: integer >= 1} -> ((name, n), ...) in its order; () when absent."""
    if value is None:
        return ()
    if not isinstance(value, dict) or not all(is_int(n) and n >= 1 for n in value.values()):
        raise RowError(f"must be an object of name -> integer >= 1, got {json_kind(value)}", at)
    return tuple(value.items())


def name_pairs(value, at: tuple) -> tuple:
    """{name: name} -> ((name, name), ...) in its order; () when absent."""
    if value is None:
        return ()
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise RowError(f"must be an object of name -> name, got {json_kind(value)}", at)
    return tuple(value.items())


def placement_of(value, at: tuple) -> Optional[tuple]:
    """(server CPUs, wrk CPUs) of a study's "placement", None when null or absent."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise RowError(f'"placement" must be an object or null, got {json_kind(value)}', at)
    out = []
    for key in ("server_cpus", "wrk_cpus"):
        cpus = get(value, key, at)
        if not isinstance(cpus, list) or not cpus or not all(is_int(c) and c >= 0 for c in cpus):
            raise RowError(f'"{key}" must be a non-empty list of CPU numbers, got {json.dumps(cpus)}', at + (key,))
        out.append(tuple(cpus))
    return tuple(out)


def placement_text(p) -> str:
    """How a wrk study placed the server and wrk, as a sentence ("" when unpinned or unrecorded)."""
    if p is None or p.placement is None:
        return ""
    server, client = (", ".join(map(str, cpus)) for cpus in p.placement)
    return (f"The server's threads were pinned to CPU {server} and wrk's to CPU {client}, so neither's "
            "scheduling mixes into the other's CPU time. ")


def stopping_of(value) -> tuple:
    """(within, max_rounds) of a study's "stopping" rule, (None, None) for
    fixed rounds or anything else."""
    if not isinstance(value, dict):
        return None, None
    within, cap = value.get("within"), value.get("max_rounds")
    if isinstance(within, bool) or not isinstance(within, (int, float)) or not is_int(cap):
        return None, None
    return within, cap


def str_list(value) -> tuple:
    """A list of strings, or () when meta.json records something else."""
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return ()


def arm_workers(value) -> tuple:
    """payoff's cells as (arm, workers), leaving out an entry that is not one."""
    if not isinstance(value, list):
        return ()
    return tuple((c["arm"], c["workers"]) for c in value
                 if isinstance(c, dict) and isinstance(c.get("arm"), str) and is_int(c.get("workers")))


@dataclass(frozen=True)
class Anchor:
    """A server not ours that the cost study ran as an arm (meta.json parameters.cost.anchor)."""
    peer: str        # its configuration in probes/peers/peers.py
    software: str    # e.g. nginx/1.22.1
    access_log: str  # "off": it logs no request, as our server does not
    answer: str      # what it answers, as its configuration says


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


@dataclass(frozen=True)
class CensusParams:
    """How the census ran (meta.json parameters.census)."""
    workers: tuple
    shapes: tuple
    rounds: int
    per_worker: int
    documented: tuple = ()  # (configuration, what its software's --help says the setting does)


def parse_census_params(params: dict, where: tuple) -> Optional[CensusParams]:
    if "census" not in params:
        return None
    obj = params["census"]
    at = where + ("census",)
    if not isinstance(obj, dict):
        raise RowError(f'"census" must be an object, got {json_kind(obj)}', at)
    workers, shapes = get(obj, "workers", at), get(obj, "shapes", at)
    if not isinstance(workers, list) or not all(isinstance(w, int) and not isinstance(w, bool) and w >= 1
                                                for w in workers):
        raise RowError('"workers" must be an array of counts', at + ("workers",))
    if not isinstance(shapes, list) or not all(isinstance(s, str) for s in shapes):
        raise RowError('"shapes" must be an array of names', at + ("shapes",))
    documented = []
    for sw in (obj.get("software") or {}).values():
        if isinstance(sw, dict) and isinstance(sw.get("documented"), dict):
            documented += [(k, v) for k, v in sw["documented"].items() if isinstance(v, str)]
    return CensusParams(tuple(workers), tuple(shapes), get_int(obj, "rounds", 1, at), get_int(obj, "per_worker", 1, at),
                        tuple(documented))


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
class BurstParams:
    """How the burst study ran (meta.json parameters.burst)."""
    path: str
    work_us: int
    workers: tuple     # worker counts
    per_worker: tuple  # K = each of these x workers
    bursts: int        # bursts per (arm, workers, K)
    gap_ms: float
    anchors: tuple = ()  # (arm, Anchor): servers not ours run as arms


def parse_burst_params(params: dict, where: tuple) -> Optional[BurstParams]:
    if "burst" not in params:
        return None
    obj = params["burst"]
    at = where + ("burst",)
    if not isinstance(obj, dict):
        raise RowError(f'"burst" must be an object, got {json_kind(obj)}', at)
    lists = []
    for key in ("workers", "per_worker"):
        value = get(obj, key, at)
        if not isinstance(value, list) or not value or not all(is_int(v) and v >= 1 for v in value):
            raise RowError(f'"{key}" must be a non-empty array of integers >= 1', at + (key,))
        lists.append(tuple(value))
    anchors = obj.get("anchor") or {}
    if not isinstance(anchors, dict) or not all(isinstance(h, dict) for h in anchors.values()):
        raise RowError('"anchor" must be an object of arm -> how it ran', at + ("anchor",))
    parsed = tuple((arm, Anchor(*(get_str(how, k, at + ("anchor", arm))
                                  for k in ("peer", "software", "access_log", "answer"))))
                   for arm, how in anchors.items())
    return BurstParams(get_str(obj, "path", at), get_int(obj, "work_us", 0, at), lists[0], lists[1],
                       get_int(obj, "bursts", 1, at), meta_number(obj, "gap_ms", at, 0), parsed)


@dataclass(frozen=True)
class ThroughputParams:
    """How the throughput study ran (meta.json parameters.throughput)."""
    path: str
    connections: int
    duration_s: float
    workers: int
    cpu_quota: float  # the share of one CPU each server was held to
    quota: str        # how it was held
    method: str       # "alternated" (each run alone, between two of bare's) or "paired" (beside one of bare's)


def parse_throughput_params(params: dict, where: tuple) -> Optional[ThroughputParams]:
    if "throughput" not in params:
        return None
    obj = params["throughput"]
    at = where + ("throughput",)
    if not isinstance(obj, dict):
        raise RowError(f'"throughput" must be an object, got {json_kind(obj)}', at)
    quota = meta_number(obj, "cpu_quota", at, 0)
    if not 0 < quota <= 64:
        raise RowError(f'"cpu_quota" must be a share of a CPU above 0, got {quota}', at + ("cpu_quota",))
    method = get_str(obj, "method", at)
    if method not in ("alternated", "paired"):
        raise RowError(f'"method" must be "alternated" or "paired", got {method!r}', at + ("method",))
    return ThroughputParams(get_str(obj, "path", at), get_int(obj, "connections", 1, at),
                            meta_number(obj, "duration_s", at, 0), get_int(obj, "workers", 1, at), quota,
                            get_str(obj, "quota", at), method)


# ---------------------------------------------------------------- meta.json: the arms' facts


ARM_PARTNERS = ("knob_off", "reference", "process_arm", "aa_of", "same_mechanism")
ARM_PARTNERS_LATER = ("aa_of",)  # partners a run measured before them does not record (null then)
ARM_CLAIMS = ("claims_balance", "acceptor_is_not_owner", "reload_loses_none")
ARM_MODES = ("process", "threads")


@dataclass(frozen=True)
class ArmFact:
    """One arm as the run recorded it (meta.json "arms", written from
    acceptlab/arms.py's meta_facts when the run was measured)."""
    name: str
    order: int            # its place in the table then
    variant: str          # the server's --variant
    mode: str             # "process" or "threads"
    options: tuple        # server options after the variant
    env: tuple            # (name, value), sorted: the environment its server ran with
    knob_off: Optional[str]        # the arm with the mechanism off, same binary
    reference: Optional[str]       # an arm of another variant cost compares it with (the same without it, or alike spread)
    process_arm: Optional[str]     # the same variant in process mode
    aa_of: Optional[str]           # an A/A arm: the arm it measures again, as an arm of its own
    same_mechanism: Optional[str]  # the arm whose mechanism it runs in another binary or mode
    claims_balance: bool
    acceptor_is_not_owner: bool
    reload_loses_none: bool
    in_study: tuple       # (study word, its place among the arms with that word)


@dataclass(frozen=True)
class ArmFacts:
    """Every arm the run recorded, and the queries the sections make of them."""
    arms: tuple                  # ArmFact, in the table's order then
    added: Optional[str] = None  # "arm_facts_added": how the facts came to a run measured without them

    def names(self) -> list:
        return [a.name for a in self.arms]

    def get(self, name: str) -> Optional[ArmFact]:
        return next((a for a in self.arms if a.name == name), None)

    def knob_off_of(self) -> dict:
        """{arm: its knob-off arm}."""
        return {a.name: a.knob_off for a in self.arms if a.knob_off}

    def aa_of(self) -> dict:
        """{A/A arm: the arm it measures again}."""
        return {a.name: a.aa_of for a in self.arms if a.aa_of}

    def same_mechanism_pairs(self) -> tuple:
        """((arm, the arm whose mechanism it runs), ...), in the table's order."""
        return tuple((a.name, a.same_mechanism) for a in self.arms if a.same_mechanism)

    def where(self, claim: str) -> set:
        """The arms that make this claim (one of ARM_CLAIMS)."""
        return {a.name for a in self.arms if getattr(a, claim)}

    def in_study(self, word: str) -> list:
        """The arms with this study word, in the study's order."""
        placed = [(dict(a.in_study)[word], a.name) for a in self.arms if word in dict(a.in_study)]
        return [name for _, name in sorted(placed)]


def parse_arm_facts(obj: dict) -> Optional[ArmFacts]:
    """meta.json's "arms" (None when the run has none), each arm's facts
    checked and every partner it names among them."""
    added = obj.get("arm_facts_added")
    if added is not None and (not isinstance(added, str) or not added.strip()):
        raise RowError(f'"arm_facts_added" must say how the facts were added, got {json_kind(added)}',
                       ("arm_facts_added",))
    if "arms" not in obj:
        if added is not None:
            raise RowError('"arm_facts_added" is there but "arms" is not', ("arm_facts_added",))
        return None
    raw = obj["arms"]
    if not isinstance(raw, dict) or not raw:
        raise RowError(f'"arms" must be an object of arm -> its facts, got {json_kind(raw)}', ("arms",))
    facts = []
    for name, f in raw.items():
        at = ("arms", name)
        if not isinstance(f, dict):
            raise RowError(f'"arms" entry "{name}" must be an object, got {json_kind(f)}', at)
        mode = get_str(f, "mode", at)
        if mode not in ARM_MODES:
            raise RowError(f'"arms" entry "{name}" "mode" must be process or threads, got {json.dumps(mode)}',
                           at + ("mode",))
        options, env = get(f, "options", at), get(f, "env", at)
        if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
            raise RowError(f'"arms" entry "{name}" "options" must be an array of strings', at + ("options",))
        if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
            raise RowError(f'"arms" entry "{name}" "env" must be an object of name -> string', at + ("env",))
        partners = []
        for key in ARM_PARTNERS:
            value = f.get(key) if key in ARM_PARTNERS_LATER else get(f, key, at)
            if value is not None and (not isinstance(value, str) or value not in raw):
                raise RowError(f'"arms" entry "{name}" "{key}" must be null or an arm "arms" holds, '
                               f"got {json.dumps(value)}", at + (key,))
            partners.append(value)
        places = get(f, "in_study", at)
        if not isinstance(places, dict) or not all(is_int(n) and n >= 0 for n in places.values()):
            raise RowError(f'"arms" entry "{name}" "in_study" must be an object of study word -> integer >= 0',
                           at + ("in_study",))
        facts.append(ArmFact(name, get_int(f, "order", 0, at), get_str(f, "variant", at), mode, tuple(options),
                             tuple(sorted(env.items())), *partners, *(get_bool(f, k, at) for k in ARM_CLAIMS),
                             tuple(sorted(places.items()))))
    orders = [a.order for a in facts]
    if len(set(orders)) != len(orders):
        twice = next(a for a in facts if orders.count(a.order) > 1)
        raise RowError(f'"arms" entry "{twice.name}": "order" {twice.order} is another arm\'s too',
                       ("arms", twice.name, "order"))
    return ArmFacts(tuple(sorted(facts, key=lambda a: a.order)), added)


# ---------------------------------------------------------------- studies


@dataclass(frozen=True)
class Study:
    """One results file and the section made from it."""
    name: str
    filename: str
    read: Callable[[Path], list]  # the study's one row reader (row_reader), shared with figures.py
    render: Callable[[Meta, list], list]
    is_round: Callable[[object], bool] = lambda row: True  # what the success line counts
    absent: Optional[Callable[[Meta], list]] = None  # the section when the run has no such file
    reads: tuple = ()  # studies (earlier in the report) whose rows render() also gets, as a dict


def row_reader(parse_row: Callable[[dict, int], object],
               check: Optional[Callable[[Path, list], None]] = None) -> Callable[[Path], list]:
    """A study's reader: parse_row(obj, line) for every row (a bad row is
    FILE:LINE), then check(path, rows) for what only the whole file shows
    (a round given twice...). Returns the rows in file order."""
    def read(path: Path) -> list:
        rows = read_jsonl(path, parse_row)
        if check is not None:
            check(path, rows)
        return rows
    return read


def interval_text(values: list) -> str:
    """The mean of values and its 95 % interval, "1.023 ± 0.012" (acceptlab.stats)."""
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    m, half = mean_interval(values)
    if half is None:
        return f"{m:.3f} (1 round)"
    return f"{m:.3f} ± {half:.3f}"
