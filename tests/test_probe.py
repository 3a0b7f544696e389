"""Tests for bin/acceptlab-probe.

The probe's numbers are the product, so they are checked against ground
truth twice: against a server that is not ours (tests/foreign_server.py,
whose workers log every connection they handle), and against acceptlab's own
server's per-worker accept counts. Then its error accounting, --max-ratio,
--stop-winner and argument checking; and its load without attribution
(--worker-from none: any answer framed by Content-Length, chunked or the
close, of any status; --tcp: connections opened and held).
"""

import json
import os
import signal
import subprocess
import time
from collections import Counter

import pytest

from acceptlab.paths import module_cmd
from tests.conftest import PROBE, ROOT, run_probe

FOREIGN = module_cmd("tests.foreign_server")
class Foreign:
    def __init__(self, tmp_path, *args):
        self.log_dir = tmp_path / "logs"
        self.log_dir.mkdir()
        self.proc = subprocess.Popen([*FOREIGN, "--log-dir", str(self.log_dir), *args], cwd=ROOT,
                                     stdout=subprocess.PIPE, text=True, start_new_session=True)
        line = self.proc.stdout.readline()
        self.ready = json.loads(line)
        self.ready_file = tmp_path / "ready.json"
        self.ready_file.write_text(line)
        self.port = self.ready["port"]
        self.pids = [w["pid"] for w in self.ready["workers"]]

    def truth(self, connections, timeout=10.0):
        """{pid: Counter of 'answered'/'dropped'} from the workers' own logs,
        once they hold one line per connection made (a worker writes its
        line before it answers or drops, so normally at once)."""
        deadline = time.monotonic() + timeout
        while True:
            out = {}
            for pid in self.pids:
                path = self.log_dir / ("%d.log" % pid)
                out[pid] = Counter(path.read_text().split()) if path.exists() else Counter()
            if sum(sum(c.values()) for c in out.values()) >= connections:
                return out
            assert time.monotonic() < deadline, "the workers logged %r, not %d connections" % (out, connections)
            time.sleep(0.01)

    def close(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=5)


@pytest.fixture
def foreign(tmp_path):
    started = []

    def factory(*args):
        f = Foreign(tmp_path, *args)
        started.append(f)
        return f

    yield factory
    for f in started:
        f.close()


def json_lines(out):
    rows = [json.loads(l) for l in out.splitlines()]
    return [r for r in rows if r["type"] == "round"], [r for r in rows if r["type"] == "summary"]


@pytest.mark.parametrize("shape,extra,total", [
    ("burst", ["--connections", "32", "--rounds", "3"], 96),
    ("ramp", ["--connections", "16", "--gap-ms", "2", "--rounds", "2"], 32),
    ("oneshot", ["--connections", "8", "--rounds", "4", "--gap-ms", "1"], 32),
    ("keepalive", ["--connections", "16", "--requests", "3", "--rounds", "2"], 32),
])
def test_counts_match_a_foreign_servers_own_logs(foreign, shape, extra, total):
    """Against a prefork server that is not ours, the probe's per-worker
    connection counts (summed over rounds) equal what each worker logged
    (read once the logs hold a line per connection), and every connection
    was answered."""
    f = foreign("--workers", "2")
    res = run_probe("--target", "127.0.0.1:%d" % f.port, "--shape", shape, "--json",
                    "--workers-from", str(f.ready_file), *extra)
    assert res.returncode == 0, res.stderr
    rounds, (summary,) = json_lines(res.stdout)
    truth = f.truth(total)
    assert {int(k): v for k, v in summary["counts"].items()} == \
        {pid: c["answered"] for pid, c in truth.items()}
    assert summary["answered"] == total and summary["unanswered"] == 0
    assert sum(sum(r["counts"].values()) for r in rounds) == total
    if shape == "keepalive":
        assert summary["switched"] == 0
        assert sum(summary["requests"].values()) == total * 3


def test_header_mode_and_known_total_skew(foreign):
    """With worker 1 never accepting, every connection goes to worker 0: the
    split is 32/0 with the idle worker shown as 0 (known from the ready line),
    the ratio is infinite (null, starved 1), and --max-ratio 2 makes the
    probe exit 1. The id is read from a header here."""
    f = foreign("--workers", "2", "--idle-workers", "1", "--header", "X-Node")
    res = run_probe("--target", "127.0.0.1:%d" % f.port, "--shape", "burst", "--json",
                    "--workers-from", str(f.ready_file), "--worker-from", "header:X-Node",
                    "--max-ratio", "2")
    assert res.returncode == 1
    (rnd,), _ = json_lines(res.stdout)
    assert rnd["split"] == "32/0"
    assert rnd["counts"] == {str(f.pids[0]): 32, str(f.pids[1]): 0}
    assert rnd["ratio"] is None and rnd["starved"] == 1
    assert "burst 32: 32/0" in res.stderr


