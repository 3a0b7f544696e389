"""acceptlab peers: servers nobody here wrote, measured by the same probe.

Each peer configuration (nginx x4, HAProxy x3, Node.js cluster x2) is written
into a temp dir, started in its own session on 127.0.0.1 and a free port, and
described by an acceptlab-style ready line file, so that
`bin/acceptlab-probe --workers-from FILE` works against it:

  {"event":"ready","port":P,"variant":"nginx-default","mode":"process",
   "workers":[{"index":0,"pid":1234,"tid":1234}, ...]}

nginx and Node answer their worker's pid (mode "process"); HAProxy answers
`%[thread]`, its thread number, so its ready line says "mode":"threads" and
each worker's "tid" is that thread number ("pid" is HAProxy's own pid).

  python3 -m probes.peers.peers list
                                      each configuration: available or why not
  python3 -m probes.peers.peers start NAME [--ready-file F]
                                      run one peer until SIGTERM / Ctrl-C
  python3 -m probes.peers.peers measure --out DIR [--rounds 3] [--peers LIST] [--no-trace]
                                      burst 32, ramp 32, keepalive 32x4 and
                                      oneshot 10x8, each --rounds times, into
                                      DIR/peers.jsonl (a line per round), the
                                      tools' own output under DIR/raw/

Each peer is started once for all its shapes, and as root acceptlab-trace
runs beside it once, across all of them. The campaign's `peers` study
(probes/studies/peers.py, through probes/harness/servers.py) imports this module
and calls measure_one() per peer, so both write the same rows; the cost
study's nginx anchor (probes/studies/cost.py) starts
Peer("nginx-default", access_log=False), and the burst study's
(probes/studies/burst.py) Peer("nginx-work", access_log=False), an anchor
configuration (ANCHORS) the peers study does not run: /work?us=N spins N us
of CPU in embedded perl (Debian's libnginx-mod-http-perl), then answers.

Exit: 0 ok, 1 a measurement failed, 2 usage error (one line naming it).
"""

import sys

if __name__ == "__main__" and not __package__:  # run by path: the packages it imports are not found
    sys.stderr.write("peers.py: run it as a module from the repository's top: "
                     "/usr/bin/python3 -m probes.peers.peers\n")
    sys.exit(2)

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time

from probes.peers import software
from probes.peers.software import base, node

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PROBE = os.path.join(ROOT, "bin", "acceptlab-probe")
TRACE = os.path.join(ROOT, "bin", "acceptlab-trace")
CLUSTER_JS = node.CLUSTER_JS
WORKERS = 2

# The peers: the configurations of the softwares that answer every request
# with their worker's id, measured by the probe asking /pid:
# name -> (software, setting).
PEERS = {name: cfg for name, cfg in software.CONFIGS.items() if software.SOFTWARE[cfg[0]].answers_pid}
# Configurations that are not peers (the peers study does not run them): an
# anchor a study starts beside its arms. nginx-work answers /work?us=N by
# spinning N us of the worker's CPU in embedded perl before it answers its
# pid, as our server's /work does (the burst study's nginx row).
ANCHORS = {
    "nginx-work": ("nginx", "work"),
}
CONFIGS = {**software.CONFIGS, **ANCHORS}

# The probe shapes. A round of burst, ramp and keepalive is one probe round;
# a round of oneshot is one probe run of "rounds" rounds of "connections"
# sequential connections (the placement study's 10 x 8), counted together.
SHAPES = [
    {"name": "burst", "connections": 32},
    {"name": "ramp", "connections": 32, "gap_ms": 10},
    {"name": "keepalive", "connections": 32, "requests": 4},
    {"name": "oneshot", "connections": 8, "rounds": 10},
]


def shape_args(shape):
    """The probe's arguments for a shape (without --rounds for the round-per-run shapes)."""
    args = ["--connections", str(shape["connections"])]
    for key, flag in (("gap_ms", "--gap-ms"), ("requests", "--requests"), ("rounds", "--rounds")):
        if key in shape:
            args += [flag, str(shape[key])]
    return args


