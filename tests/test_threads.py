"""Threads mode (--threads N) and what only it has: one process whose worker
threads are what /pid names, the shared-epoll arm of the race, and the
handoff variant's queues. The generic serving suite (test_server.py) runs
every threads-mode arm too; these tests check what it cannot see."""

import json
import time
import os
import signal
import socket

import pytest

from tests.conftest import get, open_pid_requests, pids_answering, read_response


def tasks_of(pid):
    return {int(t) for t in os.listdir("/proc/%d/task" % pid)}


def epoll_fds(pid):
    """The epoll instances the process holds: {fd: [fds registered in it]}."""
    out = {}
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            if os.readlink("/proc/%d/fd/%s" % (pid, fd)) != "anon_inode:[eventpoll]":
                continue
            with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
                out[int(fd)] = [int(line.split()[1]) for line in f if line.startswith("tfd:")]
        except OSError:
            pass
    return out


def variant_state(port):
    status, _, body = get(port, "/variant")
    assert status == 200
    return json.loads(body)


def test_threads_are_the_workers(start_server):
    """--threads 3: the ready line says mode threads and names 3 workers of
    ONE process (the server's pid) with 3 distinct tids, each a task of that
    process; the process has exactly those threads plus the main one; /pid
    answers tids only."""
    s = start_server("bare --threads 3")
    assert s.ready["mode"] == "threads"
    pids = {w["pid"] for w in s.ready["workers"]}
    tids = [w["tid"] for w in s.ready["workers"]]
    assert pids == {s.proc.pid}, "workers in another process: %r" % s.ready
    assert len(set(tids)) == 3 and s.proc.pid not in tids
    assert tasks_of(s.proc.pid) == set(tids) | {s.proc.pid}
    seen = {int(get(s.port, "/pid")[2]) for _ in range(60)}
    assert seen <= set(tids), "answered by %r, not a worker thread" % (seen - set(tids))
    assert s.stop() == 0