def test_unanswered_connections_are_counted_by_kind(foreign):
    """A server that closes every 4th connection unanswered: the probe counts
    exactly those as 'eof' errors, the rest by worker, says so on the human
    line, and exits 1 (a connection went unanswered)."""
    f = foreign("--workers", "2", "--drop-every", "4")
    res = run_probe("--target", "127.0.0.1:%d" % f.port, "--shape", "burst", "--json",
                    "--connections", "32", "--workers-from", str(f.ready_file))
    assert res.returncode == 1
    (rnd,), (summary,) = json_lines(res.stdout)
    truth = f.truth(32)
    dropped = sum(c["dropped"] for c in truth.values())
    assert dropped > 0
    assert rnd["errors"]["eof"] + rnd["errors"]["reset"] == dropped
    assert rnd["unanswered"] == dropped and rnd["answered"] == 32 - dropped
    assert {int(k): v for k, v in rnd["counts"].items()} == {p: c["answered"] for p, c in truth.items()}
    assert "unanswered" in res.stderr


def test_keepalive_flags_a_connection_answered_by_two_workers(foreign):
    """If a connection's later answers name another worker, keepalive counts
    each such answer as switched; the second id owns no connection (its
    first answer was not on a new connection) but its requests are counted."""
    f = foreign("--workers", "1", "--switch-ids")
    res = run_probe("--target", "127.0.0.1:%d" % f.port, "--shape", "keepalive", "--json",
                    "--connections", "8", "--requests", "3")
    (rnd,), _ = json_lines(res.stdout)
    assert rnd["switched"] == 16  # requests 2 and 3 on each of 8 connections
    pid = str(f.pids[0])
    assert rnd["counts"] == {pid: 8, pid + "-b": 0}
    assert rnd["requests"] == {pid: 8, pid + "-b": 16}


def test_refused_connections_counted(tmp_path):
    """Nothing listening: every connection is counted as refused, none hangs,
    exit 1."""
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    res = run_probe("--target", "127.0.0.1:%d" % port, "--shape", "burst", "--connections", "8", "--json")
    assert res.returncode == 1
    (rnd,), _ = json_lines(res.stdout)
    assert rnd["errors"]["refused"] == 8 and rnd["answered"] == 0


def test_counts_match_our_servers_accept_counts(start_server, tmp_path):
    """Against acceptlab-server, the probe's per-worker counts for a burst of
    32 equal the accepted counts each worker reports on exit (the only
    connections it saw were the probe's)."""
    s = start_server("bare")
    ready = tmp_path / "ready.json"
    ready.write_text(json.dumps(s.ready) + "\n")
    res = run_probe("--target", "127.0.0.1:%d" % s.port, "--shape", "burst", "--json",
                    "--workers-from", str(ready))
    assert res.returncode == 0, res.stderr
    (rnd,), _ = json_lines(res.stdout)
    assert s.stop() == 0
    exits = {e["pid"]: e["accepted"] for e in s.events if e.get("event") == "worker_exit"}
    assert {int(k): v for k, v in rnd["counts"].items()} == exits
    assert sum(exits.values()) == 32


def test_burst_latencies(start_server, tmp_path):
    """--latencies (the burst study's client): a burst of 8 on /work?us=2000
    against 2 workers; every connection answered, each with a latency and the
    worker that served it (an index from X-Worker, one of the 2); each latency
    at least the 2 ms of CPU its request asked for; the completion time (first
    connect to last answer) at least the largest latency; served_by tallies
    to the round's counts."""
    s = start_server("bare")
    ready = tmp_path / "ready.json"
    ready.write_text(json.dumps(s.ready) + "\n")
    res = run_probe("--target", "127.0.0.1:%d" % s.port, "--shape", "burst", "--connections", "8",
                    "--rounds", "2", "--path", "/work?us=2000", "--worker-from", "header:X-Worker",
                    "--workers-from", str(ready), "--json", "--latencies")
    assert res.returncode == 0, res.stderr
    rounds, _ = json_lines(res.stdout)
    assert len(rounds) == 2
    for rnd in rounds:
        assert rnd["answered"] == 8 and rnd["unanswered"] == 0
        lat, by = rnd["latency_us"], rnd["served_by"]
        assert len(lat) == 8 and len(by) == 8 and None not in lat and None not in by, rnd
        assert all(v >= 2000 for v in lat), lat
        assert rnd["completion_us"] >= max(lat), rnd
        assert set(by) <= {"0", "1"}
        assert dict(Counter(by)) == {k: v for k, v in rnd["counts"].items() if v}


