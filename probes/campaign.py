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
  cost           wrk on GET %(cost_path)s, keep-alive and Connection: close, every
                 balancing arm and its knob-off arm at 2 workers, alternated
                 within a round in an order that rotates per round, a gap
                 after every close run; the server's CPU time per request,
                 req/s, p50/p99, TIME_WAIT left, ratios to bare, the knob-off,
                 the reference and the process-mode arm -> cost.jsonl (the
                 anchor arm "nginx" runs the peers' nginx-default
                 configuration in the same rounds); wrk: %(cost_wrk)s
  payoff         wrk keep-alive on GET %(payoff_path)s (CPU-bound) at each
                 connection count (%(payoff_connections)s): bare at 1 worker (the
                 baseline) and every payoff arm at each worker count
                 (%(payoff_workers)s) -> payoff.jsonl
  burst          bursts of K new connections each asking GET %(burst_path)s once,
                 K = %(burst_per)s x N at N = %(burst_workers)s workers, %(burst_rounds)d bursts
                 per K on one fresh server per arm x N: each burst's completion
                 time, every request's latency and who served it -> burst.jsonl
                 (the anchor arm "nginx" runs the peers' nginx-work configuration)
  trace_overhead wrk against bare as cost runs it, with and without the
                 tracer attached, alternated: the tracer's cost
                 -> trace_overhead.jsonl
  profile        where the CPU goes on keep-alive GET %(cost_path)s: bare and nginx at
                 %(profile_workers)d workers, perf record (cpu-clock, %(profile_hz)d Hz) over one
                 wrk run (%(profile_seconds)d s) and perf stat of the syscall tracepoints
                 over another (%(stat_seconds)d s): top symbols by self share, syscalls
                 per request, CPU us per request -> profile.jsonl
  peers          nginx, HAProxy and a Node.js cluster, measured exactly as
                 `-m probes.peers.peers measure` does -> peers.jsonl
  reload         every worker replaced (one SIGHUP at each of %(reload_at)s s)
                 under keep-alive and Connection: close wrk loads at once
                 (%(reload_wrk)s each): requests lost -> reload.jsonl

Payoff's wrk runs last half of --bench-seconds (default %(bench_seconds)ds, %(bench_quick_seconds)ds with --quick; at
least 1 s), for --bench-rounds rounds (default %(bench_rounds)d, 1 with --quick).
Cost and trace_overhead run wrk for %(cost_seconds)s (--cost-seconds, else --bench-seconds, sets
both), the server's threads and wrk pinned to separate CPUs; cost %(cost_rounds)d rounds, trace_overhead
--bench-rounds. make bench (--bench-within, --bench-max-rounds) repeats cost's and trace_overhead's rounds
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
from probes.harness.servers import SERVER
from probes.harness.tracer import TRACER
from probes.harness.wrk import WRK, WRK_THREADS
from probes.peers import peers
from probes.studies import (balancing, burst, common, cost, faults, models, mutex_delay, payoff, perturbation,
                            placement, profile, reload, respawn, slowview, timeline, trace_overhead)
from probes.studies import peers as peers_study
from probes.studies.common import read_sysctl

# The studies, in the order they run (each module's NAME is its study's name).
STUDY = {m.NAME: m for m in (balancing, perturbation, timeline, placement, models, respawn, mutex_delay, slowview,
                             faults, cost, payoff, burst, trace_overhead, profile, peers_study, reload)}
