"""tracer: bin/acceptlab-trace attached to a server's process group for the
length of a step (Tracer), stopped and its JSON lines returned; and
bin/acceptlab-diagnose's passive watch of a server's port for the length of
a step (PassiveDiagnosis), stopped and its diagnosis returned."""

import json
import os
import signal
import subprocess
import time

from acceptlab.paths import ROOT
from probes.harness.lifecycle import StepFailed, forget, register, registering, tail
from probes.harness.servers import read_output, server_events

TRACER = os.path.join(ROOT, "bin", "acceptlab-trace")
TRACER_ATTACH_TIMEOUT_S = 20
DIAGNOSE = os.path.join(ROOT, "bin", "acceptlab-diagnose")
DIAGNOSE_STOP_READ_S = 30  # a stopped diagnosis's last lines (its diagnosis) are read this long at most
SWITCH_TIMEOUT_S = 10  # the longest a watcher may take to say it paused or resumed
# The diagnosis's measurement switch: its hooks attached with programs that
# return at once (docs/diagnose.md, "Test switches").
HOOKS_ONLY_ENV = "ACCEPTLAB_TEST_DIAG_HOOKS_ONLY"


def end_and_keep(proc, raw, sig, read_s):
    """Ends a tool started in a session of its own (Tracer, PassiveDiagnosis):
    sig to its process group, what it prints read until its end (at most
    read_s seconds), a wait (SIGKILL to the group after 5 s more), and all
    it printed written to raw."""
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + read_s
    while time.monotonic() < deadline and read_output(proc, deadline - time.monotonic()):
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    proc.stdout.close()
    with open(raw, "wb") as f:
        f.write(proc.captured)


def switch(proc, sig, key, word, stderr):
    """Pauses (SIGUSR1) or resumes (SIGUSR2) a watcher started with --json in
    a session of its own, and returns once it has said so: its line with
    key set to word ("paused" or "resumed") one more time than before.
    Raises StepFailed when it has not within SWITCH_TIMEOUT_S."""
    mark = ('"%s":"%s"' % (key, word)).encode()
    want = proc.captured.count(mark) + 1
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        raise StepFailed("the watcher is gone: " + tail(stderr))
    deadline = time.monotonic() + SWITCH_TIMEOUT_S
    while proc.captured.count(mark) < want:
        left = deadline - time.monotonic()
        if left <= 0 or not read_output(proc, left):
            raise StepFailed("the watcher did not say %s within %d s: %s" % (word, SWITCH_TIMEOUT_S, tail(stderr)))


class Tracer:
    """bin/acceptlab-trace --pgid PGID --json, started before the probe and
    stopped (SIGINT) after it; its output is kept at raw_prefix.trace.jsonl."""

    def __init__(self, pgid, raw_prefix, timeline=False):
        self.raw = raw_prefix + ".trace.jsonl"
        self.stderr = raw_prefix + ".trace.stderr"
        err = open(self.stderr, "w")
        with registering():
            self.proc = subprocess.Popen([TRACER, "--pgid", str(pgid), "--json"]
                                         + (["--timeline"] if timeline else []),
                                         stdout=subprocess.PIPE, stderr=err, start_new_session=True)
            err.close()
            self.proc.captured = b""
            register(self, Tracer.stop)
        deadline = time.monotonic() + TRACER_ATTACH_TIMEOUT_S
        while b"\n" not in self.proc.captured:
            left = deadline - time.monotonic()
            if left <= 0 or not read_output(self.proc, left):
                self.stop()
                raise StepFailed("tracer did not attach: " + tail(self.stderr))

    def pause(self):
        """Its programs detached (SIGUSR1), once it says so."""
        switch(self.proc, signal.SIGUSR1, "type", "paused", self.stderr)

    def resume(self):
        """Its programs attached again (SIGUSR2), once it says so."""
        switch(self.proc, signal.SIGUSR2, "type", "resumed", self.stderr)

    def stop(self):
        """Returns the tracer's JSON objects (after its exit)."""
        forget(self)
        end_and_keep(self.proc, self.raw, signal.SIGINT, 15)
        if self.proc.returncode != 0:
            raise StepFailed("tracer exited %s" % self.proc.returncode)
        return server_events(self.proc)