def shape_connections(shape):
    """Connections in one of the shape's rounds (oneshot: the whole run)."""
    return shape["connections"] * shape.get("rounds", 1)


class UsageError(Exception):
    pass


class Parser(argparse.ArgumentParser):
    def error(self, message):
        sys.stderr.write("peers.py: %s\n" % message)
        sys.exit(2)


def log(msg):
    print("peers: " + msg, flush=True)


def which(prog):
    return base.which(prog)


def software_version(name):
    """The software's version as its own -v says it, or None (missing)."""
    sw = software.SOFTWARE.get(name)
    return sw.version() if sw and sw.path() else None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def availability(name, workers=WORKERS):
    """(True, None) or (False, reason): the software is missing, or this
    version rejects the configuration (checked with the software itself,
    where it has a check)."""
    key, setting = CONFIGS[name]
    sw = software.SOFTWARE[key]
    if not sw.path():
        return False, "%s is not installed (Debian package %s; `make deps` installs it as root)" % (
            key, " and ".join(sw.packages))
    with tempfile.TemporaryDirectory(prefix="acceptlab-peer-check-") as d:
        os.chmod(d, 0o755)
        cmd = sw.check_command(setting, d, free_port(), workers)
        if not cmd:
            return True, None
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    if out.returncode != 0:
        text = (out.stderr + out.stdout).strip().splitlines()
        alert = next((l for l in text if "ALERT" in l or "emerg" in l), text[0] if text else "rejected")
        alert = re.sub(r"^\[ALERT\]\s*\(\d+\)\s*:\s*", "", alert).strip()
        alert = alert.replace(d, "<dir>")
        return False, "%s rejects this configuration: %s" % (sw.version() or key, alert)
    return True, None


# --- a running peer -------------------------------------------------------

def get_close(port, path, timeout):
    """One GET path with Connection: close on 127.0.0.1:port: everything the
    server sent until it closed. Raises OSError. (The campaign uses it too.)"""
    return base.http_get(port, path, timeout)


def ask(port, timeout=1.0):
    """One GET /peer-ready with Connection: close (not /pid, so the access
    log's /pid lines are the probe's alone); the first body line, or None."""
    try:
        data = get_close(port, "/peer-ready", timeout)
    except OSError:
        return None
    head, _, body = data.partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 200"):
        return None
    return body.decode(errors="replace").splitlines()[0].strip() if body else None


