"""acceptlab: what the Python side of acceptlab shares, one definition each.

probes/ (the campaign and its studies), report/, models/, ci/ and tests/
import it by name from the repository's top (`from acceptlab import arms,
stats`). Its modules:

  arms         the one table of arms: every measured configuration, its
               server arguments and which studies take it
  balance      the two bars a round is held to: the design notes' 2:1 and
               the balancers' target (17/15 at 2 workers, max - min <= 2)
  stats        the one Student's t table, mean and 95 % interval, and the
               verdict rule (judge: met, missed, not resolved)
  wrk_output   wrk's text report parsed, and its time units
  results_io   reading a measured run's files: the strict JSON and JSON
               Lines readers and the errors that name FILE:LINE
  paths        the repository's top, the Python we run, and the command
               that runs one of our entry points as a module

Importing the package imports none of its modules: each user imports the
ones it reads (the report reads no arms table, and never loads it).
"""

__all__ = ["arms", "balance", "paths", "results_io", "stats", "wrk_output"]
