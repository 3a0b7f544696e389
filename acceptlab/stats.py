"""stats: the one Student's t table, the one mean and 95 % interval, and the
verdict rule every interval is judged by. The report's verdicts (met,
missed, not resolved), make bench's stopping rule and the wrk studies'
ratios all come from here.

A verdict keeps its interval: a target is met only when the interval's
bound clears it, missed only when the other bound does, otherwise not
resolved (judge). Where an A/A pair ran (the same server measured twice),
the bound must clear the target by more than the pair's reach from 1, its
bias and its noise together (judge_on_floor).
"""

import math
import statistics

# Student's t, 97.5th percentile, by degrees of freedom 1..30 (a two-sided
# 95 % interval); the normal's Z975 beyond.
T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)
Z975 = 1.96  # the normal distribution's 97.5th percentile: a two-sided 95 % interval


def mean_interval(values: list) -> tuple:
    """(mean, half-width of its 95 % interval over the values, t-based; None
    for fewer than 2)."""
    m = statistics.fmean(values)
    if len(values) < 2:
        return m, None
    t = T975[len(values) - 2] if len(values) - 1 <= len(T975) else Z975
    return m, t * statistics.stdev(values) / math.sqrt(len(values))


MET = "met"
MISSED = "missed"
NOT_RESOLVED = "not resolved at this run's resolution"


def judge(low, high, target: float, want: str) -> str:
    """The verdict on a target for a quantity known to lie in [low, high]
    (its 95 % interval): want "at most" (the quantity should be <= target,
    a cost) or "at least" (>= target, a throughput). MET when the whole
    interval is on the target's good side, MISSED when the whole interval is
    on its bad side, NOT_RESOLVED otherwise or when the interval is unknown
    (low or high None: one round has no interval)."""
    if want not in ("at most", "at least"):
        raise ValueError("judge: want must be 'at most' or 'at least', not %r" % (want,))
    if low is None or high is None:
        return NOT_RESOLVED
    good_hi, good_lo = (high, low) if want == "at most" else (-low, -high)
    t = target if want == "at most" else -target
    if good_hi <= t:
        return MET
    if good_lo > t:
        return MISSED
    return NOT_RESOLVED


def judge_values(values: list, target: float, want: str) -> tuple:
    """judge() on the t-based 95 % interval of the mean of values: (verdict,
    mean, half-width or None). Fewer than 2 values: not resolved."""
    values = [v for v in values if v is not None]
    if not values:
        return NOT_RESOLVED, None, None
    m, half = mean_interval(values)
    if half is None:
        return NOT_RESOLVED, m, None
    return judge(m - half, m + half, target, want), m, half


def floor_of(values: list):
    """An A/A pair's ratios (the same server measured twice, as two arms) ->
    (mean, half-width of its 95 % interval, rounds): what the method
    resolves. None for fewer than 2 values."""
    values = [v for v in values if v is not None]
    if len(values) < 2:
        return None
    m, half = mean_interval(values)
    return m, half, len(values)


def floor_reach(floor) -> float:
    """How far from 1 an A/A pair's 95 % interval (floor_of's) reaches:
    |mean - 1| + half-width. The pair is the same server twice, so a ratio
    between two different arms may be off by this much from the method
    alone: its bias (the mean's distance from 1) and its noise (the
    half-width) together."""
    m, half, _ = floor
    return abs(m - 1) + half


def floor_objection(floor, target: float, clears=None):
    """Why a verdict against target cannot stand on a method whose A/A floor
    is floor (floor_of's), or None when it can. A verdict rests on how far
    the ratio's interval clears the target (clears: its bound nearest the
    target); it stands only when that is more than the A/A pair's reach
    from 1 (floor_reach), for any target, 1 included. A pair that itself
    differed (its interval does not hold 1) reaches further by its bias, so
    it resolves less, not nothing. Without clears (no verdict to carry),
    the objection says why a goal other than 1 cannot be resolved at all:
    the reach is no finer than the goal's margin |target - 1| (the distance
    from no effect). No floor measured: None (the ratio's own interval
    decides)."""
    if floor is None:
        return None
    m, half, _ = floor
    reach = floor_reach(floor)
    differed = "" if m - half <= 1 <= m + half else "; the pair itself differed"
    if clears is not None:
        if reach >= clears:
            return ("the interval clears the goal by %.3f, no more than the A/A pair's reach from 1 (%.3f ± %.3f: "
                    "%.3f%s)" % (clears, m, half, reach, differed))
        return None
    margin = abs(target - 1)
    if margin and reach >= margin:
        return ("the A/A pair's reach from 1 (%.3f ± %.3f: %.3f%s) is no finer than the goal's margin (%.3f)"
                % (m, half, reach, differed, margin))
    return None


def clearance(m, half, target: float, want: str, verdict: str):
    """How far a met or missed verdict's interval (m ± half) clears target:
    the distance from target to the interval's bound nearest it; None for
    any other verdict."""
    if verdict not in (MET, MISSED) or half is None:
        return None
    lo, hi = m - half, m + half
    below = (want == "at most") == (verdict == MET)  # the interval lies below target
    return target - hi if below else lo - target


def judge_on_floor(values: list, target: float, want: str, floor) -> tuple:
    """judge_values, then NOT_RESOLVED where floor_objection objects, given
    how far the interval clears the target: a verdict stands only when it
    clears the target by more than the A/A pair's reach from 1 (a miss by
    far more than that is a miss, whatever the goal's margin): (verdict,
    mean, half-width, the objection or None)."""
    verdict, m, half = judge_values(values, target, want)
    why = floor_objection(floor, target, clearance(m, half, target, want, verdict))
    if why and verdict != NOT_RESOLVED:
        return NOT_RESOLVED, m, half, why
    return verdict, m, half, why


def place_of(seq, paired_seq=None):
    """Where a run's partner value is read (partner_at): the partner run it
    ran beside (paired_seq, the paired method), else its own place in the
    block (seq)."""
    return seq if paired_seq is None else paired_seq


def partner_at(series, seq):
    """series: [(seq, value)] of a partner's runs in a block, seq ascending.
    Its value at position seq: between its run before and its run after,
    on the line through the two; the nearer one's value past either end.
    None when it has no run."""
    if not series:
        return None
    before = [(s, v) for s, v in series if s <= seq]
    after = [(s, v) for s, v in series if s >= seq]
    if not before:
        return after[0][1]
    if not after:
        return before[-1][1]
    (s0, v0), (s1, v1) = before[-1], after[0]
    if s1 == s0:
        return v0
    return v0 + (v1 - v0) * (seq - s0) / (s1 - s0)
