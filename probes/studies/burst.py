"""burst: bursts of K new connections, each asking GET /work?us=BURST_US
once (CPU-bound), K = each of BURST_PER_WORKER x N, at each worker count N of
BURST_WORKERS; one fresh server per (arm, N), BURST_ROUNDS bursts per K on
it, BURST_GAP_MS apart after each burst is answered (so each starts on an
idle server) -> burst.jsonl (one line per burst: its completion time, first
connect to last answer, every request's latency, connect to complete answer,
and the worker that served each).

The anchor: nginx, started from the peers' nginx-work configuration
(probes/peers/peers.py: embedded perl spins the same CPU per request and
answers its pid), its access log off (ANCHOR_ARMS: arm name -> peer
configuration); skipped with the reason when it cannot run."""

import os
import statistics

from acceptlab import arms
from probes.harness.probe import probe_cmd, run_probe
from probes.harness.servers import ServerRun, peer_running
from probes.peers import peers

NAME = "burst"
BURST_US = 2000                  # CPU per request: /work?us=BURST_US
BURST_PATH = "/work?us=%d" % BURST_US
BURST_WORKERS = [2, 4, 8]
BURST_QUICK_WORKERS = [2, 8]
BURST_PER_WORKER = [2, 8]        # K = 2 x N and 8 x N
BURST_ROUNDS = 5                 # bursts per (arm, N, K)
BURST_QUICK_ROUNDS = 2
BURST_GAP_MS = 25                # pause after a burst is answered, before the next
BURST_TIMEOUT_MS = 10000
ANCHOR_ARMS = {"nginx": "nginx-work"}  # also names --bench-arms accepts beyond the table
TAKES_BENCH_ARMS = True


def default_arms(quick):
    return arms.in_study("quick:burst" if quick else "burst") + list(ANCHOR_ARMS)


def arms_of(plan):
    """The arms burst runs: the arms with "burst" in arms.py ("quick:burst"
    with --quick; every one of them with `--bench-arms all`) that were
    chosen, or those of --bench-arms named that were; the anchor unless
    --bench-arms names others."""
    if plan.bench_arms is not None:
        return [a for a in plan.bench_arms if a in plan.arms or a in ANCHOR_ARMS]
    return [a for a in default_arms(plan.quick and not plan.bench_all) if a in plan.arms or a in ANCHOR_ARMS]


def peer_configs(plan):
    """The peers' configurations burst starts: its anchors'."""
    return [ANCHOR_ARMS[a] for a in arms_of(plan) if a in ANCHOR_ARMS]


def workers(plan):
    return list(plan.worker_counts or (BURST_QUICK_WORKERS if plan.quick else BURST_WORKERS))


def rounds(plan):
    return BURST_QUICK_ROUNDS if plan.quick else BURST_ROUNDS


def anchor_meta(plan):
    out = {}
    for arm in (a for a in arms_of(plan) if a in ANCHOR_ARMS):
        name = ANCHOR_ARMS[arm]
        software, setting = peers.CONFIGS[name]
        out[arm] = {"peer": name, "software": peers.software_version(software) or "not installed",
                    "setting": setting, "access_log": "off", "path": BURST_PATH,
                    "answer": "embedded perl (ngx_http_perl_module): spins us=N of the process's CPU clock "
                              "(Time::HiRes), then answers its pid in the body and X-Worker",
                    "config": "probes/peers/software/nginx.py conf() and WORK_PERL"}
    return out


def meta(plan):
    return {"burst": {"tool": "acceptlab-probe --shape burst --latencies", "path": BURST_PATH,
                      "work_us": BURST_US, "workers": workers(plan), "per_worker": BURST_PER_WORKER,
                      "bursts": rounds(plan), "gap_ms": BURST_GAP_MS, "timeout_ms": BURST_TIMEOUT_MS,
                      "arms": arms_of(plan), "anchor": anchor_meta(plan),
                      "order": "one fresh server per arm x workers; on it, every K in turn, its bursts "
                               "one after another"}}


def burst_extra(plan, worker_from):
    return ["--path", BURST_PATH, "--latencies", "--worker-from", worker_from,
            "--round-gap-ms", str(BURST_GAP_MS), "--timeout-ms", str(BURST_TIMEOUT_MS)]


def bursts(plan, prefix, port, ready_path, arm, n, worker_from):
    """Every K's bursts against one running server: their rows and a summary."""
    rows, said = [], []
    for per in BURST_PER_WORKER:
        k = per * n
        shape = {"name": "burst", "connections": k}
        got = run_probe("%s-k%d" % (prefix, k), probe_cmd(port, shape, rounds(plan), ready_path,
                                                            burst_extra(plan, worker_from)), rounds(plan))
        for i, r in enumerate(got, 1):
            r.pop("first_byte_us", None)
            r.pop("connect_us", None)
            r.pop("shares", None)
            r.pop("round", None)
            rows.append(dict({"arm": arm, "workers": n, "burst": i}, **r))
        done = [r["completion_us"] for r in got if r["completion_us"] is not None]
        lat = sorted(v for r in got for v in r["latency_us"] if v is not None)
        p99 = lat[max(0, -(-99 * len(lat) // 100) - 1)] if lat else None
        said.append("K=%d: completion %s ms, p99 %s ms, %s" % (
            k, "%.1f" % (statistics.median(done) / 1000) if done else "-",
            "%.1f" % (p99 / 1000) if p99 is not None else "-", " ".join(r["split"] for r in got)))
    return rows, "; ".join(said)


def anchor_step(plan, prefix, arm, n):
    with peer_running(ANCHOR_ARMS[arm], n, prefix) as peer:
        return bursts(plan, prefix, peer.port, peer.ready_file, arm, n, "body")


def steps(plan, raw_dir):
    for arm in arms_of(plan):
        for n in workers(plan):
            def step(arm=arm, n=n):
                prefix = os.path.join(raw_dir, "burst-%s-w%d" % (arm, n))
                if arm in ANCHOR_ARMS:
                    return anchor_step(plan, prefix, arm, n)
                with ServerRun(arms.server_args(arm), n, prefix, arms.env(arm)) as (proc, ready, path):
                    return bursts(plan, prefix, ready["port"], path, arm, n, "header:X-Worker")
            yield "%-17s %dw" % (arm, n), step, {"arm": arm, "workers": n}
