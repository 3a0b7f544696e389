"""cpu_quota: a server's processes held to a share of one CPU, in a cgroup of
their own, so that a client with a whole CPU is not what limits its req/s
(the throughput study). The cgroup v2 cpu controller (cpu.max) where the
root's cgroup.controllers lists cpu, else cgroup v1's cpu hierarchy
(cpu.cfs_quota_us). Root only. A group is made for one server and removed
once its processes are gone (or moved back to the root group, whatever
happens)."""

import os
import time

from probes.harness.cpu import process_tree
from probes.harness.lifecycle import StepFailed

V2_ROOT = "/sys/fs/cgroup"
V1_ROOT = "/sys/fs/cgroup/cpu"
PERIOD_US = 100000  # the quota's period unless a caller names one: the kernel's default


def hierarchy():
    """("v2" or "v1", the root of the hierarchy that holds the cpu
    controller), or None when neither does."""
    try:
        with open(os.path.join(V2_ROOT, "cgroup.controllers")) as f:
            if "cpu" in f.read().split():
                return "v2", V2_ROOT
    except OSError:
        pass
    if os.path.exists(os.path.join(V1_ROOT, "cpu.cfs_quota_us")):
        return "v1", V1_ROOT
    return None


class CpuQuota:
    """with CpuQuota(share, name, period_us) as q: q.add(pid) puts pid's
    process tree in a group held to share of one CPU in every period of
    period_us (its forks follow it there)."""

    def __init__(self, share, name, period_us=PERIOD_US):
        found = hierarchy()
        if found is None:
            raise StepFailed("skipped: no cgroup cpu controller (neither cgroup v2's cpu.max nor v1's cpu "
                             "hierarchy at %s)" % V1_ROOT)
        self.kind, self.root = found
        self.share, self.period_us = share, period_us
        self.path = os.path.join(self.root, "acceptlab-%s-%d" % (name, os.getpid()))

    def _write(self, name, text, where=None):
        with open(os.path.join(where or self.path, name), "w") as f:
            f.write(text)

    def __enter__(self):
        if self.kind == "v2":
            with open(os.path.join(self.root, "cgroup.subtree_control")) as f:
                if "cpu" not in f.read().split():
                    self._write("cgroup.subtree_control", "+cpu", self.root)
        os.makedirs(self.path, exist_ok=True)
        quota = max(1000, int(self.share * self.period_us))  # the kernel's least quota: 1 ms
        if self.kind == "v2":
            self._write("cpu.max", "%d %d" % (quota, self.period_us))
        else:
            self._write("cpu.cfs_period_us", str(self.period_us))
            self._write("cpu.cfs_quota_us", str(quota))
        return self

    def add(self, pid):
        for p in process_tree(pid):
            try:
                self._write("cgroup.procs", str(p))
            except ProcessLookupError:
                pass  # gone meanwhile

    def __exit__(self, *exc):
        # What is still there (a process that outlived its server) goes
        # back to the root group; then the group is removed.
        deadline = time.monotonic() + 5
        while True:
            try:
                with open(os.path.join(self.path, "cgroup.procs")) as f:
                    left = [l.strip() for l in f if l.strip()]
            except FileNotFoundError:
                return False
            for p in left:
                try:
                    self._write("cgroup.procs", p, self.root)
                except OSError:
                    pass
            try:
                os.rmdir(self.path)
                return False
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
