"""ebpf/*.bt: the bpftrace one-screen scripts count what bin/acceptlab-trace
counts. Each test runs one script and the libbpf tool side by side on the
same bare server and the same traffic, and the per-thread counts must be
equal: the scripts are the tool's definitions, not approximations of them.

Attach timing cannot make them differ: the server's process group is
SIGSTOPped before either tool starts and SIGCONTed only once both say they
are attached, so both see every worker enter its wait afresh (the traffic
starts once every worker thread sleeps in epoll_wait again, read from
/proc); after the traffic the group is SIGSTOPped again (both see that last
wakeup) before either tool is stopped. Root and bpftrace only; skipped
otherwise."""

import json
import os
import re
import select
import shutil
import signal
import subprocess
import time

import pytest

from tests.conftest import ROOT, kill_group, killed_at_teardown, sequential_then_burst, stop_group, wait_idle_in_epoll

TRACER = os.path.join(ROOT, "bin", "acceptlab-trace")
BPFTRACE = shutil.which("bpftrace")
ACCEPTS = os.path.join(ROOT, "ebpf", "accepts.bt")
WAKEUPS = os.path.join(ROOT, "ebpf", "wakeups.bt")
MODES = ["bare", "bare --threads 2"]

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="bpftrace and acceptlab-trace load BPF programs: need root"),
    pytest.mark.skipif(BPFTRACE is None, reason="bpftrace is not installed (make deps installs it)"),
]

TRACEFS = "/sys/kernel/tracing"


@pytest.fixture(autouse=True, scope="module")
def tracefs():
    """bpftrace reads tracepoints from tracefs and, without it, fails with
    'tracepoint not found': mount it as acceptlab-trace would."""
    if not os.path.isdir(os.path.join(TRACEFS, "events", "syscalls")):
        res = subprocess.run(["mount", "-t", "tracefs", "tracefs", TRACEFS], capture_output=True, text=True)
        if res.returncode != 0 or not os.path.isdir(os.path.join(TRACEFS, "events", "syscalls")):
            pytest.skip("tracefs is not mounted and mounting it failed: %s" % res.stderr.strip())


MAP_LINE = re.compile(r"^@(\w+)\[([\d, ]+)\]: (\d+)$")


class Child:
    """A tool in its own process group whose stdout is read line by line
    with a deadline; stop() sends SIGINT and returns (stdout, stderr)."""

    def __init__(self, cmd):
        self.cmd = cmd
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     start_new_session=True)
        self.buf = b""
        self.lines = []

    def wait_line(self, pred, timeout=20):
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while True:
            for line in self.lines:
                if pred(line):
                    return line
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("%s: not attached within %d s; stdout: %r" % (self.cmd[:2], timeout, self.lines))
            if select.select([fd], [], [], min(left, 0.2))[0]:
                chunk = os.read(fd, 65536)
                if not chunk:
                    self.proc.wait(timeout=5)
                    raise AssertionError("%s exited %s before attaching: %s"
                                         % (self.cmd[:2], self.proc.returncode, self.proc.stderr.read().decode()))
                self.buf += chunk
                *done, self.buf = self.buf.split(b"\n")
                self.lines += [l.decode() for l in done]

    def stop(self):
        self.proc.send_signal(signal.SIGINT)
        out, err = self.proc.communicate(timeout=20)
        out = (self.buf + out).decode()
        assert self.proc.returncode == 0, (self.cmd, self.proc.returncode, err.decode())
        return "\n".join(self.lines + out.split("\n")), err.decode()

    def kill(self):
        kill_group(self.proc)


@pytest.fixture
def children():
    yield from killed_at_teardown(Child)


def bt_maps(out):
    """bpftrace's printed maps: {name: {(key, ...): value}}."""
    maps = {}
    for line in out.splitlines():
        m = MAP_LINE.match(line.strip())
        if m:
            key = tuple(int(k) for k in m.group(2).split(","))
            maps.setdefault(m.group(1), {})[key] = int(m.group(3))
    return maps


