"""The cost study (cost.jsonl): req/s when answering costs next to nothing,
keep-alive and Connection: close, each arm's ratio to bare's in the same round;
and the anchor, a server not ours run as an arm in the same rounds."""

import re
import statistics
from typing import Optional

from acceptlab.stats import MET, MISSED, NOT_RESOLVED, floor_of
from report.common import (BenchParams, Failed, Meta, Study, cell_text, interval_text, is_int, number, ordered,
                           placement_text, plural, row_reader)
from report.sections.cost_why import render_why
from report.sections.wrk import (COST_MODES, FLOOR_TIE, TIE, WrkRun, against_one, check_wrk_rows, fresh_servers,
                                 ratio_against_one, reconnected_text, rotation_text, served_over, verdict_text, wrk_cmd,
                                 wrk_failed, wrk_notes, wrk_row_parser)


def sysctl_value(p: BenchParams, name: str):
    return dict(p.sysctls).get(name)


def ports_text(p: BenchParams) -> str:
    rng = sysctl_value(p, "net.ipv4.ip_local_port_range")
    reuse = sysctl_value(p, "net.ipv4.tcp_tw_reuse")
    parts = []
    if isinstance(rng, str) and re.match(r"^\d+ \d+$", rng):
        lo, hi = map(int, rng.split())
        parts.append(f"the client's ephemeral ports were {lo}-{hi} ({hi - lo + 1} ports, "
                     "`net.ipv4.ip_local_port_range`)")
    if reuse is not None:
        meaning = {0: "off", 1: "on", 2: "on for loopback only"}.get(reuse, "")
        parts.append(f"`net.ipv4.tcp_tw_reuse` was {reuse}" + (f" ({meaning}: a connect may reuse a port "
                                                                "whose socket is in TIME_WAIT)" if meaning else ""))
    if not parts:
        return "the port range and tcp_tw_reuse were not recorded"
    return " and ".join(parts)


# The methods that keep every server for its mode's block and take a run's
# ratio against bare at the run's moment (rows with "seq"): alternated (each
# run between two of bare's) and paired (each run at the same time as one of
# bare's).
SIDE_BY_SIDE = ("alternated", "paired")


def method_text(p: BenchParams, fresh: bool = False) -> str:
    """The rounds of a block, and what a ratio to bare is over, by method
    (fresh: new servers for each round)."""
    rounds = f"{plural(p.rounds, 'round')} (planned) ran: the other arms in an order shuffled from round to round, "
    if p.method == "paired":
        return (rounds + "each run at the same time as one of bare's, both servers pinned to the same CPU and both "
                "wrk to theirs, each pair after a short settle. A run's ratio to bare is over the bare run beside "
                "it: the host under this VM slows it down over stretches of seconds, by more than the differences "
                "looked for here, and the guest charges that as CPU time; two servers on one CPU at the same "
                "moment share it, so it cancels in their ratio. Each server has about half the CPU, as beside any "
                "other busy process. A ratio to another partner is the two arms' ratios to bare in the same "
                "round. ")
    return (rounds + "each run followed by one of bare ("
            + ("every round opening with one, on its own servers" if fresh else "round 1 opening with one")
            + "), so every run sits between two of "
            "bare's, each after a short settle. A run's ratio to bare is over bare's value at the same moment: "
            "its runs just before and just after, on a line, so the machine's drift over minutes cancels; a "
            "ratio to another partner is the two arms' ratios to bare in the same round. ")


def servers_text(fresh: bool) -> str:
    """How long each server of a side-by-side block ran, and its warm-up."""
    if fresh:
        return ("every round ran on new servers, every arm's started for it and stopped after it (so what a "
                "server's start draws, which worker holds what and where its memory lies, varies from round to "
                "round and the rounds' interval covers it), each warmed up by an unrecorded wrk run after its "
                "start; the rounds: ")
    return ("every arm's server was started once and kept for the block, each was warmed up by an unrecorded wrk "
            "run, then ")


def alternated_intro(p: BenchParams, fresh: bool = False) -> str:
    """How the alternated or paired method ran (one block per mode); fresh:
    new servers for each round (wrk.fresh_servers)."""
    conns = dict(p.connections_by_mode) or {"keepalive": p.connections[0], "close": p.connections[0]}
    aa = ", ".join(f"{a} ({of} again, as an arm of its own)" for a, of in p.aa)
    return ("What was measured: the server's CPU time per request, and requests per second, when answering "
            f"costs next to nothing (`GET {p.path}`, the hello endpoint), so what the accept path costs shows, in "
            f"two modes: keep-alive ({wrk_cmd(p, conns['keepalive'])}: each run opens its "
            f"{conns['keepalive']} connections once, so only they need an accept) and `-H \"Connection: close\"` "
            f"({wrk_cmd(p, conns['close'], duration_s=p.close_duration_s)}: every request a new connection, so "
            "every request is an accept). " + placement_text(p) +
            "The method: per mode, one block in a network namespace of its own; " + servers_text(fresh)
            + method_text(p, fresh)
            + (f"The A/A arm {aa}: its ratio to bare is what the method resolves, the floor every cost verdict "
               "below is judged against. " if aa else "")
            + f"Ports: {ports_text(p)}; how many sockets each server left in TIME_WAIT is measured at the end "
            "of the block (`ss -tanH state time-wait`). Each cell: the median req/s over the rounds, the lowest "
            "to the highest, and in brackets the mean ratio to bare's req/s.")


def anchor_runs_text(mine: list) -> str:
    """How an anchor's server ran beside the arms: kept for its mode's block
    or started for each round, and paired, alternated or fresh per run."""
    if fresh_servers(mine):
        life = "started for each round on a free port and stopped after it, as the arms above were, "
    else:
        life = "started once for its mode's block on a free port, kept for the block and stopped after it, "
    if any(r.paired_seq is not None for r in mine):
        return (life + "and run like the arms above in the same rounds, each run at the same time as one of "
                "bare's; a ratio below is each over bare at its own moment.")
    if any(r.seq is not None for r in mine):
        return (life + "and alternated with the arms above in the same rounds, each run between two of bare's; a "
                "ratio below is each over bare at its own moment.")
    return ("started fresh for each run on a free port and stopped after it, and alternated with the arms above "
            "in the same rounds.")