class Peer:
    """One configuration of a server software (probes/peers/software/)
    running in its own session. Always stop() it."""

    def __init__(self, name, workdir=None, workers=WORKERS, access_log=True):
        if name not in CONFIGS:
            raise UsageError("unknown peer %s" % name)
        self.name = name
        self.software, self.setting = CONFIGS[name]
        self.sw = software.SOFTWARE[self.software]
        self.workers = workers
        self.log_requests = access_log
        self.own_dir = workdir is None
        self.dir = workdir or tempfile.mkdtemp(prefix="acceptlab-peer-%s-" % name)
        os.makedirs(self.dir, exist_ok=True)
        os.chmod(self.dir, 0o755)  # servers that drop root read their files as another user
        self.proc = None
        self.port = None
        self.ready = None
        self.ready_file = os.path.join(self.dir, "ready.json")
        # The log the peers study checks the probe's counts against (nginx's).
        self.access_log = (os.path.join(self.dir, self.sw.log)
                           if self.software == "nginx" and access_log else None)
        self.version = self.sw.version() if self.sw.path() else None

    def start(self, timeout=None):
        last = None
        for _ in range(3):  # a free port can be taken between the pick and the bind
            try:
                self._start_once(free_port(), timeout or self.sw.start_timeout)
                return self
            except RuntimeError as e:
                last = e
                self.stop()
        raise last

    def _answers(self, port):
        """Up: a peer that answers its worker's id gives a 200 with one;
        any other a complete answer (or its own readiness check)."""
        return ask(port) is not None if self.sw.answers_pid else self.sw.ready(port)

    def _start_once(self, port, timeout):
        if not self.sw.path():
            raise RuntimeError("%s is not installed" % self.software)
        cmd, extra = self.sw.command(self.setting, self.dir, port, self.workers, self.log_requests)
        out = open(os.path.join(self.dir, "stdout.log"), "wb")
        err = open(os.path.join(self.dir, "stderr.log"), "wb")
        self.proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                     start_new_session=True, env=dict(os.environ, **extra), cwd=self.dir)
        out.close()
        err.close()
        self.port = port
        deadline = time.monotonic() + timeout
        workers = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("%s exited with %s: %s" % (self.name, self.proc.returncode, self._stderr_tail(3)))
            workers = self.sw.workers(self.proc, self.dir, self.workers)
            if workers and self._answers(port):
                break
            time.sleep(0.05)
        else:
            raise RuntimeError("%s did not answer on port %d within %.0f s: %s"
                               % (self.name, port, timeout, self._stderr_tail(3)))
        self.ready = {"event": "ready", "port": port, "variant": self.name, "mode": self.sw.mode,
                      "software": self.version,
                      "workers": [{"index": i, "pid": pid, "tid": tid} for i, (pid, tid) in enumerate(workers)],
                      **self.sw.ready_extra(self.dir)}
        with open(self.ready_file, "w") as f:
            f.write(json.dumps(self.ready, separators=(",", ":")) + "\n")

    def _stderr_tail(self, lines=1):
        """The last lines of its stderr and error log (the temp dir named <dir>)."""
        texts = []
        for fn in ("stderr.log", "error.log"):
            try:
                with open(os.path.join(self.dir, fn), errors="replace") as f:
                    texts += [l.strip() for l in f if l.strip()]
            except OSError:
                pass
        return (" | ".join(texts[-lines:]) if texts else "no message").replace(self.dir, "<dir>")

    def stop(self, grace=3.0):
        """SIGTERM the whole group (nginx: fast shutdown), then SIGKILL it."""
        if self.proc is None:
            return
        pgid = self.proc.pid
        for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(pgid, sig)
            except ProcessLookupError:
                break
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline:
                self.proc.poll()
                if not group_alive(pgid):
                    break
                time.sleep(0.05)
            else:
                continue
            break
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        self.proc = None

    KEPT = ("access.log", "error.log", "stdout.log", "stderr.log")

    def keep(self, raw_prefix):
        """Copies the peer's configuration and logs to raw_prefix.<file>
        (the temp dir goes with cleanup())."""
        for fn in self.sw.files + self.KEPT + ((self.sw.log,) if self.sw.log not in self.KEPT else ()):
            path = os.path.join(self.dir, fn)
            if os.path.exists(path):
                shutil.copyfile(path, "%s.%s" % (raw_prefix, fn))

    def cleanup(self):
        self.stop()
        if self.own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            self.cleanup()
            raise

    def __exit__(self, *exc):
        self.cleanup()


def group_alive(pgid):
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # zombies count as gone
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % pid) as f:
                st = f.read()
        except OSError:
            continue
        fields = st[st.rfind(")") + 2:].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


def access_log_counts(path, start=0):
    """Per-pid request counts in an nginx access log (format 'peer') from a
    byte offset; returns (counts, end offset)."""
    counts = {}
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read()
    for line in data.decode(errors="replace").splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[3].startswith("/pid"):
            counts[parts[0]] = counts.get(parts[0], 0) + 1
    return counts, start + len(data)


def settled_log_counts(path, start, expected, wait=3.0):
    """access_log_counts once the log holds `expected` requests (nginx logs a
    request just after its answer is sent), or what it holds after `wait` s."""
    deadline = time.monotonic() + wait
    while True:
        counts, _ = access_log_counts(path, start) if os.path.exists(path) else ({}, start)
        if sum(counts.values()) >= expected or time.monotonic() > deadline:
            return counts
        time.sleep(0.05)


# --- measuring ------------------------------------------------------------

