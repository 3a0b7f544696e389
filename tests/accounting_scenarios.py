"""accounting_scenarios.py: the load counters against the truth, scenario by
scenario, in a network namespace of its own (run it under `unshare -n`;
test_accounting.py does). Prints one JSON line per scenario; the test
asserts on them.

The truth is the kernel's: the server's ESTABLISHED sockets on its port, from
sock_diag (`ss -tnp`), per owning process where processes are the workers,
and per worker from the answers themselves (every connection this script
holds was asked /pid, so it knows which worker holds it; the X-Worker
header names the index). The counters are each worker's `load` as
GET /variant shows it (summed over the index's slots), or, where a
connection of ours must not land on the worker under test, as the load
records read from memory (conftest.LoadRecords).

Scenarios (each ends with everything closed, then waits for quiescence: the
counters equal the truth, which is the asking connection alone):
  steady       N connections held, requests flowing on them: sampled 8 times,
               every worker within +-1 of the truth
  burst_close  a burst of 16 x workers, answered, closed all at once (FIN)
  rst_clients  N connections answered, then reset by the client (SO_LINGER 0)
  syn_flood    200 SYNs from a raw socket whose SYN-ACKs the kernel answers
               with RST: no connection is ever made
  syn_abort    64 SYNs whose SYN-ACKs go unanswered (the source is an address
               on a veth whose peer never replies): half-open, then given up
  busy_close   one worker blocked inline (/sleep) while the client closes
               every other connection it holds: its count drops while it
               still sleeps, not when it gets round to reading the EOFs

  python3 -m tests.accounting_scenarios --variant NAME [--workers N] [--scenarios a,b,...]
"""

import sys

if __name__ == "__main__" and not __package__:  # run by path: the packages it imports are not found
    sys.stderr.write("accounting_scenarios.py: run it as a module from the repository's top: "
                     "/usr/bin/python3 -m tests.accounting_scenarios\n")
    sys.exit(2)

import argparse
import json
import os
import socket
import subprocess
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
from probes import synflood
from probes.studies.perturbation import established_by_index  # (sock_diag's truth, as the perturbation study reads it)
from tests.conftest import SERVER, LoadRecords, kill_group, read_response

ADDR = "10.77.0.1"      # the server's address, on acct0 (a veth of our own netns)
SILENT = "10.77.0.99"   # on acct0's subnet, answered by nobody: SYN-ACKs to it go nowhere
SCENARIOS = ["steady", "burst_close", "rst_clients", "syn_flood", "syn_abort", "busy_close"]
QUIET_WITHIN_S = 1.0    # the design's bound: what is gone stops counting within 1 s
WATCH_S = 3.0           # how long quiescence is waited for before the scenario reports failure


def sh(*cmd):
    subprocess.run(cmd, check=True, capture_output=True)


def netns_setup():
    sh("ip", "link", "set", "lo", "up")
    sh("ip", "link", "add", "acct0", "type", "veth", "peer", "name", "acct1")
    sh("ip", "addr", "add", ADDR + "/24", "dev", "acct0")
    sh("ip", "link", "set", "acct0", "up")
    sh("ip", "link", "set", "acct1", "up")


