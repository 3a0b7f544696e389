"""harness.py: what the campaign's studies, the gate and the soak start and
stop: servers (`--port 0`, their ready and lifecycle lines), the probe, wrk,
the tracer and CPU hogs.

Everything started registers how to stop it in one clean-up registry, and
unregisters once stopped: stop_all() stops whatever is still running, the
newest first. The campaign calls it when Ctrl-C or SIGTERM ends it (its
handler, on_signal, holds the signal back while a child is being started
and registered, so none escapes the registry) and after every step that
failed; the gate and the soak call it when they end. Nothing they started
outlives them, whichever study started it.
"""

import contextlib
import importlib.util
import json
import os
import re
import select
import shlex
import shutil
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# ACCEPTLAB_TEST_SERVER lets a test substitute a server that fails on purpose.
SERVER = os.environ.get("ACCEPTLAB_TEST_SERVER") or os.path.join(ROOT, "bin", "acceptlab-server")
PROBE = os.path.join(ROOT, "bin", "acceptlab-probe")
TRACER = os.path.join(ROOT, "bin", "acceptlab-trace")
CAMPAIGN = os.path.join(ROOT, "probes", "campaign.py")  # its --respawn-trial, --reload-trial and --netns-trial
PYTHON = "/usr/bin/python3"
# ACCEPTLAB_TEST_WRK lets a test name a wrk that is not there.
WRK = os.environ.get("ACCEPTLAB_TEST_WRK") or "wrk"

READY_TIMEOUT_S = 10
STOP_TIMEOUT_S = 15
PROBE_TIMEOUT_S = 120
TRACER_ATTACH_TIMEOUT_S = 20
WRK_THREADS = 2
WRK_TIMEOUT_S = 2            # wrk's --timeout: a request slower than this counts as a timeout
WRK_SLACK_S = 30             # wrk gets its duration plus this before it is killed


