"""The row format the cost and the payoff studies share (cost.jsonl,
payoff.jsonl: one wrk run a row), its checks, and the text both sections use.
Each study's reader is in its own section (sections/cost.py, sections/payoff.py);
figures.py draws from the same rows."""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from acceptlab.results_io import InputError, RowError
from acceptlab.stats import MET, MISSED, NOT_RESOLVED, judge_on_floor, partner_at, place_of
from report.common import (BenchParams, Failed, failed_notes, get, get_counter, get_failure, get_int, get_number,
                           get_split, get_str, is_int, number, plural)


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
    cpu: Optional[tuple] = None  # cost: (µs per request, per accepted connection or None) of the server's CPU
    cpu_ratios: Optional[tuple] = None  # cost: CPU µs per request over bare's, the knob-off arm's, the process
                                        # arm's, the reference arm's
    partners: tuple = ()  # cost: (ratio, arm) the CPU ratios are over: ("to_knob_off", "fdpass-off"), ...
    converged: tuple = ()  # cost: (ratio, its 95 % interval within the stopping rule's +-within), sorted
    ratio_to_reference: Optional[float] = None  # cost, reuseport-bpf: req/s over its reference arm's
    # cost: the server's context switches per request wrk completed, (voluntary, involuntary), over the
    # wrk run (None: not recorded); requests per epoll_wait return over all workers, and per worker as
    # ((index, requests, returns), ...) (None: not known, as for the anchor)
    switches: Optional[tuple] = None
    per_wakeup: Optional[float] = None
    worker_loops: Optional[tuple] = None
    netns: Optional[bool] = None  # cost: the run was made in a network namespace of its own (None: not recorded)
    seq: Optional[int] = None  # cost, the alternated method: the run's place in its mode's block
    # wrk's own CPU time over its wall time and the CPUs it could use (near 1: the client was busy
    # all along, so the run's req/s is its limit); None where not recorded
    client_share: Optional[float] = None
    paired_seq: Optional[int] = None  # cost, the paired method: the place of the bare run it ran beside
    deferrals_per_s: Optional[float] = None  # cost, fdpass: accepts left to the pick's sibling per second
    # cost, throughput: which start of the block's servers ran it (the round, where each round had new
    # ones; 1 where they were kept for the block); None in rows from before it was recorded
    server_set: Optional[int] = None

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
            error, rnd = get_failure(obj)
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
        cpu = cpu_ratios = None
        if "cpu_us_per_request" in obj:
            cpu = (get_number(obj, "cpu_us_per_request", nullable=True),
                   get_number(obj, "cpu_us_per_connection", nullable=True) if "cpu_us_per_connection" in obj else None)
            cpu_ratios = tuple(get_number(obj, key, nullable=True) if key in obj else None
                               for key in ("cpu_ratio_to_bare", "cpu_ratio_to_knob_off", "cpu_ratio_to_process",
                                           "cpu_ratio_to_reference"))
        switches = None
        if obj.get("ctx_involuntary_per_request") is not None or obj.get("ctx_voluntary_per_request") is not None:
            switches = (get_number(obj, "ctx_voluntary_per_request"), get_number(obj, "ctx_involuntary_per_request"))
        per_wakeup, loops = get_loops(obj)
        return WrkRun(line, arm, workers, setting, rnd, rps, p50, p99, tuple(listed),
                      ratio, get_int_or_null(obj, "time_wait_after"), sides, served, knob_off, handoffs,
                      to_process, peer, software, cpu, cpu_ratios, str_pairs(obj, "cpu_ratio_partners", str),
                      str_pairs(obj, "cpu_converged", bool),
                      get_number(obj, "ratio_to_reference", nullable=True) if "ratio_to_reference" in obj else None,
                      switches, per_wakeup, loops, obj["netns"] if isinstance(obj.get("netns"), bool) else None,
                      get_int(obj, "seq", 0) if "seq" in obj else None,
                      get_number(obj, "client_cpu_share", nullable=True) if "client_cpu_share" in obj else None,
                      get_int_or_null(obj, "paired_seq"),
                      get_number(obj, "deferrals_per_s", nullable=True) if "deferrals_per_s" in obj else None,
                      get_int(obj, "server_set", 1) if "server_set" in obj else None)
    return parse


def fresh_servers(runs: list) -> bool:
    """Whether the runs' block started new servers for each round (a row's
    server_set beyond 1), not one server per arm for the whole block."""
    return any((r.server_set or 1) > 1 for r in runs)


def one_per_server(runs: list) -> list:
    """One run per server the runs came from (a server's life fields are the
    same on each of its runs), in the runs' order."""
    seen = {}
    for r in runs:
        seen.setdefault(r.server_set, r)
    return list(seen.values())


