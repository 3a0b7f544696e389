"""trace_overhead: what the tracer (bin/acceptlab-trace --pgid) and the
diagnosis's passive watch (bin/acceptlab-diagnose --port P --duration LONG
--json, in the block's network namespace, where the server is) cost the
server they watch: its CPU time per request with the watcher attached over
without, on TRACE_OVERHEAD_ARM at 2 workers under wrk as the cost study
runs it (its path, connections and modes), one block per mode in a network
namespace of its own. The method is probes/harness/toggling.py's: one
server under one continuous wrk run, its watcher loaded for the whole run
and switched off and on in short windows, each on window's CPU per byte
read over its two off windows'; the run's ratio is the median of those.
Four states, each a run on a new server in every round (the order
shuffled from round to round): untraced-aa (no watcher, the same windows,
nothing switched: the A/A pair, the method's resolution), traced, passive,
and passive-hooks (the passive watch's hooks with programs that return at
once: what the hooks alone cost) -> trace_overhead.jsonl (one line per
run, "state" saying which; cpu_ratio_aa, cpu_ratio_traced,
cpu_ratio_passive or cpu_ratio_passive_hooks; the windows themselves).
After a mode's rounds, one run more per watcher (PROGRAM_STATES), on a new
server, measures what each of its BPF programs costs per event by the
kernel's own count (probes/harness/bpf_stats.py: the run-time statistics
on for that run alone) -> rows with "kind": "programs". Then one run more
per state of PROFILE_STATES measures where the watcher's cost lands in the
server's own CPU time, which includes what the kernel does to reach the
programs (a tracepoint's dispatch, a syscall tracepoint's slow path at
every syscall) and which the kernel's count leaves out: perf's samples of
the server's workers, each kernel symbol in one of KERNEL_PATHS by its
name -> rows with "kind": "server_profile".
Under make bench (--bench-within) the rounds go on until every CPU ratio
is within +-within of its mean, or the cap (cost's stopping rule,
studies/common.py). Rows from before this method (the
alternated one: an untraced server's runs around each watched run) are
still read: fill_ratio_traced fills their ratios."""

import contextlib
import os
import subprocess
import time

from acceptlab import arms
from probes.harness import bpf_stats, toggling
from probes.harness.alternation import SETTLE_S, keep_no_time_wait, partner_series, ratio_at, shuffled
from probes.harness.cpu import process_tree
from probes.harness.lifecycle import StepFailed, is_root
from probes.harness.servers import ServerRun, loop_fields
from probes.harness.tracer import (DIAGNOSE_STOP_READ_S, HOOKS_ONLY_ENV, TRACER_ATTACH_TIMEOUT_S, PassiveDiagnosis,
                                   Tracer)
from probes.harness.wrk import finish_wrk, kill_wrk, need_wrk, run_wrk, start_wrk
from probes.studies import profile
from probes.studies.common import final_state, in_own_netns, rewrite_rows, served_split, stopping_record, stopping_rule
from probes.studies.cost import (COST_CONNECTIONS, COST_MODES, COST_PATH, block_rule, block_timeout, cost_rounds,
                                 headers_of, joined, max_rounds, pinned, placement_meta, print_progress, series_text,
                                 warm_up, within)

NAME = "trace_overhead"
TRACE_OVERHEAD_ARM = "bare"
TRACE_OVERHEAD_WORKERS = 2
# Rounds in the campaign (--bench-rounds overrides; 2 with --quick): each
# is a run per state (STATES) of toggling.PAIRS on windows, each on a new server.
TRACE_ROUNDS = 6
UNTRACED, UNTRACED_AA, TRACED, PASSIVE = "untraced", "untraced-aa", "traced", "passive"
# The passive watch's hooks alone: the same tracepoints attached, each
# program returning at once (tracer.HOOKS_ONLY_ENV): what the hooks cost
# the server whatever their programs do, the part of the passive watch's
# cost no change to its programs takes off.
PASSIVE_HOOKS = "passive-hooks"
# The states a round runs (shuffled from round to round). "untraced" is the
# alternated method's reference, in rows from before this one.
STATES = (UNTRACED_AA, TRACED, PASSIVE, PASSIVE_HOOKS)
# What a state attaches, for the progress line and the skip reason.
ATTACHED = {TRACED: "the tracer (bin/acceptlab-trace)", PASSIVE: "the diagnosis's passive watch (bin/acceptlab-diagnose)"}
# The ratio fields a state's rows carry: req/s (alternated rows only), and
# CPU per request.
RATIO_FIELDS = {TRACED: ("ratio_traced", "cpu_ratio_traced"), PASSIVE: ("ratio_passive", "cpu_ratio_passive"),
                UNTRACED_AA: ("ratio_aa", "cpu_ratio_aa"),
                PASSIVE_HOOKS: ("ratio_passive_hooks", "cpu_ratio_passive_hooks")}
