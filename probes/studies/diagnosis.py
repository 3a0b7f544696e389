"""diagnosis: bin/acceptlab-diagnose against each server's own record ->
diagnosis.jsonl (one line per server x mode).

Each server is started fresh, diagnosed twice by port, then stopped:

  active    `acceptlab-diagnose --port P --load burst --connections N --json`
            (N = PER_WORKER x workers): the diagnosis runs the probe itself
  passive   `acceptlab-diagnose --port P --duration PASSIVE_S --json`: once it
            says it is attached, the study drives `acceptlab-probe` (one burst
            of N, asking /pid) against the server, and the diagnosis watches

The servers: our arms with the word "diagnosis" in acceptlab/arms.py (the
campaign's chosen arms; "quick:diagnosis" with --quick) at each count of
DIAGNOSIS_WORKERS (--worker-counts when given), and the peers of PEER_SERVERS
(QUICK_PEERS with --quick; --peers narrows them) at their own 2 workers,
started by probes/peers/peers.py with nginx's access log on.

Each row sets what the diagnosis said (listener, listeners, wait, selector,
handoff, closest_variant, each worker's accepted and served, split,
within_2to1, fair_chance) beside two things the diagnosis never sees:

  expected  the mechanism the server is configured with: for our arms
            OURS_EXPECTED by variant (closest_variant is the variant; for
            fdpass, whose hand-offs come only when the worker the kernel
            woke is not the one its pick names, what the kernel's own wake
            shows when its own count, server_handoffs, says it handed
            nothing over during the watch: WITHOUT_HANDOFF), for
            the peers PEERS_EXPECTED (tests/test_diagnose.py holds the
            diagnosis to this peers table, and to its own table of our
            variants, which tests/test_diagnosis_study.py checks agrees)
  truth     connections per worker as the server itself recorded them:
            "/pid answers" (our servers answer /pid with the serving worker's
            pid, or tid in threads mode; Node's workers answer their pid),
            "nginx access log $pid" (distinct connections per $pid logged
            while the diagnosis ran), "HAProxy thread" (HAProxy answers its
            thread number, %[thread], which is no kernel tid: compared as a
            split). In active mode the answers are the diagnosis's own
            probe's, read with its test switch ACCEPTLAB_TEST_PROBE_WORKER_FROM
            =body (nginx: no switch, GET /, the log is the truth); in passive
            mode they are the study's probe's.

"served_matches_truth": every worker's served count equals its truth count
(by pid or tid; HAProxy: the two splits equal); "mechanism_matches": every
expected field equals the diagnosis's. A peer that cannot be had here is one
"unavailable" row with the reason, as in the peers study; without root every
row is skipped with the reason (the diagnosis attributes connections only
when it traces)."""

import contextlib
import os
import time

from acceptlab import arms
from acceptlab.paths import ROOT
from probes.harness.diagnose import DIAGNOSE_TIMEOUT_S, Diagnose, run_probe
from probes.harness.lifecycle import StepFailed, is_root, tail
from probes.harness.servers import ServerRun, peer_running
from probes.peers import peers
from probes.studies.common import handoff_rate

NAME = "diagnosis"
DIAGNOSIS_WORKERS = (2,)     # our arms' worker counts (--worker-counts for others: 2,4 adds 4)
QUICK_WORKERS = (2,)
PER_WORKER = 16              # connections per worker in the burst: 32 at 2 workers, 64 at 4
LOAD = "burst"
MODES = ("active", "passive")
PASSIVE_S = 0.5              # the passive watch, from the moment it is attached; the burst takes far less
ATTACH_TIMEOUT_S = 20
PEER_SERVERS = ("nginx-default", "nginx-reuseport", "nginx-accept-mutex", "haproxy-mq-on", "haproxy-mq-off",
                "node-rr", "node-none")
QUICK_PEERS = ("nginx-default",)
TEST_SWITCH = "ACCEPTLAB_TEST_PROBE_WORKER_FROM"  # active mode: the probe reads /pid's answer (docs/diagnose.md)
NEEDS_ROOT = "skipped: needs root (the diagnosis attributes connections by tracing them with BPF)"