def render_cost(meta: Meta, rows: list) -> list:
    runs = [r for r in rows if isinstance(r, WrkRun)]
    p = meta.cost
    out = ["## Cost", ""]
    if p is None:
        out += ["meta.json does not record how wrk was run for this study; the figures are the rows' own.", ""]
    else:
        conns = p.connections[0]
        gap = (f" After every `Connection: close` run the campaign paused {number(p.close_gap_s)} s "
               "before the next run." if p.close_gap_s is not None else "")
        close_cmd = ("" if p.close_duration_s in (None, p.duration_s) else
                     f" (with `-d{number(p.close_duration_s)}s` for the close runs)")
        if p.method in SIDE_BY_SIDE:
            out += [alternated_intro(p, fresh_servers(runs)), ""]
        else:
            out += [f"What was measured: requests per second when answering costs next to nothing (`GET {p.path}`, "
                    "the hello endpoint), so what the accept path costs shows. Each run starts a fresh server and "
                    f"runs {wrk_cmd(p, conns)}{close_cmd} against it on 127.0.0.1, in two modes: keep-alive (wrk "
                    f"opens its {conns} connections once, so only the first {conns} requests need an accept) and "
                    f"`-H \"Connection: close\"` (every request a new connection, so every request is an accept). "
                    + placement_text(p) +
                    f"Every arm ran at each worker count in the table; "
                    f"{rotation_text(p.rounds, 'arm x workers', 'per mode')}.{gap} "
                    f"Ports: {ports_text(p)}; how many sockets were left in TIME_WAIT, and on which side, is "
                    "measured after every run (`ss -tanH state time-wait`) and summed up under the "
                    "Connection: close table. Each cell holds one entry per round, in round order: req/s, "
                    "and in brackets the ratio to bare's req/s at the same workers, mode and round "
                    "(`-` when bare has none there).", ""]
    anchors = dict(p.anchors) if p else {}
    anchor_arms = set(anchors) | {r.arm for r in runs if r.peer}
    anchor_rows = [r for r in rows if r.key[0] in anchor_arms]
    rows = [r for r in rows if r.key[0] not in anchor_arms]
    runs = [r for r in runs if r.arm not in anchor_arms]
    if not rows:
        return out + ["No runs were recorded in this run.", ""] + render_anchor(anchors, anchor_rows, runs)
    arms = ordered(meta.variants, {r.key[0] for r in rows})
    workers = sorted({r.key[1] for r in rows})
    label = lambda key: f"{key[0]}, {plural(key[1], 'worker')}, {dict(COST_MODES)[key[2]]}"  # noqa: E731
    for mode, title in COST_MODES:
        mine = [r for r in rows if r.key[2] == mode]
        if not mine:
            continue
        out += [f"### {title}", "",
                "| arm | " + " | ".join(plural(w, "worker") for w in workers) + " |",
                "|---|" + "---|" * len(workers)]
        for arm in arms:
            cells = []
            for w in workers:
                entries = sorted((r for r in mine if r.key[:2] == (arm, w)),
                                 key=lambda r: (r.round if isinstance(r, WrkRun) else (r.key[3] or 0), r.line))
                parts = []
                if p is not None and p.method in SIDE_BY_SIDE:
                    parts = summary_cell(entries)
                for r in entries if not parts else ():
                    if isinstance(r, Failed):
                        parts.append("failed")
                    else:
                        ratio = "-" if r.ratio is None else f"{r.ratio:.2f}"
                        parts.append(f"{r.rps:.0f} ({ratio})" + ("!" if r.errors else ""))
                cells.append(" ".join(parts) or "not run")
            out.append(f"| {cell_text(arm)} | " + " | ".join(cells) + " |")
        out.append("")
        measured = [r for r in runs if r.setting == mode]
        out += wrk_notes(measured, label) + wrk_failed(mine, label)
        if mode == "keepalive":
            out += reconnected_text(measured, arms, p.duration_s if p else None)
        lines = []
        for arm in arms:
            per = []
            for w in workers:
                if not [r for r in measured if r.key[:2] == (arm, w)]:
                    continue  # not run at this worker count
                ratios = [r.ratio for r in measured if r.key[:2] == (arm, w) and r.ratio is not None]
                if arm == "bare":
                    rps = [r.rps for r in measured if r.key[:2] == (arm, w)]
                    spread = f": {min(rps):.0f} to {max(rps):.0f}" if len(rps) > 1 else ""
                    if rps:
                        runs_of = [r for r in measured if r.key[:2] == (arm, w)]
                        count = (f"{plural(len(rps), 'run')} in {plural(max(r.round for r in runs_of), 'round')}"
                                 if any(r.seq is not None for r in runs_of) else plural(len(rps), 'round'))
                        per.append(f"median {statistics.median(rps):.0f} req/s at {plural(w, 'worker')} "
                                   f"({count}{spread})")
                elif ratios:
                    per.append(f"at {plural(w, 'worker')} "
                               + against_one(ratios, "more req/s than bare", "fewer req/s than bare"))
                else:
                    per.append(f"no ratio at {plural(w, 'worker')}")
            if arm == "bare":
                lines.append("- bare (the reference): " + ("; ".join(per) if per else "no run measured") + ".")
            else:
                lines.append(f"- {arm}: ratio to bare " + "; ".join(per) + "."
                             + knob_off_text(measured, arm, workers) + reference_text(measured, arm, workers)
                             + process_text(measured, arm, workers))
        out += ["**What this shows.** Per arm, its ratio to bare's req/s in the same round (above 1: more requests "
                "per second than bare) as the mean over the rounds ± the half-width of its 95 % interval "
                "(Student's t), and what that resolves: more or fewer req/s than bare only when the whole "
                "interval is above or below 1, otherwise a tie at this run's resolution. Bare's own spread over "
                "the rounds is the run-to-run noise a ratio has to beat:", ""] + lines + [""]
        if mode == "close":
            out += time_wait_summary(p, measured)
    all_runs = runs + [r for r in anchor_rows if isinstance(r, WrkRun)]
    floors = aa_floors(runs, dict(p.aa) if p is not None and p.aa else meta.arm_facts.aa_of()
                       if meta.arm_facts else {})
    return (out + render_floor(floors, p) + render_cpu(all_runs, arms + sorted(anchor_arms), workers, p, floors)
            + render_anchor(anchors, anchor_rows, runs, floors))


