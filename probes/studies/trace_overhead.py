"""trace_overhead: wrk against TRACE_OVERHEAD_ARM at 2 workers as the cost
study runs it (its path, connections and modes) in three states, alternated
within every round: untraced, with the tracer attached (bin/acceptlab-trace
--pgid), and with the diagnosis's passive watch attached
(bin/acceptlab-diagnose --port P --duration LONG --json, started before wrk
and stopped after it by its process group, inside the run's network
namespace, where the server is): what each costs the traced server, as a
ratio to the untraced run of the same mode and round ->
trace_overhead.jsonl (one line per run, "state" saying which;
ratio_traced and cpu_ratio_traced on traced rows, ratio_passive and
cpu_ratio_passive on passive rows, filled once all are in). Under make
bench (--bench-within) the rounds go on until every CPU ratio (traced and
passive over untraced, per mode) is within +-within of its mean, or the cap
(cost's stopping rule, studies/common.py)."""

import os
import time

from acceptlab import arms
from probes.harness.cpu import CpuMeter, cpu_fields
from probes.harness.lifecycle import StepFailed, is_root
from probes.harness.servers import ServerRun, accepted_of, loop_fields
from probes.harness.tracer import PassiveDiagnosis, Tracer
from probes.harness.wrk import WRK_TIMEOUT_S, need_wrk, run_wrk
from probes.studies.common import final_state, in_own_netns, keep_going, rewrite_rows, stopping_record, stopping_rule
from probes.studies.cost import (COST_CONNECTIONS, COST_MODES, COST_PATH, WARM_UP_S, cost_close_gap, cost_rounds,
                                 cost_seconds, max_rounds, pinned, placement_meta, warm_up, within)

NAME = "trace_overhead"
TRACE_OVERHEAD_ARM = "bare"
TRACE_OVERHEAD_WORKERS = 2
# The states a run is made in, in round 1's order (each round after starts
# one later, so every state takes every place in the order).
UNTRACED, TRACED, PASSIVE = "untraced", "traced", "passive"
STATES = (UNTRACED, TRACED, PASSIVE)
# What a state attaches, for the progress line and the skip reason.
ATTACHED = {TRACED: "the tracer (bin/acceptlab-trace)", PASSIVE: "the diagnosis's passive watch (bin/acceptlab-diagnose)"}
# The ratio fields a state's rows carry (over the untraced run of the same
# mode and round): req/s, and CPU per request.
RATIO_FIELDS = {TRACED: ("ratio_traced", "cpu_ratio_traced"), PASSIVE: ("ratio_passive", "cpu_ratio_passive")}
# The passive watch's --duration: longer than any run, which stops it.
PASSIVE_MARGIN_S = 600


def state_of(row):
    """A row's state; rows from before the passive state have only "traced"."""
    return row.get("state") or (TRACED if row.get("traced") else UNTRACED)


def round_order(rnd):
    """The states' order in round rnd: STATES rotated by rnd - 1."""
    k = (rnd - 1) % len(STATES)
    return list(STATES[k:] + STATES[:k])


def arms_of(plan):
    return [TRACE_OVERHEAD_ARM]


def meta(plan):
    return {"trace_overhead": {"arm": TRACE_OVERHEAD_ARM, "workers": TRACE_OVERHEAD_WORKERS,
                               "modes": COST_MODES, "path": COST_PATH, "connections": COST_CONNECTIONS,
                               "duration_s": cost_seconds(plan, "keepalive"),
                               "close_duration_s": cost_seconds(plan, "close"), "placement": placement_meta(),
                               "netns": "each run in a network namespace of its own (root)",
                               "states": list(STATES),
                               "passive": "bin/acceptlab-diagnose --port P --duration D --json, started before "
                                          "wrk and stopped (SIGINT to its group) after it, in the run's "
                                          "network namespace",
                               "rounds": cost_rounds(plan),
                               "stopping": stopping_rule(plan)}}


def steps(plan, raw_dir):
    for rnd in range(1, cost_rounds(plan) + 1):
        yield from round_steps(plan, raw_dir, rnd)


