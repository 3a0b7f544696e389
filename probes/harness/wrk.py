"""wrk: running wrk against a server (run_wrk, or start_wrk and finish_wrk
around something else), its command and verbatim output saved under raw/.
Reading its output is acceptlab/wrk_output.py's."""

import os
import shlex
import shutil
import subprocess
import time

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
    cpus, wrk and its threads run on those CPUs only. Its output goes
    straight to prefix.wrk.txt and .wrk.stderr."""
    cmd = [need_wrk(), "-t%d" % threads, "-c%d" % connections, "-d%ds" % seconds, "--latency",
           "--timeout", "%ds" % WRK_TIMEOUT_S]
    for h in headers:
        cmd += ["-H", h]
    cmd.append("http://127.0.0.1:%d%s" % (port, path))
    with open(prefix + ".wrk.cmd", "w") as f:
        f.write(shlex.join(cmd) + "\n")
    with registering(), open(prefix + ".wrk.txt", "w") as out, open(prefix + ".wrk.stderr", "w") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, text=True,
                                preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None)
        proc.wrk = (prefix, seconds, time.monotonic(), len(cpus) if cpus else os.cpu_count())
        return register(proc, kill_wrk)


def kill_wrk(proc):
    """Stops a wrk from start_wrk that is still running (its output is not read)."""
    forget(proc)
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def reap(proc, timeout):
    """Waits at most timeout seconds for proc to exit and reaps it, with its
    resource usage (os.wait4): (its CPU seconds, user and system, of all
    its threads; the wall seconds since it started). None on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return usage.ru_utime + usage.ru_stime, time.monotonic() - proc.wrk[2]
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.01)


def finish_wrk(proc):
    """Waits for a wrk from start_wrk, parses its output (kept under raw/),
    and adds what the client itself spent: "client_cpu_s" (wrk's CPU time,
    every thread's user and system, from its resource usage) and
    "client_cpu_share" (that over its wall time times the CPUs it could use:
    near 1, wrk was busy all along, and the run's req/s is the client's
    limit, not the server's)."""
    prefix, seconds, _, ncpus = proc.wrk
    spent = reap(proc, seconds + WRK_SLACK_S)
    if spent is None:
        kill_wrk(proc)
        raise StepFailed("wrk did not finish within %d s" % (seconds + WRK_SLACK_S))
    forget(proc)
    with open(prefix + ".wrk.txt") as f:
        stdout = f.read()
    with open(prefix + ".wrk.stderr") as f:
        stderr = f.read()
    if proc.returncode != 0:
        why = " ".join((stderr.strip() or stdout.strip() or "no output").split())
        raise StepFailed("wrk exited %d: %s" % (proc.returncode, why[-200:]))
    try:
        out = wrk_output.parse(stdout)
    except ValueError as e:
        raise StepFailed(str(e))
    cpu_s, wall_s = spent
    out["client_cpu_s"] = round(cpu_s, 4)
    out["client_cpu_share"] = round(cpu_s / (wall_s * ncpus), 4) if wall_s > 0 and ncpus else None
    return out