MEASURE_FLOOR_GOAL, BENCH_FLOOR_GOAL = 0.03, 0.01  # the A/A floor's goals: make measure, make bench


def aa_floors(runs: list, aa: dict) -> dict:
    """{(mode, workers): (A/A arm, the arm it measures again, floor_of over
    its CPU ratios)} for the A/A arms the run measured."""
    out = {}
    for arm, of in aa.items():
        for mode, _ in COST_MODES:
            for w in sorted({r.workers for r in runs if r.arm == arm and r.setting == mode}):
                values = [r.cpu_ratios[0] for r in runs if (r.arm, r.workers, r.setting) == (arm, w, mode)]
                out[(mode, w)] = (arm, of, floor_of(values))
    return out


def floor_at(floors: dict, mode: str, w: int):
    got = floors.get((mode, w))
    return got[2] if got else None


def render_floor(floors: dict, p: Optional[BenchParams]) -> list:
    """The A/A floor per mode and worker count, against its goal (±3 % in
    make measure, ±1 % under make bench's rule)."""
    if not floors:
        return []
    goal = BENCH_FLOOR_GOAL if p is not None and p.within is not None else MEASURE_FLOOR_GOAL
    which = "make bench's" if goal == BENCH_FLOOR_GOAL else "make measure's"
    out = ["### The A/A floor", "",
           "The same server measured twice, as two arms measured like the others: the ratio of their CPU per "
           "request is 1 but for the method's own noise, so its 95 % interval is what this run resolves. A "
           "verdict below stands only where the ratio's interval clears its goal (1 included) by more than the "
           "A/A pair's reach from 1: its distance from 1 plus its half-width, the method's bias and noise together. "
           f"{which.capitalize()} goal for the floor: "
           f"within ±{number(goal * 100)} %.", ""]
    for (mode, w), (arm, of, floor) in sorted(floors.items(), key=lambda kv: (kv[0][1], kv[0][0] != "keepalive")):
        title = dict(COST_MODES)[mode]
        if floor is None:
            out.append(f"- {title}, {plural(w, 'worker')}: {arm} / {of}: fewer than 2 rounds, no floor.")
            continue
        m, half, n = floor
        met = "met" if half <= goal * m else "not met"
        out.append(f"- {title}, {plural(w, 'worker')}: {arm} / {of} CPU per request {m:.3f} ± {half:.3f} over "
                   f"{plural(n, 'round')} (± {half / m * 100:.1f} % of the mean): the goal of ±{number(goal * 100)} "
                   f"% {met}" + ("" if m - half <= 1 <= m + half else "; the pair itself differed") + ".")
    return out + [""]


def summary_cell(entries: list) -> list:
    """An alternated run's cell: median req/s (lowest to highest) [mean ratio
    to bare], "!" when a run had errors, and its failed runs."""
    runs = [r for r in entries if isinstance(r, WrkRun)]
    failed = len(entries) - len(runs)
    out = []
    if runs:
        rps = [r.rps for r in runs]
        ratios = [r.ratio for r in runs if r.ratio is not None]
        out.append(f"{statistics.median(rps):.0f} ({min(rps):.0f} to {max(rps):.0f})"
                   + (f" [{statistics.fmean(ratios):.2f}]" if ratios else "")
                   + ("!" if any(r.errors for r in runs) else ""))
    if failed:
        out.append(f"{failed} failed")
    return out


PARTNER_INDEX = {"to_knob_off": 1, "to_process": 2, "to_reference": 3}  # in WrkRun.cpu_ratios
PARTNER_WORDS = {"to_knob_off": "knob-off", "to_reference": "reference", "to_process": "process arm"}
UNCONVERGED = "†"


def ratio_cell(values: list, converged: Optional[bool]) -> str:
    """The mean ± its 95 % half-width, marked when the stopping rule's verdict
    is that it did not come within ±within of its mean."""
    return interval_text(values) + (f" {UNCONVERGED}" if converged is False else "")


def verdict_of(mine: list, ratio: str) -> Optional[bool]:
    """The rows' cpu_converged for a ratio (None in runs that do not record it)."""
    flags = {dict(r.converged).get(ratio) for r in mine} - {None}
    return None if not flags else all(flags)


