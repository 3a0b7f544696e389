"""trace_overhead: wrk against TRACE_OVERHEAD_ARM at 2 workers as the cost
study runs it (its path, connections, modes and method: one block per mode,
probes/harness/alternation.py), four servers side by side: untraced, the
same again (untraced-aa: the A/A pair, the method's resolution), one with
the tracer attached (bin/acceptlab-trace --pgid), one with the diagnosis's
passive watch attached (bin/acceptlab-diagnose --port P --duration LONG
--json, in the block's network namespace, where the server is). A watcher
is attached just before each of its server's runs and detached after it,
so no other run meets it: the programs it attaches run for every task on
the machine that hits their tracepoints (a syscall tracepoint puts every
task's syscalls on the traced path), and attached for the whole block they
would tax the untraced runs too, hiding part of what they cost. What each
costs the traced server: its CPU per request over the untraced server's at
the same moment (the untraced runs just before and after, on a line) ->
trace_overhead.jsonl (one line per run, "state" saying which; ratio_traced
and cpu_ratio_traced on traced rows, ratio_passive and cpu_ratio_passive on
passive rows, ratio_aa and cpu_ratio_aa on untraced-aa rows, filled once all
are in). Under make bench (--bench-within) the rounds go on until every CPU
ratio is within +-within of its mean, or the cap (cost's stopping rule,
studies/common.py)."""

import contextlib
import os
import time

from acceptlab import arms
from probes.harness.alternation import (SETTLE_S, Entrant, Live, keep_no_time_wait, metered, partner_series, ratio_at,
                                         run_block)
from probes.harness.cpu import cpu_fields
from probes.harness.lifecycle import StepFailed, is_root
from probes.harness.servers import ServerRun, loop_fields
from probes.harness.tracer import PassiveDiagnosis, Tracer
from probes.harness.wrk import need_wrk, run_wrk
from probes.studies.common import final_state, in_own_netns, rewrite_rows, served_split, stopping_record, stopping_rule
from probes.studies.cost import (COST_CONNECTIONS, COST_MODES, COST_PATH, FRESH_SERVERS, SERVERS_FIELD, block_rule,
                                 block_timeout, cost_rounds, cost_seconds, headers_of, joined, max_rounds, pinned,
                                 placement_meta, print_progress, series_text, warm_entrant, within)

NAME = "trace_overhead"
TRACE_OVERHEAD_ARM = "bare"
TRACE_OVERHEAD_WORKERS = 2
# Rounds in the campaign (--bench-rounds overrides; 2 with --quick): more
# than cost's, since this block is alternated (every run alone, a run of the
# untraced server after each) and has fewer servers; cost's paired block
# leaves the campaign the minutes.
TRACE_ROUNDS = 10
# The states, in round 1's order (the block rotates it from round to round).
UNTRACED, UNTRACED_AA, TRACED, PASSIVE = "untraced", "untraced-aa", "traced", "passive"
STATES = (UNTRACED, UNTRACED_AA, TRACED, PASSIVE)
# What a state attaches, for the progress line and the skip reason.
ATTACHED = {TRACED: "the tracer (bin/acceptlab-trace)", PASSIVE: "the diagnosis's passive watch (bin/acceptlab-diagnose)"}
# The ratio fields a state's rows carry (over the untraced server at the
# same moment): req/s, and CPU per request.
RATIO_FIELDS = {TRACED: ("ratio_traced", "cpu_ratio_traced"), PASSIVE: ("ratio_passive", "cpu_ratio_passive"),
                UNTRACED_AA: ("ratio_aa", "cpu_ratio_aa")}
# The passive watch's --duration: longer than any run, which stops it.
PASSIVE_MARGIN_S = 3600


def state_of(row):
    """A row's state; rows from before the passive state have only "traced"."""
    return row.get("state") or (TRACED if row.get("traced") else UNTRACED)


def trace_rounds(plan):
    return cost_rounds(plan, TRACE_ROUNDS)


def arms_of(plan):
    return [TRACE_OVERHEAD_ARM]


