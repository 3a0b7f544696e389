"""cost: wrk on GET / (keep-alive and Connection: close), the cost arms at 2
workers (and those with cost:one_worker in arms.py at 1 worker too), arms
alternated within a round in an order that rotates per round, a gap after
every close run; req/s, p50/p99, TIME_WAIT left, the ratio to bare, to the
knob-off arm and to the process-mode arm -> cost.jsonl (one line per run).

The cost anchor: an arm that is a server nobody here wrote, started from
the peers' configuration (probes/peers/peers.py) with its access log off,
since our server keeps no log (ANCHOR_ARMS: arm name -> peer configuration).
It runs in the same rounds as our arms, alternated with them; `--bench-arms
all` means our arms only (name it to add it)."""

import json
import os
import time

import arms
from harness import (WRK_THREADS, WRK_TIMEOUT_S, CpuMeter, ServerRun, StepFailed, accepted_of, cpu_fields, forget,
                     handoffs_of, need_wrk, peers, register, run_wrk)
from studies.common import (bench_seconds, close_gap, handoff_rate, read_sysctl, rewrite_rows, rotated,
                            served_split, time_wait_counts)

NAME = "cost"
COST_PATH = "/"              # the hello endpoint: the accept path is all there is to do
COST_CONNECTIONS = 64
COST_WORKERS = [1, 2]
COST_MODES = ["keepalive", "close"]
ANCHOR_ARMS = {"nginx": "nginx-default"}
SYSCTLS = ["net.ipv4.ip_local_port_range", "net.ipv4.tcp_tw_reuse", "net.ipv4.tcp_max_tw_buckets",
           "net.ipv4.tcp_fin_timeout"]


def default_arms(quick):
    """The arms cost runs by default (the arms the design notes compare, so
    the campaign fits in minutes; make bench runs every arm), the anchor last."""
    return arms.in_study("quick:cost" if quick else "cost") + list(ANCHOR_ARMS)


def meta(args):
    return {"cost": {"tool": "wrk", "path": COST_PATH, "threads": WRK_THREADS,
                     "connections": COST_CONNECTIONS, "duration_s": bench_seconds(args),
                     "timeout_s": WRK_TIMEOUT_S, "modes": COST_MODES, "workers": COST_WORKERS,
                     "one_worker_arms": sorted(arms.in_study("cost:one_worker")) if not args.bench_all else "all",
                     "arms": args.cost_arms, "rounds": args.bench_rounds, "close_gap_s": close_gap(args),
                     "order": "each round runs every arm x workers once per mode, the list "
                              "rotated by (round-1)*len/rounds",
                     "sysctls": {name: read_sysctl(name) for name in SYSCTLS},
                     "anchor": anchor_meta(args)}}


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


def anchor_run(args, prefix, arm, workers, headers):
    """wrk against an anchor arm: its peer configuration (access log off)
    started fresh on a free port, stopped after; the configuration and logs
    are kept at prefix.*. Returns (parse_wrk's dict, TIME_WAIT counts, software)."""
    name = ANCHOR_ARMS[arm]
    ok, reason = peers.availability(name)
    if not ok:
        raise StepFailed("skipped: " + reason)
    peer = register(peers.Peer(name, workers=workers, access_log=False), peers.Peer.cleanup)
    try:
        try:
            peer.start()
        except RuntimeError as e:
            raise StepFailed("%s did not start: %s" % (name, e))
        with open(prefix + ".ready", "w") as f:
            f.write(json.dumps(peer.ready, separators=(",", ":")) + "\n")
        with CpuMeter(peer.proc.pid) as cpu:
            out = run_wrk(prefix, peer.port, COST_PATH, COST_CONNECTIONS, bench_seconds(args), headers)
        out.update(cpu_fields(cpu.ns, out["requests"]))
        tw = time_wait_counts(peer.port)
    finally:
        peer.stop()
        peer.keep(prefix)
        peer.cleanup()
        forget(peer)
    return out, tw, peer.version


