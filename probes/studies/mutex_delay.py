"""mutex_delay: nginx's accept mutex at each --accept-mutex-delay of
MUTEX_DELAYS_MS: the burst's split and first-byte latency -> mutex_delay.jsonl
(one line per round). It runs when the arm MUTEX_ARM is chosen."""

import os

from acceptlab import arms
from probes.harness.probe import probe_cmd, run_probe, split_text
from probes.harness.servers import ServerRun

NAME = "mutex_delay"
MUTEX_ARM = "mutex"
MUTEX_DELAYS_MS = [500, 50, 0]
CONNECTIONS = 32


def arms_of(plan):
    return [MUTEX_ARM] if MUTEX_ARM in plan.arms else []


def meta(plan):
    return {"mutex_delay": {"delays_ms": MUTEX_DELAYS_MS, "connections": CONNECTIONS, "rounds": plan.rounds}}


def steps(plan, raw_dir):
    if MUTEX_ARM not in plan.arms:
        return
    for delay in MUTEX_DELAYS_MS:
        def step(delay=delay):
            prefix = os.path.join(raw_dir, "mutex_delay-%d" % delay)
            shape = {"name": "burst", "connections": CONNECTIONS}
            server_args = arms.server_args(MUTEX_ARM) + ["--accept-mutex-delay", str(delay)]
            with ServerRun(server_args, plan.workers, prefix) as (proc, ready, path):
                rounds = run_probe(prefix, probe_cmd(ready["port"], shape, plan.rounds, path), plan.rounds)
            rows = [dict({"arm": MUTEX_ARM, "delay_ms": delay}, **r) for r in rounds]
            return rows, "%s, first byte p99 %s us" % (split_text(rows),
                                                        " ".join(str(r["first_byte_us"]["p99"]) for r in rows))
        yield "%-17s delay %d ms" % (MUTEX_ARM, delay), step, {"arm": MUTEX_ARM, "delay_ms": delay, "round": None}
