"""bin/acceptlab-diagnose: for a running server, by its port, it names the
mechanism as the server was configured, and the kernel's attribution of
each connection matches the truth.

The truth is what the connections say: our server answers /pid with the
worker that served it (its pid, or its tid in threads mode), and the probe
counts those answers per worker. The diagnosis never asks the server; it
counts, per thread, the connections whose bytes that thread read first. So
for every variant, each worker's `served` must equal the connections the
probe saw it answer, in active mode (the diagnosis runs the probe; a test
switch has the probe read the worker id) and in passive mode (the test
drives the probe while the diagnosis watches). The mechanism's fields
(listener, listeners, wait, selector, handoff, closest_variant) must be the
ones the variant is built with. Then servers that are not ours (workers
blocked in accept() with a thread per connection; the peers: nginx,
HAProxy, Node), each way to find a reuseport selector, bad input, a server
that exits mid-watch, and what it still says without root.

The trace needs root; without it those tests skip and the not-root test
runs as the user it is."""

import json
import math
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from fractions import Fraction

import pytest

from acceptlab.paths import module_cmd
from models.spread import count_within
from probes.peers import peers
from probes.studies import diagnosis as diagnosis_study
from tests.conftest import (PROBE, ROOT, SERVER, answered_by, bpf_attachments, get, read_json_lines,
                            sequential_then_burst, stop_group, wait_idle_in_epoll)

DIAGNOSE = os.path.join(ROOT, "bin", "acceptlab-diagnose")
TRACER = os.path.join(ROOT, "bin", "acceptlab-trace")
FOREIGN = module_cmd("tests.foreign_server")
root_only = pytest.mark.skipif(os.geteuid() != 0, reason="the diagnosis traces with BPF: needs root")

# variant spec -> (listener, listeners, wait, selector, handoff, closest_variant);
# listeners None: one per worker (a reuseport group)
EXPECTED = {
    "bare": ("shared", 1, "epoll", None, False, "bare"),
    "exclusive": ("shared", 1, "epoll-exclusive", None, False, "exclusive"),
    "exclusive-reorder": ("shared", 1, "epoll-exclusive", None, False, "exclusive-reorder"),
    "lt": ("shared", 1, "epoll", None, False, "lt"),
    "reuseport": ("reuseport", None, "epoll", "hash", False, "reuseport"),
    "reuseport-bpf": ("reuseport", None, "epoll", "bpf", False, "reuseport-bpf"),
    "mutex": ("shared", 1, "epoll", None, False, "mutex"),
    # strict turns: the listener added and deleted at every accept (churn)
    "mutex --accept-mutex-strict": ("shared", 1, "epoll", None, False, "mutex"),
    "fdpass": ("shared", 1, "epoll-exclusive", None, True, "fdpass"),
    "handoff --threads 2": ("reuseport", None, "epoll", "hash", True, "handoff"),
    # every worker blocked in accept(): one request per connection, Connection: close
    "blocking": ("shared", 1, "accept", None, False, "blocking"),
}
# Every variant at 2 workers; at 4 a subset that keeps the file fast: the
# shared race, the hash, a hand-off, the mutex and blocking accept().
AT_4 = ["bare", "reuseport", "fdpass", "mutex", "blocking"]
CASES = [(spec, 2) for spec in EXPECTED] + [(spec, 4) for spec in AT_4]
CASE_IDS = ["%s-at-%d" % c for c in CASES]
CONNECTIONS = 32
# The advice file the tests read (report/advice.py's format; its texts name
# the variant and count they are filed under, so a test sees which rows the
# diagnosis picked). Every variant at 2 and 4 workers, bare at 8 too.
ADVICE_FIXTURE = os.path.join(ROOT, "tests", "fixtures", "diagnose", "advice.tsv")
ADVICE_ENV = {"ACCEPTLAB_ADVICE": ADVICE_FIXTURE}


class Diagnose:
    """acceptlab-diagnose --json ARGS, its own session; its lines read as
    they come (wait_for) and once it is done (finish)."""

    def __init__(self, *args, env=None, argv0=DIAGNOSE, wrap=()):
        self.proc = subprocess.Popen([*wrap, argv0, *args, "--json"], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, start_new_session=True,
                                     env=dict(os.environ, **(env or {})), cwd="/")
        self.buf = b""
        self.seen = []

    def _pump(self, timeout):
        """Reads what is there; False at EOF."""
        alive, self.buf, got = read_json_lines(self.proc, self.buf, timeout)
        self.seen += got
        return alive

    def wait_for(self, kind, timeout=15):
        """Reads lines until one of this kind; returns it."""
        deadline = time.monotonic() + timeout
        while True:
            for obj in self.seen:
                if obj.get("kind") == kind:
                    return obj
            left = deadline - time.monotonic()
            assert left > 0, "no %r line within %d s: %r" % (kind, timeout, self.seen)
            if not self._pump(min(left, 0.2)):
                self.proc.wait(timeout=5)
                raise AssertionError("diagnose exited %s before a %r line: %s"
                                     % (self.proc.returncode, kind, self.proc.stderr.read().decode()))

    def finish(self, timeout=30):
        """Waits for it to end: (exit code, every JSON line, stderr)."""
        out, err = self.proc.communicate(timeout=timeout)
        rest = self.buf + out
        self.seen += [json.loads(l) for l in rest.splitlines() if l.strip()]
        return self.proc.returncode, self.seen, err.decode()

    def kill(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=5)


@pytest.fixture
def diagnose():
    started = []

    def factory(*args, **kw):
        d = Diagnose(*args, **kw)
        started.append(d)
        return d

    yield factory
    for d in started:
        d.kill()


def diagnosis_of(lines):
    last = lines[-1]
    assert last["kind"] == "diagnosis", last
    return last


def served_by(diag, key):
    """{worker id: served}: summed by pid (process mode) or per tid."""
    out = {}
    for w in diag["workers"]:
        ident = w[key]
        if ident is not None and w["served"]:
            out[ident] = out.get(ident, 0) + w["served"]
    return out


def probe_counts(summary):
    return {int(k): v for k, v in summary["counts"].items()}


def expected(spec, workers, handed_over=None):
    """EXPECTED[spec] at workers: (listener, listeners, wait, selector,
    handoff, closest_variant), a reuseport group's listeners one per worker.
    A variant that hands over only when the worker the kernel woke is not
    the one its pick names (fdpass) and handed nothing over (handed_over
    False, its own count) showed the kernel only its wake: the study's
    WITHOUT_HANDOFF says which, and the diagnosis is held to that."""
    listener, listeners, wait, selector, handoff, variant = EXPECTED[spec]
    if handed_over is False and spec in diagnosis_study.WITHOUT_HANDOFF:
        handoff, variant = False, diagnosis_study.WITHOUT_HANDOFF[spec]
    return listener, listeners or workers, wait, selector, handoff, variant