# Our variants: (listener, wait, selector, handoff) the diagnosis must name;
# listeners is the worker count for a reuseport group, else 1, and
# closest_variant the variant itself.
OURS_EXPECTED = {
    "bare": ("shared", "epoll", None, False),
    "exclusive": ("shared", "epoll-exclusive", None, False),
    "exclusive-reorder": ("shared", "epoll-exclusive", None, False),
    "lt": ("shared", "epoll", None, False),
    "blocking": ("shared", "accept", None, False),
    "reuseport": ("reuseport", "epoll", "hash", False),
    "reuseport-bpf": ("reuseport", "epoll", "bpf", False),
    "mutex": ("shared", "epoll", None, False),
    "fdpass": ("shared", "epoll-exclusive", None, True),
    "handoff": ("reuseport", "epoll", "hash", True),
}

# The peers: (listener, wait, selector, handoff, closest_variant), as
# configured (tests/test_diagnose.py holds the diagnosis to this table); listeners is the
# worker count for nginx's `reuseport`, else 1.
PEERS_EXPECTED = {
    "nginx-default": ("shared", "epoll-exclusive", None, False, "exclusive-reorder"),  # >= 1.21.6: LT, re-add
    "nginx-reuseport": ("reuseport", "epoll", "hash", False, "reuseport"),
    "nginx-accept-mutex": ("shared", "epoll", None, False, "mutex"),
    "haproxy-mq-on": ("shared", "epoll", None, True, "fdpass"),   # the acceptor queues to a less loaded thread
    "haproxy-mq-off": ("shared", "epoll", None, False, "lt"),
    "node-rr": ("shared", "epoll", None, True, "fdpass"),         # the primary accepts, hands to the workers
    "node-none": ("shared", "epoll", None, False, "lt"),          # libuv: level-triggered
}
# What each peer configuration sets, in its own words.
PEER_SETTINGS = {
    "nginx-default": "accept_mutex off (the default)",
    "nginx-reuseport": "listen ... reuseport",
    "nginx-accept-mutex": "accept_mutex on",
    "haproxy-mq-on": "tune.listener.multi-queue on",
    "haproxy-mq-off": "tune.listener.multi-queue off",
    "node-rr": "NODE_CLUSTER_SCHED_POLICY=rr",
    "node-none": "NODE_CLUSTER_SCHED_POLICY=none",
}
FIELDS = ("listener", "listeners", "wait", "selector", "handoff", "closest_variant")
TRUTH_SOURCES = {"ours": "/pid answers", "nginx": "nginx access log $pid", "haproxy": "HAProxy thread",
                 "node": "/pid answers"}


def worker_counts(plan):
    return plan.worker_counts or (QUICK_WORKERS if plan.quick else DIAGNOSIS_WORKERS)


def arms_of(plan):
    """Our arms with the study's word ("quick:diagnosis" with --quick) that the campaign chose."""
    return [a for a in arms.in_study("quick:diagnosis" if plan.quick else "diagnosis") if a in plan.arms]


def peers_of(plan):
    """PEER_SERVERS (QUICK_PEERS with --quick), narrowed to --peers when given;
    none when the census runs too (it diagnoses them, beside their own record)."""
    if "census" in plan.studies:
        return []
    names = QUICK_PEERS if plan.quick else PEER_SERVERS
    return [n for n in names if plan.peers is None or n in plan.peers]


def peer_configs(plan):
    return peers_of(plan) if NAME in plan.studies else []


# Variants that hand a connection over only when the worker the kernel woke
# is not the one their pick names: a watch in which such a server handed
# nothing over shows the kernel only its wake (fdpass: EPOLLEXCLUSIVE, level
# triggered, the listener re-added as loads change, as exclusive-reorder),
# and the diagnosis is held to that (the server's own hand-off count says
# which).
WITHOUT_HANDOFF = {"fdpass": "exclusive-reorder"}


