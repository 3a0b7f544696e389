"""The payoff study (payoff.jsonl): what a second worker buys when every request
costs CPU (req/s, p50 and p99 against bare at 1 worker)."""

import os
import statistics
import sys

sys.path.append(os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "probes"))
import arms  # noqa: E402  (probes/arms.py: the one table of arms)
from common import Meta, Study, cell_text, ms_text, ordered, plural, row_reader
from sections.wrk import (WrkRun, check_wrk_rows, rotation_text, wrk_cmd, wrk_failed, wrk_notes,  # noqa: E402
                          wrk_row_parser)

KNOB_OFF = arms.knob_off_of()  # fdpass -> fdpass-off, handoff -> handoff-off
SELF_BALANCED = 0.9  # bare at N reaching this share of what min(N, CPUs) allows counts as balancing itself
BEST_OVER_BARE = 1.1  # ... as does no arm getting more than this times bare's req/s at N


def render_payoff(meta: Meta, rows: list) -> list:
    runs = [r for r in rows if isinstance(r, WrkRun)]
    p = meta.payoff
    conns = sorted({r.key[2] for r in rows} | set(p.connections if p else ()))
    out = ["## Payoff: a CPU-bound app", ""]
    if p is None:
        out += ["meta.json does not record how wrk was run for this study; the figures are the rows' own.", ""]
    else:
        cmds = " and ".join(wrk_cmd(p, c) for c in p.connections)
        counts = sorted({w for _, w in p.cells if w != 1} | {r.key[1] for r in rows if r.key[1] != 1})
        out += [f"What was measured: what more workers buy when every request costs CPU. Each run starts a "
                f"fresh server and runs {cmds} (keep-alive) against `GET {p.path}` on 127.0.0.1 "
                "(`/work?us=N` spins N µs of CPU in the worker for each request): bare at 1 worker, the "
                f"baseline, and every arm at {', '.join(map(str, counts))} workers; "
                f"{rotation_text(p.rounds, 'arm x workers', 'per connection count')}. Each figure is the median over the rounds "
                "measured: req/s, and wrk's p50 and p99 latency in ms. wrk's threads share the machine's "
                f"{plural(meta.cpus, 'CPU')} with the workers."
                + (" Connections served per worker (accepted, or handed to it) come from the server's "
                   "worker_exit lines (wrk opens one connection more than `-c` says)."
                   if any(r.served for r in runs) else ""), ""]
    if not rows:
        return out + ["No runs were recorded in this run.", ""]
    cells = []
    for r in sorted(rows, key=lambda r: (r.key[1] != 1 or r.key[0] != "bare", r.key[1])):
        if r.key[:2] not in cells:
            cells.append(r.key[:2])
    rank = {a: i for i, a in enumerate(ordered(meta.variants, {c[0] for c in cells}))}
    cells.sort(key=lambda c: (c != ("bare", 1), c[1], rank[c[0]]))
    head = "| arm | workers | " + " | ".join(f"c{c} req/s | c{c} p50 ms | c{c} p99 ms" for c in conns) + " |"
    out += [head, "|---|---|" + "---|---|---|" * len(conns)]
    medians = {}
    for cell in cells:
        parts = []
        for c in conns:
            mine = [r for r in runs if r.key == cell + (c,)]
            if not mine:
                parts += ["-", "-", "-"]
                continue
            m = tuple(statistics.median(getattr(r, f) for r in mine) for f in ("rps", "p50", "p99"))
            medians[cell + (c,)] = m + (len(mine),)
            parts += [f"{m[0]:.0f}" + ("!" if any(r.errors for r in mine) else ""), ms_text(m[1]), ms_text(m[2])]
        out.append(f"| {cell_text(cell[0])} | {cell[1]} | " + " | ".join(parts) + " |")
    out.append("")
    label = lambda key: f"{key[0]}, {plural(key[1], 'worker')}, {key[2]} connections"  # noqa: E731
    out += wrk_notes(runs, label) + wrk_failed(rows, label)
    lines = []
    for cell in cells:
        if cell == ("bare", 1):
            continue
        per = []
        for c in conns:
            got, base = medians.get(cell + (c,)), medians.get(("bare", 1, c))
            if got is None:
                per.append(f"not measured with {c} connections")
            elif base is None or base[0] == 0:
                per.append(f"{got[0]:.0f} req/s with {c} connections (no baseline)")
            else:
                per.append(f"{got[0] / base[0]:.2f}x the baseline's req/s with {c} connections, "
                           f"p99 {ms_text(got[2])} ms against {ms_text(base[2])} ms")
        splits = []
        for c in conns:
            mine = sorted((r for r in runs if r.key == cell + (c,) and r.served), key=lambda r: r.round)
            if mine:
                splits.append(f"c{c} " + " ".join(r.served for r in mine))
        if splits:
            per.append("connections served per worker, by round: " + ", ".join(splits))
        got = medians.get(cell + (conns[-1],))
        for other, name in ((("bare", cell[1]), "bare's"),
                            ((KNOB_OFF.get(cell[0]), cell[1]), f"its knob-off arm {KNOB_OFF.get(cell[0])}'s")):
            there = medians.get(other + (conns[-1],))
            if got and there and there[0] and other != cell and other[0]:
                per.append(f"{got[0] / there[0]:.2f}x {name} req/s at {plural(cell[1], 'worker')} "
                           f"with {conns[-1]} connections")
        lines.append(f"- {cell[0]} at {plural(cell[1], 'worker')}: " + "; ".join(per) + ".")
    out += self_balance(meta, runs, medians, conns)
    out += noise_note(medians, conns)
    if lines:
        counts = sorted({m[3] for m in medians.values()})
        rounds = " or ".join(str(n) for n in counts)
        out += [f"**What this shows.** Against the baseline (bare at 1 worker), from the medians above "
                f"({rounds} {'round' if counts == [1] else 'rounds'} each):", ""] + lines + [""]
    return out