def run_probe(peer, shape, args, raw_prefix=None):
    """Runs the probe against a peer; keeps its command and verbatim output at
    raw_prefix.probe.{cmd,jsonl,stderr} when given. Returns (JSON lines, exit)."""
    cmd = [PROBE, "--target", "127.0.0.1:%d" % peer.port, "--shape", shape,
           "--workers-from", peer.ready_file, "--json", *args]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if raw_prefix:
        for suffix, text in ((".probe.cmd", " ".join(cmd) + "\n"), (".probe.jsonl", out.stdout),
                             (".probe.stderr", out.stderr)):
            with open(raw_prefix + suffix, "w") as f:
                f.write(text)
    lines = [json.loads(l) for l in out.stdout.splitlines() if l.startswith("{")]
    if out.returncode == 2 or not lines:
        raise RuntimeError("probe %s exit %d: %s" % (shape, out.returncode, out.stderr.strip()[-300:]))
    return lines, out.returncode


class Tracer:
    """acceptlab-trace --port P --json beside a shape (root only)."""

    def __init__(self, port, outpath):
        self.outpath = outpath
        self.out = open(outpath, "w+b")
        self.proc = subprocess.Popen([TRACE, "--port", str(port), "--json"], stdout=self.out,
                                     stderr=subprocess.PIPE, start_new_session=True)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode(errors="replace").strip()
                raise RuntimeError("acceptlab-trace exited %d: %s" % (self.proc.returncode, err[-300:]))
            with open(outpath, "rb") as f:
                if b'"attached"' in f.read():
                    return
            time.sleep(0.05)
        self.kill()
        raise RuntimeError("acceptlab-trace did not attach within 30 s")

    def finish(self):
        try:
            os.killpg(self.proc.pid, signal.SIGINT)
        except ProcessLookupError:
            pass
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.kill()
        self.out.close()
        result = {"attached": None, "workers": [], "summary": None}
        with open(self.outpath) as f:
            for line in f:
                try:
                    j = json.loads(line)
                except ValueError:
                    continue
                if j.get("type") == "attached":
                    result["attached"] = j
                elif j.get("type") == "worker":
                    result["workers"].append(j)
                elif j.get("type") == "summary":
                    result["summary"] = j
        return result

    def kill(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()
        if not self.out.closed:
            self.out.close()


ROUND_KEYS = ("connections", "answered", "unanswered", "counts", "split", "shares", "ratio", "starved",
              "requests", "requests_split", "switched", "connect_us", "first_byte_us", "errors",
              "worst_ratio", "rounds_every_worker")


def measure_peer(name, rounds, trace, raw_prefix, emit):
    """Starts one peer, runs every shape against it (the tracer, when trace
    is on, once beside all of them), emits its rows, keeps its raw output at
    raw_prefix.*, stops it. Returns (failures, one text per shape).
    Raises RuntimeError when the peer cannot be started."""
    failures = 0
    texts = []
    peer = Peer(name)
    try:
        peer.start()
        base = {"peer": name, "software": peer.version, "mode": peer.ready["mode"], "port": peer.port,
                "workers": [w["tid"] if peer.ready["mode"] == "threads" else w["pid"]
                            for w in peer.ready["workers"]]}
        with open(raw_prefix + ".ready.json", "w") as f:
            json.dump(peer.ready, f)
        tracer = None
        if trace:
            try:
                tracer = Tracer(peer.port, raw_prefix + ".trace.jsonl")
            except RuntimeError as e:
                emit({"kind": "trace", **base, "error": str(e)})
        probe_conns = {}  # connections per worker id over every shape (the tracer's accepts won)
        measured = []
        try:
            for shape in SHAPES:
                ok, text = measure_shape(peer, shape, rounds, base, raw_prefix, emit, probe_conns)
                failures += not ok
                measured.append(shape["name"])
                texts.append(text)
        finally:
            traced = tracer.finish() if tracer else None
        if traced is not None:
            # process mode: do the accepts each worker pid won equal the
            # connections the probe says it answered? (null in threads
            # mode, whose answers are thread numbers, not kernel tids)
            won = {str(w["pid"]): w["won"] for w in traced["workers"] if w.get("won")}
            same = (won == {k: v for k, v in probe_conns.items() if v}
                    if peer.ready["mode"] == "process" else None)
            emit({"kind": "trace", **base, "shapes": measured,
                  "probe_counts": probe_conns, "won_equals_probe": same,
                  "trace": {"workers": traced["workers"], "summary": traced["summary"],
                            "pids": (traced["attached"] or {}).get("pids")}})
            text = ("traced: accepts won %s the probe's counts"
                    % {True: "equal", False: "differ from", None: "not comparable with"}[same])
            others = sorted(set(won) - {str(p) for p in base["workers"]})
            if same is False and others:
                text += " (pid %s accepted and is not a worker)" % ", ".join(others)
            texts.append(text)
    finally:
        peer.stop()
        peer.keep(raw_prefix)
        peer.cleanup()
    return failures, texts


def measure_shape(peer, shape, rounds, base, raw_prefix, emit, probe_conns):
    """One shape's rounds against a running peer (and, for nginx, its access
    log checked against them); emits the rows; returns (ok, text)."""
    name = shape["name"]
    log_start = (os.path.getsize(peer.access_log)
                 if peer.access_log and os.path.exists(peer.access_log) else 0)
    splits = []
    probe_requests = {}  # requests answered per worker id (the access log's unit)
    ok = True
    try:
        if "rounds" in shape:  # a round is a whole probe run: its summary line
            results = []
            for r in range(1, rounds + 1):
                lines, rc = run_probe(peer, name, shape_args(shape), "%s.%s-r%d" % (raw_prefix, name, r))
                results.append((r, [l for l in lines if l.get("type") == "summary"][-1]))
        else:
            lines, rc = run_probe(peer, name, shape_args(shape) + ["--rounds", str(rounds)],
                                  "%s.%s" % (raw_prefix, name))
            results = [(l["round"], l) for l in lines if l.get("type") == "round"]
        for r, line in results:
            row = {"kind": "round", **base, "shape": name, "round": r}
            row.update({k: line[k] for k in ROUND_KEYS if k in line})
            row["connections"] = shape_connections(shape)
            if "rounds" in shape:
                row["rounds_per_run"] = shape["rounds"]
            emit(row)
            splits.append(line.get("split"))
            for wid, n in (line.get("requests") or line.get("counts") or {}).items():
                probe_requests[wid] = probe_requests.get(wid, 0) + n
            for wid, n in (line.get("counts") or {}).items():
                probe_conns[wid] = probe_conns.get(wid, 0) + n
    except (RuntimeError, subprocess.TimeoutExpired, ValueError) as e:
        ok = False
        emit({"kind": "round", **base, "shape": name, "error": str(e)})
        splits.append("failed: %s" % e)
    text = "%s %s" % (name, " ".join(s or "?" for s in splits))
    if peer.access_log:
        logged = settled_log_counts(peer.access_log, log_start, sum(probe_requests.values()))
        probe_nonzero = {k: v for k, v in probe_requests.items() if v}
        emit({"kind": "logcheck", **base, "shape": name, "log_counts": logged,
              "probe_counts": probe_nonzero, "equal": logged == probe_nonzero})
        if logged != probe_nonzero:
            ok = False
            text += " (access log DIFFERS from the probe)"
    return ok, text


def measure_one(name, rounds, trace, raw_prefix, emit):
    """One peer as `measure` does it: an "unavailable" row with the reason when
    it cannot be had, an "error" row when it does not start, else every shape.
    Returns (status, texts): status "ok", "unavailable", or "failed" (a
    shape failed, the access log disagreed, or the peer did not start)."""
    ok, reason = availability(name)
    if not ok:
        emit({"kind": "unavailable", "peer": name, "software": software_version(PEERS[name][0]),
              "reason": reason})
        return "unavailable", ["unavailable: " + reason]
    try:
        failures, texts = measure_peer(name, rounds, trace, raw_prefix, emit)
    except RuntimeError as e:
        emit({"kind": "error", "peer": name, "error": str(e)})
        return "failed", ["failed: %s" % e]
    return ("failed" if failures else "ok"), texts


def tracing(no_trace):
    """(on, why not): acceptlab-trace runs beside the peers when root."""
    if no_trace:
        return False, None
    if os.geteuid() != 0:
        return False, "acceptlab-trace needs root"
    if not os.access(TRACE, os.X_OK):
        return False, "bin/acceptlab-trace is missing"
    return True, None


def cmd_measure(a):
    if a.rounds < 1:
        raise UsageError("--rounds %d: needs at least 1" % a.rounds)
    names = list(PEERS) if not a.peers else [p.strip() for p in a.peers.split(",") if p.strip()]
    for n in names:
        if n not in PEERS:
            raise UsageError("--peers: unknown peer %s (known: %s)" % (n, ",".join(PEERS)))
    for tool in (PROBE,):
        if not os.access(tool, os.X_OK):
            raise UsageError("%s is missing: run make first" % os.path.relpath(tool, ROOT))
    # SIGTERM (make interrupted, a CI timeout) unwinds like Ctrl-C, so every
    # peer's and tracer's process group is still stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    trace, why_not = tracing(a.no_trace)
    if why_not:
        log("not tracing: %s" % why_not)
    os.makedirs(a.out, exist_ok=True)
    raw_dir = os.path.join(a.out, "raw")
    os.makedirs(raw_dir, exist_ok=True)
    path = os.path.join(a.out, "peers.jsonl")
    failures = 0
    with open(path, "w") as out:
        def emit(row):
            out.write(json.dumps(row, sort_keys=False) + "\n")
            out.flush()
        for name in names:
            status, texts = measure_one(name, a.rounds, trace, os.path.join(raw_dir, name), emit)
            failures += status == "failed"
            for text in texts:
                log("%-19s %s" % (name, text))
    log("wrote %s" % path)
    return 1 if failures else 0


def cmd_list(a):
    for name in PEERS:
        ok, reason = availability(name)
        print("%-19s %s" % (name, "available (%s)" % software_version(PEERS[name][0]) if ok
                            else "unavailable: " + reason))
    return 0


def cmd_start(a):
    if a.name not in PEERS:
        raise UsageError("NAME: unknown peer %s (known: %s)" % (a.name, ",".join(PEERS)))
    ok, reason = availability(a.name)
    if not ok:
        print(json.dumps({"event": "unavailable", "peer": a.name, "reason": reason}), flush=True)
        return 1
    peer = Peer(a.name)
    stop = {"now": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(now=True))
    try:
        peer.start()
        if a.ready_file:
            shutil.copyfile(peer.ready_file, a.ready_file)
        print(json.dumps(peer.ready, separators=(",", ":")), flush=True)
        if peer.access_log:
            print(json.dumps({"event": "access_log", "path": peer.access_log}), flush=True)
        while not stop["now"] and peer.proc.poll() is None:
            time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    finally:
        peer.cleanup()
    return 0


def main(argv=None):
    p = Parser(prog="peers.py", description="acceptlab peers: nginx, HAProxy, Node.js cluster, measured by the probe")
    sub = p.add_subparsers(dest="cmd")
    m = sub.add_parser("measure", help="measure every available peer")
    m.error = p.error
    m.add_argument("--out", required=True)
    m.add_argument("--rounds", type=int, default=3)
    m.add_argument("--peers", default="")
    m.add_argument("--no-trace", action="store_true")
    l = sub.add_parser("list", help="each configuration: available or why not")
    l.error = p.error
    s = sub.add_parser("start", help="run one peer until SIGTERM")
    s.error = p.error
    s.add_argument("name")
    s.add_argument("--ready-file")
    a = p.parse_args(argv)
    if not a.cmd:
        p.error("a subcommand is needed: measure, list or start")
    try:
        return {"measure": cmd_measure, "list": cmd_list, "start": cmd_start}[a.cmd](a)
    except UsageError as e:
        sys.stderr.write("peers.py: %s\n" % e)
        return 2


if __name__ == "__main__":
    sys.exit(main())