# The passive watch's --duration: longer than any run, which stops it.
PASSIVE_MARGIN_S = 3600
METHOD = "toggled"
# The programs runs (after a mode's rounds, one per watcher): each
# program's runs and run time over PROGRAM_SECONDS of wrk, by the kernel's
# count. The hooks alone's programs return at once, so theirs is what a
# run costs with the statistics on, whatever the program does.
PROGRAMS = "programs"
PROGRAM_STATES = (TRACED, PASSIVE, PASSIVE_HOOKS)
PROGRAM_SECONDS = 2
# The server profile runs (after the programs runs, one per state): perf's
# cpu-clock samples of the server's workers over PROFILE_SECONDS of wrk, at
# PROFILE_HZ, each watcher attached for its whole run (untraced-aa: none,
# the reference).
SERVER_PROFILE = "server_profile"
PROFILE_STATES = (UNTRACED_AA, TRACED, PASSIVE, PASSIVE_HOOKS)
PROFILE_SECONDS = 2
PROFILE_HZ = 4999
# Where a watcher's cost lands, by the kernel symbols' names (prefixes): a
# syscall tracepoint's slow path, which every syscall of every task takes
# while a program is attached to any syscall's tracepoint (the tracer's and
# the passive watch's accept exits); the dispatch from a tracepoint to its
# programs; the programs themselves (bpf_prog_<tag>_<name>) and the helpers
# only they call.
KERNEL_PATHS = (("syscall tracepoint", ("syscall_exit_work", "syscall_trace_enter", "perf_syscall_exit",
                                        "perf_syscall_enter")),
                ("dispatch", ("bpf_trace_run", "__bpf_trace_", "trace_call_bpf", "perf_trace_buf_alloc",
                              "perf_trace_run_bpf_submit")),
                ("programs", ("bpf_prog_", "bpf_sk_storage_get", "bpf_probe_read", "bpf_task_pt_regs",
                              "bpf_get_current", "bpf_lru_", "htab_", "__htab_")))
# The programs' own symbols kept per row (by self share).
PROFILE_TOP_PROGRAMS = 8


def after_rounds(row):
    """A programs or server profile run's row (not a toggled or alternated
    run's)."""
    return row.get("kind") in (PROGRAMS, SERVER_PROFILE)


def state_of(row):
    """A row's state; rows from before the passive state have only "traced"."""
    return row.get("state") or (TRACED if row.get("traced") else UNTRACED)


def trace_rounds(plan):
    return cost_rounds(plan, TRACE_ROUNDS)


def pairs_of(plan):
    """On windows per run: toggling.PAIRS, toggling.QUICK_PAIRS with --quick."""
    return toggling.QUICK_PAIRS if plan.quick else toggling.PAIRS


def arms_of(plan):
    return [TRACE_OVERHEAD_ARM]


