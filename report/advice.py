"""advice.py: what bin/acceptlab-diagnose advises, from one measured run.

The diagnosis names the acceptlab variant closest to a server's mechanism
(closest_variant) and its worker count; the advice is what this machine's
run measured for that mechanism and its alternatives at that count, and
the settings that change the mechanism in known servers. This module turns
the run (the CANONICAL one, as `make report` renders it) into
report/advice.tsv, which the diagnosis reads (installed beside it as
share/acceptlab/advice.tsv):

  # run STAMP
  # variant <TAB> workers <TAB> kind <TAB> text
  bare    2    measured    At 2 workers, ... (one sentence)

kind is one of
  measured     how the variant's own arm did here (balancing rounds within 2:1)
  alternative  how another mechanism did at the same worker count
  cost         server CPU time per request over bare's, each with its 95 %
               interval (cost runs at the campaign's cost worker count)
  setting      the setting that selects another mechanism in known servers

Every figure comes from the run's rows; the settings are the servers'
documented options, not measurements. The file is a pure function of the
run, so regenerating it from the same run gives the same bytes.

usage: /usr/bin/python3 -m report.advice [--results-dir DIR] [--run STAMP] [--out FILE]
(`make report` writes it with the report.)
"""

import sys

if __name__ == "__main__" and not __package__:  # run by path: the packages it imports are not found
    sys.stderr.write("advice.py: run it as a module from the repository's top: "
                     "/usr/bin/python3 -m report.advice\n")
    sys.exit(2)

import argparse
from pathlib import Path

from acceptlab.results_io import InputError, shown, write_atomic
from acceptlab.stats import mean_interval
from report.common import plural, read_meta
from report.sections import balancing, cost

REPO = Path(__file__).resolve().parent.parent
DEFAULT_RESULTS = REPO / "results" / "linux"
DEFAULT_OUT = REPO / "report" / "advice.tsv"
KINDS = ("measured", "alternative", "cost", "setting")
SHAPES = ("burst", "ramp", "keepalive")
# As the report's cost section says under its table: with more workers than
# CPUs, an arm that spreads keep-alive connections pays preemption between
# its workers, which bare (one worker serving most) does not.
KEEPALIVE_CAVEAT = ("; a keep-alive ratio to bare also holds the cost of spreading connections over workers that "
                    "share CPUs")

# What each mechanism is, in a few words (the diagnosis prints the variant's
# name beside it).
MECHANISM = {
    "bare": "one shared listener, every worker's epoll edge-triggered (the bare race)",
    "exclusive": "one shared listener with EPOLLEXCLUSIVE",
    "exclusive-reorder": "one shared listener, level-triggered EPOLLEXCLUSIVE re-added every 16 accepts (nginx's default)",
    "lt": "one shared listener, level-triggered epoll",
    "lt-yield": "one shared listener, level-triggered epoll and sched_yield after each accept",
    "blocking": "one shared listener, every worker blocked in accept()",
    "reuseport": "a SO_REUSEPORT group, the kernel's hash choosing the socket",
    "reuseport-bpf": "a SO_REUSEPORT group steered by a BPF program to the least-loaded worker",
    "mutex": "an accept mutex: workers take turns holding the listener",
    "fdpass": "one acceptor handing each connection to the least-loaded worker",
    "handoff": "threads handing connections to the least-loaded thread's queue",
}

SHARED = ("bare", "exclusive", "exclusive-reorder", "lt", "lt-yield", "blocking")

