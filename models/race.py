"""race.py: the accept-race model of models/skew.py.

Wake-to-accept latency distributions (Latency, LatencySource) and the readers
that load them from the tracer's JSON lines, a campaign's trace.jsonl,
bin/exclusive-model --json output or plain µs values (load_latencies); and
the discrete-event simulation of the bare accept race on them (race_round,
simulate_race), with its defaults and what it assumes (RACE_ASSUMPTIONS).
See models/README.md (race, validate).
"""

import bisect
import collections
import heapq
import json
import math
import random

from acceptlab import balance
from acceptlab.results_io import arm_of
from models.skew_io import InputError
from models.spread import rank_envelope, split_text

# The race model's defaults, and why.
ARRIVAL_US = 22.0        # burst: one connect every this many µs (a run's bursts: balancing rows' issue_span_us)
RAMP_GAP_MS = 10.0       # ramp: the campaign's gap at 2 workers
ACCEPT_US = 2.0          # one warm accept4() (exclusive-model --json measures it: accept_call_us)
# The tracer pairs a wake-up with the next accept, whatever woke the thread: a
# worker woken to read a request that next accepts at the following
# connection yields a gap-sized "latency" (ms). Those are not wake-to-accept
# latencies of a race: samples from MAX_LATENCY_US up are dropped (and counted).
MAX_LATENCY_US = 4096.0

RACE_ASSUMPTIONS = """\
The race model assumes:
  - connections arrive at known times: a burst (one every --arrival-us) or a
    ramp (one every --gap-ms); each arrival joins one shared accept queue;
  - every arrival wakes every worker asleep in epoll_wait (EPOLLET, no
    EPOLLEXCLUSIVE), in wait-queue order: add_wait_queue puts each entry at the
    head, so the last-registered worker is woken first; a worker that is awake
    is not woken again, but an arrival while it is awake is remembered (the
    edge-triggered ready list) and, if the queue is non-empty when it next calls
    epoll_wait, it goes straight back to accept;
  - a woken worker needs a CPU: at most C run at once (with --client-cpu the
    client holds one of them until its last connect); the others wait in one
    FIFO run queue, and a worker holds its CPU from dispatch until it sleeps;
  - from dispatch it reaches accept after a latency drawn from the measured
    wake-to-accept distribution (with --per-worker worker i draws from the
    (i mod L)-th of L per-worker distributions), independently for every
    wake-up;
  - at accept it drains: each accept4() costs --accept-us and takes one queued
    connection; the accept that finds the queue empty (EAGAIN) costs the same,
    then the worker sleeps; two workers draining at once share the queue;
  - nothing else runs: no request handling during the burst (the probe asks
    only once every connection is open), no interrupts, no migrations, no
    preemption, and the latency distribution does not depend on load or N;
  - latency samples of 4096 µs and more are dropped (counted in the output):
    the tracer pairs a wake-up with the next accept whatever woke the thread.
"""


# ---------------------------------------------------------------- latencies

class Latency:
    """A wake-to-accept latency distribution in µs: empirical samples (drawn
    uniformly among them), or a log2 histogram whose key k counts samples in
    [2^k, 2^(k+1)) µs, drawn uniformly within the bucket; key 0 is [0, 2) µs,
    as bin/acceptlab-trace fills it (sub-µs latencies land there too)."""

    def __init__(self, label, samples=None, hist=None):
        self.label = label
        if samples is not None:
            self.samples = sorted(samples)
            self.count = len(self.samples)
            self.cum = None
        else:
            keys = sorted(hist)
            self.keys = keys
            self.cum = []
            total = 0
            for key in keys:
                total += hist[key]
                self.cum.append(total)
            self.count = total
            self.samples = None
        if self.count == 0:
            raise InputError(f"{label}: no latency samples")

    def draw(self, rand):
        if self.samples is not None:
            return self.samples[int(rand.random() * self.count)]
        i = bisect.bisect_right(self.cum, rand.random() * self.count)
        k = self.keys[min(i, len(self.keys) - 1)]
        if k == 0:
            return 2.0 * rand.random()
        return (2.0 ** k) * (1.0 + rand.random())

    def quantile(self, q):
        if self.samples is not None:
            return self.samples[min(self.count - 1, int(q * self.count))]
        i = bisect.bisect_left(self.cum, q * self.count)
        k = self.keys[min(i, len(self.keys) - 1)]
        return 2.0 ** k * 1.5