def test_latencies_unanswered_are_null(tmp_path):
    """Nothing listening: every latency and server is null, and so is the
    completion time (no connection was answered)."""
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    res = run_probe("--target", "127.0.0.1:%d" % port, "--shape", "burst", "--connections", "3",
                    "--json", "--latencies", "--expect-workers", "1")
    assert res.returncode == 1
    (rnd,), _ = json_lines(res.stdout)
    assert rnd["completion_us"] is None and rnd["latency_us"] == [None] * 3 and rnd["served_by"] == [None] * 3


@pytest.mark.parametrize("shape", ["burst", "oneshot"])
def test_stop_winner(start_server, tmp_path, shape):
    """--stop-winner: after the rounds, the worker that answered most is
    SIGSTOPped, the rounds run again and the other worker answers all of
    them, then the stopped worker is SIGCONTed (it runs again, and the server
    stops cleanly with no crash or respawn logged)."""
    s = start_server("bare")
    ready = tmp_path / "ready.json"
    ready.write_text(json.dumps(s.ready) + "\n")
    res = run_probe("--target", "127.0.0.1:%d" % s.port, "--shape", shape, "--json",
                    "--workers-from", str(ready), "--rounds", "2", "--connections", "8")
    res = run_probe("--target", "127.0.0.1:%d" % s.port, "--shape", shape, "--json",
                    "--workers-from", str(ready), "--rounds", "2", "--connections", "8",
                    "--stop-winner")
    assert res.returncode == 0, res.stderr
    rows = [json.loads(l) for l in res.stdout.splitlines()]
    before = [r for r in rows if r["type"] == "summary" and r["stopped"] is None][0]
    after = [r for r in rows if r["type"] == "summary" and r["stopped"] is not None][0]
    winner = max(before["counts"], key=lambda k: before["counts"][k])
    assert after["stopped"] == int(winner)
    assert after["counts"][winner] == 0
    assert after["answered"] == 16 and after["unanswered"] == 0
    assert "[worker %s stopped]" % winner in res.stderr
    with open("/proc/%s/stat" % winner) as f:
        assert f.read().rsplit(")", 1)[1].split()[0] != "T", "winner left stopped"
    assert s.stop() == 0
    assert not [e for e in s.events if e.get("event") in ("respawned", "gave_up")]


