"""The timelines (timeline.jsonl): one oneshot round per arm traced
connection by connection (who was woken where, who won the accept), with
nothing pinned and, for bare, under pinned placements. story() says in one
sentence what a placement's rows show; the placement section quotes it where
this run disagrees with the scheduling note."""

import json
from collections import Counter
from dataclasses import dataclass
from typing import Optional

from acceptlab.results_io import RowError
from report.common import (Meta, Study, cell_text, get, get_arm, get_int, get_number, get_opt_int, get_str, is_int,
                           ms_text, ordered, plural, row_reader)

UNPINNED = "unpinned"  # rows from before rows said their placement ran with nothing pinned


@dataclass(frozen=True)
class TimelineConn:
    line: int
    variant: str
    n: int
    t_us: float
    est_cpu: int
    client: str
    woken: tuple  # ((index or None, waker cpu, ran cpu or None, preempted), ...) in wake order
    client_preempted: bool
    winner: Optional[int]  # worker index
    winner_cpu: Optional[int]
    accept_after_us: Optional[float]
    eagain: tuple  # worker indexes
    placement: str = UNPINNED
    label: str = "nothing pinned"
    worker_cpus: Optional[tuple] = None  # each worker's CPUs by index, as its ready line says them
    probe_cpu: Optional[int] = None


@dataclass(frozen=True)
class TimelineFailed:
    """A variant and placement whose timeline step failed (or was skipped)."""
    line: int
    variant: str
    placement: str
    error: str


def parse_placement_fields(obj: dict) -> tuple:
    """(placement, label, worker_cpus, probe_cpu); rows from before rows said
    them ran with nothing pinned."""
    if "placement" not in obj:
        return UNPINNED, "nothing pinned", None, None
    placement = get_str(obj, "placement")
    label = get_str(obj, "label") if "label" in obj else placement
    cpus = obj.get("worker_cpus")
    if cpus is not None and (not isinstance(cpus, list) or not all(isinstance(c, str) for c in cpus)):
        raise RowError(f'"worker_cpus" must be a list of CPU lists like "0" or "0-1", got {json.dumps(cpus)}')
    return placement, label, None if cpus is None else tuple(cpus), get_opt_int(obj, "probe_cpu")


def parse_timeline_row(obj: dict, line: int):
    variant = get_arm(obj)
    placement, label, cpus, probe_cpu = parse_placement_fields(obj)
    if "error" in obj:
        return TimelineFailed(line, variant, placement, str(obj["error"]))
    conn = get(obj, "conn")
    if not isinstance(conn, dict):
        raise RowError('"conn" must be an object')
    woken = []
    for i, w in enumerate(conn.get("woken") or []):
        if not isinstance(w, dict):
            raise RowError(f'"conn" "woken"[{i}] must be an object')
        at = ("conn", "woken", i)
        woken.append((get_opt_int(w, "index", at), get_int(w, "waker_cpu", 0, at), get_opt_int(w, "ran_cpu", at),
                      bool(w.get("preempted"))))
    eagain = conn.get("eagain_index") or []
    if not isinstance(eagain, list):
        raise RowError(f'"conn" "eagain_index" must be a list, got {json.dumps(eagain)}')
    for i, e in enumerate(eagain):
        if e is not None and (not is_int(e) or e < 0):
            raise RowError(f'"conn" "eagain_index"[{i}] must be an integer >= 0 or null, got {json.dumps(e)}')
    after = conn.get("accept_after_us")
    if after is not None and (isinstance(after, bool) or not isinstance(after, (int, float)) or after != after):
        raise RowError(f'"conn" "accept_after_us" must be a number or null, got {json.dumps(after)}')
    return TimelineConn(line, variant, get_int(conn, "n", 1, ("conn",)), get_number(conn, "t_us"),
                        get_int(conn, "est_cpu", 0, ("conn",)), get_str(conn, "client", ("conn",)),
                        tuple(woken), bool(conn.get("client_preempted")), get_opt_int(conn, "winner_index", ("conn",)),
                        get_opt_int(conn, "winner_cpu", ("conn",)), after, tuple(eagain),
                        placement, label, cpus, probe_cpu)


def worker_name(index: Optional[int], cpus: Optional[tuple]) -> str:
    """"the worker pinned to CPU 1" when its ready line says one CPU, else
    "worker 1" (or "an unknown worker")."""
    if index is None:
        return "an unknown worker"
    if cpus and index < len(cpus) and cpus[index].isdigit():
        return f"the worker pinned to CPU {cpus[index]}"
    return f"worker {index}"


