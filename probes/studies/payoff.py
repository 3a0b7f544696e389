"""payoff: wrk keep-alive on GET /work?us=500 (CPU-bound) at each of
PAYOFF_CONNECTIONS: bare at 1 worker (the baseline) and every payoff arm at
each of PAYOFF_WORKERS, the cells alternated in an order that rotates per
round -> payoff.jsonl (one line per run).

To fit every balancing arm, its knob-off arm and three worker counts in the
campaign's budget, payoff runs shorter than cost: one connection count and
wrk for half the wrk studies' -d (at least 1 s); --quick runs 2 and 8
workers only. It runs --bench-rounds rounds (2 in the campaign): the
report's verdicts are 95 % intervals over the rounds, and one round has
none (each round adds one run per cell, about half a minute)."""

import os

from acceptlab import arms
from probes.harness.servers import ServerRun
from probes.harness.wrk import WRK_THREADS, WRK_TIMEOUT_S, need_wrk, run_wrk
from probes.studies.common import handoff_rate, rotated, served_split

NAME = "payoff"
PAYOFF_PATH = "/work?us=500"  # CPU-bound: each request spins 500 us in the worker
PAYOFF_CONNECTIONS = [32]
PAYOFF_BASELINE = ("bare", 1)  # what one worker gives; every arm then runs at each PAYOFF_WORKERS
PAYOFF_WORKERS = [2, 8]      # the campaign's; make bench's --worker-counts adds 4 and 16
PAYOFF_QUICK_WORKERS = [2, 8]
TAKES_BENCH_ARMS = True


def default_arms(quick):
    return arms.in_study("quick:payoff" if quick else "payoff")


def payoff_arms(plan):
    """The arms payoff runs at every worker count: the arms with "payoff" in
    arms.py ("quick:payoff" with --quick) that were chosen; every chosen arm
    with `--bench-arms all`; those of --bench-arms named that were chosen."""
    if plan.bench_all:
        return list(plan.arms)
    if plan.bench_arms is not None:
        return [a for a in plan.bench_arms if a in plan.arms]
    return [a for a in default_arms(plan.quick) if a in plan.arms]


def arms_of(plan):
    """payoff_arms and the baseline's arm."""
    return list(dict.fromkeys([PAYOFF_BASELINE[0]] + payoff_arms(plan)))


def payoff_seconds(plan):
    return max(1, plan.wrk_seconds // 2)


def payoff_rounds(plan):
    """--bench-rounds: 2 in the campaign, the fewest that give an interval."""
    return plan.wrk_rounds


def payoff_workers(plan):
    return list(plan.worker_counts or (PAYOFF_QUICK_WORKERS if plan.quick else PAYOFF_WORKERS))


def cells(plan):
    return [PAYOFF_BASELINE] + [(arm, n) for n in payoff_workers(plan) for arm in payoff_arms(plan)]


def meta(plan):
    return {"payoff": {"tool": "wrk", "path": PAYOFF_PATH, "threads": WRK_THREADS,
                       "connections": PAYOFF_CONNECTIONS, "duration_s": payoff_seconds(plan),
                       "timeout_s": WRK_TIMEOUT_S, "rounds": payoff_rounds(plan), "workers": payoff_workers(plan),
                       "cells": [{"arm": a, "workers": w} for a, w in cells(plan)],
                       "order": "each round runs every cell once per connection count, the "
                                "list rotated by (round-1)*len/rounds"}}


def steps(plan, raw_dir):
    all_cells = cells(plan)
    seconds, n_rounds = payoff_seconds(plan), payoff_rounds(plan)
    for rnd in range(1, n_rounds + 1):
        for conns in PAYOFF_CONNECTIONS:
            for order, (arm, workers) in enumerate(rotated(all_cells, rnd, n_rounds), 1):
                def step(arm=arm, workers=workers, conns=conns, rnd=rnd, order=order):
                    need_wrk()
                    prefix = os.path.join(raw_dir, "payoff-%s-w%d-c%d-r%d" % (arm, workers, conns, rnd))
                    with ServerRun(arms.server_args(arm), workers, prefix, arms.env(arm)) as (proc, ready, path):
                        out = run_wrk(prefix, ready["port"], PAYOFF_PATH, conns, seconds)
                        out.update(handoff_rate(ready["port"], out["duration_s"]))
                    row = dict({"arm": arm, "workers": workers, "connections": conns, "round": rnd,
                                "order": order, "served_split": served_split(proc)}, **out)
                    bad = sum(out["errors"].values())
                    return [row], "%.0f req/s, p50 %s ms, p99 %s ms%s" % (
                        out["requests_per_s"], out["latency_ms"]["p50"], out["latency_ms"]["p99"],
                        ", %d errors" % bad if bad else "")
                label = "%-17s %dw c%-3d r%d" % (arm, workers, conns, rnd)
                yield label, step, {"arm": arm, "workers": workers, "connections": conns, "round": rnd}
