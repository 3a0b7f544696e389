"""cost: wrk on GET / (keep-alive and Connection: close), the cost arms at 2
workers, measured side by side (probes/harness/alternation.py): per mode,
one block in a network namespace of its own, rounds of one short run per
arm, each round on servers started for it (every arm's, each warmed up
first) and stopped after it (FRESH_SERVERS), in an order shuffled per
round, every run at the same time as one of bare's, both servers on the
same CPU (--cost-method paired, the default), or between two of bare's
(--cost-method alternated). Per run: the server's CPU time per request (its
process tree's scheduler counts over the run), req/s, p50/p99, its context
switches per request and, for fdpass, the hand-offs it caused; per server,
over its life (its round and its warm-up): the connections each worker
served, requests per epoll_wait return and the sockets it left in
TIME_WAIT. Each run's ratio to
bare is taken against bare at the same moment (the bare run beside it;
alternated: bare's runs just before and after, on a line), so what the
host does to the machine's speed cancels; its ratio to its knob-off arm, its reference arm and its
process-mode arm is the two arms' ratios to bare in the same round. The A/A
arm bare-aa (bare again, as an arm of its own) gives the method's
resolution -> cost.jsonl (one line per run).

The campaign runs the arms with "cost" in arms.py for COST_ROUNDS rounds of
COST_SECONDS-second runs. `--bench-arms all` (make bench) adds the arms with
"cost:bench" (the threads arms, the user-space accounting arms) and the
1-worker cells of the arms with "cost:one_worker"; with --bench-within the
block's rounds go on until every CPU ratio's 95 % interval is within
+-within of its mean, or --bench-max-rounds is reached (the stopping rule in
studies/common.py; outcome() records the verdict in the rows and meta.json).

The cost anchor: an arm that is a server nobody here wrote, started from
the peers' configuration (probes/peers/peers.py) with its access log off,
since our server keeps no log (ANCHOR_ARMS: arm name -> peer configuration).
It runs in the same rounds as our arms, set beside bare like them (and with
`--bench-arms all`; named, it runs only when named).

The arms (arms_of): by default the arms with "cost" in arms.py ("quick:cost"
with --quick) that were chosen (--arms), each chosen arm's variant's arms
that are not in --arms' default (they run in cost alone), and the anchor;
with `--bench-arms all` the same over bench_arms(); with --bench-arms named,
those of them chosen, and the anchor when named."""

import contextlib
import os

from acceptlab import arms
from acceptlab.stats import mean_interval
from probes.harness.alternation import (Entrant, Live, keep_no_time_wait, metered, partner_series, ratio_at,
                                         run_block)
from probes.harness.cpu import cpu_fields, pin_tree
from probes.harness.lifecycle import is_root
from probes.harness.servers import ServerRun, accepted_of, handoffs_of, loop_fields, peer_running
from probes.harness.wrk import WRK_THREADS, WRK_TIMEOUT_S, need_wrk, run_wrk
from probes.peers import peers
from probes.studies.common import (final_state, handoff_rate, in_own_netns, keep_going, progress_text, read_sysctl,
                                   rewrite_rows, served_split, stopping_record, stopping_rule, time_wait_counts)