def expected_ours(arm, workers, handed_over=None):
    """What the diagnosis must name for our arm; handed_over: whether the
    server handed any connection over during the watch (None: not known,
    the variant's own mechanism)."""
    variant = arms.get(arm).variant
    if variant not in OURS_EXPECTED:
        raise StepFailed("no expected mechanism for variant %s: add its row to OURS_EXPECTED in "
                         "probes/studies/diagnosis.py" % variant)
    listener, wait, selector, handoff = OURS_EXPECTED[variant]
    closest = variant
    if variant in WITHOUT_HANDOFF and handed_over is False:
        handoff, closest = False, WITHOUT_HANDOFF[variant]
    return {"listener": listener, "listeners": workers if listener == "reuseport" else 1, "wait": wait,
            "selector": selector, "handoff": handoff, "closest_variant": closest}


def handoffs_now(arm, port):
    """For a variant that may hand nothing over (fdpass), its hand-offs so far (its shared
    page, through GET /variant); None for the others (not asked) or a server
    that reports none."""
    if arms.get(arm).variant not in WITHOUT_HANDOFF:
        return None
    return handoff_rate(port, 1).get("handoffs")


def expected_peer(name, workers):
    listener, wait, selector, handoff, closest = PEERS_EXPECTED[name]
    return {"listener": listener, "listeners": workers if listener == "reuseport" else 1, "wait": wait,
            "selector": selector, "handoff": handoff, "closest_variant": closest}


def meta(plan):
    if NAME not in plan.studies:
        return {}
    return {"diagnosis": {
        "arms": arms_of(plan), "workers": list(worker_counts(plan)), "peers": peers_of(plan),
        "peer_workers": peers.WORKERS, "modes": list(MODES), "load": LOAD, "per_worker": PER_WORKER,
        "passive_s": PASSIVE_S,
        "how": "each server started fresh, then bin/acceptlab-diagnose --port P run twice against it: active "
               "(--load burst --connections N; --request /pid and the probe's test switch reading the answers, "
               "except nginx, asked GET / with its access log as the truth) and passive (--duration; the study "
               "runs one burst of N asking /pid once it is attached); its served counts per worker set beside "
               "the server's own record"}}


def log_connections(path, start):
    """Distinct connections per $pid in the peers' nginx access log (format
    'peer': $pid $connection $connection_requests $request_uri) from a byte
    offset, the peers' readiness requests left out."""
    seen = set()
    try:
        with open(path, "rb") as f:
            f.seek(start)
            data = f.read()
    except OSError:
        return {}
    for line in data.decode(errors="replace").splitlines():
        parts = line.split()
        if len(parts) >= 4 and not parts[3].startswith("/peer-ready"):
            seen.add((parts[0], parts[1]))
    counts = {}
    for pid, _ in seen:
        counts[pid] = counts.get(pid, 0) + 1
    return counts


def settled_log(path, start, expected, wait=3.0):
    """log_connections once it holds `expected` connections (nginx logs a
    request just after answering it), or what it holds after `wait` s."""
    deadline = time.monotonic() + wait
    while True:
        counts = log_connections(path, start)
        if sum(counts.values()) >= expected or time.monotonic() > deadline:
            return counts
        time.sleep(0.05)


# ---- one diagnosis, beside the truth ----------------------------------------------

def diagnose_once(mode, port, connections, prefix, ready_path, probe_truth, running):
    """One diagnosis: (its diagnosis line, the probe's summary: the
    diagnosis's own in active mode, the study's in passive mode, and in
    passive mode {"watch_s": the watch asked for, "probe_s": from the
    attached line to the probe's end}). The
    Diagnose is appended to running, for the step to reap once it is done.
    probe_truth: the answers are the truth (the active probe asks /pid and
    reads the answers through the test switch)."""
    if mode == "active":
        args = ["--port", port, "--load", LOAD, "--connections", connections]
        if probe_truth:
            args += ["--request", "/pid"]
        d = Diagnose(args, prefix, env={TEST_SWITCH: "body"} if probe_truth else None)
        running.append(d)
        diag = d.read_until("diagnosis", DIAGNOSE_TIMEOUT_S)
        summaries = [l["line"] for l in d.lines() if l.get("kind") == "probe" and l["line"].get("type") == "summary"]
        summary = summaries[-1] if summaries else None
        timing = {}
    else:
        d = Diagnose(["--port", port, "--duration", PASSIVE_S], prefix)
        running.append(d)
        if d.read_until("attached", ATTACH_TIMEOUT_S) is None:
            raise StepFailed("acceptlab-diagnose exited %s before attaching: %s"
                             % (d.reap(), tail(prefix + ".diagnose.stderr")))
        attached = time.monotonic()
        summary = run_probe(port, ["--shape", LOAD, "--connections", str(connections), "--rounds", "1",
                                   "--path", "/pid", "--workers-from", ready_path], prefix)
        timing = {"watch_s": PASSIVE_S, "probe_s": round(time.monotonic() - attached, 3)}
        diag = d.read_until("diagnosis", DIAGNOSE_TIMEOUT_S)
    if diag is None:
        raise StepFailed("acceptlab-diagnose (%s) exited %s without a diagnosis: %s"
                         % (mode, d.reap(), tail(prefix + ".diagnose.stderr")))
    return diag, summary, timing


