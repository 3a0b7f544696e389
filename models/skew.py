"""skew.py: acceptlab's analytic and simulation models of accept skew.

How acceptlab speaks about machines bigger than the one it runs on:

  analytic   the exact chance that a hash spread (SO_REUSEPORT, no BPF) of K
             connections over N workers lands outside 2:1 (max > 2 x min, a
             worker with none counts as outside): multinomial(K, 1/N) counted
             exactly, or Monte Carlo with a stated seed when that is too big.
  compare    that number against bin/reuseport-model's measured fraction,
             with a 95% Clopper-Pearson interval for the measurement.
  race       a discrete-event simulation of the bare accept race (shared
             listener, EPOLLET, accept until EAGAIN), driven by measured
             wake-to-accept latencies; predicts the split for N workers on C
             CPUs (--sweep: N = 2..64, C = 2..64).
  validate   the race model at 2 workers, 2 CPUs against a campaign's
             measured bare rows (balancing.jsonl).
  campaign   runs everything above and writes DIR/models.jsonl, one row per
             case, for the report.

Every subcommand has --help; bad input exits 2 with one line naming the
argument, or the file and line. Machine output (--json) is one JSON object
per line. See models/README.md for what each model assumes and where it was
checked.

The models themselves live beside this file: spread.py (the analytic hash
spread, Clopper-Pearson intervals) and race.py (wake-to-accept
latencies and the race simulation); skew_io.py holds the InputError they
share; the 2:1 test is acceptlab/balance.py's. This file is the command
line, the measured rows, validation and the campaign; it re-exports the
models' names (skew.analytic, skew.race_round, skew.load_latencies, ...)
for callers and tests.
"""

import sys

if __name__ == "__main__" and not __package__:  # run by path: the packages it imports are not found
    sys.stderr.write("skew.py: run it as a module from the repository's top: "
                     "/usr/bin/python3 -m models.skew\n")
    sys.exit(2)

import argparse
import collections
import json
import math
import os
import subprocess
import time
from pathlib import Path

from acceptlab import balance, results_io  # (the 2:1 bar; the JSON Lines reader the report uses)
from acceptlab.paths import ROOT

# The models' public names, re-exported: tests and callers use them as skew.<name>.
from models.skew_io import InputError  # noqa: F401
from models.spread import (  # noqa: F401
    EXACT_MAX_OPS, MC_SAMPLES, MC_SEED, analytic, clopper_pearson, consistent_outcomes, count_within,
    outside_exact, outside_monte_carlo, rank_envelope, ranks_outside, split_text)
from models.race import (  # noqa: F401
    ACCEPT_US, ARRIVAL_US, MAX_LATENCY_US, RACE_ASSUMPTIONS, RAMP_GAP_MS, Latency, LatencySource,
    load_latencies, race_round, simulate_race)

PROG = "skew.py"

# The race sweep's grid (the race model's own defaults are in race.py).
SWEEP_WORKERS = (2, 4, 8, 16, 32, 64)
SWEEP_CPUS = (2, 4, 8, 16, 32, 64)
SWEEP_PER_WORKER = 16    # connections per worker in the sweep: 32 at 2 workers, the measured case
SWEEP_ROUNDS = 200       # the campaign's rounds per sweep cell (the row carries each cell's interval)
SWEEP_ROUNDS_QUICK = 40
BALANCING_PER_WORKER = 16  # the balancing study's shapes: 16 connections per worker at every count
BALANCING_RAMP_SPAN_MS = 320  # and its ramp's connections RAMP_SPAN / (16 x N) ms apart (10 at 2 workers)


# ---------------------------------------------------------------- command line

