"""bin/acceptlab-trace: it loads, attaches, and counts exactly what the
workers did. The ground truth is what the connections themselves say: every
connection asks /pid, so each worker's accepts won must equal the number of
connections that worker answered (for every variant whose acceptor serves
the connection), and the totals must equal the connections made. It must
find the workers of any server by port, and fail clearly when it cannot
trace. Root only (it loads BPF programs); skipped otherwise."""

import json
import os
import signal
import socket
import subprocess

import pytest

from acceptlab.paths import module_cmd
from tests.conftest import (PROBE, ROOT, answered_by, bpf_attachments, get, kill_group, killed_at_teardown,
                            open_pid_requests, pids_answering, sequential_then_burst, wait_idle_in_epoll)

TRACER = os.path.join(ROOT, "bin", "acceptlab-trace")
FOREIGN = module_cmd("tests.foreign_server")
root_only = pytest.mark.skipif(os.geteuid() != 0, reason="the tracer loads BPF programs: needs root")


class Trace:
    """acceptlab-trace --json on the given targets; stop() returns its objects."""

    def __init__(self, *targets, timeline=False, env=None):
        cmd = [TRACER, *targets, "--json"] + (["--timeline"] if timeline else [])
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     start_new_session=True, env=dict(os.environ, **(env or {})))
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait(timeout=10)
            raise AssertionError("tracer exited %s before attaching: %s"
                                 % (self.proc.returncode, self.proc.stderr.read()))
        self.attached = json.loads(line)
        assert self.attached["type"] == "attached", line

    def switch(self, sig, word):
        """SIGUSR1 (pause) or SIGUSR2 (resume), and its acknowledgement: the
        next line must be word ("paused", "resumed")."""
        self.proc.send_signal(sig)
        line = self.proc.stdout.readline()
        assert line and json.loads(line)["type"] == word, line
        return json.loads(line)

    def stop(self):
        self.proc.send_signal(signal.SIGINT)
        out, err = self.proc.communicate(timeout=20)
        assert self.proc.returncode == 0, err
        return [json.loads(l) for l in out.splitlines()]

    def kill(self):
        kill_group(self.proc)


@pytest.fixture
def tracer():
    yield from killed_at_teardown(Trace)


def workers_of(objs):
    return {o["tid"]: o for o in objs if o["type"] == "worker"}


@root_only
@pytest.mark.parametrize("variant", ["bare", "exclusive", "lt-yield", "reuseport", "mutex --accept-mutex-strict",
                                     "bare --threads 2", "reuseport --threads 2"])
def test_accepts_won_equal_connections_answered(start_server, tracer, variant):
    """40 sequential connections, then a burst of 32 held open: for each
    worker, the accepts it won (tracer) equal the connections it answered
    (/pid), and the totals are exactly 72: the tracer neither misses nor
    invents an accept. Every won accept ran on a CPU of this machine."""
    s = start_server(variant)
    t = tracer("--pgid", str(s.proc.pid))
    # No wait before stopping the tracer: it counts a won accept in the
    # kernel as accept() returns, before the worker can answer, so every
    # answer read means its accept is already counted.
    answered = sequential_then_burst(s.port)
    ws = workers_of(t.stop())
    won = {w["tid"]: w["won"] for w in ws.values()}
    ident = "tid" if s.threads else "pid"
    by_tid = {w["tid"]: answered.get(w[ident], 0) for w in s.ready["workers"]}
    assert sum(won.values()) == 72, won
    assert {tid: won.get(tid, 0) for tid in by_tid} == by_tid, (won, answered)
    cpus = {int(c) for w in ws.values() for c in w["accept_cpu"]}
    assert cpus <= os.sched_getaffinity(0) | set(range(os.cpu_count())), cpus


