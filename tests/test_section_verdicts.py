"""The verdicts and explanations of the payoff, burst, respawn, mutex delay,
slow view and peers sections say only what their rows show (issue 23, items
4 and 5): a verdict keeps its interval (report/common.py judge), a ranking
word is printed only outside the section's own noise, and an explanatory
sentence is derived from the run's rows or not printed. Each case feeds a
section rows a point-estimate rule, or a fixed sentence, would get wrong.

The sections are called in-process on rows built here; the run's meta.json
is the report fixture's (2 CPUs), so "more workers than CPUs" is 4 and 8."""

import dataclasses
from pathlib import Path

from report import common
from report.sections import burst, latency, peers, respawn
from report.sections.payoff import render_payoff
from report.sections.wrk import WrkRun

ROOT = Path(__file__).resolve().parent.parent
META = common.read_meta(ROOT / "tests" / "fixtures" / "report" / "results" / "linux" / "20261129T081500Z")
assert META.cpus == 2, "these cases are written for the fixture's 2 CPUs"


def wrk(arm, workers, rnd, rps, p99, served):
    return WrkRun(0, arm, workers, 32, rnd, rps, p99 / 2, p99, (), served=served)


def verdict_of(out: list) -> str:
    (line,) = [x for x in out if x.startswith("**Does a sustained load balance itself?**")]
    return line


def payoff_rows(rounds, bare2=("17/17", 1.95), bare8=("26/6/1/1/0/0/0/0", 1.95), p99_bare8=36.0):
    """bare at 1, 2 and 8 workers and two balanced arms, each round alike
    but for a small wobble (so intervals exist and are narrow)."""
    rows = []
    for rnd in range(1, rounds + 1):
        wobble = 1 + 0.002 * rnd
        rows += [wrk("bare", 1, rnd, 1800 * wobble, 30, "33"),
                 wrk("bare", 2, rnd, 1800 * bare2[1] * wobble, 17, bare2[0]),
                 wrk("fdpass", 2, rnd, 1800 * 1.95 * wobble, 17, "17/17"),
                 wrk("reuseport-bpf", 2, rnd, 1800 * 1.95 * wobble, 17, "17/17"),
                 wrk("bare", 8, rnd, 1800 * bare8[1] * wobble, p99_bare8 * wobble, bare8[0]),
                 wrk("fdpass", 8, rnd, 1800 * 1.95 * wobble, 20 / wobble, "5/5/4/4/4/4/4/4"),
                 wrk("reuseport-bpf", 8, rnd, 1800 * 1.95 * wobble, 21 / wobble, "5/5/4/4/4/4/4/4")]
    return rows


def test_one_round_resolves_no_throughput_verdict():
    """bare at 2 workers spread 17/17 and got 1.95x one worker's req/s, over
    the 1.80x target: a point estimate says yes, but one round has no
    interval, so the verdict at 2 workers is not resolved."""
    line = verdict_of(render_payoff(META, payoff_rows(1)))
    assert "Not resolved at this run's resolution at 2 workers" in line, line
    assert "Yes at" not in line, line


def test_rounds_that_clear_the_target_say_yes():
    """Three rounds whose req/s ratios all sit near 1.95x: the interval's
    lower bound clears 1.80x and the split is within 2:1 every round."""
    line = verdict_of(render_payoff(META, payoff_rows(3)))
    assert line.startswith("**Does a sustained load balance itself?** Yes at 2 workers"), line


def test_req_s_is_not_judged_with_more_workers_than_cpus():
    """At 8 workers on 2 CPUs bare reaches the CPUs' cap (1.95x) with a
    26/6/1/1/0/0/0/0 split: req/s cannot show balance there, so it must not
    count as evidence of it; the split, outside 2:1 in every round, says no."""
    out = render_payoff(META, payoff_rows(3))
    line = verdict_of(out)
    assert "No at 8 workers: bare's connections fell outside 2:1 in every round" in line, line
    (eight,) = [x for x in out if x.startswith("- 8 workers:")]
    assert "req/s cannot show balance with more workers than CPUs" in eight, eight
    assert "target at least" not in eight, eight


def test_bare_p99_named_the_highest_and_its_lead_judged():
    """bare's p99 at 8 workers is the highest of any arm there: said, with
    the runner-up, and resolved only when every round's lead agrees (3
    rounds) -- with one round the same figures are not resolved."""
    (three,) = [x for x in render_payoff(META, payoff_rows(3)) if x.startswith("- 8 workers:")]
    assert "the highest of any arm at 8 workers (next: reuseport-bpf" in three, three
    assert "a lead resolved over every other arm" in three, three
    assert "resolved above theirs" in three, three
    (one,) = [x for x in render_payoff(META, payoff_rows(1)) if x.startswith("- 8 workers:")]
    assert "the highest of any arm at 8 workers" in one, one
    assert "a lead not resolved at this run's resolution" in one, one


def test_bare_p99_not_highest_is_not_called_highest():
    (eight,) = [x for x in render_payoff(META, payoff_rows(3, p99_bare8=15.0)) if x.startswith("- 8 workers:")]
    assert "highest" not in eight, eight


# ---------------------------------------------------------------- bursts


def bursts(arm, workers, k, completions_ms, split):
    return [burst.Burst(0, arm, workers, k, i, c, (c,) * k, split, 0) for i, c in enumerate(completions_ms, 1)]


