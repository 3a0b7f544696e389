"""balance: the two bars a round of connections is held to, each defined
once.

  2:1     the design notes' criterion: the busiest worker got at most twice
          what the idlest got (max/min <= 2; a worker with none is
          outside). The report's "within 2:1", the models' "outside 2:1",
          and what the gate prints beside the target.
  target  the balancers' own (servers/load.h): max - min <= 2 connections
          over the workers, which at 2 workers and 16 connections each is
          17/15 at worst. The gate, the perturbation study and the tests
          hold the arms that claim balance (acceptlab/arms.py) to it.
"""

RATIO_2TO1 = 2.0   # the design notes' bar: max/min over the workers
TARGET_SPREAD = 2  # the balancers' target: max - min over the workers


def within_2to1(counts, workers=None) -> bool:
    """A round's connections per worker (counts) within 2:1: max <= 2 x min,
    no worker with none; with workers, a worker missing from counts has none."""
    counts = list(counts)
    if workers is not None and len(counts) < workers:
        return False
    lo, hi = min(counts), max(counts)
    return lo > 0 and hi <= RATIO_2TO1 * lo


def ratio_within_2to1(ratio) -> bool:
    """A round's max/min ratio within 2:1 (None, a worker with none, is not)."""
    return ratio is not None and ratio <= RATIO_2TO1


def busiest_share_within_2to1(workers: int) -> float:
    """The largest share of a round the busiest worker can take while the
    round is within 2:1 with every other worker equal: 2/3 at 2 workers."""
    return RATIO_2TO1 / (RATIO_2TO1 + workers - 1)


def within_target(counts, workers: int) -> bool:
    """A round's connections per worker on the balancers' target: max - min
    <= 2 over `workers` workers (one missing from counts has none)."""
    ns = sorted(list(counts) + [0] * (workers - len(counts)), reverse=True)
    if not ns:
        return False
    return ns[0] - ns[-1] <= TARGET_SPREAD


def worst_split_on_target(connections: int) -> str:
    """The most uneven split of `connections` over 2 workers still on the
    target: "17/15" for 32."""
    return "%d/%d" % (connections // 2 + TARGET_SPREAD // 2, connections // 2 - TARGET_SPREAD // 2)
