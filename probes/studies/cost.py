"""cost: wrk on GET / (keep-alive and Connection: close), the cost arms at 2
workers, arms alternated within a round in an order that rotates per round,
a gap after every close run; the server's CPU time per request, req/s,
p50/p99, TIME_WAIT left, the ratio to bare, to the knob-off arm, to the
reference arm and to the process-mode arm, and what explains a CPU figure:
the server's voluntary and involuntary context switches per request (over
the wrk run, read with its CPU time) and requests per epoll_wait return
(per worker, from its worker_exit line) -> cost.jsonl (one line per run).

The campaign runs the arms with "cost" in arms.py for COST_ROUNDS rounds of
COST_SECONDS-second runs. `--bench-arms all` (make bench) adds the arms with
"cost:bench" (the threads arms, the user-space accounting arms) and the
1-worker cells of the arms with "cost:one_worker"; with --bench-within the
rounds go on (more()) until every CPU ratio's 95 % interval is within
+-within of its mean, or --bench-max-rounds is reached (the stopping rule in
studies/common.py; outcome() records the verdict in the rows and meta.json).

The cost anchor: an arm that is a server nobody here wrote, started from
the peers' configuration (probes/peers/peers.py) with its access log off,
since our server keeps no log (ANCHOR_ARMS: arm name -> peer configuration).
It runs in the same rounds as our arms, alternated with them (and with
`--bench-arms all`; named, it runs only when named).

The arms (arms_of): by default the arms with "cost" in arms.py ("quick:cost"
with --quick) that were chosen (--arms), each chosen arm's variant's arms
that are not in --arms' default (they run in cost alone), and the anchor;
with `--bench-arms all` the same over bench_arms(); with --bench-arms named,
those of them chosen, and the anchor when named."""

import os
import time

from acceptlab import arms
from probes.harness.cpu import CpuMeter, cpu_fields, pin_tree
from probes.harness.servers import ServerRun, accepted_of, handoffs_of, loop_fields, peer_running
from probes.harness.wrk import WRK_THREADS, WRK_TIMEOUT_S, need_wrk, run_wrk
from probes.peers import peers
from probes.studies.common import (close_gap, final_state, handoff_rate, in_own_netns, keep_going, read_sysctl,
                                   rewrite_rows, rotated, served_split, stopping_record, stopping_rule,
                                   time_wait_counts)

NAME = "cost"
COST_PATH = "/"              # the hello endpoint: the accept path is all there is to do
COST_CONNECTIONS = 16
COST_WORKERS = [1, 2]         # 1: make bench only (the arms with cost:one_worker)
# wrk -d per run, by mode: CPU time per request needs fewer seconds than req/s;
# a keep-alive run's CPU per request settles later than a close run's
COST_SECONDS = {"keepalive": 2, "close": 1}
COST_ROUNDS = 3               # rounds in the campaign (--bench-rounds overrides; 1 with --quick)
COST_CLOSE_GAP_S = 0.25       # after every Connection: close run: the server closes first, so
                              # TIME_WAIT sits on its port, not on wrk's ephemeral ports
GOAL_WITHIN = 0.02            # the resolution the goals need: a ratio's 95 % interval within +-2 %
COST_MODES = ["keepalive", "close"]
WARM_UP_S = 1                 # an unrecorded wrk run before the study's first measured one (the first run
                              # after the studies before it comes out slower than the same arm's later ones)
ANCHOR_ARMS = {"nginx": "nginx-default"}  # also names --bench-arms accepts beyond the table
TAKES_BENCH_ARMS = True
SYSCTLS = ["net.ipv4.ip_local_port_range", "net.ipv4.tcp_tw_reuse", "net.ipv4.tcp_max_tw_buckets",
           "net.ipv4.tcp_fin_timeout"]


def default_arms(quick):
    """The arms cost runs by default (every balancing arm and its knob-off
    arm, so the campaign fits in minutes), the anchor last."""
    return arms.in_study("quick:cost" if quick else "cost") + list(ANCHOR_ARMS)


