"""slowview: a client keeps one worker busy in /sleep?ms=SLOWVIEW_SLEEP_MS
while bursts arrive: the split and first-byte latency per arm, and which
worker was in the view (busy_worker) -> slowview.jsonl (one line per round)."""

import os
import socket
import threading
import time

from acceptlab import arms
from probes.harness.lifecycle import StepFailed
from probes.harness.probe import probe_cmd, run_probe, split_text
from probes.harness.servers import ServerRun

NAME = "slowview"
SLOWVIEW_SLEEP_MS = 50
SLOWVIEW_CONNECTIONS = 16


def arms_of(plan):
    return [a for a in arms.in_study("slowview") if a in plan.arms]


def meta(plan):
    return {"slowview": {"arms": arms.in_study("slowview"), "sleep_ms": SLOWVIEW_SLEEP_MS,
                         "connections": SLOWVIEW_CONNECTIONS, "rounds": plan.rounds}}


def keep_busy(port, sleep_ms, stop, log):
    """Loops GET /sleep?ms=N on one keep-alive connection until stop is set:
    one worker is always inside a slow inline view."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            req = ("GET /sleep?ms=%d HTTP/1.1\r\nHost: t\r\n\r\n" % sleep_ms).encode()
            while not stop.is_set():
                s.sendall(req)
                data = b""
                while not data.endswith(b"ms\n"):
                    chunk = s.recv(4096)
                    if not chunk:
                        return
                    data += chunk
                log.append(data.split(b"X-Worker: ", 1)[1].split(b"\r", 1)[0].decode())
    except OSError as e:
        log.append("error: %s" % e)


def busy_worker(log, ready):
    """The worker that served the slow view (its answers' X-Worker, the same
    on every answer of its keep-alive connection): {"index", "pid", "tid"}
    from the ready line, so a row's per-worker counts can be read against
    it; None if the answers named more than one worker."""
    named = set(log)
    if len(named) != 1:
        return None
    index = int(named.pop())
    for w in ready["workers"]:
        if w["index"] == index:
            return {"index": index, "pid": w["pid"], "tid": w.get("tid", w["pid"])}
    return None


def steps(plan, raw_dir):
    for arm in arms_of(plan):
        def step(arm=arm):
            prefix = os.path.join(raw_dir, "slowview-%s" % arm)
            shape = {"name": "burst", "connections": SLOWVIEW_CONNECTIONS}
            with ServerRun(arms.server_args(arm), plan.workers, prefix) as (proc, ready, path):
                stop, log = threading.Event(), []
                busy = threading.Thread(target=keep_busy, args=(ready["port"], SLOWVIEW_SLEEP_MS, stop, log))
                busy.start()
                try:
                    time.sleep(0.3)  # the slow view is running before the bursts
                    rounds = run_probe(prefix, probe_cmd(ready["port"], shape, plan.rounds, path), plan.rounds)
                finally:
                    stop.set()
                    busy.join(timeout=10)
            if any(l.startswith("error") for l in log) or not log:
                raise StepFailed("the busy client failed: %s" % (log[-1] if log else "no answer"))
            rows = [dict({"arm": arm, "sleep_ms": SLOWVIEW_SLEEP_MS, "busy_worker": busy_worker(log, ready)}, **r)
                    for r in rounds]
            return rows, "%s, first byte p99 %s us" % (split_text(rows),
                                                        " ".join(str(r["first_byte_us"]["p99"]) for r in rows))
        yield "%-17s slow view %d ms" % (arm, SLOWVIEW_SLEEP_MS), step, {"arm": arm, "round": None}
