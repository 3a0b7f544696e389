"""Shared helpers for acceptlab's tests: start a server on port 0 and always
stop it (its whole process group) however the test ends; talk raw HTTP."""

import ctypes
import fcntl
import functools
import json
import mmap
import os
import select
import signal
import socket
import struct
import subprocess
import termios
import time

import pytest

from acceptlab import arms
# The faults table's rows come from pytest's report of each fault test.
from tests.faults import pytest_runtest_makereport  # noqa: F401  (a pytest hook, found by name)


def pytest_configure(config):
    config.addinivalue_line("markers", "fault(case, expected): a fault case of the faults table (tests/faults.py)")


def skip_reason(report):
    """A skipped test's reason, as -rs prints it ("Skipped: " dropped)."""
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return reason[len("Skipped: "):] if reason.startswith("Skipped: ") else reason


def skips_by_reason(reports):
    """[(count, reason)] over skipped test reports, most frequent first."""
    counts = {}
    for rep in reports:
        reason = skip_reason(rep)
        counts[reason] = counts.get(reason, 0) + 1
    return sorted(((n, r) for r, n in counts.items()), key=lambda t: (-t[0], t[1]))


# Outermost of the summary hooks (tryfirst), so this prints after -rs's
# list of skips and right before pytest's closing line of counts.
@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter):
    """The suite ends with its skips counted by reason: what did not run,
    and why, at a glance."""
    yield
    skipped = terminalreporter.stats.get("skipped", [])
    terminalreporter.write_sep("=", "skips by reason")
    for n, reason in skips_by_reason(skipped):
        terminalreporter.write_line("%5d  %s" % (n, reason))
    terminalreporter.write_line("%5d  skipped in all" % len(skipped))


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SERVER = os.path.join(ROOT, "bin", "acceptlab-server")
SERVER_ASAN = os.path.join(ROOT, "build", "server-asan")
PROBE = os.path.join(ROOT, "bin", "acceptlab-probe")
PYTHON = "/usr/bin/python3"


def packages_env(env=None):
    """env (default: this process's) with PYTHONPATH=ROOT. A project entry
    point runs as a module from the repository's top (cwd=ROOT); one that a
    test runs from another directory (tmp_path, so that the paths it prints
    are relative) finds the packages through this instead."""
    return dict(os.environ if env is None else env, PYTHONPATH=ROOT)


def serving_spec(arm):
    """An arm as Server takes it: its variant and knobs, "--threads 2" in
    place of "--threads" ("mutex --accept-mutex-strict", "handoff --threads 2
    --handoff-policy off")."""
    words = [arm.variant]
    for option in arm.options:
        words += [option, "2"] if option == "--threads" else [option]
    return " ".join(words)


# Variants that load a BPF program: root only (tests skip them otherwise).
NEEDS_ROOT = {arms.get(a).variant for a in arms.needing_root()}
# Variants that can queue new connections at a SIGSTOPped worker (its own
# SO_REUSEPORT listener, or hand-offs into its channel: it looks idle); those
# connections wait, and are answered once it runs again.
QUEUES_AT_STOPPED_WORKER = {a.variant for a in arms.TABLE if a.when_stopped == "queued"}
# The arms the generic serving tests run: the process arms without an
# environment of their own (arms.py), in the table's order.
_PROCESS = [a for a in arms.TABLE if a.mode == "process" and not a.env]
VARIANTS = [a.variant for a in _PROCESS if not a.options and a.when_stopped != "stall"]
# The generic serving tests run these too: arms with knobs, and those whose
# accepting stalls behind a stopped worker (both mutex arms), which sit out
# the SIGSTOP tests (a stopped token holder stalls accepting, as nginx's
# would). An entry may carry the variant's knobs after its name.
SERVING_PROCESS = VARIANTS + [serving_spec(a) for a in _PROCESS if a.options or a.when_stopped == "stall"]
# Threads mode: every one of those again in one process, then the threads
# arms that have no process twin (the shared-epoll arm of the race, the
# handoff policies). "--threads 2" replaces Server's "--workers N".
_TWINS = {(a.variant, a.options + ("--threads",)) for a in _PROCESS}
SERVING_THREADS = ([v + " --threads 2" for v in SERVING_PROCESS]
                   + [serving_spec(a) for a in arms.TABLE if a.mode == "threads" and not a.env
                      and (a.variant, a.options) not in _TWINS])