class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line naming the argument, exit 2."""

    def error(self, message):
        sys.stderr.write(f"{self.prog}: {message} (see --help)\n")
        sys.exit(2)


def int_in(lo, hi):
    def parse(s):
        try:
            v = int(s)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer in {lo}..{hi}, got '{s}'")
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"expected an integer in {lo}..{hi}, got '{s}'")
        return v
    return parse


def float_in(lo, hi):
    def parse(s):
        try:
            v = float(s)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number in {lo}..{hi}, got '{s}'")
        if not (lo <= v <= hi) or math.isnan(v):
            raise argparse.ArgumentTypeError(f"expected a number in {lo}..{hi}, got '{s}'")
        return v
    return parse


def int_list(lo, hi):
    def parse(s):
        out = []
        for part in s.split(","):
            try:
                v = int(part)
            except ValueError:
                raise argparse.ArgumentTypeError(f"expected integers in {lo}..{hi} separated by commas, got '{s}'")
            if not lo <= v <= hi:
                raise argparse.ArgumentTypeError(f"expected integers in {lo}..{hi} separated by commas, got '{s}'")
            out.append(v)
        return out
    return parse


def latency_list(s):
    out = []
    for part in s.replace(",", " ").split():
        try:
            v = float(part)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected latencies in µs separated by commas, got '{part}'")
        if not v > 0 or math.isinf(v):
            raise argparse.ArgumentTypeError(f"expected positive latencies in µs, got '{part}'")
        out.append(v)
    if not out:
        raise argparse.ArgumentTypeError("expected at least one latency in µs")
    return out


def log_line(text):
    print(text, flush=True)


def emit(obj):
    print(json.dumps(obj, separators=(",", ":")), flush=True)



# ---------------------------------------------------------------- latencies from the command line

def latencies_from_args(args, shape=None):
    """The latencies the command line names (--trace, --latencies or --latency-us), or None."""
    path = getattr(args, "trace", None) or getattr(args, "latencies", None)
    if path:
        return load_latencies(path, args.trace_variant, shape)
    if getattr(args, "latency_us", None):
        return LatencySource(Latency("--latency-us", samples=args.latency_us), [], "--latency-us")
    return None


# ---------------------------------------------------------------- measured rows

def read_jsonl(path):
    """[(where, object)] for each non-blank line, read by the report's JSON Lines
    reader (acceptlab/results_io.py); names the file and line on error."""
    try:
        return results_io.read_jsonl(Path(path), lambda obj, lineno: (f"{path}:{lineno}", obj))
    except results_io.InputError as e:
        words = {"json": "not JSON", "object": "not a JSON object", "utf8": "not valid UTF-8"}
        if e.reason == "read":
            raise InputError(f"{path}: {e.strerror}") from None
        raise InputError(f"{path}:{e.line}: {words.get(e.reason, e.message)}") from None


def parse_split(text, where):
    try:
        counts = [int(x) for x in str(text).split("/")]
    except ValueError:
        raise InputError(f"{where}: split '{text}' is not counts separated by '/'")
    if not counts or min(counts) < 0:
        raise InputError(f"{where}: split '{text}' is not counts separated by '/'")
    return counts


def rate_check(predicted, outside, rounds):
    """A predicted share of rounds outside 2:1 against `outside` of `rounds`
    measured: the measured share's 95% Clopper-Pearson interval, whether it
    holds the prediction, and which outcomes of that many rounds would have
    (spread.consistent_outcomes; none left out: the check could not have
    failed)."""
    lo, hi = clopper_pearson(outside, rounds)
    held = consistent_outcomes(predicted, rounds)
    return {"ci95": [round(lo, 4), round(hi, 4)], "consistent": lo <= predicted <= hi,
            "consistent_outcomes": list(held) if held else None,
            "could_fail": held is None or held[0] > 0 or held[1] < rounds}


def measured_fields(rounds, workers):
    """The keys every row checked against balancing rounds carries: the
    rounds' splits and, per round, what ran just before it on the same server."""
    return {"measured_splits": [split_text(r.counts + [0] * (workers - len(r.counts))) for r in rounds],
            "measured_after": [r.after for r in rounds]}


def exclusive_rule_row(balancing, variant, pred, n, k):
    """The EPOLLEXCLUSIVE rule's predicted ramp split for variant at n workers
    (k connections) beside the campaign's measured ramp rounds there; None
    when the run has none. The rule predicts every round outside 2:1 (one
    waiter takes all) or none (DEL+ADD every 16 accepts rotates the queue):
    a share of 1 or 0, checked like any other (one round the other way is
    enough to contradict it)."""
    rounds = balancing_rounds(balancing, (variant,), "ramp", workers=n)
    if not rounds:
        return None
    outside = sum(1 for r in rounds if not balance.within_2to1(r.counts, n))
    predicted = 1.0 if not balance.within_2to1(pred) else 0.0
    return {
        "model": "exclusive-balancing", "case": variant, "workers": n, "cpus": None, "connections": k,
        "shape": "ramp", "rule": "first-registered idle waiter wins"
        + ("; DEL+ADD every 16 accepts moves it to the back" if variant != "exclusive" else ""),
        "predicted_split": split_text(pred), "predicted_outside": predicted,
        "measured_outside": outside / len(rounds), "measured_rounds": len(rounds),
        "outside_rounds": outside, **measured_fields(rounds, n), **rate_check(predicted, outside, len(rounds)),
        "method": "rule", "source": f"balancing.jsonl variant {variant}",
    }


def hash_spread_rows(balancing, n, k, hashed):
    """The hash spread's predicted share outside 2:1 (`hashed`: analytic(n, k))
    beside reuseport's measured rounds at n workers, a row per shape measured."""
    out = []
    for shape in ("burst", "ramp", "keepalive"):
        rounds = balancing_rounds(balancing, ("reuseport",), shape, workers=n)
        if not rounds:
            continue
        outside = sum(1 for r in rounds if not balance.within_2to1(r.counts, n))
        out.append({
            "model": "reuseport-balancing", "case": shape, "workers": n, "cpus": None, "connections": k,
            "shape": shape, "predicted_outside": hashed["outside"], "method": hashed["method"],
            "measured_outside": outside / len(rounds), "measured_rounds": len(rounds),
            "outside_rounds": outside, **rate_check(hashed["outside"], outside, len(rounds)),
            **measured_fields(rounds, n), "source": "balancing.jsonl variant reuseport",
        })
    return out


Round = collections.namedtuple("Round", "counts after")


def balancing_rounds(paths, variants, shape, mode="process", workers=2):
    """The measured rounds of the given variants and shape at `workers`
    workers, in the order they ran: [Round(counts, after)], `after` naming
    what ran just before on the same server ("burst round 2"), None for a
    server's first round. A server, per the balancing rows' "how": "fresh"
    is one server per arm x shape, "back-to-back" one per arm x worker count
    taking the shapes one after another (probes/studies/balancing.py)."""
    out = []
    for path in paths:
        last = {}  # server -> the round it ran last
        for where, row in read_jsonl(path):
            if row.get("error") is not None or "split" not in row:
                continue
            how = row.get("how")
            server = (results_io.arm_of(row), row.get("workers", 2), row.get("mode", "process"), how,
                      row.get("shape") if how != "back-to-back" else None)
            before = last.get(server)
            last[server] = f"{row.get('shape')} round {row.get('round')}"
            if results_io.arm_of(row) not in variants or row.get("shape") != shape:
                continue
            if row.get("mode", "process") != mode or row.get("workers", workers) != workers:
                continue
            out.append(Round(parse_split(row["split"], where), before))
    return out