@root_only
@pytest.mark.parametrize("slots", [None, "1"], ids=["arrays", "hashes"])
def test_respawned_workers_are_traced_from_their_fork(start_server, tracer, slots):
    """bare at 2 workers, traced by its process group: both workers are
    killed, one after the other, and the supervisor (traced) forks a new
    one for each, which the tracer follows from its fork
    (sched_process_fork). So each of the 8 connections after is won by the
    new worker that answered it, and by no one else. With
    ACCEPTLAB_TEST_TASK_SLOTS=1 the arrays of traced processes and threads
    have one entry each: the children and all but one thread are kept in
    the hashes beside them, and the counts must be the same."""
    s = start_server("bare", workers=2)
    t = tracer("--pgid", str(s.proc.pid), env={"ACCEPTLAB_TEST_TASK_SLOTS": slots} if slots else None)
    for index, pid in enumerate(s.pids):
        os.kill(pid, signal.SIGKILL)
        s.wait_for("respawned", index=index)
    new = {e["pid"] for e in s.events if e.get("event") == "respawned"}
    answered = answered_by(s.port, 8)
    assert set(answered) <= new, (answered, new)
    won = {tid: w["won"] for tid, w in workers_of(t.stop()).items() if w["won"]}
    assert won == answered, (won, answered)


@root_only
def test_fdpass_acceptor_differs_from_owner_but_totals_hold(start_server, tracer):
    """fdpass: the tracer counts who ACCEPTED; the probe sees who SERVED.
    A burst of 32: accepts won sum to exactly 32, and the split the
    connections report is 16/16 or 17/15 (the hand-off), whatever the
    acceptor, with the tracer slowing every worker down."""
    s = start_server("fdpass")
    t = tracer("--pgid", str(s.proc.pid))
    answers = pids_answering(open_pid_requests(s.port, 32))
    ws = workers_of(t.stop())
    assert sum(w["won"] for w in ws.values()) == 32
    assert sorted(answers.count(p) for p in s.pids) in ([16, 16], [15, 17])  # the target: within 17/15


@root_only
def test_wakeups_and_latency_recorded(start_server, tracer):
    """Sequential connections to one idle worker: each connection arrives
    while the worker sleeps in epoll_wait (waited on: its state and wchan
    say so on two polls in a row, not a sleep), so each accept follows a wakeup of it: wakeups >= accepts won
    = 20, the waker CPU is recorded per wakeup, and the wake -> accept
    histogram holds one sample per accept (one per wakeup that reached
    accept). One worker: with two, the one that loses the race is woken too,
    and whether it reaches accept depends on scheduling. A first connection
    comes before the 20: the worker went to sleep before the tracer
    attached, so the tracer only knows it sleeps once it has slept again."""
    s = start_server("bare", workers=1)
    t = tracer("--pgid", str(s.proc.pid))
    for _ in range(21):
        wait_idle_in_epoll(s.pids[0])
        get(s.port, "/pid", extra="Connection: close\r\n")
    ws = workers_of(t.stop())
    won = sum(w["won"] for w in ws.values())
    wakeups = sum(w["wakeups"] for w in ws.values())
    assert won == 21 and wakeups >= 20, ws
    for w in ws.values():
        assert sum(w["waker_cpu"].values()) == w["wakeups"]
        assert sum(w["wake_to_accept_us_log2"].values()) <= w["wakeups"]
    assert sum(sum(w["wake_to_accept_us_log2"].values()) for w in ws.values()) >= 20


