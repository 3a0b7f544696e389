"""perturbation: the balancers outside the quiet lab. The perturbation arms
(the arms that claim balance and their knob-off arms) at each of
PERTURBATION_WORKERS, each on ONE server whose rounds follow each other with
no pause, under one perturbation after another (PERTURBATIONS: fresh,
back-to-back, CPU hogs, a SYN flood, the tracer, a stopped worker); rounds
are 16 connections per worker. The load counters beside the truth from
sock_diag, sampled in every round while its connections are held (the probe
waits at --pause-at asked) and again after each probe run ->
perturbation.jsonl (one line per round). The target
(servers/load.h, acceptlab/balance.py): within 17/15 at 2 workers, max - min
<= 2 above; the arms that claim balance (arms.py) are held to it, the
knob-off arms reported. A run whose shape does not apply to an arm
(arms.py's not_applicable: blocking's keepalive) is not run: one row with
"not_applicable" and the reason stands in its place.
"""

import json
import os
import re
import select
import signal
import subprocess
import threading
import time

from acceptlab import arms, balance
from probes import synflood  # raw SYNs, the SYN flood perturbation
from probes.harness.cpu import StressHogs
from probes.harness.lifecycle import StepFailed, forget, is_root, kill_group, register, registering
from probes.harness.probe import PROBE_TIMEOUT_S, probe_cmd, probe_rounds, save_probe
from probes.harness.servers import ServerRun
from probes.harness.tracer import Tracer
from probes.peers import peers

NAME = "perturbation"
PERTURBATION_WORKERS = [2, 4, 8]
QUICK_PERTURBATION_WORKERS = [4]
PERTURBATION_PER_WORKER = 16
PERTURBATION_SHAPE_ARGS = {"burst": [], "ramp": ["--gap-ms", "1"], "keepalive": ["--requests", "3", "--gap-ms", "1"]}
# (perturbation, [(shape, rounds), ...]): probe runs in order, each with
# --round-gap-ms 0, one right after another.
PERTURBATIONS = [
    ("fresh", [("burst", 1)]),                      # the first burst, the moment the server says ready
    ("back-to-back", [("burst", 3), ("ramp", 1), ("keepalive", 1), ("burst", 1)]),  # and the shapes mixed
    ("hogs", [("burst", 2), ("keepalive", 1)]),      # stress-ng --cpu 2 running
    ("synflood", [("burst", 1), ("burst", 1)]),      # 200 SYNs from a raw socket right before each run
    ("tracer", [("burst", 2), ("keepalive", 1)]),    # bin/acceptlab-trace attached
    ("stopped", [("burst", 1)]),                     # worker 1 SIGSTOPped for the first 300 ms (tracer on)
]
PERTURBATIONS_NEED_ROOT = {"synflood", "tracer", "stopped"}  # a raw socket, BPF: left out when not root
PERTURBATION_HOG_CPUS = 2
PERTURBATION_FLOOD_SYNS = 200
PERTURBATION_STOP_S = 0.3
# Where each round holds its connections for the counters' sample: once every
# connection has been answered (so accepted, and owned by the worker that
# answered) and is still open; keepalive: after the first request on each.
PERTURBATION_PAUSE_AT = "asked"


def arms_of(plan):
    return [a for a in arms.in_study("quick:perturbation" if plan.quick else "perturbation") if a in plan.arms]


def meta(plan):
    return {"perturbation": {
        "arms": arms.in_study("quick:perturbation" if plan.quick else "perturbation"),
        "workers": QUICK_PERTURBATION_WORKERS if plan.quick else PERTURBATION_WORKERS,
        "connections_per_worker": PERTURBATION_PER_WORKER,
        "perturbations": [{"name": n, "runs": [{"shape": sh, "rounds": r} for sh, r in runs]}
                          for n, runs in PERTURBATIONS],
        "shape_args": PERTURBATION_SHAPE_ARGS, "round_gap_ms": 0,
        "hog_cpus": PERTURBATION_HOG_CPUS, "flood_syns": PERTURBATION_FLOOD_SYNS,
        "stop_s": PERTURBATION_STOP_S, "pause_at": PERTURBATION_PAUSE_AT,
        "target": "every round's max - min <= %d (%s at 2 workers) for " % (
                      balance.TARGET_SPREAD, balance.worst_split_on_target(2 * PERTURBATION_PER_WORKER))
                  + ", ".join(sorted(arms.claiming_balance()))}}


def established_by_index(port, ready):
    """The server's ESTABLISHED sockets on port, from sock_diag (ss): (total,
    [per worker index] where the owning process is a worker; None in threads
    mode, where every worker is the one process)."""
    out = subprocess.run(["ss", "-tnpH", "state", "established", "( sport = :%d )" % port],
                         capture_output=True, text=True).stdout
    index_of = {w["pid"]: w["index"] for w in ready["workers"]}
    per, total = [0] * len(ready["workers"]), 0
    for line in out.splitlines():
        total += 1
        owners = {index_of[int(p)] for p in re.findall(r"pid=(\d+)", line) if int(p) in index_of}
        if len(owners) == 1:
            per[owners.pop()] += 1
    return total, None if ready.get("mode") == "threads" else per


