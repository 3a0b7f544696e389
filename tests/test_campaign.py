"""Tests for the campaign driver (probes/campaign.py) and `make measure`'s
platform check: a small real campaign writes the results layout the report
reads, and leaves no server running."""

import json
import os
import pathlib
import subprocess

from acceptlab.paths import module_cmd
from probes.harness import cpu
from tests.conftest import ROOT, SERVER, pids_running

CAMPAIGN = module_cmd("probes.campaign")
REPORT = module_cmd("report.report")
def server_pids():
    """Live processes running bin/acceptlab-server."""
    return pids_running(SERVER)


def test_quick_campaign_writes_results_and_report(tmp_path):
    """A one-round campaign over two arms writes meta.json, one
    balancing row per arm x shape with counts that add up to the shape's
    connections, raw tool output, points CANONICAL at the run, the report
    renders from it, and no server outlives the campaign."""
    before = server_pids()
    res = subprocess.run([*CAMPAIGN, "--platform", "linux", "--quick", "--arms", "bare,lt", "--studies", "balancing",
                          "--results-dir", str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert "[  6/6]" in res.stdout, "no progress lines: %s" % res.stdout
    stamp = (tmp_path / "CANONICAL").read_text().strip()
    run = tmp_path / stamp
    meta = json.loads((run / "meta.json").read_text())
    assert meta["platform"] == "linux" and meta["cpus"] == os.cpu_count()
    assert meta["parameters"]["arms_chosen"] == ["bare", "lt"]
    rows = [json.loads(l) for l in (run / "balancing.jsonl").read_text().splitlines()]
    assert [(r["arm"], r["shape"]) for r in rows] == [
        (v, s) for v in ("bare", "lt") for s in ("burst", "ramp", "keepalive")]
    for r in rows:
        assert "error" not in r, r
        assert sum(r["counts"].values()) + r["unanswered"] == r["connections"] == 32
        assert len(r["counts"]) == 2, "both workers listed (zeros included): %r" % r
    if os.geteuid() == 0:
        # The tracer ran beside every step: for these race arms the
        # acceptor serves, so its accepts won per worker equal the probe's
        # connections per worker, step by step.
        trace = [json.loads(l) for l in (run / "trace.jsonl").read_text().splitlines()]
        assert [(t["arm"], t["shape"]) for t in trace] == [(r["arm"], r["shape"]) for r in rows]
        for t in trace:
            assert t["cross_check"]["expect_equal"] and t["cross_check"]["equal"], t["cross_check"]
            assert sum(t["cross_check"]["tracer_won"].values()) == 32, t["cross_check"]
    assert (run / "raw" / "balancing-bare-burst.ready").exists()
    assert (run / "raw" / "balancing-bare-burst.server.jsonl").read_text().count("worker_exit") == 2
    out = tmp_path / "linux.md"
    rep = subprocess.run([*REPORT, "--results-dir", str(tmp_path), "--out", str(out)], cwd=ROOT,
                         capture_output=True, text=True)
    assert rep.returncode == 0, rep.stderr
    assert "| bare |" in out.read_text() and "| lt |" in out.read_text()
    assert server_pids() <= before, "servers left running: %s" % (server_pids() - before)


def test_campaign_records_a_failed_step_and_goes_on(tmp_path):
    """A step whose server cannot start (the server binary is swapped, via
    ACCEPTLAB_TEST_SERVER, for a script that exits 3 at once) is written as an
    error row carrying the exit code and the server's stderr, and the
    remaining steps still run."""
    fake = tmp_path / "bin"
    fake.mkdir()
    env = dict(os.environ, ACCEPTLAB_TEST_SERVER=str(fake / "acceptlab-server"))
    (fake / "acceptlab-server").write_text("#!/bin/sh\necho 'cannot start: test' >&2\nexit 3\n")
    os.chmod(fake / "acceptlab-server", 0o755)
    res = subprocess.run([*CAMPAIGN, "--platform", "linux", "--quick", "--arms", "bare",
                          "--studies", "balancing", "--results-dir", str(tmp_path / "r")], cwd=ROOT,
                         capture_output=True, text=True, timeout=120, env=env)
    assert res.returncode == 0, res.stderr
    stamp = (tmp_path / "r" / "CANONICAL").read_text().strip()
    rows = [json.loads(l) for l in (tmp_path / "r" / stamp / "balancing.jsonl").read_text().splitlines()]
    assert len(rows) == 3
    assert all("exited 3 before ready" in r["error"] and "cannot start: test" in r["error"] for r in rows)
    assert "3 of 3 steps failed or skipped" in res.stdout


def test_plan_lists_the_steps_and_measures_nothing(tmp_path):
    """--plan prints one line per step, study and label, in the order the
    campaign would run them, and exits 0 without measuring or writing
    results; shown as to a user who is not root, the steps of an arm that
    loads BPF say they would be skipped."""
    cmd = [*CAMPAIGN, "--platform", "linux", "--plan", "--quick", "--arms", "bare,reuseport-bpf",
           "--studies", "balancing,respawn", "--results-dir", str(tmp_path / "r")]
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=30,
                         env={k: v for k, v in os.environ.items() if k != "ACCEPTLAB_TEST_PLAN_AS_USER"})
    assert res.returncode == 0, res.stderr
    lines = [l.replace("   (skipped: needs root)", "") for l in res.stdout.splitlines()]  # when not root
    assert [l.split()[0] for l in lines] == ["balancing"] * 6 + ["respawn"] * 3, lines
    assert lines[0].split()[1:] == ["bare", "burst", "32"], lines
    assert not (tmp_path / "r").exists(), "--plan wrote results"
    user = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=30,
                          env=dict(os.environ, ACCEPTLAB_TEST_PLAN_AS_USER="1"))
    skipped = [l for l in user.stdout.splitlines() if l.endswith("   (skipped: needs root)")]
    assert skipped == [l + "   (skipped: needs root)" for l in lines if "reuseport-bpf" in l.split()], user.stdout
    assert len(skipped) == 5, user.stdout