# The servers' documented settings that select another mechanism (facts about
# their configuration, not measurements), by the mechanism a server has now.
SETTINGS_SHARED = (
    "nginx: `listen PORT reuseport;` gives each worker a socket of its own in a reuseport group (as reuseport "
    "here); `accept_mutex on;` makes the workers take turns (as mutex here).",
    "HAProxy: `tune.listener.multi-queue on` (the default) has the accepting thread hand each connection to the "
    "least-loaded thread (a hand-off, as fdpass here).",
    "uWSGI: `--thunder-lock` serialises accept() behind one lock, so one worker at a time waits for a connection.",
    "gunicorn: `--reuse-port` sets SO_REUSEPORT on the socket; the diagnosis's `listeners` says whether it made a "
    "group of sockets or left one shared socket.",
    "Node.js cluster: `cluster.schedulingPolicy = cluster.SCHED_RR` has the primary accept and hand connections "
    "round-robin (a hand-off); `SCHED_NONE` leaves the choice to the kernel (a shared listener).",
)
SETTINGS = {
    **{v: SETTINGS_SHARED for v in SHARED},
    "reuseport": (
        "The kernel's hash spreads connections evenly only on average: few or long-lived connections can crowd "
        "one worker, and a busy worker still gets its share; a BPF program can steer by load (as reuseport-bpf "
        "here).",
        "nginx: without `reuseport` on the listen directive the workers share one socket; with `accept_mutex on;` "
        "they take turns (as mutex here).",
    ),
    "mutex": (
        "nginx: `accept_mutex off;` (the default since 1.11.3) lets EPOLLEXCLUSIVE wake one worker per connection "
        "(as exclusive-reorder here); `accept_mutex_delay` sets how long the others wait for their turn.",
        "uWSGI: without `--thunder-lock` every worker waits on the socket at once.",
    ),
    "fdpass": (
        "A hand-off already chooses the worker: uneven splits then come from the chooser's load signal or from "
        "connections it cannot move (HAProxy: `tune.listener.multi-queue`; Node.js: `cluster.schedulingPolicy`).",
    ),
    "handoff": (
        "A hand-off already chooses the thread: uneven splits then come from the chooser's load signal or from "
        "connections it cannot move.",
    ),
    "reuseport-bpf": (
        "A BPF program already steers the group: uneven splits come from its load signal.",
    ),
}


def plain_arm(facts, variant):
    """The arm that runs a variant as it comes: no options, no environment,
    process mode if there is one, else threads."""
    arms = [a for a in facts.arms if a.variant == variant and not a.options and not a.env]
    arms.sort(key=lambda a: (a.mode != "process", a.order))
    return arms[0].name if arms else None


def balancers(facts):
    """The arms that claim balance, as they come (no knob off), process mode
    first where a variant has both."""
    seen, out = set(), []
    for a in sorted(facts.arms, key=lambda a: (a.mode != "process", a.order)):
        if a.claims_balance and a.variant not in seen and not a.options and not a.env:
            seen.add(a.variant)
            out.append(a.name)
    return sorted(out, key=lambda n: facts.get(n).order)


def rounds_by(rows):
    """{(arm, workers): {shape: [Round]}} of the measured rounds."""
    out = {}
    for r in rows:
        if isinstance(r, balancing.Round) and r.workers:
            out.setdefault((r.variant, r.workers), {}).setdefault(r.shape, []).append(r)
    return out


def within_text(per_shape):
    """'within 2:1 in 7 of 9 rounds (burst 3 of 3, ramp 1 of 3, keepalive 3 of 3)'."""
    shapes = [s for s in SHAPES if s in per_shape] + sorted(s for s in per_shape if s not in SHAPES)
    total = sum(len(per_shape[s]) for s in shapes)
    held = sum(r.within for s in shapes for r in per_shape[s])
    parts = ", ".join("%s %d of %d" % (s, sum(r.within for r in per_shape[s]), len(per_shape[s])) for s in shapes)
    return "kept every worker within 2:1 in %d of %s (%s)" % (held, plural(total, "round"), parts)


def worst_text(per_shape):
    rounds = [r for rs in per_shape.values() for r in rs]
    worst = max(rounds, key=lambda r: float("inf") if r.ratio is None else r.ratio)
    return "its most uneven round split %s (%s)" % (worst.split, worst.shape)


def cpu_text(runs, arm, mode):
    """'1.02 ± 0.04' of the arm's CPU per request over bare's, or None."""
    values = [r.cpu_ratios[0] for r in runs if r.arm == arm and r.setting == mode and r.cpu_ratios
              and r.cpu_ratios[0] is not None]
    if not values:
        return None
    m, half = mean_interval(values)
    return "%.2f" % m if half is None else "%.2f ± %.2f" % (m, half)


