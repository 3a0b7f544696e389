#!/usr/bin/python3
"""campaign.py: the campaign driver behind `make measure PLATFORM=linux`.

Runs the balancing study: every variant x shape, one fresh server per cell
(`--port 0`, its ready line saved), the probe asking /pid on every connection
for R rounds, and writes results/linux/<UTC stamp>/ with meta.json,
balancing.jsonl (one line per round) and the tools' verbatim output under
raw/. A failed step is recorded with its reason and the campaign goes on.
Every server it starts runs in its own process group and is stopped (SIGTERM,
then SIGKILL) when its step ends, also on Ctrl-C.
"""

import argparse
import datetime
import json
import os
import platform
import select
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# ACCEPTLAB_SERVER lets a test substitute a server that fails on purpose.
SERVER = os.environ.get("ACCEPTLAB_SERVER") or os.path.join(ROOT, "bin", "acceptlab-server")
PROBE = os.path.join(ROOT, "bin", "acceptlab-probe")

VARIANTS = ["bare", "exclusive", "lt", "lt-yield"]
SHAPES = [
    {"name": "burst", "connections": 32},
    {"name": "ramp", "connections": 32, "gap_ms": 10},
    {"name": "keepalive", "connections": 32, "requests": 4},
]
READY_TIMEOUT_S = 10
STOP_TIMEOUT_S = 15
PROBE_TIMEOUT_S = 120

_live = []  # servers started and not yet stopped: stopped on any exit


class StepFailed(Exception):
    """A step could not be measured; the reason goes into the results."""


def die(msg, code=2):
    print("campaign: " + msg, file=sys.stderr)
    sys.exit(code)


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