def load_peers():
    """probes/peers/peers.py (the peers' configurations, starting and
    measuring them), imported rather than copied."""
    spec = importlib.util.spec_from_file_location("acceptlab_peers", os.path.join(ROOT, "probes", "peers", "peers.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


peers = load_peers()


class StepFailed(Exception):
    """A step could not be measured; the reason goes into the results (rows:
    what the step did record before it failed, written instead of a bare
    error row)."""

    def __init__(self, message, rows=None):
        super().__init__(message)
        self.rows = rows


def die(msg, code=2, prog="campaign"):
    """One line on stderr naming the program, then exit (2: bad usage)."""
    print(prog + ": " + msg, file=sys.stderr)
    sys.exit(code)


def is_root():
    return os.geteuid() == 0


def tail(path, n=200):
    try:
        with open(path) as f:
            return f.read().strip().replace("\n", " | ")[-n:] or "(no stderr)"
    except OSError:
        return "(no stderr)"


# ---- the clean-up registry ---------------------------------------------------

_running = []  # [(thing, stop)]: started and not yet stopped, oldest first
_held = 0      # > 0 while a child is being started and registered
_pending = []  # SIGINT or SIGTERM that arrived meanwhile


def on_signal(signum, frame):
    """SIGINT raises KeyboardInterrupt, SIGTERM SystemExit(130), where the
    main thread is; while a child is being started (registering()), not
    until it is registered, so a child an interrupt lands beside is still
    in the registry for stop_all."""
    if _held:
        _pending.append(signum)
        return
    _raise_for(signum)


def _raise_for(signum):
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    sys.exit(130)


def handle_signals():
    """Installs on_signal for SIGINT and SIGTERM (the campaign's)."""
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)


@contextlib.contextmanager
def registering():
    """with registering(): start a child and register it; a SIGINT or
    SIGTERM that arrives meanwhile is raised once the block is done."""
    global _held
    _held += 1
    try:
        yield
    finally:
        _held -= 1
        if not _held and _pending:
            signum = _pending[0]
            _pending.clear()
            _raise_for(signum)


def register(thing, stop):
    """Records that stop(thing) stops something just started; returns thing."""
    _running.append((thing, stop))
    return thing


def forget(thing):
    """thing has been stopped: the registry lets go of it."""
    _running[:] = [(t, s) for t, s in _running if t is not thing]


def stop_all():
    """Stops everything still registered, the newest first."""
    for thing, stop in reversed(list(_running)):
        forget(thing)
        try:
            stop(thing)
        except StepFailed:
            pass


# ---- servers ---------------------------------------------------------------

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
def peer_running(name, workers, prefix):
    """A peer configuration (probes/peers/peers.py) started fresh on a free
    port with its access log off, as the wrk studies' anchors run: yields
    the Peer, with its ready line saved at prefix.ready; stopped after, its
    configuration and logs kept at prefix.*. StepFailed "skipped: ..." when
    it cannot be had here, "... did not start: ..." when it fails to start."""
    ok, reason = peers.availability(name)
    if not ok:
        raise StepFailed("skipped: " + reason)
    peer = register(peers.Peer(name, workers=workers, access_log=False), peers.Peer.cleanup)
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


# ---- the probe -------------------------------------------------------------

def probe_cmd(port, shape, rounds, ready_path, extra=(), host="127.0.0.1"):
    cmd = [PROBE, "--target", "%s:%d" % (host, port), "--shape", shape["name"],
           "--connections", str(shape["connections"]), "--rounds", str(rounds),
           "--workers-from", ready_path, "--json", *extra]
    if "gap_ms" in shape:
        cmd += ["--gap-ms", str(shape["gap_ms"])]
    if "requests" in shape:
        cmd += ["--requests", str(shape["requests"])]
    return cmd


def save_probe(prefix, cmd, res):
    with open(prefix + ".probe.cmd", "w") as f:
        f.write(" ".join(cmd) + "\n")
    with open(prefix + ".probe.jsonl", "w") as f:
        f.write(res.stdout)
    with open(prefix + ".probe.stderr", "w") as f:
        f.write(res.stderr)


def run_probe(prefix, cmd, rounds):
    """Runs the probe; returns its round objects (exit 1, a measured failure
    such as an unanswered connection, is data, not an error)."""
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise StepFailed("probe did not finish within %d s" % PROBE_TIMEOUT_S)
    save_probe(prefix, cmd, res)
    return probe_rounds(res, rounds)


def probe_rounds(res, rounds):
    if res.returncode not in (0, 1):
        raise StepFailed("probe exited %d: %s" % (res.returncode, res.stderr.strip()[-200:]))
    out = []
    for line in res.stdout.splitlines():
        obj = json.loads(line)
        if obj.pop("type") == "round":
            out.append(obj)
    if len(out) != rounds:
        raise StepFailed("probe reported %d rounds, expected %d" % (len(out), rounds))
    return out


def split_text(rows):
    """The rounds' splits, one after another ("!" marks a round with an unanswered connection)."""
    return " ".join(r["split"] + ("!" if r.get("unanswered") else "") for r in rows)


# ---- the tracer --------------------------------------------------------------

class Tracer:
    """bin/acceptlab-trace --pgid PGID --json, started before the probe and
    stopped (SIGINT) after it; its output is kept at raw_prefix.trace.jsonl."""

    def __init__(self, pgid, raw_prefix, timeline=False):
        self.raw = raw_prefix + ".trace.jsonl"
        err = open(raw_prefix + ".trace.stderr", "w")
        with registering():
            self.proc = subprocess.Popen([TRACER, "--pgid", str(pgid), "--json"]
                                         + (["--timeline"] if timeline else []),
                                         stdout=subprocess.PIPE, stderr=err, start_new_session=True)
            err.close()
            self.proc.captured = b""
            register(self, Tracer.stop)
        deadline = time.monotonic() + TRACER_ATTACH_TIMEOUT_S
        while b"\n" not in self.proc.captured:
            left = deadline - time.monotonic()
            if left <= 0 or not read_output(self.proc, left):
                self.stop()
                raise StepFailed("tracer did not attach: " + tail(raw_prefix + ".trace.stderr"))

    def stop(self):
        """Returns the tracer's JSON objects (after its exit)."""
        forget(self)
        try:
            os.killpg(self.proc.pid, signal.SIGINT)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and read_output(self.proc, deadline - time.monotonic()):
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.proc.stdout.close()
        with open(self.raw, "wb") as f:
            f.write(self.proc.captured)
        if self.proc.returncode != 0:
            raise StepFailed("tracer exited %s" % self.proc.returncode)
        return server_events(self.proc)


# ---- CPU hogs ----------------------------------------------------------------

def start_hog(cmd):
    """Starts a CPU hog in a session of its own; kill_group (or stop_all) kills it."""
    with registering():
        return register(subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL), kill_group)


