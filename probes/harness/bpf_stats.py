"""bpf_stats: what each BPF program a process holds did over a stretch of
time, by the kernel's own count: its runs and the time they took.

The kernel counts a program's runs and their time only while its run-time
statistics are on (BPF_ENABLE_STATS), and counting adds two clock reads to
every run of every program on the machine, so they are on only inside
`enabled()`, for a run measured for this and nothing else. The counts are
read from /proc/PID/fdinfo of the process that holds the programs (the
kernel writes run_cnt and run_time_ns there), their names from bpftool.
Needs root."""

import contextlib
import ctypes
import json
import os
import subprocess

SYS_BPF = 321            # x86_64's bpf(2)
BPF_ENABLE_STATS = 32    # enum bpf_cmd
BPF_STATS_RUN_TIME = 0   # enum bpf_stats_type


class StatsUnavailable(Exception):
    """The kernel refused to count (not root, or no BPF_ENABLE_STATS)."""


@contextlib.contextmanager
def enabled():
    """The kernel's run-time statistics on for the with block: a descriptor
    from BPF_ENABLE_STATS, closed after it (the statistics go off with its
    last holder, so a harness that dies leaves them off, and any earlier
    holder's stay on)."""
    libc = ctypes.CDLL(None, use_errno=True)
    attr = ctypes.c_uint32(BPF_STATS_RUN_TIME)
    fd = libc.syscall(SYS_BPF, BPF_ENABLE_STATS, ctypes.byref(attr), ctypes.sizeof(attr))
    if fd < 0:
        raise StatsUnavailable("BPF_ENABLE_STATS: " + os.strerror(ctypes.get_errno()))
    try:
        yield
    finally:
        os.close(fd)


def counts(pid):
    """{prog_id: (run_cnt, run_time_ns)} for every BPF program process pid
    holds a descriptor of (a program held twice counts once). A link's
    descriptor names its program too (prog_id) but carries no counts: only
    a program's own descriptor is read."""
    out = {}
    base = "/proc/%d/fdinfo" % pid
    for name in os.listdir(base):
        try:
            with open(os.path.join(base, name)) as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:
            continue  # closed meanwhile
        if "prog_id" not in fields or "run_cnt" not in fields:
            continue
        out[int(fields["prog_id"])] = (int(fields["run_cnt"]), int(fields.get("run_time_ns", 0)))
    return out


def names(ids):
    """{prog_id: (name, type)} from bpftool, for the ids still loaded."""
    out = {}
    for i in ids:
        got = subprocess.run(["bpftool", "-j", "prog", "show", "id", str(i)], capture_output=True, text=True)
        if got.returncode == 0 and got.stdout.strip():
            info = json.loads(got.stdout)
            out[i] = (info.get("name") or "id %d" % i, info.get("type") or "unknown")
    return out


def programs(before, after, named, requests):
    """Each program's share of a stretch, from counts() at its start and end
    and names(): [{"name", "type", "id", "events", "run_ns",
    "events_per_request", "ns_per_event", "ns_per_request"}], by run_ns,
    largest first. A program loaded after the start counts from zero."""
    rows = []
    for i, (cnt, ns) in after.items():
        cnt0, ns0 = before.get(i, (0, 0))
        events, run_ns = cnt - cnt0, ns - ns0
        name, kind = named.get(i, ("id %d" % i, "unknown"))
        rows.append({"name": name, "type": kind, "id": i, "events": events, "run_ns": run_ns,
                     "events_per_request": round(events / requests, 3) if requests else None,
                     "ns_per_event": round(run_ns / events, 1) if events else None,
                     "ns_per_request": round(run_ns / requests, 1) if requests else None})
    return sorted(rows, key=lambda r: (-r["run_ns"], r["name"]))


def others_counting():
    """Whether the statistics are on whatever enabled() does: the sysctl
    kernel.bpf_stats_enabled set, or another process holding a
    BPF_ENABLE_STATS descriptor (each holder keeps them on)."""
    with open("/proc/sys/kernel/bpf_stats_enabled") as f:
        if f.read().strip() != "0":
            return True
    me = os.getpid()
    for pid in (p for p in os.listdir("/proc") if p.isdigit() and int(p) != me):
        try:
            fds = os.listdir("/proc/%s/fd" % pid)
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink("/proc/%s/fd/%s" % (pid, fd)) == "anon_inode:bpf-stats":
                    return True
            except OSError:
                continue
    return False
