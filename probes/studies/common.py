"""Helpers more than one study uses: the payoff study's rotated order,
what a server served, the rows a study fills in once it is done, make
bench's stopping rule, and a run or trial in a network namespace of its own
(probes/harness/netns.py)."""

import json
import os
import subprocess

from acceptlab.stats import mean_interval
from probes.harness.lifecycle import StepFailed, is_root
from probes.harness.netns import run_in_netns
from probes.harness.servers import worker_exits
from probes.peers import peers


def rotated(cells, rnd, rounds):
    """Round rnd's order: the list rotated by (rnd-1)*len/rounds, so each cell
    takes an early, a middle and a late slot across the rounds."""
    k = ((rnd - 1) * len(cells) // max(rounds, 1)) % max(len(cells), 1)
    return cells[k:] + cells[:k]


def served_split(proc):
    """Connections each worker served (its worker_exit line's "admitted":
    accepted itself or handed to it, so fdpass shows who served, not who won
    the accept), largest first ("33/0"); None when it printed none. wrk opens
    one connection more than -c before its run."""
    counts = sorted((e.get("admitted", 0) for e in worker_exits(proc)), reverse=True)
    return "/".join(map(str, counts)) if counts else None


def handoff_rate(port, seconds):
    """For fdpass with the mechanism on: the hand-offs the run caused (the
    shared page's event id, read through GET /variant after wrk), and per
    second; and the deferrals the page counts. Empty for every other arm."""
    try:
        state = json.loads(peers.get_close(port, "/variant", 5).split(b"\r\n\r\n", 1)[1])
    except (OSError, ValueError, IndexError):
        return {}
    if not state.get("on") or "event_id" not in state:
        return {}
    out = {"handoffs": state["event_id"],
           "handoffs_per_s": round(state["event_id"] / seconds, 1) if seconds else None}
    if "deferrals" in state:
        out["deferrals"] = state["deferrals"]
    return out


def time_wait_counts(port):
    """Sockets in TIME_WAIT now (`ss -tanH state time-wait`, every one on the
    machine), and of those on this server's port: its own side (local port =
    the server's) and the client's side (peer port = the server's)."""
    try:
        res = subprocess.run(["ss", "-tanH", "state", "time-wait"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None, None
    if res.returncode != 0:
        return None, None
    total, server, client = 0, 0, 0
    suffix = ":%d" % port
    for line in res.stdout.splitlines():
        cols = line.split()
        if len(cols) < 4:
            continue
        total += 1
        server += cols[-2].endswith(suffix)
        client += cols[-1].endswith(suffix)
    return total, {"server": server, "client": client}


def read_sysctl(name):
    """The value under /proc/sys (whitespace collapsed; an integer when it is
    one), or None when it cannot be read."""
    try:
        with open("/proc/sys/" + name.replace(".", "/")) as f:
            text = " ".join(f.read().split())
    except OSError:
        return None
    return int(text) if text.isdigit() else text


def rewrite_rows(path, fill):
    """A study's finish: fill(rows) completes the rows of path (a study's
    JSON Lines file), which is rewritten; nothing when it cannot be read."""
    try:
        with open(path) as f:
            rows = [json.loads(l) for l in f if l.strip()]
    except OSError:
        return
    fill(rows)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        for r in rows:
            f.write(json.dumps(r, sort_keys=True) + "\n")
    os.replace(tmp, path)


def in_own_netns(run, timeout, what="the run"):
    """run() -> (rows, progress text) in a network namespace of its own, as
    root (probes/harness/netns.py: a forked child, no relaunch): every run
    starts with an empty TIME_WAIT table, where in one namespace the
    Connection: close runs' TIME_WAIT sockets (the server closes first, so
    they are the server's) pile up to net.ipv4.tcp_max_tw_buckets within
    minutes and a run's CPU per request moves with how full the table is.
    Without root the run is made here, in the campaign's namespace. Every
    row carries "netns": whether it was made in a namespace of its own."""
    if not is_root():
        rows, text = run()
        inside = False
    else:
        rows, text = run_in_netns(run, timeout, what=what)
        inside = True
    for r in rows:
        r["netns"] = inside
    return rows, text


def netns_trial(trial, timeout, what="the trial"):
    """trial() -> its row, in a network namespace of its own (as
    in_own_netns): every trial gets the same clean stack, a per-namespace
    sysctl it sets (the server's --reuseport-migrate sets
    net.ipv4.tcp_migrate_req) stays there, and no trial inherits another's
    TIME_WAIT sockets. Without root it is skipped (StepFailed)."""
    if not is_root():
        raise StepFailed("skipped: needs root (a network namespace of its own)")
    return run_in_netns(trial, timeout, what=what)


# ---- make bench's stopping rule ------------------------------------------------

def stopping_rule(plan):
    """meta.json's "stopping" for a study that repeats rounds: fixed rounds, or
    (--bench-within) rounds until every ratio's 95 % interval is within
    +-within of its mean, at least min_rounds and at most max_rounds."""
    if not plan.bench_within:
        return {"rule": "fixed rounds"}
    return {"rule": "rounds until every CPU ratio's 95 % interval is within +-within of its mean",
            "within": plan.bench_within, "max_rounds": plan.bench_max_rounds}


def final_state(plan, series, within, rounds_run, max_rounds):
    """The stopping rule's verdict once a study is done; with fixed rounds
    (no --bench-within) there is no cap to reach: "cap_hit" is None and the
    ratios' "converged" says which came within +-within."""
    state = keep_going(series, within, rounds_run, max_rounds)[1]
    if not plan.bench_within:
        state["cap_hit"] = None
    return state


def stopping_record(plan, state):
    """What a finished row records of the rule it ran under: the rule, the
    rounds its study ran, and whether the cap was reached."""
    return dict(stopping_rule(plan), rounds_run=state["rounds_run"],
                cap_reached=bool(plan.bench_within) and state["rounds_run"] >= state["max_rounds"])


def verdict(series, within):
    """series: {ratio name: [one value per round]} -> {name: {"mean",
    "half_width", "relative" (half-width / mean), "rounds", "converged"}}; a
    ratio with no value (its arm never ran) is left out, one with a single
    value has no interval and has not converged."""
    out = {}
    for name, values in sorted(series.items()):
        values = [v for v in values if v is not None]
        if not values:
            continue
        m, half = mean_interval(values)
        rel = half / m if half is not None and m else None
        out[name] = {"mean": round(m, 4), "half_width": None if half is None else round(half, 4),
                     "relative": None if rel is None else round(rel, 4), "rounds": len(values),
                     "converged": rel is not None and rel <= within}
    return out


def keep_going(series, within, rounds_run, max_rounds):
    """The stopping rule: (True, verdict) while some ratio's interval is wider
    than +-within of its mean and fewer than max_rounds rounds have run;
    (False, verdict) once every ratio is within, or at the cap (verdict's
    "cap_hit" then names the ratios that did not converge with their
    half-widths)."""
    ratios = verdict(series, within)
    wide = {n: v for n, v in ratios.items() if not v["converged"]}
    done = {"ratios": ratios, "rounds_run": rounds_run, "within": within, "max_rounds": max_rounds,
            "converged": not wide, "cap_hit": None}
    if not wide:
        return False, done
    if rounds_run >= max_rounds:
        done["cap_hit"] = {n: {"half_width": v["half_width"], "relative": v["relative"]} for n, v in wide.items()}
        return False, done
    return True, done


def progress_text(study, state):
    """One line for the campaign's progress: how many ratios are within and the widest."""
    ratios = state["ratios"]
    within = sum(v["converged"] for v in ratios.values())
    wide = [(v["relative"] if v["relative"] is not None else float("inf"), n) for n, v in ratios.items()
            if not v["converged"]]
    text = "%s: %d rounds run, %d of %d CPU ratios within +-%g %%" % (
        study, state["rounds_run"], within, len(ratios), state["within"] * 100)
    if wide:
        rel, name = max(wide)
        text += "; widest: %s (%s)" % (name, "one round" if rel == float("inf") else "+-%.1f %%" % (rel * 100))
    return text
