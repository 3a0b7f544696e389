"""throughput: req/s with the server, not the client, as the limit. The
cost study's keep-alive runs leave wrk busy nearly all the time on this
machine's one client CPU, so their req/s is the client's limit and cannot
say which server is faster. Here each server's processes are held to
THROUGHPUT_QUOTA of one CPU in every THROUGHPUT_PERIOD_US
(probes/harness/cpu_quota.py: a cgroup of its own), below what the client
can drive, so the server is saturated and its req/s is its own. Otherwise
as cost runs it with its paired method (its path, connections, placement,
and one block, probes/harness/alternation.py's run_block with paired=True):
bare, its A/A twin bare-aa (the method's resolution), exclusive-reorder
(nginx's accept policy) and the anchor nginx (cost's ANCHOR_ARMS, its peer
configuration), at 2 workers, keep-alive, each other run at the same time
as one of bare's, both servers on the server CPU and both wrk on theirs.

Why paired, and why these numbers: alternated (each run alone, its ratio
over bare's runs around it) a server's req/s followed the host's speed,
which moves by more over seconds than the differences looked for; two
servers at the same moment share it, so it cancels in their ratio. Their
quotas together (2 x THROUGHPUT_QUOTA) leave the CPU room for both, so
neither takes CPU from the other and each gets its whole quota; a short
period makes the CPU a 1 s run gets a whole number of quotas, give or take
one period's, where with the kernel's 100 ms one period is a tenth of a
run.

-> throughput.jsonl (cost's row fields, and "cpu_quota", "quota_period_us"
and "server_cpu_share": the server's CPU time over the run's wall time and
its quota, near 1 when the quota was the limit; ratio_to_bare and
cpu_ratio_to_bare filled once all are in: a paired run's over the bare run
beside it). Root only."""

import contextlib

from probes.harness.alternation import Entrant, run_block
from probes.harness.cpu_quota import CpuQuota
from probes.harness.lifecycle import StepFailed, is_root
from probes.harness.wrk import need_wrk
from probes.studies.common import in_own_netns, rewrite_rows, stopping_rule
from probes.studies.cost import (ANCHOR_ARMS, COST_CONNECTIONS, COST_PATH, FRESH_SERVERS, SERVERS_FIELD, block_rule,
                                 block_timeout, cost_rounds, cost_run, cost_seconds, entrant, fill_ratios, joined,
                                 placement_meta, print_progress, series_text, warm_entrant)

NAME = "throughput"
THROUGHPUT_ARMS = ["bare", "bare-aa", "exclusive-reorder", "nginx"]
THROUGHPUT_WORKERS = 2
THROUGHPUT_MODE = "keepalive"
# Each server's share of one CPU: a quarter, so that each wrk, with half a
# CPU (two share the client CPU), is not what limits the req/s (at half the
# CPU each, both wrk were busy all along: the client's limit).
THROUGHPUT_QUOTA = 0.25
# The quota's period, in microseconds: short, so a 1 s run is many periods
# (the kernel takes at least 1 ms of quota: 1.25 ms here).
THROUGHPUT_PERIOD_US = 5000
THROUGHPUT_ROUNDS = 12  # --bench-rounds overrides; 2 with --quick


def meta(plan):
    return {"throughput": {"arms": THROUGHPUT_ARMS, "anchor": ANCHOR_ARMS, "workers": THROUGHPUT_WORKERS,
                           "mode": THROUGHPUT_MODE, "path": COST_PATH,
                           "connections": COST_CONNECTIONS[THROUGHPUT_MODE],
                           "duration_s": cost_seconds(plan, THROUGHPUT_MODE), "method": "paired",
                           "cpu_quota": THROUGHPUT_QUOTA, "quota_period_us": THROUGHPUT_PERIOD_US,
                           "quota": "a cgroup of its own: cgroup v2's cpu.max, else v1's cpu.cfs_quota_us, "
                                    "period %g ms" % (THROUGHPUT_PERIOD_US / 1000),
                           "placement": placement_meta(), "rounds": cost_rounds(plan, THROUGHPUT_ROUNDS),
                           "netns": "the block in a network namespace of its own (root)",
                           "servers": SERVERS_FIELD[FRESH_SERVERS],
                           "stopping": stopping_rule(plan)}}


def capped(e, quotas):
    """e with its server's processes put in a quota group of their own as it starts."""
    @contextlib.contextmanager
    def open_():
        with CpuQuota(THROUGHPUT_QUOTA, "%s-%s" % (NAME, e.name), THROUGHPUT_PERIOD_US) as quota:
            with e.open() as live:
                quota.add(live.pid)
                quotas.append(quota.kind)
                yield live
    return Entrant(e.name, open_, e.life, **e.tags)


def series(rows):
    """{"<arm> / bare, keepalive, at a quota": [its req/s ratio each round]}."""
    rows = [dict(r) for r in rows]
    fill_ratios(rows)
    out = {}
    for r in sorted(rows, key=lambda r: r.get("round", 0)):
        if r.get("ratio_to_bare") is not None:
            out.setdefault("%s / bare, %s, at a quota" % (r["arm"], r["mode"]), []).append(r["ratio_to_bare"])
    return out


def ratios_text(rows):
    return series_text(series(rows)) or "no ratio yet"


def block(plan, raw_dir):
    need_wrk()
    quotas = []
    entrants = [capped(entrant(plan, raw_dir, arm, THROUGHPUT_WORKERS, THROUGHPUT_MODE, study=NAME), quotas)
                for arm in THROUGHPUT_ARMS]

    def run_one(e, live, rnd, seq):
        row = cost_run(plan, e.name, THROUGHPUT_MODE, live, "r%d-s%d" % (rnd, seq))
        cpu_s = row["server_cpu_us"] / 1e6 if row.get("server_cpu_us") is not None else None
        share = round(cpu_s / row["duration_s"] / THROUGHPUT_QUOTA, 3) if cpu_s and row.get("duration_s") else None
        row.update({"cpu_quota": THROUGHPUT_QUOTA, "quota_period_us": THROUGHPUT_PERIOD_US,
                    "server_cpu_share": share})
        return row

    rows = run_block(entrants[0], entrants[1:], warm_entrant(THROUGHPUT_MODE), run_one,
                     block_rule(plan, NAME, THROUGHPUT_MODE, series, ratios_text, THROUGHPUT_ROUNDS),
                     print_progress, paired=True, fresh=FRESH_SERVERS)
    for r in rows:
        r["cgroup"] = quotas[0] if quotas else None
    return rows, joined("%d runs in %d rounds" % (len(rows), max(r["round"] for r in rows)), ratios_text(rows))


def steps(plan, raw_dir):
    def step():
        if not is_root():
            raise StepFailed("skipped: needs root (a cgroup holds each server to its CPU quota)")
        cap = plan.bench_max_rounds if plan.bench_within else cost_rounds(plan, THROUGHPUT_ROUNDS)
        timeout = block_timeout(len(THROUGHPUT_ARMS), cap, cost_seconds(plan, THROUGHPUT_MODE), 180)
        return in_own_netns(lambda: block(plan, raw_dir), timeout, "throughput's block")
    yield ("%s at %g CPU, %d arms x %d rounds" % (THROUGHPUT_MODE, THROUGHPUT_QUOTA, len(THROUGHPUT_ARMS),
                                                  cost_rounds(plan, THROUGHPUT_ROUNDS)), step,
           {"arm": THROUGHPUT_ARMS[0], "workers": THROUGHPUT_WORKERS, "mode": THROUGHPUT_MODE})


def finish(path):
    rewrite_rows(path, fill_ratios)
