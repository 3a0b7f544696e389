#!/usr/bin/python3
"""campaign.py: the campaign driver behind `make measure PLATFORM=linux`.

Runs the studies and writes results/linux/<UTC stamp>/: meta.json, one JSON
Lines file per study, and every tool's verbatim output under raw/.

  balancing    every arm x shape, one fresh server per cell (`--port 0`, its
               ready line saved), the probe asking /pid on every connection
               for R rounds -> balancing.jsonl (one line per round)
  perturbation the balancers and their knob-off arms at 2, 4 and 8 workers,
               one server each, rounds with no pause under one perturbation
               after another (fresh, back-to-back, CPU hogs, a SYN flood, the
               tracer, a stopped worker), the load counters beside the truth
               from sock_diag -> perturbation.jsonl (one line per round)
  respawn      a worker SIGSTOPped, a burst queued, the worker SIGKILLed: how
               many connections are reset, and how long until the replacement
               serves -> respawn.jsonl (one line per trial)
  mutex_delay  nginx's accept mutex at --accept-mutex-delay 500, 50 and 0 ms:
               the burst's split and first-byte latency -> mutex_delay.jsonl
  slowview     a client keeps one worker busy in /sleep?ms=50 while bursts
               arrive: first-byte latency per arm -> slowview.jsonl
  cost         wrk -t2 -c64 -d6s on GET / (keep-alive and Connection: close),
               every arm at 1 and 2 workers, arms alternated within a round in
               an order that rotates per round, a gap after every close run;
               req/s, p50/p99, TIME_WAIT left, ratio to bare -> cost.jsonl
               (the cost anchor: the arm "nginx" runs the peers' nginx-default
               configuration, access log off, in the same rounds)
  payoff       wrk keep-alive on GET /work?us=500 (CPU-bound) at -c8 and -c32:
               bare at 1 worker (the baseline) and every arm at 2 workers
               -> payoff.jsonl
  peers        nginx, HAProxy and a Node.js cluster, measured exactly as
               `probes/peers/peers.py measure` does (its measure_one(), one
               step per peer configuration) -> peers.jsonl

A failed step is recorded in its study's file with the reason and the
campaign goes on. Every server runs in its own process group and is stopped
(SIGTERM, then SIGKILL of the group) when its step ends, also on Ctrl-C.
"""

import argparse
import datetime
import json
import os
import platform
import re
import select
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import importlib.util
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# ACCEPTLAB_SERVER lets a test substitute a server that fails on purpose.
SERVER = os.environ.get("ACCEPTLAB_SERVER") or os.path.join(ROOT, "bin", "acceptlab-server")
PROBE = os.path.join(ROOT, "bin", "acceptlab-probe")
TRACER = os.path.join(ROOT, "bin", "acceptlab-trace")
PYTHON = "/usr/bin/python3"
# ACCEPTLAB_WRK lets a test name a wrk that is not there.
WRK = os.environ.get("ACCEPTLAB_WRK") or "wrk"