def reaped(running, rows):
    """Waits for every diagnosis the step started (killing what is left when
    the step failed); each row gets its diagnosis's exit code."""
    codes = []
    for d in running:
        codes.append(d.reap() if rows is not None else d.kill())
    for row, rc in zip(rows or [], codes):
        row["diagnose_exit"] = rc
    return rows


def split_of(counts):
    return "/".join(map(str, sorted(counts, reverse=True))) if counts else None


def diagnosis_row(base, mode, diag, timing, expected, truth, source, truth_ids, worker_ids, id_key, by_split):
    """The row: what the diagnosis said, the expectation and the truth, and
    whether they agree."""
    found = {k: diag.get(k) for k in FIELDS}
    served = {}
    for w in diag.get("workers") or []:
        ident = w.get(id_key)
        if ident is not None and w.get("served"):
            served[str(ident)] = served.get(str(ident), 0) + w["served"]
    truth = {str(k): v for k, v in truth.items() if v}
    ids = [str(w) for w in worker_ids]
    truth_split = split_of([truth.get(i, 0) for i in ids] + [n for i, n in truth.items() if i not in ids])
    if not diag.get("traced"):
        matches = False
    elif by_split:
        matches = sorted(served.values()) == sorted(truth.values())
    else:
        matches = served == truth
    mismatched = [k for k in FIELDS if found[k] != expected[k]]
    return dict(base, mode=mode, load=diag.get("load"), duration_s=diag.get("duration_s"), **timing,
                traced=diag.get("traced"), partial=diag.get("partial"),
                **found, split=diag.get("split"), split_of=diag.get("split_of"),
                within_2to1=diag.get("within_2to1"), fair_chance=diag.get("fair_chance"),
                per_worker=[{k: w.get(k) for k in ("pid", "tid", "accepted", "served")}
                            for w in diag.get("workers") or []],
                served=served, expected=expected, truth=truth, truth_source=source, truth_ids=truth_ids,
                truth_split=truth_split, compared_by="split" if by_split else truth_ids,
                served_matches_truth=matches, mechanism_matches=not mismatched, mismatched=mismatched)


def progress(rows):
    return "; ".join("%s %s%s" % (r["mode"], r.get("split") or "-",
                                  "" if r["served_matches_truth"] and r["mechanism_matches"] else
                                  " (MISMATCH: %s)" % ", ".join(
                                      (["served"] if not r["served_matches_truth"] else []) + r["mismatched"]))
                     for r in rows)


@contextlib.contextmanager
def failing_mode(base, mode, measured):
    """A mode that fails fails the step, keeping the rows measured before it
    and an error row for it."""
    try:
        yield
    except StepFailed as e:
        raise StepFailed(str(e), measured + [dict(base, mode=mode, error=str(e))])


def skipped_rows(base, why):
    return [dict(base, mode=m, error=why) for m in MODES]


