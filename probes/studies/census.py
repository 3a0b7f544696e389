"""census: real servers, unchanged, diagnosed by the kernel and cross-checked
against their own record -> census.jsonl.

Every configuration of every software in probes/peers/software/ (nginx x4,
HAProxy x3, Node x2, Apache, gunicorn, uWSGI, lighttpd, h2o, Caddy, Puma,
Unicorn, php-fpm, Varnish), at each worker count (CENSUS_WORKERS with
`make census`, 2 in `make measure`, up to 8 with make bench's counts), is
started fresh on a free loopback port (probes/peers/peers.py's Peer: a
temp dir, its own session, stopped by process group) and then:

  shapes      `acceptlab-diagnose --port P --load SHAPE --rounds 3
              --connections 16 x workers --json` for burst, ramp and
              keepalive (php-fpm, which speaks FastCGI: burst and ramp with
              --tcp; keepalive is not applicable): the mechanism it finds
              (listener, listeners, wait, selector, handoff, closest
              variant) and each round's split, attributed by the kernel,
              never by asking the server. Where the software keeps a
              record of which worker served (an access log with the
              worker's pid: nginx $pid, Apache %P, gunicorn %(p)s, uWSGI
              %(pid)), the record's connections per pid over the same
              three rounds are set beside the diagnosis's.
  held        for a server that keeps no such record: one more burst,
              watched by a passive diagnosis and held open once every
              connection is answered (the probe's --pause-at asked):
              sock_diag's owner of each held connection (`ss -tnp`: which
              process holds its descriptor) beside the diagnosis's served
              counts per process. For php-fpm, whose shapes send nothing,
              that many FastCGI requests (cgi-fcgi, one connection each) and
              its access log's %p instead. HAProxy, whose workers are
              threads of one process, answers its thread number (%[thread]):
              the probe's counts of those answers, compared as a split.

A configuration this software rejects, or a software that is missing, is
one "unavailable" row with the reason; a server that does not start is an
"error" row with its log's last lines. Nothing is left running: each step
stops its server's process group and every diagnosis and probe it started.
Without root the diagnosis cannot trace: every row says so."""

import json
import os
import re
import subprocess
import threading
import time

from probes.harness.diagnose import DIAGNOSE_TIMEOUT_S, Diagnose, kill_group
from probes.harness.lifecycle import StepFailed, is_root, register, registering, tail
from probes.harness.probe import PROBE
from probes.harness.servers import peer_running
from probes.peers import peers
from probes.peers.software import SOFTWARE

NAME = "census"
CENSUS_WORKERS = (2, 4)      # make census (--worker-counts 2,4)
DEFAULT_WORKERS = (2,)       # the campaign's, when no --worker-counts is given (make measure)
MAX_WORKERS = 8              # worker counts above this are left out (make bench's 16)
SHAPES = ("burst", "ramp", "keepalive")
ROUNDS = 3                   # rounds per shape, each split on its own
PER_WORKER = 16              # connections per worker per round: 32 at 2 workers
ATTACH_TIMEOUT_S = 20
HELD_WATCH_S = 1.0           # the passive watch, from the moment it is attached; the held burst takes less
FIELDS = ("listener", "listeners", "wait", "selector", "handoff", "closest_variant")
QUICK_SERVERS = ("nginx-default", "apache-event")  # --quick: two of them
NEEDS_ROOT = "skipped: needs root (the diagnosis attributes connections by tracing them with BPF)"


def worker_counts(plan):
    counts = plan.worker_counts or DEFAULT_WORKERS
    return tuple(w for w in counts if w <= MAX_WORKERS)


def servers_of(plan):
    """Every configuration the softwares know (QUICK_SERVERS with --quick),
    narrowed to --peers when given."""
    names = QUICK_SERVERS if plan.quick else [n for n in peers.CONFIGS if n not in peers.ANCHORS]
    return [n for n in names if plan.peers is None or n in plan.peers]