# --spawn-workers: every process arm again with its workers started by
# fork+exec of the server binary (shared state passed by descriptor number).
SERVING_SPAWN = [v + " --spawn-workers" for v in SERVING_PROCESS]
SERVING = SERVING_PROCESS + SERVING_THREADS + SERVING_SPAWN
# The SIGSTOP tests' arms: the variants, forked and spawned.
STOPPABLE = VARIANTS + [v + " --spawn-workers" for v in VARIANTS]


@functools.lru_cache(maxsize=None)
def _listed_variants():
    out = subprocess.run([SERVER, "--list-variants"], capture_output=True, text=True, timeout=10, check=True).stdout
    return {v["variant"]: v for v in map(json.loads, out.splitlines())}


def one_request(spec):
    """Whether the variant of spec ("blocking --threads 2") answers one
    request per connection, with Connection: close (--list-variants'
    "one_request"): the serving tests then expect the close where others
    expect keep-alive."""
    return bool(_listed_variants().get(spec.split()[0], {}).get("one_request"))


class Server:
    """A running acceptlab-server. Lines it prints after the ready line are
    collected by lines()/wait_for()."""

    def __init__(self, variant="bare", workers=2, args=(), binary=SERVER, env=None):
        variant, *knobs = variant.split()  # "mutex --accept-mutex-strict": a variant and its knobs
        self.threads = "--threads" in knobs or "--threads" in args
        count = [] if self.threads else ["--workers", str(workers)]
        self.proc = subprocess.Popen(
            [binary, "--variant", variant, *count, "--port", "0", *knobs, *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, env=env)
        self.buf = b""
        self.events = []
        try:
            self.ready = self.wait_for("ready", timeout=10)
        except Exception:
            self.kill()
            raise
        self.port = self.ready["port"]
        # What /pid answers: the worker's pid, or its tid in threads mode.
        self.id_key = "tid" if self.threads else "pid"
        self.pids = [w[self.id_key] for w in self.ready["workers"]]

    def _pump(self, timeout):
        alive, self.buf, got = read_json_lines(self.proc, self.buf, timeout)
        self.events += got
        return alive

    def wait_for(self, event, timeout=10, **match):
        """Returns the first lifecycle line with this event (and fields)."""
        deadline = time.monotonic() + timeout
        while True:
            for e in self.events:
                if e.get("event") == event and all(e.get(k) == v for k, v in match.items()):
                    return e
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("no %r line within %.0f s; got %r; stderr: %s"
                                     % (event, timeout, self.events, self.stderr_so_far()))
            if not self._pump(min(left, 0.2)) and self.proc.poll() is not None:
                raise AssertionError("server exited %s before a %r line; stderr: %s"
                                     % (self.proc.returncode, event, self.stderr_so_far()))

    def wait_count(self, event, n, timeout=10):
        """Waits until n lines with this event have been seen; returns them."""
        deadline = time.monotonic() + timeout
        while True:
            found = [e for e in self.events if e.get("event") == event]
            if len(found) >= n:
                return found
            if time.monotonic() > deadline:
                raise AssertionError("saw %d %r lines, wanted %d: %r" % (len(found), event, n, self.events))
            if not self._pump(0.1) and self.proc.poll() is not None:
                raise AssertionError("server exited %s" % self.proc.returncode)

    def collect(self, seconds):
        """Reads lifecycle lines for a while; returns all seen so far."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if not self._pump(0.05) and self.proc.poll() is not None:
                break
        return self.events

    def stderr_so_far(self):
        if self.proc.poll() is None:
            return "(running)"
        return self.proc.stderr.read().decode(errors="replace")

    def stop(self, timeout=15):
        """SIGTERM and wait; returns the exit code (the group is killed if it hangs)."""
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=timeout)
        finally:
            self.kill()
        while self._pump(0.05):
            pass
        return self.proc.returncode

    def kill(self):
        try:
            os.killpg(self.proc.pid, signal.SIGCONT)
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass


@pytest.fixture
def start_server():
    """Factory: start_server(variant, workers, args) -> Server; all are killed at teardown."""
    started = []

    def factory(*a, **kw):
        variant = (a[0] if a else kw.get("variant", "bare")).split()[0]
        if variant in NEEDS_ROOT and os.geteuid() != 0:
            pytest.skip("%s needs root (CAP_BPF to load its BPF program)" % variant)
        s = Server(*a, **kw)
        started.append(s)
        return s

    yield factory
    for s in started:
        s.kill()


def read_json_lines(proc, buf, timeout):
    """Reads what proc's stdout has within timeout (unbuffered: select sees
    all of it) onto buf: (False at EOF, else True; the unfinished line; the
    JSON objects of the lines it finished)."""
    fd, got = proc.stdout.fileno(), []
    if select.select([fd], [], [], timeout)[0]:
        chunk = os.read(fd, 65536)
        if not chunk:
            return False, buf, got
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            got.append(json.loads(line))
    return True, buf, got


def alive(pid):
    """True if pid runs and is not a zombie."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def pids_running(exe):
    """Live (not zombie) processes whose executable is exe."""
    out = set()
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.readlink("/proc/%s/exe" % name) == exe and alive(int(name)):
                    out.add(int(name))
            except OSError:
                pass
    return out


