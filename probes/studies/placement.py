"""placement: which worker wins is CPU placement (seed 002). Each arm at 2
workers under each placement this machine can hold (nothing pinned, workers
and the probe pinned side by side or on one CPU, a CPU hog beside one
worker, the probe across a veth pair in a network namespace of its own),
oneshot 10 x 8, burst and ramp, runs of rounds with a gap between rounds;
bare also gets the stop-winner check (the worker that answered most
SIGSTOPped: the other must answer all) -> placement.jsonl (one line per run,
with "workers", and what the placement pinned: "worker_cpus", each counted
worker's CPUs as its ready line says them, "probe_cpu" and "hog_cpu", null
when not pinned), so the report can say which worker won by its CPU.

Where it applies at more workers (PLACEMENT_WORKERS): the pinned placements
are about 2 workers on this machine's 2 CPUs, so at 4 and 8 workers the
arms of arms.py's "placement:workers" run with nothing pinned and with a CPU
hog beside worker 0 (the workers alternating over CPUs 0 and 1, the hog on
CPU 0), one run of oneshot 10 x 8 and one burst of 16 connections per worker."""

import json
import os
import subprocess

from acceptlab import arms
from acceptlab.paths import PYTHON
from probes.harness.cpu import start_hog
from probes.harness.lifecycle import StepFailed, forget, is_root, kill_group, register
from probes.harness.probe import PROBE_TIMEOUT_S, probe_cmd, run_probe, save_probe
from probes.harness.servers import ServerRun, server_events, stop_server

NAME = "placement"
PLACEMENT_SHAPES = [
    {"name": "oneshot", "connections": 8, "rounds_per_run": 10},
    {"name": "burst", "connections": 32, "rounds_per_run": 1},
    {"name": "ramp", "connections": 32, "gap_ms": 5, "rounds_per_run": 1},
]
PLACEMENT_RUNS = 2            # runs per placement x arm x shape (2 keeps the campaign, with the perturbation study, within 10 minutes)
PLACEMENT_ROUND_GAP_MS = 10   # between rounds: every worker is back asleep
NETNS_NET = ("10.231.0.1", "10.231.0.2")  # the server's veth end, the probe's (a /30 of our own)
STOP_WINNER_ARM = "bare"
PLACEMENT_WORKERS = [4, 8]    # the counts beyond 2 (not with --quick)
WIDE_PLACEMENTS = ("unpinned", "hog-beside-worker0")
WIDE_PER_WORKER = 16          # the burst's connections per worker at those counts


def arms_of(plan):
    """The arms of arms.py's "placement" ("quick:placement" with --quick) that
    were chosen, and at more workers (not with --quick) those of
    "placement:workers"."""
    chosen = [a for a in arms.in_study("quick:placement" if plan.quick else "placement") if a in plan.arms]
    wide = [] if plan.quick else [a for a in arms.in_study("placement:workers") if a in plan.arms]
    return list(dict.fromkeys(chosen + wide))


def meta(plan):
    return {"placement": {"arms": arms.in_study("placement"), "placements": placements(), "runs": PLACEMENT_RUNS,
                          "shapes": PLACEMENT_SHAPES, "round_gap_ms": PLACEMENT_ROUND_GAP_MS,
                          "more_workers": {"workers": [] if plan.quick else PLACEMENT_WORKERS,
                                           "arms": arms.in_study("placement:workers"),
                                           "placements": {str(n): placements_at(n) for n in PLACEMENT_WORKERS},
                                           "shapes": {str(n): wide_shapes(n) for n in PLACEMENT_WORKERS}},
                          "stop_winner": "bare: 10 x 8 oneshot, then the probe SIGSTOPs the worker that "
                                         "answered most and runs them again; then SIGCONT and SIGTERM"}}