def balancing_rows(paths, variants, shape, mode="process", workers=2):
    """The measured rounds of the given variants and shape: (splits, outside count)."""
    splits = [r.counts for r in balancing_rounds(paths, variants, shape, mode, workers)]
    return splits, sum(1 for s in splits if not balance.within_2to1(s, workers))


def read_reuseport_json(path):
    """bin/reuseport-model --json output: (listeners, connections, repetitions, outside)."""
    summary, reps = None, []
    for where, obj in read_jsonl(path):
        if obj.get("type") == "summary":
            summary = (where, obj)
        elif obj.get("type") == "repetition":
            if not isinstance(obj.get("counts"), list):
                raise InputError(f"{where}: a repetition without 'counts'")
            reps.append(obj["counts"])
    if summary:
        where, s = summary
        try:
            return int(s["listeners"]), int(s["connections"]), int(s["repetitions"]), int(s["outside"])
        except (KeyError, TypeError, ValueError):
            raise InputError(f"{where}: the summary lacks listeners/connections/repetitions/outside")
    if not reps:
        raise InputError(f"{path}: no reuseport-model repetitions or summary")
    return len(reps[0]), sum(reps[0]), len(reps), sum(1 for c in reps if not balance.within_2to1(c))


# ---------------------------------------------------------------- subcommands

def cmd_analytic(args):
    res = analytic(args.workers, args.connections)
    if args.json:
        emit(res)
    else:
        how = ("exact (multinomial, counted over per-worker counts)" if res["method"] == "exact"
               else f"Monte Carlo, {res['samples']} samples, seed {res['seed']}")
        print(f"analytic: {args.workers} workers, {args.connections} connections, uniform independent spread: "
              f"P(outside 2:1) = {res['outside']:.6f}  ({how})")
    return 0


def compare_row(path):
    listeners, connections, reps, outside = read_reuseport_json(path)
    res = analytic(listeners, connections)
    lo, hi = clopper_pearson(outside, reps)
    return {
        "model": "compare", "workers": listeners, "connections": connections,
        "predicted_outside": res["outside"], "method": res["method"],
        "measured_outside": outside / reps, "outside_rounds": outside, "repetitions": reps,
        "ci95": [round(lo, 4), round(hi, 4)], "consistent": lo <= res["outside"] <= hi,
    }


def cmd_compare(args):
    row = compare_row(args.reuseport_json)
    if args.json:
        emit(row)
    else:
        print(f"compare: {row['workers']} listeners, {row['connections']} connections: analytic "
              f"{row['predicted_outside']:.4f} ({row['method']}), measured {row['outside_rounds']}/"
              f"{row['repetitions']} = {row['measured_outside']:.4f}, 95% CI "
              f"[{row['ci95'][0]:.4f}, {row['ci95'][1]:.4f}]: "
              f"{'consistent' if row['consistent'] else 'NOT consistent'}")
    return 0


def race_kwargs(args):
    return dict(shape=args.shape, arrival_us=args.arrival_us, gap_ms=args.gap_ms,
                accept_us=args.accept_us, client_cpu=args.client_cpu, per_worker=args.per_worker)


def sweep(latency, rounds, seed, per_worker_k, connections=None, workers_list=SWEEP_WORKERS,
          cpus_list=SWEEP_CPUS, mc_samples=MC_SAMPLES, **kw):
    """The race over N x C; returns rows (N, C, result, hash-spread value).
    With C >= N (and no client CPU) the CPU limit never binds: those cells
    are simulated once, at C = N, and carry "cpus_bind": false."""
    rows = []
    for n in workers_list:
        k = connections or per_worker_k * n
        hashed = analytic(n, k, samples=mc_samples)
        unbound = None
        for c in cpus_list:
            binds = c < n or kw.get("client_cpu")
            if binds or unbound is None:
                res = simulate_race(n, c, k, rounds, seed, latency, **kw)
                res["cpus_bind"] = bool(binds)
                if not binds:
                    unbound = res
            else:
                res = dict(unbound, cpus=c)
            rows.append((n, c, res, hashed))
    return rows