def side_by_side(server, children, script):
    """Runs script and acceptlab-trace over the traffic; returns (bpftrace's
    maps, the tool's worker objects by tid, connections answered by id)."""
    stop_group(server)
    bt = children([BPFTRACE, script, str(server.proc.pid)])
    tr = children([TRACER, "--pgid", str(server.proc.pid), "--json"])
    name = os.path.basename(script) + ": tracing"
    bt.wait_line(lambda l: l.startswith(name))
    assert json.loads(tr.wait_line(lambda l: l.startswith("{")))["type"] == "attached"
    os.killpg(server.proc.pid, signal.SIGCONT)
    for w in server.ready["workers"]:  # every worker back asleep in epoll_pwait before the first connection
        wait_idle_in_epoll(w["pid"], [w["tid"]])
    answered = sequential_then_burst(server.port)
    stop_group(server)
    bt_out, bt_err = bt.stop()
    tr_out, _ = tr.stop()
    objs = [json.loads(l) for l in tr_out.splitlines() if l.startswith("{")]
    workers = {o["tid"]: o for o in objs if o["type"] == "worker"}
    return bt_maps(bt_out), workers, answered


def nonzero(d):
    return {k: v for k, v in d.items() if v}


@pytest.mark.parametrize("mode", MODES)
def test_accepts_bt_equals_tracer(start_server, children, mode):
    """accepts.bt PID: for every worker thread, @won[pid, tid] and
    @eagain[pid, tid] equal acceptlab-trace's won and lost for the same
    traffic (both count accept/accept4 returns: >= 0, and -EAGAIN), and the
    wins total 72, the connections made, each worker's wins being the
    connections it answered. In threads mode the workers are threads of the
    server's pid; in process mode children of it."""
    s = start_server(mode)
    maps, workers, answered = side_by_side(s, children, ACCEPTS)
    won = maps.get("won", {})
    eagain = maps.get("eagain", {})
    assert won == nonzero({(w["pid"], tid): w["won"] for tid, w in workers.items()}), (maps, workers)
    assert eagain == nonzero({(w["pid"], tid): w["lost"] for tid, w in workers.items()}), (maps, workers)
    assert sum(won.values()) == 72, won
    ident = "tid" if s.threads else "pid"
    by_tid = {w["tid"]: answered.get(w[ident], 0) for w in s.ready["workers"]}
    assert {tid: n for (_, tid), n in won.items()} == nonzero(by_tid), (won, answered)
    assert "error" not in maps, maps


@pytest.mark.parametrize("mode", MODES)
def test_wakeups_bt_equals_tracer(start_server, children, mode):
    """wakeups.bt PID: for every worker thread, @wakeups[pid, tid] equals
    acceptlab-trace's wakeups and @waker_cpu[pid, tid, cpu] its waker_cpu,
    exactly: both count a sched_waking of a thread blocked in
    epoll_wait/epoll_pwait/epoll_pwait2 or accept/accept4, once per sleep,
    and with the group stopped around both attaches and detaches they see
    the same sleeps (the workers' 1 s epoll timeouts and the SIGSTOP that
    ends the run included). The first connection finds every worker asleep
    in epoll_pwait and bare wakes every waiter, so each worker thread has at
    least one wakeup. (Not one per connection: a worker still running when
    the next connection arrives takes it without sleeping.)"""
    s = start_server(mode)
    maps, workers, _ = side_by_side(s, children, WAKEUPS)
    wakeups = maps.get("wakeups", {})
    assert wakeups == nonzero({(w["pid"], tid): w["wakeups"] for tid, w in workers.items()}), (maps, workers)
    by_cpu = {(w["pid"], tid, int(c)): n for tid, w in workers.items() for c, n in w["waker_cpu"].items()}
    assert maps.get("waker_cpu", {}) == nonzero(by_cpu), (maps, workers)
    assert {tid for (_, tid) in wakeups} == {w["tid"] for w in s.ready["workers"]}, wakeups


def test_seconds_argument_exits_on_its_own(start_server):
    """accepts.bt PID 1: with a duration it prints the table and exits 0 by
    itself (no Ctrl-C), so it can be run for a fixed time."""
    s = start_server("bare")
    res = subprocess.run([BPFTRACE, ACCEPTS, str(s.proc.pid), "1"], capture_output=True, text=True, timeout=30)
    assert res.returncode == 0, res.stderr
    assert "accepts won [pid, tid]:" in res.stdout and "EAGAIN (lost) [pid, tid]:" in res.stdout, res.stdout