NAME = "cost"
COST_PATH = "/"              # the hello endpoint: the accept path is all there is to do
# wrk -c by mode: on keep-alive, which worker holds which connection is drawn
# anew in every run, and bare's CPU per request follows the draw (two workers
# share one CPU); with 16 connections it swung from run to run far more than
# with 64
COST_CONNECTIONS = {"keepalive": 64, "close": 16}
COST_WORKERS = [1, 2]         # 1: make bench only (the arms with cost:one_worker)
# wrk -d per run, by mode: short runs, many of them (wrk's shortest is 1 s)
COST_SECONDS = {"keepalive": 1, "close": 1}
# Rounds in the campaign (--bench-rounds overrides; 2 with --quick). Now and
# then one run's CPU per request lands far from the rest of its arm's, and
# far from its pair's: on keep-alive, a second in which a server's workers
# seldom slept (far fewer context switches per request than the others),
# which makes each request cheaper. Nothing here can tell that run from
# the others, and none is dropped; with more rounds one such run weighs
# less in the mean and in the interval, whose half-width, for one run
# that far out, falls about as the number of rounds grows. At 8 rounds
# one such run was enough to put the keep-alive A/A pair past the +-3 %
# goal; at 16 it weighs half as much (report/linux.md's A/A rows say what
# each run reached).
COST_ROUNDS = 16
GOAL_WITHIN = 0.02            # the resolution the goals need: a ratio's 95 % interval within +-2 %
COST_MODES = ["keepalive", "close"]
# New servers for every round (alternation.run_block's fresh), in this study,
# throughput and trace_overhead: a server kept for the block put whatever
# its start drew (which worker holds what, where its memory lies) into every
# round alike, so the rounds' interval left it out, and blocks of one build
# differed by more than their intervals said; started afresh, it varies from
# round to round and the interval covers it.
FRESH_SERVERS = True
METHODS = ("paired", "alternated")  # --cost-method: alternation.run_block with and without paired=True
ORDER = {"alternated": "each run followed by one of bare at 2 workers; ratios against bare's runs just before "
                       "and after, on a line",
         "paired": "each run at the same time as one of bare at 2 workers, both servers on the server CPU; "
                   "ratios against that bare run"}
