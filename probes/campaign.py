"""campaign.py: the campaign driver behind `make measure PLATFORM=linux`.

Runs the studies (one module each under probes/studies/, over the arms of
acceptlab/arms.py) and writes results/linux/<UTC stamp>/: meta.json, one JSON
Lines file per study, and every tool's verbatim output under raw/. The
studies, in the order they run:

  balancing      at each worker count N (--worker-counts, default
                 %(balancing_workers)s), shapes of 16 connections per worker (at 2:
                 %(shapes)s): at --workers every arm x shape, one
                 fresh server per cell, the probe asking /pid on every
                 connection for R rounds (--rounds); at every other N the
                 arms users serve with, one server each taking the shapes
                 back-to-back, %(wide_rounds)d rounds each -> balancing.jsonl; as
                 root the tracer beside each fresh cell -> trace.jsonl
  perturbation   the balancers and their knob-off arms, one server each at
                 each worker count (%(perturbation_workers)s), rounds with no pause
                 under one perturbation after another, the load counters
                 beside the truth from sock_diag -> perturbation.jsonl;
                 perturbations: %(perturbations)s
  timeline       one oneshot round per arm with the tracer's --timeline:
                 each connection's story -> timeline.jsonl
  placement      which worker wins under each CPU placement (pinned, one CPU,
                 a hog beside a worker, the probe in a network namespace),
                 oneshot, burst and ramp; bare's stop-winner check; at 4
                 and 8 workers nothing pinned and a hog beside worker 0
                 -> placement.jsonl
  models         -m models.skew campaign: the mechanism models measured and
                 predicted, beside this run's balancing rows -> models.jsonl
  respawn        a worker SIGSTOPped, a burst queued, the worker SIGKILLed:
                 connections reset, time until the replacement serves
                 -> respawn.jsonl (one line per trial)
  mutex_delay    nginx's accept mutex at each --accept-mutex-delay (ms:
                 %(mutex_delays)s): the burst's split and first-byte latency
                 -> mutex_delay.jsonl
  slowview       a client keeps one worker busy in a slow view
                 (/sleep?ms=%(slowview_ms)d) while bursts arrive: first-byte latency
                 per arm -> slowview.jsonl
  faults         the fault cases, run by their own tests (tests/test_fdpass.py,
                 tests/test_emfile.py, -k fault) -> faults.jsonl
  cost           wrk on GET %(cost_path)s, keep-alive and Connection: close, the
                 cost arms at 2 workers (bare's A/A twin bare-aa among
                 them), one block per mode: rounds, each on new servers,
                 in a shuffled order, every run at the same time as
                 one of bare's (--cost-method);
                 the server's CPU time per request, req/s, p50/p99, ratios
                 to bare at the run's moment, to the knob-off, the reference
                 and the process-mode arm -> cost.jsonl (the anchor arm
                 "nginx" runs the peers' nginx-default configuration in the
                 same block); wrk: %(cost_wrk)s
  throughput     req/s with the server as the limit: bare, bare-aa,
                 exclusive-reorder and nginx on keep-alive as cost runs them,
                 each server's processes held to %(throughput_quota)g of one CPU (a
                 cgroup), so the client is not what limits the req/s
                 -> throughput.jsonl
  payoff         wrk keep-alive on GET %(payoff_path)s (CPU-bound) at each
                 connection count (%(payoff_connections)s): bare at 1 worker (the
                 baseline) and every payoff arm at each worker count
                 (%(payoff_workers)s) -> payoff.jsonl
  burst          bursts of K new connections each asking GET %(burst_path)s once,
                 K = %(burst_per)s x N at N = %(burst_workers)s workers, %(burst_rounds)d bursts
                 per K on one fresh server per arm x N: each burst's completion
                 time, every request's latency and who served it -> burst.jsonl
                 (the anchor arm "nginx" runs the peers' nginx-work configuration)
  trace_overhead wrk against bare as cost runs it, one continuous load per
                 run on a new server, the tracer or the diagnosis's passive
                 watch (or its hooks alone, each program returning at once)
                 loaded and switched off and on every %(toggle_window)s s, or nothing
                 switched (the A/A pair): what each costs the server, on
                 windows over off ones; then one run per watcher with the
                 kernel's BPF statistics on: each program's events per
                 request and ns per event -> trace_overhead.jsonl
  profile        where the CPU goes on keep-alive GET %(cost_path)s: bare and nginx at
                 %(profile_workers)d workers, perf record (cpu-clock, %(profile_hz)d Hz) over one
                 wrk run (%(profile_seconds)d s) and perf stat of the syscall tracepoints
                 over another (%(stat_seconds)d s): top symbols by self share, syscalls
                 per request, CPU us per request -> profile.jsonl
  peers          nginx, HAProxy and a Node.js cluster, measured exactly as
                 `-m probes.peers.peers measure` does -> peers.jsonl
  diagnosis      bin/acceptlab-diagnose against each server's own record: our
                 arms at %(diagnosis_workers)s workers and the peers, each diagnosed
                 active (--load burst) and passive (--duration, the study's burst),
                 its mechanism beside the configuration and each worker's served
                 count beside the /pid answers, nginx's access log or HAProxy's
                 thread numbers -> diagnosis.jsonl
  reload         every worker replaced (one SIGHUP at each of %(reload_at)s s)
                 under keep-alive and Connection: close wrk loads at once
                 (%(reload_wrk)s each): requests lost -> reload.jsonl

Payoff's wrk runs last half of --bench-seconds (default %(bench_seconds)ds, %(bench_quick_seconds)ds with --quick; at
least 1 s), for --bench-rounds rounds (default %(bench_rounds)d, 1 with --quick).
Cost runs wrk for %(cost_seconds)s (--cost-seconds), trace_overhead for
%(toggle_pairs)d on windows a run (%(toggle_quick_pairs)d with --quick), the server's threads and wrk pinned to
separate CPUs; %(cost_rounds)d rounds for cost, %(trace_rounds)d for
trace_overhead (--bench-rounds overrides, 2 with --quick). make bench (--bench-within, --bench-max-rounds) repeats cost's and trace_overhead's rounds
until every CPU ratio's 95 %% interval is within the bound, or the cap.

--quick keeps every study to one round over fewer arms (arms.py's "quick"
words); --plan prints the steps without running them. A failed step is
recorded in its study's file with the reason and the campaign goes on.
Every server runs in its own process group and is stopped (SIGTERM, then
SIGKILL of the group) when its step ends; whatever a step started is stopped
after it fails and on Ctrl-C or SIGTERM (probes/harness/lifecycle.py's clean-up registry).
"""