def advice_lines(meta, bal_rows, cost_rows):
    """[(variant, workers, kind, text)] for every variant with a plain arm the
    run measured in balancing."""
    facts = meta.arm_facts
    by = rounds_by(bal_rows)
    runs = [r for r in cost_rows if getattr(r, "cpu_ratios", None) is not None]
    cost_workers = sorted({r.workers for r in runs})
    lines = []
    for variant in MECHANISM:
        arm = plain_arm(facts, variant)
        if arm is None:
            continue
        counts = sorted(w for (a, w) in by if a == arm)
        for workers in counts:
            per = by[(arm, workers)]
            lines.append((variant, workers, "measured",
                          "Run %s, %d workers: %s (%s) %s; %s." % (meta.stamp, workers, arm, MECHANISM[variant],
                                                                    within_text(per), worst_text(per))))
            alternatives = [b for b in balancers(facts) if b != arm]
            if variant in SHARED and plain_arm(facts, "reuseport"):
                alternatives.append(plain_arm(facts, "reuseport"))
            for alt in alternatives:
                if (alt, workers) in by:
                    alt_variant = facts.get(alt).variant
                    lines.append((variant, workers, "alternative",
                                  "%s (%s) %s at %d workers." % (alt, MECHANISM.get(alt_variant, alt_variant),
                                                                 within_text(by[(alt, workers)]), workers)))
            for mode in ("keepalive", "close"):
                cells = [(a, cpu_text(runs, a, mode)) for a in [arm] + alternatives]
                cells = [(a, t) for a, t in cells if t]
                if len(cells) > 1 or (cells and cells[0][0] != "bare"):
                    lines.append((variant, workers, "cost",
                                  "Server CPU time per request over bare's, %s, at %s workers (mean ± 95 %% interval "
                                  "over the run's rounds): %s%s." % (
                                      "keep-alive" if mode == "keepalive" else "Connection: close",
                                      "/".join(map(str, cost_workers)), ", ".join("%s %s" % c for c in cells),
                                      KEEPALIVE_CAVEAT if mode == "keepalive" else "")))
            for text in SETTINGS.get(variant, ()):
                lines.append((variant, workers, "setting", text))
    return lines


def render(meta, lines):
    out = ["# run %s" % meta.stamp,
           "# variant\tworkers\tkind\ttext  (written by report/advice.py from the run; the diagnosis reads it)"]
    for variant, workers, kind, text in lines:
        assert kind in KINDS and "\t" not in text and "\n" not in text, (kind, text)
        out.append("%s\t%d\t%s\t%s" % (variant, workers, kind, text))
    return "\n".join(out) + "\n"


def build(results_dir: Path, run: str) -> str:
    run_dir = results_dir / run
    meta = read_meta(run_dir)
    bal = balancing.read_balancing(run_dir / "balancing.jsonl") if (run_dir / "balancing.jsonl").exists() else []
    costs = cost.read_cost(run_dir / "cost.jsonl") if (run_dir / "cost.jsonl").exists() else []
    return render(meta, advice_lines(meta, bal, costs))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="advice.py", description="Write report/advice.tsv (what the diagnosis "
                                 "advises) from one measured run.")
    ap.add_argument("--results-dir", type=Path, default=DEFAULT_RESULTS, metavar="DIR")
    ap.add_argument("--run", metavar="STAMP", help="run directory (default: the one DIR/CANONICAL names)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, metavar="FILE")
    args = ap.parse_args(argv)
    try:
        run = args.run or (args.results_dir / "CANONICAL").read_text().strip()
        text = build(args.results_dir, run)
        write_atomic(args.out, text.encode("utf-8"))
    except InputError as e:
        sys.stderr.write(e.render() + "\n")
        return 1
    except OSError as e:
        sys.stderr.write("advice: %s\n" % e)
        return 1
    print("advice: wrote %s from run %s (%s)" % (shown(args.out), run,
                                                 plural(text.count("\n") - 2, "line")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
