"""The cost section's explanation, derived from the run: what each run
recorded beside its CPU time per request (context switches per request,
requests per epoll_wait return, the connections each worker served), and
which of them went with the CPU figure across our arms, round by round.
A relationship is said only where its 95 % interval resolves it (judge());
nothing here is a sentence fixed in code about what the data should show."""

import math
import statistics
from dataclasses import replace
from typing import Optional

from acceptlab.stats import MET, MISSED, Z975, judge
from report.common import cell_text, plural
from report.sections.wrk import COST_MODES, fresh_servers, one_per_server, served_over

# Spearman's rank correlation's Fisher-z variance is about 1.06 / (n - 3)
# (Fieller, Hartley and Pearson, 1957); Z975 (acceptlab.stats): a two-sided 95 % interval.
SPEARMAN_VARIANCE = 1.06
MIN_ARMS = 4  # n - 3 > 0: fewer arms give no interval


def busiest_share(run) -> Optional[float]:
    """The share of the connections served that the busiest worker served."""
    if not run.served:
        return None
    counts = [int(n) for n in run.served.split("/")]
    return max(counts) / sum(counts) if sum(counts) else None


# (what the figure is, how a row gives it); the order the findings list them.
FACTORS = (
    ("involuntary context switches per request", lambda r: r.switches[1] if r.switches else None),
    ("voluntary context switches per request", lambda r: r.switches[0] if r.switches else None),
    ("requests per epoll_wait return", lambda r: r.per_wakeup),
    ("the busiest worker's share of the connections", busiest_share),
)
SPREAD = FACTORS[3][0]