def peer_configs(plan):
    return servers_of(plan) if NAME in plan.studies else []


def arms_of(plan):
    """None of the table's: the census's servers are other people's."""
    return []


def meta(plan):
    if NAME not in plan.studies:
        return {}
    return {"census": {
        "servers": servers_of(plan), "workers": list(worker_counts(plan)), "shapes": list(SHAPES),
        "rounds": ROUNDS, "per_worker": PER_WORKER,
        "software": {k: {"packages": list(s.packages), "mode": s.mode, "truth": s.truth, "http": s.http,
                         "settings": {n: s.settings.get(v, v) for n, v in s.configs.items()},
                         "documented": {n: s.documented[v] for n, v in s.configs.items() if v in s.documented}}
                     for k, s in SOFTWARE.items()},
        "how": "each configuration started fresh per worker count (probes/peers/peers.py Peer), then "
               "bin/acceptlab-diagnose --load SHAPE --rounds 3 per shape (burst, ramp, keepalive; --tcp "
               "for FastCGI), the server's access log (worker pid) counted over the same rounds where it "
               "keeps one; where it keeps none, one burst held open under a passive diagnosis with "
               "sock_diag's owner of each held connection (HAProxy: its %[thread] answers; php-fpm: "
               "FastCGI requests and its access log)"}}


# ---- the truth beside the diagnosis -------------------------------------------

def served_by(diag, key):
    """{pid or tid: connections} the diagnosis says each served."""
    out = {}
    for w in diag.get("workers") or []:
        ident = w.get(key)
        if ident and w.get("served"):
            out[str(ident)] = out.get(str(ident), 0) + w["served"]
    return out


def settled(fn, expected, wait=3.0):
    """fn() once its counts add up to expected (logs are written just after
    the answer), or what it gives after wait s."""
    deadline = time.monotonic() + wait
    while True:
        counts = fn()
        if sum(counts.values()) >= expected or time.monotonic() > deadline:
            return counts
        time.sleep(0.05)


def owners(port):
    """{pid: established connections on port whose descriptor it holds}, from
    sock_diag (ss -tnp): the server side of each (its local port is port)."""
    out = subprocess.run(["ss", "-tnpH", "state", "established", "( sport = :%d )" % port],
                         capture_output=True, text=True, timeout=10).stdout
    counts = {}
    for line in out.splitlines():
        pids = sorted(set(re.findall(r"pid=(\d+)", line)))
        key = pids[0] if len(pids) == 1 else ",".join(pids) or "none"
        counts[key] = counts.get(key, 0) + 1
    return counts


def compare(diagnosed, truth, by_split):
    """Whether the diagnosis's counts equal the truth's (by id, or as
    splits when the truth's ids are not the kernel's)."""
    diagnosed = {k: v for k, v in diagnosed.items() if v}
    truth = {k: v for k, v in truth.items() if v}
    if by_split:
        return sorted(diagnosed.values()) == sorted(truth.values())
    return diagnosed == truth


# ---- one server ---------------------------------------------------------------

def diagnose_shape(peer, sw, shape, connections, prefix, running):
    """The active diagnosis of one shape, its rounds split one by one."""
    args = ["--port", peer.port, "--load", shape, "--connections", connections, "--rounds", ROUNDS]
    if not sw.http:
        args.append("--tcp")
    d = Diagnose(args, prefix)
    running.append(d)
    diag = d.read_until("diagnosis", DIAGNOSE_TIMEOUT_S)
    if diag is None:
        raise StepFailed("acceptlab-diagnose (%s) exited %s without a diagnosis: %s"
                         % (shape, d.reap(), tail(prefix + ".diagnose.stderr")))
    return diag


def mechanism(diag):
    return {k: diag.get(k) for k in FIELDS}