import sys

if __name__ == "__main__" and not __package__:  # run by path: the packages it imports are not found
    sys.stderr.write("campaign.py: run it as a module from the repository's top: "
                     "/usr/bin/python3 -m probes.campaign\n")
    sys.exit(2)

import argparse
import dataclasses
import datetime
import json
import os
import platform
import shutil
import subprocess
import time

from acceptlab import arms
from acceptlab.paths import ROOT
from probes.harness.lifecycle import StepFailed, die, handle_signals, is_root, stop_all
from probes.harness.probe import PROBE
from probes.harness import toggling
from probes.harness.servers import SERVER
from probes.harness.tracer import TRACER
from probes.harness.wrk import WRK, WRK_THREADS
from probes.peers import peers
from probes.plan import BENCH_MAX_ROUNDS, BENCH_QUICK_SECONDS, BENCH_ROUNDS, BENCH_SECONDS, RESULTS_DIR, Plan
from probes.studies import (balancing, burst, census, cost, diagnosis, faults, models, mutex_delay, payoff,
                            perturbation, placement, profile, reload, respawn, slowview, throughput, timeline,
                            trace_overhead)
from probes.studies import peers as peers_study
from probes.studies.common import read_sysctl

# The studies, in the order they run (each module's NAME is its study's name).
STUDY = {m.NAME: m for m in (balancing, perturbation, timeline, placement, models, respawn, mutex_delay, slowview,
                             faults, cost, throughput, payoff, burst, trace_overhead, profile, peers_study, diagnosis,
                             census, reload)}
STUDIES = list(STUDY)
# What a campaign runs without --studies: every study but those that say
# NOT_BY_DEFAULT (the peers study: the census diagnoses its servers).
DEFAULT_STUDIES = [n for n in STUDIES if not getattr(STUDY[n], "NOT_BY_DEFAULT", False)]
QUICK_ARMS = arms.in_study("quick")
NEEDS_ROOT = arms.needing_root()  # loads a BPF program (CAP_BPF)
# The studies whose arms --bench-arms chooses, and the names it accepts
# beyond the table's (the studies' anchors: servers nobody here wrote).
BENCH_STUDIES = [n for n in STUDIES if getattr(STUDY[n], "TAKES_BENCH_ARMS", False)]
ANCHORS = list(dict.fromkeys(a for m in STUDY.values() for a in getattr(m, "ANCHOR_ARMS", {})))

