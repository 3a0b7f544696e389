"""Tests for the models: bin/reuseport-model, bin/exclusive-model and
models/skew.py.

What is checked, and what is not:
  - skew.py's analytic values against binomial tails computed by hand, and
    against brute-force enumeration of every assignment (small N and K,
    workers with none included); its Clopper-Pearson interval against the
    closed forms at x = 0 and x = n;
  - the race simulation on fixed seeds against golden files in
    tests/fixtures/models/ (the simulation uses only random.Random.random(),
    whose sequence Python keeps stable for a seed), and invariants of single
    rounds worked out by hand;
  - the C models' output format and invariants (every connection accounted
    for; every connection accepted by exactly one child; the registration
    order), never timings, and never which listener the kernel's hash picked
    (it mixes a per-boot secret): reuseport-model's output format is checked
    through --replay, which prints injected counts exactly as a run would;
  - whether a check could have failed (the outcomes of n trials whose
    interval leaves the prediction out) against every interval, and the
    split shapes the race predicts against rounds worked out by hand;
  - the report's models section on rows written for it: checks that could
    not have failed counted apart, shapes compared, failures named with
    their worker count, the sweep beside the checks it repeats;
  - bad arguments and bad input files: exit 2, one line naming them.

The golden files are regenerated (read the diff before committing) with

    /usr/bin/python3 -m tests.test_models --regen
"""

import sys

if __name__ == "__main__" and not __package__:  # run by path: the packages it imports are not found
    sys.stderr.write("test_models.py: run it as a module from the repository's top: "
                     "/usr/bin/python3 -m tests.test_models --regen\n")
    sys.exit(2)

import itertools
import json
import math
import os
import subprocess
from fractions import Fraction
from pathlib import Path

import pytest

from acceptlab import results_io
from acceptlab.paths import module_cmd
from models import skew
from report.sections import models as models_section

REPO = Path(__file__).resolve().parent.parent
SKEW = module_cmd("models.skew")
REUSEPORT = REPO / "bin" / "reuseport-model"
EXCLUSIVE = REPO / "bin" / "exclusive-model"
FIXTURES = REPO / "tests" / "fixtures" / "models"
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (a network namespace of its own)")

# Golden outputs: file name -> the command (run from the repository's root,
# so the relative paths in the output are stable).
F = "tests/fixtures/models"
GOLDEN = {
    "replay.golden.txt": [str(REUSEPORT), "--replay", f"{F}/replay-counts.txt"],
    "replay.golden.jsonl": [str(REUSEPORT), "--replay", f"{F}/replay-counts.txt", "--json"],
    "compare.golden.jsonl": [*SKEW, "compare", "--reuseport-json", f"{F}/reuseport.jsonl", "--json"],
    "race-burst.golden.jsonl": [*SKEW, "race", "--latencies", f"{F}/latencies.txt", "--rounds", "300",
                                "--seed", "7", "--json"],
    "race-burst-client-cpu.golden.jsonl": [*SKEW, "race", "--latencies", f"{F}/latencies.txt",
                                           "--rounds", "300", "--seed", "7", "--client-cpu", "--cpus", "2",
                                           "--json"],
    "race-ramp-trace.golden.jsonl": [*SKEW, "race", "--latencies", f"{F}/trace.jsonl", "--shape",
                                     "ramp", "--per-worker", "--rounds", "300", "--seed", "7", "--json"],
    "race-sweep.golden.jsonl": [*SKEW, "race", "--sweep", "--latency-us", "5,10,20,40", "--rounds",
                                "3", "--connections-per-worker", "4", "--seed", "7", "--json"],
    "validate.golden.jsonl": [*SKEW, "validate", "--balancing", f"{F}/balancing.jsonl", "--trace",
                              f"{F}/trace.jsonl", "--per-worker", "--rounds", "300", "--seed", "7", "--json"],
}


def run(argv, timeout=60, **kw):
    return subprocess.run([str(a) for a in argv], cwd=REPO, capture_output=True, text=True, timeout=timeout, **kw)


def run_skew(*args, timeout=60):
    return run([*SKEW, *args], timeout=timeout)


def json_lines(text):
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def brute_force_outside(workers, connections):
    """Every one of the workers**connections assignments, counted."""
    outside = 0
    for assignment in itertools.product(range(workers), repeat=connections):
        counts = [assignment.count(w) for w in range(workers)]
        if min(counts) == 0 or max(counts) > 2 * min(counts):
            outside += 1
    return Fraction(outside, workers ** connections)


# ---------------------------------------------------------------- analytic

def test_two_workers_32_connections_is_the_binomial_tail():
    """N=2, K=32: outside 2:1 means X <= 10 or X >= 22 for X ~ Bin(32, 1/2), so
    P = 2 * sum_{k=0}^{10} C(32,k) / 2^32 exactly (0.0501...), to 1e-12."""
    by_hand = Fraction(2 * sum(math.comb(32, k) for k in range(11)), 2 ** 32)
    assert skew.outside_exact(2, 32) == by_hand
    res = skew.analytic(2, 32)
    assert res["method"] == "exact"
    assert abs(res["outside"] - float(by_hand)) < 1e-12
    assert abs(res["outside"] - 0.050102459732443) < 1e-12