def handed_over(spec, port):
    """For a variant that may hand nothing over (fdpass), whether the server handed any
    connection over in its life (its shared page, GET /variant: the test's
    truth, which the diagnosis never asks); None for the others. Read on an
    idle server, whose equal loads keep the request with its acceptor."""
    if spec not in diagnosis_study.WITHOUT_HANDOFF:
        return None
    return json.loads(get(port, "/variant")[2])["event_id"] > 0


def check_mechanism(diag, spec, workers, port=None):
    got = (diag["listener"], diag["listeners"], diag["wait"], diag["selector"], diag["handoff"],
           diag["closest_variant"])
    want = expected(spec, workers, handed_over(spec, port) if port else None)
    assert got == want, diag["verdict"]


def fair_split_table(n, k, m):
    """(P(max >= m), P(outside 2:1)) of a fair split of n over k, as
    build/test_fair_split --table (common/fair_split's own test) gives them."""
    out = subprocess.run([os.path.join(ROOT, "build", "test_fair_split"), "--table"], input="%d %d %d\n" % (n, k, m),
                         capture_output=True, text=True, timeout=60, check=True).stdout.split()
    return float(out[3]), float(out[4])


def check_fair_chance(diag):
    """fair_chance is the exact chance that a fair split of the split's
    connections over its workers has a busiest worker with at least the
    largest count: the number common/fair_split's own test program gives,
    and models/spread.py's exact big-integer count; fair_chance_outside_2to1
    likewise; the verdict says whether the skew is beyond chance (below
    1 %) with the number."""
    counts = [int(c) for c in diag["split"].split("/")]
    n, k, m = sum(counts), len(counts), max(counts)
    want, outside = fair_split_table(n, k, m)
    assert diag["fair_chance"] == want and diag["fair_chance_outside_2to1"] == outside, (diag["split"], diag)
    exact = 1 - Fraction(count_within(k, n, 0, m - 1), k ** n)
    assert math.isclose(diag["fair_chance"], float(exact), rel_tol=1e-9, abs_tol=1e-300), (diag["split"], exact)
    words = " ".join(diag["verdict"].split())
    if m <= -(-n // k):
        assert "as even as %d connections over %d workers can be" % (n, k) in words, words
    else:
        assert "busiest worker with %d or more with chance " % m in words, words
        assert ("beyond chance" in words) == (diag["fair_chance"] < 0.01), words


def check_advice(diag, workers):
    """The fixture's rows of closest_variant at this worker count, in order."""
    advice = diag["advice"]
    assert advice is not None, diag.get("advice_why")
    variant = diag["closest_variant"]
    assert (advice["run"], advice["workers"], advice["diagnosed_workers"], advice["file"]) == \
        ("20990101T000000Z", workers, workers, ADVICE_FIXTURE), advice
    assert [l["kind"] for l in advice["lines"]] == ["measured", "setting"], advice
    assert advice["lines"][0]["text"] == "Fixture: %s measured at %d workers." % (variant, workers)
    assert "(UTF-8 \u00b1, `quotes`, \"double\")" in advice["lines"][1]["text"]
    assert diag["advice_why"] is None


def check_served(diag, server, truth):
    """Each worker's served (the kernel's) equals the connections it
    answered (the probe's), and every connection was served once."""
    served = served_by(diag, server.id_key)
    assert served == truth, (served, truth, diag["workers"])
    assert sum(served.values()) == CONNECTIONS
    assert diag["split_of"] == "served"
    assert diag["split"] == "/".join(str(n) for n in sorted(
        [truth.get(i, 0) for i in server.pids], reverse=True)), (diag["split"], truth)


def start_case(start_server, spec, workers):
    """The server of a case: spec at workers (a --threads spec names its own count)."""
    s = start_server(spec) if "--threads" in spec else start_server(spec, workers=workers)
    assert len(s.pids) == workers, s.ready
    return s


@root_only
@pytest.mark.parametrize("spec,workers", CASES, ids=CASE_IDS)
def test_active_names_the_mechanism_and_attributes_every_connection(start_server, diagnose, spec, workers):
    """--load burst: the probe's burst of 32 at the server; the diagnosis
    names the mechanism the variant is built with, and each worker's served
    count is what the probe saw it answer (the test switch has the probe
    read /pid's answer; the diagnosis does not use it). blocking answers
    one request per connection with Connection: close; the burst asks one.
    The split's fair chance is fair_split's, and the advice is the
    fixture's rows of the closest variant at this worker count."""
    s = start_case(start_server, spec, workers)
    d = diagnose("--port", str(s.port), "--load", "burst", "--request", "/pid",
                 env=dict(ADVICE_ENV, ACCEPTLAB_TEST_PROBE_WORKER_FROM="body"))
    rc, lines, err = d.finish()
    assert rc == 0, err
    kinds = [l["kind"] for l in lines]
    assert kinds[0] == "detected" and "attached" in kinds and kinds[-1] == "diagnosis", kinds
    summary = [l["line"] for l in lines if l["kind"] == "probe" and l["line"]["type"] == "summary"][0]
    diag = diagnosis_of(lines)
    check_mechanism(diag, spec, workers, s.port)
    check_served(diag, s, probe_counts(summary))
    assert diag["mode"] == "active" and diag["traced"] and not diag["partial"]
    check_fair_chance(diag)
    check_advice(diag, workers)


@root_only
@pytest.mark.parametrize("spec,shape", [("lt", "burst"), ("fdpass", "keepalive")])
def test_rounds_split_each_probe_round(start_server, diagnose, spec, shape):
    """--rounds 3: each round's split is the kernel's count of that round's
    connections alone, so it equals the split the probe saw answered in
    that round (the test switch has it read /pid's answer), and the rounds
    add up to the whole watch's split. fdpass hands connections off: the
    split is of the workers that served them."""
    s = start_case(start_server, spec, 2)
    d = diagnose("--port", str(s.port), "--load", shape, "--connections", "16", "--rounds", "3", "--request", "/pid",
                 env=dict(ADVICE_ENV, ACCEPTLAB_TEST_PROBE_WORKER_FROM="body"))
    rc, lines, err = d.finish()
    assert rc == 0, err
    diag = diagnosis_of(lines)
    probe_rounds = [l["line"] for l in lines if l["kind"] == "probe" and l["line"]["type"] == "round"]
    assert len(probe_rounds) == 3 and len(diag["rounds"]) == 3, (probe_rounds, diag.get("rounds"))
    for k, (mine, probe) in enumerate(zip(diag["rounds"], probe_rounds), 1):
        # A worker the round left out is 0 in the diagnosis's split.
        want = sorted(list(probe["counts"].values()) + [0] * (2 - len(probe["counts"])), reverse=True)
        assert mine["round"] == k and mine["connections"] == 16, mine
        assert mine["split"] == "/".join(map(str, want)), (k, mine, probe["counts"])
        assert mine["within_2to1"] == (want[-1] > 0 and want[0] <= 2 * want[-1]), mine
    assert sum(sum(map(int, r["split"].split("/"))) for r in diag["rounds"]) == sum(
        map(int, diag["split"].split("/")))


@pytest.mark.parametrize("spec,workers", CASES, ids=CASE_IDS)
def test_passive_watches_and_attributes_the_tests_own_load(start_server, diagnose, spec, workers):
    """--duration: the diagnosis sends nothing; the test runs the probe
    (burst, asking /pid) once it is attached, and each worker's served
    count is what the probe saw it answer. The watch (1.2 s from the
    "attached" line) outlasts the burst many times over; the probe's own
    time is checked against it, so a burst that outran the watch on a busy
    machine fails by saying so rather than as a miscount."""
    s = start_case(start_server, spec, workers)
    d = diagnose("--port", str(s.port), "--duration", "1.2")
    assert d.wait_for("attached")["traced"] is True
    started = time.monotonic()
    probe = subprocess.run([PROBE, "--target", "127.0.0.1:%d" % s.port, "--shape", "burst", "--connections",
                            str(CONNECTIONS), "--path", "/pid", "--json"], capture_output=True, text=True,
                           timeout=30)
    took = time.monotonic() - started
    assert probe.returncode == 0, probe.stderr
    assert took < 1.0, "the probe's burst took %.2f s, as long as the 1.2 s watch: a machine this busy " \
                       "cannot check the passive count" % took
    summary = [json.loads(l) for l in probe.stdout.splitlines() if '"summary"' in l][0]
    rc, lines, err = d.finish()
    assert rc == 0, err
    diag = diagnosis_of(lines)
    check_mechanism(diag, spec, workers, s.port)
    check_served(diag, s, probe_counts(summary))
    assert diag["mode"] == "passive" and diag["load"] is None
    check_fair_chance(diag)


@root_only
@pytest.mark.parametrize("mode,workers", [("bare", 1), ("bare", 2), ("bare --threads 2", None)])
def test_wakeups_against_the_tracers(start_server, diagnose, mode, workers):
    """The passive watch counts wakeups without tracing the waits' syscalls:
    at each sched_waking of a traced thread asleep (not stopped), the
    syscall it sleeps in, read from its saved registers, says whether it
    waits. The tracer marks a thread blocked at its wait's entry and counts
    its first wakeup in each wait. For the same traffic (40 connections one
    at a time, then a burst of 32), with the server's group stopped around
    both attaches and both detaches, the two see the same sleeps:
     - one worker is woken once per wait (nobody else takes what woke it),
       so its wakeups are the tracer's, exactly;
     - two workers race: bare wakes both for a connection, and the loser
       may find nothing, sleep again inside the same epoll_wait and be
       woken again. The watch counts each of those wakeups, the tracer one
       per wait: each thread's count is at least the tracer's.
    Every worker thread is woken at least once (the first connection finds
    all asleep), and a wasted wakeup is one of its wakeups."""
    s = start_server(mode, workers=workers) if workers else start_server(mode)
    stop_group(s)
    d = diagnose("--port", str(s.port), "--duration", "60")
    tracer = subprocess.Popen([TRACER, "--pgid", str(s.proc.pid), "--json"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, start_new_session=True)
    try:
        assert d.wait_for("attached")["traced"] is True
        assert json.loads(tracer.stdout.readline())["type"] == "attached"
        os.killpg(s.proc.pid, signal.SIGCONT)
        for w in s.ready["workers"]:
            wait_idle_in_epoll(w["pid"], [w["tid"]])
        sequential_then_burst(s.port)
        stop_group(s)
        tracer.send_signal(signal.SIGINT)
        out, err = tracer.communicate(timeout=20)
        assert tracer.returncode == 0, err.decode()
        d.proc.send_signal(signal.SIGINT)
        rc, lines, err = d.finish()
    finally:
        if tracer.poll() is None:
            os.killpg(tracer.pid, signal.SIGKILL)
            tracer.wait(timeout=5)
        os.killpg(s.proc.pid, signal.SIGCONT)
    diag = diagnosis_of(lines)
    assert rc == 1 and diag["partial"] and "stopped by a signal" in diag["partial_why"], (rc, err)
    traced = {o["tid"]: o["wakeups"] for o in map(json.loads, out.decode().splitlines()) if o["type"] == "worker"}
    mine = {w["tid"]: w["wakeups"] for w in diag["workers"]}
    assert set(mine) == set(traced) == {w["tid"] for w in s.ready["workers"]}, (mine, traced)
    if len(mine) == 1:
        assert mine == traced, (mine, traced)
    assert all(traced[tid] <= n for tid, n in mine.items()) and all(traced.values()), (mine, traced)
    assert all(w["wasted"] <= w["wakeups"] for w in diag["workers"]), diag["workers"]


# The syscall tracepoints the diagnosis may attach: the accept exits, paid
# once per connection by the accepting server. Any other syscall's tracepoint
# is paid by every process on the machine at every call of it (epoll_ctl's by
# every event loop and client that re-arms per request), so the watch reads
# registrations from /proc instead.
SYSCALL_TRACEPOINTS_ALLOWED = {"sys_exit_accept", "sys_exit_accept4"}


@root_only
@pytest.mark.parametrize("spec,churns", [("mutex --accept-mutex-strict", True), ("bare", False)])
def test_registration_churn_is_read_from_proc(start_server, diagnose, spec, churns):
    """The strict accept mutex moves the listener from one worker's epoll to
    the other's at every accept; the diagnosis reads each holder's epolls
    again every 50 ms (/proc/PID/fdinfo), so over a ramp of 60 connections
    10 ms apart (about 0.6 s) it sees the listener added to and deleted from
    them (lower bounds: a change undone between two looks is missed), and
    calls it a mutex by that churn. bare registers once and never again: no
    churn. Meanwhile the only syscall tracepoints it holds are the accept
    exits (bpftool's list of its attachments)."""
    s = start_case(start_server, spec, 2)
    d = diagnose("--port", str(s.port), "--load", "ramp", "--connections", "60", "--request", "/pid",
                 env=dict(ADVICE_ENV, ACCEPTLAB_TEST_PROBE_WORKER_FROM="body"))
    d.wait_for("attached")
    attached = json.loads(subprocess.run(["bpftool", "-j", "perf", "show"], capture_output=True, text=True,
                                         check=True).stdout or "[]")
    tracepoints = {a["tracepoint"] for a in attached if a.get("pid") == d.proc.pid}
    rc, lines, err = d.finish()
    assert rc == 0, err
    assert tracepoints, "bpftool listed none of the diagnosis's attachments: %r" % attached
    syscalls = {t for t in tracepoints if t.startswith("sys_")}
    assert syscalls <= SYSCALL_TRACEPOINTS_ALLOWED, syscalls - SYSCALL_TRACEPOINTS_ALLOWED
    # Nor the tracepoint of every TCP state change on the machine.
    assert "inet_sock_set_state" not in tracepoints and "tcp_destroy_sock" in tracepoints, tracepoints
    diag = diagnosis_of(lines)
    churn = diag["churn"]
    assert churn["every_ms"] == 50, churn
    per_worker = {w["pid"]: (w["ctl_add"], w["ctl_del"]) for w in diag["workers"]}
    if churns:
        assert churn["add"] >= 2 and churn["del"] >= 2, (churn, per_worker)
        assert sum(a + d_ for a, d_ in per_worker.values()) == churn["add"] + churn["del"], per_worker
        assert diag["closest_variant"] == "mutex", diag["closest_variant"]
    else:
        assert churn["add"] == churn["del"] == 0 and churn["threads"] == 0, (churn, per_worker)


def held_together(start_server, diagnose, n, env=None):
    """bare at 2 workers, watched passively (diagnose with env): n
    keep-alive connections each ask /pid and are held open together, then
    closed. Asserts that each was established, accepted, served and closed
    once, that each worker held at once every connection it served, and that
    what each worker served is what /pid answered on its connections.
    Returns the trace's totals."""
    s = start_server("bare", workers=2)
    d = diagnose("--port", str(s.port), "--duration", "3", env=env)
    d.wait_for("attached")
    socks = [socket.create_connection(("127.0.0.1", s.port), timeout=5) for _ in range(n)]
    try:
        answered = {}
        for c in socks:
            who = int(get(s.port, "/pid", sock=c)[2])
            answered[who] = answered.get(who, 0) + 1
        time.sleep(0.6)  # the held counts are sampled every 200 ms: some samples with all of them open
    finally:
        for c in socks:
            c.close()
    rc, lines, err = d.finish()
    assert rc == 0, err
    diag = diagnosis_of(lines)
    totals = dict(diag["totals"])
    spilled = totals.pop("spilled")
    assert totals == {"established": n, "accepted": n, "served": n, "handoffs": 0, "closed": n,
                      "unaccepted_reads": 0}, diag["totals"]
    workers = [w for w in diag["workers"] if w["served"]]
    assert {w["pid"]: w["served"] for w in workers} == answered, (workers, answered)
    assert all(w["held_max"] == w["served"] for w in workers), workers
    return dict(totals, spilled=spilled)


@root_only
def test_a_paused_watch_counts_nothing_and_resumes(start_server, diagnose):
    """Passive, SIGUSR1 pauses the watch and SIGUSR2 resumes it, each said
    on a line of its own ("paused", "resumed"): the 10 connections made
    while paused are in no count, the 6 after are each accepted and served
    once, and the diagnosis says how long it was paused (paused_s, within
    its duration). The toggled trace_overhead study measures the watch's
    cost by switching it so."""
    s = start_server("bare", workers=2)
    d = diagnose("--port", str(s.port), "--duration", "60")
    assert d.wait_for("attached")["traced"] is True
    os.killpg(d.proc.pid, signal.SIGUSR1)
    d.wait_for("paused")
    for _ in range(10):
        get(s.port, "/pid")
    time.sleep(0.3)
    os.killpg(d.proc.pid, signal.SIGUSR2)
    d.wait_for("resumed")
    answered = answered_by(s.port, 6)
    os.killpg(d.proc.pid, signal.SIGINT)
    rc, lines, err = d.finish()
    assert rc == 1, err  # stopped by a signal: a partial watch, as the study ends it
    diag = diagnosis_of(lines)
    assert diag["totals"]["accepted"] == 6 and diag["totals"]["served"] == 6, diag["totals"]
    served = {w["pid"]: w["served"] for w in diag["workers"] if w["served"]}
    assert served == answered, (served, answered)
    assert 0.3 <= diag["paused_s"] < diag["duration_s"], diag


@root_only
def test_hooks_only_attaches_the_same_hooks_and_counts_nothing(start_server, diagnose):
    """The test switch ACCEPTLAB_TEST_DIAG_HOOKS_ONLY=1 (what the
    trace_overhead study's passive-hooks runs measure): the watch attaches
    the same tracepoints as without it (bpftool), says so on its attached
    line ("hooks_only") and counts none of 6 connections, each answered;
    the same watch without it counts all 6, accepted and served. A watch
    whose programs still did their work would count them."""
    s = start_server("bare", workers=2)
    counted, hooks = {}, {}
    for only in (False, True):
        d = diagnose("--port", str(s.port), "--duration", "60",
                     env={"ACCEPTLAB_TEST_DIAG_HOOKS_ONLY": "1"} if only else {})
        attached = d.wait_for("attached")
        assert attached["traced"] is True and attached.get("hooks_only", False) is only, attached
        hooks[only] = bpf_attachments(d.proc.pid)
        answered = [int(get(s.port, "/pid")[2]) for _ in range(6)]
        assert all(pid > 0 for pid in answered), answered
        os.killpg(d.proc.pid, signal.SIGINT)
        rc, lines, err = d.finish()
        assert rc == 1, err
        counted[only] = diagnosis_of(lines)["totals"]
    assert hooks[True] == hooks[False] and "sys_exit_accept4" in hooks[True], hooks
    assert counted[False]["accepted"] == 6 and counted[False]["served"] == 6, counted
    assert counted[True]["accepted"] == 0 and counted[True]["served"] == 0, counted


@root_only
def test_bpf_stats_count_the_watch_s_programs_while_enabled(start_server, diagnose):
    """probes/harness/bpf_stats.py, which the trace_overhead study's programs
    runs read. Inside enabled(), 6 connections, each answered: the watch's
    accept exit ran at least once for each (every accept returns through
    it), its recv program at least once for each (the server reads each
    request), each program with time to its runs; the names are the
    watch's programs, each once (its links name them too, with no counts).
    After enabled() ends, 4 more connections leave every count as it was:
    the statistics went off with the descriptor (unless something else
    had them on before or after, the sysctl or another holder, where that
    part is not checked)."""
    from probes.harness import bpf_stats
    s = start_server("bare", workers=2)
    d = diagnose("--port", str(s.port), "--duration", "60")
    assert d.wait_for("attached")["traced"] is True
    alone = not bpf_stats.others_counting()
    with bpf_stats.enabled():
        before = bpf_stats.counts(d.proc.pid)
        answered = [int(get(s.port, "/pid")[2]) for _ in range(6)]
        after = bpf_stats.counts(d.proc.pid)
        named = bpf_stats.names(after)
    closed = bpf_stats.counts(d.proc.pid)  # the machine's other traffic counts until the with ends
    assert all(pid > 0 for pid in answered), answered
    got = {p["name"]: p for p in bpf_stats.programs(before, after, named, 6)}
    assert {"exit_accept4", "on_recv", "on_destroy", "on_waking"} <= set(got), got
    assert got["exit_accept4"]["events"] >= 6 and got["on_recv"]["events"] >= 6, got
    assert all(p["run_ns"] > 0 for p in got.values() if p["events"]), got
    for _ in range(4):
        get(s.port, "/pid")
    later = bpf_stats.counts(d.proc.pid)
    if alone and not bpf_stats.others_counting():
        assert later == closed, (closed, later)
    os.killpg(d.proc.pid, signal.SIGINT)
    d.finish()


@root_only
@pytest.mark.parametrize("slots", [None, "1"], ids=["arrays", "hashes"])
def test_respawned_workers_are_traced_from_their_fork(start_server, diagnose, slots):
    """Passive, bare at 2 workers: both workers are killed mid-watch, one
    after the other, and the supervisor (a holder, so traced) forks a new
    one for each: the watch traces each child from its fork
    (sched_process_fork). So the 8 connections after are each accepted,
    served and closed once, by the new workers alone, each worker's served
    count what /pid answered on its connections. With
    ACCEPTLAB_TEST_TASK_SLOTS=1 the arrays of traced threads and
    processes have one entry each: all but one holder, the children and all
    but one thread are kept in the hashes beside them, and the counts must
    be the same."""
    s = start_server("bare", workers=2)
    d = diagnose("--port", str(s.port), "--duration", "5",
                 env={"ACCEPTLAB_TEST_TASK_SLOTS": slots} if slots else {})
    d.wait_for("attached")
    for index, pid in enumerate(s.pids):
        os.kill(pid, signal.SIGKILL)
        s.wait_for("respawned", index=index)
    new = {e["pid"] for e in s.events if e.get("event") == "respawned"}
    answered = answered_by(s.port, 8)
    assert set(answered) <= new, (answered, new)
    rc, lines, err = d.finish()
    assert rc == 0, err
    diag = diagnosis_of(lines)
    totals = diag["totals"]
    assert (totals["accepted"], totals["served"], totals["closed"]) == (8, 8, 8), totals
    workers = {w["pid"]: w["served"] for w in diag["workers"] if w["served"]}
    assert workers == answered, (diag["workers"], answered)


@root_only
def test_totals_follow_each_connection_to_its_end(start_server, diagnose):
    """6 connections held together (held_together). The kernel side follows
    no TCP state change: each connection is followed from its accept to its
    destruction (tcp_destroy_sock), and the connections established while
    watched are the loader's (accepts, plus what the accept queue gained).
    So each of the 6 is established, accepted, served and closed once."""
    totals = held_together(start_server, diagnose, 6)
    # followed in the hash because another open connection held the array's
    # entry at their hash: any count is right here (the next test makes it many)
    assert isinstance(totals["spilled"], int), totals


@root_only
def test_connections_whose_entry_is_taken_are_followed_in_the_hash(start_server, diagnose):
    """The kernel side follows each connection in the entry of an array at
    its socket's hash, and one whose entry another open connection holds in
    a hash beside it. With a 2-entry array (ACCEPTLAB_TEST_DIAG_SLOTS=2), 8
    connections held together (held_together): at least 6 of them find
    their entry taken. Each must still be accepted, served, held and closed
    once, by the worker /pid names."""
    totals = held_together(start_server, diagnose, 8, env={"ACCEPTLAB_TEST_DIAG_SLOTS": "2"})
    assert totals["spilled"] >= 6, totals


@root_only
def test_reads_no_traced_accept_returned_are_counted(start_server, diagnose):
    """--pid traces one worker of two (reuseport: each has its own
    listener, and 40 connections reach both). The other worker accepts
    untraced, so its first read of each of its connections is an
    unaccepted read; the traced worker's connections are accepted and
    served. /pid's answers say which worker had each connection."""
    s = start_server("reuseport", workers=2)
    traced = s.pids[0]
    d = diagnose("--port", str(s.port), "--pid", str(traced), "--duration", "3")
    d.wait_for("attached")
    answered = answered_by(s.port, 40)
    rc, lines, err = d.finish()
    assert rc == 0, err
    assert len(answered) == 2, answered  # the case needs both workers to have connections
    totals = diagnosis_of(lines)["totals"]
    assert totals["accepted"] == totals["served"] == answered[traced], (totals, answered)
    assert totals["unaccepted_reads"] == 40 - answered[traced], (totals, answered)


# Enough idle connections that the kernel takes milliseconds to write the
# worker's epoll's fdinfo (about 5 ms here), so its reads must be spaced.
LARGE_EPOLL_CONNECTIONS = 4000


@root_only
def test_a_large_epoll_is_read_less_often(start_server, diagnose):
    """The kernel writes an epoll's fdinfo holding the epoll's lock, which
    the server's own epoll_ctl on it waits for, in time that grows with its
    registrations. With 4000 idle connections in one worker's epoll, each
    read takes milliseconds, and the diagnosis must space its reads of that
    epoll to `spacing` times the last read's length (so they hold the lock
    at most 1/spacing of the time): over a 2 s watch, at most 1 + 2 s over
    spacing x its shortest read, where every 50 ms would be about 40. The
    case proves its window: the shortest read must be long enough that the
    spacing exceeds every_ms."""
    s = start_server("bare", workers=1)
    socks = []
    try:
        for _ in range(LARGE_EPOLL_CONNECTIONS):
            socks.append(socket.create_connection(("127.0.0.1", s.port), timeout=5))
        socks[-1].sendall(b"GET /pid HTTP/1.1\r\nHost: x\r\n\r\n")
        assert socks[-1].recv(4096).startswith(b"HTTP/1.1 200"), "the last connection was not served"
        d = diagnose("--port", str(s.port), "--duration", "2")
        rc, lines, err = d.finish()
    finally:
        for c in socks:
            c.close()
    assert rc == 0, err
    churn = diagnosis_of(lines)["churn"]
    mine = [e for e in churn["epolls"] if e["pid"] == s.pids[0]]
    assert len(mine) == 1, churn
    e = mine[0]
    spaced_s = churn["spacing"] * e["shortest_read_us"] / 1e6
    assert spaced_s > churn["every_ms"] / 1000, \
        "reads of %d us are too short to need spacing: the case was not tested (%r)" % (e["shortest_read_us"], e)
    assert 1 <= e["reads"] <= 1 + 2.0 / spaced_s + 1, (e, spaced_s)


@root_only
def test_a_connection_closed_unread_leaves_its_acceptor_in_the_split(start_server, diagnose):
    """A client that connects and closes without a byte (a health check):
    the worker that accepted it served nothing and handed nothing on, so it
    is a worker with served 0, not an acceptor left out of the split.
    blocking at 2 workers makes it certain: accept() wakes the longest
    waiter, so the closed connection goes to one worker and the next
    request, /pid, to the other."""
    s = start_server("blocking", workers=2)
    d = diagnose("--port", str(s.port), "--duration", "1.2")
    assert d.wait_for("attached")["traced"] is True
    socket.create_connection(("127.0.0.1", s.port), timeout=5).close()
    time.sleep(0.3)
    answered = int(get(s.port)[2])
    rc, lines, err = d.finish()
    assert rc == 0, err
    diag = diagnosis_of(lines)
    rows = {w["pid"]: w for w in diag["workers"]}
    (closed,) = [p for p in s.pids if p != answered]
    assert (rows[closed]["accepted"], rows[closed]["served"], rows[closed]["handed_off"]) == (1, 0, 0), rows
    assert rows[closed]["in_split"] and rows[answered]["in_split"], rows
    assert (diag["split"], diag["split_of"]) == ("1/0", "served"), diag
    assert diag["fair_chance"] == 1.0 and "as even as 1 connection over 2 workers" in diag["verdict"]


# peer -> (listener, wait, selector, handoff, closest_variant): the diagnosis
# study's table (probes/studies/diagnosis.py), what each peer configuration is.
PEERS_EXPECTED = diagnosis_study.PEERS_EXPECTED


@root_only
@pytest.mark.parametrize("name", list(PEERS_EXPECTED))
def test_peers_named_as_configured(name, diagnose):
    """Servers nobody here wrote (the peers study's configurations, 2
    workers): the mechanism as configured, and the served split the
    probe saw: per pid for nginx and Node (they answer their pid), as a
    split for HAProxy (it answers its thread's number, not its tid)."""
    ok, why = peers.availability(name)
    if not ok:
        pytest.skip(why)
    peer = peers.Peer(name).start()
    try:
        d = diagnose("--port", str(peer.port), "--load", "burst", "--request", "/pid",
                     env={"ACCEPTLAB_TEST_PROBE_WORKER_FROM": "body"})
        rc, lines, err = d.finish()
        assert rc == 0, err
        diag = diagnosis_of(lines)
        got = (diag["listener"], diag["wait"], diag["selector"], diag["handoff"], diag["closest_variant"])
        assert got == PEERS_EXPECTED[name], diag["verdict"]
        summary = [l["line"] for l in lines if l["kind"] == "probe" and l["line"]["type"] == "summary"][0]
        truth = sorted(summary["counts"].values(), reverse=True)
        assert diag["split"] == "/".join(map(str, truth + [0] * (2 - len(truth)))), (diag["split"], summary)
        if peer.software != "haproxy":
            assert served_by(diag, "pid") == probe_counts(summary)
    finally:
        peer.cleanup()  # stopped, and its configuration's directory removed


@root_only
def test_blocking_accept_and_a_thread_per_connection(tmp_path, diagnose):
    """A server that is not ours: two forked workers blocked in accept() on
    one listener, each handing every connection to a new thread. The
    diagnosis says wait "accept", closest variant "blocking"; the hand-off
    to the acceptor's own threads makes the process the worker, one row per
    process, whose served count is what the probe saw that pid answer. Over
    --rounds 4 of one connection each (every round leaves a process out)
    each round's split has one count per process, 0 for the one left out
    (its acceptor thread, which served nothing, is not a worker of its own
    in any round), and equals what the probe saw answered in it."""
    logs = tmp_path / "logs"
    logs.mkdir()
    server = subprocess.Popen([*FOREIGN, "--log-dir", str(logs)], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                              start_new_session=True)
    try:
        ready = json.loads(server.stdout.readline())
        d = diagnose("--port", str(ready["port"]), "--load", "ramp", "--connections", "1", "--rounds", "4",
                     "--request", "/pid", env={"ACCEPTLAB_TEST_PROBE_WORKER_FROM": "body"})
        rc, lines, err = d.finish()
        assert rc == 0, err
        diag = diagnosis_of(lines)
        summary = [l["line"] for l in lines if l["kind"] == "probe" and l["line"]["type"] == "summary"][0]
        assert (diag["listener"], diag["wait"], diag["closest_variant"]) == ("shared", "accept", "blocking"), diag
        assert diag["handoff"] is True
        assert served_by(diag, "pid") == probe_counts(summary)
        pools = [w for w in diag["workers"] if w["tid"] is None]
        assert sorted(w["pid"] for w in pools) == sorted(probe_counts(summary)), diag["workers"]
        probe_rounds = [l["line"] for l in lines if l["kind"] == "probe" and l["line"]["type"] == "round"]
        for mine, probe in zip(diag["rounds"], probe_rounds):
            want = sorted(list(probe["counts"].values()) + [0] * (2 - len(probe["counts"])), reverse=True)
            assert mine["split"] == "/".join(map(str, want)), (mine, probe["counts"])
        assert len(diag["rounds"]) == len(probe_rounds) == 4
    finally:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(timeout=5)


@root_only
@pytest.mark.parametrize("way,spec,selector", [
    ("iterator", "reuseport-bpf", "bpf"),
    ("prog-fd", "reuseport-bpf", "bpf"),
    ("iterator", "reuseport", "hash"),
    ("prog-fd", "reuseport", "hash"),
    # reuseport-bpf's sockarray holds 4-byte values: the kernel gives no
    # cookies back, so this way cannot see it, and says so.
    ("sockarray", "reuseport-bpf", "hash"),
])
def test_each_way_to_find_the_selector(start_server, way, spec, selector):
    """Each way alone (a test switch): the iterator and the holders'
    program descriptors find reuseport-bpf's program, and none in plain
    reuseport; the sockarray way's known miss is named in its note."""
    s = start_server(spec, workers=2)
    out = subprocess.run([DIAGNOSE, "--port", str(s.port), "--duration", "0.2", "--json"], capture_output=True,
                         text=True, timeout=30, env=dict(os.environ, ACCEPTLAB_TEST_SELECTOR_WAY=way))
    assert out.returncode == 0, out.stderr
    lines = [json.loads(l) for l in out.stdout.splitlines()]
    diag = diagnosis_of(lines)
    assert diag["selector"] == selector, lines[0]["selector"]
    if selector == "bpf":
        assert diag["selector_how"] == way and diag["selector_prog_id"] > 0
    if way == "sockarray":
        assert "4-byte values" in lines[0]["selector"]["note"], lines[0]["selector"]


@root_only
def test_server_exiting_mid_watch_gives_a_partial_result(start_server, diagnose):
    """The server stops while watched: the diagnosis ends soon after with
    what it saw, partial and saying why, exit 1."""
    s = start_server("bare", workers=2)
    d = diagnose("--port", str(s.port), "--duration", "30")
    d.wait_for("attached")
    started = time.monotonic()
    s.stop()
    rc, lines, err = d.finish(timeout=15)
    diag = diagnosis_of(lines)
    assert rc == 1, err
    assert time.monotonic() - started < 10
    assert diag["partial"] is True and "stopped listening on port %d" % s.port in diag["partial_why"]
    assert "Partial" in diag["verdict"]


@root_only
def test_human_output_table_and_verdict(start_server):
    """Without --json: the mechanism line, the table's header and a row per
    worker, and the verdict naming the closest variant."""
    s = start_server("reuseport", workers=2)
    out = subprocess.run([DIAGNOSE, "--port", str(s.port), "--load", "ramp", "--connections", "8"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert text.startswith("port %d: 2 listening sockets (reuseport, selector hash)" % s.port), text
    assert "accepted  served  held  wakeups  wasted" in text
    for pid in s.pids:
        assert "\n%-8d %-8d " % (pid, pid) in text, text
    assert "The closest acceptlab variant is reuseport." in " ".join(text.split())
    assert "A fair random split of 8 connections over 2 workers" in " ".join(text.split()) or \
        "as even as 8 connections over 2 workers can be" in " ".join(text.split()), text


def run_diagnose(port, *args, env=None, argv0=DIAGNOSE, json_out=True):
    """A short passive watch (or, not root, the detection alone): (exit
    code, the diagnosis line or the human text, stderr)."""
    out = subprocess.run([argv0, "--port", str(port), "--duration", "0.3", *args] + (["--json"] if json_out else []),
                         capture_output=True, text=True, timeout=60, cwd="/",
                         env=dict({k: v for k, v in os.environ.items() if k != "ACCEPTLAB_ADVICE"}, **(env or {})))
    if json_out and out.returncode == 0:
        return out.returncode, diagnosis_of([json.loads(l) for l in out.stdout.splitlines()]), out.stderr
    return out.returncode, out.stdout, out.stderr


def test_advice_at_the_nearest_worker_count(start_server):
    """bare at 3 workers, the fixture measured at 2, 4 and 8: the rows of
    4 (between two as near, the larger), said in JSON (workers 4,
    diagnosed_workers 3) and in the human output's "What to change"
    paragraph, each line a bullet."""
    s = start_server("bare", workers=3)
    rc, diag, err = run_diagnose(s.port, env=ADVICE_ENV)
    assert rc == 0, err
    assert diag["closest_variant"] == "bare"
    advice = diag["advice"]
    assert (advice["workers"], advice["diagnosed_workers"]) == (4, 3), advice
    assert [l["text"] for l in advice["lines"]][0] == "Fixture: bare measured at 4 workers."
    rc, text, err = run_diagnose(s.port, env=ADVICE_ENV, json_out=False)
    assert rc == 0, err
    tail = text[text.index("\nWhat to change"):]
    assert " ".join(tail.split()).startswith(
        "What to change (acceptlab's run 20990101T000000Z, measured at 4 workers, the nearest to your 3; %s):"
        % ADVICE_FIXTURE), tail
    assert "\n- Fixture: bare measured at 4 workers.\n- Fixture: a setting for bare at 4 workers" in tail, tail


@pytest.mark.parametrize("content,why", [
    (None, "{path}: No such file or directory"),
    ("bare\t2\tmeasured\tNo run line.\n", "{path}: malformed: line 1 is not \"# run STAMP\""),
    ("# run X\nbare\t2\tmeasured\tok.\nbare\t2\tverdict\tA kind that is none.\n",
     "{path}: malformed: line 3: the kind is not measured, alternative, cost or setting"),
    ("# run X\nbare\t2\tmeasured\n", "{path}: malformed: line 2 has 3 tab-separated fields, not 4"),
    ("# run X\nbare\t2\tmeasured\tBad \udcff byte.\n", "{path}: malformed: line 2: the text is empty, not UTF-8"),
    ("# run X\nlt\t2\tmeasured\tOnly lt.\n", "{path} (run X) has no rows for bare"),
])
def test_advice_missing_or_malformed_is_null_with_a_reason(start_server, tmp_path, content, why):
    """A missing file, a malformed one (refused whole, the line at fault
    named) or one without rows for the variant: advice null and
    advice_why one line saying so; the diagnosis itself is whole (exit 0),
    and the human output says it in "What to change"."""
    s = start_server("bare", workers=2)
    path = tmp_path / "advice.tsv"
    if content is not None:
        path.write_bytes(content.encode("utf-8", "surrogateescape"))
    rc, diag, err = run_diagnose(s.port, env={"ACCEPTLAB_ADVICE": str(path)})
    assert rc == 0, err
    assert diag["advice"] is None and diag["closest_variant"] == "bare"
    assert diag["advice_why"].startswith(why.format(path=path)) and "\n" not in diag["advice_why"], diag["advice_why"]
    rc, text, err = run_diagnose(s.port, env={"ACCEPTLAB_ADVICE": str(path)}, json_out=False)
    assert rc == 0, err
    assert "What to change: no advice (%s" % why.format(path=path)[:30] in " ".join(text.split()), text


def test_the_committed_advice_is_read_in_a_clone(start_server):
    """Run from this clone without ACCEPTLAB_ADVICE, the diagnosis reads
    report/advice.tsv (report/advice.py's, from the CANONICAL run): the
    whole file is accepted (a malformed line anywhere would refuse it), and
    bare at 2 workers gets its measured line first."""
    committed = os.path.join(ROOT, "report", "advice.tsv")
    if not os.path.isfile(committed):
        pytest.skip("report/advice.tsv is not in this tree (make report writes it)")
    with open(os.path.join(ROOT, "results", "linux", "CANONICAL")) as f:
        canonical = f.read().strip()
    s = start_server("bare", workers=2)
    rc, diag, err = run_diagnose(s.port)
    assert rc == 0, err
    advice = diag["advice"]
    assert advice is not None, diag["advice_why"]
    assert (advice["file"], advice["run"], advice["workers"]) == (committed, canonical, 2), advice
    assert advice["lines"][0]["kind"] == "measured" and advice["lines"][-1]["kind"] == "setting", advice


def test_advice_found_beside_the_executable(start_server, tmp_path):
    """Without ACCEPTLAB_ADVICE: <exe>/../share/acceptlab/advice.tsv (as
    installed), else <exe>/../report/advice.tsv (as in a clone); with
    neither, advice null naming both."""
    s = start_server("bare", workers=2)
    (tmp_path / "bin").mkdir()
    exe = tmp_path / "bin" / "acceptlab-diagnose"
    shutil.copy(DIAGNOSE, exe)
    rc, diag, err = run_diagnose(s.port, argv0=str(exe))
    assert rc == 0, err
    assert diag["advice"] is None and diag["advice_why"] == (
        "no advice file: neither %s/share/acceptlab/advice.tsv (installed) nor %s/report/advice.tsv (a clone) "
        "exists, and ACCEPTLAB_ADVICE is not set" % (tmp_path, tmp_path)), diag["advice_why"]
    (tmp_path / "report").mkdir()
    shutil.copy(ADVICE_FIXTURE, tmp_path / "report" / "advice.tsv")
    rc, diag, err = run_diagnose(s.port, argv0=str(exe))
    assert diag["advice"]["file"] == str(tmp_path / "report" / "advice.tsv"), diag
    (tmp_path / "share" / "acceptlab").mkdir(parents=True)
    (tmp_path / "share" / "acceptlab" / "advice.tsv").write_text("# run INSTALLED\nbare\t2\tsetting\tInstalled.\n")
    rc, diag, err = run_diagnose(s.port, argv0=str(exe))
    assert diag["advice"]["file"] == str(tmp_path / "share" / "acceptlab" / "advice.tsv"), diag
    assert (diag["advice"]["run"], diag["advice"]["lines"]) == ("INSTALLED", [{"kind": "setting",
                                                                              "text": "Installed."}])


def test_nothing_listening_is_exit_2_naming_the_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, never listening
        out = subprocess.run([DIAGNOSE, "--port", str(port)], capture_output=True, text=True, timeout=10)
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr.count("\n") == 1 and "port %d" % port in out.stderr, out.stderr


@pytest.mark.parametrize("args,named", [
    (["--port", "1", "--bogus"], "--bogus"),
    (["--load", "burst"], "--port"),
    (["--port", "70000"], "--port 70000"),
    (["--port", "1", "--load", "sideways"], "--load sideways"),
    (["--port", "1", "--tcp"], "--tcp"),
    (["--port", "1", "--load", "burst", "--tcp", "--request", "/"], "--tcp"),
    (["--port", "1", "--load", "keepalive", "--tcp"], "--tcp"),
    (["--port", "1", "--load", "burst", "--duration", "3"], "--duration"),
    (["--port", "1", "--duration", "0"], "--duration 0"),
    (["--port", "1", "--load", "burst", "--request", "pid"], "--request pid"),
    (["--port", "1", "--load", "burst", "--rounds", "0"], "--rounds"),
    (["--port", "1", "--load", "burst", "--rounds", "21"], "--rounds"),
    (["--port", "1", "--rounds", "3"], "--rounds"),
])
def test_bad_options_are_exit_2_naming_the_option(args, named):
    out = subprocess.run([DIAGNOSE, *args], capture_output=True, text=True, timeout=10)
    assert out.returncode == 2, out
    assert out.stderr.startswith("acceptlab-diagnose: %s" % named), out.stderr
    assert out.stderr.count("\n") == 1


def test_load_refuses_a_listener_the_probe_cannot_reach():
    """--load against a listener on IPv6 loopback only (the probe speaks
    IPv4): exit 2, one line naming --load and the port; nothing is sent."""
    with socket.socket(socket.AF_INET6) as sock:
        sock.bind(("::1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        out = subprocess.run([DIAGNOSE, "--port", str(port), "--load", "burst"], capture_output=True, text=True,
                             timeout=10)
    assert out.returncode == 2, out
    assert out.stderr.startswith("acceptlab-diagnose: --load: port %d is not reachable on loopback" % port)
    assert out.stderr.count("\n") == 1 and out.stdout == ""


def test_help():
    out = subprocess.run([DIAGNOSE, "--help"], capture_output=True, text=True, timeout=10)
    assert out.returncode == 0 and out.stdout.startswith("usage: acceptlab-diagnose --port P")


def test_pid_holding_no_listener_is_exit_2(start_server):
    """--pid naming a process that, with its descendants, holds nothing on
    the port: exit 2 naming --pid. Naming the server's own pid works."""
    s = start_server("bare", workers=2)
    other = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        out = subprocess.run([DIAGNOSE, "--port", str(s.port), "--pid", str(other.pid)], capture_output=True,
                             text=True, timeout=10)
    finally:
        other.kill()
        other.wait()
    assert out.returncode == 2 and out.stderr.startswith("acceptlab-diagnose: --pid %d" % other.pid), out.stderr
    out = subprocess.run([DIAGNOSE, "--port", str(s.port), "--pid", str(s.proc.pid), "--duration", "0.5",
                          "--json"], capture_output=True, text=True, timeout=20)
    assert out.returncode == 0, out.stderr
    detected = json.loads(out.stdout.splitlines()[0])
    assert sorted(h["pid"] for h in detected["holders"]) == sorted([s.proc.pid] + s.pids)


def as_nobody(binaries):
    """(argv prefix, {name: path}): run copies of binaries as nobody (root
    drops to it with setpriv), or as this user when not root."""
    if os.geteuid() != 0:
        return [], dict((os.path.basename(b), b) for b in binaries)
    if not shutil.which("setpriv"):
        pytest.skip("setpriv (util-linux) is not installed: cannot drop root")
    d = tempfile.mkdtemp(prefix="acceptlab-nobody-")
    os.chmod(d, 0o755)
    paths = {}
    for b in binaries:
        paths[os.path.basename(b)] = os.path.join(d, os.path.basename(b))
        shutil.copy(b, paths[os.path.basename(b)])
        os.chmod(paths[os.path.basename(b)], 0o755)
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"], paths


@pytest.mark.parametrize("variant,expected", [
    ("exclusive", ("shared", 1, "epoll-exclusive", None, "exclusive")),
    ("reuseport", ("reuseport", 2, "epoll", "hash", "reuseport")),
])
def test_without_root_reports_what_it_can_read(diagnose, variant, expected):
    """Not root (a server and the diagnosis both run as nobody): one line
    on stderr says what it cannot do (tracing, BPF); the diagnosis still
    names the listeners, the holders' epoll flags and the closest variant,
    with null counts, and sends no load."""
    wrap, paths = as_nobody([SERVER, DIAGNOSE, ADVICE_FIXTURE])
    server = subprocess.Popen([*wrap, paths["acceptlab-server"], "--variant", variant, "--workers", "2",
                               "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              cwd="/", start_new_session=True)
    try:
        ready = json.loads(server.stdout.readline())
        d = diagnose("--port", str(ready["port"]), "--load", "burst", argv0=paths["acceptlab-diagnose"], wrap=wrap,
                     env={"ACCEPTLAB_ADVICE": paths["advice.tsv"]})
        rc, lines, err = d.finish()
        assert rc == 0, err
        diag = diagnosis_of(lines)
        got = (diag["listener"], diag["listeners"], diag["wait"], diag["selector"], diag["closest_variant"])
        assert got == expected, diag
        assert diag["traced"] is False and diag["handoff"] is None and diag["split"] is None
        assert diag["cannot"].startswith("not root: no tracing") and "no load was sent" in diag["cannot"]
        assert err.count("not root") == 1 and err.count("\n") == 1, err
        assert not [l for l in lines if l["kind"] == "probe"]
        assert {w["pid"] for w in diag["workers"]} == {w["pid"] for w in ready["workers"]}
        assert all(w["served"] is None for w in diag["workers"])
        # the advice needs no trace: the closest variant and the workers found
        assert (diag["advice"]["workers"], diag["advice"]["lines"][0]["text"]) == \
            (2, "Fixture: %s measured at 2 workers." % expected[-1]), diag["advice"]
        assert diag["fair_chance"] is None and diag["fair_chance_why"] == "no split"
    finally:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(timeout=5)
        if wrap:  # the copies' directory (as_nobody's, root only)
            shutil.rmtree(os.path.dirname(paths["acceptlab-server"]), ignore_errors=True)
