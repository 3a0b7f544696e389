"""timeline: one oneshot round of 8 connections per arm with the tracer's
--timeline: each connection's story (who was woken, who won, who got
EAGAIN) -> timeline.jsonl (one line per connection). Needs root."""

import os

import arms
from harness import ServerRun, StepFailed, Tracer, is_root, probe_cmd, run_probe

NAME = "timeline"
TIMELINE_SHAPE = {"name": "oneshot", "connections": 8}


def meta(args):
    return {"timeline": {"arms": arms.in_study("timeline"), "shape": TIMELINE_SHAPE}}


def steps(args, raw_dir):
    for arm in [a for a in arms.in_study("timeline") if a in args.arms]:
        def step(arm=arm):
            if not is_root():
                raise StepFailed("skipped: needs root (the tracer loads BPF programs)")
            prefix = os.path.join(raw_dir, "timeline-%s" % arm)
            with ServerRun(arms.server_args(arm), args.workers, prefix, arms.env(arm)) as (proc, ready, path):
                tracer = Tracer(proc.pid, prefix, timeline=True)
                try:
                    rounds = run_probe(prefix, probe_cmd(ready["port"], TIMELINE_SHAPE, 1, path), 1)
                finally:
                    trace = tracer.stop()
            index_of = {w["tid"]: w["index"] for w in ready["workers"]}
            rows = []
            for o in trace:
                if o.get("type") != "conn":
                    continue
                conn = dict(o, winner_index=index_of.get(o.get("winner")))
                conn.pop("type")
                for w in conn["woken"]:
                    w["index"] = index_of.get(w["tid"])
                conn["eagain_index"] = [index_of.get(t) for t in conn["eagain"]]
                rows.append({"variant": arm, "mode": ready.get("mode", "process"), "conn": conn})
            if not rows:
                raise StepFailed("the tracer recorded no connection")
            return rows, "%d connections, split %s" % (len(rows), rounds[0]["split"])
        yield "%-17s oneshot 8 --timeline" % arm, step, {"variant": arm}