def counter_sample(port, ready, at):
    """One sample of the counters, taken at `at` ("held": the probe holds
    the round's connections; "after": the probe run is over). Each worker's
    load as GET /variant shows it (less the SYNs still in their window,
    given apart as syn), beside the truth: the server's ESTABLISHED sockets
    from sock_diag (ss), per worker process in process mode (the whole
    server in threads mode), plus the asking connection. held: those
    ESTABLISHED sockets (the asking connection, closed by then, not among
    them); error: the largest |counted - truth| over workers (the total's,
    in threads mode). None for an arm that keeps no counters."""
    try:
        data = peers.get_close(port, "/variant", 5)
        head, _, body = data.partition(b"\r\n\r\n")
        state = json.loads(body)
        asker = int(re.search(rb"X-Worker: (\d+)", head).group(1))
    except (OSError, ValueError, AttributeError):
        return None
    if "slots" not in state:
        return None
    n = len(ready["workers"])
    counted, syn = [0] * n, 0
    for slot in state["slots"]:
        # SYNs steered and not yet established (reuseport-bpf) are counted
        # by design until they are, or for under 1 s: reported apart.
        counted[slot["index"]] += slot["load"] - slot.get("syn", 0)
        syn += slot.get("syn", 0)
    total, truth = established_by_index(port, ready)
    sample = {"at": at, "held": total, "accounting": state.get("accounting"), "counted": counted, "truth": truth,
              "syn": syn}
    if truth is None:
        return dict(sample, error=abs(sum(counted) - total - 1))
    truth[asker] += 1
    return dict(sample, error=max(abs(c - t) for c, t in zip(counted, truth)))


def perturbation_run(prefix, ready, path, shape_name, rounds, workers):
    """One probe run of rounds x shape at 16 connections per worker, no
    pause between rounds, each round held at PERTURBATION_PAUSE_AT while the
    counters are sampled. Returns (round objects, {round: held sample});
    the probe's held lines are kept in its raw output with the rest."""
    shape = {"name": shape_name, "connections": PERTURBATION_PER_WORKER * workers}
    cmd = probe_cmd(ready["port"], shape, rounds, path,
                    extra=["--round-gap-ms", "0", "--pause-at", PERTURBATION_PAUSE_AT]
                    + PERTURBATION_SHAPE_ARGS[shape_name])
    deadline = time.monotonic() + PROBE_TIMEOUT_S
    with open(prefix + ".probe.stderr", "w") as err, registering():
        proc = register(subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                         start_new_session=True), kill_group)
    lines, held, pending = [], {}, b""
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise StepFailed("probe did not finish within %d s" % PROBE_TIMEOUT_S)
            if not select.select([proc.stdout], [], [], left)[0]:
                continue
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                break
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                lines.append(line.decode())
                try:
                    event = json.loads(line)
                except ValueError:
                    raise StepFailed("probe printed a line that is not JSON: %r" % line[:200])
                if event.get("event") != "held":
                    continue
                sample = counter_sample(ready["port"], ready, "held")
                if sample:
                    held[event["round"]] = dict(sample, open=event["open"])
                try:
                    proc.stdin.write(b"go\n")
                    proc.stdin.flush()
                except BrokenPipeError:
                    pass  # it is gone: its exit code says why
        proc.stdin.close()
        rc = proc.wait(timeout=max(deadline - time.monotonic(), 1))
    except subprocess.TimeoutExpired:
        raise StepFailed("probe did not exit within %d s" % PROBE_TIMEOUT_S)
    finally:
        if proc.poll() is None:
            kill_group(proc)
        else:
            forget(proc)
        proc.stdout.close()
    with open(prefix + ".probe.stderr") as f:
        res = subprocess.CompletedProcess(cmd, rc, "".join(l + "\n" for l in lines), f.read())
    save_probe(prefix, cmd, res)
    rounds_only = subprocess.CompletedProcess(cmd, rc, "".join(l + "\n" for l in lines if '"event"' not in l),
                                              res.stderr)
    return probe_rounds(rounds_only, rounds), held


def tracer_why(trace, ready):
    """Per worker index, from the tracer: accepts won and wakeups."""
    index_of = {w["tid"]: w["index"] for w in ready["workers"]}
    per = {}
    for t in (o for o in trace if o.get("type") == "worker"):
        i = index_of.get(t["tid"])
        if i is not None:
            per[i] = {"won": t.get("won", 0), "wakeups": t.get("wakeups", 0)}
    return [per.get(i, {"won": 0, "wakeups": 0}) for i in range(len(ready["workers"]))]


