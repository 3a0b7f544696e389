"""The report's one verdict rule (acceptlab/stats.py judge): a target is met
only when the 95 % interval's bound clears it, missed only when the other
bound does, and otherwise not resolved; one round has no interval, so it
resolves nothing. Each case below would pass a point-estimate rule and must
not pass this one."""

import pytest

from acceptlab import stats


def test_a_cost_is_met_only_when_the_upper_bound_clears_it():
    assert stats.judge(1.01, 1.04, 1.05, "at most") == stats.MET
    # the mean (1.03) is under 1.05, but the interval reaches above it
    assert stats.judge(1.00, 1.06, 1.05, "at most") == stats.NOT_RESOLVED
    assert stats.judge(1.06, 1.20, 1.05, "at most") == stats.MISSED


def test_a_throughput_is_met_only_when_the_lower_bound_clears_it():
    assert stats.judge(0.98, 1.00, 0.97, "at least") == stats.MET
    assert stats.judge(0.90, 0.99, 0.97, "at least") == stats.NOT_RESOLVED
    assert stats.judge(0.90, 0.95, 0.97, "at least") == stats.MISSED


def test_parity_inside_a_wide_interval_is_not_resolved():
    # 1.022 +- 0.387 against "at or below 1": neither met nor missed
    assert stats.judge(1.022 - 0.387, 1.022 + 0.387, 1.0, "at most") == stats.NOT_RESOLVED


def test_one_round_or_none_resolves_nothing():
    assert stats.judge(None, None, 1.0, "at most") == stats.NOT_RESOLVED
    assert stats.judge_values([0.5], 1.0, "at most") == (stats.NOT_RESOLVED, 0.5, None)
    assert stats.judge_values([], 1.0, "at most") == (stats.NOT_RESOLVED, None, None)


def test_judge_values_uses_the_t_interval_of_the_mean():
    verdict, mean, half = stats.judge_values([1.00, 1.02, 1.01], 1.05, "at most")
    assert verdict == stats.MET and abs(mean - 1.01) < 1e-9
    # t(2) = 4.303, sd 0.01, n 3: half-width 0.0248
    assert abs(half - 4.303 * 0.01 / 3 ** 0.5) < 1e-6


def test_a_bad_direction_is_an_error():
    try:
        stats.judge(0, 1, 1, "about")
    except ValueError as e:
        assert "want" in str(e)
    else:
        raise AssertionError("judge accepted want='about'")


def test_a_verdict_stands_only_on_a_floor_that_can_carry_it():
    """The A/A floor (the same server measured twice) decides whether a
    verdict can stand: judge()'s verdict stands only where the ratio's
    interval clears the goal by more than the A/A pair's reach from 1 (its
    mean's distance from 1 plus its half-width); one that clears it by
    less turns met or missed into not resolved, saying why. A miss by far
    more than the reach stands even when the reach is wider than the goal's
    margin (the passive watch at 1.45 against at most 1.03 on a floor of
    ± 0.04 is missed). Without a floor the ratio's own interval decides."""
    tight, wide = (1.0, 0.01, 6), (1.0, 0.04, 6)
    values = [1.01, 1.0, 1.02, 1.01]  # 1.010 +- 0.013: wholly under 1.05
    assert stats.judge_on_floor(values, 1.05, "at most", tight)[0] == stats.MET
    assert stats.judge_on_floor(values, 1.05, "at most", None)[0] == stats.MET
    verdict, _, _, why = stats.judge_on_floor(values, 1.03, "at most", wide)
    assert verdict == stats.NOT_RESOLVED and "clears the goal by 0.007, no more than the A/A pair's reach" in why, why
    # met by less than the floor: 1.05 - 1.023 = 0.027 < 0.04
    assert stats.judge_on_floor(values, 1.05, "at most", wide)[0] == stats.NOT_RESOLVED
    far = [1.45, 1.40, 1.50, 1.44]  # 1.448 +- 0.065: over 1.03 by far more than 0.04
    assert stats.judge_on_floor(far, 1.03, "at most", wide)[:1] == (stats.MISSED,)
    near = [1.08, 1.07, 1.09, 1.08]  # 1.080 +- 0.013: over 1.03, by 0.037 < 0.04
    assert stats.judge_on_floor(near, 1.03, "at most", wide)[0] == stats.NOT_RESOLVED
    # at least: a throughput met or missed by its bound nearest the goal
    assert stats.clearance(1.10, 0.02, 1.05, "at least", stats.MET) == pytest.approx(0.03)
    assert stats.clearance(0.90, 0.02, 1.05, "at least", stats.MISSED) == pytest.approx(0.13)
    assert stats.clearance(1.0, 0.02, 1.05, "at most", stats.NOT_RESOLVED) is None
    # the goal's margin is the distance when no interval is given
    assert "no finer than the goal's margin" in stats.floor_objection(wide, 1.03)
    assert stats.floor_of([1.0]) is None and stats.floor_of([1.0, 1.02])[2] == 2