read_payoff = row_reader(wrk_row_parser("connections"), check_wrk_rows(lambda c: f"{c} connections", False))
STUDY = Study("payoff", "payoff.jsonl", read_payoff, render_payoff, is_round=lambda row: isinstance(row, WrkRun))


def self_balance(meta: Meta, runs: list, medians: dict, conns: list) -> list:
    """Whether a sustained CPU-bound load balances itself, at each worker
    count: bare reaches SELF_BALANCED of what the CPUs allow over bare at 1
    worker, or no other arm gets more than BEST_OVER_BARE times bare's req/s
    there (then the shortfall is the machine's, not the split's)."""
    c = conns[-1] if conns else None
    base = medians.get(("bare", 1, c))
    counts = sorted({key[1] for key in medians if key[0] == "bare" and key[1] > 1 and key[2] == c})
    if base is None or not base[0] or not counts:
        return []
    per, held = [], []
    for n in counts:
        got = medians[("bare", n, c)]
        allowed = min(n, meta.cpus)
        speedup = got[0] / base[0]
        others = [(m[0], key[0]) for key, m in medians.items()
                  if key[1] == n and key[2] == c and key[0] != "bare" and m[0]]
        best = max(others, default=None)
        over = best[0] / got[0] if best and got[0] else None
        held.append(speedup >= SELF_BALANCED * allowed or (over is not None and over <= BEST_OVER_BARE))
        splits = " ".join(r.served for r in sorted(runs, key=lambda r: r.round)
                          if r.key == ("bare", n, c) and r.served)
        per.append(f"at {plural(n, 'worker')} bare got {speedup:.2f}x one worker's req/s, of the {allowed}x "
                   f"the machine's {plural(meta.cpus, 'CPU')} allow"
                   + (f" (served per worker: {splits})" if splits else "")
                   + (f", and the best other arm there, {best[1]}, {over:.2f}x bare's" if over is not None else ""))
    rule = (f"bare reaches {SELF_BALANCED:.0%} of what the CPUs allow over one worker, or no arm gets more than "
            f"{BEST_OVER_BARE:.2f}x bare's req/s at that worker count")
    if all(held):
        verdict = f"Yes: a sustained CPU-bound load balances itself here at every worker count measured ({rule})"
    elif any(held):
        verdict = ("At some worker counts only: a sustained CPU-bound load balances itself here at "
                   + ", ".join(str(n) for n, h in zip(counts, held) if h) + " workers, not at "
                   + ", ".join(str(n) for n, h in zip(counts, held) if not h) + f" ({rule})")
    else:
        verdict = f"No: at no worker count measured ({rule})"
    return [f"**Does a sustained load balance itself?** {verdict}. With {c} connections: "
            + "; ".join(per) + ". The CPUs are shared with wrk and whatever else ran on the machine. Where "
            "it does, a balancer can pay off only where one worker takes what arrives at once, which is what "
            "the burst study measures.", ""]


# Knob-off arms that run another arm's mechanism (probes/arms.py): fdpass-off
# is the bare race in fdpass's binary, handoff-off plain reuseport in threads.
SAME_MECHANISM = (("fdpass-off", "bare"), ("handoff-off", "reuseport"))


def noise_note(medians: dict, conns: list) -> list:
    """How far apart two runs of one mechanism came out: the scale below which
    this run's req/s ratios say nothing."""
    out = []
    for twin, of in SAME_MECHANISM:
        spread = []
        for key, got in medians.items():
            there = medians.get((of,) + key[1:])
            if key[0] == twin and there and got[0] and there[0]:
                spread.append(max(got[0] / there[0], there[0] / got[0]))
        if spread:
            out += [f"{twin} runs {of}'s mechanism, so their distance is this run's noise between two "
                    f"measurements of one mechanism: their req/s differ by up to {max(spread):.2f}x over the "
                    f"worker counts; ratios below closer to 1 than that are not resolved by this run.", ""]
    return out
