"""reload: every worker replaced (SIGHUP, once per RELOAD_AT_S) under a
continuous keep-alive load and a Connection: close load at once; wrk counts
every failed request -> reload.jsonl (one line per trial). Each trial runs
in a network namespace of its own (common.netns_trial: trial() in a forked
child). The shared listener never closes, and fdpass's leaver forwards what
reaches it: both must lose nothing (arms.py: reload_loses_none). reuseport's
old listener closes with its worker, and what is queued there is reset
unless tcp_migrate_req moves it."""

import os
import signal
import time

from acceptlab import arms
from probes.harness.lifecycle import StepFailed
from probes.harness.servers import ServerRun, read_output, server_events
from probes.harness.wrk import finish_wrk, kill_wrk, start_wrk
from probes.studies.common import netns_trial

NAME = "reload"
RELOAD_SECONDS = 3                 # wrk -d of each load
RELOAD_AT_S = [0.5, 1.1, 1.7, 2.3]  # a SIGHUP this long into the load (one reload each)
RELOAD_KEEPALIVE_CONNECTIONS = 16
RELOAD_CLOSE_CONNECTIONS = 32
RELOAD_WAIT_S = 10                 # a reload must finish within this
RELOAD_PATH = "/pid"


def arms_of(plan):
    return list(dict.fromkeys(a for a, _, _ in arms.reload_cases(plan.quick) if a in plan.arms))


def meta(plan):
    return {"reload": {"arms": [{"arm": a, "migrate": m, "spawn": sp} for a, m, sp in arms.reload_cases(plan.quick)],
                       "workers": 2, "seconds": RELOAD_SECONDS, "sighup_at_s": RELOAD_AT_S,
                       "path": RELOAD_PATH, "keepalive_connections": RELOAD_KEEPALIVE_CONNECTIONS,
                       "close_connections": RELOAD_CLOSE_CONNECTIONS,
                       "load": "wrk -t1 keep-alive and wrk -t1 -H 'Connection: close' at once; failed = "
                               "wrk's connect + read + write + timeout errors + non-2xx answers",
                       "netns": "each trial in a network namespace of its own (a forked child, unshare(CLONE_NEWNET))"}}


def wait_reloaded(proc, generation):
    """Waits for the server's "reloaded" line of this generation: returns
    (the line, None), or (None, what went wrong)."""
    deadline = time.monotonic() + RELOAD_WAIT_S
    while True:
        events = server_events(proc)
        ended = [e for e in events if e.get("event") == "reloaded" and e.get("generation") == generation]
        failed = [e for e in events if e.get("event") == "reload_failed"]
        if ended:
            return ended[0], None
        if failed:
            return None, "reload %d failed: %s" % (generation, failed[0].get("reason"))
        if time.monotonic() > deadline:
            return None, "reload %d did not finish within %d s" % (generation, RELOAD_WAIT_S)
        if not read_output(proc, 0.05):
            return None, "the server exited during reload %d" % generation


def trial(arm, migrate, spawn, raw_prefix, seconds=RELOAD_SECONDS, reload_at=RELOAD_AT_S):
    """One reload trial in this process's network namespace: wrk keep-alive
    and wrk Connection: close on /pid for `seconds` (the campaign's:
    RELOAD_SECONDS), a SIGHUP at each of `reload_at` (RELOAD_AT_S), each
    waited for ("reloaded"). Returns the row: requests and wrk's errors per
    load, and what the reloads took."""
    server_args = (arms.server_args(arm) + (["--reuseport-migrate"] if migrate else [])
                   + (["--spawn-workers"] if spawn else []))
    with ServerRun(server_args, 2, raw_prefix, arms.env(arm)) as (proc, ready, path):
        port = ready["port"]
        loads = {"keepalive": start_wrk(raw_prefix + "-keepalive", port, RELOAD_PATH, RELOAD_KEEPALIVE_CONNECTIONS,
                                        seconds, threads=1),
                 "close": start_wrk(raw_prefix + "-close", port, RELOAD_PATH, RELOAD_CLOSE_CONNECTIONS,
                                    seconds, ["Connection: close"], threads=1)}
        start, done, problem = time.monotonic(), [], None
        try:
            for generation, at in enumerate(reload_at, 1):
                time.sleep(max(0.0, start + at - time.monotonic()))
                os.kill(proc.pid, signal.SIGHUP)
                if not problem:  # after one went wrong the rest are sent and not waited for
                    ended, problem = wait_reloaded(proc, generation)
                    if ended:
                        done.append(ended)
            out = {mode: finish_wrk(w) for mode, w in loads.items()}
        finally:
            for w in loads.values():
                kill_wrk(w)
        if problem:
            raise StepFailed(problem)
        replaced = [e for e in server_events(proc) if e.get("event") == "replaced"]
    row = {"arm": arm, "migrate": migrate, "spawn": spawn, "reloads": len(done),
           "replaced": len(replaced), "reload_ms": [round(e["ms"], 1) for e in done],
           "seconds": seconds, "failed": 0}
    for mode, res in out.items():
        row[mode] = {"requests": res["requests"], "errors": res["errors"]}
        row["failed"] += sum(res["errors"].values())
    return row


def label(arm, migrate, spawn):
    return arm + (" +migrate" if migrate else "") + (" +spawn" if spawn else "")


def steps(plan, raw_dir):
    for arm, migrate, spawn in arms.reload_cases(plan.quick):
        if arm not in plan.arms:
            continue

        def step(arm=arm, migrate=migrate, spawn=spawn):
            prefix = os.path.join(raw_dir, "reload-%s%s%s" % (arm, "-migrate" if migrate else "",
                                                              "-spawn" if spawn else ""))
            row = netns_trial(lambda: trial(arm, migrate, spawn, prefix), RELOAD_SECONDS + 2 * RELOAD_WAIT_S + 60,
                              "the reload trial of %s" % label(arm, migrate, spawn))
            return [row], "%d reloads, %d failed of %d requests" % (
                row["reloads"], row["failed"], row["keepalive"]["requests"] + row["close"]["requests"])
        yield "%-17s reload" % label(arm, migrate, spawn), step, {"arm": arm, "migrate": migrate, "spawn": spawn}
