"""wrk: running wrk against a server (run_wrk, or start_wrk and finish_wrk
around something else), its command and verbatim output saved under raw/.
Reading its output is acceptlab/wrk_output.py's."""

import os
import shlex
import shutil
import subprocess

from acceptlab import wrk_output
from probes.harness.lifecycle import StepFailed, forget, register, registering

# ACCEPTLAB_TEST_WRK lets a test name a wrk that is not there.
WRK = os.environ.get("ACCEPTLAB_TEST_WRK") or "wrk"
WRK_THREADS = 2
WRK_TIMEOUT_S = 2            # wrk's --timeout: a request slower than this counts as a timeout
WRK_SLACK_S = 30             # wrk gets its duration plus this before it is killed


def need_wrk():
    exe = shutil.which(WRK)
    if not exe:
        raise StepFailed("skipped: wrk not installed")
    return exe


def run_wrk(prefix, port, path, connections, seconds, headers=(), cpus=None):
    """Runs wrk against 127.0.0.1:port, saves its command and verbatim output
    under raw/ (prefix.wrk.cmd, .wrk.txt, .wrk.stderr); returns wrk_output.parse's dict.
    With cpus, wrk runs on those CPUs only."""
    return finish_wrk(start_wrk(prefix, port, path, connections, seconds, headers, cpus=cpus))


def start_wrk(prefix, port, path, connections, seconds, headers=(), threads=WRK_THREADS, cpus=None):
    """Starts wrk (see run_wrk) and returns it; finish_wrk waits for it. With
    cpus, wrk and its threads run on those CPUs only."""
    cmd = [need_wrk(), "-t%d" % threads, "-c%d" % connections, "-d%ds" % seconds, "--latency",
           "--timeout", "%ds" % WRK_TIMEOUT_S]
    for h in headers:
        cmd += ["-H", h]
    cmd.append("http://127.0.0.1:%d%s" % (port, path))
    with open(prefix + ".wrk.cmd", "w") as f:
        f.write(shlex.join(cmd) + "\n")
    with registering():
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None)
        proc.wrk = (prefix, seconds)
        return register(proc, kill_wrk)


def kill_wrk(proc):
    """Stops a wrk from start_wrk that is still running (its output is not kept)."""
    forget(proc)
    if proc.poll() is None:
        proc.kill()
        proc.communicate()


def finish_wrk(proc):
    """Waits for a wrk from start_wrk, saves its output, parses it."""
    prefix, seconds = proc.wrk
    try:
        out, err = proc.communicate(timeout=seconds + WRK_SLACK_S)
    except subprocess.TimeoutExpired:
        kill_wrk(proc)
        raise StepFailed("wrk did not finish within %d s" % (seconds + WRK_SLACK_S))
    forget(proc)
    res = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    with open(prefix + ".wrk.txt", "w") as f:
        f.write(res.stdout)
    with open(prefix + ".wrk.stderr", "w") as f:
        f.write(res.stderr)
    if res.returncode != 0:
        why = " ".join((res.stderr.strip() or res.stdout.strip() or "no output").split())
        raise StepFailed("wrk exited %d: %s" % (res.returncode, why[-200:]))
    try:
        return wrk_output.parse(res.stdout)
    except ValueError as e:
        raise StepFailed(str(e))