def served_over(runs: list) -> Optional[str]:
    """The connections each worker served over the servers the runs came
    from: one server's split as it is; several servers' (new ones for each
    round) summed place by place, each server's largest first."""
    splits = [[int(n) for n in r.served.split("/")] for r in one_per_server([r for r in runs if r.served])]
    if len(splits) < 2:
        return next((r.served for r in runs if r.served), None)
    width = max(len(s) for s in splits)
    return "/".join(str(sum(s[i] for s in splits if i < len(s))) for i in range(width))


def get_loops(obj: dict) -> tuple:
    """(requests per epoll_wait return over all workers, ((index, requests,
    returns), ...) per worker), both None when not recorded; the overall
    figure must be the workers' requests over their returns."""
    per_wakeup = get_number(obj, "requests_per_epoll_return", nullable=True) \
        if "requests_per_epoll_return" in obj else None
    raw = obj.get("worker_loops")
    if raw is None:
        if per_wakeup is not None:
            raise RowError('"requests_per_epoll_return" is given but "worker_loops" is not')
        return None, None
    if not isinstance(raw, list) or not raw or not all(
            isinstance(w, dict) and is_int(w.get("requests")) and w["requests"] >= 0
            and is_int(w.get("epoll_returns")) and w["epoll_returns"] >= 0 and is_int(w.get("index"))
            for w in raw):
        raise RowError('"worker_loops" must be null or a non-empty list of objects with integers >= 0 "index", '
                       '"requests" and "epoll_returns"')
    loops = tuple((w["index"], w["requests"], w["epoll_returns"]) for w in raw)
    returns = sum(w[2] for w in loops)
    want = sum(w[1] for w in loops) / returns if returns else None
    if (want is None) != (per_wakeup is None) or (want is not None and abs(want - per_wakeup) > 0.0006):
        raise RowError(f'"requests_per_epoll_return" {json.dumps(per_wakeup)} disagrees with "worker_loops": '
                       f'{sum(w[1] for w in loops)} requests over {returns} returns')
    return per_wakeup, loops


def str_pairs(obj: dict, key: str, kind: type) -> tuple:
    """An object of name -> value (each a kind) as sorted pairs; () when absent."""
    value = obj.get(key)
    if value is None:
        return ()
    if not isinstance(value, dict) or not all(isinstance(v, kind) for v in value.values()):
        raise RowError(f'"{key}" must be an object of name -> {kind.__name__}, got {json.dumps(value)}')
    return tuple(sorted(value.items()))


def through_reference(run: WrkRun, beside: WrkRun, runs: list, seen: dict) -> Optional[float]:
    """The bare req/s a paired run at another worker count than the bare run
    it ran beside (the block's reference; make bench's 1-worker cells) is
    over: bare's at its own worker count in the same round, scaled to the
    moment by the two runs each ran beside, so that its ratio is its own to
    the reference over bare's to the reference. None when bare did not run
    there."""
    own = next((b for b in runs if (b.arm, b.workers, b.setting, b.round) == ("bare", run.workers, run.setting,
                                                                               run.round)
                and b.paired_seq is not None), None)
    own_beside = seen.get((run.setting, own.paired_seq)) if own is not None else None
    if own is None or own_beside is None or not own_beside.rps:
        return None
    return own.rps / own_beside.rps * beside.rps


def check_wrk_rows(what: str, with_ratio: bool):
    """One measured row per (arm, workers, mode or connections, round), or per
    place in its block (the alternated and paired methods, rows with "seq"); in cost,
    ratio_to_bare must be req/s over the bare row's at the same workers, mode and
    round (null exactly when no bare row was measured there), or with the
    alternated method over bare's at the run's place (partner_at: bare's runs
    around it, on a line; null for bare's own), with the paired method over
    the bare run it ran beside (paired_seq); a paired run at another worker
    count than that run's (make bench's 1-worker cells) over bare's at its
    own worker count through the runs each ran beside (through_reference)."""
    def check(path: Path, rows: list) -> None:
        if any(isinstance(r, WrkRun) and r.seq is not None for r in rows):
            return check_alternated(path, rows)
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

    def check_alternated(path: Path, rows: list) -> None:
        runs = [r for r in rows if isinstance(r, WrkRun)]
        seen = {}
        for r in runs:
            if r.seq is None:
                raise InputError(path, r.line, '"seq" is missing, where other rows of the run have it')
            if (r.setting, r.seq) in seen:
                raise InputError(path, r.line, f"place {r.seq} in the {what(r.setting)} block is already on line "
                                 f"{seen[(r.setting, r.seq)].line}")
            seen[(r.setting, r.seq)] = r
        if not with_ratio:
            return
        for r in runs:
            bare = sorted((b.seq, b.rps) for b in runs
                          if (b.arm, b.workers, b.setting) == ("bare", r.workers, r.setting))
            beside = seen.get((r.setting, r.paired_seq))
            if r.paired_seq is not None and (beside is None or beside.arm != "bare"):
                raise InputError(path, r.line, f'"paired_seq" {r.paired_seq} names no bare run of its block '
                                 f"({what(r.setting)})")
            if r.arm == "bare":
                base = None
            elif beside is not None and beside.workers != r.workers:
                base = through_reference(r, beside, runs, seen)
            else:
                base = partner_at(bare, place_of(r.seq, r.paired_seq))
            if not base:
                if r.ratio is not None:
                    raise InputError(path, r.line, f'"ratio_to_bare" is {number(r.ratio)} but no bare run with '
                                     f"req/s > 0 is around it ({what(r.setting)}, {plural(r.workers, 'worker')})")
            elif r.ratio is None or abs(r.ratio - r.rps / base) > 0.0006:
                raise InputError(path, r.line, f'"ratio_to_bare" {json.dumps(r.ratio)} disagrees with '
                                 f"{number(r.rps)} req/s over bare's {base:.1f} at its place = {r.rps / base:.4f}")
    return check