@pytest.mark.parametrize("k", [2, 5, 9, 64, 101])
def test_two_workers_any_k_is_the_binomial_tail(k):
    """For N=2, inside 2:1 is min >= ceil(K/3) (max <= 2 min with max = K - min):
    P(outside) = 2 * P(X < ceil(K/3)) for X ~ Bin(K, 1/2), exactly."""
    m = -(-k // 3)
    by_hand = Fraction(2 * sum(math.comb(k, j) for j in range(m)), 2 ** k)
    assert skew.outside_exact(2, k) == by_hand


@pytest.mark.parametrize("k", [2, 7, 32, 64])
def test_general_counting_agrees_with_the_two_worker_shortcut(k):
    """outside_exact(2, K) takes the binomial sum; the counting used for every
    other N (inside = sum over m of #[m, 2m] - #[m+1, 2m]) gives the same."""
    inside = sum(skew.count_within(2, k, m, 2 * m) - skew.count_within(2, k, m + 1, 2 * m)
                 for m in range(1, k // 2 + 1))
    assert 1 - Fraction(inside, 2 ** k) == skew.outside_exact(2, k)


@pytest.mark.parametrize("k", range(1, 9))
def test_three_workers_small_k_against_brute_force(k):
    """N=3, K=1..8: the count-based value equals enumerating all 3^K
    assignments, workers that get none counting as outside (K < 3: always)."""
    assert skew.outside_exact(3, k) == brute_force_outside(3, k)


@pytest.mark.parametrize("n,k", [(4, 7), (5, 6), (1, 5)])
def test_other_small_cases_against_brute_force(n, k):
    """Four and five workers, and one worker (never outside), by enumeration."""
    assert skew.outside_exact(n, k) == brute_force_outside(n, k)


def test_fewer_connections_than_workers_is_always_outside():
    """K < N: some worker gets none, so P = 1, without any counting."""
    assert skew.analytic(64, 32) == {"model": "analytic", "workers": 64, "connections": 32, "outside": 1.0,
                                     "method": "exact", "note": "fewer connections than workers: one gets none"}


def test_too_big_to_count_says_monte_carlo_with_seed_and_samples():
    """When exact counting would be too costly, the value is Monte Carlo and
    says so, with its seed and sample count (here forced by a tiny budget)."""
    res = skew.analytic(4, 40, max_ops=1, samples=5000)
    assert res["method"] == "monte-carlo" and res["samples"] == 5000 and res["seed"] == skew.MC_SEED
    assert abs(res["outside"] - float(skew.outside_exact(4, 40))) < 0.05


def test_analytic_cli_json():
    """`skew.py analytic --json` prints one JSON object with the exact value."""
    r = run_skew("analytic", "--workers", "2", "--connections", "32", "--json")
    assert r.returncode == 0, r.stderr
    (obj,) = json_lines(r.stdout)
    assert obj["method"] == "exact" and abs(obj["outside"] - 0.050102459732443) < 1e-12


def test_clopper_pearson_closed_forms():
    """x = 0: upper = 1 - 0.025^(1/n); x = n: lower = 0.025^(1/n); and the
    interval for 12/200 holds 0.06."""
    lo, hi = skew.clopper_pearson(0, 10)
    assert lo == 0.0 and abs(hi - (1 - 0.025 ** 0.1)) < 1e-9
    lo, hi = skew.clopper_pearson(10, 10)
    assert hi == 1.0 and abs(lo - 0.025 ** 0.1) < 1e-9
    lo, hi = skew.clopper_pearson(12, 200)
    assert lo < 0.06 < hi and abs(lo - 0.0314) < 5e-4 and abs(hi - 0.1025) < 5e-4


# ---------------------------------------------------------------- race

def fixed(value):
    return lambda w: value


def test_equal_latencies_the_last_registered_wins_every_connection():
    """Two idle workers with the same latency reach accept together; the one
    woken first (the last registered: add_wait_queue inserts at the head)
    takes each connection, the other gets EAGAIN: 0/2 to worker 1."""
    import random
    counts = skew.race_round(2, 2, [0.0, 100.0], fixed(10.0), random.Random(1), 2.0, None)
    assert counts == [0, 2]


def test_one_cpu_the_runnable_worker_waits():
    """One CPU: worker 1 runs first and drains the burst (arrivals 1 µs apart,
    latency 5, accepts 2 µs each, so the queue never empties until all three
    are in); worker 0 waits for the CPU and finds nothing: 3/0."""
    import random
    counts = skew.race_round(2, 1, [0.0, 1.0, 2.0], fixed(5.0), random.Random(1), 2.0, None)
    assert counts == [0, 3]


def test_a_late_edge_brings_a_sleeping_worker_back():
    """An arrival while a worker's EAGAIN accept is in flight is remembered (the
    edge-triggered ready list): it goes straight back to accept and takes it."""
    import random
    # Worker 1 accepts #1 at 10-12, fails at 12-14; #2 arrives at 13: worker 1 takes it
    # at 14 without a new wake-up (worker 0 is still on its 20 µs way).
    lat = {0: 20.0, 1: 10.0}
    counts = skew.race_round(2, 2, [0.0, 13.0], lambda w: lat[w], random.Random(1), 2.0, None)
    assert counts == [0, 2]


@pytest.mark.parametrize("n,c,client", [(2, 2, False), (3, 1, True), (8, 2, False), (5, 8, False)])
def test_every_round_accounts_for_every_connection(n, c, client):
    """Whatever the workers, CPUs and latencies, each simulated round hands out
    exactly K connections, each to one of the N workers."""
    import random
    rand = random.Random(3)
    arrivals = [i * 7.0 for i in range(24)]
    for _ in range(50):
        counts = skew.race_round(n, c, arrivals, lambda w: rand.choice([1.0, 3.0, 8.0, 20.0, 60.0, 300.0]),
                                 rand, 2.0, arrivals[-1] if client else None)
        assert len(counts) == n and sum(counts) == 24 and min(counts) >= 0


def test_log2_histogram_draws_stay_in_their_buckets():
    """Key k draws uniformly in [2^k, 2^(k+1)) µs; key 0 in [0, 2) (the tracer's slot 0)."""
    import random
    rand = random.Random(5)
    only5 = skew.Latency("h", hist={5: 10})
    only0 = skew.Latency("h", hist={0: 3})
    assert all(32 <= only5.draw(rand) < 64 for _ in range(500))
    assert all(0 <= only0.draw(rand) < 2 for _ in range(500))


def test_trace_rows_are_filtered_by_variant_shape_and_mode():
    """A campaign trace.jsonl: the bare, process-mode rows of the asked shape,
    one distribution per worker index; 2^13 µs buckets are dropped and counted."""
    src = skew.load_latencies(str(FIXTURES / "trace.jsonl"), "bare", "burst")
    assert [d.count for d in src.per_worker] == [70, 60]
    assert src.pooled.count == 130 and src.dropped == 4
    src = skew.load_latencies(str(FIXTURES / "trace.jsonl"), "exclusive", "burst")
    assert src.pooled.count == 50


def test_rows_that_name_their_arm_read_as_rows_that_said_variant(tmp_path):
    """Rows name their arm "arm" (older rows "variant"): the trace and
    balancing readers take either, and find the same rounds."""
    renamed = tmp_path / "trace.jsonl"
    renamed.write_text("".join(line.replace('"variant":', '"arm":') + "\n"
                               for line in (FIXTURES / "trace.jsonl").read_text().splitlines()))
    assert '"arm":' in renamed.read_text()
    for path in (FIXTURES / "trace.jsonl", renamed):
        src = skew.load_latencies(str(path), "bare", "burst")
        assert [d.count for d in src.per_worker] == [70, 60] and src.dropped == 4
    rows = [balancing_round("bare", 4, "back-to-back", "burst", 1, "50/10/4/0"),
            balancing_round("bare", 4, "back-to-back", "ramp", 1, "40/17/4/3")]
    said_variant = write_balancing(tmp_path / "variant.jsonl", rows)
    said_arm = write_balancing(tmp_path / "arm.jsonl", [dict({"arm": r.pop("variant")}, **r) for r in rows])
    assert (skew.balancing_rounds(said_arm, ("bare",), "ramp", workers=4)
            == skew.balancing_rounds(said_variant, ("bare",), "ramp", workers=4) != [])


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden_outputs(name):
    """Fixed inputs and seeds give the committed output, line for line (the
    C tools' --replay and the Python models alike)."""
    r = run(GOLDEN[name])
    assert r.returncode == 0, r.stderr
    expected = (FIXTURES / name).read_text()
    if name.endswith(".jsonl"):
        assert json_lines(r.stdout) == json_lines(expected)
    else:
        assert r.stdout == expected


def test_race_is_deterministic_for_a_seed_and_moves_with_it():
    """The same seed gives the same prediction; another seed, another sample."""
    args = ("race", "--latencies", f"{F}/latencies.txt", "--rounds", "100", "--json")
    a = run_skew(*args, "--seed", "11")
    b = run_skew(*args, "--seed", "11")
    c = run_skew(*args, "--seed", "12")
    assert a.returncode == b.returncode == c.returncode == 0
    assert a.stdout == b.stdout
    assert json_lines(a.stdout)[0]["splits"] != json_lines(c.stdout)[0]["splits"]


# ---------------------------------------------------------------- could it have failed; shapes

@pytest.mark.parametrize("n", [1, 2, 3, 5, 12, 40])
def test_consistent_outcomes_are_every_outcome_whose_interval_holds_the_prediction(n):
    """consistent_outcomes(p, n) is (first, last) with exactly the outcomes x of
    n trials whose Clopper-Pearson interval holds p in first..last (checked
    against every interval, for predictions across 0..1)."""
    for p in (0.0, 0.01, 0.05, 0.2, 0.5, 0.7, 0.95, 0.99, 1.0):
        holds = [x for x in range(n + 1) if skew.clopper_pearson(x, n)[0] <= p <= skew.clopper_pearson(x, n)[1]]
        expected = (holds[0], holds[-1]) if holds else None
        assert skew.consistent_outcomes(p, n) == expected, (p, n)
        if holds:
            assert holds == list(range(holds[0], holds[-1] + 1))


def test_which_checks_could_have_failed():
    """With 2 rounds the intervals are 0-84%, 1.3-99% and 16-100%: a
    prediction of 70% lies in all three, so no outcome could contradict it;
    5% with 3 rounds fails on 2 or 3 outside; a rule (0%) fails on any round
    outside; 100% with 2 rounds fails unless both are outside."""
    assert skew.consistent_outcomes(0.7, 2) == (0, 2)
    assert skew.consistent_outcomes(0.05, 3) == (0, 1)
    assert skew.consistent_outcomes(0.0, 2) == (0, 0)
    assert skew.consistent_outcomes(1.0, 2) == (2, 2)
    assert skew.rate_check(0.7, 2, 2)["could_fail"] is False
    assert skew.rate_check(0.05, 0, 3)["could_fail"] is True


def test_rank_envelope_by_hand():
    """Five rounds of 2 workers: with so few rounds no count is cut from the
    tails (int(0.05 / 4 * 5) = 0), so each rank's range is its min..max, the
    median the middle value, and every round lies inside (coverage 1)."""
    env = skew.rank_envelope([[20, 12], [24, 8], [31, 1], [18, 14], [22, 10]])
    assert env["median"] == [22, 10] and env["low"] == [18, 1] and env["high"] == [31, 14]
    assert env["coverage"] == 1.0 and env["rounds"] == 5
    assert skew.ranks_outside([40, 0], env["low"], env["high"]) == [(0, 40, 18, 31), (1, 0, 1, 14)]
    assert skew.ranks_outside([19, 13], env["low"], env["high"]) == []


def test_rank_envelope_holds_its_level_at_every_rank_at_once():
    """Each rank's range leaves (1 - level)/(2N) of the rounds out on each side,
    so at least `level` of the rounds are inside at every rank at once; the
    coverage counted is that share."""
    import random
    rand = random.Random(4)
    rounds = []
    for _ in range(2000):
        counts = [0] * 4
        for _ in range(64):
            counts[min(3, int(rand.expovariate(1.2)))] += 1
        rounds.append(sorted(counts, reverse=True))
    env = skew.rank_envelope(rounds)
    inside = sum(1 for r in rounds if not skew.ranks_outside(r, env["low"], env["high"])) / len(rounds)
    assert env["coverage"] == round(inside, 4) and inside >= 0.95
    assert all(lo <= m <= hi for lo, m, hi in zip(env["low"], env["median"], env["high"]))


def write_balancing(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return [str(path)]


def balancing_round(variant, workers, how, shape, rnd, split):
    return {"variant": variant, "workers": workers, "how": how, "shape": shape, "round": rnd, "mode": "process",
            "split": split}


def test_a_ramp_consistent_on_2to1_can_miss_on_shape(tmp_path):
    """One latency for every wake-up: the last-registered worker reaches accept
    first every time, so the model's ramp is 64/0/0/0 in every simulated round
    (range 64 / 0 / 0 / 0, coverage 1: no simulated round leaves it). Measured
    40/17/4/3 is outside 2:1 as predicted (that check holds) but not the
    shape the model predicts: the shape check must say so."""
    balancing = write_balancing(tmp_path / "balancing.jsonl", [
        balancing_round("bare", 4, "back-to-back", "burst", 1, "50/10/4/0"),
        balancing_round("bare", 4, "back-to-back", "ramp", 1, "40/17/4/3")])
    latency = skew.LatencySource(skew.Latency("fixed", samples=[5.0]), [], "fixed")
    (row,) = skew.validate_rows(balancing, lambda shape: latency, 2, 50, 1, ("bare",), 2.0, skew.ARRIVAL_US, 5,
                                False, False, shapes=("ramp",), workers=4)
    assert row["predicted_outside"] == 1.0 and row["consistent"] is True
    assert row["predicted_shape"]["median"] == [64, 0, 0, 0] and row["predicted_shape"]["coverage"] == 1.0
    assert row["shape_outside"] == [True] and row["shape_outside_rounds"] == 1
    assert row["shape_consistent"] is False
    assert row["measured_after"] == ["burst round 1"]


def rows_file(tmp_path, rows):
    path = tmp_path / "models.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return models_section.read_models(path)


def check_row(model, case, workers, predicted, outside, rounds, **extra):
    lo, hi = skew.clopper_pearson(outside, rounds)
    row = {"model": model, "case": case, "workers": workers, "connections": 16 * workers, "cpus": None,
           "shape": case if case in ("burst", "ramp", "keepalive") else "ramp", "method": "exact",
           "predicted_outside": predicted, "measured_outside": outside / rounds, "measured_rounds": rounds,
           "outside_rounds": outside, "ci95": [lo, hi], "consistent": lo <= predicted <= hi}
    row.update(extra)
    return row


def test_report_counts_the_checks_that_could_not_fail_apart(tmp_path):
    """Three checks: the race at 2 rounds predicting 70% (no outcome of 2
    rounds could contradict it), the hash spread at 3 rounds predicting 5%
    (2 or 3 outside would have), and the exclusive-reorder rule at 4 workers
    (0%, 1 of 2 outside: not consistent). The findings count 2 of 3
    consistent, 1 of those unable to fail, and 1 of the 2 that could fail
    held; the table shows each interval's width and what would have failed
    it; the failure is named with its worker count and the rounds, with what
    ran before each on its server."""
    rows = rows_file(tmp_path, [
        check_row("race-bare", "burst", 2, 0.7, 2, 2, method="simulation", cpus=2,
                  source="balancing.jsonl variant bare", measured_splits=["28/4", "30/2"]),
        check_row("reuseport-balancing", "burst", 2, 0.05, 0, 3, source="balancing.jsonl variant reuseport",
                  measured_splits=["18/14", "17/15", "20/12"]),
        check_row("exclusive-balancing", "exclusive-reorder", 4, 0.0, 1, 2, method="rule",
                  predicted_split="16/16/16/16", source="balancing.jsonl variant exclusive-reorder",
                  measured_splits=["26/16/11/11", "16/16/16/16"],
                  measured_after=["burst round 2", "ramp round 1"]),
    ])
    text = "\n".join(models_section.render_models(None, rows))
    assert ("| race-bare | burst | 2 x 32 | rounds outside 2:1 | 70% (simulation) | 2 of 2 | 16%–100% | 84 | "
            "no outcome of 2 | yes, could not fail |") in text
    assert "| 5.0% (exact) | 0 of 3 | 0%–71% | 71 | ≥ 2 of 3 | yes |" in text
    assert "| 0% (rule) | 1 of 2 | 1.3%–99% | 97 | ≥ 1 of 2 | NO |" in text
    assert ("2 of 3 checks against a measurement here were consistent with it; 1 of those could not have "
            "failed") in text
    assert "Of the 2 checks that could have failed, 1 held." in text
    assert ("exclusive-reorder ramp at 4 workers: predicted 0% of rounds outside 2:1 (the rule's split "
            "16/16/16/16), measured 1 of 2: 26/16/11/11 outside (round 1, after burst round 2); 16/16/16/16 "
            "inside (round 2, after ramp round 1)") in text


def test_report_names_a_failed_model_run_with_its_listeners(tmp_path):
    """A reuseport-model run outside its interval (116 of 200 against 48%:
    the interval is 51-65%) is named with its listeners and connections."""
    row = check_row("reuseport-burst", "4x32", 4, 0.4817, 116, 200, connections=32,
                    source="bin/reuseport-model --netns")
    text = "\n".join(models_section.render_models(None, rows_file(tmp_path, [row])))
    assert ("Not consistent: reuseport-model bursts of 32 to 4 listeners: predicted 48% of repetitions outside "
            "2:1, measured 116 of 200.") in text


def test_report_compares_the_race_models_shapes(tmp_path):
    """A race row whose simulated shape (median 61/3/0/0, busiest worker
    56-64) the measured ramps 40/17/4/3 and 38/21/4/1 both leave: the shape
    table shows the median and the ranges beside the rounds, and the
    findings name the check with its worker count and which ranks were above
    and below their ranges; a row whose rounds stay inside is consistent."""
    env = {"median": [61, 3, 0, 0], "low": [56, 0, 0, 0], "high": [64, 8, 0, 0], "level": 0.95, "rounds": 500,
           "coverage": 0.998}
    inside = {"median": [24, 8], "low": [16, 1], "high": [31, 16], "level": 0.95, "rounds": 500, "coverage": 0.99}
    rows = rows_file(tmp_path, [
        check_row("race-bare", "ramp", 4, 1.0, 2, 2, method="simulation", cpus=2,
                  source="balancing.jsonl variant bare", measured_splits=["40/17/4/3", "38/21/4/1"],
                  predicted_shape=env, shape_outside=[True, True], shape_outside_rounds=2, shape_consistent=False),
        check_row("race-bare", "burst", 2, 0.7, 3, 3, method="simulation", cpus=2,
                  source="balancing.jsonl variant bare", measured_splits=["28/4", "22/10", "30/2"],
                  predicted_shape=inside, shape_outside=[False] * 3, shape_outside_rounds=0, shape_consistent=True),
    ])
    text = "\n".join(models_section.render_models(None, rows))
    assert ("| 4 | bare | ramp | 61/3/0/0 | 56–64 / 0–8 / 0 / 0 | 40/17/4/3 38/21/4/1 | 2 of 2 | 0.2% (500 rounds) "
            "| 16%–100% | ≥ 1 of 2 | NO |") in text
    assert "| 2 | bare | burst | 24/8 | 16–31 / 1–16 | 28/4 22/10 30/2 | 0 of 3 |" in text
    assert "**Split shapes.** 1 of 2 race-model checks were consistent" in text
    assert ("bare ramp at 4 workers: the model's median split 61/3/0/0 (the busiest worker 56–64 of 64), measured "
            "40/17/4/3 (ranks 2–4 above, the busiest worker below), 38/21/4/1 (ranks 2–4 above, the busiest worker "
            "below)") in text


def sweep_row(n, c, predicted, rounds, **extra):
    row = {"model": "race-sweep", "case": f"N{n}-C{c}", "workers": n, "cpus": c, "connections": 16 * n,
           "shape": "burst", "method": "simulation", "predicted_outside": predicted, "predicted_rounds": rounds,
           "seed": 1, "measured_outside": None, "measured_rounds": 0, "consistent": None, "source": None,
           "latency_source": "trace t.jsonl", "accept_us": 2.0}
    row.update(extra)
    return row


def test_report_sweep_states_rounds_intervals_and_reconciles_with_the_check(tmp_path):
    """The sweep table gives each cell's interval over its rounds (32 of 60:
    40-66%) and its rounds per cell; beside the 2-worker burst check (71%,
    per-worker latencies) a cell drawn from the pooled distribution is said
    to differ in input and to lie outside its interval; a cell with the
    check's inputs whose interval holds the check's value is said to agree."""
    check = check_row("race-bare", "burst", 2, 0.7075, 3, 3, method="simulation", cpus=2, predicted_rounds=2000,
                      source="balancing.jsonl variant bare", latency_source="trace t.jsonl", per_worker=True,
                      accept_us=2.0, client_cpu=False)
    old = rows_file(tmp_path, [check, sweep_row(2, 2, 32 / 60, 60)])
    text = "\n".join(models_section.render_models(None, old))
    assert "60 simulated rounds per cell (seed 1)" in text and "| 2 | 53% (40%–66%) |" in text
    assert ("- N = 2, C = 2: the cell 53% (32 of 60 rounds, 40%–66%); the 2-worker burst check above 71% (2000 "
            "simulated rounds). Their inputs differ: the cell draws every worker from the pooled distribution, the "
            "check each worker from one measured worker's own distribution. The check's value lies outside the cell's "
            "interval") in text
    same = rows_file(tmp_path, [check, sweep_row(2, 2, 0.68, 200, outside_rounds=136, per_worker=True,
                                                 latency_workers=2)])
    text = "\n".join(models_section.render_models(None, same))
    assert "| 2 | 68% (61%–74%) |" in text
    assert "The same inputs. The check's value lies inside the cell's interval." in text


def test_report_names_a_row_whose_shape_does_not_fit_its_workers(tmp_path):
    """A race row whose simulated shape has 3 ranks for 4 workers is a corrupt
    row: the report's reader names the file and the line, not a traceback."""
    env = {"median": [61, 3, 0], "low": [56, 0, 0], "high": [64, 8, 0], "level": 0.95, "rounds": 500,
           "coverage": 0.998}
    path = tmp_path / "models.jsonl"
    path.write_text(json.dumps(check_row("race-bare", "ramp", 4, 1.0, 2, 2)) + "\n"
                    + json.dumps(check_row("race-bare", "ramp", 4, 1.0, 2, 2, predicted_shape=env)) + "\n")
    with pytest.raises(results_io.InputError) as err:
        models_section.read_models(path)
    assert err.value.line == 2 and '"predicted_shape" "median" must be 4 counts' in err.value.message


# ---------------------------------------------------------------- reuseport-model

def reuseport_args():
    return ["--netns"] if os.geteuid() == 0 else []


def test_reuseport_model_accounts_for_every_connection():
    """Each repetition's counts sum to K over N listeners, its split is the
    counts largest first, its ratio max/min (null when one got none), and the
    summary adds the repetitions up."""
    r = run([REUSEPORT, "--listeners", "3", "--connections", "16", "--repetitions", "6", "--json",
             *reuseport_args()])
    assert r.returncode == 0, r.stderr
    lines = json_lines(r.stdout)
    reps = [x for x in lines if x["type"] == "repetition"]
    (summary,) = [x for x in lines if x["type"] == "summary"]
    assert [x["repetition"] for x in reps] == list(range(1, 7))
    outside = 0
    for x in reps:
        c = x["counts"]
        assert len(c) == 3 and sum(c) == 16
        assert x["split"] == "/".join(map(str, sorted(c, reverse=True)))
        assert x["starved"] == c.count(0)
        if min(c) == 0:
            assert x["ratio"] is None
        else:
            assert abs(x["ratio"] - max(c) / min(c)) < 1e-3
        outside += min(c) == 0 or max(c) > 2 * min(c)
    assert summary["repetitions"] == 6 and summary["outside"] == outside
    assert sum(summary["histogram"].values()) == 6
    assert summary["source_ports"] == "ephemeral" and summary["seed"] is None


def test_reuseport_model_human_output_has_a_line_per_repetition():
    """Without --json: a header, 'rep N: split ratio R' per repetition, a summary."""
    r = run([REUSEPORT, "--connections", "8", "--repetitions", "3", *reuseport_args()])
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("reuseport-model: 2 listeners on 127.0.0.1:")
    assert [line.split(":")[0] for line in lines[1:4]] == ["rep    1", "rep    2", "rep    3"]
    assert lines[4].startswith("summary: 2 listeners, 8 connections x 3 repetitions")


@ROOT_ONLY
def test_seeded_source_ports_repeat_within_one_namespace(tmp_path):
    """The listener is a function of the 4-tuple and the namespace's secrets:
    two runs with one --seed and --port in ONE network namespace give the same
    counts, repetition by repetition (across namespaces or boots they need not)."""
    out = tmp_path / "out"
    cmd = (f"ip link set lo up && for i in 1 2; do {REUSEPORT} --seed 42 --port 4321 --repetitions 5 "
           f"--connections 24 --json; done > {out}")
    r = run(["unshare", "-n", "sh", "-c", cmd])
    assert r.returncode == 0, r.stderr
    reps = [x["counts"] for x in json_lines(out.read_text()) if x["type"] == "repetition"]
    assert len(reps) == 10 and reps[:5] == reps[5:]
    assert all(sum(c) == 24 for c in reps)


def test_replay_rejects_a_repetition_with_another_total(tmp_path):
    """--replay: every line must have the first line's listeners and total; the
    error names the file and the line."""
    bad = tmp_path / "counts.txt"
    bad.write_text("16/16\n20/10\n")
    r = run([REUSEPORT, "--replay", bad])
    assert r.returncode == 2
    assert f"{bad}:2:" in r.stderr and len(r.stderr.strip().splitlines()) == 1


# ---------------------------------------------------------------- exclusive-model

def exclusive(*args):
    r = run([EXCLUSIVE, "--json", *args], timeout=60)
    assert r.returncode == 0, r.stderr
    lines = json_lines(r.stdout)
    reg = [x for x in lines if x["type"] == "registration"][0]
    conns = [x for x in lines if x["type"] == "connection"]
    summary = [x for x in lines if x["type"] == "summary"][0]
    return reg, conns, summary


def test_exclusive_model_every_connection_accepted_once_in_registration_order():
    """Default order: registration is 0..N-1; every connection is accepted by
    exactly one child; the per-child counts add up to K."""
    reg, conns, summary = exclusive("--processes", "3", "--connections", "6", "--gap-ms", "5")
    assert reg["order"] == [0, 1, 2] and len(reg["pids"]) == 3
    assert len(conns) == 6
    assert all(c["winners"] == 1 and 0 <= c["winner"] < 3 for c in conns)
    assert sum(summary["accepted"]) == 6 and summary["not_accepted_once"] == 0
    assert summary["order"] == [0, 1, 2]


def test_exclusive_model_first_registered_idle_waiter_wins():
    """The kernel rule (fs/eventpoll.c ep_poll_callback + __wake_up_common): with
    --order 2,0,1 and every child idle (each reported 'idle' before it is
    counted so), child 2, registered first, takes every connection; the tool's
    own check agrees. This asserts the mechanism, not a timing: the prediction
    uses only the idle states the children reported."""
    reg, conns, summary = exclusive("--processes", "3", "--connections", "5", "--gap-ms", "20",
                                    "--order", "2,0,1")
    assert reg["order"] == [2, 0, 1]
    checked = [c for c in conns if c["predicted"] is not None]
    assert checked and all(c["match"] for c in checked)
    assert summary["rule_holds"] is True and summary["matched"] == summary["checked"]


def test_latency_probe_hears_from_every_idle_child():
    """--trigger eventfd --no-exclusive: nobody consumes, so every child idle at
    a write reports a wake-up latency for it; there are no accepts."""
    reg, conns, summary = exclusive("--trigger", "eventfd", "--no-exclusive", "--processes", "2",
                                    "--connections", "5", "--gap-ms", "2")
    assert summary["trigger"] == "eventfd" and summary["exclusive"] is False
    for c in conns:
        for child in c["idle"]:
            assert c["wake_us"][child] is not None and c["wake_us"][child] > 0
    assert summary["accepted"] == [0, 0] and summary["rule_holds"] is None


def test_latency_probe_never_gives_a_wake_up_before_its_write():
    """The campaign's latency probe (eventfd, no EPOLLEXCLUSIVE, 1 ms apart):
    a child's report of a wake-up can reach the parent after the next write
    started; it belongs to the write before, so no wake_us is ever at or
    below zero (the campaign rejects such a file). Before the parent matched
    reports to writes by time, some runs had one."""
    reg, conns, summary = exclusive("--trigger", "eventfd", "--no-exclusive", "--processes", "2",
                                    "--connections", "100", "--gap-ms", "1")
    samples = [v for c in conns for v in c["wake_us"] if v is not None]
    assert samples and all(v > 0 for v in samples), [v for v in samples if v <= 0]


# ---------------------------------------------------------------- campaign

def test_campaign_quick_writes_every_model_row(tmp_path):
    """`skew.py campaign --quick` runs both C models and the Python models and
    writes DIR/models.jsonl: every row has the documented keys, and each model
    the report reads is there (with the fixture balancing rows)."""
    out = tmp_path / "run"
    r = run_skew("campaign", "--out", str(out), "--quick", "--balancing", f"{F}/balancing.jsonl",
                 *([] if os.geteuid() == 0 else ["--no-netns"]), timeout=120)
    assert r.returncode == 0, r.stderr
    rows = json_lines((out / "models.jsonl").read_text())
    models = {x["model"] for x in rows}
    assert models == {"reuseport-burst", "reuseport-balancing", "exclusive-wakeup", "exclusive-balancing",
                      "race-bare", "race-sweep"}
    for x in rows:
        for key in ("model", "case", "workers", "cpus", "connections", "shape", "method", "predicted_outside",
                    "measured_outside", "measured_rounds", "consistent", "source"):
            assert key in x, (key, x)
    assert len([x for x in rows if x["model"] == "race-sweep"]) == 36
    # Every check says whether it could have failed; the race rows carry their shape and its check.
    for x in rows:
        if x["consistent"] is not None:
            assert isinstance(x["could_fail"], bool), x
    race = [x for x in rows if x["model"] == "race-bare" and x["measured_rounds"]]
    assert race and all(len(x["predicted_shape"]["median"]) == x["workers"] and
                        len(x["shape_outside"]) == x["measured_rounds"] and isinstance(x["shape_consistent"], bool)
                        for x in race)
    # The sweep draws its latencies as the checks do, and each cell carries its sampling interval.
    burst = next(x for x in race if x["case"] == "burst" and x["workers"] == 2)
    for x in (x for x in rows if x["model"] == "race-sweep"):
        assert x["per_worker"] == burst["per_worker"] and x["latency_source"] == burst["latency_source"]
        lo, hi = skew.clopper_pearson(x["outside_rounds"], x["predicted_rounds"])
        assert x["ci95"] == [round(lo, 4), round(hi, 4)]
    assert all(x["rule_matched"] == x["rule_checked"] for x in rows if x["model"] == "exclusive-wakeup")
    assert (out / "raw" / "models").is_dir()
    assert r.stdout.splitlines()[-1].startswith("models: %d rows in " % len(rows))


# ---------------------------------------------------------------- bad input

@pytest.mark.parametrize("argv,named", [
    ([REUSEPORT, "--listeners", "0"], "--listeners"),
    ([REUSEPORT, "--connections", "x"], "--connections"),
    ([REUSEPORT, "--bogus"], "--bogus"),
    ([REUSEPORT, "--replay", "/nonexistent/counts"], "/nonexistent/counts"),
    ([REUSEPORT, "--replay", "x", "--seed", "1"], "--replay"),
    ([EXCLUSIVE, "--processes", "0"], "--processes"),
    ([EXCLUSIVE, "--order", "0,0,1,2"], "--order"),
    ([EXCLUSIVE, "--processes", "2", "--order", "0,1,2"], "--order"),
    ([EXCLUSIVE, "--trigger", "pipe"], "--trigger"),
    ([EXCLUSIVE, "--gap-ms"], "--gap-ms"),
    ([*SKEW, "analytic", "--workers", "0", "--connections", "3"], "--workers"),
    ([*SKEW, "analytic", "--workers", "2"], "--connections"),
    ([*SKEW, "race", "--latency-us", "5,abc"], "--latency-us"),
    ([*SKEW, "race", "--latency-us", "5", "--cpus", "-1"], "--cpus"),
    ([*SKEW, "race", "--rounds", "10"], "--latencies"),
    ([*SKEW, "race", "--latency-us", "5", "--shape", "zigzag"], "--shape"),
    ([*SKEW, "frobnicate"], "frobnicate"),
    ([*SKEW, "compare", "--reuseport-json", "/nonexistent/r.jsonl"], "/nonexistent/r.jsonl"),
    ([*SKEW, "race", "--latencies", "/nonexistent/lat"], "/nonexistent/lat"),
])
def test_bad_arguments_exit_2_naming_them(argv, named):
    """A usage error is exit 2 and one line on stderr that names the argument
    (or the missing file), never a traceback."""
    r = run(argv)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert named in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


@pytest.mark.parametrize("content,line", [
    ('{"variant":"bare","shape":"burst","split":"20/12"}\nnot json\n', 2),
    ('{"variant":"bare","shape":"burst","split":"20/12"}\n{"variant":"bare","shape":"burst","split":"a/b"}\n', 2),
    ('[1, 2]\n', 1),
])
def test_corrupt_balancing_file_names_file_and_line(tmp_path, content, line):
    """validate reads balancing.jsonl: a line that is not JSON, a split that is
    not counts, or a non-object names the file and the line, exit 2."""
    bad = tmp_path / "balancing.jsonl"
    bad.write_text(content)
    r = run_skew("validate", "--balancing", str(bad), "--latency-us", "5,10", "--rounds", "10")
    assert r.returncode == 2
    assert f"{bad}:{line}:" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("content,line", [
    ("5\n7\nfast\n", 3),
    ('{"type":"worker","tid":1,"wake_to_accept_us_log2":{"x":3}}\n', 1),
    ('{"type":"worker","tid":1,"wake_to_accept_us_log2":{"3":-1}}\n', 1),
    ("5\n-2\n", 2),
])
def test_corrupt_latency_file_names_file_and_line(tmp_path, content, line):
    """A latency file with a non-number, a bad histogram key or count, or a
    negative latency names the file and the line, exit 2."""
    bad = tmp_path / "lat.txt"
    bad.write_text(content)
    r = run_skew("race", "--latencies", str(bad), "--rounds", "10")
    assert r.returncode == 2
    assert f"{bad}:{line}:" in r.stderr and "Traceback" not in r.stderr


def test_help_everywhere():
    """--help exits 0 for the two C models and every skew.py subcommand; the
    race's help states the model's assumptions."""
    for argv in ([REUSEPORT, "--help"], [EXCLUSIVE, "--help"], [*SKEW, "--help"]):
        assert run(argv).returncode == 0
    for sub in ("analytic", "compare", "race", "validate", "campaign"):
        r = run_skew(sub, "--help")
        assert r.returncode == 0 and "usage:" in r.stdout
    assert "The race model assumes" in run_skew("race", "--help").stdout


def regenerate():
    """Rewrites the golden files from the current tools (-m tests.test_models --regen)."""
    for name, argv in sorted(GOLDEN.items()):
        r = run(argv)
        if r.returncode != 0:
            sys.exit(f"{name}: {' '.join(map(str, argv))}: exit {r.returncode}: {r.stderr.strip()}")
        (FIXTURES / name).write_text(r.stdout)
        print(f"wrote {FIXTURES / name}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--regen"]:
        regenerate()
    else:
        sys.exit("usage: /usr/bin/python3 -m tests.test_models --regen   (run the tests with pytest)")