class LatencySource:
    """Pooled and per-worker latency distributions, and where they came from."""

    def __init__(self, pooled, per_worker, origin, dropped=0):
        self.pooled = pooled
        self.per_worker = per_worker
        self.origin = origin
        self.dropped = dropped

    def describe(self):
        p = self.pooled
        text = (f"{self.origin}: {p.count} samples, p50 {p.quantile(0.5):.1f} µs, "
                f"p90 {p.quantile(0.9):.1f} µs, {len(self.per_worker)} per-worker")
        if self.dropped:
            text += f"; {self.dropped} at or over {MAX_LATENCY_US:.0f} µs dropped (not a race's wake-up)"
        return text


def _hist_from(obj, where):
    raw = obj.get("wake_to_accept_us_log2")
    if not isinstance(raw, dict):
        raise InputError(f"{where}: 'wake_to_accept_us_log2' is not an object")
    hist = {}
    for key, count in raw.items():
        try:
            k = int(key)
        except ValueError:
            raise InputError(f"{where}: histogram key '{key}' is not an integer")
        if not 0 <= k <= 40 or not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise InputError(f"{where}: histogram entry '{key}': {count!r} is not a count")
        if count:
            hist[k] = hist.get(k, 0) + count
    return hist


def load_latencies(path, variant="bare", shape=None, mode="process", cap=MAX_LATENCY_US):
    """Reads a latency file, any of:
      - bin/acceptlab-trace --json: {"type":"worker","tid":..,"wake_to_accept_us_log2":{..}} lines;
      - a campaign's trace.jsonl: {"arm":..,"shape":..,"mode":..,"workers":[{.., "index":i,
        "wake_to_accept_us_log2":{..}}, ..]} rows ("variant" for the arm in rows written before
        the rows said arm: acceptlab/results_io.py's arm_of); the arm, shape and mode are then
        filtered: `variant` (the arm), `shape` if given and present, falling back to every
        shape, and `mode`;
      - bin/exclusive-model --json output (each connection's per-child wake_us);
      - one number (µs) per line.
    Other JSON lines are skipped; '#' starts a comment. Samples from `cap` µs
    up are dropped and counted (see MAX_LATENCY_US)."""
    try:
        f = open(path)
    except OSError as e:
        raise InputError(f"{path}: {e.strerror}")
    pooled_samples, worker_samples = [], collections.defaultdict(list)
    entries = []  # (where, worker object, arm, shape, mode)
    dropped = 0
    with f:
        for lineno, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            where = f"{path}:{lineno}"
            try:
                obj = json.loads(line)
            except ValueError:
                raise InputError(f"{where}: neither a JSON object nor a number")
            if isinstance(obj, (int, float)) and not isinstance(obj, bool):
                if not obj > 0 or math.isinf(obj):
                    raise InputError(f"{where}: latency {obj} µs is not positive")
                if obj >= cap:
                    dropped += 1
                    continue
                pooled_samples.append(float(obj))
            elif not isinstance(obj, dict):
                raise InputError(f"{where}: neither a JSON object nor a number")
            elif obj.get("type") == "worker" and "wake_to_accept_us_log2" in obj:
                entries.append((where, obj, arm_of(obj), obj.get("shape"), obj.get("mode")))
            elif isinstance(obj.get("workers"), list) and any(
                    isinstance(w, dict) and "wake_to_accept_us_log2" in w for w in obj["workers"]):
                for w in obj["workers"]:
                    if not isinstance(w, dict) or "wake_to_accept_us_log2" not in w:
                        raise InputError(f"{where}: a worker without 'wake_to_accept_us_log2'")
                    entries.append((where, w, arm_of(obj), obj.get("shape"), obj.get("mode")))
            elif obj.get("type") == "connection" and isinstance(obj.get("wake_us"), list):
                for i, v in enumerate(obj["wake_us"]):
                    if v is None:
                        continue
                    if not isinstance(v, (int, float)) or isinstance(v, bool) or v <= 0:
                        raise InputError(f"{where}: wake_us entry {v!r} is not a positive number")
                    if v >= cap:
                        dropped += 1
                        continue
                    worker_samples[i].append(float(v))
                    pooled_samples.append(float(v))
    if entries:
        origin = f"trace {path} (log2 histograms"
        variants = sorted({e[2] for e in entries if e[2] is not None})
        if variants:
            entries = [e for e in entries if e[2] == variant]
            if not entries:
                raise InputError(f"{path}: no worker histograms for variant '{variant}' "
                                 f"(has: {', '.join(variants)})")
            origin += f", variant {variant}"
        if any(e[4] is not None for e in entries):
            entries = [e for e in entries if (e[4] or "process") == mode] or entries
        if shape and any(e[3] == shape for e in entries):
            entries = [e for e in entries if e[3] == shape]
            origin += f", shape {shape}"
        # One distribution per worker: by its index when the rows give one, else its tid.
        per_key, pooled_hist = collections.OrderedDict(), {}
        for where, w, *_ in entries:
            hist = _hist_from(w, where)
            for k in [k for k in hist if 2.0 ** k >= cap]:
                dropped += hist.pop(k)
            key = ("index", w["index"]) if w.get("index") is not None else ("tid", w.get("tid"))
            merged = per_key.setdefault(key, {})
            for k, c in hist.items():
                merged[k] = merged.get(k, 0) + c
                pooled_hist[k] = pooled_hist.get(k, 0) + c
        if not pooled_hist:
            raise InputError(f"{path}: the worker histograms hold no sample under {cap:.0f} µs")
        per_worker = [Latency(f"{path} {kind} {ident}", hist=h) for (kind, ident), h in sorted(
            per_key.items(), key=lambda kv: (kv[0][0], kv[0][1] if kv[0][1] is not None else -1)) if h]
        return LatencySource(Latency(path, hist=pooled_hist), per_worker, origin + ")", dropped)
    if not pooled_samples:
        raise InputError(f"{path}: no latency samples or worker histograms")
    per_worker = [Latency(f"{path} child {i}", samples=v) for i, v in sorted(worker_samples.items()) if v]
    return LatencySource(Latency(path, samples=pooled_samples), per_worker, f"samples {path}", dropped)