WARM_UP_S = 1                 # an unrecorded wrk run against each server before the block's rounds (a
                              # fresh server's first run comes out slower than its later ones; on
                              # Connection: close it also fills the namespace's TIME_WAIT table, so
                              # every measured run meets it alike)
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
    else COST_SECONDS[mode] (short runs, many of them: --bench-seconds is
    payoff's)."""
    return plan.cost_seconds or COST_SECONDS[mode]


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


def cost_rounds(plan, default=COST_ROUNDS):
    """Rounds planned up front: --bench-rounds, else default (the study's:
    COST_ROUNDS for cost; 2 with --quick: a ratio needs two rounds for an
    interval)."""
    return plan.bench_rounds or (2 if plan.quick else default)


def meta(plan):
    return {"cost": {"tool": "wrk", "path": COST_PATH, "threads": WRK_THREADS,
                     "connections": COST_CONNECTIONS["close"], "connections_by_mode": COST_CONNECTIONS,
                     "duration_s": cost_seconds(plan, "keepalive"),
                     "close_duration_s": cost_seconds(plan, "close"), "placement": placement_meta(),
                     "warm_up_s": WARM_UP_S, "method": plan.cost_method,
                     "netns": "each mode's block in a network namespace of its own (root)",
                     "timeout_s": WRK_TIMEOUT_S, "modes": COST_MODES,
                     "workers": sorted({w for _, w in cells(plan)}),
                     "one_worker_arms": sorted(a for a, w in cells(plan) if w == 1),
                     "arms": arms_of(plan), "rounds": cost_rounds(plan), "close_gap_s": None,
                     "aa": {a: of for a, of in arms.aa_of().items() if a in arms_of(plan)},
                     "stopping": stopping_rule(plan),
                     "order": "per mode, one block of rounds, each on every arm x workers' server "
                              + servers_text() + ": the other cells in an order shuffled per round "
                              "(seeded by the round), " + ORDER[plan.cost_method],
                     "servers": SERVERS_FIELD[FRESH_SERVERS],
                     "sysctls": {name: read_sysctl(name) for name in SYSCTLS},
                     "anchor": anchor_meta(plan)}}


# The rows' and meta.json's "servers": how long each server ran.
SERVERS_FIELD = {True: "started afresh for each round", False: "kept for the block"}


# The most one server's start, warm-up aside, and stop may take (nginx's included), for a block's timeout.
SERVER_START_S = 3


def block_timeout(servers, rounds, seconds, margin):
    """The longest a block of servers x rounds runs of seconds may take (the
    cost, throughput and trace_overhead studies'): each server's warm-up,
    each run with 3 s to spare, with new servers for each round
    (FRESH_SERVERS) their starts, warm-ups and stops too, and margin."""
    fresh = servers * rounds * (WARM_UP_S + SERVER_START_S) if FRESH_SERVERS else 0
    return servers * (WARM_UP_S + rounds * (seconds + 3)) + fresh + margin


def servers_text():
    """How the block's servers ran, for meta.json's "order"."""
    return ("started for it and warmed up (new servers for every round)" if FRESH_SERVERS else
            "started once for the block and warmed up")


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


def warm_up(prefix, port, mode, wrk_cpus):
    """WARM_UP_S of wrk against a server about to be measured, not recorded
    (its output kept at prefix.warm-up.*)."""
    run_wrk(prefix + ".warm-up", port, COST_PATH, COST_CONNECTIONS[mode], WARM_UP_S, headers_of(mode), cpus=wrk_cpus)


def headers_of(mode):
    return ["Connection: close"] if mode == "close" else []


def entrant(plan, raw_dir, arm, workers, mode, study="cost"):
    """The block's entrant for one cell: our server for the arm (or the
    anchor's peer configuration, its access log off), started (for each
    round: FRESH_SERVERS) and pinned; its life fields (the connections each
    worker served, requests per epoll_wait return, hand-offs) read once it
    has stopped. Its raw files are named after the study."""
    prefix = os.path.join(raw_dir, "%s-%s-w%d-%s" % (study, arm, workers, mode))

    @contextlib.contextmanager
    def open_():
        if arm in ANCHOR_ARMS:
            with peer_running(ANCHOR_ARMS[arm], workers, prefix) as peer:
                yield Live(peer.proc.pid, peer.port, wrk_cpus=pinned(peer.proc.pid), prefix=prefix,
                           software=peer.version)
            return
        with ServerRun(arms.server_args(arm), workers, prefix, arms.env(arm)) as (proc, ready, _):
            yield Live(proc.pid, ready["port"], wrk_cpus=pinned(proc.pid), prefix=prefix, proc=proc)

    def life(live):
        if arm in ANCHOR_ARMS:
            # nginx reports no wakeup counts: requests per epoll_wait return are not known
            return {"requests_per_epoll_return": None, "worker_loops": None, "served_split": None,
                    "peer": ANCHOR_ARMS[arm], "software": live.kept["software"]}
        proc = live.kept["proc"]
        out = dict(loop_fields(proc), served_split=served_split(proc), accepted_life=accepted_of(proc))
        moved = handoffs_of(proc)
        if moved is not None:
            out["handoffs_life"] = moved
        return out
    return Entrant(arm, open_, life, workers=workers, mode=mode)


def cost_run(plan, arm, mode, live, rnd_label):
    """One measured run: wrk against a kept server, its CPU time over the run
    (CpuMeter), and for fdpass the hand-offs the run caused."""
    seconds = cost_seconds(plan, mode)
    prefix = "%s-%s" % (live.kept["prefix"], rnd_label)
    before = handoff_rate(live.port, 1) if arm not in ANCHOR_ARMS else {}
    out, cpu = metered(live.pid, lambda: run_wrk(prefix, live.port, COST_PATH, COST_CONNECTIONS[mode], seconds,
                                                 headers_of(mode), cpus=live.kept["wrk_cpus"]))
    out.update(cpu_fields(cpu.ns, out["requests"], switches=cpu.switches))
    if before:
        after = handoff_rate(live.port, 1)
        moved = after.get("handoffs", 0) - before.get("handoffs", 0)
        out.update({"handoffs": moved, "handoffs_per_s": round(moved / out["duration_s"], 1)
                    if out["duration_s"] else None})
        if "deferrals" in after:
            left = after["deferrals"] - before.get("deferrals", 0)
            out.update({"deferrals": left, "deferrals_per_s": round(left / out["duration_s"], 1)
                        if out["duration_s"] else None})
    return dict({"arm": arm, "ratio_to_bare": None, "connections": COST_CONNECTIONS[mode],
                 "servers": SERVERS_FIELD[FRESH_SERVERS]}, **out)


def cells(plan):
    """(arm, workers) of every run in a round: each arm at 2 workers, and with
    `--bench-arms all` the arms with cost:one_worker at 1 worker too."""
    one_worker = set(arms.in_study("cost:one_worker")) if plan.bench_all else set()
    out = [(arm, w) for w in COST_WORKERS for arm in arms_of(plan) if w != 1 or arm in one_worker]
    # bare at 2 workers is every block's reference: there even when not chosen
    return [REFERENCE] + [c for c in out if c != REFERENCE]


REFERENCE = ("bare", 2)  # the cell every other run sits between two runs of


def series_text(series, keep=lambda name: True):
    """The progress line's figures: each ratio of series (cpu_series') that
    keep() takes and that has an interval, as its mean +- half-width."""
    parts = []
    for name, values in sorted(series.items()):
        if keep(name) and len(values) > 1:
            m, half = mean_interval(values)
            parts.append("%s %.3f +- %.3f" % (name.split(",")[0], m, half))
    return "; ".join(parts)


def aa_text(rows):
    """The progress line's A/A figure: each A/A arm's CPU ratio so far."""
    return series_text(cpu_series(rows), lambda name: name.split(" / ")[0] in arms.aa_of())


def block_rule(plan, study, mode, series_of, summary, default_rounds=COST_ROUNDS):
    """A block's go_on (alternation.run_block): the planned rounds
    (cost_rounds(plan, default_rounds)),
    and under make bench's rule (--bench-within) more until every ratio of
    series_of(rows) is within +-within of its mean, or the cap; the progress
    text names the study and mode and ends with summary(rows)."""
    planned = cost_rounds(plan, default_rounds)

    def go_on(rows, rnd):
        if plan.bench_within:
            go, state = keep_going(series_of(rows), within(plan), rnd, max_rounds(plan, rows, default_rounds))
            return go or rnd < planned, joined(progress_text("%s %s" % (study, mode), state), summary(rows))
        return rnd < planned, joined("%s %s: round %d of %d" % (study, mode, rnd, planned), summary(rows))
    return go_on


def joined(*parts):
    """A progress line's parts that say something, joined by "; "."""
    return "; ".join(p for p in parts if p)


def warm_entrant(mode):
    """A block's warm(entrant, live): warm_up against the entrant's server."""
    return lambda e, live: warm_up(live.kept["prefix"], live.port, mode, live.kept["wrk_cpus"])


def print_progress(rnd, text):
    """A block's progress(round, text): one line per round (block_rule's
    text names the study and the mode)."""
    print(text, flush=True)


def block(plan, raw_dir, mode):
    """Every cell's server in one block (probes/harness/alternation.py):
    rounds of one run each until the planned rounds, or under make bench's
    rule until every CPU ratio is within +-within (or the cap)."""
    need_wrk()  # before a server starts: a missing wrk skips at once
    tw_cap = keep_no_time_wait() if mode == "close" and is_root() else None
    entrants = [entrant(plan, raw_dir, arm, w, mode) for arm, w in cells(plan)]
    reference = entrants[0]  # cells(plan)[0]: REFERENCE

    def run_one(e, live, rnd, seq):
        return cost_run(plan, e.name, mode, live, "r%d-s%d" % (rnd, seq))

    rows = run_block(reference, [e for e in entrants if e is not reference], warm_entrant(mode), run_one,
                     block_rule(plan, NAME, mode, cpu_series, aa_text), print_progress,
                     paired=plan.cost_method == "paired", fresh=FRESH_SERVERS)
    for key in {(r["arm"], r["workers"], r["server_set"]) for r in rows if r.get("handoffs_life") is not None}:
        # handoff counts its hand-offs over its life only: per second over its runs and warm-up
        mine = [r for r in rows if (r["arm"], r["workers"], r["server_set"]) == key]
        seconds = sum(r["duration_s"] for r in mine) + WARM_UP_S
        for r in mine:
            r.update({"handoffs_per_s": round(r["handoffs_life"] / seconds, 1),
                      "handoffs_per_s_over": "round" if FRESH_SERVERS else "block"})
    for r in rows:
        r["time_wait_cap"] = tw_cap
    for port in sorted({r["port"] for r in rows}):  # after the block: its sockets left in TIME_WAIT
        total, sides = time_wait_counts(port)
        for r in rows:
            if r["port"] == port:
                r.update({"time_wait_after": total, "time_wait_sides": sides})
    return rows, joined("%d runs in %d rounds" % (len(rows), max(r["round"] for r in rows)), aa_text(rows))


def steps(plan, raw_dir):
    """One step per mode: the mode's block, in a network namespace of its own as root."""
    for mode in COST_MODES:
        def step(mode=mode):
            n = len(cells(plan))
            cap = plan.bench_max_rounds if plan.bench_within else cost_rounds(plan)
            timeout = block_timeout(n, cap, cost_seconds(plan, mode), 120)
            return in_own_netns(lambda: block(plan, raw_dir, mode), timeout, "cost's %s block" % mode)
        yield "%-9s %d cells x %d rounds" % (mode, len(cells(plan)), cost_rounds(plan)), step, {"mode": mode}


def within(plan):
    return plan.bench_within or GOAL_WITHIN


def max_rounds(plan, rows, default_rounds=COST_ROUNDS):
    """The cap: --bench-max-rounds with --bench-within; else the rounds run
    (at least those planned, cost_rounds(plan, default_rounds))."""
    if plan.bench_within:
        return plan.bench_max_rounds
    return max([r.get("round", 0) for r in rows] + [cost_rounds(plan, default_rounds)])


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
    """ratio_to_bare: a run's req/s over bare's at the same workers and mode
    at the run's moment (alternation.ratio_at: the bare run paired with it,
    or with the alternated method bare's runs just before and after it, on
    a line; null when bare has no measured run there);
    ratio_to_knob_off, ratio_to_reference and ratio_to_process for the arms
    that have those partners: its ratio to bare over the partner's ratio to
    bare in the same round (each against bare at its own moment); the same
    four for CPU time per request (cpu_ratio_to_bare, ...). An A/A arm's
    ratio to bare is the method's resolution."""
    places, bare_paired = {}, {}
    for r in rows:
        places.setdefault((r.get("mode"), r.get("seq")), r)
        if r.get("arm") == "bare" and "error" not in r and r.get("paired_seq") is not None:
            bare_paired.setdefault((r.get("workers"), r.get("mode"), r.get("round")), r)
    for field, name in RATIO_FIELDS:
        measured = [r for r in rows if "error" not in r and (field == "requests_per_s" or field in r)]
        bare = partner_series(rows, "bare", field)
        for r in measured:
            r[name + "_to_bare"] = bare_ratio(r, places, bare_paired, bare, field) if r["arm"] != "bare" else None
        to_bare = {(r["arm"], r["workers"], r["mode"], r["round"]): r[name + "_to_bare"] for r in measured}
        for r in measured:
            partners = partners_of(r["arm"])
            if field == "cpu_us_per_request" and partners:
                r["cpu_ratio_partners"] = partners
            for suffix, partner in partners.items():
                if suffix == "to_bare" or r["arm"] not in PARTNER_TABLES[suffix]():
                    continue
                mine = r[name + "_to_bare"]
                theirs = 1.0 if partner == "bare" else to_bare.get((partner, r["workers"], r["mode"], r["round"]))
                r[name + "_" + suffix] = round(mine / theirs, 4) if mine is not None and theirs else None


def bare_ratio(row, places, bare_paired, bare, field):
    """row's field over bare's at the same workers and mode at row's moment
    (ratio_at). A paired run at a worker count other than the reference's
    (make bench's 1-worker cells) ran beside the block's reference, bare at
    2 workers: its ratio to bare at its own worker count goes through that
    reference, its ratio to the run it ran beside over bare's (at row's
    workers, same round) to the run bare ran beside; None when any is
    missing. places: {(mode, seq): row}; bare_paired: {(workers, mode,
    round): bare's paired row}, both built once by fill_ratios."""
    mode, paired = row.get("mode"), row.get("paired_seq")
    ref = places.get((mode, paired)) if paired is not None else None
    if ref is None or ref.get("workers") == row.get("workers"):
        return ratio_at(row, bare, field)
    own = bare_paired.get((row.get("workers"), mode, row.get("round")))
    own_ref = places.get((mode, own["paired_seq"])) if own is not None else None
    values = [row.get(field), ref.get(field), own and own.get(field), own_ref and own_ref.get(field)]
    if any(v is None for v in values) or not all(values[1:]):
        return None
    return round(values[0] / values[1] / (values[2] / values[3]), 4)


PARTNER_TABLES = {"to_knob_off": arms.knob_off_of, "to_reference": arms.reference_of,
                  "to_process": arms.process_arm_of}


def finish(path):
    """Fills the ratios once every run is in (fill_ratios)."""
    rewrite_rows(path, fill_ratios)