def test_the_floor_reaches_as_far_as_the_pairs_bias_and_noise_together():
    """The reach is |mean - 1| + half-width: a pair centred off 1 carries
    less than its half-width alone says, and one that itself differed still
    carries a verdict that clears the goal by more than its bias and noise
    together, but none nearer. A goal of 1 (an arm against its partner)
    needs the same clearance: a ratio of 0.995 +- 0.002 is below 1 by its
    interval alone, but not beyond a floor of 1.002 +- 0.006."""
    off_centre, differed = (1.003, 0.006, 8), (0.996, 0.002, 16)
    assert stats.floor_reach(off_centre) == pytest.approx(0.009)
    assert stats.floor_reach(differed) == pytest.approx(0.006)
    # 1.013 +- 0.005 against at most 1.03: clears it by 0.012 > 0.006
    fdpass = [1.013 + d for d in (-0.009, 0.009, -0.005, 0.005, 0, 0.004, -0.004, 0)]
    verdict, m, half, why = stats.judge_on_floor(fdpass, 1.03, "at most", differed)
    assert verdict == stats.MET and why is None, (m, half, why)
    # the same ratio nearer the goal: clears it by 0.004 < 0.006
    nearer = [v + 0.008 for v in fdpass]
    verdict, _, _, why = stats.judge_on_floor(nearer, 1.03, "at most", differed)
    assert verdict == stats.NOT_RESOLVED and "the pair itself differed" in why, why
    # clears by 0.007: more than the half-width (0.006), less than the reach (0.009)
    seven = [1.017, 1.019, 1.021, 1.023, 1.017, 1.019, 1.021, 1.023]  # 1.020 +- 0.002
    clears = 1.03 - sum(stats.mean_interval(seven))
    assert 0.006 < clears < 0.009
    assert stats.judge_on_floor(seven, 1.03, "at most", off_centre)[0] == stats.NOT_RESOLVED
    # a goal of 1: below 1 by its interval, not by more than the reach
    below = [0.993, 0.997, 0.995, 0.995]
    assert stats.judge_values(below, 1, "at most")[0] == stats.MET
    verdict, _, _, why = stats.judge_on_floor(below, 1, "at most", (1.002, 0.006, 8))
    assert verdict == stats.NOT_RESOLVED and "reach from 1" in why, why
    # a tie is a tie: no objection where no verdict was reached against 1
    assert stats.floor_objection((1.002, 0.006, 8), 1) is None


def test_partner_at_is_the_line_through_the_runs_around():
    """A run's partner value in a block: on the line through the partner's
    runs just before and after it; the nearer end past either end."""
    assert stats.partner_at([(0, 2.0), (4, 6.0)], 1) == 3.0
    assert stats.partner_at([(0, 2.0), (4, 6.0)], 7) == 6.0 and stats.partner_at([], 0) is None