# ---------------------------------------------------------------- race

SLEEP, RUNQ, LAT, DRAIN, FAIL = range(5)
EV_ARRIVE, EV_CLIENT_DONE, EV_REACH, EV_DONE, EV_FAILED = range(5)


def race_round(workers, cpus, arrivals, latency_of, rand, accept_us, client_until):
    """One round of the bare accept race; returns connections per worker.
    `latency_of(w)` draws worker w's wake-to-accept latency."""
    k = len(arrivals)
    heap = [(t, i, EV_ARRIVE, -1) for i, t in enumerate(arrivals)]
    heapq.heapify(heap)
    push, pop = heapq.heappush, heapq.heappop
    seq = k
    state = [SLEEP] * workers
    sleeping = list(range(workers))
    # An edge came while worker w was awake iff an arrival is newer than its
    # last look at the queue (the edge-triggered ready list, without touching
    # every awake worker on every arrival).
    last_arrival = -1.0
    looked = [0.0] * workers
    counts = [0] * workers
    runq = collections.deque()
    free = cpus
    queue = 0
    accepted = 0
    if client_until is not None:
        free -= 1
        push(heap, (client_until, seq, EV_CLIENT_DONE, -1))
        seq += 1

    while accepted < k:
        t, _, kind, w = pop(heap)
        if kind == EV_ARRIVE:
            queue += 1
            last_arrival = t
            if sleeping:
                # add_wait_queue puts each entry at the head: the last-registered is woken first.
                sleeping.sort(reverse=True)
                for v in sleeping:
                    if free > 0:
                        free -= 1
                        state[v] = LAT
                        push(heap, (t + latency_of(v), seq, EV_REACH, v))
                        seq += 1
                    else:
                        state[v] = RUNQ
                        runq.append(v)
                sleeping.clear()
            continue
        if kind == EV_DONE:
            counts[w] += 1
            accepted += 1
            if accepted == k:
                break
            at_accept = True  # accept until EAGAIN: the next accept4() right away
        elif kind == EV_FAILED:
            # EAGAIN: back to epoll_wait, which returns at once only if an edge
            # came while this worker was awake and the queue still holds one.
            at_accept = last_arrival > looked[w] and queue > 0
            if not at_accept:
                state[w] = SLEEP
                sleeping.append(w)
        else:
            at_accept = kind == EV_REACH
        if at_accept:
            looked[w] = t
            if queue > 0:
                queue -= 1
                state[w] = DRAIN
                push(heap, (t + accept_us, seq, EV_DONE, w))
            else:
                state[w] = FAIL
                push(heap, (t + accept_us, seq, EV_FAILED, w))
            seq += 1
            continue
        # A CPU came free: the client finished its connects, or a worker slept.
        free += 1
        while free > 0 and runq:
            v = runq.popleft()
            free -= 1
            state[v] = LAT
            push(heap, (t + latency_of(v), seq, EV_REACH, v))
            seq += 1
    return counts