def render_cpu(runs: list, arms: list, workers: list, p: Optional[BenchParams] = None,
               floors: Optional[dict] = None) -> list:
    """CPU time per request: the server's user + system time (every thread of
    its process tree, from the scheduler's count) over the requests wrk
    completed, per round; the ratio to bare's in the same round as a mean
    with a 95 % interval over the rounds, and to the arm's knob-off,
    reference and process-mode arm; the rounds run and the ratios that did
    not come within the stopping rule's bounds."""
    measured = [r for r in runs if r.cpu is not None and r.cpu[0] is not None]
    if not measured:
        return []
    out = ["### CPU time per request", "",
           "The server's CPU time (user + system of every thread of its processes: our supervisor and workers, "
           "or the anchor's master and workers; each thread's count from the scheduler) over the wrk run, "
           "divided by the requests wrk completed; per accepted connection where the server reports its "
           "accepts. " + ("Each CPU µs per request cell: the median over the rounds, the lowest to the highest; "
                          "per connection is not known run by run (a server counts its accepts over its life, "
                          "its warm-up included). The ratios are to bare's CPU µs per request at the same workers "
                          "and mode, at the run's moment (below 1: less CPU per request than bare), and to"
                          if p is not None and p.method in SIDE_BY_SIDE else
                          "Each cell of the per-round columns holds one entry per round, in round order. The "
                          "ratios are to bare's CPU µs per request at the same workers, mode and round (below 1: "
                          "less CPU per request than bare), and to") +
           " the arm's partners where it has them (its knob-off arm: the same binary with the "
           "mechanism off; its reference: an arm of another variant, reuseport for reuseport-bpf (the same "
           "sockets without the program), reuseport-bpf for fdpass (it spreads connections alike, exactly by "
           "the same load, and does nothing per request); its process-mode arm), each given as the mean over "
           "the rounds ± the half-width of its 95 % interval (Student's t); the ratio of requests per second to bare's stands beside them, given the same way.", ""]
    out += rounds_text(measured, p)
    alternated = p is not None and p.method in SIDE_BY_SIDE
    out += [f"| arm | workers | mode | {'runs' if alternated else 'rounds'} | CPU µs per request | "
            "CPU µs per connection | ratio to bare | ratio to its partners | req/s ratio to bare |",
            "|---|---|---|---|---|---|---|---|---|"]
    for mode, title in COST_MODES:
        for w in workers:
            for arm in arms:
                mine = sorted((r for r in measured if (r.arm, r.workers, r.setting) == (arm, w, mode)),
                              key=lambda r: (r.round, r.line))
                if not mine:
                    continue
                if p is not None and p.method in SIDE_BY_SIDE:
                    cpu = [r.cpu[0] for r in mine]
                    per_req = f"{statistics.median(cpu):.2f} ({min(cpu):.2f} to {max(cpu):.2f})"
                else:
                    per_req = " ".join(f"{r.cpu[0]:.2f}" for r in mine)
                per_conn = " ".join("-" if r.cpu[1] is None else f"{r.cpu[1]:.1f}" for r in mine)
                if p is not None and p.method in SIDE_BY_SIDE and not per_conn.strip("- "):
                    per_conn = "-"
                to_bare = ("1 (the reference)" if arm == "bare" else
                           ratio_cell([r.cpu_ratios[0] for r in mine], verdict_of(mine, "to_bare")))
                partners = dict(mine[-1].partners)
                others = []
                for ratio, index in PARTNER_INDEX.items():
                    values = [r.cpu_ratios[index] for r in mine if len(r.cpu_ratios) > index]
                    if any(v is not None for v in values):
                        name = partners.get(ratio, PARTNER_WORDS[ratio])
                        others.append(f"{cell_text(name)}: {ratio_cell(values, verdict_of(mine, ratio))}")
                rps = [r.ratio for r in mine if r.ratio is not None]
                out.append(f"| {cell_text(arm)} | {w} | {title} | {len(mine)} | {per_req} | {per_conn} | {to_bare} | "
                           + ("; ".join(others) or "-") + " | "
                           + ("1 (the reference)" if arm == "bare" else interval_text(rps)) + " |")
    out.append("")
    out += unconverged_text(measured, p) + cpu_findings(measured, arms, workers, floors or {})
    out += goals_text(measured, floors or {})
    return out + render_why(measured, arms, len(p.placement[0]) if p is not None and p.placement else None)


CPU_VERDICT_WORDS = ((MET, "less CPU per request than bare"), (MISSED, "more CPU per request than bare"),
                     (NOT_RESOLVED, TIE), ("floor", FLOOR_TIE), (None, "one round, so no interval and no verdict"))


def cpu_findings(measured: list, arms: list, workers: list, floors: dict) -> list:
    """Per mode and worker count: which arms spent less or more CPU per
    request than bare, and than their partners, by judge() on each ratio's
    95 % interval (a tie where it holds 1); and whether req/s or CPU per
    request varied more over the rounds."""
    lines = []
    for mode, title in COST_MODES:
        for w in workers:
            by_verdict, partners = {}, []
            for arm in arms:
                mine = [r for r in measured if (r.arm, r.workers, r.setting) == (arm, w, mode)]
                if not mine or arm == "bare":
                    continue
                floor = floor_at(floors, mode, w)
                text, verdict, why = ratio_against_one([r.cpu_ratios[0] for r in mine], floor)
                if verdict == NOT_RESOLVED and why:
                    verdict = "floor"
                if text != "-":
                    by_verdict.setdefault(verdict, []).append(f"{arm} {text}")
                names = dict(mine[-1].partners)
                for ratio, index in PARTNER_INDEX.items():
                    values = [r.cpu_ratios[index] for r in mine if len(r.cpu_ratios) > index]
                    if any(v is not None for v in values):
                        name = names.get(ratio, PARTNER_WORDS[ratio])
                        partners.append(f"{arm} / {name} " + against_one(values, f"more than {name}",
                                                                           f"less than {name}", floor))
            said = [f"{words}: " + ", ".join(by_verdict[v]) for v, words in CPU_VERDICT_WORDS if v in by_verdict]
            if said or partners:
                lines.append(f"- {title}, {plural(w, 'worker')}: " + "; ".join(said) + "."
                             + (" Against their partners: " + "; ".join(partners) + "." if partners else ""))
    varied = rps_against_cpu(measured)
    if varied:
        lines.append(varied)
    if not lines:
        return []
    return ["**What this shows.** CPU per request against bare's, by each ratio's 95 % interval: less or more "
            "only when the whole interval is below or above 1 (and, where an A/A pair ran, clears 1 by more "
            "than the pair's reach from 1), otherwise a tie at this run's resolution:", ""] \
        + lines + [""]


# The accept-sharing balancer's cost goals: (arm, the partner ratio, mode,
# at most this CPU per request over the partner's, what the partner is,
# what the ratio shows). On Connection: close every request is an accept, so the knob-off
# arm (the bare race in its binary) is the mechanism's cost; on keep-alive
# CPU per request follows how the connections are spread over the workers,
# which a knob-off arm's race leaves to chance, so the partner is the arm
# that spreads them alike (its reference, arms.py).
COST_GOALS = (("fdpass", "to_reference", "keepalive", 1.03, "an arm that spreads connections alike, exactly by the "
               "same load, and does nothing per request", "what the mechanism costs once connections are spread "
               "alike"),
              ("fdpass", "to_knob_off", "close", 1.03, "its knob-off arm, the bare race in its binary",
               "what the mechanism costs where every request is an accept"))
GOAL_WORKERS = 2


