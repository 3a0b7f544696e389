"""respawn: a worker SIGSTOPped, a burst queued, the worker SIGKILLed: how
many connections are reset, and how long until the replacement serves ->
respawn.jsonl (one line per trial), with what waited in the accept queues
just before the kill (queued_at_victim: at the listeners only the killed
worker held; queued_elsewhere: at the others, a shared listener among
them). Each trial runs in a network namespace of its own (common.netns_trial:
trial() in a forked child); the shared listener is the contrast: no listener
of the victim's own."""

import os
import re
import signal
import subprocess
import time

from acceptlab import arms
from probes.harness.lifecycle import StepFailed
from probes.harness.probe import PROBE_TIMEOUT_S, probe_cmd, probe_rounds, save_probe
from probes.harness.servers import ServerRun, wait_event
from probes.studies.common import netns_trial

NAME = "respawn"
RESPAWN_CONNECTIONS = 32
RESPAWN_KILL_AFTER_S = 0.5  # the burst is connected and asking by then


def arms_of(plan):
    return list(dict.fromkeys(a for a, _ in arms.respawn_cases() if a in plan.arms))


def meta(plan):
    return {"respawn": {"arms": [{"arm": a, "migrate": m} for a, m in arms.respawn_cases()],
                        "connections": RESPAWN_CONNECTIONS, "trials": plan.rounds,
                        "kill_after_s": RESPAWN_KILL_AFTER_S}}


def queued_at_listeners(port, victim):
    """Connections waiting in accept queues on port, from sock_diag (`ss
    -ltnp`: a listener's Recv-Q is its accept queue): (at the listeners only
    victim holds, at the others). A shared listener is held by every worker,
    so what waits there is not the victim's own."""
    out = subprocess.run(["ss", "-ltnpH", "( sport = :%d )" % port], capture_output=True, text=True).stdout
    own = other = 0
    for line in out.splitlines():
        fields = line.split()
        if len(fields) < 2 or not fields[1].isdigit():
            continue
        holders = {int(p) for p in re.findall(r"pid=(\d+)", line)}
        if holders == {victim}:
            own += int(fields[1])
        else:
            other += int(fields[1])
    return own, other


def trial(arm, migrate, raw_prefix):
    """One trial, in this process's network namespace: worker 1 SIGSTOPped,
    a burst connected and asking, worker 1 SIGKILLed. Returns the row."""
    server_args = arms.server_args(arm) + (["--reuseport-migrate"] if migrate else [])
    with ServerRun(server_args, 2, raw_prefix) as (proc, ready, path):
        victim = ready["workers"][1]["pid"]
        os.kill(victim, signal.SIGSTOP)
        shape = {"name": "burst", "connections": RESPAWN_CONNECTIONS}
        cmd = probe_cmd(ready["port"], shape, 1, path, ["--timeout-ms", "5000"])
        probe = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            time.sleep(RESPAWN_KILL_AFTER_S)
            queued_own, queued_other = queued_at_listeners(ready["port"], victim)
            os.kill(victim, signal.SIGKILL)
            out, err = probe.communicate(timeout=PROBE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            probe.kill()
            probe.communicate()
            raise StepFailed("probe did not finish within %d s" % PROBE_TIMEOUT_S)
        res = subprocess.CompletedProcess(cmd, probe.returncode, out, err)
        save_probe(raw_prefix, cmd, res)
        (rnd,) = probe_rounds(res, 1)
        respawned = wait_event(proc, "respawned", 5)
    errors = rnd["errors"]
    return {"arm": arm, "migrate": migrate, "connections": rnd["connections"],
            "answered": rnd["answered"], "reset": errors["reset"] + errors["eof"],
            "timeout": errors["timeout"], "other_errors": sum(errors.values()) - errors["reset"]
            - errors["eof"] - errors["timeout"], "counts": rnd["counts"],
            "rebind_ms": respawned["since_reap_ms"] if respawned else None,
            "queued_at_victim": queued_own, "queued_elsewhere": queued_other}


def steps(plan, raw_dir):
    for arm, migrate in arms.respawn_cases():
        if arm not in plan.arms:
            continue
        for trial_no in range(1, plan.rounds + 1):
            def step(arm=arm, migrate=migrate, trial_no=trial_no):
                prefix = os.path.join(raw_dir, "respawn-%s%s-%d" % (arm, "-migrate" if migrate else "", trial_no))
                row = netns_trial(lambda: trial(arm, migrate, prefix), PROBE_TIMEOUT_S + 30,
                                  "the respawn trial of %s" % arm)
                row["trial"] = trial_no
                return [row], "%d of %d reset, rebind %s ms" % (row["reset"], row["connections"], row["rebind_ms"])
            label = "%-17s %s trial %d" % (arm + (" +migrate" if migrate else ""), "respawn", trial_no)
            yield label, step, {"arm": arm, "migrate": migrate, "trial": trial_no}
