"""Bad input over the wire, against every variant (issue 8).

tests/test_server.py's test_bad_requests_answered_and_workers_survive already
covers garbage bytes, a wrong version, a header line without a colon,
chunked bodies, a head over the limit (431) and a POST with a body. This
file adds what it does not: a request line without a version, a request
split across many one-byte writes, a body on GET with Content-Length, a
client that resets mid-request, and a slowloris held to --header-timeout
while another client is served. After each, the workers must all still be
there (no "reaped" line, every pid alive).

The cheap cases run over every SERVING arm; the slowloris (which waits out a
1 s header timeout) over a representative subset, plus the ASan/UBSan build
of the two sweep paths (a worker's own connections, and --shared-epoll's
shutdown of another thread's connection under the table lock).
"""

import os
import signal
import socket
import struct
import subprocess
import time

import pytest

from tests.conftest import (SERVER, SERVER_ASAN, SERVING, alive, get, idle_waiting, in_nanosleep, one_request,
                            read_response, read_responses, task_state, wait_tasks)

SLOWLORIS_ARMS = ["bare", "reuseport", "fdpass", "mutex", "handoff --threads 2",
                  "bare --threads 2 --shared-epoll"]
SLOWLORIS_ASAN_ARMS = ["bare", "bare --threads 2 --shared-epoll"]
HEADER_TIMEOUT_S = 1  # the slowloris's --header-timeout


SIGCHLD_BIT = 1 << (signal.SIGCHLD - 1)


def ppid(pid):
    with open("/proc/%d/stat" % pid) as f:
        return int(f.read().rsplit(")", 1)[1].split()[2])


def workers_survived(s):
    """No worker died since the ready line, checked on state, not watched
    for a while. Threads mode: the server runs and every worker thread the
    ready line named is still one of its threads. Process mode: every
    worker the ready line named still runs (not a zombie) as the
    supervisor's child, so none died, reaped or not (a respawn has a new
    pid); and once the supervisor has no SIGCHLD pending and sleeps in its
    poll (it has handled every SIGCHLD sent to it, and written the lines of
    any death it reaped), none of the lines it wrote says reaped,
    respawned or gave_up."""
    if s.threads:
        assert s.proc.poll() is None, "the server exited %s" % s.proc.returncode
        gone = [w["tid"] for w in s.ready["workers"] if task_state(w["pid"], w["tid"])[0] in ("gone", "Z")]
        assert not gone, "worker threads gone: %r" % gone
        return
    for w in s.ready["workers"]:
        assert alive(w["pid"]) and ppid(w["pid"]) == s.proc.pid, "worker %r is gone" % w

    def handled(state, wchan):
        with open("/proc/%d/status" % s.proc.pid) as f:
            pending = [int(l.split(":", 1)[1], 16) for l in f if l.startswith(("SigPnd", "ShdPnd"))]
        return not any(v & SIGCHLD_BIT for v in pending) and state == "S" and "poll" in wchan

    wait_tasks([(s.proc.pid, s.proc.pid)], handled, "the supervisor's SIGCHLDs handled")
    events = s.collect(0.05)  # reads what is in the pipe by now (a read timeout, not a watch)
    assert not [e for e in events if e.get("event") in ("reaped", "respawned", "gave_up")], events


def read_until_closed(sock, timeout=5.0):
    """Everything the server sends until it closes (EOF or reset)."""
    sock.settimeout(timeout)
    out = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            return out
        if not chunk:
            return out
        out += chunk


@pytest.mark.parametrize("variant", SERVING)
def test_request_line_without_version_is_400(start_server, variant):
    """'GET /pid' with no HTTP version (an HTTP/0.9 request line) gets 400
    and a close, and the worker goes on serving."""
    s = start_server(variant)
    with socket.create_connection(("127.0.0.1", s.port), timeout=5) as c:
        c.sendall(b"GET /pid\r\n\r\n")
        out = read_until_closed(c)
    assert out.startswith(b"HTTP/1.1 400 "), out[:80]
    assert b"Connection: close" in out
    assert int(get(s.port)[2]) in s.pids
    workers_survived(s)