def load_peers():
    """probes/peers/peers.py (the peers' configurations, starting and
    measuring them), imported rather than copied."""
    spec = importlib.util.spec_from_file_location("acceptlab_peers", os.path.join(ROOT, "probes", "peers", "peers.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


peers = load_peers()
sys.path.insert(0, os.path.join(ROOT, "probes"))
import synflood  # noqa: E402  (raw SYNs, the perturbation study's flood)

# An arm is a name in the tables and the server options that make it. An arm
# whose options hold "--threads" runs in threads mode: start_server puts the
# worker count after it (and "--workers N" for the others).
ARMS = {
    "bare": ["--variant", "bare"],
    "exclusive": ["--variant", "exclusive"],
    "exclusive-reorder": ["--variant", "exclusive-reorder"],
    "lt": ["--variant", "lt"],
    "lt-yield": ["--variant", "lt-yield"],
    "reuseport": ["--variant", "reuseport"],
    "reuseport-bpf": ["--variant", "reuseport-bpf"],
    "mutex": ["--variant", "mutex"],
    "mutex-strict": ["--variant", "mutex", "--accept-mutex-strict"],
    "fdpass": ["--variant", "fdpass"],
    "fdpass-off": ["--variant", "fdpass"],  # the knob-off arm: same binary, ARM_ENV below
}
# Threads mode: every process arm again as "<arm>-threads", the shared-epoll
# arm of the race, and handoff (threads only) with each policy; "handoff" is
# the server's default policy, "handoff-off" its knob-off arm.
# Each threads arm follows its process arm, so the tables show them side by side.
ARMS = {name: opts for arm, process_opts in ARMS.items()
        for name, opts in ((arm, process_opts), (arm + "-threads", process_opts + ["--threads"]))}
ARMS = {name: opts for arm, opts0 in ARMS.items() for name, opts in
        [(arm, opts0)] + ([("bare-shared-epoll", ["--variant", "bare", "--threads", "--shared-epoll"])]
                          if arm == "bare-threads" else [])}
ARMS.update({
    "handoff": ["--variant", "handoff", "--threads"],
    "handoff-written": ["--variant", "handoff", "--threads", "--handoff-policy", "written"],
    "handoff-off": ["--variant", "handoff", "--threads", "--handoff-policy", "off"],
})
# The balancers with their load counted in user space (servers/load.h: what
# runs without BPF), for the cost study alone: beside the kernel-counted arm
# and the knob-off arm in the same rounds, they show what kernel accounting
# costs. Not in the default --variants.
USER_ACCOUNTING_ARMS = {"fdpass-user": ["--variant", "fdpass"],
                        "handoff-user": ["--variant", "handoff", "--threads"]}
ARMS.update(USER_ACCOUNTING_ARMS)
# Environment an arm's server runs with (on top of the campaign's own).
ARM_ENV = {"fdpass-off": {"ACCEPTLAB_ACCEPT_SHARE": "0"}, "fdpass-off-threads": {"ACCEPTLAB_ACCEPT_SHARE": "0"},
           "fdpass-user": {"ACCEPTLAB_ACCOUNTING": "user"}, "handoff-user": {"ACCEPTLAB_ACCOUNTING": "user"}}
# An arm and its knob-off arm (same binary, mechanism off): cost compares them.
KNOB_OFF_OF = {"fdpass": "fdpass-off", "fdpass-threads": "fdpass-off-threads", "handoff": "handoff-off",
               "fdpass-user": "fdpass-off", "handoff-user": "handoff-off"}
# An arm and the same variant in the other mode: cost compares threads with
# processes. handoff has no process mode; its knob-off arm is reuseport's.
PROCESS_ARM_OF = {arm: arm[:-len("-threads")] for arm in ARMS if arm.endswith("-threads")}
PROCESS_ARM_OF["handoff-off"] = "reuseport"
NEEDS_ROOT = {"reuseport-bpf", "reuseport-bpf-threads"}  # loads a BPF program (CAP_BPF)
SHAPES = [
    {"name": "burst", "connections": 32},
    {"name": "ramp", "connections": 32, "gap_ms": 10},
    {"name": "keepalive", "connections": 32, "requests": 4},
]
STUDIES = ["balancing", "perturbation", "timeline", "placement", "models", "respawn", "mutex_delay", "slowview", "faults",
           "cost", "payoff", "trace_overhead", "peers", "reload"]
# respawn: (arm, migrate). The shared listener is the contrast: nothing queued
# at a worker of its own, so nothing to reset.
RESPAWN_ARMS = [("bare", False), ("reuseport", False), ("reuseport", True),
                ("reuseport-bpf", False), ("reuseport-bpf", True)]
RESPAWN_CONNECTIONS = 32
RESPAWN_KILL_AFTER_S = 0.5  # the burst is connected and asking by then
# reload: (arm, --reuseport-migrate, --spawn-workers). Every worker is
# replaced (SIGHUP, twice) under a continuous keep-alive load and a
# Connection: close load; wrk counts every failed request. The shared
# listener never closes, and fdpass's leaver forwards what reaches it: both
# must lose nothing. reuseport's old listener closes with its worker, and
# what is queued there is reset unless tcp_migrate_req moves it.
RELOAD_ARMS = [("bare", False, False), ("exclusive", False, False), ("exclusive-reorder", False, False),
               ("lt", False, False), ("lt-yield", False, False), ("mutex", False, False),
               ("mutex-strict", False, False), ("fdpass", False, False), ("fdpass", False, True),
               ("reuseport", False, False), ("reuseport", True, False),
               ("reuseport-bpf", False, False), ("reuseport-bpf", True, False)]
QUICK_RELOAD_ARMS = [("fdpass", False, True)]  # the most machinery: slots, forwarding, exec
RELOAD_SECONDS = 3                 # wrk -d of each load
RELOAD_AT_S = [0.5, 1.1, 1.7, 2.3]  # a SIGHUP this long into the load (one reload each)
RELOAD_KEEPALIVE_CONNECTIONS = 16
RELOAD_CLOSE_CONNECTIONS = 32
RELOAD_WAIT_S = 10                 # a reload must finish within this
RELOAD_PATH = "/pid"
MUTEX_DELAYS_MS = [500, 50, 0]
SLOWVIEW_ARMS = ["mutex", "mutex-strict", "fdpass"]
SLOWVIEW_SLEEP_MS = 50
SLOWVIEW_CONNECTIONS = 16
# cost and payoff: wrk against one fresh server per run.
WRK_THREADS = 2
WRK_TIMEOUT_S = 2            # wrk's --timeout: a request slower than this counts as a timeout
WRK_SLACK_S = 30             # wrk gets its duration plus this before it is killed
BENCH_SECONDS = 2            # wrk -d per run in the campaign (make bench: 6, --bench-seconds);
                             # 2 s keeps the whole campaign within 10 minutes
BENCH_QUICK_SECONDS = 2
# The wrk studies run seconds per cell: the campaign's default keeps to the
# arms the design notes compare so it fits in minutes; make bench runs every
# arm. cost: the race and accept sharing (with its knob-off arm) in process
# mode, the race and accept sharing in threads mode, and handoff with its
# knob-off arm; payoff: the race and the balancers.
COST_ARMS = ["bare", "fdpass-off", "fdpass", "fdpass-user", "bare-threads", "fdpass-threads", "handoff-off", "handoff",
             "handoff-user", "nginx"]
# The cost anchor: an arm that is a server nobody here wrote, started from
# the peers' configuration (probes/peers/peers.py) with its access log off,
# since our server keeps no log: arm name -> peer configuration. It runs in
# the same rounds as our arms, alternated with them; `--bench-arms all`
# means our arms only (name it to add it).
ANCHOR_ARMS = {"nginx": "nginx-default"}
PAYOFF_ARMS = ["bare", "fdpass", "reuseport", "reuseport-bpf", "handoff"]
BENCH_ROUNDS = 2             # rounds of the wrk studies in the campaign (make bench: 3)
# QUICK=1 (--quick, a smoke run within 2 minutes): one round of everything,
# over these arms; the wrk studies keep to 2 workers and these arms.
QUICK_ARMS = ["bare", "bare-threads", "exclusive", "reuseport", "reuseport-bpf", "mutex-strict", "fdpass",
              "fdpass-off", "handoff"]
QUICK_COST_ARMS = ["bare", "fdpass-off", "fdpass", "nginx"]
# --quick's faults: accept sharing's cases but the 10,000-connection churn
# (fault 7), and running out of descriptors for bare only.
QUICK_FAULTS = "fault and not fault7 and (test_fdpass or bare])"
# The peers study: every configuration peers.py knows (unavailable ones are
# a row saying why); --quick: nginx's default configuration only.
QUICK_PEERS = ["nginx-default"]
QUICK_PAYOFF_ARMS = ["bare", "fdpass"]
QUICK_PLACEMENT_ARMS = ["bare", "fdpass"]
COST_PATH = "/"              # the hello endpoint: the accept path is all there is to do
COST_CONNECTIONS = 64
COST_WORKERS = [1, 2]
# The arms that also run at 1 worker: one worker pays nothing for the
# mechanism, which these show; the rest compare at 2.
COST_ONE_WORKER_ARMS = {"bare", "fdpass"}
COST_MODES = ["keepalive", "close"]
CLOSE_GAP_S = 1.5            # pause after every Connection: close run
PAYOFF_PATH = "/work?us=500"  # CPU-bound: each request spins 500 us in the worker
PAYOFF_CONNECTIONS = [8, 32]
PAYOFF_BASELINE = ("bare", 1)  # what one worker gives; every arm then runs at 2
PAYOFF_WORKERS = 2
SYSCTLS = ["net.ipv4.ip_local_port_range", "net.ipv4.tcp_tw_reuse", "net.ipv4.tcp_max_tw_buckets",
           "net.ipv4.tcp_fin_timeout"]

READY_TIMEOUT_S = 10
STOP_TIMEOUT_S = 15
PROBE_TIMEOUT_S = 120

_live = []  # servers started and not yet stopped: stopped on any exit


class StepFailed(Exception):
    """A step could not be measured; the reason goes into the results (rows:
    what the step did record before it failed, written instead of a bare
    error row)."""

    def __init__(self, message, rows=None):
        super().__init__(message)
        self.rows = rows


def die(msg, code=2):
    print("campaign: " + msg, file=sys.stderr)
    sys.exit(code)


def is_root():
    return os.geteuid() == 0


def run_text(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def meta_for(stamp, args):
    commit = run_text(["git", "-C", ROOT, "rev-parse", "HEAD"]) or "unknown"
    dirty = bool(run_text(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"]))
    out = {
        "stamp": stamp,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "git_commit": commit,
        "git_dirty": dirty,
        "platform": "linux",
        "kernel": platform.release(),
        "cpu_model": cpu_model(),
        "cpus": os.cpu_count(),
        "online_cpus": sorted(os.sched_getaffinity(0)),
        "root": is_root(),
        "machine": machine_facts(),
        "parameters": {
            "workers": args.workers,
            "rounds": args.rounds,
            "quick": args.quick,
            "studies": args.studies,
            "shapes": SHAPES,
            "variants": args.arms,
            "arms": {a: ARMS[a] for a in args.arms},
            "trace": {"on": getattr(args, "trace", False),
                      "how": "bin/acceptlab-trace --pgid <server pid> --json, attached after the server's "
                             "ready line and before the probe, stopped after it: one row per balancing step",
                      "acceptor_is_not_owner": sorted(ACCEPTOR_IS_NOT_OWNER)},
            "respawn": {"arms": [{"arm": a, "migrate": m} for a, m in RESPAWN_ARMS],
                        "connections": RESPAWN_CONNECTIONS, "trials": args.rounds,
                        "kill_after_s": RESPAWN_KILL_AFTER_S},
            "reload": {"arms": [{"arm": a, "migrate": m, "spawn": sp}
                                for a, m, sp in (QUICK_RELOAD_ARMS if args.quick else RELOAD_ARMS)],
                       "workers": 2, "seconds": RELOAD_SECONDS, "sighup_at_s": RELOAD_AT_S,
                       "path": RELOAD_PATH, "keepalive_connections": RELOAD_KEEPALIVE_CONNECTIONS,
                       "close_connections": RELOAD_CLOSE_CONNECTIONS,
                       "load": "wrk -t1 keep-alive and wrk -t1 -H 'Connection: close' at once; failed = "
                               "wrk's connect + read + write + timeout errors + non-2xx answers",
                       "netns": "each trial in a network namespace of its own (unshare -n)"},
            "mutex_delay": {"delays_ms": MUTEX_DELAYS_MS, "connections": 32, "rounds": args.rounds},
            "placement": {"arms": PLACEMENT_ARMS, "placements": placements(), "runs": PLACEMENT_RUNS,
                          "shapes": PLACEMENT_SHAPES, "round_gap_ms": PLACEMENT_ROUND_GAP_MS,
                          "stop_winner": "bare: 10 x 8 oneshot, then the probe SIGSTOPs the worker that "
                                         "answered most and runs them again; then SIGCONT and SIGTERM"},
            "perturbation": {"arms": QUICK_PERTURBATION_ARMS if args.quick else PERTURBATION_ARMS,
                             "workers": QUICK_PERTURBATION_WORKERS if args.quick else PERTURBATION_WORKERS,
                             "connections_per_worker": PERTURBATION_PER_WORKER,
                             "perturbations": [{"name": n, "runs": [{"shape": sh, "rounds": r} for sh, r in runs]}
                                               for n, runs in PERTURBATIONS],
                             "shape_args": PERTURBATION_SHAPE_ARGS, "round_gap_ms": 0,
                             "hog_cpus": PERTURBATION_HOG_CPUS, "flood_syns": PERTURBATION_FLOOD_SYNS,
                             "stop_s": PERTURBATION_STOP_S,
                             "target": "every round's max - min <= 2 (17/15 at 2 workers) for "
                                       + ", ".join(sorted(BALANCING_TARGET_ARMS))},
            "timeline": {"arms": TIMELINE_ARMS, "shape": TIMELINE_SHAPE},
            "trace_overhead": {"arm": TRACE_OVERHEAD_ARM, "workers": TRACE_OVERHEAD_WORKERS,
                               "modes": COST_MODES, "path": COST_PATH, "connections": COST_CONNECTIONS},
            "slowview": {"arms": SLOWVIEW_ARMS, "sleep_ms": SLOWVIEW_SLEEP_MS,
                         "connections": SLOWVIEW_CONNECTIONS, "rounds": args.rounds},
            "cost": {"tool": "wrk", "path": COST_PATH, "threads": WRK_THREADS,
                     "connections": COST_CONNECTIONS, "duration_s": bench_seconds(args),
                     "timeout_s": WRK_TIMEOUT_S, "modes": COST_MODES, "workers": COST_WORKERS,
                     "one_worker_arms": sorted(COST_ONE_WORKER_ARMS) if not args.bench_all else "all",
                     "arms": args.cost_arms, "rounds": args.bench_rounds, "close_gap_s": close_gap(args),
                     "order": "each round runs every arm x workers once per mode, the list "
                              "rotated by (round-1)*len/rounds",
                     "sysctls": {name: read_sysctl(name) for name in SYSCTLS},
                     "anchor": anchor_meta(args)},
            "payoff": {"tool": "wrk", "path": PAYOFF_PATH, "threads": WRK_THREADS,
                       "connections": PAYOFF_CONNECTIONS, "duration_s": bench_seconds(args),
                       "timeout_s": WRK_TIMEOUT_S, "rounds": args.bench_rounds,
                       "cells": [{"arm": a, "workers": w} for a, w in payoff_cells(args)],
                       "order": "each round runs every cell once per connection count, the "
                                "list rotated by (round-1)*len/rounds"},
        },
        "tools": {
            "gcc": (run_text(["gcc", "--version"]).splitlines() or ["unknown"])[0],
            "python": platform.python_version(),
            "libc": " ".join(platform.libc_ver()),
            "clang": (run_text(["clang", "--version"]).splitlines() or ["unknown"])[0],
            "bpftool": (run_text(["bpftool", "version"]).splitlines() or ["unknown"])[0],
            "libbpf": dpkg_version("libbpf-dev"),
            **({"wrk": wrk_version()} if {"cost", "payoff"} & set(args.studies) else {}),
            **peer_software(args),
        },
    }
    if "peers" in args.studies:
        out["parameters"]["peers"] = {
            "peers": args.peers, "rounds": args.rounds, "workers": peers.WORKERS, "shapes": peers.SHAPES,
            "trace": args.peers_trace,
            "how": "probes/peers/peers.py measure_one() per peer: the peer started once on 127.0.0.1 and a free "
                   "port, every shape run against it, then stopped; as root acceptlab-trace --port runs beside "
                   "it once, across all its shapes; nginx's access log ($pid per request) checked against the "
                   "probe's counts after every shape"}
    return out


def anchor_meta(args):
    """How each anchor arm in the cost study ran: which peer configuration,
    which software, and what it does per request."""
    out = {}
    for arm in (a for a in args.cost_arms if a in ANCHOR_ARMS):
        name = ANCHOR_ARMS[arm]
        software, setting = peers.PEERS[name]
        out[arm] = {"peer": name, "software": peers.software_version(software) or "not installed",
                    "setting": setting, "access_log": "off", "path": COST_PATH,
                    "answer": 'return 200 "$pid\\n"', "config": "probes/peers/peers.py nginx_conf()"}
    return out


def peer_software(args):
    """The peers' software versions, when the run starts any of them."""
    names = list(args.peers) if "peers" in args.studies else []
    if "cost" in args.studies:
        names += [ANCHOR_ARMS[a] for a in args.cost_arms if a in ANCHOR_ARMS]
    found = {}
    for software in dict.fromkeys(peers.PEERS[n][0] for n in names):
        found[software] = peers.software_version(software) or "not installed"
    return found


def read_text(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def dpkg_version(package):
    return run_text(["dpkg-query", "-W", "-f=${Version}", package]) or None


def machine_facts():
    """What else decides a run's figures on another machine: the OS, memory,
    the clock source, CPU frequency policy, virtualization, and the sysctls
    the accept path reads."""
    os_release = {}
    for line in (read_text("/etc/os-release") or "").splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            os_release[k] = v.strip('"')
    mem = next((l.split()[1] for l in (read_text("/proc/meminfo") or "").splitlines()
                if l.startswith("MemTotal:")), None)
    return {
        "os": os_release.get("PRETTY_NAME"),
        "mem_total_kb": int(mem) if mem else None,
        "clocksource": read_text("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
        "cpufreq_governor": read_text("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        "virtualization": run_text(["systemd-detect-virt"]) or None,
        "btf": os.path.exists("/sys/kernel/btf/vmlinux"),
        "sysctls": {name: read_sysctl(name) for name in
                    ["net.core.somaxconn", "net.ipv4.tcp_max_syn_backlog", "net.ipv4.tcp_migrate_req",
                     "kernel.sched_autogroup_enabled", "kernel.numa_balancing"]},
    }


def read_sysctl(name):
    """The value under /proc/sys (whitespace collapsed; an integer when it is
    one), or None when it cannot be read."""
    try:
        with open("/proc/sys/" + name.replace(".", "/")) as f:
            text = " ".join(f.read().split())
    except OSError:
        return None
    return int(text) if text.isdigit() else text


def wrk_version():
    """`wrk -v` prints its version line (and exits 1): "debian/4.1.0-3+b2 [epoll]"."""
    exe = shutil.which(WRK)
    if not exe:
        return "not installed"
    line = (run_text([exe, "-v"]).splitlines() or ["unknown"])[0]
    return line.split(" Copyright")[0].replace("wrk ", "", 1).strip() or "unknown"


# ---- servers ---------------------------------------------------------------

def tail(path, n=200):
    try:
        with open(path) as f:
            return f.read().strip().replace("\n", " | ")[-n:] or "(no stderr)"
    except OSError:
        return "(no stderr)"


def start_server(server_args, workers, raw_prefix, env=None):
    """Starts a server on an ephemeral port; returns (proc, ready dict, ready path).
    Its stdout (lifecycle JSON lines) is kept in proc.captured and saved to
    raw_prefix.server.jsonl when it stops."""
    err = open(raw_prefix + ".server.stderr", "w")
    server_args = list(server_args)
    if "--threads" in server_args:
        at = server_args.index("--threads") + 1
        server_args[at:at] = [str(workers)]
    else:
        server_args += ["--workers", str(workers)]
    proc = subprocess.Popen([SERVER, *server_args, "--port", "0"],
                            stdout=subprocess.PIPE, stderr=err, start_new_session=True,
                            env=dict(os.environ, **(env or {})))
    err.close()
    _live.append(proc)
    proc.raw_out = raw_prefix + ".server.jsonl"
    proc.captured = b""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while b"\n" not in proc.captured:
        left = deadline - time.monotonic()
        if left <= 0:
            raise StepFailed("server did not become ready within %d s" % READY_TIMEOUT_S)
        if not read_server_output(proc, left):
            proc.wait()
            raise StepFailed("server exited %s before ready: %s"
                             % (proc.returncode, tail(raw_prefix + ".server.stderr")))
    line = proc.captured.split(b"\n", 1)[0].decode()
    ready = json.loads(line)
    if ready.get("event") != "ready":
        raise StepFailed("server's first line is not its ready line: " + line[:200])
    path = raw_prefix + ".ready"
    with open(path, "w") as f:
        f.write(line + "\n")
    return proc, ready, path


def read_server_output(proc, timeout):
    """Reads what a child we started (a server, the tracer) printed within
    timeout into proc.captured; False at EOF."""
    fd = proc.stdout.fileno()
    if select.select([fd], [], [], timeout)[0]:
        chunk = os.read(fd, 65536)
        if not chunk:
            return False
        proc.captured += chunk
    return True


def server_events(proc):
    """The JSON lines a child we started printed (proc.captured)."""
    return [json.loads(l) for l in proc.captured.decode(errors="replace").splitlines() if l.startswith("{")]


def wait_event(proc, event, timeout):
    """Waits for a lifecycle line of this kind; returns it or None."""
    deadline = time.monotonic() + timeout
    while True:
        found = [e for e in server_events(proc) if e.get("event") == event]
        if found:
            return found[0]
        left = deadline - time.monotonic()
        if left <= 0 or not read_server_output(proc, min(left, 0.1)):
            return None


def stop_server(proc):
    """SIGTERM, wait, SIGKILL the group if it lingers; saves the server's
    output. Returns the exit code."""
    try:
        os.killpg(proc.pid, signal.SIGCONT)
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    try:
        rc = proc.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        rc = None
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # anything left in the group
    except ProcessLookupError:
        pass
    if rc is None:
        rc = proc.wait()
    deadline = time.monotonic() + 1.0  # the rest of its output, up to EOF
    while time.monotonic() < deadline and read_server_output(proc, deadline - time.monotonic()):
        pass
    proc.stdout.close()
    with open(proc.raw_out, "wb") as f:
        f.write(proc.captured)
    if proc in _live:
        _live.remove(proc)
    return rc


def stop_all():
    for hog in list(_hogs):
        stop_hog(hog)
    for tracer in list(_tracers):
        try:
            tracer.stop()
        except StepFailed:
            pass
    for proc in list(_live):
        stop_server(proc)


class ServerRun:
    """with ServerRun(...) as (proc, ready, ready_path): stops it on exit."""

    def __init__(self, server_args, workers, raw_prefix, env=None):
        self.args = (server_args, workers, raw_prefix, env)

    def __enter__(self):
        self.proc, ready, path = start_server(*self.args)
        return self.proc, ready, path

    def __exit__(self, *exc):
        rc = stop_server(self.proc)
        if rc != 0:
            print("campaign: warning: server %s exited %s on SIGTERM" % (" ".join(self.args[0]), rc),
                  file=sys.stderr)
        return False


# ---- the probe -------------------------------------------------------------

def probe_cmd(port, shape, rounds, ready_path, extra=(), host="127.0.0.1"):
    cmd = [PROBE, "--target", "%s:%d" % (host, port), "--shape", shape["name"],
           "--connections", str(shape["connections"]), "--rounds", str(rounds),
           "--workers-from", ready_path, "--json", *extra]
    if "gap_ms" in shape:
        cmd += ["--gap-ms", str(shape["gap_ms"])]
    if "requests" in shape:
        cmd += ["--requests", str(shape["requests"])]
    return cmd


def save_probe(prefix, cmd, res):
    with open(prefix + ".probe.cmd", "w") as f:
        f.write(" ".join(cmd) + "\n")
    with open(prefix + ".probe.jsonl", "w") as f:
        f.write(res.stdout)
    with open(prefix + ".probe.stderr", "w") as f:
        f.write(res.stderr)


def run_probe(prefix, cmd, rounds):
    """Runs the probe; returns its round objects (exit 1, a measured failure
    such as an unanswered connection, is data, not an error)."""
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise StepFailed("probe did not finish within %d s" % PROBE_TIMEOUT_S)
    save_probe(prefix, cmd, res)
    return probe_rounds(res, rounds)


def probe_rounds(res, rounds):
    if res.returncode not in (0, 1):
        raise StepFailed("probe exited %d: %s" % (res.returncode, res.stderr.strip()[-200:]))
    out = []
    for line in res.stdout.splitlines():
        obj = json.loads(line)
        if obj.pop("type") == "round":
            out.append(obj)
    if len(out) != rounds:
        raise StepFailed("probe reported %d rounds, expected %d" % (len(out), rounds))
    return out


# ---- the tracer, beside the balancing rounds ------------------------------------

TRACER_ATTACH_TIMEOUT_S = 20
# Arms whose acceptor is not always the worker that serves: the tracer's
# accepts won and the probe's per-worker counts differ by design there.
ACCEPTOR_IS_NOT_OWNER = {"fdpass", "fdpass-threads", "handoff", "handoff-written", "bare-shared-epoll"}
_tracers = []


class Tracer:
    """bin/acceptlab-trace --pgid PGID --json, started before the probe and
    stopped (SIGINT) after it; its output is kept at raw_prefix.trace.jsonl."""

    def __init__(self, pgid, raw_prefix, timeline=False):
        self.raw = raw_prefix + ".trace.jsonl"
        err = open(raw_prefix + ".trace.stderr", "w")
        self.proc = subprocess.Popen([TRACER, "--pgid", str(pgid), "--json"] + (["--timeline"] if timeline else []),
                                     stdout=subprocess.PIPE,
                                     stderr=err, start_new_session=True)
        err.close()
        _tracers.append(self)
        self.proc.captured = b""
        deadline = time.monotonic() + TRACER_ATTACH_TIMEOUT_S
        while b"\n" not in self.proc.captured:
            left = deadline - time.monotonic()
            if left <= 0 or not read_server_output(self.proc, left):
                self.stop()
                raise StepFailed("tracer did not attach: " + tail(raw_prefix + ".trace.stderr"))

    def stop(self):
        """Returns the tracer's JSON objects (after its exit)."""
        if self in _tracers:
            _tracers.remove(self)
        try:
            os.killpg(self.proc.pid, signal.SIGINT)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and read_server_output(self.proc, deadline - time.monotonic()):
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


def trace_row(arm, shape, ready, rows, trace):
    """One trace.jsonl row: each worker's tracer counts beside the probe's
    connection counts over the step's rounds, and whether they agree."""
    ident = "tid" if ready.get("mode") == "threads" else "pid"
    index_of = {w["tid"]: w["index"] for w in ready["workers"]}
    probe = {}
    for r in rows:
        for who, n in r.get("counts", {}).items():
            probe[int(who)] = probe.get(int(who), 0) + n
    workers = []
    for t in (o for o in trace if o.get("type") == "worker"):
        w = dict(t, index=index_of.get(t["tid"]))
        w.pop("type", None)
        workers.append(w)
    won = {w["tid"]: w["won"] for w in workers}
    check = {"tracer_won": {}, "probe_connections": {}}
    for w in ready["workers"]:
        check["tracer_won"][str(w["index"])] = won.get(w["tid"], 0)
        check["probe_connections"][str(w["index"])] = probe.get(w[ident], 0)
    check["equal"] = check["tracer_won"] == check["probe_connections"]
    check["expect_equal"] = arm not in ACCEPTOR_IS_NOT_OWNER
    summary = next((o for o in trace if o.get("type") == "summary"), {})
    return {"variant": arm, "shape": shape["name"], "mode": ready.get("mode", "process"),
            "rounds": len(rows), "connections": sum(r["connections"] for r in rows),
            "duration_s": summary.get("duration_s"), "workers": sorted(workers, key=lambda w: (w["index"] is None, w["index"] or 0, w["tid"])),
            "cross_check": check}


def handoffs_of(proc):
    """handoff arms: connections the threads handed to each other over the
    server's life (its handoff_exit lines); None for other variants."""
    exits = [e for e in server_events(proc) if e.get("event") == "handoff_exit"]
    return sum(e.get("handed", 0) for e in exits) if exits else None


def split_text(rows):
    return " ".join(r["split"] + ("!" if r.get("unanswered") else "") for r in rows)


# ---- studies: each yields steps (label, function returning (rows, summary)) --

def balancing_steps(args, raw_dir):
    for arm in args.arms:
        for shape in SHAPES:
            def step(arm=arm, shape=shape):
                prefix = os.path.join(raw_dir, "balancing-%s-%s" % (arm, shape["name"]))
                trace = None
                with ServerRun(ARMS[arm], args.workers, prefix, ARM_ENV.get(arm)) as (proc, ready, path):
                    tracer = Tracer(proc.pid, prefix) if args.trace else None
                    try:
                        rounds = run_probe(prefix, probe_cmd(ready["port"], shape, args.rounds, path),
                                           args.rounds)
                    finally:
                        if tracer:
                            trace = tracer.stop()
                rows = [dict({"variant": arm, "mode": ready.get("mode", "process"),
                              "workers": len(ready["workers"])}, **r) for r in rounds]
                moved = handoffs_of(proc)
                if moved is not None:
                    for r in rows:  # over all the step's rounds (one server)
                        r["step_handoffs"] = moved
                note = ""
                if trace is not None:
                    row = trace_row(arm, shape, ready, rows, trace)
                    with open(args.trace_path, "a") as f:
                        f.write(json.dumps(row, sort_keys=True) + "\n")
                    note = "; trace " + ("agrees" if row["cross_check"]["equal"] else
                                         "differs (expected)" if not row["cross_check"]["expect_equal"] else
                                         "DIFFERS")
                return rows, split_text(rows) + note
            label = "%-17s %s" % (arm, shape_label(shape))
            yield label, step, {"variant": arm, "shape": shape["name"], "round": None}


def respawn_trial(arm, migrate, raw_prefix):
    """One trial, in this process's network namespace: worker 1 SIGSTOPped,
    a burst connected and asking, worker 1 SIGKILLed. Returns the row."""
    server_args = list(ARMS[arm]) + (["--reuseport-migrate"] if migrate else [])
    with ServerRun(server_args, 2, raw_prefix) as (proc, ready, path):
        victim = ready["workers"][1]["pid"]
        os.kill(victim, signal.SIGSTOP)
        shape = {"name": "burst", "connections": RESPAWN_CONNECTIONS}
        cmd = probe_cmd(ready["port"], shape, 1, path, ["--timeout-ms", "5000"])
        probe = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            time.sleep(RESPAWN_KILL_AFTER_S)
            os.kill(victim, signal.SIGKILL)
            out, err = probe.communicate(timeout=PROBE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            probe.kill()
            probe.communicate()
            raise StepFailed("probe did not finish within %d s" % PROBE_TIMEOUT_S)
        res = subprocess.CompletedProcess(cmd, probe.returncode, out, err)
        save_probe(raw_prefix, cmd, res)
        (rnd,) = probe_rounds(res, 1)
        respawned = wait_event(proc, "respawned", 5)
    errors = rnd["errors"]
    return {"variant": arm, "migrate": migrate, "connections": rnd["connections"],
            "answered": rnd["answered"], "reset": errors["reset"] + errors["eof"],
            "timeout": errors["timeout"], "other_errors": sum(errors.values()) - errors["reset"]
            - errors["eof"] - errors["timeout"], "counts": rnd["counts"],
            "rebind_ms": respawned["since_reap_ms"] if respawned else None}


def reload_trial(arm, migrate, spawn, raw_prefix):
    """One reload trial in this process's network namespace: wrk keep-alive
    and wrk Connection: close on /pid for RELOAD_SECONDS, a SIGHUP at each
    RELOAD_AT_S, each waited for ("reloaded"). Returns the row: requests and
    wrk's errors per load, and what the reloads took."""
    server_args = (list(ARMS[arm]) + (["--reuseport-migrate"] if migrate else [])
                   + (["--spawn-workers"] if spawn else []))
    with ServerRun(server_args, 2, raw_prefix, ARM_ENV.get(arm)) as (proc, ready, path):
        port = ready["port"]
        loads = {"keepalive": start_wrk(raw_prefix + "-keepalive", port, RELOAD_PATH, RELOAD_KEEPALIVE_CONNECTIONS,
                                        RELOAD_SECONDS, threads=1),
                 "close": start_wrk(raw_prefix + "-close", port, RELOAD_PATH, RELOAD_CLOSE_CONNECTIONS,
                                    RELOAD_SECONDS, ["Connection: close"], threads=1)}
        start, done, problem = time.monotonic(), [], None
        try:
            for generation, at in enumerate(RELOAD_AT_S, 1):
                time.sleep(max(0.0, start + at - time.monotonic()))
                os.kill(proc.pid, signal.SIGHUP)
                deadline = time.monotonic() + RELOAD_WAIT_S
                while not problem:
                    events = server_events(proc)
                    ended = [e for e in events if e.get("event") == "reloaded" and e.get("generation") == generation]
                    failed = [e for e in events if e.get("event") == "reload_failed"]
                    if ended:
                        done.append(ended[0])
                        break
                    if failed:
                        problem = "reload %d failed: %s" % (generation, failed[0].get("reason"))
                    elif time.monotonic() > deadline:
                        problem = "reload %d did not finish within %d s" % (generation, RELOAD_WAIT_S)
                    elif not read_server_output(proc, 0.05):
                        problem = "the server exited during reload %d" % generation
            out = {mode: finish_wrk(w) for mode, w in loads.items()}
        finally:
            for w in loads.values():
                if w.poll() is None:
                    w.kill()
                    w.communicate()
        if problem:
            raise StepFailed(problem)
        replaced = [e for e in server_events(proc) if e.get("event") == "replaced"]
    row = {"variant": arm, "migrate": migrate, "spawn": spawn, "reloads": len(done),
           "replaced": len(replaced), "reload_ms": [round(e["ms"], 1) for e in done],
           "seconds": RELOAD_SECONDS, "failed": 0}
    for mode, res in out.items():
        row[mode] = {"requests": res["requests"], "errors": res["errors"]}
        row["failed"] += sum(res["errors"].values())
    return row


def reload_label(arm, migrate, spawn):
    return arm + (" +migrate" if migrate else "") + (" +spawn" if spawn else "")


def reload_steps(args, raw_dir):
    for arm, migrate, spawn in (QUICK_RELOAD_ARMS if args.quick else RELOAD_ARMS):
        if arm not in args.arms:
            continue

        def step(arm=arm, migrate=migrate, spawn=spawn):
            prefix = os.path.join(raw_dir, "reload-%s%s%s" % (arm, "-migrate" if migrate else "",
                                                              "-spawn" if spawn else ""))
            if not is_root():
                raise StepFailed("skipped: needs root (a network namespace of its own)")
            # A fresh network namespace per trial, as respawn's: the migrate
            # arm sets a per-namespace sysctl, and no trial inherits another's
            # TIME_WAIT sockets.
            cmd = ["unshare", "-n", PYTHON, os.path.abspath(__file__), "--reload-trial", arm,
                   "--raw-prefix", prefix] + (["--migrate"] if migrate else []) + (["--spawn"] if spawn else [])
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=RELOAD_SECONDS + 2 * RELOAD_WAIT_S + 60)
            if res.returncode != 0:
                raise StepFailed("trial exited %d: %s" % (res.returncode, res.stderr.strip()[-300:]))
            row = json.loads(res.stdout.strip().splitlines()[-1])
            return [row], "%d reloads, %d failed of %d requests" % (
                row["reloads"], row["failed"], row["keepalive"]["requests"] + row["close"]["requests"])
        yield "%-17s reload" % reload_label(arm, migrate, spawn), step, {"variant": arm, "migrate": migrate,
                                                                          "spawn": spawn}


def respawn_steps(args, raw_dir):
    for arm, migrate in RESPAWN_ARMS:
        if arm not in args.arms:
            continue
        for trial in range(1, args.rounds + 1):
            def step(arm=arm, migrate=migrate, trial=trial):
                prefix = os.path.join(raw_dir, "respawn-%s%s-%d" % (arm, "-migrate" if migrate else "", trial))
                if not is_root():
                    raise StepFailed("skipped: needs root (a network namespace of its own)")
                # Each trial in a fresh network namespace: the migrate arm sets a
                # per-namespace sysctl, and every arm gets the same clean stack.
                cmd = ["unshare", "-n", PYTHON, os.path.abspath(__file__), "--respawn-trial", arm,
                       "--raw-prefix", prefix] + (["--migrate"] if migrate else [])
                res = subprocess.run(cmd, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S + 30)
                if res.returncode != 0:
                    raise StepFailed("trial exited %d: %s" % (res.returncode, res.stderr.strip()[-300:]))
                row = json.loads(res.stdout.strip().splitlines()[-1])
                row["trial"] = trial
                return [row], "%d of %d reset, rebind %s ms" % (row["reset"], row["connections"], row["rebind_ms"])
            label = "%-17s %s trial %d" % (arm + (" +migrate" if migrate else ""), "respawn", trial)
            yield label, step, {"variant": arm, "migrate": migrate, "trial": trial}


def mutex_delay_steps(args, raw_dir):
    if "mutex" not in args.arms:
        return
    for delay in MUTEX_DELAYS_MS:
        def step(delay=delay):
            prefix = os.path.join(raw_dir, "mutex_delay-%d" % delay)
            shape = {"name": "burst", "connections": 32}
            server_args = ARMS["mutex"] + ["--accept-mutex-delay", str(delay)]
            with ServerRun(server_args, args.workers, prefix) as (proc, ready, path):
                rounds = run_probe(prefix, probe_cmd(ready["port"], shape, args.rounds, path), args.rounds)
            rows = [dict({"variant": "mutex", "delay_ms": delay}, **r) for r in rounds]
            return rows, "%s, first byte p99 %s us" % (split_text(rows),
                                                        " ".join(str(r["first_byte_us"]["p99"]) for r in rows))
        yield "%-17s delay %d ms" % ("mutex", delay), step, {"variant": "mutex", "delay_ms": delay, "round": None}


def keep_busy(port, sleep_ms, stop, log):
    """Loops GET /sleep?ms=N on one keep-alive connection until stop is set:
    one worker is always inside a slow inline view."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            req = ("GET /sleep?ms=%d HTTP/1.1\r\nHost: t\r\n\r\n" % sleep_ms).encode()
            while not stop.is_set():
                s.sendall(req)
                data = b""
                while not data.endswith(b"ms\n"):
                    chunk = s.recv(4096)
                    if not chunk:
                        return
                    data += chunk
                log.append(data.split(b"X-Worker: ", 1)[1].split(b"\r", 1)[0].decode())
    except OSError as e:
        log.append("error: %s" % e)


def slowview_steps(args, raw_dir):
    for arm in SLOWVIEW_ARMS:
        if arm not in args.arms:
            continue

        def step(arm=arm):
            prefix = os.path.join(raw_dir, "slowview-%s" % arm)
            shape = {"name": "burst", "connections": SLOWVIEW_CONNECTIONS}
            with ServerRun(ARMS[arm], args.workers, prefix) as (proc, ready, path):
                stop, log = threading.Event(), []
                busy = threading.Thread(target=keep_busy, args=(ready["port"], SLOWVIEW_SLEEP_MS, stop, log))
                busy.start()
                try:
                    time.sleep(0.3)  # the slow view is running before the bursts
                    rounds = run_probe(prefix, probe_cmd(ready["port"], shape, args.rounds, path), args.rounds)
                finally:
                    stop.set()
                    busy.join(timeout=10)
            if any(l.startswith("error") for l in log) or not log:
                raise StepFailed("the busy client failed: %s" % (log[-1] if log else "no answer"))
            rows = [dict({"variant": arm, "sleep_ms": SLOWVIEW_SLEEP_MS}, **r) for r in rounds]
            return rows, "%s, first byte p99 %s us" % (split_text(rows),
                                                        " ".join(str(r["first_byte_us"]["p99"]) for r in rows))
        yield "%-17s slow view %d ms" % (arm, SLOWVIEW_SLEEP_MS), step, {"variant": arm, "round": None}


# ---- cost and payoff: wrk ----------------------------------------------------

WRK_UNITS_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0, "h": 3600000.0}
WRK_TIME_RE = r"([0-9]+(?:\.[0-9]+)?)(us|ms|s|m|h)"


def wrk_ms(text):
    """wrk's time format ("273.00us", "1.21ms", "2.00s", "1.00m") in ms."""
    m = re.fullmatch(WRK_TIME_RE, text.strip())
    if not m:
        raise ValueError("wrk output: %r is not a time" % text)
    return round(float(m.group(1)) * WRK_UNITS_MS[m.group(2)], 6)


def parse_wrk(text):
    """Parses wrk 4.x's text report (run with --latency) into
    {requests_per_s, requests, duration_s, latency_ms: {p50, p99}, errors}.
    errors always carries connect/read/write/timeout (wrk's "Socket errors"
    line, printed only when one is non-zero) and non_2xx_3xx (its "Non-2xx or
    3xx responses" line, likewise). Raises ValueError when a needed line is missing."""
    rps = re.search(r"^Requests/sec:\s*([0-9]+(?:\.[0-9]+)?)\s*$", text, re.M)
    if not rps:
        raise ValueError("wrk output has no Requests/sec line")
    total = re.search(r"^\s*([0-9]+) requests in " + WRK_TIME_RE + r",", text, re.M)
    if not total:
        raise ValueError("wrk output has no 'N requests in T' line")
    dist = text.split("Latency Distribution", 1)
    if len(dist) != 2:
        raise ValueError("wrk output has no Latency Distribution (was --latency given?)")
    latency = {}
    for pct in ("50", "99"):
        m = re.search(r"^\s*" + pct + r"(?:\.0+)?%\s+(\S+)\s*$", dist[1], re.M)
        if not m:
            raise ValueError("wrk output has no %s%% latency line" % pct)
        latency["p" + pct] = wrk_ms(m.group(1))
    errors = {"connect": 0, "read": 0, "write": 0, "timeout": 0, "non_2xx_3xx": 0}
    sock = re.search(r"^\s*Socket errors:\s*connect ([0-9]+), read ([0-9]+), write ([0-9]+), "
                     r"timeout ([0-9]+)\s*$", text, re.M)
    if sock:
        for key, value in zip(("connect", "read", "write", "timeout"), sock.groups()):
            errors[key] = int(value)
    elif "Socket errors" in text:
        raise ValueError("wrk output: a Socket errors line this parser does not know")
    status = re.search(r"^\s*Non-2xx or 3xx responses:\s*([0-9]+)\s*$", text, re.M)
    if status:
        errors["non_2xx_3xx"] = int(status.group(1))
    elif "Non-2xx" in text:
        raise ValueError("wrk output: a Non-2xx line this parser does not know")
    return {"requests_per_s": float(rps.group(1)), "requests": int(total.group(1)),
            "duration_s": round(wrk_ms(total.group(2) + total.group(3)) / 1000.0, 6),
            "latency_ms": latency, "errors": errors}


def bench_seconds(args):
    if getattr(args, "bench_seconds", None):
        return args.bench_seconds
    return BENCH_QUICK_SECONDS if args.quick else BENCH_SECONDS


def close_gap(args):
    """The pause after a Connection: close run; a test's --bench-seconds
    shortens it too (never longer than the runs it follows)."""
    if getattr(args, "bench_seconds", None):
        return min(CLOSE_GAP_S, args.bench_seconds)
    return 1 if args.quick else CLOSE_GAP_S


def need_wrk():
    exe = shutil.which(WRK)
    if not exe:
        raise StepFailed("skipped: wrk not installed")
    return exe


def run_wrk(prefix, port, path, connections, seconds, headers=()):
    """Runs wrk against 127.0.0.1:port, saves its command and verbatim output
    under raw/ (prefix.wrk.cmd, .wrk.txt, .wrk.stderr); returns parse_wrk's dict."""
    return finish_wrk(start_wrk(prefix, port, path, connections, seconds, headers))


def start_wrk(prefix, port, path, connections, seconds, headers=(), threads=WRK_THREADS):
    """Starts wrk (see run_wrk) and returns it; finish_wrk waits for it."""
    cmd = [need_wrk(), "-t%d" % threads, "-c%d" % connections, "-d%ds" % seconds, "--latency",
           "--timeout", "%ds" % WRK_TIMEOUT_S]
    for h in headers:
        cmd += ["-H", h]
    cmd.append("http://127.0.0.1:%d%s" % (port, path))
    with open(prefix + ".wrk.cmd", "w") as f:
        f.write(shlex.join(cmd) + "\n")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc.wrk = (prefix, seconds)
    return proc


def finish_wrk(proc):
    """Waits for a wrk from start_wrk, saves its output, parses it."""
    prefix, seconds = proc.wrk
    try:
        out, err = proc.communicate(timeout=seconds + WRK_SLACK_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise StepFailed("wrk did not finish within %d s" % (seconds + WRK_SLACK_S))
    res = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    with open(prefix + ".wrk.txt", "w") as f:
        f.write(res.stdout)
    with open(prefix + ".wrk.stderr", "w") as f:
        f.write(res.stderr)
    if res.returncode != 0:
        why = " ".join((res.stderr.strip() or res.stdout.strip() or "no output").split())
        raise StepFailed("wrk exited %d: %s" % (res.returncode, why[-200:]))
    try:
        return parse_wrk(res.stdout)
    except ValueError as e:
        raise StepFailed(str(e))


def time_wait_counts(port):
    """Sockets in TIME_WAIT now (`ss -tanH state time-wait`, every one on the
    machine), and of those on this server's port: its own side (local port =
    the server's) and the client's side (peer port = the server's)."""
    try:
        res = subprocess.run(["ss", "-tanH", "state", "time-wait"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None, None
    if res.returncode != 0:
        return None, None
    total, server, client = 0, 0, 0
    suffix = ":%d" % port
    for line in res.stdout.splitlines():
        cols = line.split()
        if len(cols) < 4:
            continue
        total += 1
        server += cols[-2].endswith(suffix)
        client += cols[-1].endswith(suffix)
    return total, {"server": server, "client": client}


def served_split(proc):
    """Connections each worker served (its worker_exit line's "admitted":
    accepted itself or handed to it, so fdpass shows who served, not who won
    the accept), largest first ("33/0"); None when it printed none. wrk opens
    one connection more than -c before its run."""
    counts = sorted((e.get("admitted", 0) for e in server_events(proc) if e.get("event") == "worker_exit"),
                    reverse=True)
    return "/".join(map(str, counts)) if counts else None


def rotated(cells, rnd, rounds):
    """Round rnd's order: the list rotated by (rnd-1)*len/rounds, so each cell
    takes an early, a middle and a late slot across the rounds."""
    k = ((rnd - 1) * len(cells) // max(rounds, 1)) % max(len(cells), 1)
    return cells[k:] + cells[:k]


def handoff_rate(port, seconds):
    """For fdpass with the mechanism on: the hand-offs the run caused (the
    shared page's event id, read through GET /variant after wrk), and per
    second. Empty for every other arm."""
    try:
        state = json.loads(peers.get_close(port, "/variant", 5).split(b"\r\n\r\n", 1)[1])
    except (OSError, ValueError, IndexError):
        return {}
    if not state.get("on") or "event_id" not in state:
        return {}
    return {"handoffs": state["event_id"],
            "handoffs_per_s": round(state["event_id"] / seconds, 1) if seconds else None}


def anchor_run(args, prefix, arm, workers, headers):
    """wrk against an anchor arm: its peer configuration (access log off)
    started fresh on a free port, stopped after; the configuration and logs
    are kept at prefix.*. Returns (parse_wrk's dict, TIME_WAIT counts, software)."""
    name = ANCHOR_ARMS[arm]
    ok, reason = peers.availability(name)
    if not ok:
        raise StepFailed("skipped: " + reason)
    peer = peers.Peer(name, workers=workers, access_log=False)
    try:
        try:
            peer.start()
        except RuntimeError as e:
            raise StepFailed("%s did not start: %s" % (name, e))
        with open(prefix + ".ready", "w") as f:
            f.write(json.dumps(peer.ready, separators=(",", ":")) + "\n")
        out = run_wrk(prefix, peer.port, COST_PATH, COST_CONNECTIONS, bench_seconds(args), headers)
        tw = time_wait_counts(peer.port)
    finally:
        peer.stop()
        peer.keep(prefix)
        peer.cleanup()
    return out, tw, peer.version


def cost_run(args, raw_dir, arm, workers, mode, rnd, order):
    prefix = os.path.join(raw_dir, "cost-%s-w%d-%s-r%d" % (arm, workers, mode, rnd))
    need_wrk()  # before a server starts: a missing wrk skips at once
    headers = ["Connection: close"] if mode == "close" else []
    if arm in ANCHOR_ARMS:
        out, (tw_total, tw_sides), software = anchor_run(args, prefix, arm, workers, headers)
        row = dict({"arm": arm, "workers": workers, "mode": mode, "round": rnd, "order": order,
                    "time_wait_after": tw_total, "time_wait_sides": tw_sides, "served_split": None,
                    "ratio_to_bare": None, "peer": ANCHOR_ARMS[arm], "software": software}, **out)
        bad = sum(out["errors"].values())
        return [row], "%.0f req/s, p99 %s ms%s, TIME_WAIT %s" % (
            out["requests_per_s"], out["latency_ms"]["p99"], ", %d errors" % bad if bad else "", tw_total)
    with ServerRun(ARMS[arm], workers, prefix, ARM_ENV.get(arm)) as (proc, ready, path):
        out = run_wrk(prefix, ready["port"], COST_PATH, COST_CONNECTIONS, bench_seconds(args), headers)
        out.update(handoff_rate(ready["port"], out["duration_s"]))
        tw_total, tw_sides = time_wait_counts(ready["port"])
    moved = handoffs_of(proc)
    if moved is not None:
        out.update({"handoffs": moved,
                    "handoffs_per_s": round(moved / out["duration_s"], 1) if out["duration_s"] else None})
    row = dict({"arm": arm, "workers": workers, "mode": mode, "round": rnd, "order": order,
                "time_wait_after": tw_total, "time_wait_sides": tw_sides,
                "served_split": served_split(proc), "ratio_to_bare": None}, **out)
    bad = sum(out["errors"].values())
    return [row], "%.0f req/s, p99 %s ms%s, TIME_WAIT %s" % (
        out["requests_per_s"], out["latency_ms"]["p99"], ", %d errors" % bad if bad else "", tw_total)


def cost_steps(args, raw_dir):
    cells = [(arm, w) for w in COST_WORKERS for arm in args.cost_arms
             if w != 1 or args.bench_all or (arm in COST_ONE_WORKER_ARMS and not args.quick)]
    for rnd in range(1, args.bench_rounds + 1):
        for mode in COST_MODES:
            for order, (arm, workers) in enumerate(rotated(cells, rnd, args.bench_rounds), 1):
                def step(arm=arm, workers=workers, mode=mode, rnd=rnd, order=order):
                    try:
                        result = cost_run(args, raw_dir, arm, workers, mode, rnd, order)
                    except Exception as e:
                        if mode == "close" and not str(e).startswith("skipped"):
                            time.sleep(close_gap(args))  # a failed run may have made connections too
                        raise
                    if mode == "close":
                        time.sleep(close_gap(args))  # before the next run's connects
                    return result
                label = "%-17s %dw %-9s r%d" % (arm, workers, mode, rnd)
                yield label, step, {"arm": arm, "workers": workers, "mode": mode, "round": rnd}


def finish_cost(path):
    """Fills ratio_to_bare once every run is in: req/s over bare's at the same
    workers, mode and round (null when bare has no measured row there)."""
    try:
        with open(path) as f:
            rows = [json.loads(l) for l in f if l.strip()]
    except OSError:
        return
    def rate_of(arm):
        return {(r["workers"], r["mode"], r["round"]): r["requests_per_s"] for r in rows
                if r.get("arm") == arm and "error" not in r}

    bare = rate_of("bare")
    knob_off = {arm: rate_of(off) for arm, off in KNOB_OFF_OF.items()}
    process = {arm: rate_of(p) for arm, p in PROCESS_ARM_OF.items()}
    for r in rows:
        if "error" in r:
            continue
        key = (r["workers"], r["mode"], r["round"])
        base = bare.get(key)
        r["ratio_to_bare"] = round(r["requests_per_s"] / base, 4) if base else None
        if r["arm"] in knob_off:
            off = knob_off[r["arm"]].get(key)
            r["ratio_to_knob_off"] = round(r["requests_per_s"] / off, 4) if off else None
        if r["arm"] in process:
            proc_rate = process[r["arm"]].get(key)
            r["ratio_to_process"] = round(r["requests_per_s"] / proc_rate, 4) if proc_rate else None
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        for r in rows:
            f.write(json.dumps(r, sort_keys=True) + "\n")
    os.replace(tmp, path)


def payoff_cells(args):
    return [PAYOFF_BASELINE] + [(arm, PAYOFF_WORKERS) for arm in args.payoff_arms]


def payoff_steps(args, raw_dir):
    cells = payoff_cells(args)
    for rnd in range(1, args.bench_rounds + 1):
        for conns in PAYOFF_CONNECTIONS:
            for order, (arm, workers) in enumerate(rotated(cells, rnd, args.bench_rounds), 1):
                def step(arm=arm, workers=workers, conns=conns, rnd=rnd, order=order):
                    need_wrk()
                    prefix = os.path.join(raw_dir, "payoff-%s-w%d-c%d-r%d" % (arm, workers, conns, rnd))
                    with ServerRun(ARMS[arm], workers, prefix, ARM_ENV.get(arm)) as (proc, ready, path):
                        out = run_wrk(prefix, ready["port"], PAYOFF_PATH, conns, bench_seconds(args))
                        out.update(handoff_rate(ready["port"], out["duration_s"]))
                    row = dict({"arm": arm, "workers": workers, "connections": conns, "round": rnd,
                                "order": order, "served_split": served_split(proc)}, **out)
                    bad = sum(out["errors"].values())
                    return [row], "%.0f req/s, p50 %s ms, p99 %s ms%s" % (
                        out["requests_per_s"], out["latency_ms"]["p50"], out["latency_ms"]["p99"],
                        ", %d errors" % bad if bad else "")
                label = "%-17s %dw c%-3d r%d" % (arm, workers, conns, rnd)
                yield label, step, {"arm": arm, "workers": workers, "connections": conns, "round": rnd}


TIMELINE_ARMS = ["bare", "exclusive", "lt-yield", "reuseport", "fdpass"]
TIMELINE_SHAPE = {"name": "oneshot", "connections": 8}
TRACE_OVERHEAD_ARM = "bare"
TRACE_OVERHEAD_WORKERS = 2


def timeline_steps(args, raw_dir):
    """One oneshot round of 8 connections per arm with the tracer's
    --timeline: each connection's story (the report shows them)."""
    for arm in [a for a in TIMELINE_ARMS if a in args.arms]:
        def step(arm=arm):
            if not is_root():
                raise StepFailed("skipped: needs root (the tracer loads BPF programs)")
            prefix = os.path.join(raw_dir, "timeline-%s" % arm)
            with ServerRun(ARMS[arm], args.workers, prefix, ARM_ENV.get(arm)) as (proc, ready, path):
                tracer = Tracer(proc.pid, prefix, timeline=True)
                try:
                    rounds = run_probe(prefix, probe_cmd(ready["port"], TIMELINE_SHAPE, 1, path), 1)
                finally:
                    trace = tracer.stop()
            index_of = {w["tid"]: w["index"] for w in ready["workers"]}
            rows = []
            for o in trace:
                if o.get("type") != "conn":
                    continue
                conn = dict(o, winner_index=index_of.get(o.get("winner")))
                conn.pop("type")
                for w in conn["woken"]:
                    w["index"] = index_of.get(w["tid"])
                conn["eagain_index"] = [index_of.get(t) for t in conn["eagain"]]
                rows.append({"variant": arm, "mode": ready.get("mode", "process"), "conn": conn})
            if not rows:
                raise StepFailed("the tracer recorded no connection")
            return rows, "%d connections, split %s" % (len(rows), rounds[0]["split"])
        yield "%-17s oneshot 8 --timeline" % arm, step, {"variant": arm}


def trace_overhead_steps(args, raw_dir):
    """wrk against bare at 2 workers, with and without the tracer attached,
    alternated, keep-alive and close: the tracer's cost as a ratio."""
    for rnd in range(1, args.bench_rounds + 1):
        for mode in (COST_MODES[:1] if args.quick else COST_MODES):  # quick: keep-alive only
            order = [False, True] if rnd % 2 else [True, False]
            for traced in order:
                def step(traced=traced, mode=mode, rnd=rnd):
                    if traced and not is_root():
                        raise StepFailed("skipped: needs root (the tracer loads BPF programs)")
                    need_wrk()
                    prefix = os.path.join(raw_dir, "trace-overhead-%s-%s-r%d" % (
                        "on" if traced else "off", mode, rnd))
                    headers = ["Connection: close"] if mode == "close" else []
                    with ServerRun(ARMS[TRACE_OVERHEAD_ARM], TRACE_OVERHEAD_WORKERS, prefix) as (proc, ready, _):
                        tracer = Tracer(proc.pid, prefix) if traced else None
                        try:
                            out = run_wrk(prefix, ready["port"], COST_PATH, COST_CONNECTIONS,
                                          bench_seconds(args), headers)
                        finally:
                            if tracer:
                                tracer.stop()
                    if mode == "close":
                        time.sleep(close_gap(args))
                    row = dict({"arm": TRACE_OVERHEAD_ARM, "workers": TRACE_OVERHEAD_WORKERS, "traced": traced,
                                "mode": mode, "round": rnd}, **out)
                    return [row], "%.0f req/s" % out["requests_per_s"]
                yield ("bare %s %-9s r%d" % ("traced  " if traced else "untraced", mode, rnd), step,
                       {"traced": traced, "mode": mode, "round": rnd})


def finish_trace_overhead(path):
    """Fills ratio_traced: a traced run's req/s over the untraced run's of
    the same mode and round."""
    try:
        with open(path) as f:
            rows = [json.loads(l) for l in f if l.strip()]
    except OSError:
        return
    off = {(r["mode"], r["round"]): r["requests_per_s"] for r in rows if not r.get("traced") and "error" not in r}
    for r in rows:
        if r.get("traced") and "error" not in r:
            base = off.get((r["mode"], r["round"]))
            r["ratio_traced"] = round(r["requests_per_s"] / base, 4) if base else None
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        for r in rows:
            f.write(json.dumps(r, sort_keys=True) + "\n")
    os.replace(tmp, path)


# ---- placement: which worker wins is CPU placement (seed 002) ---------------

# The note's variants and the balancers (mutex-strict's strict turns do not
# depend on who is scheduled first, so it is left out to keep the study short).
PLACEMENT_ARMS = ["bare", "exclusive", "lt-yield", "reuseport", "fdpass", "reuseport-bpf", "handoff"]
PLACEMENT_SHAPES = [
    {"name": "oneshot", "connections": 8, "rounds_per_run": 10},
    {"name": "burst", "connections": 32, "rounds_per_run": 1},
    {"name": "ramp", "connections": 32, "gap_ms": 5, "rounds_per_run": 1},
]
PLACEMENT_RUNS = 2            # runs per placement x arm x shape (2 keeps the campaign, with the perturbation study, within 10 minutes)
PLACEMENT_ROUND_GAP_MS = 10   # between rounds: every worker is back asleep
NETNS_NET = ("10.231.0.1", "10.231.0.2")  # the server's veth end, the probe's (a /30 of our own)
_hogs = []


def placements():
    """The placements this machine can hold: every one of the note's on 2
    CPUs, and the probe on a CPU of its own where there is a third."""
    out = [
        {"name": "unpinned", "label": "nothing pinned"},
        {"name": "pinned-probe-cpu0", "label": "workers on CPUs 0 and 1, probe on CPU 0 (beside worker 0)",
         "pin_workers": "0,1", "probe_cpu": 0},
        {"name": "pinned-probe-cpu1", "label": "workers on CPUs 0 and 1, probe on CPU 1 (beside worker 1)",
         "pin_workers": "0,1", "probe_cpu": 1},
        {"name": "one-cpu", "label": "workers and probe all on CPU 0", "pin_workers": "0,0", "probe_cpu": 0},
        {"name": "hog-beside-worker0", "label": "workers on CPUs 0 and 1, a CPU hog on CPU 0, probe unpinned",
         "pin_workers": "0,1", "hog_cpu": 0},
        {"name": "hog-beside-worker1", "label": "workers on CPUs 0 and 1, a CPU hog on CPU 1, probe unpinned",
         "pin_workers": "0,1", "hog_cpu": 1},
        {"name": "probe-netns-veth", "label": "probe in a network namespace of its own, over a veth pair "
         "(not on loopback's wake path)", "netns": True},
    ]
    if len(os.sched_getaffinity(0)) > 2:
        out.insert(3, {"name": "probe-own-cpu", "label": "workers on CPUs 0 and 1, probe on CPU 2",
                       "pin_workers": "0,1", "probe_cpu": 2})
    return out


class Placement:
    """with Placement(p) as (host, probe_prefix): starts the hog, or makes the
    network namespace and veth pair; undoes it on exit."""

    def __init__(self, p):
        self.p = p
        self.hog = None
        self.ns = None

    def __enter__(self):
        if self.p.get("hog_cpu") is not None:
            self.hog = subprocess.Popen([PYTHON, "-c", "import os\nos.sched_setaffinity(0, {%d})\nwhile True: pass"
                                         % self.p["hog_cpu"]], start_new_session=True)
            _hogs.append(self.hog)
        if self.p.get("netns"):
            if not is_root():
                raise StepFailed("skipped: needs root (a network namespace and a veth pair)")
            self.ns = "acceptlab-%d" % os.getpid()
            host_if, ns_if = "alv%d" % (os.getpid() % 100000), "alp%d" % (os.getpid() % 100000)
            self.host_if = host_if
            cmds = [["ip", "netns", "add", self.ns],
                    ["ip", "link", "add", host_if, "type", "veth", "peer", "name", ns_if],
                    ["ip", "link", "set", ns_if, "netns", self.ns],
                    ["ip", "addr", "add", NETNS_NET[0] + "/30", "dev", host_if],
                    ["ip", "link", "set", host_if, "up"],
                    ["ip", "netns", "exec", self.ns, "ip", "addr", "add", NETNS_NET[1] + "/30", "dev", ns_if],
                    ["ip", "netns", "exec", self.ns, "ip", "link", "set", ns_if, "up"],
                    ["ip", "netns", "exec", self.ns, "ip", "link", "set", "lo", "up"]]
            for cmd in cmds:
                res = subprocess.run(cmd, capture_output=True, text=True)
                if res.returncode != 0:
                    self.__exit__()
                    raise StepFailed("%s: %s" % (" ".join(cmd), res.stderr.strip()[-200:]))
            return NETNS_NET[0], ["ip", "netns", "exec", self.ns]
        return "127.0.0.1", []

    def __exit__(self, *exc):
        if self.hog is not None:
            stop_hog(self.hog)
        if self.ns:
            subprocess.run(["ip", "netns", "del", self.ns], capture_output=True)
            subprocess.run(["ip", "link", "del", self.host_if], capture_output=True)  # gone with the ns, normally
            self.ns = None
        return False


def stop_hog(hog):
    try:
        os.killpg(hog.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    hog.wait()
    if hog in _hogs:
        _hogs.remove(hog)


def run_split(ready, counts):
    """Per-run counts for every worker of the ready line (zeros included):
    (split text largest first, ratio or None, starved)."""
    ns = sorted(counts.values(), reverse=True)
    return "/".join(map(str, ns)), (round(ns[0] / ns[-1], 3) if ns and ns[-1] else None), sum(n == 0 for n in ns)


def placement_runs(ready, shape, rounds):
    """Groups the probe's rounds into runs of shape["rounds_per_run"]."""
    ident = "tid" if ready.get("mode") == "threads" else "pid"
    ids = [str(w[ident]) for w in ready["workers"]]
    per = shape["rounds_per_run"]
    out = []
    for k in range(len(rounds) // per):
        chunk = rounds[k * per:(k + 1) * per]
        counts = {i: sum(r["counts"].get(i, 0) for r in chunk) for i in ids}
        split, ratio, starved = run_split(ready, counts)
        out.append({"shape": shape["name"], "run": k + 1, "rounds": per,
                    "connections": per * shape["connections"], "counts": counts, "split": split, "ratio": ratio,
                    "starved": starved, "answered": sum(r["answered"] for r in chunk),
                    "both_answered_rounds": sum(all(r["counts"].get(i, 0) > 0 for i in ids) for r in chunk)})
    return out


def placement_steps(args, raw_dir):
    arms = [a for a in (QUICK_PLACEMENT_ARMS if args.quick else PLACEMENT_ARMS) if a in args.arms]
    runs = 1 if args.quick else PLACEMENT_RUNS
    for p in placements():
        for arm in arms:
            def step(p=p, arm=arm):
                prefix = os.path.join(raw_dir, "placement-%s-%s" % (p["name"], arm))
                server_args = list(ARMS[arm]) + (["--pin-workers", p["pin_workers"]] if p.get("pin_workers") else [])
                pin = ["--pin", str(p["probe_cpu"])] if p.get("probe_cpu") is not None else []
                rows = []
                with Placement(p) as (host, wrap):
                    if host != "127.0.0.1":
                        server_args += ["--host", host]
                    with ServerRun(server_args, 2, prefix, ARM_ENV.get(arm)) as (proc, ready, path):
                        for shape in PLACEMENT_SHAPES:
                            n = runs * shape["rounds_per_run"]
                            cmd = wrap + probe_cmd(ready["port"], shape, n, path, host=host,
                                                   extra=pin + ["--round-gap-ms", str(PLACEMENT_ROUND_GAP_MS)])
                            got = run_probe(prefix + "-" + shape["name"], cmd, n)
                            rows += placement_runs(ready, shape, got)
                        if arm == "bare":
                            stop = stop_winner_run(prefix, ready, path, host, wrap, pin)
                    rc = stop_server(proc) if proc.poll() is None else proc.returncode
                for r in rows:
                    r.update({"placement": p["name"], "label": p["label"], "variant": arm,
                              "mode": ready.get("mode", "process")})
                if arm == "bare":
                    events = server_events(proc)
                    before_stop = events[:next((i for i, e in enumerate(events) if e.get("event") == "stopping"),
                                               len(events))]
                    crash = [e for e in before_stop if e.get("event") in ("reaped", "respawned", "gave_up")]
                    stop.update({"placement": p["name"], "label": p["label"], "variant": arm, "shape": "stop_winner",
                                 "exit": rc, "crash_or_respawn": len(crash),
                                 "held": stop["held"] and rc == 0 and not crash})
                    rows.append(stop)
                text = " ".join("%s %s" % (s["name"], " ".join(r["split"] for r in rows if r.get("shape") == s["name"]))
                                for s in PLACEMENT_SHAPES)
                if arm == "bare":
                    text += "; stop-winner %s" % ("held" if stop["held"] else "FAILED")
                return rows, text
            yield "%-18s %-17s" % (p["name"], arm), step, {"placement": p["name"], "variant": arm}


# ---- perturbation: the balancers outside the quiet lab --------------------

# The balancing variants and their knob-off arms, at several worker counts,
# each on ONE server whose rounds follow each other with no pause, under each
# perturbation in turn. Rounds are 16 connections per worker. The target
# (servers/load.h): within 17/15 at 2 workers, max - min <= 2 above.
PERTURBATION_ARMS = ["fdpass", "fdpass-off", "reuseport-bpf", "reuseport", "handoff", "handoff-off"]
BALANCING_TARGET_ARMS = {"fdpass", "reuseport-bpf", "handoff"}  # the knob-off arms are reported, not held
PERTURBATION_WORKERS = [2, 4, 8]
QUICK_PERTURBATION_ARMS = ["fdpass", "reuseport-bpf"]
QUICK_PERTURBATION_WORKERS = [4]
PERTURBATION_PER_WORKER = 16
PERTURBATION_SHAPE_ARGS = {"burst": [], "ramp": ["--gap-ms", "1"], "keepalive": ["--requests", "3", "--gap-ms", "1"]}
# (perturbation, [(shape, rounds), ...]): probe runs in order, each with
# --round-gap-ms 0, one right after another.
PERTURBATIONS = [
    ("fresh", [("burst", 1)]),                      # the first burst, the moment the server says ready
    ("back-to-back", [("burst", 3), ("ramp", 1), ("keepalive", 1), ("burst", 1)]),  # and the shapes mixed
    ("hogs", [("burst", 2), ("keepalive", 1)]),      # stress-ng --cpu 2 running
    ("synflood", [("burst", 1), ("burst", 1)]),      # 200 SYNs from a raw socket right before each run
    ("tracer", [("burst", 2), ("keepalive", 1)]),    # bin/acceptlab-trace attached
    ("stopped", [("burst", 1)]),                     # worker 1 SIGSTOPped for the first 300 ms (tracer on)
]
PERTURBATIONS_NEED_ROOT = {"synflood", "tracer", "stopped"}  # a raw socket, BPF: left out when not root
PERTURBATION_HOG_CPUS = 2
PERTURBATION_FLOOD_SYNS = 200
PERTURBATION_STOP_S = 0.3


def within_target(counts, workers):
    """One round against the target: 17/15 at 2 workers (16 per worker), max - min <= 2 above."""
    ns = sorted(list(counts) + [0] * (workers - len(counts)), reverse=True)
    if not ns:
        return False
    return ns[0] - ns[-1] <= 2


def established_by_index(port, ready):
    """The server's ESTABLISHED sockets on port, from sock_diag (ss): (total,
    [per worker index] where the owning process is a worker; None in threads
    mode, where every worker is the one process)."""
    out = subprocess.run(["ss", "-tnpH", "state", "established", "( sport = :%d )" % port],
                         capture_output=True, text=True).stdout
    index_of = {w["pid"]: w["index"] for w in ready["workers"]}
    per, total = [0] * len(ready["workers"]), 0
    for line in out.splitlines():
        total += 1
        owners = {index_of[int(p)] for p in re.findall(r"pid=(\d+)", line) if int(p) in index_of}
        if len(owners) == 1:
            per[owners.pop()] += 1
    return total, None if ready.get("mode") == "threads" else per


def counter_sample(port, ready):
    """Each worker's load as GET /variant shows it (less the SYNs still in
    their window, given apart as syn_window), beside the truth: the server's
    ESTABLISHED sockets from sock_diag (ss), per worker process in process
    mode (the whole server in threads mode), plus the asking connection.
    error: the largest difference (the total's, in threads mode). None for
    an arm that keeps no counters."""
    try:
        data = peers.get_close(port, "/variant", 5)
        head, _, body = data.partition(b"\r\n\r\n")
        state = json.loads(body)
        asker = int(re.search(rb"X-Worker: (\d+)", head).group(1))
    except (OSError, ValueError, AttributeError):
        return None
    if "slots" not in state:
        return None
    n = len(ready["workers"])
    counted, syn = [0] * n, 0
    for slot in state["slots"]:
        # SYNs steered and not yet established (reuseport-bpf) are counted
        # by design until they are, or for under 1 s: reported apart.
        counted[slot["index"]] += slot["load"] - slot.get("syn", 0)
        syn += slot.get("syn", 0)
    total, truth = established_by_index(port, ready)
    if truth is None:
        return {"accounting": state.get("accounting"), "counted": counted, "truth": None, "syn_window": syn,
                "error": abs(sum(counted) - total - 1)}
    truth[asker] += 1
    return {"accounting": state.get("accounting"), "counted": counted, "truth": truth, "syn_window": syn,
            "error": max(abs(c - t) for c, t in zip(counted, truth))}


class StressHogs:
    """with StressHogs(n): stress-ng --cpu n for the block's length."""

    def __init__(self, n):
        self.n = n

    def __enter__(self):
        if not shutil.which("stress-ng"):
            raise StepFailed("stress-ng is missing (make deps installs it)")
        self.proc = subprocess.Popen(["stress-ng", "--cpu", str(self.n), "--quiet"], start_new_session=True,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _hogs.append(self.proc)
        time.sleep(0.3)  # the hogs are on the CPUs before the first round
        if self.proc.poll() is not None:
            stop_hog(self.proc)
            raise StepFailed("stress-ng --cpu %d exited %s at once" % (self.n, self.proc.returncode))
        return self

    def __exit__(self, *exc):
        stop_hog(self.proc)
        return False


def perturbation_run(prefix, ready, path, shape_name, rounds, workers):
    """One probe run of rounds x shape at 16 connections per worker, no pause between rounds."""
    shape = {"name": shape_name, "connections": PERTURBATION_PER_WORKER * workers}
    cmd = probe_cmd(ready["port"], shape, rounds, path,
                    extra=["--round-gap-ms", "0"] + PERTURBATION_SHAPE_ARGS[shape_name])
    return run_probe(prefix, cmd, rounds)


def tracer_why(trace, ready):
    """Per worker index, from the tracer: accepts won and wakeups."""
    index_of = {w["tid"]: w["index"] for w in ready["workers"]}
    per = {}
    for t in (o for o in trace if o.get("type") == "worker"):
        i = index_of.get(t["tid"])
        if i is not None:
            per[i] = {"won": t.get("won", 0), "wakeups": t.get("wakeups", 0)}
    return [per.get(i, {"won": 0, "wakeups": 0}) for i in range(len(ready["workers"]))]


def perturbation_steps(args, raw_dir):
    arms = [a for a in (QUICK_PERTURBATION_ARMS if args.quick else PERTURBATION_ARMS) if a in args.arms]
    for workers in (QUICK_PERTURBATION_WORKERS if args.quick else PERTURBATION_WORKERS):
        for arm in arms:
            def step(arm=arm, workers=workers):
                prefix = os.path.join(raw_dir, "perturbation-%s-w%d" % (arm, workers))
                rows = []
                with ServerRun(ARMS[arm], workers, prefix, ARM_ENV.get(arm)) as (proc, ready, path):
                    threads = ready.get("mode") == "threads"
                    for name, runs in PERTURBATIONS:
                        if name == "stopped" and threads:
                            continue  # SIGSTOP stops every thread of the process
                        if name in PERTURBATIONS_NEED_ROOT and not is_root():
                            continue  # the report shows "-" for it
                        rows += perturbation_one(prefix, proc, ready, path, workers, name, runs)
                for r in rows:
                    r.update({"variant": arm, "workers": workers, "mode": ready.get("mode", "process"),
                              "target_held": arm in BALANCING_TARGET_ARMS})
                bad = [r for r in rows if not r["within_target"]]
                errs = [r["counter_error"] for r in rows if r.get("counter_error") is not None]
                text = "%d of %d rounds within the target" % (len(rows) - len(bad), len(rows))
                if bad:
                    text += " (outside: %s)" % ", ".join("%s %s" % (r["perturbation"], r["split"]) for r in bad[:4])
                if errs:
                    text += "; counter error at most %d" % max(errs)
                return rows, text
            yield "%-14s %dw" % (arm, workers), step, {"variant": arm, "workers": workers, "perturbation": None}


def perturbation_one(prefix, proc, ready, path, workers, name, runs):
    """The probe runs of one perturbation: rows, one per round."""
    rows, seq = [], 0
    tracer = trace = hogs = None
    try:
        if name in ("tracer", "stopped"):
            tracer = Tracer(proc.pid, "%s-%s" % (prefix, name))
        if name == "hogs":
            hogs = StressHogs(PERTURBATION_HOG_CPUS).__enter__()
        for k, (shape, rounds) in enumerate(runs, 1):
            run_prefix = "%s-%s-%d-%s" % (prefix, name, k, shape)
            note = None
            if name == "synflood":
                synflood.flood("127.0.0.1", ready["port"], PERTURBATION_FLOOD_SYNS, first_port=20000 + 1000 * k)
                note = "%d SYNs right before" % PERTURBATION_FLOOD_SYNS
            timer = None
            if name == "stopped":
                victim = ready["workers"][1]["pid"]
                os.kill(victim, signal.SIGSTOP)
                timer = threading.Timer(PERTURBATION_STOP_S, os.kill, (victim, signal.SIGCONT))
                timer.start()
                note = "worker 1 SIGSTOPped for the first %d ms" % (PERTURBATION_STOP_S * 1000)
            try:
                got = perturbation_run(run_prefix, ready, path, shape, rounds, workers)
            finally:
                if timer:
                    timer.cancel()
                    os.kill(ready["workers"][1]["pid"], signal.SIGCONT)
            sample = counter_sample(ready["port"], ready)
            for r in got:
                seq += 1
                r = dict(r, perturbation=name, run=k, round=seq,
                         within_target=within_target(list(r["counts"].values()), workers))
                if note:
                    r["note"] = note
                if sample:
                    r.update({"accounting": sample["accounting"], "counted": sample["counted"],
                              "truth": sample["truth"], "counter_error": sample["error"],
                              "syn_window": sample["syn_window"]})
                rows.append(r)
    finally:
        if hogs:
            hogs.__exit__()
        if tracer:
            trace = tracer.stop()
    if trace is not None:
        why = tracer_why(trace, ready)
        for r in rows:
            r["tracer"] = why  # over the perturbation's runs
    return rows


def stop_winner_run(prefix, ready, path, host, wrap, pin):
    """The fairness-free assertion: 10 x 8 oneshot rounds, then the probe
    SIGSTOPs the worker that answered most and runs them again: the other
    must answer all 80; the server is stopped (SIGTERM) by the caller."""
    shape = {"name": "oneshot", "connections": 8}
    cmd = wrap + probe_cmd(ready["port"], shape, 10, path, host=host,
                           extra=pin + ["--round-gap-ms", str(PLACEMENT_ROUND_GAP_MS), "--stop-winner"])
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise StepFailed("probe --stop-winner did not finish within %d s" % PROBE_TIMEOUT_S)
    save_probe(prefix + "-stop-winner", cmd, res)
    sums = [json.loads(l) for l in res.stdout.splitlines() if l.startswith("{") and '"summary"' in l]
    after = next((s for s in sums if s.get("stopped")), None)
    if after is None:
        return {"held": False, "why": (res.stderr.strip() or "no summary with a stopped worker")[-200:]}
    stopped = str(after["stopped"])
    other = sum(n for who, n in after["counts"].items() if who != stopped)
    return {"held": res.returncode == 0 and other == after["connections"] * after["rounds"]
            and after["counts"].get(stopped, 0) == 0,
            "stopped_pid": after["stopped"], "other_answered": other,
            "of": after["connections"] * after["rounds"], "stopped_answered": after["counts"].get(stopped, 0),
            "before": sums[0]["split"] if sums else None, "probe_exit": res.returncode}


MODELS = os.path.join(ROOT, "models", "skew.py")


def models_steps(args, raw_dir):
    """models/skew.py campaign: reuseport-model and exclusive-model measured,
    the analytic and simulated predictions, each row predicted vs measured;
    it reads this run's balancing.jsonl and trace.jsonl (written by then)."""
    def step():
        run_dir = os.path.dirname(raw_dir)
        out = os.path.join(raw_dir, "models")
        cmd = [PYTHON, MODELS, "campaign", "--out", out] + (["--quick"] if args.quick else [])
        for name, flag in (("balancing.jsonl", "--balancing"), ("trace.jsonl", "--trace")):
            if os.path.exists(os.path.join(run_dir, name)):
                cmd += [flag, os.path.join(run_dir, name)]
        try:
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        except subprocess.TimeoutExpired:
            raise StepFailed("models did not finish within 600 s")
        with open(os.path.join(raw_dir, "models.stdout"), "w") as f:
            f.write(res.stdout)
        with open(os.path.join(raw_dir, "models.stderr"), "w") as f:
            f.write(res.stderr)
        if res.returncode != 0:
            raise StepFailed("models/skew.py campaign exited %d: %s"
                             % (res.returncode, " ".join(res.stderr.split())[-200:]))
        with open(os.path.join(out, "models.jsonl")) as f:
            rows = [json.loads(l) for l in f if l.strip()]
        return rows, "%d model rows" % len(rows)
    yield "skew.py campaign%s" % (" --quick" if args.quick else ""), step, {"model": None}


def pytest_verdicts(text):
    """{test id: PASSED | FAILED | ERROR} from pytest -rA's summary lines
    ("PASSED <id>", "FAILED <id> - <message>"); an id may hold spaces (a
    parameter such as "bare --threads 2")."""
    verdict = {}
    for line in text.splitlines():
        word, _, rest = line.partition(" ")
        if word in ("PASSED", "FAILED", "ERROR") and "::" in rest:
            verdict[rest.split(" - ", 1)[0].strip()] = word
    return verdict


def faults_steps(args, raw_dir):
    """The fault cases, run by their own tests (accept sharing's in
    tests/test_fdpass.py, running out of descriptors in tests/test_emfile.py,
    -k fault): one implementation is both the test and the measurement.
    Each test records what it observed before it asserts, and pytest's own
    report of it writes the row to ACCEPTLAB_FAULTS_OUT with its verdict
    (tests/faults.py), so a case that failed, even before it recorded
    anything, is a row saying so. A test pytest reported that left no row
    is added as failed."""
    if "fdpass" not in args.arms:
        return

    def step():
        observed = os.path.join(raw_dir, "faults.observed.jsonl")
        if os.path.exists(observed):
            os.unlink(observed)
        cmd = [PYTHON, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider",
               os.path.join(ROOT, "tests", "test_fdpass.py"), os.path.join(ROOT, "tests", "test_emfile.py"),
               "-k", QUICK_FAULTS if args.quick else "fault"]
        try:
            res = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=600,
                                 env=dict(os.environ, ACCEPTLAB_FAULTS_OUT=observed))
        except subprocess.TimeoutExpired:
            raise StepFailed("the fault tests did not finish within 600 s")
        with open(os.path.join(raw_dir, "faults.pytest.txt"), "w") as f:
            f.write(res.stdout + res.stderr)
        verdict = pytest_verdicts(res.stdout)
        try:
            with open(observed) as f:
                rows = [json.loads(l) for l in f if l.strip()]
        except OSError:
            raise StepFailed("the fault tests recorded nothing: %s" % res.stdout.strip()[-200:])
        tests = {row.pop("test", "") for row in rows}
        for test, word in sorted(verdict.items()):
            if test not in tests:
                rows.append({"case": test, "expected": "(its row is missing)", "held": False,
                             "observed": "pytest said %s, and the test wrote no row" % word})
        held = sum(r["held"] is True for r in rows)
        skipped = sum(r["held"] is None for r in rows)
        return rows, "%d of %d invariants held%s" % (held, len(rows) - skipped,
                                                     ", %d skipped" % skipped if skipped else "")
    yield "%-17s fault cases" % "fdpass", step, {"case": "all", "expected": "", "observed": ""}


def peers_steps(args, raw_dir):
    """One step per peer configuration, measured by peers.measure_one (as
    `peers.py measure` does): a peer that cannot be had is an "unavailable"
    row with the reason; one that fails keeps the rows it made."""
    for name in args.peers:
        def step(name=name):
            rows = []
            status, texts = peers.measure_one(name, args.rounds, args.peers_trace,
                                              os.path.join(raw_dir, "peers-" + name), rows.append)
            if status == "failed":
                raise StepFailed("; ".join(texts), rows)
            return rows, "; ".join(texts)
        yield name, step, {"kind": "error", "peer": name}


STUDY_STEPS = {
    "balancing": balancing_steps,
    "respawn": respawn_steps,
    "reload": reload_steps,
    "mutex_delay": mutex_delay_steps,
    "slowview": slowview_steps,
    "cost": cost_steps,
    "payoff": payoff_steps,
    "faults": faults_steps,
    "timeline": timeline_steps,
    "placement": placement_steps,
    "models": models_steps,
    "trace_overhead": trace_overhead_steps,
    "peers": peers_steps,
    "perturbation": perturbation_steps,
}
# Run once every step of a study is done (with the study's file path).
STUDY_FINISH = {
    "cost": finish_cost,
    "trace_overhead": finish_trace_overhead,
}


def shape_label(shape):
    if shape["name"] == "keepalive":
        return "keepalive %dx%d" % (shape["connections"], shape["requests"])
    return "%s %d" % (shape["name"], shape["connections"])


def plan_steps(args, raw_dir):
    """Every step the campaign runs, in order: [(study, label, function,
    error row keys), ...]."""
    return [(study, label, fn, err_keys) for study in args.studies
            for label, fn, err_keys in STUDY_STEPS[study](args, raw_dir)]


def skipped_for_root(label, root):
    """True when a step is skipped before it runs: an arm that loads a BPF
    program, when not root."""
    return not root and any(a in label.split() for a in NEEDS_ROOT)


def print_plan(args):
    """--plan: one line per step the campaign would run (study and label, in
    order), and which of them are skipped when not root. ACCEPTLAB_PLAN_AS_USER=1
    shows the plan as a user who is not root would get it."""
    root = is_root() and not os.environ.get("ACCEPTLAB_PLAN_AS_USER")
    for study, label, _, _ in plan_steps(args, os.path.join(args.results_dir, "<stamp>", "raw")):
        print("%-11s %s%s" % (study, label, "   (skipped: needs root)" if skipped_for_root(label, root) else ""))


def run_steps(args, run_dir, raw_dir):
    """Runs every study's steps with progress lines; returns the failures."""
    plan = plan_steps(args, raw_dir)
    files = {study: open(os.path.join(run_dir, study + ".jsonl"), "w") for study in args.studies}
    t0 = time.monotonic()
    failures = 0
    try:
        for i, (study, label, fn, err_keys) in enumerate(plan, 1):
            if skipped_for_root(label, is_root()):
                result = "SKIPPED: needs root (loads a BPF program)"
                rows = [dict(err_keys, error="skipped: needs root (CAP_BPF)")]
                failures += 1
            else:
                try:
                    rows, result = fn()
                except (StepFailed, OSError, ValueError, KeyError) as e:
                    failures += 1
                    rows = getattr(e, "rows", None) or [dict(err_keys, error=str(e))]
                    result = "FAILED: %s" % e
            for row in rows:
                files[study].write(json.dumps(row, sort_keys=True) + "\n")
            files[study].flush()
            elapsed = time.monotonic() - t0
            print("[%3d/%d] %-11s %-32s %s   (%.0fs elapsed, ETA %.0fs)"
                  % (i, len(plan), study, label, result, elapsed, elapsed / i * (len(plan) - i)), flush=True)
    finally:
        for f in files.values():
            f.close()
    return failures, len(plan)


def main():
    ap = argparse.ArgumentParser(description="Run the acceptlab campaign and write results/linux/<stamp>/.")
    ap.add_argument("--platform", help="only 'linux' is supported (required)")
    ap.add_argument("--quick", action="store_true", help="one round per cell (a smoke run)")
    ap.add_argument("--rounds", type=int, default=None, help="rounds (trials) per cell (default 3, 1 with --quick)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--variants", help="comma-separated arms (default: all; with --quick: %s)" % ",".join(QUICK_ARMS))
    ap.add_argument("--studies", default=",".join(STUDIES), help="comma-separated (default: all)")
    ap.add_argument("--bench-arms",
                    help="arms the wrk studies (cost, payoff) run, or 'all' for every arm in --variants "
                         "(default: cost %s; payoff %s; make bench: all); the anchor %s runs in cost only, "
                         "by default or when named"
                    % (",".join(COST_ARMS), ",".join(PAYOFF_ARMS), ",".join(ANCHOR_ARMS)))
    ap.add_argument("--peers", help="comma-separated peer configurations for the peers study (default: all: %s; "
                                    "with --quick: %s)" % (",".join(peers.PEERS), ",".join(QUICK_PEERS)))
    ap.add_argument("--results-dir", default=os.path.join(ROOT, "results", "linux"))
    ap.add_argument("--no-canonical", action="store_true", help="do not point CANONICAL at this run")
    ap.add_argument("--no-trace", action="store_true",
                    help="do not run bin/acceptlab-trace beside the balancing rounds and the peers "
                         "(it runs when root)")
    ap.add_argument("--respawn-trial", metavar="ARM", help=argparse.SUPPRESS)  # internal: one trial
    ap.add_argument("--reload-trial", metavar="ARM", help=argparse.SUPPRESS)  # internal: one trial
    ap.add_argument("--migrate", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--spawn", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--raw-prefix", help=argparse.SUPPRESS)
    ap.add_argument("--plan", action="store_true",
                    help="print the steps the campaign would run (study and label, in order) and exit")
    # wrk's -d for cost and payoff (tests use 1; the close gap is capped at it)
    ap.add_argument("--bench-rounds", type=int, metavar="N",
                    help="rounds of the wrk studies (cost, payoff, trace_overhead) (default %d, 1 with --quick; "
                         "make bench: 3)" % BENCH_ROUNDS)
    ap.add_argument("--bench-seconds", type=int, metavar="S",
                    help="wrk duration per cost/payoff run (default %d, %d with --quick; make bench: 6)"
                    % (BENCH_SECONDS, BENCH_QUICK_SECONDS))
    args = ap.parse_args()

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    if args.respawn_trial or args.reload_trial:
        # Runs inside `unshare -n`: bring loopback up, then one trial.
        subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
        try:
            if args.respawn_trial:
                row = respawn_trial(args.respawn_trial, args.migrate, args.raw_prefix)
            else:
                row = reload_trial(args.reload_trial, args.migrate, args.spawn, args.raw_prefix)
            print(json.dumps(row, sort_keys=True))
        except StepFailed as e:
            die(str(e), 1)
        finally:
            stop_all()
        return 0

    if args.platform is None:
        die("--platform: required; the supported platform is linux")
    if args.platform != "linux":
        die("--platform %s: not supported; the supported platform is linux" % args.platform)
    if args.variants is None:
        args.variants = ",".join(QUICK_ARMS if args.quick else [a for a in ARMS if a not in USER_ACCOUNTING_ARMS])
    args.arms = [v for v in args.variants.split(",") if v]
    unknown = [v for v in args.arms if v not in ARMS]
    if unknown or not args.arms:
        die("--variants %s: unknown; valid: %s" % (",".join(unknown) or "(empty)", ", ".join(ARMS)))
    args.bench_all = args.bench_arms == "all"
    if args.bench_all:
        args.cost_arms = args.payoff_arms = list(args.arms)
    elif args.bench_arms is None:
        args.cost_arms = [a for a in (QUICK_COST_ARMS if args.quick else COST_ARMS)
                          if a in args.arms or a in ANCHOR_ARMS
                          or (a in USER_ACCOUNTING_ARMS and ARMS[a][1] in {ARMS[b][1] for b in args.arms})]
        args.payoff_arms = [a for a in (QUICK_PAYOFF_ARMS if args.quick else PAYOFF_ARMS) if a in args.arms]
    else:
        named = [a for a in args.bench_arms.split(",") if a]
        unknown = [a for a in named if a not in ARMS and a not in ANCHOR_ARMS]
        if unknown or not named:
            die("--bench-arms %s: unknown; valid: all, %s" % (",".join(unknown) or "(empty)",
                                                             ", ".join(list(ARMS) + list(ANCHOR_ARMS))))
        args.cost_arms = [a for a in named if a in args.arms or a in ANCHOR_ARMS]
        args.payoff_arms = [a for a in named if a in args.arms]
    if args.peers is None:
        args.peers = list(QUICK_PEERS if args.quick else peers.PEERS)
    else:
        args.peers = [p for p in args.peers.split(",") if p]
        unknown = [p for p in args.peers if p not in peers.PEERS]
        if unknown or not args.peers:
            die("--peers %s: unknown; valid: %s" % (",".join(unknown) or "(empty)", ", ".join(peers.PEERS)))
    args.studies = [s for s in args.studies.split(",") if s]
    unknown = [s for s in args.studies if s not in STUDIES]
    if unknown or not args.studies:
        die("--studies %s: unknown; valid: %s" % (",".join(unknown) or "(empty)", ", ".join(STUDIES)))
    if args.rounds is None:
        args.rounds = 1 if args.quick else 3
    if not 1 <= args.rounds <= 100:
        die("--rounds %d: expected 1..100" % args.rounds)
    if args.bench_rounds is None:
        args.bench_rounds = 1 if args.quick else BENCH_ROUNDS
    if not 1 <= args.bench_rounds <= 100:
        die("--bench-rounds %d: expected 1..100" % args.bench_rounds)
    if not 1 <= args.workers <= 64:
        die("--workers %d: expected 1..64" % args.workers)
    if args.bench_seconds is not None and not 1 <= args.bench_seconds <= 600:
        die("--bench-seconds %d: expected 1..600" % args.bench_seconds)
    if args.plan:
        print_plan(args)
        return 0
    for exe in (SERVER, PROBE):
        if not os.access(exe, os.X_OK):
            die("%s is missing: run make first" % exe)
    if not is_root():
        print("campaign: not root: skipping what needs it (reuseport-bpf, the respawn study's network "
              "namespaces); those steps are recorded as skipped; the perturbation study leaves out the SYN "
              "flood, the tracer and the stopped worker, and fdpass and handoff count their load in user "
              "space", flush=True)

    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    args.trace = False
    if "balancing" in args.studies and not args.no_trace:
        if not is_root():
            print("campaign: not root: the balancing rounds run without the tracer (trace.jsonl is not "
                  "written)", flush=True)
        elif not os.access(TRACER, os.X_OK):
            die("%s is missing: run make first (or --no-trace)" % TRACER)
        else:
            args.trace = True
    args.peers_trace = False
    if "peers" in args.studies:
        args.peers_trace, why_not = peers.tracing(args.no_trace)
        if why_not:
            print("campaign: the peers run without the tracer: %s" % why_not, flush=True)
    run_dir = os.path.join(args.results_dir, stamp)
    args.trace_path = os.path.join(run_dir, "trace.jsonl")
    raw_dir = os.path.join(run_dir, "raw")
    os.makedirs(raw_dir, exist_ok=True)
    with open(os.path.join(run_dir, "meta.json"), "w") as f:
        json.dump(meta_for(stamp, args), f, indent=2, sort_keys=True)
        f.write("\n")

    print("campaign: run %s: studies %s; %d arms, %d rounds, %d workers -> %s"
          % (stamp, ", ".join(args.studies), len(args.arms), args.rounds, args.workers, run_dir), flush=True)
    t0 = time.monotonic()
    try:
        failures, steps = run_steps(args, run_dir, raw_dir)
    except KeyboardInterrupt:
        stop_all()
        die("interrupted; partial results in %s" % run_dir, 130)
    finally:
        stop_all()
        for study in args.studies:
            if study in STUDY_FINISH:
                STUDY_FINISH[study](os.path.join(run_dir, study + ".jsonl"))

    if not args.no_canonical:
        with open(os.path.join(args.results_dir, "CANONICAL"), "w") as f:
            f.write(stamp + "\n")
    print("campaign: done in %.0fs, %d of %d steps failed or skipped; results in %s"
          % (time.monotonic() - t0, failures, steps, run_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
