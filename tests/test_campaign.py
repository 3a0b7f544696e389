"""Tests for the campaign driver (probes/campaign.py) and `make measure`'s
platform check: a small real campaign writes the results layout the report
reads, and leaves no server running."""

import json
import os
import subprocess

from conftest import PYTHON, ROOT, SERVER, pids_running

CAMPAIGN = os.path.join(ROOT, "probes", "campaign.py")
REPORT = os.path.join(ROOT, "report", "report.py")


def server_pids():
    """Live processes running bin/acceptlab-server."""
    return pids_running(SERVER)


def test_quick_campaign_writes_results_and_report(tmp_path):
    """A one-round campaign over two variants writes meta.json, one
    balancing row per variant x shape with counts that add up to the shape's
    connections, raw tool output, points CANONICAL at the run, the report
    renders from it, and no server outlives the campaign."""
    before = server_pids()
    res = subprocess.run([PYTHON, CAMPAIGN, "--platform", "linux", "--quick", "--variants", "bare,lt", "--studies", "balancing",
                          "--results-dir", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert "[  6/6]" in res.stdout, "no progress lines: %s" % res.stdout
    stamp = (tmp_path / "CANONICAL").read_text().strip()
    run = tmp_path / stamp
    meta = json.loads((run / "meta.json").read_text())
    assert meta["platform"] == "linux" and meta["cpus"] == os.cpu_count()
    assert meta["parameters"]["variants"] == ["bare", "lt"]
    rows = [json.loads(l) for l in (run / "balancing.jsonl").read_text().splitlines()]
    assert [(r["variant"], r["shape"]) for r in rows] == [
        (v, s) for v in ("bare", "lt") for s in ("burst", "ramp", "keepalive")]
    for r in rows:
        assert "error" not in r, r
        assert sum(r["counts"].values()) + r["unanswered"] == r["connections"] == 32
        assert len(r["counts"]) == 2, "both workers listed (zeros included): %r" % r
    if os.geteuid() == 0:
        # The tracer ran beside every step: for these race variants the
        # acceptor serves, so its accepts won per worker equal the probe's
        # connections per worker, step by step.
        trace = [json.loads(l) for l in (run / "trace.jsonl").read_text().splitlines()]
        assert [(t["variant"], t["shape"]) for t in trace] == [(r["variant"], r["shape"]) for r in rows]
        for t in trace:
            assert t["cross_check"]["expect_equal"] and t["cross_check"]["equal"], t["cross_check"]
            assert sum(t["cross_check"]["tracer_won"].values()) == 32, t["cross_check"]
    assert (run / "raw" / "balancing-bare-burst.ready").exists()
    assert (run / "raw" / "balancing-bare-burst.server.jsonl").read_text().count("worker_exit") == 2
    out = tmp_path / "linux.md"
    rep = subprocess.run([PYTHON, REPORT, "--results-dir", str(tmp_path), "--out", str(out)],
                         capture_output=True, text=True)
    assert rep.returncode == 0, rep.stderr
    assert "| bare |" in out.read_text() and "| lt |" in out.read_text()
    assert server_pids() <= before, "servers left running: %s" % (server_pids() - before)


def test_campaign_records_a_failed_step_and_goes_on(tmp_path):
    """A step whose server cannot start (the server binary is swapped, via
    ACCEPTLAB_SERVER, for a script that exits 3 at once) is written as an
    error row carrying the exit code and the server's stderr, and the
    remaining steps still run."""
    fake = tmp_path / "bin"
    fake.mkdir()
    env = dict(os.environ, ACCEPTLAB_SERVER=str(fake / "acceptlab-server"))
    (fake / "acceptlab-server").write_text("#!/bin/sh\necho 'cannot start: test' >&2\nexit 3\n")
    os.chmod(fake / "acceptlab-server", 0o755)
    res = subprocess.run([PYTHON, CAMPAIGN, "--platform", "linux", "--quick", "--variants", "bare",
                          "--studies", "balancing", "--results-dir", str(tmp_path / "r")], capture_output=True, text=True,
                         timeout=120, env=env)
    assert res.returncode == 0, res.stderr
    stamp = (tmp_path / "r" / "CANONICAL").read_text().strip()
    rows = [json.loads(l) for l in (tmp_path / "r" / stamp / "balancing.jsonl").read_text().splitlines()]
    assert len(rows) == 3
    assert all("exited 3 before ready" in r["error"] and "cannot start: test" in r["error"] for r in rows)
    assert "3 of 3 steps failed or skipped" in res.stdout


def test_measure_rejects_other_platforms():
    """`make measure PLATFORM=macos` exits 2 naming the supported platform,
    before building or measuring anything."""
    res = subprocess.run(["make", "-s", "-C", ROOT, "measure", "PLATFORM=macos"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode != 0
    assert "PLATFORM=macos is not supported; use PLATFORM=linux" in res.stderr
    res = subprocess.run([PYTHON, CAMPAIGN, "--platform", "bsd"], capture_output=True, text=True)
    assert res.returncode == 2 and "--platform bsd" in res.stderr


def test_interrupt_leaves_nothing_running(tmp_path):
    """Ctrl-C (SIGINT) in the middle of the placement study, while a CPU hog
    runs beside a worker: the campaign exits 130 naming where the partial
    results are, and leaves no server, hog, tracer or network namespace of
    its own behind (it kills what it started, by process group)."""
    import signal
    import time
    before = server_pids()
    proc = subprocess.Popen([PYTHON, CAMPAIGN, "--platform", "linux", "--quick", "--studies", "placement",
                             "--variants", "bare,fdpass", "--no-canonical", "--results-dir", str(tmp_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # Steps 9-12 are the hog placements (7 placements x 2 arms, in order).
        for line in proc.stdout:
            if line.startswith("[  8/"):
                break
        time.sleep(0.3)
        hogs = [p for p in os.listdir("/proc") if p.isdigit() and _cmdline(p).endswith("while True: pass")]
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert "interrupted; partial results in" in err
    assert hogs, "the hog placement was not running when interrupted"
    time.sleep(0.2)
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