def cmd_race(args):
    latency = latencies_from_args(args, args.shape)
    if latency is None:
        raise InputError("give --latencies FILE or --latency-us LIST")
    if args.rounds is None:
        args.rounds = 60 if args.sweep else 2000
    kw = race_kwargs(args)
    if args.sweep:
        rows = sweep(latency, args.rounds, args.seed, args.connections_per_worker,
                     connections=args.connections_fixed, **kw)
        if args.json:
            for n, c, res, hashed in rows:
                res = dict(res, reuseport_outside=hashed["outside"], reuseport_method=hashed["method"])
                emit(res)
            return 0
        print(f"race sweep: {latency.describe()}")
        print(f"shape {args.shape}, accept {args.accept_us} µs, {args.rounds} rounds per cell, seed {args.seed}"
              f"{', client holds a CPU' if args.client_cpu else ''}")
        print("with C >= N the CPU limit never binds: those cells repeat the C = N simulation")
        by_n = collections.OrderedDict()
        for n, c, res, hashed in rows:
            by_n.setdefault(n, []).append((c, res, hashed))
        header = f"{'N':>4} {'K':>5} " + " ".join(f"{'C=' + str(c):>7}" for c in SWEEP_CPUS)
        print("\nfraction of rounds outside 2:1 (bare race); last column: the hash spread (reuseport)")
        print(header + f" {'hash':>7}")
        for n, cells in by_n.items():
            print(f"{n:>4} {cells[0][1]['connections']:>5} "
                  + " ".join(f"{res['outside']:>7.3f}" for _, res, _ in cells) + f" {cells[0][2]['outside']:>7.3f}")
        print("\nthe busiest worker's share over the fair share 1/N (mean over rounds)")
        print(header)
        for n, cells in by_n.items():
            print(f"{n:>4} {cells[0][1]['connections']:>5} "
                  + " ".join(f"{res['max_over_fair']:>7.2f}" for _, res, _ in cells))
        return 0
    k = args.connections_fixed or 32
    res = simulate_race(args.workers, args.cpus, k, args.rounds, args.seed, latency, **kw)
    if args.json:
        emit(res)
        return 0
    print(f"race: {args.workers} workers, {args.cpus} CPUs, {k} connections ({args.shape}), "
          f"{args.rounds} rounds, seed {args.seed}")
    print(f"latencies: {latency.describe()}")
    print(f"outside 2:1 in {res['outside_rounds']} of {args.rounds} rounds ({res['outside']:.3f}); "
          f"busiest worker's mean share {res['mean_max_share']:.3f}")
    print("most common splits: " + ", ".join(f"{s} x{n}" for s, n in res["splits"].items()))
    print(shape_text(res["split_shape"]))
    return 0


def shape_text(env):
    """A simulated shape (spread.rank_envelope) in one line."""
    ranges = " / ".join(str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in zip(env["low"], env["high"]))
    return (f"shape: median per rank {split_text(env['median'])}; per rank, the range holding at least "
            f"{env['level']:.0%} of rounds at every rank at once: {ranges} (holds {env['coverage']:.1%})")


def validate_rows(balancing, latency_for, cpus, rounds, seed, variants, accept_us, arrival_us, gap_ms,
                  client_cpu, per_worker, shapes=("burst", "ramp"), workers=2):
    """Race predictions for the measured rows at `workers` workers (16
    connections per worker: 32 at 2); `latency_for(shape)` gives the
    latencies to use for that shape."""
    out = []
    k = BALANCING_PER_WORKER * workers
    for shape in shapes:
        latency = latency_for(shape)
        measured = balancing_rounds(balancing, variants, shape, workers=workers)
        res = simulate_race(workers, cpus, k, rounds, seed, latency, shape=shape, arrival_us=arrival_us,
                            gap_ms=gap_ms, accept_us=accept_us, client_cpu=client_cpu, per_worker=per_worker)
        n = len(measured)
        row = {
            "model": "race-bare", "case": shape, "workers": workers, "cpus": cpus, "connections": k,
            "shape": shape, "predicted_outside": res["outside"], "method": "simulation",
            "predicted_rounds": rounds, "seed": seed, "measured_outside": None, "measured_rounds": n,
            "outside_rounds": 0, "ci95": None, "consistent": None, "consistent_outcomes": None, "could_fail": None,
            **measured_fields(measured, workers), "predicted_splits": res["splits"],
            "predicted_shape": res["split_shape"], "latency_source": latency.origin,
            "latency_samples": latency.pooled.count, "latency_dropped": latency.dropped,
            "latency_workers": len(latency.per_worker) if res["per_worker"] else 0,
            "accept_us": accept_us, "arrival_us": res["arrival_us"], "client_cpu": res["client_cpu"],
            "per_worker": res["per_worker"], "source": "balancing.jsonl variant " + "+".join(variants),
        }
        if n:
            outside = sum(1 for r in measured if not balance.within_2to1(r.counts, workers))
            row.update(measured_outside=outside / n, outside_rounds=outside,
                       **rate_check(res["outside"], outside, n), **shape_check(res["split_shape"], measured, workers))
        out.append(row)
    return out


def shape_check(envelope, rounds, workers):
    """The measured rounds' shapes against a simulated envelope
    (spread.rank_envelope): a round is outside it when any rank's count is;
    the model's own rounds are outside it at the rate 1 - coverage, and that
    rate is checked against the measured one like every other share."""
    low, high = envelope["low"], envelope["high"]
    outside = [bool(ranks_outside(r.counts + [0] * (workers - len(r.counts)), low, high)) for r in rounds]
    check = rate_check(round(1 - envelope["coverage"], 4), sum(outside), len(rounds))
    return {"shape_outside": outside, "shape_outside_rounds": sum(outside),
            **{"shape_" + key: value for key, value in check.items()}}


def cmd_validate(args):
    if args.rounds is None:
        args.rounds = 2000
    if args.trace and args.latencies:
        raise InputError("--trace and --latencies: give one of them")
    if latencies_from_args(args) is None:
        raise InputError("give --trace FILE, --latencies FILE or --latency-us LIST")
    rows = validate_rows(args.balancing, lambda shape: latencies_from_args(args, shape), args.cpus, args.rounds,
                         args.seed, args.variants, args.accept_us, args.arrival_us, args.gap_ms, args.client_cpu,
                         args.per_worker)
    for row in rows:
        if args.json:
            emit(row)
            continue
        if not row["measured_rounds"]:
            print(f"validate {row['shape']}: predicted {row['predicted_outside']:.3f}; no measured rounds for "
                  f"{row['source']}")
            continue
        print(f"validate {row['shape']:5} 2 workers, {row['cpus']} CPUs: predicted outside 2:1 "
              f"{row['predicted_outside']:.3f} ({row['predicted_rounds']} simulated rounds); measured "
              f"{row['outside_rounds']}/{row['measured_rounds']} = {row['measured_outside']:.3f}, 95% CI "
              f"[{row['ci95'][0]:.3f}, {row['ci95'][1]:.3f}]: "
              f"{'consistent' if row['consistent'] else 'NOT consistent'}"
              f"{'' if row['could_fail'] else ' (no outcome of that many rounds could have contradicted it)'}")
        print(f"  {shape_text(row['predicted_shape'])}")
        print(f"  measured {' '.join(row['measured_splits'])}: {row['shape_outside_rounds']} of "
              f"{row['measured_rounds']} outside that shape: "
              f"{'consistent' if row['shape_consistent'] else 'NOT consistent'}")
        print(f"  latencies: {latencies_from_args(args, row['shape']).describe()}")
    return 0