def goals_text(measured: list, floors: dict) -> list:
    """Each of COST_GOALS at GOAL_WORKERS: the arm's CPU per request over its
    partner's, judged against the goal on the A/A floor (verdict_text), and
    on keep-alive the connections each of the two served, which shows
    whether they spread them alike."""
    lines = []
    for arm, ratio, mode, goal, partner, what in COST_GOALS:
        mine = [r for r in measured if (r.arm, r.workers, r.setting) == (arm, GOAL_WORKERS, mode)]
        if not mine:
            continue
        index = PARTNER_INDEX[ratio]
        values = [r.cpu_ratios[index] for r in mine if len(r.cpu_ratios) > index]
        name = dict(mine[-1].partners).get(ratio)
        title = dict(COST_MODES)[mode]
        if name is None or not any(v is not None for v in values):
            lines.append(f"- {title}: {arm}'s partner for this goal ({partner}) did not run beside it: not judged.")
            continue
        line = (f"- {title}: {arm} / {name}, {partner} ({what}): "
                + verdict_text(values, goal, "at most", floor_at(floors, mode, GOAL_WORKERS)) + ".")
        if mode == "keepalive":
            cells = {a: [r for r in measured if (r.arm, r.workers, r.setting) == (a, GOAL_WORKERS, mode)]
                     for a in (arm, name)}
            split = {a: served_over(mine) for a, mine in cells.items()}
            if all(split.values()):
                over = ("the block's servers (new ones for every round), each largest first, summed"
                        if fresh_servers(cells[arm] + cells[name]) else "the block")
                line += (f" Connections served per worker over {over}: {arm} {split[arm]}, "
                         f"{name} {split[name]}.")
        lines.append(line)
    if not lines:
        return []
    return [f"**{COST_GOALS[0][0]}'s goals**, at {plural(GOAL_WORKERS, 'worker')}: at most "
            f"{number(COST_GOALS[0][3])} of its partner's CPU per request, met only where the whole 95 % "
            "interval is below it (by more than the A/A pair's reach from 1):", ""] + lines + [""]


def rps_against_cpu(measured: list) -> str:
    """Which varied more over the rounds, per arm, workers and mode: req/s or
    CPU per request (relative standard deviation over the rounds)."""
    more = cells = 0
    for key in sorted({(r.arm, r.workers, r.setting) for r in measured}):
        mine = [r for r in measured if (r.arm, r.workers, r.setting) == key]
        if len(mine) < 2:
            continue
        rps, cpu = [r.rps for r in mine], [r.cpu[0] for r in mine]
        if not statistics.fmean(rps) or not statistics.fmean(cpu):
            continue
        cells += 1
        more += statistics.stdev(rps) / statistics.fmean(rps) > statistics.stdev(cpu) / statistics.fmean(cpu)
    if not cells:
        return ""
    return (f"- Over the rounds, req/s varied more than CPU per request (relative standard deviation) in {more} "
            f"of {plural(cells, 'arm x workers x mode cell')}.")


def rounds_text(measured: list, p: Optional[BenchParams]) -> list:
    rounds = max(r.round for r in measured)
    marked = any(r.converged for r in measured)
    if p is not None and p.within is not None:
        rule = (f"Rounds ran until every CPU ratio's 95 % interval was within ±{number(p.within * 100)} % of its "
                f"mean (make bench's stopping rule), at most {p.max_rounds}: {plural(rounds, 'round')} ran. ")
    else:
        rule = f"{plural(rounds, 'round')} ran (a fixed number). "
    mark = (f"{UNCONVERGED} marks a ratio whose interval is wider than ±"
            f"{number((p.within if p is not None and p.within is not None else 0.02) * 100)} % of its mean "
            "(finer than that the goals cannot be judged)." if marked else "")
    return [(rule + mark).strip(), ""]


def unconverged_text(measured: list, p: Optional[BenchParams]) -> list:
    """Under make bench's rule: whether the cap was reached, and the ratios
    that did not converge with their half-widths."""
    wide = []
    for r in sorted(measured, key=lambda r: (r.arm, r.workers, r.setting)):
        for ratio, ok in r.converged:
            label = f"{r.arm} / {dict(r.partners).get(ratio, ratio)}, {plural(r.workers, 'worker')}, " \
                    f"{dict(COST_MODES)[r.setting]}"
            if not ok and label not in [w for w, _ in wide]:
                index = 0 if ratio == "to_bare" else PARTNER_INDEX[ratio]
                values = [x.cpu_ratios[index] for x in measured
                          if (x.arm, x.workers, x.setting) == (r.arm, r.workers, r.setting)
                          and len(x.cpu_ratios) > index and x.cpu_ratios[index] is not None]
                wide.append((label, interval_text(values)))
    if p is None or p.within is None or not wide:
        return []
    rounds = max(r.round for r in measured)
    head = (f"The cap of {p.max_rounds} rounds was reached" if rounds >= p.max_rounds
            else f"The study stopped after {plural(rounds, 'round')}")
    return [head + f" with {plural(len(wide), 'ratio')} not within ±{number(p.within * 100)} % of the mean: "
            + "; ".join(f"{label} {text}" for label, text in wide) + ".", ""]


# Our arms set beside the anchor, in this order; the goal is on the first.
ANCHOR_COMPARED = ("bare", "fdpass")
ANCHOR_GOAL_WORKERS = 2


