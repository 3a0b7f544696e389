"""`make soak`'s driver (probes/soak.py), in the short version CI runs: a
fresh server per arm answers a known number of keep-alive and Connection:
close requests from wrk with no socket error, no non-2xx answer, no worker
reaped and a clean exit; nothing is left running."""

import json
import shutil
import subprocess

import pytest

from acceptlab.paths import module_cmd
from tests.conftest import ROOT, SERVER, pids_running

SOAK = module_cmd("probes.soak")
@pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed (make deps)")
def test_short_soak_has_no_errors(tmp_path):
    """bare, fdpass (processes) and handoff (threads): 20,000 keep-alive and
    2,000 close requests each; every row ok, counts reached, 0 errors."""
    before = pids_running(SERVER)
    out = tmp_path / "soak.jsonl"
    res = subprocess.run([*SOAK, "--arms", "bare,fdpass,handoff", "--keepalive-requests", "20000",
                          "--close-requests", "2000", "--chunk-seconds", "1", "--out", str(out)], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    rows = [json.loads(l) for l in out.read_text().splitlines()]
    assert [r["arm"] for r in rows] == ["bare", "fdpass", "handoff"]
    for r in rows:
        assert r["ok"], r
        assert r["keepalive"]["requests"] >= 20000 and r["close"]["requests"] >= 2000
        assert sum(r["keepalive"]["errors"].values()) == sum(r["close"]["errors"].values()) == 0
    assert rows[2]["mode"] == "threads"
    assert pids_running(SERVER) <= before, "servers left running"


def test_bad_arguments_exit_2():
    """An unknown arm or a non-positive count: exit 2 with one line naming it."""
    for args, name in ((["--arms", "nope"], "--arms nope"), (["--close-requests", "0"], "--close-requests 0")):
        res = subprocess.run([*SOAK, *args], cwd=ROOT, capture_output=True, text=True, timeout=30)
        assert res.returncode == 2 and name in res.stderr and res.stderr.count("\n") == 1, res
