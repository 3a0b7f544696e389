"""soak.py: `make soak`, load without errors. For every variant (process
and threads mode), a fresh server at 2 workers answers 1,000,000 keep-alive
requests and then 100,000 Connection: close requests from wrk (-t2 -c64),
and must do it with 0 errors: no socket error, no non-2xx answer, no worker
reaped, and a clean exit 0 on SIGTERM. wrk runs in chunks of a few seconds
until the count is reached, so each arm is bounded in time (--max-seconds);
an arm that cannot reach its count in time fails saying how far it got.

Writes one JSON line per arm and mode to --out (default build/soak/<stamp>.jsonl),
prints a line per arm, and exits 1 if any arm had an error, 2 on bad usage.
"""

import sys

if __name__ == "__main__" and not __package__:  # run by path: the packages it imports are not found
    sys.stderr.write("soak.py: run it as a module from the repository's top: "
                     "/usr/bin/python3 -m probes.soak\n")
    sys.exit(2)

import argparse
import datetime
import json
import os
import time

from acceptlab import arms
from acceptlab.paths import ROOT
from probes.harness import lifecycle, servers, wrk

# Knob-off arms run the same code as arms already here; the written handoff
# policy is a measurement arm, not a configuration anyone serves with
# (arms.py: measurement_only).
DEFAULT_ARMS = arms.where(measurement_only=False)
CHUNK_S = 3
CONNECTIONS = 64


def run_mode(port, mode, target, max_seconds, chunk_s, raw_prefix):
    """wrk in chunks until `target` requests: (requests, errors dict, seconds, reached)."""
    headers = ["Connection: close"] if mode == "close" else []
    total, errors, t0, k = 0, {}, time.monotonic(), 0
    while total < target and time.monotonic() - t0 < max_seconds:
        k += 1
        out = wrk.run_wrk("%s-%s-%d" % (raw_prefix, mode, k), port, "/", CONNECTIONS, chunk_s, headers)
        total += out["requests"]
        for name, n in out["errors"].items():
            errors[name] = errors.get(name, 0) + n
    return total, errors, round(time.monotonic() - t0, 1), total >= target


def soak_arm(arm, args, raw_dir):
    prefix = os.path.join(raw_dir, "soak-%s" % arm)
    row = {"arm": arm, "workers": 2}
    with servers.ServerRun(arms.server_args(arm), 2, prefix, arms.env(arm)) as (proc, ready, _):
        row["mode"] = ready.get("mode", "process")
        for mode, target in (("keepalive", args.keepalive_requests), ("close", args.close_requests)):
            n, errors, seconds, reached = run_mode(ready["port"], mode, target, args.max_seconds,
                                                   args.chunk_seconds, prefix)
            row[mode] = {"target": target, "requests": n, "errors": errors, "seconds": seconds, "reached": reached}
    events = servers.server_events(proc)
    stop_at = next((i for i, e in enumerate(events) if e.get("event") == "stopping"), len(events))
    row["reaped_while_serving"] = sum(e.get("event") == "reaped" for e in events[:stop_at])
    row["exit"] = proc.returncode
    row["ok"] = (row["exit"] == 0 and row["reaped_while_serving"] == 0 and
                 all(row[m]["reached"] and not sum(row[m]["errors"].values()) for m in ("keepalive", "close")))
    return row


def main():
    ap = argparse.ArgumentParser(description="Soak every variant with wrk: a million keep-alive and a hundred "
                                             "thousand Connection: close requests each, with no error.")
    ap.add_argument("--arms", default=",".join(DEFAULT_ARMS),
                    help="comma-separated arms (default: every arm but the knob-off and written-policy arms)")
    ap.add_argument("--keepalive-requests", type=int, default=1000000, metavar="N")
    ap.add_argument("--close-requests", type=int, default=100000, metavar="N")
    ap.add_argument("--max-seconds", type=int, default=90, metavar="S",
                    help="per arm and mode: give up (a failure) after S seconds (default 90)")
    ap.add_argument("--chunk-seconds", type=int, default=CHUNK_S, metavar="S",
                    help="wrk -d of each chunk (default %d)" % CHUNK_S)
    ap.add_argument("--out", help="JSON Lines file to write (default build/soak/<UTC stamp>.jsonl)")
    args = ap.parse_args()
    chosen = [a for a in args.arms.split(",") if a]
    unknown = [a for a in chosen if a not in arms.names()]
    if unknown or not chosen:
        lifecycle.die("--arms %s: unknown; valid: %s" % (",".join(unknown) or "(empty)", ", ".join(arms.names())),
                    prog="soak")
    for name in ("keepalive_requests", "close_requests", "max_seconds", "chunk_seconds"):
        if getattr(args, name) < 1:
            lifecycle.die("--%s %d: expected a positive integer" % (name.replace("_", "-"), getattr(args, name)),
                        prog="soak")
    wrk.need_wrk()
    if not lifecycle.is_root():
        chosen = [a for a in chosen if a not in arms.needing_root()]
        print("soak: not root: skipping %s (needs CAP_BPF)" % ", ".join(sorted(arms.needing_root())), flush=True)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out = args.out or os.path.join(ROOT, "build", "soak", stamp + ".jsonl")
    raw_dir = os.path.join(os.path.dirname(os.path.abspath(out)), stamp + "-raw")
    os.makedirs(raw_dir, exist_ok=True)
    failed = 0
    t0 = time.monotonic()
    try:
        with open(out, "w") as f:
            for i, arm in enumerate(chosen, 1):
                try:
                    row = soak_arm(arm, args, raw_dir)
                except lifecycle.StepFailed as e:
                    row = {"arm": arm, "ok": False, "error": str(e)}
                f.write(json.dumps(row, sort_keys=True) + "\n")
                f.flush()
                failed += not row["ok"]
                if "error" in row:
                    text = "FAILED: " + row["error"]
                else:
                    text = "  ".join("%s %d/%d in %.0fs, errors %d" % (
                        m, row[m]["requests"], row[m]["target"], row[m]["seconds"], sum(row[m]["errors"].values()))
                        for m in ("keepalive", "close"))
                    text += ", reaped %d, exit %s  %s" % (row["reaped_while_serving"], row["exit"],
                                                        "ok" if row["ok"] else "FAILED")
                elapsed = time.monotonic() - t0
                print("[%2d/%d] soak %-22s %s   (%.0fs elapsed, ETA %.0fs)"
                      % (i, len(chosen), arm, text, elapsed, elapsed / i * (len(chosen) - i)), flush=True)
    except KeyboardInterrupt:
        lifecycle.stop_all()
        lifecycle.die("interrupted; partial results in %s" % out, 130, prog="soak")
    finally:
        lifecycle.stop_all()
    print("soak: %d of %d arms without an error; results in %s" % (len(chosen) - failed, len(chosen), out))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
