"""spread.py: the analytic hash-spread model of accept skew, for models/skew.py.

The exact chance that K connections spread uniformly and independently over N
workers (SO_REUSEPORT's 4-tuple hash, no BPF) land outside 2:1 (max > 2 x min,
a worker with none counts as outside), counted over per-worker counts, or
Monte Carlo with a stated seed when that is too big (the 2:1 bar itself is
acceptlab/balance.py's); the split text shared with the race model; and the exact (Clopper-Pearson) interval
that measured fractions are compared with. See models/README.md (analytic,
compare).
"""

import math

EXACT_MAX_OPS = 3e7      # above this many big-int operations the analytic value is Monte Carlo
MC_SAMPLES = 200000
MC_SEED = 1


# ---------------------------------------------------------------- splits

def split_text(counts):
    return "/".join(str(c) for c in sorted(counts, reverse=True))


# ---------------------------------------------------------------- analytic

def _labeled_power(base, power, k, kfact):
    """The binomial convolution power of `base`, in the scaled form
    S[t] = a[t] * k!/t!, where a[t] counts labeled assignments of t
    connections. Exact integers throughout."""
    def conv(x, y):
        out = [0] * (k + 1)
        for i, xi in enumerate(x):
            if xi:
                for j in range(0, k + 1 - i):
                    yj = y[j]
                    if yj:
                        out[i + j] += xi * yj
        # The sum for each t is k! times an integer (see the docstring).
        return [v // kfact for v in out]

    result = None
    while power:
        if power & 1:
            result = base if result is None else conv(result, base)
        power >>= 1
        if power:
            base = conv(base, base)
    return result


def count_within(workers, connections, lo, hi):
    """How many of the workers**connections assignments give every worker
    between lo and hi connections (inclusive)."""
    k = connections
    if lo > hi or lo * workers > k or hi * workers < k:
        return 0
    kfact = math.factorial(k)
    # One worker: a[t] = 1 if lo <= t <= hi, scaled by k!/t!.
    base = [kfact // math.factorial(t) if lo <= t <= hi else 0 for t in range(k + 1)]
    return _labeled_power(base, workers, k, kfact)[k]


def _exact_cost(workers, connections):
    m_max = connections // workers
    return 2 * m_max * max(1, math.ceil(math.log2(workers)) * 2) * (connections + 1) ** 2 / 2


def outside_exact(workers, connections):
    """P(max/min > 2, or a worker gets none) for connections spread uniformly
    and independently over workers, as an exact fractions.Fraction."""
    from fractions import Fraction
    if connections < workers:
        return Fraction(1)  # somebody gets none
    if workers == 2:
        # Inside 2:1 iff min >= ceil(K/3): a binomial sum on each side.
        low = -(-connections // 3)
        return Fraction(2 * sum(math.comb(connections, j) for j in range(low)), 2 ** connections)
    inside = 0
    for m in range(1, connections // workers + 1):
        # min == m and max <= 2m: all in [m, 2m] minus all in [m+1, 2m].
        inside += count_within(workers, connections, m, 2 * m) - count_within(workers, connections, m + 1, 2 * m)
    return 1 - Fraction(inside, workers ** connections)


def outside_monte_carlo(workers, connections, samples=MC_SAMPLES, seed=MC_SEED):
    import numpy as np
    rng = np.random.default_rng(seed)
    hits = 0
    left = samples
    chunk = max(1, 2000000 // workers)  # keeps each batch of counts near 16 MB
    while left:
        n = min(left, chunk)
        counts = rng.multinomial(connections, [1.0 / workers] * workers, size=n)
        lo, hi = counts.min(axis=1), counts.max(axis=1)
        hits += int(((lo == 0) | (hi > 2 * lo)).sum())
        left -= n
    return hits / samples


def analytic(workers, connections, max_ops=EXACT_MAX_OPS, samples=MC_SAMPLES):
    """The hash-spread model's chance of a burst outside 2:1, with how it was computed."""
    out = {"model": "analytic", "workers": workers, "connections": connections}
    if connections < workers:
        out.update(outside=1.0, method="exact", note="fewer connections than workers: one gets none")
    elif workers == 2 or _exact_cost(workers, connections) <= max_ops:
        out.update(outside=float(outside_exact(workers, connections)), method="exact")
    else:
        samples = min(samples, max(20000, int(5e7 // workers)))  # bounds the time for very many workers
        out.update(outside=outside_monte_carlo(workers, connections, samples), method="monte-carlo",
                   samples=samples, seed=MC_SEED)
    return out


# ---------------------------------------------------------------- intervals

def _binom_cdf(x, n, p):
    """P(X <= x) for X ~ Bin(n, p), summed in log space."""
    if x < 0:
        return 0.0
    if x >= n:
        return 1.0
    if p <= 0:
        return 1.0
    if p >= 1:
        return 0.0
    lp, lq = math.log(p), math.log1p(-p)
    total = 0.0
    for i in range(0, x + 1):
        total += math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * lp + (n - i) * lq)
    return min(1.0, total)


def clopper_pearson(x, n, level=0.95):
    """Exact (Clopper-Pearson) interval for a binomial proportion x/n."""
    if n == 0:
        return (0.0, 1.0)
    a = (1 - level) / 2

    def solve(f):  # f increasing in p; find p with f(p) = a
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = (lo + hi) / 2
            if f(mid) < a:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2

    lower = 0.0 if x == 0 else solve(lambda p: 1 - _binom_cdf(x - 1, n, p))   # P(X >= x) = a
    upper = 1.0 if x == n else solve(lambda p: a - (_binom_cdf(x, n, p) - a))  # P(X <= x) = a
    return (lower, upper)


def consistent_outcomes(p, n, level=0.95):
    """The outcomes x of n trials (x = 0..n) whose Clopper-Pearson interval
    holds the prediction p, as (first, last): every x in first..last does and
    no other (both bounds of the interval grow with x, so the set is one run);
    None when no outcome does. first == 0 and last == n: no outcome of n
    trials could have contradicted p, the check could not have failed."""
    def holds(x):
        lo, hi = clopper_pearson(x, n, level)
        return lo <= p <= hi

    def search(ok, lo, hi):  # the first x in lo..hi with ok(x), ok monotone false -> true; hi + 1 if none
        while lo <= hi:
            mid = (lo + hi) // 2
            if ok(mid):
                hi = mid - 1
            else:
                lo = mid + 1
        return lo

    # hi(x) >= p from some x on; lo(x) <= p up to some x.
    first = search(lambda x: clopper_pearson(x, n, level)[1] >= p, 0, n)
    last = search(lambda x: clopper_pearson(x, n, level)[0] > p, 0, n) - 1
    if first > last or not holds(first):
        return None
    return first, last


# ---------------------------------------------------------------- split shapes

def rank_envelope(splits, level=0.95):
    """The shape of simulated rounds: `splits` holds each round's counts,
    largest first, N entries. Per rank (the busiest worker first): the median
    count, and a central range wide enough that at least `level` of the rounds
    lie inside every rank's range at once (each rank's central
    1 - (1 - level)/N range, Bonferroni), with the share of the rounds that do
    (coverage, counted on the same rounds)."""
    rounds = len(splits)
    if rounds == 0:
        raise ValueError("rank_envelope: no rounds")
    n = len(splits[0])
    cut = int((1 - level) / (2 * n) * rounds)  # counts left out below and above, per rank
    median, low, high = [], [], []
    for rank in range(n):
        values = sorted(s[rank] for s in splits)
        median.append(values[(rounds - 1) // 2])
        low.append(values[cut])
        high.append(values[rounds - 1 - cut])
    inside = sum(1 for s in splits if not ranks_outside(s, low, high))
    return {"median": median, "low": low, "high": high, "level": level, "rounds": rounds,
            "coverage": round(inside / rounds, 4)}


def ranks_outside(counts, low, high):
    """The ranks (0 = the busiest worker) where a split, largest first, leaves
    an envelope's low..high: [(rank, count, low, high)]."""
    counts = list(counts) + [0] * (len(low) - len(counts))
    return [(i, c, lo, hi) for i, (c, lo, hi) in enumerate(zip(counts, low, high)) if not lo <= c <= hi]