def test_the_old_variants_flag_says_it_was_renamed():
    """--variants chose arms, not the server's --variant: it is --arms now,
    and the old name exits 2 with one line saying so."""
    for old in (["--variants", "bare"], ["--variants"], ["--variants=bare,lt"]):
        res = subprocess.run([*CAMPAIGN, "--platform", "linux", "--plan", *old], cwd=ROOT, capture_output=True,
                             text=True, timeout=30)
        assert res.returncode == 2 and res.stdout == "", (old, res.stdout)
        assert res.stderr.strip().splitlines() == ["campaign: --variants was renamed --arms"], (old, res.stderr)


def test_measure_rejects_other_platforms():
    """`make measure PLATFORM=macos` exits 2 naming the supported platform,
    before building or measuring anything."""
    res = subprocess.run(["make", "-s", "-C", ROOT, "measure", "PLATFORM=macos"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode != 0
    assert "PLATFORM=macos is not supported; use PLATFORM=linux" in res.stderr
    res = subprocess.run([*CAMPAIGN, "--platform", "bsd"], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 2 and "--platform bsd" in res.stderr


def test_interrupt_leaves_nothing_running(tmp_path):
    """Ctrl-C (SIGINT) in the middle of the placement study, while a CPU hog
    runs beside a worker: the campaign exits 130 naming where the partial
    results are, and leaves no server, hog, tracer or network namespace of
    its own behind (it kills what it started, by process group)."""
    import signal
    import time
    before = server_pids()
    proc = subprocess.Popen([*CAMPAIGN, "--platform", "linux", "--quick", "--studies", "placement",
                             "--arms", "bare,fdpass", "--no-canonical", "--results-dir", str(tmp_path)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # Steps 9-12 are the hog placements (7 placements x 2 arms, in order):
        # once step 8 is done, wait until a hog runs (its command line in /proc).
        seen = []
        for line in proc.stdout:
            seen.append(line)
            if line.startswith("[  8/"):
                break
        assert proc.poll() is None, "the campaign ended before its hog placements: %r" % seen[-5:]
        deadline = time.monotonic() + 60
        while True:
            # this campaign's hogs (its process tree), not another run's on the machine
            hogs = [str(p) for p in cpu.process_tree(proc.pid) if _cmdline(p).endswith("while True: pass")]
            if hogs or proc.poll() is not None or time.monotonic() > deadline:
                break
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert "interrupted; partial results in" in err
    assert hogs, "the hog placement was not running when interrupted"
    # The campaign kills and reaps its hogs before it exits: they are gone
    # now (a bounded wait only in case one is still being torn down).
    deadline = time.monotonic() + 10
    while [p for p in hogs if os.path.exists("/proc/" + p) and _cmdline(p)] and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not [p for p in hogs if os.path.exists("/proc/" + p) and _cmdline(p)], "a CPU hog outlived the campaign"
    assert server_pids() <= before, "servers left running"
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert "acceptlab-%d" % proc.pid not in netns


def _cmdline(pid):
    try:
        with open("/proc/%s/cmdline" % pid, "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


# ---------------------------------------------------------------- the peers and the cost anchor

def _nginx():
    import shutil
    return shutil.which("nginx") or (os.access("/usr/sbin/nginx", os.X_OK) and "/usr/sbin/nginx")


def _peer_dirs(raw):
    """The temp dirs the run's nginx peers ran in (their kept configurations name them)."""
    import re
    dirs = set()
    for conf in raw.glob("*nginx.conf"):
        dirs |= set(re.findall(r"^pid (\S+)/nginx\.pid;", conf.read_text(), re.M))
    return dirs


def _running_in(dirs):
    """Live processes whose command line or working directory is one of dirs."""
    found = []
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            cwd = os.readlink("/proc/%s/cwd" % pid)
        except OSError:
            cwd = ""
        if any(d in _cmdline(pid) or cwd == d for d in dirs):
            found.append(pid)
    return found


def test_peers_study_measures_records_unavailable_and_failed_peers(tmp_path):
    """The campaign's peers study measures a peer as peers.py does (a round row
    per shape with its counts, the access log checked against the probe,
    the probe's output under raw/), records a configuration the installed
    software rejects as an "unavailable" row with the reason, and a peer that
    cannot start (here a fake `node` that exits 3) as an error row with the
    reason, a failed step, while the campaign goes on; no peer outlives it."""
    if not _nginx():
        import pytest
        pytest.skip("nginx is not installed (`make deps`)")
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "node").write_text("#!/bin/sh\n[ \"$1\" = --version ] && { echo v0.0.0-fake; exit 0; }\n"
                               "echo 'cannot start: test' >&2\nexit 3\n")
    os.chmod(fake / "node", 0o755)
    env = dict(os.environ, PATH="%s:%s" % (fake, os.environ.get("PATH", "")))
    res = subprocess.run([*CAMPAIGN, "--platform", "linux", "--studies", "peers", "--rounds", "1",
                          "--peers", "node-rr,haproxy-mq-fair,nginx-default",
                          "--results-dir", str(tmp_path / "r"), "--no-canonical"], cwd=ROOT,
                         capture_output=True, text=True, timeout=180, env=env)
    assert res.returncode == 0, res.stderr
    assert "[  3/3] peers" in res.stdout, res.stdout
    assert "1 of 3 steps failed or skipped" in res.stdout, res.stdout
    (run,) = [p for p in (tmp_path / "r").iterdir() if p.is_dir()]
    rows = [json.loads(l) for l in (run / "peers.jsonl").read_text().splitlines()]
    node = [r for r in rows if r["peer"] == "node-rr"]
    assert [r["kind"] for r in node] == ["error"] and "exited with 3" in node[0]["error"], node
    assert "cannot start: test" in node[0]["error"]
    fair = [r for r in rows if r["peer"] == "haproxy-mq-fair"]
    assert len(fair) == 1, fair
    if fair[0]["kind"] == "unavailable":
        assert fair[0]["reason"], fair
    nginx = [r for r in rows if r["peer"] == "nginx-default"]
    rounds = {r["shape"]: r for r in nginx if r["kind"] == "round"}
    assert set(rounds) == {"burst", "ramp", "keepalive", "oneshot"}
    for shape, conns in (("burst", 32), ("ramp", 32), ("keepalive", 32), ("oneshot", 80)):
        assert rounds[shape]["connections"] == conns and sum(rounds[shape]["counts"].values()) == conns
    checks = [r for r in nginx if r["kind"] == "logcheck"]
    assert len(checks) == 4 and all(c["equal"] for c in checks), checks
    kept = [json.loads(l) for l in (run / "raw" / "peers-nginx-default.burst.probe.jsonl").read_text().splitlines()]
    assert [k["counts"] for k in kept if k["type"] == "round"] == [rounds["burst"]["counts"]]
    meta = json.loads((run / "meta.json").read_text())
    assert meta["parameters"]["peers"]["peers"] == ["node-rr", "haproxy-mq-fair", "nginx-default"]
    assert meta["tools"]["nginx"].startswith("nginx/")
    dirs = _peer_dirs(run / "raw")
    assert dirs and not _running_in(dirs), "a peer outlived the campaign"
    assert not any(os.path.exists(d) for d in dirs), "a peer's temp dir was left behind"


def test_cost_anchor_runs_nginx_beside_our_arms(tmp_path):
    """The cost study's anchor arm starts nginx (the peers' default
    configuration, 2 workers, access log off) once for its mode's block,
    paired with bare like our arms (each nginx run at the same time as one
    of bare's), and writes rows like bare's with req/s and the ratio to the
    bare run beside it; it is stopped after the block."""
    import shutil
    import pytest
    if not _nginx() or not shutil.which("wrk"):
        pytest.skip("nginx and wrk are needed (`make deps`)")
    res = subprocess.run([*CAMPAIGN, "--platform", "linux", "--studies", "cost", "--quick",
                          "--bench-arms", "bare,nginx", "--results-dir", str(tmp_path), "--no-canonical"], cwd=ROOT,
                         capture_output=True, text=True, timeout=180)
    assert res.returncode == 0, res.stderr
    assert "0 of 2 steps failed or skipped" in res.stdout, res.stdout
    (run,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    rows = [json.loads(l) for l in (run / "cost.jsonl").read_text().splitlines()]
    for mode in ("keepalive", "close"):
        runs = sorted((r for r in rows if r["mode"] == mode), key=lambda r: r["seq"])
        assert [r["arm"] for r in runs] == ["bare", "nginx", "bare", "nginx"], runs
        for i, r in enumerate(runs):
            if r["arm"] != "nginx":
                continue
            assert r["peer"] == "nginx-default" and r["software"].startswith("nginx/")
            assert r["requests_per_s"] > 0 and sum(r["errors"].values()) == 0, r
            beside = runs[i - 1]
            assert r["paired_seq"] == beside["seq"] and beside["arm"] == "bare", (r, beside)
            assert abs(r["ratio_to_bare"] - r["requests_per_s"] / beside["requests_per_s"]) <= 0.0001, r
        prefix = run / "raw" / ("cost-nginx-w2-%s" % mode)
        conf = (prefix.parent / (prefix.name + ".nginx.conf")).read_text()
        assert "access_log off;" in conf and "worker_processes 2;" in conf
        ready = json.loads((prefix.parent / (prefix.name + ".ready")).read_text())
        assert len(ready["workers"]) == 2
    anchor = json.loads((run / "meta.json").read_text())["parameters"]["cost"]["anchor"]
    assert anchor["nginx"]["peer"] == "nginx-default" and anchor["nginx"]["access_log"] == "off"
    dirs = _peer_dirs(run / "raw")
    assert len(dirs) == 2 and not _running_in(dirs), "nginx outlived its block"


def test_a_quota_group_holds_its_share_in_every_period_it_is_given(tmp_path):
    """CpuQuota(share, name, period_us) writes the group's period and its
    share of it (the throughput study's 5 ms: a 1 s run is two hundred
    periods, not ten), and the kernel's least quota, 1 ms, where the share
    of the period is less; the group is gone after the block. Read back
    from the cgroup's own files, as the kernel holds them."""
    import pytest
    from probes.harness.cpu_quota import CpuQuota, hierarchy
    if os.geteuid() != 0 or hierarchy() is None:
        pytest.skip("a quota group needs root and a cgroup cpu controller")

    def held(q):
        if q.kind == "v2":
            quota, period = (pathlib.Path(q.path) / "cpu.max").read_text().split()
            return int(quota), int(period)
        return (int((pathlib.Path(q.path) / "cpu.cfs_quota_us").read_text()),
                int((pathlib.Path(q.path) / "cpu.cfs_period_us").read_text()))
    for share, period, want in ((0.25, 5000, (1250, 5000)), (0.5, 100000, (50000, 100000)),
                                (0.1, 5000, (1000, 5000))):
        with CpuQuota(share, "test-period", period) as q:
            assert held(q) == want, (share, period, held(q))
        assert not os.path.exists(q.path), "the group %s was left" % q.path


def test_throughput_holds_each_server_to_its_quota(tmp_path):
    """The throughput study (--quick: 2 rounds) runs bare, bare-aa,
    exclusive-reorder and nginx paired (cost's paired method: each other
    run beside one of bare's), each server's processes in a cgroup held to
    THROUGHPUT_QUOTA of one CPU in every THROUGHPUT_PERIOD_US: every run
    answered, without errors, its ratio to bare over the bare run it was
    paired with (the round's, the run just before it in the block); the
    server's CPU time over the run stays near its quota (a server the group
    did not hold would use half the CPU, twice the quota, beside its
    partner); the groups are removed after the block, nginx is stopped, and
    the report says what the goal against nginx came to, by the paired
    method."""
    import shutil
    import pytest
    from probes.harness.cpu_quota import hierarchy
    from probes.studies.throughput import THROUGHPUT_ARMS, THROUGHPUT_PERIOD_US, THROUGHPUT_QUOTA
    if os.geteuid() != 0 or hierarchy() is None:
        pytest.skip("the study needs root and a cgroup cpu controller")
    if not _nginx() or not shutil.which("wrk"):
        pytest.skip("nginx and wrk are needed (`make deps`)")
    res = subprocess.run([*CAMPAIGN, "--platform", "linux", "--studies", "throughput", "--quick",
                          "--results-dir", str(tmp_path), "--no-canonical"], cwd=ROOT,
                         capture_output=True, text=True, timeout=180)
    assert res.returncode == 0, res.stderr
    assert "0 of 1 steps failed or skipped" in res.stdout, res.stdout
    (run,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    rows = [json.loads(l) for l in (run / "throughput.jsonl").read_text().splitlines()]
    assert sorted({r["arm"] for r in rows}) == sorted(THROUGHPUT_ARMS), rows
    assert {r["round"] for r in rows} == {1, 2} and all(r["mode"] == "keepalive" for r in rows), rows
    for r in rows:
        assert r["requests_per_s"] > 0 and sum(r["errors"].values()) == 0, r
        assert r["cpu_quota"] == THROUGHPUT_QUOTA and r["cgroup"] in ("v1", "v2"), r
        assert r["quota_period_us"] == THROUGHPUT_PERIOD_US, r
        assert r["server_cpu_share"] < 1.3, "the server used more than its quota: %r" % r
        assert (r["ratio_to_bare"] is None) == (r["arm"] == "bare"), r
    by_seq = {r["seq"]: r for r in rows}
    others = [r for r in rows if r["arm"] != "bare"]
    assert len(others) == 2 * (len(THROUGHPUT_ARMS) - 1), rows
    for r in others:  # each beside one bare run of its own round: a pair, not a run between two
        partner = by_seq[r["paired_seq"]]
        assert partner["arm"] == "bare" and partner["round"] == r["round"] and r["seq"] == r["paired_seq"] + 1, r
    assert len({r["paired_seq"] for r in others}) == len(others), "a bare run was paired twice: %r" % rows
    kind, root = hierarchy()
    assert not [d for d in os.listdir(root) if d.startswith("acceptlab-throughput")], "a quota group was left"
    dirs = _peer_dirs(run / "raw")
    assert dirs and not _running_in(dirs), "nginx outlived its block"
    rep = subprocess.run([*module_cmd("report.report"), "--results-dir", str(tmp_path), "--run", run.name,
                          "--out", str(tmp_path / "linux.md")], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert rep.returncode == 0, rep.stderr
    text = (tmp_path / "linux.md").read_text()
    assert "## Throughput with the server as the limit" in text
    assert "as the cost study's paired method runs them" in text, text
    assert "bare's req/s at or above nginx's), with the server as the limit: bare / nginx " in text


def test_unknown_peer_or_bench_arm_exits_2():
    """--peers and --bench-arms name what they accept: an unknown name is a
    usage error (exit 2) naming the option, before anything is measured;
    the anchor nginx is a valid cost arm."""
    res = subprocess.run([*CAMPAIGN, "--platform", "linux", "--studies", "peers", "--peers", "apache"], cwd=ROOT,
                         capture_output=True, text=True, timeout=30)
    assert res.returncode == 2 and "--peers apache: unknown" in res.stderr, res.stderr
    assert "nginx-default" in res.stderr
    res = subprocess.run([*CAMPAIGN, "--platform", "linux", "--studies", "cost", "--bench-arms", "nginx,apache"],
                         cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert res.returncode == 2 and "--bench-arms apache: unknown" in res.stderr, res.stderr


def test_burst_study_rows_and_nginx_anchor(tmp_path):
    """The burst study (--quick: 2 and 8 workers, 2 bursts per K) for bare
    and the nginx anchor: per arm, worker count N and K in (2N, 8N), one row
    per burst with every connection answered, a latency and a server for
    each, the completion time at least the largest latency, and counts that
    add up to K over at most N workers; nginx runs the peers' nginx-work
    configuration (embedded perl) and is stopped after each server, or, where
    its perl module is missing, its steps are recorded as skipped with the
    reason; the report renders the section."""
    import pytest
    if not _nginx():
        pytest.skip("nginx is not installed (`make deps`)")
    res = subprocess.run([*CAMPAIGN, "--platform", "linux", "--studies", "burst", "--quick",
                          "--arms", "bare", "--bench-arms", "bare,nginx",
                          "--results-dir", str(tmp_path), "--no-canonical"], cwd=ROOT,
                         capture_output=True, text=True, timeout=180)
    assert res.returncode == 0, res.stderr
    assert "[  4/4] burst" in res.stdout, res.stdout
    (run,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    rows = [json.loads(l) for l in (run / "burst.jsonl").read_text().splitlines()]
    skipped = [r for r in rows if "error" in r]
    assert all(r["arm"] == "nginx" and r["error"].startswith("skipped: ") for r in skipped), skipped
    arms_run = ["bare"] + ([] if skipped else ["nginx"])
    got = sorted((r["arm"], r["workers"], r["connections"], r["burst"]) for r in rows if "error" not in r)
    assert got == sorted((a, n, m * n, b) for a in arms_run for n in (2, 8) for m in (2, 8) for b in (1, 2))
    for r in (r for r in rows if "error" not in r):
        assert r["answered"] == r["connections"] and r["unanswered"] == 0, r
        assert None not in r["latency_us"] and len(r["latency_us"]) == r["connections"]
        assert r["completion_us"] >= max(r["latency_us"])
        assert sum(r["counts"].values()) == r["connections"] and len(r["counts"]) <= r["workers"]
        assert len(r["served_by"]) == r["connections"] and None not in r["served_by"]
    meta = json.loads((run / "meta.json").read_text())["parameters"]["burst"]
    assert meta["workers"] == [2, 8] and meta["per_worker"] == [2, 8] and meta["bursts"] == 2
    assert meta["anchor"]["nginx"]["peer"] == "nginx-work"
    if not skipped:
        conf = (run / "raw" / "burst-nginx-w8.nginx.conf").read_text()
        assert "perl " in conf and "worker_processes 8;" in conf
    dirs = _peer_dirs(run / "raw")
    assert not _running_in(dirs), "nginx outlived its server"
    out = tmp_path / "linux.md"
    rep = subprocess.run([*REPORT, "--results-dir", str(tmp_path), "--run", run.name, "--out", str(out)], cwd=ROOT,
                         capture_output=True, text=True)
    assert rep.returncode == 0, rep.stderr
    text = out.read_text()
    assert "## Payoff where arrival matters" in text and "### 8 workers" in text and "| bare | 64 |" in text