def reconnected_text(runs: list, arms: list, duration_s) -> list:
    """The arms whose keep-alive wrk runs served a connection for every other
    request or more (connections served, from the workers, against req/s x
    wrk's -d): their server closes after each answer (blocking: one request
    per connection), so wrk reconnected, and their figures are not a
    keep-alive server's."""
    if not duration_s:
        return []
    closers = [a for a in arms if any(r.arm == a and r.served and
                                      sum(int(n) for n in r.served.split("/")) > r.rps * duration_s / 2
                                      for r in runs)]
    if not closers:
        return []
    return [f"With keep-alive, {', '.join(closers)} served about a connection per request: "
            + ("its server answers" if len(closers) == 1 else "their servers answer")
            + " each request with `Connection: close` (one request per connection), so wrk reconnected after "
            "every answer and every request was an accept: keep-alive clients against a server that does not "
            "keep connections alive.", ""]


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


def wrk_cmd(p: BenchParams, connections: int, extra: str = "", duration_s: Optional[float] = None) -> str:
    timeout = f" --timeout {number(p.timeout_s)}s" if p.timeout_s is not None else ""
    d = p.duration_s if duration_s is None else duration_s
    return f"`wrk -t{p.threads} -c{connections} -d{number(d)}s --latency{timeout}{extra}`"


def rotation_text(rounds: int, cell: str, per: str) -> str:
    """How the runs were alternated, for the opening sentence."""
    if rounds == 1:
        return f"arms were alternated: one round, running every {cell} once {per}"
    return (f"arms were alternated: each of the {rounds} rounds ran every {cell} once {per}, in an order "
            f"rotated by 1/{rounds} of the list from one round to the next, so drift over the run hits "
            "every arm alike")


TIE = "a tie at this run's resolution (the interval holds 1)"


FLOOR_TIE = "not resolved: the interval clears 1 by no more than the A/A pair's reach from 1"


def ratio_against_one(values: list, floor=None) -> tuple:
    """(the ratio's mean ± the half-width of its 95 % interval over the
    rounds, and how many; judge()'s verdict on it staying at or below 1:
    MET wholly at or below, MISSED wholly above, NOT_RESOLVED holding 1, or
    None from one round, which has no interval; and with floor (an A/A
    pair's floor_of), why the floor turned a verdict into NOT_RESOLVED: the
    interval clears 1 by no more than the pair's reach from 1, else None).
    ("-", None, None) for no value."""
    values = [v for v in values if v is not None]
    if not values:
        return "-", None, None
    verdict, m, half, why = judge_on_floor(values, 1, "at most", floor)
    if half is None:
        return f"{m:.3f} from 1 round", None, None
    return f"{m:.3f} ± {half:.3f} over {plural(len(values), 'round')}", verdict, why


def against_one(values: list, above: str, below: str, floor=None) -> str:
    """A ratio (ratio_against_one) and what its interval resolves against 1:
    `above` only when the whole interval is above 1, `below` only when it is
    wholly at or below 1 (by more than floor's reach from 1, where an A/A
    pair ran), otherwise a tie at this run's resolution, or not resolved
    saying why the floor does not carry it."""
    text, verdict, why = ratio_against_one(values, floor)
    if text == "-":
        return text
    if verdict is None:
        return text + ": no interval, so no verdict"
    if verdict == NOT_RESOLVED and why:
        return f"{text}: not resolved ({why})"
    return f"{text}: " + {MISSED: above, MET: below}.get(verdict, TIE)


def verdict_text(values: list, target: float, want: str, floor=None) -> str:
    """judge() on the values' 95 % interval against a target: "met",
    "missed" or "not resolved at this run's resolution", after the mean ±
    half-width and the target ("want" is "at most" or "at least"); with
    floor (an A/A pair's floor_of), not resolved where floor_objection
    objects, saying why."""
    values = [v for v in values if v is not None]
    verdict, m, half, why = judge_on_floor(values, target, want, floor)
    if m is None:
        return "not judged: no value"
    spread = (f"± {half:.3f} over {plural(len(values), 'round')}" if half is not None
              else "from 1 round (no interval)")
    return (f"{m:.3f} {spread}, against {want} {number(round(target, 3))}: {verdict}"
            + (f" ({why})" if why else ""))
