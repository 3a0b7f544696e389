"""plan.py: the campaign's plan, one typed object built once from the command
line (probes/campaign.py: parse_args, then plan_from) and handed to every
study: meta(plan), arms_of(plan), steps(plan, raw_dir). No study reads the
command line.

The plan holds what was asked, resolved where the answer is the campaign's
(the arms chosen, the studies, the rounds, whether the tracer runs); where
each study has a default of its own (worker counts, the wrk studies' rounds,
the peers, the bench arms) it holds what was given, None when nothing was,
and the study resolves it. Each study picks its own arms from
acceptlab/arms.py with the plan's arms, bench_arms and bench_all.

A test builds one with the fields it needs: Plan(quick=True, arms=("bare",)).
"""

import os
from dataclasses import dataclass
from typing import Optional, Tuple

from acceptlab.paths import ROOT

RESULTS_DIR = os.path.join(ROOT, "results", "linux")
BENCH_SECONDS = 2            # wrk -d per run in the campaign (make bench: 6, --bench-seconds);
                             # 2 s keeps the whole campaign within 15 minutes
BENCH_QUICK_SECONDS = 2
BENCH_ROUNDS = 2             # rounds of the wrk studies in the campaign (make bench: 3)
BENCH_MAX_ROUNDS = 20        # --bench-max-rounds' default


@dataclass(frozen=True)
class Plan:
    """What one campaign runs. Lists are tuples (the plan does not change)."""

    platform: str = "linux"
    quick: bool = False                      # --quick: one round per cell, fewer arms
    rounds: int = 3                          # --rounds: rounds (trials) per cell (1 with --quick)
    workers: int = 2                         # --workers: the balancing study's fresh-server count
    worker_counts: Optional[Tuple[int, ...]] = None  # --worker-counts; None: each study's own
    arms: Tuple[str, ...] = ()               # --arms: the arms chosen (the table's names)
    studies: Tuple[str, ...] = ()            # --studies, in the order they run
    peers: Optional[Tuple[str, ...]] = None  # --peers; None: the peers study's default
    bench_arms: Optional[Tuple[str, ...]] = None  # --bench-arms named (None: not named, or 'all')
    bench_all: bool = False                  # --bench-arms all (make bench)
    bench_rounds: Optional[int] = None       # --bench-rounds; None: each wrk study's default
    bench_seconds: Optional[int] = None      # --bench-seconds
    cost_seconds: Optional[int] = None       # --cost-seconds
    cost_method: str = "paired"              # --cost-method: paired or alternated (probes/harness/alternation.py)
    bench_within: Optional[float] = None     # --bench-within: make bench's stopping rule
    bench_max_rounds: int = BENCH_MAX_ROUNDS  # --bench-max-rounds: its cap
    trace: bool = False                      # the tracer beside the balancing rounds (root, not --no-trace)
    peers_trace: bool = False                # the tracer beside the peers
    results_dir: str = RESULTS_DIR           # --results-dir
    stamp: str = "<stamp>"                   # the run's UTC stamp: its directory's name
    canonical: bool = True                   # point CANONICAL at the run (not --no-canonical)

    @property
    def run_dir(self):
        return os.path.join(self.results_dir, self.stamp)

    @property
    def trace_path(self):
        """trace.jsonl: the balancing study's tracer rows."""
        return os.path.join(self.run_dir, "trace.jsonl")

    @property
    def wrk_rounds(self):
        """Rounds of the wrk studies that take the campaign's: --bench-rounds,
        else 1 with --quick, else BENCH_ROUNDS."""
        return self.bench_rounds or (1 if self.quick else BENCH_ROUNDS)

    @property
    def wrk_seconds(self):
        """wrk's -d in the campaign: --bench-seconds, else BENCH_QUICK_SECONDS
        with --quick, else BENCH_SECONDS."""
        return self.bench_seconds or (BENCH_QUICK_SECONDS if self.quick else BENCH_SECONDS)