def meta(plan):
    return {"trace_overhead": {"arm": TRACE_OVERHEAD_ARM, "workers": TRACE_OVERHEAD_WORKERS,
                               "modes": COST_MODES, "path": COST_PATH, "connections": COST_CONNECTIONS["close"],
                               "connections_by_mode": COST_CONNECTIONS, "method": METHOD,
                               "window_s": toggling.WINDOW_S, "gap_s": toggling.GAP_S, "pairs": pairs_of(plan),
                               "placement": placement_meta(),
                               "netns": "each mode's block in a network namespace of its own (root)",
                               "states": list(STATES), "servers": "a new server for every run",
                               "passive": "bin/acceptlab-diagnose --port P --duration D --json, started "
                                          "before its run's wrk (so it follows wrk's connections), paused "
                                          "(SIGUSR1) and resumed (SIGUSR2) window by window, stopped (SIGINT to "
                                          "its group) after them, in the block's network namespace",
                               "passive-hooks": "the same, with %s=1: its hooks attached, each program "
                                                "returning at once, nothing counted" % HOOKS_ONLY_ENV,
                               "traced": "bin/acceptlab-trace --pgid, started before its run's wrk, paused "
                                         "and resumed window by window, stopped after them",
                               "watchers": "loaded for their own runs only, attached in the on windows",
                               "programs": "after each mode's rounds, one run per watcher (%s) on a new "
                                           "server, %d s of wrk with the kernel's BPF run-time statistics on "
                                           "(BPF_ENABLE_STATS) for that run alone: each program's runs and "
                                           "run time, from the watcher's /proc/PID/fdinfo"
                                           % (", ".join(PROGRAM_STATES), PROGRAM_SECONDS),
                               "server_profile": "after the programs runs, one run per state (%s) on a new "
                                                 "server, %d s of wrk with perf record -e cpu-clock -F %d on "
                                                 "the server's workers, the watcher attached for the whole "
                                                 "run; each kernel symbol's self share put in one of %s by its "
                                                 "name" % (", ".join(PROFILE_STATES), PROFILE_SECONDS, PROFILE_HZ,
                                                           ", ".join(n for n, _ in KERNEL_PATHS)),
                               "rounds": trace_rounds(plan),
                               "stopping": stopping_rule(plan)}}


def diagnosis_fields(diagnosis):
    """What the passive watch saw over its run, for the run's row: it traced,
    the closest variant, the connections it attributed (in its on windows:
    paused, it counts nothing), and how long it watched and was paused."""
    totals = diagnosis.get("totals") or {}
    return {"traced": diagnosis.get("traced"), "closest_variant": diagnosis.get("closest_variant"),
            "accepted": totals.get("accepted"), "served": totals.get("served"), "split": diagnosis.get("split"),
            "duration_s": diagnosis.get("duration_s"), "paused_s": diagnosis.get("paused_s")}


@contextlib.contextmanager
def watching(state, pid, port, prefix, seen):
    """The state's watcher (a Tracer or a PassiveDiagnosis; None for the A/A
    state) started and attached for the with block and stopped after it
    whatever happens, in this process (the block's network namespace, the
    server's). seen gets the row's fields on the watch: for a passive run
    its diagnosis's."""
    if state == TRACED:
        tracer = Tracer(pid, prefix)
        try:
            yield tracer
        finally:
            tracer.stop()
    elif state in (PASSIVE, PASSIVE_HOOKS):
        watch = PassiveDiagnosis(port, prefix, PASSIVE_MARGIN_S, hooks_only=state == PASSIVE_HOOKS)
        try:
            yield watch
        except BaseException:
            watch.kill()
            raise
        seen.update(diagnosis=diagnosis_fields(watch.stop()))
    else:
        yield None


@contextlib.contextmanager
def watcher(state, pid, port, prefix, seen):
    """The state's switch (toggling.windows' switch(on)) for the with block,
    its watcher as watching() runs it; the A/A state's is the sham. seen
    also gets "watched" ("toggled") for a watched run."""
    with watching(state, pid, port, prefix, seen) as watch:
        yield toggling.signal_switch(watch) if watch else toggling.sham
    if watch:
        seen["watched"] = "toggled"


# After wrk starts, with the watcher on, before its first pause: wrk's
# connections are made and accepted while it watches, so the passive watch
# follows them (it follows a connection from its accept) and its account
# of the run is of all of them.
CONNECT_S = 0.5
# The most a run's watcher may add to it: its attach (the harness waits
# TRACER_ATTACH_TIMEOUT_S at most) and its stop (a diagnosis's last lines
# are read for DIAGNOSE_STOP_READ_S at most).
WATCHER_SPAN_S = TRACER_ATTACH_TIMEOUT_S + DIAGNOSE_STOP_READ_S