def test_threads_pinned(start_server):
    """--pin-workers 0,1 in threads mode pins each worker THREAD: the ready
    line's cpu and the kernel's affinity for each tid agree, and the main
    thread is left unpinned."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs 2 CPUs")
    cpus = sorted(os.sched_getaffinity(0))[:2]
    s = start_server("bare --threads 2", args=["--pin-workers", "%d,%d" % tuple(cpus)])
    for w, cpu in zip(s.ready["workers"], cpus):
        assert w["cpu"] == str(cpu)
        assert os.sched_getaffinity(w["tid"]) == {cpu}
    assert os.sched_getaffinity(s.proc.pid) == os.sched_getaffinity(0)


def test_sigint_stops_threads_mode(start_server):
    """SIGINT (Ctrl-C) stops a threads-mode server like SIGTERM: every
    worker thread says worker_exit, the server says stopped, exit 0."""
    s = start_server("fdpass --threads 2")
    assert get(s.port, "/pid")[0] == 200
    os.killpg(s.proc.pid, signal.SIGINT)
    assert s.proc.wait(timeout=15) == 0
    s.collect(0.2)
    exits = [e for e in s.events if e["event"] == "worker_exit"]
    assert sorted(e["index"] for e in exits) == [0, 1]
    assert s.events[-1] == {"event": "stopped", "reason": "signal"}


@pytest.mark.parametrize("variant,instances", [("bare --threads 2", 2), ("bare --threads 2 --shared-epoll", 1)])
def test_shared_epoll_is_one_instance(start_server, variant, instances):
    """Without --shared-epoll each thread has its own epoll instance holding
    the listener; with it the process holds ONE instance, the listener is
    registered in it once, and the connections are registered there too (so
    the kernel picks the thread for each event)."""
    s = start_server(variant)
    conns = open_pid_requests(s.port, 4)
    try:
        for c in conns:
            assert read_response(c)[0] == 200
        eps = epoll_fds(s.proc.pid)
        assert len(eps) == instances, eps
        if instances == 1:
            # The listener plus the 4 open connections, each once. A
            # connection is armed just after its first answer is sent, so
            # the last may still be on its way in: wait for it (bounded).
            deadline = time.monotonic() + 5
            while len(next(iter(eps.values()))) < 5 and time.monotonic() < deadline:
                time.sleep(0.01)
                eps = epoll_fds(s.proc.pid)
            (registered,) = eps.values()
            assert len(registered) == len(set(registered)) >= 5, registered
        else:
            listener = set.intersection(*[set(v) for v in eps.values()])
            assert len(listener) == 1, "each thread's epoll should hold the one listener: %r" % eps
    finally:
        for c in conns:
            c.close()


def test_shared_epoll_burst_nothing_lost(start_server):
    """A burst of 64 connections held open, then one request on each: every
    one is answered 200 by a worker thread of the ready line."""
    s = start_server("bare --threads 2 --shared-epoll")
    conns = [socket.create_connection(("127.0.0.1", s.port), timeout=5) for _ in range(64)]
    try:
        for c in conns:
            c.sendall(b"GET /pid HTTP/1.1\r\nHost: t\r\n\r\n")
        answers = [read_response(c) for c in conns]
        assert all(st == 200 for st, _, _ in answers)
        assert {int(b) for _, _, b in answers} <= set(s.pids)
    finally:
        for c in conns:
            c.close()
    assert s.stop() == 0


@pytest.mark.parametrize("policy", ["open", "written"])
def test_handoff_hands_off_and_loses_nothing(start_server, policy):
    """A burst of 32 held connections on 2 threads: every connection is
    answered; the kernel's hash gives each thread some, and both policies
    move some between the threads (pushes > 0 on the /variant page). When
    the burst is done, every pushed connection has been popped (nothing left
    in a queue) and nothing was refused (capacity 64 > 32)."""
    s = start_server("handoff --threads 2", args=["--handoff-policy", policy])
    answers = pids_answering(open_pid_requests(s.port, 32))
    assert len(answers) == 32 and set(answers) <= set(s.pids)
    st = variant_state(s.port)
    assert st["policy"] == policy
    pushes = sum(w["pushes"] for w in st["slots"])
    assert pushes > 0, "no hand-off in a burst of 32: %r" % st
    assert all(w["pushes"] == w["pops"] and w["queued"] == 0 and w["refused"] == 0 for w in st["slots"]), st
    assert s.stop() == 0
    exits = [e for e in s.events if e["event"] == "handoff_exit"]
    assert sum(e["handed"] for e in exits) == sum(e["received"] for e in exits) == pushes


def test_handoff_off_is_plain_reuseport(start_server):
    """--handoff-policy off: the knob-off arm hands nothing off; each thread
    serves exactly what its own listener accepted."""
    s = start_server("handoff --threads 2", args=["--handoff-policy", "off"])
    conns = open_pid_requests(s.port, 32)
    try:
        assert all(read_response(c)[0] == 200 for c in conns)
    finally:
        for c in conns:
            c.close()
    st = variant_state(s.port)
    assert st["policy"] == "off" and sum(w["pushes"] for w in st["slots"]) == 0, st
    assert s.stop() == 0
    exits = {e["index"]: e for e in s.events if e["event"] == "worker_exit"}
    assert all(e["accepted"] == e["admitted"] for e in exits.values()), exits


def test_handoff_full_queue_keeps_the_connection(start_server):
    """--handoff-capacity 1 and a burst of 32: pushes beyond a queue's one
    slot are refused and the acceptor serves the connection itself, so all
    32 are still answered."""
    s = start_server("handoff --threads 2", args=["--handoff-capacity", "1", "--handoff-policy", "written"])
    conns = open_pid_requests(s.port, 32)
    try:
        assert all(read_response(c)[0] == 200 for c in conns)
    finally:
        for c in conns:
            c.close()
    st = variant_state(s.port)
    assert st["capacity"] == 1
    assert all(w["queued"] == 0 and w["pushes"] == w["pops"] for w in st["slots"]), st
    assert s.stop() == 0
