"""stats: the one Student's t table, the one mean and 95 % interval, and the
verdict rule every interval is judged by. The report's verdicts (met,
missed, not resolved), make bench's stopping rule and the wrk studies'
ratios all come from here.

A verdict keeps its interval: a target is met only when the interval's
bound clears it, missed only when the other bound does, otherwise not
resolved (judge).
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