def bench_arms():
    """`--bench-arms all`: the campaign's arms and make bench's own ("cost:bench"), the anchor last."""
    ours = set(arms.in_study("cost") + arms.in_study("cost:bench"))
    order = arms.names()
    return sorted(ours, key=lambda a: (arms.get(a).place.get("cost", len(order)), order.index(a))) + list(ANCHOR_ARMS)


def arms_of(plan):
    """The arms cost runs under plan (the module's docstring), the anchor last."""
    if plan.bench_arms is not None:
        return [a for a in plan.bench_arms if a in plan.arms or a in ANCHOR_ARMS]
    chosen_variants = {arms.get(a).variant for a in plan.arms}
    pool = bench_arms() if plan.bench_all else default_arms(plan.quick)
    return [a for a in pool if a in plan.arms or a in ANCHOR_ARMS
            or (not arms.get(a).default and arms.get(a).variant in chosen_variants)]


def peer_configs(plan):
    """The peers' configurations cost starts: its anchors'."""
    return [ANCHOR_ARMS[a] for a in arms_of(plan) if a in ANCHOR_ARMS]


def cost_seconds(plan, mode="keepalive"):
    """wrk's -d for a cost (and trace_overhead) run in mode: --cost-seconds,
    else --bench-seconds, else COST_SECONDS[mode]."""
    return plan.cost_seconds or plan.bench_seconds or COST_SECONDS[mode]