def meta(plan):
    return {"trace_overhead": {"arm": TRACE_OVERHEAD_ARM, "workers": TRACE_OVERHEAD_WORKERS,
                               "modes": COST_MODES, "path": COST_PATH, "connections": COST_CONNECTIONS["close"],
                               "connections_by_mode": COST_CONNECTIONS, "method": "alternated",
                               "duration_s": cost_seconds(plan, "keepalive"),
                               "close_duration_s": cost_seconds(plan, "close"), "placement": placement_meta(),
                               "netns": "each mode's block in a network namespace of its own (root)",
                               "states": list(STATES), "servers": SERVERS_FIELD[FRESH_SERVERS],
                               "passive": "bin/acceptlab-diagnose --port P --duration D --json, started "
                                          "just before each passive run (after its attach, a settle) and "
                                          "stopped (SIGINT to its group) after it, in the block's network "
                                          "namespace",
                               "traced": "bin/acceptlab-trace --pgid, attached just before each traced run "
                                         "(after its attach, a settle) and stopped after it",
                               "watchers": "attached for their own runs only",
                               "rounds": trace_rounds(plan),
                               "stopping": stopping_rule(plan)}}


def entrant(raw_dir, state, mode):
    """One server of the block: bare at TRACE_OVERHEAD_WORKERS (its state's
    watcher is attached by watched(), run by run)."""
    prefix = os.path.join(raw_dir, "trace-overhead-%s-%s" % (state, mode))

    @contextlib.contextmanager
    def open_():
        with ServerRun(arms.server_args(TRACE_OVERHEAD_ARM), TRACE_OVERHEAD_WORKERS, prefix) as (proc, ready, _):
            wrk_cpus = pinned(proc.pid)  # as cost runs it; the tracer's (or diagnosis's) reader is not pinned
            yield Live(proc.pid, ready["port"], wrk_cpus=wrk_cpus, prefix=prefix, proc=proc)

    def life(live):
        return dict(loop_fields(live.kept["proc"]), served_split=served_split(live.kept["proc"]))
    return Entrant(state, open_, life, state=state, traced=state == TRACED, mode=mode,
                   workers=TRACE_OVERHEAD_WORKERS)


def diagnosis_fields(diagnosis):
    """What the passive watch saw over its run, for the run's row: it traced,
    the closest variant, and the connections it attributed."""
    totals = diagnosis.get("totals") or {}
    return {"traced": diagnosis.get("traced"), "closest_variant": diagnosis.get("closest_variant"),
            "accepted": totals.get("accepted"), "served": totals.get("served"), "split": diagnosis.get("split"),
            "duration_s": diagnosis.get("duration_s")}


def watched(state, live, prefix, run):
    """run() with the state's watcher attached around it: started (attached)
    before it, then SETTLE_S with nothing measured (what attaching left to
    the kernel is done first), and stopped after it, whatever happens; in
    this process (the block's network namespace, the server's). Returns
    run()'s result, and the row's fields on the watch: "watched" ("run":
    attached for this run alone) and for a passive run its diagnosis's."""
    if state == TRACED:
        tracer = Tracer(live.pid, prefix)
        try:
            time.sleep(SETTLE_S)
            out = run()
        finally:
            tracer.stop()
        return out, {"watched": "run"}
    if state == PASSIVE:
        watch = PassiveDiagnosis(live.port, prefix, PASSIVE_MARGIN_S)
        try:
            time.sleep(SETTLE_S)
            out = run()
        except BaseException:
            watch.kill()
            raise
        return out, {"watched": "run", "diagnosis": diagnosis_fields(watch.stop())}
    return run(), {}