def run_state(plan, raw_dir, state, mode, rnd):
    """One run: a new server of TRACE_OVERHEAD_ARM, pinned as cost pins it,
    warmed up; the state's watcher attached, wrk started and left running
    (CONNECT_S), the watcher paused, then the windows (toggling.windows);
    wrk stopped (SIGINT: it prints what it measured), then the watcher.
    Returns the run's row."""
    prefix = os.path.join(raw_dir, "trace-overhead-%s-%s-r%d" % (state, mode, rnd))
    pairs = pairs_of(plan)
    seen = {}
    with ServerRun(arms.server_args(TRACE_OVERHEAD_ARM), TRACE_OVERHEAD_WORKERS, prefix) as (proc, ready, _):
        wrk_cpus = pinned(proc.pid)  # as cost runs it; the watcher's reader is not pinned
        port = ready["port"]
        warm_up(prefix, port, mode, wrk_cpus)
        pids = process_tree(proc.pid)
        with watcher(state, proc.pid, port, prefix, seen) as switch:
            read0 = toggling.read_bytes(pids)
            wrk = start_wrk(prefix, port, COST_PATH, COST_CONNECTIONS[mode],
                            int(CONNECT_S + toggling.run_seconds(pairs)) + 10, headers_of(mode), cpus=wrk_cpus)
            try:
                time.sleep(CONNECT_S)
                switch(False)
                wins = toggling.windows(proc.pid, switch, pairs)
            except BaseException:
                kill_wrk(wrk)
                raise
            toggling.interrupt(wrk)
            out = finish_wrk(wrk)
            read = toggling.read_bytes(pids) - read0
    per_request = round(read / out["requests"], 3) if out.get("requests") else None
    row = dict(out, arm=TRACE_OVERHEAD_ARM, state=state, traced=state == TRACED, mode=mode,
               workers=TRACE_OVERHEAD_WORKERS, method=METHOD, port=port, window_s=toggling.WINDOW_S,
               gap_s=toggling.GAP_S, windows=wins, pair_ratios=toggling.pair_ratios(wins),
               bytes_per_request=per_request,
               cpu_us_per_request_off=toggling.per_request_us(wins, False, per_request),
               cpu_us_per_request_on=toggling.per_request_us(wins, True, per_request),
               served_split=served_split(proc), **loop_fields(proc), **seen)
    row[RATIO_FIELDS[state][1]] = toggling.run_ratio(wins)
    return row


def programs_run(raw_dir, state, mode):
    """The programs run of a watcher: a new server of TRACE_OVERHEAD_ARM,
    pinned and warmed up as the rounds' are; the watcher attached, then
    PROGRAM_SECONDS of wrk with the kernel's run-time statistics on, each of
    the watcher's programs read before and after. Returns the row; a row
    with "error" when the kernel would not count or the run failed (the
    rounds before it stand)."""
    prefix = os.path.join(raw_dir, "trace-programs-%s-%s" % (state, mode))
    row = dict(kind=PROGRAMS, arm=TRACE_OVERHEAD_ARM, state=state, mode=mode, workers=TRACE_OVERHEAD_WORKERS,
               seconds=PROGRAM_SECONDS)
    seen = {}
    try:
        with ServerRun(arms.server_args(TRACE_OVERHEAD_ARM), TRACE_OVERHEAD_WORKERS, prefix) as (proc, ready, _):
            wrk_cpus = pinned(proc.pid)
            port = ready["port"]
            warm_up(prefix, port, mode, wrk_cpus)
            with watching(state, proc.pid, port, prefix, seen) as watch:
                pid = watch.proc.pid
                with bpf_stats.enabled():
                    before = bpf_stats.counts(pid)
                    out = run_wrk(prefix, port, COST_PATH, COST_CONNECTIONS[mode], PROGRAM_SECONDS,
                                  headers_of(mode), cpus=wrk_cpus)
                    after = bpf_stats.counts(pid)
                named = bpf_stats.names(after)
    except (bpf_stats.StatsUnavailable, StepFailed) as e:
        return dict(row, error=str(e))
    requests = out.get("requests")
    return dict(row, requests=requests, requests_per_s=out.get("requests_per_s"),
                programs=bpf_stats.programs(before, after, named, requests), **seen)


