"""The throughput study (throughput.jsonl): req/s with the server, not the
client, as the limit (each server held to a share of one CPU), and the goal
the cost study's anchor cannot judge where wrk is the limit: bare's req/s at
or above nginx's on keep-alive."""

import statistics
from typing import Optional

from acceptlab.stats import floor_of
from report.common import Meta, Study, number, plural, row_reader
from report.sections.cost import anchor_ratios
from report.sections.wrk import (WrkRun, against_one, check_wrk_rows, fresh_servers, verdict_text, wrk_failed,
                                 wrk_row_parser)

GOAL_ARM, ANCHOR, AA = "bare", "nginx", "bare-aa"
# The server's CPU over its quota at or above this in the median run: the
# quota, not the client, was the limit.
SERVER_BOUND_SHARE = 0.9


def server_share(r: WrkRun, quota: Optional[float]):
    """The run's server CPU time over its wall time and its quota."""
    if not quota or not r.cpu or r.cpu[0] is None:
        return None
    return r.cpu[0] * r.rps / 1e6 / quota


# How each method runs the block, for the section's first paragraph.
METHOD_TEXT = {
    "alternated": "as the cost study's alternated method runs them (one block, every run between two of bare's, "
                  "each ratio over bare at the run's moment)",
    "paired": "as the cost study's paired method runs them (one block, every other run at the same time as one of "
              "bare's, both servers pinned to the same CPU and both wrk to theirs, each ratio over the bare run "
              "beside it: the host's speed, which moves over seconds by more than the differences looked for, "
              "is shared by the two and cancels in their ratio; their quotas together leave that CPU room for "
              "both, so each gets its whole quota)",
}


def median_of(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def render_throughput(meta: Meta, rows: list) -> list:
    p = meta.throughput
    quota = p.cpu_quota if p else None
    runs = [r for r in rows if isinstance(r, WrkRun)]
    out = ["## Throughput with the server as the limit", "",
           (f"What was measured: wrk keep-alive on `{p.path}` ({p.connections} connections, {number(p.duration_s)} s "
            f"runs) against bare, its A/A twin bare-aa, exclusive-reorder and nginx at "
            f"{plural(p.workers, 'worker')}, {METHOD_TEXT[p.method]}"
            + (", every round on new servers (each arm's started and warmed up for it, stopped after it, so what "
               "a server's start draws varies from round to round and the interval covers it)"
               if fresh_servers(runs) else "")
            + f", with each server's processes held to "
            f"{number(p.cpu_quota)} of one CPU ({p.quota}). " if p else
            "What was measured: each server's processes held to a share of one CPU "
            "(the run's meta.json does not say how, nor by which method). ") + "The cost study's "
           "keep-alive runs leave the client busy nearly all the time, so their req/s is the client's limit; held "
           "below it, the server is saturated and its req/s is its own. Server at its quota: the server's CPU "
           "time over the run's wall time and the quota (near 1: the quota was the limit); client busy: wrk's "
           "CPU time over its wall time and CPUs.", ""]
    if not runs:
        return out + ["No run was measured.", ""] + wrk_failed(rows, lambda key: "the block")
    arms = [a for a in (GOAL_ARM, AA, "exclusive-reorder", ANCHOR) if any(r.arm == a for r in runs)]
    out += ["| arm | req/s, each run in order | req/s over bare | CPU µs per request "
            "(median) | server at its quota (median) | client busy (median) |",
            "|---|---|---|---|---|---|"]
    for a in arms:
        mine = sorted((r for r in runs if r.arm == a), key=lambda r: (r.round, r.line))
        ratios = [r.ratio for r in mine if r.ratio is not None]
        cpu = median_of([r.cpu[0] for r in mine if r.cpu])
        share = median_of([server_share(r, quota) for r in mine])
        client = median_of([r.client_share for r in mine])
        out.append("| %s | %s | %s | %s | %s | %s |" % (
            a, " ".join(f"{r.rps:.0f}" for r in mine),
            "1 (the reference)" if a == GOAL_ARM else against_one(ratios, "more", "fewer") if ratios else "-",
            f"{cpu:.2f}" if cpu is not None else "-", f"{share * 100:.0f} %" if share is not None else "-",
            f"{client * 100:.0f} %" if client is not None else "-"))
    out.append("")
    aa = [r.ratio for r in runs if r.arm == AA and r.ratio is not None]
    floor = floor_of(aa) if len(aa) > 1 else None
    goal = [x for _, x in anchor_ratios([r for r in runs if r.arm == ANCHOR], runs, GOAL_ARM, "keepalive")]
    text = (f"The goal, our harness at least matching {ANCHOR} on keep-alive with 2 workers ({GOAL_ARM}'s req/s at "
            f"or above {ANCHOR}'s), with the server as the limit: ")
    if not goal:
        text += f"not judged: no round measured both {GOAL_ARM} and {ANCHOR}."
    else:
        text += (f"{GOAL_ARM} / {ANCHOR} " + verdict_text(goal, 1, "at least", floor)
                 + f" (per round {', '.join(f'{x:.2f}' for x in goal)}; met only when the whole 95 % interval is "
                 "at or above 1, missed only when it is wholly below; judged against the A/A floor, "
                 f"{AA} / {GOAL_ARM} above).")
    shares = [server_share(r, quota) for r in runs]
    held = median_of(shares)
    if held is not None and held < SERVER_BOUND_SHARE:
        text += (f" The servers used {held * 100:.0f} % of their quota in the median run, under "
                 f"{SERVER_BOUND_SHARE * 100:.0f} %: the quota was not the limit, so these req/s are not the "
                 "servers' own either.")
    out += ["**What this shows.** " + text, ""]
    return out + wrk_failed(rows, lambda key: "the block")


def render_throughput_absent(meta: Meta) -> list:
    return ["## Throughput with the server as the limit", "", "Not measured in this run: it has no "
            "`throughput.jsonl` (the campaign's `throughput` study writes it, as root).", ""]


read_throughput = row_reader(wrk_row_parser("mode"), check_wrk_rows(lambda mode: mode, True))
STUDY = Study("throughput", "throughput.jsonl", read_throughput, render_throughput,
              is_round=lambda row: isinstance(row, WrkRun), absent=render_throughput_absent)