def kill_group(proc):
    """Kills a registered child started in a session of its own (a hog, a
    probe), its whole process group, waits for it and forgets it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()
    forget(proc)


class StressHogs:
    """with StressHogs(n): stress-ng --cpu n for the block's length."""

    def __init__(self, n):
        self.n = n

    def __enter__(self):
        if not shutil.which("stress-ng"):
            raise StepFailed("stress-ng is missing (make deps installs it)")
        self.proc = start_hog(["stress-ng", "--cpu", str(self.n), "--quiet"])
        time.sleep(0.3)  # the hogs are on the CPUs before the first round
        if self.proc.poll() is not None:
            kill_group(self.proc)
            raise StepFailed("stress-ng --cpu %d exited %s at once" % (self.n, self.proc.returncode))
        return self

    def __exit__(self, *exc):
        kill_group(self.proc)
        return False


# ---- wrk -------------------------------------------------------------------

WRK_UNITS_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0, "h": 3600000.0}
WRK_TIME_RE = r"([0-9]+(?:\.[0-9]+)?)(us|ms|s|m|h)"


def wrk_ms(text):
    """wrk's time format ("273.00us", "1.21ms", "2.00s", "1.00m") in ms."""
    m = re.fullmatch(WRK_TIME_RE, text.strip())
    if not m:
        raise ValueError("wrk output: %r is not a time" % text)
    return round(float(m.group(1)) * WRK_UNITS_MS[m.group(2)], 6)


def parse_wrk(text):
    """Parses wrk 4.x's text report (run with --latency) into
    {requests_per_s, requests, duration_s, latency_ms: {p50, p99}, errors}.
    errors always carries connect/read/write/timeout (wrk's "Socket errors"
    line, printed only when one is non-zero) and non_2xx_3xx (its "Non-2xx or
    3xx responses" line, likewise). Raises ValueError when a needed line is missing."""
    rps = re.search(r"^Requests/sec:\s*([0-9]+(?:\.[0-9]+)?)\s*$", text, re.M)
    if not rps:
        raise ValueError("wrk output has no Requests/sec line")
    total = re.search(r"^\s*([0-9]+) requests in " + WRK_TIME_RE + r",", text, re.M)
    if not total:
        raise ValueError("wrk output has no 'N requests in T' line")
    dist = text.split("Latency Distribution", 1)
    if len(dist) != 2:
        raise ValueError("wrk output has no Latency Distribution (was --latency given?)")
    latency = {}
    for pct in ("50", "99"):
        m = re.search(r"^\s*" + pct + r"(?:\.0+)?%\s+(\S+)\s*$", dist[1], re.M)
        if not m:
            raise ValueError("wrk output has no %s%% latency line" % pct)
        latency["p" + pct] = wrk_ms(m.group(1))
    errors = {"connect": 0, "read": 0, "write": 0, "timeout": 0, "non_2xx_3xx": 0}
    sock = re.search(r"^\s*Socket errors:\s*connect ([0-9]+), read ([0-9]+), write ([0-9]+), "
                     r"timeout ([0-9]+)\s*$", text, re.M)
    if sock:
        for key, value in zip(("connect", "read", "write", "timeout"), sock.groups()):
            errors[key] = int(value)
    elif "Socket errors" in text:
        raise ValueError("wrk output: a Socket errors line this parser does not know")
    status = re.search(r"^\s*Non-2xx or 3xx responses:\s*([0-9]+)\s*$", text, re.M)
    if status:
        errors["non_2xx_3xx"] = int(status.group(1))
    elif "Non-2xx" in text:
        raise ValueError("wrk output: a Non-2xx line this parser does not know")
    return {"requests_per_s": float(rps.group(1)), "requests": int(total.group(1)),
            "duration_s": round(wrk_ms(total.group(2) + total.group(3)) / 1000.0, 6),
            "latency_ms": latency, "errors": errors}


