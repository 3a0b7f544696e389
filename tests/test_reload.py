"""The reload (SIGHUP): every worker is replaced, one at a time, the new one
serving before the old one stops taking connections; and what clients see
meanwhile.

- Lifecycle, every process-mode arm, forked and spawned: the reload ends
  ("reloaded"), every index gets a new worker that answers, the old ones exit
  0 as retired, and a second reload takes the slots back.
- The old worker's goodbye: an open keep-alive connection's next request is
  answered by the old worker with Connection: close; an idle one is closed
  after about a second; a new connection meanwhile reaches the new worker.
- Under load (wrk keep-alive and Connection: close at once, SIGHUP four
  times, the campaign's own trial in a network namespace of its own): the
  shared-listener variants and fdpass lose no request; reuseport with and
  without --reuseport-migrate completes its reloads, its losses reported.
- Threads mode refuses a reload; a new worker that fails before serving
  leaves the old one serving (reload_failed).
"""

import os
import re
import shutil
import signal
import socket
import subprocess
import time

import pytest

from acceptlab import arms  # which arms must lose nothing
from probes.harness.netns import run_in_netns
from probes.harness.wrk import WRK
from probes.studies import reload as reload_study  # the trial the campaign runs, asserted here
from tests.conftest import (ROOT, SERVING_PROCESS, alive, get, open_pid_requests, read_response, split_answered,
                            wait_stopped)

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (a network namespace of its own)")

# Every process-mode arm, forked and spawned.
RELOAD_ARMS = SERVING_PROCESS + [v + " --spawn-workers" for v in SERVING_PROCESS]


def reload_and_wait(s, generation, timeout=15):
    os.kill(s.proc.pid, signal.SIGHUP)
    return s.wait_for("reloaded", timeout=timeout, generation=generation)


def answering(port, n=8):
    """The ids that answer n fresh connections."""
    return {int(get(port)[2]) for _ in range(n)}


@pytest.mark.parametrize("variant", RELOAD_ARMS)
def test_reload_replaces_every_worker(start_server, variant):
    """Two reloads: each replaces both indexes (new slot, new pid), the old
    workers exit 0 as retired, and only new workers answer afterwards; the
    second reload moves every index back to its first slot."""
    s = start_server(variant)
    first = {w["index"]: w["pid"] for w in s.ready["workers"]}
    done = reload_and_wait(s, 1)
    assert done["replaced"] == 2, done
    swaps = [e for e in s.events if e["event"] == "replaced"]
    assert [e["index"] for e in swaps] == [0, 1], swaps
    assert [e["slot"] for e in swaps] == [2, 3], "a reload's new worker takes the index's other slot"
    assert [e["old_pid"] for e in swaps] == [first[0], first[1]], swaps
    second = {e["index"]: e["pid"] for e in swaps}
    for old in first.values():
        s.wait_for("reaped", pid=old, retired=True, status="exit 0")
        assert not alive(old), "an old worker outlived the reload"
    assert answering(s.port) <= set(second.values()), "an old worker answered after the reload"
    done = reload_and_wait(s, 2)
    swaps = [e for e in s.events if e["event"] == "replaced"][2:]
    assert [(e["index"], e["slot"]) for e in swaps] == [(0, 0), (1, 1)], swaps
    assert answering(s.port) <= {e["pid"] for e in swaps}
    assert s.stop() == 0
    for e in swaps:
        assert not alive(e["pid"])


def wait_not_watching_listener(pid, port, timeout=5.0):
    """Waits until worker pid no longer has the listener on port in its
    epoll set (it retired): the listener's descriptor from ss, the epoll
    sets from /proc/pid/fdinfo."""
    line = subprocess.run(["ss", "-ltnpH", "sport = :%d" % port], capture_output=True, text=True).stdout
    m = re.search(r"pid=%d,fd=(\d+)" % pid, line)
    assert m, "worker %d holds no listener on port %d: %r" % (pid, port, line)
    fd = int(m.group(1))
    deadline = time.monotonic() + timeout
    while True:
        watched = False
        for name in os.listdir("/proc/%d/fd" % pid):
            try:
                if os.readlink("/proc/%d/fd/%s" % (pid, name)) != "anon_inode:[eventpoll]":
                    continue
                with open("/proc/%d/fdinfo/%s" % (pid, name)) as f:
                    watched |= any(l.split()[:2] == ["tfd:", str(fd)] for l in f)
            except OSError:
                pass
        if not watched:
            return
        assert time.monotonic() < deadline, "worker %d still watches the listener" % pid
        time.sleep(0.005)