@pytest.mark.parametrize("args,names", [
    ([], "--target"),
    (["--target", "127.0.0.1:1"], "--shape"),
    (["--target", "127.0.0.1", "--shape", "burst"], "--target 127.0.0.1"),
    (["--target", "127.0.0.1:0", "--shape", "burst"], "--target port 0"),
    (["--target", "127.0.0.1:80", "--shape", "storm"], "--shape storm"),
    (["--target", "127.0.0.1:80", "--shape", "burst", "--connections", "0"], "--connections 0"),
    (["--target", "127.0.0.1:80", "--shape", "burst", "--max-ratio", "0.5"], "--max-ratio 0.5"),
    (["--target", "127.0.0.1:80", "--shape", "burst", "--max-ratio", "2"], "--max-ratio"),
    (["--target", "127.0.0.1:80", "--shape", "burst", "--stop-winner"], "--stop-winner"),
    (["--target", "127.0.0.1:80", "--shape", "burst", "--worker-from", "cookie"], "--worker-from cookie"),
    (["--target", "127.0.0.1:80", "--shape", "burst", "--workers-from", "/nonexistent"], "--workers-from"),
    (["--target", "127.0.0.1:80", "--shape", "burst", "--path", "pid"], "--path pid"),
    (["--target", "127.0.0.1:80", "--shape", "burst", "--bogus"], "--bogus"),
    (["--target", "127.0.0.1:80", "--shape", "burst", "--pin", "4095"], "--pin 4095"),
    (["--target", "127.0.0.1:80", "--shape", "ramp", "--json", "--latencies"], "--latencies"),
    (["--target", "127.0.0.1:80", "--shape", "burst", "--latencies"], "--latencies"),
    (["--target", "127.0.0.1:80", "--shape", "burst", "--pause-at", "later"], "--pause-at later"),
    (["--target", "127.0.0.1:80", "--shape", "oneshot", "--pause-at", "open"], "--pause-at"),
    (["--target", "127.0.0.1:80", "--shape", "burst", "--json", "--latencies", "--pause-at", "asked"],
     "--pause-at"),
    # Without attribution: what needs a worker named is refused, naming the option.
    (["--target", "127.0.0.1:80", "--shape", "burst", "--worker-from", "none", "--max-ratio", "2"], "--max-ratio"),
    (["--target", "127.0.0.1:80", "--shape", "burst", "--worker-from", "none", "--stop-winner"], "--stop-winner"),
    (["--target", "127.0.0.1:80", "--shape", "burst", "--worker-from", "none", "--workers-from", "r.json"],
     "--workers-from"),
    (["--target", "127.0.0.1:80", "--shape", "burst", "--worker-from", "none", "--expect-workers", "2"],
     "--expect-workers"),
    (["--target", "127.0.0.1:80", "--shape", "burst", "--tcp", "--max-ratio", "2", "--expect-workers", "2"],
     "--max-ratio"),
    (["--target", "127.0.0.1:80", "--shape", "burst", "--tcp", "--stop-winner"], "--stop-winner"),
    (["--target", "127.0.0.1:80", "--shape", "ramp", "--tcp", "--workers-from", "r.json"], "--workers-from"),
    (["--target", "127.0.0.1:80", "--shape", "burst", "--tcp", "--expect-workers", "2"], "--expect-workers"),
    (["--target", "127.0.0.1:80", "--shape", "keepalive", "--tcp"], "--tcp"),
    (["--target", "127.0.0.1:80", "--shape", "oneshot", "--tcp"], "--tcp"),
    (["--target", "127.0.0.1:80", "--shape", "burst", "--tcp", "--worker-from", "body"], "--worker-from body"),
    (["--target", "127.0.0.1:80", "--shape", "burst", "--tcp", "--path", "/"], "--path"),
    (["--target", "127.0.0.1:80", "--shape", "burst", "--tcp", "--json", "--latencies"], "--latencies"),
    (["--target", "127.0.0.1:80", "--shape", "burst", "--tcp", "--pause-at", "asked"], "--pause-at asked"),
    (["--target", "127.0.0.1:80", "--shape", "burst", "--hold-ms", "10"], "--hold-ms"),
    (["--target", "127.0.0.1:80", "--shape", "burst", "--tcp", "--hold-ms", "-1"], "--hold-ms -1"),
    (["--target", "127.0.0.1:80", "--shape", "burst", "--worker-from", "nobody"], "--worker-from nobody"),
    (["--target", "127.0.0.1:80", "--shape", "burst", "--path", "/a b"], "--path /a b"),
    (["--target", "127.0.0.1:80", "--shape", "burst", "--path", "/" + "a" * 2048], "--path /aaa"),
])
def test_bad_arguments_exit_2(args, names):
    """Bad arguments exit 2 with one line that names the argument."""
    res = run_probe(*args)
    assert res.returncode == 2, res
    assert res.stderr.count("\n") == 1 and names in res.stderr, res.stderr


def test_help():
    """--help exits 0 and documents every shape and the hold point."""
    res = subprocess.run([PROBE, "--help"], capture_output=True, text=True)
    assert res.returncode == 0
    for shape in ("burst", "ramp", "keepalive", "oneshot"):
        assert shape in res.stdout
    assert "--pause-at open|asked" in res.stdout and '"event":"held"' in res.stdout
    for option in ("--worker-from none", "--tcp", "--hold-ms MS", "--path PATH", "User-Agent"):
        assert option in res.stdout, option


# --pause-at: the hold point a driver samples the server at (the
# perturbation study reads the load counters there).
HOLD_QUIET_S = 0.5  # how long a held probe must stay silent while nobody says go on


def established(port):
    """The server's ESTABLISHED sockets on port, as the kernel has them (ss)."""
    out = subprocess.run(["ss", "-tnH", "state", "established", "( sport = :%d )" % port],
                         capture_output=True, text=True, check=True).stdout
    return len(out.splitlines())


def read_json_line(proc, timeout=10.0):
    """The probe's next stdout line as JSON (fails the test after timeout)."""
    import select
    assert select.select([proc.stdout], [], [], timeout)[0], "the probe printed nothing within %.0f s" % timeout
    line = proc.stdout.readline()
    assert line, "the probe closed its stdout early"
    return json.loads(line)


