"""Tests for the wrk studies, `cost` and `payoff` (probes/studies/), and
their report sections (report/report.py).

A short real campaign (`--quick --bench-seconds 1`, arms bare and lt) checks
the rows, the ratios to bare, the raw wrk output and that nothing is left
running; make bench's stopping rule is checked on synthetic rows and in a
tiny real run that reaches its cap; the wrk parser is checked on samples of wrk 4.x's text output; the
report's new sections reject malformed rows with one FILE:LINE line. No
timing figure is asserted beyond "more than zero": the machine is noisy and
the figures are compared side by side in one run, never against constants.
"""

import contextlib
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from acceptlab import stats, wrk_output
from acceptlab.paths import module_cmd
from probes.harness.cpu import CpuMeter, cpu_fields, pin_tree, process_tree
from probes.harness.servers import ServerRun
from probes.plan import Plan
from probes.harness import alternation
from probes.harness import toggling
from probes.studies import common, cost as cost_study, trace_overhead  # the wrk studies' order, ratios, rule
from report.sections import cost as cost_section
from report.sections import cost_why
from report.sections.wrk import WrkRun
from tests.conftest import PYTHON, ROOT, SERVER, packages_env, pids_running

CAMPAIGN = module_cmd("probes.campaign")
REPORT = module_cmd("report.report")
FIXTURE_RESULTS = Path(ROOT) / "tests" / "fixtures" / "report" / "results" / "linux"
STAMP = "20261129T081500Z"
WRK = shutil.which("wrk")
needs_wrk = pytest.mark.skipif(WRK is None, reason="wrk is not installed (Debian package wrk; `make deps`)")


