"""The payoff study (payoff.jsonl): what a second worker buys when every request
costs CPU (req/s, p50 and p99 against bare at 1 worker)."""

import statistics

from acceptlab import balance
from acceptlab.stats import MET, MISSED, NOT_RESOLVED, judge_values
from report.common import Meta, Study, cell_text, ms_text, ordered, plural, row_reader
from report.sections.wrk import (WrkRun, check_wrk_rows, reconnected_text, rotation_text, wrk_cmd, wrk_failed, wrk_notes,
                                 wrk_row_parser)

SELF_BALANCED = 0.9  # bare at N <= CPUs reaching this share of what min(N, CPUs) allows over one worker


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
    out += reconnected_text(runs, list(dict.fromkeys(c[0] for c in cells)), p.duration_s if p else None)
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
        off = meta.arm_facts.knob_off_of().get(cell[0])  # the run's own facts: fdpass -> fdpass-off
        for other, name in ((("bare", cell[1]), "bare's"), ((off, cell[1]), f"its knob-off arm {off}'s")):
            there = medians.get(other + (conns[-1],))
            if got and there and there[0] and other != cell and other[0]:
                per.append(f"{got[0] / there[0]:.2f}x {name} req/s at {plural(cell[1], 'worker')} "
                           f"with {conns[-1]} connections")
        lines.append(f"- {cell[0]} at {plural(cell[1], 'worker')}: " + "; ".join(per) + ".")
    out += self_balance(meta, runs, medians, conns)
    out += noise_note(medians, conns, meta.arm_facts.same_mechanism_pairs())
    if lines:
        counts = sorted({m[3] for m in medians.values()})
        rounds = " or ".join(str(n) for n in counts)
        out += [f"**What this shows.** Against the baseline (bare at 1 worker), from the medians above "
                f"({rounds} {'round' if counts == [1] else 'rounds'} each):", ""] + lines + [""]
    return out


read_payoff = row_reader(wrk_row_parser("connections"), check_wrk_rows(lambda c: f"{c} connections", False))
STUDY = Study("payoff", "payoff.jsonl", read_payoff, render_payoff, is_round=lambda row: isinstance(row, WrkRun))


def split_within(split: str) -> bool:
    """A served-per-worker split ("18/16") is within the balancing bar (2:1, acceptlab.balance)."""
    return balance.within_2to1(int(n) for n in split.split("/"))


def paired(runs: list, a: tuple, b: tuple, field: str) -> list:
    """a's figure over b's, round by round (each round's runs were alternated
    together, so a pair shares the round's conditions)."""
    mine = {r.round: getattr(r, field) for r in runs if r.key == a}
    theirs = {r.round: getattr(r, field) for r in runs if r.key == b}
    return [mine[n] / theirs[n] for n in sorted(mine) if n in theirs and theirs[n]]


def judged_text(values: list, target: float, want: str) -> tuple:
    """(verdict, 'm.mmx ± h.hh, target at least t.ttx: verdict')."""
    verdict, mean, half = judge_values(values, target, want)
    if mean is None:
        return verdict, f"not measured in the same round as one worker: {verdict}"
    figure = f"{mean:.2f}x" + ("" if half is None else f" ± {half:.2f}")
    return verdict, f"{figure}, target {want} {target:.2f}x: {verdict}" + (
        " (one round has no interval)" if half is None else "")


def p99_text(runs: list, medians: dict, n: int, c: int, facts) -> tuple:
    """bare's p99 at n workers beside the other arms' there: (verdict, text).
    The verdict is on bare's p99 over the median p99 of the arms whose
    connections spread within 2:1 in every round (round by round, 95 %
    interval, "at most" 1: missed when bare's is resolved above theirs). When
    bare's median p99 is the highest of any arm, the text says so and whether
    that lead is resolved over every other arm. facts: the run's ArmFacts
    (an arm that runs bare's mechanism is no reference for bare's p99)."""
    same_as_bare = {twin for twin, of in facts.same_mechanism_pairs() if of == "bare"}
    bare = medians[("bare", n, c)]
    others = sorted(((m[2], key[0]) for key, m in medians.items()
                     if key[1] == n and key[2] == c and key[0] != "bare"), reverse=True)
    text = f"p99 {ms_text(bare[2])} ms"
    if not others:
        return NOT_RESOLVED, text + f", no other arm at {plural(n, 'worker')} to set it beside"
    if bare[2] > others[0][0]:
        leads = [judge_values(paired(runs, ("bare", n, c), (arm, n, c), "p99"), 1.0, "at most")[0]
                 for _, arm in others]
        text += (f", the highest of any arm at {plural(n, 'worker')} (next: {others[0][1]} "
                 f"{ms_text(others[0][0])} ms), a lead "
                 + ("resolved over every other arm" if all(v == MISSED for v in leads) else NOT_RESOLVED))
    spread = ordered(tuple(facts.names()), {arm for _, arm in others
                                            if arm not in same_as_bare and arm_spread(runs, (arm, n, c))})
    if not spread:
        return NOT_RESOLVED, text + "; no other arm's connections spread within 2:1 in every round to set it beside"
    rounds = sorted({r.round for r in runs if r.key == ("bare", n, c)})
    ratios = []
    for rnd in rounds:
        theirs = [r.p99 for r in runs if r.round == rnd and r.key in {(a, n, c) for a in spread}]
        mine = [r.p99 for r in runs if r.round == rnd and r.key == ("bare", n, c)]
        if theirs and mine and statistics.median(theirs):
            ratios.append(mine[0] / statistics.median(theirs))
    verdict, mean, half = judge_values(ratios, 1.0, "at most")
    if mean is None:
        return NOT_RESOLVED, text
    said = {MISSED: "resolved above theirs", MET: "resolved at or below theirs"}.get(
        verdict, NOT_RESOLVED + (" (one round has no interval)" if half is None else ""))
    return verdict, (text + f"; {mean:.2f}x" + ("" if half is None else f" ± {half:.2f}")
                     + f" the median p99 of the arms whose connections spread within 2:1 in every round "
                     f"({', '.join(spread)}), round by round: {said}")