@pytest.mark.parametrize("at,shape,extra", [("asked", "burst", []), ("open", "burst", []),
                                            ("asked", "keepalive", ["--requests", "3", "--gap-ms", "1"]),
                                            ("asked", "ramp", ["--gap-ms", "1"])])
def test_pause_at_holds_every_connection_open(start_server, tmp_path, at, shape, extra):
    """--pause-at: each round stops with all its 16 connections open, says so
    in one held line (open: 16) and waits: the kernel shows the server
    holding 16 ESTABLISHED connections, and the probe prints nothing more
    for HOLD_QUIET_S; a line on stdin lets it go on (round 1 answered in
    full), and EOF on stdin lets round 2 go on at once: the run ends, exit
    0, within its timeout."""
    import select
    s = start_server("bare")
    ready = tmp_path / "ready.json"
    ready.write_text(json.dumps(s.ready) + "\n")
    proc = subprocess.Popen([PROBE, "--target", "127.0.0.1:%d" % s.port, "--shape", shape, "--connections", "16",
                             "--rounds", "2", "--workers-from", str(ready), "--json", "--pause-at", at, *extra],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        held = read_json_line(proc)
        assert held == {"event": "held", "round": 1, "at": at, "open": 16}, held
        assert established(s.port) == 16
        assert not select.select([proc.stdout], [], [], HOLD_QUIET_S)[0], "the probe went on without a line"
        assert established(s.port) == 16
        proc.stdin.write("go\n")
        proc.stdin.flush()
        rnd = read_json_line(proc)
        assert rnd["type"] == "round" and rnd["round"] == 1 and rnd["answered"] == 16, rnd
        held = read_json_line(proc)
        assert held == {"event": "held", "round": 2, "at": at, "open": 16}, held
        out, err = proc.communicate(timeout=30)  # closes stdin: EOF, go on now and at every later hold
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 0, err
    rows = [json.loads(l) for l in out.splitlines()]
    assert [r["type"] for r in rows] == ["round", "summary"], rows
    assert rows[0]["answered"] == 16 and rows[1]["answered"] == 32, rows


def test_pause_at_with_stdin_closed_does_not_hang(start_server, tmp_path):
    """--pause-at with stdin at EOF from the start (a driver that is gone):
    every round still says it is held, with all 16 open, just before its
    round line, and the run ends on its own, exit 0, every connection
    answered."""
    s = start_server("bare")
    ready = tmp_path / "ready.json"
    ready.write_text(json.dumps(s.ready) + "\n")
    res = subprocess.run([PROBE, "--target", "127.0.0.1:%d" % s.port, "--shape", "keepalive",
                          "--connections", "16", "--requests", "2", "--rounds", "3", "--workers-from", str(ready),
                          "--json", "--pause-at", "asked"],
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    rows = [json.loads(l) for l in res.stdout.splitlines()]
    assert [r.get("event") or r["type"] for r in rows] == ["held", "round"] * 3 + ["summary"], rows
    assert [r["open"] for r in rows if "event" in r] == [16] * 3
    assert [r["answered"] for r in rows if r.get("type") == "round"] == [16] * 3


# The probe under bad targets (issue 8): nothing listening, a server that
# accepts and never answers, one that closes at once, one that resets, one
# that answers garbage, one whose answer is cut short (tests/bad_targets.py).
# Each is a counted error of the right kind, exit 1, one line saying what
# went wrong, and a bounded run.
BAD_TARGETS = module_cmd("tests.bad_targets")
BAD_KIND = {
    "nothing": ("refused", "nothing is listening there"),
    "silent": ("timeout", "no complete answer within --timeout-ms"),
    "close": ("eof", "the server closed the connection without answering"),
    "reset": ("reset", "the server reset the connection"),
    "garbage": ("bad_response", "not an HTTP/1.x response"),
    "truncated": ("bad_response", "cut short"),
}
BAD_TIMEOUT_MS = 300
BAD_CONNS, BAD_ROUNDS, BAD_REQUESTS = 4, 2, 2


@pytest.fixture(scope="module")
def bad_target():
    """Factory: bad_target(mode) -> port, one server per mode for the
    module, each in its own process group and killed at teardown."""
    started = {}

    def factory(mode):
        if mode == "nothing":
            import socket
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
            s.close()  # bound once, never listened on: connects are refused
            return port
        if mode not in started:
            proc = subprocess.Popen([*BAD_TARGETS, mode], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                                    start_new_session=True)
            started[mode] = proc
            line = proc.stdout.readline()
            assert line.strip().isdigit(), "bad_targets.py %s printed %r" % (mode, line)
            proc.port = int(line)
        return started[mode].port

    yield factory
    for proc in started.values():
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=5)


def bad_run_bound_s(shape):
    """The longest the probe may take against a target that never answers:
    every phase that waits (a connect wave, an ask wave, or in ramp and
    oneshot each connection's connect and ask) waits at most --timeout-ms,
    plus the gaps; then generous slack for a loaded machine. The bound is
    the subprocess guard, not a timing assertion."""
    waits = {"burst": 2, "keepalive": 1 + BAD_REQUESTS, "ramp": BAD_CONNS + 1, "oneshot": 2 * BAD_CONNS}[shape]
    return BAD_ROUNDS * (waits * BAD_TIMEOUT_MS / 1000.0 + 0.2) + 10


@pytest.mark.parametrize("shape", ["burst", "ramp", "keepalive", "oneshot"])
@pytest.mark.parametrize("mode", sorted(BAD_KIND))
def test_bad_target_is_a_counted_error_not_a_hang(bad_target, mode, shape):
    """Against a bad target the probe ends (within a bound from
    --timeout-ms) with exit 1, its JSON counts every connection as
    unanswered with the one right error kind and nothing answered, each
    human round line names the kind, and one line says what went wrong."""
    port = bad_target(mode)
    kind, hint = BAD_KIND[mode]
    total = BAD_CONNS * BAD_ROUNDS
    res = run_probe("--target", "127.0.0.1:%d" % port, "--shape", shape, "--json",
                    "--connections", str(BAD_CONNS), "--rounds", str(BAD_ROUNDS),
                    "--requests", str(BAD_REQUESTS), "--gap-ms", "1",
                    "--timeout-ms", str(BAD_TIMEOUT_MS), timeout=bad_run_bound_s(shape))
    assert res.returncode == 1, (res.returncode, res.stderr)
    rounds, (summary,) = json_lines(res.stdout)
    assert len(rounds) == BAD_ROUNDS
    assert summary["answered"] == 0 and summary["unanswered"] == total
    assert summary["errors"][kind] == total, summary["errors"]
    assert sum(summary["errors"].values()) == total, summary["errors"]
    assert summary["counts"] == {} and summary["rounds_every_worker"] == 0
    for r in rounds:
        assert r["errors"][kind] == BAD_CONNS and r["unanswered"] == BAD_CONNS
    lines = res.stderr.splitlines()
    assert sum("(%d unanswered: %d %s)" % (BAD_CONNS, BAD_CONNS, kind) in l for l in lines) == BAD_ROUNDS, lines
    assert "every worker answered in 0 of %d rounds" % BAD_ROUNDS in res.stderr
    said = [l for l in lines if l.startswith("acceptlab-probe: ")]
    assert len(said) == 1, lines
    assert "%d of %d connections to 127.0.0.1:%d unanswered: %d %s" % (total, total, port, total, kind) in said[0]
    assert hint in said[0], said[0]


# Load without attribution (issue 25): --worker-from none asks any path of a
# server that does not answer /pid and counts complete answers of any
# status; --tcp only opens connections and holds them.
NONE_KEYS = {"type", "shape", "connections", "round", "worker_from", "answered", "unanswered", "statuses",
             "issue_span_us", "connect_us", "first_byte_us", "errors"}
TCP_KEYS = {"type", "shape", "connections", "round", "worker_from", "tcp", "hold_ms", "opened", "held", "failed",
            "issue_span_us", "connect_us", "errors"}


def test_worker_from_none_against_our_server(start_server):
    """--worker-from none on / against acceptlab-server (2 workers): every
    connection of a burst of 32 is answered, the round carries answered,
    statuses and no split or counts, the human line reads 'burst 32: 32
    answered', and the workers' own accept counts sum to 32."""
    s = start_server("bare")
    res = run_probe("--target", "127.0.0.1:%d" % s.port, "--shape", "burst", "--worker-from", "none",
                    "--path", "/", "--json")
    assert res.returncode == 0, res.stderr
    (rnd,), (summary,) = json_lines(res.stdout)
    assert set(rnd) == NONE_KEYS, sorted(rnd)
    assert rnd["worker_from"] == "none" and rnd["answered"] == 32 and rnd["unanswered"] == 0
    assert rnd["statuses"] == {"200": 32} and sum(rnd["errors"].values()) == 0
    assert summary["answered"] == 32 and summary["rounds"] == 1 and "split" not in summary
    assert "burst 32: 32 answered\n" in res.stderr
    assert s.stop() == 0
    assert sum(e["accepted"] for e in s.events if e.get("event") == "worker_exit") == 32


class AnyHTTP:
    """A one-thread HTTP server in the test's process, for the framer end to
    end: reads each request head, records it, and answers with `answer`
    (bytes, the same for every request); closes after it when `close`.
    stop() ends it and closes every socket it holds."""

    def __init__(self, answer, close):
        import selectors
        import socket
        import threading
        self.answer, self.close_after = answer, close
        self.requests = []
        self.ls = socket.socket()
        self.ls.bind(("127.0.0.1", 0))
        self.ls.listen(128)
        self.ls.setblocking(False)
        self.port = self.ls.getsockname()[1]
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.ls, selectors.EVENT_READ)
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        import selectors
        bufs = {}
        while not self.done.is_set():
            for key, _ in self.sel.select(0.05):
                sock = key.fileobj
                if sock is self.ls:
                    try:
                        c, _ = self.ls.accept()
                    except BlockingIOError:
                        continue
                    bufs[c] = b""
                    self.sel.register(c, selectors.EVENT_READ)
                    continue
                try:
                    data = sock.recv(65536)
                except OSError:
                    data = b""
                if not data:
                    self.sel.unregister(sock)
                    sock.close()
                    del bufs[sock]
                    continue
                bufs[sock] += data
                while b"\r\n\r\n" in bufs[sock]:
                    head, bufs[sock] = bufs[sock].split(b"\r\n\r\n", 1)
                    self.requests.append(head.decode())
                    sock.setblocking(True)
                    sock.sendall(self.answer)
                    if self.close_after:
                        self.sel.unregister(sock)
                        sock.close()
                        del bufs[sock]
                        break
        for sock in list(bufs) + [self.ls]:
            sock.close()

    def stop(self):
        self.done.set()
        self.thread.join(timeout=5)