class PassiveDiagnosis:
    """bin/acceptlab-diagnose --port PORT --duration DURATION --json (passive:
    it sends nothing), in a session of its own, started before the load and
    stopped (SIGINT to its process group) after it, so the watch is ended by
    the step, not by DURATION (give one longer than the step). It must run
    in the server's network namespace (its trace compares the namespace):
    start it where the server was started. Its output is kept at
    raw_prefix.diagnose.jsonl and .diagnose.stderr; attaching untraced (not
    root, BPF refused) fails the step, since nothing would be measured.
    hooks_only: its hooks alone (HOOKS_ONLY_ENV), which its attach must
    confirm; the diagnosis then counts nothing."""

    def __init__(self, port, raw_prefix, duration_s, hooks_only=False):
        self.raw = raw_prefix + ".diagnose.jsonl"
        self.stderr = raw_prefix + ".diagnose.stderr"
        if not os.access(DIAGNOSE, os.X_OK):
            raise StepFailed("%s is missing: run make first" % DIAGNOSE)
        err = open(self.stderr, "w")
        with registering():
            env = dict(os.environ)
            env.pop(HOOKS_ONLY_ENV, None)
            if hooks_only:
                env[HOOKS_ONLY_ENV] = "1"
            self.proc = subprocess.Popen([DIAGNOSE, "--port", str(port), "--duration", "%g" % duration_s, "--json"],
                                         stdout=subprocess.PIPE, stderr=err, start_new_session=True, env=env)
            err.close()
            self.proc.captured = b""
            register(self, PassiveDiagnosis.kill)
        deadline = time.monotonic() + TRACER_ATTACH_TIMEOUT_S
        while not [e for e in self._lines() if e.get("kind") == "attached"]:
            left = deadline - time.monotonic()
            if left <= 0 or not read_output(self.proc, left):
                self.kill()
                raise StepFailed("the diagnosis did not attach: " + tail(self.stderr))
        attached = [e for e in self._lines() if e.get("kind") == "attached"][0]
        if not attached.get("traced"):
            self.kill()
            raise StepFailed("the diagnosis attached without its trace: " + tail(self.stderr))
        if bool(attached.get("hooks_only")) != hooks_only:
            self.kill()
            raise StepFailed("the diagnosis attached %s its hooks alone, asked %s" % (
                "with" if attached.get("hooks_only") else "without", "for them" if hooks_only else "not to"))

    def _lines(self):
        out = []
        for line in self.proc.captured.decode(errors="replace").splitlines():
            if line.startswith("{"):
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
        return out

    def pause(self):
        """The watch paused (SIGUSR1: its programs detached, nothing read), once it says so."""
        switch(self.proc, signal.SIGUSR1, "kind", "paused", self.stderr)

    def resume(self):
        """The watch resumed (SIGUSR2), once it says so."""
        switch(self.proc, signal.SIGUSR2, "kind", "resumed", self.stderr)

    def kill(self):
        """SIGKILL to its group (the clean-up registry's way), output kept."""
        forget(self)
        end_and_keep(self.proc, self.raw, signal.SIGKILL, 0)

    def stop(self):
        """SIGINT to its process group: it ends the watch, reads its maps and
        prints the diagnosis (partial: stopped by a signal, exit 1, which is
        how this watch is meant to end). Returns the diagnosis's JSON object."""
        forget(self)
        end_and_keep(self.proc, self.raw, signal.SIGINT, DIAGNOSE_STOP_READ_S)
        found = [e for e in self._lines() if e.get("kind") == "diagnosis"]
        if self.proc.returncode not in (0, 1) or not found:
            raise StepFailed("the diagnosis exited %s%s: %s" % (self.proc.returncode, "" if found else
                                                                 " without a diagnosis", tail(self.stderr)))
        return found[0]