def path_of(symbol):
    """The KERNEL_PATHS name a kernel symbol belongs to, or None."""
    for name, prefixes in KERNEL_PATHS:
        if symbol.startswith(prefixes):
            return name
    return None


def profile_fields(symbols):
    """perf's symbols (profile.parse_report's) -> each KERNEL_PATHS name's
    share of the samples (%, every path named, 0 where none), and the
    programs' own symbols by self share (PROFILE_TOP_PROGRAMS)."""
    paths = {name: 0.0 for name, _ in KERNEL_PATHS}
    for sym in symbols:
        name = path_of(sym["symbol"]) if sym["space"] == "kernel" else None
        if name:
            paths[name] += sym["self_pct"]
    progs = [{"symbol": sym["symbol"], "self_pct": sym["self_pct"]} for sym in symbols
             if sym["space"] == "kernel" and sym["symbol"].startswith("bpf_prog_")]
    return {"paths": {k: round(v, 2) for k, v in paths.items()}, "programs": progs[:PROFILE_TOP_PROGRAMS]}


def profile_run(raw_dir, state, mode):
    """The server profile run of a state: a new server of TRACE_OVERHEAD_ARM,
    pinned and warmed up as the rounds' are; the state's watcher attached,
    then PROFILE_SECONDS of wrk with perf recording the server's workers.
    Returns the row; a row with "error" when perf is missing or the run
    failed (the rounds before it stand)."""
    prefix = os.path.join(raw_dir, "trace-profile-%s-%s" % (state, mode))
    row = dict(kind=SERVER_PROFILE, arm=TRACE_OVERHEAD_ARM, state=state, mode=mode,
               workers=TRACE_OVERHEAD_WORKERS, seconds=PROFILE_SECONDS, hz=PROFILE_HZ)
    perf = profile.perf_path()
    if not perf:
        return dict(row, error="perf is not installed (Debian: linux-perf)")
    data = prefix + ".perf.data"
    seen = {}
    try:
        with ServerRun(arms.server_args(TRACE_OVERHEAD_ARM), TRACE_OVERHEAD_WORKERS, prefix) as (proc, ready, _):
            port = ready["port"]
            warm_up(prefix, port, mode, pinned(proc.pid))
            with watching(state, proc.pid, port, prefix, seen):
                out, ns, _ = profile.perf_around_wrk([perf, "record", "-e", "cpu-clock", "-F", str(PROFILE_HZ),
                                                      "-o", data], proc.pid, port, prefix, "record",
                                                     PROFILE_SECONDS, mode=mode)
        symbols, samples = profile.report_symbols(perf, data, prefix)
    except (StepFailed, subprocess.TimeoutExpired) as e:
        return dict(row, error=str(e))
    finally:
        with contextlib.suppress(OSError):
            os.unlink(data)  # the report keeps what the row reads; the data file is megabytes
    requests = out.get("requests")
    return dict(row, requests=requests, requests_per_s=out.get("requests_per_s"), samples=samples,
                cpu_us_per_request=round(ns / 1000.0 / requests, 3) if requests else None,
                **profile_fields(symbols))


