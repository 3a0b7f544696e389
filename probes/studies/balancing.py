"""balancing: every chosen arm x shape, one fresh server per cell (`--port
0`, its ready line saved), the probe asking /pid on every connection for R
rounds -> balancing.jsonl (one line per round). As root the tracer runs
beside each cell -> trace.jsonl (one line per cell: each worker's accepts
won beside the probe's connections)."""

import json
import os

import arms
from harness import ServerRun, Tracer, handoffs_of, probe_cmd, run_probe, split_text

NAME = "balancing"
SHAPES = [
    {"name": "burst", "connections": 32},
    {"name": "ramp", "connections": 32, "gap_ms": 10},
    {"name": "keepalive", "connections": 32, "requests": 4},
]


def shape_label(shape):
    if shape["name"] == "keepalive":
        return "keepalive %dx%d" % (shape["connections"], shape["requests"])
    return "%s %d" % (shape["name"], shape["connections"])


def meta(args):
    return {"shapes": SHAPES,
            "trace": {"on": getattr(args, "trace", False),
                      "how": "bin/acceptlab-trace --pgid <server pid> --json, attached after the server's "
                             "ready line and before the probe, stopped after it: one row per balancing step",
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
    return {"variant": arm, "shape": shape["name"], "mode": ready.get("mode", "process"),
            "rounds": len(rows), "connections": sum(r["connections"] for r in rows),
            "duration_s": summary.get("duration_s"), "workers": sorted(workers, key=lambda w: (w["index"] is None, w["index"] or 0, w["tid"])),
            "cross_check": check}


def steps(args, raw_dir):
    for arm in args.arms:
        for shape in SHAPES:
            def step(arm=arm, shape=shape):
                prefix = os.path.join(raw_dir, "balancing-%s-%s" % (arm, shape["name"]))
                trace = None
                with ServerRun(arms.server_args(arm), args.workers, prefix, arms.env(arm)) as (proc, ready, path):
                    tracer = Tracer(proc.pid, prefix) if args.trace else None
                    try:
                        rounds = run_probe(prefix, probe_cmd(ready["port"], shape, args.rounds, path),
                                           args.rounds)
                    finally:
                        if tracer:
                            trace = tracer.stop()
                rows = [dict({"variant": arm, "mode": ready.get("mode", "process"),
                              "workers": len(ready["workers"])}, **r) for r in rounds]
                moved = handoffs_of(proc)
                if moved is not None:
                    for r in rows:  # over all the step's rounds (one server)
                        r["step_handoffs"] = moved
                note = ""
                if trace is not None:
                    row = trace_row(arm, shape, ready, rows, trace)
                    with open(args.trace_path, "a") as f:
                        f.write(json.dumps(row, sort_keys=True) + "\n")
                    note = "; trace " + ("agrees" if row["cross_check"]["equal"] else
                                         "differs (expected)" if not row["cross_check"]["expect_equal"] else
                                         "DIFFERS")
                return rows, split_text(rows) + note
            label = "%-17s %s" % (arm, shape_label(shape))
            yield label, step, {"variant": arm, "shape": shape["name"], "round": None}
