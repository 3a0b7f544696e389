"""Integration tests for bin/acceptlab-server, run for every accept variant.

What a user of the harness relies on: it starts on port 0 and says so in one
ready line, every connection is answered by one of the workers it announced,
HTTP/1.1 keep-alive, pipelining and Connection: close behave (a variant that
serves one connection at a time, blocking, answers one request per
connection, with Connection: close), bad input is
answered (400/431) without hurting a worker, SIGTERM finishes what is in
flight and leaves no process behind, a second server cannot take the port,
and the supervisor respawns a crashed worker but not a stopped one.
"""

import os
import select
import signal
import socket
import subprocess
import time

import pytest

from tests.conftest import (QUEUES_AT_STOPPED_WORKER, SERVER, SERVER_ASAN, SERVING, STOPPABLE, VARIANTS, alive, get,
                            http_exchange, in_nanosleep, one_request, open_pid_requests, read_response,
                            read_responses, split_answered, wait_stopped, wait_tasks)


def test_help_lists_every_variant():
    """--help exits 0 and names each variant the tests cover, so the CLI and
    the test matrix cannot drift apart."""
    res = subprocess.run([SERVER, "--help"], capture_output=True, text=True)
    assert res.returncode == 0
    for v in VARIANTS + ["mutex", "handoff"]:
        assert "\n      %s " % v in res.stdout, "--help does not list %s" % v


@pytest.mark.parametrize("variant", SERVING)
def test_ready_line_and_every_connection_answered(start_server, variant):
    """The ready line names 2 workers with distinct pids (tids in threads
    mode); 40 fresh connections are each answered by one of them, with
    X-Worker naming the index the ready line gave that id."""
    s = start_server(variant)
    assert s.ready["variant"] == variant.split()[0]
    assert s.ready["mode"] == ("threads" if "--threads" in variant else "process")
    assert [w["index"] for w in s.ready["workers"]] == [0, 1]
    index_of = {w[s.id_key]: w["index"] for w in s.ready["workers"]}
    assert len(index_of) == 2
    for _ in range(40):
        status, headers, body = get(s.port, "/pid")
        assert status == 200
        pid = int(body)
        assert pid in index_of, "answered by %d, not a worker the ready line named" % pid
        assert int(headers["x-worker"]) == index_of[pid]


@pytest.mark.parametrize("variant", SERVING)
def test_keepalive_and_pipelining(start_server, variant):
    """Three pipelined requests sent in one write are answered in order on the
    same connection, by the same worker, and the connection stays open for a
    fourth request. A variant that answers one request per connection
    (blocking) answers the first with Connection: close and closes: the
    two after it get no answer."""
    s = start_server(variant)
    with socket.create_connection(("127.0.0.1", s.port), timeout=5) as c:
        c.sendall(b"GET /pid HTTP/1.1\r\nHost: t\r\n\r\n"
                  b"GET / HTTP/1.1\r\nHost: t\r\n\r\n"
                  b"GET /work?us=100 HTTP/1.1\r\nHost: t\r\n\r\n")
        if one_request(variant):
            status, headers, body = read_response(c)
            assert status == 200 and int(body) in s.pids
            assert headers["connection"] == "close"
            assert c.recv(1) == b"", "a one-request variant kept the connection open"
            return
        (st1, h1, b1), (st2, h2, b2), (st3, h3, b3) = read_responses(c, 3)
        assert (st1, st2, st3) == (200, 200, 200)
        assert int(b1) in s.pids
        assert b2 == b"hello from acceptlab worker %s\n" % h1["x-worker"].encode()
        assert b3 == b"worked 100 us\n", "answers out of order"
        assert h1["x-worker"] == h2["x-worker"] == h3["x-worker"]
        st4, h4, b4 = get(s.port, "/pid", sock=c)
        assert st4 == 200 and b4 == b1, "keep-alive connection changed worker"