# The docstring's durations, counts and paths, from the studies' constants.
__doc__ = (__doc__ or "") % {
    "shapes": ", ".join(STUDY["balancing"].shape_label(s) for s in STUDY["balancing"].SHAPES),
    "balancing_workers": ", ".join(map(str, STUDY["balancing"].BALANCING_WORKERS)),
    "wide_rounds": STUDY["balancing"].WIDE_ROUNDS,
    "perturbation_workers": ", ".join(map(str, STUDY["perturbation"].PERTURBATION_WORKERS)),
    "perturbations": ", ".join(n for n, _ in STUDY["perturbation"].PERTURBATIONS),
    "mutex_delays": ", ".join(map(str, STUDY["mutex_delay"].MUTEX_DELAYS_MS)),
    "slowview_ms": STUDY["slowview"].SLOWVIEW_SLEEP_MS,
    "cost_path": STUDY["cost"].COST_PATH,
    "cost_wrk": "-t%d, -c%d keep-alive and -c%d Connection: close" % (
        WRK_THREADS, STUDY["cost"].COST_CONNECTIONS["keepalive"], STUDY["cost"].COST_CONNECTIONS["close"]),
    "payoff_path": STUDY["payoff"].PAYOFF_PATH,
    "payoff_connections": ", ".join(map(str, STUDY["payoff"].PAYOFF_CONNECTIONS)),
    "payoff_workers": ", ".join(map(str, STUDY["payoff"].PAYOFF_WORKERS)),
    "burst_path": STUDY["burst"].BURST_PATH,
    "burst_per": " and ".join(map(str, STUDY["burst"].BURST_PER_WORKER)),
    "burst_workers": ", ".join(map(str, STUDY["burst"].BURST_WORKERS)),
    "burst_rounds": STUDY["burst"].BURST_ROUNDS,
    "reload_at": ", ".join(map(str, STUDY["reload"].RELOAD_AT_S)),
    "diagnosis_workers": " and ".join(map(str, STUDY["diagnosis"].DIAGNOSIS_WORKERS)),
    "reload_wrk": "-d%ds" % STUDY["reload"].RELOAD_SECONDS,
    "profile_workers": STUDY["profile"].PROFILE_WORKERS, "profile_hz": STUDY["profile"].PROFILE_HZ,
    "profile_seconds": STUDY["profile"].PROFILE_SECONDS, "stat_seconds": STUDY["profile"].STAT_SECONDS,
    "bench_seconds": BENCH_SECONDS, "bench_quick_seconds": BENCH_QUICK_SECONDS,
    "bench_rounds": BENCH_ROUNDS,
    "cost_seconds": "%(keepalive)d s keep-alive and %(close)d s Connection: close" % STUDY["cost"].COST_SECONDS, "cost_rounds": STUDY["cost"].COST_ROUNDS,
    "trace_rounds": STUDY["trace_overhead"].TRACE_ROUNDS,
    "toggle_window": "%g" % toggling.WINDOW_S, "toggle_pairs": toggling.PAIRS,
    "toggle_quick_pairs": toggling.QUICK_PAIRS,
    "throughput_quota": STUDY["throughput"].THROUGHPUT_QUOTA,
}


