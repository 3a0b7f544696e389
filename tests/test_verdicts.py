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
    verdict can stand: an A/A pair whose interval holds 1 lets judge()'s
    verdict through where the interval clears the goal by more than the
    floor; one that clears it by less, or a pair that itself differed, turns
    met or missed into not resolved, saying why. A miss by far more than the
    floor stands even when the floor is wider than the goal's margin (the
    passive watch at 1.45 against at most 1.03 on a floor of ± 0.04 is
    missed). Without a floor the ratio's own interval decides."""
    tight, wide, biased = (1.0, 0.01, 6), (1.0, 0.04, 6), (1.06, 0.02, 6)
    values = [1.01, 1.0, 1.02, 1.01]  # 1.010 +- 0.013: wholly under 1.05
    assert stats.judge_on_floor(values, 1.05, "at most", tight)[0] == stats.MET
    assert stats.judge_on_floor(values, 1.05, "at most", None)[0] == stats.MET
    verdict, _, _, why = stats.judge_on_floor(values, 1.03, "at most", wide)
    assert verdict == stats.NOT_RESOLVED and "clears the goal by 0.007, no more than the A/A floor" in why, why
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
    verdict, _, _, why = stats.judge_on_floor([1.2, 1.21, 1.19], 1.05, "at most", biased)
    assert verdict == stats.NOT_RESOLVED and "A/A pair itself differed" in why
    # a target of 1 has no margin: only a pair that differed objects
    assert stats.floor_objection(wide, 1) is None and stats.floor_objection(biased, 1)
    assert stats.floor_of([1.0]) is None and stats.floor_of([1.0, 1.02])[2] == 2


def test_partner_at_is_the_line_through_the_runs_around():
    """A run's partner value in a block: on the line through the partner's
    runs just before and after it; the nearer end past either end."""
    assert stats.partner_at([(0, 2.0), (4, 6.0)], 1) == 3.0
    assert stats.partner_at([(0, 2.0), (4, 6.0)], 7) == 6.0 and stats.partner_at([], 0) is None