def simulate_race(workers, cpus, connections, rounds, seed, latency, shape="burst",
                  arrival_us=ARRIVAL_US, gap_ms=RAMP_GAP_MS, accept_us=ACCEPT_US,
                  client_cpu=False, per_worker=False):
    """R rounds of the race; the predicted distribution of splits: how many
    fall outside 2:1, the commonest splits, and their shape (spread.rank_envelope:
    per rank, busiest first, the median count and the range that holds at
    least 95% of the rounds at every rank at once)."""
    rand = random.Random(seed)
    if shape == "burst":
        arrivals = [i * arrival_us for i in range(connections)]
    else:
        arrivals = [i * gap_ms * 1000.0 for i in range(connections)]
    client_until = arrivals[-1] if (client_cpu and shape == "burst") else None
    if per_worker and latency.per_worker:
        dists = latency.per_worker
        latency_of = lambda w: dists[w % len(dists)].draw(rand)  # noqa: E731
    else:
        pooled = latency.pooled
        latency_of = lambda w: pooled.draw(rand)  # noqa: E731
    splits = collections.Counter()
    shapes = []
    outside = 0
    max_share = 0.0
    starved = 0
    for _ in range(rounds):
        counts = race_round(workers, cpus, arrivals, latency_of, rand, accept_us, client_until)
        splits[split_text(counts)] += 1
        shapes.append(sorted(counts, reverse=True))
        if not balance.within_2to1(counts):
            outside += 1
        max_share += max(counts) / connections
        starved += sum(1 for c in counts if c == 0)
    return {
        "model": "race", "workers": workers, "cpus": cpus, "connections": connections,
        "rounds": rounds, "seed": seed, "shape": shape,
        "arrival_us": arrival_us if shape == "burst" else None,
        "gap_ms": gap_ms if shape == "ramp" else None,
        "accept_us": accept_us, "client_cpu": bool(client_cpu and shape == "burst"),
        "per_worker": bool(per_worker and latency.per_worker),
        "latency_source": latency.origin,
        "outside": outside / rounds, "outside_rounds": outside,
        "mean_max_share": round(max_share / rounds, 4),
        "max_over_fair": round(max_share / rounds * workers, 3),
        "mean_starved_workers": round(starved / rounds, 3),
        "splits": dict(splits.most_common(10)),
        "split_shape": rank_envelope(shapes),
    }
