"""Tests for the profile study (probes/studies/profile.py) and its report
section (report/sections/profile.py): a tiny real run writes a row per arm
with symbols and syscalls, the section renders a fixture's rows side by
side, and a machine without perf gets a skipped row, not a failed campaign."""

import json
import os
import shutil
import subprocess

import pytest

from acceptlab.paths import module_cmd
from tests.conftest import ROOT

CAMPAIGN = module_cmd("probes.campaign")
REPORT = module_cmd("report.report")
FIXTURE_META = os.path.join(ROOT, "tests", "fixtures", "report", "results", "linux", "20261129T081500Z", "meta.json")


def campaign(tmp_path, env=None):
    return subprocess.run([*CAMPAIGN, "--platform", "linux", "--studies", "profile", "--bench-seconds", "1",
                           "--results-dir", str(tmp_path), "--no-canonical"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, env=env)


def rows_of(tmp_path):
    (run,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    return run, [json.loads(l) for l in (run / "profile.jsonl").read_text().splitlines()]


def test_tiny_run_profiles_bare_and_nginx(tmp_path):
    """One second per run: bare's row has the top symbols (self shares that
    add to at most 100 %, the server's own code among them or libc's),
    its CPU per request, and, as root, syscalls per request in which the
    read and the send of each request are there; nginx's row likewise (or
    says why it was skipped). No server outlives the study."""
    if not shutil.which("perf") or not shutil.which("wrk"):
        pytest.skip("perf and wrk are needed (`make deps`: linux-perf, wrk)")
    res = campaign(tmp_path)
    assert res.returncode == 0, res.stderr
    run, rows = rows_of(tmp_path)
    assert [r["arm"] for r in rows] == ["bare", "nginx"], rows
    bare = rows[0]
    assert "error" not in bare, bare
    assert bare["requests"] > 0 and bare["cpu_us_per_request"] > 0
    assert bare["symbols"] and 0 < sum(s["self_pct"] for s in bare["symbols"]) <= 100.01, bare["symbols"]
    assert {s["space"] for s in bare["symbols"]} <= {"kernel", "user"}
    assert (run / "raw" / "profile-bare.perf.txt").exists()
    assert not (run / "raw" / "profile-bare.perf.data").exists(), "the perf.data file should be removed"
    if os.geteuid() == 0:
        per = {s["name"]: s["per_request"] for s in bare["syscalls"]}
        assert per.get("read", 0) >= 0.5 and per.get("sendto", 0) >= 0.5, per  # one of each per request
        assert bare["syscalls_per_request"] >= sum(per.values()) - 0.01
    else:
        assert bare["syscalls_skipped"]
    nginx = rows[1]
    assert "error" not in nginx or nginx["error"].startswith("skipped"), nginx
    ready = json.loads((run / "raw" / "profile-bare.ready").read_text())
    gone = [w["pid"] for w in ready["workers"] if not os.path.exists("/proc/%d" % w["pid"])]
    assert len(gone) == len(ready["workers"]), "bare's workers outlived the study: %s" % ready


def test_without_perf_the_rows_say_skipped(tmp_path):
    """perf not on PATH: each arm's row is an error that starts "skipped:"
    and names linux-perf; the campaign still exits 0 and the report says so."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("wrk", "git", "gcc", "clang", "bpftool", "dpkg-query", "systemd-detect-virt"):
        found = shutil.which(tool)  # what meta.json records; perf is left out
        if found:
            os.symlink(found, bin_dir / tool)
    res = campaign(tmp_path / "res", env=dict(os.environ, PATH=str(bin_dir)))
    assert res.returncode == 0, res.stderr
    run, rows = rows_of(tmp_path / "res")
    assert [r["arm"] for r in rows] == ["bare", "nginx"]
    for r in rows:
        assert r["error"].startswith("skipped: perf not found") and "linux-perf" in r["error"], r
    out = tmp_path / "r.md"
    rep = subprocess.run([*REPORT, "--results-dir", str(tmp_path / "res"), "--out", str(out),
                          "--run", run.name], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert rep.returncode == 0, rep.stderr
    assert "- bare: skipped: perf not found" in out.read_text()


def fixture_row(arm, cpu, symbols, syscalls, software=None):
    row = {"arm": arm, "workers": 2, "mode": "keepalive", "path": "/", "cpu_us_per_request": cpu,
           "requests": 1000, "requests_per_s": 500.0, "samples": 400, "kernel_samples": True, "perf": "perf version 6",
           "user_pct": sum(p for n, d, sp, p in symbols if sp == "user"),
           "symbols": [{"symbol": n, "dso": d, "space": sp, "self_pct": p} for n, d, sp, p in symbols],
           "syscalls": [{"name": n, "count": int(v * 1000), "per_request": v} for n, v in syscalls],
           "syscalls_per_request": round(sum(v for _, v in syscalls), 3)}
    if software:
        row.update(peer="nginx-default", software=software)
    return row


def test_report_renders_the_fixture_side_by_side(tmp_path):
    """Two hand-written rows: the section's tables put bare and nginx in
    columns (CPU per request, syscalls per request, the symbols in rank
    order with their object), a syscall one arm never made shows 0 for it,
    the irq_enable note appears when that symbol leads and says it is the
    method's attribution, not a finding of the run, requests per epoll_wait
    call are the inverse of the rows' epoll_pwait / epoll_wait per request
    (bare 1 / 0.1, nginx 1 / 0.09), and the bare/nginx CPU ratio is the
    rows' quotient."""
    run = tmp_path / "results" / "20261129T081500Z"
    run.mkdir(parents=True)
    shutil.copy(FIXTURE_META, run / "meta.json")
    rows = [fixture_row("bare", 8.0, [("pvm_irq_enable", "[kernel.kallsyms]", "kernel", 30.0),
                                      ("conn_flush", "/x/acceptlab-server", "user", 2.5)],
                        [("read", 1.0), ("sendto", 1.0), ("epoll_pwait", 0.1)]),
            fixture_row("nginx", 10.0, [("pvm_irq_enable", "[kernel.kallsyms]", "kernel", 28.0),
                                        ("ngx_writev", "/usr/sbin/nginx", "user", 1.5)],
                        [("recvfrom", 1.0), ("writev", 1.0), ("epoll_wait", 0.09)], software="nginx/1.22.1")]
    (run / "profile.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "r.md"
    res = subprocess.run([*REPORT, "--results-dir", str(tmp_path / "results"), "--out", str(out),
                          "--run", run.name], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    text = out.read_text()
    assert "## Where the CPU goes: bare and nginx on keep-alive GET /" in text
    assert "| CPU µs per request | 8.00 | 10.00 |" in text
    assert "| 1 | `pvm_irq_enable` (kernel) | 30.0 | `pvm_irq_enable` (kernel) | 28.0 |" in text
    assert "| 2 | `conn_flush` (acceptlab-server) | 2.5 | `ngx_writev` (nginx) | 1.5 |" in text
    assert "| read | 1.000 | 0.000 |" in text and "| writev | 0.000 | 1.000 |" in text
    assert "| syscalls per request | 2.10 | 2.09 |" in text
    assert "bare over nginx: 0.80" in text
    assert "`pvm_irq_enable` among the top symbols. How the method attributes samples, not a finding of this run" \
        in text
    assert "perf stat counted, one run each): bare 10.00, nginx 11.11." in text


def test_report_says_when_a_run_has_no_profile(tmp_path):
    """An older run (no profile.jsonl) renders with the section saying it was not measured."""
    run = tmp_path / "results" / "20261129T081500Z"
    run.mkdir(parents=True)
    shutil.copy(FIXTURE_META, run / "meta.json")
    src = os.path.dirname(FIXTURE_META)
    shutil.copy(os.path.join(src, "balancing.jsonl"), run / "balancing.jsonl")
    out = tmp_path / "r.md"
    res = subprocess.run([*REPORT, "--results-dir", str(tmp_path / "results"), "--out", str(out),
                          "--run", run.name], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    text = out.read_text()
    assert "## Where the CPU goes" in text and "Not measured in this run (no profile.jsonl" in text
