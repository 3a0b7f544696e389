"""The timelines (timeline.jsonl): one oneshot round per variant traced
connection by connection (who was woken where, who won the accept)."""

import json
from dataclasses import dataclass
from typing import Optional

from common import (Meta, RowError, Study, cell_text, get, get_int, get_number, get_opt_int, get_str, is_int,
                    ms_text, ordered, plural, row_reader)


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
                        get_opt_int(conn, "winner_cpu", ("conn",)), after, tuple(eagain))


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


read_timeline = row_reader(parse_timeline_row)
STUDY = Study("timeline", "timeline.jsonl", read_timeline, render_timeline, is_round=lambda row: False)