def need_wrk():
    exe = shutil.which(WRK)
    if not exe:
        raise StepFailed("skipped: wrk not installed")
    return exe


def _task_files(pid, name):
    """The text of /proc/<pid>/task/<tid>/<name> for each thread of pid that
    still has it (a thread or process gone meanwhile is left out)."""
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return
    for t in tids:
        try:
            with open("/proc/%d/task/%s/%s" % (pid, t, name)) as f:
                yield f.read()
        except OSError:
            pass


def process_tree(pid):
    """pid and every process descended from it (each task's children, from
    /proc), parents first."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop(0)
        out.append(p)
        todo += [int(c) for text in _task_files(p, "children") for c in text.split()]
    return out


def pin_tree(pid, cpus):
    """Every thread of pid's process tree (a server's supervisor and workers,
    or a peer's master and workers) onto cpus; a thread or process created
    later inherits its creator's CPUs. Raises StepFailed when one cannot be
    moved (a task that ended meanwhile is left out)."""
    for p in process_tree(pid):
        try:
            tids = os.listdir("/proc/%d/task" % p)
        except OSError:
            continue
        for t in tids:
            try:
                os.sched_setaffinity(int(t), cpus)
            except ProcessLookupError:
                pass
            except OSError as e:
                raise StepFailed("cannot pin task %s of %d to CPUs %s: %s" % (t, pid, sorted(cpus), e))


SWITCHES_RE = re.compile(r"^(voluntary_ctxt_switches|nonvoluntary_ctxt_switches):\s*(\d+)$", re.M)


def task_counts(pids):
    """What the scheduler has counted so far for every thread of pids, read
    task by task in one pass: {"cpu_ns": on-CPU time, user and system (each
    task's schedstat: the scheduler's own count, not 10 ms ticks),
    "voluntary" and "involuntary": its context switches (status's
    voluntary_ctxt_switches, nonvoluntary_ctxt_switches: it blocked, or was
    preempted)}. A task gone between its two files is left out of both."""
    totals = {"cpu_ns": 0, "voluntary": 0, "involuntary": 0}
    for p in pids:
        try:
            tids = os.listdir("/proc/%d/task" % p)
        except OSError:
            continue
        for t in tids:
            base = "/proc/%d/task/%s/" % (p, t)
            try:
                with open(base + "schedstat") as f:
                    sched = f.read().split()
                with open(base + "status") as f:
                    status = f.read()
            except OSError:
                continue
            if not sched:
                continue
            found = dict(SWITCHES_RE.findall(status))
            totals["cpu_ns"] += int(sched[0])
            totals["voluntary"] += int(found.get("voluntary_ctxt_switches", 0))
            totals["involuntary"] += int(found.get("nonvoluntary_ctxt_switches", 0))
    return totals


class CpuMeter:
    """The CPU time and the context switches of a server inside the with
    block: every thread of its process tree (the supervisor and every
    worker, or a peer's master and workers), sampled before and after
    (task_counts). A process that ends inside the block takes its counts
    with it: the studies that use this stop nothing inside."""

    def __init__(self, root_pid):
        self.root = root_pid
        self.ns = None
        self.switches = None  # {"voluntary": n, "involuntary": n} over the block

    def __enter__(self):
        self.pids = process_tree(self.root)
        self.start = task_counts(self.pids)
        return self

    def __exit__(self, *exc):
        end = task_counts(self.pids)
        self.ns = end["cpu_ns"] - self.start["cpu_ns"]
        self.switches = {k: end[k] - self.start[k] for k in ("voluntary", "involuntary")}
        return False


def cpu_fields(ns, requests, accepted=None, switches=None):
    """The row fields for a server's CPU time over a wrk run: the total in µs,
    per request wrk completed, and per connection the server accepted (when
    known); with switches (CpuMeter's), its voluntary and involuntary
    context switches, in all and per request wrk completed."""
    us = ns / 1000.0
    out = {"server_cpu_us": round(us, 1),
           "cpu_us_per_request": round(us / requests, 4) if requests else None,
           "accepted": accepted,
           "cpu_us_per_connection": round(us / accepted, 3) if accepted else None}
    if switches is not None:
        for kind in ("voluntary", "involuntary"):
            out["ctx_" + kind] = switches[kind]
            out["ctx_%s_per_request" % kind] = round(switches[kind] / requests, 5) if requests else None
    return out


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


def worker_exits(proc):
    """The server's worker_exit lines (each worker's counts as it left)."""
    return [e for e in server_events(proc) if e.get("event") == "worker_exit"]


def accepted_of(proc):
    """Connections the server's workers accepted (their worker_exit lines'
    "accepted"), or None when they printed none."""
    lines = worker_exits(proc)
    return sum(e.get("accepted", 0) for e in lines) if lines else None


def run_wrk(prefix, port, path, connections, seconds, headers=(), cpus=None):
    """Runs wrk against 127.0.0.1:port, saves its command and verbatim output
    under raw/ (prefix.wrk.cmd, .wrk.txt, .wrk.stderr); returns parse_wrk's dict.
    With cpus, wrk runs on those CPUs only."""
    return finish_wrk(start_wrk(prefix, port, path, connections, seconds, headers, cpus=cpus))


def start_wrk(prefix, port, path, connections, seconds, headers=(), threads=WRK_THREADS, cpus=None):
    """Starts wrk (see run_wrk) and returns it; finish_wrk waits for it. With
    cpus, wrk and its threads run on those CPUs only."""
    cmd = [need_wrk(), "-t%d" % threads, "-c%d" % connections, "-d%ds" % seconds, "--latency",
           "--timeout", "%ds" % WRK_TIMEOUT_S]
    for h in headers:
        cmd += ["-H", h]
    cmd.append("http://127.0.0.1:%d%s" % (port, path))
    with open(prefix + ".wrk.cmd", "w") as f:
        f.write(shlex.join(cmd) + "\n")
    with registering():
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None)
        proc.wrk = (prefix, seconds)
        return register(proc, kill_wrk)


def kill_wrk(proc):
    """Stops a wrk from start_wrk that is still running (its output is not kept)."""
    forget(proc)
    if proc.poll() is None:
        proc.kill()
        proc.communicate()


def finish_wrk(proc):
    """Waits for a wrk from start_wrk, saves its output, parses it."""
    prefix, seconds = proc.wrk
    try:
        out, err = proc.communicate(timeout=seconds + WRK_SLACK_S)
    except subprocess.TimeoutExpired:
        kill_wrk(proc)
        raise StepFailed("wrk did not finish within %d s" % (seconds + WRK_SLACK_S))
    forget(proc)
    res = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    with open(prefix + ".wrk.txt", "w") as f:
        f.write(res.stdout)
    with open(prefix + ".wrk.stderr", "w") as f:
        f.write(res.stderr)
    if res.returncode != 0:
        why = " ".join((res.stderr.strip() or res.stdout.strip() or "no output").split())
        raise StepFailed("wrk exited %d: %s" % (res.returncode, why[-200:]))
    try:
        return parse_wrk(res.stdout)
    except ValueError as e:
        raise StepFailed(str(e))