def counted(counter: Counter, what) -> str:
    """"5 on CPU 1 and 3 on CPU 0": a counter's entries, largest first (ties in key order)."""
    items = sorted(counter.items(), key=lambda kv: (-kv[1], str(kv[0])))
    parts = [f"{n} {what(k)}" for k, n in items]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def story(conns: list) -> str:
    """What one traced round shows, in plain sentences, from its rows only:
    where the connections were established, who won on which CPU, which
    worker was woken first, from which CPU and where it ran, and who got
    EAGAIN."""
    conns = sorted(conns, key=lambda r: r.n)
    n = len(conns)
    cpus = next((r.worker_cpus for r in conns if r.worker_cpus), None)
    probe = next((r.probe_cpu for r in conns if r.probe_cpu is not None), None)
    est = Counter(r.est_cpu for r in conns)
    on = counted(est, lambda c: f"on CPU {c}" + (" (the probe's CPU)" if c == probe else ""))
    if len(est) == 1:
        out = [f"{n} of {plural(n, 'traced connection')} {'was' if n == 1 else 'were'} established "
               f"{on.split(' ', 1)[1]}."]
    else:
        out = [f"Of {plural(n, 'traced connection')}, {on.replace(' on CPU', ' were established on CPU', 1)}."]
    won = [r for r in conns if r.winner is not None]
    parts = []
    for index, k in sorted(Counter(r.winner for r in won).items(), key=lambda kv: (-kv[1], kv[0])):
        where = Counter(r.winner_cpu for r in won if r.winner == index and r.winner_cpu is not None)
        parts.append(f"{worker_name(index, cpus)} won {k}"
                     + (f", accepting {counted(where, lambda c: f'on CPU {c}')}" if where else ""))
    if parts:
        text = "; ".join(parts)
        out.append(text[0].upper() + text[1:] + ".")
    if n - len(won):
        out.append(f"{n - len(won)} {'was' if n - len(won) == 1 else 'were'} not accepted while traced.")
    first = Counter(r.woken[0][0] for r in conns if r.woken)
    if first:
        parts = []
        for index, k in sorted(first.items(), key=lambda kv: (-kv[1], str(kv[0]))):
            how = Counter((r.woken[0][1], r.woken[0][2]) for r in conns if r.woken and r.woken[0][0] == index)
            ways = [f"from CPU {waker} " + (f"and ran on CPU {ran} before the accept" if ran is not None
                                            else "and did not run before the accept") + f" in {c}"
                    for (waker, ran), c in sorted(how.items(), key=lambda kv: (-kv[1], str(kv[0])))]
            parts.append(f"{worker_name(index, cpus)} in {k} (woken " + "; ".join(ways) + ")")
        out.append("The first worker woken after ESTABLISHED was " + "; ".join(parts) + ".")
    later = Counter(w[0] for r in conns for w in r.woken[1:])
    if later:
        parts = []
        for index, k in sorted(later.items(), key=lambda kv: (-kv[1], str(kv[0]))):
            ran = sum(1 for r in conns for w in r.woken[1:] if w[0] == index and w[2] is not None)
            parts.append(f"{worker_name(index, cpus)} in {k} (it ran before the accept in {ran})")
        out.append("Woken after another worker: " + "; ".join(parts) + ".")
    quiet = sum(not r.woken for r in conns)
    if quiet:
        out.append(f"In {quiet} no worker was woken between ESTABLISHED and the accept.")
    decided = [r for r in conns if r.woken and r.winner is not None]
    if decided:
        first_won = sum(r.woken[0][0] == r.winner for r in decided)
        out.append(f"Where a worker was woken, the first one woken won {first_won} of {len(decided)}.")
    eagain = Counter(i for r in conns for i in r.eagain)
    out.append("No worker got EAGAIN." if not eagain else
               "EAGAIN went to " + "; ".join(f"{worker_name(i, cpus)} in {k}"
                                      for i, k in sorted(eagain.items(), key=lambda kv: (-kv[1], str(kv[0])))) + ".")
    return " ".join(out)


def groups(meta: Meta, rows: list) -> list:
    """[(variant, placement, label, rows)] in the report's order: variants in
    meta's order, nothing pinned first, then placements in file order."""
    out = []
    for v in ordered(meta.variants, {r.variant for r in rows}):
        places = list(dict.fromkeys(r.placement for r in rows if r.variant == v))
        places.sort(key=lambda p: p != UNPINNED)
        for p in places:
            mine = [r for r in rows if (r.variant, r.placement) == (v, p)]
            label = next((r.label for r in mine if isinstance(r, TimelineConn)), p)
            out.append((v, p, label, mine))
    return out


def render_timeline(meta: Meta, rows: list) -> list:
    out = ["## Timelines (why a placement skews)", ""]
    out.append("What was measured: for a few arms, one oneshot round of 8 connections (each closed "
               "before the next opens) with `acceptlab-trace --timeline`, with nothing pinned and, where a "
               "heading names one, under a pinned placement: per connection, the CPU it became "
               "ESTABLISHED on and the task running there (on loopback, the client's connect), which workers "
               "were woken (by index) from which CPU and on which CPU each ran next (`*`: it preempted a task "
               "that was still runnable there), who won the accept on which CPU and how long after "
               "ESTABLISHED, and who got EAGAIN.")
    out.append("")
    if not rows:
        return out + ["No timeline was recorded in this run.", ""]
    for v, p, label, group in groups(meta, rows):
        failed = [r for r in group if isinstance(r, TimelineFailed)]
        mine = sorted((r for r in group if isinstance(r, TimelineConn)), key=lambda r: r.n)
        out += [f"### {v}" if p == UNPINNED else f"### {v}, {cell_text(label)}", ""]
        if not mine:
            out += [f"Not traced: {cell_text(failed[0].error) if failed else 'no connection recorded'}.", ""]
            continue
        cpus = next((r.worker_cpus for r in mine if r.worker_cpus), None)
        if cpus and p != UNPINNED:
            out += ["Workers' CPUs (ready line): " + ", ".join(f"{i}: {c}" for i, c in enumerate(cpus))
                    + (f"; probe on CPU {mine[0].probe_cpu}" if mine[0].probe_cpu is not None else "") + ".", ""]
        out += ["| conn | ESTABLISHED on | woken (index: waker CPU -> ran on) | won by (CPU, after) | EAGAIN | client preempted |",
                "|---|---|---|---|---|---|"]
        for r in mine:
            woke = ", ".join(f"{'?' if i is None else i}: {wc} -> {'-' if rc is None else rc}{'*' if pre else ''}"
                             for i, wc, rc, pre in r.woken) or "none"
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
                f"{sum(r.client_preempted for r in mine)} with the client preempted by a worker. {story(mine)}", ""]
    return out


read_timeline = row_reader(parse_timeline_row)
STUDY = Study("timeline", "timeline.jsonl", read_timeline, render_timeline, is_round=lambda row: False)