def block(plan, raw_dir, mode, states):
    need_wrk()
    tw_cap = keep_no_time_wait() if mode == "close" else None
    entrants = [entrant(raw_dir, state, mode) for state in states]

    def run_one(e, live, rnd, seq):
        # the server's own CPU: a BPF program runs in the task that hits its
        # tracepoint, so the tracer's (or diagnosis's) time on the server's
        # syscalls and switches is in it; on wakeups wrk's packets cause (the
        # waker's context) it is not, nor is its user-space reader (another
        # process)
        prefix = "%s-r%d-s%d" % (live.kept["prefix"], rnd, seq)
        (out, cpu), seen = watched(e.tags["state"], live, prefix, lambda: metered(
            live.pid, lambda: run_wrk(prefix, live.port, COST_PATH, COST_CONNECTIONS[mode], cost_seconds(plan, mode),
                                      headers_of(mode), cpus=live.kept["wrk_cpus"])))
        out.update(cpu_fields(cpu.ns, out["requests"], switches=cpu.switches), **seen)
        return dict({"arm": TRACE_OVERHEAD_ARM}, **out)

    rows = run_block(entrants[0], entrants[1:], warm_entrant(mode), run_one,
                     block_rule(plan, NAME, mode, cpu_series, ratios_text, TRACE_ROUNDS), print_progress,
                     fresh=FRESH_SERVERS)
    for r in rows:
        r["time_wait_cap"] = tw_cap
    return rows, joined("%d runs in %d rounds" % (len(rows), max(r["round"] for r in rows)), ratios_text(rows))


def ratios_text(rows):
    """The progress line's figures: every CPU ratio over untraced so far."""
    return series_text(cpu_series(rows)) or "no ratio yet"


def steps(plan, raw_dir):
    """One step per mode (keep-alive only with --quick): the mode's block,
    in a network namespace of its own as root."""
    states = list(STATES) if is_root() else [UNTRACED, UNTRACED_AA]
    for mode in (COST_MODES[:1] if plan.quick else COST_MODES):
        def step(mode=mode):
            if not is_root():
                raise StepFailed("skipped: needs root (%s and %s load BPF programs)"
                                 % (ATTACHED[TRACED], ATTACHED[PASSIVE]))
            cap = plan.bench_max_rounds if plan.bench_within else trace_rounds(plan)
            timeout = block_timeout(len(states), cap, cost_seconds(plan, mode), 180)
            return in_own_netns(lambda: block(plan, raw_dir, mode, states), timeout,
                                "trace_overhead's %s block" % mode)
        yield ("%s %-9s %d states x %d rounds" % (TRACE_OVERHEAD_ARM, mode, len(states), trace_rounds(plan)), step,
               {"mode": mode})


def fill_ratio_traced(rows):
    """Each traced, passive or A/A row's ratio to the untraced server at the
    same moment (alternation.ratio_at): req/s (ratio_traced, ratio_passive,
    ratio_aa) and CPU time per request (cpu_ratio_traced, ...)."""
    def untraced(r):
        return state_of(r) == UNTRACED

    for field, which in (("requests_per_s", 0), ("cpu_us_per_request", 1)):
        series = partner_series(rows, untraced, field, same=("mode",))
        for r in rows:
            state = state_of(r)
            if state == UNTRACED or "error" in r or not (field == "requests_per_s" or field in r):
                continue
            if r.get("seq") is None:  # a run from before the block method: its round's untraced run
                base = next((u.get(field) for u in rows if untraced(u) and "error" not in u
                             and (u["mode"], u["round"]) == (r["mode"], r["round"])), None)
                r[RATIO_FIELDS[state][which]] = (round(r[field] / base, 4) if base and r.get(field) is not None
                                                 else None)
            else:
                r[RATIO_FIELDS[state][which]] = ratio_at(r, series, field, same=("mode",))


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


def outcome(path, plan):
    """The stopping rule's verdict over the finished rows (for meta.json), and
    each traced or passive row's "cpu_converged"."""
    state = {}

    def mark(rows):
        rounds_run = max([r.get("round", 0) for r in rows] + [0])
        state.update(final_state(plan, cpu_series(rows), within(plan), rounds_run, max_rounds(plan, rows, TRACE_ROUNDS)))
        for r in rows:
            name = series_name(state_of(r), r.get("mode"))
            if "error" not in r:
                r["stopping"] = stopping_record(plan, state)
            if state_of(r) != UNTRACED and name in state["ratios"]:
                r["cpu_converged"] = state["ratios"][name]["converged"]
    rewrite_rows(path, mark)
    return state
