"""balancing: which worker gets each new connection, at each worker count of
--worker-counts (BALANCING_WORKERS by default), shapes scaled with the
count N (16 connections per worker: burst 16 x N, ramp 16 x N, keepalive
16 x N x 4), the probe asking /pid on every connection -> balancing.jsonl
(one line per round, with "workers" and "how").

At the campaign's --workers (2): every chosen arm x shape, one fresh server
per cell (`--port 0`, its ready line saved), R rounds (--rounds); as root the
tracer runs beside each cell -> trace.jsonl (one line per cell: each
worker's accepts won beside the probe's connections; this count only).

At every other count: the arms users serve with (arms.balancing_wide(): the
process-mode arms that are no knob-off or measurement arm, and handoff, which
runs in threads mode only), ONE server per (arm, N) taking the three shapes
one after another with no pause between rounds (back-to-back, as a server
that never rests), WIDE_ROUNDS rounds of each; no tracer.

A shape that does not apply to an arm (arms.py's not_applicable: blocking's
keepalive) is one row with "not_applicable" and the reason, in place of its
rounds, and runs nothing."""

import json
import os

from acceptlab import arms
from probes.harness.lifecycle import StepFailed
from probes.harness.probe import probe_cmd, run_probe, split_text
from probes.harness.servers import ServerRun, handoffs_of
from probes.harness.tracer import Tracer

NAME = "balancing"
PER_WORKER = 16            # connections per worker in every shape
BALANCING_WORKERS = [2, 4, 8]   # the campaign's counts (make bench adds 16 with --worker-counts)
WIDE_ROUNDS = 2            # rounds of each shape at a count other than --workers (fewer with --rounds 1)
RAMP_SPAN_MS = 320         # a ramp round's length at every count: 10 ms apart at 2 workers
FRESH_ROUND_GAP_MS = 30    # between the rounds on a fresh server: every worker is back asleep long before
SHAPE_FORMS = [
    {"name": "burst"},
    {"name": "ramp"},
    {"name": "keepalive", "requests": 4},
]


