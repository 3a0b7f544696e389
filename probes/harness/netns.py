"""netns: a function run in a network namespace of its own, in-process.

run_in_netns(fn, timeout) forks; the child leaves the campaign's process
group for one of its own, enters a new network namespace (unshare
CLONE_NEWNET), brings its loopback up, sets the per-namespace sysctls it is
given, runs fn() and sends fn's result (JSON) back over a pipe, then exits
(os._exit: nothing of the parent's is run twice). The parent waits for it
and returns the result. Every trial so gets the same clean stack: no
TIME_WAIT sockets or sysctl left by another, and a sysctl it sets stays in
its namespace. Nothing is relaunched: the study's own function runs, with
the plan it was given.

Nothing the child started outlives it: the child stops what it registered
(lifecycle's registry, its own from the fork on) before it exits; the
parent registers the child, so a step that fails or a Ctrl-C stops it
(SIGTERM to its group, the child unwinding, then SIGKILL), and once the
child is gone every process still in its namespace (a server started in a
session of its own) is killed. Needs root (CAP_SYS_ADMIN); callers check
is_root() and say what they do without it.
"""

import ctypes
import fcntl
import json
import os
import select
import signal
import socket
import struct
import sys
import time

from probes.harness import lifecycle
from probes.harness.lifecycle import StepFailed, register, registering

CLONE_NEWNET = 0x40000000
PR_SET_PDEATHSIG = 1
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
EXIT_GRACE_S = 10   # a child that sent its result has this long to stop what it started and exit
TERM_GRACE_S = 5    # after SIGTERM, before SIGKILL


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def loopback_up():
    """Brings lo up in this process's network namespace (ioctl SIOCSIFFLAGS:
    what `ip link set lo up` does, with no tool to find)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        ifreq = struct.pack("16sh22x", b"lo", 0)
        flags = struct.unpack_from("h", fcntl.ioctl(s, SIOCGIFFLAGS, ifreq), 16)[0]
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sh22x", b"lo", flags | IFF_UP))


def enter_new_netns(sysctls=None):
    """unshare(CLONE_NEWNET) for this process, lo up, then each sysctl
    {name: value} set in the new namespace. Raises OSError."""
    if _libc().unshare(CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, "unshare(CLONE_NEWNET): %s" % os.strerror(err))
    loopback_up()
    for name, value in (sysctls or {}).items():
        with open("/proc/sys/" + name.replace(".", "/"), "w") as f:
            f.write("%s\n" % value)


def netns_of(pid="self"):
    """The network namespace's identity ("net:[4026531840]"), or None."""
    try:
        return os.readlink("/proc/%s/ns/net" % pid)
    except OSError:
        return None


def _send(fd, obj):
    data = (json.dumps(obj, sort_keys=True) + "\n").encode()
    while data:
        data = data[os.write(fd, data):]


def _child(fn, fd, parent, sysctls):
    """The forked child: never returns."""
    code = 0
    try:
        lifecycle.forked()
        os.setpgid(0, 0)
        _libc().prctl(PR_SET_PDEATHSIG, signal.SIGTERM)  # the parent gone: unwind too
        if os.getppid() != parent:
            os._exit(1)
        lifecycle.handle_signals()
        enter_new_netns(sysctls)
        _send(fd, {"netns": netns_of()})
        try:
            out = {"result": fn()}
        except StepFailed as e:
            out = {"error": str(e), "rows": e.rows}
        except (KeyboardInterrupt, SystemExit):
            out = {"error": "interrupted"}
        except Exception as e:  # the parent reports it as the step's failure
            out = {"error": "%s: %s" % (type(e).__name__, e)}
        lifecycle.stop_all()
        _send(fd, out)
    except BaseException as e:
        code = 1
        try:
            lifecycle.stop_all()
            _send(fd, {"error": "in the network namespace: %s: %s" % (type(e).__name__, e)})
        except BaseException:
            pass
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


class Child:
    """The forked child as the clean-up registry holds it."""

    def __init__(self, pid):
        self.pid = pid
        self.netns = None      # its namespace, once it said
        self.status = None     # its wait status, once reaped

    def reap(self, wait_s=None):
        """Waits up to wait_s (None: for as long as it takes) for the child
        to exit; True once it has."""
        deadline = None if wait_s is None else time.monotonic() + wait_s
        while self.status is None:
            try:
                pid, status = os.waitpid(self.pid, 0 if deadline is None else os.WNOHANG)
            except ChildProcessError:
                pid, status = self.pid, -1
            if pid:
                self.status = status
            elif time.monotonic() >= deadline:
                return False
            else:
                time.sleep(0.01)
        return True

    def signal_group(self, sig):
        try:
            os.killpg(self.pid, sig)
        except ProcessLookupError:
            pass

    def stop(self, grace=0.0):
        """Lets the child exit within grace, else SIGTERM to its group (it
        unwinds, stopping what it started), else SIGKILL; then kills every
        process left in its namespace and forgets it."""
        if not self.reap(grace):
            if self.netns is None:
                self.netns = netns_of(self.pid)
            self.signal_group(signal.SIGTERM)
            if not self.reap(TERM_GRACE_S):
                self.signal_group(signal.SIGKILL)
                self.reap()
        kill_namespace(self.netns)
        lifecycle.forget(self)


def in_namespace(netns):
    """The pids of the processes in network namespace netns."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit() and netns_of(name) == netns:
            found.append(int(name))
    return found


def kill_namespace(netns, wait_s=2.0):
    """SIGKILLs every process in namespace netns (what a trial left behind: a
    server runs in a session of its own, outside the child's group) and
    waits a little for them to go."""
    if not netns or netns == netns_of():
        return
    deadline = time.monotonic() + wait_s
    while True:
        pids = [p for p in in_namespace(netns) if p != os.getpid()]
        if not pids or time.monotonic() >= deadline:
            return
        for p in pids:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.02)


def run_in_netns(fn, timeout, sysctls=None, what="the run"):
    """fn() in a forked child in a network namespace of its own (the module's
    docstring); returns its result, which must be JSON (a tuple comes back a
    list). Raises StepFailed: with fn's own message (and rows) when fn raised
    StepFailed, or saying what went wrong when fn failed otherwise, the child
    died, or it did not finish within timeout seconds (then it is killed)."""
    sys.stdout.flush()
    sys.stderr.flush()
    parent = os.getpid()
    r, w = os.pipe()
    with registering():
        pid = os.fork()
        if pid == 0:
            os.close(r)
            _child(fn, w, parent, sysctls)
        os.close(w)
        child = register(Child(pid), Child.stop)
    buf, deadline, done = b"", time.monotonic() + timeout, False
    try:
        while time.monotonic() < deadline:
            if select.select([r], [], [], min(max(deadline - time.monotonic(), 0), 1.0))[0]:
                data = os.read(r, 65536)
                if not data:
                    done = True
                    break
                buf += data
                if child.netns is None and b"\n" in buf:
                    child.netns = json.loads(buf.split(b"\n", 1)[0]).get("netns")
    finally:
        os.close(r)
        child.stop(EXIT_GRACE_S if done else 0)
    if not done:
        raise StepFailed("%s in its own network namespace did not finish within %d s" % (what, timeout))
    messages = [json.loads(l) for l in buf.decode().splitlines() if l.strip()]
    out = next((m for m in messages if "result" in m or "error" in m), None)
    if out is None:
        raise StepFailed("%s in its own network namespace ended without a result (exit status %s)"
                         % (what, child.status))
    if "error" in out:
        raise StepFailed(out["error"], out.get("rows"))
    return out["result"]
