"""timeline: one oneshot round of 8 connections per arm with the tracer's
--timeline: each connection's story (who was woken, who won, who got
EAGAIN) -> timeline.jsonl (one line per connection). Needs root.

Each arm runs with nothing pinned; bare at 2 workers also runs under the
placements of TIMELINE_PLACEMENTS (placement.py's, e.g. workers on CPUs 0 and 1 with the
probe on CPU 1), so the report can say from this run's data where the
connections of a pinned placement were established, who was woken from which
CPU and who won on which. Every row says its placement: "placement",
"label", "worker_cpus" (by worker index, as the ready line says them) and
"probe_cpu" (null when not pinned)."""

import os

from acceptlab import arms
from probes.harness.lifecycle import StepFailed, is_root
from probes.harness.probe import probe_cmd, run_probe
from probes.harness.servers import ServerRun
from probes.harness.tracer import Tracer
from probes.studies.placement import Placement, placements

NAME = "timeline"
TIMELINE_SHAPE = {"name": "oneshot", "connections": 8}
UNPINNED = {"name": "unpinned", "label": "nothing pinned"}
TIMELINE_PLACED_ARM = "bare"
# The placements bare also runs under (names of placement.py's placements): the
# one whose winner the scheduling note and this project's runs dispute.
TIMELINE_PLACEMENTS = ("pinned-probe-cpu1",)


def placed():
    """placement.py's placements named in TIMELINE_PLACEMENTS, in that order."""
    known = {p["name"]: p for p in placements()}
    return [known[n] for n in TIMELINE_PLACEMENTS if n in known]


def arms_of(plan):
    return [a for a in arms.in_study("timeline") if a in plan.arms]


def meta(plan):
    return {"timeline": {"arms": arms.in_study("timeline"), "shape": TIMELINE_SHAPE,
                         "placements": {TIMELINE_PLACED_ARM: [p["name"] for p in placed()]}}}


def conn_rows(arm, ready, trace, p):
    """timeline.jsonl's rows from the tracer's "conn" objects: tids mapped to
    worker indexes, each row with its placement."""
    index_of = {w["tid"]: w["index"] for w in ready["workers"]}
    cpus = [str(w.get("cpu", "")) for w in sorted(ready["workers"], key=lambda w: w["index"])]
    rows = []
    for o in trace:
        if o.get("type") != "conn":
            continue
        conn = dict(o, winner_index=index_of.get(o.get("winner")))
        conn.pop("type")
        for w in conn["woken"]:
            w["index"] = index_of.get(w["tid"])
        conn["eagain_index"] = [index_of.get(t) for t in conn["eagain"]]
        rows.append({"arm": arm, "mode": ready.get("mode", "process"), "placement": p["name"],
                     "label": p["label"], "worker_cpus": cpus, "probe_cpu": p.get("probe_cpu"), "conn": conn})
    return rows


def timeline_step(plan, raw_dir, arm, p):
    def step():
        if not is_root():
            raise StepFailed("skipped: needs root (the tracer loads BPF programs)")
        prefix = os.path.join(raw_dir, "timeline-%s%s" % (arm, "" if p is UNPINNED else "-" + p["name"]))
        server_args = arms.server_args(arm) + (["--pin-workers", p["pin_workers"]] if p.get("pin_workers") else [])
        pin = ["--pin", str(p["probe_cpu"])] if p.get("probe_cpu") is not None else []
        with Placement(p) as (host, wrap):
            if wrap or host != "127.0.0.1":
                raise StepFailed("timeline placements run on loopback, not %s" % p["name"])
            with ServerRun(server_args, plan.workers, prefix, arms.env(arm)) as (proc, ready, path):
                tracer = Tracer(proc.pid, prefix, timeline=True)
                try:
                    rounds = run_probe(prefix, probe_cmd(ready["port"], TIMELINE_SHAPE, 1, path, extra=pin), 1)
                finally:
                    trace = tracer.stop()
        rows = conn_rows(arm, ready, trace, p)
        if not rows:
            raise StepFailed("the tracer recorded no connection")
        return rows, "%d connections, split %s" % (len(rows), rounds[0]["split"])
    return step


def steps(plan, raw_dir):
    for arm in arms_of(plan):
        yield "%-17s oneshot 8 --timeline" % arm, timeline_step(plan, raw_dir, arm, UNPINNED), \
            {"arm": arm, "placement": UNPINNED["name"]}
        if arm == TIMELINE_PLACED_ARM and plan.workers == 2:  # the placements pin 2 workers
            for p in placed():
                yield ("%-17s oneshot 8 --timeline, %s" % (arm, p["name"]), timeline_step(plan, raw_dir, arm, p),
                       {"arm": arm, "placement": p["name"]})