def read_rows(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def run_dir_of(results):
    (stamp,) = [p for p in results.iterdir() if p.is_dir()]
    return stamp


# ---------------------------------------------------------------- a real, short campaign


@pytest.fixture(scope="module")
def quick_bench(tmp_path_factory):
    """One quick cost+payoff campaign over bare and lt named (1 s wrk runs), shared by
    the tests below; also records which servers and wrk processes ran before."""
    if WRK is None:
        pytest.skip("wrk is not installed (Debian package wrk; `make deps`)")
    results = tmp_path_factory.mktemp("bench")
    before = (pids_running(SERVER), pids_running(os.path.realpath(WRK)))
    res = subprocess.run([*CAMPAIGN, "--platform", "linux", "--studies", "cost,payoff", "--quick",
                          "--arms", "bare,lt", "--bench-arms", "bare,lt", "--bench-seconds", "1", "--results-dir", str(results),
                          "--no-canonical"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    return res, results, before


def cost_runs(rows, mode):
    """A mode's cost rows in the order they ran (their place in the block)."""
    return sorted((r for r in rows if r["mode"] == mode), key=lambda r: r["seq"])


def test_quick_bench_writes_a_row_per_cell(quick_bench):
    """cost --quick with bare and lt named: one block per mode, 2 rounds, every
    lt run at the same time as a run of bare (the reference; the paired
    method), the bare run first in the block, so bare, lt, bare, lt, each lt
    naming its bare run (paired_seq); and every
    payoff cell (bare at 1 worker, bare and lt at 2 and 8 workers, each at 32
    connections) has one measured row with req/s > 0 and p50 <= p99: a 1 s wrk
    run on loopback always completes requests, so a zero or a missing row is
    a bug, not noise."""
    res, results, _ = quick_bench
    assert res.returncode == 0, res.stderr
    assert "0 of 7 steps failed or skipped" in res.stdout, res.stdout
    assert not (results / "CANONICAL").exists(), "--no-canonical must leave CANONICAL alone"
    run = run_dir_of(results)
    cost = read_rows(run / "cost.jsonl")
    for mode in ("keepalive", "close"):
        runs = cost_runs(cost, mode)
        assert [(r["arm"], r["round"]) for r in runs] == [("bare", 1), ("lt", 1), ("bare", 2), ("lt", 2)], runs
        assert [r["seq"] for r in runs] == list(range(4))
        assert [r.get("paired_seq") for r in runs] == [None, 0, None, 2], runs
        assert {r["workers"] for r in runs} == {2}
        assert {r["connections"] for r in runs} == {cost_study.COST_CONNECTIONS[mode]}
    payoff = read_rows(run / "payoff.jsonl")
    assert sorted((r["arm"], r["workers"], r["connections"]) for r in payoff) == sorted(
        (a, w, 32) for a, w in (("bare", 1), ("bare", 2), ("lt", 2), ("bare", 8), ("lt", 8)))
    for r in cost + payoff:
        assert "error" not in r, r
        assert r["requests_per_s"] > 0 and r["requests"] > 0, r
        # what wrk itself spent, from its resource usage: some CPU, and a
        # share of its CPUs' time that is a share (not above all of it)
        assert r["client_cpu_s"] > 0 and 0 < r["client_cpu_share"] <= 1.05, r
        assert 0 <= r["latency_ms"]["p50"] <= r["latency_ms"]["p99"], r
        assert set(r["errors"]) == {"connect", "read", "write", "timeout", "non_2xx_3xx"}
    for r in payoff:
        assert r["round"] == 1
    root = os.geteuid() == 0
    for r in cost:
        # as root each mode's block has a network namespace of its own, and a
        # close block keeps no TIME_WAIT socket (alternation.TIME_WAIT_CAP)
        assert r["netns"] == root, r
        assert r["time_wait_cap"] == (0 if root and r["mode"] == "close" else None), r
        assert isinstance(r["time_wait_after"], int) and r["time_wait_after"] >= 0, r
        assert set(r["time_wait_sides"]) == {"server", "client"}
        if r["time_wait_cap"] == 0:
            assert r["time_wait_after"] == 0, r
    for r in cost:
        # the server's context switches over the wrk run, in all and per request wrk completed
        for kind in ("voluntary", "involuntary"):
            assert isinstance(r["ctx_" + kind], int) and r["ctx_" + kind] >= 0, r
            assert r["ctx_%s_per_request" % kind] == round(r["ctx_" + kind] / r["requests"], 5), r
        # requests per epoll_wait return: one entry per worker, over the server's life (kept for the
        # block), so its workers answered at least every request wrk completed in all its runs
        loops = r["worker_loops"]
        assert sorted(w["index"] for w in loops) == list(range(r["workers"])), r
        mine = [x for x in cost if (x["arm"], x["mode"]) == (r["arm"], r["mode"])]
        assert sum(w["requests"] for w in loops) >= sum(x["requests"] for x in mine), r
        assert r["requests_per_epoll_return"] == round(
            sum(w["requests"] for w in loops) / sum(w["epoll_returns"] for w in loops), 4), r
    for r in cost + payoff:
        # one count per worker; wrk opens one connection more than -c before its run
        counts = [int(n) for n in r["served_split"].split("/")]
        assert len(counts) == r["workers"] and sum(counts) >= r["connections"], r


def test_quick_bench_ratio_to_bare(quick_bench):
    """bare has no ratio to itself; lt's is its req/s (and CPU per request)
    over bare's at its moment: the bare run that ran beside it (its
    paired_seq), to 4 decimals: the report's cells and intervals depend on
    this."""
    res, results, _ = quick_bench
    assert res.returncode == 0, res.stderr
    cost = read_rows(run_dir_of(results) / "cost.jsonl")
    for mode in ("keepalive", "close"):
        runs = cost_runs(cost, mode)
        for i, r in enumerate(runs):
            if r["arm"] == "bare":
                assert r["ratio_to_bare"] is None and r.get("cpu_ratio_to_bare") is None, r
                continue
            (beside,) = [b for b in runs if b["seq"] == r["paired_seq"]]
            assert beside["arm"] == "bare" and beside["round"] == r["round"], (r, beside)
            for field, ratio in (("requests_per_s", "ratio_to_bare"), ("cpu_us_per_request", "cpu_ratio_to_bare")):
                want = round(r[field] / beside[field], 4)
                assert abs(r[ratio] - want) <= 0.0001, (r, want)


def test_quick_bench_keeps_raw_wrk_output_and_meta(quick_bench):
    """Each run's wrk command line and verbatim output are under raw/ (the report
    can be re-derived and a figure traced to its run), close runs carry the
    Connection: close header, each server's own output is kept once for its
    block, and meta.json records how wrk was run and the method."""
    res, results, _ = quick_bench
    assert res.returncode == 0, res.stderr
    run = run_dir_of(results)
    for r in read_rows(run / "cost.jsonl"):
        server = run / "raw" / ("cost-%s-w%d-%s" % (r["arm"], r["workers"], r["mode"]))
        prefix = Path("%s-r%d-s%d" % (server, r["round"], r["seq"]))
        assert "Requests/sec:" in Path(str(prefix) + ".wrk.txt").read_text()
        cmd = Path(str(prefix) + ".wrk.cmd").read_text()
        assert "-t2 -c%d -d1s --latency" % cost_study.COST_CONNECTIONS[r["mode"]] in cmd
        assert ("Connection: close" in cmd) == (r["mode"] == "close")
        assert Path(str(server) + ".server.jsonl").read_text().count("worker_exit") == r["workers"]
        assert "Requests/sec:" in Path(str(server) + ".warm-up.wrk.txt").read_text()
    for r in read_rows(run / "payoff.jsonl"):
        prefix = run / "raw" / ("payoff-%s-w%d-c%d-r1" % (r["arm"], r["workers"], r["connections"]))
        assert "/work?us=500" in Path(str(prefix) + ".wrk.cmd").read_text()
        assert "Latency Distribution" in Path(str(prefix) + ".wrk.txt").read_text()
    meta = json.loads((run / "meta.json").read_text())
    params = meta["parameters"]
    assert params["cost"]["duration_s"] == 1 and params["cost"]["connections_by_mode"] == cost_study.COST_CONNECTIONS
    assert params["cost"]["method"] == "paired" and params["cost"]["rounds"] == 2
    where = params["cost"]["placement"]  # the server and wrk on separate CPUs (2 CPUs or more here)
    assert where and not set(where["server_cpus"]) & set(where["wrk_cpus"]), where
    assert set(where["server_cpus"]) | set(where["wrk_cpus"]) <= os.sched_getaffinity(0), where
    assert params["payoff"]["connections"] == [32] and params["payoff"]["path"] == "/work?us=500"
    assert params["payoff"]["workers"] == [2, 8] and params["payoff"]["duration_s"] == 1
    assert "net.ipv4.tcp_tw_reuse" in params["cost"]["sysctls"]
    assert meta["tools"]["wrk"] not in ("", "unknown", "not installed")


def test_quick_bench_leaves_nothing_running(quick_bench):
    """Every server a step started is stopped (its process group killed) and no wrk
    outlives its run."""
    res, _, (servers_before, wrk_before) = quick_bench
    assert res.returncode == 0, res.stderr
    assert pids_running(SERVER) <= servers_before, "servers left running"
    assert pids_running(os.path.realpath(WRK)) <= wrk_before, "wrk left running"


def test_quick_bench_report_renders(quick_bench, tmp_path):
    """The report builds from the quick run and has both new sections, with bare's
    own cells at ratio 1.00."""
    res, results, _ = quick_bench
    assert res.returncode == 0, res.stderr
    out = tmp_path / "linux.md"
    rep = subprocess.run([*REPORT, "--results-dir", str(results), "--run", run_dir_of(results).name,
                          "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert rep.returncode == 0, rep.stderr
    text = out.read_text()
    assert "## Cost" in text and "## Payoff: a CPU-bound app" in text
    lt_row = [l for l in text.split("### Keep-alive")[1].splitlines() if l.startswith("| lt |")][0]
    assert lt_row.count(" to ") == 1 and lt_row.count("[") == 1, lt_row  # one cell: 2 workers only


def test_missing_wrk_is_a_recorded_skip(tmp_path):
    """Without wrk (ACCEPTLAB_TEST_WRK names a file that does not exist) every cost and
    payoff step is an error row "skipped: wrk not installed", the campaign exits 0,
    and no server is started for nothing."""
    env = dict(os.environ, ACCEPTLAB_TEST_WRK=str(tmp_path / "no-such-wrk"))
    cmd = [*CAMPAIGN, "--platform", "linux", "--studies", "cost,payoff", "--quick", "--arms", "bare",
           "--bench-arms", "all", "--results-dir", str(tmp_path / "r"), "--no-canonical"]
    planned = len(subprocess.run(cmd + ["--plan"], cwd=ROOT, capture_output=True, text=True,
                                 timeout=60).stdout.splitlines())
    assert planned >= 5, "cost: one block per mode; payoff's cells"
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
    assert res.returncode == 0, res.stderr
    assert "%d of %d steps failed or skipped" % (planned, planned) in res.stdout, res.stdout
    run = run_dir_of(tmp_path / "r")
    rows = read_rows(run / "cost.jsonl") + read_rows(run / "payoff.jsonl")
    assert len(rows) == planned
    assert all(r["error"] == "skipped: wrk not installed" for r in rows), rows
    assert not list((run / "raw").glob("*.server.jsonl")), "a server was started without wrk"
    assert json.loads((run / "meta.json").read_text())["tools"]["wrk"] == "not installed"


# ---------------------------------------------------------------- the wrk studies' helpers


def test_round_order_puts_every_run_between_two_reference_runs():
    """A block's round: the others in an order shuffled per round (seeded by
    the round: the same every time), each followed by a run of the
    reference, round 1 opening with one; over rounds every other entrant
    follows every place, so what a run leaves behind does not always land
    on the same server."""
    ref, others = "bare", ["lt", "reuseport", "fdpass", "mutex"]
    one = alternation.round_order(ref, others, 1)
    assert one[0] == ref and one[1::2] and sorted(one[1::2]) == sorted(others)
    assert one[2::2] == [ref] * len(others)
    later = alternation.round_order(ref, others, 2)
    assert later[1::2] == [ref] * len(others) and sorted(later[0::2]) == sorted(others)
    assert alternation.round_order(ref, others, 2) == later  # seeded: a rerun repeats it
    firsts = {alternation.round_order(ref, others, n)[1 if n == 1 else 0] for n in range(1, 40)}
    assert firsts == set(others), firsts


def test_partner_at_draws_a_line_between_the_runs_around():
    """The partner's value at a run's place: on the line through its runs just
    before and after; past either end the nearer one's; None without any."""
    series = [(0, 10.0), (2, 14.0), (6, 10.0)]
    assert stats.partner_at(series, 1) == 12.0
    assert stats.partner_at(series, 2) == 14.0
    assert stats.partner_at(series, 3) == 13.0
    assert stats.partner_at(series, 9) == 10.0 and stats.partner_at([(4, 5.0)], 0) == 5.0
    assert stats.partner_at([], 3) is None


class FakeEntrant(alternation.Entrant):
    """An entrant whose server is this test process (CpuMeter reads it)."""

    def __init__(self, name):
        @contextlib.contextmanager
        def open_():
            yield alternation.Live(os.getpid(), 0)
        super().__init__(name, open_)


def test_paired_block_runs_each_run_beside_one_of_the_reference():
    """The paired method: every round runs each other entrant once, each at
    the same time as a run of the reference (their metered runs start
    together, so each starts before the other has ended: a host's slowdown
    lands on both), and the row names that reference run (paired_seq);
    the rounds' orders are the shuffled ones."""
    ref, others = FakeEntrant("bare"), [FakeEntrant("lt"), FakeEntrant("fdpass")]
    spans = {}

    def run_one(e, live, rnd, seq):
        (start, end), _ = alternation.metered(live.pid, lambda: (time.monotonic(), time.sleep(0.5) or time.monotonic()))
        spans[seq] = (start, end)
        return {"arm": e.name}

    rows = alternation.run_block(ref, others, lambda e, live: None, run_one,
                                 lambda rows, rnd: (rnd < 3, ""), lambda rnd, text: None, paired=True)
    assert len(rows) == 3 * 2 * len(others), rows
    for rnd in (1, 2, 3):
        mine = [r for r in rows if r["round"] == rnd]
        placed = [r for r in mine if r["arm"] != "bare"]
        assert [r["arm"] for r in placed] == [e.name for e in alternation.shuffled(others, rnd)], mine
        for r in placed:
            partner = next(b for b in mine if b["seq"] == r["paired_seq"])
            assert partner["arm"] == "bare" and r["seq"] == partner["seq"] + 1, (r, partner)
            (a0, a1), (b0, b1) = spans[r["seq"]], spans[partner["seq"]]
            assert max(a0, b0) < min(a1, b1), (spans[r["seq"]], spans[partner["seq"]])
    assert all("paired_seq" not in r for r in rows if r["arm"] == "bare"), rows


class CountingEntrant(alternation.Entrant):
    """A FakeEntrant that counts its server's starts, warm-ups and stops, and
    whose life fields name the start they are read from."""

    def __init__(self, name, log):
        self.starts = 0

        @contextlib.contextmanager
        def open_():
            self.starts += 1
            start = self.starts
            log.append(("start", name, start))
            try:
                yield alternation.Live(os.getpid(), start)
            finally:
                log.append(("stop", name, start))
        super().__init__(name, open_, lambda live: {"life_of": live.port})


@pytest.mark.parametrize("paired", [False, True])
def test_a_fresh_block_starts_new_servers_for_each_round(paired):
    """fresh=True: each round runs on servers started (and warmed up) for it
    and stopped after it, before the next round's start, so what one start
    drew is one round's; each row carries its round's server_set and the
    life fields of the server that ran it, read after that server stopped;
    alternated, every round opens with a run of the reference, so each
    other run sits between two reference runs of its own servers. Kept
    (fresh=False), one start serves the whole block."""
    for fresh in (True, False):
        log = []
        ref, others = CountingEntrant("bare", log), [CountingEntrant("lt", log), CountingEntrant("fdpass", log)]

        def run_one(e, live, rnd, seq):
            assert ("stop", e.name, live.port) not in log, "a run on a stopped server"
            return {"arm": e.name, "out": alternation.metered(live.pid, lambda: 1)[0]}

        rows = alternation.run_block(ref, others, lambda e, live: log.append(("warm", e.name, live.port)), run_one,
                                     lambda rows, rnd: (rnd < 3, ""), lambda rnd, text: None, paired=paired,
                                     fresh=fresh)
        sets = 3 if fresh else 1
        assert [e.starts for e in [ref] + others] == [sets] * 3, log
        for n in range(1, sets + 1):  # each start warmed once, and stopped before the next start
            assert sum(1 for x in log if x[0] == "warm" and x[2] == n) == 3, log
            if n < sets:
                last_stop = max(i for i, x in enumerate(log) if x == ("stop", "bare", n))
                assert last_stop < log.index(("start", "bare", n + 1)), log
        for r in rows:
            assert r["server_set"] == (r["round"] if fresh else 1) and r["life_of"] == r["server_set"], r
        if not paired:
            for rnd in (1, 2, 3):
                arms_in_order = [r["arm"] for r in sorted((r for r in rows if r["round"] == rnd),
                                                          key=lambda r: r["seq"])]
                opens = fresh or rnd == 1
                assert (arms_in_order[0] == "bare") == opens, (rnd, arms_in_order)


def test_paired_block_raises_the_failed_run_and_stops_its_partner():
    """A run of a pair that fails before its start does not leave the other
    waiting at the barrier: the block ends with the failure itself."""
    ref, other = FakeEntrant("bare"), FakeEntrant("lt")

    def run_one(e, live, rnd, seq):
        if e is other:
            raise RuntimeError("lt's server did not answer")
        return {"arm": e.name, "out": alternation.metered(live.pid, lambda: 1)[0]}

    with pytest.raises(RuntimeError, match="did not answer"):
        alternation.run_block(ref, [other], lambda e, live: None, run_one, lambda rows, rnd: (False, ""),
                              lambda rnd, text: None, paired=True)


def test_finish_cost_fills_paired_ratios(tmp_path):
    """A paired run's ratio to bare is over the bare run beside it (its
    paired_seq), not the line through bare's runs around it; the ratio to
    the knob-off arm is still the two ratios to bare in the same round."""
    rows = [block_row("bare", 0, 1, 100.0, 20.0), dict(block_row("fdpass", 1, 1, 90.0, 22.0), paired_seq=0),
            block_row("bare", 2, 1, 50.0, 40.0), dict(block_row("fdpass-off", 3, 1, 40.0, 44.0), paired_seq=2)]
    path = tmp_path / "cost.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    cost_study.finish(str(path))
    got = read_rows(path)
    assert [r.get("cpu_ratio_to_bare") for r in got] == [None, 1.1, None, 1.1], got
    assert [r.get("ratio_to_bare") for r in got] == [None, 0.9, None, 0.8], got
    assert got[1]["cpu_ratio_to_knob_off"] == 1.0, got[1]


def test_report_checks_a_paired_ratio_against_its_own_bare_run():
    """The report re-derives a paired row's ratio from the bare run it names:
    a ratio taken over the line through bare's runs around it instead, or a
    paired_seq that names no bare run, stops it with the row's line."""
    from acceptlab.results_io import InputError
    from report.sections.wrk import check_wrk_rows

    def run(line, arm, seq, rps, ratio=None, paired=None):
        return WrkRun(line, arm, 2, "close", 1, rps, 1.0, 2.0, (), ratio=ratio, seq=seq, paired_seq=paired)
    check = check_wrk_rows(lambda mode: mode, True)
    good = [run(1, "bare", 0, 100.0), run(2, "lt", 1, 90.0, 0.9, 0), run(3, "bare", 2, 50.0)]
    check(Path("cost.jsonl"), good)
    with pytest.raises(InputError, match="over bare's 100.0 at its place = 0.9000"):
        check(Path("cost.jsonl"), [good[0], run(2, "lt", 1, 90.0, 1.2, 0), good[2]])
    with pytest.raises(InputError, match='"paired_seq" 5 names no bare run'):
        check(Path("cost.jsonl"), [good[0], run(2, "lt", 1, 90.0, 0.9, 5), good[2]])


def test_one_worker_cells_take_their_ratio_to_bare_through_the_run_beside_them(tmp_path):
    """make bench's 1-worker cells run, paired, beside the block's reference
    (bare at 2 workers): fdpass at 1 worker is over bare at 1 worker through
    it, its ratio to the bare run beside it over bare 1 worker's to the one
    beside that, in the same round (here (90/100) / (60/50) = 0.75), not
    bare 1 worker's value at another moment; the report re-derives the same
    ratio and accepts it, and rejects one taken straight over the 2-worker
    run beside it. This is what a make bench run met first: its report
    stopped on the 1-worker rows."""
    from acceptlab.results_io import InputError
    from report.sections.wrk import check_wrk_rows

    rows = [block_row("bare", 0, 1, 100.0, 10.0), dict(block_row("fdpass", 1, 1, 90.0, 12.0, workers=1), paired_seq=0),
            block_row("bare", 2, 1, 50.0, 20.0), dict(block_row("bare", 3, 1, 60.0, 15.0, workers=1), paired_seq=2),
            block_row("bare", 4, 2, 80.0, 10.0), dict(block_row("bare", 5, 2, 70.0, 30.0, workers=1), paired_seq=4)]
    path = tmp_path / "cost.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    cost_study.finish(str(path))
    got = read_rows(path)
    assert got[1]["ratio_to_bare"] == 0.75, got[1]
    assert got[1]["cpu_ratio_to_bare"] == round((12.0 / 10.0) / (15.0 / 20.0), 4), got[1]
    assert got[3]["ratio_to_bare"] is None  # bare's own

    def run(r):
        return WrkRun(r["seq"] + 1, r["arm"], r["workers"], "close", r["round"], r["requests_per_s"], 1.0, 2.0, (),
                      ratio=r["ratio_to_bare"], seq=r["seq"], paired_seq=r.get("paired_seq"))
    check = check_wrk_rows(lambda mode: mode, True)
    check(Path("cost.jsonl"), [run(r) for r in got])
    straight = [run(dict(r, ratio_to_bare=0.9) if r["arm"] == "fdpass" else r) for r in got]
    with pytest.raises(InputError, match="disagrees"):
        check(Path("cost.jsonl"), straight)


def block_row(arm, seq, rnd, rps, cpu=None, mode="close", workers=2):
    row = {"arm": arm, "workers": workers, "mode": mode, "round": rnd, "seq": seq, "requests_per_s": rps}
    if cpu is not None:
        row["cpu_us_per_request"] = cpu
    return row


def test_finish_cost_fills_ratios(tmp_path):
    """ratio_to_bare is filled once the block is in: a run's req/s over bare's
    at its place (the bare runs around it, on a line), whatever the order;
    bare's own is null; a run beyond bare's last takes bare's last; error
    rows untouched."""
    rows = [block_row("bare", 0, 1, 100.0), block_row("lt", 1, 1, 150.0), block_row("bare", 2, 1, 200.0),
            {"arm": "lt", "workers": 2, "mode": "close", "round": 2, "error": "server did not become ready"},
            block_row("bare", 3, 2, 300.0), block_row("lt", 4, 2, 30.0),
            block_row("lt", 0, 1, 90.0, mode="keepalive")]
    path = tmp_path / "cost.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    cost_study.finish(str(path))
    got = read_rows(path)
    assert [r.get("ratio_to_bare", "absent") for r in got] == [None, 1.0, None, "absent", None, 0.1, None]


def test_finish_cost_fills_cpu_ratios(tmp_path):
    """cpu_ratio_to_bare is CPU µs per request over bare's at the run's place;
    the ratio to the knob-off arm is the run's ratio to bare over the knob-off
    arm's ratio to bare in the same round (each against bare at its own
    moment); a row without CPU figures gets no CPU ratio key at all."""
    rows = [block_row("bare", 0, 1, 100.0, 20.0), block_row("fdpass", 1, 1, 90.0, 22.0),
            block_row("bare", 2, 1, 100.0, 20.0), block_row("fdpass-off", 3, 1, 95.0, 23.1),
            block_row("bare", 4, 1, 100.0, 22.0), block_row("bare", 0, 1, 100.0, mode="keepalive")]
    path = tmp_path / "cost.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    cost_study.finish(str(path))
    got = read_rows(path)
    assert [r.get("cpu_ratio_to_bare", "absent") for r in got] == [None, 1.1, None, 1.1, None, "absent"]
    assert got[1]["cpu_ratio_to_knob_off"] == 1.0
    assert [r["ratio_to_bare"] for r in got] == [None, 0.9, None, 0.95, None, None]
    assert got[1]["cpu_ratio_partners"] == {"to_bare": "bare", "to_knob_off": "fdpass-off", "to_reference": "reuseport-bpf"}
    assert got[1]["cpu_ratio_to_reference"] is None  # reuseport-bpf did not run that round


def test_finish_cost_fills_the_ratio_to_the_reference_arm(tmp_path):
    """reuseport-bpf's natural baseline is reuseport (its reference in arms.py,
    another variant, so not a knob-off arm): its req/s and CPU ratios to it
    are filled like the knob-off ratios, and the row names the partner."""
    rows = [block_row(arm, seq, 1, rps, cpu, mode="keepalive")
            for seq, (arm, rps, cpu) in enumerate((("bare", 100.0, 10.0), ("reuseport", 110.0, 10.0),
                                                   ("bare", 100.0, 10.0), ("reuseport-bpf", 99.0, 10.5),
                                                   ("bare", 100.0, 10.0)))]
    path = tmp_path / "cost.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    cost_study.finish(str(path))
    bpf = read_rows(path)[3]
    assert bpf["ratio_to_reference"] == 0.9 and bpf["cpu_ratio_to_reference"] == 1.05, bpf
    assert bpf["cpu_ratio_partners"] == {"to_bare": "bare", "to_reference": "reuseport"}
    assert "reuseport-bpf / reuseport, 2w, keepalive" in cost_study.cpu_series(rows)


# ---------------------------------------------------------------- make bench's stopping rule


def cost_rows(fdpass_cpu, bare_cpu=10.0, mode="keepalive"):
    """bare and fdpass at 2 workers as a block runs them (bare, then fdpass
    and bare each round), one round per entry of fdpass_cpu (CPU µs per
    request), bare at bare_cpu every run: fdpass / bare = fdpass_cpu / bare_cpu."""
    rows = [block_row("bare", 0, 1, 1000.0, bare_cpu, mode)]
    for rnd, cpu in enumerate(fdpass_cpu, 1):
        for arm, value in (("fdpass", cpu), ("bare", bare_cpu)):
            rows.append(block_row(arm, len(rows), rnd, 1000.0, value, mode))
    return rows


def bench_plan(**kw):
    """make bench's plan over bare and fdpass (cost runs those two arms)."""
    return Plan(**dict(dict(arms=("bare", "fdpass"), bench_arms=("bare", "fdpass"), bench_within=0.02,
                            bench_max_rounds=20, bench_rounds=3, bench_seconds=1), **kw))


def test_stopping_rule_stops_when_every_ratio_is_within():
    """Three rounds of fdpass / bare at 1.000, 1.001, 0.999: the 95 % half-width
    (t(2) 4.303 x sd 0.001 / sqrt 3 = 0.0025) is within +-2 % of the mean, so
    the rule stops with every ratio converged and no cap. (fdpass's knob-off
    arm did not run: its ratio is left out, not waited for.)"""
    series = cost_study.cpu_series(cost_rows([10.0, 10.01, 9.99]))
    assert series == {"fdpass / bare, 2w, keepalive": [1.0, 1.001, 0.999]}
    go, state = common.keep_going(series, 0.02, 3, 20)
    assert not go and state["converged"] and state["cap_hit"] is None
    ratio = state["ratios"]["fdpass / bare, 2w, keepalive"]
    assert ratio["converged"] and ratio["rounds"] == 3 and abs(ratio["half_width"] - 0.0025) < 0.0001, ratio


def test_stopping_rule_continues_while_a_ratio_is_wide():
    """fdpass / bare at 0.9, 1.1, 1.0: the half-width (0.248) is far outside
    +-2 %, so the rule asks for another round (the block runs it). One round
    alone has no interval and never counts as converged."""
    rows = cost_rows([9.0, 11.0, 10.0])
    go, state = common.keep_going(cost_study.cpu_series(rows), 0.02, 3, 20)
    assert go and not state["converged"] and state["cap_hit"] is None
    go, state = common.keep_going(cost_study.cpu_series(cost_rows([10.0])), 0.02, 1, 20)
    assert go and state["ratios"]["fdpass / bare, 2w, keepalive"]["half_width"] is None


def test_stopping_rule_stops_at_the_cap_and_reports_it():
    """The same wide ratio at the cap (3 rounds run, cap 3): the rule stops and
    reports the cap, naming the ratio that did not converge with its
    half-width and its half-width over the mean; the converged one is not
    named. trace_overhead's series (traced / untraced per mode) goes through
    the same rule."""
    rows = cost_rows([9.0, 11.0, 10.0]) + cost_rows([10.0, 10.0, 10.0], mode="close")
    go, state = common.keep_going(cost_study.cpu_series(rows), 0.02, 3, 3)
    assert not go and not state["converged"]
    assert set(state["cap_hit"]) == {"fdpass / bare, 2w, keepalive"}, state["cap_hit"]
    assert abs(state["cap_hit"]["fdpass / bare, 2w, keepalive"]["half_width"] - 0.2484) < 0.001
    assert abs(state["cap_hit"]["fdpass / bare, 2w, keepalive"]["relative"] - 0.2484) < 0.001
    assert state["ratios"]["fdpass / bare, 2w, close"]["converged"]
    trace_rows = [{"traced": t, "mode": "keepalive", "round": n, "requests_per_s": 1000.0, "cpu_us_per_request": c}
                  for n, (off, on) in enumerate([(10.0, 10.5), (10.0, 10.1)], 1) for t, c in ((False, off), (True, on))]
    series = trace_overhead.cpu_series(trace_rows)
    assert series == {"traced / untraced, keepalive": [1.05, 1.01]}
    go, state = common.keep_going(series, 0.02, 2, 2)
    assert not go and set(state["cap_hit"]) == {"traced / untraced, keepalive"}
    # the passive state's ratio is a series of its own, held to the same rule
    passive_rows = trace_rows + [{"state": "passive", "traced": False, "mode": "keepalive", "round": n,
                                  "requests_per_s": 1000.0, "cpu_us_per_request": c}
                                 for n, c in ((1, 10.0), (2, 10.4))]
    series = trace_overhead.cpu_series(passive_rows)
    assert series == {"traced / untraced, keepalive": [1.05, 1.01], "passive / untraced, keepalive": [1.0, 1.04]}
    go, state = common.keep_going(series, 0.02, 2, 2)
    assert not go and set(state["cap_hit"]) == {"traced / untraced, keepalive", "passive / untraced, keepalive"}


def test_a_failed_programs_run_is_a_row_not_a_lost_block(monkeypatch, tmp_path):
    """A programs run comes after its mode's rounds: when it fails (its
    server or watcher does not start, or the kernel will not count), it is
    a row with the reason, so the block returns and the rounds before it
    are kept, and the report says it was not measured."""
    from probes.harness.lifecycle import StepFailed
    from probes.harness import bpf_stats

    def fails(exc):
        def server_run(*args, **kwargs):
            raise exc
        return server_run
    for exc in (StepFailed("the tracer did not attach"), bpf_stats.StatsUnavailable("BPF_ENABLE_STATS: EPERM")):
        monkeypatch.setattr(trace_overhead, "ServerRun", fails(exc))
        row = trace_overhead.programs_run(str(tmp_path), "passive", "close")
        assert row["kind"] == "programs" and row["state"] == "passive" and row["mode"] == "close", row
        assert row["error"] == str(exc) and "programs" not in row, row


def test_trace_overhead_fills_its_ratios():
    """In a block (rows with "seq"), each traced, passive and A/A row gets its
    req/s and CPU ratios over the untraced server at its moment (the
    untraced runs around it, on a line): ratio_traced, ratio_passive,
    ratio_aa and their cpu_ratio_*. Rows from before the block method (no
    "seq") are read as they were: over the untraced run of their mode and
    round, a row from before the passive state (no "state") read by
    "traced", and a round without its untraced run gives null ratios."""
    block = [{"state": s, "traced": s == "traced", "mode": "keepalive", "round": 1, "seq": n,
              "requests_per_s": rps, "cpu_us_per_request": cpu}
             for n, (s, rps, cpu) in enumerate((("untraced", 1000.0, 10.0), ("traced", 990.0, 10.5),
                                                ("untraced", 1000.0, 10.0), ("untraced-aa", 1010.0, 10.1),
                                                ("untraced", 1000.0, 10.2), ("passive", 980.0, 10.2),
                                                ("untraced", 960.0, 10.2)))]
    trace_overhead.fill_ratio_traced(block)
    assert (block[1]["ratio_traced"], block[1]["cpu_ratio_traced"]) == (0.99, 1.05)
    assert (block[3]["ratio_aa"], block[3]["cpu_ratio_aa"]) == (1.01, 1.0)
    assert (block[5]["ratio_passive"], block[5]["cpu_ratio_passive"]) == (1.0, 1.0)
    assert not any(k.startswith(("ratio", "cpu_ratio")) for k in block[0])
    rows = [{"state": "untraced", "traced": False, "mode": "keepalive", "round": 1, "requests_per_s": 1000.0,
             "cpu_us_per_request": 10.0},
            {"state": "traced", "traced": True, "mode": "keepalive", "round": 1, "requests_per_s": 990.0,
             "cpu_us_per_request": 10.3},
            {"state": "passive", "traced": False, "mode": "keepalive", "round": 1, "requests_per_s": 980.0,
             "cpu_us_per_request": 10.2},
            {"traced": False, "mode": "close", "round": 1, "requests_per_s": 100.0, "cpu_us_per_request": 50.0},
            {"traced": True, "mode": "close", "round": 1, "requests_per_s": 95.0, "cpu_us_per_request": 52.0},
            {"state": "passive", "traced": False, "mode": "close", "round": 2, "requests_per_s": 90.0,
             "cpu_us_per_request": 51.0}]
    trace_overhead.fill_ratio_traced(rows)
    assert (rows[1]["ratio_traced"], rows[1]["cpu_ratio_traced"]) == (0.99, 1.03)
    assert (rows[2]["ratio_passive"], rows[2]["cpu_ratio_passive"]) == (0.98, 1.02)
    assert "ratio_traced" not in rows[2] and "ratio_passive" not in rows[1] and "ratio_traced" not in rows[0]
    assert (rows[4]["ratio_traced"], rows[4]["cpu_ratio_traced"]) == (0.95, 1.04)
    assert (rows[5]["ratio_passive"], rows[5]["cpu_ratio_passive"]) == (None, None)


def toggled_windows(per_byte):
    """Windows off and on alternately (off first) with these CPU ns per byte,
    1000 bytes each."""
    return [{"on": i % 2 == 1, "cpu_ns": round(v * 1000), "bytes": 1000, "s": 0.5} for i, v in enumerate(per_byte)]


def test_toggled_pairs_are_on_over_the_off_windows_around_them():
    """Each on window's CPU per byte over the mean of the off windows before
    and after it (a drift over the three cancels: 10, 10.5 on, 11 gives 1.0);
    the run's ratio is the median of its pairs, so one stalled window moves
    one pair and not the run; a window that read nothing gives no ratio;
    CPU per request is the windows' CPU over bytes / bytes per request."""
    wins = toggled_windows([10.0, 10.5, 11.0, 11.55, 11.0, 22.0, 11.0])
    assert toggling.pair_ratios(wins) == [1.0, 1.05, 2.0]
    assert toggling.run_ratio(wins) == 1.05
    wins[3]["bytes"] = 0
    assert toggling.pair_ratios(wins) == [1.0, None, 2.0] and toggling.run_ratio(wins) == 1.5
    assert toggling.run_ratio(toggled_windows([10.0])) is None
    wins = toggled_windows([10.0, 12.0, 10.0])
    assert toggling.per_request_us(wins, False, 100) == 1.0 and toggling.per_request_us(wins, True, 100) == 1.2
    assert toggling.per_request_us(wins, True, None) is None


def test_toggled_windows_switch_the_watcher_in_turn(monkeypatch):
    """toggling.windows over this process: 2 pairs + 1 windows, off first and
    last, the watcher resumed before each on window and paused before each
    off one after the first (it starts paused, and ends paused with no
    further switch), each window's CPU and bytes read as they grew."""
    monkeypatch.setattr(toggling, "LEAD_S", 0)
    monkeypatch.setattr(toggling, "GAP_S", 0)
    monkeypatch.setattr(toggling, "WINDOW_S", 0.01)
    calls = []
    wins = toggling.windows(os.getpid(), calls.append, 3)
    assert [w["on"] for w in wins] == [False, True, False, True, False, True, False]
    assert calls == [True, False, True, False, True, False]
    assert all(w["cpu_ns"] >= 0 and w["bytes"] >= 0 and w["s"] >= 0.01 for w in wins), wins


def test_toggled_rows_keep_their_own_ratios():
    """A toggled row carries its run's ratio (on over off, from its windows):
    filling the alternated method's ratios leaves it as it is, and the
    stopping rule's series are those ratios, per state and mode, in round
    order."""
    rows = [{"state": state, "traced": state == "traced", "mode": "close", "round": n, "seq": 3 * (n - 1) + k,
             "method": "toggled", "requests_per_s": 1000.0, field: value}
            for n, values in ((1, (1.001, 1.02, 1.01)), (2, (0.999, 1.03, 1.02)))
            for k, ((state, field), value) in enumerate(zip((("untraced-aa", "cpu_ratio_aa"),
                                                             ("traced", "cpu_ratio_traced"),
                                                             ("passive", "cpu_ratio_passive")), values))]
    before = [dict(r) for r in rows]
    trace_overhead.fill_ratio_traced(rows)
    assert rows == before
    assert trace_overhead.cpu_series(rows) == {"untraced-aa / untraced, close": [1.001, 0.999],
                                               "traced / untraced, close": [1.02, 1.03],
                                               "passive / untraced, close": [1.01, 1.02]}


@pytest.mark.skipif(os.geteuid() != 0, reason="the tracer and the diagnosis load BPF programs: needs root")
@needs_wrk
def test_trace_overhead_runs_the_passive_diagnosis(tmp_path):
    """A quick trace_overhead (keep-alive, two rounds, QUICK_PAIRS on windows
    a run): each round runs untraced-aa, traced, passive and passive-hooks
    once, each on a new server (every run's workers its own); every run's
    windows alternate off and on, off first and last, and read the server's
    CPU and requests in each; each watcher loaded for its own run only (a tracer's and a
    diagnosis's output per traced or passive run in raw/, none for any
    other run), switched at every window and acknowledging each switch
    (its paused and resumed lines, as many as the run's switches); the
    passive rows carry the diagnosis's own account (traced, the closest
    variant bare, every wrk connection accepted and served, since it was
    attached before wrk started, and a pause shorter than its watch); the
    passive-hooks rows' diagnosis said it attached its hooks alone and
    counted nothing (its programs return at once), though wrk's connections
    came while it was on; after the rounds, one programs run per watcher,
    whose kernel counts saw the watcher's programs run (the passive watch's
    recv program at least once per request: the server reads each request,
    wrk each answer), the hooks alone's the same programs; no tracer or diagnosis left running; the
    report's table, the A/A floor, the passive verdict, the hooks' line and
    the programs table. After them, one server profile run per state
    (untraced-aa too): perf's samples of the server hold nothing in the
    watchers' kernel paths without a watcher, and hold the passive watch's
    recv program and the syscall tracepoints' slow path with it; the
    report's profile table."""
    results = tmp_path / "r"
    before = pids_running(os.path.join(ROOT, "bin", "acceptlab-diagnose"))
    before_trace = pids_running(os.path.join(ROOT, "bin", "acceptlab-trace"))
    res = subprocess.run([*CAMPAIGN, "--platform", "linux", "--studies", "trace_overhead", "--quick",
                          "--results-dir", str(results), "--no-canonical"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert "0 of 1 steps failed or skipped" in res.stdout, res.stdout
    run = run_dir_of(results)
    rows = sorted(read_rows(run / "trace_overhead.jsonl"), key=lambda r: r["seq"])
    programs = [r for r in rows if r.get("kind") == "programs"]
    profiles = [r for r in rows if r.get("kind") == "server_profile"]
    rows = [r for r in rows if r.get("kind") not in ("programs", "server_profile")]
    assert [r["state"] for r in programs] == ["traced", "passive", "passive-hooks"], programs
    assert [r["state"] for r in profiles] == ["untraced-aa", "traced", "passive", "passive-hooks"], profiles
    for r in profiles:
        assert "error" not in r and r["samples"] > 0 and r["requests"] > 0 and r["cpu_us_per_request"] > 0, r
        assert set(r["paths"]) == {"syscall tracepoint", "dispatch", "programs"}, r
    profile = {r["state"]: r for r in profiles}
    # no watcher: none of the three paths is in the server's samples; the
    # passive watch: its recv program, which runs at each of the server's
    # reads (two a request), and the syscall tracepoints' slow path (its
    # accept exits make every syscall of the server take it) are
    assert sum(profile["untraced-aa"]["paths"].values()) == 0, profile["untraced-aa"]
    assert any(p["symbol"].endswith("_on_recv") for p in profile["passive"]["programs"]), profile["passive"]
    assert profile["passive"]["paths"]["syscall tracepoint"] > 0, profile["passive"]
    for r in programs:
        assert r["mode"] == "keepalive" and r["requests"] > 0 and "error" not in r, r
        ran = {p["name"]: p for p in r["programs"] if p["events"] > 0}
        assert ran and all(p["run_ns"] > 0 and p["ns_per_event"] > 0 for p in ran.values()), r
        if r["state"] != "traced":
            assert ran["on_recv"]["events"] >= r["requests"], r
    # the hooks alone are the same programs, by name, and they ran where the watch's did
    names = [{p["name"] for p in r["programs"]} for r in programs[1:]]
    assert names[0] == names[1], names
    pairs = toggling.QUICK_PAIRS
    for rnd in (1, 2):
        mine = [r for r in rows if r["round"] == rnd]
        assert sorted(r["state"] for r in mine) == ["passive", "passive-hooks", "traced", "untraced-aa"], mine
    # A new server for every run: each run's ready line (its row's port) names
    # workers no other run had. Not the ports alone: a port one server
    # closed may be drawn again for the next.
    readies = [json.loads(next(line for line in (run / "raw" / ("trace-overhead-%s-keepalive-r%d.ready"
                                                               % (r["state"], r["round"]))).read_text().splitlines()
                                if line.startswith("{"))) for r in rows]
    assert [d["port"] for d in readies] == [r["port"] for r in rows], (readies, rows)
    workers = [{w["pid"] for w in d["workers"]} for d in readies]
    assert len(set().union(*workers)) == sum(map(len, workers)), "a server kept from one run to another: %r" % workers
    field = {"untraced-aa": "cpu_ratio_aa", "traced": "cpu_ratio_traced", "passive": "cpu_ratio_passive",
             "passive-hooks": "cpu_ratio_passive_hooks"}
    passive = ("passive", "passive-hooks")
    for r in rows:
        assert r["method"] == "toggled" and r["netns"] is True, r
        assert [w["on"] for w in r["windows"]] == [i % 2 == 1 for i in range(2 * pairs + 1)], r["windows"]
        assert all(w["bytes"] > 0 and w["cpu_ns"] > 0 for w in r["windows"]), r["windows"]
        assert len(r["pair_ratios"]) == pairs and r[field[r["state"]]] > 0 and "cpu_converged" in r, r
        assert r["bytes_per_request"] > 0 and r["cpu_us_per_request_off"] > 0 and r["cpu_us_per_request_on"] > 0
        assert r.get("watched") == ("toggled" if r["state"] != "untraced-aa" else None), r
        prefix = run / "raw" / ("trace-overhead-%s-keepalive-r%d" % (r["state"], r["round"]))
        assert Path(str(prefix) + ".diagnose.jsonl").exists() == (r["state"] in passive), r
        assert Path(str(prefix) + ".trace.jsonl").exists() == (r["state"] == "traced"), r
        if r["state"] == "passive":
            d = r["diagnosis"]
            assert d["traced"] is True and d["closest_variant"] == "bare", r
            # attached before wrk started: it followed every connection wrk made (64, and wrk's first)
            assert d["accepted"] >= 64 and d["served"] >= 64 and 0 < d["paused_s"] < d["duration_s"], r
        if r["state"] == "passive-hooks":
            d = r["diagnosis"]
            # its programs return at once: wrk's requests came while it was on, and it counted none
            assert d["traced"] is True and d["accepted"] == 0 and d["served"] == 0, r
            assert r["requests"] > 0 and 0 < d["paused_s"] < d["duration_s"], r
        if r["state"] != "untraced-aa":
            key = "kind" if r["state"] in passive else "type"
            raw = Path(str(prefix) + (".diagnose.jsonl" if r["state"] in passive else ".trace.jsonl"))
            lines = [json.loads(line) for line in raw.read_text().splitlines() if line.startswith("{")]
            said = [e.get(key) for e in lines]
            if r["state"] in passive:
                attached = [e for e in lines if e.get("kind") == "attached"]
                assert attached and attached[0].get("hooks_only", False) == (r["state"] == "passive-hooks"), lines
            # paused once after attaching, then one switch before each window after the first
            assert said.count("paused") == pairs + 1 and said.count("resumed") == pairs, said
    assert pids_running(os.path.join(ROOT, "bin", "acceptlab-diagnose")) <= before, "a diagnosis was left running"
    assert pids_running(os.path.join(ROOT, "bin", "acceptlab-trace")) <= before_trace, "a tracer was left running"
    out = tmp_path / "linux.md"
    rep = subprocess.run([*REPORT, "--results-dir", str(results), "--run", run.name, "--out", str(out)], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert rep.returncode == 0, rep.stderr
    text = out.read_text()
    assert "| Keep-alive | passive | " in text and "| Keep-alive | untraced-aa | " in text, text
    assert "Keep-alive: the A/A floor, sham windows (nothing switched), " in text
    assert "Keep-alive: CPU per request passive on/off (the diagnosis's passive watch attached" in text
    assert "| Keep-alive | passive-hooks | " in text, text
    assert ("Keep-alive: CPU per request on/off with the passive watch's hooks alone (each program returning at "
            "once), judged on the passive watch's goal: ") in text, text
    assert "### What each program costs per event" in text and "| Keep-alive | passive | on_recv | " in text, text
    assert "### Where a watcher's cost lands in the server" in text and "| Keep-alive | passive | " in text, text


def test_bad_stopping_rule_options_exit_2(tmp_path):
    """--bench-within is a fraction (0.02: +-2 %) and --bench-max-rounds a
    count no smaller than the planned rounds: anything else is exit 2 with
    one line naming the option, before anything runs."""
    base = [*CAMPAIGN, "--platform", "linux", "--studies", "cost", "--plan",
            "--results-dir", str(tmp_path / "r")]
    for extra, named in ((["--bench-within", "2"], "--bench-within 2:"),
                         (["--bench-within", "0"], "--bench-within 0:"),
                         (["--bench-max-rounds", "0"], "--bench-max-rounds 0:"),
                         (["--bench-within", "0.02", "--bench-rounds", "5", "--bench-max-rounds", "3"],
                          "--bench-max-rounds 3:"),
                         (["--cost-seconds", "0"], "--cost-seconds 0:")):
        res = subprocess.run(base + extra, cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert res.returncode == 2 and named in res.stderr and len(res.stderr.strip().splitlines()) == 1, \
            (extra, res.stderr)
    assert not (tmp_path / "r").exists()


@needs_wrk
def test_tiny_bench_records_rounds_and_reports_the_cap(tmp_path):
    """A tiny make bench (cost, bare and fdpass at 2 workers, 1 s runs, one
    planned round, cap 2, a bound no noisy ratio meets): one round has no
    interval, so a second round always runs; at the cap it stops. The rows hold
    both rounds and each ratio's verdict (cpu_converged), meta.json the rule
    and its outcome, the progress names the added round and the cap, and the
    report's CPU table gives the rounds and marks what did not converge."""
    results = tmp_path / "r"
    res = subprocess.run([*CAMPAIGN, "--platform", "linux", "--studies", "cost", "--bench-arms", "bare,fdpass",
                          "--bench-seconds", "1", "--bench-rounds", "1", "--bench-within", "0.0001",
                          "--bench-max-rounds", "2", "--results-dir", str(results), "--no-canonical"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    for mode in ("keepalive", "close"):
        assert "cost %s: 1 rounds run" % mode in res.stdout, res.stdout
        assert "cost %s: 2 rounds run" % mode in res.stdout, res.stdout
    run = run_dir_of(results)
    rows = read_rows(run / "cost.jsonl")
    # paired: each round one fdpass run beside one of bare
    assert sorted((r["arm"], r["mode"], r["round"]) for r in rows) == sorted(
        [(a, m, n) for a in ("bare", "fdpass") for m in ("keepalive", "close") for n in (1, 2)]), rows
    stopping = json.loads((run / "meta.json").read_text())["parameters"]["cost"]["stopping"]
    assert stopping["within"] == 0.0001 and stopping["max_rounds"] == 2
    outcome = stopping["outcome"]
    assert outcome["rounds_run"] == 2
    assert set(outcome["ratios"]) == {"fdpass / bare, 2w, keepalive", "fdpass / bare, 2w, close"}
    wide = {n for n, v in outcome["ratios"].items() if not v["converged"]}
    assert set(outcome["cap_hit"] or {}) == wide
    for r in rows:
        assert r["stopping"]["rounds_run"] == 2 and r["stopping"]["cap_reached"] is True, r
        assert r["stopping"]["within"] == 0.0001 and r["stopping"]["max_rounds"] == 2, r
        if r["arm"] == "fdpass":
            name = "fdpass / bare, 2w, %s" % r["mode"]
            assert r["cpu_converged"]["to_bare"] == outcome["ratios"][name]["converged"], r
    if wide:
        assert "the cap of 2 rounds was reached" in res.stdout, res.stdout
    out = tmp_path / "linux.md"
    rep = subprocess.run([*REPORT, "--results-dir", str(results), "--run", run.name, "--out", str(out)], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert rep.returncode == 0, rep.stderr
    text = out.read_text()
    assert "at most 2: 2 rounds ran" in text
    assert [l for l in text.splitlines() if l.startswith("| fdpass | 2 | Keep-alive | 2 |")], text
    if wide:
        assert "The cap of 2 rounds was reached" in text and "†" in text


@contextlib.contextmanager
def child_under_a_shell(code):
    """A shell (the root) whose child runs code (which waits for a line on
    stdin before it does anything), started in a session of its own; yields
    the shell once its child has appeared, and kills the group afterwards."""
    parent = subprocess.Popen(["sh", "-c", "%s -c \"$0\"; :" % PYTHON, code], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while len(process_tree(parent.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(process_tree(parent.pid)) >= 2, "the child never appeared under the shell"
        yield parent
    finally:
        os.killpg(parent.pid, signal.SIGKILL)
        parent.wait()


def test_cpu_meter_counts_every_process_of_the_tree():
    """CpuMeter counts the CPU of the root and its descendants: a
    child of the shell (the root) that spins 0.2 s by its own clock
    (time.process_time) inside the meter's block is counted at no less than
    what its clock says it spun (both are the scheduler's count)."""
    code = ("import time, sys\n"
            "sys.stdin.readline()\n"
            "t0 = time.process_time()\n"
            "while time.process_time() - t0 < 0.2: pass\n"
            "print(int((time.process_time() - t0) * 1e9), flush=True)\n"
            "time.sleep(60)\n")
    with child_under_a_shell(code) as parent:
        with CpuMeter(parent.pid) as meter:
            parent.stdin.write("go\n")
            parent.stdin.flush()
            spun = int(parent.stdout.readline())
        assert meter.ns >= spun, "the meter saw %d ns of the child's %d ns spin" % (meter.ns, spun)


def test_cpu_meter_counts_context_switches():
    """CpuMeter reads each thread's context switches with its CPU
    time: a child of the shell that sleeps 20 times inside the meter's block
    (each sleep blocks it: a voluntary switch) is counted at 20 voluntary
    switches or more; nothing it does is a negative count."""
    code = ("import time, sys\n"
            "sys.stdin.readline()\n"
            "for _ in range(20): time.sleep(0.002)\n"
            "print('slept', flush=True)\n"
            "time.sleep(60)\n")
    with child_under_a_shell(code) as parent:
        with CpuMeter(parent.pid) as meter:
            parent.stdin.write("go\n")
            parent.stdin.flush()
            assert parent.stdout.readline() == "slept\n"
        assert meter.switches["voluntary"] >= 20, meter.switches
        assert meter.switches["involuntary"] >= 0, meter.switches
        fields = cpu_fields(meter.ns, 10, switches=meter.switches)
        assert fields["ctx_voluntary"] == meter.switches["voluntary"]
        assert fields["ctx_voluntary_per_request"] == round(meter.switches["voluntary"] / 10, 5)


# ---------------------------------------------------------------- the wrk parser

KEEPALIVE_SAMPLE = """\
Running 2s test @ http://127.0.0.1:36335/
  2 threads and 64 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   310.79us  255.79us   5.33ms   94.91%
    Req/Sec    73.88k    22.64k  123.37k    75.00%
  Latency Distribution
     50%  273.00us
     75%  356.00us
     90%  452.00us
     99%    1.21ms
  293855 requests in 2.00s, 36.99MB read
Requests/sec: 146834.70
Transfer/sec:     18.48MB
"""

ERRORS_SAMPLE = """\
Running 1m test @ http://127.0.0.1:40000/work?us=500
  2 threads and 32 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   850.12ms  400.00ms   1.99s    70.00%
    Req/Sec    10.00      5.00    20.00     60.00%
  Latency Distribution
     50%  750.00ms
     75%    1.10s
     90%    1.50s
     99%    1.98s
  1200 requests in 1.00m, 150.00KB read
  Socket errors: connect 0, read 12, write 1, timeout 40
  Non-2xx or 3xx responses: 7
Requests/sec:     19.99
Transfer/sec:      2.50KB
"""


def test_wrk_output_parse_keepalive_sample_us_and_ms():
    """A clean run: no Socket errors line (wrk prints it only when one counter is
    non-zero), so every error counter is 0; 273.00us is 0.273 ms, 1.21ms is 1.21 ms,
    and the duration comes from "requests in 2.00s"."""
    got = wrk_output.parse(KEEPALIVE_SAMPLE)
    assert got == {"requests_per_s": 146834.7, "requests": 293855, "duration_s": 2.0,
                   "latency_ms": {"p50": 0.273, "p99": 1.21},
                   "errors": {"connect": 0, "read": 0, "write": 0, "timeout": 0, "non_2xx_3xx": 0}}


def test_wrk_output_parse_errors_and_seconds():
    """A troubled run: the Socket errors and Non-2xx lines are read into the error
    counters, latencies in s become ms (1.98s is 1980 ms), and a duration in
    minutes (1.00m) is 60 s."""
    got = wrk_output.parse(ERRORS_SAMPLE)
    assert got["errors"] == {"connect": 0, "read": 12, "write": 1, "timeout": 40, "non_2xx_3xx": 7}
    assert got["latency_ms"] == {"p50": 750.0, "p99": 1980.0}
    assert got["requests_per_s"] == 19.99 and got["requests"] == 1200 and got["duration_s"] == 60.0


@pytest.mark.parametrize("text, unit", [("750.00us", 0.75), ("2.50ms", 2.5), ("2.00s", 2000.0),
                                        ("1.50m", 90000.0), ("12us", 0.012)])
def test_wrk_time_units(text, unit):
    """wrk writes times as a number and one of us, ms, s, m (its format_time); each
    converts to milliseconds."""
    assert wrk_output.ms(text) == pytest.approx(unit)


@pytest.mark.parametrize("cut, why", [
    ("Requests/sec: 146834.70\n", "Requests/sec"),
    ("  Latency Distribution\n", "Latency Distribution"),
    ("     99%    1.21ms\n", "99%"),
])
def test_wrk_output_parse_rejects_incomplete_output(cut, why):
    """Output without the throughput line, the --latency block or its 99% line is
    not a measurement: ValueError naming what is missing (the campaign turns it
    into an error row), never a row with made-up zeros."""
    with pytest.raises(ValueError, match=why):
        wrk_output.parse(KEEPALIVE_SAMPLE.replace(cut, ""))


def test_wrk_output_parse_rejects_an_unknown_socket_errors_line():
    """A Socket errors line in a shape the parser does not know is an error, not
    silently zero errors."""
    with pytest.raises(ValueError, match="Socket errors"):
        wrk_output.parse(ERRORS_SAMPLE.replace("connect 0, read 12", "connect 0, reed 12"))


# ---------------------------------------------------------------- the report's new sections


@pytest.fixture
def results(tmp_path):
    """A writable copy of the report's fixture run (it holds cost.jsonl and payoff.jsonl)."""
    dest = tmp_path / "results" / "linux"
    shutil.copytree(FIXTURE_RESULTS, dest)
    return dest


def report_error(tmp_path):
    """Runs the report from tmp_path; asserts exit 1, one stderr line, no output
    written, and returns that line."""
    proc = subprocess.run([*REPORT, "--results-dir", "results/linux", "--out", "linux.md"],
                          cwd=tmp_path, env=packages_env(), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1, proc.stderr
    assert not (tmp_path / "linux.md").exists()
    return proc.stderr.rstrip("\n")


def edit_row(path, lineno, edit):
    lines = path.read_text().splitlines(keepends=True)
    row = json.loads(lines[lineno - 1])
    edit(row)
    lines[lineno - 1] = json.dumps(row) + "\n"
    path.write_text("".join(lines))


@pytest.mark.parametrize("study, line, edit, message", [
    ("cost", 3, lambda r: r.pop("requests_per_s"), 'missing required key "requests_per_s"'),
    ("cost", 1, lambda r: r.update(mode="pipelined"), '"mode" must be "keepalive" or "close", got "pipelined"'),
    ("cost", 2, lambda r: r.update(latency_ms={"p50": "fast"}),
     '"latency_ms" must be an object with numbers >= 0 "p50" and "p99"'),
    ("cost", 4, lambda r: r.update(time_wait_after=-1), '"time_wait_after" must be an integer >= 0 or null, got -1'),
    ("cost", 2, lambda r: r.update(ratio_to_bare=1.5),
     '"ratio_to_bare" 1.5 disagrees with 100188 req/s over bare\'s 101200 (line 1) = 0.9900'),
    ("cost", 6, lambda r: r.update(ratio_to_bare=0.97),
     '"ratio_to_bare" is 0.97 but no bare row with req/s > 0 was measured at 1 worker, Connection: close, round 2'),
    ("cost", 3, lambda r: r.update(requests_per_epoll_return=2.0,
                                   worker_loops=[{"index": 0, "requests": 30, "epoll_returns": 10}]),
     '"requests_per_epoll_return" 2.0 disagrees with "worker_loops": 30 requests over 10 returns'),
    ("cost", 3, lambda r: r.update(requests_per_epoll_return=1.0, worker_loops=[{"index": 0, "requests": 3}]),
     '"worker_loops" must be null or a non-empty list of objects with integers >= 0 "index", "requests" and '
     '"epoll_returns"'),
    ("payoff", 4, lambda r: r.update(errors={"read": -2}), '"errors" entry "read" must be an integer >= 0, got -2'),
    ("payoff", 1, lambda r: r.update(connections=0), '"connections" must be an integer >= 1, got 0'),
    ("payoff", 10, lambda r: r.update(error=None), '"error" must be a string, got null'),
    ("payoff", 2, lambda r: r.update(served_split="nine"),
     '"served_split" must be counts separated by "/" like "31/1", got "nine"'),
    ("trace_overhead", 2, lambda r: r.update(state="halfway"),
     '"state" must be one of untraced, untraced-aa, traced, passive, passive-hooks, got "halfway"'),
])
def test_malformed_rows_are_one_line_errors(results, tmp_path, study, line, edit, message):
    """A malformed cost or payoff row stops the report with exactly one line,
    `report: FILE:LINE: what`, as for the other studies: a missing key, a mode
    that is neither, a latency that is not numbers, a negative count, a ratio that
    disagrees with the req/s it claims to divide (or has no bare row to divide by),
    a bad error counter, a connection count of 0, an error that is not text, a
    per-worker split that is not counts, requests per epoll_wait return that
    are not the per-worker counts' quotient, per-worker counts without their
    returns."""
    edit_row(results / STAMP / (study + ".jsonl"), line, edit)
    assert report_error(tmp_path) == f"report: results/linux/{STAMP}/{study}.jsonl:{line}: {message}"


def test_client_text_says_when_the_client_set_the_req_s():
    """The anchor's findings say how busy wrk kept its CPU (the median run
    per mode, over the anchor's runs and ours), and, at CLIENT_BOUND_SHARE
    or more, that the client, not the server, set that mode's req/s (a req/s
    ratio there cannot show which server is faster); below it, only the
    share; runs that did not record it add nothing."""
    def run(mode, share):
        return WrkRun(1, "bare", 2, mode, 1, 1000.0, 1.0, 2.0, (), client_share=share)
    busy = cost_section.client_text([run("keepalive", 0.99), run("keepalive", 0.97), run("close", 0.6)], "nginx")
    assert "Keep-alive, 98 %; Connection: close, 60 %" in busy, busy
    assert "(Keep-alive) the client, not the server, set the req/s" in busy, busy
    idle = cost_section.client_text([run("keepalive", 0.5), run("close", 0.6)], "nginx")
    assert "Keep-alive, 50 %" in idle and "set the req/s" not in idle, idle
    assert cost_section.client_text([run("keepalive", None)], "nginx") == ""


def test_client_share_of_a_pair_is_both_wrk_together():
    """With the paired method two wrk share the client's CPUs: a pair's
    share is its two runs' together, counted once (a bare run is some run's
    partner, never a run alone, even when that run is not among those
    passed), so two wrk at half each are a busy client."""
    def run(arm, seq, share, paired=None):
        return WrkRun(seq, arm, 2, "keepalive", 1, 1000.0, 1.0, 2.0, (), seq=seq, paired_seq=paired,
                      client_share=share)
    pairs = [run("bare", 0, 0.49), run("nginx", 1, 0.49, 0), run("bare", 2, 0.5), run("lt", 3, 0.48, 2),
             run("bare", 4, 0.5)]  # the partner of a run not passed (bare-aa's, say): not a run alone
    assert cost_section.client_share(pairs, "keepalive") == pytest.approx(0.98)
    assert cost_section.client_bound(pairs, "keepalive")
    alone = [run("bare", 0, 0.6), run("lt", 1, 0.7)]
    assert cost_section.client_share(alone, "keepalive") == pytest.approx(0.65)


# ---------------------------------------------------------------- what went with the CPU per request

WHY_ARMS = ("a1", "a2", "a3", "a4", "a5")


def why_run(arm, rnd, cpu, involuntary, per_wakeup, served, voluntary=0.5, peer=None):
    return WrkRun(rnd, arm, 2, "keepalive", rnd, 1000.0, 1.0, 2.0, (), ratio=1.0, served=served, peer=peer,
                  cpu=(cpu, None), switches=(voluntary, involuntary), per_wakeup=per_wakeup,
                  worker_loops=None if per_wakeup is None else ((0, round(150 * per_wakeup), 100),
                                                                (1, round(50 * per_wakeup), 100)))


def why_text(runs, server_cpus=1):
    return "\n".join(cost_why.render_why(runs, list(WHY_ARMS) + ["nginx"], server_cpus))


def test_spearman_and_its_interval():
    """Spearman's rho is Pearson's on the ranks (ties share their mean rank):
    one swapped pair in four gives 0.8; a constant side gives None. Its 95 %
    interval (Fisher's z, variance 1.06 / (n - 3)) holds 0 for 0.8 over 4
    pairs and excludes it over 30."""
    assert cost_why.spearman([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(0.8)
    assert cost_why.ranks([5, 1, 5, 2]) == [3.5, 1.0, 3.5, 2.0]
    assert cost_why.spearman([1, 2, 3, 4], [7, 7, 7, 7]) is None
    low, high = cost_why.rho_interval(0.8, 4)
    assert low < 0 < high
    low, high = cost_why.rho_interval(0.8, 30)
    assert 0 < low < 0.8 < high


def test_what_went_with_cpu_is_said_only_where_every_round_resolves_it():
    """Five arms over two rounds: involuntary switches rise with CPU per
    request in both rounds (said: rose), requests per epoll_wait return fall
    with it in both (said: fell), voluntary switches do not follow it (no
    relationship), and the busiest worker's share follows it in round 1
    only, so the report does not read the ratios as a cost of spreading.
    The anchor, whose figures would break every relationship, is shown in
    the table and not counted ("our 5 arms")."""
    runs = []
    for rnd in (1, 2):
        for i, arm in enumerate(WHY_ARMS):
            served = ("9/9", "10/8", "12/6", "14/4", "16/2")[i if rnd == 1 else (3, 0, 4, 1, 2)[i]]
            runs.append(why_run(arm, rnd, 10.0 + i + rnd / 10, 0.01 * (i + 1), 3.0 - 0.4 * i, served,
                                voluntary=(0.3, 0.1, 0.5, 0.2, 0.4)[(i + rnd) % 5]))
        runs.append(why_run("nginx", rnd, 1.0, 9.0, None, None, peer="nginx-default"))
    text = why_text(runs)
    assert ("| a1 | 2 | Keep-alive | 9/9 14/4 | 10.10 10.20 | 0.010 0.010 | 0.100 0.500 | 3.00 [4.50/1.50] "
            "3.00 [4.50/1.50] |") in text, text
    assert "| nginx | 2 | Keep-alive | - - | 1.00 1.00 | 9.000 9.000 | 0.500 0.500 | - - |" in text
    assert "Across our 5 arms" in text
    assert ("- involuntary context switches per request: round 1 ρ +1.00 (+1.00 to +1.00, 5 arms); round 2 ρ +1.00 "
            "(+1.00 to +1.00, 5 arms): CPU per request rose with it in rounds 1, 2.") in text, text
    assert "- requests per epoll_wait return: round 1 ρ -1.00" in text
    assert ": CPU per request fell as it rose in rounds 1, 2." in text
    voluntary = [l for l in text.splitlines() if l.startswith("- voluntary")][0]
    assert voluntary.endswith("no relationship resolved in rounds 1, 2."), voluntary
    share = [l for l in text.splitlines() if l.startswith("- the busiest worker's share")][0]
    assert "rose with it in round 1" in share and "no relationship resolved in round 2" in share, share
    assert ("This run (Keep-alive at 2 workers, where the workers shared 1 CPU) does not show CPU per request going "
            "with how evenly an arm spread its connections in every round") in text


def test_spreading_is_said_when_every_round_shows_it():
    """When CPU per request is higher, round after round, where the busiest
    worker's share is smaller (the connections more evenly spread), the
    report says a ratio to bare then holds the cost of spreading; figures
    not recorded (older rows) are said to be not recorded."""
    runs = [why_run(arm, rnd, 10.0 + i, None, None, ("16/2", "14/4", "12/6", "10/8", "9/9")[i])
            for rnd in (1, 2) for i, arm in enumerate(WHY_ARMS)]
    runs = [r.__class__(**dict(r.__dict__, switches=None)) for r in runs]
    text = why_text(runs)
    assert "- involuntary context switches per request: not recorded in this run." in text
    assert "- requests per epoll_wait return: not recorded in this run." in text
    assert ("So in this run (Keep-alive at 2 workers, where the workers shared 1 CPU) CPU per request was higher, in "
            "every round, where an arm spread its connections more evenly over its workers") in text, text


def test_too_few_arms_give_no_relationship():
    """Three arms give no interval (Fisher's z needs more than 3): the
    finding says so rather than calling a relationship; four arms whose
    round lacks a figure for one of them are judged per factor, and the
    short round is said to have too few."""
    runs = [why_run(arm, 1, 10.0 + i, 0.01 * i, 2.0, "9/9") for i, arm in enumerate(WHY_ARMS[:3])]
    assert ("Only 3 arms of ours ran here, fewer than the 4 a rank correlation's interval needs, so no relationship "
            "is judged") in why_text(runs)
    runs = [why_run(arm, 1, 10.0 + i, 0.01 * i, None if i == 0 else 2.0, "9/9") for i, arm in enumerate(WHY_ARMS[:4])]
    text = why_text(runs)
    assert ("- requests per epoll_wait return: no round had 4 or more arms with both figures, and varying ones"
            in text), text
    assert "- involuntary context switches per request: round 1 ρ +1.00" in text, text


def test_duplicate_run_is_named_with_the_first_line(results, tmp_path):
    """The same arm, workers, connections and round twice is a corrupt file, not a
    third round: the repeat is named with the line of the first."""
    path = results / STAMP / "payoff.jsonl"
    first = path.read_text().splitlines()[0]
    with open(path, "a") as f:
        f.write(first + "\n")
    assert report_error(tmp_path) == (f"report: results/linux/{STAMP}/payoff.jsonl:13: round 1 of lt at "
                                      "2 workers, 8 connections is already on line 1")


def test_meta_cost_parameters_are_checked(results, tmp_path):
    """meta.json's parameters.cost is read for the section's opening sentence; a
    field of the wrong type is reported at its line in meta.json."""
    meta = results / STAMP / "meta.json"
    text = meta.read_text()
    assert text.count('"threads": 2') == 2
    meta.write_text(text.replace('"threads": 2', '"threads": "two"', 1))
    line = next(i for i, l in enumerate(meta.read_text().splitlines(), 1) if '"threads": "two"' in l)
    assert report_error(tmp_path) == (f'report: results/linux/{STAMP}/meta.json:{line}: '
                                      '"threads" must be an integer >= 1, got "two"')


def test_pin_tree_moves_every_thread_of_the_server(tmp_path):
    """pin_tree puts every thread of a server's process tree (the
    supervisor, each worker process and each worker thread) on the CPUs
    given, as the cost study pins the server before wrk starts: read back
    from each task's Cpus_allowed_list."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("one CPU: nothing to pin apart")
    for args in (["--variant", "bare"], ["--variant", "bare", "--threads"]):
        with ServerRun(args, 2, str(tmp_path / "pin")) as (proc, ready, _):
            pin_tree(proc.pid, {cpus[0]})
            tasks = [(p, t) for p in process_tree(proc.pid) for t in os.listdir("/proc/%d/task" % p)]
            assert len(tasks) >= 3, tasks  # the supervisor and two workers (processes or threads)
            for p, t in tasks:
                status = Path("/proc/%d/task/%s/status" % (p, t)).read_text()
                allowed = [l.split()[1] for l in status.splitlines() if l.startswith("Cpus_allowed_list")]
                assert allowed == [str(cpus[0])], (args, p, t, allowed)