@root_only
def test_port_finds_any_server(tmp_path, tracer):
    """--port finds the processes listening on a port even when the server
    is not ours (a Python prefork server whose workers block in accept()):
    its workers' accepts won equal what their own logs say they answered."""
    log_dir = tmp_path / "logs"
    log_dir.mkdir()
    proc = subprocess.Popen([*FOREIGN, "--log-dir", str(log_dir), "--workers", "2"], cwd=ROOT,
                            stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        ready = json.loads(proc.stdout.readline())
        pids = [w["pid"] for w in ready["workers"]]
        t = tracer("--port", str(ready["port"]))
        assert set(pids) <= set(t.attached["pids"]) and t.attached["ports"] == [ready["port"]]
        answered = answered_by(ready["port"], 30)  # each accept counted as accept() returned, before the answer
        ws = workers_of(t.stop())
        won = {}
        for w in ws.values():
            won[w["pid"]] = won.get(w["pid"], 0) + w["won"]
        assert sum(won.values()) == 30
        assert {p: won.get(p, 0) for p in pids} == {p: answered.get(p, 0) for p in pids}
    finally:
        kill_group(proc)


@root_only
def test_timeline_tells_each_connection(start_server, tracer):
    """--timeline with a one-shot shape (8 connections, each closed before
    the next): one conn line per connection, each ESTABLISHED on a CPU of
    this machine and won by a worker the ready line named, after the
    connection was established."""
    s = start_server("bare")
    t = tracer("--pgid", str(s.proc.pid), timeline=True)
    res = subprocess.run([PROBE, "--target", "127.0.0.1:%d" % s.port, "--shape", "oneshot",
                          "--connections", "8", "--rounds", "1"], capture_output=True, text=True, timeout=30)
    assert res.returncode == 0, res.stderr
    objs = t.stop()
    conns = [o for o in objs if o["type"] == "conn"]
    tids = {w["tid"] for w in s.ready["workers"]}
    assert len(conns) == 8, objs
    for c in conns:
        assert c["winner"] in tids, c
        assert c["accept_after_us"] >= 0 and c["est_cpu"] < os.cpu_count()
        assert c["rport"] > 0


@root_only
def test_pause_detaches_and_resume_counts_again(start_server, tracer):
    """SIGUSR1 pauses the trace: once it says "paused" it holds no
    tracepoint (bpftool: nothing of its own attached) and counts nothing,
    so 10 connections then are not in its counts; SIGUSR2 resumes it: once
    it says "resumed" its hooks are back, and the 6 connections after are
    counted, exactly. The toggled trace_overhead study relies on both: an
    off window must cost the server nothing of the tracer's, an on window
    all of it."""
    s = start_server("bare")
    t = tracer("--pgid", str(s.proc.pid))
    hooks = bpf_attachments(t.proc.pid)
    assert hooks, "the tracer attached nothing"
    t.switch(signal.SIGUSR1, "paused")
    assert bpf_attachments(t.proc.pid) == set(), "paused, yet still attached"
    assert sum(answered_by(s.port, 10).values()) == 10
    t.switch(signal.SIGUSR2, "resumed")
    assert bpf_attachments(t.proc.pid) == hooks
    assert sum(answered_by(s.port, 6).values()) == 6
    ws = workers_of(t.stop())
    assert sum(w["won"] for w in ws.values()) == 6, ws


@root_only
@pytest.mark.parametrize("timeline", [False, True])
def test_tracer_attaches_what_its_mode_needs(start_server, tracer, timeline):
    """Every hook the tracer attaches runs for every task on the machine
    that hits it, so it attaches what its mode needs and no more: the exits
    of accept, accept4 and epoll's waits (no syscall's entry), sched_waking
    and sched_process_fork; inet_sock_set_state, which fires at every TCP
    state change on the machine, and sched_switch only with --timeline.
    Without --timeline its worker lines carry no ESTABLISHED columns (it
    did not see them); with it, each of 8 one-shot connections is paired
    with its ESTABLISHED."""
    s = start_server("bare")
    t = tracer("--pgid", str(s.proc.pid), timeline=timeline)
    attached = bpf_attachments(t.proc.pid)
    res = subprocess.run([PROBE, "--target", "127.0.0.1:%d" % s.port, "--shape", "oneshot",
                          "--connections", "8", "--rounds", "1"], capture_output=True, text=True, timeout=30)
    assert res.returncode == 0, res.stderr
    ws = workers_of(t.stop())
    expected = {"sys_exit_accept", "sys_exit_accept4", "sys_exit_epoll_wait", "sys_exit_epoll_pwait",
                "sys_exit_epoll_pwait2", "sched_waking", "sched_process_fork"}
    if timeline:
        expected |= {"sched_switch", "inet_sock_set_state"}
    assert attached == expected, (sorted(attached - expected), sorted(expected - attached))
    assert sum(w["won"] for w in ws.values()) == 8, ws
    for w in ws.values():
        assert ("established" in w) == timeline and ("est_cpu" in w) == timeline, w
    if timeline:
        assert sum(w["established"] for w in ws.values()) == 8, ws
        assert sum(sum(w["est_cpu"].values()) for w in ws.values()) == 8, ws


@root_only
def test_tracefs_missing_is_mounted(start_server):
    """In a mount namespace where tracefs is not mounted, the tracer mounts
    it (and says so) instead of failing: it still attaches and counts."""
    s = start_server("bare")
    script = ("umount -l /sys/kernel/tracing 2>/dev/null; umount -l /sys/kernel/debug/tracing 2>/dev/null; "
              "test ! -e /sys/kernel/tracing/events/syscalls || exit 99; "
              "exec %s --pgid %d --duration 1 --json" % (TRACER, s.proc.pid))
    res = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script],
                         capture_output=True, text=True, timeout=30)
    if res.returncode == 99:
        pytest.skip("could not unmount tracefs in a private mount namespace")
    assert res.returncode == 0, res.stderr
    assert "mounted tracefs" in res.stderr
    assert json.loads(res.stdout.splitlines()[0])["type"] == "attached"