def shape_row(base, shape, diag, sw, truth):
    rounds = diag.get("rounds") or []
    key = "tid" if sw.mode == "threads" else "pid"
    row = dict(base, kind="shape", shape=shape, traced=diag.get("traced"), partial=diag.get("partial"),
               **mechanism(diag), wait_detail=diag.get("wait_detail"), split=diag.get("split"),
               split_of=diag.get("split_of"),
               rounds=[{k: r.get(k) for k in ("round", "split", "within_2to1", "connections", "fair_chance")}
                       for r in rounds],
               within=sum(1 for r in rounds if r.get("within_2to1")), of=len(rounds),
               per_worker=[{k: w.get(k) for k in ("pid", "tid", "comm", "accepted", "served", "wait")}
                           for w in diag.get("workers") or []],
               served=served_by(diag, key))
    if truth is not None:
        row["crosscheck"] = {"source": sw.truth, "truth": truth, "diagnosed": served_by(diag, "pid"),
                             "equal": compare(served_by(diag, "pid"), truth, False)}
    return row


def needs_held_check(sw):
    """The held burst, for a server whose shapes had no record beside them:
    one that keeps no pid log, or php-fpm (its shapes send nothing, so its
    log is read over FastCGI requests in the held check)."""
    return not sw.keeps_pid_log() or not sw.http


def held_probe_args(peer, sw, connections):
    args = ["--shape", "burst", "--connections", str(connections), "--rounds", "1", "--pause-at", "asked"]
    if sw.answers_pid:
        return args + ["--path", "/pid", "--workers-from", peer.ready_file]
    return args + ["--path", "/", "--worker-from", "none"]


def held_check(peer, sw, connections, prefix, running):
    """One burst under a passive diagnosis, held open once answered:
    sock_diag's owners (or the answers) beside the diagnosis."""
    d = Diagnose(["--port", peer.port, "--duration", HELD_WATCH_S], prefix)
    running.append(d)
    if d.read_until("attached", ATTACH_TIMEOUT_S) is None:
        raise StepFailed("acceptlab-diagnose exited %s before attaching: %s"
                         % (d.reap(), tail(prefix + ".diagnose.stderr")))
    seen, held_open = None, None
    if sw.http:
        cmd = [PROBE, "--target", "127.0.0.1:%d" % peer.port, *held_probe_args(peer, sw, connections), "--json"]
        with registering():
            proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=open(prefix + ".probe.stderr", "w"), text=True, start_new_session=True)
            register(proc, kill_group)
        lines = []
        try:
            for line in proc.stdout:
                lines.append(line)
                if '"event":"held"' in line:
                    seen = owners(peer.port)
                    held_open = json.loads(line).get("open")
                    proc.stdin.write("\n")
                    proc.stdin.flush()
            proc.wait(timeout=DIAGNOSE_TIMEOUT_S)
        finally:
            kill_group(proc)
        with open(prefix + ".probe.jsonl", "w") as f:
            f.write("".join(lines))
        summary = [json.loads(l) for l in lines if '"summary"' in l]
        answered = summary[-1].get("counts") if summary and sw.answers_pid else None
    else:
        start = sw.log_size(peer.dir)
        done = fastcgi_burst(sw, peer, connections)
        answered = None
        seen = settled(lambda: sw.log_connections(peer.dir, start), done)
    diag = d.read_until("diagnosis", DIAGNOSE_TIMEOUT_S)
    if diag is None:
        raise StepFailed("the passive diagnosis exited %s without a diagnosis: %s"
                         % (d.reap(), tail(prefix + ".diagnose.stderr")))
    return diag, seen, answered, held_open