def render_anchor(anchors: dict, rows: list, ours: list, floors: Optional[dict] = None) -> list:
    """The cost anchor: wrk against a server not ours (nginx), run as an arm in
    the same rounds, beside bare and fdpass, with the ratios per round."""
    runs = [r for r in rows if isinstance(r, WrkRun)]
    arms = list(anchors) + sorted({r.key[0] for r in rows} - set(anchors))
    if not arms:
        return ["### Anchor: nginx", "", "Not measured in this run: its cost study ran no server but ours (the "
                "campaign's cost study runs nginx as the arm `nginx`).", ""]
    out = []
    for arm in arms:
        mine = [r for r in runs if r.arm == arm]
        how = anchors.get(arm)
        peer = how.peer if how else next((r.peer for r in mine if r.peer), "?")
        software = how.software if how else next((r.software for r in mine if r.software), "?")
        log = (f"`access_log {how.access_log}`" if how else "its access log as configured")
        answer = f"`{how.answer}`" if how else "its configured answer"
        out += [f"### Anchor: {arm}", "",
                f"What was measured: the same wrk runs against {arm} ({software}: the peers' `{peer}` "
                "configuration from `probes/peers/peers.py`, the worker count of the cell, "
                f"{log}), " + anchor_runs_text(mine)
                + " Per request, nginx parses it, matches `location /` and "
                f"answers {answer} (headers Server, Date, Content-Type, Content-Length and Connection, the "
                "worker's pid as the body) and logs nothing; our server parses it and answers `GET /` with its "
                "fixed hello (headers Content-Type, Content-Length, X-Worker and Connection) and keeps no log "
                "either. Each cell: req/s per round, in round order; a ratio is ours over "
                f"{arm}'s in the same round and mode (`-` where either is missing).", ""]
        failed = [r for r in rows if isinstance(r, Failed) and r.key[0] == arm]
        for w in sorted({r.key[1] for r in rows if r.key[0] == arm}):
            out += anchor_table(arm, w, [r for r in mine if r.workers == w],
                                [r for r in ours if r.workers == w and r.arm in ANCHOR_COMPARED],
                                {(f.key[2], f.key[3]) for f in failed if f.key[1] == w})
        label = lambda key: f"{key[0]}, {plural(key[1], 'worker')}, {dict(COST_MODES)[key[2]]}"  # noqa: E731
        out += wrk_notes(mine, label) + wrk_failed(failed, label)
        out += anchor_findings(arm, mine, [r for r in ours if r.arm in ANCHOR_COMPARED], floors or {})
        out += anchor_cpu(arm, mine, ours, floors or {})
    return out


# Our arms set beside the anchor on CPU time per request: bare, the arm with
# nginx's own accept policy (EPOLLEXCLUSIVE, nginx's default with
# accept_mutex off), and the balancer.
ANCHOR_CPU_COMPARED = ("bare", "exclusive-reorder", "fdpass")


def anchor_cpu(arm: str, anchor: list, ours: list, floors: Optional[dict] = None) -> list:
    """CPU µs per request of our arms over the anchor's, same workers, mode
    and round: the mean ± 95 % half-width over the rounds, per mode; and the
    verdict (judge()) on the arm with the anchor's accept policy staying at
    or below the anchor's: met, missed or not resolved."""
    def cpu_of(runs):
        if any(r.seq is not None for r in runs):  # alternated: each against bare at its own moment
            return {(r.workers, r.setting, r.round): 1.0 if r.arm == "bare" else r.cpu_ratios[0]
                    for r in runs if r.cpu and r.cpu_ratios and (r.arm == "bare" or r.cpu_ratios[0])}
        return {(r.workers, r.setting, r.round): r.cpu[0] for r in runs if r.cpu and r.cpu[0] is not None}
    theirs = cpu_of(anchor)
    if not theirs:
        return []
    workers = sorted({k[0] for k in theirs})
    compared = [a for a in ANCHOR_CPU_COMPARED if any(r.arm == a for r in ours)]
    if not compared:
        return []
    out = [f"**CPU time per request against {arm}.** Ours over {arm}'s, the server's CPU µs per request in the "
           "same round and mode (below 1: ours spends less), the mean over the rounds ± the half-width of its "
           f"95 % interval. exclusive-reorder accepts as {arm} does by default (EPOLLEXCLUSIVE, no accept "
           "mutex), so it is the like-for-like comparison of the two servers' work per request.", "",
           "| ours over " + arm + " | workers | " + " | ".join(t for _, t in COST_MODES) + " |",
           "|---|---|" + "---|" * len(COST_MODES)]
    verdicts = []
    for w in workers:
        for a in compared:
            mine = cpu_of([r for r in ours if r.arm == a and r.workers == w])
            cells = []
            for mode, title in COST_MODES:
                ratios = [mine[k] / theirs[k] for k in sorted(mine) if k[1] == mode and k in theirs and theirs[k]]
                cells.append(interval_text(ratios))
                if ratios and a == "exclusive-reorder":
                    verdicts.append(f"{title} " + verdict_text(ratios, 1, "at most", floor_at(floors or {}, mode, w)))
            out.append(f"| {cell_text(a)} | {w} | " + " | ".join(cells) + " |")
    out.append("")
    if verdicts:
        out += [f"With {arm}'s accept policy, our harness's CPU per request over {arm}'s, the goal being at or "
                "below 1 (met only when the whole 95 % interval is, missed only when it is wholly above): "
                + "; ".join(verdicts) + ".", ""]
    return out


def anchor_ratios(anchor: list, ours: list, arm: str, mode: str) -> list:
    """[(round, ours / anchor)] for the rounds both measured in this mode
    (alternated: each over bare at its own moment, bare's own 1)."""
    if any(r.seq is not None for r in anchor):
        base = {r.round: r.ratio for r in anchor if r.setting == mode and r.ratio}
        mine = {r.round: 1.0 if r.arm == "bare" else r.ratio for r in ours
                if r.arm == arm and r.setting == mode and (r.arm == "bare" or r.ratio)}
        return [(n, mine[n] / base[n]) for n in sorted(mine) if n in base]
    base = {r.round: r.rps for r in anchor if r.setting == mode}
    return [(r.round, r.rps / base[r.round]) for r in sorted(ours, key=lambda r: r.round)
            if r.arm == arm and r.setting == mode and base.get(r.round)]