def test_new_worker_serves_before_the_old_one_leaves(start_server):
    """One worker, a keep-alive connection open on it. SIGHUP: the new worker
    serves (a fresh connection reaches it) while the old one still holds the
    open connection; that connection's next request is answered by the OLD
    worker with Connection: close, then closed; then the reload ends."""
    s = start_server("bare", workers=1)
    old = s.pids[0]
    conn = socket.create_connection(("127.0.0.1", s.port), timeout=5)
    try:
        conn.sendall(b"GET /pid HTTP/1.1\r\nHost: t\r\n\r\n")
        assert int(read_response(conn)[2]) == old
        os.kill(s.proc.pid, signal.SIGHUP)
        swap = s.wait_for("replaced", index=0)
        assert swap["old_pid"] == old
        # The old worker stops taking connections when it sees its retire
        # signal, in its next wait: until then it may still win the race for
        # a new connection. Wait on that (the listener leaves its epoll set).
        wait_not_watching_listener(old, s.port)
        assert int(get(s.port)[2]) == swap["pid"], "a new connection must reach the new worker"
        assert alive(old), "the old worker must still hold its open connection"
        conn.sendall(b"GET /pid HTTP/1.1\r\nHost: t\r\n\r\n")
        status, headers, body = read_response(conn)
        assert (status, int(body)) == (200, old), "the open connection's next request is the old worker's"
        assert headers.get("connection") == "close", headers
        assert conn.recv(1) == b"", "the old worker closes after saying close"
    finally:
        conn.close()
    done = s.wait_for("reloaded", generation=1)
    assert done["replaced"] == 1
    assert s.stop() == 0


def test_idle_connection_is_closed_after_a_second(start_server):
    """An idle keep-alive connection on the old worker is closed about a
    second into the reload (RETIRE_IDLE_MS), not at once and not never."""
    s = start_server("bare", workers=1)
    conn = socket.create_connection(("127.0.0.1", s.port), timeout=10)
    try:
        conn.sendall(b"GET /pid HTTP/1.1\r\nHost: t\r\n\r\n")
        read_response(conn)
        t0 = time.monotonic()
        os.kill(s.proc.pid, signal.SIGHUP)
        assert conn.recv(1) == b""
        waited = time.monotonic() - t0
    finally:
        conn.close()
    print("idle keep-alive connection closed %.2f s into the reload" % waited)
    assert 0.5 <= waited <= 5, "closed %.2f s into the reload; expected about 1 s" % waited
    s.wait_for("reloaded", generation=1)
    assert s.stop() == 0


def test_sighup_during_a_reload_asks_for_another(start_server):
    """Two SIGHUPs while the first reload waits on an open connection: the
    first reload finishes, then exactly one more runs."""
    s = start_server("fdpass")
    conn = socket.create_connection(("127.0.0.1", s.port), timeout=5)
    try:
        conn.sendall(b"GET /pid HTTP/1.1\r\nHost: t\r\n\r\n")
        read_response(conn)
        os.kill(s.proc.pid, signal.SIGHUP)
        s.wait_for("replaced", index=1)
        os.kill(s.proc.pid, signal.SIGHUP)
        os.kill(s.proc.pid, signal.SIGHUP)
        s.wait_for("reloaded", generation=2, timeout=15)
    finally:
        conn.close()
    assert answering(s.port) <= {e["pid"] for e in [e for e in s.events if e["event"] == "replaced"][2:]}
    # No third reload of its own: one more SIGHUP now must be the one that
    # makes generation 3 (a reload the coalesced signals had queued would
    # have taken that number), and nothing reloads after it.
    os.kill(s.proc.pid, signal.SIGHUP)
    s.wait_for("reloaded", generation=3, timeout=15)
    assert s.stop() == 0
    assert [e["generation"] for e in s.events if e["event"] == "reloaded"] == [1, 2, 3], s.events


def test_threads_mode_refuses_a_reload(start_server):
    """Threads share one process: nothing to replace one at a time. SIGHUP
    is refused with a line and the server keeps serving (SIGHUP's default
    action would have killed it)."""
    s = start_server("bare --threads 2")
    os.kill(s.proc.pid, signal.SIGHUP)
    refused = s.wait_for("reload_refused")
    assert "threads" in refused["reason"]
    assert answering(s.port) <= set(s.pids)
    assert s.stop() == 0