def fastcgi_burst(sw, peer, n):
    """n FastCGI requests at once (one connection each); how many were answered."""
    ok = []
    threads = [threading.Thread(target=lambda: ok.append(sw.fastcgi_request(peer.dir, peer.port)))
               for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(ok)


def held_row(base, sw, diag, seen, answered, held_open, connections):
    if sw.mode == "threads" and answered is not None:
        source, truth, diagnosed, by_split = sw.truth, answered, served_by(diag, "tid"), True
    elif not sw.http:
        source, truth, diagnosed, by_split = sw.truth, seen, served_by(diag, "pid"), False
    else:
        source, truth, diagnosed, by_split = "sock_diag owner of each held connection", seen, served_by(diag, "pid"), False
    return dict(base, kind="held", connections=connections, held_open=held_open, traced=diag.get("traced"),
                **mechanism(diag),
                split=diag.get("split"), within_2to1=diag.get("within_2to1"),
                crosscheck={"source": source, "truth": truth, "diagnosed": diagnosed,
                            "compared_by": "split" if by_split else "pid",
                            "per_process_only": sw.mode == "threads" and not by_split,
                            "equal": compare(diagnosed, truth or {}, by_split)})


def server_step(plan, raw_dir, name, workers):
    key, setting = peers.CONFIGS[name]
    sw = SOFTWARE[key]
    ok, reason = peers.availability(name, workers)
    if not ok:
        return ([{"kind": "unavailable", "server": name, "software": key, "version": sw.version(),
                  "workers": workers, "reason": reason}], "unavailable: " + reason)
    base = {"server": name, "software": key, "version": sw.version(), "setting": sw.settings.get(setting, setting),
            "workers": workers, "mode": sw.mode}
    if not is_root():
        raise StepFailed(NEEDS_ROOT, [dict(base, kind="error", error=NEEDS_ROOT)])
    prefix = os.path.join(raw_dir, "census-%s-w%d" % (name, workers))
    connections = PER_WORKER * workers
    rows, running, texts = [], [], []
    done = False
    try:
        with peer_running(name, workers, prefix, access_log=True) as peer:
            base["port"] = peer.port
            base["workers_found"] = [w["tid"] if sw.mode == "threads" else w["pid"] for w in peer.ready["workers"]]
            for shape in SHAPES:
                if shape == "keepalive" and not sw.http:
                    rows.append(dict(base, kind="shape", shape=shape, not_applicable="FastCGI: the probe asks "
                                     "no keep-alive requests of it (--tcp sends nothing)"))
                    continue
                start = sw.log_size(peer.dir) if sw.keeps_pid_log() and sw.http else None
                diag = diagnose_shape(peer, sw, shape, connections, "%s.%s" % (prefix, shape), running)
                truth = None
                if start is not None:
                    truth = settled(lambda: sw.log_connections(peer.dir, start),
                                    sum(served_by(diag, "pid").values()))
                rows.append(shape_row(base, shape, diag, sw, truth))
                texts.append("%s %s" % (shape, " ".join(r["split"] or "-" for r in rows[-1]["rounds"])))
            if needs_held_check(sw):
                diag, seen, answered, held_open = held_check(peer, sw, connections, prefix + ".held", running)
                rows.append(held_row(base, sw, diag, seen, answered, held_open, connections))
                texts.append("held %s" % ("equal" if rows[-1]["crosscheck"]["equal"] else "DIFFERS"))
        done = True
    except StepFailed as e:
        raise StepFailed(str(e), rows + [dict(base, kind="error", error=str(e))])
    finally:
        for d in running:
            d.reap() if done else d.kill()
    first = next((r for r in rows if r.get("kind") == "shape" and "listener" in r), {})
    head = "%s/%s/%s" % (first.get("listener"), first.get("wait"), first.get("closest_variant"))
    return rows, "%s: %s" % (head, "; ".join(texts))


def steps(plan, raw_dir):
    """One step per configuration and worker count."""
    for workers in worker_counts(plan):
        for name in servers_of(plan):
            def step(name=name, workers=workers):
                return server_step(plan, raw_dir, name, workers)
            yield "%s %dw" % (name, workers), step, {"server": name, "workers": workers}