@pytest.mark.parametrize("variant", SERVING)
def test_request_split_across_one_byte_writes(start_server, variant):
    """A request sent one byte per send() with TCP_NODELAY (each byte its
    own segment, many reads on the server) is answered like any other, and
    the next request on the connection too (a one-request variant,
    blocking, closes after the first answer instead)."""
    s = start_server(variant)
    raw = b"GET /pid HTTP/1.1\r\nHost: t\r\nX-Slow: yes\r\n\r\n"
    with socket.create_connection(("127.0.0.1", s.port), timeout=5) as c:
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for i in range(len(raw)):
            c.send(raw[i:i + 1])
            if i % 8 == 7:
                # A deliberate timing condition, not a synchronisation: it
                # only varies how the bytes are split into reads, and the
                # answer must be the same however they coalesce (under load
                # they may all come in one read; the test still holds).
                time.sleep(0.002)
        status, _, body = read_response(c)
        assert status == 200 and int(body) in s.pids
        if one_request(variant):
            assert c.recv(1) == b""
        else:
            assert get(s.port, sock=c)[0] == 200
    workers_survived(s)


@pytest.mark.parametrize("variant", SERVING)
def test_body_on_get_is_skipped(start_server, variant):
    """A GET with Content-Length and a body is answered, its body skipped
    (a body that is itself a request is not answered), and the next request
    on the same connection, sent with the body and after it, works. A
    one-request variant (blocking) answers the first and closes: the body
    is never taken for a request."""
    s = start_server(variant)
    body = b"GET /nowhere HTTP/1.1\r\nHost: t\r\n\r\n"
    if one_request(variant):
        with socket.create_connection(("127.0.0.1", s.port), timeout=5) as c:
            c.sendall(b"GET /pid HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\n\r\n" % len(body) + body
                      + b"GET /pid HTTP/1.1\r\nHost: t\r\n\r\n")
            rest = read_until_closed(c)
        assert rest.count(b"HTTP/1.1 ") == 1 and rest.startswith(b"HTTP/1.1 200 "), rest
        assert b"Connection: close" in rest
        workers_survived(s)
        return
    with socket.create_connection(("127.0.0.1", s.port), timeout=5) as c:
        c.sendall(b"GET /pid HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\n\r\n" % len(body) + body
                  + b"GET /pid HTTP/1.1\r\nHost: t\r\n\r\n")
        answers = read_responses(c, 2)
        assert [a[0] for a in answers] == [200, 200], answers
        # The body in a write of its own, then a request that closes.
        c.sendall(b"GET /pid HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\n\r\n" % len(body))
        time.sleep(0.02)  # a timing condition (the body usually in a read of its own); coalesced, the answers are the same
        c.sendall(body)
        c.sendall(b"GET /pid HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        rest = read_until_closed(c)
    assert rest.count(b"HTTP/1.1 ") == 2 and rest.count(b"HTTP/1.1 200 ") == 2, rest
    assert b"HTTP/1.1 404" not in rest  # (a pid in a body may hold the digits 404)
    workers_survived(s)


def reset_now(sock):
    """Closes with SO_LINGER 0: the server sees an RST, not a FIN."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


@pytest.mark.parametrize("variant", SERVING)
def test_client_reset_mid_request(start_server, variant):
    """Clients that send half a request head and reset (SO_LINGER 0), and
    one that resets with its answer pending (waited on: a worker asleep in
    its /sleep): the server keeps serving everyone else, the worker that
    slept goes back to epoll_wait, and no worker dies."""
    s = start_server(variant)
    for i in range(12):
        c = socket.create_connection(("127.0.0.1", s.port), timeout=5)
        c.sendall(b"GET /pid HTTP/1.1\r\nHo")
        if i % 2:
            # A timing condition: some reset before the server read, some
            # after; either way nobody else may suffer, so load cannot break it.
            time.sleep(0.005)
        reset_now(c)
    c = socket.create_connection(("127.0.0.1", s.port), timeout=5)
    c.sendall(b"GET /sleep?ms=300 HTTP/1.1\r\nHost: t\r\n\r\n")
    tasks = [(w["pid"], w["tid"]) for w in s.ready["workers"]]
    sleeper = wait_tasks(tasks, in_nanosleep, "inside /sleep", want=any, polls=1)
    reset_now(c)  # the worker writes its answer into a reset connection
    for _ in range(16):
        assert int(get(s.port)[2]) in s.pids
    # Past the reset connection's /sleep: the worker that slept is back in
    # epoll_wait, so it has written into the reset connection (and lived).
    wait_tasks(sleeper, idle_waiting, "back in epoll_wait (or accept) after /sleep")
    for _ in range(8):
        assert int(get(s.port)[2]) in s.pids
    workers_survived(s)


@pytest.mark.parametrize("variant,binary",
                         [(v, SERVER) for v in SLOWLORIS_ARMS]
                         + [(v, SERVER_ASAN) for v in SLOWLORIS_ASAN_ARMS],
                         ids=SLOWLORIS_ARMS + [v + " asan" for v in SLOWLORIS_ASAN_ARMS])
def test_slowloris_closed_at_header_timeout(start_server, variant, binary):
    """--header-timeout 1: a client sending its head one byte every 0.3 s
    (never finishing it) is closed with no answer within the test's bound,
    and no sooner than the timeout after its first byte (the server starts
    the head's clock at the read that brought it, after the send), while
    another client is answered in every round (one request on a keep-alive
    connection and one on a fresh one per byte sent, each asserted) from
    the first byte until after the close: its answers span at least the
    header timeout. The connection is never idle, so only the header
    timeout can close it."""
    if binary == SERVER_ASAN and not os.path.exists(SERVER_ASAN):
        pytest.skip("build/server-asan is not built (make build/server-asan)")
    s = start_server(variant, binary=binary, args=["--header-timeout", str(HEADER_TIMEOUT_S), "--idle-timeout", "60"])
    slow = socket.create_connection(("127.0.0.1", s.port), timeout=5)
    slow.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    slow.setblocking(False)
    head = b"GET /pid HTTP/1.1\r\nHost: t\r\nX-Padding: " + b"a" * 64
    other = socket.create_connection(("127.0.0.1", s.port), timeout=5)
    answered, closed, got, sent = 0, False, b"", 0
    first_byte_at = closed_at = last_answer_at = None
    deadline = time.monotonic() + 15  # a bound, not a pace: the timeout is 1 s, the sweep runs every second
    try:
        while time.monotonic() < deadline and not closed:
            try:
                if first_byte_at is None:
                    first_byte_at = time.monotonic()
                slow.send(head[sent:sent + 1])
                sent += 1
            except (BrokenPipeError, ConnectionResetError):
                closed = True
                break
            try:
                chunk = slow.recv(4096)
                got += chunk
                closed = not chunk
            except BlockingIOError:
                pass
            except ConnectionResetError:
                closed = True
            # Meanwhile another client is served, on a keep-alive connection
            # and on fresh ones.
            assert get(s.port, sock=other)[0] == 200
            assert int(get(s.port)[2]) in s.pids
            answered += 2
            last_answer_at = time.monotonic()
            if closed:
                break
            # The slowloris's pace, a timing condition: under load the gap
            # only grows, and any gap keeps the head incomplete.
            time.sleep(0.3)
        if closed:
            closed_at = time.monotonic()
            # And after the close (seen by a failed send, a reset or EOF).
            assert get(s.port, sock=other)[0] == 200
            assert int(get(s.port)[2]) in s.pids
            answered += 2
            last_answer_at = time.monotonic()
    finally:
        slow.close()
        other.close()
    assert closed, "the slowloris was still open after %d bytes" % sent
    assert sent < len(head), "the whole padded head went through"
    assert got == b"", "the slowloris was answered: %r" % got[:80]
    assert closed_at - first_byte_at >= HEADER_TIMEOUT_S, (
        "closed %.2f s after its first byte, before the %d s header timeout" % (closed_at - first_byte_at,
                                                                             HEADER_TIMEOUT_S))
    assert last_answer_at - first_byte_at >= HEADER_TIMEOUT_S and answered == 2 * (sent + 1), (
        "the other client was answered %d times over %.2f s" % (answered, last_answer_at - first_byte_at))
    workers_survived(s)
    assert s.stop() == 0
    err = s.proc.stderr.read().decode(errors="replace")
    assert "runtime error" not in err and "AddressSanitizer" not in err, err


@pytest.mark.parametrize("variant", ["bare", "bare --threads 2 --shared-epoll"])
def test_header_timeout_spares_slow_heads_and_idle_connections(start_server, variant):
    """--header-timeout 1 does not touch a head that completes in time
    (three pieces 0.3 s apart) nor a keep-alive connection idle between
    requests for longer than it (idleness is --idle-timeout's business)."""
    s = start_server(variant, args=["--header-timeout", "1", "--idle-timeout", "60"])
    with socket.create_connection(("127.0.0.1", s.port), timeout=5) as c:
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        # Timing conditions, kept: the pieces 0.3 s apart leave the head
        # complete at ~0.6 s, 0.4 s inside the timeout (load adds only the
        # ms a woken sleeper waits for a CPU); the 1.6 s idle must be longer
        # than the timeout plus a sweep, and load only lengthens it.
        for piece in (b"GET /pid HT", b"TP/1.1\r\nHost: t\r\n", b"\r\n"):
            c.sendall(piece)
            time.sleep(0.3)
        status, _, body = read_response(c)
        assert status == 200 and int(body) in s.pids
        time.sleep(1.6)  # idle past the header timeout, across a sweep
        assert get(s.port, sock=c)[0] == 200
    workers_survived(s)


def test_header_timeout_bad_values_exit_2():
    """--header-timeout takes whole seconds >= 1; anything else exits 2 with
    one line naming it. --help documents it."""
    for bad in ("0", "-1", "x", "1.5", ""):
        res = subprocess.run([SERVER, "--variant", "bare", "--port", "0", "--header-timeout", bad],
                             capture_output=True, text=True, timeout=10)
        assert res.returncode == 2, (bad, res)
        assert res.stderr.count("\n") == 1 and "--header-timeout" in res.stderr, res.stderr
    res = subprocess.run([SERVER, "--help"], capture_output=True, text=True, timeout=10)
    assert "--header-timeout S" in res.stdout


# A storm of new connections must not starve the open ones. Each worker
# accepts until EAGAIN (or a batch) and reads every new connection at once
# (its request usually came with the handshake); if those first reads ran
# inside the accept loop, a steady stream of Connection: close clients on a
# CPU-bound path would keep a worker accepting and answering new
# connections while its keep-alive connections waited (measured before the
# fix: 111 keep-alive requests against 16,389 close ones in 3 s, bare).
STORM_ARMS = ["bare", "exclusive", "fdpass", "reuseport", "mutex", "bare --threads 2 --shared-epoll",
              "handoff --threads 2", "fdpass --spawn-workers"]
STORM_PATH = "/work?us=300"  # CPU-bound: a worker is busy, so new connections queue
STORM_KEEPALIVE, STORM_CLOSE, STORM_SECONDS = 16, 32, 2


@pytest.mark.parametrize("variant", STORM_ARMS)
def test_connection_storm_does_not_starve_keepalive(start_server, tmp_path, variant):
    """wrk keep-alive (16 connections) and wrk Connection: close (32) on a
    CPU-bound path at once, side by side in one run: per connection, the
    keep-alive clients get at least a quarter of what each close client
    gets (an open connection is served once per pass, new ones once each),
    and nothing fails."""
    import shutil
    from probes.harness import wrk
    if not shutil.which(wrk.WRK):
        pytest.skip("wrk not installed (make deps)")
    s = start_server(variant)
    ka = wrk.start_wrk(str(tmp_path / "ka"), s.port, STORM_PATH, STORM_KEEPALIVE, STORM_SECONDS, threads=1)
    cl = wrk.start_wrk(str(tmp_path / "cl"), s.port, STORM_PATH, STORM_CLOSE, STORM_SECONDS,
                           ["Connection: close"], threads=1)
    ka, cl = wrk.finish_wrk(ka), wrk.finish_wrk(cl)
    per_ka, per_cl = ka["requests"] / STORM_KEEPALIVE, cl["requests"] / STORM_CLOSE
    print("%s: keep-alive %d requests (%.0f per connection), close %d (%.0f per connection); errors %s %s"
          % (variant, ka["requests"], per_ka, cl["requests"], per_cl, ka["errors"], cl["errors"]))
    assert sum(ka["errors"].values()) == 0 and sum(cl["errors"].values()) == 0, (ka["errors"], cl["errors"])
    assert cl["requests"] > 0
    assert per_ka >= per_cl / 4, "keep-alive starved: %.0f per connection against %.0f" % (per_ka, per_cl)
    workers_survived(s)
    assert s.stop() == 0