ANSWERS = {
    # name: (answer, the server closes after it, status)
    "404 with Content-Length": (b"HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot here\n", False, "404"),
    "301 with no body": (b"HTTP/1.1 301 Moved Permanently\r\nLocation: /x/\r\nContent-Length: 0\r\n\r\n", False, "301"),
    "chunked": (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n"
                + b"1000\r\n" + b"x" * 4096 + b"\r\n0\r\n\r\n", False, "200"),
    "100 Continue, then 200": (b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
                               False, "200"),
    "204": (b"HTTP/1.1 204 No Content\r\n\r\n", False, "204"),
    "a big body": (b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + b"y" * 100000, False, "200"),
    "close-delimited": (b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n" + b"z" * 20000, True, "200"),
    "HTTP/1.0 close-delimited": (b"HTTP/1.0 500 Internal Server Error\r\n\r\noops", True, "500"),
}


@pytest.mark.parametrize("name", sorted(ANSWERS))
@pytest.mark.parametrize("shape", ["burst", "keepalive"])
def test_worker_from_none_frames_any_answer(name, shape):
    """--worker-from none counts a complete answer of any status however
    its end is marked (Content-Length, chunked, the close), skips an interim
    100, and asks with the path and query as given, a Host and a
    User-Agent: a burst of 8 is all answered; keepalive asks 3 times on each
    connection the server keeps open (replies 24), once on those it closes."""
    answer, closes, status = ANSWERS[name]
    srv = AnyHTTP(answer, closes)
    try:
        res = run_probe("--target", "127.0.0.1:%d" % srv.port, "--shape", shape, "--connections", "8",
                        "--requests", "3", "--gap-ms", "1", "--worker-from", "none", "--path", "/search?q=a%20b&x=1",
                        "--json", "--timeout-ms", "3000")
    finally:
        srv.stop()
    assert res.returncode == 0, res.stderr
    (rnd,), _ = json_lines(res.stdout)
    replies = 8 if closes or shape == "burst" else 24
    assert rnd["answered"] == 8 and rnd["unanswered"] == 0, rnd
    assert rnd["statuses"] == {status: replies}, rnd
    if shape == "keepalive":
        assert rnd["replies"] == replies
    assert len(srv.requests) == replies
    for req in srv.requests:
        lines = req.split("\r\n")
        assert lines[0] == "GET /search?q=a%20b&x=1 HTTP/1.1", lines
        assert "Host: 127.0.0.1:%d" % srv.port in lines and "User-Agent: acceptlab-probe/1" in lines, lines
    if status != "200":
        assert ", status %s x%d" % (status, replies) in res.stderr


@pytest.mark.parametrize("mode", sorted(BAD_KIND))
def test_worker_from_none_bad_target_is_a_counted_error(bad_target, mode):
    """--worker-from none against each bad target: every connection
    unanswered with the one right kind, exit 1, one line saying so."""
    port = bad_target(mode)
    kind, hint = BAD_KIND[mode]
    res = run_probe("--target", "127.0.0.1:%d" % port, "--shape", "burst", "--worker-from", "none", "--json",
                    "--connections", str(BAD_CONNS), "--timeout-ms", str(BAD_TIMEOUT_MS), timeout=30)
    assert res.returncode == 1, res.stderr
    (rnd,), _ = json_lines(res.stdout)
    assert rnd["answered"] == 0 and rnd["errors"][kind] == BAD_CONNS and rnd["unanswered"] == BAD_CONNS, rnd
    said = [l for l in res.stderr.splitlines() if l.startswith("acceptlab-probe: ")]
    assert len(said) == 1 and hint in said[0], res.stderr


def quiet_listener(backlog=128):
    """A listening socket that never accepts or reads: the kernel completes
    the handshakes and queues them."""
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(backlog)
    return s


@pytest.mark.parametrize("shape", ["burst", "ramp"])
def test_tcp_holds_connections_on_a_socket_that_never_reads(shape):
    """--tcp against a listener that never reads: N connections open and
    stay open for --hold-ms (the kernel shows all N established while the
    probe is held at open, and the run lasts at least the hold each round),
    the rounds report opened N, held N, failed 0, and nothing is asked (the
    queued connections received no byte)."""
    with quiet_listener() as ls:
        port = ls.getsockname()[1]
        t0 = time.monotonic()
        proc = subprocess.Popen([PROBE, "--target", "127.0.0.1:%d" % port, "--shape", shape, "--tcp",
                                 "--connections", "16", "--gap-ms", "1", "--hold-ms", "300", "--rounds", "2",
                                 "--json", "--pause-at", "open"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        try:
            held = read_json_line(proc)
            assert held == {"event": "held", "round": 1, "at": "open", "open": 16}, held
            assert established(port) == 16
            out, err = proc.communicate(timeout=30)  # EOF on stdin: go on, here and in round 2
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        elapsed = time.monotonic() - t0
        ls.setblocking(False)
        received = 0
        while True:
            try:
                c, _ = ls.accept()
            except BlockingIOError:
                break
            with c:
                c.setblocking(False)
                try:
                    received += len(c.recv(4096))
                except (BlockingIOError, ConnectionResetError):
                    pass
    assert proc.returncode == 0, err
    rows = [json.loads(l) for l in out.splitlines()]
    rounds = [r for r in rows if r.get("type") == "round"]
    assert len(rounds) == 2 and elapsed >= 0.6
    for rnd in rounds:
        assert set(rnd) == TCP_KEYS - ({"issue_span_us"} if shape == "ramp" else set()), sorted(rnd)
        assert rnd["tcp"] is True and rnd["hold_ms"] == 300
        assert rnd["opened"] == 16 and rnd["held"] == 16 and rnd["failed"] == 0, rnd
    summary = rows[-1]
    assert summary["type"] == "summary" and summary["opened"] == 32 and summary["held"] == 32
    assert "%s 16: 16 opened\n" % shape in err
    assert received == 0, "the probe sent bytes with --tcp"


@pytest.mark.parametrize("mode,kind", [("close", "eof"), ("reset", "reset"), ("nothing", "refused")])
def test_tcp_counts_failures_by_kind(bad_target, mode, kind):
    """--tcp against a server that closes or resets every connection it
    accepts, or nothing listening: each connection counted failed with
    that kind (opened but not held, or never opened: a reset may beat the
    connect's completion), exit 1, one line naming the kind."""
    port = bad_target(mode)
    res = run_probe("--target", "127.0.0.1:%d" % port, "--shape", "burst", "--tcp", "--connections", "4",
                    "--hold-ms", "200", "--json", timeout=30)
    assert res.returncode == 1, res.stderr
    (rnd,), _ = json_lines(res.stdout)
    assert rnd["held"] == 0 and rnd["failed"] == 4 and rnd["errors"][kind] == 4, rnd
    # A reset can come before the probe sees its connect complete: not opened then.
    assert rnd["opened"] == {"nothing": 0, "close": 4}.get(mode, rnd["opened"]) and rnd["opened"] <= 4, rnd
    said = [l for l in res.stderr.splitlines() if l.startswith("acceptlab-probe: ")]
    assert len(said) == 1 and "4 of 4 connections to 127.0.0.1:%d failed: 4 %s" % (port, kind) in said[0], said
