"""diagnose: bin/acceptlab-diagnose run by a study (the diagnosis study,
the census), registered for the campaign's clean-up, its lines read as they
come and its output kept under raw/; and the probe a passive diagnosis
watches."""

import json
import os
import select
import signal
import subprocess
import time

from acceptlab.paths import ROOT
from probes.harness.lifecycle import StepFailed, forget, register, registering
from probes.harness.probe import PROBE

DIAGNOSE = os.path.join(ROOT, "bin", "acceptlab-diagnose")
DIAGNOSE_TIMEOUT_S = 60


def save(prefix, name, text):
    with open("%s.%s" % (prefix, name), "w") as f:
        f.write(text)


class Diagnose:
    """bin/acceptlab-diagnose ARGS --json in a session of its own, registered
    for the campaign's clean-up; its lines read as they come. Its diagnosis
    line is its last word: what follows is its BPF programs coming off,
    which reap() waits for (the study goes on meanwhile). Always reap() or
    kill() it."""

    def __init__(self, args, prefix, env=None):
        self.cmd = [DIAGNOSE, *map(str, args), "--json"]
        self.prefix = prefix
        save(prefix, "diagnose.cmd", " ".join(self.cmd) + ("  # with %s" % env if env else "") + "\n")
        err = open(prefix + ".diagnose.stderr", "w")
        with registering():
            self.proc = subprocess.Popen(self.cmd, stdout=subprocess.PIPE, stderr=err, start_new_session=True,
                                         env=dict(os.environ, **(env or {})), cwd="/")
            err.close()
            register(self, Diagnose.kill)
        self.out = b""
        self.eof = False

    def lines(self):
        return [json.loads(l) for l in self.out.decode(errors="replace").splitlines(keepends=True)
                if l.startswith("{") and l.endswith("\n")]

    def read_until(self, kind, timeout):
        """Reads until a line of this kind (returns it) or the end of its
        output (returns None); StepFailed after timeout s."""
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while True:
            found = [l for l in self.lines() if l.get("kind") == kind]
            if found:
                return found[-1]
            if self.eof:
                return None
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                raise StepFailed("acceptlab-diagnose gave no %s line within %d s" % (kind, timeout))
            if select.select([fd], [], [], min(left, 0.2))[0]:
                chunk = os.read(fd, 65536)
                self.out += chunk
                self.eof = not chunk

    def reap(self):
        """Waits for it to end (its output kept under raw/); returns its exit code."""
        try:
            rest, _ = self.proc.communicate(timeout=DIAGNOSE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.kill()
            raise StepFailed("acceptlab-diagnose did not end within %d s" % DIAGNOSE_TIMEOUT_S)
        self.out += rest or b""
        forget(self)
        save(self.prefix, "diagnose.jsonl", self.out.decode(errors="replace"))
        return self.proc.returncode

    def kill(self):
        forget(self)
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait()
        save(self.prefix, "diagnose.jsonl", self.out.decode(errors="replace"))


def run_probe(port, args, prefix):
    """A passive diagnosis's load: acceptlab-probe at 127.0.0.1:port with args
    (and --json); returns its summary line."""
    cmd = [PROBE, "--target", "127.0.0.1:%d" % port, *args, "--json"]
    with registering():
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        register(proc, kill_group)
    try:
        out, err = proc.communicate(timeout=DIAGNOSE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        raise StepFailed("the probe did not end within %d s" % DIAGNOSE_TIMEOUT_S)
    forget(proc)
    save(prefix, "probe.cmd", " ".join(cmd) + "\n")
    save(prefix, "probe.jsonl", out)
    save(prefix, "probe.stderr", err)
    summary = [json.loads(l) for l in out.splitlines() if '"summary"' in l]
    if proc.returncode not in (0, 1) or not summary:
        raise StepFailed("the probe exited %d: %s" % (proc.returncode, err.strip()[-200:]))
    return summary[-1]


def kill_group(proc):
    forget(proc)
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait()


