"""servers: our server and the peers' servers, started on an ephemeral port
and stopped however the step ends. start_server / ServerRun (`--port 0`:
its ready line, its lifecycle lines kept in proc.captured and saved when it
stops), peer_running (a peer configuration from probes/peers/peers.py), and
what a server printed: its events, its workers' exit lines (what each
accepted and served, its epoll_wait returns), its hand-offs."""

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import time

from acceptlab.paths import ROOT
from probes.harness.lifecycle import StepFailed, forget, register, registering, tail
from probes.peers import peers  # the peers' configurations, starting and measuring them

# ACCEPTLAB_TEST_SERVER lets a test substitute a server that fails on purpose.
SERVER = os.environ.get("ACCEPTLAB_TEST_SERVER") or os.path.join(ROOT, "bin", "acceptlab-server")

READY_TIMEOUT_S = 10
STOP_TIMEOUT_S = 15


def start_server(server_args, workers, raw_prefix, env=None):
    """Starts a server on an ephemeral port; returns (proc, ready dict, ready path).
    Its stdout (lifecycle JSON lines) is kept in proc.captured and saved to
    raw_prefix.server.jsonl when it stops."""
    err = open(raw_prefix + ".server.stderr", "w")
    server_args = list(server_args)
    if "--threads" in server_args:
        at = server_args.index("--threads") + 1
        server_args[at:at] = [str(workers)]
    else:
        server_args += ["--workers", str(workers)]
    with registering():
        proc = subprocess.Popen([SERVER, *server_args, "--port", "0"],
                                stdout=subprocess.PIPE, stderr=err, start_new_session=True,
                                env=dict(os.environ, **(env or {})))
        err.close()
        proc.raw_out = raw_prefix + ".server.jsonl"
        proc.captured = b""
        register(proc, stop_server)
    deadline = time.monotonic() + READY_TIMEOUT_S
    while b"\n" not in proc.captured:
        left = deadline - time.monotonic()
        if left <= 0:
            raise StepFailed("server did not become ready within %d s" % READY_TIMEOUT_S)
        if not read_output(proc, left):
            proc.wait()
            raise StepFailed("server exited %s before ready: %s"
                             % (proc.returncode, tail(raw_prefix + ".server.stderr")))
    line = proc.captured.split(b"\n", 1)[0].decode()
    ready = json.loads(line)
    if ready.get("event") != "ready":
        raise StepFailed("server's first line is not its ready line: " + line[:200])
    path = raw_prefix + ".ready"
    with open(path, "w") as f:
        f.write(line + "\n")
    return proc, ready, path


def read_output(proc, timeout):
    """Reads what a child we started (a server, the tracer) printed within
    timeout into proc.captured; False at EOF."""
    fd = proc.stdout.fileno()
    if select.select([fd], [], [], timeout)[0]:
        chunk = os.read(fd, 65536)
        if not chunk:
            return False
        proc.captured += chunk
    return True


def server_events(proc):
    """The JSON lines a child we started printed (proc.captured)."""
    return [json.loads(l) for l in proc.captured.decode(errors="replace").splitlines() if l.startswith("{")]


def wait_event(proc, event, timeout):
    """Waits for a lifecycle line of this kind; returns it or None."""
    deadline = time.monotonic() + timeout
    while True:
        found = [e for e in server_events(proc) if e.get("event") == event]
        if found:
            return found[0]
        left = deadline - time.monotonic()
        if left <= 0 or not read_output(proc, min(left, 0.1)):
            return None


def stop_server(proc):
    """SIGTERM, wait, SIGKILL the group if it lingers; saves the server's
    output. Returns the exit code."""
    try:
        os.killpg(proc.pid, signal.SIGCONT)
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    try:
        rc = proc.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        rc = None
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # anything left in the group
    except ProcessLookupError:
        pass
    if rc is None:
        rc = proc.wait()
    deadline = time.monotonic() + 1.0  # the rest of its output, up to EOF
    while time.monotonic() < deadline and read_output(proc, deadline - time.monotonic()):
        pass
    proc.stdout.close()
    with open(proc.raw_out, "wb") as f:
        f.write(proc.captured)
    forget(proc)
    return rc


@contextlib.contextmanager
def peer_running(name, workers, prefix, access_log=False):
    """A peer configuration (probes/peers/peers.py) started fresh on a free
    port with its access log off, as the wrk studies' anchors run (on with
    access_log, for a study that reads nginx's record of who served): yields
    the Peer, with its ready line saved at prefix.ready; stopped after, its
    configuration and logs kept at prefix.*. StepFailed "skipped: ..." when
    it cannot be had here, "... did not start: ..." when it fails to start."""
    ok, reason = peers.availability(name)
    if not ok:
        raise StepFailed("skipped: " + reason)
    peer = register(peers.Peer(name, workers=workers, access_log=access_log), peers.Peer.cleanup)
    try:
        try:
            peer.start()
        except RuntimeError as e:
            raise StepFailed("%s did not start: %s" % (name, e))
        with open(prefix + ".ready", "w") as f:
            f.write(json.dumps(peer.ready, separators=(",", ":")) + "\n")
        yield peer
    finally:
        peer.stop()
        peer.keep(prefix)
        peer.cleanup()
        forget(peer)


class ServerRun:
    """with ServerRun(...) as (proc, ready, ready_path): stops it on exit."""

    def __init__(self, server_args, workers, raw_prefix, env=None):
        self.args = (server_args, workers, raw_prefix, env)

    def __enter__(self):
        self.proc, ready, path = start_server(*self.args)
        return self.proc, ready, path

    def __exit__(self, *exc):
        rc = stop_server(self.proc)
        if rc != 0:
            print("campaign: warning: server %s exited %s on SIGTERM" % (" ".join(self.args[0]), rc),
                  file=sys.stderr)
        return False


def handoffs_of(proc):
    """handoff arms: connections the threads handed to each other over the
    server's life (its handoff_exit lines); None for other variants."""
    exits = [e for e in server_events(proc) if e.get("event") == "handoff_exit"]
    return sum(e.get("handed", 0) for e in exits) if exits else None


def worker_exits(proc):
    """The server's worker_exit lines (each worker's counts as it left)."""
    return [e for e in server_events(proc) if e.get("event") == "worker_exit"]


def accepted_of(proc):
    """Connections the server's workers accepted (their worker_exit lines'
    "accepted"), or None when they printed none."""
    lines = worker_exits(proc)
    return sum(e.get("accepted", 0) for e in lines) if lines else None


def loop_fields(proc):
    """Requests per epoll_wait return, from the server's worker_exit lines
    (each worker's requests answered and epoll_pwait returns that delivered
    events, over its life): per worker, and over all workers. None for each
    when the lines do not carry the counts."""
    lines = sorted(worker_exits(proc), key=lambda e: e.get("index", 0))
    if not lines or not all(isinstance(e.get("epoll_returns"), int) for e in lines):
        return {"requests_per_epoll_return": None, "worker_loops": None}
    per = [{"index": e.get("index"), "requests": e.get("requests", 0), "epoll_returns": e["epoll_returns"],
            "requests_per_epoll_return": round(e.get("requests", 0) / e["epoll_returns"], 4)
            if e["epoll_returns"] else None} for e in lines]
    returns = sum(w["epoll_returns"] for w in per)
    return {"requests_per_epoll_return": round(sum(w["requests"] for w in per) / returns, 4) if returns else None,
            "worker_loops": per}