def test_a_new_worker_that_fails_leaves_the_old_one_serving(start_server):
    """The new worker for index 0 (slot 2) fails before serving: the reload
    stops there with reload_failed, nothing is respawned for the failed one,
    and the original workers keep serving."""
    s = start_server("bare", env=dict(os.environ, ACCEPTLAB_TEST_FAIL_SLOT="2"))
    os.kill(s.proc.pid, signal.SIGHUP)
    failed = s.wait_for("reload_failed")
    assert failed["index"] == 0, failed
    assert all(alive(p) for p in s.pids)
    assert answering(s.port) <= set(s.pids)
    assert s.stop() == 0
    # Read to the end of the server's output (not for a fixed while): from
    # the failed reload to its exit nothing was replaced, respawned or
    # reloaded, and the workers that exited at the stop are the first ones.
    assert not [e for e in s.events if e["event"] in ("replaced", "respawned", "reloaded")], s.events
    assert sorted(e["pid"] for e in s.events if e["event"] == "worker_exit") == sorted(s.pids), s.events


# The trial's loads here: 2 s (the campaign's are RELOAD_SECONDS), with as
# many reloads as the campaign's, each under both loads.
TRIAL_SECONDS = 2
TRIAL_RELOAD_AT_S = [0.3, 0.7, 1.1, 1.5]


def run_trial(arm, migrate=False, spawn=False, tmp_path=None):
    """The campaign's reload trial, shorter (TRIAL_SECONDS), in a network
    namespace of its own (its Connection: close load leaves tens of
    thousands of TIME_WAIT sockets)."""
    assert len(TRIAL_RELOAD_AT_S) == len(reload_study.RELOAD_AT_S) and TRIAL_RELOAD_AT_S[-1] < TRIAL_SECONDS
    prefix = str(tmp_path / "reload")
    row = run_in_netns(lambda: reload_study.trial(arm, migrate, spawn, prefix, TRIAL_SECONDS, TRIAL_RELOAD_AT_S),
                       TRIAL_SECONDS + 2 * reload_study.RELOAD_WAIT_S + 60)
    print("reload %s%s%s: %d reloads, %d failed of %d keep-alive + %d close requests; errors %s; ms %s" % (
        arm, " +migrate" if migrate else "", " +spawn" if spawn else "", row["reloads"], row["failed"],
        row["keepalive"]["requests"], row["close"]["requests"],
        {m: row[m]["errors"] for m in ("keepalive", "close")}, row["reload_ms"]))
    return row


# The reload study's trials (arms.py): those that must lose nothing, as
# (arm, spawn); the others, reported, as (arm, migrate).
LOSE_NONE = [(a, spawn) for a, _, spawn in arms.reload_cases() if arms.get(a).reload_loses_none]
REPORTED = [(a, migrate) for a, migrate, _ in arms.reload_cases() if not arms.get(a).reload_loses_none]


@needs_root
@pytest.mark.parametrize("arm,spawn", LOSE_NONE, ids=[a + (" spawn" if s else "") for a, s in LOSE_NONE])
def test_reload_under_load_loses_nothing(tmp_path, arm, spawn):
    """Four reloads under keep-alive and Connection: close load: every
    request answered, 0 errors of any kind, every worker replaced each time.
    The shared listener never closes; fdpass's leaver forwards what reaches
    it; the old worker answers its open connections' next requests."""
    if not shutil.which(WRK):
        pytest.skip("wrk not installed (make deps)")
    row = run_trial(arm, spawn=spawn, tmp_path=tmp_path)
    assert row["reloads"] == len(TRIAL_RELOAD_AT_S) and row["replaced"] == 2 * row["reloads"], row
    assert row["keepalive"]["requests"] > 0 and row["close"]["requests"] > 0, row
    assert row["failed"] == 0, row


@needs_root
@pytest.mark.parametrize("arm,migrate", REPORTED)
def test_reuseport_reload_is_reported(tmp_path, arm, migrate):
    """reuseport's old listener closes with its worker: what is queued there
    is reset unless tcp_migrate_req moves it, so its losses are reported
    (printed, and in the campaign's reload table), not held. Held: every
    reload completes and both loads keep being answered."""
    if not shutil.which(WRK):
        pytest.skip("wrk not installed (make deps)")
    row = run_trial(arm, migrate=migrate, tmp_path=tmp_path)
    assert row["reloads"] == len(TRIAL_RELOAD_AT_S) and row["replaced"] == 2 * row["reloads"], row
    assert row["keepalive"]["requests"] > 1000 and row["close"]["requests"] > 1000, row


