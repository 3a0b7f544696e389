"""Tests for the reuseport-bpf variant: per-worker SO_REUSEPORT listeners
steered by an sk_reuseport BPF program (ebpf/worker_load.bpf.c) to the
live worker with the least load (servers/load.h: held connections plus SYNs
steered to it and not yet established).

What they pin down: the program steers by load (a preloaded worker gets
nothing), it counts its own assignments at SYN time so a burst splits evenly,
closes are subtracted (checked both by what new connections do and by reading
the load array itself), a dead worker is never chosen, and without the
privilege to load BPF the server says so and exits 2.

The load records are read without bpftool (and without a connection that
would count itself): the supervisor holds the slots map (BPF_F_MMAPABLE)
open, so the test copies that fd out of it with pidfd_getfd(2) and maps the
page read-only, seeing what the program and the workers see.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections import Counter

import pytest

from tests.conftest import SERVER, LoadRecords, get, run_probe

VARIANT = "reuseport-bpf"
PRELOAD_ENV = "ACCEPTLAB_TEST_PRELOAD"

needs_root = pytest.mark.skipif(os.geteuid() != 0,
                                reason="loading the sk_reuseport BPF program needs root (CAP_BPF)")

MAX_SLOTS = 128  # MAX_SLOTS in servers/server.h: two slots per worker index


def write_ready(tmp_path, ready):
    path = tmp_path / "ready.json"
    path.write_text(json.dumps(ready) + "\n")
    return str(path)


def probe_rounds(port, ready_file, *args):
    """Runs the probe with --json; returns (exit code, rounds, summary, stderr)."""
    res = run_probe("--target", "127.0.0.1:%d" % port, "--json", "--workers-from", ready_file, *args)
    rows = [json.loads(l) for l in res.stdout.splitlines()]
    rounds = [r for r in rows if r["type"] == "round"]
    summary = [r for r in rows if r["type"] == "summary"]
    return res.returncode, rounds, summary, res.stderr


class Slots(LoadRecords):
    """The slots map of a running server (conftest.LoadRecords)."""

    def read(self, n):
        """[(load, live), ...] for the first n slots."""
        return [(r["load"], r["live"]) for r in self.slots(n)]

    def loads(self, n):
        return [load for load, _ in self.read(n)]

    def wait_loads(self, expected, timeout=3.0):
        """Waits until the loads equal expected; returns the last value seen."""
        deadline = time.monotonic() + timeout
        while True:
            got = self.loads(len(expected))
            if got == expected or time.monotonic() > deadline:
                return got
            time.sleep(0.02)


def open_held(port, n):
    """Opens n connections back to back (each connect completes before the
    next SYN), then asks /pid on each: returns [(socket, worker index)]."""
    socks = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(n)]
    out = []
    for c in socks:
        status, headers, _ = get(port, "/pid", sock=c)
        assert status == 200
        out.append((c, int(headers["x-worker"])))
    return out


@needs_root
def test_preloaded_worker_gets_nothing(start_server, tmp_path):
    """ACCEPTLAB_TEST_PRELOAD=1:100 starts worker 1's load at 100: a burst of
    32 then goes 32/0 to worker 0, since its load (0..31) stays below 100
    throughout. Afterwards worker 0's load is back to 0 and worker 1's still
    100 (nothing of worker 1's closed). The program steers by load."""
    s = start_server(VARIANT, env={**os.environ, PRELOAD_ENV: "1:100"})
    slots = Slots(s.proc.pid)
    try:
        assert slots.read(2) == [(0, 1), (100, 1)]
        rc, (rnd,), _, err = probe_rounds(s.port, write_ready(tmp_path, s.ready), "--shape", "burst",
                                          "--connections", "32")
        assert rc == 0, err
        assert rnd["counts"] == {str(s.pids[0]): 32, str(s.pids[1]): 0}, rnd
        assert rnd["unanswered"] == 0
        assert slots.wait_loads([0, 100]) == [0, 100]
    finally:
        slots.close()
    assert s.stop() == 0


@needs_root
@pytest.mark.parametrize("shape,args", [
    ("burst", ["--connections", "32"]),
    ("ramp", ["--connections", "32", "--gap-ms", "5"]),
    ("keepalive", ["--connections", "32", "--requests", "4"]),
])
def test_balanced_within_two_to_one(start_server, tmp_path, shape, args):
    """Without preload, burst 32, ramp 32 (5 ms gaps) and keepalive 32 x 4 are
    each within 2:1 in every one of 3 rounds (probe --max-ratio 2 exits 0),
    with nothing unanswered. The burst is exactly 16/16 in every round: the
    program raises the chosen worker's count at SYN time, before anything is
    accepted, so each SYN sees the loads the earlier ones left (1/0, then
    1/1, ...) and the lower one wins; on a tie the rotation counter moves
    the scan's start, so the two workers alternate. The hash (plain
    reuseport) gives a binomial split instead, often 20/12 or worse."""
    s = start_server(VARIANT)
    rc, rounds, _, err = probe_rounds(s.port, write_ready(tmp_path, s.ready), "--shape", shape,
                                      "--rounds", "3", "--max-ratio", "2", *args)
    assert rc == 0, err
    assert len(rounds) == 3
    for rnd in rounds:
        assert rnd["unanswered"] == 0, rnd
        assert sorted(rnd["counts"]) == sorted(str(p) for p in s.pids)
        if shape == "burst":
            assert rnd["split"] == "16/16", rounds
    assert s.stop() == 0


@needs_root
def test_oneshot_ties_rotate(start_server, tmp_path):
    """oneshot 8 x 3 rounds (each connection closed before the next opens)
    is exactly 4/4 in every round. Here the loads are 0/0 (or the previous
    worker's close is still pending, 1/0) at every SYN, so the tie-breaking
    decides: the rotation counter moves the scan's start on every SYN and the
    workers alternate. A scan always starting at worker 0 would give it all 8
    whenever the close was already counted."""
    s = start_server(VARIANT)
    rc, rounds, _, err = probe_rounds(s.port, write_ready(tmp_path, s.ready), "--shape", "oneshot",
                                      "--connections", "8", "--rounds", "3", "--gap-ms", "5")
    assert rc == 0, err
    assert [r["split"] for r in rounds] == ["4/4"] * 3, rounds
    assert s.stop() == 0


@needs_root
def test_closes_are_subtracted(start_server, tmp_path):
    """Closing connections lowers the loads again. Two probe bursts back to
    back are each 16/16 and afterwards the load array reads 0/0 (the probe
    closed everything). Even splits alone would not show it (loads left at
    16/16 still split evenly), so held connections check it by effect: a
    burst of 32 held from Python is 16/16 (loads 16/16), closing 10 of
    worker 0's brings its load to 6, and a new burst of 10 then goes all to
    worker 0 (without the decrement it would split 5/5). Closing all brings
    both loads back to 0."""
    s = start_server(VARIANT)
    slots = Slots(s.proc.pid)
    try:
        rc, rounds, _, err = probe_rounds(s.port, write_ready(tmp_path, s.ready), "--shape", "burst",
                                          "--connections", "32", "--rounds", "2")
        assert rc == 0, err
        assert [r["split"] for r in rounds] == ["16/16", "16/16"], rounds
        assert slots.wait_loads([0, 0]) == [0, 0]

        held = open_held(s.port, 32)
        assert Counter(w for _, w in held) == {0: 16, 1: 16}
        assert slots.wait_loads([16, 16]) == [16, 16]
        to_close = [c for c, w in held if w == 0][:10]
        for c in to_close:
            c.close()
        held = [(c, w) for c, w in held if c not in to_close]
        assert slots.wait_loads([6, 16]) == [6, 16]
        more = open_held(s.port, 10)
        assert Counter(w for _, w in more) == {0: 10}, "the closes were not subtracted"
        held += more
        assert slots.wait_loads([16, 16]) == [16, 16]
        for c, _ in held:
            c.close()
        assert slots.wait_loads([0, 0]) == [0, 0]
    finally:
        slots.close()
    assert s.stop() == 0


@needs_root
def test_dead_worker_never_selected(start_server, tmp_path):
    """With --respawn-limit 0, SIGKILL worker 1 and wait for gave_up: the
    supervisor has cleared its slot (live 0, load 0), and a burst of 16 is
    answered 16 of 16 by worker 0 with no error of any kind. (With 2 workers
    the kernel's fallback would also land on worker 0, the only listener
    left; the 3-worker test below is the one a stale slot would fail.)"""
    s = start_server(VARIANT, args=["--respawn-limit", "0"])
    slots = Slots(s.proc.pid)
    try:
        os.kill(s.pids[1], signal.SIGKILL)
        s.wait_for("gave_up", index=1)
        assert slots.read(2)[1] == (0, 0)
        rc, (rnd,), _, err = probe_rounds(s.port, write_ready(tmp_path, s.ready), "--shape", "burst",
                                          "--connections", "16")
        assert rc == 0, err
        assert rnd["counts"] == {str(s.pids[0]): 16, str(s.pids[1]): 0}, rnd
        assert rnd["answered"] == 16 and rnd["unanswered"] == 0
        assert not any(rnd["errors"].values()), rnd["errors"]
    finally:
        slots.close()
    assert s.stop() == 0


@needs_root
def test_dead_worker_slot_cleared_keeps_steering(start_server, tmp_path):
    """3 workers, --respawn-limit 0, SIGKILL worker 2, wait for gave_up:
    three bursts of 16 are each exactly 8/8/0 with nothing unanswered. If
    the dead slot stayed live with its load, the program would keep choosing
    it (lowest load), fail to select the closed listener and leave every
    connection to the kernel's hash, whose split between workers 0 and 1 is
    exactly 8/8 in all three rounds with probability under 1%."""
    s = start_server(VARIANT, workers=3, args=["--respawn-limit", "0"])
    os.kill(s.pids[2], signal.SIGKILL)
    s.wait_for("gave_up", index=2)
    rc, rounds, _, err = probe_rounds(s.port, write_ready(tmp_path, s.ready), "--shape", "burst",
                                      "--connections", "16", "--rounds", "3")
    assert rc == 0, err
    for rnd in rounds:
        assert rnd["counts"] == {str(s.pids[0]): 8, str(s.pids[1]): 8, str(s.pids[2]): 0}, rounds
        assert rnd["unanswered"] == 0
    assert s.stop() == 0


@needs_root
def test_respawned_worker_is_selected_again(start_server, tmp_path):
    """SIGKILL worker 1 (respawns allowed): after the respawned line its slot
    is live again with load 0, and a burst of 32 is 16/16 between worker 0
    and the new worker 1 (the reaped worker's count did not carry over)."""
    s = start_server(VARIANT)
    slots = Slots(s.proc.pid)
    try:
        os.kill(s.pids[1], signal.SIGKILL)
        new = s.wait_for("respawned", index=1)["pid"]
        assert slots.read(2) == [(0, 1), (0, 1)]
        ready = dict(s.ready, workers=[dict(w, pid=new) if w["index"] == 1 else w
                                       for w in s.ready["workers"]])
        rc, (rnd,), _, err = probe_rounds(s.port, write_ready(tmp_path, ready), "--shape", "burst",
                                          "--connections", "32")
        assert rc == 0, err
        assert rnd["counts"] == {str(s.pids[0]): 16, str(new): 16}, rnd
    finally:
        slots.close()
    assert s.stop() == 0


def test_without_privilege_exits_2():
    """Without root (CAP_BPF) the program cannot be loaded: the server exits
    2 with one line naming the variant and saying it needs root/CAP_BPF,
    before any worker starts. As root this runs a copy of the binary as
    nobody (setpriv), from a directory nobody can read."""
    cmd = ["--variant", VARIANT, "--port", "0"]
    if os.geteuid() != 0:
        res = subprocess.run([SERVER, *cmd], capture_output=True, text=True, timeout=10)
    else:
        if not shutil.which("setpriv"):
            pytest.skip("setpriv (util-linux) is not installed: cannot drop root")
        d = tempfile.mkdtemp(prefix="acceptlab-nobody-")
        try:
            os.chmod(d, 0o755)
            binary = os.path.join(d, "acceptlab-server")
            shutil.copy(SERVER, binary)
            os.chmod(binary, 0o755)
            res = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                  binary, *cmd], capture_output=True, text=True, timeout=10, cwd="/")
        finally:
            shutil.rmtree(d)
    assert res.returncode == 2, res
    assert res.stderr.count("\n") == 1, res.stderr
    assert "--variant %s" % VARIANT in res.stderr
    assert "root" in res.stderr and "CAP_BPF" in res.stderr, res.stderr
    assert res.stdout == ""


@pytest.mark.parametrize("value", ["x", "1", "2:5", "1:-1", "-1:3", "1:", ":3", "1:5x", " 1:5",
                                   "0:1000000001"])
def test_bad_preload_exits_2(value):
    """A malformed ACCEPTLAB_TEST_PRELOAD (not INDEX:N, index not below
    --workers 2, negative or huge N) exits 2 with one line naming the
    variable; it is checked before the BPF program is loaded."""
    res = subprocess.run([SERVER, "--variant", VARIANT, "--port", "0"], capture_output=True, text=True,
                         timeout=10, env={**os.environ, PRELOAD_ENV: value})
    assert res.returncode == 2, res
    assert res.stderr.count("\n") == 1 and PRELOAD_ENV in res.stderr, res.stderr
