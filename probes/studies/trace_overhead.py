"""trace_overhead: wrk against TRACE_OVERHEAD_ARM at 2 workers as the cost
study runs it (its path, connections and modes), with and without the
tracer attached, alternated: the tracer's cost as a ratio ->
trace_overhead.jsonl (one line per run; ratio_traced filled once all are in).
Under make bench (--bench-within) the rounds go on until the CPU ratio
traced/untraced of each mode is within +-within of its mean, or the cap
(cost's stopping rule, studies/common.py)."""

import os
import time

from acceptlab import arms
from probes.harness.cpu import CpuMeter, cpu_fields
from probes.harness.lifecycle import StepFailed, is_root
from probes.harness.servers import ServerRun, accepted_of, loop_fields
from probes.harness.tracer import Tracer
from probes.harness.wrk import WRK_TIMEOUT_S, need_wrk, run_wrk
from probes.studies.common import final_state, in_own_netns, keep_going, rewrite_rows, stopping_record, stopping_rule
from probes.studies.cost import (COST_CONNECTIONS, COST_MODES, COST_PATH, WARM_UP_S, cost_close_gap, cost_rounds,
                                 cost_seconds, max_rounds, pinned, placement_meta, warm_up, within)

NAME = "trace_overhead"
TRACE_OVERHEAD_ARM = "bare"
TRACE_OVERHEAD_WORKERS = 2


def arms_of(plan):
    return [TRACE_OVERHEAD_ARM]


def meta(plan):
    return {"trace_overhead": {"arm": TRACE_OVERHEAD_ARM, "workers": TRACE_OVERHEAD_WORKERS,
                               "modes": COST_MODES, "path": COST_PATH, "connections": COST_CONNECTIONS,
                               "duration_s": cost_seconds(plan, "keepalive"),
                               "close_duration_s": cost_seconds(plan, "close"), "placement": placement_meta(),
                               "netns": "each run in a network namespace of its own (root)",
                               "rounds": cost_rounds(plan),
                               "stopping": stopping_rule(plan)}}


def steps(plan, raw_dir):
    for rnd in range(1, cost_rounds(plan) + 1):
        yield from round_steps(plan, raw_dir, rnd)


def overhead_run(plan, raw_dir, traced, mode, rnd):
    """One run: bare at TRACE_OVERHEAD_WORKERS, the tracer attached or not,
    wrk as cost runs it; (rows, progress text)."""
    if traced and not is_root():
        raise StepFailed("skipped: needs root (the tracer loads BPF programs)")
    need_wrk()
    prefix = os.path.join(raw_dir, "trace-overhead-%s-%s-r%d" % ("on" if traced else "off", mode, rnd))
    headers = ["Connection: close"] if mode == "close" else []
    with ServerRun(arms.server_args(TRACE_OVERHEAD_ARM), TRACE_OVERHEAD_WORKERS, prefix) as (proc, ready, _):
        wrk_cpus = pinned(proc.pid)  # as cost runs it; the tracer's reader is not pinned
        if (rnd, mode, traced) == (1, COST_MODES[0], False):  # the study's first run
            warm_up(prefix, ready["port"], headers, wrk_cpus)
        tracer = Tracer(proc.pid, prefix) if traced else None
        try:
            with CpuMeter(proc.pid) as cpu:
                out = run_wrk(prefix, ready["port"], COST_PATH, COST_CONNECTIONS, cost_seconds(plan, mode), headers,
                              cpus=wrk_cpus)
        finally:
            if tracer:
                tracer.stop()
    # the server's own CPU: a BPF program runs in the task that hits its
    # tracepoint, so the tracer's time on the server's syscalls and
    # switches is in it; on wakeups wrk's packets cause (the waker's
    # context) it is not, nor is its user-space reader (another process)
    out.update(cpu_fields(cpu.ns, out["requests"], accepted_of(proc), cpu.switches))
    out.update(loop_fields(proc))
    row = dict({"arm": TRACE_OVERHEAD_ARM, "workers": TRACE_OVERHEAD_WORKERS, "traced": traced, "mode": mode,
                "round": rnd}, **out)
    return [row], "%.0f req/s, %.2f CPU us/req" % (out["requests_per_s"], out["cpu_us_per_request"] or 0)


def round_steps(plan, raw_dir, rnd):
    """One round: untraced and traced (their order alternating by round), per
    mode; each run in a network namespace of its own as root, as cost's."""
    for mode in (COST_MODES[:1] if plan.quick else COST_MODES):  # quick: keep-alive only
        order = [False, True] if rnd % 2 else [True, False]
        for traced in order:
            def step(traced=traced, mode=mode, rnd=rnd):
                if traced and not is_root():
                    raise StepFailed("skipped: needs root (the tracer loads BPF programs)")
                try:
                    return in_own_netns(lambda: overhead_run(plan, raw_dir, traced, mode, rnd),
                                        cost_seconds(plan, mode) + WARM_UP_S + WRK_TIMEOUT_S + 60,
                                        "trace_overhead's %s run" % mode)
                finally:
                    if mode == "close":
                        time.sleep(cost_close_gap(plan))
            yield ("%s %s %-9s r%d" % (TRACE_OVERHEAD_ARM, "traced  " if traced else "untraced", mode, rnd), step,
                   {"traced": traced, "mode": mode, "round": rnd})


def fill_ratio_traced(rows):
    """ratio_traced: a traced run's req/s over the untraced run's of the
    same mode and round; cpu_ratio_traced: likewise for CPU time per request."""
    for field, name in (("requests_per_s", "ratio_traced"), ("cpu_us_per_request", "cpu_ratio_traced")):
        off = {(r["mode"], r["round"]): r.get(field) for r in rows if not r.get("traced") and "error" not in r}
        for r in rows:
            if r.get("traced") and "error" not in r and (field == "requests_per_s" or field in r):
                base = off.get((r["mode"], r["round"]))
                r[name] = round(r[field] / base, 4) if base and r.get(field) is not None else None


def finish(path):
    rewrite_rows(path, fill_ratio_traced)


def cpu_series(rows):
    """{"traced / untraced, <mode>": [the CPU ratio each round, in round order]}."""
    rows = [dict(r) for r in rows]
    fill_ratio_traced(rows)
    series = {}
    for r in sorted(rows, key=lambda r: r.get("round", 0)):
        if r.get("traced") and r.get("cpu_ratio_traced") is not None:
            series.setdefault("traced / untraced, %s" % r["mode"], []).append(r.get("cpu_ratio_traced"))
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
    each traced row's "cpu_converged"."""
    state = {}

    def mark(rows):
        rounds_run = max([r.get("round", 0) for r in rows] + [0])
        state.update(final_state(plan, cpu_series(rows), within(plan), rounds_run, max_rounds(plan, rows)))
        for r in rows:
            name = "traced / untraced, %s" % r.get("mode")
            if "error" not in r:
                r["stopping"] = stopping_record(plan, state)
            if r.get("traced") and name in state["ratios"]:
                r["cpu_converged"] = state["ratios"][name]["converged"]
    rewrite_rows(path, mark)
    return state