def placement():
    """(the server's CPUs, wrk's CPUs) for a cost run: the first half of the
    CPUs this process may use for the server, the rest for wrk, so neither's
    scheduling mixes into the other's: with both free to run anywhere, where
    wrk's threads land beside the workers changes how many requests each
    wakeup serves, and the CPU per request with it. None (nothing pinned)
    with fewer than 2 CPUs."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return None
    half = len(cpus) // 2
    return set(cpus[:half]), set(cpus[half:])


def placement_meta():
    where = placement()
    if where is None:
        return None
    return {"server_cpus": sorted(where[0]), "wrk_cpus": sorted(where[1])}


def pinned(pid):
    """Pins a started server's process tree to the server's CPUs; returns the
    CPUs wrk runs on (None when nothing is pinned)."""
    where = placement()
    if where is None:
        return None
    pin_tree(pid, where[0])
    return where[1]


def cost_rounds(plan):
    """Rounds planned up front: --bench-rounds, else COST_ROUNDS (1 with --quick)."""
    return plan.bench_rounds or (1 if plan.quick else COST_ROUNDS)


def cost_close_gap(plan):
    return close_gap(plan, COST_CLOSE_GAP_S)


def meta(plan):
    return {"cost": {"tool": "wrk", "path": COST_PATH, "threads": WRK_THREADS,
                     "connections": COST_CONNECTIONS, "duration_s": cost_seconds(plan, "keepalive"),
                     "close_duration_s": cost_seconds(plan, "close"), "placement": placement_meta(),
                     "warm_up_s": WARM_UP_S, "netns": "each run in a network namespace of its own (root)",
                     "timeout_s": WRK_TIMEOUT_S, "modes": COST_MODES,
                     "workers": sorted({w for _, w in cells(plan)}),
                     "one_worker_arms": sorted(a for a, w in cells(plan) if w == 1),
                     "arms": arms_of(plan), "rounds": cost_rounds(plan), "close_gap_s": cost_close_gap(plan),
                     "stopping": stopping_rule(plan),
                     "order": "each round runs every arm x workers once per mode, the list "
                              "rotated by (round-1)*len/rounds",
                     "sysctls": {name: read_sysctl(name) for name in SYSCTLS},
                     "anchor": anchor_meta(plan)}}


def anchor_meta(plan):
    """How each anchor arm in the cost study ran: which peer configuration,
    which software, and what it does per request."""
    out = {}
    for arm in (a for a in arms_of(plan) if a in ANCHOR_ARMS):
        name = ANCHOR_ARMS[arm]
        software, setting = peers.PEERS[name]
        out[arm] = {"peer": name, "software": peers.software_version(software) or "not installed",
                    "setting": setting, "access_log": "off", "path": COST_PATH,
                    "answer": 'return 200 "$pid\\n"', "config": "probes/peers/software/nginx.py conf()"}
    return out


def warm_up(prefix, port, headers, wrk_cpus):
    """WARM_UP_S of wrk against the server about to be measured, not recorded
    (its output kept at prefix.warm-up.*)."""
    run_wrk(prefix + ".warm-up", port, COST_PATH, COST_CONNECTIONS, WARM_UP_S, headers, cpus=wrk_cpus)


def anchor_run(plan, prefix, arm, workers, mode, headers, warm=False):
    """wrk against an anchor arm: its peer configuration (access log off)
    started fresh on a free port, stopped after; the configuration and logs
    are kept at prefix.*. Returns (wrk_output.parse's dict, TIME_WAIT counts, software)."""
    with peer_running(ANCHOR_ARMS[arm], workers, prefix) as peer:
        wrk_cpus = pinned(peer.proc.pid)
        if warm:
            warm_up(prefix, peer.port, headers, wrk_cpus)
        with CpuMeter(peer.proc.pid) as cpu:
            out = run_wrk(prefix, peer.port, COST_PATH, COST_CONNECTIONS, cost_seconds(plan, mode), headers,
                          cpus=wrk_cpus)
        out.update(cpu_fields(cpu.ns, out["requests"], switches=cpu.switches))
        # nginx reports no wakeup counts: requests per epoll_wait return are not known
        out.update({"requests_per_epoll_return": None, "worker_loops": None})
        tw = time_wait_counts(peer.port)
    return out, tw, peer.version


def run_text(out, tw_total):
    bad = sum(out["errors"].values())
    cpu = out.get("cpu_us_per_request")
    involuntary, per_wakeup = out.get("ctx_involuntary_per_request"), out.get("requests_per_epoll_return")
    return "%.0f req/s, %s%s%s, p99 %s ms%s, TIME_WAIT %s" % (
        out["requests_per_s"], "%.2f CPU us/req" % cpu if cpu is not None else "CPU not measured",
        ", %.3f involuntary switches/req" % involuntary if involuntary is not None else "",
        ", %.2f req/wakeup" % per_wakeup if per_wakeup is not None else "",
        out["latency_ms"]["p99"], ", %d errors" % bad if bad else "", tw_total)


def cost_run(plan, raw_dir, arm, workers, mode, rnd, order, warm=False):
    prefix = os.path.join(raw_dir, "cost-%s-w%d-%s-r%d" % (arm, workers, mode, rnd))
    need_wrk()  # before a server starts: a missing wrk skips at once
    headers = ["Connection: close"] if mode == "close" else []
    if arm in ANCHOR_ARMS:
        out, (tw_total, tw_sides), software = anchor_run(plan, prefix, arm, workers, mode, headers, warm)
        row = dict({"arm": arm, "workers": workers, "mode": mode, "round": rnd, "order": order,
                    "time_wait_after": tw_total, "time_wait_sides": tw_sides, "served_split": None,
                    "ratio_to_bare": None, "peer": ANCHOR_ARMS[arm], "software": software}, **out)
        return [row], run_text(out, tw_total)
    with ServerRun(arms.server_args(arm), workers, prefix, arms.env(arm)) as (proc, ready, path):
        wrk_cpus = pinned(proc.pid)
        if warm:
            warm_up(prefix, ready["port"], headers, wrk_cpus)
        with CpuMeter(proc.pid) as cpu:
            out = run_wrk(prefix, ready["port"], COST_PATH, COST_CONNECTIONS, cost_seconds(plan, mode), headers,
                          cpus=wrk_cpus)
        out.update(handoff_rate(ready["port"], out["duration_s"]))
        tw_total, tw_sides = time_wait_counts(ready["port"])
    # accepted over the server's life: wrk's connections, and the one
    # handoff_rate's GET /variant adds (for the arms that have one)
    out.update(cpu_fields(cpu.ns, out["requests"], accepted_of(proc), cpu.switches))
    out.update(loop_fields(proc))
    moved = handoffs_of(proc)
    if moved is not None:
        out.update({"handoffs": moved,
                    "handoffs_per_s": round(moved / out["duration_s"], 1) if out["duration_s"] else None})
    row = dict({"arm": arm, "workers": workers, "mode": mode, "round": rnd, "order": order,
                "time_wait_after": tw_total, "time_wait_sides": tw_sides,
                "served_split": served_split(proc), "ratio_to_bare": None}, **out)
    return [row], run_text(out, tw_total)


def cells(plan):
    """(arm, workers) of every run in a round: each arm at 2 workers, and with
    `--bench-arms all` the arms with cost:one_worker at 1 worker too."""
    one_worker = set(arms.in_study("cost:one_worker")) if plan.bench_all else set()
    return [(arm, w) for w in COST_WORKERS for arm in arms_of(plan) if w != 1 or arm in one_worker]


def isolated_run(plan, raw_dir, arm, workers, mode, rnd, order, warm=False):
    """cost_run in a network namespace of its own, as root (common.in_own_netns:
    every run starts with an empty TIME_WAIT table)."""
    return in_own_netns(lambda: cost_run(plan, raw_dir, arm, workers, mode, rnd, order, warm),
                        cost_seconds(plan, mode) + WARM_UP_S + WRK_TIMEOUT_S + 60,
                        "cost's %s run of %s" % (mode, arm))


def round_steps(plan, raw_dir, rnd):
    """One round: every cell once per mode, in the round's rotated order."""
    for mode in COST_MODES:
        for order, (arm, workers) in enumerate(rotated(cells(plan), rnd, cost_rounds(plan)), 1):
            def step(arm=arm, workers=workers, mode=mode, rnd=rnd, order=order):
                try:
                    result = isolated_run(plan, raw_dir, arm, workers, mode, rnd, order,
                                          warm=(rnd, order, mode) == (1, 1, COST_MODES[0]))
                except Exception as e:
                    if mode == "close" and not str(e).startswith("skipped"):
                        time.sleep(cost_close_gap(plan))  # a failed run may have made connections too
                    raise
                if mode == "close":
                    time.sleep(cost_close_gap(plan))  # before the next run's connects
                return result
            label = "%-17s %dw %-9s r%d" % (arm, workers, mode, rnd)
            yield label, step, {"arm": arm, "workers": workers, "mode": mode, "round": rnd}


def steps(plan, raw_dir):
    for rnd in range(1, cost_rounds(plan) + 1):
        yield from round_steps(plan, raw_dir, rnd)


def within(plan):
    return plan.bench_within or GOAL_WITHIN


def max_rounds(plan, rows):
    """The cap: --bench-max-rounds with --bench-within; else the rounds run."""
    if plan.bench_within:
        return plan.bench_max_rounds
    return max([r.get("round", 0) for r in rows] + [cost_rounds(plan)])


def more(plan, rows, raw_dir, next_round):
    """make bench's loop: another round's steps while some CPU ratio's 95 %
    interval is wider than +-within of its mean and the cap allows (none
    without --bench-within); returns (steps, the stopping rule's state)."""
    go, state = keep_going(cpu_series(rows), within(plan), next_round - 1, max_rounds(plan, rows))
    if not go or not plan.bench_within:
        return [], state
    return list(round_steps(plan, raw_dir, next_round)), state


def outcome(path, plan):
    """Once the study is done (ratios filled): the stopping rule's verdict
    over every CPU ratio (for meta.json), and each row's "cpu_converged"
    (per ratio it has: within +-within of its mean over the rounds run)."""
    state = {}

    def mark(rows):
        rounds_run = max([r.get("round", 0) for r in rows] + [0])
        state.update(final_state(plan, cpu_series(rows), within(plan), rounds_run, max_rounds(plan, rows)))
        for r in rows:
            names = ratio_names(r)
            if "error" not in r:
                r["stopping"] = stopping_record(plan, state)
            if names:
                r["cpu_converged"] = {suffix: state["ratios"][n]["converged"] for suffix, n in names.items()
                                      if n in state["ratios"]}
    rewrite_rows(path, mark)
    return state


RATIO_FIELDS = (("requests_per_s", "ratio"), ("cpu_us_per_request", "cpu_ratio"))
PARTNERS = ("to_bare", "to_knob_off", "to_reference", "to_process")


def partners_of(arm):
    """{"to_bare": "bare", "to_knob_off": ..., ...}: the arms a row's ratios are over."""
    found = {"to_bare": "bare" if arm != "bare" else None, "to_knob_off": arms.knob_off_of().get(arm),
             "to_reference": arms.reference_of().get(arm), "to_process": arms.process_arm_of().get(arm)}
    return {k: v for k, v in found.items() if v}


def ratio_names(row):
    """{"to_bare": "fdpass / bare, 2w, keepalive", ...}: the CPU ratios a
    measured row holds, by name."""
    if "error" in row or "cpu_us_per_request" not in row:
        return {}
    return {suffix: "%s / %s, %dw, %s" % (row["arm"], partner, row["workers"], row["mode"])
            for suffix, partner in partners_of(row["arm"]).items()}


def cpu_series(rows):
    """{ratio name: [its value each round, in round order]} over rows (their
    ratios filled here, on copies, as finish() fills them)."""
    rows = [dict(r) for r in rows]
    fill_ratios(rows)
    series = {}
    for r in sorted(rows, key=lambda r: r.get("round", 0)):
        for suffix, name in ratio_names(r).items():
            if r.get("cpu_ratio_" + suffix) is not None:  # None: the partner did not run that round
                series.setdefault(name, []).append(r["cpu_ratio_" + suffix])
    return series


def fill_ratios(rows):
    """ratio_to_bare: req/s over bare's at the same workers, mode and round
    (null when bare has no measured row there); likewise ratio_to_knob_off,
    ratio_to_reference and ratio_to_process for the arms that have those
    partners; and the same four for CPU time per request (cpu_ratio_to_bare, ...)."""
    def value_of(arm, field):
        return {(r["workers"], r["mode"], r["round"]): r.get(field) for r in rows
                if r.get("arm") == arm and "error" not in r}

    def ratio(value, base):
        return round(value / base, 4) if value is not None and base else None

    for field, name in RATIO_FIELDS:
        bare = value_of("bare", field)
        knob_off = {arm: value_of(off, field) for arm, off in arms.knob_off_of().items()}
        reference = {arm: value_of(ref, field) for arm, ref in arms.reference_of().items()}
        process = {arm: value_of(p, field) for arm, p in arms.process_arm_of().items()}
        for r in rows:
            if "error" in r or (field != "requests_per_s" and field not in r):
                continue
            key = (r["workers"], r["mode"], r["round"])
            if field == "cpu_us_per_request" and partners_of(r["arm"]):
                r["cpu_ratio_partners"] = partners_of(r["arm"])
            r[name + "_to_bare"] = ratio(r.get(field), bare.get(key))
            if r["arm"] in knob_off:
                r[name + "_to_knob_off"] = ratio(r.get(field), knob_off[r["arm"]].get(key))
            if r["arm"] in reference:
                r[name + "_to_reference"] = ratio(r.get(field), reference[r["arm"]].get(key))
            if r["arm"] in process:
                r[name + "_to_process"] = ratio(r.get(field), process[r["arm"]].get(key))


def finish(path):
    """Fills the ratios once every run is in (fill_ratios)."""
    rewrite_rows(path, fill_ratios)