def meta_for(stamp, args, shapes):
    commit = run_text(["git", "-C", ROOT, "rev-parse", "HEAD"]) or "unknown"
    dirty = bool(run_text(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"]))
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
        "parameters": {
            "workers": args.workers,
            "rounds": args.rounds,
            "quick": args.quick,
            "shapes": shapes,
            "variants": args.variants,
        },
        "tools": {
            "gcc": (run_text(["gcc", "--version"]).splitlines() or ["unknown"])[0],
            "python": platform.python_version(),
            "libc": " ".join(platform.libc_ver()),
        },
    }


def start_server(variant, workers, raw_prefix):
    """Starts a server on an ephemeral port; returns (proc, ready dict, ready path).
    Its stdout (lifecycle JSON lines) is copied verbatim to raw_prefix.server.jsonl."""
    err = open(raw_prefix + ".server.stderr", "w")
    proc = subprocess.Popen(
        [SERVER, "--variant", variant, "--workers", str(workers), "--port", "0"],
        stdout=subprocess.PIPE, stderr=err, start_new_session=True)
    err.close()
    _live.append(proc)
    proc.raw_out = raw_prefix + ".server.jsonl"
    proc.captured = b""
    fd = proc.stdout.fileno()
    deadline = time.monotonic() + READY_TIMEOUT_S
    while b"\n" not in proc.captured:
        left = deadline - time.monotonic()
        if left <= 0:
            raise StepFailed("server did not become ready within %d s" % READY_TIMEOUT_S)
        if select.select([fd], [], [], left)[0]:
            chunk = os.read(fd, 65536)
            if not chunk:
                proc.wait()
                raise StepFailed("server exited %s before ready: %s"
                                 % (proc.returncode, tail(raw_prefix + ".server.stderr")))
            proc.captured += chunk
    line = proc.captured.split(b"\n", 1)[0].decode()
    ready = json.loads(line)
    if ready.get("event") != "ready":
        raise StepFailed("server's first line is not its ready line: " + line[:200])
    path = raw_prefix + ".ready"
    with open(path, "w") as f:
        f.write(line + "\n")
    return proc, ready, path


def tail(path, n=200):
    try:
        with open(path) as f:
            return f.read().strip().replace("\n", " | ")[-n:] or "(no stderr)"
    except OSError:
        return "(no stderr)"


def stop_server(proc):
    """SIGTERM, wait, SIGKILL the group if it lingers; saves the server's
    output. Returns the exit code."""
    try:
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
    fd = proc.stdout.fileno()
    while select.select([fd], [], [], 1.0)[0]:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        proc.captured += chunk
    proc.stdout.close()
    with open(proc.raw_out, "wb") as f:
        f.write(proc.captured)
    if proc in _live:
        _live.remove(proc)
    return rc


def stop_all(*_):
    for proc in list(_live):
        stop_server(proc)


def probe_cmd(port, shape, rounds, ready_path):
    cmd = [PROBE, "--target", "127.0.0.1:%d" % port, "--shape", shape["name"],
           "--connections", str(shape["connections"]), "--rounds", str(rounds),
           "--workers-from", ready_path, "--json"]
    if "gap_ms" in shape:
        cmd += ["--gap-ms", str(shape["gap_ms"])]
    if "requests" in shape:
        cmd += ["--requests", str(shape["requests"])]
    return cmd


def measure_cell(variant, shape, args, raw_dir):
    """One server, one probe run of R rounds: returns the round rows."""
    prefix = os.path.join(raw_dir, "%s-%s" % (variant, shape["name"]))
    proc, ready, ready_path = start_server(variant, args.workers, prefix)
    try:
        cmd = probe_cmd(ready["port"], shape, args.rounds, ready_path)
        with open(prefix + ".probe.cmd", "w") as f:
            f.write(" ".join(cmd) + "\n")
        try:
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise StepFailed("probe did not finish within %d s" % PROBE_TIMEOUT_S)
        with open(prefix + ".probe.jsonl", "w") as f:
            f.write(res.stdout)
        with open(prefix + ".probe.stderr", "w") as f:
            f.write(res.stderr)
        if res.returncode not in (0, 1):
            raise StepFailed("probe exited %d: %s" % (res.returncode, res.stderr.strip()[-200:]))
        rows = []
        for line in res.stdout.splitlines():
            obj = json.loads(line)
            if obj.get("type") != "round":
                continue
            obj.pop("type")
            row = {"variant": variant, "mode": ready.get("mode", "process"),
                   "workers": len(ready["workers"])}
            row.update(obj)
            rows.append(row)
        if len(rows) != args.rounds:
            raise StepFailed("probe reported %d rounds, expected %d" % (len(rows), args.rounds))
        return rows
    finally:
        rc = stop_server(proc)
        if rc != 0:
            print("campaign: warning: %s server exited %s on SIGTERM" % (variant, rc), file=sys.stderr)


def shape_label(shape):
    if shape["name"] == "keepalive":
        return "keepalive %dx%d" % (shape["connections"], shape["requests"])
    return "%s %d" % (shape["name"], shape["connections"])


def main():
    ap = argparse.ArgumentParser(description="Run the acceptlab campaign and write results/linux/<stamp>/.")
    ap.add_argument("--platform", required=True, help="only 'linux' is supported")
    ap.add_argument("--quick", action="store_true", help="one round per cell (a smoke run)")
    ap.add_argument("--rounds", type=int, default=None, help="rounds per cell (default 3, 1 with --quick)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated (default: all)")
    ap.add_argument("--results-dir", default=os.path.join(ROOT, "results", "linux"))
    ap.add_argument("--no-canonical", action="store_true", help="do not point CANONICAL at this run")
    args = ap.parse_args()

    if args.platform != "linux":
        die("--platform %s: not supported; the supported platform is linux" % args.platform)
    args.variants = [v for v in args.variants.split(",") if v]
    unknown = [v for v in args.variants if v not in VARIANTS]
    if unknown or not args.variants:
        die("--variants %s: unknown; valid: %s" % (",".join(unknown) or "(empty)", ", ".join(VARIANTS)))
    if args.rounds is None:
        args.rounds = 1 if args.quick else 3
    if not 1 <= args.rounds <= 100:
        die("--rounds %d: expected 1..100" % args.rounds)
    if not 1 <= args.workers <= 64:
        die("--workers %d: expected 1..64" % args.workers)
    for exe in (SERVER, PROBE):
        if not os.access(exe, os.X_OK):
            die("%s is missing: run make first" % exe)

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    run_dir = os.path.join(args.results_dir, stamp)
    raw_dir = os.path.join(run_dir, "raw")
    os.makedirs(raw_dir, exist_ok=True)
    with open(os.path.join(run_dir, "meta.json"), "w") as f:
        json.dump(meta_for(stamp, args, SHAPES), f, indent=2, sort_keys=True)
        f.write("\n")

    cells = [(v, s) for v in args.variants for s in SHAPES]
    print("campaign: run %s: %d variants x %d shapes x %d rounds, %d workers -> %s"
          % (stamp, len(args.variants), len(SHAPES), args.rounds, args.workers, run_dir), flush=True)
    t0 = time.monotonic()
    failures = 0
    try:
        with open(os.path.join(run_dir, "balancing.jsonl"), "w") as out:
            for i, (variant, shape) in enumerate(cells, 1):
                label = "%-10s %-16s" % (variant, shape_label(shape))
                try:
                    rows = measure_cell(variant, shape, args, raw_dir)
                    for row in rows:
                        out.write(json.dumps(row, sort_keys=True) + "\n")
                    result = " ".join(r["split"] + ("!" if r["unanswered"] else "") for r in rows)
                except (StepFailed, OSError, ValueError) as e:
                    failures += 1
                    out.write(json.dumps({"variant": variant, "shape": shape["name"], "round": None,
                                          "error": str(e)}, sort_keys=True) + "\n")
                    result = "FAILED: %s" % e
                out.flush()
                elapsed = time.monotonic() - t0
                eta = elapsed / i * (len(cells) - i)
                print("[%2d/%d] %s %s   (%.0fs elapsed, ETA %.0fs)" % (i, len(cells), label, result, elapsed, eta),
                      flush=True)
    except KeyboardInterrupt:
        stop_all()
        die("interrupted; partial results in %s" % run_dir, 130)
    finally:
        stop_all()

    if not args.no_canonical:
        with open(os.path.join(args.results_dir, "CANONICAL"), "w") as f:
            f.write(stamp + "\n")
    print("campaign: done in %.0fs, %d failed steps; results in %s" % (time.monotonic() - t0, failures, run_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
