"""Two studies of the tracer: why each worker won (trace.jsonl, bin/acceptlab-trace
beside every balancing step) and what the tracer costs (trace_overhead.jsonl,
wrk with and without it attached, and with the diagnosis's passive watch
attached, bin/acceptlab-diagnose --duration)."""

import json
import math
import statistics
from dataclasses import dataclass
from typing import Optional

from acceptlab.results_io import RowError, json_kind
from acceptlab.stats import MET, MISSED, NOT_RESOLVED, Z975, floor_of, floor_reach, judge, judge_on_floor
from report.common import (Failed, Meta, Study, and_list, cell_text, count_word, get, get_arm, get_bool, get_int,
                           get_number, get_str, interval_text, is_int, number, ordered, placement_text, plural,
                           row_reader)
from report.sections.wrk import COST_MODES, fresh_servers, verdict_text


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
    # The line carries "established": a tracer that followed every TCP
    # state change, and measured the latency to the worker entering
    # accept(). Today's follows them with --timeline alone, and measures
    # to the first accept() to return.
    established_seen: bool = False


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
    variant = get_arm(obj)
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
                                   cpu_counts(w, "accept_cpu"), cpu_counts(w, "wake_to_accept_us_log2"),
                                   "established" in w))
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
    before = any(w.established_seen for r in rows for w in r.workers)
    hooks = "tp_btf for sched_waking and inet_sock_set_state" if before else "tp_btf for sched_waking"
    latency_to = "the worker entering accept()" if before else "the first accept() to return after it"
    out.append(
        "What was measured: `bin/acceptlab-trace` (eBPF: the syscalls' tracepoints for accept and "
        f"epoll_wait, {hooks}) ran beside the balancing steps on "
        "fresh servers, attached to the server's process group after its ready line and stopped after the "
        "probe, so each row covers that arm's rounds of all three shapes. Wakeups count a worker woken while "
        "blocked in epoll_wait or accept; won and lost are accept() calls that returned a connection "
        "or EAGAIN; a wasted wakeup is one after which the worker lost an accept and won none before "
        "it waited again; wake to accept is the median bucket (log2 µs) of the time from the wakeup "
        f"to {latency_to}; accept CPU is where the won accepts ran, per CPU. Won per "
        "worker is the tracer's count beside the probe's connections per worker: they must be equal "
        "wherever the acceptor serves the connection (the cross-check); for fdpass, handoff and the "
        "shared epoll the acceptor is not always the owner, so both are shown.")
    out.append("")
    if not rows:
        return out + ["No trace was recorded in this run.", ""]
    variants = ordered(meta.variants, {r.variant for r in rows})
    untraced = [v for v in meta.variants if v not in variants]
    if untraced:
        out += ["No trace row for " + ", ".join(untraced) + " (the campaign runs a threads arm that has a "
                "process twin without the tracer, to keep within its minutes).", ""]
    out.append("| arm | mode | wakeups | won | lost | wasted wakeups | wake to accept (median) | "
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


def wilson(k: int, n: int) -> tuple:
    """The 95 % Wilson score interval of a share k of n."""
    z = Z975
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def share_apart(a: tuple, b: tuple) -> str:
    """judge() on the difference of two shares (k, n), a's minus b's, by
    Newcombe's 95 % interval from their Wilson intervals: MET when a's is
    resolved above b's, MISSED below, else not resolved."""
    (ka, na), (kb, nb) = a, b
    pa, pb = ka / na, kb / nb
    la, ua = wilson(ka, na)
    lb, ub = wilson(kb, nb)
    diff = pa - pb
    low = diff - math.sqrt((pa - la) ** 2 + (ub - pb) ** 2)
    high = diff + math.sqrt((ua - pa) ** 2 + (pb - lb) ** 2)
    return judge(low, high, 0, "at least")


def trace_findings(rows: list, variants: list) -> str:
    """Who wastes the largest and the smallest share of wakeups, from the
    rows; the variants whose share is not resolved apart from the leader's
    (Newcombe's interval of the difference holds 0, each wakeup counted as
    a trial of its own) are named as tied with it."""
    by = {}
    for v in variants:
        ws = [w for r in rows if r.variant == v for w in r.workers]
        wakeups = sum(w.wakeups for w in ws)
        if wakeups:
            by[v] = (sum(w.wasted for w in ws), wakeups, sum(w.lost for w in ws))
    if not by:
        return ""

    def share(v):
        return f"{by[v][0] / by[v][1]:.1%}"

    def tied(lead):
        return [v for v in by if v != lead and share_apart(by[lead][:2], by[v][:2]) == NOT_RESOLVED]
    most = max(by, key=lambda v: by[v][0] / by[v][1])
    least = min(by, key=lambda v: by[v][0] / by[v][1])
    parts = []
    for word, lead in (("largest", most), ("smallest", least)):
        ties = tied(lead)
        text = f"the {word}: {lead} ({share(lead)}" + (f", {by[lead][2]} accepts lost to EAGAIN" if word == "largest"
                                                         else "") + ")"
        if ties:
            text += (", a tie at this run's resolution with " + ", ".join(f"{v} ({share(v)})" for v in ties))
        parts.append(text)
    return ("Wasted wakeups as a share of wakeups, " + "; ".join(parts) + " (a tie: Newcombe's 95 % interval of "
            "the difference of the two shares holds 0, each wakeup counted as a trial of its own).")


# ---------------------------------------------------------------- tracer overhead


@dataclass(frozen=True)
class OverheadRun:
    line: int
    traced: bool
    mode: str
    round: int
    rps: float
    ratio: Optional[float]
    cpu: Optional[float] = None  # the server's CPU µs per request
    cpu_ratio: Optional[float] = None  # traced (or passive) over untraced, same mode and round
    converged: Optional[bool] = None  # the CPU ratio's interval within the stopping rule's bounds (traced rows)
    state: Optional[str] = None  # "untraced", "traced", "passive"; None in rows from before the passive state
    # a traced or passive run: its watcher attached for this run alone (True), or
    # for the whole block (None: runs from before "watched" was recorded)
    per_run: Optional[bool] = None
    # which start of the block's servers ran it (the round, where each round had new ones); None in rows
    # from before it was recorded
    server_set: Optional[int] = None
    # the toggled method (a row with "method": "toggled"): the run's CPU µs per request over its off and
    # its on windows, its pairs (on windows between two off ones) and the window's length
    toggled: bool = False
    cpu_off: Optional[float] = None
    cpu_on: Optional[float] = None
    pairs: int = 0
    window_s: Optional[float] = None

    @property
    def which(self) -> str:
        """The run's state: its "state", else from "traced"."""
        return self.state or ("traced" if self.traced else "untraced")


OVERHEAD_STATES = ("untraced", "untraced-aa", "traced", "passive", "passive-hooks")
# The ratio fields of a state's rows (req/s, CPU per request), over untraced.
OVERHEAD_RATIOS = {"traced": ("ratio_traced", "cpu_ratio_traced"), "passive": ("ratio_passive", "cpu_ratio_passive"),
                   "untraced-aa": ("ratio_aa", "cpu_ratio_aa"),
                   "passive-hooks": ("ratio_passive_hooks", "cpu_ratio_passive_hooks")}


@dataclass(frozen=True)
class ProgramRow:
    """One BPF program of a watcher over a programs run (a row with "kind":
    "programs"): its runs (events) and their time by the kernel's count."""
    name: str
    events: int
    run_ns: int
    events_per_request: Optional[float]
    ns_per_event: Optional[float]
    ns_per_request: Optional[float]


@dataclass(frozen=True)
class ProgramsRun:
    """A watcher's programs run: wrk against a new server, the kernel's BPF
    run-time statistics on for it alone."""
    line: int
    state: str
    mode: str
    requests: int
    programs: tuple  # ProgramRow, as the row lists them


# The watchers a programs run is of, and their words in the findings.
PROGRAMS_STATES = ("traced", "passive", "passive-hooks")
PROGRAMS_WORDS = {"traced": "the tracer's programs", "passive": "the passive watch's programs",
                  "passive-hooks": "its hooks alone (each program returning at once)"}


# A failed programs run's key begins with this, then its watcher.
PROGRAMS_FAILED = "programs of "


def failed_programs_run(row) -> bool:
    """Whether a parsed row is a programs run that failed (not a round's)."""
    return isinstance(row, Failed) and str(row.key[0]).startswith(PROGRAMS_FAILED)


def side_run_head(obj: dict, line: int, states: tuple, what: str, failed: str) -> tuple:
    """A row of a run after the rounds (programs, server profile): its state
    (one of states) and mode, and a Failed for a run that carries an error
    (its key failed + its state), else None."""
    state = get_str(obj, "state")
    if state not in states:
        raise RowError(f'"state" of a {what} row must be one of {", ".join(states)}, got {json.dumps(state)}')
    mode = get_str(obj, "mode")
    return state, mode, Failed(line, (failed + state, mode, None), str(obj["error"])) if "error" in obj else None


def parse_programs_row(obj: dict, line: int):
    state, mode, failed = side_run_head(obj, line, PROGRAMS_STATES, "programs", PROGRAMS_FAILED)
    if failed:
        return failed
    progs = get(obj, "programs")
    if not isinstance(progs, list):
        raise RowError(f'"programs" must be a list, got {json_kind(progs)}')
    out = []
    for p in progs:
        if not isinstance(p, dict):
            raise RowError(f'each of "programs" must be an object, got {json_kind(p)}')
        out.append(ProgramRow(get_str(p, "name"), get_int(p, "events"), get_int(p, "run_ns"),
                              get_number(p, "events_per_request", nullable=True),
                              get_number(p, "ns_per_event", nullable=True),
                              get_number(p, "ns_per_request", nullable=True)))
    return ProgramsRun(line, state, mode, get_int(obj, "requests"), tuple(out))


@dataclass(frozen=True)
class ServerProfileRun:
    """A server profile run (a row with "kind": "server_profile"): perf's
    samples of the server's workers under wrk, one watcher attached (none
    for untraced-aa), and the share of them in each kernel path."""
    line: int
    state: str
    mode: str
    samples: Optional[int]
    cpu_us: Optional[float]   # the server's CPU µs per request over the run
    paths: tuple              # (name, % of the samples), in the row's order
    programs: tuple           # (symbol, % of the samples), largest first


# The states a server profile run is of, in the table's order, and the
# kernel paths its row must name (the study's KERNEL_PATHS).
PROFILE_STATES = ("untraced-aa", "traced", "passive", "passive-hooks")
PROFILE_PATHS = ("syscall tracepoint", "dispatch", "programs")
PROFILE_FAILED = "server profile of "


def parse_profile_row(obj: dict, line: int):
    state, mode, failed = side_run_head(obj, line, PROFILE_STATES, "server profile", PROFILE_FAILED)
    if failed:
        return failed
    paths = get(obj, "paths")
    if not isinstance(paths, dict) or sorted(paths) != sorted(PROFILE_PATHS):
        raise RowError(f'"paths" must be an object of {", ".join(PROFILE_PATHS)}, got {json.dumps(paths)}')
    progs = get(obj, "programs")
    if not isinstance(progs, list) or not all(isinstance(p, dict) for p in progs):
        raise RowError(f'"programs" must be a list of objects, got {json_kind(progs)}')
    return ServerProfileRun(line, state, mode, get_int(obj, "samples") if obj.get("samples") is not None else None,
                            get_number(obj, "cpu_us_per_request", nullable=True),
                            tuple((k, get_number(paths, k)) for k in PROFILE_PATHS),
                            tuple((get_str(p, "symbol"), get_number(p, "self_pct")) for p in progs))


def parse_overhead_row(obj: dict, line: int):
    if obj.get("kind") == "programs":
        return parse_programs_row(obj, line)
    if obj.get("kind") == "server_profile":
        return parse_profile_row(obj, line)
    traced = get_bool(obj, "traced")
    mode = get_str(obj, "mode")
    state = get_str(obj, "state") if "state" in obj else None
    if state is not None and state not in OVERHEAD_STATES:
        raise RowError(f'"state" must be one of {", ".join(OVERHEAD_STATES)}, got {json.dumps(state)}')
    which = state or ("traced" if traced else "untraced")
    if "error" in obj:
        return Failed(line, (which, mode, obj.get("round")), str(obj["error"]))
    ratio_key, cpu_ratio_key = OVERHEAD_RATIOS.get(which, ("ratio_traced", "cpu_ratio_traced"))
    ratio = get_number(obj, ratio_key, nullable=True) if ratio_key in obj else None
    cpu = get_number(obj, "cpu_us_per_request", nullable=True) if "cpu_us_per_request" in obj else None
    cpu_ratio = get_number(obj, cpu_ratio_key, nullable=True) if cpu_ratio_key in obj else None
    converged = get_bool(obj, "cpu_converged") if "cpu_converged" in obj else None
    watched = get_str(obj, "watched") if "watched" in obj else None
    if watched not in (None, "run", "toggled"):
        raise RowError(f'"watched" must be "run", "toggled" or absent, got {json.dumps(watched)}')
    method = get_str(obj, "method") if "method" in obj else None
    if method not in (None, "toggled"):
        raise RowError(f'"method" must be "toggled" or absent, got {json.dumps(method)}')
    toggled = {}
    if method == "toggled":
        pairs = get(obj, "pair_ratios")
        if not isinstance(pairs, list):
            raise RowError(f'"pair_ratios" must be a list, got {json_kind(pairs)}')
        toggled = dict(toggled=True, pairs=len(pairs),
                       cpu_off=get_number(obj, "cpu_us_per_request_off", nullable=True),
                       cpu_on=get_number(obj, "cpu_us_per_request_on", nullable=True),
                       window_s=get_number(obj, "window_s"))
    return OverheadRun(line, traced, mode, get_int(obj, "round", 1), get_number(obj, "requests_per_s"), ratio,
                       cpu, cpu_ratio, converged, state, watched == "run" or None,
                       get_int(obj, "server_set", 1) if "server_set" in obj else None, **toggled)


# The tracer's budget: traced req/s at least this share of untraced; the same
# budget for CPU per request is traced/untraced at most its inverse.
TRACER_RPS_TARGET = 0.97
TRACER_CPU_TARGET = 1 / TRACER_RPS_TARGET
# The diagnosis's passive watch: at most 3 % more CPU per request on the
# server it watches (issue 25), keep-alive and close.
PASSIVE_CPU_TARGET = 1.03


def overhead_pair(runs: list, mode: str, n: int, state: str = "traced") -> tuple:
    """(untraced, state's) run of one mode and round; None for one not there."""
    def find(which):
        return next((r for r in runs if r.mode == mode and r.round == n and r.which == which), None)
    return find("untraced"), find(state)


# With the alternated method (an A/A pair in the block): the goals on CPU per
# request over the untraced server's, each judged against the A/A floor.
ALTERNATED_GOALS = {"traced": 1.05, "passive": 1.03}
STATE_WORDS = {"untraced-aa": "untraced again (the A/A pair)", "traced": "the tracer attached (`acceptlab-trace "
               "--pgid`)", "passive": "the diagnosis's passive watch attached (`acceptlab-diagnose --port P`)"}


def render_alternated_overhead(meta: Meta, runs: list, failed: list) -> list:
    """The alternated method's table: per mode and state, the server's CPU µs
    per request (median, lowest to highest), its ratio over the untraced
    server at the same moment and the req/s ratio (mean ± 95 % half-width);
    each goal judged against the A/A floor of its mode."""
    p = meta.cost
    conns = dict(p.connections_by_mode) if p is not None and p.connections_by_mode else {}
    rounds = max(r.round for r in runs)
    out = ["What was measured: wrk as the cost study runs it (`GET /`"
           + (f", {conns['keepalive']} connections on keep-alive and {conns['close']} on Connection: close"
              if conns else "") + ") against four servers of bare at 2 workers side by side, one block per mode "
           "in a network namespace of its own"
           + (" (every round on four new servers, started and warmed up for it and stopped after it, so what a "
              "server's start draws varies from round to round and the interval covers it)"
              if fresh_servers(runs) else "") + ": untraced, untraced again (the A/A pair: what the method "
           "resolves), with the tracer attached (`acceptlab-trace --pgid`) and with the diagnosis's passive "
           "watch attached (`acceptlab-diagnose --port P --duration D --json`), "
           + ("each attached just before each of its server's runs and detached after it, so no other run met "
              "it (what a watcher attaches runs for every task that hits its tracepoints)"
              if all(r.per_run for r in runs if r.which in ("traced", "passive")) else
              "each attached from before the server's warm-up to the end of the block (so the other servers' "
              "runs met it too)")
           + f"; {plural(rounds, 'round')}, the order shuffled from round "
           "to round, every other server's run between two runs of the untraced one. " + placement_text(p) + "A ratio is over the untraced server's value "
           "at the run's moment (its runs just before and after, on a line). The server's CPU time counts what "
           "a BPF program does in the server's tasks (its syscalls and switches), not what it does on wakeups "
           "wrk's packets cause (the waker's context), nor its reader (a process of its own). Goals: CPU per "
           f"request at most {number(ALTERNATED_GOALS['traced'])} of untraced with the tracer, at most "
           f"{number(ALTERNATED_GOALS['passive'])} with the passive watch, on keep-alive and on close, met only "
           "when the interval's upper bound clears the goal, missed only when its lower bound does, each by more "
           "than the A/A pair's reach from 1 (its distance from 1 plus its half-width).",
           "", "| mode | server | CPU µs per request | CPU ratio over untraced | req/s ratio over untraced |",
           "|---|---|---|---|---|"]
    lines = []
    for mode, title in COST_MODES:
        mine = [r for r in runs if r.mode == mode]
        if not mine:
            continue
        aa = [r.cpu_ratio for r in mine if r.which == "untraced-aa" and r.cpu_ratio is not None]
        floor = floor_of(aa)
        if floor is not None:
            m, half, n = floor
            lines.append(f"{title}: the A/A floor, untraced again over untraced, {m:.3f} ± {half:.3f} over "
                         f"{plural(n, 'round')}")
        for state in OVERHEAD_STATES:
            got = [r for r in mine if r.which == state]
            cpu = [r.cpu for r in got if r.cpu is not None]
            if not cpu:
                continue
            cell = f"{statistics.median(cpu):.2f} ({min(cpu):.2f} to {max(cpu):.2f})"
            if state == "untraced":
                out.append(f"| {title} | untraced | {cell} | 1 (the reference) | 1 (the reference) |")
                continue
            ratios = [r.cpu_ratio for r in got if r.cpu_ratio is not None]
            out.append(f"| {title} | {state} | {cell} | {interval_text(ratios)} | "
                       f"{interval_text([r.ratio for r in got if r.ratio is not None])} |")
            if state in ALTERNATED_GOALS and ratios:
                lines.append(goal_line(title, state, "/untraced", ratios, floor))
    return out + shows(lines, failed)


def goal_line(title: str, state: str, over: str, ratios: list, floor) -> str:
    """A finding: the state's CPU ratio judged against its goal and the A/A floor."""
    return (f"{title}: CPU per request {state}{over} ({STATE_WORDS[state]}) "
            + verdict_text(ratios, ALTERNATED_GOALS[state], "at most", floor))


def shows(lines: list, failed: list) -> list:
    """The section's closing paragraph: its findings, and the runs that failed."""
    return ["", "**What this shows.** " + ("; ".join(lines) + "." if lines else "No complete round.")
            + (f" {plural(len(failed), 'run')} failed." if failed else ""), ""]


TOGGLED_STATES = ("untraced-aa", "traced", "passive", "passive-hooks")
# What each state of a toggled round runs, for the section's text.
TOGGLED_WORDS = {"untraced-aa": "untraced-aa (no watcher, the same windows, nothing switched: the A/A pair, what "
                                "the method resolves)",
                 "traced": "traced (`acceptlab-trace --pgid`)",
                 "passive": "passive (the diagnosis's passive watch, `acceptlab-diagnose --port P --duration D "
                            "--json`)",
                 "passive-hooks": "passive-hooks (the passive watch's hooks alone: its tracepoints attached, each "
                                  "program returning at once, so what no change to its programs takes off)"}


def hooks_line(title: str, ratios: list, floor) -> str:
    """A finding: what the passive watch's hooks alone cost, judged against
    the passive watch's goal, and what that leaves its programs."""
    goal = ALTERNATED_GOALS["passive"]
    verdict, m, _, _ = judge_on_floor(ratios, goal, "at most", floor)
    then = {MISSED: "; so no change to its programs brings the passive watch within its goal, only fewer hooks",
            MET: "; so the hooks alone do not rule the goal out: the programs decide it"}.get(verdict, "")
    return (f"{title}: CPU per request on/off with the passive watch's hooks alone (each program returning at "
            "once), judged on the passive watch's goal: "
            + verdict_text(ratios, goal, "at most", floor) + then
            + ("" if verdict == MISSED else room_text(m, goal, floor)))


def room_text(hooks_mean, goal: float, floor) -> str:
    """What the hooks alone leave the passive watch at the run's resolution:
    a met watch's interval must clear the goal by more than the A/A pair's
    reach from 1, so its upper bound must lie below goal - reach; the hooks
    alone's mean is where the watch starts before its programs add
    anything. "" without a floor or a mean."""
    if floor is None or hooks_mean is None:
        return ""
    need = goal - floor_reach(floor)
    room = need - hooks_mean
    head = (f"; a met watch needs its upper bound below {need:.3f} (the goal less the A/A pair's reach from 1), "
            f"and the hooks alone's mean, {hooks_mean:.3f}, ")
    if round(room, 3) > 0:
        return head + f"leaves {room:.3f} for what its programs add and its half-width together"
    return head + ("is not below it: at this run's resolution only fewer hooks, or a finer resolution (more "
                   "rounds), can make the watch's verdict met")


def render_toggled_overhead(runs: list, failed: list) -> list:
    """The toggled method's table (probes/harness/toggling.py): per mode and
    state, the server's CPU µs per request over the runs' off and on windows
    (median over the runs, lowest to highest), and the CPU ratio on over off
    (each run's: the median of its pairs; mean ± 95 % half-width over the
    runs); each goal judged against the A/A floor of its mode."""
    window = runs[0].window_s
    states = [s for s in TOGGLED_STATES if any(r.which == s for r in runs)]
    pairs = sorted({r.pairs for r in runs})
    rounds = max(r.round for r in runs)
    out = ["What was measured: the server's CPU time per request with a watcher attached over without it, on "
           "bare at 2 workers under wrk as the cost study runs it (`GET /`), one block per mode in a network "
           "namespace of its own, each run on a new server. In a run the server is under one continuous wrk "
           "load and its watcher stays loaded, paused (its programs detached) and resumed (attached again) "
           f"every {number(window)} s: windows off and on, each after the watcher said the switch was done and "
           "a short settle, the first and last off, "
           + ("/".join(str(p) for p in pairs)) + " on windows per run. An on window's ratio is its CPU per "
           "byte the server read (the requests, which wrk sends alike) over the mean of the off windows "
           f"before and after it; a run's is the median of its windows'. {count_word(len(states))} runs a round, "
           f"the order shuffled from round to round, {plural(rounds, 'round')}: "
           + and_list([TOGGLED_WORDS[s] for s in states]) + ". The server's CPU time counts what a BPF program "
           "does in the server's tasks (its syscalls and switches), not what it does on wakeups wrk's packets "
           "cause (the waker's context), "
           "nor its reader (a process of its own). Goals: CPU per request at most "
           f"{number(ALTERNATED_GOALS['traced'])} of untraced with the tracer, at most "
           f"{number(ALTERNATED_GOALS['passive'])} with the passive watch, on keep-alive and on close, met only "
           "when the interval's upper bound clears the goal, missed only when its lower bound does, each by more "
           "than the A/A pair's reach from 1 (its distance from 1 plus its half-width).",
           "", "| mode | state | CPU µs per request, off windows | on windows | CPU ratio on over off |",
           "|---|---|---|---|---|"]
    lines = []

    def cell(values):
        values = [v for v in values if v is not None]
        return (f"{statistics.median(values):.2f} ({min(values):.2f} to {max(values):.2f})" if values
                else "-")
    for mode, title in COST_MODES:
        mine = [r for r in runs if r.mode == mode]
        if not mine:
            continue
        floor = floor_of([r.cpu_ratio for r in mine if r.which == "untraced-aa"])
        if floor is not None:
            m, half, n = floor
            lines.append(f"{title}: the A/A floor, sham windows (nothing switched), {m:.3f} ± {half:.3f} over "
                         f"{plural(n, 'round')}")
        for state in TOGGLED_STATES:
            got = [r for r in mine if r.which == state]
            if not got:
                continue
            ratios = [r.cpu_ratio for r in got if r.cpu_ratio is not None]
            out.append(f"| {title} | {state} | {cell([r.cpu_off for r in got])} | {cell([r.cpu_on for r in got])}"
                       f" | {interval_text(ratios)} |")
            if state in ALTERNATED_GOALS and ratios:
                lines.append(goal_line(title, state, " on/off", ratios, floor))
            elif state == "passive-hooks" and ratios:
                lines.append(hooks_line(title, ratios, floor))
    return out + shows(lines, failed)


def side_run_tail(lines: list, failed: list) -> list:
    """The end of a table of runs after the rounds: its findings, then each
    run that failed, said."""
    out = [""]
    if lines:
        out += ["**What this shows.** " + "; ".join(lines) + ".", ""]
    for f in failed:
        out.append(f"{dict(COST_MODES).get(f.key[1], f.key[1])}: {f.key[0]}: not measured ({f.error}).")
    return out + ([""] if failed else [])


def render_programs(rows: list) -> list:
    """The programs runs' table: per mode, watcher and program, its events
    per request, ns per event and ns per request by the kernel's count; for
    the passive watch, each program's ns per event over its hooks alone's
    (the same program returning at once: what a run costs with the
    statistics on), which is what its body does."""
    runs = [r for r in rows if isinstance(r, ProgramsRun)]
    failed = [r for r in rows if failed_programs_run(r)]
    if not runs and not failed:
        return []
    out = ["### What each program costs per event", "",
           "What was measured: after each mode's rounds, one run more per watcher, on a new server under wrk as "
           "the rounds run it, with the kernel's BPF run-time statistics on (`BPF_ENABLE_STATS`) for that run "
           "alone: each of the watcher's programs' runs (events) and the time they took, read from the watcher's "
           "`/proc/PID/fdinfo` before and after wrk. The statistics add two clock reads to every run, so they are "
           "off in the rounds above. An event is a run in any task's context (wrk's wakeups and reads too), so "
           "ns per request here is the programs' time on the whole machine, not the server's alone; the kernel's "
           "path to a program (the tracepoint's dispatch, a syscall tracepoint's slow path for every syscall) is "
           "not in it. With the hooks alone each program returns at once: its ns per event is what a run costs "
           "with the statistics on, and a passive program's body is its ns per event over that.",
           "", "| mode | watcher | program | events per request | ns per event | over the hooks alone | "
           "ns per request |", "|---|---|---|---|---|---|---|"]

    def num(v, fmt):
        return "-" if v is None else format(v, fmt)
    lines = []
    for mode, title in COST_MODES:
        hooks = {p.name: p.ns_per_event for r in runs if r.mode == mode and r.state == "passive-hooks"
                 for p in r.programs}
        for state in PROGRAMS_STATES:
            for r in (r for r in runs if r.mode == mode and r.state == state):
                ran = [p for p in r.programs if p.events]
                over = 0.0
                for p in ran:
                    base = hooks.get(p.name) if state == "passive" else None
                    body = p.ns_per_event - base if base is not None and p.ns_per_event is not None else None
                    if body is not None and p.events_per_request is not None:
                        over += body * p.events_per_request
                    out.append(f"| {title} | {state} | {p.name} | {num(p.events_per_request, '.3f')} | "
                               f"{num(p.ns_per_event, '.0f')} | {num(body, '+.0f')} | "
                               f"{num(p.ns_per_request, '.0f')} |")
                total = sum(p.ns_per_request or 0 for p in ran)
                out.append(f"| {title} | {state} | all | {sum(p.events_per_request or 0 for p in ran):.3f} | - | "
                           f"{num(over if state == 'passive' and hooks else None, '+.0f')} | {total:.0f} |")
                if ran:
                    top = max(ran, key=lambda p: p.ns_per_request or 0)
                    lines.append(f"{title}: {PROGRAMS_WORDS[state]}: {total:.0f} ns per request in all, most in "
                                 f"{top.name} ({num(top.events_per_request, '.3f')} per request, "
                                 f"{num(top.ns_per_event, '.0f')} ns each)"
                                 + (f", {over:+.0f} ns per request over the same hooks' programs returning at "
                                    "once" if state == "passive" and hooks else ""))
    return out + side_run_tail(lines, failed)


def failed_profile_run(row) -> bool:
    """Whether a parsed row is a server profile run that failed."""
    return isinstance(row, Failed) and str(row.key[0]).startswith(PROFILE_FAILED)


def program_name(symbol: str) -> str:
    """A JIT-compiled program's name from its symbol (bpf_prog_<tag>_<name>)."""
    parts = symbol.split("_", 3)
    return parts[3] if len(parts) == 4 and parts[:2] == ["bpf", "prog"] else symbol


def render_server_profile(rows: list) -> list:
    """The server profile runs' table: per mode and state, perf's samples of
    the server's workers and the share of them in each kernel path, each
    also as µs per request (the share of the run's CPU per request)."""
    runs = [r for r in rows if isinstance(r, ServerProfileRun)]
    failed = [r for r in rows if failed_profile_run(r)]
    if not runs and not failed:
        return []
    out = ["### Where a watcher's cost lands in the server", "",
           "What was measured: after the programs runs, one run more per state, on a new server under wrk as the "
           "rounds run it, its watcher attached for the whole run (untraced-aa: none, the reference), with "
           "`perf record -e cpu-clock` on the server's workers: each kernel symbol's share of the samples, put "
           "in a path by its name. The syscall tracepoint path is the slow path every syscall of every task "
           "takes while a program is attached to any syscall's tracepoint (the accept exits); the dispatch is "
           "the kernel's call from a tracepoint to its programs; the programs are the watcher's compiled "
           "programs and the helpers only they call. Unlike the kernel's count above, this is the server's own "
           "CPU time, and it counts the paths to the programs; a path's µs per request is its share of the "
           "run's CPU per request. The samples of one run: a share below about 0.3 % is within their noise.",
           "", "| mode | state | samples | CPU µs per request | "
           + " | ".join(f"{p} (% / µs)" for p in PROFILE_PATHS) + " | all three (% / µs) | programs, largest |",
           "|---|---|---|---|" + "---|" * (len(PROFILE_PATHS) + 2)]

    def share(pct, cpu):
        return f"{pct:.2f} / {pct * cpu / 100:.2f}" if cpu is not None else f"{pct:.2f} / -"
    lines = []
    for mode, title in COST_MODES:
        for state in PROFILE_STATES:
            for r in (r for r in runs if r.mode == mode and r.state == state):
                paths = dict(r.paths)
                total = sum(paths.values())
                top = ", ".join(f"{program_name(sym)} {pct:.2f}" for sym, pct in r.programs[:3]) or "-"
                out.append(f"| {title} | {state} | {r.samples if r.samples is not None else '-'} | "
                           f"{'-' if r.cpu_us is None else format(r.cpu_us, '.2f')} | "
                           + " | ".join(share(paths[p], r.cpu_us) for p in PROFILE_PATHS)
                           + f" | {share(total, r.cpu_us)} | {top} |")
                if state != "untraced-aa":
                    lines.append(f"{title}: {state}: " + ", ".join(f"{p} {paths[p]:.2f} %" for p in PROFILE_PATHS)
                                 + f" of the server's samples ({total:.2f} % in all)")
    return out + side_run_tail(lines, failed)


def render_trace_overhead(meta: Meta, rows: list) -> list:
    out = ["## The tracer's overhead", ""]
    programs = render_programs(rows) + render_server_profile(rows)
    rows = [r for r in rows if not isinstance(r, (ProgramsRun, ServerProfileRun)) and not failed_programs_run(r)
            and not failed_profile_run(r)]
    alternated = [r for r in rows if isinstance(r, OverheadRun)]
    if any(r.toggled for r in alternated):
        return out + render_toggled_overhead([r for r in alternated if r.toggled],
                                             [r for r in rows if isinstance(r, Failed)]) + programs
    if any(r.which == "untraced-aa" for r in alternated):
        return out + render_alternated_overhead(meta, alternated, [r for r in rows if isinstance(r, Failed)])
    conns = f" with {meta.cost.connections[0]} connections" if meta.cost else ""
    out.append(f"What was measured: wrk (as in the cost study, `GET /`{conns}) against bare at 2 "
               "workers, once with `acceptlab-trace --pgid` attached and once without (and, in a run that has it, "
               "once with the diagnosis's passive watch attached: below), alternated within each round, keep-alive "
               "and Connection: close. " + placement_text(meta.cost) + "Each cell: req/s "
               f"untraced, traced, and the ratio traced/untraced (target: at least {TRACER_RPS_TARGET}; its CPU "
               f"per request traced/untraced at most 1/{TRACER_RPS_TARGET} = {TRACER_CPU_TARGET:.3f}, the same "
               "budget; each judged on the 95 % interval of the ratio over the rounds: met only when the whole "
               "interval clears the target, missed only when it is wholly on the other side).")
    out.append("")
    runs = [r for r in rows if isinstance(r, OverheadRun)]
    if not runs:
        return out + ["No run was recorded.", ""]
    out += ["| mode | " + " | ".join(f"round {n}" for n in sorted({r.round for r in runs})) + " | ratio (mean ± 95 %) |",
            "|---|" + "---|" * (len({r.round for r in runs}) + 1)]
    lines = []
    for mode, title in COST_MODES:
        cells, ratios = [], []
        for n in sorted({r.round for r in runs}):
            off, on = overhead_pair(runs, mode, n)
            if off and on and on.ratio is not None:
                ratios.append(on.ratio)
                cells.append(f"{off.rps:.0f} / {on.rps:.0f} ({on.ratio:.2f})")
            else:
                cells.append("incomplete")
        out.append(f"| {title} | " + " | ".join(cells) + f" | {interval_text(ratios)} |")
        if ratios:
            lines.append(f"{title}: req/s traced/untraced " + verdict_text(ratios, TRACER_RPS_TARGET, "at least"))
    failed = [r for r in rows if isinstance(r, Failed)]
    out += [""] + overhead_cpu(runs, lines, *((meta.cost.within, meta.cost.max_rounds) if meta.cost else ()))
    out += overhead_passive(runs, lines)
    out += ["**What this shows.** " + ("; ".join(lines) + "." if lines else "No complete round.")
            + (f" {plural(len(failed), 'run')} failed." if failed else ""), ""]
    return out


def overhead_passive(runs: list, lines: list) -> list:
    """The diagnosis's passive watch (acceptlab-diagnose --duration, attached
    for a run in each round beside the untraced and traced runs): the
    server's CPU µs per request untraced / passive per round, the CPU ratio
    passive/untraced and its req/s ratio, each as a mean ± its 95 %
    interval over the rounds; adds a finding per mode, the CPU ratio judged
    against PASSIVE_CPU_TARGET (met only when the interval's upper bound is
    at most the target). A run without passive rows says it was not
    measured."""
    head = ("### The diagnosis's passive mode", "")
    if not any(r.which == "passive" for r in runs):
        return [*head, "Not measured in this run.", ""]
    rounds = sorted({r.round for r in runs})
    out = [*head, "The same wrk runs with `acceptlab-diagnose --port P --duration D --json` attached instead of the "
           "tracer: started inside the run's network namespace before wrk, stopped (SIGINT to its process group) "
           "after it, so it watched the whole run; the third state of every round, alternated with the other "
           "two. The server's CPU time per request (as above: the watch's BPF programs run in the server's "
           "tasks, its reader in a process of its own), untraced / passive, and the ratios' mean ± the "
           f"half-width of their 95 % interval over the rounds; target: CPU per request passive/untraced at most "
           f"{number(PASSIVE_CPU_TARGET)}, judged on the interval (met only when its upper bound is at most "
           "that, missed only when its lower bound is above it).", "",
           "| mode | " + " | ".join(f"round {n}" for n in rounds) + " | CPU ratio passive/untraced "
           "| req/s ratio passive/untraced |",
           "|---|" + "---|" * (len(rounds) + 2)]
    for mode, title in COST_MODES:
        cells, cpu_ratios, ratios = [], [], []
        for n in rounds:
            off, on = overhead_pair(runs, mode, n, "passive")
            if off and on and off.cpu is not None and on.cpu is not None:
                cells.append(f"{off.cpu:.2f} / {on.cpu:.2f}")
                if on.cpu_ratio is not None:
                    cpu_ratios.append(on.cpu_ratio)
                if on.ratio is not None:
                    ratios.append(on.ratio)
            else:
                cells.append("incomplete")
        if not any(c != "incomplete" for c in cells):
            continue
        out.append(f"| {title} | " + " | ".join(cells) + f" | {interval_text(cpu_ratios)} | {interval_text(ratios)} |")
        if cpu_ratios:
            lines.append(f"{title}: CPU per request passive/untraced (the diagnosis's passive watch) "
                         + verdict_text(cpu_ratios, PASSIVE_CPU_TARGET, "at most"))
    return out + [""]


def overhead_cpu(runs: list, lines: list, within: Optional[float] = None, max_rounds: Optional[int] = None) -> list:
    """The server's CPU µs per request untraced and traced, per round, and the
    ratio as a mean ± its 95 % half-width over the rounds (nothing for runs
    from before the CPU was measured), marked where it did not come within
    ±within of its mean (the rows' cpu_converged); adds a finding per mode
    to lines."""
    if not any(r.cpu is not None for r in runs):
        return []
    rounds = sorted({r.round for r in runs})
    marked = any(r.converged is False for r in runs)
    out = ["The server's CPU time per request (user + system of every thread of its processes, over the "
           "requests wrk completed; a BPF program runs in the task that hits its tracepoint, so the tracer's "
           "time on the server's own syscalls and context switches is in it, and its time on wakeups that "
           "wrk's packets cause, which run in the waker's context, is not), untraced / traced, and the "
           "ratio's mean ± the half-width of its 95 % interval over the rounds:", "",
           "| mode | " + " | ".join(f"round {n}" for n in rounds) + " | CPU ratio traced/untraced |",
           "|---|" + "---|" * (len(rounds) + 1)]
    for mode, title in COST_MODES:
        cells, ratios = [], []
        for n in rounds:
            off, on = overhead_pair(runs, mode, n)
            if off and on and off.cpu is not None and on.cpu is not None:
                cells.append(f"{off.cpu:.2f} / {on.cpu:.2f}")
                if on.cpu_ratio is not None:
                    ratios.append(on.cpu_ratio)
            else:
                cells.append("incomplete")
        if not any(c != "incomplete" for c in cells):
            continue
        mark = " †" if any(r.converged is False for r in runs if r.mode == mode) else ""
        out.append(f"| {title} | " + " | ".join(cells) + f" | {interval_text(ratios)}{mark} |")
        if ratios:
            lines.append(f"{title}: CPU per request traced/untraced "
                         + verdict_text(ratios, TRACER_CPU_TARGET, "at most")
                         + (" (wider than the stopping rule's bounds)" if mark else ""))
    if marked:
        cap = " (the stopping rule's cap)" if max_rounds is not None and len(rounds) >= max_rounds else ""
        out += ["", f"{plural(len(rounds), 'round')} ran{cap}; † marks a ratio whose 95 % interval is wider than ±"
                f"{number((within or 0.02) * 100)} % of its mean (the stopping rule's bounds)."]
    return out + [""]


read_trace = row_reader(parse_trace_row)
read_trace_overhead = row_reader(parse_overhead_row)
TRACE = Study("trace", "trace.jsonl", read_trace, render_trace, is_round=lambda row: False)
TRACE_OVERHEAD = Study("trace_overhead", "trace_overhead.jsonl", read_trace_overhead, render_trace_overhead,
                       is_round=lambda row: False)