def burst_findings(rows) -> list:
    return [x for x in burst.render_burst(META, rows) if x.startswith("- K = ")]


def test_a_lead_inside_the_noise_is_a_tie():
    """fdpass-off and bare (one mechanism) differ by 1.20x, so fdpass's 4.64
    ms against reuseport-bpf's 4.65 ms is a tie, not 'fastest: fdpass'."""
    rows = (bursts("bare", 2, 4, [10.0] * 3, "4/0") + bursts("fdpass-off", 2, 4, [12.0] * 3, "4/0")
            + bursts("fdpass", 2, 4, [4.64] * 3, "2/2") + bursts("reuseport-bpf", 2, 4, [4.65] * 3, "2/2"))
    (line,) = burst_findings(rows)
    assert "fastest" not in line, line
    assert "tied within this run's noise (1.20x): fdpass, reuseport-bpf." in line, line


def test_a_lead_beyond_the_noise_is_named():
    """The same pair 1.02x apart, and fdpass 2x sooner than anything else."""
    rows = (bursts("bare", 2, 4, [10.0] * 3, "4/0") + bursts("fdpass-off", 2, 4, [10.2] * 3, "4/0")
            + bursts("fdpass", 2, 4, [5.0] * 3, "2/2") + bursts("reuseport-bpf", 2, 4, [10.0] * 3, "2/2"))
    (line,) = burst_findings(rows)
    assert "fastest: fdpass (the next, " in line and "beyond this run's noise of 1.02x" in line, line


def test_no_same_mechanism_pair_names_no_fastest():
    rows = bursts("bare", 2, 4, [10.0] * 3, "4/0") + bursts("fdpass", 2, 4, [5.0] * 3, "2/2")
    (line,) = burst_findings(rows)
    assert "fastest" not in line and "a lead not resolved" in line, line


# ---------------------------------------------------------------- respawn


def trial(variant, migrate, n, reset, queued):
    return respawn.RespawnTrial(0, variant, migrate, n, 32, 32 - reset, reset, 0, 3.0, queued, 0 if queued is not None else None)


def test_resets_are_set_beside_what_waited_at_the_killed_workers_listener():
    """With the queue counted, the section says the resets equal what waited
    at the killed worker's own listener, trial by trial (and that migrate
    reset none of it); without it, it attributes nothing."""
    out = respawn.render_respawn(META, [trial("reuseport", False, 1, 14, 14), trial("reuseport", False, 2, 13, 12),
                                        trial("reuseport", True, 1, 0, 16)])
    text = "\n".join(out)
    assert "27 of 64 connections reset over 2 trials; 26 waited at the killed worker's own listener, and the " \
           "resets equal them in 1 of 2 trials." in text, text
    assert "48" not in text and "16 waited at the killed worker's own listener, and none of them was reset" in text
    bare = "\n".join(respawn.render_respawn(META, [trial("reuseport", False, 1, 14, None)]))
    assert "waited" not in bare and "queued" not in bare.lower(), bare


# ---------------------------------------------------------------- mutex delay and slow view


def lround(variant, setting, rnd, split, p99, counts=(), busy=None):
    return latency.LatencyRound(0, variant, setting, rnd, split, 16, 16, {"p50": p99 // 2, "p99": p99}, counts, busy)


def test_mutex_delays_whose_intervals_overlap_are_not_told_apart():
    """Three delays whose p99s scatter across each other: no 'worst', and no
    delay is said to be above another."""
    rows = [lround("mutex", d, r, s, p) for d, s, ps in ((500, "16/0", (1457, 1108, 769)),
                                                          (0, "9/7", (1733, 2312, 710)))
            for r, p in enumerate(ps, 1)]
    text = "\n".join(latency.render_mutex_delay(META, rows))
    assert "Worst" not in text and "worst" not in text, text
    assert "No two are resolved apart: not resolved at this run's resolution." in text, text
    assert "delay 500 ms: one worker answered every connection in 3 of 3 rounds" in text, text
    assert "delay 0 ms: one worker answered every connection in 0 of 3 rounds" in text, text
    assert "A burst of 16 with 2 workers at 2 delays" in text, text


def test_slow_view_names_what_the_busy_worker_answered_only_from_the_rows():
    busy = (101, 101)
    rows = [lround("mutex", 50, 1, "16/0", 49729, (("101", 16), ("102", 0)), busy),
            lround("mutex", 50, 2, "16/0", 480, (("101", 0), ("102", 16)), busy)]
    text = "\n".join(latency.render_slowview(META, rows))
    assert "the worker in the view answered 16 0 of each burst's 16 connections" in text, text
    assert "in the 1 round where the worker in the view answered part of the burst, first-byte p99 49729 to " \
           "49729 us; in the 1 round where it answered none, 480 to 480 us." in text, text
    assert "makes them wait" not in text
    unnamed = "\n".join(latency.render_slowview(META, [dataclasses.replace(r, busy=None) for r in rows]))
    assert "answered 16 0" not in unnamed and "do not name the worker in the view" in unnamed, unnamed


# ---------------------------------------------------------------- peers


def test_peer_design_differences_are_not_offered_as_this_runs_explanation():
    out = peers.peers_comparison(META, ["node-rr"], [], [])
    (intro,) = [x for x in out if x.startswith("Where a peer and our variant differ")]
    assert "not from this run" in intro and "does not measure whether" in intro, intro