def run_text(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def read_text(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def dpkg_version(package):
    return run_text(["dpkg-query", "-W", "-f=${Version}", package]) or None


def wrk_version():
    """`wrk -v` prints its version line (and exits 1): "debian/4.1.0-3+b2 [epoll]"."""
    exe = shutil.which(WRK)
    if not exe:
        return "not installed"
    line = (run_text([exe, "-v"]).splitlines() or ["unknown"])[0]
    return line.split(" Copyright")[0].replace("wrk ", "", 1).strip() or "unknown"


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


def peer_software(plan):
    """The peers' software versions, when the run starts any of them (the
    configurations each study's peer_configs(plan) names)."""
    names = [n for study in plan.studies if hasattr(STUDY[study], "peer_configs")
             for n in STUDY[study].peer_configs(plan)]
    found = {}
    for software in dict.fromkeys(peers.CONFIGS[n][0] for n in names):
        found[software] = peers.software_version(software) or "not installed"
    return found


def meta_for(stamp, plan):
    """meta.json: the machine, the tools, and every study's parameters."""
    commit = run_text(["git", "-C", ROOT, "rev-parse", "HEAD"]) or "unknown"
    dirty = bool(run_text(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"]))
    parameters = {"workers": plan.workers, "rounds": plan.rounds, "quick": plan.quick, "studies": plan.studies,
                  "arms_chosen": plan.arms, "arms": {a: arms.server_args(a) for a in plan.arms},
                  "not_applicable": {a: dict(arms.get(a).not_applicable) for a in plan.arms
                                     if arms.get(a).not_applicable}}
    for name in STUDIES:
        parameters.update(STUDY[name].meta(plan))
    return {
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
        "parameters": parameters,
        # Every arm's facts as the table has them now (the studies pick arms
        # beyond --arms): the report renders the run from these alone.
        "arms": arms.meta_facts(arms.names()),
        "tools": {
            "gcc": (run_text(["gcc", "--version"]).splitlines() or ["unknown"])[0],
            "python": platform.python_version(),
            "libc": " ".join(platform.libc_ver()),
            "clang": (run_text(["clang", "--version"]).splitlines() or ["unknown"])[0],
            "bpftool": (run_text(["bpftool", "version"]).splitlines() or ["unknown"])[0],
            "libbpf": dpkg_version("libbpf-dev"),
            **({"wrk": wrk_version()} if {"cost", "payoff", "profile"} & set(plan.studies) else {}),
            **({"perf": STUDY["profile"].perf_version(STUDY["profile"].perf_path()) if STUDY["profile"].perf_path()
                else "not installed"} if "profile" in plan.studies else {}),
            **peer_software(plan),
        },
    }


# ---- running the steps -------------------------------------------------------

def plan_steps(plan, raw_dir):
    """Every step the campaign runs, in order: [(study, label, function,
    error row keys), ...]."""
    return [(study, label, fn, err_keys) for study in plan.studies
            for label, fn, err_keys in STUDY[study].steps(plan, raw_dir)]


def skipped_for_root(label, root):
    """True when a step is skipped before it runs: an arm that loads a BPF
    program, when not root."""
    return not root and any(a in label.split() for a in NEEDS_ROOT)


def print_plan(plan):
    """--plan: one line per step the campaign would run (study and label, in
    order), and which of them are skipped when not root. ACCEPTLAB_TEST_PLAN_AS_USER=1
    shows the plan as a user who is not root would get it."""
    root = is_root() and not os.environ.get("ACCEPTLAB_TEST_PLAN_AS_USER")
    for study, label, _, _ in plan_steps(plan, os.path.join(plan.run_dir, "raw")):
        print("%-11s %s%s" % (study, label, "   (skipped: needs root)" if skipped_for_root(label, root) else ""))


def run_steps(plan, raw_dir):
    """Runs every study's steps with progress lines; returns the failures.
    Whatever a failed step left running is stopped before the next. (A study
    that repeats rounds under a stopping rule does so inside its step:
    cost's and trace_overhead's blocks.)"""
    todo = plan_steps(plan, raw_dir)
    files = {study: open(os.path.join(plan.run_dir, study + ".jsonl"), "w") for study in plan.studies}
    t0 = time.monotonic()
    failures = 0
    i = 0
    try:
        while i < len(todo):
            study, label, fn, err_keys = todo[i]
            i += 1
            if skipped_for_root(label, is_root()):
                result = "SKIPPED: needs root (loads a BPF program)"
                rows = [dict(err_keys, error="skipped: needs root (CAP_BPF)")]
                failures += 1
            else:
                try:
                    rows, result = fn()
                except (StepFailed, OSError, ValueError, KeyError) as e:
                    stop_all()
                    failures += 1
                    rows = getattr(e, "rows", None) or [dict(err_keys, error=str(e))]
                    result = "FAILED: %s" % e
            for row in rows:
                files[study].write(json.dumps(row, sort_keys=True) + "\n")
            files[study].flush()
            elapsed = time.monotonic() - t0
            print("[%3d/%d] %-11s %-32s %s   (%.0fs elapsed, ETA %.0fs)"
                  % (i, len(todo), study, label, result, elapsed, elapsed / i * (len(todo) - i)), flush=True)
    finally:
        for f in files.values():
            f.close()
    return failures, len(todo)


def record_outcomes(plan):
    """For the studies with a stopping rule (outcome(path, plan)): its verdict
    over the finished rows (rounds run, each ratio's interval, whether it
    converged, the cap when hit) into meta.json's parameters.<study>.stopping."""
    path = os.path.join(plan.run_dir, "meta.json")
    with open(path) as f:
        meta = json.load(f)
    for study in plan.studies:
        if hasattr(STUDY[study], "outcome"):
            state = STUDY[study].outcome(os.path.join(plan.run_dir, study + ".jsonl"), plan)
            meta["parameters"].setdefault(study, {}).setdefault("stopping", {})["outcome"] = state
            if state.get("cap_hit") and plan.bench_within:
                print("campaign: %s: the cap of %d rounds was reached; not within +-%g %%: %s" % (
                    study, state["max_rounds"], state["within"] * 100,
                    "; ".join("%s +-%s" % (n, v["half_width"]) for n, v in sorted(state["cap_hit"].items()))),
                    flush=True)
    with open(path + ".tmp", "w") as f:
        json.dump(meta, f, indent=2, sort_keys=True)
        f.write("\n")
    os.replace(path + ".tmp", path)


# ---- the command line --------------------------------------------------------

def parse_args():
    cost, payoff, burst = STUDY["cost"], STUDY["payoff"], STUDY["burst"]
    ap = argparse.ArgumentParser(description="Run the acceptlab campaign and write results/linux/<stamp>/.")
    ap.add_argument("--platform", help="only 'linux' is supported (required)")
    ap.add_argument("--quick", action="store_true", help="one round per cell (a smoke run)")
    ap.add_argument("--rounds", type=int, default=None, help="rounds (trials) per cell (default 3, 1 with --quick)")
    ap.add_argument("--workers", type=int, default=2,
                    help="workers per server (default 2); the balancing study runs every arm x shape at this "
                         "count on fresh servers")
    ap.add_argument("--worker-counts", metavar="LIST",
                    help="worker counts of the studies that take it as a dimension (balancing, payoff, "
                         "burst), comma-separated (default: each study's own, %s; with --quick: balancing "
                         "--workers alone, payoff and burst %s; make bench: 2,4,8,16). Balancing runs every "
                         "arm x shape on fresh servers at --workers, at the others the arms users serve with, "
                         "the shapes back-to-back on one server"
                    % (",".join(map(str, STUDY["balancing"].BALANCING_WORKERS)),
                       ",".join(map(str, STUDY["payoff"].PAYOFF_QUICK_WORKERS))))
    ap.add_argument("--arms", help="comma-separated arms of acceptlab/arms.py (default: every arm but those "
                                   "cost runs alone; with --quick: %s)" % ",".join(QUICK_ARMS))
    ap.add_argument("--variants", nargs="?", const="", help=argparse.SUPPRESS)  # the old name: exit 2, saying so
    ap.add_argument("--studies", default=",".join(DEFAULT_STUDIES),
                    help="comma-separated, of: %s (default: all but %s)"
                    % (",".join(STUDIES), ",".join(n for n in STUDIES if n not in DEFAULT_STUDIES)))
    ap.add_argument("--bench-arms",
                    help="arms the wrk and burst studies (%s) run, or 'all' (make bench): "
                         "payoff every arm in --arms, burst %s, cost %s (and bare and fdpass at 1 worker "
                         "too) (default: cost %s; payoff %s; burst %s); the anchor %s runs in cost and burst "
                         "only, by default, with 'all' or when named"
                    % (", ".join(BENCH_STUDIES), ",".join(burst.default_arms(False)), ",".join(cost.bench_arms()),
                       ",".join(cost.default_arms(False)), ",".join(payoff.default_arms(False)),
                       ",".join(burst.default_arms(False)), ",".join(ANCHORS)))
    ap.add_argument("--peers", help="comma-separated server configurations: the peers study's (default: all: %s; "
                                    "with --quick: %s); they narrow the diagnosis study's peers and the census's "
                                    "servers (any of: %s) too"
                    % (",".join(peers.PEERS), ",".join(STUDY["peers"].QUICK_PEERS),
                       ",".join(STUDY["census"].servers_of(Plan(studies=("census",))))))
    ap.add_argument("--results-dir", default=RESULTS_DIR)
    ap.add_argument("--no-canonical", action="store_true", help="do not point CANONICAL at this run")
    ap.add_argument("--no-trace", action="store_true",
                    help="do not run bin/acceptlab-trace beside the balancing rounds and the peers "
                         "(it runs when root)")
    ap.add_argument("--plan", action="store_true",
                    help="print the steps the campaign would run (study and label, in order) and exit")
    # wrk's -d for cost and payoff (tests use 1; the close gap is capped at it)
    ap.add_argument("--bench-rounds", type=int, metavar="N",
                    help="rounds of the wrk studies (cost, payoff, trace_overhead) (default %d, 1 with --quick; "
                         "make bench: 3)" % BENCH_ROUNDS)
    ap.add_argument("--bench-seconds", type=int, metavar="S",
                    help="wrk duration per payoff run (default %d, %d with --quick; make bench: 6)"
                    % (BENCH_SECONDS, BENCH_QUICK_SECONDS))
    ap.add_argument("--cost-seconds", type=int, metavar="S",
                    help="wrk duration per cost run (default %d s keep-alive and %d s "
                         "Connection: close: short runs, many of them)"
                         % (cost.COST_SECONDS["keepalive"], cost.COST_SECONDS["close"]))
    ap.add_argument("--cost-method", choices=cost.METHODS, default="paired",
                    help="how the cost study sets each run beside bare: paired (each run at the same time as "
                         "one of bare's, both servers on one CPU, the default) or alternated (each run between "
                         "two of bare's); the A/A floor says which resolves finer on this machine")
    ap.add_argument("--bench-within", type=float, metavar="F",
                    help="repeat the rounds of cost and trace_overhead until every CPU ratio's 95 %% interval "
                         "is within +-F of its mean (make bench: 0.01), at least --bench-rounds and at most "
                         "--bench-max-rounds rounds (default: the fixed rounds only)")
    ap.add_argument("--bench-max-rounds", type=int, metavar="N", default=BENCH_MAX_ROUNDS,
                    help="the cap on rounds with --bench-within (default %d); the report names the ratios "
                         "that did not converge when it is reached" % BENCH_MAX_ROUNDS)
    return ap.parse_args()


def names_list(text, option, valid, also=()):
    """A comma-separated option's names, each one of valid (exit 2 naming the
    unknown ones and what is valid: also, then valid)."""
    named = [n for n in text.split(",") if n]
    unknown = [n for n in named if n not in valid]
    if unknown or not named:
        die("%s %s: unknown; valid: %s" % (option, ",".join(unknown) or "(empty)", ", ".join([*also, *valid])))
    return named


def in_range(value, option, low, high, what=None):
    """value when it is within low..high (None passes); else exit 2."""
    if value is not None and not low <= value <= high:
        die("%s %s: expected %s" % (option, value, what or "%s..%s" % (low, high)))
    return value


def tracer_wanted(args, studies):
    """(the tracer beside the balancing rounds, the tracer beside the peers,
    what the campaign says about them, or a reason it cannot run): the
    tracer runs as root unless --no-trace."""
    said, trace, peers_trace = [], False, False
    if "balancing" in studies and not args.no_trace:
        if not is_root():
            said.append("not root: the balancing rounds run without the tracer (trace.jsonl is not written)")
        elif not os.access(TRACER, os.X_OK):
            return False, False, ["%s is missing: run make first (or --no-trace)" % TRACER], True
        else:
            trace = True
    if "peers" in studies:
        peers_trace, why_not = peers.tracing(args.no_trace)
        if why_not:
            said.append("the peers run without the tracer: %s" % why_not)
    return trace, peers_trace, said, False


def plan_from(args, stamp="<stamp>"):
    """The campaign's Plan from the command line: the platform checked, every
    option checked (exit 2 with a line naming a bad one), the studies, arms
    and rounds resolved. What each study resolves for itself (worker counts,
    the wrk studies' rounds, the peers, its arms) the plan holds as given."""
    if args.variants is not None:
        die("--variants was renamed --arms")
    if args.platform is None:
        die("--platform: required; the supported platform is linux")
    if args.platform != "linux":
        die("--platform %s: not supported; the supported platform is linux" % args.platform)
    chosen = names_list(args.arms, "--arms", arms.names()) if args.arms is not None else \
        (QUICK_ARMS if args.quick else arms.default_arms())
    bench_all = args.bench_arms == "all"
    bench_arms = None
    if args.bench_arms is not None and not bench_all:
        bench_arms = names_list(args.bench_arms, "--bench-arms", arms.names() + ANCHORS, also=["all"])
    rounds = in_range(args.rounds if args.rounds is not None else (1 if args.quick else 3), "--rounds", 1, 100)
    in_range(args.bench_rounds, "--bench-rounds", 1, 100)
    if args.bench_within is not None and not 0 < args.bench_within < 1:
        die("--bench-within %g: expected a fraction between 0 and 1 (0.02: +-2 %%)" % args.bench_within)
    in_range(args.bench_max_rounds, "--bench-max-rounds", 1, 1000)
    in_range(args.cost_seconds, "--cost-seconds", 1, 600)
    in_range(args.bench_seconds, "--bench-seconds", 1, 600)
    in_range(args.workers, "--workers", 1, 64)
    worker_counts = None
    if args.worker_counts is not None:
        try:
            worker_counts = tuple(STUDY["balancing"].worker_counts(args.worker_counts))
        except ValueError as e:
            die("--worker-counts %s: %s" % (args.worker_counts, e))
    studies = names_list(args.studies, "--studies", STUDIES)
    trace, peers_trace, _, _ = tracer_wanted(args, studies)
    plan = Plan(platform=args.platform, quick=args.quick, rounds=rounds, workers=args.workers,
                worker_counts=worker_counts, arms=tuple(chosen), studies=tuple(studies),
                peers=tuple(names_list(args.peers, "--peers", STUDY["census"].servers_of(Plan(studies=("census",)))))
                if args.peers is not None else None,
                bench_arms=tuple(bench_arms) if bench_arms is not None else None, bench_all=bench_all,
                bench_rounds=args.bench_rounds, bench_seconds=args.bench_seconds, cost_seconds=args.cost_seconds,
                cost_method=args.cost_method, bench_within=args.bench_within, bench_max_rounds=args.bench_max_rounds, trace=trace,
                peers_trace=peers_trace, results_dir=args.results_dir, stamp=stamp,
                canonical=not args.no_canonical)
    if plan.bench_within is not None and plan.bench_max_rounds < max(plan.wrk_rounds, plan.bench_rounds or 0):
        die("--bench-max-rounds %d: fewer than --bench-rounds %d" % (plan.bench_max_rounds, plan.wrk_rounds))
    return plan


def main():
    args = parse_args()
    handle_signals()  # SIGINT, SIGTERM: unwind (every step's clean-up), then stop_all
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    plan = plan_from(args, stamp)
    if args.plan:
        print_plan(dataclasses.replace(plan, stamp="<stamp>"))
        return 0
    for exe in (SERVER, PROBE):
        if not os.access(exe, os.X_OK):
            die("%s is missing: run make first" % exe)
    if not is_root():
        print("campaign: not root: skipping what needs it (reuseport-bpf, the respawn and reload studies' "
              "network namespaces); those steps are recorded as skipped; cost and trace_overhead run in this "
              "namespace; the perturbation study leaves out the SYN flood, the tracer and the stopped worker, "
              "and fdpass and handoff count their load in user space", flush=True)
    _, _, said, fatal = tracer_wanted(args, plan.studies)
    if fatal:
        die(said[0])
    for line in said:
        print("campaign: " + line, flush=True)

    raw_dir = os.path.join(plan.run_dir, "raw")
    os.makedirs(raw_dir, exist_ok=True)
    with open(os.path.join(plan.run_dir, "meta.json"), "w") as f:
        json.dump(meta_for(stamp, plan), f, indent=2, sort_keys=True)
        f.write("\n")

    print("campaign: run %s: studies %s; %d arms, %d rounds, %d workers -> %s"
          % (stamp, ", ".join(plan.studies), len(plan.arms), plan.rounds, plan.workers, plan.run_dir), flush=True)
    t0 = time.monotonic()
    try:
        failures, steps = run_steps(plan, raw_dir)
    except KeyboardInterrupt:
        stop_all()
        die("interrupted; partial results in %s" % plan.run_dir, 130)
    finally:
        stop_all()
        for study in plan.studies:
            if hasattr(STUDY[study], "finish"):
                STUDY[study].finish(os.path.join(plan.run_dir, study + ".jsonl"))
        record_outcomes(plan)

    if plan.canonical:
        with open(os.path.join(plan.results_dir, "CANONICAL"), "w") as f:
            f.write(stamp + "\n")
    print("campaign: done in %.0fs, %d of %d steps failed or skipped; results in %s"
          % (time.monotonic() - t0, failures, steps, plan.run_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