def steps(plan, raw_dir):
    chosen = arms_of(plan)
    for workers in (QUICK_PERTURBATION_WORKERS if plan.quick else PERTURBATION_WORKERS):
        for arm in chosen:
            def step(arm=arm, workers=workers):
                prefix = os.path.join(raw_dir, "perturbation-%s-w%d" % (arm, workers))
                rows = []
                with ServerRun(arms.server_args(arm), workers, prefix, arms.env(arm)) as (proc, ready, path):
                    threads = ready.get("mode") == "threads"
                    for name, runs in PERTURBATIONS:
                        if name == "stopped" and threads:
                            continue  # SIGSTOP stops every thread of the process
                        if name in PERTURBATIONS_NEED_ROOT and not is_root():
                            continue  # the report shows "-" for it
                        rows += perturbation_one(prefix, proc, ready, path, workers, name, runs, arm)
                for r in rows:
                    r.update({"arm": arm, "workers": workers, "mode": ready.get("mode", "process")})
                    if "not_applicable" not in r:
                        r["target_held"] = arms.get(arm).claims_balance
                measured = [r for r in rows if "not_applicable" not in r]
                bad = [r for r in measured if not r["within_target"]]
                samples = [s for r in rows for s in r.get("counter_samples", [])]
                text = "%d of %d rounds within the target" % (len(measured) - len(bad), len(measured))
                skipped = sorted({r["shape"] for r in rows if "not_applicable" in r})
                if skipped:
                    text += "; %s not applicable" % ", ".join(skipped)
                if bad:
                    text += " (outside: %s)" % ", ".join("%s %s" % (r["perturbation"], r["split"]) for r in bad[:4])
                for at in ("held", "after"):
                    mine = [s for s in samples if s["at"] == at]
                    if mine:
                        text += "; %s: %d samples at %s connections, counter error at most %d" % (
                            at, len(mine), "/".join(str(h) for h in sorted({s["held"] for s in mine})),
                            max(s["error"] for s in mine))
                return rows, text
            yield "%-14s %dw" % (arm, workers), step, {"arm": arm, "workers": workers, "perturbation": None}


def perturbation_one(prefix, proc, ready, path, workers, name, runs, arm):
    """The probe runs of one perturbation: rows, one per round; a run whose
    shape does not apply to the arm (arms.py's not_applicable) is not run,
    and is one row with "not_applicable" and the reason."""
    rows, seq = [], 0
    tracer = trace = hogs = None
    try:
        if name in ("tracer", "stopped"):
            tracer = Tracer(proc.pid, "%s-%s" % (prefix, name))
        if name == "hogs":
            hogs = StressHogs(PERTURBATION_HOG_CPUS).__enter__()
        for k, (shape, rounds) in enumerate(runs, 1):
            reason = arms.not_applicable(arm, NAME, shape)
            if reason:
                rows.append({"perturbation": name, "run": k, "shape": shape, "not_applicable": reason})
                continue
            run_prefix = "%s-%s-%d-%s" % (prefix, name, k, shape)
            note = None
            if name == "hogs":
                note = "stress-ng --cpu %d running" % PERTURBATION_HOG_CPUS
            if name == "synflood":
                synflood.flood("127.0.0.1", ready["port"], PERTURBATION_FLOOD_SYNS, first_port=20000 + 1000 * k)
                note = "%d SYNs right before" % PERTURBATION_FLOOD_SYNS
            timer = None
            if name == "stopped":
                victim = ready["workers"][1]["pid"]
                os.kill(victim, signal.SIGSTOP)
                timer = threading.Timer(PERTURBATION_STOP_S, os.kill, (victim, signal.SIGCONT))
                timer.start()
                note = "worker 1 SIGSTOPped for the first %d ms" % (PERTURBATION_STOP_S * 1000)
            try:
                got, held = perturbation_run(run_prefix, ready, path, shape, rounds, workers)
            finally:
                if timer:
                    timer.cancel()
                    os.kill(ready["workers"][1]["pid"], signal.SIGCONT)
            after = counter_sample(ready["port"], ready, "after")
            for i, r in enumerate(got, 1):
                seq += 1
                r = dict(r, perturbation=name, run=k, round=seq,
                         within_target=balance.within_target(list(r["counts"].values()), workers))
                if note:
                    r["note"] = note
                # This round's own samples: held in it, and, for the run's
                # last round, the one after the run (each sample on one row).
                samples = [s for s in (held.get(i), after if i == len(got) else None) if s]
                if samples:
                    r["accounting"] = samples[0]["accounting"]
                    r["counter_samples"] = [{k: v for k, v in s.items() if k != "accounting"} for s in samples]
                rows.append(r)
    finally:
        if hogs:
            hogs.__exit__()
        if tracer:
            trace = tracer.stop()
    if trace is not None:
        why = tracer_why(trace, ready)
        for r in rows:
            if "not_applicable" not in r:
                r["tracer"] = why  # over the perturbation's runs
    return rows