def arm_spread(runs: list, key: tuple) -> bool:
    """Every round of key has a served-per-worker split, within 2:1."""
    mine = [r for r in runs if r.key == key]
    return bool(mine) and all(r.served and split_within(r.served) for r in mine)


def and_list(items: list) -> str:
    items = [str(i) for i in items]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def self_balance(meta: Meta, runs: list, medians: dict, conns: list) -> list:
    """Whether a sustained CPU-bound load balances itself, at each worker
    count, from bare's runs: its connections' split (served per worker, each
    round within 2:1 or not), its req/s over one worker's in the same round
    against SELF_BALANCED of what min(N, CPUs) allows (only where N <= CPUs:
    above, the CPUs cap req/s whatever the split), and its p99 over the arms'
    whose connections spread (p99_text). Yes when its connections spread in
    every round and, where req/s can show it, req/s is met; no when a part
    is resolved against it (every round's split outside 2:1, req/s missed,
    or its p99 resolved above the spread arms'); otherwise not resolved."""
    c = conns[-1] if conns else None
    base = ("bare", 1, c)
    counts = sorted({key[1] for key in medians if key[0] == "bare" and key[1] > 1 and key[2] == c})
    if base not in medians or not counts:
        return []
    lines, verdicts = [], {}
    for n in counts:
        mine = sorted((r for r in runs if r.key == ("bare", n, c) and r.served), key=lambda r: r.round)
        within = [split_within(r.served) for r in mine]
        parts, against, open_ = [], [], []
        if mine:
            parts.append(f"connections served per worker {' '.join(r.served for r in mine)}, within 2:1 in "
                         f"{sum(within)} of {plural(len(mine), 'round')}")
            if not any(within):
                against.append("bare's connections fell outside 2:1 in every round")
            elif not all(within):
                open_.append("bare's connections fell outside 2:1 in some rounds only")
        else:
            parts.append("no served-per-worker split recorded")
            open_.append("no split recorded")
        speedups = paired(runs, ("bare", n, c), base, "rps")
        if n <= meta.cpus:
            verdict, text = judged_text(speedups, SELF_BALANCED * n, "at least")
            parts.append(f"req/s over one worker's {text}")
            if verdict == MISSED:
                against.append("bare's req/s fell short of what the CPUs allow")
            elif verdict == NOT_RESOLVED:
                open_.append("bare's req/s against what the CPUs allow")
        else:
            mean = (statistics.fmean(speedups) if speedups
                    else medians[("bare", n, c)][0] / medians[base][0])
            parts.append(f"req/s {mean:.2f}x one worker's, of the {meta.cpus}x the {plural(meta.cpus, 'CPU')} "
                         "allow, which cap it whatever the split: req/s cannot show balance with more workers "
                         "than CPUs")
        verdict, text = p99_text(runs, medians, n, c, meta.arm_facts)
        parts.append(text)
        if verdict == MISSED:
            against.append("bare's p99 was resolved above the spread arms'")
        verdicts[n] = (MISSED, against) if against else (NOT_RESOLVED, open_) if open_ else (MET, [])
        lines.append(f"- {plural(n, 'worker')}: " + "; ".join(parts) + ".")
    said = []
    for word, verdict in (("Yes", MET), ("No", MISSED), ("Not resolved at this run's resolution", NOT_RESOLVED)):
        at = [n for n in counts if verdicts[n][0] == verdict]
        if not at:
            continue
        by_reason = {}
        for n in at:
            for reason in verdicts[n][1]:
                by_reason.setdefault(reason, []).append(n)
        if len(by_reason) == 1 and next(iter(by_reason.values())) == at:
            why = f"{next(iter(by_reason))}" + (" there" if len(at) > 1 else "")
        else:
            why = "; ".join(f"{reason} (at {and_list(ns)})" for reason, ns in by_reason.items())
        if verdict == NOT_RESOLVED:
            said.append(f"{word} at {and_list(at)} workers" + (f" ({why})" if why else ""))
        else:
            said.append(f"{word} at {and_list(at)} workers" + (f": {why}" if why else ""))
    rounds = sorted({len(paired(runs, ("bare", n, c), base, "rps")) for n in counts})
    return [f"**Does a sustained load balance itself?** {'. '.join(said)}. Judged from bare's runs with {c} "
            f"connections ({' or '.join(map(str, rounds))} {'round' if rounds == [1] else 'rounds'}) at each worker "
            "count: whether its connections spread over its workers (served per worker within 2:1 in every "
            f"round); where the workers are no more than the CPUs, whether its req/s reaches {SELF_BALANCED:.0%} "
            "of what they allow over one worker's (each round's over the same round's, 95 % interval); and "
            "whether its p99 is resolved above the p99 of the arms whose connections spread (each round's over "
            "the median of theirs in the same round, 95 % interval). Yes when its connections spread in every "
            "round and, where req/s can show it, its req/s met the target; no when one part is resolved against "
            "it; otherwise not resolved. The CPUs are shared with wrk and whatever else ran on the machine.", ""] + lines + [""]


def noise_note(medians: dict, conns: list, same_mechanism: tuple) -> list:
    """How far apart two runs of one mechanism came out (same_mechanism: the
    run's (twin, of) pairs): the scale below which this run's req/s ratios
    say nothing."""
    out = []
    for twin, of in same_mechanism:
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