class Server:
    def __init__(self, variant, workers):
        threads = variant == "handoff"
        count = ["--threads" if threads else "--workers", str(workers)]
        self.proc = subprocess.Popen([SERVER, "--variant", variant, *count, "--host", ADDR, "--port", "0"],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit("server exited before ready: %s" % self.proc.stderr.read().decode()[-300:])
        self.ready = json.loads(line)
        self.port = self.ready["port"]
        self.workers = len(self.ready["workers"])
        self.threads = threads

    def kill(self):
        kill_group(self.proc)


def connect(port):
    return socket.create_connection((ADDR, port), timeout=5)


def ask(c, path="/pid"):
    c.sendall(("GET %s HTTP/1.1\r\nHost: t\r\n\r\n" % path).encode())
    return read_response(c)


def hold(srv, n):
    """n connections, each asked /pid: [(socket, worker index)]."""
    socks = [connect(srv.port) for _ in range(n)]
    return [(c, int(ask(c)[1]["x-worker"])) for c in socks]


def counted(srv):
    """(each index's load as GET /variant shows it, the index that answered)."""
    with connect(srv.port) as c:
        _, headers, body = ask(c, "/variant")
    state = json.loads(body)
    loads = [0] * srv.workers
    for slot in state["slots"]:
        loads[slot["index"]] += slot["load"]
    return loads, int(headers["x-worker"]), state.get("accounting")


def compare(srv, held):
    """One sample: the counters, the truth from our own connections (plus
    the asking one), and sock_diag's."""
    loads, asker, accounting = counted(srv)
    at = time.monotonic()  # when the counters were read (give or take the answer's trip back)
    truth = [0] * srv.workers
    for _, index in held:
        truth[index] += 1
    truth[asker] += 1
    # The asking connection has closed by now; sock_diag sees ours alone.
    total, per = established_by_index(srv.port, srv.ready)
    ours = [t - (i == asker) for i, t in enumerate(truth)]
    return {"load": loads, "truth": truth, "accounting": accounting, "at": at,
            "ss_total": total, "ss_agrees": total == len(held) and (per is None or per == ours)}


def wait_quiet(srv, since, held=()):
    """Samples until the counters equal the truth; returns (seconds after
    since when they first did, or None; the last sample)."""
    deadline = since + WATCH_S
    while True:
        sample = compare(srv, held)
        if sample["load"] == sample["truth"]:
            return sample["at"] - since, sample
        if time.monotonic() > deadline:
            return None, sample
        time.sleep(0.02)


def close_all(held, reset=False):
    for c, _ in held:
        if reset:
            c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\1\0\0\0\0\0\0\0")
        c.close()


def steady(srv):
    held = hold(srv, 6 * srv.workers)
    stop = threading.Event()

    def traffic():
        while not stop.is_set():
            for c, _ in held:
                if stop.is_set():
                    break
                ask(c, "/")

    t = threading.Thread(target=traffic)
    t.start()
    try:
        samples = []
        for _ in range(8):
            samples.append(compare(srv, held))
            time.sleep(0.05)
    finally:
        stop.set()
        t.join()
    close_all(held)
    quiet, last = wait_quiet(srv, time.monotonic())
    worst = max(abs(l - t) for s in samples for l, t in zip(s["load"], s["truth"]))
    return {"samples": samples, "worst_error": worst, "ss_agrees": all(s["ss_agrees"] for s in samples),
            "quiet_s": quiet, "last": last}


def burst_close(srv):
    socks = [socket.socket() for _ in range(16 * srv.workers)]
    for c in socks:
        c.setblocking(False)
        try:
            c.connect((ADDR, srv.port))
        except BlockingIOError:
            pass
    for c in socks:
        c.setblocking(True)
        c.settimeout(5)
    held = [(c, int(ask(c)[1]["x-worker"])) for c in socks]
    sample = compare(srv, held)
    close_all(held)
    quiet, last = wait_quiet(srv, time.monotonic())
    return {"held_sample": sample, "quiet_s": quiet, "last": last}


def rst_clients(srv):
    held = hold(srv, 6 * srv.workers)
    close_all(held, reset=True)
    quiet, last = wait_quiet(srv, time.monotonic())
    return {"quiet_s": quiet, "last": last}


def syn_flood(srv):
    sent = synflood.flood(ADDR, srv.port, 200, source=ADDR, first_port=30000)
    done = time.monotonic()
    first = compare(srv, ())
    quiet, last = wait_quiet(srv, done)
    return {"sent": sent, "first": first, "quiet_s": quiet, "last": last}


def syn_abort(srv):
    sent = synflood.flood(ADDR, srv.port, 64, source=SILENT, first_port=40000)
    done = time.monotonic()
    first = compare(srv, ())
    quiet, last = wait_quiet(srv, done)
    half_open = subprocess.run(["ss", "-tnH", "state", "syn-recv", "( sport = :%d )" % srv.port],
                               capture_output=True, text=True).stdout.count("\n")
    return {"sent": sent, "first": first, "quiet_s": quiet, "last": last, "half_open_after": half_open}


def busy_close(srv):
    """Worker 0 answers /sleep?ms=2000 inline on one of its connections while
    the client closes its others; within 1 s (it still sleeps) its count
    must equal what it still truly holds: the sleeping connection."""
    records = LoadRecords(srv.proc.pid)
    try:
        held = hold(srv, 6 * srv.workers)
        mine = [c for c, i in held if i == 0]
        sleeper, rest = mine[0], mine[1:]
        sleeper.sendall(b"GET /sleep?ms=2000 HTTP/1.1\r\nHost: t\r\n\r\n")
        time.sleep(0.1)  # inside the handler (it cannot read anything for 2 s)
        slots = 1 if srv.threads else 2
        before = records.by_index(srv.workers, slots)
        for c in rest:
            c.close()
        closed_at = time.monotonic()
        expect = [sum(1 for c, i in held if i == k and (k != 0 or c is sleeper)) for k in range(srv.workers)]
        quiet = None
        while time.monotonic() - closed_at < 1.5:
            now = records.by_index(srv.workers, slots)
            if now == expect:
                quiet = time.monotonic() - closed_at
                break
            time.sleep(0.01)
        after = records.by_index(srv.workers, slots)
        read_response(sleeper, timeout=5)
        close_all([(c, i) for c, i in held if i != 0] + [(sleeper, 0)])
        return {"before": before, "expect": expect, "after": after, "quiet_s": quiet, "closed": len(rest)}
    finally:
        records.close()


RUN = {"steady": steady, "burst_close": burst_close, "rst_clients": rst_clients, "syn_flood": syn_flood,
       "syn_abort": syn_abort, "busy_close": busy_close}


def main():
    ap = argparse.ArgumentParser(description="The load counters against the truth (run under unshare -n).")
    ap.add_argument("--variant", required=True)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    args = ap.parse_args()
    names = [s for s in args.scenarios.split(",") if s]
    unknown = [s for s in names if s not in RUN]
    if unknown or not names:
        ap.exit(2, "accounting_scenarios.py: --scenarios %s: unknown; valid: %s\n"
                % (",".join(unknown) or "(empty)", ",".join(SCENARIOS)))
    netns_setup()
    srv = Server(args.variant, args.workers)
    try:
        for name in names:
            row = RUN[name](srv)
            print(json.dumps(dict(row, scenario=name, variant=args.variant, workers=srv.workers,
                                  accounting=srv.ready.get("accounting")), sort_keys=True), flush=True)
    finally:
        srv.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
