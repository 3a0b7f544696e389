"""blocking: every worker blocked in accept() on one shared, blocking
listener (servers/variants/blocking.c), what php-fpm's children do.

What it guarantees, read from the kernel rather than from the server's
word: an idle worker sleeps inside accept() (or accept4()) on the listener,
whose descriptor has no O_NONBLOCK and is in no epoll instance; each
connection of a burst is taken by a worker that was waiting there, one
connection per worker at a time, the rest waiting in the listener's accept
queue; the kernel wakes the worker that has waited longest, so connections
asked one after another alternate between two workers; a client that
connects and sends nothing holds one worker only, and only for
--header-timeout from its accept, while the other serves everyone; a stop
wakes workers blocked in accept() at once. The generic serving tests
(tests/test_server.py, test_robustness.py, test_reload.py) run it like any
arm, expecting one answer per connection, with Connection: close.
"""

import os
import socket
import subprocess
import time

import pytest

from tests.conftest import get, in_accept_wait, read_response, wait_tasks

SYS_ACCEPT = {43, 288}     # accept, accept4 (x86_64)
SYS_EPOLL_WAIT = {232, 281}  # epoll_wait, epoll_pwait
HEADER_TIMEOUT_S = 1
O_NONBLOCK = 0o4000

pytestmark = pytest.mark.skipif(os.uname().machine != "x86_64", reason="syscall numbers are x86_64's")


def syscall_of(pid, tid):
    """(syscall number, first argument) the thread is blocked in, from
    /proc/PID/task/TID/syscall; (None, None) when it runs or is gone."""
    try:
        with open("/proc/%d/task/%d/syscall" % (pid, tid)) as f:
            words = f.read().split()
    except OSError:
        return None, None
    if not words or words[0] in ("running", "-1"):
        return None, None
    return int(words[0]), int(words[1], 16)


def tasks(s):
    return [(w["pid"], w["tid"]) for w in s.ready["workers"]]


def listener_inode(port):
    """The inode of the socket listening on port, from /proc/net/tcp."""
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            if int(fields[1].split(":")[1], 16) == port and fields[3] == "0A":
                return int(fields[9])
    raise AssertionError("nothing listens on port %d" % port)


def fd_inode(pid, fd):
    target = os.readlink("/proc/%d/fd/%d" % (pid, fd))
    assert target.startswith("socket:["), target
    return int(target[len("socket:["):-1])


def blocked_in_accept(s, task, timeout=10.0):
    """Waits until the worker thread task sleeps in accept() on the server's
    listener (the syscall's fd argument is the listening socket): returns
    that fd."""
    pid, tid = task
    inode = listener_inode(s.port)
    deadline = time.monotonic() + timeout
    while True:
        nr, fd = syscall_of(pid, tid)
        if nr in SYS_ACCEPT and fd_inode(pid, fd) == inode:
            return fd
        assert time.monotonic() < deadline, "worker %r is not blocked in accept() on the listener: %r" % (
            task, syscall_of(pid, tid))
        time.sleep(0.002)


def accept_queue(port):
    """Connections waiting in the listener's accept queue (Recv-Q of a
    listening socket)."""
    out = subprocess.run(["ss", "-ltnH", "sport = :%d" % port], capture_output=True, text=True, check=True).stdout
    return int(out.split()[1])


def wait_queue(port, n, timeout=10.0):
    deadline = time.monotonic() + timeout
    while accept_queue(port) != n:
        assert time.monotonic() < deadline, "accept queue %d, wanted %d" % (accept_queue(port), n)
        time.sleep(0.002)


@pytest.mark.parametrize("mode", ["process", "threads"])
def test_idle_workers_block_in_accept_on_a_blocking_listener(start_server, mode):
    """Every idle worker (process, or thread) sleeps in accept() on the
    listener; that descriptor has no O_NONBLOCK, and no epoll instance of
    the server holds it."""
    s = start_server("blocking --threads 2" if mode == "threads" else "blocking")
    for task in tasks(s):
        fd = blocked_in_accept(s, task)
        pid = task[0]
        with open("/proc/%d/fdinfo/%d" % (pid, fd)) as f:
            flags = int(next(l for l in f if l.startswith("flags:")).split()[1], 8)
        assert not flags & O_NONBLOCK, "the listener has O_NONBLOCK (flags %o)" % flags
        for other in os.listdir("/proc/%d/fd" % pid):
            try:
                if os.readlink("/proc/%d/fd/%s" % (pid, other)) != "anon_inode:[eventpoll]":
                    continue
                with open("/proc/%d/fdinfo/%s" % (pid, other)) as f:
                    watched = [int(l.split()[1]) for l in f if l.startswith("tfd:")]
            except OSError:
                continue
            assert fd not in watched, "epoll fd %s of %d watches the listener" % (other, pid)
    assert s.stop() == 0