def shapes_for(workers):
    """The shapes at a worker count: 16 connections per worker; the ramp's
    connections RAMP_SPAN_MS / (16 x N) ms apart (10 at 2 workers, 5 at 4, 2
    at 8, at least 1), so a ramp round lasts as long at every count and each
    connection is still accepted long before the next arrives."""
    out = []
    for s in SHAPE_FORMS:
        s = dict(s, connections=PER_WORKER * workers)
        if s["name"] == "ramp":
            s["gap_ms"] = max(1, RAMP_SPAN_MS // s["connections"])
        out.append(s)
    return out


SHAPES = shapes_for(2)     # at 2 workers: burst 32, ramp 32, keepalive 32 x 4


def shape_label(shape):
    if shape["name"] == "keepalive":
        return "keepalive %dx%d" % (shape["connections"], shape["requests"])
    return "%s %d" % (shape["name"], shape["connections"])


def worker_counts(text):
    """--worker-counts' value: distinct counts 1..64, comma-separated, in
    the order given; ValueError naming what is wrong."""
    try:
        counts = [int(n) for n in text.split(",") if n.strip()]
    except ValueError:
        raise ValueError("expected worker counts separated by commas, such as 2,4,8")
    if not counts:
        raise ValueError("expected at least one worker count")
    bad = [n for n in counts if not 1 <= n <= 64]
    if bad:
        raise ValueError("%d: expected 1..64" % bad[0])
    if len(set(counts)) != len(counts):
        raise ValueError("a worker count is given twice")
    return counts


def counts_of(plan):
    """--worker-counts, else --workers alone with --quick, else BALANCING_WORKERS."""
    return list(plan.worker_counts or ([plan.workers] if plan.quick else BALANCING_WORKERS))


def arms_of(plan):
    """Every chosen arm at --workers (those of arms.balancing_wide() at the other counts)."""
    return list(plan.arms)


def wide_rounds(plan):
    return min(plan.rounds, WIDE_ROUNDS)


def meta(plan):
    base = plan.workers
    others = [n for n in counts_of(plan) if n != base]
    return {"shapes": shapes_for(base),
            "balancing": {"workers": counts_of(plan), "base_workers": base, "per_worker": PER_WORKER,
                          "base": {"how": "fresh", "arms": "every chosen arm", "rounds": plan.rounds,
                                   "round_gap_ms": FRESH_ROUND_GAP_MS,
                                   "server": "one fresh server per arm x shape"},
                          "wide": {"how": "back-to-back", "workers": others,
                                   "arms": [a for a in arms.balancing_wide() if a in plan.arms],
                                   "rounds": wide_rounds(plan), "round_gap_ms": 0,
                                   "server": "one server per arm x worker count, the shapes one after another",
                                   "shapes": {str(n): shapes_for(n) for n in others}}},
            "trace": {"on": plan.trace,
                      "how": "bin/acceptlab-trace --pgid <server pid> --json, attached after the server's "
                             "ready line and before the probe, stopped after it: one row per balancing step "
                             "at %d workers (fresh servers only) of a process-mode arm or an arm whose acceptor "
                             "is not always the owner (a threads arm with a process twin runs untraced)" % base,
                      "arms": [a for a in plan.arms if traced(a)],
                      "acceptor_is_not_owner": sorted(arms.where(acceptor_is_not_owner=True))}}


def trace_row(arm, shape, ready, rows, trace):
    """One trace.jsonl row: each worker's tracer counts beside the probe's
    connection counts over the step's rounds, and whether they agree."""
    ident = "tid" if ready.get("mode") == "threads" else "pid"
    index_of = {w["tid"]: w["index"] for w in ready["workers"]}
    probe = {}
    for r in rows:
        for who, n in r.get("counts", {}).items():
            probe[int(who)] = probe.get(int(who), 0) + n
    workers = []
    for t in (o for o in trace if o.get("type") == "worker"):
        w = dict(t, index=index_of.get(t["tid"]))
        w.pop("type", None)
        workers.append(w)
    won = {w["tid"]: w["won"] for w in workers}
    check = {"tracer_won": {}, "probe_connections": {}}
    for w in ready["workers"]:
        check["tracer_won"][str(w["index"])] = won.get(w["tid"], 0)
        check["probe_connections"][str(w["index"])] = probe.get(w[ident], 0)
    check["equal"] = check["tracer_won"] == check["probe_connections"]
    check["expect_equal"] = not arms.get(arm).acceptor_is_not_owner
    summary = next((o for o in trace if o.get("type") == "summary"), {})
    return {"arm": arm, "shape": shape["name"], "mode": ready.get("mode", "process"),
            "rounds": len(rows), "connections": sum(r["connections"] for r in rows),
            "duration_s": summary.get("duration_s"), "workers": sorted(workers, key=lambda w: (w["index"] is None, w["index"] or 0, w["tid"])),
            "cross_check": check}


def traced(arm):
    """Whether the tracer runs beside an arm's fresh steps: every process-mode
    arm and every arm whose acceptor is not always the owner; a threads arm
    with a process twin (its accepts are the twin's, thread by thread) runs
    without it, to keep the campaign within its minutes."""
    a = arms.get(arm)
    return a.mode == "process" or a.acceptor_is_not_owner or a.process_arm is None


def not_applicable_row(arm, workers, how, shape, reason):
    """The one row of a shape that does not apply to an arm (arms.py's
    not_applicable), in place of its rounds: no server runs for it."""
    return {"arm": arm, "mode": arms.get(arm).mode, "workers": workers, "how": how, "shape": shape["name"],
            "round": None, "not_applicable": reason}


def row_of(arm, ready, how, r):
    return dict({"arm": arm, "mode": ready.get("mode", "process"), "workers": len(ready["workers"]),
                 "how": how}, **r)


def fresh_steps(plan, raw_dir):
    """Every chosen arm x shape at --workers, one fresh server per cell."""
    for arm in plan.arms:
        for shape in shapes_for(plan.workers):
            reason = arms.not_applicable(arm, NAME, shape["name"])
            if reason:
                def skip(arm=arm, shape=shape, reason=reason):
                    return [not_applicable_row(arm, plan.workers, "fresh", shape, reason)], "not applicable: " + reason
                yield "%-17s %s" % (arm, shape_label(shape)), skip, {"arm": arm, "workers": plan.workers,
                                                                     "how": "fresh", "shape": shape["name"],
                                                                     "round": None}
                continue

            def step(arm=arm, shape=shape):
                prefix = os.path.join(raw_dir, "balancing-%s-%s" % (arm, shape["name"]))
                trace = None
                with ServerRun(arms.server_args(arm), plan.workers, prefix, arms.env(arm)) as (proc, ready, path):
                    tracer = Tracer(proc.pid, prefix) if plan.trace and traced(arm) else None
                    try:
                        rounds = run_probe(prefix, probe_cmd(ready["port"], shape, plan.rounds, path,
                                                             ("--round-gap-ms", str(FRESH_ROUND_GAP_MS))),
                                           plan.rounds)
                    finally:
                        if tracer:
                            trace = tracer.stop()
                rows = [row_of(arm, ready, "fresh", r) for r in rounds]
                moved = handoffs_of(proc)
                if moved is not None:
                    for r in rows:  # over all the step's rounds (one server)
                        r["step_handoffs"] = moved
                note = ""
                if trace is not None:
                    row = trace_row(arm, shape, ready, rows, trace)
                    with open(plan.trace_path, "a") as f:
                        f.write(json.dumps(row, sort_keys=True) + "\n")
                    note = "; trace " + ("agrees" if row["cross_check"]["equal"] else
                                         "differs (expected)" if not row["cross_check"]["expect_equal"] else
                                         "DIFFERS")
                return rows, split_text(rows) + note
            label = "%-17s %s" % (arm, shape_label(shape))
            yield label, step, {"arm": arm, "workers": plan.workers, "how": "fresh", "shape": shape["name"],
                                "round": None}


def wide_steps(plan, raw_dir, workers):
    """The arms users serve with at one more worker count: one server each,
    the shapes back-to-back."""
    rounds = wide_rounds(plan)
    for arm in [a for a in arms.balancing_wide() if a in plan.arms]:
        def step(arm=arm):
            prefix = os.path.join(raw_dir, "balancing-%s-w%d" % (arm, workers))
            rows, texts = [], []
            try:
                with ServerRun(arms.server_args(arm), workers, prefix, arms.env(arm)) as (proc, ready, path):
                    for shape in shapes_for(workers):
                        reason = arms.not_applicable(arm, NAME, shape["name"])
                        if reason:
                            rows.append(not_applicable_row(arm, workers, "back-to-back", shape, reason))
                            texts.append("%s not applicable" % shape["name"])
                            continue
                        got = run_probe("%s-%s" % (prefix, shape["name"]),
                                        probe_cmd(ready["port"], shape, rounds, path, extra=["--round-gap-ms", "0"]),
                                        rounds)
                        rows += [row_of(arm, ready, "back-to-back", r) for r in got]
                        texts.append("%s %s" % (shape["name"], split_text(got)))
            except StepFailed as e:
                done = {r["shape"] for r in rows}  # measured, or not applicable
                raise StepFailed(str(e), rows + [{"arm": arm, "workers": workers, "how": "back-to-back",
                                                  "shape": s["name"], "round": None, "error": str(e)}
                                                 for s in SHAPE_FORMS if s["name"] not in done])
            moved = handoffs_of(proc)
            if moved is not None:
                for r in rows:  # over the server's life: every shape's rounds
                    r["step_handoffs"] = moved
            return rows, "; ".join(texts)
        yield ("%-17s %dw back-to-back" % (arm, workers), step,
               {"arm": arm, "workers": workers, "how": "back-to-back", "shape": SHAPE_FORMS[0]["name"],
                "round": None})


def steps(plan, raw_dir):
    for workers in counts_of(plan):
        if workers == plan.workers:
            yield from fresh_steps(plan, raw_dir)
        else:
            yield from wide_steps(plan, raw_dir, workers)