def proc_state(pid):
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def http_exchange(port, raw, timeout=5.0):
    """Sends raw bytes on a fresh connection and reads until the server
    closes (or the timeout): returns everything read."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(raw)
        out = b""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            if not chunk:
                break
            out += chunk
        return out


def read_responses(sock, n, timeout=5.0):
    """Reads n Content-Length framed responses from sock, in order:
    [(status, headers dict, body), ...]. Nothing read is lost between them."""
    sock.settimeout(timeout)
    data, out = b"", []
    while len(out) < n:
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                raise AssertionError("connection closed after %d of %d responses: %r" % (len(out), n, data))
            data += chunk
        head, rest = data.split(b"\r\n\r\n", 1)
        lines = head.decode().split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, v in (l.split(":", 1) for l in lines[1:])}
        length = int(headers["content-length"])
        while len(rest) < length:
            chunk = sock.recv(65536)
            if not chunk:
                raise AssertionError("connection closed inside a body")
            rest += chunk
        out.append((int(lines[0].split()[1]), headers, rest[:length]))
        data = rest[length:]
    if data:
        raise AssertionError("unexpected bytes after %d responses: %r" % (n, data))
    return out


def read_response(sock, timeout=5.0):
    """Reads one response: (status, headers dict, body)."""
    return read_responses(sock, 1, timeout)[0]


def get(port, path="/pid", sock=None, extra=""):
    """One GET on a new (or the given) connection: (status, headers, body)."""
    own = sock is None
    s = sock or socket.create_connection(("127.0.0.1", port), timeout=5)
    try:
        s.sendall(("GET %s HTTP/1.1\r\nHost: t\r\n%s\r\n" % (path, extra)).encode())
        return read_response(s)
    finally:
        if own:
            s.close()


def open_pid_requests(port, n):
    """Opens n connections and sends GET /pid on each; returns the sockets."""
    conns = []
    for _ in range(n):
        c = socket.create_connection(("127.0.0.1", port), timeout=5)
        c.sendall(b"GET /pid HTTP/1.1\r\nHost: t\r\n\r\n")
        conns.append(c)
    return conns


def pids_answering(conns):
    """Reads one /pid answer from each of conns (in order) and closes them all:
    [pid or tid that answered, ...]."""
    try:
        return [int(read_response(c)[2]) for c in conns]
    finally:
        for c in conns:
            c.close()


def answered_by(port, n):
    """n connections, one at a time, each asking /pid: {worker id:
    connections it answered}."""
    answered = {}
    for _ in range(n):
        who = int(get(port, "/pid")[2])
        answered[who] = answered.get(who, 0) + 1
    return answered


def sequential_then_burst(port, sequential=40, burst=32):
    """`sequential` connections asking /pid one at a time, then a burst of
    `burst` held open until all have answered: {worker id: connections it
    answered}."""
    answered = answered_by(port, sequential)
    for who in pids_answering(open_pid_requests(port, burst)):
        answered[who] = answered.get(who, 0) + 1
    return answered


def kill_group(proc):
    """SIGKILLs a child started with start_new_session (its whole process
    group) if it still runs, and reaps it."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=5)


