"""The peers study (peers.jsonl): nginx, HAProxy and a Node.js cluster measured
by the same probe as the balancing table (their rounds are balancing rows, read
by sections/balancing.py's parser), nginx's access log against the probe, and
the tracer beside each peer."""

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from acceptlab.results_io import InputError, RowError, json_kind
from report.common import (Meta, PeersParams, Study, cell_text, get, get_bool, get_counter, get_int, get_str, is_int,
                           ordered, plural, row_reader)
from report.sections.balancing import FailedStep, Round, base_rows, parse_balancing_row, steps_cell, variant_summary


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
        return PeerRound(line, peer, software, parse_balancing_row(dict(obj, arm=peer), line, with_workers=False))
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


# Each peer configuration's mechanism, the arm of ours built on the same one
# (the balancing table's row to compare it with), and where their designs differ.
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
            cells = [steps_cell(name, shape, [r for r in mine if r.shape == shape], notes) for shape, _ in columns]
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
    ours = [r for r in base_rows(meta, balancing or []) if isinstance(r, Round)]
    shared = [s for s in ordered(tuple(s.name for s in meta.shapes), {r.shape for r in ours})
              if any(isinstance(r, Round) and r.shape == s for r in rounds)]
    out = ["### Our arms for comparison", ""]
    if balancing is None:
        return out + ["The balancing study was not measured in this run, so there are no rows of ours to set "
                      "beside the peers.", ""]
    out += ["Each peer configuration's mechanism, the arm of ours built on the same one, and both "
            f"rows' rounds within 2:1 over the shapes both measured ({', '.join(shared) or 'none'}); our "
            "arm's rounds are its row in the balancing table above (this run, same probe, same "
            "shapes).", "",
            "| peer | its mechanism | our arm | peer within 2:1 | ours within 2:1 |",
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
        out += ["Where a peer and our variant differ in design (from the peer's configuration and our variant's "
                "code, not from this run: the run does not measure whether these differences are why the two "
                "rows above differ):", ""] + differ + [""]
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


read_peers = row_reader(parse_peers_row, check_peers)
STUDY = Study("peers", "peers.jsonl", read_peers, render_peers, is_round=lambda row: False,
              absent=render_peers_absent, reads=("balancing",))