def placements():
    """The placements this machine can hold: every one of the note's on 2
    CPUs, and the probe on a CPU of its own where there is a third."""
    out = [
        {"name": "unpinned", "label": "nothing pinned"},
        {"name": "pinned-probe-cpu0", "label": "workers on CPUs 0 and 1, probe on CPU 0 (beside worker 0)",
         "pin_workers": "0,1", "probe_cpu": 0},
        {"name": "pinned-probe-cpu1", "label": "workers on CPUs 0 and 1, probe on CPU 1 (beside worker 1)",
         "pin_workers": "0,1", "probe_cpu": 1},
        {"name": "one-cpu", "label": "workers and probe all on CPU 0", "pin_workers": "0,0", "probe_cpu": 0},
        {"name": "hog-beside-worker0", "label": "workers on CPUs 0 and 1, a CPU hog on CPU 0, probe unpinned",
         "pin_workers": "0,1", "hog_cpu": 0},
        {"name": "hog-beside-worker1", "label": "workers on CPUs 0 and 1, a CPU hog on CPU 1, probe unpinned",
         "pin_workers": "0,1", "hog_cpu": 1},
        {"name": "probe-netns-veth", "label": "probe in a network namespace of its own, over a veth pair "
         "(not on loopback's wake path)", "netns": True},
    ]
    if len(os.sched_getaffinity(0)) > 2:
        out.insert(3, {"name": "probe-own-cpu", "label": "workers on CPUs 0 and 1, probe on CPU 2",
                       "pin_workers": "0,1", "probe_cpu": 2})
    return out


def placements_at(workers):
    """The placements that apply at more workers than CPUs: nothing pinned,
    and a hog beside worker 0 (the workers alternating over CPUs 0 and 1)."""
    out = []
    for p in placements():
        if p["name"] not in WIDE_PLACEMENTS:
            continue
        if p.get("pin_workers"):
            p = dict(p, pin_workers=",".join("01"[i % 2] for i in range(workers)),
                     label="workers alternating on CPUs 0 and 1, a CPU hog on CPU %d, probe unpinned" % p["hog_cpu"])
        out.append(p)
    return out


def wide_shapes(workers):
    """At more workers: one run of the note's oneshot 10 x 8, one burst of 16 per worker."""
    return [dict(PLACEMENT_SHAPES[0]), {"name": "burst", "connections": WIDE_PER_WORKER * workers, "rounds_per_run": 1}]


class Placement:
    """with Placement(p) as (host, probe_prefix): starts the hog, or makes the
    network namespace and veth pair; undoes it on exit (the hog and the
    namespace are in the harness's clean-up registry meanwhile)."""

    def __init__(self, p):
        self.p = p
        self.hog = None
        self.ns = None

    def __enter__(self):
        if self.p.get("hog_cpu") is not None:
            self.hog = start_hog([PYTHON, "-c", "import os\nos.sched_setaffinity(0, {%d})\nwhile True: pass"
                                  % self.p["hog_cpu"]])
        if self.p.get("netns"):
            if not is_root():
                raise StepFailed("skipped: needs root (a network namespace and a veth pair)")
            self.ns = "acceptlab-%d" % os.getpid()
            host_if, ns_if = "alv%d" % (os.getpid() % 100000), "alp%d" % (os.getpid() % 100000)
            self.host_if = host_if
            register(self, Placement.remove_netns)
            cmds = [["ip", "netns", "add", self.ns],
                    ["ip", "link", "add", host_if, "type", "veth", "peer", "name", ns_if],
                    ["ip", "link", "set", ns_if, "netns", self.ns],
                    ["ip", "addr", "add", NETNS_NET[0] + "/30", "dev", host_if],
                    ["ip", "link", "set", host_if, "up"],
                    ["ip", "netns", "exec", self.ns, "ip", "addr", "add", NETNS_NET[1] + "/30", "dev", ns_if],
                    ["ip", "netns", "exec", self.ns, "ip", "link", "set", ns_if, "up"],
                    ["ip", "netns", "exec", self.ns, "ip", "link", "set", "lo", "up"]]
            for cmd in cmds:
                res = subprocess.run(cmd, capture_output=True, text=True)
                if res.returncode != 0:
                    self.__exit__()
                    raise StepFailed("%s: %s" % (" ".join(cmd), res.stderr.strip()[-200:]))
            return NETNS_NET[0], ["ip", "netns", "exec", self.ns]
        return "127.0.0.1", []

    def remove_netns(self):
        forget(self)
        if self.ns:
            subprocess.run(["ip", "netns", "del", self.ns], capture_output=True)
            subprocess.run(["ip", "link", "del", self.host_if], capture_output=True)  # gone with the ns, normally
            self.ns = None

    def __exit__(self, *exc):
        if self.hog is not None:
            kill_group(self.hog)
        self.remove_netns()
        return False