def anchor_table(arm: str, workers: int, anchor: list, ours: list, failed: set) -> list:
    """failed: (mode, round) of the anchor's runs that failed."""
    rounds = sorted({r.round for r in anchor + ours} | {n for _, n in failed if n})
    out = [f"| at {plural(workers, 'worker')} | " + " | ".join(f"{t} (round {', '.join(map(str, rounds))})"
                                                               for _, t in COST_MODES) + " |",
           "|---|" + "---|" * len(COST_MODES)]
    for name, mine in [(arm, anchor)] + [(a, [r for r in ours if r.arm == a]) for a in ANCHOR_COMPARED]:
        cells = []
        for mode, _ in COST_MODES:
            by_round = {r.round: r for r in mine if r.setting == mode}
            cells.append(" ".join(f"{by_round[n].rps:.0f}" + ("!" if by_round[n].errors else "") if n in by_round
                                  else "failed" if name == arm and (mode, n) in failed else "-" for n in rounds))
        out.append(f"| {cell_text(name)} | " + " | ".join(cells) + " |")
    for a in ANCHOR_COMPARED:
        cells = []
        for mode, _ in COST_MODES:
            ratio = dict(anchor_ratios(anchor, ours, a, mode))
            cells.append(" ".join(f"{ratio[n]:.2f}" if n in ratio else "-" for n in rounds))
        out.append(f"| {a} / {cell_text(arm)} | " + " | ".join(cells) + " |")
    return out + [""]


def anchor_findings(arm: str, anchor: list, ours: list, floors: Optional[dict] = None) -> list:
    """The goal (bare at least matches the anchor on keep-alive at 2 workers),
    judged (judge()) on the 95 % interval of the per-round ratios, and the
    other ratios, each said as above, below or a tie by its interval."""
    goal_arm = ANCHOR_COMPARED[0]
    w = ANCHOR_GOAL_WORKERS
    at_w = [r for r in anchor if r.workers == w]
    ours_w = [r for r in ours if r.workers == w]
    ratios = [x for _, x in anchor_ratios(at_w, ours_w, goal_arm, "keepalive")]
    goal = (f"The goal, our harness at least matching {arm} on keep-alive with {w} workers ({goal_arm}'s req/s "
            f"at or above {arm}'s): ")
    if not ratios:
        goal += f"not judged: no round measured both {goal_arm} and {arm} on keep-alive at {w} workers."
    elif client_bound(at_w + ours_w, "keepalive"):
        # wrk's limit, not the servers': the ratio is said, and the goal
        # judged where the server is the limit (the throughput study).
        goal += (f"not judged here, where the client was the limit on keep-alive (below): it is judged with the "
                 f"server as the limit, in [Throughput with the server as the limit]"
                 f"(#throughput-with-the-server-as-the-limit). Here {goal_arm} / {arm} on keep-alive was "
                 + against_one(ratios, f"more req/s than {arm}", f"fewer req/s than {arm}")
                 + f" (per round {', '.join(f'{x:.2f}' for x in ratios)}).")
    else:
        goal += (f"{goal_arm} / {arm} " + verdict_text(ratios, 1, "at least", floor_at(floors or {}, "keepalive", w))
                 + f" (per round {', '.join(f'{x:.2f}' for x in ratios)}; met only when the whole 95 % interval is "
                 "at or above 1, missed only when it is wholly below).")
    others = []
    for a in ANCHOR_COMPARED:
        for mode, words in (("keepalive", "keep-alive"), ("close", "`Connection: close`")):
            if a == goal_arm and mode == "keepalive":
                continue
            got = [x for _, x in anchor_ratios(at_w, ours_w, a, mode)]
            if got:
                others.append(f"{a} / {arm} on {words}: "
                              + against_one(got, f"more req/s than {arm}", f"fewer req/s than {arm}"))
    text = goal + (" Also at " + f"{w} workers: " + "; ".join(others) + "." if others else "")
    return ["**What this shows.** " + text + client_text(at_w + ours_w, arm), ""]


# wrk busy this share of its CPUs or more in a mode's median run: the client,
# not the server, set that mode's req/s
CLIENT_BOUND_SHARE = 0.95


def client_share(runs: list, mode: str) -> Optional[float]:
    """The median share of its CPUs wrk kept busy over the mode's runs that
    record it (client_cpu_share), or None. With the paired method a run's
    wrk shared the client's CPUs with its partner's (the bare run beside
    it): a pair's share is the two together, once per pair (each run that
    names its partner, the partner among runs), and bare's runs, each some
    run's partner, are not taken alone."""
    mine = [r for r in runs if r.setting == mode and r.client_share is not None]
    if not any(r.paired_seq is not None for r in mine):
        shares = [r.client_share for r in mine]
    else:
        by_place = {(r.workers, r.seq): r for r in mine if r.seq is not None}
        shares = [r.client_share + by_place[(r.workers, r.paired_seq)].client_share for r in mine
                  if r.paired_seq is not None and (r.workers, r.paired_seq) in by_place]
    return statistics.median(shares) if shares else None


def client_bound(runs: list, mode: str) -> bool:
    """wrk kept its CPUs busy CLIENT_BOUND_SHARE or more of the time in the
    mode's median run: the client set the req/s."""
    share = client_share(runs, mode)
    return share is not None and share >= CLIENT_BOUND_SHARE


def client_text(runs: list, arm: str) -> str:
    """What the client itself spent (runs recording client_cpu_share): per
    mode, the median share of its CPUs wrk kept busy over the runs against
    the anchor and ours; at CLIENT_BOUND_SHARE or more, req/s is the
    client's limit, so a req/s ratio there cannot tell the servers apart
    and CPU per request is the comparison. "" for runs without it."""
    parts = [(title, client_share(runs, mode)) for mode, title in COST_MODES
             if client_share(runs, mode) is not None]
    if not parts:
        return ""
    said = "; ".join(f"{title}, {share * 100:.0f} %" for title, share in parts)
    bound = [title for title, share in parts if share >= CLIENT_BOUND_SHARE]
    text = (f" The client itself: wrk kept its CPU busy (its CPU time over its wall time and CPUs, the median "
            f"run against {arm} and ours) {said}.")
    if bound:
        text += (f" At {number(CLIENT_BOUND_SHARE * 100)} % or more ({' and '.join(bound)}) the client, not the "
                 "server, set the req/s: a req/s ratio there shows the two servers tied with the client's limit, "
                 "not which server is faster; their CPU per request (below) does, and so does the throughput "
                 "study, which holds each server to a share of one CPU so that the server is the limit "
                 "([Throughput with the server as the limit](#throughput-with-the-server-as-the-limit)).")
    return text