def test_spawned_workers_are_exec_d(start_server):
    """--spawn-workers: each worker is a fresh exec of the binary (its own
    address-space layout, the ACCEPTLAB_SPAWNED handshake in its initial
    environment); forked workers share the supervisor's layout."""
    def base(pid):
        exe = os.readlink("/proc/%d/exe" % pid)
        with open("/proc/%d/maps" % pid) as f:
            return next(l.split("-")[0] for l in f if l.rstrip().endswith(exe))

    def environ(pid):
        with open("/proc/%d/environ" % pid, "rb") as f:
            return f.read().split(b"\0")

    spawned = start_server("fdpass --spawn-workers")
    forked = start_server("fdpass")
    for w in spawned.ready["workers"]:
        assert base(w["pid"]) != base(spawned.proc.pid), "a spawned worker shares the supervisor's layout"
        assert any(e.startswith(b"ACCEPTLAB_SPAWNED=index=%d slot=%d " % (w["index"], w["index"]))
                   for e in environ(w["pid"])), "no ACCEPTLAB_SPAWNED handshake"
    for w in forked.ready["workers"]:
        assert base(w["pid"]) == base(forked.proc.pid), "a forked worker has the supervisor's layout"
        assert not any(e.startswith(b"ACCEPTLAB_SPAWNED=") for e in environ(w["pid"]))
    assert spawned.stop() == 0 and forked.stop() == 0


# How many fresh connections, one after another, the strict turns get to
# reach the new worker: every other one is its turn, and a steal (a turn
# holder not accepting for 100 ms) can only delay that.
STRICT_TURN_TRIES = 8


@pytest.mark.parametrize("variant", ["bare --spawn-workers", "fdpass --spawn-workers",
                                     "mutex --accept-mutex-strict --spawn-workers"])
def test_spawned_worker_is_respawned(start_server, variant):
    """A spawned worker that is killed is spawned again (fork+exec) into its
    slot, and the new worker serves: a connection is answered by its pid.
    bare and fdpass: with worker 0 SIGSTOPped (waited on: state T, off its
    CPU), new connections are answered by the new worker alone (split once
    every request reached the server and the new worker sleeps idle in
    epoll_wait; those queued at worker 0, by a hand-off, are answered by it
    after SIGCONT). The strict mutex stalls behind a stopped worker, so
    there the turns decide: each accept passes the turn to the next live
    worker, and fresh connections one after another must reach the new
    worker within STRICT_TURN_TRIES."""
    s = start_server(variant)
    victim = s.pids[1]
    os.kill(victim, signal.SIGKILL)
    again = s.wait_for("respawned", index=1)
    new = again["pid"]
    assert new != victim and alive(new)
    if variant.startswith("mutex"):
        seen = []
        while new not in seen and len(seen) < STRICT_TURN_TRIES:
            seen.append(int(get(s.port)[2]))
        assert new in seen, "the new worker answered none of %d connections: %r" % (len(seen), seen)
        assert set(seen) <= {s.pids[0], new}, seen
    else:
        os.kill(s.pids[0], signal.SIGSTOP)
        try:
            wait_stopped(s.pids[0])
            answered, waiting = split_answered(open_pid_requests(s.port, 10), s.port, new)
            assert new in answered, "the new worker answered none of %r" % answered
            assert set(answered) == {new}, answered
        finally:
            os.kill(s.pids[0], signal.SIGCONT)
        for c in waiting:  # handed to worker 0 while it was stopped: answered now
            assert int(read_response(c, timeout=15)[2]) == s.pids[0]
            c.close()
    assert s.stop() == 0


def test_spawn_workers_is_process_mode_only():
    res = subprocess.run([os.path.join(ROOT, "bin", "acceptlab-server"), "--variant", "bare", "--threads", "2",
                          "--spawn-workers", "--port", "0"], capture_output=True, text=True, timeout=10)
    assert res.returncode == 2
    assert res.stderr.count("\n") == 1 and "--spawn-workers" in res.stderr, res.stderr