def ours_step(plan, raw_dir, arm, workers):
    base = {"server": arm, "ours": True, "software": "acceptlab-server", "setting": " ".join(arms.server_args(arm)),
            "workers": workers}
    if not is_root():
        raise StepFailed(NEEDS_ROOT, skipped_rows(base, NEEDS_ROOT))
    connections = PER_WORKER * workers
    prefix = os.path.join(raw_dir, "diagnosis-%s-w%d" % (arm, workers))
    rows, running = None, []
    try:
        with ServerRun(arms.server_args(arm), workers, prefix, env=arms.env(arm)) as (proc, ready, ready_path):
            id_key = "tid" if ready["mode"] == "threads" else "pid"
            base.update(configuration=proc.args[1:], connections=connections)
            measured = []
            for mode in MODES:
                with failing_mode(base, mode, measured):
                    before = handoffs_now(arm, ready["port"])
                    diag, summary, timing = diagnose_once(mode, ready["port"], connections,
                                                          "%s.%s" % (prefix, mode), ready_path, True, running)
                    after = handoffs_now(arm, ready["port"])
                moved = None if before is None or after is None else after - before
                expected = expected_ours(arm, workers, None if moved is None else moved > 0)
                row = diagnosis_row(base, mode, diag, timing, expected, (summary or {}).get("counts") or {},
                                    TRUTH_SOURCES["ours"], id_key, [w[id_key] for w in ready["workers"]], id_key,
                                    False)
                if moved is not None:
                    row["server_handoffs"] = moved  # the server's own count, what the expectation follows
                measured.append(row)
        rows = measured
    finally:
        reaped(running, rows)
    return rows, progress(rows)


def peer_step(plan, raw_dir, name):
    software = peers.CONFIGS[name][0]
    ok, reason = peers.availability(name)
    if not ok:
        return ([{"kind": "unavailable", "server": name, "ours": False, "software": peers.software_version(software),
                  "reason": reason}], "unavailable: " + reason)
    base = {"server": name, "ours": False, "software": peers.software_version(software) or software,
            "setting": PEER_SETTINGS[name], "workers": peers.WORKERS}
    if not is_root():
        raise StepFailed(NEEDS_ROOT, skipped_rows(base, NEEDS_ROOT))
    connections = PER_WORKER * peers.WORKERS
    prefix = os.path.join(raw_dir, "diagnosis-%s" % name)
    rows, running = None, []
    try:
        with peer_running(name, peers.WORKERS, prefix, access_log=True) as peer:
            threads = peer.ready["mode"] == "threads"
            worker_ids = [w["tid"] if threads else w["pid"] for w in peer.ready["workers"]]
            conf = {"nginx": "nginx.conf", "haproxy": "haproxy.cfg"}.get(software)
            if conf:
                with open(os.path.join(peer.dir, conf)) as f:
                    configuration = f.read().replace(peer.dir, "<dir>")
            else:
                configuration = "%s=%s node %s PORT %d" % ("NODE_CLUSTER_SCHED_POLICY", peer.setting,
                                                           os.path.relpath(peers.CLUSTER_JS, ROOT), peers.WORKERS)
            base.update(configuration=configuration, connections=connections)
            measured = []
            for mode in MODES:
                from_log = software == "nginx"
                start = os.path.getsize(peer.access_log) if from_log and os.path.exists(peer.access_log) else 0
                with failing_mode(base, mode, measured):
                    diag, summary, timing = diagnose_once(mode, peer.port, connections, "%s.%s" % (prefix, mode),
                                                          peer.ready_file, not from_log, running)
                if from_log:
                    truth = settled_log(peer.access_log, start, connections)
                else:
                    truth = (summary or {}).get("counts") or {}
                measured.append(diagnosis_row(base, mode, diag, timing, expected_peer(name, peers.WORKERS), truth,
                                              TRUTH_SOURCES[software], "thread number" if threads else "pid",
                                              worker_ids, "tid" if threads else "pid", threads))
        rows = measured
    finally:
        reaped(running, rows)
    return rows, progress(rows)


def steps(plan, raw_dir):
    """One step per server: our arms at each worker count, then the peers."""
    for workers in worker_counts(plan):
        for arm in arms_of(plan):
            def step(arm=arm, workers=workers):
                return ours_step(plan, raw_dir, arm, workers)
            yield "%s %dw" % (arm, workers), step, {"server": arm, "ours": True, "workers": workers}
    for name in peers_of(plan):
        def step(name=name):
            return peer_step(plan, raw_dir, name)
        yield name, step, {"server": name, "ours": False, "workers": peers.WORKERS}