def killed_at_teardown(make):
    """The body of a factory fixture: yields make, wrapped so every object it
    made is .kill()ed at teardown, however the test ended."""
    started = []

    def factory(*a, **kw):
        obj = make(*a, **kw)
        started.append(obj)
        return obj

    yield factory
    for obj in started:
        obj.kill()


def task_state(pid, tid=None):
    """(state letter, wchan) of thread tid of process pid (its main thread
    by default), from /proc; ("gone", "") once it has exited."""
    base = "/proc/%d/task/%d/" % (pid, pid if tid is None else tid)
    try:
        with open(base + "stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        with open(base + "wchan") as f:
            return state, f.read()
    except (OSError, IndexError):
        return "gone", ""


def in_epoll_wait(state, wchan):
    return state == "S" and ("epoll" in wchan or "ep_poll" in wchan)


def in_accept_wait(state, wchan):
    """Blocked in accept() on a blocking listener (blocking's workers)."""
    return state == "S" and "accept" in wchan


def idle_waiting(state, wchan):
    """Asleep waiting for work: in epoll_wait, or in accept() for a variant
    that waits there (blocking)."""
    return in_epoll_wait(state, wchan) or in_accept_wait(state, wchan)


def in_nanosleep(state, wchan):
    """Inside an inline /sleep (servers/app.c's nanosleep loop)."""
    return state == "S" and "nanosleep" in wchan


def stopped(state, wchan):
    """SIGSTOPped and off its CPU (do_signal_stop: its parent's SIGCHLD sent)."""
    return state == "T" and wchan == "do_signal_stop"


def wait_tasks(tasks, ok, what, timeout=10.0, want=all, polls=2):
    """Polls the (state, wchan) of tasks [(pid, tid), ...] until want(ok(state,
    wchan) for each) holds on `polls` consecutive polls; returns the tasks
    for which ok held last. Fails naming what it saw last."""
    deadline = time.monotonic() + timeout
    seen = 0
    while True:
        states = {t: task_state(*t) for t in tasks}
        good = [t for t in tasks if ok(*states[t])]
        seen = seen + 1 if want(ok(*states[t]) for t in tasks) else 0
        if seen >= polls:
            return good
        if time.monotonic() > deadline:
            raise AssertionError("not %s within %.0f s: (pid, tid) -> (state, wchan) %r" % (what, timeout, states))
        time.sleep(0.002)


def worker_tasks(pid, tids=None):
    """[(pid, tid), ...]: the given threads of pid, or every thread it has."""
    if tids is None:
        tids = [int(t) for t in os.listdir("/proc/%d/task" % pid)]
    return [(pid, t) for t in tids]


def wait_idle_in_epoll(pid, tids=None, timeout=10.0):
    """Waits until each of tids (default: every thread of process pid)
    sleeps in epoll_wait (state S, a wchan naming epoll), or in accept() for
    a variant that waits there (idle_waiting), on two consecutive polls: it
    has handled every wakeup issued before the call."""
    wait_tasks(worker_tasks(pid, tids), idle_waiting, "asleep in epoll_wait (or accept)", timeout)


def thread_states(pid):
    """The state letter of each thread of process pid (/proc's stat)."""
    out = []
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                out.append(f.read().rsplit(")", 1)[1].split()[0])
        except OSError:
            pass
    return out


def stop_group(server):
    """SIGSTOPs the server's process group; returns once every thread of
    every worker (and the supervisor) is stopped."""
    os.killpg(server.proc.pid, signal.SIGSTOP)
    pids = {server.proc.pid} | {w["pid"] for w in server.ready["workers"]}
    deadline = time.monotonic() + 10
    while not all(s == "T" for p in pids for s in thread_states(p)):
        assert time.monotonic() < deadline, {p: thread_states(p) for p in pids}
        time.sleep(0.01)


def wait_stopped(pid, timeout=10.0):
    """Waits until process pid is SIGSTOPped and off its CPU."""
    wait_tasks(worker_tasks(pid, [pid]), stopped, "stopped", timeout, polls=1)


def wait_acked(conns, timeout=10.0):
    """Waits until every byte sent on each of conns is acknowledged by the
    server's kernel (SIOCOUTQ 0): each connection is established at the
    server and holds its request, so every wakeup it causes (its listener's
    waiters, then its own) has been issued."""
    deadline = time.monotonic() + timeout
    while True:
        left = [c for c in conns if struct.unpack("i", fcntl.ioctl(c.fileno(), termios.TIOCOUTQ, b"\0" * 4))[0]]
        if not left:
            return
        if time.monotonic() > deadline:
            raise AssertionError("%d of %d requests not acknowledged within %.0f s" % (len(left), len(conns), timeout))
        time.sleep(0.002)


def server_send_queues(port):
    """Send-Q of each established socket whose local port is port (the
    server's ends): bytes written and not yet acknowledged by the client."""
    out = subprocess.run(["ss", "-tnH", "state", "established", "sport = :%d" % port],
                         capture_output=True, text=True, check=True).stdout
    return [int(l.split()[1]) for l in out.splitlines() if l.strip()]


def wait_request_read(conn, port, timeout=10.0):
    """Waits until the server has read everything sent on conn (the Recv-Q of
    its end, the established socket on port whose peer is conn, reads 0):
    the worker that holds it has taken the request in, so when the request
    blocks (/sleep) or computes (/work) that worker is inside its handler and
    accepts nothing until it is done."""
    peer = conn.getsockname()[1]
    deadline = time.monotonic() + timeout
    while True:
        out = subprocess.run(["ss", "-tnH", "state", "established", "( sport = :%d and dport = :%d )" % (port, peer)],
                             capture_output=True, text=True, check=True).stdout.split()
        if out and out[0] == "0":
            return
        assert time.monotonic() < deadline, "the server did not read the request within %.0f s: %r" % (timeout, out)
        time.sleep(0.002)


def split_answered(conns, port, pid, tids=None, timeout=10.0):
    """Splits conns (each with a request sent) into ([pid that answered,
    ...], [sockets still waiting]) once the running worker (process pid, its
    threads tids) has answered all it will: every request reached the
    server (wait_acked), then the worker sleeps idle in epoll_wait
    (wait_idle_in_epoll), then every answer written reached its client (no
    server socket on port with unacknowledged bytes). The answered ones are
    read and closed."""
    wait_acked(conns, timeout)
    wait_idle_in_epoll(pid, tids, timeout)
    deadline = time.monotonic() + timeout
    while any(server_send_queues(port)):
        assert time.monotonic() < deadline, "answers unacknowledged: Send-Q %r" % server_send_queues(port)
        time.sleep(0.002)
    answered, waiting = [], []
    for c in conns:
        ready = select.select([c], [], [], 0)[0]
        if ready:
            answered.append(int(read_response(c)[2]))
            c.close()
        else:
            waiting.append(c)
    return answered, waiting


def run_probe(*args, timeout=60):
    return subprocess.run([PROBE, *args], capture_output=True, text=True, timeout=timeout)


# The balancing variants' load records (ebpf/worker_load.h, struct
# load_slot): __s64 held, credited; __u64 syn[8]; __u32 live, gen, owner,
# died_held; __u64 retired, giving; __u32 exited, unused. A SYN counts while its bucket's epoch is
# within the window; inflight is credited less retired's count (its high 32
# bits), in 32-bit wrapping arithmetic (WORKER_LOAD_INFLIGHT).
LOAD_SLOT = struct.Struct("<qq8QIIIIQQII")
LOAD_MAX_SLOTS = 128  # MAX_SLOTS in servers/server.h: two slots per worker index
SYN_EPOCH_SHIFT = 27
SYN_WINDOW = 6
BPF_MAP_TYPE_ARRAY = 2
BPF_F_MMAPABLE = 0x400
SYS_PIDFD_GETFD = 438  # x86_64 and the generic table alike


def _fdinfo(pid, name):
    try:
        with open("/proc/%d/fdinfo/%s" % (pid, name)) as f:
            return {k.strip(): v.strip() for k, v in (l.split(":", 1) for l in f.read().splitlines() if ":" in l)}
    except OSError:
        return {}


class LoadRecords:
    """A running server's load records, mapped read-only without a
    connection that would count itself: the BPF slots map (kernel
    accounting) or the acceptlab-load memfd (user accounting) that process
    pid (the supervisor, or the process in threads mode) holds, copied out
    with pidfd_getfd(2). Needs root (or the same user and ptrace rights)."""

    def __init__(self, pid):
        fdnum = None
        for name in os.listdir("/proc/%d/fd" % pid):
            try:
                target = os.readlink("/proc/%d/fd/%s" % (pid, name))
            except OSError:
                continue
            info = _fdinfo(pid, name) if target == "anon_inode:bpf-map" else {}
            if (target.startswith("/memfd:acceptlab-load")
                    or (info.get("map_type") == str(BPF_MAP_TYPE_ARRAY)
                        and info.get("value_size") == str(LOAD_SLOT.size)
                        and info.get("max_entries") == str(LOAD_MAX_SLOTS)
                        and int(info.get("map_flags", "0"), 16) & BPF_F_MMAPABLE)):
                fdnum = int(name)
                break
        assert fdnum is not None, "process %d holds no load records" % pid
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        pidfd = os.pidfd_open(pid)
        try:
            fd = libc.syscall(ctypes.c_long(SYS_PIDFD_GETFD), ctypes.c_long(pidfd),
                              ctypes.c_long(fdnum), ctypes.c_long(0))
            if fd < 0:
                err = ctypes.get_errno()
                raise OSError(err, "pidfd_getfd: " + os.strerror(err))
        finally:
            os.close(pidfd)
        try:
            self.mm = mmap.mmap(fd, LOAD_SLOT.size * LOAD_MAX_SLOTS, mmap.MAP_SHARED, mmap.PROT_READ)
        finally:
            os.close(fd)

    def slots(self, n):
        """[{held, inflight, syn, live, gen, owner, died_held, giving, exited, load}, ...] for
        the first n slots; inflight and load as the server computes them
        (load: held + inflight + the SYNs in the window)."""
        now = time.monotonic_ns() >> SYN_EPOCH_SHIFT  # CLOCK_MONOTONIC, as bpf_ktime_get_ns
        out = []
        for i in range(n):
            held, credited, *rest = LOAD_SLOT.unpack_from(self.mm, i * LOAD_SLOT.size)
            syn = sum(v & 0xffffffff for v in rest[:8] if (now - (v >> 32)) & 0xffffffff < SYN_WINDOW)
            inflight = (credited - (rest[12] >> 32)) & 0xffffffff
            inflight -= (inflight & 0x80000000) << 1
            out.append({"held": held, "inflight": inflight, "syn": syn, "live": rest[8], "gen": rest[9],
                        "owner": rest[10], "died_held": rest[11], "giving": rest[13], "exited": rest[14],
                        "load": held + inflight + syn})
        return out

    def by_index(self, workers, slots_per_index=2):
        """Each worker index's load, summed over its slots."""
        rows = self.slots(workers * slots_per_index)
        return [sum(rows[i + k * workers]["load"] for k in range(slots_per_index)) for i in range(workers)]

    def close(self):
        self.mm.close()


def bpf_attachments(pid):
    """The tracepoints process pid holds BPF programs on (bpftool's list):
    syscall tracepoints (perf events) and raw ones (tp_btf) alike."""
    perf = json.loads(subprocess.run(["bpftool", "-j", "perf", "show"], capture_output=True, text=True,
                                     check=True).stdout or "[]")
    return {a["tracepoint"] for a in perf if a.get("pid") == pid and "tracepoint" in a}