def test_not_root_exits_2_with_reason(start_server):
    """Without root it cannot load BPF programs: exit 2 and one line saying so."""
    s = start_server("bare")
    res = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                          TRACER, "--pgid", str(s.proc.pid)], capture_output=True, text=True, timeout=10)
    assert res.returncode == 2, res
    assert res.stderr.count("\n") == 1 and "needs root" in res.stderr, res.stderr


@pytest.mark.parametrize("args,names", [
    ([], "targets"),
    (["--pids", "1", "--port", "80"], "--pids/--pgid/--port"),
    (["--pids", "abc"], "--pids abc"),
    (["--port", "0"], "--port 0"),
    (["--pgid", "1", "--duration", "-1"], "--duration -1"),
    (["--pgid", "1", "--bogus"], "--bogus"),
])
def test_bad_arguments_exit_2(args, names):
    """Each bad argument: exit 2, one line naming it."""
    res = subprocess.run([TRACER, *args], capture_output=True, text=True, timeout=10)
    assert res.returncode == 2, res
    assert res.stderr.count("\n") == 1 and names in res.stderr, res.stderr


@root_only
def test_unknown_targets_exit_2():
    """A process group or port with nobody in it: exit 2 naming it."""
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()
    res = subprocess.run([TRACER, "--port", str(port)], capture_output=True, text=True, timeout=10)
    assert res.returncode == 2 and "--port %d" % port in res.stderr, res
    res = subprocess.run([TRACER, "--pgid", "999999999"], capture_output=True, text=True, timeout=10)
    assert res.returncode == 2 and "--pgid 999999999" in res.stderr, res


# The BPF objects and the kfuncs each may call. The tracer's and the
# servers' programs load on kernels older than the diagnosis needs, so they
# call none: a kfunc the running kernel lacks fails the whole object's load.
# The diagnosis, which needs tp_btf/sock_recv_length anyway, reads sockets
# through bpf_rdonly_cast (Linux 6.2), ebpf/sock_btf.bpf.h.
KFUNCS_ALLOWED = {"acceptlab_trace.bpf.o": set(), "worker_load.bpf.o": set(), "listener_iter.bpf.o": set(),
                  "acceptlab_diagnose.bpf.o": {"bpf_rdonly_cast"}}


def kfuncs_of(obj):
    """The kernel functions obj calls: its BTF's extern FUNCs (bpftool)."""
    out = subprocess.run(["bpftool", "btf", "dump", "file", obj], capture_output=True, text=True, check=True).stdout
    return {line.split("'")[1] for line in out.splitlines()
            if "] FUNC '" in line and line.rstrip().endswith("linkage=extern")}


@pytest.mark.parametrize("obj", sorted(KFUNCS_ALLOWED))
def test_only_the_diagnosis_calls_kfuncs(obj):
    """Each object's kfuncs are within its allowance (and the diagnosis's
    BTF reads are really there: it calls bpf_rdonly_cast)."""
    found = kfuncs_of(os.path.join(ROOT, "build", obj))
    assert found <= KFUNCS_ALLOWED[obj], (obj, found - KFUNCS_ALLOWED[obj])
    assert found == KFUNCS_ALLOWED[obj], (obj, found)


def test_every_bpf_object_has_a_kfunc_allowance():
    """A new BPF program is held to the rule above too: the object of each
    ebpf/*.bpf.c must be named in KFUNCS_ALLOWED."""
    sources = {f[:-len(".c")] + ".o" for f in os.listdir(os.path.join(ROOT, "ebpf")) if f.endswith(".bpf.c")}
    assert sources == set(KFUNCS_ALLOWED), (sorted(sources - set(KFUNCS_ALLOWED)),
                                            sorted(set(KFUNCS_ALLOWED) - sources))