def knob_off_text(runs: list, arm: str, workers: list) -> str:
    """For an arm measured beside its knob-off arm (fdpass): its req/s ratio
    to it per worker count (mean ± 95 % half-width, judged against 1), and
    the hand-offs (and fdpass's deferrals) per second while it ran (median
    over the rounds)."""
    per = []
    for w in workers:
        mine = [r for r in runs if r.key[:2] == (arm, w)]
        ratios = [r.ratio_to_knob_off for r in mine if r.ratio_to_knob_off is not None]
        rates = [r.handoffs_per_s for r in mine if r.handoffs_per_s is not None]
        deferrals = [r.deferrals_per_s for r in mine if r.deferrals_per_s is not None]
        also = f" and {statistics.median(deferrals):.0f} deferrals/s" if deferrals else ""
        if ratios:
            per.append(f"at {plural(w, 'worker')} " + against_one(ratios, "more req/s than the knob-off arm",
                                                                  "fewer req/s than the knob-off arm")
                       + (f" ({statistics.median(rates):.0f} hand-offs/s{also}, median)" if rates else
                          " (mechanism off: no hand-offs)"))
    return (" Same binary, mechanism on over off: " + "; ".join(per) + ".") if per else ""


def reference_text(runs: list, arm: str, workers: list) -> str:
    """For an arm measured beside its reference arm (reuseport-bpf beside
    reuseport): its req/s ratio to it per worker count, judged against 1."""
    per = []
    for w in workers:
        mine = [r for r in runs if r.key[:2] == (arm, w) and r.ratio_to_reference is not None]
        if mine:
            name = dict(mine[0].partners).get("to_reference", "its reference arm")
            per.append(f"{name} at {plural(w, 'worker')} "
                       + against_one([r.ratio_to_reference for r in mine], f"more req/s than {name}",
                                     f"fewer req/s than {name}"))
    return (" Over its reference arm, same round: " + "; ".join(per) + ".") if per else ""


def process_text(runs: list, arm: str, workers: list) -> str:
    """For a threads-mode arm measured beside the same variant in process
    mode: its req/s ratio to it per worker count, judged against 1."""
    per = []
    for w in workers:
        ratios = [r.ratio_to_process for r in runs if r.key[:2] == (arm, w) and r.ratio_to_process is not None]
        if ratios:
            per.append(f"at {plural(w, 'worker')} " + against_one(ratios, "more req/s than the process arm",
                                                                  "fewer req/s than the process arm"))
    return (" Threads over the process arm, same round: " + "; ".join(per) + ".") if per else ""


def time_wait_summary(p: Optional[BenchParams], runs: list) -> list:
    counts = [r.time_wait_after for r in runs if r.time_wait_after is not None]
    sides = [r.tw_sides for r in runs if r.tw_sides is not None]
    if not counts:
        return []
    own = [r.netns for r in runs if r.time_wait_after is not None]
    if p is not None and p.method in SIDE_BY_SIDE:
        if not any(counts):
            return ["TIME_WAIT: none was left. In each Connection: close block's network namespace "
                    "`net.ipv4.tcp_max_tw_buckets` was 0, so a closed connection left no TIME_WAIT socket: "
                    "the server closes first, so each would be the server's, pinned as a timer to its CPU, "
                    "and when their TIME_WAIT ends they expire there in a burst, charged to whichever server runs then "
                    "(this kernel charges softirq time to the task it interrupts), in the middle of other "
                    "arms' runs. Every arm closed its connections alike.", ""]
        counts = sorted({c for c in counts})
        sides = list({(r.arm, r.workers, r.server_set): r.tw_sides for r in runs if r.tw_sides is not None}.values())
        where = ("in the block's own network namespace at its end (every server of the block: one count per "
                 "server, read after the last run)")
    elif own and all(own):
        where = ("in the run's own network namespace (each run was made in a fresh one, so these are the run's "
                 "own sockets)")
    elif not any(own):
        where = ("on the machine (earlier runs' included: a socket stays in TIME_WAIT 60 s, longer than the "
                 "pause)")
    else:
        where = ("in the run's own network namespace for the runs made in one, on the machine (earlier runs' "
                 "included) for the others")
    text = f"TIME_WAIT after the Connection: close runs: {min(counts)} to {max(counts)} sockets {where}."
    if sides:
        server, client = sum(s[0] for s in sides), sum(s[1] for s in sides)
        text += ((" On each server's own port, summed over the servers: " if p is not None and p.method in SIDE_BY_SIDE
                  else " On the run's own server port, summed over the runs: ") + f"{server} on the server's side, "
                 f"{client} on the client's side")
        reuse = sysctl_value(p, "net.ipv4.tcp_tw_reuse") if p else None
        reusable = (", which tcp_tw_reuse lets a loopback connect reuse" if reuse in (1, 2)
                    else "" if reuse is None else f", which tcp_tw_reuse={reuse} does not let a connect reuse")
        if server > client:
            live = "live connections" if p is None else f"{p.connections[0]} live connections"
            text += (": the server closes first after answering a `Connection: close` request, so TIME_WAIT "
                     f"sits on the server's port and does not hold wrk's ephemeral ports; those hold the {live} "
                     f"and the few client-side TIME_WAIT sockets{reusable}.")
        else:
            text += f": wrk closes first, so TIME_WAIT sits on its ephemeral ports{reusable}."
    cap = sysctl_value(p, "net.ipv4.tcp_max_tw_buckets") if p else None
    if is_int(cap) and max(counts) >= cap * 0.95:
        text += (f" The count came within 5% of `net.ipv4.tcp_max_tw_buckets` ({cap}): past it the kernel "
                 "closes sockets without TIME_WAIT (counted as TCPTimeWaitOverflow in /proc/net/netstat).")
    return [text, ""]


read_cost = row_reader(wrk_row_parser("mode"), check_wrk_rows(lambda mode: dict(COST_MODES)[mode], True))
STUDY = Study("cost", "cost.jsonl", read_cost, render_cost, is_round=lambda row: isinstance(row, WrkRun))
