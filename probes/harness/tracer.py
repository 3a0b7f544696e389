"""tracer: bin/acceptlab-trace attached to a server's process group for the
length of a step (Tracer), stopped and its JSON lines returned."""

import os
import signal
import subprocess
import time

from acceptlab.paths import ROOT
from probes.harness.lifecycle import StepFailed, forget, register, registering, tail
from probes.harness.servers import read_output, server_events

TRACER = os.path.join(ROOT, "bin", "acceptlab-trace")
TRACER_ATTACH_TIMEOUT_S = 20


class Tracer:
    """bin/acceptlab-trace --pgid PGID --json, started before the probe and
    stopped (SIGINT) after it; its output is kept at raw_prefix.trace.jsonl."""

    def __init__(self, pgid, raw_prefix, timeline=False):
        self.raw = raw_prefix + ".trace.jsonl"
        err = open(raw_prefix + ".trace.stderr", "w")
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
                raise StepFailed("tracer did not attach: " + tail(raw_prefix + ".trace.stderr"))

    def stop(self):
        """Returns the tracer's JSON objects (after its exit)."""
        forget(self)
        try:
            os.killpg(self.proc.pid, signal.SIGINT)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and read_output(self.proc, deadline - time.monotonic()):
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.proc.stdout.close()
        with open(self.raw, "wb") as f:
            f.write(self.proc.captured)
        if self.proc.returncode != 0:
            raise StepFailed("tracer exited %s" % self.proc.returncode)
        return server_events(self.proc)