def worker_cpus(ready):
    """Each worker's CPUs as the ready line says them ("0", "0-1"), by the id
    the probe counts it under (tid in threads mode, pid otherwise)."""
    ident = "tid" if ready.get("mode") == "threads" else "pid"
    return {str(w[ident]): str(w.get("cpu", "")) for w in ready["workers"]}


def pinning(p, ready):
    """What a placement pinned, for its rows: the workers' CPUs (from the
    ready line), the probe's CPU and the hog's (None when not pinned)."""
    return {"worker_cpus": worker_cpus(ready), "probe_cpu": p.get("probe_cpu"), "hog_cpu": p.get("hog_cpu")}


def run_split(ready, counts):
    """Per-run counts for every worker of the ready line (zeros included):
    (split text largest first, ratio or None, starved)."""
    ns = sorted(counts.values(), reverse=True)
    return "/".join(map(str, ns)), (round(ns[0] / ns[-1], 3) if ns and ns[-1] else None), sum(n == 0 for n in ns)


def placement_runs(ready, shape, rounds):
    """Groups the probe's rounds into runs of shape["rounds_per_run"]."""
    ident = "tid" if ready.get("mode") == "threads" else "pid"
    ids = [str(w[ident]) for w in ready["workers"]]
    per = shape["rounds_per_run"]
    out = []
    for k in range(len(rounds) // per):
        chunk = rounds[k * per:(k + 1) * per]
        counts = {i: sum(r["counts"].get(i, 0) for r in chunk) for i in ids}
        split, ratio, starved = run_split(ready, counts)
        out.append({"shape": shape["name"], "run": k + 1, "rounds": per,
                    "connections": per * shape["connections"], "counts": counts, "split": split, "ratio": ratio,
                    "starved": starved, "answered": sum(r["answered"] for r in chunk),
                    "both_answered_rounds": sum(all(r["counts"].get(i, 0) > 0 for i in ids) for r in chunk)})
    return out


def stop_winner_run(prefix, ready, path, host, wrap, pin):
    """The fairness-free assertion: 10 x 8 oneshot rounds, then the probe
    SIGSTOPs the worker that answered most and runs them again: the other
    must answer all 80; the server is stopped (SIGTERM) by the caller."""
    shape = {"name": "oneshot", "connections": 8}
    cmd = wrap + probe_cmd(ready["port"], shape, 10, path, host=host,
                           extra=pin + ["--round-gap-ms", str(PLACEMENT_ROUND_GAP_MS), "--stop-winner"])
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise StepFailed("probe --stop-winner did not finish within %d s" % PROBE_TIMEOUT_S)
    save_probe(prefix + "-stop-winner", cmd, res)
    sums = [json.loads(l) for l in res.stdout.splitlines() if l.startswith("{") and '"summary"' in l]
    after = next((s for s in sums if s.get("stopped")), None)
    if after is None:
        return {"held": False, "why": (res.stderr.strip() or "no summary with a stopped worker")[-200:]}
    stopped = str(after["stopped"])
    other = sum(n for who, n in after["counts"].items() if who != stopped)
    return {"held": res.returncode == 0 and other == after["connections"] * after["rounds"]
            and after["counts"].get(stopped, 0) == 0,
            "stopped_pid": after["stopped"], "other_answered": other,
            "of": after["connections"] * after["rounds"], "stopped_answered": after["counts"].get(stopped, 0),
            "before": sums[0]["split"] if sums else None, "probe_exit": res.returncode}


def stop_winner_row(p, arm, proc, rc, stop):
    """The stop-winner row: what the probe saw, and whether the server held
    (exit 0 on SIGTERM, no worker reaped or respawned before it stopped)."""
    events = server_events(proc)
    before_stop = events[:next((i for i, e in enumerate(events) if e.get("event") == "stopping"), len(events))]
    crash = [e for e in before_stop if e.get("event") in ("reaped", "respawned", "gave_up")]
    stop.update({"placement": p["name"], "label": p["label"], "arm": arm, "shape": "stop_winner",
                 "exit": rc, "crash_or_respawn": len(crash), "held": stop["held"] and rc == 0 and not crash})
    return stop


def steps(plan, raw_dir):
    chosen = [a for a in arms.in_study("quick:placement" if plan.quick else "placement") if a in plan.arms]
    runs = 1 if plan.quick else PLACEMENT_RUNS
    for p in placements():
        for arm in chosen:
            yield ("%-18s %-17s" % (p["name"], arm), placement_step(raw_dir, p, arm, 2, PLACEMENT_SHAPES, runs),
                   {"placement": p["name"], "arm": arm, "workers": 2})
    if plan.quick:
        return
    wide = [a for a in arms.in_study("placement:workers") if a in plan.arms]
    for workers in PLACEMENT_WORKERS:
        for p in placements_at(workers):
            for arm in wide:
                yield ("%-18s %-17s %dw" % (p["name"], arm, workers),
                       placement_step(raw_dir, p, arm, workers, wide_shapes(workers), 1),
                       {"placement": p["name"], "arm": arm, "workers": workers})


def placement_step(raw_dir, p, arm, workers, shapes, runs):
    """One placement x arm step at a worker count: the shapes' runs on one
    server (and bare's stop-winner check at 2 workers)."""
    stop_winner = arm == STOP_WINNER_ARM and workers == 2

    def step():
        prefix = os.path.join(raw_dir, "placement-%s-%s%s" % (p["name"], arm, "" if workers == 2 else "-w%d" % workers))
        server_args = arms.server_args(arm) + (["--pin-workers", p["pin_workers"]] if p.get("pin_workers") else [])
        pin = ["--pin", str(p["probe_cpu"])] if p.get("probe_cpu") is not None else []
        rows = []
        with Placement(p) as (host, wrap):
            if host != "127.0.0.1":
                server_args += ["--host", host]
            with ServerRun(server_args, workers, prefix, arms.env(arm)) as (proc, ready, path):
                for shape in shapes:
                    n = runs * shape["rounds_per_run"]
                    cmd = wrap + probe_cmd(ready["port"], shape, n, path, host=host,
                                           extra=pin + ["--round-gap-ms", str(PLACEMENT_ROUND_GAP_MS)])
                    got = run_probe(prefix + "-" + shape["name"], cmd, n)
                    rows += placement_runs(ready, shape, got)
                if stop_winner:
                    stop = stop_winner_run(prefix, ready, path, host, wrap, pin)
            rc = stop_server(proc) if proc.poll() is None else proc.returncode
        for r in rows:
            r.update({"placement": p["name"], "label": p["label"], "arm": arm,
                      "mode": ready.get("mode", "process"), "workers": workers}, **pinning(p, ready))
        if stop_winner:
            rows.append(dict(stop_winner_row(p, arm, proc, rc, stop), workers=workers, **pinning(p, ready)))
        text = " ".join("%s %s" % (s["name"], " ".join(r["split"] for r in rows if r.get("shape") == s["name"]))
                        for s in shapes)
        if stop_winner:
            text += "; stop-winner %s" % ("held" if stop["held"] else "FAILED")
        return rows, text
    return step
