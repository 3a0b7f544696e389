"""Worker count as a dimension of the balancing, placement and models
studies: the campaign's rows at 4 workers carry "workers" and the scaled
connection counts (16 per worker), the report renders a table per worker
count beside the run's own (which stays as it was), and the models predict at
each count beside the measured rounds. Kept cheap: one small campaign slice
(--rounds 1, one arm), the rest from plans and synthetic rows."""

import json
import os
import shutil
import subprocess

from acceptlab import arms
from acceptlab.paths import module_cmd
from models import skew
from tests.conftest import ROOT, SERVER, pids_running

CAMPAIGN = module_cmd("probes.campaign")
REPORT = module_cmd("report.report")
FIXTURE = os.path.join(ROOT, "tests", "fixtures", "report", "results", "linux")


def section(text, heading):
    """The text from a heading line to the next heading of its level or above."""
    level = heading.split()[0]
    lines = text.splitlines()
    start = lines.index(heading)
    end = next((i for i in range(start + 1, len(lines))
                if lines[i].startswith("#") and len(lines[i].split()[0]) <= len(level)), len(lines))
    return "\n".join(lines[start:end])


def test_balancing_at_four_workers_slice(tmp_path):
    """--worker-counts 2,4 with one arm and --rounds 1: at 2 workers the
    fresh servers as before (32 connections, trace rows as root), at 4 one
    server taking the three shapes back-to-back, 64 connections a round
    split over 4 workers (zeros listed); fdpass, which claims balance, holds
    2:1 in every round; the report keeps the 2-worker table and adds a
    4-worker table with each round's verdict; no server outlives it."""
    before = pids_running(SERVER)
    res = subprocess.run([*CAMPAIGN, "--platform", "linux", "--arms", "fdpass", "--studies", "balancing",
                          "--worker-counts", "2,4", "--rounds", "1", "--results-dir", str(tmp_path)], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert "[  4/4]" in res.stdout, res.stdout
    stamp = (tmp_path / "CANONICAL").read_text().strip()
    run = tmp_path / stamp
    meta = json.loads((run / "meta.json").read_text())
    assert meta["parameters"]["balancing"]["workers"] == [2, 4]
    assert meta["parameters"]["balancing"]["wide"]["arms"] == ["fdpass"]
    assert meta["arms"] == arms.meta_facts(arms.names()), "meta.json records every arm's facts, for the report"
    rows = [json.loads(l) for l in (run / "balancing.jsonl").read_text().splitlines()]
    assert [(r["workers"], r["how"], r["shape"]) for r in rows] == [
        (2, "fresh", s) for s in ("burst", "ramp", "keepalive")] + [
        (4, "back-to-back", s) for s in ("burst", "ramp", "keepalive")]
    for r in rows:
        assert "error" not in r, r
        assert r["connections"] == 16 * r["workers"], r
        assert len(r["counts"]) == r["workers"], "every worker listed, zeros included: %r" % r
        assert sum(r["counts"].values()) + r["unanswered"] == r["connections"], r
        assert r["ratio"] is not None and r["ratio"] <= 2, "fdpass claims 2:1 at every count: %r" % r
    if os.geteuid() == 0:
        trace = [json.loads(l) for l in (run / "trace.jsonl").read_text().splitlines()]
        assert [t["shape"] for t in trace] == ["burst", "ramp", "keepalive"], "trace rows: the fresh cells only"
    out = tmp_path / "linux.md"
    rep = subprocess.run([*REPORT, "--results-dir", str(tmp_path), "--out", str(out)], cwd=ROOT,
                         capture_output=True, text=True)
    assert rep.returncode == 0, rep.stderr
    text = out.read_text()
    main = section(text, "## Balancing")
    assert "| arm | mode | burst 32 | ramp 32 (10 ms) | keepalive 32 x 4 | within 2:1 |" in main
    four = section(text, "#### 4 workers (back-to-back)")
    assert "| arm | mode | burst 64 | ramp 64 | keepalive 64 x 4 | within 2:1 |" in four
    fdpass = next(l for l in four.splitlines() if l.startswith("| fdpass |"))
    assert fdpass.count(" ok") == 3 and fdpass.endswith("| 3/3 |"), fdpass
    assert "Every round within 2:1: fdpass." in four
    # The figure of the other counts: a panel per count, fdpass's rounds in it.
    svg = (tmp_path / "figures" / "balancing_workers.svg").read_text()
    assert 'id="share__w4__fdpass__burst"' in svg and "balancing_workers.png" in text
    assert pids_running(SERVER) <= before


def test_balancing_workers_option():
    """--worker-counts is validated (exit 2, one line naming it); the
    default plan runs every arm at 2 and the arms users serve with at 4 and 8
    (no knob-off or measurement arm, no threads arm but handoff), and the
    placement study adds its placement:workers arms at 4 and 8."""
    for bad in ("2,x", "0", "2,2", ""):
        res = subprocess.run([*CAMPAIGN, "--platform", "linux", "--plan", "--worker-counts", bad], cwd=ROOT,
                             capture_output=True, text=True, timeout=30)
        assert res.returncode == 2 and res.stderr.startswith("campaign: --worker-counts"), (bad, res.stderr)
        assert len(res.stderr.splitlines()) == 1, res.stderr
    res = subprocess.run([*CAMPAIGN, "--platform", "linux", "--plan", "--studies", "balancing,placement"], cwd=ROOT,
                         capture_output=True, text=True, timeout=30)
    assert res.returncode == 0, res.stderr
    lines = [l.replace("   (skipped: needs root)", "").split() for l in res.stdout.splitlines()]
    wide = {(l[1], l[2]) for l in lines if l[0] == "balancing" and l[-1] == "back-to-back"}
    from acceptlab import arms
    users = arms.balancing_wide()
    assert wide == {(a, "%dw" % n) for a in users for n in (4, 8)}, wide
    assert "handoff" in users and not {"fdpass-off", "handoff-off", "bare-threads"} & set(users), users
    placed = {(l[1], l[2], l[3]) for l in lines if l[0] == "placement" and l[-1].endswith("w")}
    assert placed == {(p, a, "%dw" % n) for p in ("unpinned", "hog-beside-worker0")
                      for a in arms.in_study("placement:workers") for n in (4, 8)}, placed


def balancing_row(variant, workers, shape, rnd, counts):
    ns = sorted(counts, reverse=True)
    ids = {str(1000 + i): n for i, n in enumerate(counts)}
    return {"variant": variant, "workers": workers, "how": "back-to-back", "shape": shape, "round": rnd,
            "mode": "process", "connections": sum(counts), "answered": sum(counts), "counts": ids,
            "split": "/".join(map(str, ns)), "ratio": round(ns[0] / ns[-1], 3) if ns[-1] else None,
            "starved": sum(n == 0 for n in ns), "unanswered": 0, "errors": {}}


def test_models_at_more_workers_beside_the_rounds(tmp_path):
    """models_at(4, ...) predicts at 4 workers, 64 connections: the hash
    spread against reuseport's rounds, the EPOLLEXCLUSIVE rule (64/0/0/0 for
    exclusive, 16 each for exclusive-reorder) against the ramp rounds, the
    race on 2 CPUs against bare's; each row carries the rounds it was checked
    against, and the report's models section puts them in a 4-worker table."""
    rows = [balancing_row("reuseport", 4, "burst", 1, [20, 16, 15, 13]),
            balancing_row("exclusive", 4, "ramp", 1, [64, 0, 0, 0]),
            balancing_row("exclusive-reorder", 4, "ramp", 1, [16, 16, 16, 16]),
            balancing_row("bare", 4, "burst", 1, [40, 17, 7, 0]),
            balancing_row("bare", 4, "ramp", 1, [29, 24, 10, 1])]
    path = tmp_path / "balancing.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert skew.balancing_worker_counts([str(path)]) == [4]
    latency = skew.LatencySource(skew.Latency("test", samples=[20, 40, 400]), [], "test")
    got = skew.models_at(4, [str(path)], lambda shape: latency, skew.ACCEPT_US, False, 50)
    assert {(r["model"], r["case"]) for r in got} == {
        ("reuseport-balancing", "burst"), ("exclusive-balancing", "exclusive"),
        ("exclusive-balancing", "exclusive-reorder"), ("race-bare", "burst"), ("race-bare", "ramp")}
    for r in got:
        assert r["workers"] == 4 and r["connections"] == 64, r
        assert r["measured_rounds"] == 1 and len(r["measured_splits"]) == 1, r
    reuse = next(r for r in got if r["model"] == "reuseport-balancing")
    assert reuse["predicted_outside"] == skew.analytic(4, 64, samples=20000)["outside"]
    rules = {r["case"]: r for r in got if r["model"] == "exclusive-balancing"}
    assert rules["exclusive"]["predicted_split"] == "64/0/0/0" and rules["exclusive"]["consistent"]
    assert rules["exclusive-reorder"]["predicted_split"] == "16/16/16/16" and rules["exclusive-reorder"]["consistent"]

    # The report: a models section with a table per worker count, 2 and 4.
    results = tmp_path / "results"
    shutil.copytree(FIXTURE, results)
    run = next(p for p in results.iterdir() if p.is_dir())
    with open(run / "models.jsonl", "a") as f:
        for r in got:
            f.write(json.dumps(r) + "\n")
    out = tmp_path / "linux.md"
    rep = subprocess.run([*REPORT, "--results-dir", str(results), "--out", str(out)], cwd=ROOT,
                         capture_output=True, text=True)
    assert rep.returncode == 0, rep.stderr
    beside = section(out.read_text(), "### The models beside the balancing rows, by worker count")
    four = section(beside, "#### 4 workers")
    assert "| exclusive | ramp | exclusive-balancing (rule) | 100% outside (split 64/0/0/0) | 64/0/0/0 |" in four
    assert "| bare | burst | race-bare (simulation) |" in four and "40/17/7/0" in four


def test_placement_at_more_workers_renders_by_count(tmp_path):
    """Placement rows at 4 workers (nothing pinned, the hog beside worker 0)
    get a table of their own with each run's verdict; the 2-worker tables
    and the reference rows stay as they were (the fixture's rows have no
    "workers": they are 2-worker rows)."""
    results = tmp_path / "results"
    shutil.copytree(FIXTURE, results)
    run = next(p for p in results.iterdir() if p.is_dir())
    base = tmp_path / "base.md"
    assert subprocess.run([*REPORT, "--results-dir", str(results), "--out", str(base)], cwd=ROOT,
                          capture_output=True).returncode == 0
    wide = []
    for placement, label in (("unpinned", "nothing pinned"),
                             ("hog-beside-worker0", "workers alternating on CPUs 0 and 1, a CPU hog on CPU 0")):
        for shape, counts, rounds in (("oneshot", [41, 28, 11, 0], 10), ("burst", [16, 16, 16, 16], 1)):
            ns = sorted(counts, reverse=True)
            wide.append({"placement": placement, "label": label, "variant": "bare", "workers": 4, "shape": shape,
                         "run": 1, "rounds": rounds, "connections": sum(counts), "answered": sum(counts),
                         "counts": {str(100 + i): n for i, n in enumerate(counts)}, "split": "/".join(map(str, ns)),
                         "ratio": round(ns[0] / ns[-1], 3) if ns[-1] else None, "starved": ns.count(0),
                         "both_answered_rounds": 0, "mode": "process"})
    with open(run / "placement.jsonl", "a") as f:
        for r in wide:
            f.write(json.dumps(r) + "\n")
    out = tmp_path / "linux.md"
    rep = subprocess.run([*REPORT, "--results-dir", str(results), "--out", str(out)], cwd=ROOT,
                         capture_output=True, text=True)
    assert rep.returncode == 0, rep.stderr
    text, before = out.read_text(), base.read_text()
    more = section(text, "### Where it applies at more workers")
    assert "| nothing pinned | oneshot 41/28/11/0 out burst 16/16/16/16 ok |" in section(more, "#### 4 workers")
    assert text.replace(more + "\n", "") == before, "the 2-worker placement tables changed"


def test_placement_rows_say_what_each_worker_was_pinned_to():
    """A placement run's row carries each counted worker's CPUs from the
    server's ready line (keyed as the probe counts it: pid, or tid in threads
    mode) and the probe's and hog's CPUs (None when not pinned), so the
    report can say which worker won by its CPU without guessing."""
    from probes.studies import placement
    ready = {"mode": "process", "workers": [{"index": 0, "pid": 10, "tid": 10, "cpu": "0"},
                                            {"index": 1, "pid": 11, "tid": 11, "cpu": "1"}]}
    p = next(p for p in placement.placements() if p["name"] == "pinned-probe-cpu1")
    assert placement.pinning(p, ready) == {"worker_cpus": {"10": "0", "11": "1"}, "probe_cpu": 1, "hog_cpu": None}
    hog = next(p for p in placement.placements() if p["name"] == "hog-beside-worker0")
    threads = dict(ready, mode="threads", workers=[dict(w, tid=w["tid"] + 100) for w in ready["workers"]])
    assert placement.pinning(hog, threads) == {"worker_cpus": {"110": "0", "111": "1"}, "probe_cpu": None,
                                               "hog_cpu": 0}


def test_timeline_plans_bare_under_the_disputed_placement():
    """The timeline study runs every arm with nothing pinned and bare also
    under the placement the scheduling note disputes (workers on CPUs 0 and
    1, probe on CPU 1): one extra step at 2 workers, none at 4 (the
    placement pins 2 workers)."""
    def plan(*extra):
        res = subprocess.run([*CAMPAIGN, "--platform", "linux", "--plan", "--studies", "timeline", *extra], cwd=ROOT,
                             capture_output=True, text=True, timeout=30)
        assert res.returncode == 0, res.stderr
        return [l.replace("   (skipped: needs root)", "").split(None, 1)[1] for l in res.stdout.splitlines()]
    from acceptlab import arms
    steps = plan()
    assert [s for s in steps if "pinned" in s] == ["bare              oneshot 8 --timeline, pinned-probe-cpu1"], steps
    assert len(steps) == len(arms.in_study("timeline")) + 1, steps
    assert not [s for s in plan("--workers", "4") if "pinned" in s]


def test_timeline_under_the_disputed_placement_slice(tmp_path):
    """As root, the campaign's timeline study for bare: the pinned step's
    rows say their placement (workers' CPUs "0" and "1" from the ready line,
    probe on CPU 1), one row per traced connection, every winner one of the
    two workers; the report gives that placement a table of its own with the
    workers named by their CPUs; no server outlives the run."""
    if os.geteuid() != 0:
        import pytest
        pytest.skip("needs root (the tracer loads BPF programs)")
    before = pids_running(SERVER)
    res = subprocess.run([*CAMPAIGN, "--platform", "linux", "--arms", "bare", "--studies", "timeline",
                          "--results-dir", str(tmp_path), "--no-canonical"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    run = next(p for p in tmp_path.iterdir() if p.is_dir())
    rows = [json.loads(l) for l in (run / "timeline.jsonl").read_text().splitlines()]
    pinned = [r for r in rows if r["placement"] == "pinned-probe-cpu1"]
    assert {r["placement"] for r in rows} == {"unpinned", "pinned-probe-cpu1"}, rows
    assert len(pinned) == 8, pinned
    for r in pinned:
        assert r["worker_cpus"] == ["0", "1"] and r["probe_cpu"] == 1, r
        assert r["conn"]["winner_index"] in (0, 1), r
    out = tmp_path / "linux.md"
    (tmp_path / "CANONICAL").write_text(run.name + "\n")
    rep = subprocess.run([*REPORT, "--results-dir", str(tmp_path), "--out", str(out)], cwd=ROOT,
                         capture_output=True, text=True)
    assert rep.returncode == 0, rep.stderr
    heading = "### bare, workers on CPUs 0 and 1, probe on CPU 1 (beside worker 1)"
    part = section(out.read_text(), heading)
    assert "Workers' CPUs (ready line): 0: 0, 1: 1; probe on CPU 1." in part, part
    assert "the worker pinned to CPU" in part, part
    assert pids_running(SERVER) <= before, "a server outlived the campaign"