# ---------------------------------------------------------------- campaign

def run_tool(argv, raw_path, timeout=120):
    """Runs a model binary, keeps its output verbatim, returns its JSON lines."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        proc.communicate()
        raise RuntimeError(f"{' '.join(argv)}: timed out after {timeout} s")
    with open(raw_path, "wb") as f:
        f.write(out)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: exit {proc.returncode}: {err.decode(errors='replace').strip()}")
    return [json.loads(line) for line in out.decode().splitlines() if line.strip()]


def balancing_worker_counts(paths, base=2):
    """The worker counts other than base that the balancing rows hold, ascending."""
    found = set()
    for path in paths:
        for _, row in read_jsonl(path):
            n = row.get("workers")
            if isinstance(n, int) and not isinstance(n, bool) and n != base and "split" in row:
                found.add(n)
    return sorted(found)


def models_at(n, balancing, latency_for, accept_us, per_worker, rounds):
    """The models' predictions at n workers beside the balancing rows there
    (16 connections per worker): the hash spread against reuseport's rounds,
    the EPOLLEXCLUSIVE rule against exclusive's and exclusive-reorder's ramp
    rounds, the race (on the run's 2 CPUs, from the traced latencies at 2
    workers) against bare's burst and ramp rounds."""
    k = BALANCING_PER_WORKER * n
    out = hash_spread_rows(balancing, n, k, analytic(n, k, samples=20000))
    for variant, pred in (("exclusive", [k] + [0] * (n - 1)), ("exclusive-reorder", [BALANCING_PER_WORKER] * n)):
        row = exclusive_rule_row(balancing, variant, pred, n, k)
        if row:
            out.append(row)
    gap_ms = max(1, BALANCING_RAMP_SPAN_MS // k)
    for row in validate_rows(balancing, latency_for, 2, rounds, 1, ("bare",), accept_us, ARRIVAL_US, gap_ms,
                             False, per_worker, workers=n):
        if row["measured_rounds"]:
            row["gap_ms"] = gap_ms if row["shape"] == "ramp" else None
            out.append(row)
    return out


def shape_progress(row):
    if row.get("shape_outside_rounds") is None:
        return ""
    return (f", shape median {split_text(row['predicted_shape']['median'])}, measured "
            f"{row['shape_outside_rounds']}/{row['measured_rounds']} outside it")


def cmd_campaign(args):
    run_campaign(args.out, quick=args.quick, balancing=args.balancing, trace=args.trace, bin_dir=args.bin_dir,
                 netns=False if args.no_netns else None, accept_us=args.accept_us)
    return 0


def run_campaign(out_dir, quick=False, balancing=None, trace=None, bin_dir=os.path.join(ROOT, "bin"),
                 netns=None, accept_us=ACCEPT_US, log=log_line):
    """Every model, for the campaign: runs bin/reuseport-model (in a network
    namespace of its own when root, unless netns=False) and bin/exclusive-model,
    computes the analytic values, validates the race against the measured bare
    rows and sweeps it over N x C; writes out_dir/models.jsonl (one row per
    case) and the tools' raw output under out_dir/raw/models/. `balancing` and
    `trace` default to out_dir's balancing.jsonl and trace.jsonl when present.
    Progress goes to `log`, a line per step. Returns the rows. Raises
    InputError (bad input) or RuntimeError (a model failed)."""
    t0 = time.monotonic()
    reuseport_bin = os.path.join(bin_dir, "reuseport-model")
    exclusive_bin = os.path.join(bin_dir, "exclusive-model")
    for b in (reuseport_bin, exclusive_bin):
        if not os.access(b, os.X_OK):
            raise InputError(f"--bin-dir {bin_dir}: {os.path.basename(b)} is not built (run make)")
    raw_dir = os.path.join(out_dir, "raw", "models")
    os.makedirs(raw_dir, exist_ok=True)
    if netns is None:
        netns = os.geteuid() == 0
    balancing = list(balancing or [])
    own = os.path.join(out_dir, "balancing.jsonl")
    if not balancing and os.path.exists(own):
        balancing = [own]
    own_trace = os.path.join(out_dir, "trace.jsonl")
    if not trace and os.path.exists(own_trace):
        trace = own_trace

    rows = []
    steps = 8
    step = [0]

    def progress(msg):
        log(f"models: [{step[0]}/{steps}] {msg} ({time.monotonic() - t0:.1f} s)")

    def begin(msg):
        step[0] += 1
        log(f"models: [{step[0]}/{steps}] {msg} ...")

    # 1. reuseport-model against the hash-spread analytic value.
    cases = [(2, 32, 100), (4, 32, 50)] if quick else [(2, 32, 200), (4, 32, 200), (8, 64, 100)]
    begin(f"reuseport-model {', '.join(f'{n}x{k}x{r}' for n, k, r in cases)}"
          f"{' in its own network namespace' if netns else ' on loopback'}")
    for n, k, r in cases:
        raw = os.path.join(raw_dir, f"reuseport-model-{n}x{k}.jsonl")
        argv = [reuseport_bin, "--listeners", str(n), "--connections", str(k), "--repetitions", str(r), "--json"]
        if netns:
            argv.append("--netns")
        lines = run_tool(argv, raw)
        summary = [x for x in lines if x.get("type") == "summary"][0]
        row = compare_row(raw)
        rows.append({
            "model": "reuseport-burst", "case": f"{n}x{k}", "workers": n, "cpus": None, "connections": k,
            "shape": "burst", "predicted_outside": row["predicted_outside"], "method": row["method"],
            "measured_outside": row["measured_outside"], "measured_rounds": r, "repetitions": r,
            "outside_rounds": row["outside_rounds"], **rate_check(row["predicted_outside"], row["outside_rounds"], r),
            "histogram": summary.get("histogram"), "netns": netns,
            "source": f"bin/reuseport-model{' --netns' if netns else ''}",
        })
    progress("; ".join(f"{r['case']}: measured {r['measured_outside']:.3f} vs analytic {r['predicted_outside']:.3f}"
                       for r in rows))

    # 2. The campaign's reuseport rows against the same number.
    begin("reuseport rows of balancing.jsonl against the analytic value")
    if balancing:
        rows += hash_spread_rows(balancing, 2, 32, analytic(2, 32))
        found = [r for r in rows if r["model"] == "reuseport-balancing"]
        progress("; ".join(f"{r['case']}: measured {r['outside_rounds']}/{r['measured_rounds']} vs analytic "
                           f"{r['predicted_outside']:.3f}" for r in found) or "no reuseport rows")
    else:
        progress("skipped: no balancing.jsonl in --out and no --balancing")

    # 3. exclusive-model: the wake rule.
    begin("exclusive-model: who EPOLLEXCLUSIVE wakes")
    ex_cases = [
        ("idle", ["--processes", "4", "--connections", "16", "--gap-ms", "20"]),
        ("busy-50ms", ["--processes", "4", "--connections", "12" if quick else "16", "--gap-ms", "20",
                       "--busy-ms", "50"]),
        ("order-3,1,0,2", ["--processes", "4", "--connections", "8", "--gap-ms", "20", "--order", "3,1,0,2"]),
        ("eventfd", ["--processes", "4", "--connections", "8", "--gap-ms", "20", "--trigger", "eventfd"]),
    ]
    for case, extra in ex_cases:
        raw = os.path.join(raw_dir, f"exclusive-model-{case.replace(',', '')}.jsonl")
        lines = run_tool([exclusive_bin, "--json", *extra], raw)
        summary = [x for x in lines if x.get("type") == "summary"][0]
        conns = [x for x in lines if x.get("type") == "connection"]
        predicted = collections.Counter(c["predicted"] for c in conns if c["predicted"] is not None)
        pred_counts = [predicted.get(i, 0) for i in range(summary["processes"])]
        rows.append({
            "model": "exclusive-wakeup", "case": case, "workers": summary["processes"], "cpus": None,
            "connections": summary["connections"], "shape": "ramp", "gap_ms": summary["gap_ms"],
            "busy_ms": summary["busy_ms"], "trigger": summary["trigger"], "order": summary["order"],
            "rule": summary["rule"], "predicted_split": split_text(pred_counts),
            "measured_split": summary["split"], "accepted": summary["accepted"],
            "predicted_outside": 1.0 if not balance.within_2to1(pred_counts) else 0.0,
            "measured_outside": 1.0 if not balance.within_2to1(summary["accepted"]) else 0.0, "measured_rounds": 1,
            "rule_checked": summary["checked"], "rule_matched": summary["matched"],
            # The rule names the winner of every connection checked: one miss contradicts it.
            "rule_ci95": [round(x, 4) for x in clopper_pearson(summary["matched"], summary["checked"])],
            "could_fail": summary["checked"] > 0,
            "consistent": summary["rule_holds"], "method": "rule", "source": "bin/exclusive-model",
        })
    progress("; ".join(f"{r['case']}: {r['rule_matched']}/{r['rule_checked']} matched, split {r['measured_split']}"
                       for r in rows if r["model"] == "exclusive-wakeup"))

    # 4. The campaign's exclusive rows (ramp: every waiter idle between connections).
    begin("exclusive variants' ramp rows against the rule")
    if balancing:
        # exclusive: the first-registered idle worker takes every connection.
        # exclusive-reorder: it goes to the back of the queue every 16 accepts.
        for variant, pred in (("exclusive", [32, 0]), ("exclusive-reorder", [16, 16])):
            row = exclusive_rule_row(balancing, variant, pred, 2, 32)
            if row:
                rows.append(row)
        found = [r for r in rows if r["model"] == "exclusive-balancing"]
        progress("; ".join(f"{r['case']}: predicted {r['predicted_split']}, measured outside "
                           f"{r['outside_rounds']}/{r['measured_rounds']}" for r in found)
                 or "no exclusive or exclusive-reorder ramp rows")
    else:
        progress("skipped: no balancing.jsonl")

    # 5. Latencies for the race: the tracer's, else exclusive-model's latency probe
    #    (eventfd, no EPOLLEXCLUSIVE: both children woken by every write, each reporting).
    begin("wake-to-accept latencies for the race model")
    latency_for = None
    if trace:
        try:
            by_shape = {shape: load_latencies(trace, "bare", shape) for shape in ("burst", "ramp")}
            latency_for = by_shape.get
            latency = by_shape["burst"]
        except InputError as e:
            log(f"models: the trace has no usable bare histograms ({e}); using the latency probe")
    if latency_for is None:
        raw = os.path.join(raw_dir, "exclusive-model-latency.jsonl")
        run_tool([exclusive_bin, "--json", "--trigger", "eventfd", "--no-exclusive", "--processes", "2",
                  "--connections", "100" if quick else "300", "--gap-ms", "1"], raw)
        latency = load_latencies(raw)
        latency.origin = ("exclusive-model latency probe (eventfd, both children woken per write, idle "
                          "machine: a stand-in for the tracer's histograms, which the run lacks)")
        latency_for = lambda shape: latency  # noqa: E731
    progress(latency.describe())

    # 6. The race at 2 workers, 2 CPUs against the measured bare rows.
    begin("race model at 2 workers, 2 CPUs against the measured bare rows")
    val_rounds = 500 if quick else 2000
    per_worker = bool(latency.per_worker)
    if balancing:
        for client_cpu in (False, True):
            for row in validate_rows(balancing, latency_for, 2, val_rounds, 1, ("bare",), accept_us,
                                     ARRIVAL_US, RAMP_GAP_MS, client_cpu, per_worker,
                                     ("burst",) if client_cpu else ("burst", "ramp")):
                # (a ramp's client holds no CPU between connections: no client-cpu case)
                row["case"] = row["shape"] + (" client-cpu" if client_cpu else "")
                rows.append(row)
        progress("; ".join(f"{r['case']}: predicted {r['predicted_outside']:.3f}, measured "
                           f"{r['outside_rounds']}/{r['measured_rounds']}{shape_progress(r)}"
                           for r in rows if r["model"] == "race-bare"))
    else:
        progress("skipped: no balancing.jsonl")

    # 7. The models beside the balancing rows at every other worker count.
    counts = balancing_worker_counts(balancing) if balancing else []
    begin("the models at " + (", ".join(map(str, counts)) if counts else "no other") + " workers beside the "
          "balancing rows")
    for n in counts:
        rows += models_at(n, balancing, latency_for, accept_us, per_worker, 200 if quick else 500)
    progress("; ".join(f"N={r['workers']} {r['model']} {r['case']}: predicted {r['predicted_outside']:.3f}, measured "
                       f"{r['outside_rounds']}/{r['measured_rounds']}{shape_progress(r)}" for r in rows
                       if r["workers"] in counts and r.get("source", "") and
                       str(r.get("source")).startswith("balancing.jsonl"))
             or "no balancing rows at another worker count")

    # 8. The sweep: bigger machines, from the same latencies the checks above used
    #    (per worker when the trace has them), with each cell's sampling interval.
    sweep_rounds = SWEEP_ROUNDS_QUICK if quick else SWEEP_ROUNDS
    begin(f"race sweep N x C, {sweep_rounds} rounds per cell")
    for n, c, res, hashed in sweep(latency, sweep_rounds, 1, SWEEP_PER_WORKER, accept_us=accept_us,
                                   per_worker=per_worker, mc_samples=20000):
        lo, hi = clopper_pearson(res["outside_rounds"], sweep_rounds)
        rows.append({
            "model": "race-sweep", "case": f"N{n}-C{c}", "workers": n, "cpus": c,
            "connections": res["connections"], "shape": "burst", "predicted_outside": res["outside"],
            "method": "simulation", "predicted_rounds": sweep_rounds, "seed": 1,
            "outside_rounds": res["outside_rounds"], "ci95": [round(lo, 4), round(hi, 4)],
            "measured_outside": None, "measured_rounds": 0,
            "mean_max_share": res["mean_max_share"], "max_over_fair": res["max_over_fair"],
            "mean_starved_workers": res["mean_starved_workers"], "cpus_bind": res["cpus_bind"],
            "reuseport_outside": hashed["outside"], "reuseport_method": hashed["method"],
            "latency_source": latency.origin, "latency_samples": latency.pooled.count,
            "per_worker": res["per_worker"], "latency_workers": len(latency.per_worker) if res["per_worker"] else 0,
            "accept_us": accept_us, "arrival_us": res["arrival_us"], "client_cpu": False,
            "consistent": None, "source": None,
        })
    progress(f"{len(SWEEP_WORKERS) * len(SWEEP_CPUS)} cells")

    path = os.path.join(out_dir, "models.jsonl")
    with open(path + ".tmp", "w") as f:
        for row in rows:
            f.write(json.dumps(row, separators=(",", ":")) + "\n")
    os.replace(path + ".tmp", path)
    log(f"models: {len(rows)} rows in {path} ({time.monotonic() - t0:.1f} s)")
    return rows


# ---------------------------------------------------------------- main

def add_race_args(p, sweep=True):
    p.add_argument("--latencies", metavar="FILE",
                   help="wake-to-accept latencies: the tracer's JSON lines ({\"type\":\"worker\", "
                        "\"wake_to_accept_us_log2\":{...}}), a campaign's trace.jsonl, exclusive-model --json "
                        "output, or one µs value a line")
    p.add_argument("--latency-us", type=latency_list, metavar="LIST",
                   help="latency samples in µs, comma-separated (instead of --latencies)")
    p.add_argument("--trace-arm", dest="trace_variant", default="bare",
                   help="with a trace whose lines name their arm, use this one's (default bare)")
    p.add_argument("--cpus", type=int_in(1, 1024), default=2, help="CPUs the workers share (default 2)")
    p.add_argument("--rounds", type=int_in(1, 1000000), default=None,
                   help="simulated rounds (default 2000; with --sweep, 60 per cell)")
    p.add_argument("--seed", type=int_in(0, 2**31 - 1), default=1, help="simulation seed (default 1)")
    p.add_argument("--accept-us", type=float_in(0, 1e6), default=ACCEPT_US,
                   help=f"cost of one accept4(), also of the one that returns EAGAIN (default {ACCEPT_US})")
    p.add_argument("--arrival-us", type=float_in(0, 1e7), default=ARRIVAL_US,
                   help=f"burst: one arrival every this many µs (default {ARRIVAL_US})")
    p.add_argument("--gap-ms", type=float_in(0, 1e5), default=RAMP_GAP_MS,
                   help=f"ramp: one arrival every this many ms (default {RAMP_GAP_MS})")
    p.add_argument("--client-cpu", action="store_true",
                   help="the client holds one of the CPUs until its last connect (burst)")
    p.add_argument("--per-worker", action="store_true",
                   help="worker i draws from the i-th per-worker distribution (trace tid or child), "
                        "not the pooled one")
    p.add_argument("--json", action="store_true", help="one JSON object per line")


def build_parser():
    parser = Parser(prog=PROG, description=__doc__.split("\n\n")[0],
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", metavar="SUBCOMMAND", parser_class=Parser)
    sub.required = True

    p = sub.add_parser("analytic", help="P(outside 2:1) for a hash spread of K over N",
                       description="The exact chance that K connections spread uniformly and independently "
                                   "over N workers (SO_REUSEPORT's 4-tuple hash) end up outside 2:1: max > 2 x "
                                   "min, a worker with none counting as outside. Counted exactly over "
                                   "per-worker counts; Monte Carlo (seed and sample count stated) when too big.")
    p.add_argument("--workers", type=int_in(1, 4096), required=True)
    p.add_argument("--connections", type=int_in(1, 100000), required=True)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_analytic)

    p = sub.add_parser("compare", help="analytic value vs reuseport-model's measured fraction",
                       description="Reads bin/reuseport-model --json output and compares its fraction of "
                                   "repetitions outside 2:1 with the analytic value, with a 95% Clopper-Pearson "
                                   "interval for the measured fraction.")
    p.add_argument("--reuseport-json", required=True, metavar="FILE")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("race", help="simulate the bare accept race",
                       description="A discrete-event simulation of the bare accept race, driven by measured "
                                   "wake-to-accept latencies. Prints the predicted splits and the fraction of "
                                   "rounds outside 2:1; --sweep prints a table over N and C.\n\n"
                                   + RACE_ASSUMPTIONS,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workers", type=int_in(1, 4096), default=2, help="workers (default 2)")
    p.add_argument("--connections", dest="connections_fixed", type=int_in(1, 100000), default=None,
                   help="connections per round (default 32; with --sweep: --connections-per-worker x N)")
    p.add_argument("--connections-per-worker", type=int_in(1, 10000), default=SWEEP_PER_WORKER,
                   help=f"--sweep: connections per worker (default {SWEEP_PER_WORKER})")
    p.add_argument("--shape", choices=("burst", "ramp"), default="burst")
    p.add_argument("--sweep", action="store_true",
                   help=f"N in {SWEEP_WORKERS} x C in {SWEEP_CPUS}, with the hash spread beside")
    add_race_args(p)
    p.set_defaults(func=cmd_race)

    p = sub.add_parser("validate", help="the race model against measured 2-worker rows",
                       description="Predicts, for the bare race at 2 workers, the fraction of burst (and ramp) "
                                   "rounds outside 2:1 and prints it beside the campaign's measured rows.\n\n"
                                   + RACE_ASSUMPTIONS,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--balancing", action="append", required=True, metavar="FILE",
                   help="a campaign's balancing.jsonl (repeat to pool runs)")
    p.add_argument("--trace", metavar="FILE", help="the tracer's trace.jsonl (wake-to-accept histograms)")
    p.add_argument("--arms", dest="variants", type=lambda s: tuple(s.split(",")), default=("bare",),
                   help="measured arms that are the bare race (default bare; fdpass-off is one too)")
    add_race_args(p, sweep=False)
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("campaign", help="run every model, write DIR/models.jsonl",
                       description="Runs bin/reuseport-model (in its own network namespace when root), "
                                   "bin/exclusive-model, the analytic values, the race validation and sweep, "
                                   "and writes DIR/models.jsonl (one row per case; see models/README.md) and "
                                   "the tools' raw output under DIR/raw/models/.")
    p.add_argument("--out", required=True, metavar="DIR")
    p.add_argument("--quick", action="store_true", help="fewer repetitions and rounds (under 20 s)")
    p.add_argument("--balancing", action="append", metavar="FILE",
                   help="measured balancing.jsonl (default: DIR/balancing.jsonl if present)")
    p.add_argument("--trace", metavar="FILE", help="the tracer's JSON lines (default: DIR/trace.jsonl if present)")
    p.add_argument("--bin-dir", default=os.path.join(ROOT, "bin"), metavar="DIR")
    p.add_argument("--no-netns", action="store_true", help="run reuseport-model on the host's loopback")
    p.add_argument("--accept-us", type=float_in(0, 1e6), default=ACCEPT_US)
    p.set_defaults(func=cmd_campaign)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except InputError as e:
        sys.stderr.write(f"{PROG} {args.cmd}: {e}\n")
        return 2
    except RuntimeError as e:
        sys.stderr.write(f"{PROG} {args.cmd}: {e}\n")
        return 1
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