@pytest.mark.parametrize("variant", SERVING)
def test_connection_close_honoured(start_server, variant):
    """A request with Connection: close gets its answer and then EOF."""
    s = start_server(variant)
    out = http_exchange(s.port, b"GET /pid HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
    assert out.startswith(b"HTTP/1.1 200 OK")
    assert b"Connection: close" in out
    assert int(out.split(b"\r\n\r\n", 1)[1]) in s.pids


LOOP_SEQUENTIAL = 20   # requests sent one at a time, each after the previous answer
LOOP_PIPELINED = 20    # requests sent in one write
LOOP_SLACK = 8         # wakeups besides those: the accept (each worker may be woken for it), the
                       # pipelined write (perhaps in two pieces), the close, a passed descriptor


@pytest.mark.parametrize("variant", SERVING)
def test_worker_exit_counts_requests_and_wakeups(start_server, variant):
    """Each worker_exit line carries "requests" (answered) and
    "epoll_returns" (epoll_pwait returns that delivered events), which the
    cost study divides into requests per wakeup. On one keep-alive
    connection: 20 requests one at a time need a wakeup each, then 20
    pipelined in one write are answered in one or two. So the workers
    answered exactly 40 and woke at least 21 times, but far fewer than 40:
    a counter bumped per request, or never, fails. A variant that answers
    one request per connection (blocking) is asked on 40 connections, once
    each: 40 requests, and a wakeup for each (its epoll_wait for the
    request; the accept() before it is not an epoll return)."""
    s = start_server(variant)
    if one_request(variant):
        # One request per connection (blocking): 40 connections, each
        # asked once; a worker wakes for each in accept() and once more in
        # epoll_wait for its request (counted).
        for _ in range(LOOP_SEQUENTIAL + LOOP_PIPELINED):
            assert get(s.port, "/")[0] == 200
    else:
        with socket.create_connection(("127.0.0.1", s.port), timeout=5) as c:
            for _ in range(LOOP_SEQUENTIAL):
                assert get(s.port, "/", sock=c)[0] == 200
            c.sendall(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n" * LOOP_PIPELINED)
            assert [st for st, _, _ in read_responses(c, LOOP_PIPELINED)] == [200] * LOOP_PIPELINED
    assert s.stop() == 0
    exits = [e for e in s.events if e.get("event") == "worker_exit"]
    assert len(exits) == len(s.ready["workers"]), s.events
    requests = sum(e["requests"] for e in exits)
    wakeups = sum(e["epoll_returns"] for e in exits)
    assert requests == LOOP_SEQUENTIAL + LOOP_PIPELINED, exits
    if one_request(variant):
        assert requests <= wakeups <= requests + LOOP_SLACK, exits
    else:
        assert LOOP_SEQUENTIAL + 1 <= wakeups <= LOOP_SEQUENTIAL + LOOP_SLACK, exits


ASAN_ARMS = ("bare", "mutex", "mutex --accept-mutex-strict", "bare --threads 2", "bare --threads 2 --shared-epoll",
             "blocking", "blocking --threads 2",
             "handoff --threads 2", "fdpass --threads 2", "fdpass --spawn-workers",
             "reuseport-bpf --spawn-workers")


@pytest.mark.parametrize("variant,binary",
                         [(v, SERVER) for v in SERVING]
                         + [(v, SERVER_ASAN) for v in ASAN_ARMS],
                         ids=SERVING + [v + " asan" for v in ASAN_ARMS])
def test_bad_requests_answered_and_workers_survive(start_server, variant, binary):
    """Malformed input gets 400 and a close, an oversized head 431, a POST
    405 with its body skipped; afterwards both workers still serve (no
    reaped line, same pids). The ASan/UBSan build must report nothing."""
    s = start_server(variant, binary=binary)
    bad = [
        (b"GARBAGE\r\n\r\n", b"400"),
        (b"GET / HTTP/2.0\r\n\r\n", b"400"),
        (b"GET / HTTP/1.1\r\nNo colon\r\n\r\n", b"400"),
        (b"GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", b"400"),
        (b"GET / HTTP/1.1\r\nX: " + b"a" * 9000 + b"\r\n\r\n", b"431"),
        # Well formed, so the connection stays open after the 400: the
        # client closes it (http_exchange reads until the close).
        (b"GET /work?us=abc HTTP/1.1\r\nConnection: close\r\n\r\n", b"400"),
        (b"GET /nowhere HTTP/1.1\r\nConnection: close\r\n\r\n", b"404"),
        (b"\x00\xff\x01binary\r\n\r\n", b"400"),
    ]
    for raw, code in bad:
        out = http_exchange(s.port, raw)
        assert out.startswith(b"HTTP/1.1 " + code), "%r answered %r" % (raw[:40], out[:60])
    # A POST with a body: 405, and the body is skipped so the next request
    # parses (a one-request variant closes after the 405 instead).
    with socket.create_connection(("127.0.0.1", s.port), timeout=5) as c:
        c.sendall(b"POST /pid HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello")
        assert read_response(c)[0] == 405
        if one_request(variant):
            assert c.recv(1) == b""
        else:
            assert get(s.port, "/pid", sock=c)[0] == 200
    seen = set()
    for _ in range(60):
        seen.add(int(get(s.port, "/pid")[2]))
    assert seen <= set(s.pids)
    assert all(alive(p) for p in s.pids)
    assert s.stop() == 0
    # Over the server's whole life, read to the end of its output after the
    # stop (not for a fixed while): no worker was reaped before the stop or
    # respawned, and the workers that exited at the stop are the first ones.
    reaped = [e for e in s.events if e.get("event") == "reaped"]
    assert not [e for e in s.events if e.get("event") == "respawned"], s.events
    assert all(e.get("status") == "exit 0" for e in reaped), reaped
    exits = [e for e in s.events if e.get("event") == "worker_exit"]
    assert len(exits) == len(s.pids), s.events
    assert sorted(e["tid"] for e in exits) == sorted(w["tid"] for w in s.ready["workers"]), (exits, s.ready)
    err = s.proc.stderr.read().decode(errors="replace")
    assert "runtime error" not in err and "AddressSanitizer" not in err, err


@pytest.mark.parametrize("variant", SERVING)
def test_sigterm_finishes_in_flight_and_leaves_nothing(start_server, variant):
    """SIGTERM while /sleep?ms=300 is in flight (waited on: a worker thread
    is asleep inside the handler's nanosleep, and the answer has not arrived
    when the signal has been sent): the client still gets its full answer
    and then a clean close (EOF, not a reset), the server exits 0, and no
    worker process remains."""
    s = start_server(variant)
    c = socket.create_connection(("127.0.0.1", s.port), timeout=5)
    c.sendall(b"GET /sleep?ms=300 HTTP/1.1\r\nHost: t\r\n\r\n")
    wait_tasks([(w["pid"], w["tid"]) for w in s.ready["workers"]], in_nanosleep, "inside /sleep", want=any, polls=1)
    os.killpg(s.proc.pid, signal.SIGTERM)
    assert not select.select([c], [], [], 0)[0], "answered before the SIGTERM was sent: not in flight"
    status, headers, body = read_response(c, timeout=15)
    assert status == 200 and body == b"slept 300 ms\n"
    assert c.recv(1) == b"", "the connection stayed open after the stop"
    c.close()
    assert s.proc.wait(timeout=15) == 0
    for pid in s.pids:
        deadline = time.monotonic() + 10  # reaped by init once the server is gone
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not alive(pid), "worker %d outlived its server" % pid


@pytest.mark.parametrize("variant", SERVING)
def test_second_server_on_same_port_refused(start_server, variant):
    """While one server holds a port, a second one on it exits 2 naming the
    port, and the first keeps serving."""
    s = start_server(variant)
    res = subprocess.run([SERVER, "--variant", *variant.split(), "--port", str(s.port)],
                         capture_output=True, text=True, timeout=10)
    assert res.returncode == 2
    assert "--port %d" % s.port in res.stderr and "already in use" in res.stderr
    assert res.stderr.count("\n") == 1, "expected one line, got %r" % res.stderr
    assert get(s.port, "/pid")[0] == 200


SIGCHLD_BIT = 1 << (signal.SIGCHLD - 1)


def wait_sigchld_handled(sup, timeout=10.0):
    """Waits until supervisor sup has no SIGCHLD pending (its signalfd was
    read) and then sleeps in its poll() on two consecutive polls: it has
    finished the loop pass that handled it, lines included."""
    def handled(state, wchan):
        with open("/proc/%d/status" % sup) as f:
            pending = {k: int(v, 16) for k, v in (l.split(":", 1) for l in f if l.startswith(("SigPnd", "ShdPnd")))}
        return not any(v & SIGCHLD_BIT for v in pending.values()) and state == "S" and "poll" in wchan

    wait_tasks([(sup, sup)], handled, "the supervisor's SIGCHLD handled", timeout)


@pytest.mark.parametrize("variant", STOPPABLE)
def test_killed_worker_is_respawned(start_server, variant):
    """SIGKILL worker 1: the supervisor logs reaped then respawned for index
    1 with a new pid, and that new worker serves: with worker 0 SIGSTOPped
    (waited on: state T, off its CPU), 10 new connections are answered by
    the new worker (split once every request reached the server and the new
    worker sleeps idle in epoll_wait; those queued at worker 0, by its own
    listener or a hand-off, are answered by it after SIGCONT)."""
    s = start_server(variant)
    old = s.pids[1]
    os.kill(old, signal.SIGKILL)
    reaped = s.wait_for("reaped", index=1)
    assert reaped["pid"] == old and reaped["status"] == "signal 9"
    new = s.wait_for("respawned", index=1)["pid"]
    assert new != old and alive(new)
    os.kill(s.pids[0], signal.SIGSTOP)
    try:
        wait_stopped(s.pids[0])
        answered, waiting = split_answered(open_pid_requests(s.port, 10), s.port, new)
        assert new in answered, "the new worker answered none of %r" % answered
        assert set(answered) == {new}
    finally:
        os.kill(s.pids[0], signal.SIGCONT)
    for c in waiting:  # queued at worker 0 (its listener or its channel): answered now
        assert int(read_response(c, timeout=15)[2]) == s.pids[0]
        c.close()
    assert s.stop() == 0


@pytest.mark.parametrize("variant", STOPPABLE)
def test_stopped_worker_is_not_respawned(start_server, variant):
    """SIGSTOP worker 0 (waited on: state T, off its CPU, so its SIGCHLD
    was sent): once the supervisor has read that SIGCHLD and gone back to
    sleep in poll, no reaped or respawned line was logged. With a shared
    listener the other worker answers all 10 new connections meanwhile
    (split once every request reached the server and that worker sleeps
    idle in epoll_wait); with per-worker listeners (reuseport) the kernel
    still queues some at the stopped worker's own listener, and fdpass
    hands some to it (a stopped worker looks parked and idle); those are
    answered, not lost, once it is SIGCONTed. Then SIGTERM exits 0 with no
    crash logged (the supervisor reaps with WNOHANG alone, not
    WUNTRACED)."""
    s = start_server(variant)
    os.kill(s.pids[0], signal.SIGSTOP)
    try:
        wait_stopped(s.pids[0])
        wait_sigchld_handled(s.proc.pid)
        conns = open_pid_requests(s.port, 10)
        answered, waiting = split_answered(conns, s.port, s.pids[1])
        events = s.collect(0.1)  # the lines already written (the pipe holds them by now)
        assert not [e for e in events if e.get("event") in ("reaped", "respawned", "gave_up")], events
        assert set(answered) <= {s.pids[1]}
        if variant.split()[0] in QUEUES_AT_STOPPED_WORKER:
            assert answered, "no connection reached the running worker"
        else:
            assert not waiting, "%d connections waited for the stopped worker" % len(waiting)
    finally:
        os.kill(s.pids[0], signal.SIGCONT)
    for c in waiting:
        assert int(read_response(c, timeout=15)[2]) == s.pids[0]
        c.close()
    assert s.stop() == 0
    assert not [e for e in s.events if e.get("event") in ("respawned", "gave_up")]
    assert [e["status"] for e in s.events if e.get("event") == "reaped"] == ["exit 0", "exit 0"]


def test_respawn_limit_gives_up_and_sibling_serves(start_server):
    """With --respawn-limit 0 a killed worker is not replaced: the supervisor
    logs gave_up for its index, and the remaining worker answers."""
    s = start_server("bare", args=["--respawn-limit", "0"])
    os.kill(s.pids[1], signal.SIGKILL)
    assert "limit" in s.wait_for("gave_up", index=1)["reason"]
    for _ in range(5):
        assert int(get(s.port, "/pid")[2]) == s.pids[0]
    assert s.stop() == 0


def test_fast_deaths_give_up_after_five(start_server):
    """A worker that dies within 1 s of its fork five times in a row is given
    up on instead of being respawned forever; its sibling keeps serving."""
    s = start_server("bare")
    pid = s.pids[1]
    for k in range(5):
        os.kill(pid, signal.SIGKILL)
        s.wait_for("reaped", pid=pid)
        if k < 4:
            pid = s.wait_count("respawned", k + 1)[-1]["pid"]
    gave = s.wait_for("gave_up", index=1)
    assert "5 deaths" in gave["reason"]
    assert len([e for e in s.events if e.get("event") == "respawned"]) == 4
    assert int(get(s.port, "/pid")[2]) == s.pids[0]
    assert s.stop() == 0


def test_idle_keepalive_connection_closed(start_server):
    """--idle-timeout 1: a keep-alive connection left idle is closed by the
    server (EOF) within a few seconds rather than held forever."""
    s = start_server("bare", args=["--idle-timeout", "1"])
    with socket.create_connection(("127.0.0.1", s.port), timeout=6) as c:
        assert get(s.port, "/pid", sock=c)[0] == 200
        t0 = time.monotonic()
        assert c.recv(1) == b""
        assert time.monotonic() - t0 < 5


def test_pin_workers(start_server):
    """--pin-workers 0,1 puts worker i on the i-th CPU: the ready line and
    the kernel's affinity for each pid agree."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs 2 CPUs")
    cpus = sorted(os.sched_getaffinity(0))[:2]
    s = start_server("bare", args=["--pin-workers", "%d,%d" % tuple(cpus)])
    for w, cpu in zip(s.ready["workers"], cpus):
        assert w["cpu"] == str(cpu)
        assert os.sched_getaffinity(w["pid"]) == {cpu}


@pytest.mark.parametrize("args,names", [
    (["--variant", "nope"], "--variant nope"),
    (["--variant", "bare", "--workers", "0"], "--workers 0"),
    (["--variant", "bare", "--port", "70000"], "--port 70000"),
    (["--variant", "bare", "--pin-workers", "4095"], "--pin-workers"),
    (["--variant", "bare", "--pin-workers", "a,b"], "--pin-workers"),
    (["--variant", "bare", "--host", "example"], "--host example"),
    (["--variant", "bare", "--bogus"], "--bogus"),
    (["--variant"], "--variant"),
    (["--workers", "2"], "--variant"),
    (["--variant", "bare", "--threads", "0"], "--threads 0"),
    (["--variant", "bare", "--threads", "2", "--workers", "2"], "--workers: cannot be combined with --threads"),
    (["--variant", "bare", "--shared-epoll"], "--shared-epoll: threads mode only"),
    (["--variant", "exclusive", "--threads", "2", "--shared-epoll"], "--shared-epoll: does not apply"),
    (["--variant", "bare", "--threads", "2", "--respawn-limit", "3"], "--respawn-limit: does not apply to --threads"),
    (["--variant", "handoff"], "--variant handoff: runs in threads mode only"),
    (["--variant", "handoff", "--threads", "2", "--handoff-policy", "fair"], "--handoff-policy fair"),
    (["--variant", "handoff", "--threads", "2", "--steal-threshold", "0"], "--steal-threshold 0"),
    (["--variant", "handoff", "--threads", "2", "--handoff-capacity", "0"], "--handoff-capacity 0"),
    (["--variant", "reuseport", "--threads", "2", "--handoff-policy", "open"], "--handoff-policy: does not apply"),
])
def test_bad_arguments_exit_2(args, names):
    """Every bad argument exits 2 with one line naming it (and an unknown
    variant lists the valid names)."""
    res = subprocess.run([SERVER, "--port", "0", *args], capture_output=True, text=True, timeout=10)
    assert res.returncode == 2, res
    assert res.stderr.count("\n") == 1 and names in res.stderr, res.stderr
    if "nope" in args:
        assert all(v in res.stderr for v in VARIANTS)