def run_text(out, tw_total):
    bad = sum(out["errors"].values())
    cpu = out.get("cpu_us_per_request")
    return "%.0f req/s, %s, p99 %s ms%s, TIME_WAIT %s" % (
        out["requests_per_s"], "%.2f CPU us/req" % cpu if cpu is not None else "CPU not measured",
        out["latency_ms"]["p99"], ", %d errors" % bad if bad else "", tw_total)


def cost_run(args, raw_dir, arm, workers, mode, rnd, order):
    prefix = os.path.join(raw_dir, "cost-%s-w%d-%s-r%d" % (arm, workers, mode, rnd))
    need_wrk()  # before a server starts: a missing wrk skips at once
    headers = ["Connection: close"] if mode == "close" else []
    if arm in ANCHOR_ARMS:
        out, (tw_total, tw_sides), software = anchor_run(args, prefix, arm, workers, headers)
        row = dict({"arm": arm, "workers": workers, "mode": mode, "round": rnd, "order": order,
                    "time_wait_after": tw_total, "time_wait_sides": tw_sides, "served_split": None,
                    "ratio_to_bare": None, "peer": ANCHOR_ARMS[arm], "software": software}, **out)
        return [row], run_text(out, tw_total)
    with ServerRun(arms.server_args(arm), workers, prefix, arms.env(arm)) as (proc, ready, path):
        with CpuMeter(proc.pid) as cpu:
            out = run_wrk(prefix, ready["port"], COST_PATH, COST_CONNECTIONS, bench_seconds(args), headers)
        out.update(handoff_rate(ready["port"], out["duration_s"]))
        tw_total, tw_sides = time_wait_counts(ready["port"])
    # accepted over the server's life: wrk's connections, and the one
    # handoff_rate's GET /variant adds (for the arms that have one)
    out.update(cpu_fields(cpu.ns, out["requests"], accepted_of(proc)))
    moved = handoffs_of(proc)
    if moved is not None:
        out.update({"handoffs": moved,
                    "handoffs_per_s": round(moved / out["duration_s"], 1) if out["duration_s"] else None})
    row = dict({"arm": arm, "workers": workers, "mode": mode, "round": rnd, "order": order,
                "time_wait_after": tw_total, "time_wait_sides": tw_sides,
                "served_split": served_split(proc), "ratio_to_bare": None}, **out)
    return [row], run_text(out, tw_total)


def steps(args, raw_dir):
    one_worker = set(arms.in_study("cost:one_worker"))
    cells = [(arm, w) for w in COST_WORKERS for arm in args.cost_arms
             if w != 1 or args.bench_all or (arm in one_worker and not args.quick)]
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


RATIO_FIELDS = (("requests_per_s", "ratio"), ("cpu_us_per_request", "cpu_ratio"))


def fill_ratios(rows):
    """ratio_to_bare: req/s over bare's at the same workers, mode and round
    (null when bare has no measured row there); likewise ratio_to_knob_off
    and ratio_to_process for the arms that have those partners; and the same
    three for CPU time per request (cpu_ratio_to_bare, ...)."""
    def value_of(arm, field):
        return {(r["workers"], r["mode"], r["round"]): r.get(field) for r in rows
                if r.get("arm") == arm and "error" not in r}

    def ratio(value, base):
        return round(value / base, 4) if value is not None and base else None

    for field, name in RATIO_FIELDS:
        bare = value_of("bare", field)
        knob_off = {arm: value_of(off, field) for arm, off in arms.knob_off_of().items()}
        process = {arm: value_of(p, field) for arm, p in arms.process_arm_of().items()}
        for r in rows:
            if "error" in r or (field != "requests_per_s" and field not in r):
                continue
            key = (r["workers"], r["mode"], r["round"])
            r[name + "_to_bare"] = ratio(r.get(field), bare.get(key))
            if r["arm"] in knob_off:
                r[name + "_to_knob_off"] = ratio(r.get(field), knob_off[r["arm"]].get(key))
            if r["arm"] in process:
                r[name + "_to_process"] = ratio(r.get(field), process[r["arm"]].get(key))


def finish(path):
    """Fills the ratios once every run is in (fill_ratios)."""
    rewrite_rows(path, fill_ratios)