def test_a_burst_is_taken_one_connection_per_waiting_worker(start_server):
    """8 connections opened at once, none asking yet: each of the 2 workers,
    blocked in accept() before, takes one and waits for its request (now in
    epoll_wait, no longer in accept()); the other 6 wait in the listener's
    accept queue. Once all ask, every connection is answered, each by a
    worker the ready line named, with Connection: close, the queue drains,
    and both workers are back in accept() on the listener."""
    s = start_server("blocking")
    for task in tasks(s):
        blocked_in_accept(s, task)
    conns = [socket.create_connection(("127.0.0.1", s.port), timeout=5) for _ in range(8)]
    try:
        wait_queue(s.port, 6)
        wait_tasks(tasks(s), lambda st, wchan: st == "S" and "accept" not in wchan, "holding one connection each")
        for pid, tid in tasks(s):
            assert syscall_of(pid, tid)[0] in SYS_EPOLL_WAIT, "worker %d is not waiting for its request" % pid
        for c in conns:
            c.sendall(b"GET /pid HTTP/1.1\r\nHost: t\r\n\r\n")
        answered = []
        for c in conns:
            status, headers, body = read_response(c)
            assert status == 200 and headers["connection"] == "close"
            answered.append(int(body))
            assert c.recv(1) == b""
    finally:
        for c in conns:
            c.close()
    assert set(answered) <= set(s.pids) and len(answered) == 8
    assert accept_queue(s.port) == 0
    for task in tasks(s):
        blocked_in_accept(s, task)
    exits = s.stop() == 0 and [e for e in s.events if e.get("event") == "worker_exit"]
    assert sum(e["accepted"] for e in exits) == 8 and all(e["accepted"] >= 1 for e in exits), exits


def test_the_longest_waiter_takes_the_next_connection(start_server):
    """Connections asked one after another, each once both workers are back
    in accept(): the worker that served the last one re-entered the wait
    queue behind the other, which the kernel wakes first, so the answers
    alternate between the two workers. (A worker whose accept() waited its
    full second returns to the loop and re-enters the queue at its tail: at
    most one pair in a row may then repeat; allowed twice.)"""
    s = start_server("blocking")
    order = []
    for _ in range(20):
        for task in tasks(s):
            blocked_in_accept(s, task)
        order.append(int(get(s.port)[2]))
    alternations = sum(a != b for a, b in zip(order, order[1:]))
    assert alternations >= len(order) - 3, order
    assert s.stop() == 0


@pytest.mark.parametrize("mode", ["process", "threads"])
def test_a_silent_client_holds_one_worker_until_the_header_timeout(start_server, mode):
    """--header-timeout 1: a client that connects and sends nothing is
    accepted by one worker, which then waits for it; the other worker
    answers every request meanwhile. The silent client is closed without an
    answer (EOF) no sooner than the timeout after it connected and well
    before the idle timeout, and then both workers serve again."""
    spec = "blocking --threads 2" if mode == "threads" else "blocking"
    s = start_server(spec, args=["--header-timeout", str(HEADER_TIMEOUT_S), "--idle-timeout", "60"])
    index_of = {w[s.id_key]: w["index"] for w in s.ready["workers"]}
    silent = socket.create_connection(("127.0.0.1", s.port), timeout=10)
    t0 = time.monotonic()
    try:
        holder = wait_tasks(tasks(s), lambda st, wchan: st == "S" and "accept" not in wchan,
                            "one worker holding the silent client", want=any)
        assert len(holder) == 1, holder
        other = next(w for w in s.ready["workers"] if (w["pid"], w["tid"]) not in holder)
        served = {int(get(s.port)[2]) for _ in range(10)}
        assert served == {other[s.id_key]}, (served, index_of)
        assert time.monotonic() - t0 < HEADER_TIMEOUT_S, "too slow to tell: the header timeout passed meanwhile"
        assert silent.recv(1) == b"", "the silent client got an answer"
        closed = time.monotonic() - t0
    finally:
        silent.close()
    assert HEADER_TIMEOUT_S - 0.05 <= closed < HEADER_TIMEOUT_S + 2, closed
    wait_tasks(tasks(s), in_accept_wait, "both back in accept()")
    served = set()
    for _ in range(20):
        served.add(int(get(s.port)[2]))
        if len(served) == 2:
            break
    assert served == set(s.pids)
    assert s.stop() == 0


@pytest.mark.parametrize("mode", ["process", "threads"])
def test_a_stop_wakes_workers_blocked_in_accept(start_server, mode):
    """SIGTERM while every worker sleeps in accept(): the signal interrupts
    the wait (EINTR; the harness installs its handler without SA_RESTART),
    so the server exits 0 well within accept()'s 1 s bound on its wait."""
    s = start_server("blocking --threads 2" if mode == "threads" else "blocking")
    for task in tasks(s):
        blocked_in_accept(s, task)
    t0 = time.monotonic()
    assert s.stop() == 0
    assert time.monotonic() - t0 < 0.9, "the stop waited for accept()'s timeout"
    assert len([e for e in s.events if e.get("event") == "worker_exit"]) == 2, s.events