STUDIES = list(STUDY)
QUICK_ARMS = arms.in_study("quick")
NEEDS_ROOT = arms.needing_root()  # loads a BPF program (CAP_BPF)

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
    "cost_wrk": "-t%d -c%d" % (WRK_THREADS, STUDY["cost"].COST_CONNECTIONS),
    "payoff_path": STUDY["payoff"].PAYOFF_PATH,
    "payoff_connections": ", ".join(map(str, STUDY["payoff"].PAYOFF_CONNECTIONS)),
    "payoff_workers": ", ".join(map(str, STUDY["payoff"].PAYOFF_WORKERS)),
    "burst_path": STUDY["burst"].BURST_PATH,
    "burst_per": " and ".join(map(str, STUDY["burst"].BURST_PER_WORKER)),
    "burst_workers": ", ".join(map(str, STUDY["burst"].BURST_WORKERS)),
    "burst_rounds": STUDY["burst"].BURST_ROUNDS,
    "reload_at": ", ".join(map(str, STUDY["reload"].RELOAD_AT_S)),
    "reload_wrk": "-d%ds" % STUDY["reload"].RELOAD_SECONDS,
    "profile_workers": STUDY["profile"].PROFILE_WORKERS, "profile_hz": STUDY["profile"].PROFILE_HZ,
    "profile_seconds": STUDY["profile"].PROFILE_SECONDS, "stat_seconds": STUDY["profile"].STAT_SECONDS,
    "bench_seconds": common.BENCH_SECONDS, "bench_quick_seconds": common.BENCH_QUICK_SECONDS,
    "bench_rounds": common.BENCH_ROUNDS,
    "cost_seconds": "%(keepalive)d s keep-alive and %(close)d s Connection: close" % STUDY["cost"].COST_SECONDS, "cost_rounds": STUDY["cost"].COST_ROUNDS,
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


def peer_software(args):
    """The peers' software versions, when the run starts any of them."""
    names = list(args.peers) if "peers" in args.studies else []
    if "cost" in args.studies:
        names += [STUDY["cost"].ANCHOR_ARMS[a] for a in args.cost_arms if a in STUDY["cost"].ANCHOR_ARMS]
    if "burst" in args.studies:
        names += [STUDY["burst"].ANCHOR_ARMS[a] for a in args.burst_arms if a in STUDY["burst"].ANCHOR_ARMS]
    found = {}
    for software in dict.fromkeys(peers.CONFIGS[n][0] for n in names):
        found[software] = peers.software_version(software) or "not installed"
    return found