def overhead_run(plan, raw_dir, state, mode, rnd):
    """One run: bare at TRACE_OVERHEAD_WORKERS in state (untraced, the tracer
    attached, or the diagnosis's passive watch attached), wrk as cost runs
    it; (rows, progress text)."""
    if state != UNTRACED and not is_root():
        raise StepFailed("skipped: needs root (%s loads BPF programs)" % ATTACHED[state])
    need_wrk()
    prefix = os.path.join(raw_dir, "trace-overhead-%s-%s-r%d" % ({UNTRACED: "off", TRACED: "on"}.get(state, state),
                                                                  mode, rnd))
    headers = ["Connection: close"] if mode == "close" else []
    seconds = cost_seconds(plan, mode)
    diagnosis = None
    with ServerRun(arms.server_args(TRACE_OVERHEAD_ARM), TRACE_OVERHEAD_WORKERS, prefix) as (proc, ready, _):
        wrk_cpus = pinned(proc.pid)  # as cost runs it; the tracer's (or diagnosis's) reader is not pinned
        if (rnd, mode, state) == (1, COST_MODES[0], round_order(1)[0]):  # the study's first run
            warm_up(prefix, ready["port"], headers, wrk_cpus)
        tracer = Tracer(proc.pid, prefix) if state == TRACED else None
        # in this process: the run's network namespace, the server's
        watch = PassiveDiagnosis(ready["port"], prefix, seconds + PASSIVE_MARGIN_S) if state == PASSIVE else None
        try:
            with CpuMeter(proc.pid) as cpu:
                out = run_wrk(prefix, ready["port"], COST_PATH, COST_CONNECTIONS, seconds, headers, cpus=wrk_cpus)
        finally:
            if tracer:
                tracer.stop()
            if watch:
                diagnosis = watch.stop()
    # the server's own CPU: a BPF program runs in the task that hits its
    # tracepoint, so the tracer's (or diagnosis's) time on the server's
    # syscalls and switches is in it; on wakeups wrk's packets cause (the
    # waker's context) it is not, nor is its user-space reader (another
    # process)
    out.update(cpu_fields(cpu.ns, out["requests"], accepted_of(proc), cpu.switches))
    out.update(loop_fields(proc))
    row = dict({"arm": TRACE_OVERHEAD_ARM, "workers": TRACE_OVERHEAD_WORKERS, "state": state,
                "traced": state == TRACED, "mode": mode, "round": rnd}, **out)
    if diagnosis is not None:
        # what the watch saw: it traced, and the connections it attributed
        totals = diagnosis.get("totals") or {}
        row["diagnosis"] = {"traced": diagnosis.get("traced"), "closest_variant": diagnosis.get("closest_variant"),
                            "accepted": totals.get("accepted"), "served": totals.get("served"),
                            "split": diagnosis.get("split"), "duration_s": diagnosis.get("duration_s")}
    return [row], "%.0f req/s, %.2f CPU us/req" % (out["requests_per_s"], out["cpu_us_per_request"] or 0)


def round_steps(plan, raw_dir, rnd):
    """One round: untraced, traced and passive (their order rotating by
    round, round_order), per mode; each run in a network namespace of its
    own as root, as cost's."""
    for mode in (COST_MODES[:1] if plan.quick else COST_MODES):  # quick: keep-alive only
        for state in round_order(rnd):
            def step(state=state, mode=mode, rnd=rnd):
                if state != UNTRACED and not is_root():
                    raise StepFailed("skipped: needs root (%s loads BPF programs)" % ATTACHED[state])
                try:
                    return in_own_netns(lambda: overhead_run(plan, raw_dir, state, mode, rnd),
                                        cost_seconds(plan, mode) + WARM_UP_S + WRK_TIMEOUT_S + 90,
                                        "trace_overhead's %s run" % mode)
                finally:
                    if mode == "close":
                        time.sleep(cost_close_gap(plan))
            yield ("%s %-8s %-9s r%d" % (TRACE_OVERHEAD_ARM, state, mode, rnd), step,
                   {"state": state, "traced": state == TRACED, "mode": mode, "round": rnd})


def fill_ratio_traced(rows):
    """Each traced or passive row's ratio to the untraced run of the same
    mode and round: req/s (ratio_traced, ratio_passive) and CPU time per
    request (cpu_ratio_traced, cpu_ratio_passive)."""
    for field, which in (("requests_per_s", 0), ("cpu_us_per_request", 1)):
        off = {(r["mode"], r["round"]): r.get(field) for r in rows
               if state_of(r) == UNTRACED and "error" not in r}
        for r in rows:
            state = state_of(r)
            if state == UNTRACED or "error" in r or not (field == "requests_per_s" or field in r):
                continue
            base = off.get((r["mode"], r["round"]))
            r[RATIO_FIELDS[state][which]] = round(r[field] / base, 4) if base and r.get(field) is not None else None


def finish(path):
    rewrite_rows(path, fill_ratio_traced)


def series_name(state, mode):
    return "%s / untraced, %s" % (state, mode)


def cpu_series(rows):
    """{"<traced|passive> / untraced, <mode>": [the CPU ratio each round, in
    round order]}."""
    rows = [dict(r) for r in rows]
    fill_ratio_traced(rows)
    series = {}
    for r in sorted(rows, key=lambda r: r.get("round", 0)):
        state = state_of(r)
        if state != UNTRACED and r.get(RATIO_FIELDS[state][1]) is not None:
            series.setdefault(series_name(state, r["mode"]), []).append(r[RATIO_FIELDS[state][1]])
    return series


def more(plan, rows, raw_dir, next_round):
    """make bench's loop (cost.more's rule): another round while a mode's CPU
    ratio is wider than +-within and the cap allows; (steps, state)."""
    go, state = keep_going(cpu_series(rows), within(plan), next_round - 1, max_rounds(plan, rows))
    if not go or not plan.bench_within:
        return [], state
    return list(round_steps(plan, raw_dir, next_round)), state


def outcome(path, plan):
    """The stopping rule's verdict over the finished rows (for meta.json), and
    each traced or passive row's "cpu_converged"."""
    state = {}

    def mark(rows):
        rounds_run = max([r.get("round", 0) for r in rows] + [0])
        state.update(final_state(plan, cpu_series(rows), within(plan), rounds_run, max_rounds(plan, rows)))
        for r in rows:
            name = series_name(state_of(r), r.get("mode"))
            if "error" not in r:
                r["stopping"] = stopping_record(plan, state)
            if state_of(r) != UNTRACED and name in state["ratios"]:
                r["cpu_converged"] = state["ratios"][name]["converged"]
    rewrite_rows(path, mark)
    return state
