"""cpu: a server's process tree from /proc, pinning it to CPUs, metering its
CPU time and context switches (the scheduler's own counts, per thread), and
the CPU hogs some steps run beside it."""

import os
import re
import shutil
import subprocess
import time

from probes.harness.lifecycle import StepFailed, kill_group, register, registering


def _task_files(pid, name):
    """The text of /proc/<pid>/task/<tid>/<name> for each thread of pid that
    still has it (a thread or process gone meanwhile is left out)."""
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return
    for t in tids:
        try:
            with open("/proc/%d/task/%s/%s" % (pid, t, name)) as f:
                yield f.read()
        except OSError:
            pass


def process_tree(pid):
    """pid and every process descended from it (each task's children, from
    /proc), parents first."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop(0)
        out.append(p)
        todo += [int(c) for text in _task_files(p, "children") for c in text.split()]
    return out


def pin_tree(pid, cpus):
    """Every thread of pid's process tree (a server's supervisor and workers,
    or a peer's master and workers) onto cpus; a thread or process created
    later inherits its creator's CPUs. Raises StepFailed when one cannot be
    moved (a task that ended meanwhile is left out)."""
    for p in process_tree(pid):
        try:
            tids = os.listdir("/proc/%d/task" % p)
        except OSError:
            continue
        for t in tids:
            try:
                os.sched_setaffinity(int(t), cpus)
            except ProcessLookupError:
                pass
            except OSError as e:
                raise StepFailed("cannot pin task %s of %d to CPUs %s: %s" % (t, pid, sorted(cpus), e))


SWITCHES_RE = re.compile(r"^(voluntary_ctxt_switches|nonvoluntary_ctxt_switches):\s*(\d+)$", re.M)


def task_counts(pids):
    """What the scheduler has counted so far for every thread of pids, read
    task by task in one pass: {"cpu_ns": on-CPU time, user and system (each
    task's schedstat: the scheduler's own count, not 10 ms ticks),
    "voluntary" and "involuntary": its context switches (status's
    voluntary_ctxt_switches, nonvoluntary_ctxt_switches: it blocked, or was
    preempted)}. A task gone between its two files is left out of both."""
    totals = {"cpu_ns": 0, "voluntary": 0, "involuntary": 0}
    for p in pids:
        try:
            tids = os.listdir("/proc/%d/task" % p)
        except OSError:
            continue
        for t in tids:
            base = "/proc/%d/task/%s/" % (p, t)
            try:
                with open(base + "schedstat") as f:
                    sched = f.read().split()
                with open(base + "status") as f:
                    status = f.read()
            except OSError:
                continue
            if not sched:
                continue
            found = dict(SWITCHES_RE.findall(status))
            totals["cpu_ns"] += int(sched[0])
            totals["voluntary"] += int(found.get("voluntary_ctxt_switches", 0))
            totals["involuntary"] += int(found.get("nonvoluntary_ctxt_switches", 0))
    return totals


class CpuMeter:
    """The CPU time and the context switches of a server inside the with
    block: every thread of its process tree (the supervisor and every
    worker, or a peer's master and workers), sampled before and after
    (task_counts). A process that ends inside the block takes its counts
    with it: the studies that use this stop nothing inside."""

    def __init__(self, root_pid):
        self.root = root_pid
        self.ns = None
        self.switches = None  # {"voluntary": n, "involuntary": n} over the block

    def __enter__(self):
        self.pids = process_tree(self.root)
        self.start = task_counts(self.pids)
        return self

    def __exit__(self, *exc):
        end = task_counts(self.pids)
        self.ns = end["cpu_ns"] - self.start["cpu_ns"]
        self.switches = {k: end[k] - self.start[k] for k in ("voluntary", "involuntary")}
        return False


def cpu_fields(ns, requests, accepted=None, switches=None):
    """The row fields for a server's CPU time over a wrk run: the total in µs,
    per request wrk completed, and per connection the server accepted (when
    known); with switches (CpuMeter's), its voluntary and involuntary
    context switches, in all and per request wrk completed."""
    us = ns / 1000.0
    out = {"server_cpu_us": round(us, 1),
           "cpu_us_per_request": round(us / requests, 4) if requests else None,
           "accepted": accepted,
           "cpu_us_per_connection": round(us / accepted, 3) if accepted else None}
    if switches is not None:
        for kind in ("voluntary", "involuntary"):
            out["ctx_" + kind] = switches[kind]
            out["ctx_%s_per_request" % kind] = round(switches[kind] / requests, 5) if requests else None
    return out


# ---- CPU hogs ----------------------------------------------------------------


def start_hog(cmd):
    """Starts a CPU hog in a session of its own; kill_group (or stop_all) kills it."""
    with registering():
        return register(subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL), kill_group)


class StressHogs:
    """with StressHogs(n): stress-ng --cpu n for the block's length."""

    def __init__(self, n):
        self.n = n

    def __enter__(self):
        if not shutil.which("stress-ng"):
            raise StepFailed("stress-ng is missing (make deps installs it)")
        self.proc = start_hog(["stress-ng", "--cpu", str(self.n), "--quiet"])
        time.sleep(0.3)  # the hogs are on the CPUs before the first round
        if self.proc.poll() is not None:
            kill_group(self.proc)
            raise StepFailed("stress-ng --cpu %d exited %s at once" % (self.n, self.proc.returncode))
        return self

    def __exit__(self, *exc):
        kill_group(self.proc)
        return False