def meta_for(stamp, args):
    """meta.json: the machine, the tools, and every study's parameters."""
    commit = run_text(["git", "-C", ROOT, "rev-parse", "HEAD"]) or "unknown"
    dirty = bool(run_text(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"]))
    parameters = {"workers": args.workers, "rounds": args.rounds, "quick": args.quick, "studies": args.studies,
                  "variants": args.arms, "arms": {a: arms.server_args(a) for a in args.arms},
                  "not_applicable": {a: dict(arms.get(a).not_applicable) for a in args.arms
                                     if arms.get(a).not_applicable}}
    for name in STUDIES:
        parameters.update(STUDY[name].meta(args))
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
        "tools": {
            "gcc": (run_text(["gcc", "--version"]).splitlines() or ["unknown"])[0],
            "python": platform.python_version(),
            "libc": " ".join(platform.libc_ver()),
            "clang": (run_text(["clang", "--version"]).splitlines() or ["unknown"])[0],
            "bpftool": (run_text(["bpftool", "version"]).splitlines() or ["unknown"])[0],
            "libbpf": dpkg_version("libbpf-dev"),
            **({"wrk": wrk_version()} if {"cost", "payoff", "profile"} & set(args.studies) else {}),
            **({"perf": STUDY["profile"].perf_version(STUDY["profile"].perf_path()) if STUDY["profile"].perf_path()
                else "not installed"} if "profile" in args.studies else {}),
            **peer_software(args),
        },
    }


# ---- running the steps -------------------------------------------------------

def plan_steps(args, raw_dir):
    """Every step the campaign runs, in order: [(study, label, function,
    error row keys), ...]."""
    return [(study, label, fn, err_keys) for study in args.studies
            for label, fn, err_keys in STUDY[study].steps(args, raw_dir)]


def skipped_for_root(label, root):
    """True when a step is skipped before it runs: an arm that loads a BPF
    program, when not root."""
    return not root and any(a in label.split() for a in NEEDS_ROOT)


def print_plan(args):
    """--plan: one line per step the campaign would run (study and label, in
    order), and which of them are skipped when not root. ACCEPTLAB_TEST_PLAN_AS_USER=1
    shows the plan as a user who is not root would get it."""
    root = is_root() and not os.environ.get("ACCEPTLAB_TEST_PLAN_AS_USER")
    for study, label, _, _ in plan_steps(args, os.path.join(args.results_dir, "<stamp>", "raw")):
        print("%-11s %s%s" % (study, label, "   (skipped: needs root)" if skipped_for_root(label, root) else ""))


def more_steps(args, study, rows, raw_dir):
    """A study that repeats rounds until a stopping rule holds (make bench's
    --bench-within) has more(args, rows_so_far, raw_dir, next_round) ->
    (another round's steps or [], the rule's state); called once the study's
    planned steps have run and again after every round it adds. Returns
    [(study, label, function, error row keys), ...]."""
    if not hasattr(STUDY[study], "more"):
        return []
    next_round = max([r.get("round") or 0 for r in rows] + [0]) + 1
    steps, state = STUDY[study].more(args, rows, raw_dir, next_round)
    if getattr(args, "bench_within", None):
        print("campaign: %s%s" % (common.progress_text(study, state),
                                  "; round %d follows" % next_round if steps else
                                  "; cap reached" if state.get("cap_hit") else "; done"), flush=True)
    return [(study, label, fn, err_keys) for label, fn, err_keys in steps]


def run_steps(args, run_dir, raw_dir):
    """Runs every study's steps with progress lines; returns the failures.
    Whatever a failed step left running is stopped before the next. A study
    with more() may add rounds once its planned steps are done (the step
    count in the progress lines grows then)."""
    plan = plan_steps(args, raw_dir)
    files = {study: open(os.path.join(run_dir, study + ".jsonl"), "w") for study in args.studies}
    rows_of = {study: [] for study in args.studies}
    t0 = time.monotonic()
    failures = 0
    i = 0
    try:
        while i < len(plan):
            study, label, fn, err_keys = plan[i]
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
            rows_of[study] += rows
            elapsed = time.monotonic() - t0
            print("[%3d/%d] %-11s %-32s %s   (%.0fs elapsed, ETA %.0fs)"
                  % (i, len(plan), study, label, result, elapsed, elapsed / i * (len(plan) - i)), flush=True)
            if i == len(plan) or plan[i][0] != study:  # the study's last step so far
                plan[i:i] = more_steps(args, study, rows_of[study], raw_dir)
    finally:
        for f in files.values():
            f.close()
    return failures, len(plan)


def record_outcomes(args, run_dir):
    """For the studies with a stopping rule (outcome(path, args)): its verdict
    over the finished rows (rounds run, each ratio's interval, whether it
    converged, the cap when hit) into meta.json's parameters.<study>.stopping."""
    path = os.path.join(run_dir, "meta.json")
    with open(path) as f:
        meta = json.load(f)
    for study in args.studies:
        if hasattr(STUDY[study], "outcome"):
            state = STUDY[study].outcome(os.path.join(run_dir, study + ".jsonl"), args)
            meta["parameters"].setdefault(study, {}).setdefault("stopping", {})["outcome"] = state
            if state.get("cap_hit") and getattr(args, "bench_within", None):
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
    cost, payoff = STUDY["cost"], STUDY["payoff"]
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
    ap.add_argument("--variants", help="comma-separated arms (default: all; with --quick: %s)" % ",".join(QUICK_ARMS))
    ap.add_argument("--studies", default=",".join(STUDIES), help="comma-separated (default: all)")
    ap.add_argument("--bench-arms",
                    help="arms the wrk and burst studies (cost, payoff, burst) run, or 'all' (make bench): "
                         "payoff every arm in --variants, burst %s, cost %s (and bare and fdpass at 1 worker "
                         "too) (default: cost %s; payoff %s; burst %s); the anchor %s runs in cost and burst "
                         "only, by default, with 'all' or when named"
                    % (",".join(STUDY["burst"].default_arms(False)), ",".join(cost.bench_arms()),
                       ",".join(cost.default_arms(False)), ",".join(payoff.default_arms(False)),
                       ",".join(STUDY["burst"].default_arms(False)), ",".join(cost.ANCHOR_ARMS)))
    ap.add_argument("--peers", help="comma-separated peer configurations for the peers study (default: all: %s; "
                                    "with --quick: %s)" % (",".join(peers.PEERS), ",".join(STUDY["peers"].QUICK_PEERS)))
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
    ap.add_argument("--netns-trial", metavar="SPEC", help=argparse.SUPPRESS)  # internal: one run of a study (JSON)
    ap.add_argument("--plan", action="store_true",
                    help="print the steps the campaign would run (study and label, in order) and exit")
    # wrk's -d for cost and payoff (tests use 1; the close gap is capped at it)
    ap.add_argument("--bench-rounds", type=int, metavar="N",
                    help="rounds of the wrk studies (cost, payoff, trace_overhead) (default %d, 1 with --quick; "
                         "make bench: 3)" % common.BENCH_ROUNDS)
    ap.add_argument("--bench-seconds", type=int, metavar="S",
                    help="wrk duration per payoff run (default %d, %d with --quick; make bench: 6), and per "
                         "cost and trace_overhead run unless --cost-seconds is given"
                    % (common.BENCH_SECONDS, common.BENCH_QUICK_SECONDS))
    ap.add_argument("--cost-seconds", type=int, metavar="S",
                    help="wrk duration per cost and trace_overhead run (default: --bench-seconds if given, "
                         "else %d s keep-alive and %d s Connection: close; make bench: 2)"
                         % (cost.COST_SECONDS["keepalive"], cost.COST_SECONDS["close"]))
    ap.add_argument("--bench-within", type=float, metavar="F",
                    help="repeat the rounds of cost and trace_overhead until every CPU ratio's 95 %% interval "
                         "is within +-F of its mean (make bench: 0.02), at least --bench-rounds and at most "
                         "--bench-max-rounds rounds (default: the fixed rounds only)")
    ap.add_argument("--bench-max-rounds", type=int, metavar="N", default=20,
                    help="the cap on rounds with --bench-within (default 20); the report names the ratios "
                         "that did not converge when it is reached")
    return ap.parse_args()


def run_trial(args):
    """--respawn-trial / --reload-trial / --netns-trial: one trial, inside
    `unshare -n` (loopback brought up first); prints its row (a netns trial:
    a study's run, its rows and progress text, or the error it ran into)."""
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    try:
        if args.netns_trial:
            try:
                spec = json.loads(args.netns_trial)
            except ValueError as e:
                die("--netns-trial: not JSON: %s" % e)
            if spec.get("study") not in ("cost", "trace_overhead"):
                die("--netns-trial: study %r has no netns trial" % spec.get("study"))
            row = STUDY[spec["study"]].trial(spec)
        elif args.respawn_trial:
            row = STUDY["respawn"].trial(args.respawn_trial, args.migrate, args.raw_prefix)
        else:
            row = STUDY["reload"].trial(args.reload_trial, args.migrate, args.spawn, args.raw_prefix)
        print(json.dumps(row, sort_keys=True))
    except StepFailed as e:
        die(str(e), 1)
    finally:
        stop_all()
    return 0


def names_list(text, option, valid, also=()):
    """A comma-separated option's names, each one of valid (exit 2 naming the
    unknown ones and what is valid: also, then valid)."""
    named = [n for n in text.split(",") if n]
    unknown = [n for n in named if n not in valid]
    if unknown or not named:
        die("%s %s: unknown; valid: %s" % (option, ",".join(unknown) or "(empty)", ", ".join([*also, *valid])))
    return named


def choose(args):
    """Resolves the options into the studies, arms, rounds and peers to run
    (exit 2 with a line naming a bad one)."""
    cost, payoff = STUDY["cost"], STUDY["payoff"]
    if args.platform is None:
        die("--platform: required; the supported platform is linux")
    if args.platform != "linux":
        die("--platform %s: not supported; the supported platform is linux" % args.platform)
    if args.variants is None:
        args.variants = ",".join(QUICK_ARMS if args.quick else arms.default_variants())
    args.arms = names_list(args.variants, "--variants", arms.names())
    args.bench_all = args.bench_arms == "all"
    burst = STUDY["burst"]
    if args.bench_all:
        chosen_variants = {arms.get(b).variant for b in args.arms}
        args.cost_arms = [a for a in cost.bench_arms() if a in args.arms or a in cost.ANCHOR_ARMS
                          or (not arms.get(a).default and arms.get(a).variant in chosen_variants)]
        args.payoff_arms = list(args.arms)
        args.burst_arms = [a for a in burst.default_arms(False) if a in args.arms or a in burst.ANCHOR_ARMS]
    elif args.bench_arms is None:
        chosen_variants = {arms.get(b).variant for b in args.arms}
        args.cost_arms = [a for a in cost.default_arms(args.quick)
                          if a in args.arms or a in cost.ANCHOR_ARMS
                          or (not arms.get(a).default and arms.get(a).variant in chosen_variants)]
        args.payoff_arms = [a for a in payoff.default_arms(args.quick) if a in args.arms]
        args.burst_arms = [a for a in burst.default_arms(args.quick) if a in args.arms or a in burst.ANCHOR_ARMS]
    else:
        named = names_list(args.bench_arms, "--bench-arms", arms.names() + list(cost.ANCHOR_ARMS), also=["all"])
        args.cost_arms = [a for a in named if a in args.arms or a in cost.ANCHOR_ARMS]
        args.payoff_arms = [a for a in named if a in args.arms]
        args.burst_arms = [a for a in named if a in args.arms or a in burst.ANCHOR_ARMS]
    if args.peers is None:
        args.peers = list(STUDY["peers"].QUICK_PEERS if args.quick else peers.PEERS)
    else:
        args.peers = names_list(args.peers, "--peers", list(peers.PEERS))
    args.studies = names_list(args.studies, "--studies", STUDIES)
    if args.rounds is None:
        args.rounds = 1 if args.quick else 3
    if not 1 <= args.rounds <= 100:
        die("--rounds %d: expected 1..100" % args.rounds)
    args.cost_rounds = args.bench_rounds  # None: cost's own default (studies/cost.py)
    if args.bench_rounds is None:
        args.bench_rounds = 1 if args.quick else common.BENCH_ROUNDS
    if not 1 <= args.bench_rounds <= 100:
        die("--bench-rounds %d: expected 1..100" % args.bench_rounds)
    if args.bench_within is not None and not 0 < args.bench_within < 1:
        die("--bench-within %g: expected a fraction between 0 and 1 (0.02: +-2 %%)" % args.bench_within)
    if not 1 <= args.bench_max_rounds <= 1000:
        die("--bench-max-rounds %d: expected 1..1000" % args.bench_max_rounds)
    if args.bench_within is not None and args.bench_max_rounds < max(args.bench_rounds, args.cost_rounds or 0):
        die("--bench-max-rounds %d: fewer than --bench-rounds %d" % (args.bench_max_rounds, args.bench_rounds))
    if args.cost_seconds is not None and not 1 <= args.cost_seconds <= 600:
        die("--cost-seconds %d: expected 1..600" % args.cost_seconds)
    if not 1 <= args.workers <= 64:
        die("--workers %d: expected 1..64" % args.workers)
    if args.worker_counts is not None:
        try:
            args.worker_counts = STUDY["balancing"].worker_counts(args.worker_counts)
        except ValueError as e:
            die("--worker-counts %s: %s" % (args.worker_counts, e))
    if args.worker_counts:
        args.balancing_workers = list(args.worker_counts)
    else:
        args.balancing_workers = [args.workers] if args.quick else list(STUDY["balancing"].BALANCING_WORKERS)
    if args.bench_seconds is not None and not 1 <= args.bench_seconds <= 600:
        die("--bench-seconds %d: expected 1..600" % args.bench_seconds)


def main():
    args = parse_args()
    handle_signals()  # SIGINT, SIGTERM: unwind (every step's clean-up), then stop_all
    if args.respawn_trial or args.reload_trial or args.netns_trial:
        return run_trial(args)
    choose(args)
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
            if hasattr(STUDY[study], "finish"):
                STUDY[study].finish(os.path.join(run_dir, study + ".jsonl"))
        record_outcomes(args, run_dir)

    if not args.no_canonical:
        with open(os.path.join(args.results_dir, "CANONICAL"), "w") as f:
            f.write(stamp + "\n")
    print("campaign: done in %.0fs, %d of %d steps failed or skipped; results in %s"
          % (time.monotonic() - t0, failures, steps, run_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