def block(plan, raw_dir, mode, states):
    """The mode's block: rounds of one run per state, each on a new server,
    in an order shuffled from round to round, until the stopping rule (or
    the planned rounds) say enough."""
    need_wrk()
    tw_cap = keep_no_time_wait() if mode == "close" else None
    go_on = block_rule(plan, NAME, mode, cpu_series, ratios_text, TRACE_ROUNDS)
    rows, rnd, again = [], 0, True
    while again:
        rnd += 1
        for order, state in enumerate(shuffled(states, rnd), 1):
            time.sleep(SETTLE_S)
            row = run_state(plan, raw_dir, state, mode, rnd)
            row.update(round=rnd, order=order, seq=len(rows), server_set=rnd, time_wait_cap=tw_cap)
            rows.append(row)
        again, text = go_on(rows, rnd)
        print_progress(rnd, text)
    runs = len(rows)
    for states, run, what, text in ((PROGRAM_STATES, programs_run, "programs", programs_text),
                                    (PROFILE_STATES, profile_run, "server profile", profile_text)):
        for state in states:
            time.sleep(SETTLE_S)
            row = run(raw_dir, state, mode)
            row.update(seq=len(rows))
            rows.append(row)
            print_progress(rnd, "%s of %s: %s" % (what, state, text(row)))
    return rows, joined("%d runs in %d rounds, %d programs and profile runs" % (runs, rnd, len(rows) - runs),
                        ratios_text(rows))


def programs_text(row):
    """A programs run's progress text: each program's events per request
    and ns per event, largest share first."""
    if "error" in row:
        return "not measured: " + row["error"]
    return ", ".join("%s %s/req x %s ns" % (p["name"], p["events_per_request"], p["ns_per_event"])
                     for p in row["programs"]) or "no program"


def profile_text(row):
    """A server profile run's progress text: each path's share of the
    server's samples."""
    if "error" in row:
        return "not measured: " + row["error"]
    return "%s samples; %s" % (row["samples"], ", ".join("%s %.2f %%" % kv for kv in row["paths"].items()))


def ratios_text(rows):
    """The progress line's figures: every CPU ratio (on over off) so far."""
    return series_text(cpu_series(rows)) or "no ratio yet"


def steps(plan, raw_dir):
    """One step per mode (keep-alive only with --quick): the mode's block,
    in a network namespace of its own as root."""
    for mode in (COST_MODES[:1] if plan.quick else COST_MODES):
        def step(mode=mode):
            if not is_root():
                raise StepFailed("skipped: needs root (%s and %s load BPF programs)"
                                 % (ATTACHED[TRACED], ATTACHED[PASSIVE]))
            cap = plan.bench_max_rounds if plan.bench_within else trace_rounds(plan)
            run_s = CONNECT_S + toggling.run_seconds(pairs_of(plan)) + WATCHER_SPAN_S
            programs_s = (len(PROGRAM_STATES) * (PROGRAM_SECONDS + WATCHER_SPAN_S + 10)
                          + len(PROFILE_STATES) * (PROFILE_SECONDS + WATCHER_SPAN_S + 20))
            timeout = block_timeout(len(STATES), cap, run_s, 120 + programs_s)
            return in_own_netns(lambda: block(plan, raw_dir, mode, list(STATES)), timeout,
                                "trace_overhead's %s block" % mode)
        yield ("%s %-9s %d states x %d rounds, %d on windows each" % (TRACE_OVERHEAD_ARM, mode, len(STATES),
                                                                     trace_rounds(plan), pairs_of(plan)),
               step, {"mode": mode})


def fill_ratio_traced(rows):
    """In rows of the alternated method, each traced, passive or A/A row's
    ratio to the untraced server at the same moment (alternation.ratio_at):
    req/s (ratio_traced, ratio_passive, ratio_aa) and CPU time per request
    (cpu_ratio_traced, ...). Rows of the toggled method carry their own."""
    def untraced(r):
        return state_of(r) == UNTRACED

    for field, which in (("requests_per_s", 0), ("cpu_us_per_request", 1)):
        series = partner_series(rows, untraced, field, same=("mode",))
        for r in rows:
            state = state_of(r)
            if (state == UNTRACED or "error" in r or r.get("method") == METHOD or after_rounds(r)
                    or not (field == "requests_per_s" or field in r)):
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
    rows = [dict(r) for r in rows if not after_rounds(r)]
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
            if after_rounds(r):
                continue
            name = series_name(state_of(r), r.get("mode"))
            if "error" not in r:
                r["stopping"] = stopping_record(plan, state)
            if state_of(r) != UNTRACED and name in state["ratios"]:
                r["cpu_converged"] = state["ratios"][name]["converged"]
    rewrite_rows(path, mark)
    return state