def ranks(values: list) -> list:
    """1-based ranks, ties given the mean of the ranks they span."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def spearman(xs: list, ys: list) -> Optional[float]:
    """Spearman's rank correlation (Pearson's on the ranks); None when either
    side does not vary."""
    rx, ry = ranks(xs), ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sx = math.sqrt(sum((a - mx) ** 2 for a in rx))
    sy = math.sqrt(sum((b - my) ** 2 for b in ry))
    if not sx or not sy:
        return None
    return sxy / (sx * sy)


def rho_interval(rho: float, n: int) -> tuple:
    """The 95 % interval of a Spearman rho over n pairs (Fisher's z)."""
    z = math.atanh(max(-0.9999, min(0.9999, rho)))
    half = Z975 * math.sqrt(SPEARMAN_VARIANCE / (n - 3))
    return math.tanh(z - half), math.tanh(z + half)


def relation(cpu: list, factor: list) -> Optional[tuple]:
    """(rho, low, high, verdict) of CPU per request against a factor over
    arms: judge() against 0, MET a rise, MISSED a fall; None when fewer than
    MIN_ARMS arms have both or one side does not vary."""
    if len(cpu) < MIN_ARMS:
        return None
    rho = spearman(cpu, factor)
    if rho is None:
        return None
    low, high = rho_interval(rho, len(cpu))
    return rho, low, high, judge(low, high, 0, "at least")


def rounds_list(rounds: list) -> str:
    return ("round " if len(rounds) == 1 else "rounds ") + ", ".join(map(str, rounds))


def factor_line(name: str, group: list) -> tuple:
    """The finding for one factor over one (mode, workers) group of our
    arms' runs: the text, and "rose"/"fell"/None (resolved alike in every
    round, or not)."""
    get = dict(FACTORS)[name]
    if not any(get(r) is not None for r in group):
        return f"- {name}: not recorded in this run.", None
    per, verdicts, few = [], {}, []
    for n in sorted({r.round for r in group}):
        pairs = [(r.cpu[0], get(r)) for r in group if r.round == n and get(r) is not None]
        got = relation([c for c, _ in pairs], [f for _, f in pairs])
        if got is None:
            few.append(n)
            continue
        rho, low, high, verdict = got
        per.append(f"round {n} ρ {rho:+.2f} ({low:+.2f} to {high:+.2f}, {len(pairs)} arms)")
        verdicts[n] = "rose" if verdict == MET else "fell" if verdict == MISSED else None
    if not per:
        return (f"- {name}: no round had {MIN_ARMS} or more arms with both figures, and varying ones, so no "
                "relationship can be judged.", None)
    rose = [n for n, v in verdicts.items() if v == "rose"]
    fell = [n for n, v in verdicts.items() if v == "fell"]
    open_ = [n for n, v in verdicts.items() if v is None]
    said = []
    if rose:
        said.append(f"CPU per request rose with it in {rounds_list(rose)}")
    if fell:
        said.append(f"CPU per request fell as it rose in {rounds_list(fell)}")
    if open_:
        said.append(f"no relationship resolved in {rounds_list(open_)}")
    if few:
        said.append(f"too few arms to judge in {rounds_list(few)}")
    every = None
    if not few and len(rose) == len(verdicts):
        every = "rose"
    elif not few and len(fell) == len(verdicts):
        every = "fell"
    return f"- {name}: " + "; ".join(per) + ": " + "; ".join(said) + ".", every


def cell(values: list, fmt: str) -> str:
    return " ".join("-" if v is None else format(v, fmt) for v in values)


def loops_cell(runs: list) -> str:
    """Per round: requests per epoll_wait return over all workers, each
    worker's in brackets (by index)."""
    parts = []
    for r in runs:
        if r.per_wakeup is None:
            parts.append("-")
            continue
        each = "/".join(f"{req / ret:.2f}" if ret else "-" for _, req, ret in sorted(r.worker_loops))
        parts.append(f"{r.per_wakeup:.2f} [{each}]")
    return " ".join(parts)


def loops_over(runs: list) -> tuple:
    """(requests per epoll_wait return over all workers, per worker
    ((index, requests, returns), ...)) over the servers the runs came from:
    one server's as it is; several servers' (new ones for each round)
    summed, worker by worker (by index), and over all. (None, None) when
    any server's are not known."""
    servers = one_per_server(runs)
    if len(servers) < 2:
        return (servers[0].per_wakeup, servers[0].worker_loops) if servers else (None, None)
    if any(r.per_wakeup is None or not r.worker_loops for r in servers):
        return None, None
    summed = {}
    for r in servers:
        for index, req, ret in r.worker_loops:
            was = summed.get(index, (0, 0))
            summed[index] = (was[0] + req, was[1] + ret)
    loops = tuple((index, req, ret) for index, (req, ret) in sorted(summed.items()))
    returns = sum(ret for _, _, ret in loops)
    return (sum(req for _, req, _ in loops) / returns if returns else None), loops


def per_server(measured: list) -> list:
    """The side-by-side methods' runs as one entry per arm, workers and mode:
    the medians of its runs' CPU per request and context switches, and its
    servers' life counts (connections served, requests per epoll_wait
    return: one server's where it was kept for the block, its servers'
    summed where each round had new ones), as round 1."""
    out = []
    for key in sorted({(r.arm, r.workers, r.setting) for r in measured}):
        mine = [r for r in measured if (r.arm, r.workers, r.setting) == key]
        switched = [r.switches for r in mine if r.switches]
        per_wakeup, loops = loops_over(mine)
        out.append(replace(mine[0], round=1, cpu=(statistics.median(r.cpu[0] for r in mine), None),
                           switches=(statistics.median(v for v, _ in switched),
                                     statistics.median(i for _, i in switched)) if switched else None,
                           served=served_over(mine), per_wakeup=per_wakeup, worker_loops=loops))
    return out


def render_why(measured: list, arms: list, server_cpus: Optional[int]) -> list:
    """The table of what each run recorded beside its CPU per request, and
    per mode and worker count which of those went with it across our arms
    (the anchors are shown, not counted: their code differs from ours, not
    only their accept mechanism). With the alternated method, one entry per
    server (per_server)."""
    if not measured:
        return []
    alternated = any(r.seq is not None for r in measured)
    fresh = fresh_servers(measured)
    if alternated:
        measured = per_server(measured)
    out = ["### What went with the CPU per request", "",
           "Recorded in every run beside its CPU time: the server's context switches per request wrk completed, "
           "over the wrk run (every thread's `voluntary_ctxt_switches`, a thread that blocked, and "
           "`nonvoluntary_ctxt_switches`, one that was preempted, from `/proc/<pid>/task/<tid>/status`, read "
           "with its CPU time); requests per `epoll_wait` return (each worker's requests answered over its "
           "`epoll_wait` returns that delivered events, from its `worker_exit` line, so over the server's life, "
           "the study's unrecorded warm-up included on its first run; all workers, then each worker's in "
           "brackets by index); and the connections each worker served. "
           + ("One entry per arm, workers and mode, over its servers (new ones for every round): the medians "
              "over its runs of the CPU per request and the switches, and its servers' counts over their lives "
              "summed (each warm-up included; the connections served per worker place by place, each server's "
              "largest first); " if alternated and fresh else
              "One entry per server (each arm's server was kept for its mode's block): the medians over its "
              "runs of the CPU per request and the switches, and its counts over its life (the warm-up "
              "included); " if alternated else "One entry per round, in round order; ")
           + "`-`: not recorded (runs from before these were recorded; the anchor reports no `epoll_wait` "
           "returns).", "",
           "| arm | workers | mode | connections served per worker | CPU µs per request | involuntary switches "
           "per request | voluntary switches per request | requests per epoll_wait return [per worker] |",
           "|---|---|---|---|---|---|---|---|"]
    groups = []
    for mode, title in COST_MODES:
        for w in sorted({r.workers for r in measured}):
            ours = []
            for arm in arms:
                mine = sorted((r for r in measured if (r.arm, r.workers, r.setting) == (arm, w, mode)),
                              key=lambda r: (r.round, r.line))
                if not mine:
                    continue
                if not mine[0].peer:
                    ours += mine
                out.append(f"| {cell_text(arm)} | {w} | {title} | "
                           + " ".join(r.served or "-" for r in mine) + " | "
                           + cell([r.cpu[0] for r in mine], ".2f") + " | "
                           + cell([r.switches[1] if r.switches else None for r in mine], ".3f") + " | "
                           + cell([r.switches[0] if r.switches else None for r in mine], ".3f") + " | "
                           + loops_cell(mine) + " |")
            if ours:
                groups.append((title, w, ours))
    out.append("")
    for title, w, ours in groups:
        n_arms = len({r.arm for r in ours})
        if n_arms < MIN_ARMS:
            out += [f"**What went with it: {title}, {plural(w, 'worker')}.** Only {plural(n_arms, 'arm')} of ours "
                    f"ran here, fewer than the {MIN_ARMS} a rank correlation's interval needs, so no relationship "
                    "is judged and the ratios to bare are not read as a cost of spreading.", ""]
            continue
        lines, said = [], {}
        for name, _ in FACTORS:
            text, every = factor_line(name, ours)
            lines.append(text)
            said[name] = every
        out += [f"**What went with it: {title}, {plural(w, 'worker')}.** Across our {plural(n_arms, 'arm')}, "
                + ("arm by arm (its medians over its servers: round 1 below is the block), " if alternated and fresh
                   else "server by server (its medians: round 1 below is the block), " if alternated else
                   "round by round, ") + "Spearman's rank correlation ρ of the CPU per request with each figure, with its 95 % "
                "interval (Fisher's z, variance 1.06 / (arms − 3)); a relationship is said only where that "
                "interval excludes 0:", ""] + lines + [""]
        out += [spread_conclusion(title, w, said[SPREAD], server_cpus), ""]
    return out


def spread_conclusion(title: str, workers: int, every: Optional[str], server_cpus: Optional[int]) -> str:
    """What the spread finding allows the report to say about the ratios to
    bare in this mode, from the finding alone."""
    cell = f"{title} at {plural(workers, 'worker')}" + (
        f", where the workers shared {plural(server_cpus, 'CPU')}" if server_cpus is not None and server_cpus < workers
        else "")
    if every == "fell":
        return (f"So in this run ({cell}) CPU per request was higher, in every round, where an arm spread its "
                "connections more evenly over its workers: a ratio to bare here holds the cost of spreading as "
                "well as the mechanism's, and a ratio to a partner arm whose split is alike (the columns above) "
                "separates the two.")
    if every == "rose":
        return (f"So in this run ({cell}) CPU per request was higher, in every round, where one worker served "
                "more of the connections.")
    return (f"This run ({cell}) does not show CPU per request going with how evenly an arm spread its "
            "connections in every round, so the report does not read these ratios to bare as a cost of "
            "spreading.")
